"""Automatic differentiation of the dynamics with jax (the ``autodiff`` extra: ``pip install
'simbench[autodiff]'``; jax on the CPU, float64).

Two formulations for any :class:`~simbench.model.RobotModel`, both checked against Pinocchio:

* the Lagrangian formulation of Adam Heins, "Lagrangian dynamics of a planar mobile manipulator
  with manual, automatic and symbolic differentiation" (:mod:`.lagrange`): link poses as
  functions of q, ``M = sum J_i^T G_i J_i`` with ``jax.jacfwd``, the Christoffel array from
  ``jax.jacfwd(M)``, ``g = dP/dq`` -- :func:`mass_matrix`, :func:`christoffel_matrix`,
  :func:`coriolis_matrix`, :func:`gravity_torques`, :func:`lagrangian_inverse_dynamics`;
* the recursive Newton-Euler algorithm written in jax (:mod:`.rnea`), a differentiable inverse
  dynamics -- :func:`inverse_dynamics`, :func:`forward_dynamics`, and their derivatives
  :func:`inverse_dynamics_derivatives` ``-> (dtau_dq, dtau_dqd, dtau_dqdd = M)`` and
  :func:`forward_dynamics_derivatives` ``-> (dqdd_dq, dqdd_dqd, dqdd_dtau = M^-1)``, the
  quantities of Pinocchio's ``computeRNEADerivatives`` / ``computeABADerivatives`` (also as
  ``simbench.dynamics.inverse_dynamics_derivatives`` / ``forward_dynamics_derivatives``).

numpy in and out, batched over leading dimensions (``jax.vmap``), conventions of
:mod:`simbench.dynamics` (q (..., nq), v (..., nv), a floating base's q/v/tau as Pinocchio's
free-flyer); derivatives with respect to q are taken in the tangent space, as Pinocchio's.
:func:`jax_dynamics` gives the jitted jax functions themselves, to compose with ``jax.grad``,
``jax.vmap`` or a jax optimiser. The numba functions of :mod:`simbench.dynamics` stay the
default: they are faster for plain evaluation; importing :mod:`simbench.dynamics` never imports
jax.
"""
from __future__ import annotations

from ._jax import MissingExtraError
from .api import (JaxDynamics, christoffel_matrix, coriolis_matrix, forward_dynamics,
                  forward_dynamics_derivatives, gravity_torques, inverse_dynamics,
                  inverse_dynamics_derivatives, jax_dynamics, lagrangian_inverse_dynamics,
                  mass_matrix)

__all__ = ["JaxDynamics", "jax_dynamics", "inverse_dynamics", "forward_dynamics",
           "inverse_dynamics_derivatives", "forward_dynamics_derivatives", "mass_matrix",
           "christoffel_matrix", "coriolis_matrix", "gravity_torques",
           "lagrangian_inverse_dynamics", "MissingExtraError"]
