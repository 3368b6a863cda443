"""The spherical joints of a :class:`~simbench.sim.Robot`, between PyBullet's conventions and
``sim.model``'s.

``sim.model`` (Pinocchio's ``JointModelSpherical``): a unit quaternion ``x y z w`` of the child's
rotation ``R`` relative to the joint frame, and the child's angular velocity relative to the
parent in the child frame. PyBullet keeps the joint in the child's *inertial* axes ``R_in``
(``getDynamicsInfo``'s local inertial orientation): its quaternion is that of ``R_in^T R R_in``
and its rates and torques are ``R_in^T`` ours (as :mod:`simbench.check.bullet` maps them for the
dynamics calls). The quaternion of ``R_in^T R R_in`` is ours with its vector part turned by
``R_in^T`` (``w`` unchanged), so the map is exact in float64 (PyBullet's own quaternion calls
round to float32). Measured with ``getLinkState`` against simbench's link poses:
``tests/test_sim_robot_spherical.py``.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .._quiet import import_pybullet
from ..bullet.records import dynamics_info
from ..errors import ShapeError

p = import_pybullet()


class BallJoints:
    """The spherical joints of one body: where they and the scalar joints sit in the joint part
    of ``sim.model``'s q and v, reading and writing their state, holding their torques."""

    def __init__(self, body: Any, rows: list, ball: list[bool], client: int):
        self.body_id = body.id
        self.idx = [int(j) for j, b in zip(body.movable_indices, ball) if b]
        self.names = [row.name for row, b in zip(rows, ball) if b]
        self.n = len(self.idx)
        self.axes = [np.array(p.getMatrixFromQuaternion(dynamics_info(body.id, j, client).local_inertial_orientation),
                              dtype=float).reshape(3, 3) for j in self.idx]
        sq, sv, bq, bv, at_q, at_v = [], [], [], [], 0, 0
        for b in ball:
            if b:
                bq.append(at_q)
                bv.append(at_v)
            else:
                sq.append(at_q)
                sv.append(at_v)
            at_q, at_v = at_q + (4 if b else 1), at_v + (3 if b else 1)
        #: the joint part of sim.model's q and v: sizes, the scalar joints' entries, each ball's first
        self.nq, self.nv = at_q, at_v
        self.scalar_q, self.scalar_v = np.array(sq, dtype=int), np.array(sv, dtype=int)
        self.ball_q, self.ball_v = bq, bv
        self._last = np.tile([0.0, 0.0, 0.0, 1.0], (self.n, 1))   # quaternions last set or read
        self.torque = np.zeros(self.n, dtype=bool)
        self.tau = np.zeros((self.n, 3))

    def read(self, client: int) -> tuple[np.ndarray, np.ndarray]:
        """(quaternions (n, 4), angular velocities (n, 3)) in sim.model's conventions; of a
        quaternion's two signs, the one nearer the last set or read."""
        if not self.n:
            return np.zeros((0, 4)), np.zeros((0, 3))
        rows = p.getJointStatesMultiDof(self.body_id, self.idx, physicsClientId=client)
        quats, rates = np.zeros((self.n, 4)), np.zeros((self.n, 3))
        for k, (row, R) in enumerate(zip(rows, self.axes)):
            qb = np.array(row[0], dtype=float)
            quats[k] = np.r_[R @ qb[:3], qb[3]]
            if quats[k] @ self._last[k] < 0:
                quats[k] = -quats[k]
            rates[k] = R @ np.array(row[1], dtype=float)
        self._last = quats.copy()
        return quats, rates

    def write(self, client: int, quats: np.ndarray, rates: np.ndarray, who: str) -> None:
        """Teleport the spherical joints to quaternions (n, 4) (normalised; a zero one is refused)
        with angular velocities (n, 3), sim.model's conventions."""
        if not self.n:
            return
        norms = np.linalg.norm(quats, axis=1)
        for k in np.flatnonzero(~(norms > 0)):
            raise ShapeError(f"{who}: the quaternion x y z w of spherical joint {self.names[k]!r} is "
                             f"{quats[k].tolist()}; expected a non-zero quaternion, e.g. [0, 0, 0, 1]")
        quats = quats / norms[:, None]
        values = [np.r_[R.T @ qk[:3], qk[3]].tolist() for qk, R in zip(quats, self.axes)]
        speeds = [(R.T @ w).tolist() for w, R in zip(rates, self.axes)]
        p.resetJointStatesMultiDof(self.body_id, self.idx, targetValues=values, targetVelocities=speeds,
                                   physicsClientId=client)
        self._last = quats.copy()

    def split(self, q: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The joint part of a model (q, v) as (scalar q, scalar v, quaternions, rates)."""
        quats = np.array([q[s:s + 4] for s in self.ball_q]).reshape(self.n, 4)
        rates = np.array([v[s:s + 3] for s in self.ball_v]).reshape(self.n, 3)
        return q[self.scalar_q], v[self.scalar_v], quats, rates

    def join(self, qs: np.ndarray, vs: np.ndarray, quats: np.ndarray, rates: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`split` backwards: the joint part of a model (q, v)."""
        q, v = np.zeros(self.nq), np.zeros(self.nv)
        q[self.scalar_q], v[self.scalar_v] = qs, vs
        for k in range(self.n):
            q[self.ball_q[k]:self.ball_q[k] + 4] = quats[k]
            v[self.ball_v[k]:self.ball_v[k] + 3] = rates[k]
        return q, v

    def set_torques(self, client: int, tau: np.ndarray) -> None:
        """Hold torques (n, 3) (sim.model's: child frame) on the spherical joints: their motors
        switched off the first time, then applied at every step by :meth:`apply`."""
        for k in np.flatnonzero(~self.torque):
            p.setJointMotorControlMultiDof(self.body_id, self.idx[k], p.POSITION_CONTROL, targetPosition=[0, 0, 0, 1],
                                           targetVelocity=[0, 0, 0], positionGain=0, velocityGain=0,
                                           force=[0, 0, 0], physicsClientId=client)
        self.torque[:] = True
        self.tau = np.array(tau, dtype=float).reshape(self.n, 3)

    def apply(self, client: int) -> None:
        for k in np.flatnonzero(self.torque):
            p.setJointMotorControlMultiDof(self.body_id, self.idx[k], p.TORQUE_CONTROL,
                                           force=(self.axes[k].T @ self.tau[k]).tolist(), physicsClientId=client)


__all__ = ["BallJoints"]
