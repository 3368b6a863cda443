"""Forward dynamics ``q'' = M^-1 (tau - C q' - g + sum J^T F_ext)``.

The bias ``C q' + g - sum J^T F_ext`` is the RNEA with ``q'' = 0`` (:mod:`.rnea`), ``M`` the CRBA
(:mod:`.crba`), the solve a Cholesky factorisation (``M`` is symmetric positive definite unless
a moving body is massless; such rows come back as nan). The block solve runs the factorisation of
``BS`` matrices at once, lane innermost, in the same block as the RNEA and the CRBA.
"""
from __future__ import annotations

import math

import numpy as np

from ._jit import entry, jit
from .blocks import row, transpose_rows
from .crba import crba_block, crba_row, crba_scratch, mat
from .layout import BS, FEXT, RO2, TREE
from .tree import U, scratch_matrices, sizes
from .rnea import block_scratch, rnea_block, rnea_row


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
def cholesky_solve_block(M, x, n, nb, ok):
    """Solve M_b x_b = x_b in place for the lanes of a flat block: M's upper triangle (entry
    (i, j) at ``(i * n + j) * BS + b``, :func:`.crba.crba_block`) factored as L L^T into M's
    lower triangle and diagonal (the diagonal holding the reciprocals 1/L_jj; the upper
    triangle, which the CRBA of the next block overwrites, is left as it is), x entry i at
    ``i * BS + b``; ok[b] = 0 where M_b is not positive definite; the first nb lanes only.
    The trip count nb is known at run time only: with the constant BS, LLVM unrolls each
    loop over the lanes and the solve measured 2x slower (nv = 34). In place, the inner sums
    along rows of L."""
    for i in range(nb):
        ok[i] = 1.0
    for j in range(n):
        ojj = mat(n, j, j)
        for k in range(j):
            ojk = mat(n, j, k)
            for i in range(nb):
                b = U(i)
                M[ojj + b] -= M[ojk + b] * M[ojk + b]
        for i in range(nb):
            b = U(i)
            s = M[ojj + b]
            good = s > 0.0
            ok[i] = ok[i] if good else 0.0
            M[ojj + b] = 1.0 / math.sqrt(s if good else 1.0)
        for r in range(j + 1, n):
            orj, ojr = mat(n, r, j), mat(n, j, r)
            for i in range(nb):
                M[orj + U(i)] = M[ojr + U(i)]
            for k in range(j):
                ork, ojk = mat(n, r, k), mat(n, j, k)
                for i in range(nb):
                    b = U(i)
                    M[orj + b] -= M[ork + b] * M[ojk + b]
            for i in range(nb):
                b = U(i)
                M[orj + b] *= M[ojj + b]
    for r in range(n):                      # L y = x
        orr = row(r)
        for k in range(r):
            ork, okk = mat(n, r, k), row(k)
            for i in range(nb):
                b = U(i)
                x[orr + b] -= M[ork + b] * x[okk + b]
        o = mat(n, r, r)
        for i in range(nb):
            b = U(i)
            x[orr + b] *= M[o + b]
    for r in range(n - 1, -1, -1):          # L^T z = y
        orr = row(r)
        for k in range(r + 1, n):
            okr, okk = mat(n, k, r), row(k)
            for i in range(nb):
                b = U(i)
                x[orr + b] -= M[okr + b] * x[okk + b]
        o = mat(n, r, r)
        for i in range(nb):
            b = U(i)
            x[orr + b] *= M[o + b]


@jit
def fd_row(P, q, qd, tau, gx, gy, gz, fext, has_fext, qdd):
    """Forward dynamics of tree P at one configuration into qdd (with P's scratch); all-nan if M
    is singular."""
    nb, nq, n = sizes(P)
    om, ol = scratch_matrices(nb, n)
    M = P[om:om + U(n * n)].reshape((n, n))
    L = P[ol:ol + U(n * n)].reshape((n, n))
    rnea_row(P, q, qd, qd, 0.0, gx, gy, gz, fext, has_fext, qdd)
    for i in range(n):
        qdd[i] = tau[i] - qdd[i]
    crba_row(P, q, M)
    if not (cholesky_solve(M, qdd, L) and all_finite(qdd)):
        for i in range(n):
            qdd[i] = np.nan


@entry(f"void({TREE}, {RO2}, {RO2}, {RO2}, float64, float64, float64, {FEXT}, boolean, "
       f"float64[:, ::1], int64, int64)", nogil=True)
def fd_span(T0, Q, QD, TAU, gx, gy, gz, FEXT, has_fext, qdd, start, stop):
    """Forward dynamics of tree T0 for rows start .. stop into qdd; rows whose M is singular
    come back nan. Releases the GIL."""
    nq, nv = Q.shape[1], TAU.shape[1]
    W, SC, Tb, W2, J, Qb, QDb, ZERO = block_scratch(T0, nq, nv)   # ZERO: q'' = 0 (never written)
    _, _, Sb, Fb, Mb, _, _, _ = crba_scratch(T0, 0, nv)
    x = np.empty((nv + 1) * BS)
    ok = np.empty(BS)
    for b0 in range(start, stop, BS):
        nb = min(BS, stop - b0)
        transpose_rows(Q, b0, nb, Qb)
        transpose_rows(QD, b0, nb, QDb)
        transpose_rows(TAU, b0, nb, x)
        # bias C q' + g - J^T F_ext into Tb, then x = tau - bias
        rnea_block(T0, Qb, QDb, ZERO, b0, nb, gx, gy, gz, FEXT, has_fext, W, SC, Tb, W2, J)
        for r in range(nv):
            o = row(r)
            for i in range(BS):
                x[o + U(i)] -= Tb[o + U(i)]
        crba_block(T0, Qb, W, SC, Sb, Fb, Mb, W2, J, True)   # the poses of the RNEA
        cholesky_solve_block(Mb, x, nv, nb, ok)
        for b in range(nb):
            good = ok[b] > 0.0
            for i in range(nv):
                good = good and math.isfinite(x[row(i) + U(b)])
            for i in range(nv):
                qdd[b0 + b, i] = x[row(i) + U(b)] if good else np.nan
