"""What ``simbench check`` checks: each target resolved and parsed once.

A target is a URDF (a path, ``pybullet_data:NAME`` or ``simbench:NAME``), or a body of a scene
as the scene loads it: ``SCENE.toml:BODY``, or ``SCENE.toml`` for the scene's robot. A scene
body keeps its base orientation (PyBullet's fixed base is loaded rotated, and our model must
carry gravity in the base frame, ``R^T g``) and its ``scale`` (PyBullet's ``globalScaling``).
The model under test for a scene body is the one a simulation of the scene hands its user
(:meth:`LoadedBody.posed_model <simbench.bullet.scene.LoadedBody.posed_model>`) with the file's
own inertials: PyBullet's substitutions (a link without ``<inertial>``, a triangle-breaking
inertia) are then explained as they are for the URDF alone.
"""
from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..bullet.scene import BodySpec, LoadedBody, Scene
from ..errors import SceneError, SimbenchError, URDFError, shown, shown_path
from ..model import GRAVITY, RobotModel
from ..paths import PYBULLET_DATA_PREFIX, pybullet_data_dir, resolve_path, resolve_urdf
from ..urdf_source import UrdfSource, load_source
from .bullet import BulletLoad, BulletRobot, as_quaternion, captured_output
from .report import RobotResult

logger = logging.getLogger(__name__)

#: why ``--base-orientation`` with ``--floating`` is refused (a usage error whatever the targets)
FLOATING_ORIENTATION = ("--base-orientation applies to fixed bases; with --floating the base orientation is part "
                        "of every sampled q")


def target_label(target: str | os.PathLike) -> str:
    """``pybullet_data:NAME`` for a file inside pybullet_data, else the text as given."""
    text = os.fspath(target)
    try:
        return PYBULLET_DATA_PREFIX + Path(text).resolve().relative_to(pybullet_data_dir()).as_posix()
    except (ValueError, OSError):
        return text


@dataclass
class Target:
    """One robot to check: the file as loaded (:class:`~simbench.urdf_source.UrdfSource`), its
    model (parsed once), how PyBullet loads it, and for a scene body its spec (the model under
    test is then the scene's :meth:`LoadedBody.posed_model <simbench.bullet.scene.LoadedBody.posed_model>`
    with the file's inertials).
    ``refused``: why the file cannot be loaded (a ``URDFError``'s one line; the target is then
    SKIPPED with it)."""

    label: str
    path: Path
    file_model: RobotModel | None
    load: BulletLoad | None
    body: BodySpec | None = None
    notes: list[str] = field(default_factory=list)
    source: UrdfSource | None = None
    refused: str = ""

    @property
    def xml(self) -> bytes | None:
        """The file's text as loaded (xacro expanded), for Pinocchio's parser."""
        return self.source.xml if self.source is not None else None

    @property
    def scale(self) -> float:
        return self.load.scale if self.load is not None else 1.0

    def model_in(self, bullet: BulletRobot) -> tuple[RobotModel, list[str]]:
        """The model under test for the body ``bullet`` loaded, and notes about it: for a URDF
        target the file's model with gravity ``R^T g`` of the loaded base orientation, for a
        scene body :meth:`LoadedBody.posed_model <simbench.bullet.scene.LoadedBody.posed_model>`
        (orientation and scale included) with the file's own inertials."""
        assert self.file_model is not None and self.load is not None
        if self.body is not None:
            body = LoadedBody(self.body.name, bullet.body, bullet.client, self.body)
            return body.posed_model(pybullet_inertials=False), []
        R = self.load.base_rotation
        g_base = tuple(float(x) for x in R.T @ np.asarray(self.load.gravity, float))
        same = np.allclose(self.file_model.gravity, g_base, rtol=0, atol=0)
        return (self.file_model if same else self.file_model.replace(gravity=g_base)), []


def is_scene(target: str | os.PathLike) -> bool:
    text = os.fspath(target)
    head, sep, _ = text.rpartition(":")
    return text.endswith(".toml") or (bool(sep) and head.endswith(".toml"))


def _scene_robot(scene: Scene) -> BodySpec:
    """The scene's robot as :attr:`LoadedScene.robot_name` picks it: its ``robot`` key, a body
    named "robot", else the first body with movable joints."""
    if scene.robot:
        return scene.body(scene.robot)
    if "robot" in scene.body_names:
        return scene.body("robot")
    for spec in scene.bodies:
        with captured_output():
            if spec.robot_model().dof:
                return spec
    raise SceneError(f"{scene.source}: no body has movable joints, so there is no robot to check")


def _loaded(read: Callable[[], UrdfSource]) -> tuple[UrdfSource | None, RobotModel | None, Path | None, str]:
    """``(source, model, path for PyBullet, "")`` of a file, or ``(..., reason)`` when it cannot
    be loaded (a :class:`~simbench.errors.URDFError`: malformed, or PyBullet would refuse it)."""
    src = model = None
    try:
        with captured_output():
            src = read()
            model = RobotModel.from_source(src)
        return src, model, src.pybullet_path(), ""
    except URDFError as exc:
        return src, model, None, " ".join(str(exc).split())


def resolve_target(target: str | os.PathLike, *, base_orientation: Sequence[float] | None = None,
                   inertia_from_file: bool = True, gravity: Sequence[float] = GRAVITY,
                   model: RobotModel | None = None, floating: bool = False) -> Target:
    """A :class:`Target` from a URDF or scene name; :class:`SimbenchError` when it cannot be
    found. A file that cannot be loaded (``URDFError``: malformed, a missing mesh, a construct
    PyBullet refuses) gives a target with ``refused`` set. ``base_orientation`` (roll pitch yaw
    or quaternion) applies to URDF targets. Files are read with
    :func:`~simbench.urdf_source.load_source` (``package://`` meshes, xacro; the command line's
    ``--package`` and ``--xacro-arg``). ``floating``: a URDF target gets a free-flyer root
    (``RobotModel.with_floating_base``; PyBullet loads it with a free base); a scene body follows
    its ``fixed_base``."""
    text = os.fspath(target)
    head = text.rpartition(":")[0]
    if head.lower().endswith((".yaml", ".yml", ".json")):   # SCENE:BODY with a scene in another format
        raise SimbenchError(f"{text}: scene files are TOML ([[body]] tables, see docs/scenes.md), not "
                            f"{head.rsplit('.', 1)[1].upper()}; expected SCENE.toml:BODY")
    if is_scene(text):
        if base_orientation is not None:
            raise SimbenchError(f"{text}: --base-orientation applies to URDF targets; a scene target takes "
                                f"its body's orientation from the scene")
        head, sep, name = text.rpartition(":")
        scene_path, body = (head, name) if sep and head.endswith(".toml") else (text, "")
        scene = Scene.from_toml(resolve_path(scene_path, what="scene file"))
        spec = scene.body(body) if body else _scene_robot(scene)
        label = text if body else f"{text}:{spec.name}"
        src, file_model, path, refused = _loaded(spec.source)
        load = None if path is None else BulletLoad(path, tuple(spec.orientation), float(spec.scale), True,
                                                    tuple(float(x) for x in scene.gravity), bool(spec.fixed_base))
        out = Target(label, spec.path, file_model, load, body=spec, source=src, refused=refused)
        if floating and spec.fixed_base:   # one line: --floating is not applied to this body
            logger.warning("--floating (floating=True) does not apply to scene body %r (%s): a scene body follows its "
                           "fixed_base, and %s sets fixed_base = true; it is checked welded (fixed_base = false "
                           "checks it floating)", spec.name, label, shown_path(scene_path))
        if not spec.fixed_base:
            out.notes.append(f"body {spec.name!r} is floating in the scene (fixed_base = false): checked with "
                             f"a floating base (q = base pose + joints)")
        return out
    if floating and base_orientation is not None:
        raise SimbenchError(f"{text}: {FLOATING_ORIENTATION}")
    path = resolve_urdf(text)
    src, file_model, pb_path, refused = _loaded(lambda: load_source(path))
    if model is not None:
        file_model = model
    floating = floating or bool(file_model is not None and file_model.floating_base)
    if floating and file_model is not None:
        file_model = file_model.with_floating_base()
    load = None if pb_path is None else BulletLoad(pb_path, as_quaternion(base_orientation), 1.0,
                                                   inertia_from_file, tuple(float(x) for x in gravity),
                                                   fixed_base=not floating)
    return Target(target_label(text), path, file_model, load, source=src, refused=refused)


def corpus_targets(name: str = "pybullet_data", floating: bool = False) -> tuple[list[Target], list[RobotResult]]:
    """Every distinct URDF file (by content) in the corpus that has movable joints, parsed once,
    and SKIPPED results for those that cannot be loaded (with the reason); ``floating``: each
    with a free-flyer root."""
    if name != "pybullet_data":
        raise SimbenchError(f"unknown corpus {shown(name)}; expected 'pybullet_data'")
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
        src, model, pb_path, refused = _loaded(lambda f=f: load_source(f))
        if model is not None and model.dof == 0:
            continue  # not a robot (a static object)
        if refused:
            skipped.append(RobotResult(label, path=str(f), reason=refused))
        elif model is not None and pb_path is not None:
            targets.append(Target(label, f.resolve(), model.with_floating_base(floating),
                                  BulletLoad(pb_path, fixed_base=not floating), source=src))
    return targets, skipped


__all__ = ["Target", "resolve_target", "corpus_targets", "target_label", "is_scene"]
