"""PyBullet's result tuples, named once (as pyb_utils does), so no other module indexes them.

``joint_info(body, j, client).name`` instead of ``p.getJointInfo(...)[1].decode()``. Field
names follow PyBullet's documentation (the PyBullet Quickstart Guide, Coumans and Bai); byte
strings are decoded; vectors stay tuples (convert with ``np.asarray`` where needed).
"""
from __future__ import annotations

from typing import NamedTuple

from .._quiet import import_pybullet

p = import_pybullet()


class JointInfo(NamedTuple):
    """``getJointInfo``: one joint of a body (its child link has the same index)."""

    index: int
    name: str
    type: int                 # p.JOINT_REVOLUTE, p.JOINT_PRISMATIC, p.JOINT_SPHERICAL, p.JOINT_FIXED, ...
    q_index: int
    u_index: int
    flags: int
    damping: float
    friction: float
    lower_limit: float
    upper_limit: float
    max_force: float
    max_velocity: float
    link_name: str
    axis: tuple[float, float, float]             # in the joint frame
    parent_frame_position: tuple[float, float, float]
    parent_frame_orientation: tuple[float, float, float, float]
    parent_index: int


class JointState(NamedTuple):
    """``getJointState(s)``: position, velocity, reaction wrench, applied motor torque."""

    position: float
    velocity: float
    reaction_forces: tuple[float, ...]
    applied_torque: float


class LinkState(NamedTuple):
    """``getLinkState`` (with ``computeLinkVelocity=1`` for the last two)."""

    com_position: tuple[float, float, float]
    com_orientation: tuple[float, float, float, float]
    local_inertial_position: tuple[float, float, float]
    local_inertial_orientation: tuple[float, float, float, float]
    frame_position: tuple[float, float, float]       # the URDF link frame, world
    frame_orientation: tuple[float, float, float, float]
    linear_velocity: tuple[float, float, float] = (0.0, 0.0, 0.0)
    angular_velocity: tuple[float, float, float] = (0.0, 0.0, 0.0)


class DynamicsInfo(NamedTuple):
    """``getDynamicsInfo`` of one link (-1: the base)."""

    mass: float
    lateral_friction: float
    local_inertia_diagonal: tuple[float, float, float]
    local_inertial_position: tuple[float, float, float]
    local_inertial_orientation: tuple[float, float, float, float]
    restitution: float
    rolling_friction: float
    spinning_friction: float
    contact_damping: float
    contact_stiffness: float
    body_type: int
    collision_margin: float


class ContactPoint(NamedTuple):
    """``getContactPoints`` / ``getClosestPoints``: one point pair between bodies a and b."""

    contact_flag: int
    body_a: int
    body_b: int
    link_a: int
    link_b: int
    position_on_a: tuple[float, float, float]
    position_on_b: tuple[float, float, float]
    normal_on_b: tuple[float, float, float]          # from b towards a
    distance: float                                   # negative: penetration
    normal_force: float
    lateral_friction_1: float
    lateral_friction_dir_1: tuple[float, float, float]
    lateral_friction_2: float
    lateral_friction_dir_2: tuple[float, float, float]


class RayHit(NamedTuple):
    """``rayTest`` / ``rayTestBatch``: body -1 when nothing was hit."""

    body: int
    link: int
    fraction: float
    position: tuple[float, float, float]
    normal: tuple[float, float, float]


def joint_info(body: int, joint: int, client: int) -> JointInfo:
    row = p.getJointInfo(body, joint, physicsClientId=client)
    return JointInfo(*row[:1], row[1].decode(), *row[2:12], row[12].decode(), *row[13:17])


def joint_infos(body: int, client: int) -> tuple[JointInfo, ...]:
    """Every joint of ``body``, in PyBullet's order."""
    return tuple(joint_info(body, j, client) for j in range(p.getNumJoints(body, physicsClientId=client)))


def dynamics_info(body: int, link: int, client: int) -> DynamicsInfo:
    return DynamicsInfo(*p.getDynamicsInfo(body, link, physicsClientId=client)[:12])


def contact_points(rows: tuple | None) -> list[ContactPoint]:
    """Name the rows that ``getContactPoints`` / ``getClosestPoints`` returned."""
    return [ContactPoint(*r[:14]) for r in rows or ()]


def ray_hits(rows: tuple | None) -> list[RayHit]:
    return [RayHit(*r[:5]) for r in rows or ()]


__all__ = ["JointInfo", "JointState", "LinkState", "DynamicsInfo", "ContactPoint", "RayHit",
           "joint_info", "joint_infos", "dynamics_info", "contact_points", "ray_hits"]
