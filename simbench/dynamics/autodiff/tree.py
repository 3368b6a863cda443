"""A :class:`~simbench.model.RobotModel` as a list of bodies, and the joint models in jax.

Two views of the tree, both plain numpy:

* the *dynamics tree* (:func:`bodies`): links attached by fixed joints merged into their parent
  (the RNEA's bodies, padded into arrays by :mod:`.packed`); with a floating base, body 0 is the
  root link, attached to the world by a free-flyer joint;
* the *link tree* (:func:`links`): every link, whose poses the Lagrangian formulation
  (:mod:`.lagrange`) differentiates; its joints become constants of the traced functions.

The joint models are the numba kernels' (:mod:`simbench.dynamics.kernels.joints`), Pinocchio's
conventions: a revolute joint turns about its axis ``a`` (joint frame) by ``R0 Rot(a, q)``, a
prismatic one moves along ``R0 a``; a spherical joint's q is a quaternion (x, y, z, w), its
velocity the child's angular velocity in the child frame; the free-flyer's q is
``[x, y, z, qx, qy, qz, qw]``, its velocity ``[v; w]`` in the child (base) frame. Quaternions
need not be unit: the rotation of ``q / |q|`` is used.

:func:`retract` moves a configuration along a tangent vector to first order
(``q_j + dv_j``; ``quat (x) (dw/2, 1)``; ``p + R dv_lin``): at ``dv = 0`` it has the derivative of
:func:`simbench.dynamics.configuration.integrate` (Pinocchio's ``integrate``), so derivatives
taken through it are Pinocchio's tangent-space derivatives.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...model import FIXED, PRISMATIC, REVOLUTE, SPHERICAL, RobotModel
from ...spatial import transform_inertia
from ._jax import jnp

FREE = -1   # the floating base's joint (not a URDF joint type)

__all__ = ["Body", "bodies", "link_frames", "links", "retract", "joint_pose", "quat_rotation", "quat_step", "FREE"]


@dataclass(frozen=True, eq=False)
class Body:
    """One body of a tree: its parent (-1: the world), joint type, joint origin ``(R0, p0)`` in
    the parent body's frame, unit axis, the joint's first index into q and v, and the spatial
    inertia ``(m, h = m c, Io)`` about the body origin (body frame)."""

    parent: int
    jtype: int
    R0: np.ndarray
    p0: np.ndarray
    axis: np.ndarray
    iq: int
    iv: int
    mass: float
    h: np.ndarray
    Io: np.ndarray


def _split_inertia(G: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """``(m, h, Io)`` of a 6x6 spatial inertia [angular; linear] about the frame origin."""
    Gh = G[:3, 3:]                           # m [c] = [h]
    return float(G[3, 3]), np.array([Gh[2, 1], Gh[0, 2], Gh[1, 0]]), np.array(G[:3, :3])


def _root(model: RobotModel) -> list[Body]:
    if not model.floating_base:
        return []
    m, h, Io = _split_inertia(np.array(model.link_spatial_inertia[0]))
    return [Body(-1, FREE, np.eye(3), np.zeros(3), np.zeros(3), 0, 0, m, h, Io)]


def links(model: RobotModel) -> list[Body]:
    """Every link as a body (fixed joints kept): body k is link k, minus the fixed root's entry
    (link 0 of a fixed-base model is the world: ``None`` stands in for it)."""
    out: list = _root(model) or [None]
    G = model.link_spatial_inertia
    for k in range(1, model.nlinks):
        j = k - 1
        T = model.joint_origin[j]
        m, h, Io = _split_inertia(np.array(G[k]))
        code = int(model.joint_type_code[j])
        parent = int(model.link_parent[k])
        out.append(Body(-1 if out[parent] is None else parent, code, np.array(T[:3, :3]),
                        np.array(T[:3, 3]), np.array(model.joint_axis[j]),
                        int(model.joint_q_start[j]), int(model.joint_v_start[j]), m, h, Io))
    return out


def bodies(model: RobotModel) -> list[Body]:
    """The dynamics tree: each movable joint's child with the links welded to it by fixed joints
    (their inertias moved into its frame); links welded to a fixed root are dropped."""
    return _merged(model)[0]


def link_frames(model: RobotModel) -> tuple[np.ndarray, np.ndarray]:
    """Per link, the :func:`bodies` row it belongs to (-1: welded to a fixed root, not a body)
    and its pose (4, 4) in that body's frame."""
    return _merged(model)[1:]


def _merged(model: RobotModel) -> tuple[list[Body], np.ndarray, np.ndarray]:
    floating = model.floating_base
    body_of = np.full(model.nlinks, 0 if floating else -1)
    offset = np.tile(np.eye(4), (model.nlinks, 1, 1))     # link k's pose in its body's frame
    spec = [(-1, FREE, np.eye(4), np.zeros(3), 0, 0)] if floating else []
    G = [np.array(model.link_spatial_inertia[0])] if floating else []
    for k in range(1, model.nlinks):
        j, p = k - 1, int(model.link_parent[k])
        code = int(model.joint_type_code[j])
        if code == FIXED:
            body_of[k] = body_of[p]
            offset[k] = offset[p] @ model.joint_origin[j]
            if body_of[k] >= 0:
                G[body_of[k]] = G[body_of[k]] + transform_inertia(offset[k],
                                                                  model.link_spatial_inertia[k])
            continue
        body_of[k] = len(spec)
        spec.append((int(body_of[p]), code, offset[p] @ model.joint_origin[j], model.joint_axis[j],
                     int(model.joint_q_start[j]), int(model.joint_v_start[j])))
        G.append(np.array(model.link_spatial_inertia[k]))
    result = []
    for (parent, code, T, axis, iq, iv), Gb in zip(spec, G):
        m, h, Io = _split_inertia(Gb)
        result.append(Body(parent, code, np.array(T[:3, :3]), np.array(T[:3, 3]),
                           np.array(axis, dtype=float), iq, iv, m, h, Io))
    return result, body_of, offset


# ---------------------------------------------------------------------- joint models (jax)
def quat_rotation(x, y, z, w):
    """Rotation matrix (..., 3, 3) of the quaternion (x, y, z, w) / |.| (any non-zero norm)."""
    s = 2.0 / (x * x + y * y + z * z + w * w)
    rows = ((1.0 - s * (y * y + z * z), s * (x * y - z * w), s * (x * z + y * w)),
            (s * (x * y + z * w), 1.0 - s * (x * x + z * z), s * (y * z - x * w)),
            (s * (x * z - y * w), s * (y * z + x * w), 1.0 - s * (x * x + y * y)))
    return jnp.stack([jnp.stack(r, axis=-1) for r in rows], axis=-2)


def _axis_rotation(a: np.ndarray, angle):
    """``Rot(a, angle) = 1 + sin [a] + (1 - cos) [a]^2`` (Rodrigues)."""
    K = np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])
    return np.eye(3) + jnp.sin(angle) * K + (1.0 - jnp.cos(angle)) * (K @ K)


def joint_pose(b: Body, q):
    """``(R, p)``: the child's orientation and origin in the parent body's frame."""
    if b.jtype == REVOLUTE:
        return b.R0 @ _axis_rotation(b.axis, q[b.iq]), jnp.asarray(b.p0)
    if b.jtype == PRISMATIC:
        return jnp.asarray(b.R0), b.p0 + (b.R0 @ b.axis) * q[b.iq]
    if b.jtype == SPHERICAL:
        return b.R0 @ quat_rotation(*(q[b.iq + i] for i in range(4))), jnp.asarray(b.p0)
    if b.jtype == FREE:
        return quat_rotation(*(q[b.iq + 3 + i] for i in range(4))), q[b.iq:b.iq + 3]
    return jnp.asarray(b.R0), jnp.asarray(b.p0)


def quat_step(q4, dw):
    """``q4 (x) (dw/2, 1)`` for quaternions (..., 4) = (x, y, z, w) and dw (..., 3)."""
    x, y, z, w = q4[..., 0], q4[..., 1], q4[..., 2], q4[..., 3]
    a, b, c = 0.5 * dw[..., 0], 0.5 * dw[..., 1], 0.5 * dw[..., 2]
    return jnp.stack([w * a + x + y * c - z * b, w * b - x * c + y + z * a,
                      w * c + x * b - y * a + z, w - x * a - y * b - z * c], axis=-1)


def retract(model_bodies: list[Body], q, dv):
    """q moved along the tangent vector dv to first order (see the module docstring)."""
    out = q
    for b in model_bodies:
        if b is None or b.jtype == FIXED:
            continue
        if b.jtype in (REVOLUTE, PRISMATIC):
            out = out.at[b.iq].add(dv[b.iv])
        elif b.jtype == SPHERICAL:
            out = out.at[b.iq:b.iq + 4].set(quat_step(q[b.iq:b.iq + 4], dv[b.iv:b.iv + 3]))
        else:
            R = quat_rotation(*(q[b.iq + 3 + i] for i in range(4)))
            out = out.at[b.iq:b.iq + 3].add(R @ dv[b.iv:b.iv + 3])
            out = out.at[b.iq + 3:b.iq + 7].set(quat_step(q[b.iq + 3:b.iq + 7], dv[b.iv + 3:b.iv + 6]))
    return out
