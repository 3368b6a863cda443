"""Forward kinematics, geometric Jacobians, energies.

Jacobians are geometric and world-aligned with rows ``[angular; linear]`` (the spatial ordering
of :mod:`simbench.model`): ``[w; v_p] = J(q) q'`` where ``w`` is the link's angular velocity
and ``v_p`` the velocity of the reference point (the link origin, or a given point fixed in the
link), both in world coordinates. (Pinocchio's ``LOCAL_WORLD_ALIGNED`` Jacobian is the same
matrix with the two 3-row blocks swapped: ``[linear; angular]``.)
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import ShapeError, lookup
from ..model import RobotModel, as_joint_array
from . import kernels as K
from .rnea import gravity_vector, joint_arrays, prepare

__all__ = ["forward_kinematics", "link_jacobian", "com_jacobian", "link_com_jacobians",
           "center_of_mass", "kinetic_energy", "potential_energy"]


def forward_kinematics(model: RobotModel, q: Any) -> np.ndarray:
    """World pose of every link, shape (..., nl, 4, 4), link order ``model.link_names``;
    the root link is at the identity."""
    d = prepare(model)
    batch, (Q,) = joint_arrays(model, (q, "q"))
    T = K.fk_batch(d.full_idata, d.full_fdata, Q)
    return T.reshape(batch + (d.nl, 4, 4))


def _structure(model: RobotModel) -> dict:
    """Ancestor tables: ``anc[i, j]`` joint j (q index) moves link i; ``jlink[j]`` child link of
    the joint with q index j; ``prism[j]``; ``before[j, k]``: joint k strictly precedes joint j
    on the path from the root."""
    s = model._cache.get("_kin")
    if s is not None:
        return s
    d = prepare(model)
    nl, dof = d.nl, d.dof
    jlink = np.zeros(dof, dtype=int)
    idata, fdata = d.full_idata, d.full_fdata
    for k in range(1, nl):
        if idata[k, 2] >= 0:
            jlink[idata[k, 2]] = k
    anc = np.zeros((nl, dof), dtype=bool)
    for i in range(nl):
        k = i
        while k > 0:
            if idata[k, 2] >= 0:
                anc[i, idata[k, 2]] = True
            k = idata[k, 0]
    before = np.zeros((dof, dof), dtype=bool)
    for j in range(dof):
        before[j] = anc[idata[jlink[j], 0]]
    prism = idata[jlink, 1] == K.PRISMATIC
    s = dict(jlink=jlink, anc=anc, before=before, prism=prism,
             axis=np.array(fdata[jlink, K.C_AX:K.C_AX + 3]))
    model._cache["_kin"] = s
    return s


def _joint_world(model: RobotModel, T: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """World axis z_j and point o_j of every movable joint: (..., dof, 3) each."""
    s = _structure(model)
    Tj = T[..., s["jlink"], :, :]
    z = np.einsum("...ij,...j->...i", Tj[..., :3, :3], s["axis"])
    return z, Tj[..., :3, 3]


def _jacobian_at(model: RobotModel, T: np.ndarray, links: np.ndarray, points: np.ndarray
                 ) -> np.ndarray:
    """Jacobians (..., len(links), 6, dof) of world points ``points`` (..., L, 3) fixed to links."""
    s = _structure(model)
    z, o = _joint_world(model, T)                               # (..., dof, 3)
    mask = s["anc"][links][..., None]                           # (L, dof, 1)
    r = points[..., :, None, :] - o[..., None, :, :]           # (..., L, dof, 3)
    zz = np.broadcast_to(z[..., None, :, :], r.shape)
    prism = s["prism"][:, None]
    lin = np.where(prism, zz, np.cross(zz, r)) * mask
    ang = np.where(prism, 0.0, zz) * mask
    return np.concatenate([np.swapaxes(ang, -1, -2), np.swapaxes(lin, -1, -2)], axis=-2)


def link_jacobian(model: RobotModel, q: Any, link: str, point: Sequence[float] | None = None
                  ) -> np.ndarray:
    """Geometric Jacobian (..., 6, dof) of ``link``, world-aligned, rows [angular; linear].

    The linear rows give the world velocity of the link origin, or of ``point`` (link frame)
    when given.
    """
    d = prepare(model)
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
        p = np.einsum("...ij,...j->...i", Tk[..., :3, :3], pt) + Tk[..., :3, 3]
    return _jacobian_at(model, T, np.array([k]), p[..., None, :])[..., 0, :, :]


def link_com_jacobians(model: RobotModel, q: Any) -> tuple[np.ndarray, np.ndarray]:
    """World poses (..., nl, 4, 4) and the Jacobians (..., nl, 6, dof) of every link's COM."""
    T = forward_kinematics(model, q)
    c = np.einsum("...ij,...j->...i", T[..., :3, :3], model.link_com) + T[..., :3, 3]
    return T, _jacobian_at(model, T, np.arange(model.nlinks), c)


def center_of_mass(model: RobotModel, q: Any) -> np.ndarray:
    """World position of the robot's centre of mass, (..., 3)."""
    T = forward_kinematics(model, q)
    c = np.einsum("...ij,...j->...i", T[..., :3, :3], model.link_com) + T[..., :3, 3]
    return np.einsum("i,...ij->...j", model.link_mass, c) / model.total_mass


def com_jacobian(model: RobotModel, q: Any) -> np.ndarray:
    """Jacobian (..., 3, dof) of the robot's centre of mass: ``sum_i m_i Jv_i / sum_i m_i``."""
    _, J = link_com_jacobians(model, q)
    return np.einsum("i,...ijk->...jk", model.link_mass, J[..., 3:, :]) / model.total_mass


def kinetic_energy(model: RobotModel, q: Any, qd: Any) -> np.ndarray:
    """``K = 1/2 q'^T M(q) q'``, shape (...)."""
    from .forward import mass_matrix

    qd = as_joint_array(model, qd, "qd")
    M = mass_matrix(model, q)
    return 0.5 * np.einsum("...i,...ij,...j->...", qd, M, qd)


def potential_energy(model: RobotModel, q: Any, *, gravity: Sequence[float] | None = None
                     ) -> np.ndarray:
    """``P = -sum_i m_i g . c_i(q)`` (zero at the world origin), shape (...)."""
    g = np.array(gravity_vector(model, gravity))
    T = forward_kinematics(model, q)
    c = np.einsum("...ij,...j->...i", T[..., :3, :3], model.link_com) + T[..., :3, 3]
    return -np.einsum("i,...ij,j->...", model.link_mass, c, g)
