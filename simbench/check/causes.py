"""The ways PyBullet alters a model, or the inputs, that ``simbench check`` can demonstrate.

Each :class:`Alteration` is one change PyBullet makes: to the model (``apply``), to gravity in
the root frame (``gravity``), or to the joint vectors its server actually computes with
(``inputs`` for inverse dynamics, ``mass_inputs`` for the mass matrix). :func:`suspect` lists
the alterations that may apply to a robot (from the model's issues, the load options and its
size); :func:`as_pybullet_sees` applies a set of them, so the comparison can be rerun on "the
robot as PyBullet sees it". An alteration counts as a cause only when the rerun shows it
(see :mod:`simbench.check.checker`).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..model import SPHERICAL, RobotModel
from .bullet import PYBULLET_MAX_DOF, BulletLoad, BulletRobot

#: Every cause ``check`` can demonstrate, with what PyBullet does.
CAUSES = {
    "triangle_inequality_zeroed": "link inertia breaks the triangle inequality: PyBullet zeroes its "
                                  "rotational inertia (keeps mass and COM); the root's counts "
                                  "on a floating base (--floating)",
    "missing_inertial_default": "link without <inertial>: PyBullet gives it 1 kg, unit inertia and an "
                                "identity inertial frame",
    "root_inertial_gravity_tilt": "root <inertial> has a rotation: PyBullet treats the root's inertial "
                                  "frame as world-aligned, so inverse dynamics sees gravity R_inertial @ g "
                                  "in the root link frame",
    "base_orientation_ignored": "fixed base loaded with a base orientation: calculateInverseDynamics "
                                "treats the base as upright (gravity not rotated into the base frame)",
    "inertia_from_collision_shapes": "loaded without URDF_USE_INERTIA_FROM_FILE: PyBullet recomputes link "
                                     "inertia from the collision shapes (rebuilt from getDynamicsInfo)",
    "global_scaling_keeps_inertia": "loaded with globalScaling: PyBullet scales joint origins and centres of "
                                    "mass but keeps every link's mass and rotational inertia as in the file",
    "massless_root_welded": "floating base whose root link has mass 0: PyBullet welds the root to the world "
                            "even without useFixedBase (getDynamicsInfo mass 0; its floating-base "
                            "calculateInverseDynamics refuses 7 + n positions)",
    "spherical_pivot_at_parent": "spherical joint: calculateInverseDynamics and calculateMassMatrix (Bullet's "
                                 "separate inverse-dynamics tree) put the joint at the parent link's origin "
                                 "(the parent's pivot) instead of at the joint's <origin> xyz, so the child "
                                 "rotates about, and passes its load through, the wrong point",
    "dof_limit_overflow": f"more than {PYBULLET_MAX_DOF} DOF: PyBullet's client copies q, qd and qdd into "
                          f"fixed {PYBULLET_MAX_DOF}-entry arrays of its command (MAX_DEGREE_OF_FREEDOM) "
                          "without a bound check, so the entries past the limit overwrite the next array "
                          "and the server computes with other joint values",
}

#: What PyBullet then computes wrongly, for "agrees with PyBullet, which here ...": every cause
#: whose PyBullet numbers differ from the true dynamics of the model as loaded. Not
#: ``massless_root_welded``: what is compared there (the joint rows, base at rest) is true.
DOES = {
    "triangle_inequality_zeroed": "zeroes the rotational inertia of links that break the triangle inequality",
    "missing_inertial_default": "gives links without <inertial> 1 kg and unit inertia",
    "root_inertial_gravity_tilt": "rotates gravity by the root's inertial frame",
    "base_orientation_ignored": "ignores the base's orientation",
    "inertia_from_collision_shapes": "recomputes link inertia from the collision shapes",
    "global_scaling_keeps_inertia": "keeps the file's masses and inertias on a scaled body",
    "spherical_pivot_at_parent": "puts spherical joints at the parent link's origin",
    "dof_limit_overflow": f"computes with other joint values past {PYBULLET_MAX_DOF} DOF",
}

Inputs = tuple[np.ndarray, np.ndarray, np.ndarray]


@dataclass(frozen=True)
class Alteration:
    """One change PyBullet makes; the callables map ours to what PyBullet uses."""

    kind: str
    links: list[str]
    message: str
    apply: Callable[[RobotModel], RobotModel] | None = None       # the model
    gravity: Callable[[np.ndarray], np.ndarray] | None = None      # gravity, root frame
    inputs: Callable[[np.ndarray, np.ndarray, np.ndarray], Inputs] | None = None  # (q, qd, qdd) of ID
    mass_inputs: Callable[[np.ndarray], np.ndarray] | None = None  # q of the mass matrix

    @property
    def description(self) -> str:
        return f"{CAUSES[self.kind]}; {self.message}"


def as_pybullet_sees(model: RobotModel, alterations: Sequence[Alteration]) -> tuple[RobotModel, np.ndarray]:
    """The model and root-frame gravity with ``alterations`` applied (the base orientation
    first: it replaces gravity, the root inertial tilt then rotates it)."""
    g = np.array(model.gravity, float)
    for a in sorted(alterations, key=lambda a: a.kind != "base_orientation_ignored"):
        if a.apply is not None:
            model = a.apply(model)
        if a.gravity is not None:
            g = a.gravity(g)
    return model, g


def altered_inputs(alterations: Sequence[Alteration], q: np.ndarray, qd: np.ndarray,
                   qdd: np.ndarray) -> tuple[Inputs, np.ndarray]:
    """((q, qd, qdd) for inverse dynamics, q for the mass matrix) as PyBullet's server reads them."""
    ins, qm = (q, qd, qdd), q
    for a in alterations:
        if a.inputs is not None:
            ins = a.inputs(*ins)
        if a.mass_inputs is not None:
            qm = a.mass_inputs(qm)
    return ins, qm


# ---------------------------------------------------------------------- PyBullet above 128 DOF
def overflowed_inputs(q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, max_dof: int = PYBULLET_MAX_DOF,
                      flags: int = 0) -> Inputs:
    """(q, qd, qdd) as PyBullet's server reads them for ``calculateInverseDynamics``.

    bullet3's ``b3CalculateInverseDynamicsCommandInit2`` (PhysicsClientC_API.cpp) copies
    ``q[i]`` for every i into ``m_jointPositionsQ[MAX_DEGREE_OF_FREEDOM]``, then, in one loop,
    ``qd[i]`` and ``qdd[i]`` into the two arrays that follow it in ``CalculateInverseDynamicsArgs``
    (SharedMemoryCommands.h), with no bound check; ``m_flags`` follows the three arrays and
    is written after the copies. With ``n > max_dof`` entries the later writes win, so the server
    computes with ``q[max_dof + k] = qd[k]``, ``qdd[k] = qd[max_dof + k]`` and one value whose low
    32 bits are the flags. Batched over leading dimensions."""
    q, qd, qdd = (np.asarray(a, float) for a in (q, qd, qdd))
    n, K = q.shape[-1], max_dof
    if n <= K:
        return q, qd, qdd
    mem = np.zeros(q.shape[:-1] + (3 * K + 2 * n + 1,))  # doubles from m_jointPositionsQ on
    mem[..., :n] = q
    mem[..., 2 * K:2 * K + n] = qdd
    mem[..., K:K + n] = qd  # the qd write of iteration i comes after the qdd write of i - K
    bits = mem.view(np.uint64)
    bits[..., 3 * K] = (bits[..., 3 * K] & np.uint64(0xFFFFFFFF00000000)) | np.uint64(flags & 0xFFFFFFFF)
    return mem[..., :n].copy(), mem[..., K:K + n].copy(), mem[..., 2 * K:2 * K + n].copy()


def overflowed_mass_inputs(q: np.ndarray, max_dof: int = PYBULLET_MAX_DOF) -> np.ndarray:
    """q as PyBullet's server reads it for ``calculateMassMatrix``: ``CalculateMassMatrixArgs``
    holds ``m_jointPositionsQ[MAX_DEGREE_OF_FREEDOM]`` followed by the int32 ``m_dofCountQ`` and
    ``m_flags``, written after the copy, so entry ``max_dof`` is the bits of (n, 0) read as a
    double (about 1e-321); the entries past it survive."""
    q = np.array(q, float)
    n = q.shape[-1]
    if n > max_dof:
        q[..., max_dof] = np.array([n, 0], dtype="<i4").view("<f8")[0]
    return q


# ---------------------------------------------------------------------- inertials PyBullet holds
def from_dynamics_info(model: RobotModel, bullet: BulletRobot
                       ) -> tuple[Callable[[RobotModel], RobotModel], list[str]]:
    """A function that gives every moving link PyBullet's own mass, COM and inertia (from
    ``getDynamicsInfo``), and the links whose values differ from the model's (beyond 1e-12)."""
    inertials = bullet.link_inertials()
    changed = [model.link_names[k + 1] for k, (m, c, I) in enumerate(inertials)
               if not (np.isclose(m, model.link_mass[k + 1], rtol=1e-12, atol=1e-12)
                       and np.allclose(c, model.link_com[k + 1], rtol=1e-12, atol=1e-12)
                       and np.allclose(I, model.link_inertia[k + 1], rtol=1e-12, atol=1e-12))]

    def rebuild(mod: RobotModel) -> RobotModel:
        masses, coms, Is = np.array(mod.link_mass), np.array(mod.link_com), np.array(mod.link_inertia)
        for k, (m, c, I) in enumerate(inertials):
            masses[k + 1], coms[k + 1], Is[k + 1] = m, c, I
        return mod.replace(link_mass=masses, link_com=coms, link_inertia=Is)

    return rebuild, changed


def suspect(model: RobotModel, bullet: BulletRobot, load: BulletLoad,
            file_model: RobotModel | None = None) -> list[Alteration]:
    """The alterations PyBullet may have made to this robot, from the model's issues, the load
    options (``load``) and the robot's size. ``file_model`` is the model as the file describes it
    (before a scene's ``scale``)."""
    out: list[Alteration] = []
    if not load.inertia_from_file:
        rebuild, changed = from_dynamics_info(model, bullet)
        out.append(Alteration("inertia_from_collision_shapes", changed,
                              f"{len(changed)} link inertials differ from the file", apply=rebuild))
    else:
        # the root's inertia counts only when it moves (a floating base); welded, it is no cause
        tri = [i.data["link"] for i in model.issues if i.kind == "inertia_triangle_inequality"
               and (model.floating_base or model.link_index(i.data["link"]) > 0)]
        if tri:
            def zero_rot(mod: RobotModel, links: list[str] = tri) -> RobotModel:
                for name in links:
                    mod = mod.with_link_inertial(name, inertia=np.zeros((3, 3)))
                return mod

            out.append(Alteration("triangle_inequality_zeroed", tri, "rotational inertia zeroed "
                                  "(PyBullet: 'Bad inertia tensor properties')", apply=zero_rot))
        missing = [i.data["link"] for i in model.issues if i.kind == "missing_inertial"
                   and i.data["link"] != "world" and model.link_index(i.data["link"]) > 0]
        if model.floating_base and not model.link_has_inertial[0] and model.link_names[0] != "world":
            missing.insert(0, model.link_names[0])   # a floating root's 1 kg moves with it
        if missing:
            def default(mod: RobotModel, links: list[str] = missing) -> RobotModel:
                for name in links:
                    mod = mod.with_link_inertial(name, mass=1.0, com=np.zeros(3), inertia=np.eye(3))
                return mod

            out.append(Alteration("missing_inertial_default", missing, "1 kg, unit inertia, COM at the "
                                  "link origin", apply=default))
    R_in = np.array(model.link_inertial_origin[0][:3, :3])
    # a floating base: FloatingBaseConvention already maps PyBullet's base (inertial) frame to ours
    if not model.floating_base and not np.allclose(R_in, np.eye(3), atol=1e-12):
        out.append(Alteration("root_inertial_gravity_tilt", [model.link_names[0]],
                              "gravity in the root frame is R_inertial @ g", gravity=lambda g, R=R_in: R @ g))
    if load.fixed_base and not np.allclose(load.base_rotation, np.eye(3), atol=1e-12):
        g_world = np.array(load.gravity, float)
        out.append(Alteration("base_orientation_ignored", [model.link_names[0]],
                              f"PyBullet uses the world gravity {g_world.tolist()} as if it were the base "
                              f"frame's", gravity=lambda g, gw=g_world: gw.copy()))
    if load.scale != 1.0 and file_model is not None and (
            not np.allclose(model.link_mass, file_model.link_mass, rtol=1e-12, atol=0)
            or not np.allclose(model.link_inertia, file_model.link_inertia, rtol=1e-12, atol=1e-15)):
        def keep(mod: RobotModel, src: RobotModel = file_model) -> RobotModel:
            return mod.replace(link_mass=np.array(src.link_mass), link_inertia=np.array(src.link_inertia))

        out.append(Alteration("global_scaling_keeps_inertia", [model.link_names[0]],
                              f"scale {load.scale:g}: masses and inertias as in the file", apply=keep))
    shifted = [k for k, c in enumerate(model.joint_type_code) if int(c) == SPHERICAL
               and np.any(np.asarray(model.joint_origin[k])[:3, 3] != 0.0)]
    if shifted:
        def at_parent_pivot(mod: RobotModel, joints: list[int] = shifted) -> RobotModel:
            origin = np.array(mod.joint_origin)
            origin[joints, :3, 3] = 0.0
            return mod.replace(joint_origin=origin)

        out.append(Alteration("spherical_pivot_at_parent", [model.joint_all_names[k] for k in shifted],
                              "joint origin translation set to zero (rotation kept)", apply=at_parent_pivot))
    if model.dof > PYBULLET_MAX_DOF:
        names = model.joint_names[PYBULLET_MAX_DOF:]
        out.append(Alteration("dof_limit_overflow", [names[0] if len(names) == 1 else f"{names[0]}..{names[-1]}"],
                              f"{model.dof} DOF: the server reads q[{PYBULLET_MAX_DOF}+k] = qd[k] and "
                              f"qdd[k] = qd[{PYBULLET_MAX_DOF}+k]; the mass matrix reads "
                              f"q[{PYBULLET_MAX_DOF}] = the bits of the DOF count",
                              inputs=overflowed_inputs, mass_inputs=overflowed_mass_inputs))
    return out


__all__ = ["CAUSES", "DOES", "Alteration", "as_pybullet_sees", "altered_inputs", "overflowed_inputs",
           "overflowed_mass_inputs", "from_dynamics_info", "suspect"]
