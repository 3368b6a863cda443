"""The scene as the collision code sees it: a :class:`~simbench.bullet.scene.LoadedScene` (also
for a raw ``client`` + ``bodies`` dict, the form of Adam Heins's "shortest distances with
PyBullet") and, per loaded body, one parsed joint table with the facts the queries need (link
names by index, which links have collision geometry, the rigid groups that fixed joints form)."""
from __future__ import annotations

import contextlib
import os
import weakref
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pybullet as p

from ..errors import SceneError, ShapeError, SimbenchError, lookup
from ..spatial import pose_mul
from .records import JointInfo, dynamics_info, joint_infos
from .scene import LoadedBody, LoadedScene, Scene, load_scene


class RawScene(LoadedScene):
    """Bodies that the user loaded into a client themselves (a ``bodies`` dict, name -> body
    id, as in Adam Heins's post): a :class:`LoadedScene` without a scene description."""

    def __init__(self, client: int, bodies: Mapping[str, int]):
        super().__init__(None, int(client), dict(bodies))  # type: ignore[arg-type]

    def body(self, name: str) -> LoadedBody:
        if name not in self._loaded:
            self._loaded[name] = LoadedBody(name, lookup(self.bodies, name, "body", "the bodies dict"), self.client)
        return self._loaded[name]

    @property
    def robot_name(self) -> str:
        if "robot" in self.bodies:
            return "robot"
        for name in self.bodies:
            if self.body(name).movable_indices:
                return name
        raise SceneError("no body has movable joints, so there is no robot (pass robot=...)")


def is_server_pair(source: Any) -> bool:
    return isinstance(getattr(source, "collision", None), LoadedScene) and hasattr(source, "main")


def as_loaded(source: Any, client: int | None = None) -> tuple[LoadedScene, int | None]:
    """A LoadedScene for a LoadedScene, a ServerPair (its collision server), a ``bodies`` dict
    with ``client=``, or a Scene / scene path (loaded into a temporary DIRECT client, returned
    second so that the caller disconnects it; else None)."""
    if isinstance(source, LoadedScene):
        return source, None
    if is_server_pair(source):
        return source.collision, None
    if isinstance(source, Mapping):
        if client is None:
            raise SimbenchError("a plain bodies dict needs client= (the PyBullet client id)")
        return RawScene(client, source), None
    if isinstance(source, (Scene, str, os.PathLike)):
        scene = load_scene(source)
        tmp = p.connect(p.DIRECT)
        try:
            return scene.load(tmp, quiet=True), tmp
        except BaseException:
            p.disconnect(physicsClientId=tmp)
            raise
    raise SimbenchError(f"expected a LoadedScene, ServerPair, Scene, scene path or bodies dict, "
                        f"got {type(source).__name__}")


def close_temporary(tmp: int | None) -> None:
    if tmp is not None and p.isConnected(physicsClientId=tmp):
        p.disconnect(physicsClientId=tmp)


@dataclass(frozen=True)
class BodyFacts:
    """One loaded body, parsed once: its joint table (PyBullet order; joint j moves link j),
    link names by index (-1: the base), the links with collision geometry, and the rigid
    groups (links joined by fixed joints; each group labelled by its top link, -1 for the
    base's) with the parent group of each group (None at the base)."""

    joints: tuple[JointInfo, ...]
    names: dict[int, str]
    geometry: frozenset[int]
    group: dict[int, int]
    group_parent: dict[int, int | None]

    def parent(self, link: int) -> int:
        return self.joints[link].parent_index


_facts: "weakref.WeakKeyDictionary[LoadedBody, BodyFacts]" = weakref.WeakKeyDictionary()


def facts(body: LoadedBody) -> BodyFacts:
    """The :class:`BodyFacts` of ``body`` (computed on first use, then cached with it)."""
    f = _facts.get(body)
    if f is None:
        joints = joint_infos(body.id, body.client)
        names = {idx: name for name, idx in body.links.items()}
        geometry = frozenset(i for i in names if p.getCollisionShapeData(body.id, i, physicsClientId=body.client))
        group: dict[int, int] = {-1: -1}
        for j in joints:  # parents come before children in PyBullet's order
            group[j.index] = group[j.parent_index] if j.type == p.JOINT_FIXED else j.index
        gparent = {g: (None if g == -1 else group[joints[g].parent_index]) for g in set(group.values())}
        f = _facts[body] = BodyFacts(joints, names, geometry, group, gparent)
    return f




# ---------------------------------------------------------------------- structure of one body
def adjacent_indices(body: LoadedBody) -> set[frozenset[int]]:
    """Pairs of link indices of ``body`` that are adjacent: in the same rigid group, or in
    groups joined by one joint, also across groups without collision geometry (as MoveIt's
    setup assistant treats them)."""
    f = facts(body)
    geom = {g: any(l in f.geometry for l, gg in f.group.items() if gg == g) for g in f.group_parent}

    def geometric_parent(g: int) -> int | None:
        q = f.group_parent[g]
        while q is not None and not geom[q]:
            q = f.group_parent[q]
        return q

    links = sorted(f.group)
    out: set[frozenset[int]] = set()
    for i, la in enumerate(links):
        for lb in links[i + 1:]:
            ga, gb = f.group[la], f.group[lb]
            if (ga == gb or f.group_parent[ga] == gb or f.group_parent[gb] == ga
                    or geometric_parent(ga) == gb or geometric_parent(gb) == ga):
                out.add(frozenset((la, lb)))
    return out


def candidate_self_pairs(body: LoadedBody, exclude_adjacent: bool = True) -> list[tuple[int, int]]:
    """Pairs (i, j), i < j in PyBullet order, of ``body``'s links with collision geometry that
    can move relative to each other, minus adjacent pairs when ``exclude_adjacent``."""
    f = facts(body)
    links = sorted(f.geometry)
    adjacent = adjacent_indices(body) if exclude_adjacent else set()
    return [(a, b) for k, a in enumerate(links) for b in links[k + 1:]
            if f.group[a] != f.group[b] and frozenset((a, b)) not in adjacent]


def link_limits(body: LoadedBody) -> tuple[list[float], list[float]]:
    """Lower and upper limits of ``body``'s movable joints (file order); joints without
    limits (or beyond WIDEST_LIMIT) get [-pi, pi] (revolute) or [-1, 1] m (prismatic)."""
    import math

    from ..model_checks import WIDEST_LIMIT

    f = facts(body)
    lo, hi = [], []
    for j in body.movable_indices:
        info = f.joints[j]
        a, b = info.lower_limit, info.upper_limit
        if not (a < b) or max(abs(a), abs(b)) > WIDEST_LIMIT:   # as RobotModel.random_configuration
            a, b = (-1.0, 1.0) if info.type == p.JOINT_PRISMATIC else (-math.pi, math.pi)
        lo.append(a)
        hi.append(b)
    return lo, hi


def turn_limits(body: LoadedBody) -> tuple[np.ndarray, np.ndarray]:
    """Per movable joint of ``body`` (file order), the limits [lo, hi] rad of a limited revolute
    joint, (-inf, inf) for the others: what :func:`~simbench.errors.degrees_hint` judges."""
    f = facts(body)
    lims = [(f.joints[j].lower_limit, f.joints[j].upper_limit) for j in body.movable_indices]
    rev = [f.joints[j].type == p.JOINT_REVOLUTE and a < b for j, (a, b) in zip(body.movable_indices, lims)]
    lo = np.array([a if r else -np.inf for (a, _), r in zip(lims, rev)], dtype=float)
    hi = np.array([b if r else np.inf for (_, b), r in zip(lims, rev)], dtype=float)
    return lo, hi


class FloatingBases:
    """The base poses a detector's ``q`` may carry for robots whose scene leaves the base free
    (``fixed_base = false``): per robot, in the detector's robot order, ``[x, y, z, qx, qy, qz,
    qw]`` (the base link frame in the world, as ``sim.model``'s q) before that robot's joints,
    ``nq`` columns in all. A ``q`` with only the joints (``dof`` columns) leaves the bases
    where they are. PyBullet places a base by its inertial frame, so a pose is turned into
    ``(p + R c, R R_in)`` with the base's local inertial frame ``(c, R_in)``."""

    def __init__(self, bodies: Sequence[LoadedBody], poses: Sequence[tuple[int, list[int], int, int]]):
        self.entries: list[tuple[int, int, tuple, tuple]] = []  # (body id, column, local pos, local orn)
        self.names: dict[int, str] = {}
        cols: list[int] = []
        at = 0
        for rb, (_, _, start, stop) in zip(bodies, poses):
            if not rb.fixed_base:
                info = dynamics_info(rb.id, -1, rb.client)
                self.entries.append((rb.id, at, tuple(info.local_inertial_position),
                                     tuple(info.local_inertial_orientation)))
                self.names[rb.id] = rb.name
                at += 7
            cols += range(at, at + stop - start)
            at += stop - start
        self.nq = at
        #: columns of a full (nq) row that hold the joints, in the detector's dof order
        self.joint_cols = np.array(cols, dtype=int)

    def pose(self, client: int, row: np.ndarray) -> None:
        """Put every floating robot's base at its pose in the full row ``row`` (nq,)."""
        for body, col, c, r_in in self.entries:
            quat = row[col + 3:col + 7]
            norm = float(np.linalg.norm(quat))
            if not norm > 0:
                raise ShapeError(f"q[{col + 3}:{col + 7}] = {quat.tolist()} is the base quaternion of body "
                                 f"{self.names[body]!r}; expected a non-zero quaternion (x, y, z, w)")
            pos, orn = pose_mul(row[col:col + 3], quat / norm, c, r_in)   # float64, unlike multiplyTransforms
            p.resetBasePositionAndOrientation(body, pos, orn, physicsClientId=client)

    @contextlib.contextmanager
    def kept(self, client: int) -> Iterator[None]:
        """Restore the floating bases' poses on ``client`` afterwards (the collision server's
        sync only follows changes of the main world)."""
        saved = [(body, p.getBasePositionAndOrientation(body, physicsClientId=client)) for body, *_ in self.entries]
        try:
            yield
        finally:
            for body, (pos, orn) in saved:
                p.resetBasePositionAndOrientation(body, pos, orn, physicsClientId=client)


__all__ = ["RawScene", "FloatingBases", "BodyFacts", "as_loaded", "close_temporary", "facts", "is_server_pair",
           "adjacent_indices", "candidate_self_pairs", "link_limits"]
