"""Composite rigid body algorithm: the joint-space mass matrix ``M(q)``.

Featherstone, *Rigid Body Dynamics Algorithms*, table 6.2. Bodies are visited children first:

* :func:`crba_backward_step`: the composite inertia of body k moves to its parent,
  ``Ic_p += X^T Ic_k X`` (:func:`~.spatial.inertia_to_parent`);
* for each column c of the joint's S: ``F = Ic_k S_c``, ``M[i, i'] = S_c'^T F`` within the joint,
  then F travels to the root (``F = X^T F``) and ``M[j, i] = M[i, j] = S_j^T F`` at each
  ancestor joint j (:func:`crba_column_step`).

Drivers: :func:`crba_row` (one configuration) and :func:`crba_block` / :func:`crba_span`
(the block layout ``M[i, j, b]``, configuration index innermost).
"""
from __future__ import annotations

import numpy as np

from ._jit import entry, jit, step
from .blocks import (NP, NT, add_rows, at, gather_joint, ld6b, ld13b, ld_pose_b, load_pose, row,
                     st6b, st13b, store_pose, transpose_rows)
from .joints import (body_inertia, joint_axis, joint_constants, joint_force, joint_pose, joint_values,
                     motion_subspace)
from .layout import BS, C_M, FIXED, JOINT_NV, NW, RO2, TREE, W_CM, W_R
from .tree import U, body, frow, sizes, wrow
from .spatial import dot6, force_to_parent, inertia_times, inertia_to_parent


@step
def crba_column_start(jt, a, c, Ic):
    """F = Ic S_c for column c of the joint of a body with composite inertia Ic."""
    return inertia_times(Ic, motion_subspace(jt, a, c))


@step
def crba_column_step(X, F):
    """F carried from a body to its parent: X^T F."""
    return force_to_parent(X, F)


@step
def crba_backward_step(X, Ic):
    """Body k's composite inertia in its parent's frame (added to the parent's)."""
    return inertia_to_parent(X, Ic)


# ------------------------------------------------------------------ one configuration
@jit
def crba_row(P, q, M):
    """Mass matrix (nv, nv) of tree P (:mod:`.tree`) at configuration q into M, with P's scratch."""
    nb, nq, n = sizes(P)
    for i in range(n):
        for j in range(n):
            M[i, j] = 0.0
    for k in range(1, nb):
        p, jt, iq, iv = body(P, nb, k)
        f = frow(k)
        ok = wrow(nb, k, 0)
        store_pose(P, ok + U(W_R), joint_pose(jt, joint_constants(P, f), joint_values(jt, q, iq)))
        for i in range(13):
            P[ok + U(W_CM + i)] = P[f + U(C_M + i)]
    for k in range(nb - 1, 0, -1):
        p, jt, iq, iv = body(P, nb, k)
        ok = wrow(nb, k, 0)
        if jt != FIXED:
            a = joint_axis(P, frow(k))
            Ic = body_inertia(P, ok + U(W_CM))
            for c in range(JOINT_NV[jt]):
                F = crba_column_start(jt, a, c, Ic)
                for c2 in range(JOINT_NV[jt]):
                    M[iv + c2, iv + c] = joint_force(jt, a, c2, F)
                j = k
                pj = p
                while pj > 0:
                    F = crba_column_step(load_pose(P, wrow(nb, j, W_R)), F)
                    j = pj
                    pj, jj, iqj, vj = body(P, nb, j)
                    if jj != FIXED:
                        aj = joint_axis(P, frow(j))
                        for c2 in range(JOINT_NV[jj]):
                            val = joint_force(jj, aj, c2, F)
                            M[vj + c2, iv + c] = val
                            M[iv + c, vj + c2] = val
        if p > 0:
            Ic = crba_backward_step(load_pose(P, ok + U(W_R)), body_inertia(P, ok + U(W_CM)))
            op = wrow(nb, p, W_CM)
            for i in range(13):
                P[op + U(i)] += Ic[i]


# ------------------------------------------------------------------ a block of configurations
@step
def mat(n, i, j):
    """Offset of entry (i, j) of a block of (n, n) matrices."""
    return U((i * n + j) * BS)


@jit
def crba_block(T0, Qb, nb, M, W, P, T):
    """Mass matrices of tree T0 for the nb configurations of the flat block Qb
    (:func:`.blocks.transpose_rows`) into the flat block M (entry (i, j) of configuration b at
    ``(i * nv + j) * BS + b``). W, P, T: scratch blocks (:mod:`.blocks`)."""
    nbody, nq, n = sizes(T0)
    for i in range(n * n):
        o = row(i)
        for b in range(nb):
            M[o + U(b)] = 0.0
    for k in range(1, nbody):
        p, jt, iq, iv = body(T0, nbody, k)
        f = frow(k)
        gather_joint(jt, joint_constants(T0, f), joint_axis(T0, f), Qb, iq, Qb, Qb, 0, nb, W,
                     at(k, W_R), T, 0)
        for c in range(13):
            v = T0[f + U(C_M + c)]
            o = at(k, W_CM + c)
            for b in range(nb):
                W[o + U(b)] = v
    for k in range(nbody - 1, 0, -1):
        p, jt, iq, iv = body(T0, nbody, k)
        if jt != FIXED:
            a = joint_axis(T0, frow(k))
            nvk = JOINT_NV[jt]
            for c in range(nvk):
                for i in range(nb):
                    b = U(i)
                    st6b(P, row(0), b, crba_column_start(jt, a, c, ld13b(W, at(k, W_CM), b)))
                for c2 in range(nvk):
                    S = motion_subspace(jt, a, c2)          # joint_force, S_c out of the loop
                    o = mat(n, iv + c2, iv + c)
                    for i in range(nb):
                        b = U(i)
                        M[o + b] = dot6(S, ld6b(P, row(0), b))
                j = k
                pj = p
                while pj > 0:
                    oj = at(j, W_R)
                    for i in range(nb):
                        b = U(i)
                        st6b(P, row(0), b, crba_column_step(ld_pose_b(W, oj, b), ld6b(P, row(0), b)))
                    j = pj
                    pj, jj, iqj, vj = body(T0, nbody, j)
                    if jj != FIXED:
                        aj = joint_axis(T0, frow(j))
                        for c2 in range(JOINT_NV[jj]):
                            S = motion_subspace(jj, aj, c2)
                            o1 = mat(n, vj + c2, iv + c)
                            o2 = mat(n, iv + c, vj + c2)
                            for i in range(nb):
                                b = U(i)
                                val = dot6(S, ld6b(P, row(0), b))
                                M[o1 + b] = val
                                M[o2 + b] = val
        if p > 0:
            for i in range(nb):
                b = U(i)
                st13b(P, row(0), b, crba_backward_step(ld_pose_b(W, at(k, W_R), b),
                                                       ld13b(W, at(k, W_CM), b)))
            add_rows(P, row(0), W, at(p, W_CM), 13)


@jit
def unblock_matrix(Mb, n, nb, out, b0):
    """out[b0 + b] = the block's matrix b, for b < nb."""
    for i in range(n):
        for j in range(n):
            o = mat(n, i, j)
            for b in range(nb):
                out[b0 + b, i, j] = Mb[o + U(b)]


@entry(f"void({TREE}, {RO2}, float64[:, :, ::1], int64, int64)", nogil=True)
def crba_span(T0, Q, out, start, stop):
    """Mass matrices of tree T0 for rows start .. stop of Q into out (N, nv, nv); releases the
    GIL."""
    nv = out.shape[1]
    W = np.empty(np.int64(T0[0]) * NW * BS)
    P = np.empty(NP * BS)
    T = np.zeros(NT * BS)
    Mb = np.empty(nv * nv * BS)
    Qb = np.zeros((Q.shape[1] + 7) * BS)
    for b0 in range(start, stop, BS):
        nb = min(BS, stop - b0)
        transpose_rows(Q, b0, nb, Qb)
        crba_block(T0, Qb, nb, Mb, W, P, T)
        unblock_matrix(Mb, nv, nb, out, b0)
