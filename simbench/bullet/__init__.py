"""Everything that talks to PyBullet: scenes, the GUI + collision server pair, named-link
collision queries, and the cross-check of our dynamics against PyBullet."""
from .._quiet import import_pybullet

import_pybullet()

from .scene import BodySpec, LoadedBody, LoadedScene, Scene, SceneError, load_scene  # noqa: E402
from .servers import ServerPair, connect, display_available, render  # noqa: E402

__all__ = ["BodySpec", "LoadedBody", "LoadedScene", "Scene", "SceneError", "load_scene",
           "ServerPair", "connect", "display_available", "render"]
