"""Forward kinematics and geometric Jacobians of one body, for rows of configurations.

A Jacobian is world-aligned with rows ``[angular; linear]`` (:mod:`simbench.dynamics.kinematics`):
entry i of v moves a body about (or along) a world axis ``z_i`` through the body's origin
``o_i``, so that the column of a point p fixed to a body it moves is ``(z_i, z_i x (p - o_i))``,
or ``(0, z_i)`` when it translates, and zero for a body it does not move.
"""
from __future__ import annotations

import numpy as np

from ._jit import entry, jit
from .entries import finite_rows
from .joints import joint_constants, joint_pose, joint_values
from .layout import RO2, TREE
from .tree import body, frow, sizes


@jit
def fk_row(P, q, T):
    """World pose (4x4) of every body of tree P at configuration q into T (nb, 4, 4); body 0 at
    the identity."""
    nb, nq, nv = sizes(P)
    for i in range(4):
        for j in range(4):
            T[0, i, j] = 1.0 if i == j else 0.0
    for k in range(1, nb):
        p, jt, iq, iv = body(P, nb, k)
        X = joint_pose(jt, joint_constants(P, frow(k)), joint_values(jt, q, iq))
        for i in range(3):
            for j in range(3):
                T[k, i, j] = T[p, i, 0] * X[j] + T[p, i, 1] * X[3 + j] + T[p, i, 2] * X[6 + j]
            T[k, i, 3] = T[p, i, 3] + T[p, i, 0] * X[9] + T[p, i, 1] * X[10] + T[p, i, 2] * X[11]
        T[k, 3, 0] = 0.0
        T[k, 3, 1] = 0.0
        T[k, 3, 2] = 0.0
        T[k, 3, 3] = 1.0


@entry(f"boolean({TREE}, {RO2}, float64[:, :, :, ::1])")
def fk_rows(P, Q, T):
    """World poses T (N, nb, 4, 4) of every body of tree P for the rows of Q; False (and T not
    written) if Q holds a non-finite value, or False when a pose comes out non-finite (a zero
    quaternion in Q: the caller explains)."""
    if not finite_rows(Q):
        return False
    for r in range(Q.shape[0]):
        fk_row(P, Q[r], T[r])
        if not finite_rows(T[r, :, 0]):   # the rotation's first column: nan from a zero quaternion
            return False
    return True


@jit
def finite3(X):
    """Every entry of the 3-D array X is finite."""
    for r in range(X.shape[0]):
        if not finite_rows(X[r]):
            return False
    return True


@entry(f"boolean({TREE}, {RO2}, int64[::1], float64[:, ::1], boolean[::1], boolean[:, ::1], "
       f"int64[::1], Array(float64, 3, 'C', readonly=True), float64[:, :, :, ::1], "
       f"float64[:, :, :, ::1])")
def jacobian_rows(P, Q, vbody, vaxis, vprism, moves, bodies, pts, out, poses):
    """Jacobians out (N, L, 6, nv), for the rows of Q, of the points pts[r, l] (pts (1 or N, L,
    3)), each fixed to body ``bodies[l]`` of tree P (in that body's frame). Entry i of v turns
    (or, ``vprism[i]``, slides) body ``vbody[i]`` about its axis ``vaxis[i]`` (that body's
    frame); ``moves[l, i]``: it moves body ``bodies[l]`` (see the module docstring). The world
    poses of the bodies, which the Jacobians need, also go to ``poses`` (N, nb, 4, 4) when it
    has N rows (give it 0 rows to leave them out). False (and out not written) if Q or pts
    holds a non-finite value, or False when a pose comes out non-finite (a zero quaternion in
    Q: the caller explains)."""
    if not (finite_rows(Q) and finite3(pts)):
        return False
    N = Q.shape[0]
    nb, nq, nv = sizes(P)
    keep = poses.shape[0] == N
    own = np.empty((nb, 4, 4))
    for r in range(N):
        T = poses[r] if keep else own
        fk_row(P, Q[r], T)
        if not finite_rows(T[:, 0]):
            return False
        for l in range(bodies.shape[0]):
            k = bodies[l]
            x, y, z = pts[r if pts.shape[0] > 1 else 0, l]
            p0 = T[k, 0, 0] * x + T[k, 0, 1] * y + T[k, 0, 2] * z + T[k, 0, 3]
            p1 = T[k, 1, 0] * x + T[k, 1, 1] * y + T[k, 1, 2] * z + T[k, 1, 3]
            p2 = T[k, 2, 0] * x + T[k, 2, 1] * y + T[k, 2, 2] * z + T[k, 2, 3]
            J = out[r, l]
            for i in range(nv):
                if not moves[l, i]:
                    for c in range(6):
                        J[c, i] = 0.0
                    continue
                b = vbody[i]
                a0, a1, a2 = vaxis[i, 0], vaxis[i, 1], vaxis[i, 2]
                z0 = T[b, 0, 0] * a0 + T[b, 0, 1] * a1 + T[b, 0, 2] * a2
                z1 = T[b, 1, 0] * a0 + T[b, 1, 1] * a1 + T[b, 1, 2] * a2
                z2 = T[b, 2, 0] * a0 + T[b, 2, 1] * a1 + T[b, 2, 2] * a2
                if vprism[i]:
                    J[0, i], J[1, i], J[2, i] = 0.0, 0.0, 0.0
                    J[3, i], J[4, i], J[5, i] = z0, z1, z2
                else:
                    d0, d1, d2 = p0 - T[b, 0, 3], p1 - T[b, 1, 3], p2 - T[b, 2, 3]
                    J[0, i], J[1, i], J[2, i] = z0, z1, z2
                    J[3, i], J[4, i], J[5, i] = z1 * d2 - z2 * d1, z2 * d0 - z0 * d2, z0 * d1 - z1 * d0
    return True
