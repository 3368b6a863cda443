"""Pair builders: which named objects a detector should compare.

Each takes a scene in any form (a ``LoadedScene``, a ``ServerPair``, a ``Scene`` or scene path
loaded into a temporary server, or a ``bodies`` dict with ``client=``, as in Adam Heins's
"shortest distances with PyBullet") and returns ``(A, B)`` pairs of :class:`~simbench.bullet.collision_names.NamedCollisionObject`.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .collision_names import NamedCollisionObject, Pair, disabled_entries
from .collision_sampling import default_disabled
from .collision_world import adjacent_indices, as_loaded, candidate_self_pairs, close_temporary, facts
from .scene import LoadedBody


def all_links(scene_or_bodies: Any, body: str, *, client: int | None = None,
              with_geometry: bool = True) -> list[NamedCollisionObject]:
    """Every link of ``body`` (base first, then PyBullet order) as NamedCollisionObjects.

    ``with_geometry``: only links that have a collision shape (the others never collide).
    """
    loaded, tmp = as_loaded(scene_or_bodies, client)
    try:
        b = loaded.body(body)
        geometry = facts(b).geometry
        return [NamedCollisionObject(body, name) for name, idx in b.links.items()
                if not with_geometry or idx in geometry]
    finally:
        close_temporary(tmp)


def adjacent_links(scene_or_bodies: Any, body: str, *, client: int | None = None) -> set[frozenset[str]]:
    """Pairs of link names of ``body`` that are adjacent: parent/child, also across fixed
    joints (links joined by fixed joints form one rigid group; two links are adjacent when they
    are in the same group or in groups joined by one joint) and across links without collision
    geometry (as MoveIt's setup assistant treats them)."""
    loaded, tmp = as_loaded(scene_or_bodies, client)
    try:
        b = loaded.body(body)
        names = facts(b).names
        return {frozenset(names[i] for i in pr) for pr in adjacent_indices(b)}
    finally:
        close_temporary(tmp)


def self_collision_pairs(scene_or_bodies: Any, body: str | None = None, exclude_adjacent: bool = True,
                         *, client: int | None = None, disabled: Any = "default") -> list[Pair]:
    """Pairs of ``body``'s links that have collision geometry and can move relative to each
    other, minus adjacent pairs, minus ``disabled``:

    * ``"default"``: the robot's sampled allowed-collision matrix (adjacent, always and never
      colliding pairs as MoveIt's setup assistant finds them; computed once per robot file and
      cached, see :mod:`simbench.bullet.collision_sampling`);
    * ``None``: nothing more (every non-adjacent pair);
    * an SRDF path, or pairs of link names.
    """
    loaded, tmp = as_loaded(scene_or_bodies, client)
    try:
        body = body or loaded.robot_name
        b = loaded.body(body)
        names = facts(b).names
        if isinstance(disabled, str) and disabled == "default":
            disabled = default_disabled(b)
        skip = _disabled_link_names(disabled, b)
        out = []
        for ia, ib in candidate_self_pairs(b, exclude_adjacent):
            na, nb = names[ia], names[ib]
            if frozenset((na, nb)) not in skip:
                out.append((NamedCollisionObject(body, na), NamedCollisionObject(body, nb)))
        return out
    finally:
        close_temporary(tmp)


def robot_vs_world(scene_or_bodies: Any, robot: str | None = None, world: Iterable[str] | None = None,
                   *, client: int | None = None, include_static: bool = False) -> list[Pair]:
    """Every robot link with geometry against every link with geometry of the other bodies
    (``world``: body names, default all others).

    Links rigidly attached to the robot's base never move with ``q``; they are left out unless
    ``include_static`` (their distance to the world is a constant, e.g. the base resting on the
    ground gives a permanent contact).
    """
    loaded, tmp = as_loaded(scene_or_bodies, client)
    try:
        robot = robot or loaded.robot_name
        f = facts(loaded.body(robot))
        mine = [f.names[i] for i in sorted(f.geometry) if include_static or f.group[i] != -1]
        others = [n for n in (world if world is not None else loaded.bodies) if n != robot]
        targets = []
        for name in others:
            fo = facts(loaded.body(name))
            targets += [NamedCollisionObject(name, fo.names[i]) for i in sorted(fo.geometry)]
        return [(NamedCollisionObject(robot, ln), t) for ln in mine for t in targets]
    finally:
        close_temporary(tmp)


def _disabled_link_names(disabled: Any, body: LoadedBody) -> set[frozenset[str]]:
    """SRDF path or link-name pairs -> set of frozenset link-name pairs (names checked)."""
    out = set()
    for a, b in disabled_entries(disabled):
        a = a.link if isinstance(a, NamedCollisionObject) else a
        b = b.link if isinstance(b, NamedCollisionObject) else b
        body.link_index(a), body.link_index(b)  # unknown names: close matches
        out.add(frozenset((a, b)))
    return out


__all__ = ["all_links", "adjacent_links", "self_collision_pairs", "robot_vs_world"]
