"""Newton-Euler inverse dynamics in jax, and what jax derives from it: the mass matrix, forward
dynamics and the derivatives of both. Pure functions of one configuration and of the padded
arrays ``P`` of :mod:`.packed` (jit, vmap and jacfwd apply).

The recursive Newton-Euler algorithm (Featherstone, *Rigid Body Dynamics Algorithms*, table 5.1
and section 2.16 on spatial coordinates; the "AI Robotics" lecture slides, *Dynamics*) with
every spatial vector in the world frame (about its origin), where the two recursions become sums
over the tree, that is, products with the ancestor matrix ``anc`` (a few array operations for the
whole tree instead of a loop over bodies, which is what XLA compiles and runs fast):

* link poses ``T_k = T_parent X_k(q)`` by pointer jumping (log2(depth) vectorised steps);
* joint axes in the world ``s_k = Ad(T_k) S_k``; velocities ``V_k = sum_{j <= k} s_j q'_j``;
  accelerations ``A_k = sum_{j <= k} (s_j q''_j + V_j x s_j q'_j) - (0, g)``;
* body forces ``F_k = I_k A_k + V_k x* I_k V_k`` (``I_k`` the world-frame spatial inertia);
* joint forces ``tau_k = s_k^T sum_{j >= k} F_j``.

Derivatives (the quantities of Pinocchio's ``computeRNEADerivatives`` /
``computeABADerivatives``): ``d tau / d(q, v, a)`` by forward-mode ``jax.jacfwd`` through the
world-frame dynamics, with q moved in the tangent space by :func:`moved` (a tangent
displacement moves every body as a velocity would, so the link poses need no derivative);
``d tau / d a = M``. Forward dynamics ``a = M^-1 (tau - b)`` (Cholesky) and its derivatives by
the implicit function theorem, ``d a / d(q, v) = -M^-1 d tau / d(q, v)`` at ``(q, v, a)``,
``d a / d tau = M^-1``, as Pinocchio does (Carpentier & Mansard, "Analytical Derivatives of
Rigid Body Dynamics Algorithms", RSS 2018).
"""
from __future__ import annotations

from ._jax import jax, jnp, jsl
from .tree import quat_rotation

__all__ = ["rnea", "kinematics", "moved", "dynamics", "mass_and_bias", "forward_dynamics",
           "inverse_dynamics_derivatives", "forward_dynamics_derivatives",
           "inverse_dynamics_derivatives_wrenched", "forward_dynamics_derivatives_wrenched",
           "inverse_dynamics_wrenched", "forward_dynamics_wrenched"]


def _mv(A, x):
    """Batched matrix-vector product (..., i, j) x (..., j)."""
    return jnp.einsum("...ij,...j->...i", A, x)


def _local_poses(P, q):
    """``(R, p)`` (nb, 3, 3), (nb, 3) of each body in its parent's frame."""
    jq = jnp.einsum("bjq,q->bj", P["Gq"], q) + P["jq0"]
    s = jq[:, 7]
    R = P["R0"] @ quat_rotation(*jq[:, 3:7].T) + (P["rev"] * jnp.sin(s))[:, None, None] * P["RK"] \
        + (P["rev"] * (1.0 - jnp.cos(s)))[:, None, None] * P["RKK"]
    return R, P["p0"] + _mv(P["R0"], jq[:, :3]) + (P["pri"] * s)[:, None] * P["D"]


def _world_poses(P, R, p):
    """World poses from the local ones by pointer jumping (``P["up"]``)."""
    eye = jnp.eye(3, dtype=R.dtype)
    for i in range(P["up"].shape[0]):
        Ru = jnp.einsum("kj,jab->kab", P["up"][i], R) + P["up_world"][i][:, None, None] * eye
        R, p = Ru @ R, jnp.einsum("kj,ja->ka", P["up"][i], p) + _mv(Ru, p)
    return R, p


def _cross_motion(V, U):
    """Spatial motion cross product ``(w, v) x (u, t) = (w x u, w x t + v x u)``, (..., 6)."""
    w, v, u, t = V[..., :3], V[..., 3:], U[..., :3], U[..., 3:]
    return jnp.concatenate([jnp.cross(w, u), jnp.cross(w, t) + jnp.cross(v, u)], axis=-1)


def _skew(x):
    z = jnp.zeros_like(x[..., 0])
    return jnp.stack([jnp.stack([z, -x[..., 2], x[..., 1]], -1),
                      jnp.stack([x[..., 2], z, -x[..., 0]], -1),
                      jnp.stack([-x[..., 1], x[..., 0], z], -1)], -2)


def kinematics(P, q):
    """What depends on q only: the world axes ``s`` (nv, 6) of the entries of v, and each body's
    world-frame inertia about the origin, ``(I (nb, 3, 3), h (nb, 3))`` with mass ``P["m"]``:
    ``h_w = m p + R h``, ``I_w = R Io R^T - m [p][p] - [p][R h] - [R h][p]``."""
    R, p = _world_poses(P, *_local_poses(P, q))
    Rb, pb, S = jnp.einsum("ik,kab->iab", P["Vb"], R), P["Vb"] @ p, P["Sv"]
    w = _mv(Rb, S[:, :3])
    s = jnp.concatenate([w, _mv(Rb, S[:, 3:]) + jnp.cross(pb, w)], axis=-1)
    Rh = _mv(R, P["h"])
    P_, H = _skew(p), _skew(Rh)
    Iw = R @ P["Io"] @ jnp.swapaxes(R, 1, 2) - P["m"][:, None, None] * (P_ @ P_) - P_ @ H - H @ P_
    return s, Iw, P["m"][:, None] * p + Rh


def moved(P, kin, dq):
    """:func:`kinematics` after the tangent displacement dq, to first order (exact derivative at
    dq = 0): each body moves by the world twist ``xi = AB (s dq)`` (the velocity formula: the
    tangent space is the space of velocities), so ``s += xi_b x s``, ``h += w x h + m u``,
    ``I += [w] I - I [w] - [u][h] - [h][u]`` for ``xi = (w, u)``. No derivative through the link
    poses is needed (Pinocchio's derivatives rest on the same fact)."""
    s, Iw, hw = kin
    xi = P["AB"] @ (s * dq[:, None])
    w, u = xi[:, :3], xi[:, 3:]
    W, U, H = _skew(w), _skew(u), _skew(hw)
    return (s + _cross_motion(P["Vb"] @ xi, s), Iw + W @ Iw - Iw @ W - U @ H - H @ U,
            hw + jnp.cross(w, hw) + P["m"][:, None] * u)


def dynamics(P, kin, v, a, g, Fext=None):
    """Joint forces (nv,) from :func:`kinematics`: ``V = AB (s v)``,
    ``A = AB (s a + V_b x s v) - (0, g)``, ``F = I A + V x* I V - F_ext``, ``tau = s . (AB^T F)``
    (``Fext`` (nb, 6): external wrenches on the bodies, world frame about the origin)."""
    s, Iw, hw = kin
    m = P["m"][:, None]

    def inertia_times(X):
        w, t = X[:, :3], X[:, 3:]
        return jnp.concatenate([_mv(Iw, w) + jnp.cross(hw, t), m * t - jnp.cross(hw, w)], axis=-1)

    sv = s * v[:, None]
    V = P["AB"] @ sv
    A = P["AB"] @ (s * a[:, None] + _cross_motion(P["Vb"] @ V, sv)) \
        - jnp.concatenate([jnp.zeros(3, dtype=g.dtype), g])
    IV = inertia_times(V)
    Vw, Vv = V[:, :3], V[:, 3:]
    F = inertia_times(A) + jnp.concatenate(
        [jnp.cross(Vw, IV[:, :3]) + jnp.cross(Vv, IV[:, 3:]), jnp.cross(Vw, IV[:, 3:])], axis=-1)
    if Fext is not None:
        F = F - Fext
    return jnp.sum(s * (P["AB"].T @ F), axis=-1)


def rnea(P, q, v, a, g):
    """``tau = M(q) a + C(q, v) v + g(q)`` (nv,); q (nq,), v, a (nv,) padded as ``P``; gravity
    g (3,) in the root frame."""
    return dynamics(P, kinematics(P, q), v, a, g)


def mass_and_bias(P, kin, v, g):
    """``(M, b)`` from :func:`kinematics`: the mass matrix ``d tau / d a`` (1 on the padding
    diagonal) and the bias forces ``tau(q, v, 0)``."""
    def tau(a):
        t = dynamics(P, kin, v, a, g)
        return t, t

    M, b = jax.jacfwd(tau, has_aux=True)(jnp.zeros_like(v))
    return M + jnp.diag(P["vpad"]), b


def forward_dynamics(P, q, v, tau, g):
    """``a = M^-1 (tau - b)`` by Cholesky (nan where M is not positive definite)."""
    M, b = mass_and_bias(P, kinematics(P, q), v, g)
    return jsl.cho_solve(jsl.cho_factor(M), tau - b)


def _dq_dv(P, kin, v, a, g):
    """``(d tau/dq, d tau/dv)`` at (q, v, a): two forward-mode passes, the first through
    :func:`moved` and :func:`dynamics`, the second through :func:`dynamics` alone (separate
    passes skip the work whose tangents are zero)."""
    z = jnp.zeros_like(v)
    return (jax.jacfwd(lambda d: dynamics(P, moved(P, kin, d), v, a, g))(z),
            jax.jacfwd(lambda x: dynamics(P, kin, x, a, g))(v))


# ---------------------------------------------------------------------- external wrenches
# A wrench [n, f] (world frame) on a link, about the link's origin, acts on the link's body as
# (n + p x f, f) about the world origin, p the link origin in the world. The wrench itself is
# fixed in the world; p moves with the body when q moves (the point's velocity u + w x p under
# the body's twist (w, u)), which is what d tau / dq of the wrench is made of. ``E``: ``Wb``
# (nw, nb) 0/1, the body of each wrench's link; ``Wo`` (nw, 3), the link origin in that body's
# frame; ``w`` (nw, 6), the wrenches.
def _points(P, q, E):
    """World positions (nw, 3) of the wrenched links' origins."""
    R, p = _world_poses(P, *_local_poses(P, q))
    return E["Wb"] @ p + _mv(jnp.einsum("wb,bij->wij", E["Wb"], R), E["Wo"])


def _moved_points(P, kin, pw, E, dq):
    """:func:`_points` after the tangent displacement dq, to first order (as :func:`moved`)."""
    xi = E["Wb"] @ (P["AB"] @ (kin[0] * dq[:, None]))
    return pw + jnp.cross(xi[:, :3], pw) + xi[:, 3:]


def _wrenches(pw, E, w):
    """The wrenches as body forces (nb, 6) about the world origin."""
    n, f = w[:, :3], w[:, 3:]
    return E["Wb"].T @ jnp.concatenate([n + jnp.cross(pw, f), f], axis=-1)


def _dq_dv_wrenched(P, kin, pw, v, a, g, E, w):
    z = jnp.zeros_like(v)
    Fe = _wrenches(pw, E, w)
    return (jax.jacfwd(lambda d: dynamics(P, moved(P, kin, d), v, a, g,
                                          _wrenches(_moved_points(P, kin, pw, E, d), E, w)))(z),
            jax.jacfwd(lambda x: dynamics(P, kin, x, a, g, Fe))(v))


def inverse_dynamics_wrenched(P, q, v, a, g, E, w):
    """:func:`rnea` with external wrenches ``w`` on the links of ``E``."""
    return dynamics(P, kinematics(P, q), v, a, g, _wrenches(_points(P, q, E), E, w))


def forward_dynamics_wrenched(P, q, v, tau, g, E, w):
    """:func:`forward_dynamics` with external wrenches: ``a = M^-1 (tau - b + J^T w)``."""
    kin, pw = kinematics(P, q), _points(P, q, E)
    M, b = mass_and_bias(P, kin, v, g)
    b = b - jnp.sum(kin[0] * (P["AB"].T @ _wrenches(pw, E, w)), axis=-1)
    return jsl.cho_solve(jsl.cho_factor(M), tau - b)


def inverse_dynamics_derivatives_wrenched(P, q, v, a, g, E, w):
    """:func:`inverse_dynamics_derivatives` with external wrenches ``w`` on the links of ``E``."""
    kin, pw = kinematics(P, q), _points(P, q, E)
    J_q, J_v = _dq_dv_wrenched(P, kin, pw, v, a, g, E, w)
    return J_q, J_v, jax.jacfwd(lambda x: dynamics(P, kin, v, x, g))(a)


def forward_dynamics_derivatives_wrenched(P, q, v, tau, g, E, w):
    """:func:`forward_dynamics_derivatives` with external wrenches ``w`` on the links of ``E``:
    ``a = M^-1 (tau - b + J^T w)``."""
    kin, pw = kinematics(P, q), _points(P, q, E)
    M, b = mass_and_bias(P, kin, v, g)
    b = b - jnp.sum(kin[0] * (P["AB"].T @ _wrenches(pw, E, w)), axis=-1)
    chol = jsl.cho_factor(M)
    a = jsl.cho_solve(chol, tau - b)
    J_q, J_v = _dq_dv_wrenched(P, kin, pw, v, a, g, E, w)
    Minv = jsl.cho_solve(chol, jnp.eye(v.shape[0], dtype=v.dtype))
    return -Minv @ J_q, -Minv @ J_v, Minv


def inverse_dynamics_derivatives(P, q, v, a, g):
    """``(d tau/dq, d tau/dv, d tau/da = M)``, each (nv, nv); dq in the tangent space."""
    kin = kinematics(P, q)
    return (*_dq_dv(P, kin, v, a, g), jax.jacfwd(lambda x: dynamics(P, kin, v, x, g))(a))


def forward_dynamics_derivatives(P, q, v, tau, g):
    """``(d a/dq, d a/dv, d a/dtau = M^-1)``, each (nv, nv), at ``a = FD(q, v, tau)``."""
    kin = kinematics(P, q)
    M, b = mass_and_bias(P, kin, v, g)
    chol = jsl.cho_factor(M)
    a = jsl.cho_solve(chol, tau - b)
    J_q, J_v = _dq_dv(P, kin, v, a, g)
    Minv = jsl.cho_solve(chol, jnp.eye(v.shape[0], dtype=v.dtype))
    return -Minv @ J_q, -Minv @ J_v, Minv
