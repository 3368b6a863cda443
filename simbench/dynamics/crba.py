"""Joint-space mass matrix by the composite rigid body algorithm (the passes:
:mod:`.kernels.crba`): Featherstone, *Rigid Body Dynamics Algorithms*, section 6.2.

``M(q)`` is (..., nv, nv), symmetric positive definite when every moving body has mass; with a
floating base its first six rows and columns belong to the base ([linear; angular], base frame).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..model import RobotModel
from . import kernels as K
from ..joint_space import check_quaternions
from .inputs import SERIAL_ROWS, fast1, joint_arrays, plain_batch
from .kernels import entries as E
from .kernels.entries import CALL
from .packing import KEY, kernel_model, not_a_model

__all__ = ["mass_matrix"]


def mass_matrix(model: RobotModel, q: Any) -> np.ndarray:
    """``M(q)``, shape (..., nv, nv), for ``q`` (..., nq)."""
    try:
        d = model._cache.get(KEY) or kernel_model(model)
    except AttributeError:   # not a model: a file name, say
        raise not_a_model(model) from None
    if CALL is not None:   # one configuration in any common form, or a small batch: one C call
        out = CALL(E.crba_c.address, d.packed, d.nv, d.nv, q)
        if out is not None:
            return out
    nd = fast1(q) if CALL is None else 0   # without the C extension (kernels/_call.c)
    if nd == 1:
        out = np.empty((d.nv, d.nv))
        if E.crba_fast_raw(d.packed, q, out) == E.OK:
            return out
    elif nd == 2:
        out = np.empty((q.shape[0], d.nv, d.nv))
        if E.crba_fast_rows_raw(d.packed, q, out) == E.OK:
            return out
    if plain_batch(d, q) and np.isfinite(q).all():   # a large float64 batch, read as it is
        check_quaternions(model, q, "q")   # a zero one names no rotation (M would be nan)
        M = np.empty((q.shape[0], d.nv, d.nv))
        K.run_spans(K.crba_span, q.shape[0], d.bodies.packed, q, M)
        return M
    batch, (Q,) = joint_arrays(model, (q, "q", "q"))
    if Q.shape[0] <= SERIAL_ROWS:
        M = np.empty((Q.shape[0], d.nv, d.nv))
        E.crba_fast_rows(d.bodies.packed, Q, M)
    else:
        M = np.empty((Q.shape[0], d.nv, d.nv))
        K.run_spans(K.crba_span, Q.shape[0], d.bodies.packed, Q, M)
    return M.reshape(batch + (d.nv, d.nv))
