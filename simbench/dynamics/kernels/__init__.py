"""The rigid-body algorithms as loop kernels, compiled with numba (``cache=True``).

Each algorithm is written once: per-body steps on scalars (:mod:`.rnea`, :mod:`.crba`, with the
joint models of :mod:`.joints` and the spatial algebra of :mod:`.spatial`), and drivers that loop
over the bodies:

* ``*_row``: one configuration (work array ``W[body, column]``);
* ``*_block``: ``BS`` configurations at once, the configuration index innermost (the flat
  blocks of :mod:`.blocks`) so that LLVM vectorises each step across configurations;
* ``*_span``: a range of rows, block by block, without the GIL; :mod:`.threads` runs spans of a
  large batch on Python threads (numba's process-wide threading layer is never touched);
* :mod:`.entries`: the single-call entry points (explicit signatures, status codes instead of
  exceptions).

The model enters as the arrays of :mod:`.layout` (built by :mod:`simbench.dynamics.packing`).
Every entry point is compiled at its first call (:func:`._jit.entry`) and cached on disk.
"""
from __future__ import annotations

from typing import Any

from . import crba, entries, forward, kinematics, layout, rnea
from .layout import BS, FIXED, FREE, PRISMATIC, REVOLUTE, SPHERICAL
from .threads import run_spans, set_threads, threads

_SPANS = {"rnea_span": rnea, "crba_span": crba, "fd_span": forward, "fk_rows": kinematics,
          "jacobian_rows": kinematics}


def __getattr__(name: str) -> Any:
    """The span kernels, read from their modules (where the compiled dispatcher replaces the
    lazy entry at the first call)."""
    if name in _SPANS:
        return getattr(_SPANS[name], name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["entries", "layout", "rnea_span", "crba_span", "fd_span", "fk_rows", "jacobian_rows",
           "run_spans", "threads", "set_threads", "BS", "FIXED", "REVOLUTE", "PRISMATIC",
           "SPHERICAL", "FREE"]
