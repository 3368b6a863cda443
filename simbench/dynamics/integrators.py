"""Integrators for any acceleration function ``qdd = accel(t, q, qd)``
(:class:`simbench.dynamics.protocols.AccelerationFunction`), and the robot convenience on top.

One argument order for every integrator of simbench, here and in :mod:`.rigid_body`: the state,
then ``dt``, then ``t`` (``step(accel, q, qd, dt, t)``, ``rigid_body.step(g, xi, I, dt, t)``).

* ``euler`` (the "AI Robotics" lecture slides, *Dynamics*): ``q += dt q'``, ``q' += dt q''``
  (both from the old state);
* ``semi_implicit``: ``q' += dt q''`` then ``q += dt q'`` (the new velocity);
* ``rk4``: classical Runge-Kutta on ``(q, q')``; on a configuration manifold (a floating base,
  spherical joints) the Runge-Kutta-Munthe-Kaas form: stages at ``q (+) u`` with the
  increments corrected by ``dexp^-1`` (Michael Bauer, "Rigid Body Dynamics on Lie Groups").

On a vector space pass nothing more; on a manifold pass ``integrate(q, u)`` (q moved by the
tangent increment u) and ``dexp_inv(u, v)`` (:func:`simulate_model` does it for a robot).

The inputs are checked once before the step loop; inside it, :func:`simulate_model` calls the
compiled kernels of :mod:`.kernels.configuration` directly (``q (+) u``, ``dexp^-1``, the
finiteness tests), so a step costs about its accelerations: on the a1 with a floating base,
7.8 us per euler step and 32 us per rk4 step (were 209 us and 0.96 ms), a Pinocchio loop (aba +
integrate from Python) 6.7 us and 32 us in the same run.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from ..errors import ShapeError, SimbenchError, shown
from ..model import RobotModel, as_joint_array
from .configuration import integrate as _integrate, space
from .packing import require_model
from .kernels import configuration as K
from .forward import Overflow, forward_dynamics
from .protocols import AccelerationFunction

__all__ = ["METHODS", "Trajectory", "step", "simulate", "simulate_model", "robot_acceleration"]

METHODS = ("euler", "semi_implicit", "rk4")
Controller = Callable[[float, np.ndarray, np.ndarray], Any]
Integrate = Callable[[np.ndarray, np.ndarray], np.ndarray]
DexpInv = Callable[[np.ndarray, np.ndarray], np.ndarray]


class Trajectory(NamedTuple):
    """``t`` (steps+1,), ``q`` (steps+1, nq), ``qd`` (steps+1, nv); ``tau`` (steps+1, nv): the
    controller's output at each ``t`` (:func:`simulate_model`), None for a bare acceleration."""

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    tau: np.ndarray | None


_ND, _F8 = np.ndarray, np.dtype(np.float64)


def _finite(a: np.ndarray, b: np.ndarray) -> bool:
    """Every entry of a and b is finite (one compiled loop for two 1-D float64 arrays, the
    state of a robot: ~0.1 us instead of ~2 us for numpy's two reductions)."""
    if a.__class__ is _ND and b.__class__ is _ND and a.dtype is _F8 and b.dtype is _F8 and \
            a.ndim == 1 and b.ndim == 1:
        return bool(K.finite2_raw(a, b))
    return bool(np.all(np.isfinite(a)) and np.all(np.isfinite(b)))


def _vector_add(q: np.ndarray, u: np.ndarray) -> np.ndarray:
    return q + u


def _identity(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    return v


def step(accel: AccelerationFunction, q: np.ndarray, qd: np.ndarray, dt: float, t: float = 0.0,
         method: str = "rk4", *, integrate: Integrate | None = None,
         dexp_inv: DexpInv | None = None) -> tuple[np.ndarray, np.ndarray]:
    """One step of ``method`` from ``(q, qd)`` at time t; returns the new ``(q, qd)``."""
    _moves_by_adding(q, qd, integrate, "q", "qd")
    _check_dt(dt)
    add = integrate or _vector_add
    if method == "euler":
        a = accel(t, q, qd)
        return add(q, dt * qd), qd + dt * a
    if method == "semi_implicit":
        v = qd + dt * accel(t, q, qd)
        return add(q, dt * v), v
    if method == "rk4":
        dinv = dexp_inv or _identity
        K1, A1 = qd, accel(t, q, qd)
        u2, v2 = 0.5 * dt * K1, qd + 0.5 * dt * A1
        K2 = dinv(u2, v2)
        A2 = accel(t + 0.5 * dt, add(q, u2), v2)
        u3, v3 = 0.5 * dt * K2, qd + 0.5 * dt * A2
        K3 = dinv(u3, v3)
        A3 = accel(t + 0.5 * dt, add(q, u3), v3)
        u4, v4 = dt * K3, qd + dt * A3
        K4 = dinv(u4, v4)
        A4 = accel(t + dt, add(q, u4), v4)
        return (add(q, dt / 6 * (K1 + 2 * K2 + 2 * K3 + K4)),
                qd + dt / 6 * (A1 + 2 * A2 + 2 * A3 + A4))
    raise SimbenchError(f"unknown integration method {method!r}; expected one of {list(METHODS)}")


def _moves_by_adding(q: Any, qd: Any, integrate: Integrate | None, qname: str, vname: str) -> None:
    """Refuse a q and a q' of different shapes (a floating base: 7 vs 6) without ``integrate``."""
    qs, vs = (np.shape(x) for x in (q, qd))
    if integrate is None and qs != vs:
        raise ShapeError(f"{qname} has shape {qs} and {vname} {vs}: q moves by q' only when they "
                         f"match; for a floating base or spherical joints pass integrate=lambda q, "
                         f"u: simbench.dynamics.integrate(model, q, u), or use simulate_model(model, ...)")


def _check_dt(dt: Any) -> None:
    """A time step is a finite number of seconds > 0 (not text, not nan: a step of nan gave nan)."""
    if dt.__class__ is float and 0.0 < dt < math.inf:   # the usual case, at the cost of two comparisons
        return
    if isinstance(dt, bool) or not isinstance(dt, (int, float, np.integer, np.floating)) or \
            not (math.isfinite(dt) and dt > 0):
        raise SimbenchError(f"dt must be a positive number of seconds, got {dt!r}")


def _check_run(method: str, dt: float, steps: int) -> int:
    if method not in METHODS:
        raise SimbenchError(f"unknown integration method {method!r}; expected one of {list(METHODS)}")
    _check_dt(dt)
    if int(steps) != steps or steps < 0:
        raise SimbenchError(f"steps must be a non-negative integer, got {steps!r}")
    return int(steps)


def simulate(accel: Any, q0: Any, qd0: Any, dt: Any, steps: Any, *args: Any,
             method: str = "rk4", integrate: Integrate | None = None,
             dexp_inv: DexpInv | None = None, **kw: Any) -> Trajectory:
    """Integrate ``qdd = accel(t, q, qd)`` from ``(q0, qd0)`` for ``steps`` steps of ``dt``;
    returns a :class:`Trajectory` (``tau`` None).

    The robot form of earlier versions, ``simulate(model, q0, qd0, controller, dt, steps,
    method)``, still works: a :class:`RobotModel` first argument goes to :func:`simulate_model`.
    """
    if isinstance(accel, RobotModel):
        if "controller" in kw:
            controller = kw.pop("controller")
        else:
            controller, dt, steps, args = dt, steps, (args[0] if args else kw.pop("steps")), args[1:]
        if args:
            method = args[0]
        return simulate_model(accel, q0, qd0, dt, steps, controller, method=method, **kw)
    if args or kw:
        raise TypeError(f"simulate(accel, q0, qd0, dt, steps, *, method, integrate, dexp_inv) got "
                        f"unexpected arguments {args or ''} {list(kw) or ''}")
    steps = _check_run(method, dt, steps)
    q, qd = np.array(q0, dtype=float), np.array(qd0, dtype=float)
    _moves_by_adding(q, qd, integrate, "q0", "qd0")
    t, Q, QD = _run(_judged(accel, qd.shape), q, qd, dt, steps, method, integrate, dexp_inv, None)
    return Trajectory(t, Q, QD, None)


def _judged(accel: AccelerationFunction, shape: tuple[int, ...]) -> AccelerationFunction:
    """``accel`` with its output checked at every call: one line naming the function, the time
    and what came back instead of qd's shape, or a non-finite value from finite q and qd (the
    function's fault, not dt's: a diverging run has non-finite inputs first)."""
    name = getattr(accel, "__name__", type(accel).__name__)

    def judged(t: float, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        out = accel(t, q, qd)
        if out.__class__ is _ND and out.dtype is _F8 and out.shape == shape and _finite(out, out):
            return out      # the usual answer, checked in one compiled loop
        try:
            a = None if out is None else np.asarray(out, dtype=float)
        except (TypeError, ValueError):
            a = None
        if a is None or a.shape != shape:
            got = f"shape {a.shape}" if a is not None else shown(out)
            n = shape[0] if shape else 1
            raise ShapeError(f"{name}(t, q, qd) returned {got} at t = {t:.6g} s; expected {n} "
                             f"acceleration{'s' if n != 1 else ''}, shape {shape} as qd0")
        if not np.isfinite(a).all() and np.isfinite(q).all() and np.isfinite(qd).all():
            j = int(np.flatnonzero(~np.isfinite(a.reshape(-1)))[0])
            raise SimbenchError(f"{name}(t, q, qd) returned {a.reshape(-1)[j]} for entry {j} at t = "
                                f"{t:.6g} s from finite q and qd (|q| <= {np.abs(q).max(initial=0):.3g}, "
                                f"|qd| <= {np.abs(qd).max(initial=0):.3g})")
        return a

    return judged


def _run(accel: AccelerationFunction, q: np.ndarray, qd: np.ndarray, dt: float, steps: int,
         method: str, integrate: Integrate | None, dexp_inv: DexpInv | None,
         before: Callable[[int, float, np.ndarray, np.ndarray], None] | None
         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The step loop: ``before(k, t_k, q_k, qd_k)`` runs before step k."""
    t = np.arange(steps + 1) * dt
    Q = np.empty((steps + 1,) + q.shape)
    QD = np.empty((steps + 1,) + qd.shape)
    Q[0], QD[0] = q, qd
    for k in range(steps):
        if before is not None:
            before(k, float(t[k]), q, qd)
        try:
            q, qd = step(accel, q, qd, dt, float(t[k]), method, integrate=integrate, dexp_inv=dexp_inv)
        except Overflow:
            q = np.full(q.shape, np.nan)
        if not _finite(q, qd):
            raise SimbenchError(f"the simulation diverged at step {k + 1} (t = {t[k + 1]:.6g} s); "
                                f"try a smaller dt" + ("" if method == "rk4" else " or method='rk4'"))
        Q[k + 1], QD[k + 1] = q, qd
    return t, Q, QD


def robot_acceleration(model: RobotModel, controller: Controller | None = None, *,
                       gravity: Sequence[float] | None = None, damping: bool = False,
                       friction: bool = False) -> AccelerationFunction:
    """``accel(t, q, qd) = forward_dynamics(model, q, qd, controller(t, q, qd))`` (zero torque
    without a controller)."""
    require_model(model)
    nv = model.nv

    def torques(t: float, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        if controller is None:
            return np.zeros(nv)
        out = np.asarray(controller(t, q, qd), dtype=float)
        if out.shape != (nv,):
            raise ShapeError(f"the controller returned shape {out.shape}; expected ({nv},) "
                             f"generalised forces in the order {list(model.v_labels)}")
        return np.ascontiguousarray(out)

    def accel(t: float, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        return forward_dynamics(model, q, qd, torques(t, q, qd), gravity=gravity, damping=damping,
                                friction=friction)

    accel.torques = torques  # type: ignore[attr-defined]
    return accel


def simulate_model(model: RobotModel, q0: Any, qd0: Any, dt: float, steps: int,
                   controller: Controller | None = None, *, method: str = "rk4",
                   gravity: Sequence[float] | None = None, damping: bool = False,
                   friction: bool = False) -> Trajectory:
    """The robot under ``controller(t, q, qd) -> tau`` (nv,) (None: zero torque), from
    ``(q0, qd0)``; ``tau[k]`` is the controller's output at ``t[k]``. A floating base and
    spherical joints are integrated on their manifold (:mod:`.configuration`)."""
    require_model(model)
    steps = _check_run(method, dt, steps)
    q = np.ascontiguousarray(as_joint_array(model, q0, "q0"))
    qd = np.ascontiguousarray(as_joint_array(model, qd0, "qd0", "v"))
    if q.shape != (model.nq,) or qd.shape != (model.nv,):
        raise ShapeError(f"q0 and qd0 must have shape ({model.nq},) and ({model.nv},) (entries "
                         f"{list(model.q_labels)}); got {q.shape} and {qd.shape}")
    base = robot_acceleration(model, controller, gravity=gravity, damping=damping, friction=friction)
    torques = base.torques  # type: ignore[attr-defined]
    memo: dict[str, Any] = {}

    def accel(t: float, qq: np.ndarray, vv: np.ndarray) -> np.ndarray:
        if not _finite(qq, vv):
            return np.full(model.nv, np.nan)    # a stage diverged: the step loop says so
        # the first stage of each step is (t_k, q_k, qd_k): reuse the recorded controller output
        tau = memo["tau"] if qq is memo.get("q") and t == memo.get("t") else torques(t, qq, vv)
        return forward_dynamics(model, qq, vv, tau, gravity=gravity, damping=damping, friction=friction)

    manifold = model.nq != model.nv or model.floating_base
    sp = space(model)    # q and the stages' increments are 1-D float64 arrays, checked once above

    def add(qq: np.ndarray, u: np.ndarray) -> np.ndarray:
        out = np.empty(sp.nq)
        if K.integrate_one_raw(qq, u, 1.0, sp.idx, out) == K.OK:
            return out
        return _integrate(model, qq, u) if np.isfinite(u).all() else np.full(model.nq, np.nan)

    def dinv(u: np.ndarray, v: np.ndarray) -> np.ndarray:
        out = np.empty(sp.nv)
        K.dexp_inv_one_raw(u, v, sp.idx, out)     # OK: u and v have nv entries
        return out
    TAU = np.empty((steps + 1, model.nv))

    def record(k: int, t: float, qq: np.ndarray, vv: np.ndarray) -> None:
        memo.update(t=t, q=qq, tau=torques(t, qq, vv))
        TAU[k] = memo["tau"]

    t, Q, QD = _run(accel, q, qd, dt, steps, method, add if manifold else None,
                    dinv if manifold else None, record)
    TAU[steps] = torques(float(t[steps]), Q[steps], QD[steps])
    return Trajectory(t, Q, QD, TAU)
