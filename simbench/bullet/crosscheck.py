"""Deprecated alias of :mod:`simbench.check` (``simbench check`` moved there); kept for one
release so that ``from simbench.bullet import crosscheck`` keeps working."""
from __future__ import annotations

import warnings

from ..check import _LAZY, __getattr__  # noqa: F401  (every public name of simbench.check)
from ..paths import resolve_urdf  # noqa: F401

__all__ = list(_LAZY)
warnings.warn("simbench.bullet.crosscheck is deprecated; use simbench.check", DeprecationWarning, stacklevel=2)
