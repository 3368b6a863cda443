"""Independent references that simbench's own results are checked against.

* :mod:`~simbench.oracles.pinocchio`: Pinocchio, through the project's one adapter between
  simbench's joint order and Pinocchio's (fixed and floating bases, spherical joints, batched).

Used by ``simbench check``, ``simbench bench`` and the tests; :mod:`simbench.dynamics` never
imports them.
"""
from __future__ import annotations

from .pinocchio import PinocchioDynamics, PinocchioMap, pinocchio_model

__all__ = ["PinocchioDynamics", "PinocchioMap", "pinocchio_model"]
