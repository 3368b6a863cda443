"""jax, imported once for :mod:`simbench.dynamics.autodiff`, in double precision
(``jax_enable_x64``, a process-wide jax setting: the dynamics are checked against Pinocchio to
1e-9). Switching it on changes jax for the whole process (``jnp.ones(2)`` is float64 from then
on), so when the process had it off this module says so in one warning line; a process that
turned it on itself (``jax.config.update("jax_enable_x64", True)`` or ``JAX_ENABLE_X64=1``)
hears nothing. When this module is the first to import jax, it also picks the CPU (unless
``JAX_PLATFORMS`` says otherwise) and synchronous CPU dispatch (``jax_cpu_enable_async_dispatch``
off: a single call of the inverse dynamics then takes about half the time, 30 instead of 60 us,
as no thread hand-off is paid) and a persistent compilation cache (below); a jax imported
earlier keeps its settings. A missing jax is one line naming the ``autodiff`` extra."""
from __future__ import annotations

import logging
import os
import sys

from ...errors import MissingExtraError

log = logging.getLogger(__name__)

_FIRST = "jax" not in sys.modules
if _FIRST:
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
try:
    import jax
    import jax.numpy as jnp
    import jax.scipy.linalg as jsl
except ImportError:
    raise MissingExtraError("jax", "autodiff", "simbench.dynamics.autodiff (derivatives of the "
                            "dynamics)") from None

if not jax.config.jax_enable_x64:
    jax.config.update("jax_enable_x64", True)
    log.warning("simbench.dynamics.autodiff switched jax to float64 for this whole process "
                "(jax_enable_x64 = True, which its derivatives need): new jax arrays default to float64; "
                "set jax.config.update('jax_enable_x64', True) yourself first to skip this line")
if _FIRST and "jax_cpu_enable_async_dispatch" in jax.config.values:
    jax.config.update("jax_cpu_enable_async_dispatch", False)


def _cache_dir() -> str | None:
    """jax's persistent compilation cache for this user (``$XDG_CACHE_HOME/simbench/jax``, else
    ``~/.cache/simbench/jax``), or None where it cannot be made (a read-only home)."""
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    path = os.path.join(root, "simbench", "jax")
    try:
        os.makedirs(path, exist_ok=True)
    except OSError:
        return None
    return path if os.access(path, os.W_OK) else None


# compiled derivatives kept between runs: the iiwa's first inverse_dynamics_derivatives took 5-6.5 s
# in every new process, 0.65-0.8 s with the cache (measured); jax keeps compilations over 1 s. A
# cache the user chose (jax_compilation_cache_dir, JAX_COMPILATION_CACHE_DIR) or SIMBENCH_JAX_CACHE=0
# is left alone.
if _FIRST and jax.config.values.get("jax_compilation_cache_dir") is None and \
        os.environ.get("SIMBENCH_JAX_CACHE", "1") != "0" and (_dir := _cache_dir()) is not None:
    jax.config.update("jax_compilation_cache_dir", _dir)

__all__ = ["jax", "jnp", "jsl", "MissingExtraError"]
