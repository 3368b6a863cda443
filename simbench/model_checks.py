"""Checks of :meth:`simbench.model.RobotModel.replace`'s arguments: field names, and the per-joint
arrays (limits, effort, velocity, damping, friction), one value per joint of
``model.joint_all_names`` (fixed joints too, PyBullet's joint order).

A per-joint field takes an array of one number per joint, one number for every joint (broadcast:
``joint_damping=0.3``), or a mapping ``{joint name: value}`` that changes the named joints and
keeps the others' current values (an unknown name is refused with the closest ones). Each bad
value is one line naming the field, the value, what was expected and the closest valid choice.
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .errors import ShapeError, SimbenchError, closest, lookup, nearest_hint, real_array, reason, shown
from .issues import ModelIssue
from .joint_space import FIXED

if TYPE_CHECKING:
    from .model import RobotModel

__all__ = ["PER_JOINT", "PER_LINK", "WIDEST_LIMIT", "checked_changes", "sampled_limits"]

#: per-joint fields -> (infinity allowed (a limit absent from the file), must be >= 0)
#: per-link fields -> (shape of one link's value, what one is, what they are)
PER_LINK: dict[str, tuple[tuple[int, ...], str, str]] = {
    "link_mass": ((), "a mass in kg", "masses in kg"),
    "link_com": ((3,), "a centre of mass (x, y, z in m, link frame)", "centres of mass (x, y, z in m, link frame)"),
    "link_inertia": ((3, 3), "a 3x3 inertia matrix about the COM (kg m^2, link axes)",
                     "3x3 inertia matrices about the COM (kg m^2, link axes)")}
PER_JOINT: dict[str, tuple[bool, bool]] = {
    "joint_lower": (True, False), "joint_upper": (True, False),
    "joint_effort": (True, True), "joint_velocity": (True, True),
    "joint_damping": (False, True), "joint_friction": (False, True)}


def checked_changes(model: Any, changes: dict[str, Any]) -> dict[str, Any]:
    """``changes`` with every per-joint field as a float array of one value per joint; a
    :class:`SimbenchError` naming an unknown field (with the closest one) or a bad value."""
    names = [f.name for f in dataclasses.fields(model) if not f.name.startswith("_")]
    out = {}
    for key, value in changes.items():
        if key not in names:
            near = closest(str(key), names, n=1)
            hint = f"did you mean {near[0]!r}?" if near else f"expected a field of RobotModel: {', '.join(names)}"
            raise SimbenchError(f"replace() got {shown(key)}; {hint}")
        out[key] = _per_joint(model, key, value, changes) if key in PER_JOINT else \
            _per_link(model, key, value, changes) if key in PER_LINK else \
            _root_pose(value) if key == "root_pose" else _gravity(value) if key == "gravity" else value
    floating = out.get("floating_base", model.floating_base)
    if floating and out.get("root_pose") is not None:   # its pose is q[:7]: a second one would move
        raise SimbenchError("root_pose places a welded root; a floating base's pose is q[:7] (x y z qx qy qz qw): "
                            "set it there, or weld the root first with model.with_floating_base(False)")
    if "root_pose" in out and "gravity" not in out and not floating:
        out["gravity"] = _world_gravity_kept(model, out["root_pose"])
    return out


def _gravity(value: Any) -> tuple[float, float, float]:
    """A gravity vector: 3 finite numbers (m/s^2, root frame)."""
    try:
        g = real_array(value)
    except (TypeError, ValueError):
        g = None
    if g is None or g.shape != (3,) or not np.isfinite(g).all():
        raise SimbenchError(f"gravity = {shown(value)}; expected 3 finite numbers in m/s^2 (root frame), "
                            f"e.g. (0, 0, -9.81)")
    return tuple(float(x) for x in g)


def _world_gravity_kept(model: Any, pose: np.ndarray | None) -> tuple[float, ...]:
    """The model's gravity in the frame of a root moved to ``pose``, the world's gravity unchanged:
    ``R_new^T R_old g`` (a robot mounted on a wall feels gravity along its own x)."""
    old = np.eye(3) if model.root_pose is None else np.asarray(model.root_pose)[:3, :3]
    new = np.eye(3) if pose is None else pose[:3, :3]
    return tuple(float(x) for x in new.T @ (old @ np.asarray(model.gravity, dtype=float)))


def _per_link(model: Any, key: str, value: Any, changes: dict[str, Any]) -> np.ndarray:
    """A per-link field: an array (nl, *shape) in ``model.link_names`` order, or ``{link name:
    value}`` for some links (the others keep theirs); finite numbers, the masses given >= 0."""
    links = tuple(changes.get("link_names", model.link_names))
    tail, one, unit = PER_LINK[key]
    want = f"{unit}, one per link in model.link_names order {shown(links)}, or {{link name: value}} for some"
    if isinstance(value, Mapping):
        arr = np.array(getattr(model, key), dtype=float)
        index = {n: k for k, n in enumerate(links)}
        for name, v in value.items():
            arr[lookup(index, name, "link", key)] = _link_value(v, f"{key}[{name!r}]", tail, one)
        labels = [f"{key}[{n!r}]" for n in links]
    else:
        arr = _link_value(value, key, (len(links),) + tail, want)
        labels = [f"{key}[{k}] (link {n!r})" for k, n in enumerate(links)]
    current = np.asarray(getattr(model, key), dtype=float)
    new = arr != current if current.shape == arr.shape else np.ones(arr.shape, bool)
    if key == "link_mass" and (new & (arr < 0)).any():   # a file's own negative mass stays (and is
        k = int(np.flatnonzero(new & (arr < 0))[0])       # said at load): check can judge such a file
        raise ShapeError(f"{labels[k]} = {arr[k]:g}; expected a mass >= 0 in kg (did you mean 0.0?)")
    return arr


def _link_value(v: Any, label: str, shape: tuple, expected: str) -> np.ndarray:
    if isinstance(v, (bool, np.bool_)) or getattr(v, "dtype", None) == bool:
        raise ShapeError(f"{label} = {shown(v)}; expected {expected}, not True/False")
    try:
        arr = real_array(v)
    except (TypeError, ValueError, OverflowError) as exc:
        raise ShapeError(f"{label} = {shown(v)}; expected {expected} ({reason(exc)})") from None
    if arr.shape != shape:
        raise ShapeError(f"{label} has shape {arr.shape}; expected {shape}: {expected}")
    if not np.isfinite(arr).all():
        raise ShapeError(f"{label} holds a non-finite value; expected finite numbers: {expected}")
    return arr


def _root_pose(value: Any) -> np.ndarray | None:
    """``root_pose``: None, or a (4, 4) rigid transform (a rotation, a translation, last row
    0 0 0 1), as a float array."""
    if value is None:
        return None
    try:
        T = real_array(value)
    except (TypeError, ValueError, OverflowError) as exc:
        raise ShapeError(f"root_pose = {shown(value)}; expected a (4, 4) rigid transform ({reason(exc)})") from None
    if T.shape != (4, 4):
        raise ShapeError(f"root_pose has shape {T.shape}; expected a (4, 4) rigid transform, or None")
    R = T[:3, :3]
    if not np.isfinite(T).all() or not np.allclose(T[3], [0, 0, 0, 1]) \
            or not np.allclose(R @ R.T, np.eye(3), atol=1e-9) or np.linalg.det(R) < 0:
        raise ShapeError(f"root_pose = {shown(value)}; expected a (4, 4) rigid transform: a rotation "
                         f"(R R^T = 1, det R = 1) and a translation, last row 0 0 0 1, or None")
    return T


def _per_joint(model: Any, key: str, value: Any, changes: dict[str, Any]) -> np.ndarray:
    joints = tuple(changes.get("joint_all_names", model.joint_all_names))
    nj = len(joints)
    order = f"one per joint in model.joint_all_names order {shown(joints)}"
    if isinstance(value, Mapping):
        arr = np.array(getattr(model, key), dtype=float)
        index = {n: j for j, n in enumerate(joints)}
        for name, v in value.items():
            arr[lookup(index, name, "joint", key)] = _number(v, f"{key}[{name!r}]", key)
        labels = [f"{key}[{joints[j]!r}]" for j in range(nj)]
    else:
        if isinstance(value, (bool, np.bool_)) or getattr(value, "dtype", None) == bool:
            raise ShapeError(f"{key} = {shown(value)}; expected numbers, {order}, not True/False")
        try:
            arr = real_array(value)
        except (TypeError, ValueError, OverflowError) as exc:
            raise ShapeError(f"{key} = {shown(value)}; expected numbers, {order} ({reason(exc)})") from None
        if arr.ndim == 0:   # one number for every joint
            arr = np.full(nj, float(arr))
            labels = [key] * nj
        elif arr.shape != (nj,):
            got, want = (f"{arr.shape[0]} values", f"{nj}") if arr.ndim == 1 else \
                (f"shape {arr.shape}", f"shape ({nj},)")
            raise ShapeError(f"{key} has {got}; expected {want}, {order}, or one number for every "
                             f"joint, or {{joint name: value}} for some")
        else:
            labels = [f"{key}[{j}] (joint {joints[j]!r})" for j in range(nj)]
    _values(arr, labels, key)
    return arr


def _number(v: Any, label: str, key: str) -> float:
    if isinstance(v, (bool, np.bool_)):
        raise ShapeError(f"{label} = {shown(v)}; expected {_expected(key)}, not True/False")
    try:
        arr = real_array(v)
    except (TypeError, ValueError, OverflowError) as exc:
        raise ShapeError(f"{label} = {shown(v)}; expected {_expected(key)} ({reason(exc)})") from None
    if arr.ndim:
        raise ShapeError(f"{label} = {shown(v)}; expected {_expected(key)}, one number for the joint")
    return float(arr)


def _expected(key: str) -> str:
    inf, nonneg = PER_JOINT[key]
    what = "a number" if inf else "a finite number"
    return what + (" >= 0" if nonneg else "") + ((" (inf: no limit)" if nonneg else " (-inf/inf: no limit)")
                                                 if inf else "")


def _values(arr: np.ndarray, labels: list[str], key: str) -> None:
    """Raise naming the first value that is nan, infinite where not allowed, or negative where
    a value must be >= 0."""
    inf, nonneg = PER_JOINT[key]
    ok = ~np.isnan(arr) if inf else np.isfinite(arr)
    if nonneg:
        ok &= ~(arr < 0)
    if ok.all():
        return
    j = int(np.flatnonzero(~ok)[0])
    x = float(arr[j])
    hint = nearest_hint(x, whole=False) if nonneg and not math.isnan(x) else ""
    raise ShapeError(f"{labels[j]} = {x!r}; expected {_expected(key)}{hint}")


#: a joint limit beyond this (rad or m) is sampled as no limit (a file's +-1e308 overflowed)
WIDEST_LIMIT = 1e6


def sampled_limits(limit: np.ndarray) -> np.ndarray:
    """Where joint limits bound the samples: finite and within :data:`WIDEST_LIMIT`."""
    return np.isfinite(limit) & (np.abs(limit) <= WIDEST_LIMIT)


def limb_roots(parent: Sequence[int], movable: Sequence[bool]) -> tuple[list[int], np.ndarray]:
    """(the first link of each limb, the links welded to the root) of a tree of links 0 .. n-1
    with ``parent[k] < k`` (link 0 the root) and ``movable[k]``: link k's joint moves. A limb
    starts at a movable joint whose parent is the root or welded to it."""
    rigid = np.zeros(len(parent), dtype=bool)
    rigid[0] = True
    for k in range(1, len(parent)):
        rigid[k] = rigid[parent[k]] and not movable[k]
    return [k for k in range(1, len(parent)) if movable[k] and rigid[parent[k]]], rigid


def free_root_issues(model: RobotModel) -> tuple[ModelIssue, ...]:
    """An issue line when a fixed-base model's root looks like a free body: the root and the
    links welded to it by fixed joints have mass and carry two or more limbs (subtrees with
    movable joints), as legged robots, humanoids and wheeled bases do; welded to the world, such
    a robot cannot fall, walk or roll. A root link named ``world`` says that the file means it
    welded (the ROS convention)."""
    if model.floating_base or model.nlinks < 2 or model.link_names[0] == "world":   # ROS's name for the world
        return ()
    codes = np.asarray(model.joint_type_code)
    tops, rigid = limb_roots(model.link_parent, [False] + [c != FIXED for c in codes])
    limbs = [model.link_names[k] for k in tops]
    mass = float(model.link_mass[rigid].sum())
    if len(limbs) < 2 or mass <= 0:
        return ()
    root = model.link_names[0]
    return (ModelIssue(
        "free_root", f"link {root!r}",
        f"the root carries {len(limbs)} limbs and {mass:.4g} kg but nothing fixes it to the world; "
        f"simbench welds it to the world origin. For a legged or mobile robot use "
        f"RobotModel.from_urdf(path, floating_base=True) (simbench info --floating): q and v then "
        f"start with the base pose and twist", {"link": root, "limbs": limbs, "mass": mass}),)
