"""simbench's own rigid-body dynamics (no PyBullet): RNEA, CRBA, forward dynamics, the
Lagrangian formulation, integrators and a free rigid body on SE(3).

Every function takes a :class:`simbench.model.RobotModel` and numpy arrays whose leading
dimensions broadcast; joint vectors are in ``model.joint_names`` order. Spatial vectors are
[angular; linear]; Jacobians are world-aligned with rows [angular; linear].

Modules: :mod:`.rnea` (inverse dynamics), :mod:`.forward` (CRBA, forward dynamics, ``simulate``),
:mod:`.kinematics` (poses, Jacobians, energies), :mod:`.lagrange` (the independent Lagrangian
formulation), :mod:`.rigid_body` (a free body on SE(3)), :mod:`.kernels` (the numba loops).
"""
from .forward import METHODS, forward_dynamics, mass_matrix, simulate
from .kinematics import (center_of_mass, com_jacobian, forward_kinematics, kinetic_energy,
                         link_com_jacobians, link_jacobian, potential_energy)
from ..model import GRAVITY
from .rnea import bias_forces, gravity_torques, inverse_dynamics
from . import lagrange, rigid_body  # noqa: E402  (submodules, for simbench.dynamics.lagrange...)


def coriolis_matrix(model, q, qd):
    """``C(q, q')`` from the Christoffel symbols of ``M`` (so ``M' - 2C`` is skew-symmetric and
    ``C q' + g = bias_forces``); see :func:`simbench.dynamics.lagrange.coriolis_matrix`."""
    from .lagrange import coriolis_matrix as _c

    return _c(model, q, qd)


__all__ = ["GRAVITY", "METHODS", "inverse_dynamics", "mass_matrix", "bias_forces",
           "gravity_torques", "coriolis_matrix", "forward_dynamics", "forward_kinematics",
           "link_jacobian", "com_jacobian", "link_com_jacobians", "center_of_mass",
           "kinetic_energy", "potential_energy", "simulate", "lagrange", "rigid_body"]
