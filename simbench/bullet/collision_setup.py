"""Resolving a detector's request into plain data, once, when it is built: which robots ``q``
sets (and in which order), which pairs are checked (names resolved to body ids and link
indices, disabled pairs and PyBullet's collision filters applied, padding per link)."""
from __future__ import annotations

import logging
import math
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pybullet as p

from ..errors import (SceneError, ShapeError, SimbenchError, UnknownNameError, degrees_hint, finite_number,
                      lookup, real_array, reason, shown)
from .collision_filters import FilterRule, filter_generation
from .collision_kernels import WholeBody
from .collision_names import NamedCollisionObject, Pair, as_object, as_pair, disabled_entries
from .collision_world import RawScene, facts, is_server_pair, turn_limits
from .scene import LoadedBody, LoadedScene

logger = logging.getLogger(__name__)
TURN = 2 * math.pi


@dataclass(frozen=True)
class Plan:
    """What a detector queries. ``poses``: per robot (body id, joint indices, start, stop) with
    ``q[start:stop]`` its joints; ``pair_args``: the kernels' pair tuples; ``pair_links``: per
    pair ((body id, link indices), (body id, link indices)); ``body_ids``: every body named;
    ``lo``, ``hi``: per column of q, the limits judged by :func:`~simbench.errors.degrees_hint`."""

    robots: tuple[str, ...]
    robot_bodies: tuple[LoadedBody, ...]
    poses: tuple[tuple[int, list[int], int, int], ...]
    joint_names: tuple[str, ...]
    pairs: list[Pair]
    pair_links: list[tuple[tuple[int, tuple[int, ...]], tuple[int, tuple[int, ...]]]]
    pair_args: tuple[tuple, ...]
    body_ids: dict[str, int]
    lo: np.ndarray
    hi: np.ndarray
    said: list[str] = field(default_factory=list)   # the degrees line, once said
    request: tuple = ()       # (robot, pairs, padding, disabled) as given: :func:`refreshed` plans again
    filters: int = 0          # the filters' generation it was planned with

    @property
    def dof(self) -> int:
        return len(self.joint_names)

    def check_values(self, arr: np.ndarray, name: str, cols: np.ndarray | None = None) -> None:
        """Refuse a non-finite value of ``arr`` (..., dof; or more columns, the joints' at
        ``cols``), and say once a joint angle that looks like degrees (:meth:`judge_turns`)."""
        if not np.isfinite(arr).all():
            bad = np.argwhere(~np.isfinite(arr))[0]
            col = int(bad[-1])
            hit = np.flatnonzero(cols == col) if cols is not None else [col]
            what = f"joint {self.joint_names[hit[0]]!r}" if len(hit) else "a base pose"
            raise ShapeError(f"{name} holds a non-finite value {arr[tuple(bad)]} at index "
                             f"{tuple(int(i) for i in bad)} ({what})")
        if not self.said:
            self.judge_turns(arr if cols is None else arr[..., cols], name)

    def turned(self, q: list[float]) -> None:
        """:meth:`judge_turns` for one configuration as a list (the fast paths: two comparisons)."""
        if not self.said and q and (max(q) > TURN or min(q) < -TURN):
            self.judge_turns(np.array(q), "q")

    def judge_turns(self, q: np.ndarray, name: str) -> None:
        """Log once per detector a joint value beyond a turn and outside its limits: degrees given
        for radians, most likely. The query is answered as given (a configuration outside the
        limits is a fair question)."""
        hint = degrees_hint(q, self.joint_names, self.lo, self.hi)
        if hint:
            self.said.append(hint)
            logger.warning("%s: %s; answered as radians (said once per detector)", name, hint)

    def from_mapping(self, q: Mapping, name: str, current: Callable[[], np.ndarray]) -> np.ndarray:
        """A ``q`` given as a mapping as one array in :attr:`joint_names` order: robot name ->
        that robot's q (an array or a mapping by joint name; a robot left out keeps ``current()``),
        or joint name -> value."""
        if q and all(k in self.robots for k in q):  # body name -> that robot's q
            parts, batch = [], ()
            for rb, (_, idx, start, stop) in zip(self.robot_bodies, self.poses):
                if rb.name in q:
                    sub = q[rb.name]
                    if isinstance(sub, Mapping):
                        sub = by_joint_name(sub, rb.movable_names, f"{name}[{rb.name!r}]", rb.name)
                    try:
                        sub = real_array(sub)
                    except (TypeError, ValueError, OverflowError) as exc:
                        raise ShapeError(f"{name}[{rb.name!r}] must be numbers, got {shown(sub)} ({reason(exc)})") from None
                    if sub.ndim == 0 or sub.shape[-1] != stop - start:
                        raise ShapeError(f"{name}[{rb.name!r}] has shape {sub.shape}; expected (..., {stop - start}) "
                                         f"with joints in order {list(rb.movable_names)}")
                    batch = np.broadcast_shapes(batch, sub.shape[:-1])
                    parts.append(sub)
                else:
                    parts.append(None)
            now = current() if any(x is None for x in parts) else None
            full = [np.broadcast_to(x if x is not None else now[s:e], batch + (e - s,))
                    for x, (_, _, s, e) in zip(parts, self.poses)]
            return np.concatenate(full, axis=-1) if full else np.zeros(batch + (0,))
        unknown = [k for k in q if k not in self.robots and k not in self.joint_names]
        if unknown:   # neither form: a robot's name (its q) or a joint's name (its value)
            raise UnknownNameError("robot or movable joint", unknown[0], [*self.robots, *self.joint_names],
                                   f"the keys of {name}")
        return by_joint_name(q, self.joint_names, name, ", ".join(self.robots))


def given_columns(pl: Plan, q: Mapping) -> np.ndarray:
    """Which columns of :meth:`Plan.from_mapping`'s array ``q`` gave (the others are the current
    configuration's, not the caller's to be judged)."""
    mask = np.zeros(pl.dof, dtype=bool)
    by_robot = bool(q) and all(k in pl.robots for k in q)
    for rb, (_, _, start, stop) in zip(pl.robot_bodies, pl.poses):
        mask[start:stop] = rb.name in q if by_robot else [n in q for n in pl.joint_names[start:stop]]
    return mask


#: more worker processes than this many per CPU only cost memory (each loads the scene: ~150 MB)
WORKERS_PER_CPU = 4


def check_workers(workers: Any) -> int:
    """A number of worker processes: an integer >= 1 and at most :data:`WORKERS_PER_CPU` per CPU
    of this machine, or one line naming the value (``workers=10**6`` started hundreds of
    processes, each loading the scene)."""
    if isinstance(workers, bool) or not isinstance(workers, (int, np.integer)) or workers < 1:
        raise SimbenchError(f"workers = {shown(workers)}; expected an integer >= 1 (1: this process only)")
    most = WORKERS_PER_CPU * (os.cpu_count() or 1)
    if workers > most:
        raise SimbenchError(f"workers = {workers:,}; expected at most {most} ({WORKERS_PER_CPU} per CPU of this "
                            f"machine's {os.cpu_count() or 1}; each worker loads the scene), e.g. workers={os.cpu_count() or 1}")
    return int(workers)


def plan(loaded: LoadedScene, robot: str | Sequence[str] | None, pairs: Iterable[Any], padding: Any,
         disabled: Any) -> Plan:
    """Resolve robots and pairs (see :class:`~simbench.bullet.collision_detector.CollisionDetector`)."""
    pairs = list(pairs)
    generation = filter_generation(loaded)
    pl = _Resolver(loaded, robot).plan(pairs, padding, disabled)
    return replace(pl, request=(robot, pairs, padding, disabled), filters=generation)


def refreshed(pl: Plan, loaded: LoadedScene) -> Plan | None:
    """``pl`` planned again when collision filters were set on ``loaded`` since (the same pairs,
    the same columns; other links excluded), else None."""
    if filter_generation(loaded) == pl.filters:
        return None
    new = plan(loaded, *pl.request)
    new.said.extend(pl.said)
    return new


class _Resolver:
    def __init__(self, loaded: LoadedScene, robot: str | Sequence[str] | None):
        self.loaded = loaded
        if robot is None:
            try:
                names: tuple[str, ...] = (loaded.robot_name,)
            except SceneError:
                names = ()  # a scene without joints: nothing to pose
        else:
            names = (robot,) if isinstance(robot, str) else tuple(robot)
        if len(set(names)) != len(names):
            raise SimbenchError(f"robot lists a body twice: {list(names)}")
        self.robots = names
        self.robot_bodies = tuple(loaded.body(n) for n in names)
        self.robot_links = {n for rb in self.robot_bodies for n in rb.links}
        poses, joint_names, start = [], [], 0
        for rb in self.robot_bodies:
            table = facts(rb).joints
            for j in rb.movable_indices:
                if table[j].type == p.JOINT_SPHERICAL:
                    raise SimbenchError(f"robot {rb.name!r} has a spherical joint {table[j].name!r}; the "
                                        "collision detector supports revolute and prismatic joints only")
            stop = start + len(rb.movable_indices)
            poses.append((rb.id, list(rb.movable_indices), start, stop))
            joint_names += [n if len(names) == 1 else f"{rb.name}/{n}" for n in rb.movable_names]
            start = stop
        self.poses, self.joint_names = tuple(poses), tuple(joint_names)
        turns = [turn_limits(rb) for rb in self.robot_bodies]
        self.lo = np.concatenate([lo for lo, _ in turns]) if turns else np.zeros(0)
        self.hi = np.concatenate([hi for _, hi in turns]) if turns else np.zeros(0)

    @property
    def bodies(self) -> dict[str, int]:
        return self.loaded.bodies

    def named(self, obj: NamedCollisionObject) -> NamedCollisionObject:
        """``"body/link"`` (and ``"body/(base)"``), as results print a link, read as (body, link)
        when no body has that name."""
        if obj.whole_body and obj.body not in self.bodies and "/" in obj.body:
            body, link = obj.body.split("/", 1)
            where = self.loaded.scene.source if self.loaded.scene is not None else "the bodies dict"
            lookup(self.bodies, body, "body", f"{where} (in {obj.body!r})")
            return NamedCollisionObject(body, None if link == "(base)" else link)
        return obj

    def resolve(self, obj: NamedCollisionObject) -> tuple[int, int]:
        b = self.loaded.body(obj.body)
        return b.id, (-2 if obj.whole_body else b.link_index(obj.link))

    def plan(self, pairs: Iterable[Any], padding: Any, disabled: Any) -> Plan:
        all_pairs = [(self.named(a), self.named(b)) for a, b in map(as_pair, pairs)]
        skip = self.disabled_set(disabled)
        rule = FilterRule(self.loaded)
        keep, args, links = [], [], []
        for a, b in all_pairs:
            (ia, la), (ib, lb) = self.resolve(a), self.resolve(b)
            if ia == ib and (la == -2 or lb == -2):
                raise SimbenchError(f"pair ({a}, {b}) asks for a whole body against itself; list its link "
                                    f"pairs instead, e.g. self_collision_pairs(scene, {a.body!r})")
            if (ia, la) == (ib, lb):
                raise SimbenchError(f"pair ({a}, {b}) names one link twice; a link cannot collide with itself")
            links_a, links_b = self.links_of(a.body, la), self.links_of(b.body, lb)
            skipped = frozenset((x, y) for x in links_a for y in links_b if frozenset(((ia, x), (ib, y))) in skip)
            excluded = skipped | {(x, y) for x in links_a for y in links_b if not rule.allows((ia, x), (ib, y))}
            every = len(links_a) * len(links_b)
            if len(skipped) == every:
                continue  # disabled by the caller: never checked
            # filtered out entirely: the column stays (the filters may change), reading "nothing found"
            pads_a = {x: self.padding_of(NamedCollisionObject(a.body, self.link_name(a.body, x)), padding)
                      for x in links_a}
            pads_b = {y: self.padding_of(NamedCollisionObject(b.body, self.link_name(b.body, y)), padding)
                      for y in links_b}
            # per-link data only where it matters (uneven padding of a whole body, or exclusions);
            # otherwise the minimum over PyBullet's points is the answer
            uniform = len(set(pads_a.values())) == 1 and len(set(pads_b.values())) == 1
            whole = None if ((la != -2 and lb != -2) or (uniform and not excluded)) and len(excluded) < every \
                else WholeBody(pads_a, pads_b, frozenset(excluded))
            keep.append((a, b))
            links.append(((ia, tuple(links_a)), (ib, tuple(links_b))))
            args.append((ia, ib, la, lb, pads_a[links_a[0]], pads_b[links_b[0]], whole))
        body_ids = {o.body: self.bodies[o.body] for pr in keep for o in pr}
        body_ids.update({rb.name: rb.id for rb in self.robot_bodies})
        return Plan(self.robots, self.robot_bodies, self.poses, self.joint_names, keep, links, tuple(args),
                    body_ids, self.lo, self.hi)

    def links_of(self, body: str, link: int) -> list[int]:
        if link != -2:
            return [link]
        return sorted(facts(self.loaded.body(body)).geometry) or [-1]

    def link_name(self, body: str, link: int) -> str | None:
        return facts(self.loaded.body(body)).names[link]

    def objects_of(self, item: Any) -> list[tuple[int, int]]:
        """(body id, link index) of a disabled/padding key: NamedCollisionObject or tuple ->
        that link (whole body: every link); a robot link name -> that link of each robot
        having it; a body name -> every link of the body."""
        if isinstance(item, (NamedCollisionObject, tuple)):
            obj = as_object(item)
            bid, li = self.resolve(obj)
            b = self.loaded.body(obj.body)
            return [(bid, i) for i in facts(b).names] if li == -2 else [(bid, li)]
        if isinstance(item, str):
            hits = [(rb.id, rb.links[item]) for rb in self.robot_bodies if item in rb.links]
            if hits:
                return hits
            if item in self.bodies:
                b = self.loaded.body(item)
                return [(b.id, i) for i in b.links.values()]
            valid = [n for rb in self.robot_bodies for n in rb.links] + list(self.bodies)
            where = f"robot {self.robots[0]!r} / the scene" if self.robots else "the scene"
            raise UnknownNameError("link or body", item, valid, where)
        raise SimbenchError(f"cannot read {shown(item)} as a link: expected a robot link name, a body name "
                            "or a NamedCollisionObject")

    def disabled_set(self, disabled: Any) -> set[frozenset]:
        out = set()
        for a, b in disabled_entries(disabled):
            for oa in self.objects_of(a):
                for ob in self.objects_of(b):
                    out.add(frozenset((oa, ob)))
        return out

    def padding_of(self, obj: NamedCollisionObject, padding: Any) -> float:
        if padding is None:
            return 0.0
        if not isinstance(padding, Mapping):
            value = padding if obj.body in self.robots else 0.0
        else:  # a key naming one link wins over a key naming the whole body
            by_body = by_link = None
            target = self.resolve(obj)
            for key, v in padding.items():
                if target in self.objects_of(key):
                    if isinstance(key, str) and key in self.bodies and key not in self.robot_links:
                        by_body = v
                    elif isinstance(key, NamedCollisionObject) and key.whole_body:
                        by_body = v
                    else:
                        by_link = v
            value = by_link if by_link is not None else (by_body if by_body is not None else 0.0)
        try:
            value = float(value)
        except (TypeError, ValueError, OverflowError):
            raise SimbenchError(f"padding of {obj} is {shown(value)}; expected metres") from None
        if not math.isfinite(value) or value < 0:
            raise SimbenchError(f"padding of {obj} is {shown(value)}; expected a finite number >= 0 (metres)")
        return value


# ---------------------------------------------------------------------- argument checks
def source(scene: Any, bodies: Mapping[str, int] | None, sync: Any) -> tuple[LoadedScene, Any]:
    """The LoadedScene a detector queries, and its WorldSync (for a ServerPair)."""
    if is_server_pair(scene):
        if sync is None:
            sync = scene.world_sync()
        scene = scene.collision
    if isinstance(scene, LoadedScene):
        if bodies is not None and dict(bodies) != scene.bodies:
            raise SimbenchError(f"bodies {dict(bodies)} differ from the loaded scene's {scene.bodies}")
        return scene, sync
    if isinstance(scene, (int, np.integer)) and not isinstance(scene, bool):
        if not isinstance(bodies, Mapping):
            raise SimbenchError("CollisionDetector(client_id, pairs, bodies=...): bodies must be a dict "
                                "body name -> PyBullet body id")
        if not p.isConnected(physicsClientId=int(scene)):
            raise SimbenchError(f"PyBullet client {scene} is not connected")
        return RawScene(int(scene), bodies), sync
    raise SimbenchError(f"expected a ServerPair, LoadedScene or PyBullet client id, got {shown(scene)}")


def by_joint_name(q: Mapping, names: Sequence[str], what: str, owner: str) -> np.ndarray:
    """A configuration given as a mapping joint name -> value(s), in ``names`` order."""
    for k in q:
        if k not in names:
            raise UnknownNameError("movable joint", k, names, f"robot {owner!r}")
    missing = [n for n in names if n not in q]
    if missing:
        raise ShapeError(f"{what} is missing joints {missing}; expected every joint of {list(names)}")
    return np.stack([np.asarray(q[n], dtype=float) for n in names], axis=-1) if names else np.zeros(0)


def check_distance(value: Any, what: str, minimum: float | None = None) -> float:
    """``value`` as a finite number of metres (>= ``minimum`` when given), else one clear error."""
    v = finite_number(value, what, " of metres")
    if minimum is not None and v < minimum:
        raise SimbenchError(f"{what} = {shown(value)}; expected a distance >= {minimum:g} m (it is where distances "
                            f"saturate; a margin (margin=, --margin) asks about penetration)")
    return v


__all__ = ["Plan", "plan", "source", "by_joint_name", "check_distance"]
