"""Drawing closest points in a PyBullet GUI: one debug line per pair, coloured by clearance."""
from __future__ import annotations

from collections.abc import Sequence

import pybullet as p

from ..errors import ShapeError
from .collision_names import ClosestPoints


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


__all__ = ["clearance_color", "draw_closest_points"]
