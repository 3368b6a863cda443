"""The configuration manifold's maps as loops (:mod:`simbench.dynamics.configuration`): ``q (+) v``,
``q1 (-) q0``, the normalisation of the quaternions and the ``dexp^-1`` correction of a
Runge-Kutta-Munthe-Kaas stage, per row, on the index arrays of one model.

The formulas are those of :mod:`simbench.spatial` (``quat_exp``, ``quat_mul``, ``quat_to_matrix``,
the left Jacobian of SO(3) and its series at small angles), written on scalars and compiled
without fast-math, so that the results are the numpy ones up to rounding; the SE(3) log of a
difference takes the rotation vector from the relative quaternion (``quat_log``) rather than
from its rotation matrix, and ``J_l^-1`` in closed form instead of a 3x3 solve.

The model enters as one int64 array ``idx`` (one argument to unbox, ~0.1 us each):
``[nq, nv, base, nsc, nc, nsph, iq (nsc), iv (nsc), ic (nc), sq (nsph), sv (nsph)]`` with
``base`` 1 for a floating base (q[0:7], v[0:6]), (``iq``, ``iv``) the q and v index of each
scalar joint, ``ic`` the v index of each continuous joint (its difference wrapped to
[-pi, pi)), (``sq``, ``sv``) the q and v start of each spherical joint. Entries check the
lengths themselves (the Python fast path tests only type, dtype and dimensions) and return a
status instead of raising: ``OK`` (0), or ``BAD`` (1) for a length other than the model's, an
input holding nan or inf, a zero quaternion (the Python caller then validates and raises the
clear error).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from ._jit import entry
from .layout import ARR1, ARR2

OK, BAD = 0, 1
#: the header of ``idx``: nq, nv, base, nsc, nc, nsph
H = 6
IDX = "Array(int64, 1, 'C', readonly=True)"
_OPTS = dict(cache=True, error_model="numpy", forceinline=True)


@njit(**_OPTS)
def _finite(A, r):
    for i in range(A.shape[1]):
        if not math.isfinite(A[r, i]):
            return False
    return True


@njit(**_OPTS)
def _quat_ok(Q, r, s):
    """The quaternion at Q[r, s:s + 4] is not zero (its squared norm is positive)."""
    return Q[r, s] * Q[r, s] + Q[r, s + 1] * Q[r, s + 1] + Q[r, s + 2] * Q[r, s + 2] + \
        Q[r, s + 3] * Q[r, s + 3] > 0.0


@njit(**_OPTS)
def _norm4(x, y, z, w):
    return math.sqrt(((x * x + y * y) + z * z) + w * w)


@njit(**_OPTS)
def _quat_exp(wx, wy, wz):
    """``quat_exp``: ``(sin(t/2) w/t, cos(t/2))``, t = |w|, a series below t = 1e-4."""
    t2 = wx * wx + wy * wy + wz * wz
    t = math.sqrt(t2)
    if t < 1e-4:
        s = 0.5 - t2 / 48 + t2 * t2 / 3840
    else:
        s = math.sin(t / 2) / t
    return s * wx, s * wy, s * wz, math.cos(t / 2)


@njit(**_OPTS)
def _quat_mul(ax, ay, az, aw, bx, by, bz, bw):
    return (aw * bx + ax * bw + ay * bz - az * by, aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw, aw * bw - ax * bx - ay * by - az * bz)


@njit(**_OPTS)
def _unit_into(out, r, s, x, y, z, w):
    n = _norm4(x, y, z, w)
    out[r, s], out[r, s + 1], out[r, s + 2], out[r, s + 3] = x / n, y / n, z / n, w / n


@njit(**_OPTS)
def _quat_log(x, y, z, w):
    """``quat_log``: the rotation vector (|w| <= pi) of the quaternion, normalised first."""
    n = _norm4(x, y, z, w)
    x, y, z, w = x / n, y / n, z / n, w / n
    if w < 0:
        x, y, z, w = -x, -y, -z, -w
    s = math.sqrt(x * x + y * y + z * z)
    if s < 1e-8:
        fac = 2.0 / w
    else:
        fac = 2.0 * math.atan2(s, w) / s
    return fac * x, fac * y, fac * z


@njit(**_OPTS)
def _rotation(a, b, c, d):
    """The rotation matrix (row-major 9-tuple) of the quaternion (a, b, c, d), normalised first."""
    n = _norm4(a, b, c, d)
    x, y, z, w = a / n, b / n, c / n, d / n
    return (1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y),
            2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
            2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y))


@njit(**_OPTS)
def _cross(ax, ay, az, bx, by, bz):
    return ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx


@njit(**_OPTS)
def _left_jacobian_times(wx, wy, wz, vx, vy, vz):
    """``J_l(w) v = v + b w x v + c w x (w x v)`` (``b = (1 - cos t)/t^2``, ``c = (t - sin t)/t^3``)."""
    t2 = wx * wx + wy * wy + wz * wz
    t = math.sqrt(t2)
    if t < 1e-4:
        b = 0.5 - t2 / 24 + t2 * t2 / 720
        c = 1 / 6 - t2 / 120 + t2 * t2 / 5040
    else:
        b = (1 - math.cos(t)) / (t * t)
        c = (t - math.sin(t)) / (t ** 3)
    ax, ay, az = _cross(wx, wy, wz, vx, vy, vz)
    bx, by, bz = _cross(wx, wy, wz, ax, ay, az)
    return vx + b * ax + c * bx, vy + b * ay + c * by, vz + b * az + c * bz


@njit(**_OPTS)
def _left_jacobian_solve(wx, wy, wz, px, py, pz):
    """``J_l(w)^-1 p = p - w x p / 2 + e w x (w x p)``, ``e = (1 - t sin t / (2 (1 - cos t))) / t^2``
    (|w| <= pi)."""
    t2 = wx * wx + wy * wy + wz * wz
    t = math.sqrt(t2)
    if t < 1e-4:
        e = 1 / 12 + t2 / 720 + t2 * t2 / 30240
    else:
        e = (1 - t * math.sin(t) / (2 * (1 - math.cos(t)))) / t2
    ax, ay, az = _cross(wx, wy, wz, px, py, pz)
    bx, by, bz = _cross(wx, wy, wz, ax, ay, az)
    return px - 0.5 * ax + e * bx, py - 0.5 * ay + e * by, pz - 0.5 * az + e * bz


@njit(**_OPTS)
def _integrate_row(Q, V, r, dt, iq, iv, base, sq, sv, out):
    if not (_finite(Q, r) and _finite(V, r)):
        return BAD
    if base and not _quat_ok(Q, r, 3):
        return BAD
    for k in range(sq.shape[0]):
        if not _quat_ok(Q, r, sq[k]):
            return BAD
    for i in range(Q.shape[1]):
        out[r, i] = Q[r, i]
    for k in range(iq.shape[0]):
        out[r, iq[k]] = Q[r, iq[k]] + V[r, iv[k]] * dt
    if base:
        wx, wy, wz = V[r, 3] * dt, V[r, 4] * dt, V[r, 5] * dt
        tx, ty, tz = _left_jacobian_times(wx, wy, wz, V[r, 0] * dt, V[r, 1] * dt, V[r, 2] * dt)
        a, b, c, d = Q[r, 3], Q[r, 4], Q[r, 5], Q[r, 6]
        R = _rotation(a, b, c, d)
        out[r, 0] = Q[r, 0] + (R[0] * tx + R[1] * ty + R[2] * tz)
        out[r, 1] = Q[r, 1] + (R[3] * tx + R[4] * ty + R[5] * tz)
        out[r, 2] = Q[r, 2] + (R[6] * tx + R[7] * ty + R[8] * tz)
        ex, ey, ez, ew = _quat_exp(wx, wy, wz)
        x, y, z, w = _quat_mul(a, b, c, d, ex, ey, ez, ew)
        _unit_into(out, r, 3, x, y, z, w)
    for k in range(sq.shape[0]):
        s, t = sq[k], sv[k]
        ex, ey, ez, ew = _quat_exp(V[r, t] * dt, V[r, t + 1] * dt, V[r, t + 2] * dt)
        x, y, z, w = _quat_mul(Q[r, s], Q[r, s + 1], Q[r, s + 2], Q[r, s + 3], ex, ey, ez, ew)
        _unit_into(out, r, s, x, y, z, w)
    return OK


@njit(**_OPTS)
def _difference_row(Q0, Q1, r, iq, iv, ic, base, sq, sv, out):
    if not (_finite(Q0, r) and _finite(Q1, r)):
        return BAD
    if base and not (_quat_ok(Q0, r, 3) and _quat_ok(Q1, r, 3)):
        return BAD
    for k in range(sq.shape[0]):
        if not (_quat_ok(Q0, r, sq[k]) and _quat_ok(Q1, r, sq[k])):
            return BAD
    for i in range(out.shape[1]):
        out[r, i] = 0.0
    for k in range(iq.shape[0]):
        out[r, iv[k]] = Q1[r, iq[k]] - Q0[r, iq[k]]
    for k in range(ic.shape[0]):
        a = out[r, ic[k]]
        out[r, ic[k]] = a - 2.0 * math.pi * math.floor((a + math.pi) / (2.0 * math.pi))
    if base:
        a, b, c, d = Q0[r, 3], Q0[r, 4], Q0[r, 5], Q0[r, 6]
        dx, dy, dz, dw = _quat_mul(-a, -b, -c, d, Q1[r, 3], Q1[r, 4], Q1[r, 5], Q1[r, 6])
        wx, wy, wz = _quat_log(dx, dy, dz, dw)
        R = _rotation(a, b, c, d)
        px, py, pz = Q1[r, 0] - Q0[r, 0], Q1[r, 1] - Q0[r, 1], Q1[r, 2] - Q0[r, 2]
        bx = R[0] * px + R[3] * py + R[6] * pz     # R0^T (p1 - p0)
        by = R[1] * px + R[4] * py + R[7] * pz
        bz = R[2] * px + R[5] * py + R[8] * pz
        out[r, 0], out[r, 1], out[r, 2] = _left_jacobian_solve(wx, wy, wz, bx, by, bz)
        out[r, 3], out[r, 4], out[r, 5] = wx, wy, wz
    for k in range(sq.shape[0]):
        s, t = sq[k], sv[k]
        dx, dy, dz, dw = _quat_mul(-Q0[r, s], -Q0[r, s + 1], -Q0[r, s + 2], Q0[r, s + 3],
                                   Q1[r, s], Q1[r, s + 1], Q1[r, s + 2], Q1[r, s + 3])
        out[r, t], out[r, t + 1], out[r, t + 2] = _quat_log(dx, dy, dz, dw)
    return OK


@njit(**_OPTS)
def _normalize_row(Q, r, base, sq, out):
    if not _finite(Q, r):
        return BAD
    if base and not _quat_ok(Q, r, 3):
        return BAD
    for k in range(sq.shape[0]):
        if not _quat_ok(Q, r, sq[k]):
            return BAD
    for i in range(Q.shape[1]):
        out[r, i] = Q[r, i]
    if base:
        _unit_into(out, r, 3, Q[r, 3], Q[r, 4], Q[r, 5], Q[r, 6])
    for k in range(sq.shape[0]):
        s = sq[k]
        _unit_into(out, r, s, Q[r, s], Q[r, s + 1], Q[r, s + 2], Q[r, s + 3])
    return OK


@njit(**_OPTS)
def _unpack(idx):
    """(nq, nv, base, iq, iv, ic, sq, sv) from the model's index array (see the module
    docstring)."""
    nsc, nc, nsph = idx[3], idx[4], idx[5]
    a = H + nsc
    b = a + nsc
    c = b + nc
    d = c + nsph
    return idx[0], idx[1], idx[2], idx[H:a], idx[a:b], idx[b:c], idx[c:d], idx[d:d + nsph]


@entry(f"int64({ARR1}, {ARR1}, float64, {IDX}, float64[::1])", fastmath=False)
def integrate_one(q, v, dt, idx, out):
    """``out = q (+) v dt`` for one configuration; OK, or BAD (also for a length other than
    nq / nv, or a non-finite dt)."""
    nq, nv, base, iq, iv, ic, sq, sv = _unpack(idx)
    if q.shape[0] != nq or v.shape[0] != nv or out.shape[0] != nq or not math.isfinite(dt):
        return BAD
    return _integrate_row(q[np.newaxis], v[np.newaxis], 0, dt, iq, iv, base, sq, sv, out[np.newaxis])


@entry(f"int64({ARR2}, {ARR2}, float64, {IDX}, float64[:, ::1])", fastmath=False, nogil=True)
def integrate_rows(Q, V, dt, idx, out):
    """:func:`integrate_one` per row of Q (N, nq) and V (N, nv); the first BAD row stops it."""
    nq, nv, base, iq, iv, ic, sq, sv = _unpack(idx)
    n = Q.shape[0]
    if Q.shape[1] != nq or V.shape[1] != nv or V.shape[0] != n or out.shape[0] != n or \
            out.shape[1] != nq or not math.isfinite(dt):
        return BAD
    for r in range(n):
        if _integrate_row(Q, V, r, dt, iq, iv, base, sq, sv, out) != OK:
            return BAD
    return OK


@entry(f"int64({ARR1}, {ARR1}, {IDX}, float64[::1])", fastmath=False)
def difference_one(q0, q1, idx, out):
    """``out = q1 (-) q0`` for one pair of configurations; OK or BAD."""
    nq, nv, base, iq, iv, ic, sq, sv = _unpack(idx)
    if q0.shape[0] != nq or q1.shape[0] != nq or out.shape[0] != nv:
        return BAD
    return _difference_row(q0[np.newaxis], q1[np.newaxis], 0, iq, iv, ic, base, sq, sv,
                           out[np.newaxis])


@entry(f"int64({ARR2}, {ARR2}, {IDX}, float64[:, ::1])", fastmath=False, nogil=True)
def difference_rows(Q0, Q1, idx, out):
    """:func:`difference_one` per row."""
    nq, nv, base, iq, iv, ic, sq, sv = _unpack(idx)
    n = Q0.shape[0]
    if Q0.shape[1] != nq or Q1.shape[1] != nq or Q1.shape[0] != n or out.shape[0] != n or \
            out.shape[1] != nv:
        return BAD
    for r in range(n):
        if _difference_row(Q0, Q1, r, iq, iv, ic, base, sq, sv, out) != OK:
            return BAD
    return OK


@entry(f"int64({ARR2}, {IDX}, float64[:, ::1])", fastmath=False, nogil=True)
def normalize_rows(Q, idx, out):
    """Each row of Q with its quaternions scaled to norm 1; OK or BAD."""
    nq, nv, base, iq, iv, ic, sq, sv = _unpack(idx)
    n = Q.shape[0]
    if Q.shape[1] != nq or out.shape[0] != n or out.shape[1] != nq:
        return BAD
    for r in range(n):
        if _normalize_row(Q, r, base, sq, out) != OK:
            return BAD
    return OK


@entry(f"int64({ARR1}, {ARR1}, {IDX}, float64[::1])", fastmath=False)
def dexp_inv_one(u, v, idx, out):
    """The rate of the increment u at velocity v (:func:`..configuration.tangent_dexp_inv`):
    ``v + [u, v]/2 + [u, [u, v]]/12`` for the base (twists in (w, v) order) and the spherical
    joints, v elsewhere; OK, or BAD for a length other than nv."""
    nq, nv, base, iq, iv, ic, sq, sv = _unpack(idx)
    if u.shape[0] != nv or v.shape[0] != nv or out.shape[0] != nv:
        return BAD
    for i in range(v.shape[0]):
        out[i] = v[i]
    if base:
        wx, wy, wz, lx, ly, lz = u[3], u[4], u[5], u[0], u[1], u[2]
        ax, ay, az, bx, by, bz = v[3], v[4], v[5], v[0], v[1], v[2]
        # ad(u) (a, b) = (w x a, l x a + w x b)
        c1x, c1y, c1z = _cross(wx, wy, wz, ax, ay, az)
        e1x, e1y, e1z = _cross(lx, ly, lz, ax, ay, az)
        f1x, f1y, f1z = _cross(wx, wy, wz, bx, by, bz)
        d1x, d1y, d1z = e1x + f1x, e1y + f1y, e1z + f1z
        c2x, c2y, c2z = _cross(wx, wy, wz, c1x, c1y, c1z)
        e2x, e2y, e2z = _cross(lx, ly, lz, c1x, c1y, c1z)
        f2x, f2y, f2z = _cross(wx, wy, wz, d1x, d1y, d1z)
        out[3] = ax + 0.5 * c1x + c2x / 12.0
        out[4] = ay + 0.5 * c1y + c2y / 12.0
        out[5] = az + 0.5 * c1z + c2z / 12.0
        out[0] = bx + 0.5 * d1x + (e2x + f2x) / 12.0
        out[1] = by + 0.5 * d1y + (e2y + f2y) / 12.0
        out[2] = bz + 0.5 * d1z + (e2z + f2z) / 12.0
    for k in range(sv.shape[0]):
        t = sv[k]
        abx, aby, abz = _cross(u[t], u[t + 1], u[t + 2], v[t], v[t + 1], v[t + 2])
        cx, cy, cz = _cross(u[t], u[t + 1], u[t + 2], abx, aby, abz)
        out[t] = v[t] + 0.5 * abx + cx / 12.0
        out[t + 1] = v[t + 1] + 0.5 * aby + cy / 12.0
        out[t + 2] = v[t + 2] + 0.5 * abz + cz / 12.0
    return OK


@entry(f"boolean({ARR1}, {ARR1})", fastmath=False)
def finite2(a, b):
    """Every entry of a and b is finite."""
    return _finite(a[np.newaxis], 0) and _finite(b[np.newaxis], 0)
