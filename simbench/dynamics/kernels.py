"""Loop kernels of the rigid-body algorithms, compiled with numba (``cache=True``).

Each algorithm is written once as plain loop code over the links of a tree; it runs as ordinary
Python under ``NUMBA_DISABLE_JIT=1``. The model enters as two packed arrays (one numba
specialisation for every robot, few arguments to unbox per call):

``idata`` (nl, 4) int64
    ``parent`` (-1 for the root), ``jtype`` (FIXED=0, REVOLUTE=1, PRISMATIC=2), ``vidx``
    (index into q, -1 for fixed joints and the root); ``idata[0, 3]`` is the dof.
``fdata`` (nl, NF) float64
    ``R0`` (9, row-major) and ``p0`` (3): the joint origin (parent frame -> joint frame at q=0);
    ``axis`` (3) in the joint frame; ``mass``; ``h = m c`` (3); ``Io`` (9) rotational inertia
    about the link origin, link axes; in the root row, the default gravity (3); then
    ``R0 [axis]`` (9), ``R0 [axis]^2`` (9) and ``R0 axis`` (3), precomputed for the joint motion.

Links attached by fixed joints are merged into their parent body before the dynamics kernels
see the tree (``rnea.prepare``); kinematics and external wrenches use the full tree.

Three families of entry points: ``*_fast`` (one configuration, explicit signatures, the model
as one packed array: the lean single-call path), ``*1`` (one configuration, general), and
``*_batch`` (``parallel=True``, one ``prange`` iteration per block of ``BS`` configurations;
inside a block the configuration index is the innermost loop so that LLVM vectorises across
configurations, with a polynomial sin/cos that vectorises too). The spatial algebra (motion and
force transforms, inertia products, joint motion, composite inertias) is written once, as small
``inline="always"`` functions on tuples of scalars that the single and the block kernels share.

Spatial vectors are [angular; linear] in the link frame (slides of seed 001): twist ``V = (w, v)``,
wrench ``F = (m, f)``. For link ``k`` with parent ``p``, ``(R, t)`` is the pose of ``k`` in ``p``:
``R = R0 Rot(axis, q)``, ``t = p0`` (revolute) or ``R = R0``, ``t = p0 + R0 axis q`` (prismatic).
Motion transform parent -> child: ``w_k = R^T w_p``, ``v_k = R^T (v_p + w_p x t)``;
force transform child -> parent: ``f_p = R f_k``, ``m_p = R m_k + t x (R f_k)``.
"""
from __future__ import annotations

import math
import os

import numba
import numpy as np
from numba import njit, prange


def _pick_threading_layer() -> None:
    """A thread-safe layer (OpenMP or TBB) when one is available, else the work queue."""
    if os.environ.get("NUMBA_THREADING_LAYER"):
        return
    try:
        import numba.np.ufunc.omppool  # noqa: F401
        numba.config.THREADING_LAYER = "threadsafe"
        return
    except Exception:  # pragma: no cover - depends on the machine
        pass
    try:  # pragma: no cover
        import numba.np.ufunc.tbbpool  # noqa: F401
        numba.config.THREADING_LAYER = "threadsafe"
    except Exception:  # pragma: no cover
        numba.config.THREADING_LAYER = "workqueue"


_pick_threading_layer()

# fast-math without the no-nan/no-inf assumptions (the kernels test for non-finite input)
_FM = {"contract", "reassoc", "nsz", "arcp"}

# packed column layout of fdata
C_R0, C_P0, C_AX, C_M, C_H, C_IO = 0, 9, 12, 15, 16, 19
C_G = 28   # root row only: the default gravity used by the *_fast entry points
C_A, C_B, C_D = 31, 40, 49   # R0 [a] (9), R0 [a]^2 (9), R0 a (3)
NF = 52
# work array columns: R (9), t (3), v (6), a (6), f (6), Rw (9)
W_R, W_T, W_V, W_A, W_F, W_RW = 0, 9, 12, 18, 24, 30
NW = 39
FIXED, REVOLUTE, PRISMATIC = 0, 1, 2


# Vectorisable sin/cos (Cephes sin.c: reduction by pi/4 in three parts, minimax polynomials),
# 1-2 ulp for |x| < 1e7; compiled WITHOUT fast-math so that the reduction is not reassociated.
_DP1, _DP2, _DP3 = 7.85398125648498535156E-1, 3.77489470793079817668E-8, 2.69515142907905952645E-15
_S0, _S1, _S2 = 1.58962301576546568060E-10, -2.50507477628578072866E-8, 2.75573136213857245213E-6
_S3, _S4, _S5 = -1.98412698295895385996E-4, 8.33333333332211858878E-3, -1.66666666666666307295E-1
_C0, _C1, _C2 = -1.13585365213876817300E-11, 2.08757008419747316778E-9, -2.75573141792967388112E-7
_C3, _C4, _C5 = 2.48015872888517045348E-5, -1.38888888888730564116E-3, 4.16666666666665929218E-2
_FOPI = 1.27323954473516268615


@njit(cache=True, inline="always")
def sin_1mcos_poly(x):
    """(sin x, 1 - cos x) by the polynomials, for |x| < 1e7 (no branch: vectorises in a loop)."""
    ax = abs(x)
    y = math.floor(ax * _FOPI)
    k = np.int64(y)
    odd = k & 1
    k += odd
    y += odd
    k &= 7
    z = ((ax - y * _DP1) - y * _DP2) - y * _DP3
    zz = z * z
    ps = z + z * zz * (((((_S0 * zz + _S1) * zz + _S2) * zz + _S3) * zz + _S4) * zz + _S5)
    pc = 1.0 - 0.5 * zz + zz * zz * (((((_C0 * zz + _C1) * zz + _C2) * zz + _C3) * zz + _C4) * zz + _C5)
    swap = (k == 2) | (k == 6)
    sn = pc if swap else ps
    cs = ps if swap else pc
    ssign = -1.0 if k >= 4 else 1.0
    if x < 0:
        ssign = -ssign
    csign = -1.0 if (k == 2) | (k == 4) else 1.0
    return ssign * sn, 1.0 - csign * cs


@njit(cache=True)
def sin_1mcos(x):
    """(sin x, 1 - cos x) with the polynomials of :func:`sin_1mcos_poly` (math.sin/cos if huge)."""
    if abs(x) > 1e7:
        return math.sin(x), 1.0 - math.cos(x)
    return sin_1mcos_poly(x)


@njit(cache=True, fastmath=_FM, inline="always")
def joint_transform(idata, fdata, q, k, W):
    """Pose (R, t) of link k in its parent's frame, stored in W[k, W_R:W_R+9], W[k, W_T:W_T+3]."""
    jt = idata[k, 1]
    if jt == REVOLUTE:
        # R = R0 Rot(a, q) = R0 + sin(q) R0 [a] + (1 - cos(q)) R0 [a]^2 (Rodrigues)
        s, u = sin_1mcos(q[idata[k, 2]])
        for i in range(9):
            W[k, W_R + i] = fdata[k, C_R0 + i] + s * fdata[k, C_A + i] + u * fdata[k, C_B + i]
        for i in range(3):
            W[k, W_T + i] = fdata[k, C_P0 + i]
    else:
        d = 0.0
        if jt == PRISMATIC:
            d = q[idata[k, 2]]
        for i in range(9):
            W[k, W_R + i] = fdata[k, C_R0 + i]
        for i in range(3):
            W[k, W_T + i] = fdata[k, C_P0 + i] + d * fdata[k, C_D + i]


# Spatial algebra on tuples of scalars (inlined; shared by the single and the block kernels).
# X = (R row-major (9), t (3)): pose of a child in its parent; V, F: 6-tuples [angular; linear];
# inertia = (m, h (3), Io (9)) as in fdata[k, C_M:C_M + 13].
@njit(cache=True, fastmath=_FM, inline="always")
def pose(W, k):
    """X of link k from a single-configuration work array."""
    return (W[k, W_R], W[k, W_R + 1], W[k, W_R + 2], W[k, W_R + 3], W[k, W_R + 4], W[k, W_R + 5],
            W[k, W_R + 6], W[k, W_R + 7], W[k, W_R + 8], W[k, W_T], W[k, W_T + 1], W[k, W_T + 2])


@njit(cache=True, fastmath=_FM, inline="always")
def pose_block(W, k, b):
    """X of link k, configuration b of a block work array."""
    return (W[k, W_R, b], W[k, W_R + 1, b], W[k, W_R + 2, b], W[k, W_R + 3, b], W[k, W_R + 4, b],
            W[k, W_R + 5, b], W[k, W_R + 6, b], W[k, W_R + 7, b], W[k, W_R + 8, b],
            W[k, W_T, b], W[k, W_T + 1, b], W[k, W_T + 2, b])


@njit(cache=True, fastmath=_FM, inline="always")
def load6(W, k, col):
    """W[k, col:col + 6] as a tuple."""
    return W[k, col], W[k, col + 1], W[k, col + 2], W[k, col + 3], W[k, col + 4], W[k, col + 5]


@njit(cache=True, fastmath=_FM, inline="always")
def store6(W, k, col, V):
    """W[k, col:col + 6] = V (a 6-tuple)."""
    W[k, col], W[k, col + 1], W[k, col + 2], W[k, col + 3], W[k, col + 4], W[k, col + 5] = V


@njit(cache=True, fastmath=_FM, inline="always")
def load6_block(W, k, col, b):
    """W[k, col:col + 6, b] as a tuple."""
    return (W[k, col, b], W[k, col + 1, b], W[k, col + 2, b],
            W[k, col + 3, b], W[k, col + 4, b], W[k, col + 5, b])


@njit(cache=True, fastmath=_FM, inline="always")
def store6_block(W, k, col, b, V):
    """W[k, col:col + 6, b] = V (a 6-tuple)."""
    W[k, col, b], W[k, col + 1, b], W[k, col + 2, b], W[k, col + 3, b], W[k, col + 4, b], \
        W[k, col + 5, b] = V


@njit(cache=True, fastmath=_FM, inline="always")
def motion_to_child(X, V):
    """Parent twist (or acceleration) V in the child frame: (R^T w, R^T (v + w x t))."""
    R0, R1, R2, R3, R4, R5, R6, R7, R8, tx, ty, tz = X
    w0, w1, w2, v0, v1, v2 = V
    vx = v0 + w1 * tz - w2 * ty
    vy = v1 + w2 * tx - w0 * tz
    vz = v2 + w0 * ty - w1 * tx
    return (R0 * w0 + R3 * w1 + R6 * w2, R1 * w0 + R4 * w1 + R7 * w2, R2 * w0 + R5 * w1 + R8 * w2,
            R0 * vx + R3 * vy + R6 * vz, R1 * vx + R4 * vy + R7 * vz, R2 * vx + R5 * vy + R8 * vz)


@njit(cache=True, fastmath=_FM, inline="always")
def force_to_parent(X, F):
    """Child wrench F = (m, f) in the parent frame: (R m + t x (R f), R f)."""
    R0, R1, R2, R3, R4, R5, R6, R7, R8, tx, ty, tz = X
    m0, m1, m2, f0, f1, f2 = F
    g0 = R0 * f0 + R1 * f1 + R2 * f2
    g1 = R3 * f0 + R4 * f1 + R5 * f2
    g2 = R6 * f0 + R7 * f1 + R8 * f2
    return (R0 * m0 + R1 * m1 + R2 * m2 + ty * g2 - tz * g1,
            R3 * m0 + R4 * m1 + R5 * m2 + tz * g0 - tx * g2,
            R6 * m0 + R7 * m1 + R8 * m2 + tx * g1 - ty * g0, g0, g1, g2)


@njit(cache=True, fastmath=_FM, inline="always")
def load13(A, k, col):
    """A[k, col:col + 13] as a tuple: an inertia (m, h, Io) from fdata (col=C_M) or W (W_CM)."""
    return (A[k, col], A[k, col + 1], A[k, col + 2], A[k, col + 3], A[k, col + 4], A[k, col + 5],
            A[k, col + 6], A[k, col + 7], A[k, col + 8], A[k, col + 9], A[k, col + 10],
            A[k, col + 11], A[k, col + 12])


@njit(cache=True, fastmath=_FM, inline="always")
def load13_block(W, k, col, b):
    """W[k, col:col + 13, b] as a tuple."""
    return (W[k, col, b], W[k, col + 1, b], W[k, col + 2, b], W[k, col + 3, b], W[k, col + 4, b],
            W[k, col + 5, b], W[k, col + 6, b], W[k, col + 7, b], W[k, col + 8, b],
            W[k, col + 9, b], W[k, col + 10, b], W[k, col + 11, b], W[k, col + 12, b])


@njit(cache=True, fastmath=_FM, inline="always")
def inertia_to_parent(X, I):
    """Inertia I = (m, h, Io) of a child (about its origin, its axes) about the parent's origin,
    parent axes: (m, h' + m t, R Io R^T - [t][h'] - [h'][t] - m [t]^2) with h' = R h.
    Io is taken as symmetric (its upper triangle is read)."""
    R0, R1, R2, R3, R4, R5, R6, R7, R8, tx, ty, tz = X
    m, c0, c1, c2, I0, I1, I2, _, I4, I5, _, _, I8 = I
    h0 = R0 * c0 + R1 * c1 + R2 * c2
    h1 = R3 * c0 + R4 * c1 + R5 * c2
    h2 = R6 * c0 + R7 * c1 + R8 * c2
    # A = R Io
    A0 = R0 * I0 + R1 * I1 + R2 * I2
    A1 = R0 * I1 + R1 * I4 + R2 * I5
    A2 = R0 * I2 + R1 * I5 + R2 * I8
    A3 = R3 * I0 + R4 * I1 + R5 * I2
    A4 = R3 * I1 + R4 * I4 + R5 * I5
    A5 = R3 * I2 + R4 * I5 + R5 * I8
    A6 = R6 * I0 + R7 * I1 + R8 * I2
    A7 = R6 * I1 + R7 * I4 + R8 * I5
    A8 = R6 * I2 + R7 * I5 + R8 * I8
    # A R^T (symmetric: six entries)
    X00 = A0 * R0 + A1 * R1 + A2 * R2
    X01 = A0 * R3 + A1 * R4 + A2 * R5
    X02 = A0 * R6 + A1 * R7 + A2 * R8
    X11 = A3 * R3 + A4 * R4 + A5 * R5
    X12 = A3 * R6 + A4 * R7 + A5 * R8
    X22 = A6 * R6 + A7 * R7 + A8 * R8
    d = 2.0 * (tx * h0 + ty * h1 + tz * h2) + m * (tx * tx + ty * ty + tz * tz)
    o01 = X01 - tx * h1 - h0 * ty - m * tx * ty
    o02 = X02 - tx * h2 - h0 * tz - m * tx * tz
    o12 = X12 - ty * h2 - h1 * tz - m * ty * tz
    return (m, h0 + m * tx, h1 + m * ty, h2 + m * tz,
            X00 - 2.0 * tx * h0 - m * tx * tx + d, o01, o02,
            o01, X11 - 2.0 * ty * h1 - m * ty * ty + d, o12,
            o02, o12, X22 - 2.0 * tz * h2 - m * tz * tz + d)


@njit(cache=True, fastmath=_FM, inline="always")
def inertia_times(I, V):
    """Spatial inertia about the link origin times V = (w, u): (Io w + h x u, m u - h x w)."""
    m, hx, hy, hz, i0, i1, i2, i3, i4, i5, i6, i7, i8 = I
    w0, w1, w2, u0, u1, u2 = V
    return (i0 * w0 + i1 * w1 + i2 * w2 + (hy * u2 - hz * u1),
            i3 * w0 + i4 * w1 + i5 * w2 + (hz * u0 - hx * u2),
            i6 * w0 + i7 * w1 + i8 * w2 + (hx * u1 - hy * u0),
            m * u0 - (hy * w2 - hz * w1), m * u1 - (hz * w0 - hx * w2), m * u2 - (hx * w1 - hy * w0))


@njit(cache=True, fastmath=_FM, inline="always")
def body_force(I, V, A):
    """Newton-Euler force of a body: I A + V x* (I V), V x* M = (w x Ma + u x Ml, w x Ml)."""
    w0, w1, w2, u0, u1, u2 = V
    ma0, ma1, ma2, ml0, ml1, ml2 = inertia_times(I, V)
    fa0, fa1, fa2, fl0, fl1, fl2 = inertia_times(I, A)
    return (fa0 + w1 * ma2 - w2 * ma1 + u1 * ml2 - u2 * ml1,
            fa1 + w2 * ma0 - w0 * ma2 + u2 * ml0 - u0 * ml2,
            fa2 + w0 * ma1 - w1 * ma0 + u0 * ml1 - u1 * ml0,
            fl0 + w1 * ml2 - w2 * ml1, fl1 + w2 * ml0 - w0 * ml2, fl2 + w0 * ml1 - w1 * ml0)


@njit(cache=True, fastmath=_FM, inline="always")
def motion_subspace(jt, a):
    """Joint motion subspace S: (a, 0) revolute, (0, a) prismatic, zero fixed (a: the axis 3-tuple)."""
    rev = 1.0 if jt == REVOLUTE else 0.0
    pri = 1.0 if jt == PRISMATIC else 0.0
    return (rev * a[0], rev * a[1], rev * a[2], pri * a[0], pri * a[1], pri * a[2])


@njit(cache=True, fastmath=_FM, inline="always")
def joint_force(jt, a, F):
    """S^T F for a revolute or prismatic joint: the wrench's moment about / force along axis a."""
    if jt == REVOLUTE:
        return a[0] * F[0] + a[1] * F[1] + a[2] * F[2]
    return a[0] * F[3] + a[1] * F[4] + a[2] * F[5]


@njit(cache=True, fastmath=_FM, inline="always")
def add_joint_motion(V, A, jt, a, sd, sdd):
    """Child twist and acceleration from the parent's (V, A, already in the child frame):
    (V + S sd, A + S sdd + V x (S sd)), with (w, u) x (sw, sv) = (w x sw, w x sv + u x sw).
    A branch on jt rather than products with S's zeros (which fast-math may not drop); in the
    block kernels jt is loop-invariant."""
    w0, w1, w2, u0, u1, u2 = V
    a0, a1, a2, b0, b1, b2 = A
    sx, sy, sz = a[0] * sd, a[1] * sd, a[2] * sd
    if jt == REVOLUTE:
        return ((w0 + sx, w1 + sy, w2 + sz, u0, u1, u2),
                (a0 + a[0] * sdd + w1 * sz - w2 * sy, a1 + a[1] * sdd + w2 * sx - w0 * sz,
                 a2 + a[2] * sdd + w0 * sy - w1 * sx,
                 b0 + u1 * sz - u2 * sy, b1 + u2 * sx - u0 * sz, b2 + u0 * sy - u1 * sx))
    if jt == PRISMATIC:
        return ((w0, w1, w2, u0 + sx, u1 + sy, u2 + sz),
                (a0, a1, a2, b0 + a[0] * sdd + w1 * sz - w2 * sy,
                 b1 + a[1] * sdd + w2 * sx - w0 * sz, b2 + a[2] * sdd + w0 * sy - w1 * sx))
    return V, A


@njit(cache=True, fastmath=_FM, inline="always")
def axis(fdata, k):
    """Joint axis of link k (joint frame) as a 3-tuple."""
    return fdata[k, C_AX], fdata[k, C_AX + 1], fdata[k, C_AX + 2]


@njit(cache=True, fastmath=_FM)
def rnea_core(idata, fdata, q, qd, qdd, gx, gy, gz, fext, has_fext, tau, W):
    """Recursive Newton-Euler (seed 001): tau = M qdd + C qd + g - sum J_k^T F_ext,k.

    ``fext`` (nl, 6): wrench [torque, force] on each link, world frame, about the link origin.
    """
    nl = idata.shape[0]
    # root: at rest, acceleration -g (gravity as a fictitious base acceleration)
    for i in range(6):
        W[0, W_V + i] = 0.0
        W[0, W_A + i] = 0.0
        W[0, W_F + i] = 0.0
    W[0, W_A + 3] = -gx
    W[0, W_A + 4] = -gy
    W[0, W_A + 5] = -gz
    for i in range(9):
        W[0, W_RW + i] = 0.0
    W[0, W_RW] = 1.0
    W[0, W_RW + 4] = 1.0
    W[0, W_RW + 8] = 1.0
    for k in range(1, nl):
        p = idata[k, 0]
        jt = idata[k, 1]
        joint_transform(idata, fdata, q, k, W)
        # parent velocity and acceleration in the child frame, plus the joint's motion
        X = pose(W, k)
        V = motion_to_child(X, load6(W, p, W_V))
        A = motion_to_child(X, load6(W, p, W_A))
        if jt != FIXED:
            j = idata[k, 2]
            V, A = add_joint_motion(V, A, jt, axis(fdata, k), qd[j], qdd[j])
        store6(W, k, W_V, V)
        store6(W, k, W_A, A)
        # f = I a + v x* (I v) - F_ext
        store6(W, k, W_F, body_force(load13(fdata, k, C_M), V, A))
        if has_fext:
            # world rotation of link k: Rw_k = Rw_p R
            for i in range(3):
                for jj in range(3):
                    s = 0.0
                    for l in range(3):
                        s += W[p, W_RW + 3 * i + l] * W[k, W_R + 3 * l + jj]
                    W[k, W_RW + 3 * i + jj] = s
            for i in range(3):
                s_m = 0.0
                s_f = 0.0
                for l in range(3):
                    r = W[k, W_RW + 3 * l + i]
                    s_m += r * fext[k, l]
                    s_f += r * fext[k, 3 + l]
                W[k, W_F + i] -= s_m
                W[k, W_F + 3 + i] -= s_f
    # backward pass
    for k in range(nl - 1, 0, -1):
        p = idata[k, 0]
        jt = idata[k, 1]
        if jt != FIXED:
            tau[idata[k, 2]] = joint_force(jt, axis(fdata, k), load6(W, k, W_F))
        if p > 0:
            _force_to_parent_add(W, k, p, W_F)


@njit(cache=True, fastmath=_FM, inline="always")
def _force_to_parent_add(W, k, p, col):
    """W[p, col:col+6] += X_k^T W[k, col:col+6] (force from link k's frame to its parent's)."""
    m0, m1, m2, f0, f1, f2 = force_to_parent(pose(W, k), load6(W, k, col))
    W[p, col] += m0
    W[p, col + 1] += m1
    W[p, col + 2] += m2
    W[p, col + 3] += f0
    W[p, col + 4] += f1
    W[p, col + 5] += f2


# composite inertia columns in the CRBA work array (after R, t): m, h (3), Io (9)
W_CM, W_CH, W_CI = 12, 13, 16


@njit(cache=True, fastmath=_FM)
def crba_core(idata, fdata, q, M, W):
    """Composite rigid body algorithm: joint-space mass matrix M (dof x dof), filled in place."""
    nl = idata.shape[0]
    n = M.shape[0]
    for i in range(n):
        for j in range(n):
            M[i, j] = 0.0
    for k in range(1, nl):
        joint_transform(idata, fdata, q, k, W)
        for i in range(13):
            W[k, W_CM + i] = fdata[k, C_M + i]   # m, h (3), Io (9): contiguous in fdata and in W
    for k in range(nl - 1, 0, -1):
        # column(s) of M for the joint of link k: F = Ic S, walk to the root
        jt = idata[k, 1]
        p = idata[k, 0]
        if jt != FIXED:
            a = axis(fdata, k)
            F = inertia_times(load13(W, k, W_CM), motion_subspace(jt, a))
            vi = idata[k, 2]
            M[vi, vi] = joint_force(jt, a, F)
            j = k
            while idata[j, 0] > 0:
                F = force_to_parent(pose(W, j), F)   # F to the parent's frame
                j = idata[j, 0]
                jtj = idata[j, 1]
                if jtj != FIXED:
                    val = joint_force(jtj, axis(fdata, j), F)
                    M[idata[j, 2], vi] = val
                    M[vi, idata[j, 2]] = val
        if p > 0:
            # composite inertia of k added to its parent
            c = inertia_to_parent(pose(W, k), load13(W, k, W_CM))
            for i in range(13):
                W[p, W_CM + i] += c[i]


@njit(cache=True, fastmath=_FM)
def all_finite(x):
    for i in range(x.shape[0]):
        if not math.isfinite(x[i]):
            return False
    return True


@njit(cache=True, fastmath=_FM)
def cholesky_solve(M, b, L):
    """Solve M x = b in place (b <- x) by Cholesky; returns False if M is not positive definite.

    L's diagonal holds the reciprocals 1/L_jj (one division per row)."""
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


@njit(cache=True, fastmath=_FM)
def fd_core(idata, fdata, q, qd, tau, gx, gy, gz, fext, has_fext, qdd, W, M, L, zero):
    """Forward dynamics by CRBA + RNEA bias + Cholesky: qdd = M^-1 (tau - C qd - g + J^T F).

    Returns False (and qdd = nan) when M is singular (massless links).
    """
    n = qdd.shape[0]
    rnea_core(idata, fdata, q, qd, zero, gx, gy, gz, fext, has_fext, qdd, W)
    for i in range(n):
        qdd[i] = tau[i] - qdd[i]
    crba_core(idata, fdata, q, M, W)
    ok = cholesky_solve(M, qdd, L) and all_finite(qdd)
    if not ok:  # all-nan, so that one element tells the caller
        for i in range(n):
            qdd[i] = np.nan
    return ok


@njit(cache=True, fastmath=_FM)
def fk_core(idata, fdata, q, T, W):
    """World pose (4x4) of every link; the root at the identity."""
    nl = idata.shape[0]
    for i in range(4):
        for j in range(4):
            T[0, i, j] = 1.0 if i == j else 0.0
    for k in range(1, nl):
        p = idata[k, 0]
        joint_transform(idata, fdata, q, k, W)
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


# ---------------------------------------------------------------------------- entry points
@njit(cache=True, fastmath=_FM)
def rnea1(idata, fdata, q, qd, qdd, gx, gy, gz, fext, has_fext):
    """Single-configuration RNEA; an empty array if an input is not finite."""
    if not (all_finite(q) and all_finite(qd) and all_finite(qdd)):
        return np.empty(0)
    tau = np.empty(q.shape[0])
    W = np.empty((idata.shape[0], NW))
    rnea_core(idata, fdata, q, qd, qdd, gx, gy, gz, fext, has_fext, tau, W)
    return tau


@njit(cache=True, fastmath=_FM)
def crba1(idata, fdata, q):
    """Single-configuration mass matrix; an empty array if q is not finite."""
    if not all_finite(q):
        return np.empty((0, 0))
    n = q.shape[0]
    M = np.empty((n, n))
    W = np.empty((idata.shape[0], NW))
    crba_core(idata, fdata, q, M, W)
    return M


@njit(cache=True, fastmath=_FM)
def fd1(idata, fdata, q, qd, tau, gx, gy, gz, fext, has_fext):
    """Single-configuration forward dynamics; empty if an input is not finite, nan if M is singular."""
    if not (all_finite(q) and all_finite(qd) and all_finite(tau)):
        return np.empty(0)
    n = q.shape[0]
    qdd = np.empty(n)
    W = np.empty((idata.shape[0], NW))
    M = np.empty((n, n))
    L = np.empty((n, n))
    zero = np.zeros(n)
    fd_core(idata, fdata, q, qd, tau, gx, gy, gz, fext, has_fext, qdd, W, M, L, zero)
    return qdd


@njit(cache=True, fastmath=_FM)
def fk_batch(idata, fdata, Q):
    N = Q.shape[0]
    nl = idata.shape[0]
    T = np.empty((N, nl, 4, 4))
    W = np.empty((nl, NW))
    for b in range(N):
        fk_core(idata, fdata, Q[b], T[b], W)
    return T


# ---------------------------------------------------------------------------- batch-inner kernels
# For batches, the same recursion runs over a block of BS configurations at once with the block
# index innermost ("structure of arrays"), so that LLVM vectorises every per-link step with
# SIMD across configurations. Branches on the joint type become 0/1 factors.
BS = 32


@njit(cache=True)
def sincos_block(Q, b0, nb, j, T):
    """T[0, b] = sin(Q[b0 + b, j]), T[1, b] = 1 - cos(Q[b0 + b, j]) for b < nb."""
    big = 0.0
    for b in range(nb):
        big = max(big, abs(Q[b0 + b, j]))
    if big > 1e7:
        for b in range(nb):
            T[0, b] = math.sin(Q[b0 + b, j])
            T[1, b] = 1.0 - math.cos(Q[b0 + b, j])
        return
    for b in range(nb):
        T[0, b], T[1, b] = sin_1mcos_poly(Q[b0 + b, j])


@njit(cache=True, fastmath=_FM)
def rnea_block(idata, fdata, Q, QD, QDD, b0, nb, gx, gy, gz, FEXT, has_fext, tau, W, T):
    """RNEA for rows b0 .. b0+nb of Q, QD, QDD into tau; W (nl, NW, BS), T (4, BS) scratch."""
    nl = idata.shape[0]
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
    for k in range(1, nl):
        p = idata[k, 0]
        jt = idata[k, 1]
        j = idata[k, 2]
        link_transform_block(idata, fdata, Q, b0, nb, k, W, T)
        if jt != FIXED:
            for b in range(nb):
                T[2, b] = QD[b0 + b, j]
                T[3, b] = QDD[b0 + b, j]
        else:
            for b in range(nb):
                T[2, b] = 0.0
                T[3, b] = 0.0
        a = axis(fdata, k)
        I = load13(fdata, k, C_M)
        for b in range(nb):
            X = pose_block(W, k, b)
            V, A = add_joint_motion(motion_to_child(X, load6_block(W, p, W_V, b)),
                                    motion_to_child(X, load6_block(W, p, W_A, b)), jt, a, T[2, b], T[3, b])
            store6_block(W, k, W_V, b, V)
            store6_block(W, k, W_A, b, A)
            store6_block(W, k, W_F, b, body_force(I, V, A))
        if has_fext:
            for b in range(nb):
                fb = b0 + b if nf > 1 else 0
                for i in range(3):
                    for jj in range(3):
                        s = 0.0
                        for l in range(3):
                            s += W[p, W_RW + 3 * i + l, b] * W[k, W_R + 3 * l + jj, b]
                        W[k, W_RW + 3 * i + jj, b] = s
                for i in range(3):
                    s_m = 0.0
                    s_f = 0.0
                    for l in range(3):
                        r = W[k, W_RW + 3 * l + i, b]
                        s_m += r * FEXT[fb, k, l]
                        s_f += r * FEXT[fb, k, 3 + l]
                    W[k, W_F + i, b] -= s_m
                    W[k, W_F + 3 + i, b] -= s_f
    # backward pass
    for k in range(nl - 1, 0, -1):
        p = idata[k, 0]
        jt = idata[k, 1]
        j = idata[k, 2]
        if jt != FIXED:
            a = axis(fdata, k)
            for b in range(nb):
                tau[b0 + b, j] = joint_force(jt, a, load6_block(W, k, W_F, b))
        if p > 0:
            for b in range(nb):
                m0, m1, m2, f0, f1, f2 = force_to_parent(pose_block(W, k, b), load6_block(W, k, W_F, b))
                W[p, W_F, b] += m0
                W[p, W_F + 1, b] += m1
                W[p, W_F + 2, b] += m2
                W[p, W_F + 3, b] += f0
                W[p, W_F + 4, b] += f1
                W[p, W_F + 5, b] += f2


@njit(cache=True, parallel=True, fastmath=_FM)
def rnea_batch(idata, fdata, Q, QD, QDD, gx, gy, gz, FEXT, has_fext):
    """Batched RNEA over rows of Q, QD, QDD (N, dof); FEXT (1 or N, nl, 6). One prange
    iteration per block of BS rows (dynamic scheduling: see ``numba.parallel_chunksize``)."""
    N = Q.shape[0]
    tau = np.empty((N, Q.shape[1]))
    nblocks = (N + BS - 1) // BS
    for blk in prange(nblocks):
        W = np.empty((idata.shape[0], NW, BS))
        T = np.empty((4, BS))
        b0 = blk * BS
        rnea_block(idata, fdata, Q, QD, QDD, b0, min(BS, N - b0), gx, gy, gz, FEXT, has_fext,
                   tau, W, T)
    return tau


@njit(cache=True, parallel=True, fastmath=_FM)
def fd_batch(idata, fdata, Q, QD, TAU, gx, gy, gz, FEXT, has_fext, QDD0):
    """Batched forward dynamics: bias forces by the block RNEA (q'' = 0), mass matrices by the
    block CRBA, then a Cholesky solve per row. ``QDD0``: zeros shaped like Q (allocated by the
    caller: an allocation here would be redone per parallel chunk). Rows whose M is singular
    (or that overflow) come back all-nan."""
    N, n = Q.shape
    qdd = np.empty((N, n))
    nblocks = (N + BS - 1) // BS
    for blk in prange(nblocks):
        W = np.empty((idata.shape[0], NW, BS))
        T = np.empty((4, BS))
        F = np.empty((6, BS))
        Mb = np.empty((BS, n, n))
        L = np.empty((n, n))
        b0 = blk * BS
        nb = min(BS, N - b0)
        rnea_block(idata, fdata, Q, QD, QDD0, b0, nb, gx, gy, gz, FEXT, has_fext, qdd, W, T)
        crba_block(idata, fdata, Q, b0, nb, Mb, 0, W, T, F)
        for b in range(b0, b0 + nb):
            for i in range(n):
                qdd[b, i] = TAU[b, i] - qdd[b, i]
            if not (cholesky_solve(Mb[b - b0], qdd[b], L) and all_finite(qdd[b])):
                for i in range(n):
                    qdd[b, i] = np.nan
    return qdd


@njit(cache=True, fastmath=_FM, inline="always")
def link_transform_block(idata, fdata, Q, b0, nb, k, W, T):
    """Joint transform (R, t) of link k for rows b0 .. b0+nb of Q into W[k, W_R/W_T, b]
    (T[0:2] scratch): the block form of :func:`joint_transform`."""
    jt = idata[k, 1]
    j = idata[k, 2]
    if jt == REVOLUTE:
        sincos_block(Q, b0, nb, j, T)
        for i in range(9):
            r0 = fdata[k, C_R0 + i]
            ra = fdata[k, C_A + i]
            rb = fdata[k, C_B + i]
            for b in range(nb):
                W[k, W_R + i, b] = r0 + T[0, b] * ra + T[1, b] * rb
        for i in range(3):
            t0 = fdata[k, C_P0 + i]
            for b in range(nb):
                W[k, W_T + i, b] = t0
    else:
        for i in range(9):
            r0 = fdata[k, C_R0 + i]
            for b in range(nb):
                W[k, W_R + i, b] = r0
        for i in range(3):
            t0 = fdata[k, C_P0 + i]
            di = fdata[k, C_D + i]
            if jt == PRISMATIC:
                for b in range(nb):
                    W[k, W_T + i, b] = t0 + di * Q[b0 + b, j]
            else:
                for b in range(nb):
                    W[k, W_T + i, b] = t0


@njit(cache=True, fastmath=_FM)
def block_transforms(idata, fdata, Q, b0, nb, W, T):
    """Joint transforms (R, t) of every link for rows b0 .. b0+nb of Q into W[k, W_R/W_T, b]."""
    for k in range(1, idata.shape[0]):
        link_transform_block(idata, fdata, Q, b0, nb, k, W, T)


@njit(cache=True, fastmath=_FM)
def crba_block(idata, fdata, Q, b0, nb, M, mo, W, T, F):
    """Mass matrices of rows b0 .. b0+nb of Q into M[mo + b] (block-inner CRBA).

    W (nl, NW, BS): transforms and composite inertias; T (4, BS), F (6, BS) scratch."""
    nl = idata.shape[0]
    n = M.shape[1]
    for b in range(nb):
        for i in range(n):
            for jj in range(n):
                M[mo + b, i, jj] = 0.0
    block_transforms(idata, fdata, Q, b0, nb, W, T)
    for k in range(1, nl):
        for c in range(13):
            v = fdata[k, C_M + c]     # m, h (3), Io (9) are contiguous in fdata and in W
            for b in range(nb):
                W[k, W_CM + c, b] = v
    for k in range(nl - 1, 0, -1):
        jt = idata[k, 1]
        p = idata[k, 0]
        if jt != FIXED:
            a = axis(fdata, k)
            S = motion_subspace(jt, a)
            vi = idata[k, 2]
            for b in range(nb):
                Fb = inertia_times(load13_block(W, k, W_CM, b), S)   # F = Ic S
                M[mo + b, vi, vi] = joint_force(jt, a, Fb)
                F[0, b], F[1, b], F[2, b], F[3, b], F[4, b], F[5, b] = Fb
            j = k
            while idata[j, 0] > 0:
                for b in range(nb):
                    F[0, b], F[1, b], F[2, b], F[3, b], F[4, b], F[5, b] = force_to_parent(
                        pose_block(W, j, b), (F[0, b], F[1, b], F[2, b], F[3, b], F[4, b], F[5, b]))
                j = idata[j, 0]
                jtj = idata[j, 1]
                if jtj != FIXED:
                    vj = idata[j, 2]
                    aj = axis(fdata, j)
                    for b in range(nb):
                        val = joint_force(jtj, aj, (F[0, b], F[1, b], F[2, b], F[3, b], F[4, b], F[5, b]))
                        M[mo + b, vj, vi] = val
                        M[mo + b, vi, vj] = val
        if p > 0:
            for b in range(nb):
                c = inertia_to_parent(pose_block(W, k, b), load13_block(W, k, W_CM, b))
                for i in range(13):
                    W[p, W_CM + i, b] += c[i]


@njit(cache=True, parallel=True, fastmath=_FM)
def crba_batch(idata, fdata, Q):
    N, n = Q.shape
    M = np.empty((N, n, n))
    nblocks = (N + BS - 1) // BS
    for blk in prange(nblocks):
        W = np.empty((idata.shape[0], NW, BS))
        T = np.empty((4, BS))
        F = np.empty((6, BS))
        b0 = blk * BS
        crba_block(idata, fdata, Q, b0, min(BS, N - b0), M, b0, W, T, F)
    return M


# ---------------------------------------------------------------------------- lean entry points
# Explicit signatures: the dispatcher never compiles another specialisation, and any other
# argument type (2-D, read-only, non-contiguous, float32, lists) raises TypeError at once, which
# the Python wrapper takes as "use the general path"; so does the ValueError raised for lengths
# that do not match dof or non-finite values (the general path then raises the clear error).
_V = "float64[::1]"
_MODEL = "float64[::1]"


@njit(cache=True)
def unpack(packed):
    """(idata, fdata) views of a model packed by :func:`pack` (one argument instead of two:
    each array argument costs ~0.1 us of dispatch)."""
    nl = np.int64(packed[0])
    fdata = packed[1:1 + nl * NF].reshape((nl, NF))
    idata = packed[1 + nl * NF:1 + nl * NF + 4 * nl].view(np.int64).reshape((nl, 4))
    return idata, fdata


def pack(idata: np.ndarray, fdata: np.ndarray) -> np.ndarray:
    """``[nl, fdata.ravel(), idata.ravel() as int64 bits]`` as one float64 array."""
    nl = idata.shape[0]
    out = np.empty(1 + nl * NF + 4 * nl)
    out[0] = nl
    out[1:1 + nl * NF] = fdata.ravel()
    out[1 + nl * NF:].view(np.int64)[:] = idata.ravel()
    return out


@njit(cache=True, fastmath=_FM, inline="always")
def check_vectors(n, x, y, z):
    """ValueError unless x, y, z have length n and are finite (the wrapper then takes the general
    path, which raises the clear error)."""
    if x.shape[0] != n or y.shape[0] != n or z.shape[0] != n:
        raise ValueError("shape")
    if not (all_finite(x) and all_finite(y) and all_finite(z)):
        raise ValueError("not finite")


@njit(f"{_V}({_MODEL}, {_V}, {_V}, {_V})", cache=True, fastmath=_FM)
def id_fast(packed, q, qd, qdd):
    """RNEA for one configuration with the default gravity stored in the root row.

    The recursion of :func:`rnea_core` without external wrenches, written out with explicit
    array indexing: the inlined helpers that take arrays (``pose``, ``load6``, ``store6``, ...)
    each add reference-count updates of their array arguments per call (~0.3 us per call of a
    7-DOF arm); the helpers on tuples of scalars add nothing and are shared."""
    idata, fdata = unpack(packed)
    nl = idata.shape[0]
    n = idata[0, 3]
    # check_vectors written out (an inlined helper taking arrays costs reference counting)
    if q.shape[0] != n or qd.shape[0] != n or qdd.shape[0] != n:
        raise ValueError("shape")
    for i in range(n):
        if not (math.isfinite(q[i]) and math.isfinite(qd[i]) and math.isfinite(qdd[i])):
            raise ValueError("not finite")
    # one allocation: tau and the work array share a buffer (tau is returned as a view)
    buf = np.empty(n + nl * NW)
    tau = buf[:n]
    W = buf[n:].reshape((nl, NW))
    # root: at rest, acceleration -g (gravity as a fictitious base acceleration)
    for i in range(6):
        W[0, W_V + i] = 0.0
        W[0, W_A + i] = 0.0
        W[0, W_F + i] = 0.0
    W[0, W_A + 3] = -fdata[0, C_G]
    W[0, W_A + 4] = -fdata[0, C_G + 1]
    W[0, W_A + 5] = -fdata[0, C_G + 2]
    for k in range(1, nl):
        p = idata[k, 0]
        jt = idata[k, 1]
        j = idata[k, 2]
        # joint transform (R, t), as in joint_transform
        s = 0.0
        u = 0.0
        d = 0.0
        if jt == REVOLUTE:
            s, u = sin_1mcos(q[j])
        elif jt == PRISMATIC:
            d = q[j]
        for i in range(9):
            W[k, W_R + i] = fdata[k, C_R0 + i] + s * fdata[k, C_A + i] + u * fdata[k, C_B + i]
        for i in range(3):
            W[k, W_T + i] = fdata[k, C_P0 + i] + d * fdata[k, C_D + i]
        X = (W[k, W_R], W[k, W_R + 1], W[k, W_R + 2], W[k, W_R + 3], W[k, W_R + 4],
             W[k, W_R + 5], W[k, W_R + 6], W[k, W_R + 7], W[k, W_R + 8],
             W[k, W_T], W[k, W_T + 1], W[k, W_T + 2])
        V = motion_to_child(X, (W[p, W_V], W[p, W_V + 1], W[p, W_V + 2],
                                W[p, W_V + 3], W[p, W_V + 4], W[p, W_V + 5]))
        A = motion_to_child(X, (W[p, W_A], W[p, W_A + 1], W[p, W_A + 2],
                                W[p, W_A + 3], W[p, W_A + 4], W[p, W_A + 5]))
        if jt != FIXED:
            V, A = add_joint_motion(V, A, jt, (fdata[k, C_AX], fdata[k, C_AX + 1],
                                               fdata[k, C_AX + 2]), qd[j], qdd[j])
        I = (fdata[k, C_M], fdata[k, C_M + 1], fdata[k, C_M + 2], fdata[k, C_M + 3],
             fdata[k, C_M + 4], fdata[k, C_M + 5], fdata[k, C_M + 6], fdata[k, C_M + 7],
             fdata[k, C_M + 8], fdata[k, C_M + 9], fdata[k, C_M + 10], fdata[k, C_M + 11],
             fdata[k, C_M + 12])
        W[k, W_V], W[k, W_V + 1], W[k, W_V + 2], W[k, W_V + 3], W[k, W_V + 4], W[k, W_V + 5] = V
        W[k, W_A], W[k, W_A + 1], W[k, W_A + 2], W[k, W_A + 3], W[k, W_A + 4], W[k, W_A + 5] = A
        W[k, W_F], W[k, W_F + 1], W[k, W_F + 2], W[k, W_F + 3], W[k, W_F + 4], W[k, W_F + 5] = \
            body_force(I, V, A)
    # backward pass
    for k in range(nl - 1, 0, -1):
        p = idata[k, 0]
        jt = idata[k, 1]
        F = (W[k, W_F], W[k, W_F + 1], W[k, W_F + 2], W[k, W_F + 3], W[k, W_F + 4], W[k, W_F + 5])
        if jt != FIXED:
            tau[idata[k, 2]] = joint_force(jt, (fdata[k, C_AX], fdata[k, C_AX + 1],
                                                fdata[k, C_AX + 2]), F)
        if p > 0:
            X = (W[k, W_R], W[k, W_R + 1], W[k, W_R + 2], W[k, W_R + 3], W[k, W_R + 4],
                 W[k, W_R + 5], W[k, W_R + 6], W[k, W_R + 7], W[k, W_R + 8],
                 W[k, W_T], W[k, W_T + 1], W[k, W_T + 2])
            m0, m1, m2, f0, f1, f2 = force_to_parent(X, F)
            W[p, W_F] += m0
            W[p, W_F + 1] += m1
            W[p, W_F + 2] += m2
            W[p, W_F + 3] += f0
            W[p, W_F + 4] += f1
            W[p, W_F + 5] += f2
    return tau


@njit(f"float64[:,::1]({_MODEL}, {_V})", cache=True, fastmath=_FM)
def crba_fast(packed, q):
    """Mass matrix for one configuration."""
    idata, fdata = unpack(packed)
    n = idata[0, 3]
    if q.shape[0] != n or not all_finite(q):
        raise ValueError("bad q")
    M = np.empty((n, n))
    W = np.empty((idata.shape[0], NW))
    crba_core(idata, fdata, q, M, W)
    return M


@njit(f"{_V}({_MODEL}, {_V}, {_V}, {_V})", cache=True, fastmath=_FM)
def fd_fast(packed, q, qd, tau):
    """Forward dynamics for one configuration, default gravity; all-nan if M is singular."""
    idata, fdata = unpack(packed)
    n = idata[0, 3]
    check_vectors(n, q, qd, tau)
    qdd = np.empty(n)
    W = np.empty((idata.shape[0], NW))
    M = np.empty((n, n))
    L = np.empty((n, n))
    fd_core(idata, fdata, q, qd, tau, fdata[0, C_G], fdata[0, C_G + 1], fdata[0, C_G + 2],
            np.empty((0, 6)), False, qdd, W, M, L, np.zeros(n))
    return qdd
