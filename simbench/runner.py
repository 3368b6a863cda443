"""``simbench run SCRIPT.py``: run a scenario script in a :class:`~simbench.sim.Simulation`.

A script defines ``def main(sim): ...`` and may set, at module level:

* ``SCENE``: a scene TOML path or a URDF or xacro path (relative to the script, or
  ``pybullet_data:NAME``; a URDF becomes a one-body scene with a fixed base named "robot"), a
  dict in the scene-file layout (URDF paths relative to the script), or a
  :class:`~simbench.bullet.scene.Scene`. Default: the bundled KUKA-among-cubes scene.
* ``DURATION``: simulated seconds after which ``sim.step()`` raises
  :class:`~simbench.sim.SimulationDone` (``--duration`` overrides; ``None``: no limit).
* ``DT``: the time step (default 1/240 s); ``CAMERA``: keyword arguments of ``sim.set_camera``.

``main`` returns ``None`` or a dict of results, which are printed. The runner prints progress
for long runs. Ctrl-C (SIGINT) and SIGTERM stop the script at once, also between steps (a
script busy computing or sleeping): the handler raises ``KeyboardInterrupt`` or
:class:`Terminated` in the main thread, and ``sim.running`` turns False so that a script that
catches it still stops at its next ``sim.step()``. Either way the recording is finished and
both servers are closed; the exit status is 130 after SIGINT, 143 (128 + 15) after SIGTERM.
A script that raises gets its recording finished too, its traceback printed, exit status 1;
so does one that raises while it is imported (before ``main``; nothing is open yet): its
traceback and ``simbench run: SCRIPT failed while loading (before main): ...``.
``--gui`` without a reachable display logs one line and runs headless
(:mod:`simbench.bullet.display`); ``--render`` chooses how the window draws
(:mod:`simbench.sim.window`). Output paths (``--record``, ``--screenshot``) are checked before
anything runs: an unwritable one is a usage error (exit 2).

A script can run itself with ``python SCRIPT.py [options]`` by ending with::

    if __name__ == "__main__":
        from simbench.runner import main as _run
        raise SystemExit(_run([__file__, *sys.argv[1:]]))
"""
from __future__ import annotations

import argparse
import inspect
import logging
import math
import os
import runpy
import signal
import sys
import threading
import time
import traceback
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import numpy as np

from .errors import RecordingError, SimbenchError, closest, shown, shown_path
from .paths import resolve_path

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_INTERRUPTED, EXIT_TERMINATED = 0, 1, 2, 130, 143


class Terminated(BaseException):
    """Raised in the main thread by simbench's SIGTERM handler (like ``KeyboardInterrupt`` for
    SIGINT), so that ``with`` blocks, ``finally`` clauses and finalizers run."""


@dataclass
class RunResult:
    """What :func:`run_script` did. ``reason``: ``"finished"`` (main returned),
    ``"duration"``, ``"interrupted"`` (SIGINT), ``"terminated"`` (SIGTERM), ``"window closed"``
    or ``"error"``."""

    script: Path
    reason: str
    value: Any = None
    t: float = 0.0
    steps: int = 0
    wall: float = 0.0
    gui: bool = False
    recording: Path | None = None
    frames: int = 0
    screenshot: Path | None = None
    error: BaseException | None = field(default=None, repr=False)

    @property
    def exit_code(self) -> int:
        return {"interrupted": EXIT_INTERRUPTED, "terminated": EXIT_TERMINATED,
                "error": EXIT_ERROR}.get(self.reason, EXIT_OK)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``simbench run``."""
    parser.add_argument("script", help="a Python file that defines main(sim)")
    add_window_arguments(parser)
    parser.add_argument("--duration", type=float, metavar="S",
                        help="stop after S seconds of simulated time (default: the script's DURATION)")
    parser.add_argument("--record", metavar="FILE", help="write a .gif (Pillow) or .mp4 (ffmpeg) of the run")
    parser.add_argument("--fps", type=float, default=30.0, help="recording frames per simulated second (30)")
    parser.add_argument("--size", type=_size, default=(640, 480), metavar="WxH",
                        help="recording and screenshot size in pixels (640x480)")
    parser.add_argument("--scene", metavar="FILE", help="a scene TOML or URDF instead of the script's SCENE")
    parser.add_argument("--dt", type=float, help="physics time step in s (default: the script's DT or 1/240)")
    parser.add_argument("--real-time", action=argparse.BooleanOptionalAction, default=None,
                        help="keep pace with the wall clock (default: only with a GUI)")
    parser.add_argument("--seed", type=int, help="seed of sim.rng")
    parser.add_argument("--screenshot", metavar="PNG", help="save the last view as a PNG at the end")
    parser.add_argument("--out", metavar="DIR", default="out", help="folder for the script's plots (out)")
    parser.add_argument("-q", "--quiet", action="store_true",
                        help="warnings and errors only (as simbench -q run): no start or progress lines, no "
                             "summary unless the run was stopped or failed")


def add_window_arguments(parser: argparse.ArgumentParser,
                         direct_help: str = "headless (DIRECT) main server") -> None:
    """``--gui | --direct`` and ``--render {continuous,sync}``, shared by demo, run and view."""
    from .sim.window import RENDER_MODES

    view = parser.add_mutually_exclusive_group()
    view.add_argument("--gui", dest="gui", action="store_true", default=None,
                      help="open the PyBullet GUI (headless, with one line, when no display answers)")
    view.add_argument("--direct", dest="gui", action="store_false", help=direct_help)
    parser.add_argument("--render", choices=RENDER_MODES, default="continuous",
                        help="how the GUI window draws: continuous (default; PyBullet's own render "
                             "loop) or sync (single-step rendering, redrawn ~15 times a second)")


def _size(text: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"size {shown(text)}: expected WIDTHxHEIGHT, e.g. 640x480") from None
    return w, h


def _quiet(args: argparse.Namespace) -> bool:
    """``run -q`` or ``simbench -q run``: warnings and errors only."""
    from . import log

    return bool(args.quiet) or getattr(args, "log_verbosity", log.NORMAL) == log.QUIET


def run_cli(args: argparse.Namespace) -> int:
    """Entry point of ``simbench run``; returns the exit status (130 after Ctrl-C, 143 after
    SIGTERM)."""
    if args.duration is not None and not (math.isfinite(args.duration) and args.duration > 0):
        raise SimbenchError(f"--duration {shown(args.duration)}: expected a positive number of seconds, "
                            f"e.g. --duration 1 (leave it out for the script's DURATION)")
    try:
        result = run_script(args.script, gui=args.gui, duration=args.duration, record=args.record,
                            fps=args.fps, size=args.size, scene=args.scene, dt=args.dt,
                            real_time=args.real_time, seed=args.seed, screenshot=args.screenshot,
                            out_dir=args.out, progress=not _quiet(args), render=args.render, quiet=_quiet(args))
    except Terminated:  # before the handlers were installed or after they were restored
        print("simbench run: terminated (SIGTERM)", file=sys.stderr)
        return EXIT_TERMINATED
    return result.exit_code


def load_script(path: str | os.PathLike) -> dict[str, Any]:
    """Execute a scenario script (as module ``__simbench_script__``) and return its globals."""
    try:   # "script not found: 'myscrpt.py'; did you mean 'myscript.py'?"
        resolve_path(path, what="script")
    except SimbenchError as exc:
        raise SimbenchError(str(exc)) from None
    path = Path(path)
    try:
        return runpy.run_path(str(path), run_name="__simbench_script__")
    except SyntaxError as exc:  # the file is not a script yet: one line naming where
        raise SimbenchError(f"{shown_path(str(path))} line {exc.lineno}: {exc.msg}; expected a Python script "
                            f"that defines main(sim)") from None


def _script_frames(exc: BaseException, script: Path):
    """The part of ``exc``'s traceback from the first frame in ``script`` on (None when no
    frame is in it): the user's frames, without the runner's and runpy's."""
    target = os.path.abspath(script)
    tb = exc.__traceback__
    while tb is not None:
        if os.path.abspath(tb.tb_frame.f_code.co_filename) == target:
            return tb
        tb = tb.tb_next
    return None


def _check_main(main: Any, script: Path) -> None:
    """A usage error, before any server starts, when ``main`` cannot be called as ``main(sim)``."""
    try:
        sig = inspect.signature(main)
    except (TypeError, ValueError):   # a callable without a signature: tried at run time
        return
    try:
        sig.bind(None)
    except TypeError:
        where = f"{script.name}:{main.__code__.co_firstlineno}" if hasattr(main, "__code__") else script.name
        raise SimbenchError(f"{where}: main{sig} cannot be called as main(sim); a scenario script needs "
                            f"'def main(sim): ...' (one argument, the Simulation)") from None


def _scene_from(value: Any, base: Path, label: str = "SCENE"):
    """The scene argument for Simulation from SCENE / --scene (``label`` names it in messages)."""
    from .bullet.scene import Scene

    if value is None or isinstance(value, Scene):
        return value
    if isinstance(value, Mapping):
        return Scene.from_dict(value, base_dir=base, source=label)
    text = os.fspath(value)
    if text.endswith((".urdf", ".xacro")):  # a robot file (.urdf, .xacro, .urdf.xacro)
        scene = Scene.from_dict({"body": [{"name": "robot", "urdf": text, "fixed_base": True}]},
                                base_dir=base, source=text)
        free = [i for i in scene.bodies[0].robot_model().issues if i.kind == "free_root"]
        if free:   # legs or wheels welded to the world: said, as the scene's free arm is
            logging.getLogger(__name__).warning(
                "%s: a URDF given as the scene is mounted (fixed_base = true), but its root carries %d limbs "
                "(%s), as a legged or wheeled robot's does; to let it stand, walk or roll, give a scene TOML "
                "with this body and fixed_base = false", text, len(free[0].data["limbs"]),
                ", ".join(free[0].data["limbs"]))
        return scene
    path = Path(text).expanduser()
    # --scene (from the current folder) is named in messages as the user wrote it
    return Scene.from_toml(path if path.is_absolute() or base == Path.cwd() else base / path)


def run_script(script: str | os.PathLike, *, gui: bool | None = None, duration: float | None = None,
               record: str | os.PathLike | None = None, fps: float = 30.0,
               size: tuple[int, int] = (640, 480), scene: Any = None, dt: float | None = None,
               real_time: bool | None = None, seed: int | None = None,
               screenshot: str | os.PathLike | None = None, out_dir: str | os.PathLike = "out",
               progress: bool = True, stream: IO[str] | None = None, render: str = "continuous",
               quiet: bool = False) -> RunResult:
    """Run ``script``'s ``main(sim)``; see the module docstring. Script errors are printed
    with their traceback (``reason="error"``); setup errors (including unwritable output
    paths, checked first) raise :class:`SimbenchError`. ``progress=False``: no start or progress
    lines; ``quiet`` (``-q``): no summary line either when the run ended as planned (finished,
    its duration reached; a stop or a failure is still said)."""
    from .outputs import png_file, writable_file
    from .sim import Simulation, SimulationDone
    from .sim.camera import describe
    from .sim.recording import check_format, check_mp4, check_size

    stream = sys.stderr if stream is None else stream
    if not isinstance(script, (str, os.PathLike)):
        raise SimbenchError(f"script = {shown(script)}; expected the path of a Python file that defines main(sim)")
    script = Path(script)
    if record is not None:  # before any work: a bad path is a one-line usage error
        suffix = check_format(record)
        check_size(size)
        if suffix == ".mp4":  # ffmpeg there, an even size
            check_mp4(record, size)
        if not (np.isfinite(fps) and fps > 0):
            raise RecordingError(f"fps = {shown(fps)}; expected a positive number of frames per second")
        writable_file(record, "recording")
    if screenshot is not None:
        png_file(screenshot, "--screenshot", "screenshot")   # PNG data under any name: .png only
    try:
        namespace = load_script(script)
    except Exception as exc:
        tb = _script_frames(exc, script)
        if tb is None:  # not raised by the script's code (e.g. script not found): a usage error
            raise
        # the script's own error while it is imported (no server is open yet): shown like an
        # error inside main, with the script's frames
        traceback.print_exception(type(exc), exc, tb, file=stream)
        print(f"simbench run: {script.name} failed while loading (before main): "
              f"{type(exc).__name__}: {exc}", file=stream, flush=True)
        return RunResult(script=script, reason="error", error=exc)
    main = namespace.get("main")
    if not callable(main):
        near = closest("main", [k for k, v in namespace.items() if callable(v) and not k.startswith("__")], n=1)
        hint = f" ({near[0]!r} is defined: did you mean main?)" if near else ""
        raise SimbenchError(f"{script} defines no main(sim) function{hint}; a scenario script needs "
                            f"'def main(sim): ...'")
    _check_main(main, script)
    base = script.resolve().parent
    scene_arg = _scene_from(scene, Path.cwd(), "--scene") if scene is not None else \
        _scene_from(namespace.get("SCENE"), base, f"SCENE of {script.name}")
    if duration is None:
        duration = namespace.get("DURATION")  # Simulation checks it (and dt)
    dt = float(dt if dt is not None else namespace.get("DT", 1 / 240))

    sim = Simulation(scene_arg, gui=gui, dt=dt, real_time=False, duration=duration, seed=seed, render=render)
    result = RunResult(script=script, reason="finished", gui=sim.gui)
    wall0 = time.perf_counter()
    restore = _install_stop_handlers(sim, stream)
    rec = None
    try:
        sim.real_time = sim.gui if real_time is None else bool(real_time)
        sim.out_dir = Path(out_dir)
        if namespace.get("CAMERA"):
            sim.set_camera(**namespace["CAMERA"])
        if sim.gui and not quiet:
            print(f"simbench run: GUI window ({sim.window.render} rendering); {describe(sim.camera)} "
                  f"({sim.window.mouse_note()})", file=stream, flush=True)
        if record is not None:
            rec = sim.record(record, fps=fps, size=size)
            result.recording = rec.path
        if progress:
            sim.add_step_callback(_progress_printer(script.name, stream, wall0))
        try:
            result.value = main(sim)
        except SimulationDone as done:
            result.reason = done.reason
        except KeyboardInterrupt:
            result.reason = "interrupted"
        except Terminated:
            result.reason = "terminated"
        except Exception as exc:
            if sim.gui and not sim.closed and not _connected(sim):  # the user closed the window mid-call
                result.reason = "window closed"
            else:  # the script's own bug: show where it is
                result.reason, result.error = "error", exc
                traceback.print_exc(file=stream)
        if result.reason == "finished" and sim._stop in ("interrupted", "terminated"):
            result.reason = sim._stop  # main caught the signal's exception and returned
    finally:
        # finishing the recording must not be cut short by another Ctrl-C
        _ignore_signals()
        try:
            if rec is not None:  # even when the script stopped it itself
                result.frames = rec.frames
            if screenshot is not None and not sim.closed and _connected(sim):
                sim.screenshot(screenshot, size)
                result.screenshot = Path(screenshot)
            elif screenshot is not None:   # said, not silently missing
                logging.getLogger(__name__).warning(
                    "--screenshot %s not written: %s", os.fspath(screenshot),
                    "the script closed the simulation (sim.close()) before it ended; take it in the script with "
                    "sim.screenshot(PATH)" if sim.closed else "the window was closed")
            result.t, result.steps = sim.t, sim.steps
            sim.close()
        finally:
            restore()
    result.wall = time.perf_counter() - wall0
    if not quiet or result.reason not in ("finished", "duration"):   # quiet: only a stop or failure is said
        _report(result, stream)
    elif isinstance(result.value, Mapping) and result.value:   # the script's own output
        _results(result.value)
    return result


def _connected(sim: Any) -> bool:
    from ._quiet import import_pybullet

    return bool(import_pybullet().isConnected(physicsClientId=sim.client))


def _progress_printer(name: str, stream: IO[str], wall0: float, every: float = 2.0, most: float = 30.0):
    """A step callback printing ``t`` and the speed after ``every`` wall-clock seconds, then at
    twice the gap each time up to ``most`` (a slow GUI run printed a line every 2 s: 45 lines
    for 3 s of motion), timed from the first step (loading the scene is not simulation time)."""
    state: dict[str, float] = {}

    def callback(sim: Any) -> None:
        now = time.perf_counter()
        if not state:
            state.update(start=now, t0=sim.t, next=now + every, gap=every)
        elif now >= state["next"]:
            state["gap"] = min(2 * state["gap"], most)
            state["next"] = now + state["gap"]
            total = f" / {sim.duration:g} s" if sim.duration is not None else " s"
            speed = (sim.t - state["t0"]) / (now - state["start"])
            print(f"simbench run: {name}: t = {sim.t:.2f}{total}  ({speed:.2f}x real time)",
                  file=stream, flush=True)

    return callback


def _install_stop_handlers(sim: Any, stream: IO[str]):
    """SIGINT / SIGTERM: stop the simulation and raise ``KeyboardInterrupt`` / :class:`Terminated`
    in the main thread at once (a script between steps stops too). Returns the restorer."""
    return stop_on_signals(sim.request_stop, stream, "simbench run", lambda: sim.recordings)


def stop_on_signals(request_stop: Any, stream: IO[str] | None, prefix: str, recordings: Any = None):
    """Install the SIGINT / SIGTERM handlers of ``simbench run``, ``demo`` and ``view``:
    ``request_stop(reason)`` (may be None), one line on ``stream`` (naming the recordings being
    finished, ``recordings()``, when there are any), then raise. Returns a function that restores
    the previous handlers (a no-op outside the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None

    def handler(signum: int, frame: Any) -> None:
        reason = "interrupted" if signum == signal.SIGINT else "terminated"
        if request_stop is not None:
            request_stop(reason)
        if stream is not None:
            n = len(recordings()) if recordings is not None else 0
            finishing = f"finishing {'the recording' if n == 1 else f'{n} recordings'}, " if n else ""
            tty = getattr(stream, "isatty", lambda: False)()   # a new line after the terminal's ^C only
            print(f"{chr(10) if tty else ''}{prefix}: {signal.Signals(signum).name}: stopping ({finishing}closing "
                  "the servers)", file=stream, flush=True)
        _ignore_signals()  # the clean-up that follows must not be cut short
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        raise Terminated(signal.Signals(signum).name)

    old = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}

    def restore() -> None:
        for s, h in old.items():
            signal.signal(s, h)

    return restore


def _ignore_signals() -> None:
    if threading.current_thread() is threading.main_thread():
        for s in (signal.SIGINT, signal.SIGTERM):
            signal.signal(s, signal.SIG_IGN)


def _report(result: RunResult, stream: IO[str]) -> None:
    how = {"finished": "finished", "duration": "reached its duration", "interrupted": "interrupted",
           "terminated": "terminated (SIGTERM)",
           "window closed": "stopped: the GUI window was closed", "error": "failed"}.get(result.reason, result.reason)
    lines = [f"simbench run: {result.script.name} {how} at t = {result.t:.3f} s ({result.steps} steps, "
             f"{result.wall:.1f} s wall, {'GUI' if result.gui else 'headless'}); servers closed"]
    if result.recording is not None:
        lines.append(f"simbench run: recording {result.recording} ({result.frames} "
                     f"frame{'' if result.frames == 1 else 's'})")
    if result.screenshot is not None:
        lines.append(f"simbench run: screenshot {result.screenshot}")
    print("\n".join(lines), file=stream, flush=True)
    if isinstance(result.value, Mapping) and result.value:
        _results(result.value)


def _results(value: Mapping) -> None:
    print("results:")
    for key, val in value.items():
        print(f"  {key}: {_fmt(val)}")
    sys.stdout.flush()


def _fmt(value: Any) -> str:
    if isinstance(value, np.ndarray):
        if value.size > 12:
            return f"array of shape {value.shape}"
        return np.array2string(value, precision=6, max_line_width=120)
    if isinstance(value, (float, np.floating)):
        return f"{float(value):.6g}"
    return str(value)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m simbench.runner SCRIPT.py [options]``: the same as ``simbench run`` (the
    command line's error lines, logging and ``--package`` / ``--xacro-arg``)."""
    from .cli import main as simbench_main

    return simbench_main(["run", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
