"""simbench: URDF robots in PyBullet (GUI + collision servers, named-link collision queries)
and our own rigid-body dynamics, cross-checked against PyBullet and Pinocchio.

``import simbench`` is cheap (no numpy): the model, PyBullet and numba load only when a name
that needs them is used, so that the command starts at once.
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__
from .errors import ShapeError, SimbenchError, UnknownNameError, URDFError

_LAZY = {
    "RobotModel": "simbench.model",
    "ModelIssue": "simbench.model",
    "lock_joints": "simbench.model_lock",
    "connect": "simbench.bullet.servers",
    "ServerPair": "simbench.bullet.servers",
    "Scene": "simbench.bullet.scene",
    "load_scene": "simbench.bullet.scene",
    "NamedCollisionObject": "simbench.bullet.collision",
    "CollisionDetector": "simbench.bullet.collision",
    "all_links": "simbench.bullet.collision",
    "self_collision_pairs": "simbench.bullet.collision",
    "robot_vs_world": "simbench.bullet.collision",
    "draw_closest_points": "simbench.bullet.collision",
    "sample_disabled_pairs": "simbench.bullet.collision",
    "ClosestPoints": "simbench.bullet.collision",
    "Simulation": "simbench.sim",
    "dynamics": "simbench.dynamics",
    "load_source": "simbench.urdf_source",
    "sweep": "simbench.sweep",
    "check": "simbench.check",
    "testing": "simbench.testing",
}


if TYPE_CHECKING:   # type checkers see the real names ("X as X": re-exported); at run time they load on first use
    from . import check as check
    from . import dynamics as dynamics
    from . import testing as testing
    from .bullet.collision import ClosestPoints as ClosestPoints
    from .bullet.collision import CollisionDetector as CollisionDetector
    from .bullet.collision import NamedCollisionObject as NamedCollisionObject
    from .bullet.collision import all_links as all_links
    from .bullet.collision import draw_closest_points as draw_closest_points
    from .bullet.collision import robot_vs_world as robot_vs_world
    from .bullet.collision import sample_disabled_pairs as sample_disabled_pairs
    from .bullet.collision import self_collision_pairs as self_collision_pairs
    from .bullet.scene import Scene as Scene
    from .bullet.scene import load_scene as load_scene
    from .bullet.servers import ServerPair as ServerPair
    from .bullet.servers import connect as connect
    from .model import ModelIssue as ModelIssue
    from .model import RobotModel as RobotModel
    from .model_lock import lock_joints as lock_joints
    from .sim import Simulation as Simulation
    from .sweep import sweep as sweep
    from .urdf_source import load_source as load_source


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        module = importlib.import_module(_LAZY[name])
        return module if module.__name__.endswith("." + name) else getattr(module, name)
    raise AttributeError(f"module 'simbench' has no attribute {name!r}")


__all__ = ["SimbenchError", "URDFError", "UnknownNameError",
           "ShapeError", "__version__", *_LAZY]
