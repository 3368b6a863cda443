"""Forward dynamics (the kernels: :mod:`.kernels.forward`).

``q'' = M(q)^-1 (tau - C(q, q') q' - g(q) + sum_k J_k^T F_ext,k [- D q' - f_c sign(q')])``,
with ``M`` from the composite rigid body algorithm and ``C q' + g`` from the RNEA with
``q'' = 0``, solved by Cholesky (the "AI Robotics" lecture slides, *Dynamics*: forward
dynamics; Featherstone, *Rigid Body Dynamics Algorithms*, section 6.1).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..errors import SimbenchError, real_array
from ..model import RobotModel, as_joint_array
from . import kernels as K
from .crba import mass_matrix
from .inputs import (SERIAL_ROWS, fast3, general_args, gravity_vector, inertia_faults, joint_losses,
                     loss_flags, plain_batch, same_gravity, wrenched_call, NO_FEXT)
from .kernels import entries as E
from .kernels.entries import CALL
from .packing import KEY, KernelModel, kernel_model, not_a_model

__all__ = ["forward_dynamics", "Overflow"]


class Overflow(SimbenchError):
    """Forward dynamics produced non-finite accelerations although M is positive definite."""


def forward_dynamics(model: RobotModel, q: Any, qd: Any, tau: Any, *,
                     gravity: Sequence[float] | None = None, f_ext: Mapping[str, Any] | None = None,
                     damping: bool = False, friction: bool = False) -> np.ndarray:
    """Accelerations ``q''`` (..., nv) for generalised forces ``tau`` (..., nv).

    Arguments as :func:`simbench.dynamics.inverse_dynamics`; a :class:`SimbenchError` if the
    mass matrix is singular (massless moving links). ``damping`` / ``friction`` (True or False)
    subtract the joint losses ``D q' + f_c sign(q')`` from ``tau`` (``D = diag(model.joint_damping)``,
    ``f_c = model.joint_friction``: the ``d_ii q'_i`` term of Ankur Handa, "Understanding Physics
    Engines: Dynamic Models of Manipulators"); set them with ``model.replace(joint_damping=...)``.
    """
    try:
        d = model._cache.get(KEY) or kernel_model(model)
    except AttributeError:   # not a model: a file name, say
        raise not_a_model(model) from None
    if f_ext is None and CALL is not None:   # one configuration in any common form, or a small
        if damping is not False or friction is not False:   # batch: one C call (q'' = FD(q, q', tau - losses))
            if damping.__class__ is not bool or friction.__class__ is not bool:
                damping, friction = loss_flags(damping, friction)   # True or False only (numpy's too)
            out = CALL(E.fd_c.address, d.packed, d.nv, -1, q, qd, tau, gravity,
                       d.damping if damping else None, d.friction if friction else None, 2)
        else:
            out = CALL(E.fd_c.address, d.packed, d.nv, -1, q, qd, tau, gravity)
        if out is not None:
            if out.ndim == 2 or (d.nv and out[0] != out[0]):   # all-nan: singular M, overflow
                _singular(model, out, q)
            return out
        return _general(model, d, q, qd, tau, gravity, f_ext, damping, friction)
    if damping.__class__ is not bool or friction.__class__ is not bool:
        damping, friction = loss_flags(damping, friction)
    tau0 = tau
    if damping or friction:   # q'' = FD(q, q', tau - losses)
        tau = _less_losses(d, qd, tau, damping, friction)
        if tau is None:
            return _general(model, d, q, qd, tau0, gravity, f_ext, damping, friction)
    if f_ext is not None:
        out = wrenched_call(model, d, E.fd_rows_raw, q, qd, tau, gravity, f_ext)
        if out is not None:
            return out
    elif same_gravity(d, gravity):   # without the C extension (kernels/_call.c)
        nd = fast3(q, qd, tau)
        if nd == 1:
            out = np.empty(d.nv)
            if E.fd_fast_raw(d.packed, q, qd, tau, out) == E.OK:
                if d.nv and out[0] != out[0]:
                    _singular(model, out, q)
                return out
        elif nd == 2:
            out = np.empty((q.shape[0], d.nv))
            if E.fd_fast_rows_raw(d.packed, q, qd, tau, out) == E.OK:
                _singular(model, out, q)
                return out
    return _general(model, d, q, qd, tau0, gravity, f_ext, damping, friction)


def _less_losses(d: KernelModel, qd: Any, tau: Any, damping: bool, friction: bool) -> Any:
    """``tau - D q' - f_c sign(q')`` for the fast paths, as float64; None when qd or tau is not
    an array of numbers of the joints' length (the general path then checks and explains)."""
    try:
        qd1, tau1 = real_array(qd), real_array(tau)
    except (TypeError, ValueError, OverflowError):
        return None
    if qd1.shape[-1:] != (d.nv,) or tau1.shape[-1:] != (d.nv,):
        return None
    return tau1 - joint_losses(d, qd1, damping, friction)


def _general(model: RobotModel, d: KernelModel, q: Any, qd: Any, tau: Any,
             gravity: Sequence[float] | None, f_ext: Mapping[str, Any] | None,
             damping: bool, friction: bool) -> np.ndarray:
    if f_ext is None and not (damping or friction) and plain_batch(d, q, qd, tau):
        qdd = np.empty((q.shape[0], d.nv))      # a large float64 batch, read as it is
        K.run_spans(K.fd_span, q.shape[0], d.bodies.packed, q, qd, tau,
                    *gravity_vector(model, gravity), NO_FEXT, False, qdd)
        if np.isfinite(qdd).all():
            return qdd
        general_args(model, d, q, qd, tau, "tau", gravity, f_ext)   # a non-finite input: explained
        _singular(model, qdd, q)
        return qdd
    batch, Q, QD, TAU, g, F, has, tree = general_args(model, d, q, qd, tau, "tau", gravity, f_ext)
    if damping or friction:
        TAU = np.ascontiguousarray(TAU - joint_losses(d, QD, damping, friction))
    qdd = np.empty((Q.shape[0], d.nv))
    if Q.shape[0] <= SERIAL_ROWS:
        E.fd_rows(tree.packed, Q, QD, TAU, *g, F, has, qdd)
    else:
        K.run_spans(K.fd_span, Q.shape[0], tree.packed, Q, QD, TAU, *g, F, has, qdd)
    _singular(model, qdd, Q)
    return qdd.reshape(batch + (d.nv,))


def _singular(model: RobotModel, qdd: np.ndarray, Q: np.ndarray) -> None:
    """Raise a clear error if ``qdd`` is not finite: a singular M, or an overflow. One pass
    when all is finite (the rows at fault are looked for only then: that search measured
    23 ns per configuration, as much as a fifth of a batched forward dynamics call)."""
    if qdd.size == 0 or np.isfinite(qdd).all():
        return
    bad = np.flatnonzero((~np.isfinite(qdd.reshape(-1, model.nv))).any(axis=-1))
    if bad.size == 0:
        return
    as_joint_array(model, Q, "q", "q")   # a zero quaternion: named, before any other cause
    try:
        np.linalg.cholesky(mass_matrix(model, np.reshape(Q, (-1, model.nq))[bad[0]]))
    except np.linalg.LinAlgError:
        raise SimbenchError(
            f"{model.name}: the mass matrix is singular (not positive definite) at {bad.size} "
            f"configuration(s), so forward dynamics is undefined{inertia_faults(model)}") from None
    raise Overflow(f"{model.name}: forward dynamics overflowed (non-finite accelerations) at "
                   f"{bad.size} configuration(s); velocities or torques are too large")
