"""A tree as one flat float64 array ``P`` (the "model" and the single-call "data" of Pinocchio's
model/data split), read with computed offsets: no array views to create per call, and one
argument to unbox.

Layout: ``[nb, nq, nv | fdata (nb * NF) | idata (nb * 4, as floats) | W (nb * NW) | M (nv * nv) |
L (nv * nv)]`` with ``fdata`` / ``idata`` the rows of :mod:`.layout`. ``W``, ``M``, ``L`` are the
scratch of the single-call entry points, reused by every call on the model: those entry points
hold the GIL (no ``nogil``), so two Python threads never run them at once. The batched span
kernels read only the tree part and allocate their own scratch.

Offsets are unsigned (:data:`U`): numba then emits no negative-index wrap-around.
"""
from __future__ import annotations

import numpy as np

from ._jit import step
from .layout import NF, NW

U = np.uint64
HEADER = 3


def pack(idata: np.ndarray, fdata: np.ndarray, nq: int, nv: int) -> np.ndarray:
    """The flat array of a tree (see the module docstring); writable, private to the model."""
    nb = idata.shape[0]
    out = np.zeros(HEADER + nb * NF + nb * 4 + nb * NW + 2 * nv * nv)
    out[:HEADER] = nb, nq, nv
    out[HEADER:HEADER + nb * NF] = fdata.ravel()
    out[HEADER + nb * NF:HEADER + nb * (NF + 4)] = idata.ravel()
    return out


@step
def sizes(P):
    """(nb, nq, nv) of a tree."""
    return np.int64(P[0]), np.int64(P[1]), np.int64(P[2])


@step
def frow(k):
    """Offset of body k's fdata row."""
    return U(HEADER + k * NF)


@step
def body(P, nb, k):
    """(parent, joint type, q index, v index) of body k."""
    o = U(HEADER + nb * NF + 4 * k)
    return np.int64(P[o]), np.int64(P[o + U(1)]), np.int64(P[o + U(2)]), np.int64(P[o + U(3)])


@step
def wrow(nb, k, col):
    """Offset of column ``col`` of body k in the single-call work array W."""
    return U(HEADER + nb * (NF + 4) + k * NW + col)


@step
def scratch_matrices(nb, nv):
    """Offsets of the single-call scratch matrices M and L."""
    o = U(HEADER + nb * (NF + 4 + NW))
    return o, o + U(nv * nv)


@step
def depth_parity(P, nb):
    """odd[k]: body k is at an odd depth in the tree (the root: even). The block drivers keep a
    body's quantities in one of two work arrays by this parity, its parent's in the other."""
    odd = np.zeros(nb, np.bool_)
    for k in range(1, nb):
        odd[k] = not odd[body(P, nb, k)[0]]
    return odd
