"""Everything that talks to PyBullet: scenes, the GUI + collision server pair, named-link
collision queries, and the cross-check of our dynamics against PyBullet."""
from .._quiet import import_pybullet

import_pybullet()

from .scene import BodySpec  # noqa: E402, LoadedBody, LoadedScene, Scene, SceneError, load_scene
from .servers import ServerPair  # noqa: E402, connect, display_available, render

__all__ = ["BodySpec", "LoadedBody", "LoadedScene", "Scene", "SceneError", "load_scene",
           "ServerPair", "connect", "display_available", "render"]
