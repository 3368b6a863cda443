"""Scene descriptions (TOML) and loading them into PyBullet clients.

A scene file lists bodies; the seed's scene (KUKA iiwa among cubes) is
``simbench:kuka_cubes.toml`` (package data)::

    gravity = [0, 0, -9.81]     # optional, m/s^2
    robot = "robot"             # optional: the body that joint configurations refer to

    [[body]]
    name = "robot"
    urdf = "pybullet_data:kuka_iiwa/model.urdf"   # or a path relative to this file
    position = [0, 0, 0]        # optional
    orientation = [0, 0, 0]     # optional: roll-pitch-yaw (3) or quaternion x y z w (4)
    fixed_base = true           # optional, default false
    self_collision = false      # optional: URDF_USE_SELF_COLLISION (contacts between own links)
    scale = 1.0                 # optional globalScaling
    [body.joints]               # optional initial joint positions by name
    lbr_iiwa_joint_2 = 0.5

Every load passes ``physicsClientId=`` by keyword, uses ``URDF_USE_INERTIA_FROM_FILE`` and
sets gravity (a new client has none).
"""
from __future__ import annotations

import math
import os
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import pybullet as p

from ..errors import SceneError, SimbenchError, UnknownNameError, lookup
from ..model import GRAVITY
from ..paths import PYBULLET_DATA_PREFIX, assets_dir, default_scene_path, resolve_urdf

ASSETS_DIR = assets_dir()
DEFAULT_SCENE = default_scene_path()

_BODY_KEYS = {"name", "urdf", "position", "orientation", "fixed_base", "self_collision", "scale", "joints"}
_SCENE_KEYS = {"gravity", "robot", "body"}


@dataclass(frozen=True)
class BodySpec:
    """One body of a scene. ``orientation`` is stored as a unit quaternion (x, y, z, w)."""

    name: str
    urdf: str
    path: Path
    position: tuple[float, float, float] = (0.0, 0.0, 0.0)
    orientation: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 1.0)
    fixed_base: bool = False
    self_collision: bool = False
    scale: float = 1.0
    joints: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Scene:
    """Bodies with poses, gravity, and which body is "the robot"."""

    bodies: tuple[BodySpec, ...]
    gravity: tuple[float, float, float] = GRAVITY
    robot: str | None = None
    source: str = "<scene>"

    @classmethod
    def from_toml(cls, path: str | os.PathLike) -> "Scene":
        path = Path(path)
        if not path.is_file():
            raise SceneError(f"scene file not found: {str(path)!r}")
        try:
            data = tomllib.loads(path.read_text())
        except tomllib.TOMLDecodeError as exc:
            raise SceneError(f"{path}: not valid TOML: {exc}") from None
        return cls.from_dict(data, base_dir=path.parent, source=str(path))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], base_dir: str | os.PathLike = ".",
                  source: str = "<scene>") -> "Scene":
        _check_keys(data, _SCENE_KEYS, "scene key", source)
        raw = data.get("body", [])
        if not raw:
            raise SceneError(f"{source}: the scene has no [[body]] entries")
        bodies = tuple(_body_spec(b, Path(base_dir), f"{source}: body #{i + 1}") for i, b in enumerate(raw))
        names = [b.name for b in bodies]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise SceneError(f"{source}: body names must be unique; repeated: {sorted(dup)}")
        robot = data.get("robot")
        if robot is not None:
            lookup({n: n for n in names}, robot, "body", f"{source} (key 'robot')")
        return cls(bodies, _vector(data.get("gravity", GRAVITY), 3, "gravity", source), robot, source)

    def body(self, name: str) -> BodySpec:
        return lookup({b.name: b for b in self.bodies}, name, "body", self.source)

    @property
    def body_names(self) -> tuple[str, ...]:
        return tuple(b.name for b in self.bodies)

    def load(self, client: int) -> "LoadedScene":
        """Load every body into PyBullet client ``client``; set gravity and initial joints."""
        p.setGravity(*self.gravity, physicsClientId=client)
        ids: dict[str, int] = {}
        for spec in self.bodies:
            flags = p.URDF_USE_INERTIA_FROM_FILE
            if spec.self_collision:
                flags |= p.URDF_USE_SELF_COLLISION
            try:
                body_id = p.loadURDF(str(spec.path), basePosition=spec.position,
                                     baseOrientation=spec.orientation, useFixedBase=spec.fixed_base,
                                     flags=flags, globalScaling=spec.scale, physicsClientId=client)
            except p.error as exc:
                raise SceneError(f"{self.source}: PyBullet could not load body {spec.name!r} from "
                                 f"{str(spec.path)!r}: {exc}") from None
            ids[spec.name] = body_id
        loaded = LoadedScene(self, client, ids)
        for spec in self.bodies:
            body = loaded.body(spec.name)
            for joint, value in spec.joints.items():
                p.resetJointState(ids[spec.name], body.joint_index(joint), float(value),
                                  physicsClientId=client)
        return loaded


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

    @cached_property
    def model(self):
        """Our :class:`~simbench.model.RobotModel` of this body as PyBullet simulates it: the
        URDF's model scaled like ``globalScaling`` (:meth:`~simbench.model.RobotModel.scaled`,
        the scene's ``scale``) with gravity in the base link frame, ``g_base = R^T g_world``,
        where ``R`` is the base link's world orientation and ``g_world`` the gravity set on the
        body's server (the scene's ``gravity``). Exact for a fixed base at any orientation (a
        wall mount, upside down); for a free base it holds at the pose the body had when this
        was first read."""
        from ..model import RobotModel
        from .records import dynamics_info

        if self.spec is None:
            raise SceneError(f"body {self.name!r} was not loaded from a scene, so its URDF is unknown")
        model = RobotModel.from_urdf(self.spec.path).scaled(self.spec.scale)
        # PyBullet reports the base's inertial (COM) frame; the link frame is that times the
        # inverse of the base's local inertial frame
        _, com_orn = p.getBasePositionAndOrientation(self.id, physicsClientId=self.client)
        local = dynamics_info(self.id, -1, self.client).local_inertial_orientation
        _, link_orn = p.multiplyTransforms([0, 0, 0], com_orn, [0, 0, 0],
                                           p.invertTransform([0, 0, 0], local)[1])
        R = np.array(p.getMatrixFromQuaternion(link_orn)).reshape(3, 3)
        params = p.getPhysicsEngineParameters(physicsClientId=self.client)
        g_world = np.array([params[f"gravityAcceleration{axis}"] for axis in "XYZ"])
        return model.replace(gravity=tuple(float(v) for v in R.T @ g_world))

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

    ``bodies`` is a plain ``dict`` body name -> PyBullet body id, as in the seed; ``body(name)``
    gives a :class:`LoadedBody` with link and joint lookups.
    """

    def __init__(self, scene: Scene, client: int, bodies: dict[str, int]):
        self.scene, self.client, self.bodies = scene, client, dict(bodies)
        self._loaded: dict[str, LoadedBody] = {}

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
    """A :class:`Scene` from a Scene, a TOML path, or ``None`` for the bundled default."""
    if scene is None:
        return Scene.from_toml(DEFAULT_SCENE)
    if isinstance(scene, Scene):
        return scene
    return Scene.from_toml(scene)


# ---------------------------------------------------------------------- helpers
def _check_keys(data: Mapping[str, Any], allowed: set[str], what: str, where: str) -> None:
    if not isinstance(data, Mapping):
        raise SceneError(f"{where}: expected a table, got {data!r}")
    for key in data:
        if key not in allowed:
            raise SceneError(str(UnknownNameError(what, key, allowed, where)))


def _vector(value: Any, n: int, what: str, where: str) -> tuple[float, ...]:
    try:
        vec = tuple(float(v) for v in value)
    except (TypeError, ValueError):
        vec = ()
    if len(vec) != n or not all(math.isfinite(v) for v in vec):
        raise SceneError(f"{where}: {what} = {value!r}; expected {n} finite numbers")
    return vec


def _body_spec(data: Mapping[str, Any], base_dir: Path, where: str) -> BodySpec:
    _check_keys(data, _BODY_KEYS, "body key", where)
    for key in ("name", "urdf"):
        if not isinstance(data.get(key), str) or not data.get(key):
            raise SceneError(f"{where}: missing {key!r} (a string)")
    name, urdf = data["name"], data["urdf"]
    where = f"{where.split(': body')[0]}: body {name!r}"
    try:
        path = resolve_urdf(urdf, relative_to=base_dir)
    except SimbenchError as exc:
        raise SceneError(f"{where}: {exc}") from None
    orientation = data.get("orientation", (0.0, 0.0, 0.0, 1.0))
    if isinstance(orientation, Sequence) and len(orientation) == 3:
        quat = p.getQuaternionFromEuler(_vector(orientation, 3, "orientation (rpy)", where))
    else:
        q = np.array(_vector(orientation, 4, "orientation (rpy or quaternion x y z w)", where))
        if np.linalg.norm(q) == 0:
            raise SceneError(f"{where}: orientation quaternion {orientation!r} has zero length")
        quat = tuple(q / np.linalg.norm(q))
    joints = data.get("joints", {})
    if not isinstance(joints, Mapping):
        raise SceneError(f"{where}: joints must be a table of joint name = position")
    joints = {str(k): _vector([v], 1, f"joints.{k}", where)[0] for k, v in joints.items()}
    scale = _vector([data.get("scale", 1.0)], 1, "scale", where)[0]
    return BodySpec(name=name, urdf=urdf, path=path,
                    position=_vector(data.get("position", (0, 0, 0)), 3, "position", where),
                    orientation=tuple(float(x) for x in quat), fixed_base=bool(data.get("fixed_base", False)),
                    self_collision=bool(data.get("self_collision", False)), scale=scale, joints=joints)


__all__ = ["Scene", "BodySpec", "LoadedScene", "LoadedBody", "SceneError", "load_scene",
           "DEFAULT_SCENE", "ASSETS_DIR", "PYBULLET_DATA_PREFIX"]
