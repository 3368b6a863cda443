"""What ``simbench check`` checks: each target resolved and parsed once.

A target is a URDF (a path, ``pybullet_data:NAME`` or ``simbench:NAME``), or a body of a scene
as the scene loads it: ``SCENE.toml:BODY``, or ``SCENE.toml`` for the scene's robot. A scene
body keeps its base orientation (PyBullet's fixed base is loaded rotated, and our model must
carry gravity in the base frame, ``R^T g``) and its ``scale`` (PyBullet's ``globalScaling``).
The model under test for a scene body is :attr:`LoadedBody.model <simbench.bullet.scene.LoadedBody.model>`,
the model a simulation of the scene hands its user.
"""
from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..bullet.scene import BodySpec, LoadedBody, Scene
from ..errors import SceneError, SimbenchError
from ..model import GRAVITY, RobotModel
from ..paths import PYBULLET_DATA_PREFIX, pybullet_data_dir, resolve_path, resolve_urdf
from .bullet import BulletLoad, BulletRobot, as_quaternion, captured_output
from .report import RobotResult


def target_label(target: str | os.PathLike) -> str:
    """``pybullet_data:NAME`` for a file inside pybullet_data, else the text as given."""
    text = os.fspath(target)
    try:
        return PYBULLET_DATA_PREFIX + Path(text).resolve().relative_to(pybullet_data_dir()).as_posix()
    except (ValueError, OSError):
        return text


@dataclass
class Target:
    """One robot to check: the file's model (parsed once), how PyBullet loads it, and for a
    scene body its spec (the model under test is then the scene's :class:`LoadedBody` model)."""

    label: str
    path: Path
    file_model: RobotModel
    load: BulletLoad
    body: BodySpec | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def scale(self) -> float:
        return self.load.scale

    def model_in(self, bullet: BulletRobot) -> tuple[RobotModel, list[str]]:
        """The model under test for the body ``bullet`` loaded, and notes about it. Gravity in
        the root frame is ``R^T g`` of the loaded base orientation; a scene body's model is its
        ``LoadedBody.model``, made to carry the orientation and the scale here when it does not."""
        R = self.load.base_rotation
        g_base = tuple(float(x) for x in R.T @ np.asarray(self.load.gravity, float))
        if self.body is None:
            same = np.allclose(self.file_model.gravity, g_base, rtol=0, atol=0)
            return (self.file_model if same else self.file_model.replace(gravity=g_base)), []
        notes = []
        model = LoadedBody(self.body.name, bullet.body, bullet.client, self.body).model
        if self.scale != 1.0 and np.allclose(model.joint_origin, self.file_model.joint_origin):
            model = model.scaled(self.scale)  # type: ignore[attr-defined]
            notes.append(f"LoadedBody.model ignores the scene's scale {self.scale:g}; checked "
                         f"RobotModel.scaled({self.scale:g}) instead")
        if not np.allclose(model.gravity, g_base, rtol=0, atol=1e-12):
            notes.append(f"LoadedBody.model carries gravity {[round(x, 12) + 0.0 for x in model.gravity]} in the "
                         f"base frame, not R^T g = {[round(x, 12) + 0.0 for x in g_base]} of the scene's base "
                         f"orientation; checked with R^T g")
            model = model.replace(gravity=g_base)
        return model, notes

    def unsupported(self) -> str:
        """Why this target cannot be checked yet ('' when it can)."""
        if self.scale != 1.0 and not hasattr(RobotModel, "scaled"):
            return f"scale {self.scale:g} not supported yet (RobotModel.scaled is missing)"
        return ""


def is_scene(target: str | os.PathLike) -> bool:
    text = os.fspath(target)
    head, sep, _ = text.rpartition(":")
    return text.endswith(".toml") or (bool(sep) and head.endswith(".toml"))


def _scene_robot(scene: Scene, models: dict[Path, RobotModel]) -> BodySpec:
    """The scene's robot as :attr:`LoadedScene.robot_name` picks it: its ``robot`` key, a body
    named "robot", else the first body with movable joints."""
    if scene.robot:
        return scene.body(scene.robot)
    if "robot" in scene.body_names:
        return scene.body("robot")
    for spec in scene.bodies:
        if _model(spec.path, models).dof:
            return spec
    raise SceneError(f"{scene.source}: no body has movable joints, so there is no robot to check")


def _model(path: Path, cache: dict[Path, RobotModel]) -> RobotModel:
    if path not in cache:
        with captured_output():
            cache[path] = RobotModel.from_urdf(path)
    return cache[path]


def resolve_target(target: str | os.PathLike, *, base_orientation: Sequence[float] | None = None,
                   inertia_from_file: bool = True, gravity: Sequence[float] = GRAVITY,
                   model: RobotModel | None = None) -> Target:
    """A :class:`Target` from a URDF or scene name; :class:`SimbenchError` when it cannot be
    found or read. ``base_orientation`` (roll pitch yaw or quaternion) applies to URDF targets."""
    text = os.fspath(target)
    cache: dict[Path, RobotModel] = {}
    if is_scene(text):
        if base_orientation is not None:
            raise SimbenchError(f"{text}: --base-orientation applies to URDF targets; a scene target takes "
                                f"its body's orientation from the scene")
        head, sep, name = text.rpartition(":")
        scene_path, body = (head, name) if sep and head.endswith(".toml") else (text, "")
        scene = Scene.from_toml(resolve_path(scene_path, what="scene file"))
        spec = scene.body(body) if body else _scene_robot(scene, cache)
        file_model = _model(spec.path, cache)
        load = BulletLoad(spec.path, tuple(spec.orientation), float(spec.scale), True,
                          tuple(float(x) for x in scene.gravity))
        out = Target(text if body else f"{text}:{spec.name}", spec.path, file_model, load, body=spec)
        if not spec.fixed_base:
            out.notes.append(f"body {spec.name!r} is floating in the scene (fixed_base = false); checked with "
                             f"its base fixed at the scene's orientation")
        return out
    path = resolve_urdf(text)
    file_model = model if model is not None else _model(path, cache)
    load = BulletLoad(path, as_quaternion(base_orientation), 1.0, inertia_from_file,
                      tuple(float(x) for x in gravity))
    return Target(target_label(text), path, file_model, load)


def corpus_targets(name: str = "pybullet_data") -> tuple[list[Target], list[RobotResult]]:
    """Every distinct URDF file (by content) in the corpus that has movable joints, parsed once,
    and SKIPPED results for those simbench cannot read (with the reason)."""
    if name != "pybullet_data":
        raise SimbenchError(f"unknown corpus {name!r}; expected 'pybullet_data'")
    root = pybullet_data_dir()
    seen: set[str] = set()
    targets: list[Target] = []
    skipped: list[RobotResult] = []
    for f in sorted(root.rglob("*.urdf")):
        digest = hashlib.sha1(f.read_bytes()).hexdigest()
        if digest in seen:
            continue
        seen.add(digest)
        label = PYBULLET_DATA_PREFIX + f.relative_to(root).as_posix()
        try:
            with captured_output():
                model = RobotModel.from_urdf(f)
        except SimbenchError as exc:
            skipped.append(RobotResult(label, path=str(f), reason=f"simbench cannot read the URDF: {exc}"))
            continue
        if model.dof:
            targets.append(Target(label, f.resolve(), model, BulletLoad(f.resolve())))
    return targets, skipped


__all__ = ["Target", "resolve_target", "corpus_targets", "target_label", "is_scene"]
