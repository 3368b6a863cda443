"""Entry points called from Python, with explicit signatures (compiled at first call, cached).

Joint arrays enter as read-only, any-stride float64 arrays (``ARR1``/``ARR2``): a writable or a
read-only array (as :class:`~simbench.model.RobotModel` returns), contiguous or not, all match one
compiled signature. Every entry writes into ``out`` (allocated by the caller: cheaper than
returning a new array) and returns a status instead of raising:

* ``OK`` (0); ``BAD_SHAPE`` (1): a length differs from nq / nv; ``NOT_FINITE`` (2): an input
  holds nan or inf. The Python caller then raises the clear error (:mod:`..inputs`).

``*_fast`` take the model as one packed array (:mod:`.packed`) and use the model's gravity; the
``*_rows`` entries take the tree, gravity and external wrenches (``fext`` (N or 1, nb, 6)).
``*_fast_rows`` and ``*_rows`` loop over rows serially (small batches: no threads to start).
"""
from __future__ import annotations

import math

import numpy as np

from ._jit import entry, jit
from .crba import crba_row
from .forward import fd_row
from .layout import ARR1, ARR2, C_G, FEXT, NW, TREE
from .packed import unpack
from .rnea import rnea_row

OK, BAD_SHAPE, NOT_FINITE = 0, 1, 2

PACKED = "float64[::1]"


@jit(inline="always")
def finite_rows(X):
    for r in range(X.shape[0]):
        for i in range(X.shape[1]):
            if not math.isfinite(X[r, i]):
                return False
    return True


@jit(inline="always")
def finite(x):
    for i in range(x.shape[0]):
        if not math.isfinite(x[i]):
            return False
    return True


@jit(inline="always")
def check3(nq, nv, q, qd, x):
    """Status of one configuration (q, qd, and qdd or tau)."""
    if q.shape[0] != nq or qd.shape[0] != nv or x.shape[0] != nv:
        return BAD_SHAPE
    if not (finite(q) and finite(qd) and finite(x)):
        return NOT_FINITE
    return OK


@jit(inline="always")
def check3_rows(nq, nv, Q, QD, X, rows):
    if (Q.shape[1] != nq or QD.shape[1] != nv or X.shape[1] != nv or Q.shape[0] != rows
            or QD.shape[0] != rows or X.shape[0] != rows):
        return BAD_SHAPE
    if not (finite_rows(Q) and finite_rows(QD) and finite_rows(X)):
        return NOT_FINITE
    return OK


# ------------------------------------------------------------------ inverse dynamics
@entry(f"int64({PACKED}, {ARR1}, {ARR1}, {ARR1}, float64[::1])")
def id_fast(packed, q, qd, qdd, out):
    """RNEA of one configuration, the model's gravity, no external wrench."""
    idata, fdata, W, M, L, nq, nv = unpack(packed)
    st = check3(nq, nv, q, qd, qdd)
    if st == OK and out.shape[0] == nv:
        rnea_row(idata, fdata, q, qd, qdd, 1.0, fdata[0, C_G], fdata[0, C_G + 1], fdata[0, C_G + 2],
                 W, False, out, W)
    return st


@entry(f"int64({PACKED}, {ARR2}, {ARR2}, {ARR2}, float64[:, ::1])")
def id_fast_rows(packed, Q, QD, QDD, out):
    idata, fdata, W, M, L, nq, nv = unpack(packed)
    st = check3_rows(nq, nv, Q, QD, QDD, out.shape[0])
    if st == OK:
        for r in range(Q.shape[0]):
            rnea_row(idata, fdata, Q[r], QD[r], QDD[r], 1.0, fdata[0, C_G], fdata[0, C_G + 1],
                     fdata[0, C_G + 2], W, False, out[r], W)
    return st


@entry(f"int64({TREE}, {ARR2}, {ARR2}, {ARR2}, float64, float64, float64, {FEXT}, boolean, "
     f"float64[:, ::1])")
def id_rows(idata, fdata, Q, QD, QDD, gx, gy, gz, FEXT, has_fext, out):
    """RNEA over rows, any gravity, external wrenches FEXT (1 or N, nb, 6) when has_fext."""
    W = np.empty((idata.shape[0], NW))
    nv = out.shape[1]
    st = check3_rows(Q.shape[1], nv, Q, QD, QDD, out.shape[0])
    if st == OK:
        for r in range(Q.shape[0]):
            rnea_row(idata, fdata, Q[r], QD[r], QDD[r], 1.0, gx, gy, gz,
                     FEXT[r if FEXT.shape[0] > 1 else 0], has_fext, out[r], W)
    return st


# ------------------------------------------------------------------ mass matrix
@entry(f"int64({PACKED}, {ARR1}, float64[:, ::1])")
def crba_fast(packed, q, out):
    idata, fdata, W, M, L, nq, nv = unpack(packed)
    if q.shape[0] != nq or out.shape[0] != nv:
        return BAD_SHAPE
    if not finite(q):
        return NOT_FINITE
    crba_row(idata, fdata, q, out, W)
    return OK


@entry(f"int64({PACKED}, {ARR2}, float64[:, :, ::1])")
def crba_fast_rows(packed, Q, out):
    idata, fdata, W, M, L, nq, nv = unpack(packed)
    if Q.shape[1] != nq or out.shape[0] != Q.shape[0]:
        return BAD_SHAPE
    if not finite_rows(Q):
        return NOT_FINITE
    for r in range(Q.shape[0]):
        crba_row(idata, fdata, Q[r], out[r], W)
    return OK


# ------------------------------------------------------------------ forward dynamics
@entry(f"int64({PACKED}, {ARR1}, {ARR1}, {ARR1}, float64[::1])")
def fd_fast(packed, q, qd, tau, out):
    """Forward dynamics of one configuration, the model's gravity; all-nan if M is singular."""
    idata, fdata, W, M, L, nq, nv = unpack(packed)
    st = check3(nq, nv, q, qd, tau)
    if st == OK and out.shape[0] == nv:
        fd_row(idata, fdata, q, qd, tau, fdata[0, C_G], fdata[0, C_G + 1], fdata[0, C_G + 2],
               W, False, out, W, M, L)
    return st


@entry(f"int64({PACKED}, {ARR2}, {ARR2}, {ARR2}, float64[:, ::1])")
def fd_fast_rows(packed, Q, QD, TAU, out):
    idata, fdata, W, M, L, nq, nv = unpack(packed)
    st = check3_rows(nq, nv, Q, QD, TAU, out.shape[0])
    if st == OK:
        for r in range(Q.shape[0]):
            fd_row(idata, fdata, Q[r], QD[r], TAU[r], fdata[0, C_G], fdata[0, C_G + 1],
                   fdata[0, C_G + 2], W, False, out[r], W, M, L)
    return st


@entry(f"int64({TREE}, {ARR2}, {ARR2}, {ARR2}, float64, float64, float64, {FEXT}, boolean, "
     f"float64[:, ::1])")
def fd_rows(idata, fdata, Q, QD, TAU, gx, gy, gz, FEXT, has_fext, out):
    nb = idata.shape[0]
    nv = out.shape[1]
    W = np.empty((nb, NW))
    M = np.empty((nv, nv))
    L = np.empty((nv, nv))
    st = check3_rows(Q.shape[1], nv, Q, QD, TAU, out.shape[0])
    if st == OK:
        for r in range(Q.shape[0]):
            fd_row(idata, fdata, Q[r], QD[r], TAU[r], gx, gy, gz,
                   FEXT[r if FEXT.shape[0] > 1 else 0], has_fext, out[r], W, M, L)
    return st
