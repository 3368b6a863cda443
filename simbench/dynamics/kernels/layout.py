"""Array layouts shared by the packing (:mod:`simbench.dynamics.packing`) and the kernels.

A kinematic tree enters the kernels as two arrays, one row per body, parents before children:

``idata`` (nb, 4) int64
    ``I_PARENT`` (-1 for body 0), ``I_TYPE`` (joint code below), ``I_Q`` / ``I_V``: first index of
    the joint's entries in q / in v (-1 for fixed joints). Body 0 never moves (the world, or a
    fixed root); its row holds ``nq`` and ``nv`` in the ``I_Q`` / ``I_V`` columns instead.
``fdata`` (nb, NF) float64
    ``C_R0`` (9, row-major) and ``C_P0`` (3): the joint origin (pose of the joint frame in the
    parent body's frame at q = 0); ``C_AX`` (3): the joint axis; ``C_M``, ``C_H`` (3), ``C_IO``
    (6: xx, xy, xz, yy, yz, zz): mass, first moment ``h = m c`` and rotational inertia about the
    body origin (body axes): the 10 numbers of an inertia (:mod:`.spatial`);
    ``C_A`` = R0 [a], ``C_B`` = R0 [a]^2, ``C_D`` = R0 a (precomputed joint motion); in row 0,
    ``C_G`` (3): the model's gravity, used by the single-call entry points.
"""
from __future__ import annotations

#: joint codes (the same numbers as :data:`simbench.model.FIXED` ...)
FIXED, REVOLUTE, PRISMATIC, SPHERICAL, FREE = 0, 1, 2, 3, 4
#: a pseudo joint type for the block drivers' general path: the joint's pose and motions are
#: given (computed beforehand by :func:`.blocks.joint_lanes`), the rates *are* the motion S q'
MOTION = 5
#: entries in q and in v of each joint code
JOINT_NQ = (0, 1, 1, 4, 7)
JOINT_NV = (0, 1, 1, 3, 6)

I_PARENT, I_TYPE, I_Q, I_V = 0, 1, 2, 3

C_R0, C_P0, C_AX, C_M, C_H, C_IO = 0, 9, 12, 15, 16, 19
C_A, C_B, C_D, C_G = 25, 34, 43, 46
NF = 49

#: single-configuration work array (nb, NW): pose (R 9, t 3), twist, acceleration, force, world
#: rotation (external wrenches only); the CRBA keeps the pose in the root frame at W_R and a
#: composite inertia (10 numbers) at W_CM
W_R, W_T, W_V, W_A, W_F, W_RW = 0, 9, 12, 18, 24, 30
W_CM = 12
NW = 39

#: numba signatures of the arrays the entry points take (:mod:`.entries`): joint arrays are
#: read-only (a writable array converts), any stride for single calls, C order for batches
ARR1 = "Array(float64, 1, 'A', readonly=True)"
ARR2 = "Array(float64, 2, 'A', readonly=True)"
RO2 = "Array(float64, 2, 'C', readonly=True)"
TREE = "float64[::1]"
FEXT = "Array(float64, 3, 'C', readonly=True)"

#: configurations per block in the batched kernels (the block index is the innermost loop):
#: measured against 16, 32 and 128 in one process (interleaved medians, 4,096 configurations):
#: 64 is 9-13 % faster than 32 for the iiwa's and the Panda's inverse dynamics, mass matrix and
#: forward dynamics (2-7 % for a1 and the humanoid), 128 is 2-27 % slower than 64, 16 slower
#: than 32
BS = 64

__all__ = ["FIXED", "REVOLUTE", "PRISMATIC", "SPHERICAL", "FREE", "MOTION", "JOINT_NQ", "JOINT_NV",
           "I_PARENT", "I_TYPE", "I_Q", "I_V", "C_R0", "C_P0", "C_AX", "C_M", "C_H", "C_IO",
           "C_A", "C_B", "C_D", "C_G", "NF", "W_R", "W_T", "W_V", "W_A", "W_F", "W_RW", "W_CM",
           "NW", "BS", "ARR1", "ARR2", "RO2", "TREE", "FEXT"]
