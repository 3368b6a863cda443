"""One float64 array holding a packed tree and the scratch of the single-call entry points (the
"data" of Pinocchio's model/data split), so that a single call unboxes one model argument.

Layout: ``[nb, nq, nv, fdata (nb * NF), idata (nb * 4, int64 bits), W (nb * NW), M (nv * nv),
L (nv * nv)]``. The scratch is reused by every single call on the model: the
single-call kernels hold the GIL (no ``nogil``), so two Python threads never run them at once.
"""
from __future__ import annotations

import numpy as np

from ._jit import jit
from .layout import NF, NW

HEADER = 3


def pack(idata: np.ndarray, fdata: np.ndarray, nq: int, nv: int) -> np.ndarray:
    """The packed array of a tree (see the module docstring); writable, private to the model."""
    nb = idata.shape[0]
    size = HEADER + nb * NF + nb * 4 + nb * NW + 2 * nv * nv
    out = np.zeros(size)
    out[:HEADER] = nb, nq, nv
    o = HEADER
    out[o:o + nb * NF] = fdata.ravel()
    o += nb * NF
    out[o:o + 4 * nb].view(np.int64)[:] = idata.ravel()
    return out


@jit(inline="always")
def unpack(packed):
    """(idata, fdata, W, M, L, nq, nv): views of a packed array."""
    nb = np.int64(packed[0])
    nq = np.int64(packed[1])
    nv = np.int64(packed[2])
    o = HEADER
    fdata = packed[o:o + nb * NF].reshape((nb, NF))
    o += nb * NF
    idata = packed[o:o + 4 * nb].view(np.int64).reshape((nb, 4))
    o += 4 * nb
    W = packed[o:o + nb * NW].reshape((nb, NW))
    o += nb * NW
    M = packed[o:o + nv * nv].reshape((nv, nv))
    o += nv * nv
    L = packed[o:o + nv * nv].reshape((nv, nv))
    return idata, fdata, W, M, L, nq, nv
