"""The per-configuration query loops, on plain data only.

The detector and its worker processes run exactly these functions, so a batch spread over
processes gives the results of one process bit for bit. A :class:`QueryCore` holds all they
need (client, which joints ``q`` sets, the resolved pairs); ``rows`` are configurations in
``resetJointStatesMultiDof``'s nested format: ``Q[:, :, None].tolist()``.

Per configuration: one ``resetJointStatesMultiDof`` per posed body (fixed joints are never
touched), then one ``getClosestPoints`` per pair; a whole-body object passes PyBullet's link
index -2 (every link) and the loop keeps the closest point of the allowed link pairs.

Sign convention: ``distance`` is the signed distance (negative = penetration depth), the normal
points from B to A (PyBullet's ``contactNormalOnB``), so ``point_a = point_b + distance * normal``.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import NamedTuple

import pybullet as p

from .records import ContactPoint

_NAN3 = (math.nan, math.nan, math.nan)
# positions of the named fields of PyBullet's point tuples (records.ContactPoint): the loops read
# the raw tuples, since naming each one would cost more than the rest of the loop
LINK_A, LINK_B, POS_A, POS_B, NORMAL, DIST = (ContactPoint._fields.index(f) for f in (
    "link_a", "link_b", "position_on_a", "position_on_b", "normal_on_b", "distance"))


class WholeBody(NamedTuple):
    """Extra data of a pair with a whole-body side: padding by link index for each side
    (links not listed: none) and the (link A, link B) combinations that are never checked."""

    pads_a: dict[int, float]
    pads_b: dict[int, float]
    excluded: frozenset[tuple[int, int]]


class QueryCore(NamedTuple):
    """Everything a query loop needs, as plain data.

    ``poses``: per posed body (body id, joint indices, start, stop), ``q[start:stop]`` being
    its joints. ``pairs``: per pair (body A, body B, link A, link B, padding A, padding B,
    WholeBody or None); link -2 means every link of the body."""

    client: int
    poses: tuple[tuple[int, list[int], int, int], ...]
    pairs: tuple[tuple, ...]


def poser(core: QueryCore) -> Callable[[list], None] | None:
    """A function that puts every posed body in the configuration of one nested row, or None
    when the configuration has no joints."""
    client, reset = core.client, p.resetJointStatesMultiDof
    poses = [(b, idx, s, e) for b, idx, s, e in core.poses if idx]
    if not poses:
        return None
    if len(poses) == 1:
        body, idx, start, stop = poses[0]
        if start == 0:
            return lambda row: reset(body, idx, row, physicsClientId=client)
        return lambda row: reset(body, idx, row[start:stop], physicsClientId=client)

    def pose(row: list) -> None:
        for body, idx, start, stop in poses:
            reset(body, idx, row[start:stop], physicsClientId=client)

    return pose


def _best(pts: tuple, whole: WholeBody, limit: float) -> tuple[float, tuple | None, float, float]:
    """Closest allowed point of a whole-body pair: (padded distance, point row, pad A, pad B);
    (limit, None, 0, 0) when none lies within ``limit``."""
    pads_a, pads_b, excluded = whole
    best, bd, ba, bb = None, limit, 0.0, 0.0
    for pt in pts:
        la, lb = pt[LINK_A], pt[LINK_B]
        if excluded and (la, lb) in excluded:
            continue
        pa = pads_a.get(la, 0.0) if pads_a else 0.0
        pb = pads_b.get(lb, 0.0) if pads_b else 0.0
        d = pt[DIST] - pa - pb
        if best is None or d < bd:
            best, bd, ba, bb = pt, d, pa, pb
    return bd, best, ba, bb


def thresholds(core: QueryCore, limit: float) -> list[tuple]:
    """The pairs with PyBullet's search distance (limit + largest padding) precomputed."""
    out = []
    for a, b, la, lb, pad_a, pad_b, whole in core.pairs:
        if whole is not None:
            pad_a = max(whole.pads_a.values(), default=0.0)
            pad_b = max(whole.pads_b.values(), default=0.0)
        out.append((a, b, la, lb, limit + pad_a + pad_b, pad_a + pad_b, whole))
    return out


def kernel_distances(core: QueryCore, rows: list, max_distance: float, pairs: list | None = None) -> list[float]:
    """Flat list of n * n_pairs padded distances (not yet saturated at ``max_distance``);
    ``pairs``: ``thresholds(core, max_distance)`` when the caller keeps it."""
    client, gcp = core.client, p.getClosestPoints
    if pairs is None:
        pairs = thresholds(core, max_distance)
    out: list[float] = []
    append = out.append
    posed = [(b, idx) for b, idx, start, stop in core.poses if idx]
    if len(posed) == 1 and len(core.poses) == 1 and all(w is None for *_, w in pairs):
        # the common case, written out: one robot, no per-link padding or exclusions
        body, idx = posed[0]
        reset = p.resetJointStatesMultiDof
        simple = [(a, b, la, lb, search, pad) for a, b, la, lb, search, pad, _ in pairs]
        for row in rows:
            reset(body, idx, row, physicsClientId=client)
            for a, b, la, lb, search, pad in simple:
                pts = gcp(a, b, search, la, lb, physicsClientId=client)
                if not pts:
                    append(max_distance)
                elif len(pts) == 1:
                    append(pts[0][DIST] - pad)
                else:
                    append(min([pt[DIST] for pt in pts]) - pad)
        return out
    for (a, b, la, lb, search, pad, whole), pts in _points(core, rows, pairs):
        if whole is not None:
            append(_best(pts, whole, max_distance)[0])
        elif not pts:
            append(max_distance)
        elif len(pts) == 1:
            append(pts[0][DIST] - pad)
        else:
            append(min([pt[DIST] for pt in pts]) - pad)
    return out


def _points(core: QueryCore, rows: list, pairs: list) -> Iterator[tuple[tuple, tuple]]:
    """Per configuration of ``rows`` (posed in turn) and per pair: (the pair's search tuple,
    PyBullet's points)."""
    client, gcp = core.client, p.getClosestPoints
    pose = poser(core)
    for row in rows:
        if pose is not None:
            pose(row)
        for pr in pairs:
            a, b, la, lb, search, _, _ = pr
            yield pr, gcp(a, b, search, la, lb, physicsClientId=client)


def kernel_closest(core: QueryCore, rows: list, max_distance: float) -> list[tuple]:
    """Flat list of (padded distance, point A, point B, normal, link A, link B, pad A, pad B)
    per (configuration, pair); points are PyBullet's (unpadded), NaN when nothing was found."""
    pads = [(pad_a, pad_b) for *_, pad_a, pad_b, _w in core.pairs] * len(rows)
    out: list[tuple] = []
    append = out.append
    for ((a, b, la, lb, search, pad, whole), pts), (pad_a, pad_b) in zip(
            _points(core, rows, thresholds(core, max_distance)), pads):
        if whole is not None:
            d, best, pad_a, pad_b = _best(pts, whole, max_distance)
        else:
            best = (pts[0] if len(pts) == 1 else min(pts, key=lambda pt: pt[DIST])) if pts else None
            d = best[DIST] - pad if best is not None else max_distance
        if best is None:
            append((max_distance, _NAN3, _NAN3, _NAN3, la, lb, 0.0, 0.0))
        else:
            append((d, best[POS_A], best[POS_B], best[NORMAL], best[LINK_A], best[LINK_B], pad_a, pad_b))
    return out


def kernel_collision(core: QueryCore, rows: list, margin: float) -> list[bool]:
    """Per configuration: is any pair closer than ``margin`` (stops at the first such pair)."""
    client, gcp = core.client, p.getClosestPoints
    pose = poser(core)
    pairs = thresholds(core, margin)
    out = []
    for row in rows:
        if pose is not None:
            pose(row)
        hit = False
        for a, b, la, lb, search, pad, whole in pairs:
            if search < 0.0:  # a negative margin: ask for the penetrating points
                search = 0.0
            pts = gcp(a, b, search, la, lb, physicsClientId=client)
            if not pts:
                continue
            d = _best(pts, whole, margin)[0] if whole is not None else min([pt[DIST] for pt in pts]) - pad
            if d < margin:
                hit = True
                break
        out.append(hit)
    return out


def kernel_links(core: QueryCore, rows: list, max_distance: float) -> list[tuple]:
    """Per (configuration, pair): a tuple of (link A, link B, padded distance), one per point
    PyBullet found within ``max_distance`` between allowed links (every link pair of a
    whole-body pair, not only the closest)."""
    out: list[tuple] = []
    append = out.append
    for (a, b, la, lb, search, pad, whole), pts in _points(core, rows, thresholds(core, max_distance)):
        if whole is None:
            append(tuple((pt[LINK_A], pt[LINK_B], pt[DIST] - pad) for pt in pts))
        else:
            pads_a, pads_b, excluded = whole
            append(tuple((pt[LINK_A], pt[LINK_B], pt[DIST] - pads_a.get(pt[LINK_A], 0.0) - pads_b.get(pt[LINK_B], 0.0))
                         for pt in pts if (pt[LINK_A], pt[LINK_B]) not in excluded))
    return out


KERNELS = {"distances": kernel_distances, "closest": kernel_closest, "collision": kernel_collision,
           "links": kernel_links}

__all__ = ["QueryCore", "WholeBody", "KERNELS", "kernel_distances", "kernel_closest", "kernel_collision",
           "kernel_links", "poser", "thresholds"]
