"""Scripted simulations: one object that owns the servers, steps time, drives the robot and
records what happens. The same script runs headless or in the PyBullet GUI::

    import simbench

    with simbench.Simulation(gui=None) as sim:          # the bundled KUKA-among-cubes scene
        sim.record("out.gif")                           # frames every 1/30 s of simulated time
        sim.robot.set_joint_targets({"lbr_iiwa_joint_2": 0.8, "lbr_iiwa_joint_4": -1.2})
        sim.advance(2.0)                                # 2 s of simulated time
        print(sim.t, sim.robot.q)

``gui=None`` opens a window when a display exists, else a headless (DIRECT) server with a
one-line notice. Next to the main server there is always the paired DIRECT collision server
of seed post 004 (``sim.detector(pairs)`` queries it without disturbing the simulation).

Control follows PyBullet: every joint starts with PyBullet's default velocity motor (target
0); :meth:`Robot.set_joint_targets` gives position or velocity targets to the motors;
:meth:`Robot.set_torques` switches the named joints' motors off (``VELOCITY_CONTROL`` with
force 0, which torque control needs) and applies the torques as a zero-order hold: PyBullet
clears applied torques after every step, so :meth:`Simulation.step` re-applies them.

``sim.record("run.gif" | "run.mp4", fps=30, size=(640, 480))`` streams frames to disk as
simulated time passes (GIF through Pillow, MP4 through ffmpeg). Frames come from
``getCameraImage``: in the GUI from the window's camera with the OpenGL renderer, headless
from ``sim.camera`` with the tiny software renderer.
"""
from __future__ import annotations

import io
import math
import os
import shutil
import struct
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ._quiet import import_pybullet
from .bullet.scene import LoadedBody, LoadedScene, Scene, SceneError
from .bullet.servers import ServerPair, connect
from .errors import RecordingError, ShapeError, SimbenchError, lookup
from .imaging import write_png

p = import_pybullet()

SUPPORTED_RECORDING_FORMATS = (".gif", ".mp4")


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


# ====================================================================== frame writers
def _checked_frame(frame: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """The RGB part of an (H, W, 3 or 4) image as contiguous uint8, checked against (W, H)."""
    img = np.ascontiguousarray(np.asarray(frame)[:, :, :3], dtype=np.uint8)
    if img.shape[:2] != (size[1], size[0]):
        raise RecordingError(f"frame has shape {np.shape(frame)}; expected ({size[1]}, {size[0]}, 3) "
                             f"for a {size[0]}x{size[1]} recording")
    return img


def _frame_delays_cs(fps: float):
    """GIF delays in 1/100 s whose running sum follows ``k * 100 / fps`` (no drift)."""
    k = 0
    while True:
        yield max(1, round((k + 1) * 100 / fps) - round(k * 100 / fps))
        k += 1


class GifWriter:
    """An animated GIF written frame by frame (needs Pillow)."""

    def __init__(self, path: str | os.PathLike, size: tuple[int, int], fps: float):
        try:
            from PIL import Image  # noqa: F401
        except ImportError:
            raise RecordingError(f"writing {str(path)!r} needs Pillow (pip install pillow); "
                                 "it is not installed") from None
        self.path, self.size, self.fps = Path(path), tuple(size), float(fps)
        self.frames = 0
        self._delays = _frame_delays_cs(self.fps)
        self._file = open(self.path, "wb")
        w, h = self.size
        header = b"GIF89a" + struct.pack("<HHBBB", w, h, 0, 0, 0)
        loop = b"\x21\xff\x0bNETSCAPE2.0\x03\x01\x00\x00\x00"  # loop forever
        self._file.write(header + loop)
        self._file.flush()
        self._good = self._file.tell()

    def add(self, frame: np.ndarray) -> None:
        from PIL import Image

        img = _checked_frame(frame, self.size)
        pal = Image.fromarray(img).quantize(256, method=Image.Quantize.FASTOCTREE)
        buf = io.BytesIO()
        pal.save(buf, format="GIF")
        block = _image_block(buf.getvalue())
        gce = b"\x21\xf9\x04" + struct.pack("<BHBB", 0x04, next(self._delays), 0, 0)
        self._file.seek(self._good)
        self._file.write(gce + block)
        self._file.flush()
        self._good = self._file.tell()
        self.frames += 1

    def close(self) -> None:
        if self._file.closed:
            return
        self._file.seek(self._good)
        self._file.truncate()
        self._file.write(b"\x3b")
        self._file.close()


def _image_block(gif: bytes) -> bytes:
    """The image descriptor (with a local colour table) and LZW data of a one-frame GIF."""
    if gif[:6] not in (b"GIF87a", b"GIF89a"):
        raise RecordingError("Pillow did not produce a GIF")
    packed = gif[10]
    pos = 13
    table = b""
    if packed & 0x80:
        n = 3 * 2 ** ((packed & 7) + 1)
        table, size_bits = gif[pos:pos + n], packed & 7
        pos += n
    while pos < len(gif):
        tag = gif[pos]
        if tag == 0x21:  # extension: label, then sub-blocks up to a zero
            pos += 2
            while gif[pos]:
                pos += gif[pos] + 1
            pos += 1
        elif tag == 0x2C:
            desc = gif[pos + 1:pos + 9]
            ipacked = gif[pos + 9]
            pos += 10
            if ipacked & 0x80:  # a local table already
                n = 3 * 2 ** ((ipacked & 7) + 1)
                table, size_bits = gif[pos:pos + n], ipacked & 7
                pos += n
            if not table:
                raise RecordingError("GIF frame without a colour table")
            start = pos
            pos += 1  # LZW minimum code size
            while gif[pos]:
                pos += gif[pos] + 1
            pos += 1
            new_packed = 0x80 | (ipacked & 0x40) | size_bits
            return b"\x2c" + desc + bytes([new_packed]) + table + gif[start:pos]
        else:
            break
    raise RecordingError("no image in the GIF Pillow produced")


def ffmpeg_executable() -> str | None:
    """``ffmpeg`` on PATH, else the one bundled with ``imageio-ffmpeg``, else None."""
    exe = shutil.which("ffmpeg")
    if exe:
        return exe
    try:
        import imageio_ffmpeg

        return imageio_ffmpeg.get_ffmpeg_exe()
    except Exception:  # not installed, or its binary missing
        return None


class Mp4Writer:
    """H.264 MP4 through an ffmpeg subprocess."""

    def __init__(self, path: str | os.PathLike, size: tuple[int, int], fps: float):
        exe = ffmpeg_executable()
        if exe is None:
            raise RecordingError(
                f"writing {str(path)!r} needs ffmpeg, which was not found: install it (apt-get "
                "install ffmpeg) or the Python packages imageio and imageio-ffmpeg, or record a "
                ".gif instead")
        w, h = size
        if w % 2 or h % 2:
            raise RecordingError(f"MP4 (yuv420p) needs an even width and height; got size {size}")
        self.path, self.size, self.fps, self.frames = Path(path), (w, h), float(fps), 0
        cmd = [exe, "-y", "-loglevel", "error", "-f", "rawvideo", "-pix_fmt", "rgb24",
               "-s", f"{w}x{h}", "-r", f"{fps:g}", "-i", "-", "-an", "-vcodec", "libx264",
               "-pix_fmt", "yuv420p", str(self.path)]
        # its own session: a Ctrl-C in the terminal reaches only Python, which then closes the
        # pipe so that ffmpeg finishes the file
        self._proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.PIPE, start_new_session=(os.name == "posix"))

    def add(self, frame: np.ndarray) -> None:
        img = _checked_frame(frame, self.size)
        try:
            self._proc.stdin.write(img.tobytes())
        except BrokenPipeError:
            raise RecordingError(f"ffmpeg stopped: {self._proc.stderr.read().decode()[-500:]}") from None
        self.frames += 1

    def close(self) -> None:
        if self._proc.stdin.closed:
            return
        try:
            self._proc.stdin.close()
        except BrokenPipeError:
            pass
        if self._proc.wait(timeout=120) != 0:
            raise RecordingError(f"ffmpeg failed writing {str(self.path)!r}: "
                                 f"{self._proc.stderr.read().decode()[-500:]}")


def open_writer(path: str | os.PathLike, size: tuple[int, int], fps: float) -> GifWriter | Mp4Writer:
    """A frame writer chosen by the file extension (``.gif`` or ``.mp4``)."""
    suffix = Path(path).suffix.lower()
    if suffix == ".gif":
        return GifWriter(path, size, fps)
    if suffix == ".mp4":
        return Mp4Writer(path, size, fps)
    raise RecordingError(f"cannot record to {str(path)!r}: unknown extension {suffix!r}; "
                         f"expected one of {', '.join(SUPPORTED_RECORDING_FORMATS)}")


# ====================================================================== recordings
class Recording:
    """Frames of a :class:`Simulation` written every ``1/fps`` s of *simulated* time.

    Started by :meth:`Simulation.record`; finished by :meth:`stop` (or leaving its ``with``
    block, or closing the simulation). ``frames`` counts the frames written so far.
    """

    def __init__(self, sim: "Simulation", path: str | os.PathLike, fps: float = 30.0,
                 size: tuple[int, int] = (640, 480)):
        fps = float(fps)
        if not (math.isfinite(fps) and fps > 0):
            raise RecordingError(f"fps = {fps!r}; expected a positive number of frames per second")
        size = _check_size(size)
        self.sim, self.path, self.fps, self.size = sim, Path(path), fps, size
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._writer = open_writer(self.path, size, fps)
        self._k = 0                       # index of the next frame
        self._t0 = sim.t
        self.closed = False
        try:
            self.capture()                # the first frame shows the initial state
        except BaseException:
            self.closed = True
            self._writer.close()
            raise

    @property
    def frames(self) -> int:
        return self._writer.frames

    def _due(self) -> int:
        """How many frame times have passed (frame k is due at t0 + k / fps)."""
        return int(math.floor((self.sim.t - self._t0) * self.fps + 1e-6)) + 1 - self._k

    def capture(self) -> None:
        """Write the current view as the next frame (repeated when several are due)."""
        if self.closed:
            return
        due = max(1, self._due())
        image = self.sim.frame(self.size)
        for _ in range(due):
            self._writer.add(image)
            self._k += 1

    def _on_step(self) -> None:
        if self._due() > 0:
            self.capture()

    def stop(self) -> Path:
        """Finish the file; returns its path. Safe to call twice."""
        if not self.closed:
            self.closed = True
            try:
                self._writer.close()
            finally:
                if self in self.sim._recordings:
                    self.sim._recordings.remove(self)
        return self.path

    def __enter__(self) -> "Recording":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def __repr__(self) -> str:
        return (f"Recording({str(self.path)!r}, fps={self.fps:g}, size={self.size}, "
                f"frames={self.frames}{', closed' if self.closed else ''})")


def _check_size(size: Any) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in size)
    except (TypeError, ValueError):
        raise RecordingError(f"size = {size!r}; expected (width, height) in pixels") from None
    if not (8 <= w <= 4096 and 8 <= h <= 4096):
        raise RecordingError(f"size = {size!r}; expected width and height between 8 and 4096 pixels")
    return w, h


# ====================================================================== the robot
class Robot:
    """One body of the simulation with movable joints, addressed by joint names.

    ``q``, ``qd`` and ``tau`` are arrays in ``joint_names`` order (the URDF's, = the order of
    ``sim.model``); setters take such an array or a ``{joint name: value}`` mapping.
    """

    def __init__(self, sim: "Simulation", body: LoadedBody):
        self.sim, self.body = sim, body
        self.name, self.id = body.name, body.id
        self._client = sim.client
        self.joint_names: tuple[str, ...] = body.movable_names
        self._position = {n: i for i, n in enumerate(self.joint_names)}
        self._idx = np.array(body.movable_indices, dtype=int)
        info = [p.getJointInfo(body.id, int(j), physicsClientId=self._client) for j in self._idx]
        if any(row[2] == p.JOINT_SPHERICAL for row in info):
            raise SimbenchError(f"body {self.name!r} has spherical joints; sim.robot drives only "
                                f"revolute and prismatic joints")
        effort = np.array([row[10] for row in info], dtype=float)
        #: motor force limits used by set_joint_targets when none are given (the URDF's effort
        #: limits; 500 N or N m where the file gives none)
        self.max_forces = np.where(np.isfinite(effort) & (effort > 0), effort, 500.0)
        self._torque = np.zeros(self.dof, dtype=bool)   # joints under torque control
        self._tau = np.zeros(self.dof)
        self._modes = ["velocity"] * self.dof           # PyBullet's default motors
        self._pos_target: dict[int, tuple[float, dict]] = {}  # joint -> (force, gains)
        spec_joints = body.spec.joints if body.spec is not None else {}
        #: the configuration the scene loads (its ``joints`` table, 0 elsewhere); ``reset()`` target
        self.initial_q = np.array([float(spec_joints.get(n, 0.0)) for n in self.joint_names])

    # ------------------------------------------------------------------ state
    @property
    def dof(self) -> int:
        return len(self.joint_names)

    @property
    def model(self):
        """Our :class:`~simbench.model.RobotModel` of this body (same joint order)."""
        return self.body.model

    def _states(self) -> list:
        return p.getJointStates(self.id, self._idx.tolist(), physicsClientId=self._client)

    @property
    def q(self) -> np.ndarray:
        """Joint positions (rad or m), shape (dof,)."""
        return np.array([s[0] for s in self._states()], dtype=float)

    @property
    def qd(self) -> np.ndarray:
        """Joint velocities, shape (dof,)."""
        return np.array([s[1] for s in self._states()], dtype=float)

    def state(self) -> tuple[np.ndarray, np.ndarray]:
        """``(q, qd)`` from one PyBullet call (in the GUI every call is a round trip to the
        window's thread, so this is twice as fast as reading ``q`` and ``qd``)."""
        states = self._states()
        return (np.array([s[0] for s in states], dtype=float), np.array([s[1] for s in states], dtype=float))

    @property
    def tau(self) -> np.ndarray:
        """Applied joint torques/forces: the commanded ones for joints under torque control
        (PyBullet reports 0 there), the motor's for the others."""
        motor = np.array([s[3] for s in self._states()], dtype=float)
        return np.where(self._torque, self._tau, motor)

    @property
    def modes(self) -> dict[str, str]:
        """Control mode per joint: ``"position"``, ``"velocity"`` or ``"torque"``."""
        return dict(zip(self.joint_names, self._modes))

    def joint_index(self, name: str) -> int:
        """Position of joint ``name`` in ``q``."""
        return lookup(self._position, name, "joint", f"body {self.name!r}")

    def link_pose(self, link: str | None = None) -> tuple[np.ndarray, np.ndarray]:
        """World position (3,) and quaternion (x, y, z, w) of a link frame (None: the base)."""
        li = self.body.link_index(link)
        if li < 0:
            return self.sim.base_pose(self.name)
        st = p.getLinkState(self.id, li, computeForwardKinematics=True, physicsClientId=self._client)
        return np.array(st[4]), np.array(st[5])

    # ------------------------------------------------------------------ values by name
    def _values(self, value: Any, what: str, partial: bool) -> tuple[np.ndarray, np.ndarray]:
        """(joint positions in q, values) from an array (dof,) or a mapping by joint name."""
        if isinstance(value, Mapping):
            sel = np.array([self.joint_index(str(k)) for k in value], dtype=int)
            if not partial and len(set(sel.tolist())) != self.dof:
                missing = [n for n in self.joint_names if n not in value]
                raise ShapeError(f"{what} is missing joints {missing}; expected every joint of "
                                 f"{list(self.joint_names)}")
            vals = np.array([_finite(v, f"{what}[{k!r}]") for k, v in value.items()], dtype=float)
            return sel, vals
        try:
            arr = np.asarray(value, dtype=float)
        except (TypeError, ValueError):
            raise ShapeError(f"{what} = {value!r}; expected {self.dof} numbers for joints "
                             f"{list(self.joint_names)} or a mapping by joint name") from None
        if arr.shape != (self.dof,):
            raise ShapeError(f"{what} has shape {arr.shape}; expected ({self.dof},) with joints in "
                             f"order {list(self.joint_names)}")
        if not np.all(np.isfinite(arr)):
            i = int(np.flatnonzero(~np.isfinite(arr))[0])
            raise ShapeError(f"{what} holds {arr[i]} for joint {self.joint_names[i]!r}; expected finite numbers")
        return np.arange(self.dof), arr

    def _velocities_for(self, sel: np.ndarray, qd: Any) -> np.ndarray:
        """The velocities that go with positions for joints ``sel``: zeros when ``qd`` is None,
        else ``qd``, which must name the same joints in the same order."""
        if qd is None:
            return np.zeros(len(sel))
        sel_qd, qdv = self._values(qd, "qd", partial=True)
        if not np.array_equal(sel, sel_qd):
            raise ShapeError("q and qd must name the same joints in the same order")
        return qdv

    # ------------------------------------------------------------------ control
    def set_joint_targets(self, q: Any = None, qd: Any = None, *, kp: float | Sequence[float] | None = None,
                          kd: float | Sequence[float] | None = None, forces: Any = None) -> None:
        """Position targets ``q`` (with optional velocity targets ``qd``) or, with ``q=None``,
        velocity targets ``qd`` for PyBullet's joint motors.

        A mapping by joint name commands only those joints. ``kp``/``kd`` are PyBullet's
        ``positionGain``/``velocityGain`` (its motor drives ``kp (q* - q) + kd (qd* - qd)`` to
        zero within the force limit; defaults 0.1 and 1.0); ``forces`` are the motor force
        limits (default :attr:`max_forces`). Joints under torque control switch back to motors.
        """
        if q is None and qd is None:
            raise SimbenchError("set_joint_targets needs position targets q or velocity targets qd")
        if q is not None:
            sel, qv = self._values(q, "q", partial=True)
            qdv = self._velocities_for(sel, qd)
            mode, label = p.POSITION_CONTROL, "position"
        else:
            sel, qdv = self._values(qd, "qd", partial=True)
            qv, mode, label = None, p.VELOCITY_CONTROL, "velocity"
        kwargs: dict[str, Any] = {"targetVelocities": qdv.tolist()}
        if qv is not None:
            kwargs["targetPositions"] = qv.tolist()
        f = self.max_forces[sel] if forces is None else self._broadcast(forces, len(sel), "forces", nonneg=True)
        kwargs["forces"] = f.tolist()
        if kp is not None:
            kwargs["positionGains"] = self._broadcast(kp, len(sel), "kp", nonneg=True).tolist()
        if kd is not None:
            kwargs["velocityGains"] = self._broadcast(kd, len(sel), "kd", nonneg=True).tolist()
        p.setJointMotorControlArray(self.id, self._idx[sel].tolist(), mode, physicsClientId=self._client,
                                    **kwargs)
        self._torque[sel] = False
        gains = {key: kwargs[key] for key in ("positionGains", "velocityGains") if key in kwargs}
        for k, i in enumerate(sel):
            self._modes[i] = label
            if qv is not None:  # remembered so that reset() can move the target along
                self._pos_target[int(i)] = (float(f[k]), {key[:-1]: val[k] for key, val in gains.items()})
            else:
                self._pos_target.pop(int(i), None)

    def set_torques(self, tau: Any) -> None:
        """Pure torque control: joint torques (N m) / forces (N), held until changed.

        The first call for a joint switches its motor off (``VELOCITY_CONTROL`` with force 0);
        the torques are applied at every following :meth:`Simulation.step` (PyBullet clears
        them after each step). No clipping to the effort limits. A mapping by joint name sets
        only those joints.
        """
        sel, vals = self._values(tau, "tau", partial=True)
        new = sel[~self._torque[sel]]
        if len(new):
            p.setJointMotorControlArray(self.id, self._idx[new].tolist(), p.VELOCITY_CONTROL,
                                        forces=[0.0] * len(new), physicsClientId=self._client)
        self._torque[sel] = True
        self._tau[sel] = vals
        for i in sel:
            self._modes[i] = "torque"
            self._pos_target.pop(int(i), None)

    def release(self) -> None:
        """Let every joint move freely: torque control with zero torque (motors off)."""
        self.set_torques(np.zeros(self.dof))

    def _apply(self) -> None:
        if self._torque.any():
            p.setJointMotorControlArray(self.id, self._idx[self._torque].tolist(), p.TORQUE_CONTROL,
                                        forces=self._tau[self._torque].tolist(), physicsClientId=self._client)

    def reset(self, q: Any = None, qd: Any = None) -> None:
        """Teleport the joints to ``q`` (default: the scene's initial configuration) with
        velocities ``qd`` (default 0). Joints under position control get ``q`` as their new
        target so they stay there; torques and modes are kept."""
        sel, qv = (np.arange(self.dof), self.initial_q) if q is None else self._values(q, "q", partial=True)
        qdv = self._velocities_for(sel, qd)
        p.resetJointStatesMultiDof(self.id, self._idx[sel].tolist(), targetValues=[[float(a)] for a in qv],
                                   targetVelocities=[[float(b)] for b in qdv], physicsClientId=self._client)
        for k, i in enumerate(sel):
            if int(i) in self._pos_target:
                force, gains = self._pos_target[int(i)]
                p.setJointMotorControl2(self.id, int(self._idx[i]), p.POSITION_CONTROL, targetPosition=float(qv[k]),
                                        targetVelocity=float(qdv[k]), force=force, physicsClientId=self._client,
                                        **gains)

    def change_dynamics(self, links: str | Sequence[str] | None = None, **kwargs: Any) -> None:
        """``p.changeDynamics(**kwargs)`` for the named link(s), default every link (base
        included), e.g. ``linearDamping=0, angularDamping=0`` to switch off PyBullet's default
        velocity damping (0.04 on every link) and ``jointDamping=0`` for the URDF's joint damping."""
        if links is None:
            indices = list(self.body.links.values())
        else:
            names = [links] if isinstance(links, str) else list(links)
            indices = [self.body.link_index(n) for n in names]
        for li in indices:
            p.changeDynamics(self.id, li, physicsClientId=self._client, **kwargs)

    def _broadcast(self, value: Any, n: int, what: str, nonneg: bool = False) -> np.ndarray:
        arr = np.broadcast_to(np.asarray(value, dtype=float), (n,)) if np.ndim(value) == 0 else \
            np.asarray(value, dtype=float)
        if arr.shape != (n,) or not np.all(np.isfinite(arr)) or (nonneg and np.any(arr < 0)):
            raise ShapeError(f"{what} = {value!r}; expected one non-negative number or {n} of them")
        return arr

    def __repr__(self) -> str:
        return f"Robot({self.name!r}, dof={self.dof}, joints={list(self.joint_names)})"


def _finite(v: Any, what: str) -> float:
    try:
        x = float(v)
    except (TypeError, ValueError):
        raise ShapeError(f"{what} = {v!r}; expected a number") from None
    if not math.isfinite(x):
        raise ShapeError(f"{what} = {v!r}; expected a finite number")
    return x


# ====================================================================== the simulation
class Simulation:
    """The main server (GUI or DIRECT) and the collision server with ``scene`` loaded, plus
    simulated time, the robot, recordings and the collision detector.

    ``scene``: a :class:`~simbench.bullet.scene.Scene`, a TOML path, a dict in the scene-file
    layout (relative URDF paths are taken from the current directory), or ``None`` for the
    bundled KUKA-among-cubes scene. ``gui``: ``True``, ``False``
    or ``None`` (a window when a display exists). ``dt``: the physics time step (s).
    ``real_time``: sleep so that simulated time keeps pace with the wall clock (for watching).
    ``duration``: when set, :meth:`step` raises :class:`SimulationDone` once ``t`` reaches it.
    ``seed``: for ``sim.rng``. ``sync_rendering``: in the GUI, draw one frame per step
    (``COV_ENABLE_SINGLE_STEP_RENDERING``) instead of continuously; every PyBullet call is then
    a quick round trip to the window's thread (measured under Xvfb: a step 2.6 ms instead of
    25 ms, reading the joint states 0.4 ms instead of 27 ms), but the window only redraws while
    the simulation steps.
    """

    def __init__(self, scene: Scene | str | os.PathLike | Mapping | None = None, gui: bool | None = None,
                 dt: float = 1 / 240, real_time: bool = False, *, duration: float | None = None,
                 seed: int | None = None, sync_rendering: bool = True):
        dt = float(dt)
        if not (math.isfinite(dt) and 0 < dt <= 1):
            raise SimbenchError(f"dt = {dt!r}; expected a time step in seconds, 0 < dt <= 1")
        if duration is not None and not (math.isfinite(float(duration)) and float(duration) > 0):
            raise SimbenchError(f"duration = {duration!r}; expected a positive number of seconds or None")
        if isinstance(scene, Mapping):
            scene = Scene.from_dict(scene)
        self.dt, self.real_time = dt, bool(real_time)
        self.duration = duration
        self.rng = np.random.default_rng(seed)
        #: where scripts write plots and data (``simbench run --out``)
        self.out_dir = Path("out")
        self._steps = 0
        self._stop: str | None = None
        self._recordings: list[Recording] = []
        self._callbacks: list[Callable[["Simulation"], None]] = []
        self._robot: Robot | None = None
        self._handles: dict[str, Robot] = {}
        self._debug_items: dict[str, list[int]] = {}
        self._wall0: float | None = None
        self._closed = False
        self.camera = {"target": (0.0, 0.0, 0.5), "distance": 2.8, "yaw": 225.0, "pitch": -25.0}
        self.pair: ServerPair = connect(scene, gui)
        try:
            p.setTimeStep(dt, physicsClientId=self.client)
            if self.gui:
                self._apply_camera()
                if sync_rendering:
                    p.configureDebugVisualizer(p.COV_ENABLE_SINGLE_STEP_RENDERING, 1,
                                               physicsClientId=self.client)
        except BaseException:
            self.pair.close()
            raise

    # ------------------------------------------------------------------ servers & bodies
    @property
    def client(self) -> int:
        """The main server's PyBullet client id."""
        return self.pair.main.client

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
        """Our :class:`~simbench.model.RobotModel` of the robot."""
        return self.robot.model

    def reset(self, q: Any = None, qd: Any = None) -> None:
        """Reset the robot's joints (see :meth:`Robot.reset`); ``t`` is not changed."""
        self.robot.reset(q, qd)

    def set_pose(self, body: str, position: Any, orientation: Any = (0, 0, 0, 1),
                 linear_velocity: Any = None, angular_velocity: Any = None) -> None:
        """Teleport a body's base link frame: position (3,), orientation as a quaternion
        (x, y, z, w) or a rotation matrix (3, 3), optional world-frame velocities (of the COM)."""
        pos = np.asarray(position, dtype=float)
        rot = np.asarray(orientation, dtype=float)
        if pos.shape != (3,) or not np.all(np.isfinite(pos)):
            raise ShapeError(f"position has shape {pos.shape}; expected (3,) finite metres")
        if rot.shape == (3, 3):
            rot = _quat_from_matrix(rot)
        elif rot.shape != (4,) or not np.all(np.isfinite(rot)) or np.linalg.norm(rot) == 0:
            raise ShapeError(f"orientation has shape {rot.shape}; expected a quaternion (x, y, z, w) "
                             f"(4,) or a rotation matrix (3, 3)")
        bid = lookup(self.bodies, body, "body", "the simulation")
        # PyBullet places the base by its inertial (COM) frame: base COM = base link * inertial
        local_pos, local_orn = p.getDynamicsInfo(bid, -1, physicsClientId=self.client)[3:5]
        com_pos, com_orn = p.multiplyTransforms(pos.tolist(), (rot / np.linalg.norm(rot)).tolist(),
                                                local_pos, local_orn, physicsClientId=self.client)
        p.resetBasePositionAndOrientation(bid, com_pos, com_orn, physicsClientId=self.client)
        if linear_velocity is not None or angular_velocity is not None:
            lin = [0.0] * 3 if linear_velocity is None else np.asarray(linear_velocity, float).tolist()
            ang = [0.0] * 3 if angular_velocity is None else np.asarray(angular_velocity, float).tolist()
            p.resetBaseVelocity(bid, lin, ang, physicsClientId=self.client)

    def base_pose(self, body: str) -> tuple[np.ndarray, np.ndarray]:
        """World position (3,) and quaternion (x, y, z, w) of a body's base *link frame* (PyBullet's
        ``getBasePositionAndOrientation`` gives its inertial frame instead)."""
        bid = lookup(self.bodies, body, "body", "the simulation")
        com_pos, com_orn = p.getBasePositionAndOrientation(bid, physicsClientId=self.client)
        local_pos, local_orn = p.getDynamicsInfo(bid, -1, physicsClientId=self.client)[3:5]
        inv_pos, inv_orn = p.invertTransform(local_pos, local_orn, physicsClientId=self.client)
        pos, orn = p.multiplyTransforms(com_pos, com_orn, inv_pos, inv_orn, physicsClientId=self.client)
        return np.array(pos), np.array(orn)

    def detector(self, pairs: Any, **kwargs: Any):
        """A :class:`~simbench.bullet.collision.CollisionDetector` for ``pairs`` of named
        objects, bound to the collision server (queries never move the main simulation)."""
        from .bullet.collision import CollisionDetector

        kwargs.setdefault("robot", self.pair.main.robot_name)
        return CollisionDetector(self.pair.collision, pairs=list(pairs), **kwargs)

    def draw_closest_points(self, results: Sequence[Any], key: str = "closest", **kwargs: Any) -> list[int]:
        """Draw closest-point segments (from ``detector.closest_points(q)``) in the main
        server, coloured by clearance; a later call with the same ``key`` moves those lines
        instead of adding new ones. Debug lines show in the GUI only (not in recorded frames)."""
        from .bullet.collision import draw_closest_points

        old = self._debug_items.get(key)
        replace = old if old is not None and len(old) == len(results) else None
        if old is not None and replace is None:
            for item in old:
                if item >= 0:
                    p.removeUserDebugItem(item, physicsClientId=self.client)
        ids = draw_closest_points(self.client, results, replace=replace, **kwargs)
        self._debug_items[key] = ids
        return ids

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
        ``stepSimulation``, run the step callbacks, write due recording frames and, with
        ``real_time``, sleep to keep pace with the wall clock. Raises :class:`SimulationDone`
        when the run is over."""
        n = int(n)
        if n < 0:
            raise SimbenchError(f"step(n={n}): n must be >= 0")
        for _ in range(n):
            reason = self._done_reason()
            if reason is not None:
                raise SimulationDone(reason)
            for handle in self._handles.values():
                handle._apply()
            p.stepSimulation(physicsClientId=self.client)
            self._steps += 1
            for cb in list(self._callbacks):  # first, so that frames show what they set
                cb(self)
            for rec in list(self._recordings):
                rec._on_step()
            if self.real_time:
                self._pace()
        return self.t

    def advance(self, seconds: float) -> float:
        """Step for ``seconds`` of simulated time (rounded to whole steps); returns ``t``."""
        return self.step(max(0, round(float(seconds) / self.dt)))

    def run_until(self, t: float, callback: Callable[["Simulation"], None] | None = None) -> float:
        """Step until simulated time ``t`` (rounded to whole steps) or until the run is over,
        whichever comes first, without raising :class:`SimulationDone`; ``callback(sim)`` is a
        step callback meanwhile (see :meth:`add_step_callback`). Returns ``t``."""
        n = round(float(t) / self.dt)
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

    # ------------------------------------------------------------------ images
    def set_camera(self, target: Any = None, distance: float | None = None, yaw: float | None = None,
                   pitch: float | None = None) -> None:
        """Orbit camera used for headless frames and, in the GUI, for the window's view."""
        if target is not None:
            t = np.asarray(target, dtype=float)
            if t.shape != (3,) or not np.all(np.isfinite(t)):
                raise ShapeError(f"camera target has shape {t.shape}; expected (3,) finite metres")
            self.camera["target"] = tuple(t.tolist())
        for key, val in (("distance", distance), ("yaw", yaw), ("pitch", pitch)):
            if val is not None:
                self.camera[key] = _finite(val, f"camera {key}")
        if self.gui:
            self._apply_camera()

    def _apply_camera(self) -> None:
        c = self.camera
        p.resetDebugVisualizerCamera(c["distance"], c["yaw"], c["pitch"], list(c["target"]),
                                     physicsClientId=self.client)

    def frame(self, size: tuple[int, int] = (640, 480)) -> np.ndarray:
        """An RGB image (H, W, 3) uint8: in the GUI what the window's camera sees (OpenGL
        renderer), headless the orbit camera ``sim.camera`` with the tiny renderer."""
        w, h = _check_size(size)
        if self.gui:
            view = p.getDebugVisualizerCamera(physicsClientId=self.client)[2]
            renderer = p.ER_BULLET_HARDWARE_OPENGL
        else:
            c = self.camera
            view = p.computeViewMatrixFromYawPitchRoll(list(c["target"]), c["distance"], c["yaw"],
                                                       c["pitch"], 0, 2, physicsClientId=self.client)
            renderer = p.ER_TINY_RENDERER
        proj = p.computeProjectionMatrixFOV(60, w / h, 0.02, 50, physicsClientId=self.client)
        _, _, rgba, _, _ = p.getCameraImage(w, h, view, proj, renderer=renderer, physicsClientId=self.client)
        return np.asarray(rgba, dtype=np.uint8).reshape(h, w, 4)[:, :, :3].copy()

    def screenshot(self, path: str | os.PathLike | None = None, size: tuple[int, int] = (640, 480)) -> np.ndarray:
        """:meth:`frame`, also written as a PNG when ``path`` is given."""
        img = self.frame(size)
        if path is not None:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            write_png(path, img)
        return img

    def record(self, path: str | os.PathLike, fps: float = 30, size: tuple[int, int] = (640, 480)) -> Recording:
        """Start writing a GIF (needs Pillow) or MP4 (needs ffmpeg) of the run: a frame now and
        every ``1/fps`` s of simulated time. Finished by ``.stop()``, by leaving a ``with``
        block, or when the simulation closes. A clear :class:`RecordingError` up front when the
        format or its encoder is unavailable."""
        rec = Recording(self, path, fps, size)
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
        self.pair.close()
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


def _quat_from_matrix(R: np.ndarray) -> np.ndarray:
    """Unit quaternion (x, y, z, w) of a rotation matrix (Shepperd's method)."""
    if not np.all(np.isfinite(R)) or not np.allclose(R @ R.T, np.eye(3), atol=1e-6) or np.linalg.det(R) < 0:
        raise ShapeError("orientation matrix is not a rotation (R R^T = 1, det R = 1)")
    tr = np.trace(R)
    if tr > 0:
        s = 2 * math.sqrt(tr + 1)
        q = [(R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s, s / 4]
    else:
        i = int(np.argmax(np.diag(R)))
        j, k = (i + 1) % 3, (i + 2) % 3
        s = 2 * math.sqrt(1 + R[i, i] - R[j, j] - R[k, k])
        q = [0.0, 0.0, 0.0, (R[k, j] - R[j, k]) / s]
        q[i] = s / 4
        q[j] = (R[j, i] + R[i, j]) / s
        q[k] = (R[k, i] + R[i, k]) / s
    q = np.array(q)
    return q / np.linalg.norm(q)


__all__ = ["Simulation", "SimulationDone", "Robot", "Recording", "RecordingError", "GifWriter",
           "Mp4Writer", "open_writer", "ffmpeg_executable", "SUPPORTED_RECORDING_FORMATS"]
