"""The Coriolis matrix ``C(q, v)`` of any tree (floating base, spherical joints), by one compiled
walk of the tree: ``C v + g = bias_forces`` and ``dM/dt - 2 C`` skew-symmetric, Pinocchio's
``computeCoriolisMatrix`` (on a fixed base, the Christoffel ``C`` of
:func:`.lagrange.coriolis_matrix`, which refuses floating bases and spherical joints).

The formula (Echeandia & Wensing, "A Numerical Method for Computing the Coriolis Matrix and
Christoffel Symbols for Rigid-Body Systems", 2021; Featherstone, "Rigid Body Dynamics
Algorithms", 2008, ch. 2 for the spatial algebra): with every spatial quantity in world
coordinates at the world origin (Pluecker, rows ``[angular; linear]``), body k's inertia
``I_k``, twist ``V_k = J_k v`` and Jacobian ``J_k`` (column j: the joint axis ``S_j`` of entry
j of v when it moves body k, else 0),

``C = sum_k J_k^T (I_k dJ_k/dt + B_k J_k)``,
``B_k = 1/2 [(V_k x*) I_k - I_k (V_k x) + (I_k V_k) xbar*]``,

where ``(h xbar*) U = U x* h``. Then ``B_k V_k = V_k x* I_k V_k`` (Newton-Euler: ``C v`` is the
velocity product of the RNEA), and ``dM/dt - 2C = sum_k (dJ^T I J - J^T I dJ) - J^T (I V)xbar* J``
is skew-symmetric since ``dI_k/dt = (V x*) I - I (V x)`` and ``h xbar*`` is skew.

Walking the tree: a column ``S_j`` is fixed in the body b(j) its joint moves, so
``dS_j/dt = V_b(j) x S_j`` whatever k; entry ``C[a, b]`` sums over the bodies k that both a and
b move, the subtree of the deeper of b(a), b(b) (zero when neither is an ancestor of the
other). With the subtree ("composite") sums of ``I_k``, of ``dI_k/dt`` and of the momenta
``h_k = I_k V_k`` (``B`` is linear in them: ``B_c = 1/2 dI_c + 1/2 h_c xbar*``), one backward
pass gives, at body i,

``C[a, b] = S_a . (Ic dS_b + B_c S_b)`` for b a column of i and a of i or of its ancestors,
``C[a, b] = (Ic S_a) . dS_b + (B_c^T S_a) . S_b`` for a a column of i and b of its ancestors,

``B_c^T S = 1/2 dI_c S - 1/2 S x* h_c``. A world inertia (mass m, first moment h, rotational
inertia I about the origin) and its rate (``h' = m v + w x h``,
``I' = 2 (h . v) 1 - v h^T - h v^T + [w] I - I [w]`` for a twist ``(w, v)``) are 10 and 9
numbers, so the composites cost no 6x6 products (Pinocchio's ``computeCoriolisMatrix`` keeps a
6x6 ``B`` per joint). The floating base's columns are its ``[linear; angular]`` axes in the base
frame, so C's base rows and columns come in v's order (Pinocchio's free flyer).

The kernel is compiled with numba (:func:`.kernels._jit.jit`, cached on disk) and
self-contained: it reads the packed tree through arrays extracted here (:func:`_tree`), and
inlines nothing from other modules. Measured with timeit (best of 7, a 2-core machine under load
10, so +-50 %): one configuration 5-7 us on the iiwa, 5-10 us Panda, 6-11 us a1 floating,
11-18 us humanoid (spherical), Pinocchio 4.1's ``computeCoriolisMatrix`` 4.6-6.2, 6.3-7.3,
9.5-13, 12-21 us (0.7-1.5x); 1000 configurations in one call 0.8-1.7, 1.8-2.3, 3.5-6.4,
7.5-14 ms against a Python loop over Pinocchio 6.8-11, 6.9-11, 11-17, 13-21 ms;
:func:`.lagrange.coriolis_matrix` 1.3-1.9 ms for one iiwa configuration.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import SimbenchError
from ..model import RobotModel
from .inputs import F8, ND, joint_arrays
from .kernels import layout as L
from .kernels._jit import jit
from .packing import KernelModel, kernel_model

__all__ = ["coriolis_matrix"]

# joint codes as the kernel reads them (copied: the kernel inlines nothing from other modules)
_REVOLUTE, _PRISMATIC, _SPHERICAL, _FREE = 1, 2, 3, 4
assert (L.REVOLUTE, L.PRISMATIC, L.SPHERICAL, L.FREE) == (_REVOLUTE, _PRISMATIC, _SPHERICAL, _FREE)


@jit
def _coriolis_rows(ij, R0, RA, RB, p0, ax, inertia, Q, V, C):  # pragma: no cover - compiled
    """C (N, nv, nv) for the rows of Q (N, nq), V (N, nv); the tree of :func:`_tree`. False (C
    then partly written) if an input or the result is not finite (a zero quaternion)."""
    N, nv = Q.shape[0], V.shape[1]
    nb = ij.shape[0]
    Rw = np.empty((nb, 9))
    pw = np.empty((nb, 3))
    Tw = np.empty((nb, 6))       # twist (w, v), world, at the world origin
    Ic = np.empty((nb, 10))      # composite inertia: m, h (3), I (xx xy xz yy yz zz)
    dI = np.empty((nb, 9))       # composite rate: h' (3), I' (6)
    hc = np.empty((nb, 6))       # composite momentum (n, f)
    S = np.empty((max(nv, 1), 6))
    dS = np.empty((max(nv, 1), 6))
    for r in range(N):
        for a in range(Q.shape[1]):
            if not np.isfinite(Q[r, a]):
                return False
        for a in range(nv):
            if not np.isfinite(V[r, a]):
                return False
        for a in range(nv):
            for b in range(nv):
                C[r, a, b] = 0.0
        for a in range(9):
            Rw[0, a] = 1.0 if a % 4 == 0 else 0.0
        for a in range(3):
            pw[0, a] = 0.0
        for a in range(6):
            Tw[0, a] = 0.0
        # ---------------------------------------------------------------- forward: parents first
        for k in range(1, nb):
            p, jt, iq, iv = ij[k, 0], ij[k, 1], ij[k, 2], ij[k, 3]
            # joint pose X = (Xr, Xp) of the child in the parent frame
            x0, x1, x2 = p0[k, 0], p0[k, 1], p0[k, 2]
            Xr0, Xr1, Xr2, Xr3, Xr4, Xr5, Xr6, Xr7, Xr8 = (R0[k, 0], R0[k, 1], R0[k, 2], R0[k, 3], R0[k, 4],
                                                           R0[k, 5], R0[k, 6], R0[k, 7], R0[k, 8])
            if jt == 1:
                s, u = np.sin(Q[r, iq]), 1.0 - np.cos(Q[r, iq])
                Xr0 += s * RA[k, 0] + u * RB[k, 0]
                Xr1 += s * RA[k, 1] + u * RB[k, 1]
                Xr2 += s * RA[k, 2] + u * RB[k, 2]
                Xr3 += s * RA[k, 3] + u * RB[k, 3]
                Xr4 += s * RA[k, 4] + u * RB[k, 4]
                Xr5 += s * RA[k, 5] + u * RB[k, 5]
                Xr6 += s * RA[k, 6] + u * RB[k, 6]
                Xr7 += s * RA[k, 7] + u * RB[k, 7]
                Xr8 += s * RA[k, 8] + u * RB[k, 8]
            elif jt == 2:
                d = Q[r, iq]
                x0 += d * (Xr0 * ax[k, 0] + Xr1 * ax[k, 1] + Xr2 * ax[k, 2])
                x1 += d * (Xr3 * ax[k, 0] + Xr4 * ax[k, 1] + Xr5 * ax[k, 2])
                x2 += d * (Xr6 * ax[k, 0] + Xr7 * ax[k, 1] + Xr8 * ax[k, 2])
            elif jt == 3 or jt == 4:
                o = iq + 3 if jt == 4 else iq
                qx, qy, qz, qw = Q[r, o], Q[r, o + 1], Q[r, o + 2], Q[r, o + 3]
                if jt == 4:
                    t0, t1, t2 = Q[r, iq], Q[r, iq + 1], Q[r, iq + 2]
                    x0 += Xr0 * t0 + Xr1 * t1 + Xr2 * t2
                    x1 += Xr3 * t0 + Xr4 * t1 + Xr5 * t2
                    x2 += Xr6 * t0 + Xr7 * t1 + Xr8 * t2
                n2 = qx * qx + qy * qy + qz * qz + qw * qw
                if not n2 > 0.0:
                    return False
                sc = 2.0 / n2
                xs, ys, zs = qx * sc, qy * sc, qz * sc
                wx, wy, wz = qw * xs, qw * ys, qw * zs
                xx, xy, xz = qx * xs, qx * ys, qx * zs
                yy, yz, zz = qy * ys, qy * zs, qz * zs
                q0, q1, q2 = 1.0 - (yy + zz), xy - wz, xz + wy
                q3, q4, q5 = xy + wz, 1.0 - (xx + zz), yz - wx
                q6, q7, q8 = xz - wy, yz + wx, 1.0 - (xx + yy)
                Xr0, Xr1, Xr2, Xr3, Xr4, Xr5, Xr6, Xr7, Xr8 = (
                    Xr0 * q0 + Xr1 * q3 + Xr2 * q6, Xr0 * q1 + Xr1 * q4 + Xr2 * q7, Xr0 * q2 + Xr1 * q5 + Xr2 * q8,
                    Xr3 * q0 + Xr4 * q3 + Xr5 * q6, Xr3 * q1 + Xr4 * q4 + Xr5 * q7, Xr3 * q2 + Xr4 * q5 + Xr5 * q8,
                    Xr6 * q0 + Xr7 * q3 + Xr8 * q6, Xr6 * q1 + Xr7 * q4 + Xr8 * q7, Xr6 * q2 + Xr7 * q5 + Xr8 * q8)
            # world pose: R_k = R_p Xr, p_k = p_p + R_p Xp
            for a in range(3):
                A0, A1, A2 = Rw[p, 3 * a], Rw[p, 3 * a + 1], Rw[p, 3 * a + 2]
                Rw[k, 3 * a] = A0 * Xr0 + A1 * Xr3 + A2 * Xr6
                Rw[k, 3 * a + 1] = A0 * Xr1 + A1 * Xr4 + A2 * Xr7
                Rw[k, 3 * a + 2] = A0 * Xr2 + A1 * Xr5 + A2 * Xr8
                pw[k, a] = pw[p, a] + A0 * x0 + A1 * x1 + A2 * x2
            P0, P1, P2 = pw[k, 0], pw[k, 1], pw[k, 2]
            # the joint's columns of S (world, at the world origin) and the twist
            w0, w1, w2, v0, v1, v2 = Tw[p, 0], Tw[p, 1], Tw[p, 2], Tw[p, 3], Tw[p, 4], Tw[p, 5]
            nj = 1 if (jt == 1 or jt == 2) else (3 if jt == 3 else (6 if jt == 4 else 0))
            for c in range(nj):
                j = iv + c
                lin = jt == 2 or (jt == 4 and c < 3)
                if jt == 1 or jt == 2:
                    e0, e1, e2 = ax[k, 0], ax[k, 1], ax[k, 2]
                else:
                    cc = c % 3
                    e0, e1, e2 = 1.0 if cc == 0 else 0.0, 1.0 if cc == 1 else 0.0, 1.0 if cc == 2 else 0.0
                z0 = Rw[k, 0] * e0 + Rw[k, 1] * e1 + Rw[k, 2] * e2
                z1 = Rw[k, 3] * e0 + Rw[k, 4] * e1 + Rw[k, 5] * e2
                z2 = Rw[k, 6] * e0 + Rw[k, 7] * e1 + Rw[k, 8] * e2
                if lin:
                    S[j, 0], S[j, 1], S[j, 2], S[j, 3], S[j, 4], S[j, 5] = 0.0, 0.0, 0.0, z0, z1, z2
                else:
                    S[j, 0], S[j, 1], S[j, 2] = z0, z1, z2
                    S[j, 3], S[j, 4], S[j, 5] = P1 * z2 - P2 * z1, P2 * z0 - P0 * z2, P0 * z1 - P1 * z0
                s = V[r, j]
                w0 += s * S[j, 0]
                w1 += s * S[j, 1]
                w2 += s * S[j, 2]
                v0 += s * S[j, 3]
                v1 += s * S[j, 4]
                v2 += s * S[j, 5]
            Tw[k, 0], Tw[k, 1], Tw[k, 2], Tw[k, 3], Tw[k, 4], Tw[k, 5] = w0, w1, w2, v0, v1, v2
            for c in range(nj):   # dS = V_k x S
                j = iv + c
                u0, u1, u2, u3, u4, u5 = S[j, 0], S[j, 1], S[j, 2], S[j, 3], S[j, 4], S[j, 5]
                dS[j, 0] = w1 * u2 - w2 * u1
                dS[j, 1] = w2 * u0 - w0 * u2
                dS[j, 2] = w0 * u1 - w1 * u0
                dS[j, 3] = w1 * u5 - w2 * u4 + v1 * u2 - v2 * u1
                dS[j, 4] = w2 * u3 - w0 * u5 + v2 * u0 - v0 * u2
                dS[j, 5] = w0 * u4 - w1 * u3 + v0 * u1 - v1 * u0
            # the body's inertia in the world, about the origin
            m = inertia[k, 0]
            b0, b1, b2 = inertia[k, 1], inertia[k, 2], inertia[k, 3]
            h0 = Rw[k, 0] * b0 + Rw[k, 1] * b1 + Rw[k, 2] * b2     # R h
            h1 = Rw[k, 3] * b0 + Rw[k, 4] * b1 + Rw[k, 5] * b2
            h2 = Rw[k, 6] * b0 + Rw[k, 7] * b1 + Rw[k, 8] * b2
            I00, I01, I02, I11, I12, I22 = (inertia[k, 4], inertia[k, 5], inertia[k, 6], inertia[k, 7],
                                            inertia[k, 8], inertia[k, 9])
            # R Io R^T
            a00 = I00 * Rw[k, 0] + I01 * Rw[k, 1] + I02 * Rw[k, 2]
            a01 = I01 * Rw[k, 0] + I11 * Rw[k, 1] + I12 * Rw[k, 2]
            a02 = I02 * Rw[k, 0] + I12 * Rw[k, 1] + I22 * Rw[k, 2]
            a10 = I00 * Rw[k, 3] + I01 * Rw[k, 4] + I02 * Rw[k, 5]
            a11 = I01 * Rw[k, 3] + I11 * Rw[k, 4] + I12 * Rw[k, 5]
            a12 = I02 * Rw[k, 3] + I12 * Rw[k, 4] + I22 * Rw[k, 5]
            a20 = I00 * Rw[k, 6] + I01 * Rw[k, 7] + I02 * Rw[k, 8]
            a21 = I01 * Rw[k, 6] + I11 * Rw[k, 7] + I12 * Rw[k, 8]
            a22 = I02 * Rw[k, 6] + I12 * Rw[k, 7] + I22 * Rw[k, 8]
            J00 = Rw[k, 0] * a00 + Rw[k, 1] * a01 + Rw[k, 2] * a02
            J01 = Rw[k, 0] * a10 + Rw[k, 1] * a11 + Rw[k, 2] * a12
            J02 = Rw[k, 0] * a20 + Rw[k, 1] * a21 + Rw[k, 2] * a22
            J11 = Rw[k, 3] * a10 + Rw[k, 4] * a11 + Rw[k, 5] * a12
            J12 = Rw[k, 3] * a20 + Rw[k, 4] * a21 + Rw[k, 5] * a22
            J22 = Rw[k, 6] * a20 + Rw[k, 7] * a21 + Rw[k, 8] * a22
            # about the world origin: I = Io' + 2 (h.p) 1 - p h^T - h p^T + m (|p|^2 1 - p p^T)
            hp = h0 * P0 + h1 * P1 + h2 * P2
            pp = P0 * P0 + P1 * P1 + P2 * P2
            J00 += 2.0 * hp - 2.0 * P0 * h0 + m * (pp - P0 * P0)
            J11 += 2.0 * hp - 2.0 * P1 * h1 + m * (pp - P1 * P1)
            J22 += 2.0 * hp - 2.0 * P2 * h2 + m * (pp - P2 * P2)
            J01 += -P0 * h1 - h0 * P1 - m * P0 * P1
            J02 += -P0 * h2 - h0 * P2 - m * P0 * P2
            J12 += -P1 * h2 - h1 * P2 - m * P1 * P2
            h0, h1, h2 = h0 + m * P0, h1 + m * P1, h2 + m * P2
            Ic[k, 0], Ic[k, 1], Ic[k, 2], Ic[k, 3] = m, h0, h1, h2
            Ic[k, 4], Ic[k, 5], Ic[k, 6], Ic[k, 7], Ic[k, 8], Ic[k, 9] = J00, J01, J02, J11, J12, J22
            # momentum (n, f) = I V: n = I w + h x v, f = m v + w x h
            f0 = m * v0 + w1 * h2 - w2 * h1
            f1 = m * v1 + w2 * h0 - w0 * h2
            f2 = m * v2 + w0 * h1 - w1 * h0
            hc[k, 0] = J00 * w0 + J01 * w1 + J02 * w2 + h1 * v2 - h2 * v1
            hc[k, 1] = J01 * w0 + J11 * w1 + J12 * w2 + h2 * v0 - h0 * v2
            hc[k, 2] = J02 * w0 + J12 * w1 + J22 * w2 + h0 * v1 - h1 * v0
            hc[k, 3], hc[k, 4], hc[k, 5] = f0, f1, f2
            # the rate of the inertia: h' = m v + w x h (= f), I' = 2 (h.v) 1 - v h^T - h v^T + [w] I - I [w]
            dI[k, 0], dI[k, 1], dI[k, 2] = f0, f1, f2
            hv = h0 * v0 + h1 * v1 + h2 * v2
            # W I (row-major 3x3, W = [w]); I' = W I - I W = W I + (W I)^T
            g00 = w1 * J02 - w2 * J01
            g01 = w1 * J12 - w2 * J11
            g02 = w1 * J22 - w2 * J12
            g10 = w2 * J00 - w0 * J02
            g11 = w2 * J01 - w0 * J12
            g12 = w2 * J02 - w0 * J22
            g20 = w0 * J01 - w1 * J00
            g21 = w0 * J11 - w1 * J01
            g22 = w0 * J12 - w1 * J02
            dI[k, 3] = 2.0 * hv - 2.0 * v0 * h0 + 2.0 * g00
            dI[k, 4] = -v0 * h1 - h0 * v1 + g01 + g10
            dI[k, 5] = -v0 * h2 - h0 * v2 + g02 + g20
            dI[k, 6] = 2.0 * hv - 2.0 * v1 * h1 + 2.0 * g11
            dI[k, 7] = -v1 * h2 - h1 * v2 + g12 + g21
            dI[k, 8] = 2.0 * hv - 2.0 * v2 * h2 + 2.0 * g22
        # ---------------------------------------------------------------- backward: children first
        for k in range(nb - 1, 0, -1):
            p, jt, iv = ij[k, 0], ij[k, 1], ij[k, 3]
            nj = 1 if (jt == 1 or jt == 2) else (3 if jt == 3 else (6 if jt == 4 else 0))
            m, c0, c1, c2 = Ic[k, 0], Ic[k, 1], Ic[k, 2], Ic[k, 3]
            J00, J01, J02, J11, J12, J22 = Ic[k, 4], Ic[k, 5], Ic[k, 6], Ic[k, 7], Ic[k, 8], Ic[k, 9]
            e0, e1, e2 = 0.5 * dI[k, 0], 0.5 * dI[k, 1], 0.5 * dI[k, 2]
            D00, D01, D02, D11, D12, D22 = (0.5 * dI[k, 3], 0.5 * dI[k, 4], 0.5 * dI[k, 5], 0.5 * dI[k, 6],
                                            0.5 * dI[k, 7], 0.5 * dI[k, 8])
            n0, n1, n2, f0, f1, f2 = (0.5 * hc[k, 0], 0.5 * hc[k, 1], 0.5 * hc[k, 2], 0.5 * hc[k, 3],
                                      0.5 * hc[k, 4], 0.5 * hc[k, 5])
            for c in range(nj):
                b = iv + c
                # F = Ic dS_b + B_c S_b, B_c U = 1/2 dI U + 1/2 U x* h
                u0, u1, u2, u3, u4, u5 = dS[b, 0], dS[b, 1], dS[b, 2], dS[b, 3], dS[b, 4], dS[b, 5]
                F0 = J00 * u0 + J01 * u1 + J02 * u2 + c1 * u5 - c2 * u4
                F1 = J01 * u0 + J11 * u1 + J12 * u2 + c2 * u3 - c0 * u5
                F2 = J02 * u0 + J12 * u1 + J22 * u2 + c0 * u4 - c1 * u3
                F3 = m * u3 + u1 * c2 - u2 * c1
                F4 = m * u4 + u2 * c0 - u0 * c2
                F5 = m * u5 + u0 * c1 - u1 * c0
                s0, s1, s2, s3, s4, s5 = S[b, 0], S[b, 1], S[b, 2], S[b, 3], S[b, 4], S[b, 5]
                # 1/2 dI S
                F0 += D00 * s0 + D01 * s1 + D02 * s2 + e1 * s5 - e2 * s4
                F1 += D01 * s0 + D11 * s1 + D12 * s2 + e2 * s3 - e0 * s5
                F2 += D02 * s0 + D12 * s1 + D22 * s2 + e0 * s4 - e1 * s3
                F3 += s1 * e2 - s2 * e1
                F4 += s2 * e0 - s0 * e2
                F5 += s0 * e1 - s1 * e0
                # 1/2 S x* h = (s_w x n + s_v x f, s_w x f)
                F0 += s1 * n2 - s2 * n1 + s4 * f2 - s5 * f1
                F1 += s2 * n0 - s0 * n2 + s5 * f0 - s3 * f2
                F2 += s0 * n1 - s1 * n0 + s3 * f1 - s4 * f0
                F3 += s1 * f2 - s2 * f1
                F4 += s2 * f0 - s0 * f2
                F5 += s0 * f1 - s1 * f0
                j = k
                while j > 0:
                    jj, vj = ij[j, 1], ij[j, 3]
                    nn = 1 if (jj == 1 or jj == 2) else (3 if jj == 3 else (6 if jj == 4 else 0))
                    for c2_ in range(nn):
                        a = vj + c2_
                        C[r, a, b] = S[a, 0] * F0 + S[a, 1] * F1 + S[a, 2] * F2 + S[a, 3] * F3 \
                            + S[a, 4] * F4 + S[a, 5] * F5
                    j = ij[j, 0]
            if p > 0:
                for c in range(nj):
                    a = iv + c
                    s0, s1, s2, s3, s4, s5 = S[a, 0], S[a, 1], S[a, 2], S[a, 3], S[a, 4], S[a, 5]
                    # G = Ic S_a
                    G0 = J00 * s0 + J01 * s1 + J02 * s2 + c1 * s5 - c2 * s4
                    G1 = J01 * s0 + J11 * s1 + J12 * s2 + c2 * s3 - c0 * s5
                    G2 = J02 * s0 + J12 * s1 + J22 * s2 + c0 * s4 - c1 * s3
                    G3 = m * s3 + s1 * c2 - s2 * c1
                    G4 = m * s4 + s2 * c0 - s0 * c2
                    G5 = m * s5 + s0 * c1 - s1 * c0
                    # H = B_c^T S_a = 1/2 dI S - 1/2 S x* h
                    H0 = D00 * s0 + D01 * s1 + D02 * s2 + e1 * s5 - e2 * s4 \
                        - (s1 * n2 - s2 * n1 + s4 * f2 - s5 * f1)
                    H1 = D01 * s0 + D11 * s1 + D12 * s2 + e2 * s3 - e0 * s5 \
                        - (s2 * n0 - s0 * n2 + s5 * f0 - s3 * f2)
                    H2 = D02 * s0 + D12 * s1 + D22 * s2 + e0 * s4 - e1 * s3 \
                        - (s0 * n1 - s1 * n0 + s3 * f1 - s4 * f0)
                    H3 = s1 * e2 - s2 * e1 - (s1 * f2 - s2 * f1)
                    H4 = s2 * e0 - s0 * e2 - (s2 * f0 - s0 * f2)
                    H5 = s0 * e1 - s1 * e0 - (s0 * f1 - s1 * f0)
                    j = p
                    while j > 0:
                        jj, vj = ij[j, 1], ij[j, 3]
                        nn = 1 if (jj == 1 or jj == 2) else (3 if jj == 3 else (6 if jj == 4 else 0))
                        for c2_ in range(nn):
                            b = vj + c2_
                            C[r, a, b] = G0 * dS[b, 0] + G1 * dS[b, 1] + G2 * dS[b, 2] + G3 * dS[b, 3] \
                                + G4 * dS[b, 4] + G5 * dS[b, 5] + H0 * S[b, 0] + H1 * S[b, 1] \
                                + H2 * S[b, 2] + H3 * S[b, 3] + H4 * S[b, 4] + H5 * S[b, 5]
                        j = ij[j, 0]
                for a in range(10):
                    Ic[p, a] += Ic[k, a]
                for a in range(9):
                    dI[p, a] += dI[k, a]
                for a in range(6):
                    hc[p, a] += hc[k, a]
        for a in range(nv):
            for b in range(nv):
                if not np.isfinite(C[r, a, b]):
                    return False
    return True


def _tree(d: KernelModel) -> tuple[np.ndarray, ...]:
    """The dynamics tree (fixed joints merged) as the kernel reads it: (parent, joint code, q
    index, v index) per body, the joint origin's rotation R0 (9, row-major), R0 [a] and R0 [a]^2
    (9 each), its position (3), the axis (3), and the inertia (m, h, Io: xx xy xz yy yz zz about
    the body origin, body axes)."""
    idata, fdata = d.bodies.idata, d.bodies.fdata
    ij = np.ascontiguousarray(idata[:, [L.I_PARENT, L.I_TYPE, L.I_Q, L.I_V]], dtype=np.int64)

    def cols(c: int, n: int) -> np.ndarray:
        return np.ascontiguousarray(fdata[:, c:c + n])

    return (ij, cols(L.C_R0, 9), cols(L.C_A, 9), cols(L.C_B, 9), cols(L.C_P0, 3), cols(L.C_AX, 3),
            cols(L.C_M, 10))


def coriolis_matrix(model: RobotModel, q: Any, v: Any) -> np.ndarray:
    """Coriolis matrix ``C(q, v)`` (..., nv, nv) of any model (floating base, spherical joints):
    ``C v + g(q) = bias_forces(q, v)`` and ``dM/dt - 2 C`` skew-symmetric; Pinocchio's
    ``computeCoriolisMatrix`` (see the module docstring), rows and columns in v's order (a
    floating base's ``[linear; angular]`` first, base frame). q (..., nq) and v (..., nv)
    broadcast. One compiled walk of the tree per configuration."""
    d = kernel_model(model)
    tree = model._cached("coriolis.tree", lambda: _tree(d))
    nv = d.nv
    if q.__class__ is ND and v.__class__ is ND and q.dtype is F8 and v.dtype is F8 and q.shape == (d.nq,) \
            and v.shape == (nv,) and q.flags.c_contiguous and v.flags.c_contiguous:
        C = np.empty((1, nv, nv))
        if _coriolis_rows(*tree, q[None], v[None], C):
            return C[0]
    batch, (Q, V) = joint_arrays(model, (q, "q", "q"), (v, "v", "v"))   # checks, or one line why not
    C = np.empty((Q.shape[0], nv, nv))
    if not _coriolis_rows(*tree, Q, V, C):
        raise SimbenchError(f"{model.name}: the Coriolis matrix overflowed (non-finite entries) from "
                            f"finite inputs, max |v| = {np.abs(V).max(initial=0):.3g}; expected "
                            f"velocities small enough for float64")
    return C.reshape(batch + (nv, nv))
