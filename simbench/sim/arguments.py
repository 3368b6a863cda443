"""The argument checks of :class:`~simbench.sim.Simulation`: each returns the value it takes, or
raises one line naming the bad value, what was expected and, for numbers, the closest valid one."""
from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from ..errors import ShapeError, SimbenchError, is_count, nearest_hint, shown


def closest_results(results: Any) -> list[Any]:
    """``results`` of :meth:`Simulation.draw_closest_points` as a list of closest-point records
    (``point_a``, ``point_b``, ``distance``), or one line naming what came instead."""
    try:
        items = list(results)
    except TypeError:
        items = [results]
    for r in items:
        if not all(hasattr(r, key) for key in ("point_a", "point_b", "distance")):
            raise SimbenchError(f"draw_closest_points: got {shown(r)}; expected the list that "
                                "detector.closest_points(q) returns for one configuration")
    return items


def closest_labels(labels: Any, n: int) -> list[str] | None:
    """``labels`` of :meth:`Simulation.draw_closest_points`: None, or one text per result."""
    if labels is None:
        return None
    out = [labels] if isinstance(labels, str) else list(labels)
    if len(out) != n:
        raise SimbenchError(f"draw_closest_points: {len(out)} labels for {n} results; expected one per result")
    return [str(x) for x in out]


def step_count(n: Any) -> int:
    """``n`` of :meth:`Simulation.step` as an int >= 0, or one line naming it."""
    if is_count(n):
        return int(n)
    raise SimbenchError(f"sim.step: n = {shown(n)}; expected a whole number of steps >= 0{nearest_hint(n, whole=True)}")


def duration(value: Any, call: str, name: str) -> float:
    """A time argument (``name`` of ``call``) as a finite float >= 0, or one line naming it."""
    if isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value) and value >= 0:
        return float(value)
    raise SimbenchError(f"{call}: {name} = {shown(value)}; expected a finite number of seconds >= 0"
                        f"{nearest_hint(value, whole=False)}")


def camera_target(target: Any) -> tuple[float, float, float]:
    """A camera target point [x, y, z] of finite metres."""
    try:
        t = np.asarray(target, dtype=float)
    except (TypeError, ValueError, OverflowError):
        raise ShapeError(f"camera target = {shown(target)}; expected (3,) finite metres, "
                         "a point [x, y, z]") from None
    if t.shape != (3,) or not np.all(np.isfinite(t)):
        raise ShapeError(f"camera target has shape {t.shape}; expected (3,) finite metres")
    return tuple(t.tolist())


__all__ = ["closest_results", "step_count", "duration", "camera_target"]
