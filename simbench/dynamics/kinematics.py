"""Forward kinematics, geometric Jacobians, energies.

Jacobians are geometric and world-aligned with rows ``[angular; linear]`` (the spatial ordering
of :mod:`simbench.model`): ``[w; v_p] = J(q) v`` where ``w`` is the link's angular velocity and
``v_p`` the velocity of the reference point (the link origin, or a given point fixed in the
link), both in world coordinates; ``v`` is the velocity vector (..., nv). (Pinocchio's
``LOCAL_WORLD_ALIGNED`` Jacobian is the same matrix with the two 3-row blocks swapped:
``[linear; angular]``.)

Each entry i of v moves the links after it about (or along) a world axis ``z_i`` through a world
point ``o_i``: a revolute joint's axis, a spherical joint's or the base's angular velocity
components (the child's axes), a prismatic joint's axis or the base's linear velocity
components. The Jacobian column of a point p is then ``(z_i, z_i x (p - o_i))`` or ``(0, z_i)``.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import ShapeError, lookup
from ..model import RobotModel, as_joint_array
from . import kernels as K
from .inputs import gravity_vector, joint_arrays
from .packing import kernel_model

__all__ = ["forward_kinematics", "link_jacobian", "com_jacobian", "link_com_jacobians",
           "center_of_mass", "kinetic_energy", "potential_energy", "velocity_axes_world"]


def _rotate(R: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``R v`` for stacks of rotations R (..., 3, 3) and vectors v (..., 3), broadcast: three
    multiply-adds over R's columns (``np.einsum("...ij,...j->...i")`` measured about 10x
    slower on the (10000, 7, 3, 3) stacks of a batched Jacobian)."""
    return R[..., 0] * v[..., 0:1] + R[..., 1] * v[..., 1:2] + R[..., 2] * v[..., 2:3]


def forward_kinematics(model: RobotModel, q: Any) -> np.ndarray:
    """World pose of every link, shape (..., nl, 4, 4), link order ``model.link_names``; a fixed
    root is at the identity, a floating root at the base pose of q."""
    d = kernel_model(model)
    batch, (Q,) = joint_arrays(model, (q, "q", "q"))
    T = K.fk_rows(d.links.packed, Q)[:, d.link_offset:]
    return T.reshape(batch + (d.nl, 4, 4))


def velocity_axes_world(model: RobotModel, T: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """World axis z (..., nv, 3), point o (..., nv, 3) and the translation flags (nv,) of every
    entry of v (see the module docstring), from link poses T (..., nl, 4, 4)."""
    link, axis, prism = kernel_model(model).velocity_axes
    Tj = T[..., link, :, :]
    z = _rotate(Tj[..., :3, :3], axis)
    return z, Tj[..., :3, 3], prism


def _jacobian_at(model: RobotModel, T: np.ndarray, links: np.ndarray, points: np.ndarray
                 ) -> np.ndarray:
    """Jacobians (..., len(links), 6, nv) of world points ``points`` (..., L, 3) fixed to links."""
    z, o, prism = velocity_axes_world(model, T)                 # (..., nv, 3)
    mask = kernel_model(model).ancestors[links][..., None]      # (L, nv, 1)
    r = points[..., :, None, :] - o[..., None, :, :]           # (..., L, nv, 3)
    zz = np.broadcast_to(z[..., None, :, :], r.shape)
    p = prism[:, None]
    lin = np.where(p, zz, np.cross(zz, r)) * mask
    ang = np.where(p, 0.0, zz) * mask
    return np.concatenate([np.swapaxes(ang, -1, -2), np.swapaxes(lin, -1, -2)], axis=-2)


def link_jacobian(model: RobotModel, q: Any, link: str, point: Sequence[float] | None = None
                  ) -> np.ndarray:
    """Geometric Jacobian (..., 6, nv) of ``link``, world-aligned, rows [angular; linear].

    The linear rows give the world velocity of the link origin, or of ``point`` (link frame)
    when given.
    """
    d = kernel_model(model)
    k = lookup(d.link_index, link, "link", model.name)
    T = forward_kinematics(model, q)
    Tk = T[..., k, :, :]
    if point is None:
        p = Tk[..., :3, 3]
    else:
        pt = np.asarray(point, dtype=float)
        if pt.shape[-1:] != (3,):
            raise ShapeError(f"point has shape {pt.shape}; expected (..., 3) in the frame of "
                             f"link {link!r}")
        p = _rotate(Tk[..., :3, :3], pt) + Tk[..., :3, 3]
    return _jacobian_at(model, T, np.array([k]), p[..., None, :])[..., 0, :, :]


def _coms(model: RobotModel, T: np.ndarray) -> np.ndarray:
    return _rotate(T[..., :3, :3], model.link_com) + T[..., :3, 3]


def link_com_jacobians(model: RobotModel, q: Any) -> tuple[np.ndarray, np.ndarray]:
    """World poses (..., nl, 4, 4) and the Jacobians (..., nl, 6, nv) of every link's COM."""
    T = forward_kinematics(model, q)
    return T, _jacobian_at(model, T, np.arange(model.nlinks), _coms(model, T))


def center_of_mass(model: RobotModel, q: Any) -> np.ndarray:
    """World position of the robot's centre of mass, (..., 3)."""
    c = _coms(model, forward_kinematics(model, q))
    return np.einsum("i,...ij->...j", model.link_mass, c) / model.total_mass


def com_jacobian(model: RobotModel, q: Any) -> np.ndarray:
    """Jacobian (..., 3, nv) of the robot's centre of mass: ``sum_i m_i Jv_i / sum_i m_i``."""
    _, J = link_com_jacobians(model, q)
    return np.einsum("i,...ijk->...jk", model.link_mass, J[..., 3:, :]) / model.total_mass


def kinetic_energy(model: RobotModel, q: Any, qd: Any) -> np.ndarray:
    """``K = 1/2 v^T M(q) v``, shape (...)."""
    from .crba import mass_matrix

    qd = as_joint_array(model, qd, "qd", "v")
    M = mass_matrix(model, q)
    return 0.5 * np.einsum("...i,...ij,...j->...", qd, M, qd)


def potential_energy(model: RobotModel, q: Any, *, gravity: Sequence[float] | None = None
                     ) -> np.ndarray:
    """``P = -sum_i m_i g . c_i(q)`` (zero at the world origin), shape (...)."""
    g = np.array(gravity_vector(model, gravity))
    c = _coms(model, forward_kinematics(model, q))
    return -np.einsum("i,...ij,j->...", model.link_mass, c, g)
