"""Cameras: framing a scene from its bodies' axis-aligned bounding boxes, and projecting world
points to pixels with the camera's view and projection matrices.

PyBullet's matrices are OpenGL's, flattened column-major (16 floats): a world point ``x`` maps
to clip coordinates ``c = P V [x, 1]``, to normalised device coordinates ``c[:3] / c[3]`` in
[-1, 1], and to pixels ``u = (x_ndc + 1) w / 2``, ``v = (1 - y_ndc) h / 2`` (row 0 at the
top). The camera looks along its -z axis (OpenGL convention; *OpenGL Programming Guide*,
"Viewing").
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from .._quiet import import_pybullet

p = import_pybullet()

#: a body whose bounding box is wider than this (m) in some axis is a ground or a terrain:
#: it is left out of the framing (a PyBullet plane is 200 m wide)
HUGE = 20.0
#: the field of view (degrees, vertical) of headless frames
FOV = 60.0
NEAR, FAR = 0.02, 100.0


def _matrix(flat: Sequence[float]) -> np.ndarray:
    """A 4x4 matrix from PyBullet's column-major 16 floats."""
    return np.asarray(flat, dtype=float).reshape(4, 4).T


def body_bounds(client: int, body: int) -> tuple[np.ndarray, np.ndarray]:
    """The union of the AABBs of a body's links (world frame, m)."""
    n = p.getNumJoints(body, physicsClientId=client)
    boxes = np.array([p.getAABB(body, li, physicsClientId=client) for li in range(-1, n)], dtype=float)
    return boxes[:, 0].min(axis=0), boxes[:, 1].max(axis=0)


def scene_bounds(client: int, bodies: Iterable[int]) -> tuple[np.ndarray, np.ndarray] | None:
    """A box holding what a viewer wants to see: every body's AABB except grounds (wider than
    :data:`HUGE`), and for a body with joints the box its links can sweep, a sphere around its
    base whose radius is the farthest AABB corner of its links from the base (an arm upright
    at the start reaches that far in any direction), cut at the ground's top. None when
    nothing is left."""
    los, his, grounds = [], [], []
    for body in bodies:
        lo, hi = body_bounds(client, body)
        if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))):
            continue
        if np.any(hi - lo > HUGE):
            grounds.append(hi[2])
            continue
        los.append(lo)
        his.append(hi)
        if p.getNumJoints(body, physicsClientId=client) > 0:
            base = np.asarray(p.getBasePositionAndOrientation(body, physicsClientId=client)[0])
            corners = np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])])
            reach = float(np.linalg.norm(corners - base, axis=1).max())
            los.append(base - reach)
            his.append(base + reach)
    if not los:
        return None
    lo, hi = np.min(los, axis=0), np.max(his, axis=0)
    if grounds:
        lo[2] = max(lo[2], max(grounds))
        hi[2] = max(hi[2], lo[2] + 1e-3)
    return lo, hi


def _axes(yaw: float, pitch: float) -> np.ndarray:
    """Rows: the camera's right, up and backward axes in the world frame (PyBullet's yaw and
    pitch in degrees, z up)."""
    view = _matrix(p.computeViewMatrixFromYawPitchRoll([0, 0, 0], 1.0, yaw, pitch, 0, 2))
    return view[:3, :3]


def framing(lo: Sequence[float], hi: Sequence[float], *, fov: float = FOV, aspect: float = 4 / 3,
            yaw: float = 45.0, pitch: float = -30.0, margin: float = 1.08) -> dict[str, Any]:
    """An orbit camera (``target``, ``distance``, ``yaw``, ``pitch``) looking at the centre of
    the box ``lo``-``hi`` from which every corner is inside the view: with the corner at
    ``(x, y, z)`` in camera axes relative to the target, the distance is the largest
    ``z + |x| / tan(fov_h / 2)`` and ``z + |y| / tan(fov_v / 2)``, times ``margin``.
    ``fov`` is the vertical field of view (degrees), ``aspect`` width / height."""
    lo, hi = np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
    target = (lo + hi) / 2
    axes = _axes(yaw, pitch)
    corners = np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])])
    cam = (corners - target) @ axes.T
    tan_v = math.tan(math.radians(fov) / 2)
    tan_h = tan_v * aspect
    need = np.maximum(cam[:, 2] + np.abs(cam[:, 0]) / tan_h, cam[:, 2] + np.abs(cam[:, 1]) / tan_v)
    distance = max(float(need.max()) * margin, 0.2)
    return {"target": tuple(float(v) for v in target), "distance": distance, "yaw": float(yaw),
            "pitch": float(pitch)}


def matrices(camera: Mapping[str, Any], size: tuple[int, int], fov: float = FOV) -> tuple[list, list]:
    """PyBullet view and projection matrices (flat, column-major) of an orbit ``camera``
    (a dict with ``target``, ``distance``, ``yaw``, ``pitch``) for an image of ``size``."""
    w, h = size
    view = p.computeViewMatrixFromYawPitchRoll(list(camera["target"]), float(camera["distance"]),
                                               float(camera["yaw"]), float(camera["pitch"]), 0, 2)
    proj = p.computeProjectionMatrixFOV(fov, w / h, NEAR, FAR)
    return list(view), list(proj)


def project(points: Any, view: Sequence[float], proj: Sequence[float],
            size: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """Pixel coordinates (..., 2) (column, row; row 0 at the top) of world points (..., 3),
    and whether each lies in front of the camera."""
    pts = np.asarray(points, dtype=float)
    homo = np.concatenate([pts, np.ones(pts.shape[:-1] + (1,))], axis=-1)
    clip = homo @ (_matrix(proj) @ _matrix(view)).T
    wcl = clip[..., 3]
    front = wcl > 1e-9
    ndc = clip[..., :2] / np.where(front, wcl, 1.0)[..., None]
    w, h = size
    px = np.stack([(ndc[..., 0] + 1) * w / 2, (1 - ndc[..., 1]) * h / 2], axis=-1)
    return px, front


def fov_of(proj: Sequence[float]) -> tuple[float, float]:
    """Vertical field of view (degrees) and aspect (width / height) of a projection matrix:
    ``P[1, 1] = 1 / tan(fov / 2)`` and ``P[0, 0] = P[1, 1] / aspect``."""
    P = _matrix(proj)
    return math.degrees(2 * math.atan(1 / P[1, 1])), float(P[1, 1] / P[0, 0])


__all__ = ["scene_bounds", "body_bounds", "framing", "matrices", "project", "fov_of", "FOV", "HUGE"]
