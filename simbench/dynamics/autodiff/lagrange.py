"""Adam Heins's Lagrangian formulation with automatic differentiation ("Lagrangian dynamics of a
planar mobile manipulator with manual, automatic and symbolic differentiation"), for any tree.

The post writes each link's pose ``P_i(q)`` by hand and lets ``jax.jacfwd`` do every derivative;
here the link poses come from the URDF (:func:`link_frames`) and the post's formulas are kept:

* ``J_i = dP_i/dq`` by ``jax.jacfwd``; in 3D the pose is ``(c_i, R_i)`` (centre of mass, world
  frame, and orientation), ``J_i = [dc_i/dq; (R_i^T dR_i/dq)^vee]`` (linear velocity of the COM,
  angular velocity in the link frame);
* ``M = sum_i J_i^T G_i J_i`` with ``G_i = diag(m_i 1, I_i)`` (``I_i`` about the COM, link axes;
  the post's ``diag(m, m, I)`` in the plane);
* ``Gamma[i, j, k] = dM_ij/dq_k - 1/2 dM_jk/dq_i`` from ``dM = jax.jacfwd(M)`` (layout
  ``dM[i, j, k] = dM_ij/dq_k``): the array the post's code builds (``dMdq - 0.5 * dMdq.T``), and
  ``C[i, k] = sum_j Gamma[i, j, k] q'_j`` (the post's ``dq.T @ Gamma``). The post's text prints
  ``Gamma_ijk = dM_ik/dq_j - 1/2 dM_ij/dq_k``; with that second term ``C q'`` comes out wrong (a
  test shows it), so the code's array is the one kept. It is not the symmetric Christoffel array
  of :func:`simbench.dynamics.lagrange.christoffel_symbols`; both give the same ``C q'``.
  :func:`coriolis_matrix` is the C of that symmetric array (as :mod:`simbench.dynamics` and
  Pinocchio give it: one name, one matrix), :func:`post_coriolis_matrix` the post's;
* ``g = dP/dq`` with ``P = -sum_i m_i g . c_i`` by ``jax.jacfwd``;
* ``tau = M q'' + C q' + g``.

q moves along the tangent space (:func:`.tree.retract`), so ``M`` and ``g`` hold with a floating
base too; the Christoffel array needs minimal coordinates (no quaternion in q).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...errors import SimbenchError
from ...model import RobotModel
from ._jax import jax, jnp
from .tree import Body, joint_pose, links, retract

__all__ = ["LinkTree", "link_tree", "link_frames", "mass_matrix", "christoffel_matrix",
           "coriolis_matrix", "post_coriolis_matrix", "gravity_torques", "inverse_dynamics"]


@dataclass(frozen=True, eq=False)
class LinkTree:
    """Every link (``None`` for a fixed root) with its mass, COM (link frame) and COM inertia."""

    bodies: list[Body | None]
    mass: np.ndarray
    com: np.ndarray
    inertia: np.ndarray
    nv: int
    minimal: bool          # q has no quaternion (nq == nv)
    name: str


def link_tree(model: RobotModel) -> LinkTree:
    return LinkTree(links(model), np.array(model.link_mass), np.array(model.link_com),
                    np.array(model.link_inertia), model.nv, model.nq == model.nv, model.name)


def link_frames(lt: LinkTree, q):
    """World orientation (nl, 3, 3) and COM position (nl, 3) of every link."""
    Rs, ps = [], []
    for b in lt.bodies:
        if b is None:
            Rs.append(jnp.eye(3, dtype=q.dtype))
            ps.append(jnp.zeros(3, dtype=q.dtype))
            continue
        R, p = joint_pose(b, q)
        if b.parent >= 0:
            R, p = Rs[b.parent] @ R, ps[b.parent] + Rs[b.parent] @ p
        Rs.append(R)
        ps.append(p)
    R = jnp.stack(Rs)
    return R, jnp.einsum("kij,kj->ki", R, lt.com) + jnp.stack(ps)


def _zero_tangent(q, lt: LinkTree):
    return jnp.zeros(lt.nv, dtype=q.dtype)


def mass_matrix(lt: LinkTree, q):
    """``M = sum_i J_i^T G_i J_i`` (nv, nv), the Jacobians by ``jax.jacfwd`` of the link poses."""
    def frames(dv):
        f = link_frames(lt, retract(lt.bodies, q, dv))
        return f, f

    (dR, dc), (R, _) = jax.jacfwd(frames, has_aux=True)(_zero_tangent(q, lt))
    W = jnp.einsum("kai,kajn->kijn", R, dR)                     # R^T dR/dq_n (skew)
    Jw = jnp.stack([W[:, 2, 1], W[:, 0, 2], W[:, 1, 0]], axis=1)  # (nl, 3, nv), link frame
    return (jnp.einsum("k,kan,kam->nm", lt.mass, dc, dc)
            + jnp.einsum("kan,kab,kbm->nm", Jw, lt.inertia, Jw))


def needs_minimal(lt: LinkTree, what: str) -> None:
    if not lt.minimal:
        raise SimbenchError(f"{lt.name}: {what} needs minimal coordinates (q' = v); a floating "
                            f"base or spherical joints put quaternions in q. Use "
                            f"simbench.dynamics.autodiff.inverse_dynamics (the RNEA) or "
                            f"simbench.dynamics.bias_forces (C q' + g) there")


def christoffel_matrix(lt: LinkTree, q):
    """``Gamma[i, j, k] = dM_ij/dq_k - 1/2 dM_jk/dq_i`` (nv, nv, nv) by ``jax.jacfwd(M)``."""
    needs_minimal(lt, "the Christoffel array")
    dM = jax.jacfwd(lambda dv: mass_matrix(lt, retract(lt.bodies, q, dv)))(_zero_tangent(q, lt))
    return dM - 0.5 * jnp.transpose(dM, (2, 0, 1))


def coriolis_matrix(lt: LinkTree, q, v):
    """``C[i, j] = sum_k 1/2 (dM_ij/dq_k + dM_ik/dq_j - dM_jk/dq_i) q'_k`` (nv, nv): the
    Christoffel symbols of the first kind, the C of :func:`simbench.dynamics.coriolis_matrix`
    and Pinocchio's ``computeCoriolisMatrix`` (``M' - 2 C`` skew-symmetric). Its ``C q'``
    equals the post's (:func:`post_coriolis_matrix`)."""
    needs_minimal(lt, "the Coriolis matrix")
    dM = jax.jacfwd(lambda dv: mass_matrix(lt, retract(lt.bodies, q, dv)))(_zero_tangent(q, lt))
    # dM[i, j, k] = dM_ij/dq_k
    return 0.5 * (jnp.einsum("ijk,k->ij", dM, v) + jnp.einsum("ikj,k->ij", dM, v)
                  - jnp.einsum("jki,k->ij", dM, v))


def post_coriolis_matrix(lt: LinkTree, q, v):
    """The post's ``C[i, k] = sum_j Gamma[i, j, k] q'_j`` with its array
    (:func:`christoffel_matrix`): the same ``C q'``, another C (``M' - 2 C`` not skew)."""
    return jnp.einsum("j,ijk->ik", v, christoffel_matrix(lt, q))


def potential_energy(lt: LinkTree, q, g):
    """``P = -sum_i m_i g . c_i`` (zero at the world origin)."""
    return -jnp.einsum("k,ka,a->", lt.mass, link_frames(lt, q)[1], g)


def gravity_torques(lt: LinkTree, q, g):
    """``g(q) = dP/dq`` (nv,) by ``jax.jacfwd``."""
    return jax.jacfwd(lambda dv: potential_energy(lt, retract(lt.bodies, q, dv), g))(
        _zero_tangent(q, lt))


def inverse_dynamics(lt: LinkTree, q, v, a, g):
    """``tau = M q'' + C q' + g`` (the post's ``force``)."""
    return mass_matrix(lt, q) @ a + post_coriolis_matrix(lt, q, v) @ v + gravity_torques(lt, q, g)
