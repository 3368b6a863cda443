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

The drivers are loops over these steps: :func:`rnea_row` (one configuration), :func:`rnea_block`
(``BS`` configurations at once: for each body one loop over the lanes that computes the joint's
pose and runs the step; for revolute joints the joint model folds into that loop, the other
types are computed beforehand by one loop per type) and :func:`rnea_span` (a range of rows
block by block, without the GIL, run on threads by :mod:`.threads`).
"""
from __future__ import annotations

import numpy as np

from ._jit import entry, jit, step
from .blocks import (J_A, J_V, NJ, UBS, add_into6, at, joint_lanes, lane_motion, lane_pose, ld6b,
                     ld9b, ld_pose_b, load6, load_pose, row, sincos_lanes, st6b, st_pose_b, store6,
                     store_pose, transpose_rows, untranspose_rows)
from .joints import (body_inertia, joint_axis, joint_constants, joint_cross, joint_force,
                     joint_motion, joint_pose, joint_rates, joint_values, motion_subspace)
from .layout import (BS, C_M, FEXT, FIXED, JOINT_NV, MOTION, NW, PRISMATIC, REVOLUTE, RO2, TREE,
                     W_A, W_F, W_R, W_RW, W_V)
from .tree import U, body, depth_parity, frow, sizes, wrow
from .spatial import add6, body_force, dot6, force_to_parent, motion_to_child, scale6, sub6


# ------------------------------------------------------------------ the two steps
@step
def rnea_forward_step(jt, a, X, Vp, Ap, rv, ra, I):
    """Twist, acceleration and Newton-Euler force of a body from its parent's twist Vp and
    acceleration Ap, its pose X in the parent, its joint (type jt, axis a) moving at rates rv
    and accelerating at ra (``vJ = S rv``, ``aJ = S ra``, child frame) and its inertia I."""
    Vx = motion_to_child(X, Vp)
    V = add6(Vx, joint_motion(jt, a, rv))
    A = add6(add6(motion_to_child(X, Ap), joint_motion(jt, a, ra)), joint_cross(jt, a, Vx, rv))
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
        V, A, F = rnea_forward_step(jt, a, X, load6(P, op + U(W_V)), load6(P, op + U(W_A)),
                                    joint_rates(jt, qd, iv), scale6(acc, joint_rates(jt, qdd, iv)),
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
@step
def rnea_forward_lanes(jt, T0, k, p, iq, iv, Qb, SC, QDb, QDDb, J, Wk, Wp):
    """The forward step of body k for the BS lanes of a block: joint pose, twist, acceleration and
    force into W (pose at W_R, then W_V, W_A, W_F). ``jt`` REVOLUTE: the joint model inside the loop
    (sin, 1 - cos from SC); PRISMATIC: likewise (measured 4 % faster batched inverse dynamics for
    the Panda, whose fingers slide, than through J); MOTION: pose and motions from the joint block J
    (:func:`.blocks.joint_lanes`). The body's quantities go to Wk, its parent's twist and
    acceleration are read from Wp, the other work array (:func:`rnea_block`): Wk is then only
    written (LLVM vectorises the loop with few checks at run time)."""
    f = frow(k)
    C = joint_constants(T0, f)
    a = joint_axis(T0, f)
    I = body_inertia(T0, f + U(C_M))
    ok = at(k, 0)
    oq, ov = row(iq), row(iv)
    opv, opa = at(p, W_V), at(p, W_A)
    for i in range(BS):
        b = U(i)
        X = lane_pose(jt, C, Qb, SC, oq, J, b)
        V, A, F = rnea_forward_step(jt, a, X, ld6b(Wp, opv, b), ld6b(Wp, opa, b),
                                    lane_motion(jt, QDb, ov, J, row(J_V), b),
                                    lane_motion(jt, QDDb, ov, J, row(J_A), b), I)
        st_pose_b(Wk, ok + U(W_R) * UBS, b, X)
        st6b(Wk, ok + U(W_V) * UBS, b, V)
        st6b(Wk, ok + U(W_A) * UBS, b, A)
        st6b(Wk, ok + U(W_F) * UBS, b, F)


@jit
def rnea_backward_lanes(T0, k, p, jt, iv, W, Wp, Tb):
    """The backward step of body k (in W) for the BS lanes: its joint forces S_c^T F into the
    block Tb (row per entry of v; S_c out of the loop, so that one loop serves every joint
    type), then its force in the parent frame added to the parent's (in Wp, the other work
    array; body 0's force is never read)."""
    a = joint_axis(T0, frow(k))
    ok = at(k, 0)
    for c in range(JOINT_NV[jt]):
        S = motion_subspace(jt, a, c)
        ot = row(iv + c)
        for i in range(BS):
            b = U(i)
            Tb[ot + b] = dot6(S, ld6b(W, ok + U(W_F) * UBS, b))
    if p > 0:
        opf = at(p, W_F)
        for i in range(BS):
            b = U(i)
            st6b(Wp, opf, b, add6(ld6b(Wp, opf, b), rnea_backward_step(
                ld_pose_b(W, ok + U(W_R) * UBS, b), ld6b(W, ok + U(W_F) * UBS, b))))


@jit
def rnea_block(T0, Qb, QDb, QDDb, b0, nb, gx, gy, gz, FEXT, has_fext, W, SC, Tb, W2, J):
    """RNEA of tree T0 for the lanes of a block (rows b0 .. b0+nb of a batch) into the block Tb
    (entry i of tau at row i); Qb, QDb, QDDb: q, q', q'' as flat blocks
    (:func:`.blocks.transpose_rows`). Scratch blocks: W and W2 (nbody * NW * BS each), SC
    (2 * BS), J (NJ * BS). A body's quantities go to W or W2 by the parity of its depth in the
    tree (:func:`.crba.crba_block` reads the joints' poses there), so that a body and its parent
    are never in the same array: no copy of the parent's motion, and the backward step adds
    into the parent's force in the same loop (measured in one process: 9-10 % faster batched
    inverse dynamics for the iiwa, the Panda and the mobile manipulator, 6 % for a1 and the
    humanoid; 4-10 % faster forward dynamics).
    FEXT (1 or N, nbody, 6): the batch's external wrenches, read when has_fext."""
    nbody, nq, nv = sizes(T0)
    odd = depth_parity(T0, nbody)
    for i in range(BS):
        b = U(i)
        st6b(W, at(0, W_V), b, (0.0, 0.0, 0.0, 0.0, 0.0, 0.0))
        st6b(W, at(0, W_A), b, (0.0, 0.0, 0.0, -gx, -gy, -gz))
    if has_fext:
        for c in range(9):
            for i in range(BS):
                W[at(0, W_RW + c) + U(i)] = 1.0 if c % 4 == 0 else 0.0
    # forward pass: revolute and prismatic joints fused, the others through the joint block J
    for k in range(1, nbody):
        p, jt, iq, iv = body(T0, nbody, k)
        Wk, Wp = (W2, W) if odd[k] else (W, W2)
        if jt == REVOLUTE:
            sincos_lanes(Qb, row(iq), SC)
            rnea_forward_lanes(REVOLUTE, T0, k, p, iq, iv, Qb, SC, QDb, QDDb, J, Wk, Wp)
        elif jt == PRISMATIC:
            rnea_forward_lanes(PRISMATIC, T0, k, p, iq, iv, Qb, SC, QDb, QDDb, J, Wk, Wp)
        else:
            f = frow(k)
            joint_lanes(jt, joint_constants(T0, f), joint_axis(T0, f), Qb, row(iq), QDb, QDDb,
                        row(iv), J, True)
            rnea_forward_lanes(MOTION, T0, k, p, iq, iv, Qb, SC, QDb, QDDb, J, Wk, Wp)
        if has_fext:
            wrench_lanes(k, p, b0, nb, FEXT, Wk, Wp)
    # backward pass
    for k in range(nbody - 1, 0, -1):
        p, jt, iq, iv = body(T0, nbody, k)
        Wk, Wp = (W2, W) if odd[k] else (W, W2)
        rnea_backward_lanes(T0, k, p, jt, iv, Wk, Wp, Tb)


@step
def wrench_lanes(k, p, b0, nb, FEXT, Wk, Wp):
    """Body k's world rotation Rw_k = Rw_p R_k for the BS lanes of a block (W_RW), and its external
    wrench (FEXT (1 or N, nbody, 6), world frame) subtracted from its force in its own frame. A
    body whose wrench is zero in every lane of the block is skipped; one wrench shared by the
    batch is read once, outside the lanes' loop (measured in one process, two runs, against
    reading each lane's wrench for every body, one thread: 0.75-0.89x for a batch of wrenches,
    0.73-0.78x for a shared one on the iiwa and the Panda with a wrench on the last link; a1 with
    three, 0.85-0.95x and 0.77-0.80x)."""
    okr, ow, opw, of = at(k, W_R), at(k, W_RW), at(p, W_RW), at(k, W_F)
    for i in range(BS):
        b = U(i)
        Rw = world_rotation(ld9b(Wp, opw, b), ld9b(Wk, okr, b))
        for j in range(9):
            Wk[ow + U(j) * UBS + b] = Rw[j]
    if FEXT.shape[0] == 1:
        m0, m1, m2, f0, f1, f2 = FEXT[0, k, 0], FEXT[0, k, 1], FEXT[0, k, 2], FEXT[0, k, 3], \
            FEXT[0, k, 4], FEXT[0, k, 5]
        if m0 != 0.0 or m1 != 0.0 or m2 != 0.0 or f0 != 0.0 or f1 != 0.0 or f2 != 0.0:
            for i in range(BS):
                b = U(i)
                st6b(Wk, of, b, sub6(ld6b(Wk, of, b), external_wrench(ld9b(Wk, ow, b), m0, m1, m2,
                                                                      f0, f1, f2)))
        return
    for r in range(b0, b0 + nb):
        if FEXT[r, k, 0] != 0.0 or FEXT[r, k, 1] != 0.0 or FEXT[r, k, 2] != 0.0 or \
                FEXT[r, k, 3] != 0.0 or FEXT[r, k, 4] != 0.0 or FEXT[r, k, 5] != 0.0:
            break
    else:
        return
    for i in range(BS):
        b = U(i)
        fb = b0 + min(i, nb - 1)
        st6b(Wk, of, b, sub6(ld6b(Wk, of, b), external_wrench(
            ld9b(Wk, ow, b), FEXT[fb, k, 0], FEXT[fb, k, 1], FEXT[fb, k, 2], FEXT[fb, k, 3],
            FEXT[fb, k, 4], FEXT[fb, k, 5])))


@jit
def block_scratch(T0, nq, nv):
    """(W, SC, Tb, W2, J, Qb, QDb, QDDb): the scratch blocks of :func:`rnea_block`, allocated
    once per span."""
    nw = np.int64(T0[0]) * NW * BS
    return (np.empty(nw), np.empty(2 * BS), np.empty((nv + 1) * BS), np.empty(nw),
            np.empty(NJ * BS), np.empty((nq + 1) * BS), np.empty((nv + 1) * BS),
            np.zeros((nv + 1) * BS))


@entry(f"void({TREE}, {RO2}, {RO2}, {RO2}, float64, float64, float64, {FEXT}, boolean, "
       f"float64[:, ::1], int64, int64)", nogil=True)
def rnea_span(T0, Q, QD, QDD, gx, gy, gz, FEXT, has_fext, tau, start, stop):
    """RNEA of tree T0 over rows start .. stop of Q (N, nq), QD, QDD (N, nv) into tau, block by
    block; releases the GIL (:mod:`.threads` runs spans in parallel)."""
    nv = QD.shape[1]
    W, SC, Tb, W2, J, Qb, QDb, QDDb = block_scratch(T0, Q.shape[1], nv)
    for b0 in range(start, stop, BS):
        nb = min(BS, stop - b0)
        transpose_rows(Q, b0, nb, Qb)
        transpose_rows(QD, b0, nb, QDb)
        transpose_rows(QDD, b0, nb, QDDb)
        rnea_block(T0, Qb, QDb, QDDb, b0, nb, gx, gy, gz, FEXT, has_fext, W, SC, Tb, W2, J)
        untranspose_rows(Tb, nv, b0, nb, tau)
