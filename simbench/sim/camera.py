"""Cameras: framing a scene from its bodies' axis-aligned bounding boxes (AABBs), and projecting world
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


def _corners(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    return np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])])


def _directions() -> np.ndarray:
    """26 unit vectors: the faces, edges and corners of a cube around the origin."""
    d = np.array([[x, y, z] for x in (-1, 0, 1) for y in (-1, 0, 1) for z in (-1, 0, 1) if (x, y, z) != (0, 0, 0)],
                 dtype=float)
    return d / np.linalg.norm(d, axis=1, keepdims=True)


def scene_points(client: int, bodies: Iterable[int], reach: bool = True) -> np.ndarray | None:
    """Points (N, 3) that a viewer wants to see: the corners of every body's AABB except
    grounds (wider than :data:`HUGE`), and for a body with joints points on the sphere its
    links can sweep: around its base, with the farthest AABB corner of its links as radius (an
    arm upright at the start reaches that far in any direction), cut at the ground's top (or,
    without a ground, at the lowest AABB); ``reach=False`` leaves the spheres out (the bodies
    as they are now). None when nothing is left."""
    points, grounds, boxes = [], [], []
    for body in bodies:
        lo, hi = body_bounds(client, body)
        if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))):
            continue
        if np.any(hi - lo > HUGE):
            grounds.append(hi[2])
            continue
        corners = _corners(lo, hi)
        points.append(corners)
        boxes.append(corners)
        if reach and p.getNumJoints(body, physicsClientId=client) > 0:
            base = np.asarray(p.getBasePositionAndOrientation(body, physicsClientId=client)[0])
            reach = float(np.linalg.norm(corners - base, axis=1).max())
            points.append(base + reach * _directions())
    if not points:
        return None
    pts = np.concatenate(points)
    # nothing is seen below the ground's top, or without a ground below the lowest body
    floor = max(grounds) if grounds else float(np.concatenate(boxes)[:, 2].min())
    pts[:, 2] = np.maximum(pts[:, 2], floor)
    return pts


def _axes(yaw: float, pitch: float) -> np.ndarray:
    """Rows: the camera's right, up and backward axes in the world frame (PyBullet's yaw and
    pitch in degrees, z up)."""
    view = _matrix(p.computeViewMatrixFromYawPitchRoll([0, 0, 0], 1.0, yaw, pitch, 0, 2))
    return view[:3, :3]


def framing(points: Any, *, fov: float = FOV, aspect: float = 4 / 3, yaw: float = 45.0,
            pitch: float = -30.0, margin: float = 1.05,
            viewport: Sequence[float] = (-1.0, -1.0, 1.0, 1.0)) -> dict[str, Any]:
    """An orbit camera (``target``, ``distance``, ``yaw``, ``pitch``) from which every point of
    ``points`` (N, 3) is inside ``viewport``, the part of the picture to fill in normalised
    device coordinates ``(x0, y0, x1, y1)`` (y up; the whole picture by default; a GUI window's
    panels cover part of it, :meth:`simbench.sim.window.Window.viewport`), the centre of their
    bounding box at the viewport's centre. With a point at ``(x, y, z)`` in camera axes relative
    to that centre, the target moved by ``-c tan(fov / 2) d`` along each axis (``c`` the
    viewport's centre) and the eye at ``d`` from it, the point is inside when ``d`` is at least
    ``(x + x1 z tan_h) / (tan_h hx)`` and ``(-x - x0 z tan_h) / (tan_h hx)`` (``hx`` the half
    width; likewise for y): the largest, times ``margin``. ``fov`` is the vertical field of
    view (degrees) of the whole picture, ``aspect`` its width / height."""
    pts = np.asarray(points, dtype=float).reshape(-1, 3)
    centre = (pts.min(axis=0) + pts.max(axis=0)) / 2
    axes = _axes(yaw, pitch)
    cam = (pts - centre) @ axes.T
    tan_v = math.tan(math.radians(fov) / 2)
    tan_h = tan_v * aspect
    x0, y0, x1, y1 = (float(v) for v in viewport)
    need = [0.2 / margin]
    for (lo, hi), tan, c in (((x0, x1), tan_h, cam[:, 0]), ((y0, y1), tan_v, cam[:, 1])):
        half = (hi - lo) / 2
        need += [float(np.max((c + hi * cam[:, 2] * tan) / (tan * half))),
                 float(np.max((-c - lo * cam[:, 2] * tan) / (tan * half)))]
    distance = max(need) * margin
    target = centre - (x0 + x1) / 2 * tan_h * distance * axes[0] - (y0 + y1) / 2 * tan_v * distance * axes[1]
    return {"target": tuple(float(v) for v in target), "distance": float(distance), "yaw": float(yaw),
            "pitch": float(pitch)}


#: the yaws (degrees) tried in turn until the robot is in sight (:func:`frame_bodies`)
YAWS = (225.0, 135.0, 315.0, 45.0)


def lens(window_camera: Mapping[str, Any] | None = None) -> tuple[float, float]:
    """(vertical field of view in degrees, aspect ratio) of a window's camera
    (:meth:`~simbench.sim.window.Window.camera`), or of the headless frames (:data:`FOV`, 4/3)."""
    if window_camera is None:
        return FOV, 4 / 3
    return fov_of(window_camera["proj"])[0], window_camera["size"][0] / window_camera["size"][1]


def frame_bodies(client: int, bodies: Iterable[int], robot: int | None, *, yaw: float | None, pitch: float,
                 fov: float = FOV, aspect: float = 4 / 3, reach: bool = True,
                 viewport: Sequence[float] = (-1.0, -1.0, 1.0, 1.0)) -> dict[str, Any]:
    """An orbit camera framing ``bodies`` (:func:`scene_points`, :func:`framing`): at ``yaw``, or
    without it at the first of :data:`YAWS` from which body ``robot`` is in sight (a ray from the
    eye to its centre hits it first; the first yaw when none is); ``viewport`` as in :func:`framing`."""
    points = scene_points(client, bodies, reach=reach)
    if points is None:
        return {"target": (0.0, 0.0, 0.5), "distance": 2.8, "yaw": YAWS[0] if yaw is None else yaw, "pitch": pitch}
    for candidate in YAWS if yaw is None else (yaw,):
        camera = framing(points, fov=fov, aspect=aspect, yaw=candidate, pitch=pitch, viewport=viewport)
        if yaw is not None or robot is None or in_sight(client, robot, camera):
            return camera
    return framing(points, fov=fov, aspect=aspect, yaw=YAWS[0], pitch=pitch, viewport=viewport)


def in_sight(client: int, body: int, camera: Mapping[str, Any]) -> bool:
    """Whether the centre of ``body``'s bounding box is visible from ``camera``'s eye."""
    lo, hi = body_bounds(client, body)
    hit = p.rayTest(eye(camera).tolist(), ((lo + hi) / 2).tolist(), physicsClientId=client)[0]
    return hit[0] in (-1, body)


def eye(camera: Mapping[str, Any]) -> np.ndarray:
    """World position (3,) of an orbit camera's eye: ``distance`` behind the target."""
    axes = _axes(float(camera["yaw"]), float(camera["pitch"]))
    return np.asarray(camera["target"], dtype=float) + float(camera["distance"]) * axes[2]


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


def describe(camera: Mapping[str, Any]) -> str:
    """One line: ``camera: target (x, y, z), distance d m, yaw a, pitch b``."""
    target = ", ".join(f"{v:.2f}" for v in camera["target"])
    return (f"camera: target ({target}), distance {float(camera['distance']):.2f} m, "
            f"yaw {float(camera['yaw']):g}, pitch {float(camera['pitch']):g}")


def fov_of(proj: Sequence[float]) -> tuple[float, float]:
    """Vertical field of view (degrees) and aspect (width / height) of a projection matrix:
    ``P[1, 1] = 1 / tan(fov / 2)`` and ``P[0, 0] = P[1, 1] / aspect``."""
    P = _matrix(proj)
    return math.degrees(2 * math.atan(1 / P[1, 1])), float(P[1, 1] / P[0, 0])


def frame_sim(sim: Any, yaw: float | None, pitch: float, reach: bool) -> dict[str, Any]:
    """:meth:`Simulation.frame_scene <simbench.sim.Simulation.frame_scene>`'s camera (not applied)."""
    from ..bullet.scene import SceneError
    from ..errors import ShapeError, finite_number

    yaw = None if yaw is None else finite_number(yaw, "camera yaw", " of degrees", ShapeError)
    pitch = finite_number(pitch, "camera pitch", " of degrees", ShapeError)
    fov, aspect = lens(None if sim.window is None else sim.window.camera())
    try:
        robot: int | None = sim.bodies[sim.pair.main.robot_name]
    except SceneError:   # no robot in the scene: any side will do
        robot = None
    camera = frame_bodies(sim.client, sim.bodies.values(), robot, yaw=yaw, pitch=pitch, fov=fov,
                          aspect=aspect, reach=reach)
    return camera


def sim_matrices(sim: Any, size: tuple[int, int]) -> tuple[list, list]:
    """:meth:`Simulation.camera_matrices <simbench.sim.Simulation.camera_matrices>` at ``size`` (checked)."""
    w, h = size
    if sim.window is not None:  # the window's view and field of view, at this aspect
        window = sim.window.camera()
        fov = fov_of(window["proj"])[0]
        return window["view"], list(p.computeProjectionMatrixFOV(fov, w / h, NEAR, FAR))
    return matrices(sim.camera, (w, h))


__all__ = ["scene_points", "frame_bodies", "in_sight", "YAWS", "body_bounds", "framing", "eye", "matrices", "project", "fov_of", "lens", "describe",
           "FOV", "HUGE"]
