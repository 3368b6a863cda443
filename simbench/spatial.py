"""Batched SE(3) / se(3) algebra with numpy (the "AI Robotics" lecture slides,
*Dynamics*; Michael Bauer, "Rigid Body Dynamics on Lie Groups").

Conventions (the same as :mod:`simbench.model`):

* a twist is ``xi = (w, v)`` (angular first), a wrench ``F = (m, f)`` (torque first);
* ``T`` is a 4x4 homogeneous transform; ``Ad(T)`` maps twists expressed in the child
  frame to the parent frame: ``V_a = Ad(T_ab) V_b`` with ``Ad(T) = [[R, 0], [[p] R, R]]``;
* ``ad(xi) = [[[w], 0], [[v], [w]]]`` so that ``ad(xi) eta = [xi, eta]`` (Lie bracket);
* wrenches transform with the transposes: ``F_b = Ad(T_ab)^T F_a``;
* a quaternion is ``(x, y, z, w)`` (PyBullet's and Pinocchio's coefficient order), Hamilton
  product, ``R(q)`` the rotation it represents.

Every function accepts leading batch dimensions, which broadcast.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .errors import ShapeError

__all__ = ["skew", "unskew", "so3_exp", "so3_log", "se3_hat", "se3_vee", "se3_exp", "se3_log",
           "se3_inv", "Ad", "Ad_inv", "ad", "ad_T", "coad", "dexp_inv", "transform_inertia",
           "rot_x", "rot_y", "rot_z", "make_transform", "quat_to_matrix", "quat_from_matrix",
           "quat_mul", "quat_conj", "quat_exp", "quat_log", "pose_mul", "pose_inv"]


def _vec(x: object, n: int, name: str) -> np.ndarray:
    a = np.asarray(x, dtype=float)
    if a.ndim == 0 or a.shape[-1] != n:
        raise ShapeError(f"{name} has shape {a.shape}; expected (..., {n})")
    return a


def _mat(x: object, n: int, name: str) -> np.ndarray:
    a = np.asarray(x, dtype=float)
    if a.ndim < 2 or a.shape[-2:] != (n, n):
        raise ShapeError(f"{name} has shape {a.shape}; expected (..., {n}, {n})")
    return a


def skew(w: np.ndarray) -> np.ndarray:
    """``[w]``: the 3x3 matrix with ``[w] x = w x x``."""
    w = _vec(w, 3, "w")
    out = np.zeros(w.shape[:-1] + (3, 3))
    out[..., 0, 1], out[..., 0, 2] = -w[..., 2], w[..., 1]
    out[..., 1, 0], out[..., 1, 2] = w[..., 2], -w[..., 0]
    out[..., 2, 0], out[..., 2, 1] = -w[..., 1], w[..., 0]
    return out


def unskew(W: np.ndarray) -> np.ndarray:
    """The vector of the skew-symmetric part of ``W`` (inverse of :func:`skew`)."""
    W = _mat(W, 3, "W")
    return 0.5 * np.stack([W[..., 2, 1] - W[..., 1, 2], W[..., 0, 2] - W[..., 2, 0],
                           W[..., 1, 0] - W[..., 0, 1]], axis=-1)


def so3_exp(w: np.ndarray) -> np.ndarray:
    """Rodrigues: ``exp([w]) = 1 + sin(t)/t [w] + (1 - cos t)/t^2 [w]^2``, ``t = |w|``."""
    w = _vec(w, 3, "w")
    t2 = np.sum(w * w, axis=-1)
    t = np.sqrt(t2)
    small = t < 1e-4
    ts = np.where(small, 1.0, t)
    a = np.where(small, 1 - t2 / 6 + t2 * t2 / 120, np.sin(ts) / ts)
    b = np.where(small, 0.5 - t2 / 24 + t2 * t2 / 720, (1 - np.cos(ts)) / (ts * ts))
    K = skew(w)
    return np.eye(3) + a[..., None, None] * K + b[..., None, None] * (K @ K)


def so3_log(R: np.ndarray) -> np.ndarray:
    """The rotation vector ``w`` with ``exp([w]) = R`` and ``|w| <= pi``."""
    R = _mat(R, 3, "R")
    cos = np.clip((np.trace(R, axis1=-2, axis2=-1) - 1) / 2, -1.0, 1.0)
    t = np.arccos(cos)
    v = np.stack([R[..., 2, 1] - R[..., 1, 2], R[..., 0, 2] - R[..., 2, 0],
                  R[..., 1, 0] - R[..., 0, 1]], axis=-1)
    s = np.sin(t)
    small = t < 1e-4
    near_pi = t > np.pi - 1e-3
    fac = np.where(small, 0.5 + t * t / 12, t / (2 * np.where(small | near_pi, 1.0, s)))
    w = fac[..., None] * v
    if np.any(near_pi):  # axis from the symmetric part: R + R^T = 2 cos t 1 + 2 (1 - cos t) a a^T
        S = (R + np.swapaxes(R, -1, -2)) / 2 - cos[..., None, None] * np.eye(3)
        S = S / np.maximum(1 - cos, 1e-300)[..., None, None]
        diag = np.diagonal(S, axis1=-2, axis2=-1)
        k = np.argmax(diag, axis=-1)
        col = np.take_along_axis(S, np.broadcast_to(k[..., None, None], S.shape[:-1] + (1,)),
                                 axis=-1)[..., 0]
        a = col / np.sqrt(np.maximum(np.take_along_axis(diag, k[..., None], axis=-1), 1e-300))
        # sign: sin(t) a = v / 2
        sign = np.where(np.sum(a * v, axis=-1) < 0, -1.0, 1.0)
        w_pi = (sign * t)[..., None] * a
        w = np.where(near_pi[..., None], w_pi, w)
    return w


def se3_hat(xi: np.ndarray) -> np.ndarray:
    """4x4 matrix of the twist ``xi = (w, v)``: ``[[[w], v], [0, 0]]``."""
    xi = _vec(xi, 6, "xi")
    out = np.zeros(xi.shape[:-1] + (4, 4))
    out[..., :3, :3] = skew(xi[..., :3])
    out[..., :3, 3] = xi[..., 3:]
    return out


def se3_vee(X: np.ndarray) -> np.ndarray:
    """Inverse of :func:`se3_hat`."""
    X = _mat(X, 4, "X")
    return np.concatenate([unskew(X[..., :3, :3]), X[..., :3, 3]], axis=-1)


def _so3_left_jacobian(w: np.ndarray) -> np.ndarray:
    """``J_l(w) = 1 + (1 - cos t)/t^2 [w] + (t - sin t)/t^3 [w]^2``."""
    t2 = np.sum(w * w, axis=-1)
    t = np.sqrt(t2)
    small = t < 1e-4
    ts = np.where(small, 1.0, t)
    b = np.where(small, 0.5 - t2 / 24 + t2 * t2 / 720, (1 - np.cos(ts)) / (ts * ts))
    c = np.where(small, 1 / 6 - t2 / 120 + t2 * t2 / 5040, (ts - np.sin(ts)) / (ts ** 3))
    K = skew(w)
    return np.eye(3) + b[..., None, None] * K + c[..., None, None] * (K @ K)


def se3_exp(xi: np.ndarray) -> np.ndarray:
    """``exp(xi^) = [[exp([w]), J_l(w) v], [0, 1]]``."""
    xi = _vec(xi, 6, "xi")
    w, v = xi[..., :3], xi[..., 3:]
    out = np.zeros(xi.shape[:-1] + (4, 4))
    out[..., :3, :3] = so3_exp(w)
    out[..., :3, 3] = np.einsum("...ij,...j->...i", _so3_left_jacobian(w), v)
    out[..., 3, 3] = 1.0
    return out


def se3_log(T: np.ndarray) -> np.ndarray:
    """Inverse of :func:`se3_exp` (rotation angle <= pi)."""
    T = _mat(T, 4, "T")
    w = so3_log(T[..., :3, :3])
    J = _so3_left_jacobian(w)
    v = np.linalg.solve(J, T[..., :3, 3][..., None])[..., 0]
    return np.concatenate([w, v], axis=-1)


def se3_inv(T: np.ndarray) -> np.ndarray:
    """``T^-1 = [[R^T, -R^T p], [0, 1]]``."""
    T = _mat(T, 4, "T")
    Rt = np.swapaxes(T[..., :3, :3], -1, -2)
    out = np.zeros(T.shape)
    out[..., :3, :3] = Rt
    out[..., :3, 3] = -np.einsum("...ij,...j->...i", Rt, T[..., :3, 3])
    out[..., 3, 3] = 1.0
    return out


def Ad(T: np.ndarray) -> np.ndarray:
    """Adjoint of ``T = (R, p)``: ``[[R, 0], [[p] R, R]]`` (twists, [w; v] order)."""
    T = _mat(T, 4, "T")
    R, p = T[..., :3, :3], T[..., :3, 3]
    out = np.zeros(T.shape[:-2] + (6, 6))
    out[..., :3, :3] = R
    out[..., 3:, 3:] = R
    out[..., 3:, :3] = skew(p) @ R
    return out


def Ad_inv(T: np.ndarray) -> np.ndarray:
    """``Ad(T)^-1 = Ad(T^-1) = [[R^T, 0], [-R^T [p], R^T]]``."""
    return Ad(se3_inv(T))


def ad(xi: np.ndarray) -> np.ndarray:
    """``ad(xi) = [[[w], 0], [[v], [w]]]``: ``ad(xi) eta`` is the Lie bracket ``[xi, eta]``."""
    xi = _vec(xi, 6, "xi")
    W, V = skew(xi[..., :3]), skew(xi[..., 3:])
    out = np.zeros(xi.shape[:-1] + (6, 6))
    out[..., :3, :3] = W
    out[..., 3:, 3:] = W
    out[..., 3:, :3] = V
    return out


def ad_T(xi: np.ndarray) -> np.ndarray:
    """``ad(xi)^T`` (acts on wrenches; ``-ad(xi)^T`` is the spatial force cross product)."""
    return np.swapaxes(ad(xi), -1, -2)


def coad(xi: np.ndarray, F: np.ndarray) -> np.ndarray:
    """``ad(xi)^T F`` computed with cross products: ``(-w x m - v x f, -w x f)``."""
    xi, F = _vec(xi, 6, "xi"), _vec(F, 6, "F")
    w, v, m, f = xi[..., :3], xi[..., 3:], F[..., :3], F[..., 3:]
    return np.concatenate([-np.cross(w, m) - np.cross(v, f), -np.cross(w, f)], axis=-1)


def dexp_inv(u: np.ndarray, v: np.ndarray, order: int = 4) -> np.ndarray:
    """Inverse differential of exp, series ``v - 1/2 [u, v] + 1/12 [u, [u, v]] - ...``.

    Truncated after the Bernoulli term of ``order - 2`` (enough for an RKMK method of
    that order, Munthe-Kaas 1998); ``order=4`` keeps ``v - [u,v]/2 + [u,[u,v]]/12``.
    """
    u, v = _vec(u, 6, "u"), _vec(v, 6, "v")
    adu = ad(u)
    out = np.broadcast_to(v, np.broadcast_shapes(u.shape, v.shape)).copy()
    term = v
    coeffs = [1.0, -0.5, 1 / 12, 0.0, -1 / 720, 0.0, 1 / 30240]
    for k in range(1, min(max(1, order - 1), len(coeffs))):
        term = np.einsum("...ij,...j->...i", adu, term)
        if coeffs[k] != 0.0:
            out = out + coeffs[k] * term
    return out


def transform_inertia(T: np.ndarray, G: np.ndarray) -> np.ndarray:
    """Spatial inertia ``G_b`` (about frame b, [ang; lin]) expressed in frame a, ``T = T_ab``:
    ``G_a = Ad(T^-1)^T G_b Ad(T^-1)``."""
    G = _mat(G, 6, "G")
    X = Ad_inv(T)
    return np.swapaxes(X, -1, -2) @ G @ X


def rot_x(a: np.ndarray) -> np.ndarray:
    """Rotation by angle ``a`` about x (batched)."""
    return so3_exp(np.multiply.outer(np.asarray(a, dtype=float), [1.0, 0, 0]))


def rot_y(a: np.ndarray) -> np.ndarray:
    """Rotation by angle ``a`` about y (batched)."""
    return so3_exp(np.multiply.outer(np.asarray(a, dtype=float), [0, 1.0, 0]))


def rot_z(a: np.ndarray) -> np.ndarray:
    """Rotation by angle ``a`` about z (batched)."""
    return so3_exp(np.multiply.outer(np.asarray(a, dtype=float), [0, 0, 1.0]))


def make_transform(R: np.ndarray | None = None, p: np.ndarray | None = None) -> np.ndarray:
    """Homogeneous transform from a rotation (..., 3, 3) and a translation (..., 3)."""
    R = np.eye(3) if R is None else _mat(R, 3, "R")
    p = np.zeros(3) if p is None else _vec(p, 3, "p")
    shape = np.broadcast_shapes(R.shape[:-2], p.shape[:-1])
    out = np.zeros(shape + (4, 4))
    out[..., :3, :3] = R
    out[..., :3, 3] = p
    out[..., 3, 3] = 1.0
    return out


# ---------------------------------------------------------------------- quaternions (x, y, z, w)
def quat_to_matrix(q: np.ndarray) -> np.ndarray:
    """Rotation matrix (..., 3, 3) of quaternions (..., 4), normalised first."""
    q = _vec(q, 4, "quaternion")
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    x, y, z, w = np.moveaxis(q, -1, 0)
    return np.stack([np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
                     np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
                     np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1)],
                    axis=-2)


def quat_from_matrix(R: np.ndarray) -> np.ndarray:
    """Unit quaternions (..., 4), w >= 0, of rotation matrices (..., 3, 3) (from the rotation
    vector, so accurate at every angle)."""
    return quat_exp(so3_log(R))


def quat_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product ``a b`` (the rotation ``R(a) R(b)``)."""
    a, b = _vec(a, 4, "a"), _vec(b, 4, "b")
    ax, ay, az, aw = np.moveaxis(a, -1, 0)
    bx, by, bz, bw = np.moveaxis(b, -1, 0)
    return np.stack([aw * bx + ax * bw + ay * bz - az * by, aw * by - ax * bz + ay * bw + az * bx,
                     aw * bz + ax * by - ay * bx + az * bw, aw * bw - ax * bx - ay * by - az * bz],
                    axis=-1)


def quat_conj(q: np.ndarray) -> np.ndarray:
    """The conjugate (the inverse rotation of a unit quaternion)."""
    q = _vec(q, 4, "quaternion")
    return q * np.array([-1.0, -1.0, -1.0, 1.0])


def quat_exp(w: np.ndarray) -> np.ndarray:
    """The unit quaternion of the rotation vector w: ``(sin(t/2) w/t, cos(t/2))``, t = |w|."""
    w = _vec(w, 3, "w")
    t2 = np.sum(w * w, axis=-1)
    t = np.sqrt(t2)
    small = t < 1e-4
    ts = np.where(small, 1.0, t)
    s = np.where(small, 0.5 - t2 / 48 + t2 * t2 / 3840, np.sin(ts / 2) / ts)
    return np.concatenate([s[..., None] * w, np.cos(t / 2)[..., None]], axis=-1)


def quat_log(q: np.ndarray) -> np.ndarray:
    """The rotation vector (|w| <= pi) of a quaternion (normalised first)."""
    q = _vec(q, 4, "quaternion")
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    q = np.where(q[..., 3:] < 0, -q, q)
    u, w = q[..., :3], q[..., 3]
    s = np.linalg.norm(u, axis=-1)
    t = 2.0 * np.arctan2(s, w)
    small = s < 1e-8
    fac = np.where(small, 2.0 / np.where(small, w, 1.0), t / np.where(small, 1.0, s))
    return fac[..., None] * u


def pose_mul(p1: Sequence[float], q1: Sequence[float], p2: Sequence[float],
             q2: Sequence[float]) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """The pose ``(p1, q1) (p2, q2)`` = ``(p1 + R(q1) p2, q1 q2)`` of one pair, quaternions x y z w
    (``q1`` normalised): PyBullet's ``multiplyTransforms`` in float64 (PyBullet's rounds to
    float32, ~1e-8), in plain floats (2 us; numpy's arrays would take 40 us on the query path)."""
    x, y, z, w = (float(v) for v in q1)
    n = math.sqrt(x * x + y * y + z * z + w * w)
    x, y, z, w = x / n, y / n, z / n, w / n
    vx, vy, vz = (float(v) for v in p2)
    tx, ty, tz = 2 * (y * vz - z * vy), 2 * (z * vx - x * vz), 2 * (x * vy - y * vx)   # v + w t + u x t
    px, py, pz = (float(v) for v in p1)
    pos = (px + vx + w * tx + y * tz - z * ty, py + vy + w * ty + z * tx - x * tz, pz + vz + w * tz + x * ty - y * tx)
    bx, by, bz, bw = (float(v) for v in q2)
    return pos, (w * bx + x * bw + y * bz - z * by, w * by - x * bz + y * bw + z * bx,
                 w * bz + x * by - y * bx + z * bw, w * bw - x * bx - y * by - z * bz)


def pose_inv(p: Sequence[float], q: Sequence[float]) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """The inverse pose ``(-R(q)^T p, q*)`` (``q`` normalised): PyBullet's ``invertTransform`` in float64."""
    x, y, z, w = (float(v) for v in q)
    n = math.sqrt(x * x + y * y + z * z + w * w)
    qc = (-x / n, -y / n, -z / n, w / n)
    pos, _ = pose_mul((0.0, 0.0, 0.0), qc, p, (0.0, 0.0, 0.0, 1.0))
    return (-pos[0], -pos[1], -pos[2]), qc
