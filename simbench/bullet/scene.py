"""Scene descriptions (TOML) and loading them into PyBullet clients.

A scene file lists bodies; the bundled scene of Adam Heins's "shortest distances with
PyBullet" (a KUKA iiwa among cubes) is ``simbench:kuka_cubes.toml`` (package data)::

    gravity = [0, 0, -9.81]     # optional, m/s^2
    robot = "robot"             # optional: the body that joint configurations refer to

    [[body]]
    name = "robot"
    urdf = "pybullet_data:kuka_iiwa/model.urdf"   # or a path relative to this file
    position = [0, 0, 0]        # optional
    orientation = [0, 0, 0]     # optional: roll-pitch-yaw (3) or quaternion x y z w (4)
    fixed_base = true           # optional, default false
    self_collision = false      # optional: URDF_USE_SELF_COLLISION (contacts between own links)
    scale = 1.0                 # optional globalScaling, > 0
    [body.joints]               # optional initial joint positions by name
    lbr_iiwa_joint_2 = 0.5

Every key is checked against the schema of :mod:`simbench.bullet.scene_schema` (types, ranges,
vector lengths; an unknown key gets the closest valid key suggested). URDF files are read through
:func:`simbench.urdf_source.load_source` (``package://`` meshes, xacro), so a body PyBullet would
refuse fails at once, in one line naming the file and element. Every load passes
``physicsClientId=`` by keyword, uses ``URDF_USE_INERTIA_FROM_FILE`` and sets gravity (a new
client has none).
"""
from __future__ import annotations

import dataclasses
import logging
import os
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pybullet as p

from .._quiet import filtered_stdout
from ..errors import SceneError, SimbenchError, beyond_a_turn, lookup, quaternion_of_angles, shown, shown_path
from ..model import GRAVITY
from ..packages import PackageMap, parse_package_map
from ..paths import PYBULLET_DATA_PREFIX, assets_dir, default_scene_path, resolve_path, resolve_urdf
from . import scene_schema as schema
from .free_base import LOAD_WARNINGS, warn_free_arm, warn_welded_floating_joint
from .inertials import InertialDefaults, inertial_defaults
from .mesh_units import warn_mesh_units
from .records import dynamics_info

logger = logging.getLogger(__name__)

ASSETS_DIR = assets_dir()
DEFAULT_SCENE = default_scene_path()


@dataclass(frozen=True)
class BodySpec:
    """One body of a scene. ``orientation`` is stored as a unit quaternion (x, y, z, w).

    ``path`` is the URDF (or xacro) file; :meth:`pybullet_path` is what PyBullet loads (the
    file itself, or a resolved copy with ``package://`` meshes and xacro expanded).
    ``collision_group`` / ``collision_mask``: PyBullet's collision filter bits (``None``:
    PyBullet's default).
    """

    name: str
    urdf: str
    path: Path
    position: tuple[float, float, float] = (0.0, 0.0, 0.0)
    orientation: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 1.0)
    fixed_base: bool = False
    self_collision: bool = False
    scale: float = 1.0
    joints: Mapping[str, float] = field(default_factory=dict)
    collision_group: int | None = None
    collision_mask: int | None = None
    xacro_args: Mapping[str, str] | None = None
    package_map: Mapping[str, Path] = field(default_factory=dict)
    load_path: Path | None = field(default=None, compare=False)
    #: False when the scene left ``fixed_base`` out (the default, free, was taken)
    fixed_base_given: bool = field(default=True, compare=False)
    #: the links whose inertials PyBullet replaces (read from the file; see :mod:`.inertials`)
    inertials: InertialDefaults | None = field(default=None, compare=False)

    def source(self):
        """The body's file as :func:`simbench.urdf_source.load_source` reads it."""
        from ..urdf_source import load_source

        return load_source(self.path, package_map=self.package_map or None, xacro_args=self.xacro_args)

    def pybullet_path(self) -> Path:
        """The file to give ``pybullet.loadURDF``; a :class:`SceneError` naming the body, the
        file and the element if PyBullet would refuse it."""
        if self.load_path is not None:
            return self.load_path
        try:
            return self.source().pybullet_path()
        except SimbenchError as exc:
            raise SceneError(f"body {self.name!r}: {exc}") from None

    def robot_model(self):
        """Our :class:`~simbench.model.RobotModel` of the body's file (xacro arguments and
        package map applied); base pose and scale are not applied here."""
        from ..model import RobotModel

        return RobotModel.from_source(self.source())

    def pybullet_inertials(self) -> InertialDefaults:
        """The links of this body whose inertials PyBullet replaces, of those that move (a fixed
        base's root never does)."""
        found = self.inertials if self.inertials is not None else inertial_defaults(self.source().root)
        return found.moving(not self.fixed_base)

    def warn_free_arm(self, body: int, client: int, gravity: Sequence[float]) -> None:
        """Log, once per spec, that its floating joint from a massless root became fixed in PyBullet
        or that an arm left free falls (:mod:`simbench.bullet.free_base`)."""
        if not self.__dict__.get("_warned_free"):
            object.__setattr__(self, "_warned_free", True)
            if not warn_welded_floating_joint(self, body, client):
                warn_free_arm(self, body, client, gravity)

    def warn_inertials(self) -> None:
        """Log, once per spec, the one line saying which inertials PyBullet replaces."""
        if self.__dict__.get("_warned"):
            return
        object.__setattr__(self, "_warned", True)
        line = self.pybullet_inertials().warning(self.name, self.urdf)
        if line:
            logger.warning("%s", line)


@dataclass(frozen=True)
class Scene:
    """Bodies with poses, gravity, and which body is "the robot"."""

    bodies: tuple[BodySpec, ...]
    gravity: tuple[float, float, float] = GRAVITY
    robot: str | None = None
    source: str = "<scene>"

    @classmethod
    def from_toml(cls, path: str | os.PathLike, *, package_map: PackageMap | None = None) -> "Scene":
        """Read a scene file (a path or ``simbench:NAME``); see the module docstring."""
        try:   # "scene file not found: 'scen.toml'; did you mean 'scene.toml'?"
            found = resolve_path(path, what="scene file")
            text = os.fspath(path)
        except SimbenchError as exc:
            raise SceneError(str(exc)) from None
        path = found if text.startswith(("simbench:", PYBULLET_DATA_PREFIX)) else Path(text).expanduser()  # as given
        try:
            data = tomllib.loads(path.read_text())
        except tomllib.TOMLDecodeError as exc:
            raise SceneError(f"{path}: not valid TOML: {exc}{schema.toml_hint(path, exc)}") from None
        except UnicodeDecodeError as exc:   # TOML is UTF-8; Windows editors may save UTF-16
            raise SceneError(f"{path}: not UTF-8 text (byte {exc.object[exc.start]:#04x} at {exc.start}); expected a "
                             f"TOML file saved as UTF-8") from None
        except OSError as exc:
            raise SceneError(f"{path}: cannot read the scene file: {exc}") from None
        return cls.from_dict(data, base_dir=path.parent, source=str(path), package_map=package_map)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], base_dir: str | os.PathLike = ".",
                  source: str = "<scene>", *, package_map: PackageMap | None = None) -> "Scene":
        """A scene from a mapping with the keys of a scene file (paths relative to ``base_dir``).
        ``package_map`` adds to (and overrides) the scene's own ``package_map`` key."""
        schema.check_keys(data, schema.SCENE_KEYS, source, "scene")
        packages = _package_map(data, Path(base_dir), source)
        packages.update(parse_package_map(package_map))
        raw = schema.value(data, schema.SCENE_KEYS["body"], source)
        bodies = tuple(_body_spec(b, Path(base_dir), f"{source}: {_body_label(b, i)}", packages)
                       for i, b in enumerate(raw))
        names = [b.name for b in bodies]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise SceneError(f"{source}: body names must be unique; repeated: {sorted(dup)}")
        robot = schema.value(data, schema.SCENE_KEYS["robot"], source)
        if robot is not None:
            lookup({n: n for n in names}, robot, "body", f"{source} (key 'robot')")
        gravity = schema.value(data, schema.SCENE_KEYS["gravity"], source, GRAVITY)
        return cls(bodies, tuple(gravity), robot, source)

    def body(self, name: str) -> BodySpec:
        return lookup({b.name: b for b in self.bodies}, name, "body", self.source)

    @property
    def body_names(self) -> tuple[str, ...]:
        return tuple(b.name for b in self.bodies)

    def load(self, client: int, *, quiet: bool = False) -> "LoadedScene":
        """Load every body into PyBullet client ``client``; set gravity and initial joints.
        ``quiet``: without the line on inertials PyBullet replaces (a load for collision
        queries and sweeps, where masses play no part, or a worker's copy)."""
        p.setGravity(*self.gravity, physicsClientId=client)
        ids: dict[str, int] = {}
        for spec in self.bodies:
            flags = p.URDF_USE_INERTIA_FROM_FILE
            if spec.self_collision:
                flags |= p.URDF_USE_SELF_COLLISION
            path = spec.pybullet_path()
            try:   # PyBullet's warnings about inertials: said once per body in our words
                with filtered_stdout(LOAD_WARNINGS):
                    body_id = p.loadURDF(str(path), basePosition=spec.position,
                                         baseOrientation=spec.orientation, useFixedBase=spec.fixed_base,
                                         flags=flags, globalScaling=spec.scale, physicsClientId=client)
            except p.error as exc:
                raise SceneError(f"{self.source}: PyBullet could not load body {spec.name!r} from "
                                 f"{shown_path(str(path))}: {exc}") from None
            ids[spec.name] = body_id
            if not quiet:
                spec.warn_inertials()
                warn_mesh_units(spec, body_id, client)
        loaded = LoadedScene(self, client, ids)
        for spec in self.bodies:
            body = loaded.body(spec.name)
            for joint, value in spec.joints.items():
                index = lookup(body.joints, joint, "joint", f"{self.source}: body {spec.name!r}")
                p.resetJointState(ids[spec.name], index, float(value), physicsClientId=client)
            if spec.collision_group is not None or spec.collision_mask is not None:
                for link in body.links.values():
                    p.setCollisionFilterGroupMask(ids[spec.name], link, *spec_filter(spec, ids[spec.name], link, client),
                                                  physicsClientId=client)
        return loaded


#: PyBullet's default collision filter (group, mask) of a link with mass and of a massless one
#: (a fixed base: mass 0): btBroadphaseProxy's DefaultFilter / StaticFilter, AllFilter
DEFAULT_DYNAMIC = (1, -1)
DEFAULT_STATIC = (2, -1 ^ 2)


def spec_filter(spec: BodySpec, body: int, link: int, client: int) -> tuple[int, int]:
    """The collision filter (group, mask) that the scene keys ``collision_group`` /
    ``collision_mask`` give link ``link`` of a loaded body; a key left out keeps PyBullet's
    default for the link (by its mass, :data:`DEFAULT_DYNAMIC` / :data:`DEFAULT_STATIC`)."""
    mass = dynamics_info(body, link, client).mass
    group, mask = DEFAULT_DYNAMIC if mass > 0 else DEFAULT_STATIC
    return (group if spec.collision_group is None else int(spec.collision_group),
            mask if spec.collision_mask is None else int(spec.collision_mask))


class LoadedBody:
    """A body in one client, with name lookups for its links and joints."""

    def __init__(self, name: str, body_id: int, client: int, spec: BodySpec | None = None):
        self.name, self.id, self.client, self.spec = name, body_id, client, spec
        info = [p.getJointInfo(body_id, j, physicsClientId=client)
                for j in range(p.getNumJoints(body_id, physicsClientId=client))]
        base = p.getBodyInfo(body_id, physicsClientId=client)[0].decode()
        #: link name -> PyBullet link index (-1 for the base link)
        self.links: dict[str, int] = {base: -1}
        #: joint name -> PyBullet joint index (every joint, fixed ones too)
        self.joints: dict[str, int] = {}
        movable = []
        for j, row in enumerate(info):
            self.links[row[12].decode()] = j
            self.joints[row[1].decode()] = j
            if row[2] != p.JOINT_FIXED:
                movable.append(j)
        self.base_link = base
        #: PyBullet indices of the movable joints, in file (= RobotModel) order
        self.movable_indices: tuple[int, ...] = tuple(movable)
        self.movable_names: tuple[str, ...] = tuple(info[j][1].decode() for j in movable)

    @property
    def link_names(self) -> tuple[str, ...]:
        return tuple(self.links)

    def link_index(self, link: str | None) -> int:
        """PyBullet link index of ``link`` (``None`` or the base link's name: -1)."""
        if link is None:
            return -1
        return lookup(self.links, link, "link", f"body {self.name!r}")

    def joint_index(self, joint: str) -> int:
        return lookup(self.joints, joint, "joint", f"body {self.name!r}")

    @property
    def fixed_base(self) -> bool:
        """Whether PyBullet holds this body's base still: the scene welds it (``fixed_base =
        true``), or its base has no mass (PyBullet keeps a massless base static, as it loaded);
        a body loaded without a scene spec counts as fixed."""
        if self.spec is None or self.spec.fixed_base:
            return True
        if "_massless" not in self.__dict__:
            self.__dict__["_massless"] = dynamics_info(self.id, -1, self.client).mass == 0.0
        return self.__dict__["_massless"]

    @property
    def model(self):
        """Our :class:`~simbench.model.RobotModel` of this body as PyBullet simulates it
        (:meth:`posed_model`), built once and again when a fixed base has been moved."""
        pose = p.getBasePositionAndOrientation(self.id, physicsClientId=self.client) if self.fixed_base else None
        kept = self.__dict__.get("_model")
        if kept is None or kept[0] != pose:
            self.__dict__["_model"] = kept = (pose, self.posed_model())
        return kept[1]

    def posed_model(self, pybullet_inertials: bool = True):
        """Our :class:`~simbench.model.RobotModel` of this body as PyBullet simulates it: the
        file's model as the scene loads it (:meth:`BodySpec.robot_model`: xacro arguments and
        package map applied) with the inertials PyBullet puts in place of the file's (a link
        without ``<inertial>``: 1 kg, unit inertia; principal moments breaking the triangle
        inequality: zero rotational inertia; :mod:`simbench.bullet.inertials`), scaled like
        ``globalScaling`` (:meth:`~simbench.model.RobotModel.scaled`, the scene's ``scale``).

        * ``fixed_base = true``: the root welded at the base link's world pose ``(R, p)``
          (``root_pose``: link poses, Jacobians and ``f_ext`` in the world) and gravity in the
          base link frame, ``g_base = R^T g_world``, with ``g_world`` the gravity set on the
          body's server (the scene's ``gravity``): exact at any mount (a wall, upside down).
        * ``fixed_base = false``: a floating base (free-flyer root, ``nq = 7 + n``,
          ``nv = 6 + n``) with the world's gravity; the base pose and twist are part of q and v
          (:meth:`simbench.sim.Robot.model_state`).

        ``pybullet_inertials=False``: the file's own inertials, posed and scaled the same (what
        ``simbench check`` tests a scene body against, explaining PyBullet's substitutions as
        it does for a URDF)."""
        if self.spec is None:
            raise SceneError(f"body {self.name!r} was not loaded from a scene, so its URDF is unknown")
        model = self.spec.robot_model()
        if pybullet_inertials:
            model = self.spec.pybullet_inertials().apply(model)
        model = model.scaled(self.spec.scale)
        params = p.getPhysicsEngineParameters(physicsClientId=self.client)
        g_world = np.array([params[f"gravityAcceleration{axis}"] for axis in "XYZ"])
        if not self.fixed_base:
            return model.with_floating_base().replace(gravity=tuple(float(v) for v in g_world))
        # PyBullet reports the base's inertial (COM) frame; the link frame is that times the inverse of the
        # base's local inertial frame (in numpy: PyBullet's multiplyTransforms and getMatrixFromQuaternion
        # round to float32, which tilted gravity by 3e-8 and let a rotated root inertial drift 7e-7 rad in 1 s)
        from ..spatial import quat_to_matrix

        com_pos, com_orn = p.getBasePositionAndOrientation(self.id, physicsClientId=self.client)
        info = dynamics_info(self.id, -1, self.client)
        R = quat_to_matrix(np.array(com_orn)) @ quat_to_matrix(np.array(info.local_inertial_orientation)).T
        T = np.eye(4)
        T[:3, :3], T[:3, 3] = R, np.array(com_pos) - R @ np.array(info.local_inertial_position)
        T = T if model.root_pose is None else T @ np.asarray(model.root_pose)   # a file's weld (world link), after it
        return model.replace(gravity=tuple(float(v) for v in T[:3, :3].T @ g_world), root_pose=T)

    def joint_positions(self) -> np.ndarray:
        """Current positions of the movable joints (file order)."""
        states = p.getJointStates(self.id, self.movable_indices, physicsClientId=self.client)
        return np.array([s[0] for s in states])

    def joint_velocities(self) -> np.ndarray:
        states = p.getJointStates(self.id, self.movable_indices, physicsClientId=self.client)
        return np.array([s[1] for s in states])

    def __repr__(self) -> str:
        return f"LoadedBody({self.name!r}, id={self.id}, client={self.client}, dof={len(self.movable_indices)})"


class LoadedScene:
    """A scene loaded into one PyBullet client.

    ``bodies`` is a plain ``dict`` body name -> PyBullet body id (as in Adam Heins's post); ``body(name)``
    gives a :class:`LoadedBody` with link and joint lookups.
    """

    def __init__(self, scene: Scene, client: int, bodies: dict[str, int]):
        self.scene, self.client, self.bodies = scene, client, dict(bodies)
        self._loaded: dict[str, LoadedBody] = {}

    def warn_free_arms(self) -> None:
        """:meth:`BodySpec.warn_free_arm` for every body (a simulation's first step: from there on
        a free arm falls; collision queries and sweeps do not step)."""
        for spec in self.scene.bodies:
            spec.warn_free_arm(self.bodies[spec.name], self.client, self.scene.gravity)

    def body(self, name: str) -> LoadedBody:
        if name not in self._loaded:
            body_id = lookup(self.bodies, name, "body", self.scene.source)
            self._loaded[name] = LoadedBody(name, body_id, self.client, self.scene.body(name))
        return self._loaded[name]

    @property
    def robot_name(self) -> str:
        """The scene's robot: its ``robot`` key, else a body named "robot", else the first body
        with movable joints."""
        if self.scene.robot:
            return self.scene.robot
        if "robot" in self.bodies:
            return "robot"
        for name in self.bodies:
            if self.body(name).movable_indices:
                return name
        raise SceneError(f"{self.scene.source}: no body has movable joints, so there is no robot")

    @property
    def robot(self) -> LoadedBody:
        return self.body(self.robot_name)

    def link(self, body: str, link: str | None = None) -> tuple[int, int]:
        """(body id, link index) of a named link."""
        b = self.body(body)
        return b.id, b.link_index(link)

    def __repr__(self) -> str:
        return f"LoadedScene(client={self.client}, bodies={self.bodies})"


def load_scene(scene: "Scene | str | os.PathLike | None") -> Scene:
    """A :class:`Scene` from a Scene, a TOML path, a URDF (one body named "robot", its base fixed,
    as ``simbench run --scene ROBOT.urdf``), or ``None`` for the bundled default."""
    if scene is None:
        return Scene.from_toml(DEFAULT_SCENE)
    if isinstance(scene, Scene):
        return scene
    if not isinstance(scene, (str, os.PathLike)):
        raise SceneError(f"scene = {shown(scene)}; expected a scene file (a TOML path or simbench:NAME), a Scene, a "
                         "dict of the scene file's form (Simulation) or None (the bundled scene)")
    if os.fspath(scene).lower().endswith((".urdf", ".xacro")):   # a robot alone, as simbench run --scene takes it
        return Scene.from_dict({"body": [{"name": "robot", "urdf": os.fspath(scene), "fixed_base": True}]},
                               base_dir=Path.cwd(), source=os.fspath(scene))
    return Scene.from_toml(scene)


# ---------------------------------------------------------------------- helpers
def _package_map(data: Mapping[str, Any], base_dir: Path, where: str) -> dict[str, Path]:
    raw = schema.value(data, schema.SCENE_KEYS["package_map"], where, {})
    try:
        return parse_package_map(raw, relative_to=base_dir)
    except SimbenchError as exc:
        raise SceneError(f"{where}: package_map: {exc}") from None


def _body_label(data: Any, i: int) -> str:
    """``body 'arm'`` when the entry names itself, else ``body #2`` (its place in the list)."""
    name = data.get("name") if isinstance(data, Mapping) else None
    return f"body {name!r}" if isinstance(name, str) and name else f"body #{i + 1}"


def _quaternion(orientation: tuple[float, ...], where: str) -> tuple[float, float, float, float]:
    """A unit quaternion (x, y, z, w) from roll-pitch-yaw (3) or a quaternion (4)."""
    if len(orientation) == 3:
        degrees = beyond_a_turn(orientation)
        if degrees:   # refused rather than read as radians
            given = ", ".join(f"{x:g}" for x in orientation)
            raise SceneError(f"{where}: orientation = [{given}]: {degrees}")
        return tuple(float(x) for x in p.getQuaternionFromEuler(orientation))
    q = np.array(orientation)
    norm = float(np.linalg.norm(q))
    if np.abs(q).max() > 2 * np.pi:   # not a quaternion scaled by mistake: angles, in degrees
        given = ", ".join(f"{x:g}" for x in orientation)
        raise SceneError(f"{where}: orientation = [{given}]: {quaternion_of_angles(q)}")
    if norm == 0:
        raise SceneError(f"{where}: orientation = {list(orientation)}; expected a non-zero "
                         f"quaternion x y z w (or roll pitch yaw)")
    return tuple(float(x) for x in q / norm)


def _body_spec(data: Mapping[str, Any], base_dir: Path, where: str,
               package_map: Mapping[str, Path]) -> BodySpec:
    keys = schema.BODY_KEYS
    schema.check_keys(data, keys, where, "body")
    name = schema.value(data, keys["name"], where)
    if "/" in name or ":" in name:   # "body/link" and SCENE.toml:BODY would misread it (an empty name is
        fix = name.replace("/", "_").replace(":", "_")   # refused by the schema)
        raise SceneError(f"{where.split(': body')[0]}: body name {name!r}; expected a non-empty name without '/' or ':' (they separate "
                         f"body/link and SCENE.toml:BODY), e.g. {fix!r}")
    where = f"{where.split(': body')[0]}: body {name!r}"
    urdf = schema.value(data, keys["urdf"], where)
    xacro_args = schema.value(data, keys["xacro_args"], where)
    try:
        path = resolve_urdf(urdf, relative_to=base_dir)
    except SimbenchError as exc:
        raise SceneError(f"{where}: {exc}") from None
    spec = BodySpec(
        name=name, urdf=urdf, path=path,
        position=schema.value(data, keys["position"], where, (0.0, 0.0, 0.0)),
        orientation=_quaternion(schema.value(data, keys["orientation"], where, (0.0, 0.0, 0.0, 1.0)), where),
        fixed_base=schema.value(data, keys["fixed_base"], where, False),
        fixed_base_given="fixed_base" in data,
        self_collision=schema.value(data, keys["self_collision"], where, False),
        scale=schema.value(data, keys["scale"], where, 1.0),
        joints=schema.value(data, keys["joints"], where, {}),
        collision_group=schema.value(data, keys["collision_group"], where),
        collision_mask=schema.value(data, keys["collision_mask"], where),
        xacro_args={k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in xacro_args.items()}
        if xacro_args is not None else None,
        package_map=dict(package_map))
    try:  # PyBullet would refuse it: say so now, naming the body, file and element
        src = spec.source()
        load_path = src.pybullet_path()
    except SimbenchError as exc:
        raise SceneError(f"{where}: {exc}") from None
    # joint names and values checked before any server opens: a bad scene is one line
    schema.check_joint_values(src.root, spec.joints, spec.scale, where)
    return dataclasses.replace(spec, load_path=load_path, inertials=inertial_defaults(src.root))


__all__ = ["Scene", "BodySpec", "LoadedScene", "LoadedBody", "SceneError", "load_scene", "spec_filter",
           "DEFAULT_SCENE", "ASSETS_DIR", "PYBULLET_DATA_PREFIX"]
