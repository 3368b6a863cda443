"""Entry points called from Python, with explicit signatures (compiled at first call, cached).

Joint arrays enter as read-only, any-stride float64 arrays (``ARR1``/``ARR2``): a writable or a
read-only array (as :class:`~simbench.model.RobotModel` returns), contiguous or not, all match one
compiled signature. Every entry writes into ``out`` (allocated by the caller: cheaper than
returning a new array) and returns a status instead of raising:

* ``OK`` (0); ``BAD_SHAPE`` (1): a length differs from nq / nv; ``NOT_FINITE`` (2): an input
  holds nan or inf (or, for the inverse dynamics, the torques of finite inputs overflowed). The
  Python caller then raises the clear error (:mod:`..inputs`).

Every entry takes a tree as one flat array (:mod:`.tree`). ``*_fast`` use the model's gravity
and no external wrench; the ``*_rows`` entries take gravity and external wrenches (``fext``
(N or 1, nb, 6)).
``*_fast_rows`` and ``*_rows`` loop over rows serially (small batches: no threads to start).

``*_c``: the same single calls as C functions on float64 pointers (:func:`._jit.centry`), for
the C extension :data:`CALL` (``_call.c``): ``call(fn.address, P, rows, cols, x0[, x1, x2[,
gravity]])`` (gravity None: the model's) returns the result, or None when it did not take the
input (another form, or a status other than OK). :data:`CALL` is None where the extension was
not built.
"""
from __future__ import annotations

import math

import numba
import numpy as np
from numba import types

from ._jit import centry, entry, jit, step
from .crba import crba_row
from .forward import fd_row
from .layout import ARR1, ARR2, C_G, FEXT, TREE

from .tree import U, frow, sizes
from .rnea import rnea_row

ARR1_32 = "Array(float32, 1, 'A', readonly=True)"
#: ``bytes``: the joint values of a call given as Python sequences, packed as float64 by
#: :attr:`..packing.KernelModel.pack3` (``struct.pack`` costs less than one ``np.asarray``, and
#: unboxing bytes less than an ndarray)
SEQ = numba.typeof(b"")

OK, BAD_SHAPE, NOT_FINITE = 0, 1, 2

try:
    from ._call import call as CALL
except ImportError:  # built without a C compiler: the Python fast path runs instead
    CALL = None

_D = types.CPointer(types.float64)
#: ``status(P, nP, x0, n0, x1, n1, x2, n2, g, ng, out, nout)`` of the ``*_c`` functions (``g``:
#: gravity, ``ng`` = 3; or ``ng`` = 0 for the model's)
C_SIG = types.int64(_D, types.int64, _D, types.int64, _D, types.int64, _D, types.int64, _D,
                    types.int64, _D, types.int64)

#: the external wrenches of a call without them (never read)
FEXT0 = np.zeros((1, 6))


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
@step
def model_gravity(P):
    """The model's gravity, kept in row 0 of the tree."""
    g = frow(0) + U(C_G)
    return P[g], P[g + U(1)], P[g + U(2)]


@jit
def id_one(P, q, qd, qdd, gx, gy, gz, out):
    """RNEA of one configuration, gravity (gx, gy, gz), no external wrench."""
    nb, nq, nv = sizes(P)
    st = check3(nq, nv, q, qd, qdd)
    if st == OK and out.shape[0] == nv:
        rnea_row(P, q, qd, qdd, 1.0, gx, gy, gz, FEXT0, False, out)
        if not finite(out):   # finite inputs, overflowing torques: the caller explains
            st = NOT_FINITE
    elif st == OK:
        st = BAD_SHAPE
    return st


@entry(f"int64({TREE}, {ARR1}, {ARR1}, {ARR1}, float64[::1])")
def id_fast(P, q, qd, qdd, out):
    """RNEA of one configuration, the model's gravity, no external wrench."""
    gx, gy, gz = model_gravity(P)
    return id_one(P, q, qd, qdd, gx, gy, gz, out)


@step
def views(P, nP, x0, n0, x1, n1, x2, n2, out, nout):
    """The arrays behind the pointers of a ``*_c`` call (:data:`C_SIG`)."""
    return (numba.carray(P, nP), numba.carray(x0, n0), numba.carray(x1, n1),
            numba.carray(x2, n2), numba.carray(out, nout))


@step
def given_gravity(P, g, ng):
    """(status, gx, gy, gz) of a ``*_c`` call: the model's gravity when ng = 0, else the 3
    finite numbers at g."""
    if ng == 0:
        gx, gy, gz = model_gravity(P)
        return OK, gx, gy, gz
    if ng != 3:
        return BAD_SHAPE, 0.0, 0.0, 0.0
    gx, gy, gz = g[0], g[1], g[2]
    if not (math.isfinite(gx) and math.isfinite(gy) and math.isfinite(gz)):
        return NOT_FINITE, 0.0, 0.0, 0.0
    return OK, gx, gy, gz


@centry(C_SIG)
def id_c(P, nP, q, nq, qd, nqd, qdd, nqdd, g, ng, out, nout):
    """:func:`id_fast` on pointers, any gravity (see the module docstring)."""
    Pa, qa, qda, qdda, outa = views(P, nP, q, nq, qd, nqd, qdd, nqdd, out, nout)
    st, gx, gy, gz = given_gravity(Pa, g, ng)
    return id_one(Pa, qa, qda, qdda, gx, gy, gz, outa) if st == OK else st


@entry(f"int64({TREE}, {ARR1_32}, {ARR1_32}, {ARR1_32}, float64[::1])")
def id_fast32(P, q, qd, qdd, out):
    """:func:`id_fast` for float32 arrays (read as they are; the arithmetic is float64)."""
    gx, gy, gz = model_gravity(P)
    return id_one(P, q, qd, qdd, gx, gy, gz, out)


@entry(types.int64(types.float64[::1], SEQ, types.float64[::1]))
def id_fast_seq(P, x, out):
    """:func:`id_fast` for ``x = [q, q', q'']`` packed as float64 in one bytes object."""
    nb, nq, nv = sizes(P)
    if len(x) != 8 * (nq + 2 * nv):
        return BAD_SHAPE
    v = np.frombuffer(x, np.float64)
    gx, gy, gz = model_gravity(P)
    return id_one(P, v[:nq], v[nq:nq + nv], v[nq + nv:], gx, gy, gz, out)


@entry(f"int64({TREE}, {ARR2}, {ARR2}, {ARR2}, float64[:, ::1])")
def id_fast_rows(P, Q, QD, QDD, out):
    nb, nq, nv = sizes(P)
    st = check3_rows(nq, nv, Q, QD, QDD, out.shape[0])
    if st == OK:
        gx, gy, gz = model_gravity(P)
        for r in range(Q.shape[0]):
            rnea_row(P, Q[r], QD[r], QDD[r], 1.0, gx, gy, gz, FEXT0, False, out[r])
        if not finite_rows(out):
            st = NOT_FINITE
    return st


@entry(f"int64({TREE}, {ARR2}, {ARR2}, {ARR2}, float64, float64, float64, {FEXT}, boolean, "
       f"float64[:, ::1])")
def id_rows(P, Q, QD, QDD, gx, gy, gz, FEXT, has_fext, out):
    """RNEA over rows, any gravity, external wrenches FEXT (1 or N, nb, 6) when has_fext."""
    nb, nq, nv = sizes(P)
    st = check3_rows(nq, nv, Q, QD, QDD, out.shape[0])
    if st == OK:
        for r in range(Q.shape[0]):
            rnea_row(P, Q[r], QD[r], QDD[r], 1.0, gx, gy, gz, FEXT[r if FEXT.shape[0] > 1 else 0],
                     has_fext, out[r])
        if not finite_rows(out):   # a non-finite wrench, or overflowing torques: the caller explains
            st = NOT_FINITE
    return st


# ------------------------------------------------------------------ mass matrix
@jit(inline="always")
def crba_one(P, q, out):
    nb, nq, nv = sizes(P)
    if q.shape[0] != nq or out.shape[0] != nv or out.shape[1] != nv:
        return BAD_SHAPE
    if not finite(q):
        return NOT_FINITE
    crba_row(P, q, out)
    if not finite_rows(out):   # finite q, non-finite M: a zero quaternion; the caller explains
        return NOT_FINITE
    return OK


@entry(f"int64({TREE}, {ARR1}, float64[:, ::1])")
def crba_fast(P, q, out):
    return crba_one(P, q, out)


@centry(C_SIG)
def crba_c(P, nP, q, nq, _x1, _n1, _x2, _n2, _g, _ng, out, nout):
    """:func:`crba_fast` on pointers (``out``: nv * nv entries)."""
    Pa = numba.carray(P, nP)
    nv = sizes(Pa)[2]
    if nout != nv * nv:
        return BAD_SHAPE
    return crba_one(Pa, numba.carray(q, nq), numba.carray(out, (nv, nv)))


@entry(f"int64({TREE}, {ARR2}, float64[:, :, ::1])")
def crba_fast_rows(P, Q, out):
    nb, nq, nv = sizes(P)
    if Q.shape[1] != nq or out.shape[0] != Q.shape[0]:
        return BAD_SHAPE
    if not finite_rows(Q):
        return NOT_FINITE
    for r in range(Q.shape[0]):
        crba_row(P, Q[r], out[r])
    return OK


# ------------------------------------------------------------------ forward dynamics
@jit(inline="always")
def fd_one(P, q, qd, tau, gx, gy, gz, out):
    """Forward dynamics of one configuration, gravity (gx, gy, gz); all-nan if M is singular."""
    nb, nq, nv = sizes(P)
    st = check3(nq, nv, q, qd, tau)
    if st == OK and out.shape[0] == nv:
        fd_row(P, q, qd, tau, gx, gy, gz, FEXT0, False, out)
    elif st == OK:
        st = BAD_SHAPE
    return st


@entry(f"int64({TREE}, {ARR1}, {ARR1}, {ARR1}, float64[::1])")
def fd_fast(P, q, qd, tau, out):
    """Forward dynamics of one configuration, the model's gravity; all-nan if M is singular."""
    gx, gy, gz = model_gravity(P)
    return fd_one(P, q, qd, tau, gx, gy, gz, out)


@centry(C_SIG)
def fd_c(P, nP, q, nq, qd, nqd, tau, ntau, g, ng, out, nout):
    """:func:`fd_fast` on pointers, any gravity."""
    Pa, qa, qda, taua, outa = views(P, nP, q, nq, qd, nqd, tau, ntau, out, nout)
    st, gx, gy, gz = given_gravity(Pa, g, ng)
    return fd_one(Pa, qa, qda, taua, gx, gy, gz, outa) if st == OK else st


@entry(f"int64({TREE}, {ARR2}, {ARR2}, {ARR2}, float64[:, ::1])")
def fd_fast_rows(P, Q, QD, TAU, out):
    nb, nq, nv = sizes(P)
    st = check3_rows(nq, nv, Q, QD, TAU, out.shape[0])
    if st == OK:
        gx, gy, gz = model_gravity(P)
        for r in range(Q.shape[0]):
            fd_row(P, Q[r], QD[r], TAU[r], gx, gy, gz, FEXT0, False, out[r])
    return st


@entry(f"int64({TREE}, {ARR2}, {ARR2}, {ARR2}, float64, float64, float64, {FEXT}, boolean, "
       f"float64[:, ::1])")
def fd_rows(P, Q, QD, TAU, gx, gy, gz, FEXT, has_fext, out):
    nb, nq, nv = sizes(P)
    st = check3_rows(nq, nv, Q, QD, TAU, out.shape[0])
    if st == OK:
        for r in range(Q.shape[0]):
            fd_row(P, Q[r], QD[r], TAU[r], gx, gy, gz, FEXT[r if FEXT.shape[0] > 1 else 0],
                   has_fext, out[r])
        if not finite_rows(out):   # a non-finite wrench, a singular M, an overflow: the caller explains
            st = NOT_FINITE
    return st
