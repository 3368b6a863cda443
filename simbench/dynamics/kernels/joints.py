"""The joint models, on scalars: pose, motion subspace and joint forces of each joint type.

A joint connects a parent body to a child body whose frame is the joint frame after the motion.
With the joint origin ``(R0, p0)`` (parent frame) and the joint values ``j`` (a 7-tuple):

============  =====  =====  ==========================  ===================================
type          nq     nv     pose of the child           motion subspace S (child frame)
============  =====  =====  ==========================  ===================================
REVOLUTE      1      1      R0 Rot(a, q), p0            (a, 0)
PRISMATIC     1      1      R0, p0 + R0 a q             (0, a)
SPHERICAL     4      3      R0 R(quat), p0              (e_i, 0): angular velocity, child frame
FREE          7      6      R0 R(quat), p0 + R0 p       (0, e_i) then (e_i, 0): [v; w], child frame
FIXED         0      0      R0, p0                      -
============  =====  =====  ==========================  ===================================

The pseudo type MOTION (:data:`.layout.MOTION`) takes its rates as the motion itself
(``S r = r``): the block drivers' general path computes the pose and motion of the other joint
types beforehand, one loop per type, and runs one step for all of them.

Quaternions are (x, y, z, w) and need not be normalised (the rotation of q/|q| is used). The
FREE joint's velocity is Pinocchio's free-flyer convention: the child's linear then angular
velocity, both in the child frame; its joint force is the wrench [force; torque] on the child,
child frame. ``j`` holds, per type: revolute (sin q, 1 - cos q), prismatic (q), spherical
(x, y, z, w), free (px, py, pz, x, y, z, w).
"""
from __future__ import annotations

from ._jit import step
from .layout import C_A, C_AX, C_B, C_D, C_P0, C_R0, FREE, MOTION, PRISMATIC, REVOLUTE, SPHERICAL
from .tree import U
from .spatial import motion_cross, quat_rotation, rot_mul, rot_vec, sin_1mcos


# ------------------------------------------------------------------ constants of one body (readers)
@step
def joint_constants(F, o):
    """(R0, p0, R0 [a], R0 [a]^2, R0 a) of a body's joint; o: offset of its fdata row in F."""
    R0, P0, A, B, D = o + U(C_R0), o + U(C_P0), o + U(C_A), o + U(C_B), o + U(C_D)
    return ((F[R0], F[R0 + U(1)], F[R0 + U(2)], F[R0 + U(3)], F[R0 + U(4)], F[R0 + U(5)],
             F[R0 + U(6)], F[R0 + U(7)], F[R0 + U(8)]),
            (F[P0], F[P0 + U(1)], F[P0 + U(2)]),
            (F[A], F[A + U(1)], F[A + U(2)], F[A + U(3)], F[A + U(4)], F[A + U(5)], F[A + U(6)],
             F[A + U(7)], F[A + U(8)]),
            (F[B], F[B + U(1)], F[B + U(2)], F[B + U(3)], F[B + U(4)], F[B + U(5)], F[B + U(6)],
             F[B + U(7)], F[B + U(8)]),
            (F[D], F[D + U(1)], F[D + U(2)]))


@step
def joint_axis(F, o):
    a = o + U(C_AX)
    return F[a], F[a + U(1)], F[a + U(2)]


@step
def body_inertia(F, o):
    """The 10 numbers at offset o as an inertia (m, h, Io) (:mod:`.spatial`): a body's (o = its
    fdata row + C_M) or a composite inertia in a work array."""
    return (F[o], F[o + U(1)], F[o + U(2)], F[o + U(3)], F[o + U(4)], F[o + U(5)], F[o + U(6)],
            F[o + U(7)], F[o + U(8)], F[o + U(9)])


# ------------------------------------------------------------------ joint values and rates (readers)
@step
def joint_values(jt, q, iq):
    """The 7-tuple ``j`` of a joint of type jt whose entries of q start at iq."""
    if jt == REVOLUTE:
        s, u = sin_1mcos(q[iq])
        return (s, u, 0.0, 0.0, 0.0, 0.0, 0.0)
    if jt == PRISMATIC:
        return (q[iq], 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    if jt == SPHERICAL:
        return (q[iq], q[iq + 1], q[iq + 2], q[iq + 3], 0.0, 0.0, 0.0)
    if jt == FREE:
        return (q[iq], q[iq + 1], q[iq + 2], q[iq + 3], q[iq + 4], q[iq + 5],
                q[iq + 6])
    return (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


@step
def joint_rates(jt, x, iv):
    """The joint's entries of a velocity-space vector x as a 6-tuple (zero-padded)."""
    if jt == REVOLUTE or jt == PRISMATIC:
        return (x[iv], 0.0, 0.0, 0.0, 0.0, 0.0)
    if jt == SPHERICAL:
        return (x[iv], x[iv + 1], x[iv + 2], 0.0, 0.0, 0.0)
    if jt == FREE:
        return (x[iv], x[iv + 1], x[iv + 2], x[iv + 3], x[iv + 4], x[iv + 5])
    return (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


# ------------------------------------------------------------------ the joint model
@step
def joint_pose(jt, C, j):
    """Pose X = (R, t) of the child in the parent frame (see the module docstring)."""
    R0, p0, RA, RB, D = C
    if jt == REVOLUTE:
        s, u = j[0], j[1]
        return (R0[0] + s * RA[0] + u * RB[0], R0[1] + s * RA[1] + u * RB[1],
                R0[2] + s * RA[2] + u * RB[2], R0[3] + s * RA[3] + u * RB[3],
                R0[4] + s * RA[4] + u * RB[4], R0[5] + s * RA[5] + u * RB[5],
                R0[6] + s * RA[6] + u * RB[6], R0[7] + s * RA[7] + u * RB[7],
                R0[8] + s * RA[8] + u * RB[8], p0[0], p0[1], p0[2])
    if jt == PRISMATIC:
        d = j[0]
        return (R0[0], R0[1], R0[2], R0[3], R0[4], R0[5], R0[6], R0[7], R0[8],
                p0[0] + d * D[0], p0[1] + d * D[1], p0[2] + d * D[2])
    if jt == SPHERICAL:
        R = rot_mul(R0, quat_rotation(j[0], j[1], j[2], j[3]))
        return (R[0], R[1], R[2], R[3], R[4], R[5], R[6], R[7], R[8], p0[0], p0[1], p0[2])
    if jt == FREE:
        R = rot_mul(R0, quat_rotation(j[3], j[4], j[5], j[6]))
        t = rot_vec(R0, j[0], j[1], j[2])
        return (R[0], R[1], R[2], R[3], R[4], R[5], R[6], R[7], R[8],
                p0[0] + t[0], p0[1] + t[1], p0[2] + t[2])
    return (R0[0], R0[1], R0[2], R0[3], R0[4], R0[5], R0[6], R0[7], R0[8], p0[0], p0[1], p0[2])


@step
def joint_motion(jt, a, r):
    """S r: the joint's twist (or acceleration) in the child frame from its rates r (6-tuple)."""
    if jt == REVOLUTE:
        return (a[0] * r[0], a[1] * r[0], a[2] * r[0], 0.0, 0.0, 0.0)
    if jt == PRISMATIC:
        return (0.0, 0.0, 0.0, a[0] * r[0], a[1] * r[0], a[2] * r[0])
    if jt == SPHERICAL:
        return (r[0], r[1], r[2], 0.0, 0.0, 0.0)
    if jt == FREE:
        return (r[3], r[4], r[5], r[0], r[1], r[2])
    if jt == MOTION:
        return r
    return (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


@step
def joint_cross(jt, a, V, r):
    """V x (S r): the cross product of a twist V with the joint's motion, without the products
    by S's zero entries."""
    w0, w1, w2, v0, v1, v2 = V
    if jt == REVOLUTE or jt == SPHERICAL:
        if jt == REVOLUTE:
            x0, x1, x2 = a[0] * r[0], a[1] * r[0], a[2] * r[0]
        else:
            x0, x1, x2 = r[0], r[1], r[2]
        return (w1 * x2 - w2 * x1, w2 * x0 - w0 * x2, w0 * x1 - w1 * x0,
                v1 * x2 - v2 * x1, v2 * x0 - v0 * x2, v0 * x1 - v1 * x0)
    if jt == PRISMATIC:
        x0, x1, x2 = a[0] * r[0], a[1] * r[0], a[2] * r[0]
        return (0.0, 0.0, 0.0, w1 * x2 - w2 * x1, w2 * x0 - w0 * x2, w0 * x1 - w1 * x0)
    if jt == FREE:
        return motion_cross(V, (r[3], r[4], r[5], r[0], r[1], r[2]))
    if jt == MOTION:
        return motion_cross(V, r)
    return (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


@step
def motion_subspace(jt, a, c):
    """Column c of S (a 6-tuple)."""
    if jt == REVOLUTE:
        return (a[0], a[1], a[2], 0.0, 0.0, 0.0)
    if jt == PRISMATIC:
        return (0.0, 0.0, 0.0, a[0], a[1], a[2])
    e0 = 1.0 if c % 3 == 0 else 0.0
    e1 = 1.0 if c % 3 == 1 else 0.0
    e2 = 1.0 if c % 3 == 2 else 0.0
    if jt == FREE and c < 3:
        return (0.0, 0.0, 0.0, e0, e1, e2)
    return (e0, e1, e2, 0.0, 0.0, 0.0)


@step
def pick3(c, x0, x1, x2):
    """x_c for c in 0, 1, 2 (selects, no branch)."""
    return x0 if c == 0 else (x1 if c == 1 else x2)


@step
def joint_force(jt, a, c, F):
    """S_c^T F: generalised force c of the joint from the child's wrench F (S's zero entries
    skipped)."""
    if jt == REVOLUTE:
        return a[0] * F[0] + a[1] * F[1] + a[2] * F[2]
    if jt == PRISMATIC:
        return a[0] * F[3] + a[1] * F[4] + a[2] * F[5]
    if jt == SPHERICAL:
        return pick3(c, F[0], F[1], F[2])
    if jt == FREE:
        return pick3(c, F[3], F[4], F[5]) if c < 3 else pick3(c - 3, F[0], F[1], F[2])
    return 0.0


__all__ = ["joint_constants", "joint_axis", "body_inertia", "joint_values", "joint_rates",
           "joint_pose", "joint_motion", "joint_cross", "joint_force", "motion_subspace"]
