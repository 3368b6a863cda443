"""PyBullet's floating-base ``calculateInverseDynamics`` / ``calculateMassMatrix`` in the
conventions simbench adopts for floating bases (Pinocchio's free flyer):

* ``q = [x, y, z, qx, qy, qz, qw, joints...]``: pose of the root *link* frame in the world;
* ``v = [v; w; joint rates]``: linear velocity of the root link's origin and angular velocity,
  both in the root link frame; ``a = dv/dt`` (spatial acceleration, as Pinocchio's);
* inverse dynamics ``[f; n; joint torques]``: the wrench on the base in the root link frame.

What PyBullet does instead, measured on this build against Pinocchio's free flyer (laikago and
a1, to 1e-10; bullet3's ``PhysicsServerCommandProcessor::processInverseDynamicsCommand``):

1. ``q`` must have 7 + n entries and ``qd``, ``qdd`` 6 + n (anything else: ``SystemError``).
2. The base is the root's *inertial* frame (its COM, axes along PyBullet's principal axes of the
   root inertia), not the URDF link frame: pose, velocities and wrench all refer to it.
3. The quaternion is turned into roll, pitch, yaw (``getEulerZYX``) and handed to
   btInverseDynamics' floating joint, which composes them as ``Rx(r) Ry(p) Rz(y)`` instead of
   ``Rz(y) Ry(p) Rx(r)``: the orientation used is wrong unless it is a rotation about one axis
   (a defect in PyBullet). :func:`pybullet_quaternion` gives the quaternion that makes PyBullet use
   the intended orientation.
4. ``qd`` base entries are ``[w; v]`` (angular first), base frame; ``qdd`` base entries are
   ``[dw/dt; R^T p'']`` (the classical acceleration of the base origin, base frame).
5. The output is ``[f; n; joints]`` (linear first: PyBullet swaps the tree's order), base frame,
   about the base origin.
6. ``calculateMassMatrix`` takes the n joint positions only (passing 7 + n shifts the base pose
   into the joints, silently), and returns the (6 + n)^2 matrix in the base frame ordered
   ``[angular; linear; joints]`` (not swapped, unlike inverse dynamics); in base-frame
   coordinates it does not depend on the base pose.

And the hints ``simbench check`` gives about the base (:func:`free_root_hint`,
:func:`floating_hint_for_error`, :func:`floating_mistake`): a root that looks free checked welded,
and a user's function that breaks these conventions.
"""
from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np

from .._quiet import import_pybullet
from ..bullet.records import dynamics_info
from ..model import RobotModel
from .bullet import rotation_from_quaternion as _rotation

p = import_pybullet()


def _skew(c: np.ndarray) -> np.ndarray:
    return np.array([[0.0, -c[2], c[1]], [c[2], 0.0, -c[0]], [-c[1], c[0], 0.0]])


def pybullet_quaternion(R: np.ndarray) -> np.ndarray:
    """The quaternion to hand PyBullet's floating-base inverse dynamics so that it uses the
    orientation ``R``: write ``R = Rx(a) Ry(b) Rz(c)`` (PyBullet's composition) and return the
    quaternion of ``Rz(c) Ry(b) Rx(a)``, whose roll, pitch, yaw are (a, b, c)."""
    Rt = np.swapaxes(np.asarray(R, float), -1, -2)  # R^T = Rz(-c) Ry(-b) Rx(-a): its rpy is -(a, b, c)
    a = -np.arctan2(Rt[..., 2, 1], Rt[..., 2, 2])
    b = np.arcsin(np.clip(Rt[..., 2, 0], -1.0, 1.0))
    c = -np.arctan2(Rt[..., 1, 0], Rt[..., 0, 0])
    ca, sa, cb, sb, cc, sc = np.cos(a / 2), np.sin(a / 2), np.cos(b / 2), np.sin(b / 2), np.cos(c / 2), np.sin(c / 2)
    return np.stack([sa * cb * cc - ca * sb * sc, ca * sb * cc + sa * cb * sc,
                     ca * cb * sc - sa * sb * cc, ca * cb * cc + sa * sb * sc], -1)


class FloatingBaseConvention:
    """Our floating-base q, v, a (module docstring) <-> PyBullet's, for one loaded body."""

    def __init__(self, robot: object):
        info = dynamics_info(robot.body, -1, robot.client)  # type: ignore[attr-defined]
        self.c = np.array(info.local_inertial_position, float)                    # link -> inertial, link frame
        self.R_in = np.array(p.getMatrixFromQuaternion(info.local_inertial_orientation)).reshape(3, 3)
        T = np.zeros((6, 6))  # [w_B; v_B] = T [v_L; w_L]
        T[:3, 3:] = self.R_in.T
        T[3:, :3] = self.R_in.T
        T[3:, 3:] = -self.R_in.T @ _skew(self.c)
        self.T = T

    def _full(self, n: int) -> np.ndarray:
        out = np.eye(6 + n)
        out[:6, :6] = self.T
        return out

    def inverse_dynamics(self, robot: object, q: np.ndarray, v: np.ndarray, a: np.ndarray) -> np.ndarray:
        """(N, 6 + n) ``[f; n; joint torques]`` in the root link frame, from PyBullet."""
        q, v, a = (np.atleast_2d(np.asarray(x, float)) for x in (q, v, a))
        R_L = _rotation(q[:, 3:7])
        R_B = R_L @ self.R_in
        p_B = q[:, :3] + np.einsum("nij,j->ni", R_L, self.c)
        quat = pybullet_quaternion(R_B)
        vL, wL, aL, dwL = v[:, :3], v[:, 3:6], a[:, :3], a[:, 3:6]
        u = np.einsum("ij,nj->ni", self.T, v[:, :6])
        acc_L = aL + np.cross(wL, vL) + np.cross(dwL, self.c) + np.cross(wL, np.cross(wL, self.c))
        du = np.concatenate([dwL @ self.R_in, acc_L @ self.R_in], axis=1)  # R_in^T x, row-wise
        out = np.empty_like(v)
        body, client = robot.body, robot.client  # type: ignore[attr-defined]
        for k in range(len(q)):
            tb = np.array(p.calculateInverseDynamics(
                body, [*p_B[k], *quat[k], *q[k, 7:]], [*u[k], *v[k, 6:]], [*du[k], *a[k, 6:]],
                physicsClientId=client))
            wrench_B = np.r_[tb[3:6], tb[:3]]  # [n; f] pairs with [w; v]
            out[k, :6] = self.T.T @ wrench_B
            out[k, 6:] = tb[6:]
        return out

    def mass_matrix(self, robot: object, q: np.ndarray) -> np.ndarray:
        """(N, 6 + n, 6 + n) in our velocity coordinates, from PyBullet (base pose does not matter)."""
        q = np.atleast_2d(np.asarray(q, float))
        n = q.shape[1] - 7
        T = self._full(n)
        body, client = robot.body, robot.client  # type: ignore[attr-defined]
        return np.array([T.T @ np.array(p.calculateMassMatrix(body, list(row[7:]), physicsClientId=client)) @ T
                         for row in q])


# ---------------------------------------------------------------------- hints about the base
# A root that looks free checked welded, a user's function written for the floating q checked
# welded, and the classic convention mistakes of a user's floating-base function: each mistake is a
# transform of the true dynamics, named only when it reproduces the user's torques on every sample
# to the check's tolerance (and the mass matrix is the truth's or the transformed one).
#: how a hint note starts: ``simbench check`` prints these notes under the robot's line
HINT = "hint: "


def free_root_hint(model: RobotModel) -> str | None:
    """The note for a robot checked welded whose root looks free (its ``free_root`` issue), else None."""
    issue = next((i for i in model.issues if i.kind == "free_root"), None)
    if issue is None or model.floating_base:
        return None
    data = issue.data or {}
    return (f"{HINT}its root looks free ({len(data.get('limbs', ()))} limbs, {data.get('mass', 0.0):.4g} kg on "
            f"root link {data.get('link')!r}) and it was checked welded to the world: --floating checks it as a "
            f"floating base (q = base pose + joints, v = base twist + joint rates)")


def _within(tau: np.ndarray, tau_h: np.ndarray, tol: float) -> float | None:
    d = float(np.max(np.abs(tau - tau_h))) if tau.size else 0.0
    return d if np.isfinite(d) and d <= tol * max(1.0, float(np.max(np.abs(tau_h)))) else None


def _rotate_base(x: np.ndarray, R: np.ndarray, transpose: bool) -> np.ndarray:
    """x (N, 6 + n) with its two base 3-vectors multiplied by R (R^T with ``transpose``)."""
    out = np.array(x, float)
    spec = "nji,nj->ni" if transpose else "nij,nj->ni"
    out[:, :3], out[:, 3:6] = np.einsum(spec, R, x[:, :3]), np.einsum(spec, R, x[:, 3:6])
    return out


def floating_mistake(model: RobotModel, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, tau: np.ndarray,
                     M: np.ndarray, truth: tuple[np.ndarray, np.ndarray], tol: float,
                     tau_of: Callable[..., np.ndarray]) -> str | None:
    """The floating-base convention mistake that reproduces the user's ``tau`` (and ``M``), or
    None. ``tau_of(q, qd, qdd)``: the true inverse dynamics (batched)."""
    if not model.floating_base or not (np.all(np.isfinite(tau)) and np.all(np.isfinite(M))):
        return None
    T, MT = truth
    R = _rotation(q[:, 3:7])
    n = model.nv - 6
    Rfull = np.zeros((len(q), 6 + n, 6 + n))
    Rfull[:, :3, :3] = Rfull[:, 3:6, 3:6] = R
    Rfull[:, 6:, 6:] = np.eye(n)
    # the mass matrix the user's function then gives (d tau / d qdd, as check computes it by columns)
    M_rows, M_cols = np.einsum("nij,njk->nik", Rfull, MT), np.einsum("nij,nkj->nik", MT, Rfull)
    wxyz = np.array(q, float)
    wxyz[:, 3:7] = q[:, [4, 5, 6, 3]]       # the user read q[3:7] as w x y z
    world_v = _rotate_base(qd, R, True)
    candidates = [
        (lambda: tau_of(q, world_v, _rotate_base(qdd, R, True)), M_cols,
         "your base velocity and acceleration look like they are read in the world frame: simbench passes "
         "v[0:6] = [v; w] and a[0:6] in the base frame (v_base = R^T v_world, R from q[3:7])"),
        (lambda: tau_of(q, world_v, qdd), MT,
         "your base velocity looks like it is read in the world frame: simbench passes v[0:6] = [v; w] in the "
         "base frame (v_base = R^T v_world, R from q[3:7])"),
        (lambda: tau_of(wxyz, qd, qdd), MT,
         "your quaternion looks read as w x y z: simbench's q[3:7] is qx qy qz qw (w last, as PyBullet's "
         "and Pinocchio's)"),
        (lambda: _rotate_base(T, R, False), M_rows,
         "your base wrench looks returned in world axes: simbench expects tau[0:6] = [f; n] in the base frame "
         "(f_base = R^T f_world, R from q[3:7])"),
    ]
    for tau_h, M_h, said in candidates:
        d = _within(tau, tau_h(), tol)
        if d is not None and (_within(M, MT, tol) is not None or _within(M, M_h, tol) is not None):
            return f"{said} (matches to {d:.1e})"
    return None


def floating_hint_for_error(text: str, n: int) -> str:
    """For a user's function that raised on a welded robot (q, qd, qdd of ``n`` entries): a hint
    when its error names a floating base's sizes (n + 7 positions, n + 6 velocities), else ''."""
    found = [k for k in (n + 7, n + 6) if re.search(rf"(?<![\d.]){k}(?![\d.])", text)]
    if not found:
        return ""
    return (f" (it was given q, qd and qdd of {n} entries, the base welded to the world; {found[0]} in the error "
            f"looks like a floating base's {'q' if found[0] == n + 7 else 'v'} ({n + 7} positions, {n + 6} "
            f"velocities): --floating checks it as a floating base)")


__all__ = ["FloatingBaseConvention", "pybullet_quaternion", "HINT", "free_root_hint", "floating_mistake",
           "floating_hint_for_error"]
