"""Joints locked at a value: the robot with some joints made rigid, as Pinocchio's
``buildReducedModel(model, joints_to_lock, q_ref)``.

A locked revolute, continuous or prismatic joint becomes a fixed joint whose origin carries the
motion at the value given: ``origin' = origin @ Rot(axis, q)`` (or ``@ Trans(axis q)``), so every
link keeps the pose it had at that value and the remaining joints keep their names and order.
Uses: the Panda's arm without its fingers (``simbench.dynamics.symbolic.derive`` needs a serial
chain), a gripper held closed, a wheel braked.
"""
from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import numpy as np

from .errors import SimbenchError, UnknownNameError, degrees_note, finite_or_none, outside_limits, shown
from .issues import ModelIssue
from .joint_space import velocity_starts
from .model import FIXED, PRISMATIC, SPHERICAL, RobotModel
from .spatial import so3_exp

__all__ = ["lock_joints"]

log = logging.getLogger(__name__)


def _motion(axis: np.ndarray, value: float, prismatic: bool) -> np.ndarray:
    """The joint's motion (4, 4) at ``value``: a translation along ``axis`` or a rotation about it."""
    T = np.eye(4)
    if prismatic:
        T[:3, 3] = axis * value
    else:
        T[:3, :3] = so3_exp(axis * value)
    return T


def lock_joints(model: RobotModel, values: Mapping[str, float]) -> RobotModel:
    """``model`` with each joint of ``values`` (name -> angle in rad or travel in m) made rigid at
    that value; the other joints keep their names and order (Pinocchio's ``buildReducedModel``).
    Spherical joints cannot be locked here. A value outside the joint's limits is locked as given
    (a pose is not a motion: a study of a pose beyond a limit, or a file whose limits are wrong),
    with one warning line naming the limits and the closest valid value; one that looks like
    degrees is refused; text, a non-finite value, an unknown or a fixed joint is one line. ``model.issues`` says which joints were locked, at what value
    (``locked_joint``)."""
    if not isinstance(model, RobotModel):
        raise SimbenchError(f"model = {shown(model)}; expected a RobotModel, e.g. "
                            "simbench.RobotModel.from_urdf('pybullet_data:franka_panda/panda.urdf')")
    if not isinstance(values, Mapping):
        example = f", e.g. {{{model.joint_names[-1]!r}: 0.0}}" if model.joint_names else ""
        raise SimbenchError(f"values = {shown(values)}; expected {{joint name: value}}{example}")
    index = {model.joint_all_names[j]: int(j) for j in model.movable}
    codes, types = np.array(model.joint_type_code), list(model.joint_type)
    codes_before = np.array(model.joint_type_code)
    origins = np.array(model.joint_origin)
    issues = [i for i in model.issues if not (i.kind == "mimic_joint" and i.data.get("joint") in values)]
    for name, value in values.items():
        if name in model.joint_all_names and name not in index:
            raise SimbenchError(f"joint {name!r} is fixed (in the file, or locked already); expected one of the "
                                f"movable joints {', '.join(model.joint_names)}")
        if name not in index:
            raise UnknownNameError("movable joint", name, index, f"{model.name} (lock_joints)")
        j = index[name]
        if codes[j] == SPHERICAL:
            raise SimbenchError(f"joint {name!r} is spherical; lock_joints locks revolute, continuous and "
                                "prismatic joints")
        x = _value(name, value, model, j)
        origins[j] = origins[j] @ _motion(np.asarray(model.joint_axis[j], float), x, codes[j] == PRISMATIC)
        codes[j], types[j] = FIXED, "fixed"
        unit = "m" if codes_before[j] == PRISMATIC else "rad"
        issues.append(ModelIssue("locked_joint", f"joint {name}", f"joint {name!r} locked at {x:g} {unit} "
                                 "(lock_joints): fixed", {"joint": name, "value": x}))
    for j, mimic in enumerate(model.joint_mimic):   # a pair the file ties together, locked apart
        name = model.joint_all_names[j]
        if mimic is not None and name in values and mimic.joint in values:
            tied = mimic.multiplier * float(values[mimic.joint]) + mimic.offset
            if not np.isclose(float(values[name]), tied, rtol=1e-9, atol=1e-12):
                log.warning("%s: joint %r mimics %r (x%g + %g), so it would be at %g, but is locked at %g",
                            model.name, name, mimic.joint, mimic.multiplier, mimic.offset, tied, float(values[name]))
    return model.replace(joint_type=tuple(types), joint_type_code=codes, joint_origin=origins,
                         joint_v_index=velocity_starts(codes), issues=tuple(issues))


def _value(name: str, value: Any, model: RobotModel, j: int) -> float:
    """A lock value as a float: finite, a number (not text), and not an angle in degrees (beyond
    a turn and outside the joint's limits)."""
    x = finite_or_none(value)
    if x is None:
        raise SimbenchError(f"{name} = {shown(value)}; expected a finite number (rad or m)")
    lo, hi = float(model.joint_lower[j]), float(model.joint_upper[j])
    if int(model.joint_type_code[j]) != PRISMATIC and not lo <= x <= hi and degrees_note(x):
        raise SimbenchError(f"{name} = {x:g} rad, outside its limits [{lo:g}, {hi:g}]{degrees_note(x)}")
    if lo < hi and not lo <= x <= hi:   # lower >= upper: no limits (continuous, or as PyBullet reads it)
        unit = "m" if int(model.joint_type_code[j]) == PRISMATIC else "rad"
        log.warning("%s: %s; locked there anyway (lock_joints)", model.name,
                    outside_limits(f"joint {name!r} = {x:g}", x, lo, hi, unit))
    return x
