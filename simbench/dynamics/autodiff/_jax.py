"""jax, imported once for :mod:`simbench.dynamics.autodiff`: on the CPU unless the user chose a
platform (``JAX_PLATFORMS``), in double precision (``jax_enable_x64``, a process-wide jax
setting: the dynamics are checked against Pinocchio to 1e-9). A missing jax is one line naming
the ``autodiff`` extra."""
from __future__ import annotations

import logging
import os
import sys

from ...errors import SimbenchError

try:
    from ...errors import MissingExtraError
except ImportError:  # main's simbench.errors has it; this branch predates it (drop at merge)
    class MissingExtraError(SimbenchError, ImportError):  # type: ignore[no-redef]
        """An optional dependency is not installed; the message names the extra."""

        def __init__(self, module: str, extra: str, purpose: str):
            self.module, self.extra = module, extra
            super().__init__(f"{purpose} needs {module}, which is not installed; install the "
                             f"'{extra}' extra: pip install 'simbench[{extra}]'")

log = logging.getLogger(__name__)

if "jax" not in sys.modules:
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
try:
    import jax
    import jax.numpy as jnp
    import jax.scipy.linalg as jsl
except ImportError:
    raise MissingExtraError("jax", "autodiff", "simbench.dynamics.autodiff (derivatives of the "
                            "dynamics)") from None

if not jax.config.jax_enable_x64:
    log.debug("enabling jax_enable_x64 (float64) for simbench.dynamics.autodiff")
    jax.config.update("jax_enable_x64", True)

__all__ = ["jax", "jnp", "jsl", "MissingExtraError"]
