"""The GUI (or DIRECT) main server and the DIRECT collision server, holding the same scene.

The idea is Adam Heins's ("shortest distances with PyBullet"): queries run on a second,
headless server so they never disturb the simulation that is running. Both servers load the same bodies in the same order,
so body ids are equal in both.
"""
from __future__ import annotations

import logging
import os
import threading
import weakref
from typing import Any

import numpy as np
import pybullet as p

from .._quiet import quiet_fds
from ..errors import SimbenchError, closest, shown
from .display import choose_gui_held, display_available  # noqa: F401  (display_available: re-exported)
from .scene import LoadedScene, Scene, load_scene

log = logging.getLogger(__name__)

_gui_lock = threading.Lock()
_gui_client: int | None = None


#: how a gui value that is not True, False or None reads, for the closest valid choice
_GUI_WORDS = {True: ("yes", "true", "on", "1", "gui", "window", "y"),
              False: ("no", "false", "off", "0", "direct", "headless", "n", ""),
              None: ("none", "auto", "default")}


def check_gui(gui: Any) -> bool | None:
    """``gui`` as True, False or None (numpy booleans too); else one line with the closest
    valid choice: ``gui = 'yes'; expected True, False or None (...); did you mean True?``"""
    if gui is None or isinstance(gui, (bool, np.bool_)):
        return None if gui is None else bool(gui)
    from ..errors import shown

    word = str(gui).strip().lower() if isinstance(gui, (str, int, float)) else None
    near = next((repr(v) for v, words in _GUI_WORDS.items() if word in words), None)
    raise SimbenchError(f"gui = {shown(gui)}; expected True (a window), False (headless, DIRECT) or None (a "
                        f"window when a display answers)" + (f"; did you mean {near}?" if near else ""))


def open_client(gui: bool | None = None, *, options: str = "") -> tuple[int, bool]:
    """Connect to a new PyBullet server: GUI when asked and a display answers (``None``: when
    one answers), else DIRECT with one logged line (see :mod:`simbench.bullet.display`).
    Returns ``(client, is_gui)``. ``options`` go to ``p.connect(p.GUI, options=...)`` (e.g.
    ``"--width=800 --height=600"``). A second GUI in one process is a clear error."""
    gui = check_gui(gui)
    if gui is None and _gui_open():   # "a window when possible": not possible, one is open
        log.warning("a GUI window is already open in this process (client %d; PyBullet allows one); "
                    "running headless (DIRECT) instead", _gui_client)
        return p.connect(p.DIRECT), False
    use_gui, held = choose_gui_held(gui)
    if not use_gui:
        return p.connect(p.DIRECT), False
    try:
        return _open_gui(options), True
    finally:
        if held is not None:  # the probe's X connection, closed once PyBullet has its own
            held.close()


def _gui_open() -> bool:
    return _gui_client is not None and bool(p.isConnected(physicsClientId=_gui_client))


def _open_gui(options: str) -> int:
    global _gui_client
    with _gui_lock:
        if _gui_open():
            raise SimbenchError("PyBullet allows one GUI server per process and one is already open "
                                f"(client {_gui_client}); close it first or use gui=False")
        with quiet_fds(1):  # PyBullet prints its OpenGL set-up on stdout, up to the first frame
            client = p.connect(p.GUI, options=options)
            if client >= 0:
                p.configureDebugVisualizer(p.COV_ENABLE_GUI, 0, physicsClientId=client)
                p.removeUserDebugItem(p.addUserDebugText(" ", [0, 0, 0], physicsClientId=client),
                                      physicsClientId=client)
        if client < 0:
            raise SimbenchError("PyBullet could not open a GUI window")
        _gui_client = client
    return client


def close_client(client: int) -> None:
    """Disconnect ``client`` if it is still connected (safe to call twice)."""
    global _gui_client
    if p.isConnected(physicsClientId=client):
        if client == _gui_client:
            with quiet_fds(1):  # and its thread shutdown
                p.disconnect(physicsClientId=client)
        else:
            p.disconnect(physicsClientId=client)
    if client == _gui_client:
        _gui_client = None


#: what a closed :class:`ServerPair` puts in its ``gone`` list
PAIR_CLOSED = "closed (pair.close())"


def _close_clients(clients: list[int], gone: list[str]) -> None:
    """Finalizer of a :class:`ServerPair`: must not refer to the pair itself."""
    gone.append(PAIR_CLOSED)
    for client in clients:
        close_client(client)


class ServerPair:
    """The main server (``.main``) and the collision server (``.collision``), each a
    :class:`~simbench.bullet.scene.LoadedScene` with ``.client`` and ``.bodies``."""

    def __init__(self, scene: Scene | str | os.PathLike | None = None, gui: bool | None = None, *,
                 options: str = "", hidden: bool = False):
        """``hidden``: a GUI window draws nothing until its owner turns rendering on (a
        :class:`~simbench.sim.Simulation`'s window does at its first camera, so that PyBullet's
        default view never shows); without it, rendering is off only while the bodies load
        (measured under Xvfb, the KUKA-among-cubes scene: 0.21 s instead of 1.63 s)."""
        check_gui(gui)   # before the scene is read: a bad value is said first
        self.scene = load_scene(scene)
        client, self.gui = open_client(gui, options=options)
        if self.gui:
            p.configureDebugVisualizer(p.COV_ENABLE_RENDERING, 0, physicsClientId=client)
        # lifetime: the clients are released when the pair is closed, garbage-collected or the
        # interpreter exits, whichever comes first (the finalizer holds the ids, not the pair)
        self._clients = [client]
        #: non-empty once closed, shared with its detectors: PyBullet gives a closed server's id
        #: to the next server it opens, so a detector of a closed pair would query another world
        self.gone: list[str] = []
        self._finalizer = weakref.finalize(self, _close_clients, self._clients, self.gone)
        try:
            self.main: LoadedScene = self.scene.load(client)
            self._clients.append(p.connect(p.DIRECT))
            self.collision: LoadedScene = self.scene.load(self._clients[-1])
        except BaseException:
            self._finalizer()
            raise
        if self.main.bodies != self.collision.bodies:  # cannot happen with fresh clients
            raise SimbenchError(f"body ids differ between servers: {self.main.bodies} vs "
                                f"{self.collision.bodies}")
        if self.gui and not hidden:
            p.configureDebugVisualizer(p.COV_ENABLE_RENDERING, 1, physicsClientId=client)

    @property
    def bodies(self) -> dict[str, int]:
        return self.main.bodies

    def close(self) -> None:
        """Disconnect both servers (safe to call twice)."""
        self._finalizer()

    @property
    def closed(self) -> bool:
        return not self._finalizer.alive

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

    def mark_changed(self, stepped: bool = False) -> None:
        """Tell the collision server that the main world changed (a step, a teleport, joints
        written, ...): the next query of a synced detector reads it first. Cheap: call it after
        every change (``stepped``: the change was ``stepSimulation``, which also computed the
        contacts)."""
        d = self.__dict__
        d["_changes"] = d.get("_changes", 0) + 1
        if stepped:
            d["_contacts_at"] = d["_changes"]
        ws = self.__dict__.get("_world_sync_state")
        if ws is not None:
            ws.dirty = True

    def refresh_contacts(self) -> None:
        """Make PyBullet's contact points those of the main world as it is now: after a change
        since the last step (a teleport, a reset), ``performCollisionDetection`` (the points'
        forces are those of the last step, zero for new points)."""
        d = self.__dict__
        if d.get("_changes", 0) != d.get("_contacts_at", 0):
            p.performCollisionDetection(physicsClientId=self.main.client)
            d["_contacts_at"] = d.get("_changes", 0)

    def sync(self) -> None:
        """Copy the main world's base poses and joint positions to the collision server now
        (for users who drive PyBullet's main server directly)."""
        self.world_sync().sync()

    def detector(self, pairs: Any, **kwargs: Any) -> Any:
        """A :class:`~simbench.bullet.collision.CollisionDetector` on the collision server that
        syncs with the main world before each query (``kwargs`` as for the detector)."""
        import inspect

        from .collision import CollisionDetector

        known = [k for k in inspect.signature(CollisionDetector).parameters if k not in ("scene", "pairs")]
        for key, value in kwargs.items():
            if key in ("max_distance", "margin"):   # a query's argument, not the detector's
                query = "compute_distances" if key == "max_distance" else "in_collision"
                raise SimbenchError(f"detector() got {key}={shown(value)}; {key} is given to each query: "
                                    f"det = detector(pairs); det.{query}(q, {key}={shown(value)})")
            if key not in known:
                near = closest(key, known, n=1)
                listed = ", ".join(k for k in known if k not in ("bodies", "sync"))
                raise SimbenchError(f"detector() got an unknown argument {key!r}; "
                                    + (f"did you mean {near[0]!r}?" if near else f"expected one of {listed}"))
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

    ``gui=None`` opens a GUI when a display answers, otherwise DIRECT with one logged line
    (:mod:`simbench.bullet.display`). Released on ``close()``, when garbage-collected and at exit.
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
