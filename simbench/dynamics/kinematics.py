"""Forward kinematics, geometric Jacobians, energies.

Jacobians are geometric and world-aligned with rows ``[angular; linear]`` (the spatial ordering
of :mod:`simbench.model`): ``[w; v_p] = J(q) v`` where ``w`` is the link's angular velocity and
``v_p`` the velocity of the reference point (the link origin, or a given point fixed in the
link), both in world coordinates; ``v`` is the velocity vector (..., nv). (Pinocchio's
``LOCAL_WORLD_ALIGNED`` Jacobian is the same matrix with the two 3-row blocks swapped:
``[linear; angular]``.)

Each entry i of v moves the links after it about (or along) a world axis ``z_i`` through a world
point ``o_i``: a revolute joint's axis, a spherical joint's or the base's angular velocity
components (the child's axes), a prismatic joint's axis or the base's linear velocity
components. The Jacobian column of a point p is then ``(z_i, z_i x (p - o_i))`` or ``(0, z_i)``.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import ShapeError, SimbenchError, lookup, real_array, shown
from ..model import RobotModel
from .inputs import F8, LISTS, ND, gravity_vector, joint_arrays
from .kernels import kinematics as KK
from .packing import KernelModel, kernel_model, require_model

__all__ = ["forward_kinematics", "link_pose", "link_jacobian", "com_jacobian", "link_com_jacobians",
           "root_com_jacobians", "center_of_mass", "kinetic_energy", "potential_energy", "velocity_axes_world"]


#: the link origin, as the points of :func:`link_jacobian`
ORIGIN = np.zeros(3)


def _rotate(R: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``R v`` for stacks of rotations R (..., 3, 3) and vectors v (..., 3), broadcast: three
    multiply-adds over R's columns (``np.einsum("...ij,...j->...i")`` measured about 10x
    slower on the (10000, 7, 3, 3) stacks of a batched Jacobian)."""
    return R[..., 0] * v[..., 0:1] + R[..., 1] * v[..., 1:2] + R[..., 2] * v[..., 2:3]


def forward_kinematics(model: RobotModel, q: Any) -> np.ndarray:
    """World pose of every link, shape (..., nl, 4, 4), link order ``model.link_names``; a fixed
    root is at ``model.root_pose`` (the identity when None), a floating root at the base pose of q."""
    return _placed(model, _root_fk(model, q))


def _root_fk(model: RobotModel, q: Any) -> np.ndarray:
    """:func:`forward_kinematics` in the root's frame (a fixed root at the identity)."""
    d = kernel_model(model)
    q1 = _one(d, q)
    if q1 is not None:   # one configuration: no checks before the compiled call
        T = np.empty((1, d.links.idata.shape[0], 4, 4))
        if KK.fk_rows_raw(d.links.packed, q1[None], T):
            return T[0, d.link_offset:]
    batch, (Q,) = joint_arrays(model, (q, "q", "q"))
    T = np.empty((Q.shape[0], d.links.idata.shape[0], 4, 4))
    KK.fk_rows(d.links.packed, Q, T)
    return T[:, d.link_offset:].reshape(batch + (d.nl, 4, 4))


def _placed(model: RobotModel, T: np.ndarray) -> np.ndarray:
    """Poses T (..., 4, 4) in the root's frame, in the world: ``root_pose @ T``."""
    P = model.root_pose
    return T if P is None else P @ T


def _aligned(model: RobotModel, J: np.ndarray) -> np.ndarray:
    """Jacobians (..., 6, nv) aligned with the root's frame, world-aligned: each 3-row block
    turned by root_pose's rotation."""
    P = model.root_pose
    if P is None:
        return J
    R = P[:3, :3]
    return np.concatenate([R @ J[..., :3, :], R @ J[..., 3:, :]], axis=-2)


def _one(d: KernelModel, q: Any) -> np.ndarray | None:
    """q as one configuration the kernels read as it is: a C-contiguous float64 array of nq
    entries, or a list or tuple of nq numbers (converted once); None for anything else, and
    non-finite values are refused by the kernels: the general path then checks and explains."""
    if q.__class__ is ND:
        if q.dtype is F8 and q.ndim == 1 and q.shape[0] == d.nq and q.flags.c_contiguous:
            return q
        return None
    if q.__class__ in LISTS and len(q) == d.nq:
        try:
            x = real_array(q)     # not text, which numpy would read
        except (TypeError, ValueError, OverflowError):
            return None
        return x if x.ndim == 1 else None
    return None


def velocity_axes_world(model: RobotModel, T: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """World axis z (..., nv, 3), point o (..., nv, 3) and the translation flags (nv,) of every
    entry of v (see the module docstring), from link poses T (..., nl, 4, 4)."""
    link, axis, prism = kernel_model(model).velocity_axes
    Tj = T[..., link, :, :]
    z = _rotate(Tj[..., :3, :3], axis)
    return z, Tj[..., :3, 3], prism


def link_pose(model: RobotModel, q: Any, link: str) -> np.ndarray:
    """World pose of ``link`` (by name), shape (..., 4, 4): its entry of :func:`forward_kinematics`
    (as Pinocchio's ``updateFramePlacement`` / ``data.oMf``); an unknown name is one line with
    the closest link names."""
    d = kernel_model(model)
    k = lookup(d.link_index, link, "link", model.name)
    return forward_kinematics(model, q)[..., k, :, :]


def checked_point(point: Any, link: str) -> np.ndarray:
    """``point`` (in the frame of ``link``) as finite (..., 3) floats, or one :class:`ShapeError`."""
    try:
        pts = np.asarray(point, dtype=float)
    except (TypeError, ValueError, OverflowError):
        pts = None
    if pts is None or pts.shape[-1:] != (3,) or not np.isfinite(pts).all():
        raise ShapeError(f"point is {shown(point)}; expected (..., 3) finite numbers in the frame of link {link!r}")
    return pts


def link_jacobian(model: RobotModel, q: Any, link: str, point: Sequence[float] | None = None,
                  frame: str = "world") -> np.ndarray:
    """Geometric Jacobian (..., 6, nv) of ``link``, world-aligned, rows [angular; linear].

    The linear rows give the world velocity of the link origin, or of ``point`` (..., 3) (link
    frame) when given: column i is ``(z_i, z_i x (p - o_i))`` (see the module docstring).
    ``frame="local"``: both blocks in the link's own axes, ``diag(R^T, R^T) J`` (Pinocchio's
    ``LOCAL``; the default is its ``LOCAL_WORLD_ALIGNED``, blocks swapped in both). One
    compiled call per batch (:func:`.kernels.kinematics.jacobian_rows`); on the iiwa measured
    3 us for one configuration (Pinocchio's frame Jacobian: 1.8 us), against 140 us for the
    numpy expression it replaces.
    """
    d = kernel_model(model)
    k = lookup(d.link_index, link, "link", model.name)
    if frame not in ("world", "local"):
        raise SimbenchError(f"frame = {shown(frame)}; expected 'world' (world-aligned axes, the default) or "
                            "'local' (the link's own axes)")
    pts = ORIGIN if point is None else checked_point(point, link)
    J = _aligned(model, _jacobians(model, d, q, slice(k, k + 1), pts[..., None, :])[..., 0, :, :])
    if frame == "local":
        Rt = np.swapaxes(link_pose(model, q, link)[..., :3, :3], -1, -2)
        J = np.concatenate([Rt @ J[..., :3, :], Rt @ J[..., 3:, :]], axis=-2)
    return J


def _jacobians(model: RobotModel, d: KernelModel, q: Any, links: Any, pts: np.ndarray,
               poses: bool = False) -> Any:
    """Jacobians (..., L, 6, nv) of the points pts (..., L, 3) fixed to the links ``links`` (a
    slice or index array of L links; each point in its link's frame), by one compiled call
    (:func:`.kernels.kinematics.jacobian_rows`); with ``poses``, (world poses of every link
    (..., nl, 4, 4), Jacobians), both from that call."""
    body, axis, prism, anc, link_body = d.jacobian_axes
    moves, bodies = anc[links], link_body[links]
    L, nb = bodies.shape[0], d.links.idata.shape[0]
    q1 = _one(d, q) if pts.ndim == 2 else None
    if q1 is not None:   # one configuration: no checks before the compiled call
        J = np.empty((1, L, 6, d.nv))
        T = np.empty((1 if poses else 0, nb, 4, 4))
        if KK.jacobian_rows_raw(d.links.packed, q1[None], body, axis, prism, moves, bodies, pts[None],
                                J, T):
            return (T[0, d.link_offset:], J[0]) if poses else J[0]
    qb, (Q,) = joint_arrays(model, (q, "q", "q"))
    try:
        batch = np.broadcast_shapes(qb, pts.shape[:-2])
    except ValueError:
        raise ShapeError(f"point has batch shape {pts.shape[:-2]}, which does not broadcast with "
                         f"q's {qb}") from None
    rows = int(np.prod(batch, dtype=np.int64))
    Q = np.ascontiguousarray(np.broadcast_to(Q.reshape(qb + (d.nq,)), batch + (d.nq,)).reshape(rows, d.nq))
    P = np.ascontiguousarray(np.broadcast_to(pts, batch + (L, 3)).reshape(rows, L, 3))
    J = np.empty((rows, L, 6, d.nv))
    T = np.empty((rows if poses else 0, nb, 4, 4))
    KK.jacobian_rows(d.links.packed, Q, body, axis, prism, moves, bodies, P, J, T)
    J = J.reshape(batch + (L, 6, d.nv))
    return (T[:, d.link_offset:].reshape(batch + (d.nl, 4, 4)), J) if poses else J


def _coms(model: RobotModel, T: np.ndarray) -> np.ndarray:
    return _rotate(T[..., :3, :3], model.link_com) + T[..., :3, 3]


def link_com_jacobians(model: RobotModel, q: Any) -> tuple[np.ndarray, np.ndarray]:
    """World poses (..., nl, 4, 4) and the Jacobians (..., nl, 6, nv) of every link's COM, from
    one compiled call (the poses are those the Jacobians are built from)."""
    T, J = root_com_jacobians(model, q)
    return _placed(model, T), _aligned(model, J)


def root_com_jacobians(model: RobotModel, q: Any) -> tuple[np.ndarray, np.ndarray]:
    """:func:`link_com_jacobians` in the root's frame, where gravity is given (the Lagrangian
    terms of :mod:`.lagrange` are built on them)."""
    d = kernel_model(model)
    return _jacobians(model, d, q, slice(None), model.link_com, poses=True)


def center_of_mass(model: RobotModel, q: Any) -> np.ndarray:
    """World position of the robot's centre of mass, (..., 3): ``sum_i m_i c_i / sum_i m_i`` over
    every link, links welded to the world included (Pinocchio's ``centerOfMass`` leaves out the
    mass of a fixed base's root link, so the two differ on, e.g., the Panda)."""
    require_model(model)
    return (model.link_mass / model.total_mass) @ _coms(model, forward_kinematics(model, q))


def com_jacobian(model: RobotModel, q: Any) -> np.ndarray:
    """Jacobian (..., 3, nv) of the robot's centre of mass: ``sum_i m_i Jv_i / sum_i m_i``."""
    _, J = link_com_jacobians(model, q)
    Jv = J[..., 3:, :]   # (..., nl, 3, nv): one matrix product with the weights m_i / sum m_i
    w = model.link_mass / model.total_mass
    return (w @ Jv.reshape(Jv.shape[:-2] + (3 * model.nv,))).reshape(Jv.shape[:-3] + (3, model.nv))


def kinetic_energy(model: RobotModel, q: Any, qd: Any) -> np.ndarray:
    """``K = 1/2 v^T M(q) v``, shape (...)."""
    require_model(model)
    from .crba import mass_matrix

    batch, (qf, qdf) = joint_arrays(model, (q, "q", "q"), (qd, "qd", "v"))   # one line if they do not broadcast
    M = mass_matrix(model, qf)
    K = 0.5 * np.einsum("ni,nij,nj->n", qdf, M, qdf)
    return K.reshape(batch) if batch else K[0]


def potential_energy(model: RobotModel, q: Any, *, gravity: Sequence[float] | None = None
                     ) -> np.ndarray:
    """``P = -sum_i m_i g . c_i(q)`` (zero at the world origin), shape (...); g in the root frame,
    so a root at ``root_pose = (R, p)`` adds ``-m g_world . p`` with ``g_world = R g``."""
    require_model(model)
    g = np.array(gravity_vector(model, gravity))
    c = _coms(model, _root_fk(model, q))
    P = -np.einsum("i,...ij,j->...", model.link_mass, c, g)
    if model.root_pose is not None:
        P = P - model.total_mass * float((model.root_pose[:3, :3] @ g) @ model.root_pose[:3, 3])
    return P
