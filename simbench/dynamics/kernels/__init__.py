"""The rigid-body algorithms as loop kernels, compiled with numba (``cache=True``).

Each algorithm is written once: per-body steps on scalars (:mod:`.rnea`, :mod:`.crba`, with the
joint models of :mod:`.joints` and the spatial algebra of :mod:`.spatial`), and drivers that loop
over the bodies:

* ``*_row``: one configuration (work array ``W[body, column]``);
* ``*_block``: ``BS`` configurations at once, the configuration index innermost
  (``W[body, column, b]``) so that LLVM vectorises each step across configurations;
* ``*_batch``: blocks in parallel (``prange``), for large batches;
* :mod:`.entries`: what Python calls (explicit signatures, status codes instead of exceptions).

The model enters as the arrays of :mod:`.layout` (built by :mod:`simbench.dynamics.packing`).
Everything runs as plain Python under ``NUMBA_DISABLE_JIT=1``.

numba's threading layer is process-wide: :func:`use_threads` picks a thread-safe one (OpenMP or
TBB, else the work queue) the first time a batched kernel runs, unless the user or another
library has already chosen or started one; importing this package changes nothing.
"""
from __future__ import annotations

import os

import numba

from . import entries, layout
from .crba import crba_batch
from .forward import fd_batch, fk_rows
from .layout import BS, FIXED, FREE, PRISMATIC, REVOLUTE, SPHERICAL
from .rnea import rnea_batch

_threads_ready = False

#: blocks of ``BS`` configurations per parallel iteration
CHUNK = 4


def use_threads() -> None:
    """Choose numba's threading layer before the first parallel launch (once per process):
    OpenMP or TBB (safe when several Python threads call batched kernels), else the work
    queue; never when ``NUMBA_THREADING_LAYER`` is set or the layer is already running."""
    global _threads_ready
    if _threads_ready:
        return
    _threads_ready = True
    if os.environ.get("NUMBA_THREADING_LAYER") or numba.config.THREADING_LAYER != "default":
        return
    from numba.np.ufunc import parallel

    if getattr(parallel, "_is_initialized", False):
        return
    for module in ("numba.np.ufunc.omppool", "numba.np.ufunc.tbbpool"):
        try:
            __import__(module)
        except Exception:  # pragma: no cover - depends on the machine  # noqa: BLE001
            continue
        numba.config.THREADING_LAYER = "threadsafe"
        return
    numba.config.THREADING_LAYER = "workqueue"  # pragma: no cover


__all__ = ["entries", "layout", "rnea_batch", "crba_batch", "fd_batch", "fk_rows", "use_threads",
           "CHUNK", "BS", "FIXED", "REVOLUTE", "PRISMATIC", "SPHERICAL", "FREE"]
