"""The GUI (or DIRECT) main server and the DIRECT collision server, holding the same scene.

The idea is the seed post 004's: queries run on a second, headless server so they never
disturb the simulation that is running. Both servers load the same bodies in the same order,
so body ids are equal in both.
"""
from __future__ import annotations

import os
import sys
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pybullet as p

from ..errors import SimbenchError
from .scene import LoadedScene, Scene, load_scene

_gui_lock = threading.Lock()
_gui_client: int | None = None


def display_available() -> bool:
    """True when an X display can be reached (``p.connect(p.GUI)`` without one kills the process)."""
    display = os.environ.get("DISPLAY", "")
    if not display or sys.platform != "linux":
        return bool(display) or sys.platform == "darwin" or os.name == "nt"
    host, _, rest = display.rpartition(":")
    number = rest.split(".")[0]
    if host in ("", "unix"):
        return Path(f"/tmp/.X11-unix/X{number}").exists()
    return True  # a remote display: trust it


def open_client(gui: bool | None = None, *, notice: bool = True) -> tuple[int, bool]:
    """Connect to a new PyBullet server: GUI when asked (``None``: when a display exists), else
    DIRECT. Returns ``(client, is_gui)``. A second GUI in one process is a clear error."""
    global _gui_client
    have_display = display_available()
    want_gui = have_display if gui is None else bool(gui)
    if (want_gui or gui is None) and not have_display:
        if notice:
            print("simbench: no display found (DISPLAY unset or unreachable); using a headless "
                  "DIRECT server instead of the GUI", file=sys.stderr)
        want_gui = False
    if not want_gui:
        return p.connect(p.DIRECT), False
    with _gui_lock:
        if _gui_client is not None and p.isConnected(physicsClientId=_gui_client):
            raise SimbenchError("PyBullet allows one GUI server per process and one is already open "
                                f"(client {_gui_client}); close it first or use gui=False")
        client = p.connect(p.GUI)
        if client < 0:
            raise SimbenchError("PyBullet could not open a GUI window")
        _gui_client = client
    p.configureDebugVisualizer(p.COV_ENABLE_GUI, 0, physicsClientId=client)
    return client, True


def close_client(client: int) -> None:
    global _gui_client
    if p.isConnected(physicsClientId=client):
        p.disconnect(physicsClientId=client)
    if client == _gui_client:
        _gui_client = None


class ServerPair:
    """The main server (``.main``) and the collision server (``.collision``), each a
    :class:`~simbench.bullet.scene.LoadedScene` with ``.client`` and ``.bodies``."""

    def __init__(self, scene: Scene | str | os.PathLike | None = None, gui: bool | None = None):
        self.scene = load_scene(scene)
        client, self.gui = open_client(gui)
        collision_client = -1
        try:
            self.main: LoadedScene = self.scene.load(client)
            collision_client = p.connect(p.DIRECT)
            self.collision: LoadedScene = self.scene.load(collision_client)
        except BaseException:
            close_client(client)
            if collision_client >= 0:
                close_client(collision_client)
            raise
        if self.main.bodies != self.collision.bodies:  # cannot happen with fresh clients
            raise SimbenchError(f"body ids differ between servers: {self.main.bodies} vs "
                                f"{self.collision.bodies}")

    @property
    def bodies(self) -> dict[str, int]:
        return self.main.bodies

    def close(self) -> None:
        for loaded in (getattr(self, "collision", None), getattr(self, "main", None)):
            if loaded is not None:
                close_client(loaded.client)

    def __enter__(self) -> "ServerPair":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return (f"ServerPair(main={self.main.client} ({'GUI' if self.gui else 'DIRECT'}), "
                f"collision={self.collision.client}, bodies={self.bodies})")

    # ------------------------------------------------------------------ one world (see bullet/sync.py)
    def world_sync(self) -> Any:
        """The :class:`~simbench.bullet.sync.WorldSync` that keeps the collision server at the
        main world's state (created on first use)."""
        ws = self.__dict__.get("_world_sync_state")
        if ws is None:
            import weakref

            from .sync import WorldSync, forget_client

            ws = self.__dict__["_world_sync_state"] = WorldSync(self.main, self.collision)
            weakref.finalize(self, forget_client, self.collision.client, ws.state)
        return ws

    def mark_changed(self) -> None:
        """Tell the collision server that the main world changed (a step, a teleport, joints
        written, ...): the next query of a synced detector reads it first. Cheap: call it after
        every change."""
        ws = self.__dict__.get("_world_sync_state")
        if ws is not None:
            ws.dirty = True

    def sync(self) -> None:
        """Copy the main world's base poses and joint positions to the collision server now
        (for users who drive PyBullet's main server directly)."""
        self.world_sync().sync()

    def detector(self, pairs: Any, **kwargs: Any) -> Any:
        """A :class:`~simbench.bullet.collision.CollisionDetector` on the collision server that
        syncs with the main world before each query (``kwargs`` as for the detector)."""
        from .collision import CollisionDetector

        return CollisionDetector(self, pairs, **kwargs)

    def add_body(self, spec: Any) -> int:
        """Load a body (a ``BodySpec`` or a mapping in the scene-file layout) into both
        servers; returns its body id, equal in both."""
        from .sync import add_body

        return add_body(self, spec)

    def remove_body(self, name: str) -> None:
        """Remove body ``name`` from both servers."""
        from .sync import remove_body

        remove_body(self, name)


def connect(scene: Scene | str | os.PathLike | None = None, gui: bool | None = None) -> ServerPair:
    """Open the main server and the collision server with ``scene`` loaded in both.

    ``gui=None`` opens a GUI when a display exists, otherwise DIRECT with a one-line notice.
    Use as a context manager: ``with simbench.connect("scene.toml") as pair: ...``.
    """
    return ServerPair(scene, gui)


def render(client: int, size: tuple[int, int] = (640, 480), *, target=(0.0, 0.0, 0.5),
           distance: float = 3.2, yaw: float = 45.0, pitch: float = -30.0,
           renderer: int | None = None) -> np.ndarray:
    """An RGB image (H, W, 3) uint8 of the client's scene from an orbit camera.

    Uses the tiny (software) renderer unless ``renderer`` says otherwise, so it works headless.
    """
    width, height = size
    view = p.computeViewMatrixFromYawPitchRoll(target, distance, yaw, pitch, 0, 2, physicsClientId=client)
    proj = p.computeProjectionMatrixFOV(60, width / height, 0.05, 50, physicsClientId=client)
    _, _, rgba, _, _ = p.getCameraImage(width, height, view, proj,
                                         renderer=p.ER_TINY_RENDERER if renderer is None else renderer,
                                         physicsClientId=client)
    return np.asarray(rgba, dtype=np.uint8).reshape(height, width, 4)[:, :, :3].copy()
