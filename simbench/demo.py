"""``simbench demo``: the KUKA-among-cubes scene (Adam Heins, "shortest distances with
PyBullet") in a :class:`~simbench.sim.Simulation`.

The arm moves through a scripted motion on the main server (a window when a display answers,
at real-time pace); at every waypoint the collision server answers how far
``lbr_iiwa_link_7`` is from the ground and each cube, without touching the main server. The
closest-point segments are drawn in the window (coloured by clearance, labelled with their
distance, next to the simulated time); headless, ``OUT/demo.png`` shows the last waypoint
with the same segments, the waypoint's number and the distances drawn in (the last waypoint
reached when the demo is interrupted: ``simbench demo: interrupted``, exit status 130).

The library part (:func:`waypoints`) yields rows; the command (:func:`run_cli`) prints them.
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

LINK = ("robot", "lbr_iiwa_link_7")
OBSTACLES = ("ground", "cube1", "cube2", "cube3")
# joint-space waypoints (rad) of the scripted motion: reach towards each cube and back
WAYPOINTS = np.array([
    [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
    [0.785, 1.2, 0.0, -0.6, 0.0, 0.6, 0.0],
    [0.785, 1.5, 0.0, -0.2, 0.0, 0.3, 0.0],
    [-2.36, 1.2, 0.0, -0.8, 0.0, 0.5, 0.0],
    [-0.785, 1.0, 0.3, -1.2, 0.0, 0.8, 0.0],
    [0.0, 0.6, 0.0, -1.6, 0.0, 0.9, 0.0],
])
SETTLE_STEPS = 120   # physics steps (1/240 s) spent moving to each waypoint
FORCE = 300.0        # N m, motor force limit


@dataclass(frozen=True)
class Row:
    """One waypoint: its index, the arm's configuration, the distances (m) from link 7 to each
    of :data:`OBSTACLES` and the names of those it touches."""

    index: int
    q: np.ndarray
    distances: np.ndarray
    colliding: tuple[str, ...]


def waypoints(sim, steps: int = len(WAYPOINTS), settle_steps: int = SETTLE_STEPS) -> Iterator[Row]:
    """Drive ``sim.robot`` through the first ``steps`` waypoints (all when ``steps <= 0``) and
    yield a :class:`Row` at each; the closest points are shown with ``sim.draw_closest_points``
    (in the window also while the arm moves)."""
    from .bullet.collision import NamedCollisionObject

    robot = sim.robot
    link = NamedCollisionObject(*LINK)
    detector = sim.detector([(link, NamedCollisionObject(name)) for name in OBSTACLES], robot=LINK[0])
    count = min(steps, len(WAYPOINTS)) if steps > 0 else len(WAYPOINTS)
    every = max(1, round(1 / 30 / sim.dt))

    def follow(s) -> None:  # in the window, the segments follow the arm (30 times per simulated s)
        if s.steps % every == 0:
            s.draw_closest_points(detector.closest_points(robot.q, 2.0))

    if sim.gui:
        sim.add_step_callback(follow)
    try:
        for k in range(count):
            robot.set_joint_targets(WAYPOINTS[k], forces=FORCE)
            sim.step(settle_steps)
            q = robot.q
            points = detector.closest_points(q, 2.0)
            sim.draw_closest_points(points)
            dist = np.array([r.distance for r in points])
            colliding = tuple(str(r.b.body) for r in points if r.distance < 0)
            yield Row(k, q, dist, colliding)
    finally:
        sim.remove_step_callback(follow)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``simbench demo``."""
    from .runner import add_window_arguments

    add_window_arguments(parser)
    parser.add_argument("--out", default="out", help="folder for demo.png when headless (default: out)")
    parser.add_argument("--steps", type=int, default=len(WAYPOINTS),
                        help=f"waypoints of the scripted motion, 1 to {len(WAYPOINTS)} (default: {len(WAYPOINTS)})")
    parser.add_argument("--hold", type=float, default=0.0, metavar="S",
                        help="keep the window open S seconds after the motion (default: 0)")


def run_cli(args: argparse.Namespace) -> int:
    if args.steps > len(WAYPOINTS):   # (below 1: the command line's number check)
        from .errors import SimbenchError

        raise SimbenchError(f"--steps {args.steps}: the demo has {len(WAYPOINTS)} waypoints; expected "
                            f"1 to {len(WAYPOINTS)} (closest valid: --steps {len(WAYPOINTS)})")
    return run_demo(gui=args.gui, out=Path(args.out), steps=args.steps, render=args.render,
                    hold=args.hold)


def run_demo(gui: bool | None = None, out: Path = Path("out"), steps: int = len(WAYPOINTS),
             settle_steps: int = SETTLE_STEPS, render: str = "continuous", hold: float = 0.0) -> int:
    """The command: prints the table, writes ``out/demo.png`` headless; returns the exit status
    (130 after Ctrl-C, 143 after SIGTERM)."""
    from .outputs import writable_dir
    from .runner import EXIT_INTERRUPTED, EXIT_TERMINATED, Terminated, stop_on_signals
    from .sim import Simulation, SimulationDone
    from .sim.camera import describe

    out = writable_dir(out, "--out folder")  # before any work; made when demo.png is written
    sim = Simulation(None, gui=gui, real_time=gui is not False, render=render)
    # the handler stops quietly: one line below, the same as a Ctrl-C at any other moment
    restore = stop_on_signals(sim.request_stop, None, "simbench demo", lambda: sim.recordings)
    last, stopped = None, ""
    try:
        sim.real_time = sim.gui
        mode = "GUI" if sim.gui else "DIRECT (headless)"
        print(f"simbench demo: main server {mode}, collision server DIRECT; bodies {sim.bodies}")
        print(describe(sim.camera) + (f" ({sim.window.mouse_note()})" if sim.gui else ""))
        print(f"distance from {LINK[0]}:{LINK[1]} to each obstacle [m], queried on the collision server:")
        print(f"{'waypoint':>8s}  " + "  ".join(f"{n:>8s}" for n in OBSTACLES) + "  colliding", flush=True)
        for row in waypoints(sim, steps, settle_steps):
            last = row   # before its line: a Ctrl-C after the line keeps its picture
            print(f"{row.index:8d}  " + "  ".join(f"{d:8.4f}" for d in row.distances)
                  + f"  {', '.join(row.colliding) or '-'}", flush=True)
        if sim.gui and hold > 0:
            sim.duration = None
            sim.advance(hold)
    except SimulationDone as done:
        stopped = done.reason
    except KeyboardInterrupt:
        stopped = "interrupted"
    except Terminated:
        stopped = "terminated"
    try:   # signals are ignored from here (the handler's clean-up) or still ours: finish what was done
        if not sim.gui and last is not None and not sim.closed:
            path = out / "demo.png"   # the last waypoint reached, also when interrupted
            sim.screenshot(path, (640, 480), lines=_legend(last))
            print(f"wrote {path}", flush=True)
    finally:
        sim.close()
        restore()
        sys.stdout.flush()
    if stopped:
        said = {"interrupted": "interrupted", "terminated": "terminated (SIGTERM)"}.get(stopped, f"stopped ({stopped})")
        print(f"simbench demo: {said}", file=sys.stderr, flush=True)
    return {"interrupted": EXIT_INTERRUPTED, "terminated": EXIT_TERMINATED}.get(stopped, 0)


def _legend(row: Row) -> list:
    """The line of demo.png above its distance legend (the segments' own, as in the window)."""
    return [f"waypoint {row.index}: distances from {LINK[0]}:{LINK[1]}"]


__all__ = ["waypoints", "run_demo", "Row", "WAYPOINTS", "OBSTACLES", "LINK"]
