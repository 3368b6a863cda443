"""Where each joint's entries sit in the configuration ``q`` and the velocity ``v`` of a
:class:`simbench.model.RobotModel`, and the checks every public function runs on arrays of joint
values (shape, finite numbers, nonzero quaternions).

Joint type codes are shared with the numba kernels. A floating base puts Pinocchio's free-flyer
entries in front: ``q[:7] = (x, y, z, qx, qy, qz, qw)``, ``v[:6]`` the base's linear and angular
velocity in the base frame (J. Carpentier et al., "The Pinocchio C++ library", 2019).
"""
from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .errors import ShapeError, SimbenchError, real_array, reason, shown

if TYPE_CHECKING:
    from .model import RobotModel

#: Joint type codes used in :attr:`RobotModel.joint_type_code` (and by the numba kernels).
FIXED, REVOLUTE, PRISMATIC, SPHERICAL = 0, 1, 2, 3
FREE = 4   #: the free-flyer joint of a floating base (``from_urdf(path, floating_base=True)``)
_TYPE_CODES = {"fixed": FIXED, "revolute": REVOLUTE, "continuous": REVOLUTE,
               "prismatic": PRISMATIC, "spherical": SPHERICAL}
_NV = {FIXED: 0, REVOLUTE: 1, PRISMATIC: 1, SPHERICAL: 3, FREE: 6}
_NQ = {FIXED: 0, REVOLUTE: 1, PRISMATIC: 1, SPHERICAL: 4, FREE: 7}
#: labels of the floating base's entries of q and of v (Pinocchio's free-flyer convention)
BASE_Q_LABELS = ("base_x", "base_y", "base_z", "base_qx", "base_qy", "base_qz", "base_qw")
BASE_V_LABELS = ("base_vx", "base_vy", "base_vz", "base_wx", "base_wy", "base_wz")


def frozen(a: Any, dtype: Any = float) -> np.ndarray:
    """A read-only copy of ``a``: the model's arrays cannot be changed in place."""
    arr = np.array(a, dtype=dtype)
    arr.setflags(write=False)
    return arr


def velocity_starts(codes: "np.ndarray | list[int]") -> np.ndarray:
    """Each joint's first entry in v (``model.joint_v_index``) from its type code; -1 for a fixed
    joint. Joints take 0, 1 or 3 entries in turn, in joint order."""
    sizes = np.array([_NV[int(c)] for c in codes], dtype=int)
    return np.where(sizes > 0, np.cumsum(sizes) - sizes, -1)


def not_a_model(value: object) -> SimbenchError:
    """The error for a dynamics function given something other than a model (a file name)."""
    made = f"simbench.RobotModel.from_urdf({os.fspath(value)!r})" if isinstance(value, (str, os.PathLike)) \
        else "simbench.RobotModel.from_urdf(path)"
    return SimbenchError(f"model = {shown(value)}; expected a RobotModel, made once by {made} and passed to "
                         f"every call")


def as_joint_array(model: RobotModel, value: Any, name: str = "q", space: str = "q") -> np.ndarray:
    """Validate an array of joint values: shape (..., nq) (``space="q"``) or (..., nv)
    (``space="v"``: velocities, accelerations, forces), finite floats.

    A mapping from joint name to value is accepted too when every entry is a scalar joint (no
    floating base, no spherical joint; every movable joint must be named).
    """
    try:
        size, labels = (model.nq, model.q_labels) if space == "q" else (model.nv, model.v_labels)
    except AttributeError:   # not a model: a file name, say
        raise not_a_model(model) from None
    if isinstance(value, Mapping):
        if size != len(model.joint_names):
            raise ShapeError(f"{name} given by joint name, but {model.name!r} has a floating base or spherical "
                             f"joints; give an array of {size} values in the order {list(labels)}")
        unknown = [k for k in value if k not in model.joint_names]
        if unknown:
            model.joint_index(unknown[0])  # raises with close matches
        missing = [n for n in model.joint_names if n not in value]
        if missing:
            raise ShapeError(f"{name} is missing joints {missing}; expected every joint of "
                             f"{list(model.joint_names)}")
        value = [value[n] for n in model.joint_names]
    try:
        arr = real_array(value)     # not text: numpy would read "0.5" as 0.5
    except (TypeError, ValueError, OverflowError) as exc:   # OverflowError: an int beyond float64
        raise ShapeError(f"{name} must be numbers, got {shown(value)} ({reason(exc)})") from None
    if arr.ndim == 0 or arr.shape[-1] != size:
        raise ShapeError(f"{name} has shape {arr.shape}; expected (..., {size}) with joints in order {list(labels)}")
    if not np.all(np.isfinite(arr)):
        bad = np.argwhere(~np.isfinite(arr))[0]
        raise ShapeError(f"{name} holds a non-finite value {arr[tuple(bad)]} at index "
                         f"{tuple(int(i) for i in bad)} (joint {labels[bad[-1]]!r}); expected finite numbers")
    if space == "q":
        check_quaternions(model, arr, name)
    return arr


def check_quaternions(model: RobotModel, q: np.ndarray, name: str) -> None:
    """Raise if a quaternion of q (the base's, a spherical joint's) is zero: it names no
    rotation (one of any other norm is normalised, as ``x y z w / |q|``)."""
    starts = model._space().quat_start
    if not starts or not (q[..., [s + 3 for s in starts]] == 0.0).any():   # w = 0 first: cheap
        return
    for s in starts:
        zero = ~(np.einsum("...i,...i->...", q[..., s:s + 4], q[..., s:s + 4]) > 0.0)
        if zero.any():
            at = tuple(int(i) for i in np.argwhere(zero)[0])
            where = f" at batch index {at}" if at else ""
            label = re.sub(r"(_qx|\[qx\])$", "", model.q_labels[s])
            raise ShapeError(f"{name}[..., {s}:{s + 4}] (the quaternion x y z w of {label!r}) is "
                             f"zero{where}; expected a unit quaternion, e.g. (0, 0, 0, 1)")


# ---------------------------------------------------------------------- joint and base modelling
@dataclass(frozen=True)
class ConfigurationSpace:
    """Where each joint's entries sit in q and v (see :meth:`RobotModel.nq`)."""

    nq: int
    nv: int
    q_start: np.ndarray     # (nj,) per joint, -1 for fixed joints
    v_start: np.ndarray
    q_labels: tuple[str, ...]
    v_labels: tuple[str, ...]
    q_joint: np.ndarray     # (nq,) joint of each q entry, -1 for the base
    lower: np.ndarray       # (nq,)
    upper: np.ndarray
    scalar: np.ndarray      # (nq,) bool: a revolute or prismatic joint's entry
    angular: np.ndarray     # (nq,) bool: an angle (revolute), else a length
    quat_start: tuple[int, ...]  # q index of every quaternion (base, spherical joints)
    quat_w: np.ndarray      # (nq,) bool: the w entry of a quaternion


def configuration_space(model: RobotModel) -> ConfigurationSpace:
    iq = iv = 0
    q_labels: list[str] = []
    v_labels: list[str] = []
    q_joint: list[int] = []
    entries: list[tuple[float, float, bool, bool]] = []   # (lower, upper, scalar, angular) per q entry
    quats: list[int] = []
    if model.floating_base:
        q_labels += BASE_Q_LABELS
        v_labels += BASE_V_LABELS
        q_joint += [-1] * 7
        entries += [(-math.inf, math.inf, False, False)] * 7
        quats.append(3)
        iq, iv = 7, 6
    nj = len(model.joint_all_names)
    q_start, v_start = np.full(nj, -1), np.full(nj, -1)
    for j in range(nj):
        code, name = int(model.joint_type_code[j]), model.joint_all_names[j]
        if code == FIXED:
            continue
        q_start[j], v_start[j] = iq, iv
        if code == SPHERICAL:
            q_labels += [f"{name}[q{c}]" for c in "xyzw"]
            v_labels += [f"{name}[w{c}]" for c in "xyz"]
            entries += [(-math.inf, math.inf, False, False)] * 4
            quats.append(iq)
        else:
            q_labels.append(name)
            v_labels.append(name)
            entries.append((float(model.joint_lower[j]), float(model.joint_upper[j]), True, code == REVOLUTE))
        q_joint += [j] * _NQ[code]
        iq += _NQ[code]
        iv += _NV[code]
    quat_w = np.zeros(iq, dtype=bool)
    quat_w[[s + 3 for s in quats]] = True
    lower, upper, scalar, angular = (list(c) for c in zip(*entries)) if entries else ([], [], [], [])
    return ConfigurationSpace(
        nq=iq, nv=iv, q_start=frozen(q_start, int), v_start=frozen(v_start, int),
        q_labels=tuple(q_labels), v_labels=tuple(v_labels), q_joint=frozen(q_joint, int),
        lower=frozen(lower), upper=frozen(upper), scalar=frozen(scalar, bool),
        angular=frozen(angular, bool), quat_start=tuple(quats), quat_w=frozen(quat_w, bool))


def random_quaternions(rng: np.random.Generator, shape: tuple) -> np.ndarray:
    """Unit quaternions (x, y, z, w) uniform on SO(3) (K. Shoemake, "Uniform random rotations",
    Graphics Gems III), shape ``shape + (4,)``."""
    u1, u2, u3 = rng.uniform(size=(3,) + tuple(shape))
    a, b = np.sqrt(1.0 - u1), np.sqrt(u1)
    return np.stack([a * np.sin(2 * np.pi * u2), a * np.cos(2 * np.pi * u2),
                     b * np.sin(2 * np.pi * u3), b * np.cos(2 * np.pi * u3)], axis=-1)


__all__ = ["FIXED", "REVOLUTE", "PRISMATIC", "SPHERICAL", "FREE", "BASE_Q_LABELS", "BASE_V_LABELS",
           "ConfigurationSpace", "configuration_space", "random_quaternions", "as_joint_array", "check_quaternions",
           "frozen", "velocity_starts", "not_a_model"]
