"""Inverse dynamics by the recursive Newton-Euler algorithm (slides of seed 001).

``tau = M(q) q'' + C(q, q') q' + g(q) - sum_k J_k(q)^T F_ext,k`` (+ ``D q'`` and Coulomb friction
``f_c sign(q')`` when asked: the ``d_ii q'_i`` term of seed 000).

The model is packed once into two arrays (cached in ``model._cache``) that the numba kernels
of :mod:`simbench.dynamics.kernels` take as arguments. Fixed joints stay zero-DOF bodies of the
tree (no merging). The root link is fixed at the world origin.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numba
import numpy as np

from ..errors import ShapeError, SimbenchError, lookup
from ..model import FIXED, GRAVITY, PRISMATIC, REVOLUTE, SPHERICAL, RobotModel, as_joint_array
from . import kernels as K


__all__ = ["GRAVITY", "inverse_dynamics", "bias_forces", "gravity_torques", "prepare", "DynData"]


@dataclass(frozen=True, eq=False)
class DynData:
    """A model packed for the kernels (see :mod:`simbench.dynamics.kernels`).

    ``idata``/``fdata``: the dynamics tree, in which every link attached by a fixed joint is
    merged into its parent body (fewer bodies, same dynamics); ``full_idata``/``full_fdata``:
    every link (forward kinematics, Jacobians, and external wrenches, which act on links).
    """

    idata: np.ndarray       # (nb, 4) int64: parent, joint type, q index; idata[0, 3] = dof
    fdata: np.ndarray       # (nb, NF) float64
    full_idata: np.ndarray  # (nl, 4)
    full_fdata: np.ndarray  # (nl, NF)
    packed: np.ndarray      # idata and fdata in one float64 array (kernels.pack)
    dof: int
    nl: int
    shape1: tuple        # (dof,)
    fext0: np.ndarray    # (nl, 6) zeros
    fext0b: np.ndarray   # (1, nl, 6) zeros
    damping: np.ndarray  # (dof,)
    friction: np.ndarray  # (dof,)
    link_index: dict


def _pack(parent: np.ndarray, codes: list[int], vidx: np.ndarray, origins: np.ndarray,
          axes: np.ndarray, G: np.ndarray, dof: int, gravity: Sequence[float]
          ) -> tuple[np.ndarray, np.ndarray]:
    """idata, fdata of a tree: per body its parent, kernel joint code, q index, joint origin
    (4x4, parent body frame), joint axis, and spatial inertia G (6x6, about the body origin)."""
    nb = len(parent)
    idata = np.zeros((nb, 4), dtype=np.int64)
    idata[:, 0] = parent
    idata[:, 1] = codes
    idata[:, 2] = vidx
    idata[0, 1], idata[0, 2], idata[0, 3] = K.FIXED, -1, dof
    fdata = np.zeros((nb, K.NF))
    fdata[0, K.C_G:K.C_G + 3] = gravity
    for k in range(nb):
        T = origins[k]
        a = axes[k]
        fdata[k, K.C_R0:K.C_R0 + 9] = T[:3, :3].ravel()
        fdata[k, K.C_P0:K.C_P0 + 3] = T[:3, 3]
        fdata[k, K.C_AX:K.C_AX + 3] = a
        ax = np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])
        fdata[k, K.C_A:K.C_A + 9] = (T[:3, :3] @ ax).ravel()
        fdata[k, K.C_B:K.C_B + 9] = (T[:3, :3] @ ax @ ax).ravel()
        fdata[k, K.C_D:K.C_D + 3] = T[:3, :3] @ a
    fdata[:, K.C_M] = G[:, 3, 3]
    Gh = G[:, :3, 3:]                    # m [c] = [h]
    fdata[:, K.C_H:K.C_H + 3] = 0.5 * np.stack([Gh[:, 2, 1] - Gh[:, 1, 2], Gh[:, 0, 2] - Gh[:, 2, 0],
                                                Gh[:, 1, 0] - Gh[:, 0, 1]], axis=-1)
    fdata[:, K.C_IO:K.C_IO + 9] = G[:, :3, :3].reshape(nb, 9)
    return np.ascontiguousarray(idata), np.ascontiguousarray(fdata)


def prepare(model: RobotModel) -> DynData:
    """Pack ``model`` for the kernels (cached on the model). Spherical joints are refused."""
    d = model._cache.get("_dyn")
    if d is not None:
        return d
    from ..spatial import transform_inertia

    codes = np.asarray(model.joint_type_code)
    if np.any(codes == SPHERICAL):
        names = [model.joint_all_names[j] for j in np.flatnonzero(codes == SPHERICAL)]
        raise SimbenchError(f"{model.name}: spherical joints {names} are not supported by "
                            f"simbench.dynamics (revolute, continuous, prismatic and fixed only)")
    nl = model.nlinks
    code_map = {FIXED: K.FIXED, REVOLUTE: K.REVOLUTE, PRISMATIC: K.PRISMATIC}
    kcodes = [K.FIXED] + [code_map[int(c)] for c in codes]
    vidx = np.r_[-1, model.joint_v_index]
    origins = np.concatenate([np.eye(4)[None], model.joint_origin]) if nl > 1 else np.eye(4)[None]
    axes = np.concatenate([np.zeros((1, 3)), model.joint_axis]) if nl > 1 else np.zeros((1, 3))
    G = np.array(model.link_spatial_inertia)
    full_idata, full_fdata = _pack(np.asarray(model.link_parent), kcodes, vidx, origins, axes, G,
                                   model.dof, model.gravity)
    # merge links attached by fixed joints into their parent body
    body = np.zeros(nl, dtype=int)          # body of each link
    offset = np.tile(np.eye(4), (nl, 1, 1))  # pose of each link in its body's frame
    b_parent, b_code, b_vidx, b_origin, b_axis, b_G = [-1], [K.FIXED], [-1], [np.eye(4)], \
        [np.zeros(3)], [G[0].copy()]
    for k in range(1, nl):
        p = int(model.link_parent[k])
        if kcodes[k] == K.FIXED:
            body[k] = body[p]
            offset[k] = offset[p] @ origins[k]
            b_G[body[k]] += transform_inertia(offset[k], G[k])
        else:
            body[k] = len(b_parent)
            b_parent.append(body[p])
            b_code.append(kcodes[k])
            b_vidx.append(vidx[k])
            b_origin.append(offset[p] @ origins[k])
            b_axis.append(axes[k])
            b_G.append(G[k].copy())
    idata, fdata = _pack(np.array(b_parent), b_code, np.array(b_vidx), np.array(b_origin),
                         np.array(b_axis), np.array(b_G), model.dof, model.gravity)
    mov = model.movable
    d = DynData(idata=idata, fdata=fdata, full_idata=full_idata, full_fdata=full_fdata,
                packed=K.pack(idata, fdata),
                dof=model.dof, nl=nl, shape1=(model.dof,), fext0=np.zeros((nl, 6)),
                fext0b=np.zeros((1, nl, 6)),
                damping=np.array(model.joint_damping[mov], dtype=float),
                friction=np.array(model.joint_friction[mov], dtype=float),
                link_index={n: i for i, n in enumerate(model.link_names)})
    # the kernels see writable arrays only (a read-only array is another numba type and would
    # need one more compiled specialisation); these are private to the package
    for a in (d.damping, d.friction):
        a.setflags(write=False)
    model._cache["_dyn"] = d
    return d


#: blocks of ``kernels.BS`` configurations handed to a thread at a time (dynamic scheduling,
#: so that a thread slowed down by other processes does not hold up the whole batch)
CHUNK_BLOCKS = 4


def parallel_chunks() -> Any:
    """Context manager setting numba's parallel chunk size for the batched kernels."""
    return numba.parallel_chunksize(CHUNK_BLOCKS)


def gravity_vector(model: RobotModel, gravity: Sequence[float] | None) -> tuple[float, float, float]:
    """``gravity`` as three floats; ``None`` means the model's own (``model.gravity``)."""
    g = np.asarray(model.gravity if gravity is None else gravity, dtype=float)
    if g.shape != (3,) or not np.all(np.isfinite(g)):
        raise ShapeError(f"gravity must be 3 finite numbers (m/s^2, world frame), got {gravity!r}")
    return float(g[0]), float(g[1]), float(g[2])


def fext_array(model: RobotModel, d: DynData, f_ext: Mapping[str, Any] | None,
               batch: tuple) -> tuple[np.ndarray, bool]:
    """``f_ext`` (link name -> (..., 6) wrench [torque, force], world frame, about the link
    origin) packed as (Nf, nl, 6) with Nf = 1 or prod(batch)."""
    if f_ext is None or len(f_ext) == 0:
        return d.fext0b, False
    if not isinstance(f_ext, Mapping):
        raise ShapeError(f"f_ext must be a dict link name -> 6-vector [torque, force] (world frame, "
                         f"about the link origin), got {type(f_ext).__name__}")
    items = []
    fb: tuple = ()
    for name, w in f_ext.items():
        k = lookup(d.link_index, name, "link", model.name)
        arr = np.asarray(w, dtype=float)
        if arr.ndim == 0 or arr.shape[-1] != 6:
            raise ShapeError(f"f_ext[{name!r}] has shape {arr.shape}; expected (..., 6) = "
                             f"[torque (3), force (3)] in the world frame about the link origin")
        if not np.all(np.isfinite(arr)):
            raise ShapeError(f"f_ext[{name!r}] holds a non-finite value: {arr}")
        try:
            np.broadcast_shapes(arr.shape[:-1], batch)
            fb = np.broadcast_shapes(fb, arr.shape[:-1])
        except ValueError:
            raise ShapeError(f"f_ext[{name!r}] has batch shape {arr.shape[:-1]}, which does not "
                             f"broadcast with the joint arrays' batch shape {batch}") from None
        items.append((k, arr))
    if fb == ():
        out = np.zeros((1, d.nl, 6))
        for k, arr in items:
            out[0, k] += arr
        return out, True
    out = np.zeros(batch + (d.nl, 6))
    for k, arr in items:
        out[..., k, :] += arr
    return np.ascontiguousarray(out.reshape((-1, d.nl, 6))), True


def _joint_array(model: RobotModel, value: Any, name: str, dof: int) -> np.ndarray:
    """:func:`simbench.model.as_joint_array`, with a compiled finiteness test for the common
    case of a writable C-contiguous float64 batch (np.isfinite allocates a boolean array)."""
    if (type(value) is np.ndarray and value.dtype.char == "d" and value.ndim >= 1
            and value.shape[-1] == dof and value.flags.c_contiguous and value.flags.writeable
            and K.all_finite(value.reshape(-1))):
        return value
    return as_joint_array(model, value, name)


def joint_arrays(model: RobotModel, *named: tuple[Any, str]) -> tuple[tuple, list[np.ndarray]]:
    """Validate and broadcast joint arrays; returns the batch shape and (N, dof) arrays."""
    dof = prepare(model).dof   # cached; model.dof is recomputed on every access
    arrs = [_joint_array(model, v, n, dof) for v, n in named]
    try:
        shape = np.broadcast_shapes(*(a.shape for a in arrs))
    except ValueError:
        raise ShapeError("joint arrays do not broadcast: " + ", ".join(
            f"{n} {a.shape}" for a, (_, n) in zip(arrs, named)) +
            f"; each must be (..., {dof}) in joint order {list(model.joint_names)}") from None
    rows = int(np.prod(shape[:-1], dtype=np.int64))   # (-1 is ambiguous when dof == 0)
    flat = [_kernel_array((a if a.shape == shape else np.broadcast_to(a, shape)).reshape(rows, dof))
            for a in arrs]
    return shape[:-1], flat


def _kernel_array(a: np.ndarray) -> np.ndarray:
    """``a`` as a C-contiguous, writable float64 array (one numba type for every call)."""
    f = a.flags
    if f.c_contiguous and f.writeable and a.dtype.char == "d":
        return a
    return np.array(a, dtype=float, order="C")


_id_fast = K.id_fast


def inverse_dynamics(model: RobotModel, q: Any, qd: Any, qdd: Any, *,
                     gravity: Sequence[float] | None = None, f_ext: Mapping[str, Any] | None = None,
                     damping: bool = False, friction: bool = False) -> np.ndarray:
    """Joint torques/forces ``tau = M q'' + C q' + g - sum J^T F_ext`` by RNEA, shape (..., dof).

    ``q, qd, qdd``: (..., dof) in ``model.joint_names`` order (leading dims broadcast).
    ``gravity``: acceleration of gravity in the root frame (default ``model.gravity``). ``f_ext``: link name -> wrench
    [torque, force] (..., 6) acting on the link, world frame, about the link origin.
    ``damping`` / ``friction``: add ``d_i q'_i`` / ``f_i sign(q'_i)`` from the URDF
    ``<dynamics>`` tags (seed 000).
    """
    if f_ext is None and gravity is None and not damping and not friction:
        try:  # lean path: one (dof,) float64 configuration, default gravity
            if q.ndim == 1:
                return _id_fast(model._cache["_dyn"].packed, q, qd, qdd)
        except (TypeError, AttributeError, ValueError, KeyError):  # the general path
            pass
    d = prepare(model)
    batch, (Q, QD, QDD) = joint_arrays(model, (q, "q"), (qd, "qd"), (qdd, "qdd"))
    gx, gy, gz = gravity_vector(model, gravity)
    F, has = fext_array(model, d, f_ext, batch)
    idata, fdata = (d.full_idata, d.full_fdata) if has else (d.idata, d.fdata)
    if batch == ():
        tau = K.rnea1(idata, fdata, Q[0], QD[0], QDD[0], gx, gy, gz, F[0], has)
    else:
        with parallel_chunks():
            tau = K.rnea_batch(idata, fdata, Q, QD, QDD, gx, gy, gz, F, has)
    tau = tau.reshape(batch + (d.dof,))
    if damping or friction:
        tau = tau + _joint_losses(d, QD.reshape(batch + (d.dof,)), damping, friction)
    return tau


def _joint_losses(d: DynData, qd: np.ndarray, damping: bool, friction: bool) -> np.ndarray:
    """``D q'`` (viscous damping) plus ``f_c sign(q')`` (Coulomb friction), per joint."""
    out = np.zeros(np.shape(qd))
    if damping:
        out = out + d.damping * qd
    if friction:
        out = out + d.friction * np.sign(qd)
    return out


def bias_forces(model: RobotModel, q: Any, qd: Any, *, gravity: Sequence[float] | None = None,
                f_ext: Mapping[str, Any] | None = None) -> np.ndarray:
    """``C(q, q') q' + g(q)`` (the RNEA with ``q'' = 0``), shape (..., dof)."""
    qd_arr = as_joint_array(model, qd, "qd")
    return inverse_dynamics(model, q, qd_arr, np.zeros(prepare(model).dof), gravity=gravity,
                            f_ext=f_ext)


def gravity_torques(model: RobotModel, q: Any, *, gravity: Sequence[float] | None = None) -> np.ndarray:
    """``g(q) = dP/dq``: the torques that hold the robot still, shape (..., dof)."""
    z = np.zeros(prepare(model).dof)
    return inverse_dynamics(model, q, z, z, gravity=gravity)
