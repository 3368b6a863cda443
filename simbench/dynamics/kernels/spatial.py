"""Spatial algebra on tuples of scalars, shared by every kernel (no arrays: nothing to unbox or
reference-count, so a driver pays only for the arithmetic).

Conventions (Featherstone, *Rigid Body Dynamics Algorithms*, in the [angular; linear] order of
the "AI Robotics" lecture slides, *Dynamics*): a twist ``V = (w, v)``, a wrench ``F = (m, f)``,
both in a body's frame. ``X = (R (9, row-major), t (3))`` is the pose of a child body in its
parent's frame. An inertia is the 10 numbers ``I = (m, h (3), Io (6: xx, xy, xz, yy, yz, zz))``
with ``h = m c`` and ``Io`` (symmetric) about the body origin.

* motion to the child: ``w_c = R^T w_p``, ``v_c = R^T (v_p + w_p x t)``;
* force to the parent: ``f_p = R f_c``, ``m_p = R m_c + t x (R f_c)``;
* ``I V = (Io w + h x v, m v - h x w)``; the Newton-Euler force ``I A + V x* (I V)``.
"""
from __future__ import annotations

import math

import numpy as np

from ._jit import jit, step

# Vectorisable sin/cos (Cephes sin.c: reduction by pi/4 in three parts, minimax polynomials),
# 1-2 ulp for |x| < 1e7; compiled with FMA contraction only, nothing reassociated (y * _DP1 is
# exact either way; a fused multiply-add rounds the other steps once instead of twice): measured
# 2 ulp at most, as without contraction, and 1.3x faster.
_DP1, _DP2, _DP3 = 7.85398125648498535156E-1, 3.77489470793079817668E-8, 2.69515142907905952645E-15
_S0, _S1, _S2 = 1.58962301576546568060E-10, -2.50507477628578072866E-8, 2.75573136213857245213E-6
_S3, _S4, _S5 = -1.98412698295895385996E-4, 8.33333333332211858878E-3, -1.66666666666666307295E-1
_C0, _C1, _C2 = -1.13585365213876817300E-11, 2.08757008419747316778E-9, -2.75573141792967388112E-7
_C3, _C4, _C5 = 2.48015872888517045348E-5, -1.38888888888730564116E-3, 4.16666666666665929218E-2
_FOPI = 1.27323954473516268615
#: above this |angle| the polynomials lose accuracy and math.sin/cos are used
SINCOS_MAX = 1e7


@jit(inline="always", fastmath={"contract"})
def sin_1mcos_poly(x):
    """(sin x, 1 - cos x) by the polynomials, for |x| < SINCOS_MAX (no branch: vectorises).

    The octant stays a float (an integer below 2^24: every step is exact), and ``np.floor``
    returns a float: numba's ``math.floor`` returns an int64, and AVX2 converts doubles to
    int64 only one lane at a time. Measured on a block: 1.5x faster than through
    ``math.floor`` (the same bits), and FMA contraction another 1.3x (2 ulp at most either
    way)."""
    ax = abs(x)
    y = np.floor(ax * _FOPI)
    y += y - 2.0 * np.floor(0.5 * y)           # odd octants: the next one (Cephes' j += j & 1)
    k = y - 8.0 * np.floor(0.125 * y)          # the octant modulo 8: 0, 2, 4 or 6
    z = ((ax - y * _DP1) - y * _DP2) - y * _DP3
    zz = z * z
    ps = z + z * zz * (((((_S0 * zz + _S1) * zz + _S2) * zz + _S3) * zz + _S4) * zz + _S5)
    pc = 1.0 - 0.5 * zz + zz * zz * (((((_C0 * zz + _C1) * zz + _C2) * zz + _C3) * zz + _C4) * zz + _C5)
    swap = (k == 2.0) | (k == 6.0)
    sn = pc if swap else ps
    cs = ps if swap else pc
    ssign = -1.0 if k >= 4.0 else 1.0
    if x < 0:
        ssign = -ssign
    csign = -1.0 if (k == 2.0) | (k == 4.0) else 1.0
    return ssign * sn, 1.0 - csign * cs


@step
def sin_1mcos(x):
    """(sin x, 1 - cos x): the polynomials, or math.sin/cos beyond SINCOS_MAX."""
    if abs(x) > SINCOS_MAX:
        return math.sin(x), 1.0 - math.cos(x)
    return sin_1mcos_poly(x)


@step
def quat_rotation(x, y, z, w):
    """Rotation matrix (row-major 9-tuple) of the quaternion (x, y, z, w), which need not be of
    unit norm: ``R = 1 + 2/|q|^2 (w [u] + [u]^2)`` with ``u = (x, y, z)``."""
    s = 2.0 / (x * x + y * y + z * z + w * w)
    xs, ys, zs = x * s, y * s, z * s
    wx, wy, wz = w * xs, w * ys, w * zs
    xx, xy, xz = x * xs, x * ys, x * zs
    yy, yz, zz = y * ys, y * zs, z * zs
    return (1.0 - (yy + zz), xy - wz, xz + wy,
            xy + wz, 1.0 - (xx + zz), yz - wx,
            xz - wy, yz + wx, 1.0 - (xx + yy))


@step
def rot_mul(A, B):
    """A B for row-major 3x3 9-tuples."""
    a0, a1, a2, a3, a4, a5, a6, a7, a8 = A
    b0, b1, b2, b3, b4, b5, b6, b7, b8 = B
    return (a0 * b0 + a1 * b3 + a2 * b6, a0 * b1 + a1 * b4 + a2 * b7, a0 * b2 + a1 * b5 + a2 * b8,
            a3 * b0 + a4 * b3 + a5 * b6, a3 * b1 + a4 * b4 + a5 * b7, a3 * b2 + a4 * b5 + a5 * b8,
            a6 * b0 + a7 * b3 + a8 * b6, a6 * b1 + a7 * b4 + a8 * b7, a6 * b2 + a7 * b5 + a8 * b8)


@step
def rot_vec(R, x, y, z):
    """R (x, y, z)."""
    return (R[0] * x + R[1] * y + R[2] * z, R[3] * x + R[4] * y + R[5] * z,
            R[6] * x + R[7] * y + R[8] * z)


@step
def motion_to_child(X, V):
    """Parent twist (or acceleration) V in the child frame: (R^T w, R^T (v + w x t))."""
    R0, R1, R2, R3, R4, R5, R6, R7, R8, tx, ty, tz = X
    w0, w1, w2, v0, v1, v2 = V
    vx = v0 + w1 * tz - w2 * ty
    vy = v1 + w2 * tx - w0 * tz
    vz = v2 + w0 * ty - w1 * tx
    return (R0 * w0 + R3 * w1 + R6 * w2, R1 * w0 + R4 * w1 + R7 * w2, R2 * w0 + R5 * w1 + R8 * w2,
            R0 * vx + R3 * vy + R6 * vz, R1 * vx + R4 * vy + R7 * vz, R2 * vx + R5 * vy + R8 * vz)


@step
def motion_to_parent(X, V):
    """Child twist V = (w, v) in the parent frame: (R w, R v + t x (R w))."""
    R0, R1, R2, R3, R4, R5, R6, R7, R8, tx, ty, tz = X
    w0, w1, w2, v0, v1, v2 = V
    a0 = R0 * w0 + R1 * w1 + R2 * w2
    a1 = R3 * w0 + R4 * w1 + R5 * w2
    a2 = R6 * w0 + R7 * w1 + R8 * w2
    return (a0, a1, a2, R0 * v0 + R1 * v1 + R2 * v2 + (ty * a2 - tz * a1),
            R3 * v0 + R4 * v1 + R5 * v2 + (tz * a0 - tx * a2),
            R6 * v0 + R7 * v1 + R8 * v2 + (tx * a1 - ty * a0))


@step
def pose_mul(Xp, X):
    """The pose X (in the parent frame) in the frame where the parent's pose is Xp:
    (Rp R, tp + Rp t)."""
    R = rot_mul(Xp[:9], X[:9])
    t = rot_vec(Xp[:9], X[9], X[10], X[11])
    return (R[0], R[1], R[2], R[3], R[4], R[5], R[6], R[7], R[8],
            Xp[9] + t[0], Xp[10] + t[1], Xp[11] + t[2])


@step
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


@step
def motion_cross(V, U):
    """Spatial motion cross product V x U = (w x u_w, w x u_v + v x u_w)."""
    w0, w1, w2, v0, v1, v2 = V
    a0, a1, a2, b0, b1, b2 = U
    return (w1 * a2 - w2 * a1, w2 * a0 - w0 * a2, w0 * a1 - w1 * a0,
            w1 * b2 - w2 * b1 + v1 * a2 - v2 * a1,
            w2 * b0 - w0 * b2 + v2 * a0 - v0 * a2,
            w0 * b1 - w1 * b0 + v0 * a1 - v1 * a0)


@step
def add6(A, B):
    return (A[0] + B[0], A[1] + B[1], A[2] + B[2], A[3] + B[3], A[4] + B[4], A[5] + B[5])


@step
def sub6(A, B):
    return (A[0] - B[0], A[1] - B[1], A[2] - B[2], A[3] - B[3], A[4] - B[4], A[5] - B[5])


@step
def scale6(s, A):
    return (s * A[0], s * A[1], s * A[2], s * A[3], s * A[4], s * A[5])


@step
def dot6(A, B):
    return A[0] * B[0] + A[1] * B[1] + A[2] * B[2] + A[3] * B[3] + A[4] * B[4] + A[5] * B[5]


@step
def inertia_times(I, V):
    """Spatial inertia about the body origin times V = (w, u): (Io w + h x u, m u - h x w)."""
    m, hx, hy, hz, ixx, ixy, ixz, iyy, iyz, izz = I
    w0, w1, w2, u0, u1, u2 = V
    return (ixx * w0 + ixy * w1 + ixz * w2 + (hy * u2 - hz * u1),
            ixy * w0 + iyy * w1 + iyz * w2 + (hz * u0 - hx * u2),
            ixz * w0 + iyz * w1 + izz * w2 + (hx * u1 - hy * u0),
            m * u0 - (hy * w2 - hz * w1), m * u1 - (hz * w0 - hx * w2), m * u2 - (hx * w1 - hy * w0))


@step
def body_force(I, V, A):
    """Newton-Euler force of a body: I A + V x* (I V), V x* M = (w x Ma + u x Ml, w x Ml)."""
    w0, w1, w2, u0, u1, u2 = V
    ma0, ma1, ma2, ml0, ml1, ml2 = inertia_times(I, V)
    fa0, fa1, fa2, fl0, fl1, fl2 = inertia_times(I, A)
    return (fa0 + w1 * ma2 - w2 * ma1 + u1 * ml2 - u2 * ml1,
            fa1 + w2 * ma0 - w0 * ma2 + u2 * ml0 - u0 * ml2,
            fa2 + w0 * ma1 - w1 * ma0 + u0 * ml1 - u1 * ml0,
            fl0 + w1 * ml2 - w2 * ml1, fl1 + w2 * ml0 - w0 * ml2, fl2 + w0 * ml1 - w1 * ml0)


@step
def inertia_to_parent(X, I):
    """Inertia I = (m, h, Io) of a child (about its origin, its axes) about the parent's origin,
    parent axes: (m, h' + m t, R Io R^T - [t][h'] - [h'][t] - m [t]^2) with h' = R h."""
    R0, R1, R2, R3, R4, R5, R6, R7, R8, tx, ty, tz = X
    m, c0, c1, c2, I0, I1, I2, I4, I5, I8 = I
    h0 = R0 * c0 + R1 * c1 + R2 * c2
    h1 = R3 * c0 + R4 * c1 + R5 * c2
    h2 = R6 * c0 + R7 * c1 + R8 * c2
    A0 = R0 * I0 + R1 * I1 + R2 * I2
    A1 = R0 * I1 + R1 * I4 + R2 * I5
    A2 = R0 * I2 + R1 * I5 + R2 * I8
    A3 = R3 * I0 + R4 * I1 + R5 * I2
    A4 = R3 * I1 + R4 * I4 + R5 * I5
    A5 = R3 * I2 + R4 * I5 + R5 * I8
    A6 = R6 * I0 + R7 * I1 + R8 * I2
    A7 = R6 * I1 + R7 * I4 + R8 * I5
    A8 = R6 * I2 + R7 * I5 + R8 * I8
    X00 = A0 * R0 + A1 * R1 + A2 * R2
    X01 = A0 * R3 + A1 * R4 + A2 * R5
    X02 = A0 * R6 + A1 * R7 + A2 * R8
    X11 = A3 * R3 + A4 * R4 + A5 * R5
    X12 = A3 * R6 + A4 * R7 + A5 * R8
    X22 = A6 * R6 + A7 * R7 + A8 * R8
    d = 2.0 * (tx * h0 + ty * h1 + tz * h2) + m * (tx * tx + ty * ty + tz * tz)
    return (m, h0 + m * tx, h1 + m * ty, h2 + m * tz,
            X00 - 2.0 * tx * h0 - m * tx * tx + d,
            X01 - tx * h1 - h0 * ty - m * tx * ty,
            X02 - tx * h2 - h0 * tz - m * tx * tz,
            X11 - 2.0 * ty * h1 - m * ty * ty + d,
            X12 - ty * h2 - h1 * tz - m * ty * tz,
            X22 - 2.0 * tz * h2 - m * tz * tz + d)
