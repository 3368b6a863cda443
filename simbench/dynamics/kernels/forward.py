"""Forward dynamics ``q'' = M^-1 (tau - C q' - g + sum J^T F_ext)`` and forward kinematics.

The bias ``C q' + g - sum J^T F_ext`` is the RNEA with ``q'' = 0`` (:mod:`.rnea`), ``M`` the CRBA
(:mod:`.crba`), the solve a Cholesky factorisation (``M`` is symmetric positive definite unless
a moving body is massless; such rows come back as nan). The block solve runs the factorisation of
``BS`` matrices at once, configuration index innermost.
"""
from __future__ import annotations

import math

import numpy as np
from numba import prange

from ._jit import entry, jit
from .blocks import NT, block_values, gather_joint, store_pose
from .crba import crba_block, crba_row
from .joints import joint_constants, joint_pose, joint_values
from .layout import BS, FEXT, NW, RO2, TREE, W_R, W_T
from .rnea import rnea_block, rnea_row


@jit
def all_finite(x):
    for i in range(x.shape[0]):
        if not math.isfinite(x[i]):
            return False
    return True


@jit
def cholesky_solve(M, b, L):
    """Solve M x = b in place (b <- x) by Cholesky; False if M is not positive definite.
    L's diagonal holds the reciprocals 1/L_jj."""
    n = M.shape[0]
    for j in range(n):
        s = M[j, j]
        for k in range(j):
            s -= L[j, k] * L[j, k]
        if not s > 0.0:
            return False
        r = 1.0 / math.sqrt(s)
        L[j, j] = r
        for i in range(j + 1, n):
            s = M[i, j]
            for k in range(j):
                s -= L[i, k] * L[j, k]
            L[i, j] = s * r
    for i in range(n):
        s = b[i]
        for k in range(i):
            s -= L[i, k] * b[k]
        b[i] = s * L[i, i]
    for i in range(n - 1, -1, -1):
        s = b[i]
        for k in range(i + 1, n):
            s -= L[k, i] * b[k]
        b[i] = s * L[i, i]
    return True


@jit
def cholesky_solve_block(M, x, nb, ok):
    """Solve M[:, :, b] x[:, b] = x[:, b] in place for b < nb, overwriting M's lower triangle with
    the factor (diagonal: reciprocals); ok[b] = False where M[:, :, b] is not positive definite."""
    n = M.shape[0]
    for b in range(nb):
        ok[b] = True
    for j in range(n):
        for k in range(j):
            for b in range(nb):
                M[j, j, b] -= M[j, k, b] * M[j, k, b]
        for b in range(nb):
            s = M[j, j, b]
            ok[b] = ok[b] and s > 0.0
            M[j, j, b] = 1.0 / math.sqrt(s if s > 0.0 else 1.0)
        for i in range(j + 1, n):
            for k in range(j):
                for b in range(nb):
                    M[i, j, b] -= M[i, k, b] * M[j, k, b]
            for b in range(nb):
                M[i, j, b] *= M[j, j, b]
    for i in range(n):
        for k in range(i):
            for b in range(nb):
                x[i, b] -= M[i, k, b] * x[k, b]
        for b in range(nb):
            x[i, b] *= M[i, i, b]
    for i in range(n - 1, -1, -1):
        for k in range(i + 1, n):
            for b in range(nb):
                x[i, b] -= M[k, i, b] * x[k, b]
        for b in range(nb):
            x[i, b] *= M[i, i, b]


@jit
def fd_row(idata, fdata, q, qd, tau, gx, gy, gz, fext, has_fext, qdd, W, M, L):
    """Forward dynamics of one configuration into qdd; all-nan if M is singular."""
    n = qdd.shape[0]
    rnea_row(idata, fdata, q, qd, qd, 0.0, gx, gy, gz, fext, has_fext, qdd, W)
    for i in range(n):
        qdd[i] = tau[i] - qdd[i]
    crba_row(idata, fdata, q, M, W)
    if not (cholesky_solve(M, qdd, L) and all_finite(qdd)):
        for i in range(n):
            qdd[i] = np.nan


@entry(f"float64[:, ::1]({TREE}, {RO2}, {RO2}, {RO2}, float64, float64, float64, {FEXT}, "
       f"boolean, int64)", parallel=True)
def fd_batch(idata, fdata, Q, QD, TAU, gx, gy, gz, FEXT, has_fext, chunk):
    """Forward dynamics over the rows of Q, QD, TAU; rows whose M is singular come back nan."""
    N, nv = TAU.shape
    qdd = np.empty((N, nv))
    per = chunk * BS
    for c in prange((N + per - 1) // per):
        W = np.empty((idata.shape[0], NW, BS))
        T = np.zeros((NT, BS))
        F = np.empty((6, BS))
        Mb = np.empty((nv, nv, BS))
        x = np.empty((nv, BS))
        ok = np.empty(BS, dtype=np.bool_)
        for b0 in range(c * per, min(N, (c + 1) * per), BS):
            nb = min(BS, N - b0)
            # bias C q' + g - J^T F_ext into qdd's rows, then x = tau - bias
            rnea_block(idata, fdata, Q, QD, QD, b0, nb, gx, gy, gz, FEXT, has_fext, qdd, W, T, 1)
            crba_block(idata, fdata, Q, b0, nb, Mb, W, T, F)
            for i in range(nv):
                for b in range(nb):
                    x[i, b] = TAU[b0 + b, i] - qdd[b0 + b, i]
            cholesky_solve_block(Mb, x, nb, ok)
            for b in range(nb):
                good = ok[b]
                for i in range(nv):
                    good = good and math.isfinite(x[i, b])
                for i in range(nv):
                    qdd[b0 + b, i] = x[i, b] if good else np.nan
    return qdd


# ------------------------------------------------------------------ forward kinematics
@jit
def fk_row(idata, fdata, q, T, W):
    """World pose (4x4) of every body of one configuration into T (nb, 4, 4); body 0 at the
    identity."""
    nb = idata.shape[0]
    for i in range(4):
        for j in range(4):
            T[0, i, j] = 1.0 if i == j else 0.0
    for k in range(1, nb):
        p = idata[k, 0]
        jt = idata[k, 1]
        store_pose(W, k, joint_pose(jt, joint_constants(fdata, k), joint_values(jt, q, idata[k, 2])))
        for i in range(3):
            for j in range(3):
                s = 0.0
                for l in range(3):
                    s += T[p, i, l] * W[k, W_R + 3 * l + j]
                T[k, i, j] = s
            s = T[p, i, 3]
            for l in range(3):
                s += T[p, i, l] * W[k, W_T + l]
            T[k, i, 3] = s
        T[k, 3, 0] = 0.0
        T[k, 3, 1] = 0.0
        T[k, 3, 2] = 0.0
        T[k, 3, 3] = 1.0


@entry(f"float64[:, :, :, ::1]({TREE}, {RO2})")
def fk_rows(idata, fdata, Q):
    """World poses (N, nb, 4, 4) of every body for the rows of Q."""
    N = Q.shape[0]
    nb = idata.shape[0]
    T = np.empty((N, nb, 4, 4))
    W = np.empty((nb, NW))
    for r in range(N):
        fk_row(idata, fdata, Q[r], T[r], W)
    return T
