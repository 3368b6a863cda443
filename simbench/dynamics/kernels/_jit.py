"""The numba options every kernel uses, and lazily compiled entry points.

* ``FASTMATH``: fast-math without the no-nan/no-inf assumptions (inputs are tested for non-finite
  values, and a singular mass matrix must still come back as nan): contraction into FMAs,
  reassociation (vectorised reductions), no signed zeros, reciprocals. Results agree with
  Pinocchio to ~1e-15 relative (tests/test_dynamics_corpus.py).
* ``error_model="numpy"``: a division by zero gives inf or nan instead of raising (numba's
  default check of every divisor is an early exit that stops LLVM from vectorising a loop; the
  kernels never raise).
* :func:`jit`: a compiled function cached on disk (``cache=True``: ``__pycache__`` next to the
  module); :func:`step`: a small function on scalars, typed and compiled once and always
  inlined by LLVM into its callers (``forceinline``): numba's own IR inlining
  (``inline="always"``) types it again at every call site, which doubled the compile time for
  the same machine code, and without forced inlining LLVM leaves calls inside the loops over
  configurations, which then do not vectorise (2.6x slower batches).
* :func:`entry`: a function Python calls, with one explicit signature, compiled (or loaded from
  the cache) the first time it is called, not at import; each entry compiles only what it
  needs. The first compilation is announced on the ``simbench.dynamics`` logger.
* :func:`centry`: a C function (numba ``cfunc``, cached on disk) compiled the first time its
  :attr:`~_CEntry.address` is read; the C extension ``_call`` calls it with the arguments of one
  call (:mod:`.entries`).
* :func:`drop_stale_cache`: numba's ``cache=True`` checks only the file of the function it
  loads, while the kernels inline steps and layout constants from the other modules of this
  package: after one of those changes (an update, a merge) numba would load machine code built
  for the old layout (wrong numbers, or a crash). The package's sources are hashed at import;
  when the hash differs from the one kept with the cache, the package's cached kernels are
  dropped and compile again at first use.
"""
from __future__ import annotations

import glob
import hashlib
import logging
import os
import sys
import time
from functools import cached_property
from typing import Any

from numba import cfunc, njit

FASTMATH = frozenset({"contract", "reassoc", "nsz", "arcp"})
log = logging.getLogger("simbench.dynamics")

#: measured compile time of one entry on the 2-core machine of these sessions (for the
#: announcement): the single calls 3-10 s, the batched spans 6-20 s (the RNEA's the longest)
COMPILE_TIME = "3-20 s"


def jit(fn: Any = None, **kw: Any) -> Any:
    """``numba.njit(cache=True, fastmath=FASTMATH, error_model="numpy", **kw)``."""
    opts: dict[str, Any] = dict(cache=True, fastmath=set(FASTMATH), error_model="numpy")
    opts.update(kw)
    return njit(**opts) if fn is None else njit(**opts)(fn)


def step(fn: Any) -> Any:
    """A scalar helper (see the module docstring)."""
    return njit(cache=True, fastmath=set(FASTMATH), error_model="numpy", forceinline=True)(fn)


def _probe() -> None:
    """A function of this package for numba's cache locator (never compiled)."""


def drop_stale_cache() -> bool:
    """Remove this package's numba cache files if its sources changed since they were written
    (see the module docstring); True if files were removed. Silent where the cache is not
    writable."""
    here = os.path.dirname(os.path.abspath(__file__))
    digest = hashlib.sha1()
    for name in sorted(os.listdir(here)):
        if name.endswith(".py"):
            with open(os.path.join(here, name), "rb") as fh:
                digest.update(name.encode() + b"\0" + fh.read())
    try:
        cache_dir = str(njit(cache=True)(_probe)._cache._cache_path)
    except AttributeError:  # numba internals moved: its default, next to the sources
        cache_dir = os.path.join(here, "__pycache__")
    stamp = os.path.join(cache_dir, "simbench-kernels.sha1")
    try:
        with open(stamp) as fh:
            if fh.read().strip() == digest.hexdigest():
                return False
    except OSError:
        pass
    stale = glob.glob(os.path.join(cache_dir, "*.nbi")) + glob.glob(os.path.join(cache_dir, "*.nbc"))
    try:
        for path in stale:
            os.remove(path)
        os.makedirs(cache_dir, exist_ok=True)
        with open(stamp, "w") as fh:
            fh.write(digest.hexdigest() + "\n")
    except OSError:
        return False
    if stale:
        log.info("simbench dynamics kernels changed since they were cached: %d cache files "
                 "removed from %s", len(stale), cache_dir)
    return bool(stale)


drop_stale_cache()


class _Entry:
    """A dispatcher compiled for ``sig`` at its first call; then the module attribute is the
    dispatcher itself (no wrapper left on the hot path) and other argument types are refused."""

    def __init__(self, disp: Any, sig: str, module: str, name: str):
        self.disp, self.sig, self.module, self.name = disp, sig, module, name
        self.__doc__ = disp.py_func.__doc__

    def compile(self) -> Any:
        if not self.disp.signatures:
            cached = _is_cached(self.disp)
            if not cached:
                log.info("compiling simbench dynamics kernel %s once (about %s); cached in %s",
                         self.name, COMPILE_TIME, _cache_dir(self.disp))
            t0 = time.perf_counter()
            self.disp.compile(self.sig)
            if not cached:
                log.info("compiled %s in %.1f s", self.name, time.perf_counter() - t0)
            self.disp.disable_compile()
        module = sys.modules[self.module]
        setattr(module, self.name, self.disp)
        setattr(module, self.name + "_raw", self.disp.overloads[self.disp.signatures[0]].entry_point)
        return self.disp

    def __call__(self, *args: Any) -> Any:
        return self.compile()(*args)

    def raw(self, *args: Any) -> Any:
        """The compiled function without numba's dispatcher (see :func:`entry`)."""
        self.compile()
        return getattr(sys.modules[self.module], self.name + "_raw")(*args)


def entry(sig: str, **kw: Any) -> Any:
    """Decorator: a lazily compiled entry point with signature ``sig`` (see :class:`_Entry`).

    Also defines ``<name>_raw`` in the function's module: the compiled function called without
    numba's dispatcher, which skips the type resolution (~0.1-0.2 us a call). It unboxes its
    arguments as the signature says without checking them, so a caller must have checked their
    types (the dynamics' fast path does: float64 arrays of the right number of dimensions)."""
    def deco(fn: Any) -> _Entry:
        e = _Entry(jit(fn, **kw), sig, fn.__module__, fn.__name__)
        setattr(sys.modules[fn.__module__], fn.__name__ + "_raw", e.raw)
        return e
    return deco


def _is_cached(disp: Any) -> bool:
    """Whether numba's on-disk cache holds an index for ``disp`` (False if unknown)."""
    try:
        return os.path.exists(disp._cache._cache_file._index_path)
    except AttributeError:  # numba internals moved: announce anyway
        return False


def _cache_dir(disp: Any) -> str:
    try:
        return str(disp._cache._cache_path)
    except AttributeError:
        return "numba's cache directory"


class _CEntry:
    """A C function of signature ``sig`` compiled from ``fn`` at the first read of
    :attr:`address` (then a plain attribute: the hot path reads one instance attribute)."""

    def __init__(self, fn: Any, sig: Any):
        self.fn, self.sig, self.name = fn, sig, fn.__name__
        self.__doc__ = fn.__doc__

    @cached_property
    def address(self) -> int:
        """The function's address, for :mod:`._call`."""
        probe = njit(cache=True)(self.fn)   # never compiled: numba's cache index of fn
        cached = _is_cached(probe)
        if not cached:
            log.info("compiling simbench dynamics kernel %s once (about %s); cached in %s",
                     self.name, COMPILE_TIME, _cache_dir(probe))
        t0 = time.perf_counter()
        self.compiled = cfunc(self.sig, cache=True, fastmath=set(FASTMATH), error_model="numpy")(self.fn)
        if not cached:
            log.info("compiled %s in %.1f s", self.name, time.perf_counter() - t0)
        return int(self.compiled.address)


def centry(sig: Any) -> Any:
    """Decorator: a lazily compiled C function (see :class:`_CEntry`)."""
    return lambda fn: _CEntry(fn, sig)
