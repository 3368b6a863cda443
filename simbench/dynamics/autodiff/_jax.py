"""jax, imported once for :mod:`simbench.dynamics.autodiff`, in double precision
(``jax_enable_x64``, a process-wide jax setting: the dynamics are checked against Pinocchio to
1e-9). Switching it on changes jax for the whole process (``jnp.ones(2)`` is float64 from then
on), so when the process had it off this module says so in one warning line; a process that
turned it on itself (``jax.config.update("jax_enable_x64", True)`` or ``JAX_ENABLE_X64=1``)
hears nothing. When this module is the first to import jax, it also picks the CPU (unless
``JAX_PLATFORMS`` says otherwise) and synchronous CPU dispatch (``jax_cpu_enable_async_dispatch``
off: a single call of the inverse dynamics then takes about half the time, 30 instead of 60 us,
as no thread hand-off is paid); a jax imported earlier keeps its settings. A missing jax is one
line naming the ``autodiff`` extra."""
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

__all__ = ["jax", "jnp", "jsl", "MissingExtraError"]
