"""The Lagrangian formulation, independent of the RNEA path, after Ankur Handa, "Understanding
Physics Engines: Dynamic Models of Manipulators", the "AI Robotics" lecture slides, *Dynamics*
(the Lagrangian formulation), and Adam Heins, "Lagrangian dynamics of a planar mobile
manipulator with manual, automatic and symbolic differentiation".

* ``M(q) = sum_i m_i Jv_i^T Jv_i + Jw_i^T R_i I_i R_i^T Jw_i`` from the geometric Jacobians of
  the link centres of mass (world frame);
* ``dM/dq_k`` analytically: moving joint ``k`` rotates (revolute) or translates (prismatic)
  its whole subtree, so for a point ``x`` and a direction ``u`` carried by the subtree
  ``dx/dq_k = z_k x (x - o_k)`` (or ``z_k``) and ``du/dq_k = z_k x u`` (or 0);
* Christoffel symbols of the first kind
  ``Gamma_ijk = 1/2 (dM_ij/dq_k + dM_ik/dq_j - dM_jk/dq_i)``, ``C_ij = sum_k Gamma_ijk q'_k``;
* ``g = dP/dq = -sum_i m_i Jv_i^T g_vec``;
* ``tau = M q'' + C q' + g``.

Plain numpy, batched over leading dimensions; slower than the RNEA kernels. The formulation
needs minimal coordinates (q' = v): a floating base or spherical joints (quaternions in q) are
refused with a clear error; use the RNEA there.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import SimbenchError
from ..model import RobotModel, as_joint_array
from .inputs import gravity_vector
from .kinematics import root_com_jacobians, velocity_axes_world
from .packing import kernel_model

__all__ = ["mass_matrix", "mass_matrix_derivative", "christoffel_symbols", "coriolis_matrix",
           "gravity_torques", "inverse_dynamics", "dynamics_terms"]


def _structure(model: RobotModel) -> tuple[np.ndarray, np.ndarray]:
    """``anc[i, j]``: joint j moves link i; ``before[j, k]``: joint k strictly precedes joint j
    on the path from the root."""
    if model.floating_base or model.nq != model.nv:
        raise SimbenchError(f"{model.name}: the Lagrangian path (C(q, q'), Christoffel symbols) needs "
                            f"minimal coordinates (q' = v); a floating base or spherical joints put "
                            f"quaternions in q. Use simbench.dynamics.bias_forces (C q' + g), "
                            f"inverse_dynamics or mass_matrix (the RNEA and CRBA)")
    d = kernel_model(model)
    link = d.velocity_axes[0]
    before = d.ancestors[np.asarray(model.link_parent)[link]] if model.nv else np.zeros((0, 0), bool)
    return d.ancestors, before


def _parts(model: RobotModel, q: Any) -> dict:
    _structure(model)
    q = as_joint_array(model, q, "q")
    T, J = root_com_jacobians(model, q)            # (..., nl, 4, 4), (..., nl, 6, dof), root frame
    R = T[..., :3, :3]
    A = R @ model.link_inertia @ np.swapaxes(R, -1, -2)   # world inertia about each COM
    c = np.einsum("...ij,...j->...i", R, model.link_com) + T[..., :3, 3]
    return dict(q=q, T=T, Jw=J[..., :3, :], Jv=J[..., 3:, :], A=A, c=c)


def mass_matrix(model: RobotModel, q: Any) -> np.ndarray:
    """``M = sum_i m_i Jv_i^T Jv_i + Jw_i^T (R_i I_i R_i^T) Jw_i``, shape (..., dof, dof)."""
    p = _parts(model, q)
    return _mass(model, p)


def _mass(model: RobotModel, p: dict) -> np.ndarray:
    Jv, Jw, A = p["Jv"], p["Jw"], p["A"]
    return (np.einsum("i,...iaj,...iak->...jk", model.link_mass, Jv, Jv)
            + np.einsum("...iaj,...iab,...ibk->...jk", Jw, A, Jw))


def _dM(model: RobotModel, p: dict) -> np.ndarray:
    """``dM[..., k, i, j] = dM_ij / dq_k`` (analytic)."""
    anc, before = _structure(model)                 # (nl, n), (n(j), n(k))
    z, o, prism = velocity_axes_world(model, p["T"])   # (..., n, 3), (n,)
    c = p["c"]                                       # (..., nl, 3)
    Jv, Jw, A = p["Jv"], p["Jw"], p["A"]
    nl, n = anc.shape
    # shapes below: (..., nl, j, k, 3)
    zj = z[..., None, :, None, :]
    zk = z[..., None, None, :, :]
    oj = o[..., None, :, None, :]
    ok = o[..., None, None, :, :]
    ci = c[..., :, None, None, :]
    rj = ci - oj
    rk = ci - ok
    zk_b = np.broadcast_to(zk, np.broadcast_shapes(zk.shape, zj.shape))
    zj_b = np.broadcast_to(zj, zk_b.shape)
    Bjk = before[None, :, :, None]                   # k strictly before j on j's path
    pj = prism[None, :, None, None]
    pk = prism[None, None, :, None]
    # d Jw_ij / dq_k: z_k x z_j if k before j (both revolute)
    dJw = np.where(Bjk & ~pj & ~pk, np.cross(zk_b, zj_b), 0.0)
    # d Jv_ij / dq_k
    rev_k_before = np.where(pj, np.cross(zk_b, zj_b), np.cross(zk_b, np.cross(zj_b, rj)))
    rev_k_after = np.where(pj, 0.0, np.cross(zj_b, np.cross(zk_b, rk)))
    pri_k_after = np.where(pj, 0.0, np.cross(zj_b, zk_b))
    dJv = np.where(pk, np.where(Bjk, 0.0, pri_k_after),
                   np.where(Bjk, rev_k_before, rev_k_after))
    mask = (anc[:, :, None] & anc[:, None, :])[..., None]      # both joints move link i
    dJv = dJv * mask
    dJw = dJw * mask
    # d A_i / dq_k = [z_k] A - A [z_k] (revolute k moving link i)
    zk2 = z[..., None, :, :]                          # (..., 1, k, 3)
    Ab = A[..., :, None, :, :]                        # (..., nl, 1, 3, 3)
    from ..spatial import skew

    Zk = skew(zk2)                                     # (..., 1, k, 3, 3)
    dA = (Zk @ Ab - Ab @ Zk) * (anc & ~prism[None, :])[..., None, None]   # (..., nl, k, 3, 3)
    m = model.link_mass
    # Jv, Jw: (..., nl, 3, n); dJv: (..., nl, j, k, 3)
    t1 = np.einsum("i,...ijka,...iaJ->...kjJ", m, dJv, Jv)
    t2 = np.einsum("...ijka,...iab,...ibJ->...kjJ", dJw, A, Jw)
    t3 = np.einsum("...iaj,...ikab,...ibJ->...kjJ", Jw, dA, Jw)
    return t1 + np.swapaxes(t1, -1, -2) + t2 + np.swapaxes(t2, -1, -2) + t3


def mass_matrix_derivative(model: RobotModel, q: Any) -> np.ndarray:
    """``dM/dq`` as (..., k, i, j) = ``d M_ij / d q_k``, computed analytically."""
    return _dM(model, _parts(model, q))


def christoffel_symbols(model: RobotModel, q: Any) -> np.ndarray:
    """``Gamma[..., i, j, k] = 1/2 (dM_ij/dq_k + dM_ik/dq_j - dM_jk/dq_i)`` (first kind)."""
    dM = mass_matrix_derivative(model, q)
    return _gamma(dM)


def _gamma(dM: np.ndarray) -> np.ndarray:
    # dM[k, i, j] = dM_ij/dq_k
    a = np.moveaxis(dM, -3, -1)                      # [i, j, k] = dM_ij/dq_k
    b = np.moveaxis(dM, -3, -2)                      # [i, j, k] = dM_ik/dq_j
    c = dM                                           # [i, j, k] = dM_jk/dq_i
    return 0.5 * (a + b - c)


def coriolis_matrix(model: RobotModel, q: Any, qd: Any) -> np.ndarray:
    """``C_ij = sum_k Gamma_ijk q'_k``: ``C q'`` is the velocity product term and
    ``M' - 2C`` is skew-symmetric. Shape (..., dof, dof)."""
    qd = as_joint_array(model, qd, "qd", "v")
    return np.einsum("...ijk,...k->...ij", christoffel_symbols(model, q), qd)


def _grav(model: RobotModel, p: dict, gravity: Sequence[float]) -> np.ndarray:
    g = np.array(gravity_vector(model, gravity))
    return -np.einsum("i,...iaj,a->...j", model.link_mass, p["Jv"], g)


def gravity_torques(model: RobotModel, q: Any, *, gravity: Sequence[float] | None = None) -> np.ndarray:
    """``g(q) = dP/dq = -sum_i m_i Jv_i^T g_vec``, shape (..., dof)."""
    return _grav(model, _parts(model, q), gravity)


def dynamics_terms(model: RobotModel, q: Any, qd: Any, *, gravity: Sequence[float] | None = None
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(M, C, g)`` at ``(q, q')`` in one pass."""
    p = _parts(model, q)
    qd = as_joint_array(model, qd, "qd")
    M = _mass(model, p)
    C = np.einsum("...ijk,...k->...ij", _gamma(_dM(model, p)), qd)
    return M, C, _grav(model, p, gravity)


def inverse_dynamics(model: RobotModel, q: Any, qd: Any, qdd: Any, *,
                     gravity: Sequence[float] | None = None) -> np.ndarray:
    """``tau = M q'' + C q' + g`` by the Lagrangian path, shape (..., dof)."""
    qd = as_joint_array(model, qd, "qd")
    qdd = as_joint_array(model, qdd, "qdd")
    M, C, g = dynamics_terms(model, q, qd, gravity=gravity)
    return (np.einsum("...ij,...j->...i", M, qdd) + np.einsum("...ij,...j->...i", C, qd) + g)
