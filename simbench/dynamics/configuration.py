"""The configuration manifold: a floating base lives on SE(3), a spherical joint on SO(3), the
other joints on the real line. Pinocchio's conventions (``pinocchio.integrate``, ``difference``,
``neutral``, ``randomConfiguration``, ``normalize``):

* q = [x, y, z, qx, qy, qz, qw, joints...] (base position in the world, orientation as a unit
  quaternion); a spherical joint's entries are a unit quaternion (x, y, z, w);
* v = [vx, vy, vz, wx, wy, wz, joint rates...]: the base twist in the base frame (linear first),
  a spherical joint's angular velocity in its child frame;
* ``integrate(q, v)`` moves along the exponential map in those local frames:
  ``T_base <- T_base exp(v_base)``, ``R <- R exp([w])``, ``q_j <- q_j + v_j``;
  ``difference(q0, q1)`` is its inverse (the log map); a continuous (unlimited revolute) joint
  lives on the circle, so its difference is the angle wrapped to [-pi, pi), as Pinocchio's
  ``(cos, sin)`` joint gives it, and ``integrate(q0, difference(q0, q1))`` is q1 up to whole
  turns (integrate never wraps: q keeps the angle PyBullet reports).

Everything is numpy and batched over leading dimensions (Michael Bauer, "Rigid Body Dynamics on
Lie Groups"; Lynch & Park, *Modern Robotics*, chapter 3).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import finite_number
from ..model import RobotModel, as_joint_array
from ..spatial import dexp_inv as se3_dexp_inv, quat_exp, quat_log, quat_mul, quat_to_matrix, se3_exp, se3_log

__all__ = ["integrate", "difference", "normalize", "neutral", "random_configuration",
           "tangent_dexp_inv", "quaternion_slices"]


def quaternion_slices(model: RobotModel) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """(q start, v start) of the base (when floating, first) and of each spherical joint, in
    two lists: ``(base, spherical)``."""
    from ..model import SPHERICAL

    base = [(0, 0)] if model.floating_base else []
    sph = [(int(model.joint_q_start[j]), int(model.joint_v_start[j]))
           for j in np.flatnonzero(np.asarray(model.joint_type_code) == SPHERICAL)]
    return base, sph


def _scalar_index(model: RobotModel) -> tuple[np.ndarray, np.ndarray]:
    """q and v indices of the scalar (revolute, prismatic) joints."""
    from ..model import PRISMATIC, REVOLUTE

    j = np.flatnonzero(np.isin(np.asarray(model.joint_type_code), (REVOLUTE, PRISMATIC)))
    return np.asarray(model.joint_q_start)[j], np.asarray(model.joint_v_start)[j]


def _continuous_v_index(model: RobotModel) -> np.ndarray:
    """v indices of the continuous joints (URDF ``type="continuous"``: on the circle)."""
    j = [k for k, t in enumerate(model.joint_type) if t == "continuous"]
    return np.asarray(model.joint_v_start, dtype=int)[j]


def _wrap_angle(a: Any) -> np.ndarray:
    """The angle a wrapped to [-pi, pi): ``a - 2 pi floor((a + pi) / 2 pi)``."""
    a = np.asarray(a, dtype=float)
    return a - 2.0 * np.pi * np.floor((a + np.pi) / (2.0 * np.pi))


def integrate(model: RobotModel, q: Any, v: Any, dt: float = 1.0) -> np.ndarray:
    """``q (+) v dt``: the configuration reached from q by moving with velocity v for dt,
    shape (..., nq); its quaternions have norm 1 (as Pinocchio's ``integrate``)."""
    q = as_joint_array(model, q, "q")
    u = as_joint_array(model, v, "v", "v") * finite_number(dt, "dt", " of seconds (or any scale of v)")
    shape = np.broadcast_shapes(q.shape[:-1], u.shape[:-1])
    q = np.broadcast_to(q, shape + (model.nq,))
    u = np.broadcast_to(u, shape + (model.nv,))
    out = np.array(q, dtype=float)
    iq, iv = _scalar_index(model)
    out[..., iq] = q[..., iq] + u[..., iv]
    base, sph = quaternion_slices(model)
    for sq, sv in base:
        R = quat_to_matrix(q[..., sq + 3:sq + 7])
        step = se3_exp(np.concatenate([u[..., sv + 3:sv + 6], u[..., sv:sv + 3]], axis=-1))
        out[..., sq:sq + 3] = q[..., sq:sq + 3] + np.einsum("...ij,...j->...i", R, step[..., :3, 3])
        out[..., sq + 3:sq + 7] = _unit(quat_mul(q[..., sq + 3:sq + 7], quat_exp(u[..., sv + 3:sv + 6])))
    for sq, sv in sph:
        out[..., sq:sq + 4] = _unit(quat_mul(q[..., sq:sq + 4], quat_exp(u[..., sv:sv + 3])))
    return out


def _unit(quat: np.ndarray) -> np.ndarray:
    """Quaternions (..., 4) scaled to norm 1: q (+) v is a unit quaternion whatever the norm of
    the q it started from (every function reads the rotation of q/|q|; integrate kept a norm of
    2 as 2), and a long integration does not drift off the unit sphere."""
    return quat / np.linalg.norm(quat, axis=-1, keepdims=True)


def difference(model: RobotModel, q0: Any, q1: Any) -> np.ndarray:
    """The velocity v (..., nv) with ``integrate(q0, v) == q1`` (the log map in q0's local
    frames, as ``pinocchio.difference``): ``q1 - q0`` for revolute joints with limits and
    prismatic joints, that angle wrapped to [-pi, pi) for continuous joints (the shorter way
    round the circle), the SE(3) / SO(3) log for the base and spherical joints."""
    q0 = as_joint_array(model, q0, "q0")
    q1 = as_joint_array(model, q1, "q1")
    shape = np.broadcast_shapes(q0.shape[:-1], q1.shape[:-1])
    v = np.zeros(shape + (model.nv,))
    iq, iv = _scalar_index(model)
    v[..., iv] = q1[..., iq] - q0[..., iq]
    ic = _continuous_v_index(model)
    v[..., ic] = _wrap_angle(v[..., ic])
    base, sph = quaternion_slices(model)
    for sq, sv in base:
        R0 = quat_to_matrix(q0[..., sq + 3:sq + 7])
        dq = quat_mul(_conj(q0[..., sq + 3:sq + 7]), q1[..., sq + 3:sq + 7])
        T = np.zeros(shape + (4, 4))
        T[..., :3, :3] = quat_to_matrix(dq)
        T[..., :3, 3] = np.einsum("...ji,...j->...i", R0, q1[..., sq:sq + 3] - q0[..., sq:sq + 3])
        T[..., 3, 3] = 1.0
        xi = se3_log(T)
        v[..., sv:sv + 3], v[..., sv + 3:sv + 6] = xi[..., 3:], xi[..., :3]
    for sq, sv in sph:
        v[..., sv:sv + 3] = quat_log(quat_mul(_conj(q0[..., sq:sq + 4]), q1[..., sq:sq + 4]))
    return v


def _conj(q: np.ndarray) -> np.ndarray:
    return q * np.array([-1.0, -1.0, -1.0, 1.0])


def normalize(model: RobotModel, q: Any) -> np.ndarray:
    """q with every quaternion scaled to unit norm (..., nq)."""
    q = np.array(as_joint_array(model, q, "q"), dtype=float)
    base, sph = quaternion_slices(model)
    for s in [sq + 3 for sq, _ in base] + [sq for sq, _ in sph]:
        q[..., s:s + 4] /= np.linalg.norm(q[..., s:s + 4], axis=-1, keepdims=True)
    return q


def neutral(model: RobotModel) -> np.ndarray:
    """:meth:`RobotModel.neutral`: zero joints (clipped into the limits), identity quaternions."""
    return model.neutral()


def random_configuration(model: RobotModel, rng: np.random.Generator | int | None = None,
                         n: int | None = None) -> np.ndarray:
    """:meth:`RobotModel.random_configuration`: uniform within the limits, uniform rotations."""
    return model.random_configuration(rng, n)


def tangent_dexp_inv(model: RobotModel, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The rate u' of the increment u in ``q(t) = q_k (+) u(t)`` when the velocity is v, per
    manifold component, to second order in u (what a fourth-order Runge-Kutta-Munthe-Kaas step
    needs): with the exponential on the right (body-frame velocities),
    ``u' = dexp_{-u}^-1 (v) = v + [u, v]/2 + [u, [u, v]]/12`` on SE(3) and SO(3), ``u' = v``
    on the real line."""
    out = np.array(v, dtype=float)
    base, sph = quaternion_slices(model)
    for _, sv in base:
        uu = np.concatenate([u[..., sv + 3:sv + 6], u[..., sv:sv + 3]], axis=-1)
        vv = np.concatenate([v[..., sv + 3:sv + 6], v[..., sv:sv + 3]], axis=-1)
        r = se3_dexp_inv(-uu, vv)
        out[..., sv:sv + 3], out[..., sv + 3:sv + 6] = r[..., 3:], r[..., :3]
    for _, sv in sph:
        a, b = u[..., sv:sv + 3], v[..., sv:sv + 3]
        ab = np.cross(a, b)
        out[..., sv:sv + 3] = b + 0.5 * ab + np.cross(a, ab) / 12.0
    return out
