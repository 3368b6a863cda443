"""Everything that talks to PyBullet: scenes, the GUI + collision server pair, named-link
collision queries, and the cross-check of our dynamics against PyBullet."""
from .._quiet import import_pybullet

import_pybullet()

from .scene importfrom .scene import BodySpec, LoadedBody, LoadedScene, Scene, SceneError, load_scene
from .servers import ServerPair, connect, display_available, render

__all__ = ["BodySpec", "LoadedBody", "LoadedScene", "Scene", "SceneError", "load_scene",
           "ServerPair", "connect", "display_available", "render"]
