"""Names of collision objects: a body of the scene, and one of its links or all of them.

* ``"cube1"`` or ``NamedCollisionObject("cube1")``: the whole body, every link with collision
  geometry (PyBullet's link index -2, as in pyb_utils); a result names the closest link.
* ``("robot", "lbr_iiwa_link_7")`` or ``NamedCollisionObject("robot", "lbr_iiwa_link_7")``: one link.
* ``("robot", None)``, ``NamedCollisionObject("robot", None)`` or the base link's URDF name: the
  base link only (PyBullet's link index -1).
"""
from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Union

import numpy as np

from ..errors import SimbenchError, shown
from .srdf import DisabledPair, read_srdf_disabled

#: the ``link`` of a whole-body object
ALL_LINKS = "*"


@dataclass(frozen=True)
class NamedCollisionObject:
    """A body of the scene and one of its URDF links: ``link`` omitted (``"*"``) means every
    link of the body, ``None`` its base link."""

    body: str
    link: str | None = ALL_LINKS

    @property
    def whole_body(self) -> bool:
        return self.link == ALL_LINKS

    def __str__(self) -> str:
        if self.link == ALL_LINKS:
            return self.body
        return f"{self.body}/(base)" if self.link is None else f"{self.body}/{self.link}"


ObjectLike = Union[NamedCollisionObject, str, tuple]
Pair = tuple[NamedCollisionObject, NamedCollisionObject]


def as_object(obj: ObjectLike) -> NamedCollisionObject:
    """``NamedCollisionObject``, a body name or ``(body,)`` (the whole body) or a ``(body, link)``
    tuple (``link`` None: the base link)."""
    if isinstance(obj, NamedCollisionObject):
        return obj
    if isinstance(obj, str):
        return NamedCollisionObject(obj)
    if isinstance(obj, tuple) and len(obj) == 1 and isinstance(obj[0], str):
        return NamedCollisionObject(obj[0])
    if isinstance(obj, tuple) and len(obj) == 2 and isinstance(obj[0], str) and (obj[1] is None or isinstance(obj[1], str)):
        return NamedCollisionObject(obj[0], obj[1])
    raise SimbenchError(f"cannot read {shown(obj)} as a collision object; expected a body name (the whole body), "
                        "(body,), NamedCollisionObject(body, link) or a (body, link) tuple (link None: the base link)")


def as_pair(pair: object) -> Pair:
    """Two collision objects (A, B)."""
    try:
        a, b = pair  # type: ignore[misc]
    except (TypeError, ValueError):
        raise SimbenchError(f"a collision pair must be two objects (A, B), got {shown(pair)}") from None
    return as_object(a), as_object(b)


def disabled_entries(disabled: Any) -> Iterator[tuple[Any, Any]]:
    """The (a, b) entries of ``disabled``: None, an SRDF path (or XML text), or an iterable of
    pairs (link names, body names, NamedCollisionObjects or ``DisabledPair`` records)."""
    if disabled is None:
        return
    if isinstance(disabled, (str, os.PathLike)):
        disabled = read_srdf_disabled(disabled)
    for entry in disabled:
        yield (entry.link1, entry.link2) if isinstance(entry, DisabledPair) else entry


@dataclass(frozen=True)
class ClosestPoints:
    """Closest points of one pair: signed ``distance`` (after padding, saturated at
    ``max_distance``), witness points in the world frame and the unit ``normal`` from B to A.
    ``a`` and ``b`` name the closest links (for a whole-body object, the link where the
    closest point lies). When nothing lies within ``max_distance`` the points and normal are
    NaN and ``a``, ``b`` are the pair's objects."""

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



__all__ = ["ALL_LINKS", "ClosestPoints", "disabled_entries", "NamedCollisionObject", "ObjectLike", "Pair", "as_object", "as_pair"]
