"""Contacts and ray tests of the running simulation (the main server), answered by body and
link *names*.

``sim.contacts(a, b)`` is PyBullet's ``getContactPoints`` (the contact manifold of the last
``stepSimulation``: points, the normal on B pointing towards A, the normal force and the two
lateral friction forces with their directions; PyBullet Quickstart Guide, Coumans and Bai), of
the world as it is now: after a teleport or reset since the last step, the points are computed
again first (``performCollisionDetection``; forces stay those of the last step, zero for new
points), where PyBullet alone answers with the points of the old poses.
``sim.ray_test(start, end)`` and ``sim.ray_test_batch(starts, ends)`` are ``rayTest`` and
``rayTestBatch`` (the first hit along each segment).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from .._quiet import import_pybullet
from ..bullet.records import contact_points, ray_hits
from ..errors import ShapeError, SimbenchError, lookup, shown

if TYPE_CHECKING:
    from .simulation import Simulation

p = import_pybullet()

#: rays per ``rayTestBatch`` call. Measured (PyBullet 3.2.7): 16,383 rays are answered, 16,384
#: rays silently give 16,383 answers (the last ray is dropped), more raise an error
RAY_BATCH = 16383


class Contact(NamedTuple):
    """One contact point between link ``link_a`` of body ``body_a`` and ``link_b`` of ``body_b``
    (world frame, SI units). ``normal_on_b`` points from B towards A; ``distance`` is negative
    when penetrating; ``normal_force`` (N) acts along the normal, ``friction_1`` and
    ``friction_2`` (N) along ``friction_dir_1`` and ``friction_dir_2``."""

    body_a: str
    link_a: str
    body_b: str
    link_b: str
    position_on_a: np.ndarray
    position_on_b: np.ndarray
    normal_on_b: np.ndarray
    distance: float
    normal_force: float
    friction_1: float
    friction_dir_1: np.ndarray
    friction_2: float
    friction_dir_2: np.ndarray


class RayHit(NamedTuple):
    """The first hit along a ray: ``body`` and ``link`` names (None when nothing was hit),
    ``fraction`` of the way from start to end (1.0 when nothing was hit), world ``position``
    and surface ``normal``."""

    body: str | None
    link: str | None
    fraction: float
    position: np.ndarray
    normal: np.ndarray

    @property
    def hit(self) -> bool:
        return self.body is not None


@dataclass(frozen=True)
class RayBatch:
    """Hits of a batch of rays with leading shape ``shape``: ``fraction`` (*shape), ``position``
    and ``normal`` (*shape, 3), ``body`` and ``link`` names as nested lists (None: no hit)."""

    body: list
    link: list
    fraction: np.ndarray
    position: np.ndarray
    normal: np.ndarray

    @property
    def hit(self) -> np.ndarray:
        return self.fraction < 1.0

    def __len__(self) -> int:
        return len(self.fraction)

    def __getitem__(self, i: int) -> RayHit:
        """The i-th hit of a one-dimensional batch."""
        return RayHit(self.body[i], self.link[i], float(self.fraction[i]), self.position[i], self.normal[i])


def _names(sim: "Simulation") -> tuple[dict[int, str], dict[int, dict[int, str]]]:
    """Body id -> name, and body id -> {link index -> link name} for the main server."""
    bodies = {bid: name for name, bid in sim.bodies.items()}
    links = {bid: {index: link for link, index in sim.body(name).links.items()} for bid, name in bodies.items()}
    return bodies, links


def _body_name(names: tuple, body: int) -> str:
    return names[0].get(body, f"body#{body}")


def _link_name(names: tuple, body: int, link: int) -> str:
    return names[1].get(body, {}).get(link, f"link#{link}")


def _select(sim: "Simulation", obj: Any, what: str) -> tuple[int, int | None]:
    """``(body id, link index or None)`` of ``"body"``, ``("body", "link")`` or an object with
    ``.body`` and ``.link`` (such as a NamedCollisionObject)."""
    if isinstance(obj, str):
        body, link = obj, None
    elif hasattr(obj, "body"):
        body, link = obj.body, getattr(obj, "link", None)
    elif isinstance(obj, (tuple, list)) and len(obj) in (1, 2):
        body, link = obj[0], (obj[1] if len(obj) == 2 else None)
    else:
        raise SimbenchError(f"{what} = {shown(obj)}; expected a body name, (body, link) or None")
    bid = lookup(sim.bodies, body, "body", "the simulation")
    return bid, (None if link is None else sim.body(body).link_index(link))


def contacts(sim: "Simulation", a: Any = None, b: Any = None) -> list[Contact]:
    """Contact points between ``a`` and ``b`` in the world as it is now (each None for any body,
    a body name, or ``(body, link)``; see the module docstring). ``contacts(b=x)`` is the same
    query as ``contacts(x)``: the named object is always ``body_a`` in the result."""
    if a is None and b is not None:
        a, b = b, None
    kwargs: dict[str, int] = {}
    if a is not None:
        kwargs["bodyA"], la = _select(sim, a, "a")
        if la is not None:
            kwargs["linkIndexA"] = la
    if b is not None:
        kwargs["bodyB"], lb = _select(sim, b, "b")
        if lb is not None:
            kwargs["linkIndexB"] = lb
    sim.pair.refresh_contacts()
    rows = contact_points(p.getContactPoints(physicsClientId=sim.client, **kwargs))
    names = _names(sim)
    return [Contact(_body_name(names, r.body_a), _link_name(names, r.body_a, r.link_a),
                    _body_name(names, r.body_b), _link_name(names, r.body_b, r.link_b),
                    np.array(r.position_on_a), np.array(r.position_on_b), np.array(r.normal_on_b),
                    float(r.distance), float(r.normal_force), float(r.lateral_friction_1),
                    np.array(r.lateral_friction_dir_1), float(r.lateral_friction_2),
                    np.array(r.lateral_friction_dir_2)) for r in rows]


def _points(value: Any, what: str) -> np.ndarray:
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError, OverflowError):
        raise ShapeError(f"{what} = {shown(value)}; expected points of shape (..., 3) in metres") from None
    if arr.ndim == 0 or arr.shape[-1] != 3:
        raise ShapeError(f"{what} has shape {arr.shape}; expected (..., 3) in metres")
    if not np.all(np.isfinite(arr)):
        raise ShapeError(f"{what} holds non-finite values; expected finite metres")
    return arr


def ray_test_batch(sim: "Simulation", starts: Any, ends: Any) -> RayBatch:
    """The first hit along each segment ``starts[i] -> ends[i]`` (shapes (..., 3), broadcast);
    ``rayTestBatch`` in chunks of :data:`RAY_BATCH`. ``fraction``, ``position`` and ``normal``
    keep the broadcast leading shape; ``body`` and ``link`` are nested lists of that shape."""
    s, e = _points(starts, "starts"), _points(ends, "ends")
    try:
        s, e = np.broadcast_arrays(s, e)
    except ValueError:
        raise ShapeError(f"starts has shape {s.shape} and ends {e.shape}; expected shapes that broadcast "
                         "together, (..., 3) each (e.g. (3,) and (N, 3))") from None
    shape = s.shape[:-1]
    s2, e2 = s.reshape(-1, 3), e.reshape(-1, 3)
    hits = []
    for k in range(0, len(s2), RAY_BATCH):
        chunk = ray_hits(p.rayTestBatch(s2[k:k + RAY_BATCH].tolist(), e2[k:k + RAY_BATCH].tolist(),
                                        physicsClientId=sim.client))
        if len(chunk) != len(s2[k:k + RAY_BATCH]):
            raise SimbenchError(f"rayTestBatch answered {len(chunk)} of {len(s2[k:k + RAY_BATCH])} rays")
        hits.extend(chunk)
    names = _names(sim)
    bodies = [None if h.body < 0 else _body_name(names, h.body) for h in hits]
    links = [None if h.body < 0 else _link_name(names, h.body, h.link) for h in hits]
    fraction = np.array([h.fraction if h.body >= 0 else 1.0 for h in hits], dtype=float).reshape(shape)
    position = np.array([h.position if h.body >= 0 else (np.nan,) * 3 for h in hits], dtype=float)
    normal = np.array([h.normal if h.body >= 0 else (np.nan,) * 3 for h in hits], dtype=float)
    nested_b, nested_l = np.array(bodies, dtype=object).reshape(shape), np.array(links, dtype=object).reshape(shape)
    return RayBatch(nested_b.tolist(), nested_l.tolist(), fraction, position.reshape(shape + (3,)),
                    normal.reshape(shape + (3,)))


def ray_test(sim: "Simulation", start: Any, end: Any) -> RayHit:
    """The first hit along one segment ``start -> end`` (each (3,), m)."""
    s, e = _points(start, "start"), _points(end, "end")
    if s.shape != (3,) or e.shape != (3,):
        raise ShapeError(f"start and end have shapes {s.shape} and {e.shape}; expected (3,) each "
                         "(ray_test_batch takes batches)")
    (hit,) = ray_hits(p.rayTest(s.tolist(), e.tolist(), physicsClientId=sim.client))
    if hit.body < 0:
        return RayHit(None, None, 1.0, np.full(3, np.nan), np.full(3, np.nan))
    names = _names(sim)
    return RayHit(_body_name(names, hit.body), _link_name(names, hit.body, hit.link), float(hit.fraction),
                  np.array(hit.position), np.array(hit.normal))


__all__ = ["Contact", "RayHit", "RayBatch", "contacts", "ray_test", "ray_test_batch"]
