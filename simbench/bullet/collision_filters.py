"""PyBullet's collision filters, honoured by the detector's pair lists.

PyBullet's ``getClosestPoints`` ignores collision filters (measured: a -0.5 m overlap is still
reported with the filters on), so the detector applies them itself, once, when it builds its
pairs: a link pair that PyBullet's simulation would never let collide is never in collision (a
whole-body pair skips those link combinations; a pair left with none keeps its column, which
reads "nothing found": ``max_distance``, no points). The rule, measured on PyBullet 3.2 with simulation contacts
(``tests/test_collision_filters.py``; PyBullet's default filter mode):

* links i and j collide when ``group_i & mask_j`` or ``group_j & mask_i`` is non-zero (an *or*:
  robot group 1 mask 1 does touch a cube with group 4 mask 1);
* a pair filter (``setCollisionFilterPair``) overrides that rule for one link pair: enabled 0
  never collides, 1 always does.

Where the filters come from: the scene keys ``collision_group`` / ``collision_mask`` of a body
(set on every link of it by ``Scene.load``, so on both servers; a key left out keeps PyBullet's
default for each link, :func:`~simbench.bullet.scene.spec_filter`), and :func:`set_collision_filter_group_mask` /
:func:`set_collision_filter_pair` below, which set PyBullet's filters on both servers of a
``ServerPair`` (or on one loaded scene) and remember them with it. PyBullet has no call that
reads filters back, so filters set by calling PyBullet directly are not seen; a detector reads
the filters when it is built, and again at its next query after they were set through simbench. Links without an explicit group/mask follow PyBullet's defaults (links with
mass: group 1, mask all; massless links such as a fixed base: group 2, mask all but 2), used
only when the other link of the pair has explicit filters. With no filters set at all, every
pair is checked, as before, including pairs of two static links (a fixed base and a fixed
obstacle) that PyBullet's simulation never lets touch.
"""
from __future__ import annotations

from typing import Any

import pybullet as p

from ..errors import SimbenchError, shown
from .collision_names import ObjectLike, as_object
from .collision_world import facts
from .records import dynamics_info
from .scene import DEFAULT_DYNAMIC, DEFAULT_STATIC, LoadedScene, spec_filter


def _targets(target: Any) -> list[LoadedScene]:
    if isinstance(getattr(target, "collision", None), LoadedScene) and hasattr(target, "main"):
        return [target.main, target.collision]
    if isinstance(target, LoadedScene):
        return [target]
    raise SimbenchError(f"expected a ServerPair or a LoadedScene, got {type(target).__name__}")


class _Record:
    """Filters set through simbench on one loaded scene (PyBullet cannot report them back):
    (body id, link) -> (group, mask), and {(body, link), (body, link)} -> enabled."""

    def __init__(self) -> None:
        self.group_mask: dict[tuple[int, int], tuple[int, int]] = {}
        self.pairs: dict[frozenset, bool] = {}
        self.generation = 0   # counts the changes: a detector re-reads the filters when it moves


def filter_generation(loaded: LoadedScene) -> int:
    """How many times filters were set through simbench on ``loaded`` (a detector built at one
    count re-reads them at the next query when the count has moved)."""
    return _record(loaded).generation


def _record(loaded: LoadedScene) -> _Record:
    rec = loaded.__dict__.get("_collision_filters")
    if rec is None:
        rec = loaded.__dict__["_collision_filters"] = _Record()
    return rec


def _links(loaded: LoadedScene, obj: ObjectLike) -> list[tuple[int, int]]:
    o = as_object(obj)
    b = loaded.body(o.body)
    if o.whole_body:
        return [(b.id, i) for i in sorted(facts(b).names)]
    return [(b.id, b.link_index(o.link))]


def _int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise SimbenchError(f"{what} = {shown(value)}; expected an integer bit mask (e.g. 1, 2, 0b101, -1 for all)")
    return value


def set_collision_filter_group_mask(target: Any, body: str, group: int, mask: int, link: str | None = ...) -> None:
    """Set PyBullet's collision filter group and mask of ``body``'s links (every link, or
    ``link``; None: the base) on ``target`` (a ServerPair: both servers) and remember them."""
    group, mask = _int(group, "collision group"), _int(mask, "collision mask")
    obj = body if link is ... else (body, link)
    for loaded in _targets(target):
        rec = _record(loaded)
        for bid, li in _links(loaded, obj):
            p.setCollisionFilterGroupMask(bid, li, group, mask, physicsClientId=loaded.client)
            rec.group_mask[(bid, li)] = (group, mask)
        rec.generation += 1


def set_collision_filter_pair(target: Any, a: ObjectLike, b: ObjectLike, enable: bool) -> None:
    """Enable or disable collisions between objects ``a`` and ``b`` (links or whole bodies) with
    PyBullet's ``setCollisionFilterPair`` on ``target`` (a ServerPair: both servers), and
    remember it."""
    for loaded in _targets(target):
        rec = _record(loaded)
        for ba, la in _links(loaded, a):
            for bb, lb in _links(loaded, b):
                p.setCollisionFilterPair(ba, bb, la, lb, int(bool(enable)), physicsClientId=loaded.client)
                rec.pairs[frozenset(((ba, la), (bb, lb)))] = bool(enable)
        rec.generation += 1


class FilterRule:
    """Decides, for one client, whether PyBullet's filters let two links collide."""

    def __init__(self, loaded: LoadedScene):
        self.loaded = loaded
        rec = _record(loaded)
        self.pairs = dict(rec.pairs)
        self.explicit = dict(rec.group_mask)
        for name, bid in loaded.bodies.items():  # the scene keys, as Scene.load set them
            spec = loaded.body(name).spec
            if spec is not None and (spec.collision_group is not None or spec.collision_mask is not None):
                for li in facts(loaded.body(name)).names:
                    self.explicit.setdefault((bid, li), spec_filter(spec, bid, li, loaded.client))
        self.active = bool(self.pairs or self.explicit)

    def _group_mask(self, bid: int, li: int) -> tuple[int, int]:
        gm = self.explicit.get((bid, li))
        if gm is not None:
            return gm
        mass = dynamics_info(bid, li, self.loaded.client).mass
        return DEFAULT_DYNAMIC if mass > 0 else DEFAULT_STATIC

    def allows(self, a: tuple[int, int], b: tuple[int, int]) -> bool:
        """True when links a = (body id, link) and b may collide under PyBullet's filters."""
        if not self.active:
            return True
        forced = self.pairs.get(frozenset((a, b)))
        if forced is not None:
            return forced
        if a not in self.explicit and b not in self.explicit:
            return True
        ga, ma = self._group_mask(*a)
        gb, mb = self._group_mask(*b)
        return bool(ga & mb) or bool(gb & ma)


__all__ = ["FilterRule", "filter_generation", "set_collision_filter_group_mask", "set_collision_filter_pair"]
