"""Recursive Newton-Euler algorithm: ``tau = M(q) q'' + C(q, q') q' + g(q) - sum_k J_k^T F_ext,k``.

Featherstone, *Rigid Body Dynamics Algorithms*, table 5.1; the "AI Robotics" lecture slides,
*Dynamics* (Newton-Euler in the notation of Lynch & Park, *Modern Robotics*). Gravity enters as a
fictitious acceleration ``-g`` of body 0.

The two passes are written once, on scalars, as Pinocchio names them:

* :func:`rnea_forward_step` (body k, parents first): ``v_k = X v_p + S q'``,
  ``a_k = X a_p + S q'' + (X v_p) x S q'``, ``f_k = I_k a_k + v_k x* I_k v_k`` (minus the
  external wrench, in the body frame);
* :func:`rnea_backward_step` (children first): ``tau_k = S^T f_k``
  (:func:`~.joints.joint_force`), ``f_p += X^T f_k``.

The drivers are loops over these steps: :func:`rnea_row` (one configuration), :func:`rnea_block` (``BS`` configurations at once, configuration index innermost) and
:func:`rnea_span` (a range of rows block by block, without the GIL, run on threads by
:mod:`.threads`).
"""
from __future__ import annotations

import numpy as np

from ._jit import entry, jit, step
from .blocks import (NP, NT, T_A, T_V, add_into6, add_rows, at, copy_rows, gather_joint, ld6b, ld9b,
                     ld_pose_b, load6, load_pose, row, st6b, store6, store_pose, transpose_rows)
from .joints import (body_inertia, joint_axis, joint_constants, joint_force, joint_motion,
                     joint_pose, joint_rates, joint_values, motion_subspace)
from .layout import BS, C_M, FEXT, FIXED, JOINT_NV, NW, RO2, TREE, W_A, W_F, W_R, W_RW, W_V
from .tree import U, body, frow, sizes, wrow
from .spatial import add6, body_force, dot6, force_to_parent, motion_cross, motion_to_child, scale6, sub6


# ------------------------------------------------------------------ the two steps
@step
def rnea_forward_step(X, Vp, Ap, vJ, aJ, I):
    """Twist, acceleration and Newton-Euler force of a body from its parent's twist Vp and
    acceleration Ap, its pose X in the parent, the joint's motion vJ = S q', aJ = S q'' (child
    frame) and its inertia I."""
    Vx = motion_to_child(X, Vp)
    V = add6(Vx, vJ)
    A = add6(add6(motion_to_child(X, Ap), aJ), motion_cross(Vx, vJ))
    return V, A, body_force(I, V, A)


@step
def rnea_backward_step(X, F):
    """The body's force F in its parent's frame, added to the parent's force."""
    return force_to_parent(X, F)


@step
def external_wrench(Rw, m0, m1, m2, f0, f1, f2):
    """A wrench given in the world frame (about the body origin) in the body frame: Rw^T (m, f)."""
    return (Rw[0] * m0 + Rw[3] * m1 + Rw[6] * m2, Rw[1] * m0 + Rw[4] * m1 + Rw[7] * m2,
            Rw[2] * m0 + Rw[5] * m1 + Rw[8] * m2, Rw[0] * f0 + Rw[3] * f1 + Rw[6] * f2,
            Rw[1] * f0 + Rw[4] * f1 + Rw[7] * f2, Rw[2] * f0 + Rw[5] * f1 + Rw[8] * f2)


@step
def world_rotation(Rp, R):
    """Rw_k = Rw_p R (row-major 9-tuples)."""
    return (Rp[0] * R[0] + Rp[1] * R[3] + Rp[2] * R[6], Rp[0] * R[1] + Rp[1] * R[4] + Rp[2] * R[7],
            Rp[0] * R[2] + Rp[1] * R[5] + Rp[2] * R[8], Rp[3] * R[0] + Rp[4] * R[3] + Rp[5] * R[6],
            Rp[3] * R[1] + Rp[4] * R[4] + Rp[5] * R[7], Rp[3] * R[2] + Rp[4] * R[5] + Rp[5] * R[8],
            Rp[6] * R[0] + Rp[7] * R[3] + Rp[8] * R[6], Rp[6] * R[1] + Rp[7] * R[4] + Rp[8] * R[7],
            Rp[6] * R[2] + Rp[7] * R[5] + Rp[8] * R[8])


# ------------------------------------------------------------------ one configuration
@jit
def rnea_row(P, q, qd, qdd, acc, gx, gy, gz, fext, has_fext, tau):
    """RNEA of tree P (:mod:`.tree`) for one configuration q (nq,), qd, acc * qdd (nv,) into tau
    (nv,), with P's scratch. ``acc``: 1, or 0 for the bias forces (q'' = 0; qdd is then any
    finite array). ``fext`` (nb, 6): wrench [torque, force] on each body, world frame, about the
    body origin."""
    nb, nq, nv = sizes(P)
    o0 = wrow(nb, 0, 0)
    for i in range(6):
        P[o0 + U(W_V + i)] = 0.0
        P[o0 + U(W_A + i)] = 0.0
    P[o0 + U(W_A + 3)] = -gx
    P[o0 + U(W_A + 4)] = -gy
    P[o0 + U(W_A + 5)] = -gz
    if has_fext:
        for i in range(9):
            P[o0 + U(W_RW + i)] = 1.0 if i % 4 == 0 else 0.0
    # forward pass
    for k in range(1, nb):
        p, jt, iq, iv = body(P, nb, k)
        f = frow(k)
        a = joint_axis(P, f)
        X = joint_pose(jt, joint_constants(P, f), joint_values(jt, q, iq))
        op = wrow(nb, p, 0)
        V, A, F = rnea_forward_step(X, load6(P, op + U(W_V)), load6(P, op + U(W_A)),
                                    joint_motion(jt, a, joint_rates(jt, qd, iv)),
                                    joint_motion(jt, a, scale6(acc, joint_rates(jt, qdd, iv))),
                                    body_inertia(P, f + U(C_M)))
        ok = wrow(nb, k, 0)
        if has_fext:
            o9 = op + U(W_RW)
            Rw = world_rotation((P[o9], P[o9 + U(1)], P[o9 + U(2)], P[o9 + U(3)], P[o9 + U(4)],
                                 P[o9 + U(5)], P[o9 + U(6)], P[o9 + U(7)], P[o9 + U(8)]), X[:9])
            for i in range(9):
                P[ok + U(W_RW + i)] = Rw[i]
            F = sub6(F, external_wrench(Rw, fext[k, 0], fext[k, 1], fext[k, 2], fext[k, 3],
                                        fext[k, 4], fext[k, 5]))
        store_pose(P, ok + U(W_R), X)
        store6(P, ok + U(W_V), V)
        store6(P, ok + U(W_A), A)
        store6(P, ok + U(W_F), F)
    # backward pass
    for k in range(nb - 1, 0, -1):
        p, jt, iq, iv = body(P, nb, k)
        ok = wrow(nb, k, 0)
        F = load6(P, ok + U(W_F))
        if jt != FIXED:
            a = joint_axis(P, frow(k))
            for c in range(JOINT_NV[jt]):
                tau[iv + c] = joint_force(jt, a, c, F)
        if p > 0:
            add_into6(P, wrow(nb, p, W_F), rnea_backward_step(load_pose(P, ok + U(W_R)), F))


# ------------------------------------------------------------------ a block of configurations
@jit
def rnea_block(T0, Qb, QDb, QDDb, b0, nb, gx, gy, gz, FEXT, has_fext, tau, W, P, T, rates):
    """RNEA of tree T0 for rows b0 .. b0+nb of a batch into tau; Qb, QDb, QDDb: those rows of q,
    q', q'' as flat blocks (:func:`.blocks.transpose_rows`). Scratch blocks (:mod:`.blocks`): W
    (nbody * NW * BS), P (NP * BS), T (NT * BS). FEXT (1 or N, nbody, 6). ``rates`` 1: q'' = 0
    (QDDb is not read), 2: QDDb."""
    nbody, nq, nv = sizes(T0)
    nf = FEXT.shape[0]
    for c in range(NW):
        o = at(0, c)
        for b in range(nb):
            W[o + U(b)] = 0.0
    for b in range(nb):
        ub = U(b)
        W[at(0, W_A + 3) + ub] = -gx
        W[at(0, W_A + 4) + ub] = -gy
        W[at(0, W_A + 5) + ub] = -gz
        W[at(0, W_RW) + ub] = 1.0
        W[at(0, W_RW + 4) + ub] = 1.0
        W[at(0, W_RW + 8) + ub] = 1.0
    # forward pass
    for k in range(1, nbody):
        p, jt, iq, iv = body(T0, nbody, k)
        f = frow(k)
        I = body_inertia(T0, f + U(C_M))
        ok = at(k, 0)
        gather_joint(jt, joint_constants(T0, f), joint_axis(T0, f), Qb, iq, QDb, QDDb, iv, nb, W,
                     ok + U(W_R * BS), T, rates)
        copy_rows(W, at(p, W_V), P, row(0), 12)       # the parent's twist and acceleration
        for i in range(nb):
            b = U(i)
            V, A, F = rnea_forward_step(ld_pose_b(W, ok + U(W_R * BS), b), ld6b(P, row(0), b),
                                        ld6b(P, row(6), b), ld6b(T, row(T_V), b),
                                        ld6b(T, row(T_A), b), I)
            st6b(W, ok + U(W_V * BS), b, V)
            st6b(W, ok + U(W_A * BS), b, A)
            st6b(W, ok + U(W_F * BS), b, F)
        if has_fext:
            for i in range(nb):
                b = U(i)
                fb = b0 + i if nf > 1 else 0
                Rw = world_rotation(ld9b(W, at(p, W_RW), b), ld9b(W, at(k, W_R), b))
                for j in range(9):
                    W[at(k, W_RW + j) + b] = Rw[j]
                st6b(W, at(k, W_F), b, sub6(ld6b(W, at(k, W_F), b), external_wrench(
                    Rw, FEXT[fb, k, 0], FEXT[fb, k, 1], FEXT[fb, k, 2], FEXT[fb, k, 3],
                    FEXT[fb, k, 4], FEXT[fb, k, 5])))
    # backward pass
    for k in range(nbody - 1, 0, -1):
        p, jt, iq, iv = body(T0, nbody, k)
        a = joint_axis(T0, frow(k))
        of = at(k, W_F)
        for c in range(JOINT_NV[jt]):
            S = motion_subspace(jt, a, c)          # joint_force, with S_c out of the loop
            for i in range(nb):
                tau[b0 + i, iv + c] = dot6(S, ld6b(W, of, U(i)))
        if p > 0:
            for i in range(nb):
                b = U(i)
                st6b(P, row(0), b, rnea_backward_step(ld_pose_b(W, at(k, W_R), b), ld6b(W, of, b)))
            add_rows(P, row(0), W, at(p, W_F), 6)


@entry(f"void({TREE}, {RO2}, {RO2}, {RO2}, float64, float64, float64, {FEXT}, boolean, "
       f"float64[:, ::1], int64, int64)", nogil=True)
def rnea_span(T0, Q, QD, QDD, gx, gy, gz, FEXT, has_fext, tau, start, stop):
    """RNEA of tree T0 over rows start .. stop of Q (N, nq), QD, QDD (N, nv) into tau, block by
    block; releases the GIL (:mod:`.threads` runs spans in parallel)."""
    nq, nv = Q.shape[1], QD.shape[1]
    W = np.empty(np.int64(T0[0]) * NW * BS)
    P = np.empty(NP * BS)
    T = np.zeros(NT * BS)
    Qb = np.zeros((nq + 7) * BS)
    QDb = np.zeros((nv + 6) * BS)
    QDDb = np.zeros((nv + 6) * BS)
    for b0 in range(start, stop, BS):
        nb = min(BS, stop - b0)
        transpose_rows(Q, b0, nb, Qb)
        transpose_rows(QD, b0, nb, QDb)
        transpose_rows(QDD, b0, nb, QDDb)
        rnea_block(T0, Qb, QDb, QDDb, b0, nb, gx, gy, gz, FEXT, has_fext, tau, W, P, T, 2)
