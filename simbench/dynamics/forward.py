"""Mass matrix (CRBA), forward dynamics, integrators and ``simulate`` (seed 001: Euler steps).

``q'' = M(q)^-1 (tau - C(q, q') q' - g(q) + sum_k J_k^T F_ext,k [- D q' - f_c sign(q')])``,
with ``M`` from the composite rigid body algorithm and ``C q' + g`` from the RNEA with
``q'' = 0``, solved by Cholesky.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ..errors import ShapeError, SimbenchError
from ..model import RobotModel, as_joint_array
from . import kernels as K
from .rnea import (_joint_losses, fext_array, gravity_vector, joint_arrays,
                   parallel_chunks, prepare)

__all__ = ["mass_matrix", "forward_dynamics", "simulate", "step", "METHODS"]

METHODS = ("euler", "semi_implicit", "rk4")


def mass_matrix(model: RobotModel, q: Any) -> np.ndarray:
    """Joint-space mass matrix ``M(q)`` (..., dof, dof) by the composite rigid body algorithm."""
    try:
        d = model._cache["_dyn"]
    except KeyError:
        d = prepare(model)
    try:  # lean path: one (dof,) float64 configuration
        if getattr(q, "ndim", 1) == 1:
            return K.crba_fast(d.packed, q)
    except (TypeError, AttributeError, ValueError):  # anything else: the general path
        pass
    batch, (Q,) = joint_arrays(model, (q, "q"))
    if batch == ():
        return K.crba1(d.idata, d.fdata, Q[0])
    with parallel_chunks():
        M = K.crba_batch(d.idata, d.fdata, Q)
    return M.reshape(batch + (d.dof, d.dof))


class _Overflow(SimbenchError):
    """Forward dynamics produced non-finite accelerations although M is positive definite."""


def _singular(model: RobotModel, qdd: np.ndarray, Q: np.ndarray) -> None:
    """Raise a clear error if ``qdd`` is not finite: a singular M, or an overflow."""
    if qdd.size == 0:
        return
    bad = np.flatnonzero((~np.isfinite(qdd.reshape(-1, model.dof))).any(axis=-1))
    if bad.size == 0:
        return
    try:
        np.linalg.cholesky(mass_matrix(model, Q.reshape(-1, model.dof)[bad[0]]))
    except np.linalg.LinAlgError:
        light = [n for n, m in zip(model.link_names[1:], model.link_mass[1:]) if m <= 0]
        raise SimbenchError(
            f"{model.name}: the mass matrix is singular (not positive definite) at {bad.size} "
            f"configuration(s), so forward dynamics is undefined"
            + (f"; massless links: {light}" if light else "")) from None
    raise _Overflow(f"{model.name}: forward dynamics overflowed (non-finite accelerations) at "
                    f"{bad.size} configuration(s); velocities or torques are too large")


def forward_dynamics(model: RobotModel, q: Any, qd: Any, tau: Any, *,
                     gravity: Sequence[float] | None = None, f_ext: Mapping[str, Any] | None = None,
                     damping: bool = False, friction: bool = False) -> np.ndarray:
    """Joint accelerations ``q''`` (..., dof) for torques ``tau`` (see the module docstring).

    Arguments as :func:`simbench.dynamics.inverse_dynamics`; a :class:`SimbenchError` if the
    mass matrix is singular (massless moving links).
    """
    try:
        d = model._cache["_dyn"]
    except KeyError:
        d = prepare(model)
    if f_ext is None and gravity is None and not (damping or friction) and getattr(q, "ndim", 1) == 1:
        try:  # lean path: one (dof,) float64 configuration, default gravity
            qdd = K.fd_fast(d.packed, q, qd, tau)
            if d.dof and qdd[0] != qdd[0]:  # all-nan: singular M or overflow
                _singular(model, qdd, q)
            return qdd
        except (TypeError, AttributeError, ValueError):  # anything else: the general path
            pass
    batch, (Q, QD, TAU) = joint_arrays(model, (q, "q"), (qd, "qd"), (tau, "tau"))
    gx, gy, gz = gravity_vector(model, gravity)
    F, has = fext_array(model, d, f_ext, batch)
    if damping or friction:
        TAU = np.ascontiguousarray(TAU - _joint_losses(d, QD, damping, friction), dtype=float)
    idata, fdata = (d.full_idata, d.full_fdata) if has else (d.idata, d.fdata)
    if batch == ():
        qdd = K.fd1(idata, fdata, Q[0], QD[0], TAU[0], gx, gy, gz, F[0], has)
    else:
        with parallel_chunks():
            qdd = K.fd_batch(idata, fdata, Q, QD, TAU, gx, gy, gz, F, has, np.zeros(Q.shape))
    _singular(model, qdd, Q)
    return qdd.reshape(batch + (d.dof,))


Controller = Callable[[float, np.ndarray, np.ndarray], Any]


def step(model: RobotModel, q: np.ndarray, qd: np.ndarray, t: float, dt: float,
         controller: Controller | None, method: str = "rk4", **kw: Any
         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One integration step; returns (q, qd, tau applied at the start of the step).

    ``euler`` (the slides): ``q += dt q'``, ``q' += dt q''`` (both from the old state);
    ``semi_implicit``: ``q' += dt q''`` then ``q += dt q'`` (new velocity);
    ``rk4``: classical Runge-Kutta on ``(q, q')`` with the controller evaluated at each stage.
    """
    dof = prepare(model).dof

    def tau_of(tt: float, qq: np.ndarray, vv: np.ndarray) -> np.ndarray:
        if controller is None:
            return np.zeros(dof)
        out = np.asarray(controller(tt, qq, vv), dtype=float)
        if out.shape != (dof,):
            raise ShapeError(f"the controller returned shape {out.shape}; expected ({dof},) "
                             f"torques in joint order {list(model.joint_names)}")
        return np.ascontiguousarray(out)

    def acc(tau: np.ndarray, qq: np.ndarray, vv: np.ndarray) -> np.ndarray:
        return forward_dynamics(model, qq, vv, tau, **kw)

    tau0 = tau_of(t, q, qd)
    if method == "euler":
        a = acc(tau0, q, qd)
        return q + dt * qd, qd + dt * a, tau0
    if method == "semi_implicit":
        a = acc(tau0, q, qd)
        v = qd + dt * a
        return q + dt * v, v, tau0
    if method == "rk4":
        k1q, k1v = qd, acc(tau0, q, qd)
        q2, v2 = q + 0.5 * dt * k1q, qd + 0.5 * dt * k1v
        k2q, k2v = v2, acc(tau_of(t + 0.5 * dt, q2, v2), q2, v2)
        q3, v3 = q + 0.5 * dt * k2q, qd + 0.5 * dt * k2v
        k3q, k3v = v3, acc(tau_of(t + 0.5 * dt, q3, v3), q3, v3)
        q4, v4 = q + dt * k3q, qd + dt * k3v
        k4q, k4v = v4, acc(tau_of(t + dt, q4, v4), q4, v4)
        return (q + dt / 6 * (k1q + 2 * k2q + 2 * k3q + k4q),
                qd + dt / 6 * (k1v + 2 * k2v + 2 * k3v + k4v), tau0)
    raise SimbenchError(f"unknown integration method {method!r}; expected one of {list(METHODS)}")


def simulate(model: RobotModel, q0: Any, qd0: Any, controller: Controller | None, dt: float,
             steps: int, method: str = "rk4", *, gravity: Sequence[float] | None = None,
             damping: bool = False, friction: bool = False
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Integrate the robot from ``(q0, qd0)`` for ``steps`` steps of ``dt`` seconds.

    ``controller(t, q, qd) -> tau`` (dof,), or None for zero torque. Returns ``t`` (steps+1,),
    ``q``, ``qd`` and ``tau`` (steps+1, dof): ``tau[k]`` is the controller's output at ``t[k]``.
    """
    if method not in METHODS:
        raise SimbenchError(f"unknown integration method {method!r}; expected one of {list(METHODS)}")
    if not (np.isfinite(dt) and dt > 0):
        raise SimbenchError(f"dt must be a positive number of seconds, got {dt!r}")
    if int(steps) != steps or steps < 0:
        raise SimbenchError(f"steps must be a non-negative integer, got {steps!r}")
    steps = int(steps)
    q = np.ascontiguousarray(as_joint_array(model, q0, "q0"))
    qd = np.ascontiguousarray(as_joint_array(model, qd0, "qd0"))
    if q.shape != (model.dof,) or qd.shape != (model.dof,):
        raise ShapeError(f"q0 and qd0 must have shape ({model.dof},) (joints "
                         f"{list(model.joint_names)}); got {q.shape} and {qd.shape}")
    kw = dict(gravity=gravity, damping=damping, friction=friction)
    t = np.arange(steps + 1) * dt
    Q = np.empty((steps + 1, model.dof))
    QD = np.empty_like(Q)
    TAU = np.empty_like(Q)
    Q[0], QD[0] = q, qd
    for k in range(steps):
        try:
            q, qd, TAU[k] = step(model, q, qd, float(t[k]), dt, controller, method, **kw)
        except _Overflow:
            q = np.full(model.dof, np.nan)
        if not (np.all(np.isfinite(q)) and np.all(np.isfinite(qd))):
            raise SimbenchError(f"the simulation diverged at step {k + 1} (t = {t[k + 1]:.6g} s); "
                                f"try a smaller dt or method='rk4'")
        Q[k + 1], QD[k + 1] = q, qd
    if controller is None:
        TAU[steps] = 0.0
    else:
        TAU[steps] = np.asarray(controller(float(t[steps]), q, qd), dtype=float)
    return t, Q, QD, TAU
