"""Recursive Newton-Euler algorithm: ``tau = M(q) q'' + C(q, q') q' + g(q) - sum_k J_k^T F_ext,k``.

Featherstone, *Rigid Body Dynamics Algorithms*, table 5.1; the "AI Robotics" lecture slides,
*Dynamics* (Newton-Euler in the notation of Lynch & Park, *Modern Robotics*). Gravity enters as a
fictitious acceleration ``-g`` of body 0.

The two passes are written once, on scalars, as Pinocchio names them:

* :func:`rnea_forward_step` (body k, parents first): ``v_k = X v_p + S q'``,
  ``a_k = X a_p + S q'' + (X v_p) x S q'``, ``f_k = I_k a_k + v_k x* I_k v_k`` (minus the
  external wrench, in the body frame);
* :func:`rnea_backward_step` (children first): ``tau_k = S^T f_k``, ``f_p += X^T f_k``.

The drivers are loops over these steps: :func:`rnea_row` (one configuration: row r of 2-D
arrays), :func:`rnea_block` (``BS`` configurations at once, configuration index innermost) and
:func:`rnea_batch` (blocks in parallel).
"""
from __future__ import annotations

import numpy as np
from numba import prange

from ._jit import entry, jit, step
from .blocks import (NT, T_A, T_V, add_into6, add_into6_block, block_rates, block_values,
                     gather_joint, load6, load6_block, load_pose, load_pose_block, store6,
                     store6_block, store_pose, store_pose_block)
from .joints import (body_inertia, joint_axis, joint_constants, joint_forces, joint_motion,
                     joint_pose, joint_rates, joint_values)
from .layout import BS, C_M, FEXT, FIXED, JOINT_NV, NW, RO2, TREE, W_A, W_F, W_R, W_RW, W_V
from .spatial import add6, body_force, force_to_parent, motion_cross, motion_to_child, scale6, sub6


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
def rnea_backward_step(jt, a, X, F):
    """The joint forces S^T F (6-tuple, zero-padded) and the body's force in its parent's frame."""
    return joint_forces(jt, a, F), force_to_parent(X, F)


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
def rnea_row(idata, fdata, q, qd, qdd, acc, gx, gy, gz, fext, has_fext, tau, W):
    """RNEA for one configuration q (nq,), qd, acc * qdd (nv,) into tau (nv,); W (nb, NW) scratch.
    ``acc``: 1, or 0 for the bias forces (q'' = 0; qdd is then any finite array).
    ``fext`` (nb, 6): wrench [torque, force] on each body, world frame, about the body origin."""
    nb = idata.shape[0]
    for i in range(6):
        W[0, W_V + i] = 0.0
        W[0, W_A + i] = 0.0
    W[0, W_A + 3] = -gx
    W[0, W_A + 4] = -gy
    W[0, W_A + 5] = -gz
    if has_fext:
        for i in range(9):
            W[0, W_RW + i] = 1.0 if i % 4 == 0 else 0.0
    # forward pass
    for k in range(1, nb):
        p = idata[k, 0]
        jt = idata[k, 1]
        iv = idata[k, 3]
        a = joint_axis(fdata, k)
        X = joint_pose(jt, joint_constants(fdata, k), joint_values(jt, q, idata[k, 2]))
        V, A, F = rnea_forward_step(X, load6(W, p, W_V), load6(W, p, W_A),
                                    joint_motion(jt, a, joint_rates(jt, qd, iv)),
                                    joint_motion(jt, a, scale6(acc, joint_rates(jt, qdd, iv))),
                                    body_inertia(fdata, k, C_M))
        if has_fext:
            Rw = world_rotation((W[p, W_RW], W[p, W_RW + 1], W[p, W_RW + 2], W[p, W_RW + 3],
                                 W[p, W_RW + 4], W[p, W_RW + 5], W[p, W_RW + 6], W[p, W_RW + 7],
                                 W[p, W_RW + 8]), X[:9])
            for i in range(9):
                W[k, W_RW + i] = Rw[i]
            F = sub6(F, external_wrench(Rw, fext[k, 0], fext[k, 1], fext[k, 2], fext[k, 3],
                                        fext[k, 4], fext[k, 5]))
        store_pose(W, k, X)
        store6(W, k, W_V, V)
        store6(W, k, W_A, A)
        store6(W, k, W_F, F)
    # backward pass
    for k in range(nb - 1, 0, -1):
        p = idata[k, 0]
        jt = idata[k, 1]
        jf, Fp = rnea_backward_step(jt, joint_axis(fdata, k), load_pose(W, k), load6(W, k, W_F))
        if jt != FIXED:
            iv = idata[k, 3]
            for c in range(JOINT_NV[jt]):
                tau[iv + c] = jf[c]
        if p > 0:
            add_into6(W, p, W_F, Fp)


# ------------------------------------------------------------------ a block of configurations
@jit
def rnea_block(idata, fdata, Q, QD, QDD, b0, nb, gx, gy, gz, FEXT, has_fext, tau, W, T, rates):
    """RNEA for rows b0 .. b0+nb of Q, QD, QDD into tau; W (nbody, NW, BS), T (NT, BS) scratch.
    FEXT (1 or N, nbody, 6). ``rates`` 1: q'' = 0 (QDD is not read), 2: QDD."""
    nbody = idata.shape[0]
    nf = FEXT.shape[0]
    for c in range(NW):
        for b in range(nb):
            W[0, c, b] = 0.0
    for b in range(nb):
        W[0, W_A + 3, b] = -gx
        W[0, W_A + 4, b] = -gy
        W[0, W_A + 5, b] = -gz
        W[0, W_RW, b] = 1.0
        W[0, W_RW + 4, b] = 1.0
        W[0, W_RW + 8, b] = 1.0
    for k in range(1, nbody):
        p = idata[k, 0]
        jt = idata[k, 1]
        a = joint_axis(fdata, k)
        C = joint_constants(fdata, k)
        I = body_inertia(fdata, k, C_M)
        gather_joint(jt, Q, idata[k, 2], QD, QDD, idata[k, 3], b0, nb, T, rates)
        for b in range(nb):
            X = joint_pose(jt, C, block_values(T, b))
            V, A, F = rnea_forward_step(X, load6_block(W, p, W_V, b), load6_block(W, p, W_A, b),
                                        joint_motion(jt, a, block_rates(T, T_V, b)),
                                        joint_motion(jt, a, block_rates(T, T_A, b)), I)
            store_pose_block(W, k, b, X)
            store6_block(W, k, W_V, b, V)
            store6_block(W, k, W_A, b, A)
            store6_block(W, k, W_F, b, F)
        if has_fext:
            for b in range(nb):
                fb = b0 + b if nf > 1 else 0
                Rw = world_rotation(
                    (W[p, W_RW, b], W[p, W_RW + 1, b], W[p, W_RW + 2, b], W[p, W_RW + 3, b],
                     W[p, W_RW + 4, b], W[p, W_RW + 5, b], W[p, W_RW + 6, b], W[p, W_RW + 7, b],
                     W[p, W_RW + 8, b]),
                    (W[k, W_R, b], W[k, W_R + 1, b], W[k, W_R + 2, b], W[k, W_R + 3, b],
                     W[k, W_R + 4, b], W[k, W_R + 5, b], W[k, W_R + 6, b], W[k, W_R + 7, b],
                     W[k, W_R + 8, b]))
                for i in range(9):
                    W[k, W_RW + i, b] = Rw[i]
                store6_block(W, k, W_F, b, sub6(load6_block(W, k, W_F, b), external_wrench(
                    Rw, FEXT[fb, k, 0], FEXT[fb, k, 1], FEXT[fb, k, 2], FEXT[fb, k, 3],
                    FEXT[fb, k, 4], FEXT[fb, k, 5])))
    for k in range(nbody - 1, 0, -1):
        p = idata[k, 0]
        jt = idata[k, 1]
        iv = idata[k, 3]
        nvk = JOINT_NV[jt]
        a = joint_axis(fdata, k)
        for b in range(nb):
            jf, Fp = rnea_backward_step(jt, a, load_pose_block(W, k, b), load6_block(W, k, W_F, b))
            for c in range(nvk):
                tau[b0 + b, iv + c] = jf[c]
            if p > 0:
                add_into6_block(W, p, W_F, b, Fp)


@entry(f"float64[:, ::1]({TREE}, {RO2}, {RO2}, {RO2}, float64, float64, float64, {FEXT}, "
       f"boolean, int64)", parallel=True)
def rnea_batch(idata, fdata, Q, QD, QDD, gx, gy, gz, FEXT, has_fext, chunk):
    """RNEA over the rows of Q (N, nq), QD, QDD (N, nv): ``chunk`` blocks of BS rows per parallel
    iteration (one work array each)."""
    N = Q.shape[0]
    tau = np.empty((N, QD.shape[1]))
    per = chunk * BS
    for c in prange((N + per - 1) // per):
        W = np.empty((idata.shape[0], NW, BS))
        T = np.zeros((NT, BS))
        for b0 in range(c * per, min(N, (c + 1) * per), BS):
            rnea_block(idata, fdata, Q, QD, QDD, b0, min(BS, N - b0), gx, gy, gz, FEXT, has_fext,
                       tau, W, T, 2)
    return tau
