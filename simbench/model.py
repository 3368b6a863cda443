"""The immutable kinematic tree, :class:`RobotModel`: its arrays, derived views, configuration
space and modified copies. Built from a URDF by :mod:`simbench.urdf_model` (the only URDF parser,
with yourdfpy) from a file read by :mod:`simbench.urdf_source`.

Indexing convention, the same as PyBullet's for the same file:

* links are numbered depth first from the root, children in the order their joints appear
  in the file; link 0 is the root (PyBullet's base, index -1 there), link ``k`` is PyBullet
  link ``k - 1``;
* joint ``j`` is the joint whose child is link ``j + 1`` (so PyBullet joint index ``j``);
* the movable joints (revolute, continuous, prismatic, spherical) in that order give the
  configuration vector: ``model.joint_names``, ``model.dof``.

Spatial quantities use the [angular; linear] ordering of Lynch & Park's *Modern Robotics*
(twist ``V = (w, v)``, wrench ``F = (m, f)``).

Files are found, xacro-expanded and checked by :mod:`simbench.urdf_source` (``package://`` URIs,
missing meshes, constructs PyBullet refuses); the issues it finds join the model's own.
"""
from __future__ import annotations

import dataclasses
import logging
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .errors import SimbenchError, as_rng, is_count, lookup, nearest_hint, shown
from .issues import ModelIssue, say_unphysical
from .joint_space import (FIXED, FREE, PRISMATIC, REVOLUTE, SPHERICAL, ConfigurationSpace, as_joint_array,
                          configuration_space, random_quaternions)
from .joint_space import frozen as _frozen
from .model_checks import checked_changes, free_root_issues, sampled_limits

if TYPE_CHECKING:
    from .packages import PackageMap
    from .urdf_source import UrdfSource, XacroArgs

_BASE_WHERE = " (its floating base is q[:7] and v[:6], named by model.q_labels and v_labels)"

#: Standard gravity (m/s^2) in a z-up world frame: the one default of the whole project.
GRAVITY: tuple[float, float, float] = (0.0, 0.0, -9.81)

# PyBullet drops the rotational inertia of a link whose principal moments break the
# triangle inequality by more than this factor (URDF2Bullet.cpp).
TRIANGLE_TOLERANCE = 1.00001


@dataclass(frozen=True)
class Mimic:
    joint: str
    multiplier: float = 1.0
    offset: float = 0.0


def spatial_inertia(mass: float, com: np.ndarray, inertia_com: np.ndarray) -> np.ndarray:
    """6x6 spatial inertia about the frame origin, [angular; linear] ordering.

    ``G = [[I_c + m [c]^T [c], m [c]], [m [c]^T, m 1]]`` with ``I_c`` about the centre of
    mass ``c``, both expressed in the link frame.
    """
    c = np.asarray(com, dtype=float)
    cx = np.array([[0.0, -c[2], c[1]], [c[2], 0.0, -c[0]], [-c[1], c[0], 0.0]])
    G = np.zeros((6, 6))
    G[:3, :3] = inertia_com + mass * cx.T @ cx
    G[:3, 3:] = mass * cx
    G[3:, :3] = mass * cx.T
    G[3:, 3:] = mass * np.eye(3)
    return G


@dataclass(frozen=True, eq=False)
class RobotModel:
    """An immutable kinematic tree read from a URDF. See the module docstring for indexing."""

    name: str
    source: str
    link_names: tuple[str, ...]
    link_parent: np.ndarray          # (nl,) parent link index, -1 for the root
    link_mass: np.ndarray            # (nl,)
    link_com: np.ndarray             # (nl, 3) centre of mass in the link frame
    link_inertia: np.ndarray         # (nl, 3, 3) about the COM, link-frame axes
    link_inertial_origin: np.ndarray  # (nl, 4, 4) the file's <inertial><origin>
    link_has_inertial: np.ndarray    # (nl,) bool
    joint_all_names: tuple[str, ...]  # (nl-1,) joint j has child link j+1
    joint_type: tuple[str, ...]
    joint_type_code: np.ndarray      # FIXED / REVOLUTE / PRISMATIC / SPHERICAL
    joint_origin: np.ndarray         # (nj, 4, 4) parent link frame -> joint frame at q = 0
    joint_axis: np.ndarray           # (nj, 3) unit axis in the joint frame
    joint_lower: np.ndarray          # (nj,) as in the file (-inf/inf when absent)
    joint_upper: np.ndarray
    joint_effort: np.ndarray
    joint_velocity: np.ndarray
    joint_damping: np.ndarray
    joint_friction: np.ndarray
    joint_mimic: tuple[Mimic | None, ...]
    joint_v_index: np.ndarray        # (nj,) first index in v after a floating base's 6; -1: fixed
    issues: tuple[ModelIssue, ...] = ()
    #: gravity (m/s^2) expressed in the root link's frame; the dynamics use it when no
    #: ``gravity=`` is given. A body mounted with a rotation R carries ``R^T g_world``.
    gravity: tuple[float, float, float] = GRAVITY
    #: True: the root link is attached to the world by a free-flyer joint (6 DOF; q and v start
    #: with the base's 7 and 6 entries); False: the root is welded to the world at root_pose.
    floating_base: bool = False
    #: world pose (4, 4) of a welded root (None: the origin), as ``sim.model`` of a body mounted
    #: in a scene: the kinematics' world (:mod:`simbench.dynamics.kinematics`, ``f_ext``)
    root_pose: np.ndarray | None = None
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_urdf(cls, path: str | os.PathLike, *, floating_base: bool | None = None,
                  package_map: "PackageMap | Sequence[str] | None" = None,
                  xacro_args: "XacroArgs | None" = None) -> "RobotModel":
        """Load a URDF (or xacro) file: a path, ``pybullet_data:NAME`` or ``simbench:NAME``.

        ``floating_base=True`` attaches the root link to the world by a free-flyer joint (see
        :meth:`with_floating_base`); ``False`` welds it to the world, and so does ``None`` (the
        default), with one warning line when the root looks free (``free_root``: a legged or
        mobile robot). ``package_map={"NAME": DIR}`` resolves ``package://NAME/...``;
        ``xacro_args={"name": value}`` are a xacro file's arguments. See :func:`simbench.urdf_source.load_source`.
        """
        from .urdf_source import load_source

        if floating_base is not None and not isinstance(floating_base, (bool, np.bool_)):   # "no" is truthy
            raise SimbenchError(f"floating_base = {shown(floating_base)}; expected True or False (or None, "
                                f"the default: welded, with a warning when the root looks free)")
        model = cls.from_source(load_source(path, package_map=package_map, xacro_args=xacro_args))
        say_unphysical(model.source, model.issues)
        free = [i for i in model.issues if i.kind == "free_root"] if floating_base is None else []
        if free:
            logging.getLogger(__name__).warning(
                "%s: root link %r carries %d limbs and is welded to the world (nq = %d): pass floating_base=True "
                "for a legged or mobile robot, floating_base=False to weld it without this line",
                model.source, free[0].data["link"], len(free[0].data["limbs"]), model.nq)
        return model.with_floating_base() if floating_base else model

    @classmethod
    def from_urdf_string(cls, xml: str | bytes, base_dir: str | os.PathLike | None = None,
                         source: str | None = None) -> "RobotModel":
        """Parse URDF text. ``base_dir`` is where relative mesh paths are resolved."""
        from .urdf_source import source_from_string

        source = source or (f"<string in {base_dir}>" if base_dir else "<string>")
        model = cls.from_source(source_from_string(xml, base_dir=base_dir, spec=source))
        say_unphysical(model.source, model.issues)
        return model

    @classmethod
    def from_source(cls, src: "UrdfSource") -> "RobotModel":
        """The model of a file read by :func:`simbench.urdf_source.load_source`; its issues
        (missing meshes, constructs PyBullet refuses, xacro input) come first."""
        from .urdf_model import build

        return build(src.tree(), src.label, list(src.issues))

    # ------------------------------------------------------------------ derived views
    @property
    def nlinks(self) -> int:
        return len(self.link_names)

    @property
    def movable(self) -> np.ndarray:
        """Indices (into the all-joints arrays) of the movable joints, in q order."""
        return self._cached("movable", lambda: _frozen(np.flatnonzero(self.joint_v_index >= 0), int))

    @property
    def joint_names(self) -> tuple[str, ...]:
        """Movable joint names in q order (PyBullet's order for the same file)."""
        return tuple(self.joint_all_names[j] for j in self.movable)

    # ------------------------------------------------------------------ configuration space
    @property
    def nq(self) -> int:
        """Length of a configuration q: 7 for a floating base, 4 per spherical joint, 1 per
        revolute or prismatic joint."""
        return self._space().nq

    @property
    def nv(self) -> int:
        """Length of a velocity, acceleration or force vector: 6 for a floating base, 3 per
        spherical joint, 1 per revolute or prismatic joint."""
        return self._space().nv

    @property
    def dof(self) -> int:
        """Degrees of freedom, ``nv`` (equal to ``nq`` without floating base and spherical joints)."""
        return self._space().nv

    @property
    def q_labels(self) -> tuple[str, ...]:
        """A name for each entry of q: ``base_x`` ... ``base_qw``, then the joints (a spherical
        joint's four entries as ``NAME[qx]`` ... ``NAME[qw]``)."""
        return self._space().q_labels

    @property
    def v_labels(self) -> tuple[str, ...]:
        """A name for each entry of v (``base_vx`` ... ``base_wz``, ``NAME[wx]`` ...)."""
        return self._space().v_labels

    @property
    def joint_q_start(self) -> np.ndarray:
        """(nj,) index of each joint's first entry in q (-1 for fixed joints)."""
        return self._space().q_start

    @property
    def joint_v_start(self) -> np.ndarray:
        """(nj,) index of each joint's first entry in v (-1 for fixed joints)."""
        return self._space().v_start

    @property
    def lower(self) -> np.ndarray:
        """(nq,) lower limits of q; -inf for the base and for quaternion entries."""
        return self._space().lower

    @property
    def upper(self) -> np.ndarray:
        """(nq,) upper limits of q; +inf for the base and for quaternion entries."""
        return self._space().upper

    @property
    def dof_joint(self) -> np.ndarray:
        """(nq,) index (into the all-joints arrays) of the joint each q entry belongs to; -1 for
        the floating base's entries."""
        return self._space().q_joint

    def _space(self) -> "ConfigurationSpace":
        return self._cached("space", lambda: configuration_space(self))

    @property
    def link_spatial_inertia(self) -> np.ndarray:
        """(nl, 6, 6) spatial inertia of each link about its own origin, link frame."""
        return self._cached("G", lambda: _frozen(
            [spatial_inertia(m, c, I) for m, c, I in zip(self.link_mass, self.link_com, self.link_inertia)]))

    @property
    def total_mass(self) -> float:
        return float(self.link_mass.sum())

    def _cached(self, key: str, make: Any) -> Any:
        if key not in self._cache:
            self._cache[key] = make()
        return self._cache[key]

    # ------------------------------------------------------------------ name lookups
    def joint_index(self, name: str) -> int:
        """Position of movable joint ``name`` in q (a spherical joint: its first of 4 entries;
        a floating base's 7 entries come first): ``q_labels[joint_index(name)]`` names it."""
        return int(self._space().q_start[self._joint(name)])

    def velocity_index(self, name: str) -> int:
        """Position of movable joint ``name`` in v, qd, qdd and tau (a spherical joint: its
        first of 3 entries; a floating base's 6 come first): ``v_labels[velocity_index(name)]``."""
        return int(self._space().v_start[self._joint(name)])

    def _joint(self, name: str) -> int:
        """Index of movable joint ``name`` among all joints (:attr:`joint_all_names`)."""
        table = self._cached("jidx", lambda: {self.joint_all_names[j]: int(j) for j in self.movable})
        return lookup(table, name, "movable joint", self.name + _BASE_WHERE * self.floating_base)

    def link_index(self, name: str) -> int:
        """Index of link ``name`` (0 is the root; PyBullet's index is one less)."""
        table = self._cached("lidx", lambda: {n: i for i, n in enumerate(self.link_names)})
        return lookup(table, name, "link", self.name)

    # ------------------------------------------------------------------ configurations
    def neutral(self) -> np.ndarray:
        """The zero configuration, clipped into the joint limits; the base at the world origin
        and every quaternion the identity (0, 0, 0, 1). Shape (nq,)."""
        sp = self._space()
        q = np.zeros(sp.nq)
        ok = sp.scalar & (sp.lower <= sp.upper)  # PyBullet treats lower > upper as unlimited
        q[ok] = np.clip(0.0, sp.lower[ok], sp.upper[ok])
        q[sp.quat_w] = 1.0
        return q

    def random_configuration(self, rng: np.random.Generator | int | None = None,
                             n: int | None = None) -> np.ndarray:
        """Uniform samples within the limits, shape (nq,) or (n, nq).

        ``rng``: a numpy Generator, an integer seed >= 0 or None (fresh entropy); ``n``: the
        number of samples (an integer >= 0) or None for one configuration. Continuous joints
        (and joints whose lower limit is above the upper one, which PyBullet treats as
        unlimited, or beyond ``model_checks.WIDEST_LIMIT``) are drawn from [-pi, pi]; unlimited prismatic joints and the base position
        from [-1, 1] m; quaternions uniformly on the unit sphere (Shoemake's method).
        """
        rng = as_rng(rng, "rng")
        if n is not None and not is_count(n):
            raise SimbenchError(f"n = {shown(n)}; expected a number of samples, an integer >= 0, or None for one "
                                f"configuration{nearest_hint(n, whole=True)}")
        sp = self._space()
        lo, hi = sp.lower.copy(), sp.upper.copy()
        bad = ~(sampled_limits(lo) & sampled_limits(hi) & (lo <= hi))
        span = np.where(sp.angular, math.pi, 1.0)
        lo[bad], hi[bad] = -span[bad], span[bad]
        size = (sp.nq,) if n is None else (n, sp.nq)
        q = rng.uniform(lo, hi, size=size)
        for start in sp.quat_start:
            q[..., start:start + 4] = random_quaternions(rng, size[:-1])
        return q

    def check_q(self, q: Any, name: str = "q") -> np.ndarray:
        """``q`` as a float array of shape (..., nq); a clear error otherwise."""
        return as_joint_array(self, q, name)

    def with_floating_base(self, floating: bool = True) -> "RobotModel":
        """A copy whose root link is attached to the world by a free-flyer joint (``floating``)
        or welded to the world origin. q gains ``[x, y, z, qx, qy, qz, qw]`` (base position in
        the world, orientation as a unit quaternion) in front, v ``[vx, vy, vz, wx, wy, wz]``
        (the base's linear and angular velocity in the base frame), Pinocchio's convention."""
        if bool(floating) == self.floating_base:
            return self
        issues = tuple(i for i in self.issues if i.kind != "free_root") if floating else \
            self.issues + free_root_issues(self)
        gravity = self.gravity if not floating or self.root_pose is None else tuple(   # a welded root's R^T g: the
            float(x) for x in np.asarray(self.root_pose)[:3, :3] @ np.asarray(self.gravity))   # world's again
        return self.replace(floating_base=bool(floating), issues=issues, root_pose=None, gravity=gravity)

    # ------------------------------------------------------------------ modified copies
    def with_link_inertial(self, link: str, *, mass: float | None = None, com: Sequence[float] | None = None,
                           inertia: np.ndarray | None = None) -> "RobotModel":
        """A copy with one link's mass, COM (link frame) or COM inertia (link axes) changed."""
        self.link_index(link)   # an unknown name: the closest ones
        changes = {key: {link: v} for key, v in (("link_mass", mass), ("link_com", com),
                                                  ("link_inertia", inertia)) if v is not None}
        return self.replace(**changes)

    def replace(self, **changes: Any) -> "RobotModel":
        """``dataclasses.replace`` that also drops cached derived arrays; a misspelt field is named
        with the closest one. A per-joint field (``joint_damping``, the limits, ...: one value per
        joint of ``joint_all_names``) also takes one number or ``{joint name: value}`` for some; a new
        ``root_pose`` without ``gravity`` keeps the world's gravity (turned into the new root frame,
        ``R^T g``); see :mod:`simbench.model_checks`."""
        changes = checked_changes(self, changes)
        frozen = {k: (_frozen(v, np.asarray(v).dtype) if isinstance(v, np.ndarray) else v)
                  for k, v in changes.items()}
        return dataclasses.replace(self, **frozen, _cache={})

    def scaled(self, s: float) -> "RobotModel":
        """The robot as PyBullet loads it with ``globalScaling=s``. Measured on the iiwa and
        the cart-pole of pybullet_data (PyBullet 3.2.7) at s = 2: joint origins, inertial
        origins (COM) and collision geometry scale by ``s``; masses and the inertia tensors
        about the COM are *unchanged* (not ``s^2 I``: PyBullet scales the geometry, not the
        inertia); revolute limits are unchanged; prismatic limits are reported times ``s``
        while a prismatic joint still moves ``q`` metres (its travel is not scaled). So this
        scales every length of the model and the prismatic limits, and keeps masses and
        inertias. ``s`` must be finite and positive."""
        given = s
        try:
            s = float(s)
        except (TypeError, ValueError, OverflowError):
            s = math.nan
        if not (math.isfinite(s) and s > 0):
            raise SimbenchError(f"scale = {shown(given)}; expected a finite positive number (PyBullet's globalScaling)")
        if s == 1.0:
            return self
        origins, inertial = np.array(self.joint_origin), np.array(self.link_inertial_origin)
        origins[:, :3, 3] *= s
        inertial[:, :3, 3] *= s
        prismatic = np.array([t == "prismatic" for t in self.joint_type], dtype=bool)
        lower, upper = np.array(self.joint_lower), np.array(self.joint_upper)
        lower[prismatic] *= s
        upper[prismatic] *= s
        return self.replace(joint_origin=origins, link_inertial_origin=inertial,
                            link_com=np.array(self.link_com) * s, joint_lower=lower, joint_upper=upper)

    def summary(self) -> str:
        """A human-readable description: the tree, joints with limits, issues."""
        lines = [f"robot {self.name!r} from {self.source}",
                 f"  base: {'floating (free-flyer root)' if self.floating_base else 'fixed to the world'}"
                 f", nq: {self.nq}, nv: {self.nv}",
                 f"  links: {self.nlinks}, joints: {len(self.joint_all_names)}, dof: {self.dof}, "
                 f"total mass: {self.total_mass:.6g} kg"]
        lines.extend(self._tree_lines())
        split = self.nq != self.nv   # a floating base (or spherical joints): q and v indices differ
        lines.append("  movable joints (q order" + ("; q index, v index" if split else "") + "):")
        if self.floating_base:
            lines.append(f"    q {'0-6':>5s} v {'0-5':>5s}  base (free flyer): q x y z qx qy qz qw (position, "
                         f"quaternion), v vx vy vz wx wy wz (base frame)")
        for i, j in enumerate(self.movable):
            qi, vi = int(self.joint_q_start[j]), int(self.joint_v_start[j])
            nqj, nvj = (4, 3) if int(self.joint_type_code[j]) == SPHERICAL else (1, 1)
            at = (f"q {qi if nqj == 1 else f'{qi}-{qi + 3}':>5} v {vi if nvj == 1 else f'{vi}-{vi + 2}':>5}" if split
                  else f"{i:2d}")
            lines.append(f"    {at} {self.joint_all_names[j]:<28s} {self.joint_type[j]:<10s} "
                         f"lower {self.joint_lower[j]: .4g}  upper {self.joint_upper[j]: .4g}  "
                         f"effort {self.joint_effort[j]:.4g}  velocity {self.joint_velocity[j]:.4g}")
        lines.append(self._issues_line())
        lines.extend(f"    - {issue}" for issue in self.issues)
        return "\n".join(lines)

    def _issues_line(self) -> str:
        """``issues: N`` and, when some make PyBullet refuse the file, which kinds."""
        refused = sorted({i.kind for i in self.issues if i.refused_by_pybullet})
        note = f" (PyBullet cannot load this file: {', '.join(refused)})" if refused else ""
        return f"  issues: {len(self.issues) or 'none'}{note}"

    def _tree_lines(self, max_depth: int = 60) -> list[str]:
        """The kinematic tree, one line per link, depth first (no recursion: a 5,000-link
        chain is fine); deeper than ``max_depth`` the indentation stops growing."""
        children: dict[int, list[int]] = {}
        for k in range(1, self.nlinks):
            children.setdefault(int(self.link_parent[k]), []).append(k)
        lines = []
        stack = [(0, 0)]
        while stack:
            k, depth = stack.pop()
            pad = "  " * min(depth, max_depth)
            if k == 0:
                lines.append(f"  {self.link_names[0]}  (root, {self.link_mass[0]:.4g} kg)")
            else:
                j = k - 1
                t = self.joint_type[j]
                lim = (f" [{self.joint_lower[j]:.4g}, {self.joint_upper[j]:.4g}]"
                       if t in ("revolute", "prismatic") else "")
                ax = "" if t in ("fixed", "spherical") else " axis " + np.array2string(self.joint_axis[j], precision=3)
                lines.append(f"  {pad}-- {self.joint_all_names[j]} ({t}{lim}{ax}) --> "
                             f"{self.link_names[k]}  ({self.link_mass[k]:.4g} kg)")
            stack.extend((c, depth + 1) for c in reversed(children.get(k, [])))
        return lines

    def __repr__(self) -> str:
        return f"RobotModel({self.name!r}, links={self.nlinks}, dof={self.dof}, source={self.source!r})"


def load(path: str | os.PathLike, **kwargs: Any) -> RobotModel:
    """Shorthand for :meth:`RobotModel.from_urdf`."""
    return RobotModel.from_urdf(path, **kwargs)


__all__ = ["RobotModel", "ModelIssue", "Mimic", "spatial_inertia", "as_joint_array", "load",
           "FIXED", "REVOLUTE", "PRISMATIC", "SPHERICAL", "FREE", "GRAVITY"]
