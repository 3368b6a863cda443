"""What is questionable about a URDF file: :class:`ModelIssue`, and which issues make PyBullet
refuse the file.

An issue is not an error: :meth:`simbench.RobotModel.from_urdf` still builds the model and
``simbench info`` lists the issues. The kinds in :data:`REFUSED_BY_PYBULLET` are constructs that
``pybullet.loadURDF`` refuses ("Cannot load URDF file."), found by loading variants of a small
URDF with ``p.loadURDF`` (``tests/test_urdf_source.py`` repeats that experiment for every kind),
so a file with none of them loads in PyBullet; loading such a file into a PyBullet server fails
with one line naming the file and the element (:meth:`simbench.urdf_source.UrdfSource.check_loadable`).
"""
from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

#: every kind of issue, with what it means
KINDS: dict[str, str] = {
    "inertia_not_positive_definite": "a link's inertia has a negative principal moment (beyond rounding; "
                                     "zero moments, a point mass or a rod, are fine)",
    "inertia_triangle_inequality": "principal moments break the triangle inequality; PyBullet "
                                   "zeroes the rotational inertia",
    "missing_inertial": "a link without <inertial>: PyBullet gives it 1 kg and unit inertia",
    "nonpositive_mass": "a link's mass is zero or negative",
    "axis_not_unit": "a joint axis that is not a unit vector (normalised)",
    "mimic_joint": "a <mimic> joint, treated as independent",
    "root_inertial_rotation": "the root's <inertial> is rotated: PyBullet tilts gravity",
    "trailing_content": "text after </robot> (ignored, as PyBullet does)",
    "sloppy_number": "a number PyBullet reads only in part (e.g. '0.07,')",
    "unexpanded_xacro": "a number holding xacro left unexpanded ('$(arg x)', '${pi/2}'): read as "
                        "PyBullet reads it (C's atof of each piece, often 0); expand the file with xacro",
    "reversed_limits": "a joint whose lower limit is above its upper one: PyBullet treats it "
                       "as unlimited",
    "limit_beyond_a_turn": "revolute limits beyond 2 pi rad, likely written in degrees",
    "xacro_input": "the file is xacro, expanded before loading",
    "unknown_element": "an element the URDF specification does not have there, likely misspelled "
                       "(ignored by PyBullet and simbench)",
    "unknown_attribute": "an attribute the URDF specification does not have there, likely misspelled "
                         "(ignored by PyBullet and simbench)",
    "floating_root_joint": "a floating joint from a massless root link (ROS's world) to the robot: "
                           "both dropped, the robot's root is the joint's child (the free-flyer with "
                           "floating_base=True; else welded, as PyBullet makes the joint fixed)",
    "free_root": "a root that looks like a free body (legs, a mobile base) is welded to the world; "
                 "ask for a floating base",
    "locked_joint": "a joint made rigid at a value by simbench.lock_joints (the model is no longer "
                    "the file's)",
    # constructs PyBullet refuses:
    "missing_limit": "a revolute or prismatic joint without <limit>",
    "missing_mesh": "a mesh file that cannot be found",
    "unsupported_mesh": "a mesh format PyBullet cannot read (it reads .obj, .stl, .dae, .vtk)",
    "incomplete_geometry": "a <visual>/<collision> without a complete shape",
    "incomplete_inertial": "an <inertial> without <mass value>, <inertia> or ixx/iyy/izz",
    "unnamed_robot": "a <robot> element without a name attribute",
}

#: kinds that make ``pybullet.loadURDF`` refuse the file
REFUSED_BY_PYBULLET = frozenset({"missing_limit", "missing_mesh", "unsupported_mesh",
                                 "incomplete_geometry", "incomplete_inertial", "unnamed_robot"})


@dataclass(frozen=True)
class ModelIssue:
    """Something questionable about the file itself (not an error: the model still loads).

    ``kind`` is one of :data:`KINDS`; ``element`` is ``"link NAME"``, ``"joint NAME"`` or
    ``"robot"``; ``data`` holds the numbers (and, for a missing mesh, the paths tried).
    """

    kind: str
    element: str
    message: str
    data: Mapping[str, Any] = field(default_factory=dict)

    @property
    def refused_by_pybullet(self) -> bool:
        """True when PyBullet refuses to load a file with this issue."""
        return self.kind in REFUSED_BY_PYBULLET

    def __str__(self) -> str:
        return f"{self.kind}: {self.element}: {self.message}"


    @property
    def unphysical(self) -> bool:
        """True for a negative mass, or a principal moment of inertia below zero by more than
        rounding (1e-9 of the largest; a point mass's zeros are fine): no body has them, and
        the dynamics computed with them are not a body's (M(q) may be indefinite or singular)."""
        if self.kind == "nonpositive_mass":
            return self.data.get("mass", 0.0) < 0
        if self.kind == "inertia_not_positive_definite":
            moments = self.data.get("principal", [0.0])
            return min(moments) < -1e-9 * max(abs(x) for x in moments)
        return False


def say_unphysical(label: str, issues: Sequence[ModelIssue]) -> None:
    """Log one warning line naming the :attr:`ModelIssue.unphysical` issues of a file just
    loaded (they stay in ``model.issues`` and ``simbench info``); nothing when there are none."""
    bad = [f"{i.element}: {i.message}" for i in issues if i.unphysical]
    if bad:
        logging.getLogger(__name__).warning(
            "%s: %s; dynamics computed with %s are not physical (simbench info lists the file's issues)",
            label, "; ".join(bad), "it" if len(bad) == 1 else "them")


__all__ = ["ModelIssue", "KINDS", "REFUSED_BY_PYBULLET", "say_unphysical"]
