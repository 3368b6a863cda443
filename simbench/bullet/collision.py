"""Named-link distance and collision queries on the headless collision server (seed post 004).

The seed's idea: a second, DIRECT PyBullet server holds the same scene and answers "how far is
link X from object Y in configuration q" without touching the simulation that is running::

    pair = simbench.connect("simbench:kuka_cubes.toml", gui=False)
    link7 = NamedCollisionObject("robot", "lbr_iiwa_link_7")
    det = CollisionDetector(pair.collision, [(link7, "ground"), (link7, "cube1")])
    d = det.compute_distances(q)            # (2,) metres, saturating at max_distance

Compared with pyb_utils v1 (the seed's code): the joints are set in one
``resetJointStatesMultiDof`` call (fixed joints are never touched), any body can be the robot,
results carry names and witness points, pairs can be padded or disabled (PyBullet's
``setCollisionFilterPair`` is ignored by ``getClosestPoints``, so we filter pairs ourselves),
configurations can be batched ``(N, dof)`` and spread over worker processes.

Sign convention: ``distance`` is the signed distance (negative = penetration depth), the
``normal`` points from B to A (PyBullet's ``contactNormalOnB``), so
``point_a = point_b + distance * normal``.
"""
from __future__ import annotations

import math
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Union

import numpy as np
import pybullet as p

from ..errors import ShapeError, SimbenchError, UnknownNameError, lookup
from .scene import LoadedBody, LoadedScene, Scene, load_scene
from .srdf import DisabledPair, read_srdf_disabled, srdf_disabled_xml, write_srdf_disabled

# ---------------------------------------------------------------------- names


@dataclass(frozen=True)
class NamedCollisionObject:
    """A body of the scene and one of its URDF links (``None``: the base link)."""

    body: str
    link: str | None = None

    def __str__(self) -> str:
        return self.body if self.link is None else f"{self.body}/{self.link}"


ObjectLike = Union[NamedCollisionObject, str, tuple]
PairLike = tuple  # (ObjectLike, ObjectLike)
Pair = tuple[NamedCollisionObject, NamedCollisionObject]


def as_object(obj: ObjectLike) -> NamedCollisionObject:
    """``NamedCollisionObject``, a body name (its base link) or a ``(body, link)`` tuple."""
    if isinstance(obj, NamedCollisionObject):
        return obj
    if isinstance(obj, str):
        return NamedCollisionObject(obj)
    if isinstance(obj, tuple) and len(obj) == 2 and isinstance(obj[0], str):
        return NamedCollisionObject(obj[0], obj[1])
    raise SimbenchError(f"cannot read {obj!r} as a collision object; expected "
                        "NamedCollisionObject(body, link), a body name or a (body, link) tuple")


def as_pair(pair: PairLike) -> Pair:
    try:
        a, b = pair
    except (TypeError, ValueError):
        raise SimbenchError(f"a collision pair must be two objects (A, B), got {pair!r}") from None
    return as_object(a), as_object(b)


# ---------------------------------------------------------------------- the world (client + bodies)


class _World:
    """Name lookups for bodies loaded in one client (a LoadedScene, or a raw client + bodies)."""

    def __init__(self, client: int, bodies: Mapping[str, int], loaded: LoadedScene | None = None):
        self.client, self.bodies, self.loaded = int(client), dict(bodies), loaded
        self._cache: dict[str, LoadedBody] = {}

    def body(self, name: str) -> LoadedBody:
        if self.loaded is not None:
            return self.loaded.body(name)
        if name not in self._cache:
            self._cache[name] = LoadedBody(name, lookup(self.bodies, name, "body", "the scene"),
                                           self.client)
        return self._cache[name]

    def resolve(self, obj: NamedCollisionObject) -> tuple[int, int]:
        b = self.body(obj.body)
        return b.id, b.link_index(obj.link)

    # structure of one body, from PyBullet
    def parents(self, name: str) -> dict[int, tuple[int, int]]:
        """link index -> (parent link index, joint type) for every non-base link."""
        b = self.body(name)
        out = {}
        for j in range(p.getNumJoints(b.id, physicsClientId=self.client)):
            info = p.getJointInfo(b.id, j, physicsClientId=self.client)
            out[j] = (info[16], info[2])
        return out

    def has_geometry(self, name: str, link: int) -> bool:
        b = self.body(name)
        return len(p.getCollisionShapeData(b.id, link, physicsClientId=self.client)) > 0

    def link_name(self, name: str, index: int) -> str:
        b = self.body(name)
        return next(k for k, v in b.links.items() if v == index)


def _world(source: Any, client: int | None = None) -> tuple[_World, Any]:
    """A :class:`_World` for a LoadedScene, ServerPair (its collision server), raw
    ``bodies`` dict with ``client=``, or a Scene / TOML path (loaded into a temporary DIRECT
    client; the second return value is that client to disconnect, else None)."""
    if isinstance(source, LoadedScene):
        return _World(source.client, source.bodies, source), None
    if hasattr(source, "collision") and isinstance(getattr(source, "collision"), LoadedScene):
        return _world(source.collision)
    if isinstance(source, Mapping):
        if client is None:
            raise SimbenchError("a plain bodies dict needs client= (the PyBullet client id)")
        return _World(client, source), None
    if isinstance(source, (Scene, str, os.PathLike)):
        scene = load_scene(source)
        tmp = p.connect(p.DIRECT)
        return _World(tmp, (loaded := scene.load(tmp)).bodies, loaded), tmp
    raise SimbenchError(f"expected a LoadedScene, ServerPair, Scene, scene path or bodies dict, "
                        f"got {type(source).__name__}")


def _close(tmp: int | None) -> None:
    if tmp is not None and p.isConnected(physicsClientId=tmp):
        p.disconnect(physicsClientId=tmp)


# ---------------------------------------------------------------------- pair builders


def all_links(scene_or_bodies: Any, body: str, *, client: int | None = None,
              with_geometry: bool = True) -> list[NamedCollisionObject]:
    """Every link of ``body`` (base first, then PyBullet order) as NamedCollisionObjects.

    ``with_geometry``: only links that have a collision shape (the others never collide).
    """
    world, tmp = _world(scene_or_bodies, client)
    try:
        b = world.body(body)
        return [NamedCollisionObject(body, name) for name, idx in b.links.items()
                if not with_geometry or world.has_geometry(body, idx)]
    finally:
        _close(tmp)


def _rigid_groups(world: _World, body: str) -> tuple[dict[int, int], dict[int, int | None]]:
    """Links joined by fixed joints form one rigid group (labelled by its top link).
    Returns link -> group and group -> parent group (None at the base)."""
    parents = world.parents(body)
    group: dict[int, int] = {-1: -1}
    for link in sorted(parents):  # parents come before children in PyBullet's order
        parent, jtype = parents[link]
        group[link] = group[parent] if jtype == p.JOINT_FIXED else link
    gparent = {g: (None if g == -1 else group[parents[g][0]]) for g in set(group.values())}
    return group, gparent


def adjacent_links(scene_or_bodies: Any, body: str, *, client: int | None = None) -> set[frozenset[str]]:
    """Pairs of link names of ``body`` that are adjacent: parent/child, also across fixed
    joints (links joined by fixed joints form one rigid group; two links are adjacent when they
    are in the same group or in groups joined by one joint) and across links without collision
    geometry (as MoveIt's setup assistant treats them)."""
    world, tmp = _world(scene_or_bodies, client)
    try:
        return _adjacent(world, body)
    finally:
        _close(tmp)


def _adjacent(world: _World, body: str) -> set[frozenset[str]]:
    b = world.body(body)
    group, gparent = _rigid_groups(world, body)
    geom = {g: any(world.has_geometry(body, l) for l, gg in group.items() if gg == g) for g in gparent}

    def geometric_parent(g: int) -> int | None:
        q = gparent[g]
        while q is not None and not geom[q]:
            q = gparent[q]
        return q

    names = {idx: name for name, idx in b.links.items()}
    out: set[frozenset[str]] = set()
    links = sorted(group)
    for i, la in enumerate(links):
        for lb in links[i + 1:]:
            ga, gb = group[la], group[lb]
            if (ga == gb or gparent[ga] == gb or gparent[gb] == ga
                    or geometric_parent(ga) == gb or geometric_parent(gb) == ga):
                out.add(frozenset((names[la], names[lb])))
    return out


def self_collision_pairs(scene_or_bodies: Any, body: str | None = None, exclude_adjacent: bool = True,
                         *, client: int | None = None, disabled: Any = None) -> list[Pair]:
    """All pairs of ``body``'s links that have collision geometry, minus adjacent pairs
    (see :func:`adjacent_links`) and minus pairs that never move relative to each other
    (same rigid group) and ``disabled`` pairs (link-name pairs or an SRDF path)."""
    world, tmp = _world(scene_or_bodies, client)
    try:
        body = body or _default_robot(world)
        b = world.body(body)
        links = [(n, i) for n, i in b.links.items() if world.has_geometry(body, i)]
        group, _ = _rigid_groups(world, body)
        adjacent = _adjacent(world, body) if exclude_adjacent else set()
        skip = _disabled_link_names(disabled, b)
        out = []
        for k, (na, ia) in enumerate(links):
            for nb, ib in links[k + 1:]:
                key = frozenset((na, nb))
                if group[ia] == group[ib] or key in adjacent or key in skip:
                    continue
                out.append((NamedCollisionObject(body, na), NamedCollisionObject(body, nb)))
        return out
    finally:
        _close(tmp)


def robot_vs_world(scene_or_bodies: Any, robot: str | None = None, world: Iterable[str] | None = None,
                   *, client: int | None = None, include_static: bool = False) -> list[Pair]:
    """Every robot link with geometry against every link with geometry of the other bodies
    (``world``: body names, default all others).

    Links rigidly attached to the robot's base never move with ``q``; they are left out unless
    ``include_static`` (their distance to the world is a constant, e.g. the base resting on the
    ground gives a permanent contact).
    """
    w, tmp = _world(scene_or_bodies, client)
    try:
        robot = robot or _default_robot(w)
        rb = w.body(robot)
        group, _ = _rigid_groups(w, robot)
        mine = [n for n, i in rb.links.items() if w.has_geometry(robot, i) and (include_static or group[i] != -1)]
        others = [n for n in (world if world is not None else w.bodies) if n != robot]
        targets = []
        for name in others:
            ob = w.body(name)
            targets += [NamedCollisionObject(name, ln) for ln, li in ob.links.items() if w.has_geometry(name, li)]
        return [(NamedCollisionObject(robot, ln), t) for ln in mine for t in targets]
    finally:
        _close(tmp)


def _default_robot(world: _World) -> str:
    if world.loaded is not None:
        return world.loaded.robot_name
    if "robot" in world.bodies:
        return "robot"
    raise UnknownNameError("body", "robot", world.bodies, "the scene (pass robot=...)")


def _disabled_entries(disabled: Any) -> Iterator[tuple[Any, Any]]:
    """The (a, b) entries of ``disabled``: None, an SRDF path, or an iterable of pairs."""
    if disabled is None:
        return
    if isinstance(disabled, (str, os.PathLike)):
        disabled = read_srdf_disabled(disabled)
    for entry in disabled:
        yield (entry.link1, entry.link2) if isinstance(entry, DisabledPair) else entry


def _disabled_link_names(disabled: Any, body: LoadedBody) -> set[frozenset[str]]:
    """SRDF path or link-name pairs -> set of frozenset link-name pairs (names checked)."""
    out = set()
    for a, b in _disabled_entries(disabled):
        a = a.link if isinstance(a, NamedCollisionObject) else a
        b = b.link if isinstance(b, NamedCollisionObject) else b
        body.link_index(a), body.link_index(b)  # unknown names: close matches
        out.add(frozenset((a, b)))
    return out


# ---------------------------------------------------------------------- results


@dataclass(frozen=True)
class ClosestPoints:
    """Closest points of one pair: signed ``distance`` (after padding, saturated at
    ``max_distance``), witness points in the world frame and the unit ``normal`` from B to A.
    When nothing lies within ``max_distance`` the points and normal are NaN."""

    a: NamedCollisionObject
    b: NamedCollisionObject
    distance: float
    point_a: np.ndarray
    point_b: np.ndarray
    normal: np.ndarray

    @property
    def in_collision(self) -> bool:
        return self.distance < 0.0

    @property
    def found(self) -> bool:
        return bool(np.isfinite(self.point_a[0]))


# ---------------------------------------------------------------------- the query kernels
# Module-level so worker processes run exactly the same code. ``rows``: configurations as
# lists of floats (``Q.tolist()``).

_NAN3 = (math.nan, math.nan, math.nan)


def _posed(core: tuple, rows: list) -> Iterator[None]:
    """Set the robot to each configuration of ``rows`` in turn (one multi-joint reset each)."""
    client, robot, indices, _ = core
    reset = p.resetJointStatesMultiDof
    cells = [[0.0] for _ in indices]  # reused one-element lists: resetJointStatesMultiDof's format
    for row in rows:
        if cells:
            for cell, x in zip(cells, row):
                cell[0] = x
            reset(robot, indices, cells, physicsClientId=client)
        yield


def _kernel_distances(core: tuple, rows: list, max_distance: float) -> list[float]:
    """Flat list of n * n_pairs padded distances (not yet saturated)."""
    client, pairs, gcp = core[0], core[3], p.getClosestPoints
    out: list[float] = []
    append = out.append
    for _ in _posed(core, rows):
        for a, b, la, lb, pad in pairs:
            pts = gcp(a, b, max_distance + pad, la, lb, physicsClientId=client)
            if not pts:
                append(max_distance)
            elif len(pts) == 1:
                append(pts[0][8] - pad)
            else:
                append(min([pt[8] for pt in pts]) - pad)
    return out


def _kernel_closest(core: tuple, rows: list, max_distance: float) -> list[tuple]:
    """Flat list of (distance, point_a, point_b, normal) per (configuration, pair)."""
    client, pairs, gcp = core[0], core[3], p.getClosestPoints
    out: list[tuple] = []
    for _ in _posed(core, rows):
        for a, b, la, lb, pad in pairs:
            pts = gcp(a, b, max_distance + pad, la, lb, physicsClientId=client)
            if not pts:
                out.append((max_distance, _NAN3, _NAN3, _NAN3))
                continue
            best = pts[0] if len(pts) == 1 else min(pts, key=lambda pt: pt[8])
            out.append((best[8], best[5], best[6], best[7]))
    return out


def _kernel_collision(core: tuple, rows: list, margin: float) -> list[bool]:
    """Per configuration: is any pair closer than ``margin`` (early exit)."""
    client, pairs, gcp = core[0], core[3], p.getClosestPoints
    out = []
    for _ in _posed(core, rows):
        hit = False
        for a, b, la, lb, pad in pairs:
            pts = gcp(a, b, margin + pad, la, lb, physicsClientId=client)
            if pts and min([pt[8] for pt in pts]) - pad < margin:
                hit = True
                break
        out.append(hit)
    return out


KERNELS = {"distances": _kernel_distances, "closest": _kernel_closest, "collision": _kernel_collision}


# ---------------------------------------------------------------------- the detector


class CollisionDetector:
    """Distances between named pairs of links, for robot configurations ``q``.

    ``CollisionDetector(loaded_scene, pairs)`` (preferred: a
    :class:`~simbench.bullet.scene.LoadedScene` such as ``ServerPair.collision``, or the
    ServerPair itself, whose collision server is used) or, as in the seed,
    ``CollisionDetector(client_id, bodies, pairs)`` with ``bodies`` a dict name -> body id.

    * ``pairs``: ``(A, B)`` with A, B a :class:`NamedCollisionObject`, a body name (its base
      link) or a ``(body, link)`` tuple. Names are resolved once, here.
    * ``robot``: the body whose movable joints ``q`` sets (default: the scene's robot, else
      ``"robot"``); ``q`` is in PyBullet's (= ``RobotModel.joint_names``) order or a dict by
      joint name.
    * ``padding``: metres added around links: a number (every link of the robot), or a dict
      keyed by robot link name, body name (every link of it) or NamedCollisionObject.
      distance = raw distance - padding(A) - padding(B).
    * ``disabled``: pairs never checked: pairs of robot link names (as in an SRDF), of body
      names (every link) or NamedCollisionObjects, or an SRDF file path.
    * ``workers``: default number of processes for batches (see :meth:`compute_distances`).
    """

    def __init__(self, client: Any, bodies: Any = None, pairs: Iterable[PairLike] | None = None, *,
                 robot: str | None = None, padding: float | Mapping[Any, float] | None = None,
                 disabled: Any = None, workers: int = 1):
        if hasattr(client, "collision") and isinstance(getattr(client, "collision"), LoadedScene):
            client = client.collision
        if isinstance(client, LoadedScene):
            if pairs is None and bodies is not None and not isinstance(bodies, Mapping):
                bodies, pairs = None, bodies
            if bodies is not None and dict(bodies) != client.bodies:
                raise SimbenchError(f"bodies {dict(bodies)} differ from the loaded scene's {client.bodies}")
            world = _World(client.client, client.bodies, client)
        elif isinstance(client, (int, np.integer)):
            if not isinstance(bodies, Mapping):
                raise SimbenchError("CollisionDetector(client_id, bodies, pairs): bodies must be a dict "
                                    "body name -> PyBullet body id")
            if not p.isConnected(physicsClientId=int(client)):
                raise SimbenchError(f"PyBullet client {client} is not connected")
            world = _World(int(client), bodies)
        else:
            raise SimbenchError(f"expected a LoadedScene, ServerPair or PyBullet client id, got {client!r}")
        if pairs is None:
            raise SimbenchError("no collision pairs given")
        self._world = world
        self.client = world.client
        self.bodies = dict(world.bodies)
        self.robot_name = robot or _default_robot(world)
        rb = world.body(self.robot_name)
        self.robot_body = rb
        self.joint_names: tuple[str, ...] = rb.movable_names
        for j in rb.movable_indices:
            if p.getJointInfo(rb.id, j, physicsClientId=self.client)[2] == p.JOINT_SPHERICAL:
                raise SimbenchError(f"robot {self.robot_name!r} has a spherical joint "
                                    f"{p.getJointInfo(rb.id, j, physicsClientId=self.client)[1].decode()!r}; "
                                    "the collision detector supports revolute and prismatic joints only")
        self.dof = len(self.joint_names)
        self._shape1 = (self.dof,)
        self._joint_pos = {n: i for i, n in enumerate(self.joint_names)}

        all_pairs = [as_pair(pr) for pr in pairs]
        resolved = [(world.resolve(a), world.resolve(b)) for a, b in all_pairs]  # names checked here
        skip = self._disabled_set(disabled)
        for (ra, rb_), (a, b) in zip(resolved, all_pairs):
            if ra == rb_:
                raise SimbenchError(f"pair ({a}, {b}) names one link twice; a link cannot collide with itself")
        keep = [k for k, (ra, rb_) in enumerate(resolved) if frozenset((ra, rb_)) not in skip]
        self.pairs: list[Pair] = [all_pairs[k] for k in keep]
        self._pad_a = np.array([self._padding_of(a, padding) for a, _ in self.pairs])
        self._pad_b = np.array([self._padding_of(b, padding) for _, b in self.pairs])
        pads = (self._pad_a + self._pad_b).tolist()
        self._pair_args = tuple((resolved[k][0][0], resolved[k][1][0], resolved[k][0][1], resolved[k][1][1],
                                 float(pd)) for k, pd in zip(keep, pads))
        self._core = (self.client, rb.id, list(rb.movable_indices), list(self._pair_args))
        self.workers = int(workers)
        self._pool = None
        if self.workers > 1 and self.scene is not None:  # boot the helpers in the background now
            from .collision_workers import WorkerPool

            self._pool = WorkerPool(self, self.workers - 1)

    # ------------------------------------------------------------------ set-up helpers
    def _objects_of(self, item: Any) -> list[tuple[int, int]]:
        """(body id, link index) of a disabled/padding key: NamedCollisionObject -> that link;
        a robot link name -> that link; a body name -> every link of the body."""
        w = self._world
        if isinstance(item, (NamedCollisionObject, tuple)):
            return [w.resolve(as_object(item))]
        if isinstance(item, str):
            rb = self.robot_body
            if item in rb.links:
                return [(rb.id, rb.links[item])]
            if item in self.bodies:
                b = w.body(item)
                return [(b.id, i) for i in b.links.values()]
            raise UnknownNameError("link or body", item, list(rb.links) + list(self.bodies),
                                   f"robot {self.robot_name!r} / the scene")
        raise SimbenchError(f"cannot read {item!r} as a link: expected a robot link name, a body name "
                            "or a NamedCollisionObject")

    def _disabled_set(self, disabled: Any) -> set[frozenset]:
        out = set()
        for a, b in _disabled_entries(disabled):
            for oa in self._objects_of(a):
                for ob in self._objects_of(b):
                    out.add(frozenset((oa, ob)))
        return out

    def _padding_of(self, obj: NamedCollisionObject, padding: Any) -> float:
        if padding is None:
            return 0.0
        if not isinstance(padding, Mapping):
            value = float(padding) if obj.body == self.robot_name else 0.0
        else:  # a key naming one link wins over a key naming the whole body
            by_body = by_link = None
            target = self._world.resolve(obj)
            for key, v in padding.items():
                if target in self._objects_of(key):
                    if isinstance(key, str) and key in self.bodies and key not in self.robot_body.links:
                        by_body = v
                    else:
                        by_link = v
            value = by_link if by_link is not None else (by_body if by_body is not None else 0.0)
            try:
                value = float(value)
            except (TypeError, ValueError):
                raise SimbenchError(f"padding of {obj} is {value!r}; expected metres") from None
        if not math.isfinite(value) or value < 0:
            raise SimbenchError(f"padding of {obj} is {value!r}; expected a finite number >= 0 (metres)")
        return value

    # ------------------------------------------------------------------ configurations
    def check_q(self, q: Any, name: str = "q") -> np.ndarray:
        """``q`` as float array (..., dof) in joint order; dicts by joint name accepted."""
        if isinstance(q, Mapping):
            for k in q:
                if k not in self._joint_pos:
                    raise UnknownNameError("movable joint", k, self.joint_names, f"robot {self.robot_name!r}")
            missing = [n for n in self.joint_names if n not in q]
            if missing:
                raise ShapeError(f"{name} is missing joints {missing}; expected every joint of "
                                 f"{list(self.joint_names)}")
            q = np.stack([np.asarray(q[n], dtype=float) for n in self.joint_names], axis=-1)
        try:
            arr = np.asarray(q, dtype=float)
        except (TypeError, ValueError) as exc:
            raise ShapeError(f"{name} must be numbers, got {q!r} ({exc})") from None
        if arr.ndim == 0 or arr.shape[-1] != self.dof:
            raise ShapeError(f"{name} has shape {arr.shape}; expected ({self.dof},) or (N, {self.dof}) "
                             f"with joints in order {list(self.joint_names)}")
        if not np.isfinite(arr).all():
            bad = np.argwhere(~np.isfinite(arr))[0]
            raise ShapeError(f"{name} holds a non-finite value {arr[tuple(bad)]} at index "
                             f"{tuple(int(i) for i in bad)} (joint {self.joint_names[bad[-1]]!r})")
        return arr

    def set_configuration(self, q: Any) -> None:
        """Put the robot of the collision server in configuration ``q`` (one call)."""
        q = self.check_q(q)
        if q.ndim != 1:
            raise ShapeError(f"q has shape {q.shape}; expected ({self.dof},)")
        if self.dof:
            p.resetJointStatesMultiDof(self.robot_body.id, list(self.robot_body.movable_indices),
                                       q[:, None].tolist(), physicsClientId=self.client)

    def _run(self, kind: str, q: Any, arg: float, workers: int | None) -> tuple[list, tuple, int]:
        """Validate q, run kernel ``kind`` over every configuration; (flat results, batch shape, n)."""
        arr = self.check_q(q)
        batch = arr.shape[:-1]
        flat = arr.reshape(-1, self.dof)
        n = flat.shape[0]
        workers = self.workers if workers is None else int(workers)
        if workers < 1:
            raise SimbenchError(f"workers = {workers}; expected an integer >= 1")
        if workers > 1 and n > 1:
            from .collision_workers import run_parallel

            return run_parallel(self, kind, flat, float(arg), workers), batch, n
        return KERNELS[kind](self._core, flat.tolist(), float(arg)), batch, n

    # ------------------------------------------------------------------ queries
    def compute_distances(self, q: Any, max_distance: float = 1.0, *, workers: int | None = None) -> np.ndarray:
        """Signed distance of every pair, saturating at ``max_distance``: shape (n_pairs,) for
        one configuration, (..., n_pairs) for a batch (...) of configurations.

        ``workers`` > 1 spreads a batch over that many processes (this one included), each with
        its own DIRECT server loaded from the same scene; results are in input order and equal
        the one-at-a-time results.
        """
        md = _check_distance(max_distance, "max_distance")
        if type(q) is np.ndarray and q.shape == self._shape1 and q.dtype == np.float64:
            ql = q.tolist()  # fast path for one configuration: same kernel, lighter checks
            total = sum(ql)
            if total - total == 0.0:  # all finite
                out = np.array(_kernel_distances(self._core, [ql], md))
                return np.minimum(out, md, out=out)
        flat, batch, n = self._run("distances", q, md, workers)
        out = np.asarray(flat, dtype=float).reshape(*batch, len(self.pairs))
        return np.minimum(out, md, out=out)

    def closest_points(self, q: Any, max_distance: float = 1.0, *,
                       workers: int | None = None) -> list[ClosestPoints] | list:
        """Per pair a :class:`ClosestPoints` record (names, distance, witness points, normal);
        for a batch of configurations, a (nested) list of such lists."""
        arrays = self.closest_point_arrays(q, max_distance, workers=workers)
        d, pa, pb, nrm = arrays["distance"], arrays["point_a"], arrays["point_b"], arrays["normal"]

        def records(idx: tuple) -> list[ClosestPoints]:
            return [ClosestPoints(a, b, float(d[idx + (k,)]), pa[idx + (k,)], pb[idx + (k,)], nrm[idx + (k,)])
                    for k, (a, b) in enumerate(self.pairs)]

        batch = d.shape[:-1]
        if not batch:
            return records(())

        def nest(prefix: tuple) -> list:
            if len(prefix) == len(batch):
                return records(prefix)
            return [nest(prefix + (i,)) for i in range(batch[len(prefix)])]

        return nest(())

    def closest_point_arrays(self, q: Any, max_distance: float = 1.0, *,
                             workers: int | None = None) -> dict[str, np.ndarray]:
        """The closest points as arrays: ``distance`` (..., P), ``point_a``, ``point_b``,
        ``normal`` (..., P, 3). Padding moves the witness points out along the normal so that
        ``point_a - point_b = distance * normal`` still holds."""
        md = _check_distance(max_distance, "max_distance")
        flat, batch, n = self._run("closest", q, md, workers)
        P = len(self.pairs)
        d = np.array([r[0] for r in flat], dtype=float).reshape(n, P)
        pa = np.array([r[1] for r in flat], dtype=float).reshape(n, P, 3)
        pb = np.array([r[2] for r in flat], dtype=float).reshape(n, P, 3)
        nrm = np.array([r[3] for r in flat], dtype=float).reshape(n, P, 3)
        pad_a, pad_b = self._pad_a, self._pad_b
        found = np.isfinite(pa[..., 0])
        d = np.where(found, d - (pad_a + pad_b), d)
        pa = pa - pad_a[:, None] * nrm
        pb = pb + pad_b[:, None] * nrm
        d = np.minimum(d, md)
        return {"distance": d.reshape(*batch, P), "point_a": pa.reshape(*batch, P, 3),
                "point_b": pb.reshape(*batch, P, 3), "normal": nrm.reshape(*batch, P, 3)}

    def in_collision(self, q: Any, margin: float = 0.0, *, workers: int | None = None) -> bool | np.ndarray:
        """True when any pair is closer than ``margin`` (distance < margin); (...,) for a batch."""
        mg = _check_distance(margin, "margin")
        if type(q) is np.ndarray and q.shape == self._shape1 and q.dtype == np.float64:
            ql = q.tolist()
            total = sum(ql)
            if total - total == 0.0:
                return _kernel_collision(self._core, [ql], mg)[0]
        flat, batch, n = self._run("collision", q, mg, workers)
        if not batch:
            return bool(flat[0])
        return np.asarray(flat, dtype=bool).reshape(batch)

    def colliding_pairs(self, q: Any, margin: float = 0.0, *, workers: int | None = None) -> list:
        """The pairs closer than ``margin``: a list of (A, B) for one configuration, a list of
        such lists for a batch (N, dof)."""
        d = self.compute_distances(q, max_distance=max(margin, 0.0) + 1e-3, workers=workers)
        if d.ndim == 1:
            return [pr for pr, x in zip(self.pairs, d) if x < margin]
        flat = d.reshape(-1, len(self.pairs))
        return [[pr for pr, x in zip(self.pairs, row) if x < margin] for row in flat]

    # ------------------------------------------------------------------ misc
    @property
    def pair_names(self) -> list[tuple[str, str]]:
        return [(str(a), str(b)) for a, b in self.pairs]

    @property
    def scene(self) -> Scene | None:
        return self._world.loaded.scene if self._world.loaded is not None else None

    def start_workers(self, workers: int | None = None, wait: bool = True) -> None:
        """Start the helper processes for ``workers`` processes now (``wait``: until they
        have loaded the scene) instead of at the first batch."""
        from .collision_workers import WorkerPool

        workers = self.workers if workers is None else int(workers)
        if workers < 2:
            return
        if self._pool is None:
            self._pool = WorkerPool(self, workers - 1)
        else:
            self._pool.grow(self, workers - 1)
        if wait:
            self._pool.wait_ready()

    def close(self) -> None:
        """Stop the worker processes (the collision server itself belongs to the caller)."""
        if self._pool is not None:
            self._pool.close()
            self._pool = None

    def __enter__(self) -> "CollisionDetector":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self) -> str:
        return (f"CollisionDetector(client={self.client}, robot={self.robot_name!r}, dof={self.dof}, "
                f"pairs={len(self.pairs)})")


def _check_distance(value: float, what: str) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise SimbenchError(f"{what} = {value!r}; expected a number of metres") from None
    if not math.isfinite(v):
        raise SimbenchError(f"{what} = {value!r}; expected a finite number of metres")
    return v


# ---------------------------------------------------------------------- sampling (MoveIt style)


@dataclass
class SamplingReport:
    """Result of :func:`sample_disabled_pairs`: link-name pairs by reason, the collision
    fraction of every sampled pair, and the number of samples."""

    body: str
    samples: int
    adjacent: list[tuple[str, str]]
    default: list[tuple[str, str]]
    always: list[tuple[str, str]]
    never: list[tuple[str, str]]
    fraction: dict[tuple[str, str], float]
    configurations: np.ndarray | None = None  # the (n, dof) samples

    def disabled(self) -> list[DisabledPair]:
        out = [DisabledPair(a, b, "Adjacent") for a, b in self.adjacent]
        out += [DisabledPair(a, b, "Default") for a, b in self.default]
        out += [DisabledPair(a, b, "Always") for a, b in self.always]
        out += [DisabledPair(a, b, "Never") for a, b in self.never]
        return out

    def srdf(self, robot_name: str | None = None) -> str:
        return srdf_disabled_xml(self.disabled(), robot_name or self.body)

    def write(self, path: str | os.PathLike, robot_name: str | None = None) -> None:
        write_srdf_disabled(path, self.disabled(), robot_name or self.body)


def sample_disabled_pairs(scene_or_loaded: Any, body: str | None = None, *, n: int = 2000,
                          seed: int | np.random.Generator | None = 0, always_fraction: float = 0.95,
                          workers: int = 1, client: int | None = None) -> SamplingReport:
    """Find self-collision pairs to disable, as MoveIt's setup assistant does: adjacent links;
    pairs in collision at the neutral configuration ("Default") and in at least
    ``always_fraction`` of ``n`` random configurations ("Always"); pairs never in collision in
    any sample ("Never": a statistical statement, more samples make it safer)."""
    w, tmp = _world(scene_or_loaded, client)
    try:
        body = body or _default_robot(w)
        adj = _adjacent(w, body)
        pairs = self_collision_pairs(w.loaded if w.loaded is not None else w.bodies, body,
                                     exclude_adjacent=True, client=w.client)
        adjacent = sorted(tuple(sorted(x)) for x in adj if len(x) == 2)
        if not pairs:
            return SamplingReport(body, 0, adjacent, [], [], [], {}, np.zeros((0, len(w.body(body).movable_indices))))
        det = CollisionDetector(w.loaded if w.loaded is not None else w.client,
                                None if w.loaded is not None else w.bodies, pairs, robot=body)
        rb = w.body(body)
        lo, hi = [], []
        for j in rb.movable_indices:
            info = p.getJointInfo(rb.id, j, physicsClientId=w.client)
            a, b = info[8], info[9]
            if not (a < b):
                a, b = (-1.0, 1.0) if info[2] == p.JOINT_PRISMATIC else (-math.pi, math.pi)
            lo.append(a)
            hi.append(b)
        rng = np.random.default_rng(seed)
        Q = rng.uniform(lo, hi, size=(n, det.dof))
        neutral = np.clip(np.zeros(det.dof), lo, hi)
        coll = det.compute_distances(Q, max_distance=0.01, workers=workers) < 0
        at_neutral = det.compute_distances(neutral, max_distance=0.01) < 0
        det.close()
        frac = coll.mean(axis=0)
        names = [(a.link, b.link) for a, b in det.pairs]
        default = [nm for nm, c in zip(names, at_neutral) if c]
        always = [nm for nm, c, f in zip(names, at_neutral, frac) if not c and f >= always_fraction]
        never = [nm for nm, f in zip(names, frac) if f == 0 and nm not in default]
        return SamplingReport(body, n, adjacent, default, always, never,
                              {nm: float(f) for nm, f in zip(names, frac)}, Q)
    finally:
        _close(tmp)


# ---------------------------------------------------------------------- GUI helper


def clearance_color(distance: float, far: float = 0.3) -> tuple[float, float, float]:
    """RGB for a clearance: red at or below 0, through yellow, to green at ``far`` metres."""
    t = min(max(distance / far, 0.0), 1.0) if far > 0 else 1.0
    if distance <= 0:
        return (1.0, 0.0, 0.0)
    return (min(1.0, 2.0 * (1.0 - t)), min(1.0, 2.0 * t), 0.0)


def draw_closest_points(client: int, results: Sequence[ClosestPoints], *,
                        replace: Sequence[int] | None = None, far: float = 0.3,
                        line_width: float = 2.0) -> list[int]:
    """Draw each pair's closest-point segment as a debug line coloured by clearance (red in
    collision -> green at ``far`` metres or more). Returns the debug item ids, one per result
    (-1 when nothing was found within ``max_distance``); pass them as ``replace`` next time to
    move the lines instead of adding new ones."""
    if replace is not None and len(replace) != len(results):
        raise ShapeError(f"replace has {len(replace)} ids; expected one per result ({len(results)})")
    ids = []
    for k, r in enumerate(results):
        old = -1 if replace is None else int(replace[k])
        if not r.found:
            if old >= 0:
                p.removeUserDebugItem(old, physicsClientId=client)
            ids.append(-1)
            continue
        kwargs = {"replaceItemUniqueId": old} if old >= 0 else {}
        ids.append(p.addUserDebugLine(r.point_a.tolist(), r.point_b.tolist(), clearance_color(r.distance, far),
                                      lineWidth=line_width, physicsClientId=client, **kwargs))
    return ids


__all__ = ["NamedCollisionObject", "CollisionDetector", "ClosestPoints", "all_links", "adjacent_links",
           "self_collision_pairs", "robot_vs_world", "sample_disabled_pairs", "SamplingReport",
           "draw_closest_points", "clearance_color", "DisabledPair", "read_srdf_disabled",
           "write_srdf_disabled", "srdf_disabled_xml"]
