"""The warnings a scene gives, once per body at the first step, about a base that does not do
what the scene seems to mean: an arm left free that falls (:func:`warn_free_arm`), and a robot
whose URDF joins it to a massless ``world`` link by ``<joint type="floating">``, which PyBullet
loads as a fixed joint, so the robot hangs where it was put (:func:`warn_welded_floating_joint`;
measured on pybullet_data's a1 with such a root: z stays 2 m through 1 s of gravity,
``tests/test_scene_floating_joint.py``). PyBullet's own words for the latter, ``Warning: joint
unsupported, creating a fixed joint instead.`` with no newline, are dropped from its output at
load (:data:`LOAD_WARNINGS`).
"""
from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from typing import Any

import pybullet as p

from ..model_checks import limb_roots
from .inertials import B3_INERTIAL_WARNINGS

logger = logging.getLogger("simbench.bullet.scene")

#: PyBullet's load-time output that simbench says in its own words (inertials, a floating joint)
LOAD_WARNINGS = re.compile(B3_INERTIAL_WARNINGS.pattern + r"|Warning: joint unsupported, creating a fixed joint instead\.\n?")


def warn_welded_floating_joint(spec: Any, body: int, client: int) -> bool:
    """Log, for a body not welded by its scene whose base PyBullet holds still (no mass), that
    its file's floating joint from a massless root link became a fixed joint; True if it did."""
    if spec.fixed_base or p.getDynamicsInfo(body, -1, physicsClientId=client)[0] > 0:
        return False
    try:
        issue = next((i for i in spec.robot_model().issues if i.kind == "floating_root_joint"), None)
    except Exception:  # noqa: BLE001 - a warning must not stop the simulation; the load succeeded
        return False
    if issue is None:
        return False
    d = issue.data
    logger.warning("body %r: the URDF joins the massless link %r to %r by <joint type=\"floating\"> %r, which "
                   "PyBullet makes a fixed joint, so the robot is welded where the scene puts it and cannot move "
                   "(sim.model is welded too); for a free base remove link %r and joint %r from the file",
                   spec.name, d["world"], d["root"], d["joint"], d["world"], d["joint"])
    return True


def warn_free_arm(spec: Any, body: int, client: int, gravity: Sequence[float]) -> None:
    """Log that an arm whose scene left ``fixed_base`` out is free and falls: a body whose root
    has mass (PyBullet keeps a massless base still) and carries one movable limb (a chain, not
    legs or wheels), under gravity."""
    if spec.fixed_base or spec.fixed_base_given or not any(gravity):
        return
    if p.getDynamicsInfo(body, -1, physicsClientId=client)[0] <= 0:
        return                   # a massless base is static in PyBullet: it does not fall
    infos = [p.getJointInfo(body, j, physicsClientId=client) for j in range(p.getNumJoints(body, physicsClientId=client))]
    limbs, _ = limb_roots([-1] + [info[16] + 1 for info in infos],   # PyBullet's link j is our link j + 1
                          [False] + [info[2] != p.JOINT_FIXED for info in infos])
    if len(limbs) == 1:
        logger.warning("body %r: fixed_base is not set, so its base is free and the arm falls "
                       "under gravity; set fixed_base = true to mount it (fixed_base = false "
                       "keeps it free without this line)", spec.name)


__all__ = ["LOAD_WARNINGS", "warn_free_arm", "warn_welded_floating_joint"]
