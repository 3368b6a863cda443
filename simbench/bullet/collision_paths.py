"""Path checking with a guarantee: straight-line motions in configuration space.

**The motion bound** (Schwarzer, Saha and Latombe, "Adaptive dynamic collision checking for
single and multiple articulated robots in complex environments", IEEE Transactions on
Robotics, 2005). When the joints move along a straight segment by ``dq``, no point of link k
travels farther than

    m_k(dq) = sum_j r_jk |dq_j|

over the movable joints j that carry link k (joints of other robots and static bodies: 0),
with r_jk = 1 for a prismatic joint and, for a revolute joint, a bound on the distance of any
point of link k from joint j's axis (the axis passes through link j's frame origin):

    r_jk = sum of l_i over the links i on the chain from j down to k (j excluded) + rho_k

where l_i is the distance between the frame origins of link i and its parent (constant across
a revolute or fixed joint; plus the joint's travel for a prismatic one) and rho_k the largest
distance from link k's frame origin to a corner of its axis-aligned bounding box, which
contains its collision geometry. The two sides of a pair move relative to each other by at
most m_p = max over side A's links of m_k + max over side B's links of m_k.

**Uniform checking** (``method="uniform"``): n = ceil(max_k m_k(dq) / resolution) equal steps,
so no point of any checked link moves more than ``resolution`` between two checked
configurations. Every configuration of the edge lies within half a step of a checked one, where
pair p's distance differs by at most m_p / (2 n) (<= ``resolution``); a checked configuration
is flagged when a pair is closer than ``margin + m_p / (2 n)``.

**Conservative advancement** (``method="advance"``, the default): at fraction t, with the
distance d of every pair of links within reach, nothing can come closer than ``margin`` before
t + min (d - margin) / (m_a + m_b) (the two links' bounds; a whole-body pair gives one distance
per link pair), so the check jumps there. It flags a configuration whose step would be shorter
than half the uniform step (a clearance the uniform check would not accept either).

Either way, an edge reported free has every pair at least ``margin`` apart at *every*
configuration on it (up to PyBullet's own distance accuracy), and a flagged configuration is
within about ``resolution`` of a real contact. Batched over edges: all samples of a group of
edges go to the detector in one batch (worker processes apply).
"""
from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np
import pybullet as p

from ..errors import ShapeError, SimbenchError, finite_number, shown
from ..spatial import pose_inv, pose_mul
from .collision_world import facts, link_limits
from .records import LinkState, dynamics_info

EDGES_PER_BATCH = 64


class PathHit(NamedTuple):
    """The first flagged configuration of a path: edge index, fraction ``t`` along the edge,
    the configuration, and the pair whose clearance was too small."""

    edge: int
    t: float
    q: np.ndarray
    pair: tuple


class MotionBound:
    """The matrix r_jk of a detector: ``R[j, c]`` for configuration index j and checked link c
    (every robot link on a side of a pair), and per pair the columns of its two sides."""

    def __init__(self, det: Any):
        columns: dict[tuple[int, int], int] = {}
        robot_of = {b.id: (b, start) for b, (_, _, start, _) in zip(det.robot_bodies, det._poses)}
        self.sides: list[tuple[list[int], list[int]]] = []
        for (ba, links_a), (bb, links_b) in det.pair_links:
            side = []
            for body, links in ((ba, links_a), (bb, links_b)):
                cols = []
                if body in robot_of:
                    for li in links:
                        cols.append(columns.setdefault((body, li), len(columns)))
                side.append(cols)
            self.sides.append((side[0], side[1]))
        #: (body id, link index) -> column of R
        self.columns = columns
        self.R = np.zeros((det.dof, len(columns)))
        for (body, link), c in columns.items():
            rb, start = robot_of[body]
            self._fill(rb, start, link, c, det.client)

    def _fill(self, rb: Any, start: int, link: int, col: int, client: int) -> None:
        if link < 0:
            return  # the base link does not move with the robot's joints
        f = facts(rb)
        lo, hi = link_limits(rb)
        q_index = {j: start + k for k, j in enumerate(rb.movable_indices)}
        travel = {j: hi[k] - lo[k] for k, j in enumerate(rb.movable_indices)}
        states = p.getLinkStates(rb.id, list(range(len(f.joints))), computeForwardKinematics=1,
                                 physicsClientId=client)
        origin = {i: np.array(LinkState(*s).frame_position) for i, s in enumerate(states)}
        pos, orn = p.getBasePositionAndOrientation(rb.id, physicsClientId=client)  # the base's inertial frame
        info = dynamics_info(rb.id, -1, client)
        base_pos, _ = pose_mul(pos, orn, *pose_inv(info.local_inertial_position, info.local_inertial_orientation))
        origin[-1] = np.array(base_pos)
        lo_box, hi_box = (np.array(v) for v in p.getAABB(rb.id, link, physicsClientId=client))
        corners = np.array([[x, y, z] for x in (lo_box[0], hi_box[0]) for y in (lo_box[1], hi_box[1])
                            for z in (lo_box[2], hi_box[2])])
        rho = float(np.max(np.linalg.norm(corners - origin[link], axis=1)))
        chain = 0.0  # sum of l_i from link upwards
        i = link
        while i >= 0:
            if i in q_index:
                jtype = f.joints[i].type
                self.R[q_index[i], col] = 1.0 if jtype == p.JOINT_PRISMATIC else chain + rho
            parent = f.joints[i].parent_index
            step = float(np.linalg.norm(origin[i] - origin[parent]))
            if f.joints[i].type == p.JOINT_PRISMATIC:
                if not math.isfinite(travel[i]):
                    raise SimbenchError(f"prismatic joint {f.joints[i].name!r} of {rb.name!r} has no finite "
                                        "limits; path checking needs them to bound the motion of its links")
                step += travel[i]
            chain += step
            i = parent

    def link_motion(self, dq: np.ndarray) -> np.ndarray:
        """(..., checked links): the bound m_k on how far any point of each link moves."""
        return np.abs(dq) @ self.R

    def pair_motion(self, dq: np.ndarray) -> np.ndarray:
        """(..., pairs): the bound m_p on how much each pair's distance can change."""
        m = self.link_motion(dq)
        zero = np.zeros(m.shape[:-1])
        out = [(m[..., a].max(axis=-1) if a else zero) + (m[..., b].max(axis=-1) if b else zero)
               for a, b in self.sides]
        return np.stack(out, axis=-1) if out else np.zeros(m.shape[:-1] + (0,))


def motion_bound(det: Any) -> MotionBound:
    """The detector's :class:`MotionBound` (computed once, then kept with the detector)."""
    mb = det.__dict__.get("_motion_bound")
    if mb is None:
        with det._lock:
            mb = det.__dict__["_motion_bound"] = MotionBound(det)
    return mb


def steps(det: Any, dq: np.ndarray, resolution: float) -> np.ndarray:
    """Number of uniform steps per edge so that no point moves more than ``resolution``."""
    m = motion_bound(det).link_motion(dq)
    top = m.max(axis=-1) if m.shape[-1] else np.zeros(m.shape[:-1])
    return np.maximum(1, np.ceil(top / resolution - 1e-12)).astype(int)


def first_collision(det: Any, path: np.ndarray, resolution: float = 0.005, *, margin: float = 0.0,
                    method: str = "advance", workers: int | None = None) -> PathHit | None:
    """The first flagged configuration along ``path`` (K, dof) (straight edges between
    consecutive rows), or None when every edge is free (see the module docstring)."""
    if method not in ("advance", "uniform"):
        raise SimbenchError(f"method = {shown(method)}; expected 'advance' (conservative advancement) or 'uniform'")
    given, resolution = resolution, finite_number(resolution, "resolution", " of metres > 0")
    if not resolution > 0:
        raise SimbenchError(f"resolution = {shown(given)}; expected a positive number of metres")
    path = np.asarray(path, dtype=float)
    if path.ndim != 2 or path.shape[0] < 2:
        raise ShapeError(f"path has shape {path.shape}; expected (K >= 2, {det.dof}) configurations")
    run = _uniform if method == "uniform" else _advance
    for e0 in range(0, path.shape[0] - 1, EDGES_PER_BATCH):
        q0 = path[e0:e0 + EDGES_PER_BATCH]
        q1 = path[e0 + 1:e0 + 1 + EDGES_PER_BATCH]
        q0 = q0[:len(q1)]
        hit = run(det, q0, q1, resolution, float(margin), workers)
        if hit is not None:
            e, t = hit[0], hit[1]
            q = q0[e] + t * (q1[e] - q0[e])
            return PathHit(int(e0 + e), float(t), q, det.pairs[hit[2]])
    return None


def _uniform(det: Any, q0: np.ndarray, q1: np.ndarray, resolution: float, margin: float,
             workers: int | None) -> tuple[int, float, int] | None:
    dq = q1 - q0
    n = steps(det, dq, resolution)
    allowance = motion_bound(det).pair_motion(dq) / (2 * n[:, None])  # (E, P)
    ts = [np.arange(k + 1) / k for k in n]
    Q = np.concatenate([a + t[:, None] * d for a, d, t in zip(q0, dq, ts)])
    D = det.compute_distances(Q, margin + float(allowance.max(initial=0.0)) + 1e-9, workers=workers)
    start = 0
    for e, t in enumerate(ts):
        flagged = D[start:start + len(t)] < margin + allowance[e]
        rows = np.flatnonzero(flagged.any(axis=1))
        if rows.size:
            return e, float(t[rows[0]]), int(np.argmax(flagged[rows[0]]))
        start += len(t)
    return None


def _advance(det: Any, q0: np.ndarray, q1: np.ndarray, resolution: float, margin: float,
             workers: int | None) -> tuple[int, float, int] | None:
    dq = q1 - q0
    n = steps(det, dq, resolution)
    mb = motion_bound(det)
    mk = mb.link_motion(dq)   # (E, links): how far each link's points move per unit t
    mp = mb.pair_motion(dq)   # (E, pairs)
    col = mb.columns
    sides = [(ba, bb) for (ba, _), (bb, _) in det.pair_links]
    t = np.zeros(len(q0))
    active = np.ones(len(q0), dtype=bool)
    hits: dict[int, tuple[float, int]] = {}
    while active.any():
        idx = np.flatnonzero(active)
        Q = q0[idx] + t[idx, None] * dq[idx]
        # a pair farther than `reach` cannot come within `margin` before the end of its edge
        reach = margin + float((mp[idx] * (1.0 - t[idx, None])).max(initial=0.0)) + 1e-9
        rows = det._link_index_distances(Q, reach, workers)
        for k, e in enumerate(idx):
            m = mk[e]
            step, worst = np.inf, -1
            for pi, pts in enumerate(rows[k]):  # every link pair that came within reach
                ba, bb = sides[pi]
                for la, lb, d in pts:
                    ca, cb = col.get((ba, la)), col.get((bb, lb))
                    rate = (m[ca] if ca is not None else 0.0) + (m[cb] if cb is not None else 0.0)
                    s = (d - margin) / rate if rate > 0 else (np.inf if d >= margin else -np.inf)
                    if s < step:
                        step, worst = s, pi
            if t[e] + step >= 1.0:  # free to the end of the edge
                active[e] = False
            elif step < 0.5 / n[e]:  # closer than the uniform check would accept
                hits[e] = (float(t[e]), worst)
                active[e] = False
            else:
                t[e] += step
        if hits:  # edges after the first flagged one do not matter
            active[min(hits) + 1:] = False
    if not hits:
        return None
    e = min(hits)
    return e, hits[e][0], hits[e][1]


__all__ = ["MotionBound", "PathHit", "first_collision", "motion_bound", "steps"]
