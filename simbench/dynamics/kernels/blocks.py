"""Storage helpers of the drivers: a body's 6-vectors and poses in the single-configuration work
array ``W[k, col]`` and in the block work array ``W[k, col, b]`` (configuration b of a block, the
innermost index so that a loop over b vectorises), and the joint values / rates of a block.
"""
from __future__ import annotations

import math

from ._jit import jit, step
from .layout import FREE, JOINT_NQ, JOINT_NV, PRISMATIC, REVOLUTE, SPHERICAL, W_R, W_T
from .spatial import SINCOS_MAX, sin_1mcos_poly

# scratch rows of a block (T array): joint values (7), rates (6), accelerations (6)
T_J, T_V, T_A = 0, 7, 13
NT = 19


@step
def load6(W, k, col):
    return W[k, col], W[k, col + 1], W[k, col + 2], W[k, col + 3], W[k, col + 4], W[k, col + 5]


@step
def store6(W, k, col, V):
    W[k, col], W[k, col + 1], W[k, col + 2], W[k, col + 3], W[k, col + 4], W[k, col + 5] = V


@step
def add_into6(W, k, col, V):
    W[k, col] += V[0]
    W[k, col + 1] += V[1]
    W[k, col + 2] += V[2]
    W[k, col + 3] += V[3]
    W[k, col + 4] += V[4]
    W[k, col + 5] += V[5]


@step
def load_pose(W, k):
    return (W[k, W_R], W[k, W_R + 1], W[k, W_R + 2], W[k, W_R + 3], W[k, W_R + 4], W[k, W_R + 5],
            W[k, W_R + 6], W[k, W_R + 7], W[k, W_R + 8], W[k, W_T], W[k, W_T + 1], W[k, W_T + 2])


@step
def store_pose(W, k, X):
    (W[k, W_R], W[k, W_R + 1], W[k, W_R + 2], W[k, W_R + 3], W[k, W_R + 4], W[k, W_R + 5],
     W[k, W_R + 6], W[k, W_R + 7], W[k, W_R + 8], W[k, W_T], W[k, W_T + 1], W[k, W_T + 2]) = X


@step
def load6_block(W, k, col, b):
    return (W[k, col, b], W[k, col + 1, b], W[k, col + 2, b],
            W[k, col + 3, b], W[k, col + 4, b], W[k, col + 5, b])


@step
def store6_block(W, k, col, b, V):
    (W[k, col, b], W[k, col + 1, b], W[k, col + 2, b],
     W[k, col + 3, b], W[k, col + 4, b], W[k, col + 5, b]) = V


@step
def add_into6_block(W, k, col, b, V):
    W[k, col, b] += V[0]
    W[k, col + 1, b] += V[1]
    W[k, col + 2, b] += V[2]
    W[k, col + 3, b] += V[3]
    W[k, col + 4, b] += V[4]
    W[k, col + 5, b] += V[5]


@step
def load_pose_block(W, k, b):
    return (W[k, W_R, b], W[k, W_R + 1, b], W[k, W_R + 2, b], W[k, W_R + 3, b], W[k, W_R + 4, b],
            W[k, W_R + 5, b], W[k, W_R + 6, b], W[k, W_R + 7, b], W[k, W_R + 8, b],
            W[k, W_T, b], W[k, W_T + 1, b], W[k, W_T + 2, b])


@step
def store_pose_block(W, k, b, X):
    (W[k, W_R, b], W[k, W_R + 1, b], W[k, W_R + 2, b], W[k, W_R + 3, b], W[k, W_R + 4, b],
     W[k, W_R + 5, b], W[k, W_R + 6, b], W[k, W_R + 7, b], W[k, W_R + 8, b],
     W[k, W_T, b], W[k, W_T + 1, b], W[k, W_T + 2, b]) = X


@step
def block_values(T, b):
    """The joint values j (7-tuple) of configuration b, gathered by :func:`gather_joint`."""
    return (T[T_J, b], T[T_J + 1, b], T[T_J + 2, b], T[T_J + 3, b], T[T_J + 4, b],
            T[T_J + 5, b], T[T_J + 6, b])


@step
def block_rates(T, row, b):
    return T[row, b], T[row + 1, b], T[row + 2, b], T[row + 3, b], T[row + 4, b], T[row + 5, b]


@jit
def gather_joint(jt, Q, iq, X, Y, iv, b0, nb, T, rates):
    """T[T_J:T_J+7, b]: joint values of rows b0 .. b0+nb of Q (sin q and 1 - cos q for a revolute
    joint: polynomials that vectorise). ``rates`` 1: also T[T_V:T_V+6], the joint's entries of X
    (velocities), and zero accelerations T[T_A:T_A+6]; 2: the accelerations from Y."""
    if jt == REVOLUTE:
        big = 0.0
        for b in range(nb):
            big = max(big, abs(Q[b0 + b, iq]))
        if big > SINCOS_MAX:
            for b in range(nb):
                x = Q[b0 + b, iq]
                T[T_J, b] = math.sin(x)
                T[T_J + 1, b] = 1.0 - math.cos(x)
        else:
            for b in range(nb):
                T[T_J, b], T[T_J + 1, b] = sin_1mcos_poly(Q[b0 + b, iq])
    elif jt == PRISMATIC or jt == SPHERICAL or jt == FREE:
        for c in range(JOINT_NQ[jt]):
            for b in range(nb):
                T[T_J + c, b] = Q[b0 + b, iq + c]
    if rates > 0:
        for c in range(JOINT_NV[jt]):
            for b in range(nb):
                T[T_V + c, b] = X[b0 + b, iv + c]
                T[T_A + c, b] = Y[b0 + b, iv + c] if rates > 1 else 0.0
