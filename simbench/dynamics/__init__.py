"""simbench's own rigid-body dynamics (no PyBullet, no Pinocchio): RNEA, CRBA, forward dynamics,
the Lagrangian formulation, integrators, the configuration manifold and a free rigid body.

Conventions (Pinocchio's, so that users can move between the two), stated once here:

===================  ==============================================================================
q (..., nq)          ``[x, y, z, qx, qy, qz, qw]`` of a floating base (position in the world,
                     orientation as a unit quaternion), then the joints in ``model.joint_names``
                     order (PyBullet's); a spherical joint is a unit quaternion (x, y, z, w)
v, a (..., nv)       ``[vx, vy, vz, wx, wy, wz]`` of a floating base (linear then angular velocity,
                     both in the base frame), then the joint rates; a spherical joint's entries
                     are the child's angular velocity in the child frame
tau (..., nv)        the base wrench ``[force; torque]`` in the base frame, then joint torques
                     and forces; ``M`` (..., nv, nv) in the same order
gravity              in the root frame (the world for a floating base); default ``model.gravity``
Jacobians            world-aligned, rows ``[angular; linear]`` (Pinocchio's
                     ``LOCAL_WORLD_ALIGNED`` with the row blocks swapped), columns as v
spatial vectors      internally ``[angular; linear]`` (twist ``(w, v)``, wrench ``(m, f)``, the
                     "AI Robotics" slides' order); only the public floating-base v and tau use
                     Pinocchio's ``[linear; angular]``
f_ext                link name -> wrench ``[torque, force]`` (..., 6), world frame, about the link
                     origin
===================  ==============================================================================

Leading dimensions broadcast; every function takes the batch. Without a floating base and
spherical joints, ``nq == nv == model.dof``.

Modules: :mod:`.rnea` (inverse dynamics), :mod:`.crba` (mass matrix), :mod:`.forward` (forward
dynamics), :mod:`.integrators` (``simulate`` for any acceleration function), :mod:`.configuration`
(``integrate``, ``difference``, ``normalize``), :mod:`.kinematics` (poses, Jacobians, energies), :mod:`.centroidal` (centroidal momentum, link
twists, J' v),
:mod:`.coriolis` (``C(q, v)`` of any tree, one compiled walk), :mod:`.lagrange` (the independent Lagrangian formulation), :mod:`.rigid_body` (a free body on
SE(3)), :mod:`.symbolic` (sympy), :mod:`.packing` (model -> kernel arrays), :mod:`.inputs`
(arguments), :mod:`.kernels` (the numba loops), :mod:`.protocols` (plug-in points).
"""
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..model import GRAVITY, RobotModel
from . import coriolis, lagrange, rigid_body
from .centroidal import centroidal_momentum, centroidal_momentum_matrix, link_acceleration_bias, link_velocity
from .configuration import difference, integrate, normalize
from .packing import require_model
from .crba import mass_matrix
from .forward import forward_dynamics
from .integrators import METHODS, Trajectory, robot_acceleration, simulate, simulate_model, step
from .kinematics import (center_of_mass, com_jacobian, forward_kinematics, kinetic_energy,
                         link_com_jacobians, link_jacobian, link_pose, potential_energy)
from .rnea import bias_forces, gravity_torques, inverse_dynamics


def coriolis_matrix(model: RobotModel, q: Any, qd: Any) -> np.ndarray:
    """``C(q, q')`` (..., nv, nv) of any model (floating base, spherical joints): ``C q' + g =
    bias_forces`` and ``M' - 2C`` skew-symmetric, Pinocchio's ``computeCoriolisMatrix`` (on a
    fixed base the Christoffel C of :func:`.lagrange.coriolis_matrix`); one compiled walk of the
    tree, see :func:`simbench.dynamics.coriolis.coriolis_matrix`."""
    return coriolis.coriolis_matrix(model, q, qd)


def inverse_dynamics_derivatives(model: RobotModel, q: Any, qd: Any, qdd: Any, *,
                                 gravity: Sequence[float] | None = None, f_ext: Any = None,
                                 damping: bool = False, friction: bool = False
                                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(dtau_dq, dtau_dqd, dtau_dqdd = M)``, each (..., nv, nv), from jax (the ``autodiff``
    extra; jax loads at the first call), as Pinocchio's ``computeRNEADerivatives`` (``damping``:
    + diag(D) in dtau_dqd); see
    :func:`simbench.dynamics.autodiff.inverse_dynamics_derivatives`."""
    require_model(model)
    from .autodiff import inverse_dynamics_derivatives as derivatives
    return derivatives(model, q, qd, qdd, gravity=gravity, f_ext=f_ext, damping=damping, friction=friction)


def forward_dynamics_derivatives(model: RobotModel, q: Any, qd: Any, tau: Any, *,
                                 gravity: Sequence[float] | None = None, f_ext: Any = None,
                                 damping: bool = False, friction: bool = False
                                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(dqdd_dq, dqdd_dqd, dqdd_dtau = M^-1)``, each (..., nv, nv), from jax (the ``autodiff``
    extra; jax loads at the first call), as Pinocchio's ``computeABADerivatives``; see
    :func:`simbench.dynamics.autodiff.forward_dynamics_derivatives`."""
    require_model(model)
    from .autodiff import forward_dynamics_derivatives as derivatives
    return derivatives(model, q, qd, tau, gravity=gravity, f_ext=f_ext, damping=damping, friction=friction)


__all__ = ["GRAVITY", "METHODS", "inverse_dynamics", "mass_matrix", "bias_forces",
           "gravity_torques", "coriolis_matrix", "forward_dynamics", "forward_kinematics",
           "link_pose", "link_jacobian", "com_jacobian", "link_com_jacobians", "center_of_mass",
           "kinetic_energy", "potential_energy", "centroidal_momentum_matrix", "centroidal_momentum",
           "link_velocity", "link_acceleration_bias", "simulate", "simulate_model", "step",
           "robot_acceleration", "Trajectory", "integrate", "difference", "normalize",
           "lagrange", "rigid_body",
           "inverse_dynamics_derivatives", "forward_dynamics_derivatives"]
