"""Storage of the drivers: a body's 6-vectors and pose in the single-configuration work array
(flat, at an offset: :func:`.tree.wrow`), and in the flat block arrays of the batched drivers.

A block holds BS configurations ("lanes"); quantity ``col`` of body ``k`` for lane ``b`` sits at
``W[(k * NW + col) * BS + b]`` of a flat array, the lane innermost. Every loop over the lanes
runs over all BS of them (a constant trip count: LLVM vectorises it without a remainder loop);
the lanes past the last row of a short block repeat that row (:func:`transpose_rows`), so they
compute finite numbers that nothing reads. The offsets are unsigned (:data:`U`), so that numba
emits no negative-index wrap-around and LLVM sees affine addresses with constant strides.
"""
from __future__ import annotations

import math

import numpy as np

from ._jit import jit, step
from .joints import joint_motion, joint_pose
from .layout import BS, FIXED, FREE, MOTION, NW, PRISMATIC, REVOLUTE, SPHERICAL
from .spatial import SINCOS_MAX, sin_1mcos_poly
from .tree import U

UBS = np.uint64(BS)
#: rows of the joint block J of the general path: the joint's pose (12), S q' (6), S q'' (6)
J_X, J_V, J_A = 0, 12, 18
NJ = 24


# ------------------------------------------------------------------ one configuration: flat, offset o
@step
def load6(W, o):
    return W[o], W[o + U(1)], W[o + U(2)], W[o + U(3)], W[o + U(4)], W[o + U(5)]


@step
def store6(W, o, V):
    W[o], W[o + U(1)], W[o + U(2)], W[o + U(3)], W[o + U(4)], W[o + U(5)] = V


@step
def add_into6(W, o, V):
    W[o] += V[0]
    W[o + U(1)] += V[1]
    W[o + U(2)] += V[2]
    W[o + U(3)] += V[3]
    W[o + U(4)] += V[4]
    W[o + U(5)] += V[5]


@step
def load_pose(W, o):
    return (W[o], W[o + U(1)], W[o + U(2)], W[o + U(3)], W[o + U(4)], W[o + U(5)], W[o + U(6)],
            W[o + U(7)], W[o + U(8)], W[o + U(9)], W[o + U(10)], W[o + U(11)])


@step
def store_pose(W, o, X):
    (W[o], W[o + U(1)], W[o + U(2)], W[o + U(3)], W[o + U(4)], W[o + U(5)], W[o + U(6)],
     W[o + U(7)], W[o + U(8)], W[o + U(9)], W[o + U(10)], W[o + U(11)]) = X


# ------------------------------------------------------------------ blocks: flat, b innermost
@step
def at(k, col):
    """Offset of quantity ``col`` of body ``k`` in a block work array."""
    return U((k * NW + col) * BS)


@step
def row(r):
    """Offset of row r of a scratch block."""
    return U(r * BS)


@step
def ld6b(W, o, b):
    return (W[o + b], W[o + UBS + b], W[o + U(2) * UBS + b], W[o + U(3) * UBS + b],
            W[o + U(4) * UBS + b], W[o + U(5) * UBS + b])


@step
def st6b(W, o, b, V):
    (W[o + b], W[o + UBS + b], W[o + U(2) * UBS + b], W[o + U(3) * UBS + b],
     W[o + U(4) * UBS + b], W[o + U(5) * UBS + b]) = V


@step
def ld9b(W, o, b):
    return (W[o + b], W[o + UBS + b], W[o + U(2) * UBS + b], W[o + U(3) * UBS + b],
            W[o + U(4) * UBS + b], W[o + U(5) * UBS + b], W[o + U(6) * UBS + b],
            W[o + U(7) * UBS + b], W[o + U(8) * UBS + b])


@step
def ld_pose_b(W, o, b):
    return (W[o + b], W[o + UBS + b], W[o + U(2) * UBS + b], W[o + U(3) * UBS + b],
            W[o + U(4) * UBS + b], W[o + U(5) * UBS + b], W[o + U(6) * UBS + b],
            W[o + U(7) * UBS + b], W[o + U(8) * UBS + b], W[o + U(9) * UBS + b],
            W[o + U(10) * UBS + b], W[o + U(11) * UBS + b])


@step
def st_pose_b(W, o, b, X):
    (W[o + b], W[o + UBS + b], W[o + U(2) * UBS + b], W[o + U(3) * UBS + b],
     W[o + U(4) * UBS + b], W[o + U(5) * UBS + b], W[o + U(6) * UBS + b],
     W[o + U(7) * UBS + b], W[o + U(8) * UBS + b], W[o + U(9) * UBS + b],
     W[o + U(10) * UBS + b], W[o + U(11) * UBS + b]) = X


@step
def ld7b(X, o, b):
    return (X[o + b], X[o + UBS + b], X[o + U(2) * UBS + b], X[o + U(3) * UBS + b],
            X[o + U(4) * UBS + b], X[o + U(5) * UBS + b], X[o + U(6) * UBS + b])


@step
def ld10b(W, o, b):
    return (W[o + b], W[o + UBS + b], W[o + U(2) * UBS + b], W[o + U(3) * UBS + b],
            W[o + U(4) * UBS + b], W[o + U(5) * UBS + b], W[o + U(6) * UBS + b],
            W[o + U(7) * UBS + b], W[o + U(8) * UBS + b], W[o + U(9) * UBS + b])


@step
def st10b(W, o, b, I):
    (W[o + b], W[o + UBS + b], W[o + U(2) * UBS + b], W[o + U(3) * UBS + b],
     W[o + U(4) * UBS + b], W[o + U(5) * UBS + b], W[o + U(6) * UBS + b],
     W[o + U(7) * UBS + b], W[o + U(8) * UBS + b], W[o + U(9) * UBS + b]) = I


@jit
def copy_rows(src, o_src, dst, rows):
    """dst rows 0 .. rows = src rows from offset o_src (whole rows: one loop)."""
    for i in range(rows * BS):
        dst[U(i)] = src[o_src + U(i)]


# ------------------------------------------------------------------ rows in and out of a block
@jit
def transpose_rows(X, b0, nb, out):
    """out[i * BS + b] = X[b0 + b, i]: rows b0 .. b0+nb of X (C order) as a flat block, lane
    innermost; lanes nb .. BS repeat row b0+nb-1. A whole block is read through unsigned flat
    offsets, without the clamp and numba's test for negative indices: measured in one process,
    1.4-1.7x faster transposes and 16-18 % faster batched inverse dynamics for the iiwa and the
    Panda (4-7 % for the mass matrix, 3-5 % for the forward dynamics)."""
    n = X.shape[1]
    if nb == BS:
        flat = X.reshape(-1)
        base = U(b0 * n)
        for i in range(n):
            o = row(i)
            for b in range(BS):
                out[o + U(b)] = flat[base + U(b) * U(n) + U(i)]
        return
    last = b0 + nb - 1
    for i in range(n):
        o = row(i)
        for b in range(BS):
            out[o + U(b)] = X[min(b0 + b, last), i]


@jit
def untranspose_rows(Xb, n, b0, nb, out):
    """out[b0 + b, i] = Xb[i * BS + b] for the nb lanes of a block and i < n."""
    for b in range(nb):
        for i in range(n):
            out[b0 + b, i] = Xb[row(i) + U(b)]


@jit(fastmath={"contract"})
def sincos_lanes(Qb, oq, SC):
    """SC rows 0, 1 = sin q, 1 - cos q of the block row at offset oq: the vectorisable
    polynomials (:func:`.spatial.sin_1mcos_poly`), math.sin/cos for a block holding an angle
    beyond SINCOS_MAX. Compiled with FMA contraction only (the argument reduction is not
    reassociated)."""
    big = 0
    for i in range(BS):
        b = U(i)
        x = Qb[oq + b]
        SC[b], SC[UBS + b] = sin_1mcos_poly(x)
        big += abs(x) > SINCOS_MAX             # an integer sum: the loop still vectorises
    if big:
        for i in range(BS):
            b = U(i)
            x = Qb[oq + b]
            SC[b], SC[UBS + b] = math.sin(x), 1.0 - math.cos(x)


@step
def lane_values(jt, Qb, SC, oq, b):
    """The joint values ``j`` (:func:`.joints.joint_values`) of lane b; a revolute joint's sin
    and 1 - cos come from SC (:func:`sincos_lanes`)."""
    if jt == REVOLUTE:
        return (SC[b], SC[UBS + b], 0.0, 0.0, 0.0, 0.0, 0.0)
    if jt == PRISMATIC:
        return (Qb[oq + b], 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    if jt == SPHERICAL:
        return (Qb[oq + b], Qb[oq + UBS + b], Qb[oq + U(2) * UBS + b], Qb[oq + U(3) * UBS + b],
                0.0, 0.0, 0.0)
    if jt == FREE:
        return ld7b(Qb, oq, b)
    return (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


@step
def lane_rates(jt, X, ov, b):
    """The joint's rates (:func:`.joints.joint_rates`) of lane b from the block row at ov."""
    if jt == REVOLUTE or jt == PRISMATIC:
        return (X[ov + b], 0.0, 0.0, 0.0, 0.0, 0.0)
    if jt == SPHERICAL:
        return (X[ov + b], X[ov + UBS + b], X[ov + U(2) * UBS + b], 0.0, 0.0, 0.0)
    if jt == FREE:
        return ld6b(X, ov, b)
    return (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


@step
def lane_pose(jt, C, Qb, SC, oq, J, b):
    """The joint's pose in lane b: from the joint model, or (MOTION) from the joint block J."""
    if jt == MOTION:
        return ld_pose_b(J, row(J_X), b)
    return joint_pose(jt, C, lane_values(jt, Qb, SC, oq, b))


@step
def lane_motion(jt, X, ov, J, oj, b):
    """The joint's rates in lane b (the block row of X at ov), or (MOTION) its motion from the
    joint block J at offset oj."""
    if jt == MOTION:
        return ld6b(J, oj, b)
    return lane_rates(jt, X, ov, b)


@step
def joint_lanes_of(jt, C, a, Qb, oq, QDb, QDDb, ov, J, rates):
    for i in range(BS):
        b = U(i)
        st_pose_b(J, row(J_X), b, joint_pose(jt, C, lane_values(jt, Qb, Qb, oq, b)))
    if rates:
        for i in range(BS):
            b = U(i)
            st6b(J, row(J_V), b, joint_motion(jt, a, lane_rates(jt, QDb, ov, b)))
            st6b(J, row(J_A), b, joint_motion(jt, a, lane_rates(jt, QDDb, ov, b)))


@jit
def joint_lanes(jt, C, a, Qb, oq, QDb, QDDb, ov, J, rates):
    """The general path's joint block J for a joint of type jt (not REVOLUTE, whose drivers run
    fused): its pose in rows J_X.. and, when ``rates``, its motions S q' and S q'' in rows
    J_V.., J_A... One loop per joint type (the type a constant in it, so that it vectorises)."""
    if jt == PRISMATIC:
        joint_lanes_of(np.int64(PRISMATIC), C, a, Qb, oq, QDb, QDDb, ov, J, rates)
    elif jt == SPHERICAL:
        joint_lanes_of(np.int64(SPHERICAL), C, a, Qb, oq, QDb, QDDb, ov, J, rates)
    elif jt == FREE:
        joint_lanes_of(np.int64(FREE), C, a, Qb, oq, QDb, QDDb, ov, J, rates)
    else:
        joint_lanes_of(np.int64(FIXED), C, a, Qb, oq, QDb, QDDb, ov, J, rates)
