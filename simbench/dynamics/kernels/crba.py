"""Composite rigid body algorithm: the joint-space mass matrix ``M(q)``.

Featherstone, *Rigid Body Dynamics Algorithms*, table 6.2. Two drivers, each with the frames
that make it fastest:

* blocks (:func:`crba_block` / :func:`crba_span`, the layout ``M[i, j, b]``, lane innermost;
  upper triangle): every quantity in one frame, the root's (as Pinocchio's ``crba``), so that a
  composite inertia moves to its parent by a plain sum and an entry of M is one dot product,
  loops that vectorise across the lanes. :func:`crba_forward_step` (parents first): the body's
  pose in the root frame ``oX_k = oX_p X_k``, its inertia there, and the columns of its joint's
  S in the root frame (:func:`crba_column`); backward (children first): ``Ic_p += Ic_k``, and
  for each column ``F = Ic_k S_c``, ``M[j, i] = S_j^T F`` for the joint's own columns and every
  ancestor's. The pose of each child of the root is left out (taken as the identity, its
  subtree computed in its frame): M does not depend on it, since every column of S is constant in
  its child's frame and the kinetic energy of a subtree does not change when the whole subtree
  turns or moves (for the iiwa: M does not depend on q_1; for a floating base: on the base's
  pose, and a base far from the origin costs no precision). That body's forward step is then a
  copy of constants: measured in one process, 3-6 % faster mass matrices for the iiwa, the
  Panda and a1, 13 % for the 3-DOF mobile manipulator.
* one configuration (:func:`crba_row`): body frames, as the table is written: fewer operations
  for a single configuration (measured 1.1-1.4x faster than the root frame there).
"""
from __future__ import annotations

import numpy as np

from ._jit import entry, jit, step
from .blocks import (NJ, UBS, at, copy_rows, joint_lanes, lane_pose, ld6b,
                     ld10b, ld_pose_b, load_pose, row, sincos_lanes, st6b, st10b, st_pose_b,
                     store_pose, transpose_rows)
from .joints import (body_inertia, joint_axis, joint_constants, joint_force, joint_pose,
                     joint_values, motion_subspace)
from .layout import BS, C_M, FIXED, JOINT_NV, MOTION, NW, REVOLUTE, RO2, TREE, W_CM, W_R
from .tree import U, body, depth_parity, frow, sizes, wrow
from .stream import STREAM_BYTES, store_fence, stream_store
from .spatial import (dot6, force_to_parent, inertia_times, inertia_to_parent, motion_to_parent,
                      pose_mul)

IDENTITY = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0)


@step
def crba_forward_step(oXp, X, I):
    """(pose, inertia) of a body in the root frame from its parent's pose oXp there, its pose X
    in the parent and its inertia I (own frame)."""
    oX = pose_mul(oXp, X)
    return oX, inertia_to_parent(oX, I)


@step
def crba_column(oX, S):
    """A column S of a joint's motion subspace (child frame) in the root frame."""
    return motion_to_parent(oX, S)


# ------------------------------------------------------------------ one configuration
@step
def crba_body_column(jt, a, c, Ic):
    """One configuration, body frames: F = Ic S_c for column c of a body's joint (S constant
    in the body frame), Ic the body's composite inertia there."""
    return inertia_times(Ic, motion_subspace(jt, a, c))


@step
def crba_body_column_up(X, F):
    """One configuration, body frames: F carried from a body to its parent, X^T F."""
    return force_to_parent(X, F)


@jit
def crba_row(P, q, M):
    """Mass matrix (nv, nv) of tree P (:mod:`.tree`) at configuration q into M, with P's scratch.

    One configuration runs the CRBA in body frames (Featherstone's table 6.2 as written):
    ``Ic_p += X^T Ic_k X``; for each column, ``F = Ic_k S_c`` travels to the root by
    ``F = X^T F`` and ``M[j, i] = S_j^T F`` at each ancestor, S constant (few of its entries
    nonzero). For one configuration this is fewer operations than the root frame of the blocks
    (no pose products, no dense columns): measured 1.1-1.4x faster (iiwa, a1)."""
    nb, nq, n = sizes(P)
    for i in range(n):
        for j in range(n):
            M[i, j] = 0.0
    for k in range(1, nb):
        p, jt, iq, iv = body(P, nb, k)
        f = frow(k)
        ok = wrow(nb, k, 0)
        store_pose(P, ok + U(W_R), joint_pose(jt, joint_constants(P, f), joint_values(jt, q, iq)))
        for i in range(10):
            P[ok + U(W_CM + i)] = P[f + U(C_M + i)]
    for k in range(nb - 1, 0, -1):
        p, jt, iq, iv = body(P, nb, k)
        ok = wrow(nb, k, 0)
        Ic = body_inertia(P, ok + U(W_CM))
        if jt != FIXED:
            a = joint_axis(P, frow(k))
            for c in range(JOINT_NV[jt]):
                F = crba_body_column(jt, a, c, Ic)
                for c2 in range(JOINT_NV[jt]):
                    M[iv + c2, iv + c] = joint_force(jt, a, c2, F)
                j = k
                pj = p
                while pj > 0:
                    F = crba_body_column_up(load_pose(P, wrow(nb, j, W_R)), F)
                    j = pj
                    pj, jj, iqj, vj = body(P, nb, j)
                    if jj != FIXED:
                        aj = joint_axis(P, frow(j))
                        for c2 in range(JOINT_NV[jj]):
                            val = joint_force(jj, aj, c2, F)
                            M[vj + c2, iv + c] = val
                            M[iv + c, vj + c2] = val
        if p > 0:
            Icp = inertia_to_parent(load_pose(P, ok + U(W_R)), Ic)
            op = wrow(nb, p, W_CM)
            for i in range(10):
                P[op + U(i)] += Icp[i]


# ------------------------------------------------------------------ a block of configurations
@step
def mat(n, i, j):
    """Offset of entry (i, j) of a block of (n, n) matrices."""
    return U((i * n + j) * BS)


@step
def upper(n, i, j):
    """Offset of entry (min(i, j), max(i, j)): the upper triangle, where the blocks keep M."""
    return mat(n, i, j) if i <= j else mat(n, j, i)


@step
def crba_forward_lanes(jt, column, T0, k, p, iq, iv, Qb, SC, J, Wk, Wp, Sb):
    """The forward step of body k for the BS lanes: pose and inertia in the root frame into Wk
    (W_R, W_CM). ``jt`` REVOLUTE: the joint model inside the loop; MOTION: the pose from the joint
    block J. ``column``: the joint is revolute, and its one column of S in the root frame goes
    into Sb in the same loop (the pose still in registers: measured 5-10 % faster mass matrices
    than :func:`crba_columns_lanes`, a loop of its own). The parent's pose is read from Wp, the
    other work array (:func:`crba_block`), so that the loop writes one array that it does not read
    (LLVM vectorises it with few checks at run time; reading and writing one array was measured
    1.2-1.6x slower)."""
    f = frow(k)
    C = joint_constants(T0, f)
    I = body_inertia(T0, f + U(C_M))
    S = motion_subspace(REVOLUTE, joint_axis(T0, f), 0)
    ok = at(k, 0)
    oq = row(iq)
    os = row(6 * iv)
    op = at(p, W_R)
    for i in range(BS):
        b = U(i)
        oX, oI = crba_forward_step(ld_pose_b(Wp, op, b), lane_pose(jt, C, Qb, SC, oq, J, b), I)
        st_pose_b(Wk, ok + U(W_R) * UBS, b, oX)
        st10b(Wk, ok + U(W_CM) * UBS, b, oI)
        if column:
            st6b(Sb, os, b, crba_column(oX, S))


@jit
def crba_root_child_lanes(T0, k, jt, iv, W, Sb):
    """Body k, a child of the root, in its own frame for the BS lanes: the identity pose, its own
    inertia, and its joint's columns of S as they are (constant there)."""
    f = frow(k)
    I = body_inertia(T0, f + U(C_M))
    a = joint_axis(T0, f)
    ok = at(k, 0)
    for i in range(BS):
        b = U(i)
        st_pose_b(W, ok + U(W_R) * UBS, b, IDENTITY)
        st10b(W, ok + U(W_CM) * UBS, b, I)
    for c in range(JOINT_NV[jt]):
        S = motion_subspace(jt, a, c)
        o = row(6 * (iv + c))
        for i in range(BS):
            st6b(Sb, o, U(i), S)


@jit
def crba_columns_lanes(T0, k, jt, iv, W, Sb):
    """The columns of body k's joint's S in the root frame into Sb (6 rows per entry of v)."""
    a = joint_axis(T0, frow(k))
    ok = at(k, W_R)
    for c in range(JOINT_NV[jt]):
        S = motion_subspace(jt, a, c)
        o = row(6 * (iv + c))
        for i in range(BS):
            b = U(i)
            st6b(Sb, o, b, crba_column(ld_pose_b(W, ok, b), S))


@jit
def crba_backward_lanes(k, p, nvk, iv, n, W, Wp, Sb, Fb, Mb):
    """For the BS lanes: F = Ic S_c of each column of body k's joint into Fb (6 rows per
    column) and the joint's own block of M; then the composite inertia (in W) added to the
    parent's (in Wp; none for a child of the root)."""
    ok = at(k, W_CM)
    for c in range(nvk):
        os, of = row(6 * (iv + c)), row(6 * c)
        for i in range(BS):
            b = U(i)
            st6b(Fb, of, b, inertia_times(ld10b(W, ok, b), ld6b(Sb, os, b)))
        for c2 in range(c + 1):
            om, o2 = mat(n, iv + c2, iv + c), row(6 * (iv + c2))
            for i in range(BS):
                b = U(i)
                Mb[om + b] = dot6(ld6b(Sb, o2, b), ld6b(Fb, of, b))
    if p > 0:
        op = at(p, W_CM)
        for i in range(10 * BS):
            Wp[op + U(i)] += W[ok + U(i)]


@jit
def crba_ancestors(T0, nbody, k, p, nvk, iv, n, Sb, Fb, Mb):
    """M[j, i] = S_j^T F_i for the columns i of body k's joint (F in Fb) and every column j of
    each ancestor's joint (one loop over the lanes per entry)."""
    j = p
    while j > 0:
        pj, jj, iqj, vj = body(T0, nbody, j)
        for c2 in range(JOINT_NV[jj]):
            os = row(6 * (vj + c2))
            for c in range(nvk):
                of = row(6 * c)
                om = upper(n, vj + c2, iv + c)
                for i in range(BS):
                    b = U(i)
                    Mb[om + b] = dot6(ld6b(Sb, os, b), ld6b(Fb, of, b))
        j = pj


@jit
def crba_block(T0, Qb, W, SC, Sb, Fb, Mb, W2, J, given):
    """Mass matrices of tree T0 for the lanes of the flat block Qb
    (:func:`.blocks.transpose_rows`) into the upper triangle of the flat block Mb (entry (i, j)
    of lane b at ``(i * nv + j) * BS + b``; the entries of the lower triangle and those between
    joints on different branches are not written). Scratch blocks: W and W2 (nbody * NW * BS
    each), SC (2 * BS), Sb (6 * nv * BS), Fb (36 * BS), J (NJ * BS). A body's pose and inertia
    go to W or W2 by the parity of its depth in the tree, so that a body and its parent are
    never in the same array (no copy of the parent's pose: measured in one process, 0-5 %
    faster mass matrices for the iiwa, the Panda and a1, 5-11 % for the mobile manipulator).
    ``given``: the joints' poses are already in W and W2 at W_R (by the same parity), left there
    by :func:`.rnea.rnea_block` for the same lanes (the forward dynamics: no sine, cosine or
    joint pose computed twice)."""
    nbody, nq, n = sizes(T0)
    odd = depth_parity(T0, nbody)
    for k in range(1, nbody):
        p, jt, iq, iv = body(T0, nbody, k)
        Wk, Wp = (W2, W) if odd[k] else (W, W2)
        rev = jt == REVOLUTE   # its column written by the forward step (True/False as literals
        #                        below: each inlined loop is compiled with the flag folded)
        if p == 0:                             # the root's child in its own frame (module
            crba_root_child_lanes(T0, k, jt, iv, Wk, Sb)   # docstring)
            continue
        if given:                              # the joint's pose, left in Wk by the RNEA
            copy_rows(Wk, at(k, W_R), J, 12)
            if rev:
                crba_forward_lanes(MOTION, True, T0, k, p, iq, iv, Qb, SC, J, Wk, Wp, Sb)
            else:
                crba_forward_lanes(MOTION, False, T0, k, p, iq, iv, Qb, SC, J, Wk, Wp, Sb)
        elif rev:
            sincos_lanes(Qb, row(iq), SC)
            crba_forward_lanes(REVOLUTE, True, T0, k, p, iq, iv, Qb, SC, J, Wk, Wp, Sb)
        else:
            f = frow(k)
            joint_lanes(jt, joint_constants(T0, f), joint_axis(T0, f), Qb, row(iq), Qb, Qb,
                        0, J, False)
            crba_forward_lanes(MOTION, False, T0, k, p, iq, iv, Qb, SC, J, Wk, Wp, Sb)
        if not rev:
            crba_columns_lanes(T0, k, jt, iv, Wk, Sb)
    for k in range(nbody - 1, 0, -1):
        p, jt, iq, iv = body(T0, nbody, k)
        Wk, Wp = (W2, W) if odd[k] else (W, W2)
        crba_backward_lanes(k, p, JOINT_NV[jt], iv, n, Wk, Wp, Sb, Fb, Mb)
        crba_ancestors(T0, nbody, k, p, JOINT_NV[jt], iv, n, Sb, Fb, Mb)


@jit
def crba_scratch(T0, nq, nv):
    """(W, SC, Sb, Fb, Mb, W2, J, Qb): the scratch blocks of :func:`crba_block`; Mb zeroed once
    (the entries the CRBA never writes stay zero)."""
    nw = np.int64(T0[0]) * NW * BS
    return (np.empty(nw), np.empty(2 * BS), np.empty((6 * nv + 1) * BS), np.empty(36 * BS),
            np.zeros((nv * nv + 1) * BS), np.empty(nw), np.empty(NJ * BS), np.empty((nq + 1) * BS))


@jit
def upper_table(n):
    """src[i * n + j]: the offset of entry (i, j) of a block's matrix, in its upper triangle."""
    src = np.empty(n * n, dtype=np.uint64)
    for i in range(n):
        for j in range(n):
            src[i * n + j] = upper(n, i, j)
    return src


@jit
def unblock_matrix(Mb, src, b0, nb, out, stream):
    """out[b0 + b] = the block's symmetric matrix b (from its upper triangle), for b < nb; out
    flat (N * nv * nv), src :func:`upper_table`; ``stream``: streaming stores (:mod:`.stream`).
    Matrix by matrix, each written in order (the block, n * n * BS floats, read across from
    cache). Measured in one process: the table is 1.6x faster than computing each entry's
    offset (three nested loops with a branch); against the lanes innermost (each output matrix
    then written one entry per pass over the block), 2x."""
    nn = src.shape[0]
    for i in range(nb):
        b = U(i)
        o = U(b0 + i) * U(nn)
        if stream:
            for e in range(nn):
                stream_store(out, o + U(e), Mb[src[e] + b])
        else:
            for e in range(nn):
                out[o + U(e)] = Mb[src[e] + b]


@entry(f"void({TREE}, {RO2}, float64[:, :, ::1], int64, int64)", nogil=True)
def crba_span(T0, Q, out, start, stop):
    """Mass matrices of tree T0 for rows start .. stop of Q into out (N, nv, nv); releases the
    GIL. An output of STREAM_BYTES or more (the whole batch, larger than the cache) is written
    with streaming stores (:mod:`.stream`)."""
    nv = out.shape[1]
    stream = out.nbytes >= STREAM_BYTES
    W, SC, Sb, Fb, Mb, W2, J, Qb = crba_scratch(T0, Q.shape[1], nv)
    src, flat = upper_table(nv), out.reshape(-1)
    for b0 in range(start, stop, BS):
        nb = min(BS, stop - b0)
        transpose_rows(Q, b0, nb, Qb)
        crba_block(T0, Qb, W, SC, Sb, Fb, Mb, W2, J, False)
        unblock_matrix(Mb, src, b0, nb, flat, stream)
    if stream:
        store_fence()
