"""Inverse dynamics by the recursive Newton-Euler algorithm (the passes: :mod:`.kernels.rnea`).

``tau = M(q) q'' + C(q, q') q' + g(q) - sum_k J_k(q)^T F_ext,k`` (+ ``D q'`` and Coulomb
friction ``f_c sign(q')`` when asked: the ``d_ii q'_i`` term of Ankur Handa, "Understanding
Physics Engines: Dynamic Models of Manipulators"). Featherstone, *Rigid Body Dynamics
Algorithms*, section 5.3; the "AI Robotics" lecture slides, *Dynamics*.
"""
from __future__ import annotations

import struct
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..model import RobotModel
from . import kernels as K
from .forward import Overflow
from .inputs import (F4, LISTS, ND, SERIAL_ROWS, as_float3, fast3, general_args,
                     gravity_vector, joint_losses, loss_flags, plain_batch, same_gravity, wrenched_call, NO_FEXT)
from .kernels import entries as E
from .kernels.entries import CALL
from .packing import KEY, KernelModel, kernel_model, not_a_model, require_model

__all__ = ["inverse_dynamics", "bias_forces", "gravity_torques"]


def inverse_dynamics(model: RobotModel, q: Any, qd: Any, qdd: Any, *,
                     gravity: Sequence[float] | None = None, f_ext: Mapping[str, Any] | None = None,
                     damping: bool = False, friction: bool = False,
                     skip_checks: bool = False) -> np.ndarray:
    """Generalised forces ``tau = M q'' + C q' + g - sum J^T F_ext`` by RNEA, shape (..., nv).

    ``q`` (..., nq), ``qd``, ``qdd`` (..., nv), leading dimensions broadcast (see
    :mod:`simbench.dynamics` for the order of the entries; with a floating base the first six
    entries of tau are the wrench [force; torque] on the base, base frame). ``gravity``: in the
    root frame (default ``model.gravity``). ``f_ext``: link name -> wrench [torque, force]
    (..., 6) on the link, world frame, about the link origin. ``damping`` / ``friction`` (True or
    False): add ``D q'`` / ``f_c sign(q')`` from ``model.joint_damping`` / ``joint_friction``
    (the URDF ``<dynamics>`` tags; change them with ``model.replace``).
    ``skip_checks``: deprecated and ignored (the checked fast path measured 0.94-1.05x the
    unchecked call in ``simbench bench``: nothing left to skip).
    """
    try:
        d = model._cache.get(KEY) or kernel_model(model)
    except AttributeError:   # not a model: a file name, say
        raise not_a_model(model) from None
    if skip_checks:
        _skip_checks_deprecated()
    if f_ext is None and CALL is not None:   # one configuration in any common form, or a small batch: one C call
        if damping is not False or friction is not False:   # the losses D q' + f sign(q') added by the same call
            if damping.__class__ is not bool or friction.__class__ is not bool:
                damping, friction = loss_flags(damping, friction)   # True or False only (numpy's too)
            out = CALL(E.id_c.address, d.packed, d.nv, -1, q, qd, qdd, gravity,
                       d.damping if damping else None, d.friction if friction else None, 0)
        else:
            out = CALL(E.id_c.address, d.packed, d.nv, -1, q, qd, qdd, gravity)
        return out if out is not None else \
            _general(model, d, q, qd, qdd, gravity, f_ext, damping, friction)
    if damping.__class__ is not bool or friction.__class__ is not bool:
        damping, friction = loss_flags(damping, friction)
    if f_ext is None:
        out = _fast(d, q, qd, qdd) if same_gravity(d, gravity) else None   # without the C extension
    else:
        out = wrenched_call(model, d, E.id_rows_raw, q, qd, qdd, gravity, f_ext)
    if out is None:
        return _general(model, d, q, qd, qdd, gravity, f_ext, damping, friction)
    if damping or friction:   # qd was read by the call above: numbers of the right shape
        out = out + joint_losses(d, np.asarray(qd, dtype=float), damping, friction)
    return out


def _fast(d: KernelModel, q: Any, qd: Any, qdd: Any) -> np.ndarray | None:
    """The fast path where the C extension is not built: one configuration as float64 or
    float32 arrays, lists or tuples, or a small float64 batch; None if not taken (the general
    path then checks the inputs and explains)."""
    nd = fast3(q, qd, qdd)
    if nd == 1:
        out = np.empty(d.nv)
        return out if E.id_fast_raw(d.packed, q, qd, qdd, out) == E.OK else None
    if nd == 2:
        out = np.empty((q.shape[0], d.nv))
        return out if E.id_fast_rows_raw(d.packed, q, qd, qdd, out) == E.OK else None
    if q.__class__ is ND and qd.__class__ is ND and qdd.__class__ is ND and q.dtype is F4 and \
            qd.dtype is F4 and qdd.dtype is F4 and q.ndim == 1 and qd.ndim == 1 and qdd.ndim == 1:
        out = np.empty(d.nv)                     # float32: read as it is
        if E.id_fast32_raw(d.packed, q, qd, qdd, out) == E.OK:
            return out
    elif q.__class__ in LISTS and qd.__class__ in LISTS and qdd.__class__ in LISTS and \
            len(q) == d.nq and len(qd) == d.nv and len(qdd) == d.nv:
        try:   # lists, tuples: packed as float64 by one call (KernelModel.pack3)
            buf = d.pack3(*q, *qd, *qdd)
        except (struct.error, TypeError, OverflowError):
            return None                          # not numbers: the general path explains
        out = np.empty(d.nv)
        if E.id_fast_seq_raw(d.packed, buf, out) == E.OK:
            return out
    else:
        q1, qd1, qdd1 = as_float3(q, qd, qdd)   # other dtypes, lists beside arrays: one each
        if q1 is not None:
            out = np.empty(d.nv)
            if E.id_fast_raw(d.packed, q1, qd1, qdd1, out) == E.OK:
                return out
    return None


_warned: list[bool] = []


def _skip_checks_deprecated() -> None:
    """One DeprecationWarning per process for ``skip_checks=True``."""
    if not _warned:
        _warned.append(True)
        warnings.warn("inverse_dynamics(skip_checks=True) is deprecated and ignored: the checked "
                      "fast path costs the same; drop the argument", DeprecationWarning, stacklevel=3)


def _general(model: RobotModel, d: KernelModel, q: Any, qd: Any, qdd: Any,
             gravity: Sequence[float] | None, f_ext: Mapping[str, Any] | None,
             damping: bool, friction: bool) -> np.ndarray:
    if f_ext is None and plain_batch(d, q, qd, qdd):
        tau = np.empty((q.shape[0], d.nv))      # a large float64 batch, read as it is
        K.run_spans(K.rnea_span, q.shape[0], d.bodies.packed, q, qd, qdd,
                    *gravity_vector(model, gravity), NO_FEXT, False, tau)
        if np.isfinite(tau).all():
            if damping or friction:
                tau += joint_losses(d, qd, damping, friction)
            return tau
        # a non-finite input, or an overflow: the general path checks the inputs and explains
    batch, Q, QD, QDD, g, F, has, tree = general_args(model, d, q, qd, qdd, "qdd", gravity, f_ext)
    tau = np.empty((Q.shape[0], d.nv))
    if Q.shape[0] <= SERIAL_ROWS:
        E.id_rows(tree.packed, Q, QD, QDD, *g, F, has, tau)
    else:
        K.run_spans(K.rnea_span, Q.shape[0], tree.packed, Q, QD, QDD, *g, F, has, tau)
    if not np.isfinite(tau).all():  # the inputs were checked finite: an overflow
        raise Overflow(f"{model.name}: inverse dynamics overflowed (non-finite torques) from finite inputs, "
                       f"max |qd| = {np.abs(QD).max(initial=0):.3g}, max |qdd| = {np.abs(QDD).max(initial=0):.3g}; "
                       f"expected velocities and accelerations small enough for float64")
    tau = tau.reshape(batch + (d.nv,))
    if damping or friction:
        tau += joint_losses(d, QD.reshape(batch + (d.nv,)), damping, friction)
    return tau


def bias_forces(model: RobotModel, q: Any, qd: Any, *, gravity: Sequence[float] | None = None,
                f_ext: Mapping[str, Any] | None = None) -> np.ndarray:
    """``C(q, q') q' + g(q)`` (the RNEA with ``q'' = 0``), shape (..., nv)."""
    require_model(model)
    return inverse_dynamics(model, q, qd, np.zeros(model.nv), gravity=gravity, f_ext=f_ext)


def gravity_torques(model: RobotModel, q: Any, *, gravity: Sequence[float] | None = None) -> np.ndarray:
    """``g(q) = dP/dq``: the generalised forces that hold the robot still, shape (..., nv)."""
    require_model(model)
    z = np.zeros(model.nv)
    return inverse_dynamics(model, q, z, z, gravity=gravity)
