"""The plug-in points for user dynamics (``typing.Protocol``), used by ``simbench check``, the
pytest helper :func:`simbench.testing.assert_matches_pybullet` and the integrators.

* :class:`InverseDynamicsFunction`: ``tau = f(q, qd, qdd)`` for one robot, arrays in
  ``model.joint_names`` order (what ``check --dynamics module:function`` loads);
* :class:`DynamicsModule`: model-level ``inverse_dynamics(model, q, qd, qdd, *, gravity)`` and
  ``mass_matrix(model, q)`` (``simbench.dynamics`` itself, or an adapter around another library),
  called with every sample at once: q, qd, qdd of shape (N, n), returning tau (N, n) and
  M (N, n, n) (an adapter of a one-configuration library loops over the rows);
* :class:`AccelerationFunction`: ``qdd = f(t, q, qd)`` that the integrators step.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np

if TYPE_CHECKING:
    from ..model import RobotModel


@runtime_checkable
class InverseDynamicsFunction(Protocol):
    def __call__(self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> np.ndarray: ...


@runtime_checkable
class DynamicsModule(Protocol):
    """Batched: q, qd, qdd (N, n) -> tau (N, n); q (N, n) -> M (N, n, n)."""

    def inverse_dynamics(self, model: "RobotModel", q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, *,
                         gravity: Sequence[float] | None = None) -> np.ndarray: ...

    def mass_matrix(self, model: "RobotModel", q: np.ndarray) -> np.ndarray: ...


@runtime_checkable
class AccelerationFunction(Protocol):
    def __call__(self, t: float, q: np.ndarray, qd: np.ndarray) -> np.ndarray: ...


__all__ = ["InverseDynamicsFunction", "DynamicsModule", "AccelerationFunction"]
