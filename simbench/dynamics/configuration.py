"""The configuration manifold: a floating base lives on SE(3), a spherical joint on SO(3), the
other joints on the real line. Pinocchio's conventions (``pinocchio.integrate``, ``difference``,
``neutral``, ``randomConfiguration``, ``normalize``):

* q = [x, y, z, qx, qy, qz, qw, joints...] (base position in the world, orientation as a unit
  quaternion); a spherical joint's entries are a unit quaternion (x, y, z, w);
* v = [vx, vy, vz, wx, wy, wz, joint rates...]: the base twist in the base frame (linear first),
  a spherical joint's angular velocity in its child frame;
* ``integrate(q, v)`` moves along the exponential map in those local frames:
  ``T_base <- T_base exp(v_base)``, ``R <- R exp([w])``, ``q_j <- q_j + v_j``;
  ``difference(q0, q1)`` is its inverse (the log map); a continuous (unlimited revolute) joint
  lives on the circle, so its difference is the angle wrapped to [-pi, pi), as Pinocchio's
  ``(cos, sin)`` joint gives it, and ``integrate(q0, difference(q0, q1))`` is q1 up to whole
  turns (integrate never wraps: q keeps the angle PyBullet reports).

Everything is batched over leading dimensions (Michael Bauer, "Rigid Body Dynamics on Lie
Groups"; Lynch & Park, *Modern Robotics*, chapter 3). ``integrate``, ``difference`` and
``normalize`` run as compiled loops (:mod:`.kernels.configuration`; each entry compiles at its
first use, 2-5 s, then loads from numba's disk cache) on one index array built once per model (:func:`space`, kept in the model's cache); one configuration
given as float64 arrays skips the validation (the kernel checks finiteness and zero quaternions
and hands what it refuses to the general path, which raises the clear error); so do rows of
float64 arrays. Measured on the a1 with a floating base (best of 4 runs on a loaded 2-core
machine): one ``integrate`` 0.9 us (was 182 us: numpy on slices, the indices recomputed at
every call), Pinocchio's 0.35 us; 1000 rows 127 us (was 0.83 ms; 1000 Pinocchio calls from
Python 0.41 ms).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import SimbenchError, finite_number
from ..joint_space import not_a_model
from ..model import RobotModel, as_joint_array
from ..spatial import dexp_inv as se3_dexp_inv
from .kernels import configuration as K

__all__ = ["integrate", "difference", "normalize", "neutral", "random_configuration",
           "tangent_dexp_inv", "quaternion_slices"]

_ND, _F8 = np.ndarray, np.dtype(np.float64)
SPACE_KEY = "configuration.space"   #: the model's cache entry of its Space
_FLOATS = (float, np.float64)


@dataclass(frozen=True, eq=False)
class Space:
    """A model's configuration space as the kernels of :mod:`.kernels.configuration` take it:
    ``idx``, one read-only int64 array (its layout in that module's docstring)."""

    nq: int
    nv: int
    idx: np.ndarray
    quats: int           # the number of quaternions (the base's, the spherical joints')


def space(model: RobotModel) -> Space:
    """The :class:`Space` of ``model``, built at the first call and kept with the model (a
    modified copy, ``model.replace(...)``, builds its own)."""
    try:
        s = model._cache.get(SPACE_KEY)   # the fast path: one dict lookup
    except AttributeError:   # not a model: a file name, say
        raise not_a_model(model) from None
    return s if s is not None else model._cached(SPACE_KEY, lambda: _build_space(model))


def _build_space(model: RobotModel) -> Space:
    iq, iv = _scalar_index(model)
    ic = _continuous_v_index(model)
    base, sph = quaternion_slices(model)
    idx = np.ascontiguousarray(np.r_[model.nq, model.nv, 1 if base else 0, len(iq), len(ic), len(sph),
                                     iq, iv, ic, [s for s, _ in sph], [s for _, s in sph]], dtype=np.int64)
    idx.setflags(write=False)
    return Space(nq=model.nq, nv=model.nv, idx=idx, quats=len(base) + len(sph))


def quaternion_slices(model: RobotModel) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """(q start, v start) of the base (when floating, first) and of each spherical joint, in
    two lists: ``(base, spherical)``."""
    from ..model import SPHERICAL

    base = [(0, 0)] if model.floating_base else []
    sph = [(int(model.joint_q_start[j]), int(model.joint_v_start[j]))
           for j in np.flatnonzero(np.asarray(model.joint_type_code) == SPHERICAL)]
    return base, sph


def _scalar_index(model: RobotModel) -> tuple[np.ndarray, np.ndarray]:
    """q and v indices of the scalar (revolute, prismatic) joints."""
    from ..model import PRISMATIC, REVOLUTE

    j = np.flatnonzero(np.isin(np.asarray(model.joint_type_code), (REVOLUTE, PRISMATIC)))
    return np.asarray(model.joint_q_start)[j], np.asarray(model.joint_v_start)[j]


def _continuous_v_index(model: RobotModel) -> np.ndarray:
    """v indices of the continuous joints (URDF ``type="continuous"``: on the circle)."""
    j = [k for k, t in enumerate(model.joint_type) if t == "continuous"]
    return np.asarray(model.joint_v_start, dtype=int)[j]


def _wrap_angle(a: Any) -> np.ndarray:
    """The angle a wrapped to [-pi, pi): ``a - 2 pi floor((a + pi) / 2 pi)``."""
    a = np.asarray(a, dtype=float)
    return a - 2.0 * np.pi * np.floor((a + np.pi) / (2.0 * np.pi))


def _plain(a: Any, b: Any) -> int:
    """1 or 2 when a and b are float64 arrays the kernels read as they are, of that many
    dimensions (one configuration each, or rows); 0 for anything else (the general path
    validates, broadcasts and explains). The kernels check the lengths."""
    if a.__class__ is _ND and b.__class__ is _ND and a.dtype is _F8 and b.dtype is _F8:
        nd = a.ndim
        if nd == b.ndim and (nd == 1 or nd == 2):
            return nd
    return 0


def _rows(model: RobotModel, a: np.ndarray, b: np.ndarray) -> tuple[tuple, np.ndarray, np.ndarray]:
    """Validated a, b (..., size) as (N, size) arrays (broadcast views where they broadcast),
    with the batch shape."""
    shape = np.broadcast_shapes(a.shape[:-1], b.shape[:-1])
    A = np.broadcast_to(a, shape + a.shape[-1:]).reshape(-1, a.shape[-1])
    B = np.broadcast_to(b, shape + b.shape[-1:]).reshape(-1, b.shape[-1])
    return shape, A, B


def _refused(what: str) -> SimbenchError:
    return SimbenchError(f"internal error: the {what} kernel refused validated input")


def integrate(model: RobotModel, q: Any, v: Any, dt: float = 1.0) -> np.ndarray:
    """``q (+) v dt``: the configuration reached from q by moving with velocity v for dt,
    shape (..., nq); its quaternions have norm 1 (as Pinocchio's ``integrate``).

    One configuration, or rows of them, as float64 arrays go straight to a compiled kernel
    (:mod:`.kernels.configuration`, which checks finiteness and zero quaternions and hands
    anything it refuses to the general path, which explains); anything else is validated once
    and runs through the row kernel."""
    s = space(model)
    nd = _plain(q, v) if dt.__class__ in _FLOATS else 0
    if nd == 1:
        out = np.empty(s.nq)
        if K.integrate_one_raw(q, v, dt, s.idx, out) == K.OK:
            return out
    elif nd == 2:
        out = np.empty((q.shape[0], s.nq))
        if K.integrate_rows_raw(q, v, dt, s.idx, out) == K.OK:
            return out
    q = as_joint_array(model, q, "q")
    v = as_joint_array(model, v, "v", "v")
    dt = finite_number(dt, "dt", " of seconds (or any scale of v)")
    shape, Q, V = _rows(model, q, v)
    out = np.empty((Q.shape[0], s.nq))
    if K.integrate_rows_raw(Q, V, dt, s.idx, out) != K.OK:
        raise _refused("integrate")
    return out.reshape(shape + (s.nq,))


def difference(model: RobotModel, q0: Any, q1: Any) -> np.ndarray:
    """The velocity v (..., nv) with ``integrate(q0, v) == q1`` (the log map in q0's local
    frames, as ``pinocchio.difference``): ``q1 - q0`` for revolute joints with limits and
    prismatic joints, that angle wrapped to [-pi, pi) for continuous joints (the shorter way
    round the circle), the SE(3) / SO(3) log for the base and spherical joints."""
    s = space(model)
    nd = _plain(q0, q1)
    if nd == 1:
        out = np.empty(s.nv)
        if K.difference_one_raw(q0, q1, s.idx, out) == K.OK:
            return out
    elif nd == 2:
        out = np.empty((q0.shape[0], s.nv))
        if K.difference_rows_raw(q0, q1, s.idx, out) == K.OK:
            return out
    shape, Q0, Q1 = _rows(model, as_joint_array(model, q0, "q0"), as_joint_array(model, q1, "q1"))
    out = np.empty((Q0.shape[0], s.nv))
    if K.difference_rows_raw(Q0, Q1, s.idx, out) != K.OK:
        raise _refused("difference")
    return out.reshape(shape + (s.nv,))


def normalize(model: RobotModel, q: Any) -> np.ndarray:
    """q with every quaternion scaled to unit norm (..., nq)."""
    s = space(model)
    nd = _plain(q, q)
    if nd:
        out = np.empty(q.shape)
        if K.normalize_rows_raw(q if nd == 2 else q[None], s.idx, out if nd == 2 else out[None]) == K.OK:
            return out
    q = as_joint_array(model, q, "q")
    if not s.quats:
        return np.array(q)
    out = np.empty(q.shape)
    if K.normalize_rows_raw(q.reshape(-1, s.nq), s.idx, out.reshape(-1, s.nq)) != K.OK:
        raise _refused("normalize")
    return out


def neutral(model: RobotModel) -> np.ndarray:
    """:meth:`RobotModel.neutral`: zero joints (clipped into the limits), identity quaternions."""
    return model.neutral()


def random_configuration(model: RobotModel, rng: np.random.Generator | int | None = None,
                         n: int | None = None) -> np.ndarray:
    """:meth:`RobotModel.random_configuration`: uniform within the limits, uniform rotations."""
    return model.random_configuration(rng, n)


def tangent_dexp_inv(model: RobotModel, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The rate u' of the increment u in ``q(t) = q_k (+) u(t)`` when the velocity is v, per
    manifold component, to second order in u (what a fourth-order Runge-Kutta-Munthe-Kaas step
    needs): with the exponential on the right (body-frame velocities),
    ``u' = dexp_{-u}^-1 (v) = v + [u, v]/2 + [u, [u, v]]/12`` on SE(3) and SO(3), ``u' = v``
    on the real line."""
    s = space(model)
    if _plain(u, v) == 1:    # one increment (a Runge-Kutta stage): the kernel
        out = np.empty(s.nv)
        if K.dexp_inv_one_raw(u, v, s.idx, out) == K.OK:
            return out
    out = np.array(v, dtype=float)
    base, sph = quaternion_slices(model)
    for _, sv in base:
        uu = np.concatenate([u[..., sv + 3:sv + 6], u[..., sv:sv + 3]], axis=-1)
        vv = np.concatenate([v[..., sv + 3:sv + 6], v[..., sv:sv + 3]], axis=-1)
        r = se3_dexp_inv(-uu, vv)
        out[..., sv:sv + 3], out[..., sv + 3:sv + 6] = r[..., 3:], r[..., :3]
    for _, sv in sph:
        a, b = u[..., sv:sv + 3], v[..., sv:sv + 3]
        ab = np.cross(a, b)
        out[..., sv:sv + 3] = b + 0.5 * ab + np.cross(a, ab) / 12.0
    return out
