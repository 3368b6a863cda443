"""Composite rigid body algorithm: the joint-space mass matrix ``M(q)``.

Featherstone, *Rigid Body Dynamics Algorithms*, table 6.2. Bodies are visited children first:

* :func:`crba_backward_step`: the composite inertia of body k moves to its parent,
  ``Ic_p += X^T Ic_k X`` (:func:`~.spatial.inertia_to_parent`);
* for each column c of the joint's S: ``F = Ic_k S_c``, ``M[i, i'] = S_c'^T F`` within the joint,
  then F travels to the root (``F = X^T F``) and ``M[j, i] = M[i, j] = S_j^T F`` at each
  ancestor joint j (:func:`crba_column_step`).

Drivers: :func:`crba_row` (one configuration) and :func:`crba_block` / :func:`crba_batch`
(the block layout ``M[i, j, b]``, configuration index innermost).
"""
from __future__ import annotations

import numpy as np
from numba import prange

from ._jit import entry, jit, step
from .blocks import (NT, block_values, gather_joint, load_pose, load_pose_block, store_pose,
                     store_pose_block)
from .joints import body_inertia, joint_axis, joint_constants, joint_pose, joint_values, motion_subspace
from .layout import BS, C_M, FEXT, FIXED, JOINT_NV, NW, RO2, TREE, W_CM
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
def crba_row(idata, fdata, q, M, W):
    """Mass matrix (nv, nv) of configuration q into M; W (nb, NW) scratch."""
    nb = idata.shape[0]
    n = M.shape[0]
    for i in range(n):
        for j in range(n):
            M[i, j] = 0.0
    for k in range(1, nb):
        jt = idata[k, 1]
        store_pose(W, k, joint_pose(jt, joint_constants(fdata, k), joint_values(jt, q, idata[k, 2])))
        for i in range(13):
            W[k, W_CM + i] = fdata[k, C_M + i]
    for k in range(nb - 1, 0, -1):
        jt = idata[k, 1]
        if jt != FIXED:
            a = joint_axis(fdata, k)
            iv = idata[k, 3]
            Ic = body_inertia(W, k, W_CM)
            for c in range(JOINT_NV[jt]):
                F = crba_column_start(jt, a, c, Ic)
                for c2 in range(JOINT_NV[jt]):
                    M[iv + c2, iv + c] = dot6(motion_subspace(jt, a, c2), F)
                j = k
                while idata[j, 0] > 0:
                    F = crba_column_step(load_pose(W, j), F)
                    j = idata[j, 0]
                    jj = idata[j, 1]
                    if jj != FIXED:
                        aj = joint_axis(fdata, j)
                        vj = idata[j, 3]
                        for c2 in range(JOINT_NV[jj]):
                            val = dot6(motion_subspace(jj, aj, c2), F)
                            M[vj + c2, iv + c] = val
                            M[iv + c, vj + c2] = val
        p = idata[k, 0]
        if p > 0:
            Ic = crba_backward_step(load_pose(W, k), body_inertia(W, k, W_CM))
            for i in range(13):
                W[p, W_CM + i] += Ic[i]


# ------------------------------------------------------------------ a block of configurations
@jit
def crba_block(idata, fdata, Q, b0, nb, M, W, T, F):
    """Mass matrices of rows b0 .. b0+nb of Q into M (nv, nv, BS), block layout.
    W (nbody, NW, BS), T (NT, BS), F (6, BS) scratch."""
    nbody = idata.shape[0]
    n = M.shape[0]
    for i in range(n):
        for j in range(n):
            for b in range(nb):
                M[i, j, b] = 0.0
    for k in range(1, nbody):
        jt = idata[k, 1]
        C = joint_constants(fdata, k)
        gather_joint(jt, Q, idata[k, 2], Q, Q, 0, b0, nb, T, 0)
        for b in range(nb):
            store_pose_block(W, k, b, joint_pose(jt, C, block_values(T, b)))
        for i in range(13):
            v = fdata[k, C_M + i]
            for b in range(nb):
                W[k, W_CM + i, b] = v
    for k in range(nbody - 1, 0, -1):
        jt = idata[k, 1]
        if jt != FIXED:
            a = joint_axis(fdata, k)
            iv = idata[k, 3]
            for c in range(JOINT_NV[jt]):
                for b in range(nb):
                    Fb = crba_column_start(jt, a, c, (
                        W[k, W_CM, b], W[k, W_CM + 1, b], W[k, W_CM + 2, b], W[k, W_CM + 3, b],
                        W[k, W_CM + 4, b], W[k, W_CM + 5, b], W[k, W_CM + 6, b],
                        W[k, W_CM + 7, b], W[k, W_CM + 8, b], W[k, W_CM + 9, b],
                        W[k, W_CM + 10, b], W[k, W_CM + 11, b], W[k, W_CM + 12, b]))
                    F[0, b], F[1, b], F[2, b], F[3, b], F[4, b], F[5, b] = Fb
                    for c2 in range(JOINT_NV[jt]):
                        M[iv + c2, iv + c, b] = dot6(motion_subspace(jt, a, c2), Fb)
                j = k
                while idata[j, 0] > 0:
                    jp = idata[j, 0]
                    jj = idata[jp, 1]
                    aj = joint_axis(fdata, jp)
                    vj = idata[jp, 3]
                    for b in range(nb):
                        Fb = crba_column_step(load_pose_block(W, j, b),
                                              (F[0, b], F[1, b], F[2, b], F[3, b], F[4, b], F[5, b]))
                        F[0, b], F[1, b], F[2, b], F[3, b], F[4, b], F[5, b] = Fb
                        for c2 in range(JOINT_NV[jj]):
                            val = dot6(motion_subspace(jj, aj, c2), Fb)
                            M[vj + c2, iv + c, b] = val
                            M[iv + c, vj + c2, b] = val
                    j = jp
        p = idata[k, 0]
        if p > 0:
            for b in range(nb):
                Ic = crba_backward_step(load_pose_block(W, k, b), (
                    W[k, W_CM, b], W[k, W_CM + 1, b], W[k, W_CM + 2, b], W[k, W_CM + 3, b],
                    W[k, W_CM + 4, b], W[k, W_CM + 5, b], W[k, W_CM + 6, b], W[k, W_CM + 7, b],
                    W[k, W_CM + 8, b], W[k, W_CM + 9, b], W[k, W_CM + 10, b],
                    W[k, W_CM + 11, b], W[k, W_CM + 12, b]))
                for i in range(13):
                    W[p, W_CM + i, b] += Ic[i]


@jit
def unblock_matrix(Mb, nb, out, b0):
    """out[b0 + b] = Mb[:, :, b] for b < nb."""
    n = Mb.shape[0]
    for b in range(nb):
        for i in range(n):
            for j in range(n):
                out[b0 + b, i, j] = Mb[i, j, b]


@entry(f"float64[:, :, ::1]({TREE}, {RO2}, int64, int64)", parallel=True)
def crba_batch(idata, fdata, Q, nv, chunk):
    """Mass matrices (N, nv, nv) of the rows of Q."""
    N = Q.shape[0]
    out = np.empty((N, nv, nv))
    per = chunk * BS
    for c in prange((N + per - 1) // per):
        W = np.empty((idata.shape[0], NW, BS))
        T = np.zeros((NT, BS))
        F = np.empty((6, BS))
        Mb = np.empty((nv, nv, BS))
        for b0 in range(c * per, min(N, (c + 1) * per), BS):
            nb = min(BS, N - b0)
            crba_block(idata, fdata, Q, b0, nb, Mb, W, T, F)
            unblock_matrix(Mb, nb, out, b0)
    return out
