"""Storage of the drivers: a body's 6-vectors and pose in the single-configuration work array
(flat, at an offset: :func:`.tree.wrow`), and in the flat block arrays of the batched drivers.

A block holds BS configurations; quantity ``col`` of body ``k`` for configuration ``b`` sits at
``W[(k * NW + col) * BS + b]`` of a flat array, the configuration innermost. The offsets are
unsigned (:data:`U`), so that numba emits no negative-index wrap-around and LLVM sees affine
addresses with constant strides; a loop over b then vectorises when it does not read what it
writes at an unknown distance (the drivers copy a parent's data into the scratch block ``P``).
"""
from __future__ import annotations

import math

import numpy as np

from ._jit import jit, step
from .joints import joint_motion, joint_pose
from .layout import BS, NW, PRISMATIC, REVOLUTE, SPHERICAL
from .spatial import SINCOS_MAX, sin_1mcos_poly
from .tree import U

UBS = np.uint64(BS)
# rows of the joint block T: the joint's motion S q' (6) and S q'' (6), sin q and 1 - cos q (2)
T_V, T_A, T_S = 0, 6, 12
NT = 14
#: rows of the scratch block P
NP = 13


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
def ld13b(W, o, b):
    return (W[o + b], W[o + UBS + b], W[o + U(2) * UBS + b], W[o + U(3) * UBS + b],
            W[o + U(4) * UBS + b], W[o + U(5) * UBS + b], W[o + U(6) * UBS + b],
            W[o + U(7) * UBS + b], W[o + U(8) * UBS + b], W[o + U(9) * UBS + b],
            W[o + U(10) * UBS + b], W[o + U(11) * UBS + b], W[o + U(12) * UBS + b])


@step
def st13b(W, o, b, I):
    (W[o + b], W[o + UBS + b], W[o + U(2) * UBS + b], W[o + U(3) * UBS + b],
     W[o + U(4) * UBS + b], W[o + U(5) * UBS + b], W[o + U(6) * UBS + b],
     W[o + U(7) * UBS + b], W[o + U(8) * UBS + b], W[o + U(9) * UBS + b],
     W[o + U(10) * UBS + b], W[o + U(11) * UBS + b], W[o + U(12) * UBS + b]) = I


@jit
def copy_rows(src, o_src, dst, o_dst, rows):
    """dst rows o_dst.. = src rows o_src.. (``rows`` whole rows of a block: one loop; the lanes
    past a short block's last configuration carry garbage that nothing reads)."""
    for i in range(rows * BS):
        dst[o_dst + U(i)] = src[o_src + U(i)]


@jit
def add_rows(src, o_src, dst, o_dst, rows):
    """dst rows o_dst.. += src rows o_src.. (whole rows, as :func:`copy_rows`)."""
    for i in range(rows * BS):
        dst[o_dst + U(i)] += src[o_src + U(i)]


@jit
def transpose_rows(X, b0, nb, out):
    """out[i * BS + b] = X[b0 + b, i]: rows b0 .. b0+nb of X as a flat block, configuration
    innermost (read once per block; the per-joint loops then read contiguous rows)."""
    for b in range(nb):
        for i in range(X.shape[1]):
            out[row(i) + U(b)] = X[b0 + b, i]


@step
def ld7b(X, o, b):
    return (X[o + b], X[o + UBS + b], X[o + U(2) * UBS + b], X[o + U(3) * UBS + b],
            X[o + U(4) * UBS + b], X[o + U(5) * UBS + b], X[o + U(6) * UBS + b])


@jit
def gather_joint(jt, C, a, Qb, iq, Xb, Yb, iv, nb, W, ow, T, rates):
    """The joint of a body for the nb configurations of a block: its pose in the parent into W
    at offset ``ow`` (12 rows) and, with ``rates`` 1, its motion S q' into T rows T_V.. and zero
    S q'' into rows T_A..; with ``rates`` 2, S q'' from Yb. Qb, Xb, Yb: q, q' and q'' as flat
    blocks (:func:`transpose_rows`). The per-type code stays here, so that the drivers' loops
    over configurations are branch-free; revolute joints (the common case) run in loops of their
    own, with the joint type a constant, that vectorise (prismatic and spherical joints too)."""
    oq = row(iq)
    ov = row(iv)
    if jt == REVOLUTE:
        big = 0
        for b in range(nb):
            x = Qb[oq + U(b)]
            T[row(T_S) + U(b)], T[row(T_S + 1) + U(b)] = sin_1mcos_poly(x)
            big += abs(x) > SINCOS_MAX             # an integer sum: the loop still vectorises
        if big:
            for b in range(nb):
                x = Qb[oq + U(b)]
                T[row(T_S) + U(b)], T[row(T_S + 1) + U(b)] = math.sin(x), 1.0 - math.cos(x)
        for i in range(nb):
            b = U(i)
            st_pose_b(W, ow, b, joint_pose(REVOLUTE, C, (T[row(T_S) + b], T[row(T_S + 1) + b],
                                                          0.0, 0.0, 0.0, 0.0, 0.0)))
        if rates > 0:
            for i in range(nb):
                b = U(i)
                st6b(T, row(T_V), b, joint_motion(REVOLUTE, a, (Xb[ov + b], 0.0, 0.0, 0.0, 0.0, 0.0)))
            if rates > 1:
                for i in range(nb):
                    b = U(i)
                    st6b(T, row(T_A), b, joint_motion(REVOLUTE, a, (Yb[ov + b], 0.0, 0.0, 0.0, 0.0, 0.0)))
        return
    if jt == PRISMATIC:
        for i in range(nb):
            b = U(i)
            st_pose_b(W, ow, b, joint_pose(PRISMATIC, C, (Qb[oq + b], 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)))
        if rates > 0:
            for i in range(nb):
                b = U(i)
                st6b(T, row(T_V), b, joint_motion(PRISMATIC, a, (Xb[ov + b], 0.0, 0.0, 0.0, 0.0, 0.0)))
            if rates > 1:
                for i in range(nb):
                    b = U(i)
                    st6b(T, row(T_A), b, joint_motion(PRISMATIC, a, (Yb[ov + b], 0.0, 0.0, 0.0, 0.0, 0.0)))
        return
    if jt == SPHERICAL:
        for i in range(nb):
            b = U(i)
            st_pose_b(W, ow, b, joint_pose(SPHERICAL, C, ld7b(Qb, oq, b)))
        if rates > 0:
            for i in range(nb):
                b = U(i)
                st6b(T, row(T_V), b, joint_motion(SPHERICAL, a, ld6b(Xb, ov, b)))
            if rates > 1:
                for i in range(nb):
                    b = U(i)
                    st6b(T, row(T_A), b, joint_motion(SPHERICAL, a, ld6b(Yb, ov, b)))
        return
    for i in range(nb):
        b = U(i)
        st_pose_b(W, ow, b, joint_pose(jt, C, ld7b(Qb, oq, b)))
        if rates > 0:
            st6b(T, row(T_V), b, joint_motion(jt, a, ld6b(Xb, ov, b)))
            if rates > 1:
                st6b(T, row(T_A), b, joint_motion(jt, a, ld6b(Yb, ov, b)))
