"""The simulation loop: one object that owns the server pair, steps time, drives the robot,
shows what happens in the window and records it.

Lifetime: a :class:`Simulation` releases its PyBullet clients and finishes its recordings when
closed, when garbage-collected (``weakref.finalize``; nothing refers back to it) and at exit.
"""
from __future__ import annotations

import math
import os
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .._quiet import import_pybullet
from ..bullet.collision_detector import CollisionDetector
from ..bullet.scene import LoadedBody, LoadedScene, Scene, SceneError
from ..bullet.servers import ServerPair, check_gui
from ..errors import ShapeError, SimbenchError, as_rng, finite_number, lookup, shown
from ..imaging import write_png
from . import camera as cam
from .arguments import camera_target, duration, step_count
from .contacts import Contact, RayBatch, RayHit, contacts, ray_test, ray_test_batch
from .overlay import Segment, annotate as annotate_image, segments_of, without_body
from .poses import base_link_pose, set_base_pose
from .recording import Recording, check_size, release as _release
from .robot import Robot
from .window import OVERLAY_HZ, REDRAW_HZ, Window, check_render

p = import_pybullet()


class SimulationDone(BaseException):
    """Raised by :meth:`Simulation.step` once the run is over: its ``duration`` is reached, a
    stop was requested (Ctrl-C under ``simbench run``) or the GUI window was closed.

    A ``BaseException`` (like ``KeyboardInterrupt``) so that a script's ``except Exception``
    does not swallow it. ``reason`` is ``"duration"``, ``"interrupted"``, ``"window closed"``,
    ``"closed"`` (stepping a closed simulation) or the text given to
    :meth:`Simulation.request_stop`. :meth:`Simulation.run_until` stops without raising it.
    """

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class Simulation:
    """The main server (GUI or DIRECT) and the collision server with ``scene`` loaded, plus
    simulated time, the robot, the window, recordings and collision detectors.

    ``scene``: a :class:`~simbench.bullet.scene.Scene`, a TOML path, a URDF (one body named
    "robot", base fixed), a dict in the scene-file
    layout (relative URDF paths are taken from the current directory), or ``None`` for the
    bundled KUKA-among-cubes scene. ``gui``: ``True``, ``False`` or ``None`` (a window when a
    display answers; see :mod:`simbench.bullet.display` for the fallback). ``dt``: the physics
    time step (s). ``real_time``: sleep so that simulated time keeps pace with the wall clock.
    ``duration``: when set, :meth:`step` raises :class:`SimulationDone` once ``t`` reaches it.
    ``seed``: for ``sim.rng`` (an integer >= 0, a numpy Generator or None). ``render``:
    ``"continuous"`` (default) or ``"sync"``, with ``redraw_hz``, ``overlay_hz`` and
    ``shadows``: how the window draws (measurements in :mod:`simbench.sim.window`). The camera
    starts framed on the scene's bodies (their AABBs, see
    :func:`simbench.sim.camera.scene_points`); the user can move it in the window.
    ``show_window=False``: the window stays blank until :meth:`set_camera` or :meth:`frame_scene`.
    """

    def __init__(self, scene: Scene | str | os.PathLike | Mapping | None = None, gui: bool | None = None,
                 dt: float = 1 / 240, real_time: bool = False, *, duration: float | None = None,
                 seed: int | np.random.Generator | None = None, render: str = "continuous",
                 shadows: bool = False, redraw_hz: float = REDRAW_HZ, overlay_hz: float = OVERLAY_HZ,
                 show_window: bool = True):
        gui = check_gui(gui)
        given = dt
        dt = finite_number(dt, "dt", " of seconds, 0 < dt <= 1")
        if not 0 < dt <= 1:
            raise SimbenchError(f"dt = {shown(given)}; expected a time step in seconds, 0 < dt <= 1")
        if duration is not None:
            given, duration = duration, finite_number(duration, "duration", " of seconds > 0, or None")
            if not duration > 0:
                raise SimbenchError(f"duration = {shown(given)}; expected a positive number of seconds or None")
        check_render(render)
        if isinstance(scene, Mapping):
            scene = Scene.from_dict(scene)
        self.dt, self.real_time = dt, bool(real_time)
        self.duration = duration
        self.rng = as_rng(seed, "seed")
        #: where scripts write plots and data (``simbench run --out``)
        self.out_dir = Path("out")
        self._steps = 0
        self._stop: str | None = None
        self._recordings: list[Recording] = []
        self._callbacks: list[Callable[["Simulation"], None]] = []
        self._robot: Robot | None = None
        self._robot_removed = ""   # the scene's robot, once removed: sim.robot refuses
        self._handles: dict[str, Robot] = {}
        self._overlays: dict[str, list[Segment]] = {}
        self._wall0: float | None = None
        self._closed = False
        self.window: Window | None = None
        self.pair: ServerPair = ServerPair(scene, gui, hidden=True)   # the window shows it, framed
        #: why the simulation cannot be used any more ("closed (sim.close())" ...): the pair's
        #: flag, which its detectors and the robot handles read too, so that they refuse in one
        #: line (empty while open)
        self._gone: list[str] = self.pair.gone
        self._finalizer = weakref.finalize(self, _release, self._recordings, self.pair, self._gone)
        try:
            p.setTimeStep(dt, physicsClientId=self.client)
            if self.gui:
                self.window = Window(self.client, render, shadows=shadows, redraw_hz=redraw_hz,
                                     overlay_hz=overlay_hz, gone=self._gone)
            #: the orbit camera of headless frames and of the window's start (unless show_window=False)
            self.camera = self.frame_scene(apply=False)
            if self.window is not None and show_window:
                self.window.set_camera(self.camera)
                self.window.tick(0.0, force=True)
        except BaseException:
            self._finalizer()
            raise

    # ------------------------------------------------------------------ servers & bodies
    @property
    def client(self) -> int:
        """The main server's PyBullet client id (one clear error once the simulation is closed)."""
        if self._gone:
            self._check_open()
        return self.pair.main.client

    def _check_open(self) -> None:
        if self._gone:
            raise SimbenchError(f"the simulation was {self._gone[0]}; it cannot be used any more: make a new "
                                "simbench.Simulation(...)")

    @property
    def collision_client(self) -> int:
        return self.pair.collision.client

    @property
    def gui(self) -> bool:
        """True when the main server is a GUI window."""
        return bool(self.pair.gui)

    @property
    def scene(self) -> LoadedScene:
        """The scene as loaded in the main server (``.bodies``: name -> id)."""
        return self.pair.main

    @property
    def bodies(self) -> dict[str, int]:
        return self.pair.main.bodies

    def body(self, name: str) -> LoadedBody:
        return self.pair.main.body(name)

    @property
    def robot(self) -> Robot:
        """The scene's robot (its ``robot`` key, else a body named "robot", else the first body
        with movable joints)."""
        if self._robot is None:
            if self._robot_removed:   # never another arm in its place: a script would drive it
                raise SimbenchError(f"the scene's robot {self._robot_removed!r} was removed (sim.remove_body); "
                                    "drive another body with sim.handle(NAME)")
            self._robot = self.handle(self.pair.main.robot_name)
        return self._robot

    def handle(self, name: str) -> Robot:
        """A :class:`Robot` for any body with movable joints, by name."""
        if name not in self._handles:
            body = self.pair.main.body(name)
            if not body.movable_indices:
                raise SceneError(f"body {name!r} has no movable joints")
            self._handles[name] = Robot(self, body)
        return self._handles[name]

    @property
    def model(self):
        """Our :class:`~simbench.model.RobotModel` of the robot as PyBullet simulates it (base
        orientation and ``scale`` included; see :attr:`~simbench.bullet.scene.LoadedBody.model`)."""
        return self.robot.model

    def add_body(self, name: str, urdf: str, **keys: Any) -> int:
        """Load a body into both servers; returns its body id (equal in both).

        ``keys`` are the scene file's body keys (``position``, ``orientation``, ``fixed_base``,
        ``scale``, ``joints``, ``collision_group``, ...; :mod:`simbench.bullet.scene_schema`),
        checked the same way; a relative ``urdf`` path is taken from the current folder.
        Detectors made after this see the body; see :meth:`ServerPair.add_body
        <simbench.bullet.servers.ServerPair.add_body>`."""
        self._check_open()
        return self.pair.add_body({"name": name, "urdf": urdf, **keys})

    def remove_body(self, name: str) -> None:
        """Remove body ``name`` from both servers (a detector naming it then refuses, in one line)
        and the closest-point segments joining it from the window and pictures; see
        :meth:`ServerPair.remove_body <simbench.bullet.servers.ServerPair.remove_body>`."""
        self._check_open()
        try:
            robot = self._robot_removed or self.pair.main.robot_name
        except SceneError:
            robot = None
        self.pair.remove_body(name)
        if name == robot:
            self._robot_removed = name
        self._overlays = without_body(self._overlays, name, self.window)
        self._handles.pop(name, None)
        if self._robot is not None and self._robot.name == name:
            self._robot = None

    def _changed(self, stepped: bool = False, bases: Sequence[int] = ()) -> None:
        """Tell the collision server's sync that the main world changed: a step (``stepped``),
        joints written, or the base poses of the body ids ``bases`` (fixed bases not named
        are not read again: each read is a GUI-server call, see :mod:`simbench.bullet.sync`)."""
        ws = self.pair.__dict__.get("_world_sync_state")
        if ws is None:
            self.pair.mark_changed(stepped)
            return
        with ws.narrowed(bases):
            self.pair.mark_changed(stepped)

    def reset(self, q: Any = None, qd: Any = None) -> None:
        """Reset the robot's joints (see :meth:`Robot.reset`); ``t`` is not changed."""
        self.robot.reset(q, qd)

    def set_pose(self, body: str, position: Any, orientation: Any = (0, 0, 0, 1),
                 linear_velocity: Any = None, angular_velocity: Any = None) -> None:
        """Teleport a body's base link frame: position (3,), orientation (a quaternion x, y, z, w,
        a rotation matrix (3, 3) or roll, pitch, yaw in rad), world-frame velocities (of the COM)."""
        bid = lookup(self.bodies, body, "body", "the simulation")
        set_base_pose(self.client, bid, position, orientation, linear_velocity, angular_velocity)
        self._changed(bases=(bid,))

    def base_pose(self, body: str) -> tuple[np.ndarray, np.ndarray]:
        """World position (3,) and quaternion (x, y, z, w) of a body's base *link frame* (PyBullet's
        ``getBasePositionAndOrientation`` gives its inertial frame instead)."""
        return base_link_pose(self.client, lookup(self.bodies, body, "body", "the simulation"))

    # ------------------------------------------------------------------ queries
    def detector(self, pairs: Any, **kwargs: Any) -> CollisionDetector:
        """A collision detector for ``pairs`` of named objects on the collision server, synced
        with this simulation before each query (queries never move the main simulation);
        ``kwargs`` as for :class:`~simbench.bullet.collision.CollisionDetector` (``robot``
        defaults to the scene's robot, none in a scene without movable joints or once the
        scene's robot was removed). Once the simulation is closed its queries refuse in one line."""
        self._check_open()
        if self._robot_removed and "robot" not in kwargs:
            kwargs["robot"] = ()
        return self.pair.detector(pairs, **kwargs)

    def contacts(self, a: Any = None, b: Any = None) -> list[Contact]:
        """Contact points of the world as it is now, by name (see :mod:`simbench.sim.contacts`):
        PyBullet's contact manifold of the last step (computed again after a teleport). Two
        fixed bodies never get contact points (PyBullet skips pairs of static bodies, overlapping
        or not): use ``sim.detector`` for their distance."""
        return contacts(self, a, b)

    def ray_test(self, start: Any, end: Any) -> RayHit:
        """The first body and link hit along ``start -> end`` in the main world."""
        return ray_test(self, start, end)

    def ray_test_batch(self, starts: Any, ends: Any) -> RayBatch:
        """:meth:`ray_test` for rays of shape (..., 3)."""
        return ray_test_batch(self, starts, ends)

    def draw_closest_points(self, results: Sequence[Any], key: str = "closest",
                            labels: Sequence[str] | None = None) -> list[Segment]:
        """Show closest-point results (``detector.closest_points(q)``) under ``key``, in the GUI
        (lines coloured by clearance, a legend: ``labels``, one per result, or both sides of each
        pair, ``ball - table``, with the links where two pairs join the same bodies; a pair beyond
        its query's distance reads ``> 1 m``) and in frames and screenshots; ``key`` replaces them."""
        segments = segments_of(results, labels)
        self._overlays[key] = segments
        if self.window is not None:
            self.window.show(key, segments)
        return segments

    @property
    def overlays(self) -> dict[str, list[Segment]]:
        """The closest-point segments being shown, by key."""
        return dict(self._overlays)

    # ------------------------------------------------------------------ time
    @property
    def t(self) -> float:
        """Simulated time (s) since the start: ``steps * dt``."""
        return self._steps * self.dt

    @property
    def steps(self) -> int:
        return self._steps

    @property
    def running(self) -> bool:
        """False once the duration is reached, a stop was requested or the window closed."""
        return self._done_reason() is None

    def request_stop(self, reason: str = "stop requested") -> None:
        """Make ``running`` False and the next :meth:`step` raise :class:`SimulationDone`
        (safe to call from a signal handler)."""
        if self._stop is None:
            self._stop = reason

    def _done_reason(self) -> str | None:
        if self._stop is not None:
            return self._stop
        if self._closed:
            return "closed"
        if self.duration is not None and self._steps >= math.ceil(self.duration / self.dt - 1e-6):
            return "duration"
        if self.gui and not p.isConnected(physicsClientId=self.client):
            return "window closed"
        return None

    def step(self, n: int = 1) -> float:
        """Advance ``n`` physics steps of ``dt``; returns ``t``. Per step: apply held torques,
        ``stepSimulation``, run the step callbacks, write due recording frames, update the
        window and, with ``real_time``, sleep to keep pace with the wall clock. Raises
        :class:`SimulationDone` when the run is over."""
        if not self._steps:
            self.pair.main.warn_free_arms()   # a free arm falls from here on
        for _ in range(step_count(n)):
            reason = self._done_reason()
            if reason is not None:
                raise SimulationDone(reason)
            for rec in list(self._recordings):   # a frame due since the last step, with what the
                rec._before_step()                # script drew after it
            for handle in self._handles.values():
                handle._apply()
            p.stepSimulation(physicsClientId=self.client)
            self._steps += 1
            self._changed(stepped=True)
            for cb in list(self._callbacks):  # first, so that frames show what they set
                cb(self)
            for rec in list(self._recordings):
                rec._on_step()
            if self.window is not None:
                self.window.tick(self.t)
            if self.real_time:
                self._pace()
        return self.t

    def advance(self, seconds: float) -> float:
        """Step for ``seconds`` (>= 0) of simulated time (rounded to whole steps); returns ``t``."""
        return self.step(round(duration(seconds, "sim.advance", "seconds") / self.dt))

    def run_until(self, t: float, callback: Callable[["Simulation"], None] | None = None) -> float:
        """Step until simulated time ``t`` (rounded to whole steps) or until the run is over,
        whichever comes first, without raising :class:`SimulationDone`; ``callback(sim)`` is a
        step callback meanwhile (see :meth:`add_step_callback`). Returns ``t``."""
        n = round(duration(t, "sim.run_until", "t") / self.dt)
        if callback is not None:
            self.add_step_callback(callback)
        try:
            while self.running and self._steps < n:
                self.step()
        finally:
            if callback is not None:
                self.remove_step_callback(callback)
        return self.t

    def add_step_callback(self, fn: Callable[["Simulation"], None]) -> None:
        """Call ``fn(sim)`` after every physics step (before recording frames are taken)."""
        if not callable(fn):
            raise SimbenchError(f"step callback = {shown(fn)}; expected a function taking the simulation, "
                                "fn(sim)")
        self._callbacks.append(fn)

    def remove_step_callback(self, fn: Callable[["Simulation"], None]) -> None:
        if fn in self._callbacks:
            self._callbacks.remove(fn)

    def _pace(self) -> None:
        now = time.perf_counter()
        if self._wall0 is None:
            self._wall0, self._pace_t0 = now, self.t
            return
        lag = (self._wall0 + (self.t - self._pace_t0)) - now
        if lag > 0:
            time.sleep(lag)
        elif lag < -0.25:  # far behind (slow machine or a pause): do not rush to catch up
            self._wall0, self._pace_t0 = now, self.t

    # ------------------------------------------------------------------ camera & images
    def frame_scene(self, yaw: float | None = None, pitch: float = -30.0, apply: bool = True,
                    reach: bool = True) -> dict[str, Any]:
        """An orbit camera framing every body but grounds (:func:`~simbench.sim.camera.scene_points`),
        set as ``sim.camera`` and the window's view when ``apply``; returns it. ``reach=False``:
        the bodies as they are, not the space their joints sweep. Without ``yaw``, the first of
        225, 135, 315, 45 degrees with the robot in sight (:func:`~simbench.sim.camera.frame_bodies`)."""
        camera = cam.frame_sim(self, yaw, pitch, reach)
        if apply:
            self.camera = camera
            if self.window is not None:
                self.window.set_camera(camera)
        return camera

    def set_camera(self, target: Any = None, distance: float | None = None, yaw: float | None = None,
                   pitch: float | None = None) -> None:
        """Orbit camera used for headless frames and, in the GUI, for the window's view."""
        if target is not None:
            self.camera["target"] = camera_target(target)
        given = {key: finite_number(val, f"camera {key}", error=ShapeError)
                 for key, val in (("distance", distance), ("yaw", yaw), ("pitch", pitch)) if val is not None}
        if not given.get("distance", 1.0) > 0:
            raise ShapeError(f"camera distance = {shown(distance)}; expected a positive number of metres")
        self.camera.update(given)
        if self.window is not None:
            self.window.set_camera(self.camera)

    def camera_matrices(self, size: tuple[int, int] = (640, 480)) -> tuple[list, list]:
        """View and projection matrices (PyBullet's flat lists) of :meth:`frame` at ``size``:
        the window's camera in the GUI (as the user left it), ``sim.camera`` headless."""
        return cam.sim_matrices(self, check_size(size))

    def frame(self, size: tuple[int, int] = (640, 480), annotate: bool = False,
              lines: Sequence[Any] = (), show_time: bool = True) -> np.ndarray:
        """An RGB image (H, W, 3) uint8 of the scene: in the GUI what the window's camera sees
        (OpenGL renderer), headless the orbit camera ``sim.camera`` (tiny renderer). With
        ``annotate``: the simulated time, the closest-point segments shown by
        :meth:`draw_closest_points` (with their distances) and ``lines`` of text drawn in
        (``show_time=False`` leaves the time out)."""
        w, h = check_size(size)
        view, proj = self.camera_matrices((w, h))
        renderer = p.ER_BULLET_HARDWARE_OPENGL if self.gui else p.ER_TINY_RENDERER
        _, _, rgba, _, _ = p.getCameraImage(w, h, view, proj, renderer=renderer, physicsClientId=self.client)
        image = np.asarray(rgba, dtype=np.uint8).reshape(h, w, 4)[:, :, :3].copy()
        if not annotate:
            return image
        segments = [s for segs in self._overlays.values() for s in segs]
        return annotate_image(image, view=view, proj=proj, segments=segments,
                              time=self.t if show_time else None, lines=lines)

    def screenshot(self, path: str | os.PathLike | None = None, size: tuple[int, int] = (640, 480),
                   annotate: bool = True, lines: Sequence[Any] = (), show_time: bool = True) -> np.ndarray:
        """:meth:`frame` (annotated by default), also written as a PNG when ``path`` is given."""
        img = self.frame(size, annotate=annotate, lines=lines, show_time=show_time)
        if path is not None:
            from ..outputs import writable_file

            write_png(writable_file(path, "screenshot"), img)
        return img

    def record(self, path: str | os.PathLike, fps: float = 30, size: tuple[int, int] = (640, 480),
               annotate: bool = True) -> Recording:
        """Start writing a GIF (needs Pillow) or MP4 (needs ffmpeg) of the run: a frame for now and
        every ``1/fps`` s of simulated time, each taken before the next step (with what was drawn
        after the last), annotated (time, distances) unless ``annotate`` is False. Finished by
        ``.stop()``, a ``with`` block or closing. An unusable path, format or encoder: one line up
        front; missing folders are created (the README's ``sim.record("out/run.gif")``)."""
        self._check_open()
        rec = Recording(self, path, fps, size, annotate=annotate)
        self._recordings.append(rec)
        return rec

    @property
    def recordings(self) -> tuple[Recording, ...]:
        return tuple(self._recordings)

    # ------------------------------------------------------------------ lifetime
    def close(self) -> None:
        """Finish every recording, then disconnect both servers. Safe to call twice."""
        if self._closed:
            return
        errors = []
        for rec in list(self._recordings):
            try:
                rec.stop()
            except Exception as exc:  # still close the servers
                errors.append(exc)
        self._closed = True
        if self.window is not None:
            self.window.close()
        self._gone.append("closed (sim.close())")
        self._finalizer()
        if errors:
            raise errors[0]

    @property
    def closed(self) -> bool:
        return self._closed

    def __enter__(self) -> "Simulation":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"t={self.t:.4g} s"
        return (f"Simulation({'GUI' if self.gui else 'DIRECT'}, dt={self.dt:g}, {state}, "
                f"bodies={list(self.bodies)})")


__all__ = ["Simulation", "SimulationDone"]
