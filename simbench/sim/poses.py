"""Base poses by link frame: PyBullet places and reports a body's base by its inertial (COM)
frame, ``base COM = base link * local inertial frame``; these helpers speak link frames."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._quiet import import_pybullet
from ..bullet.records import dynamics_info
from ..errors import ShapeError, beyond_a_turn, quaternion_of_angles, shown
from ..spatial import pose_inv, pose_mul

p = import_pybullet()


def set_base_pose(client: int, body: int, position: Any, orientation: Any = (0, 0, 0, 1),
                  linear_velocity: Any = None, angular_velocity: Any = None) -> None:
    """Teleport ``body``'s base link frame to ``position`` (3,) and ``orientation`` (a
    quaternion x, y, z, w, a rotation matrix (3, 3), or roll, pitch, yaw in radians as in a
    scene, ``R = Rz(yaw) Ry(pitch) Rx(roll)``); optional world-frame velocities (COM)."""
    pos = np.asarray(position, dtype=float)
    rot = np.asarray(orientation, dtype=float)
    if pos.shape != (3,) or not np.all(np.isfinite(pos)):
        raise ShapeError(f"position = {shown(position)} (shape {pos.shape}); expected 3 finite numbers, metres")
    if rot.shape == (3, 3):
        rot = quat_from_matrix(rot)
    elif rot.shape == (3,) and np.all(np.isfinite(rot)):
        if beyond_a_turn(rot):
            raise ShapeError(f"orientation {rot.tolist()}: {beyond_a_turn(rot)}")
        rot = np.array(p.getQuaternionFromEuler(rot.tolist()))
    elif rot.shape == (4,) and np.all(np.isfinite(rot)) and np.abs(rot).max() > 2 * math.pi:
        raise ShapeError(f"orientation {rot.tolist()}: {quaternion_of_angles(rot)}")
    elif rot.shape == (4,) and np.all(np.isfinite(rot)) and not np.linalg.norm(rot) > 0:
        raise ShapeError(f"orientation = {rot.tolist()} is a zero quaternion, which names no rotation; expected a "
                         f"unit quaternion (x, y, z, w), e.g. (0, 0, 0, 1)")
    elif rot.shape != (4,) or not np.all(np.isfinite(rot)):
        raise ShapeError(f"orientation has shape {rot.shape}; expected a quaternion (x, y, z, w) "
                         f"(4,), a rotation matrix (3, 3) or roll, pitch, yaw in radians (3,)")
    info = dynamics_info(body, -1, client)   # in numpy: PyBullet's multiplyTransforms rounds to float32
    com_pos, com_orn = pose_mul(pos, rot, info.local_inertial_position, info.local_inertial_orientation)
    p.resetBasePositionAndOrientation(body, com_pos, com_orn, physicsClientId=client)
    if linear_velocity is not None or angular_velocity is not None:
        lin = [0.0] * 3 if linear_velocity is None else np.asarray(linear_velocity, float).tolist()
        ang = [0.0] * 3 if angular_velocity is None else np.asarray(angular_velocity, float).tolist()
        p.resetBaseVelocity(body, lin, ang, physicsClientId=client)


def base_link_pose(client: int, body: int) -> tuple[np.ndarray, np.ndarray]:
    """World position (3,) and quaternion (x, y, z, w) of ``body``'s base link frame."""
    com_pos, com_orn = p.getBasePositionAndOrientation(body, physicsClientId=client)
    info = dynamics_info(body, -1, client)
    pos, orn = pose_mul(com_pos, com_orn, *pose_inv(info.local_inertial_position, info.local_inertial_orientation))
    return np.array(pos), np.array(orn)


def quat_from_matrix(R: np.ndarray) -> np.ndarray:
    """Unit quaternion (x, y, z, w) of a rotation matrix (Shepperd's method)."""
    if not np.all(np.isfinite(R)) or not np.allclose(R @ R.T, np.eye(3), atol=1e-6) or np.linalg.det(R) < 0:
        raise ShapeError("orientation matrix is not a rotation (R R^T = 1, det R = 1)")
    tr = np.trace(R)
    if tr > 0:
        s = 2 * math.sqrt(tr + 1)
        q = [(R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s, s / 4]
    else:
        i = int(np.argmax(np.diag(R)))
        j, k = (i + 1) % 3, (i + 2) % 3
        s = 2 * math.sqrt(1 + R[i, i] - R[j, j] - R[k, k])
        q = [0.0, 0.0, 0.0, (R[k, j] - R[j, k]) / s]
        q[i] = s / 4
        q[j] = (R[j, i] + R[i, j]) / s
        q[k] = (R[k, i] + R[i, k]) / s
    q = np.array(q)
    return q / np.linalg.norm(q)


__all__ = ["set_base_pose", "base_link_pose", "quat_from_matrix"]
