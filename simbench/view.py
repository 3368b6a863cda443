"""``simbench view URDF|SCENE``: look at a robot before doing anything with it (in the spirit of
PyBullet's example scripts and urdf-viz).

In the window, a slider per movable joint (``addUserDebugParameter``, the URDF's limits;
continuous and unlimited revolute joints get -pi..pi, unlimited prismatic ones -1..1 m) drives
the robot kinematically (no physics step). With a scene, the named-link distances of its pairs,
or of the robot against each other body (the closest robot link to each), are drawn as
clearance-coloured segments with labels and printed whenever they change by 0.5 mm or more.
``info``'s summary of the robot is printed on start.

Headless (``--direct``, or no display answers): ``--q NAME=VALUE ...`` sets joints and ``--out
view.png`` (the default) receives one picture annotated with the distances. ``--q`` takes one
or more items, may be repeated and may come before the target (``view --q j2=0.5 robot.urdf``);
a value outside a joint's limits is refused in one line naming the closest valid value.
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ._quiet import import_pybullet
from .errors import SimbenchError, UnknownNameError, degrees_note, outside_limits, shown

p = import_pybullet()

UNLIMITED_PRISMATIC = 1.0   # m, slider half-range of a prismatic joint without limits
POLL_S = 1 / 30             # s between slider reads
CHANGE_M = 5e-4             # m, a distance change worth printing


def slider_limits(model: Any) -> dict[str, tuple[float, float]]:
    """``{joint name: (lower, upper)}`` of the sliders: the URDF's limits; -pi..pi for continuous
    joints and revolute joints without (finite, increasing) limits; +-1 m for such prismatic ones."""
    out = {}
    for name in model.joint_names:
        j = model.joint_all_names.index(name)
        lo, hi, kind = float(model.joint_lower[j]), float(model.joint_upper[j]), model.joint_type[j]
        if kind == "continuous" or not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
            half = UNLIMITED_PRISMATIC if kind == "prismatic" else math.pi
            lo, hi = -half, half
        out[name] = (lo, hi)
    return out


def _has_limits(model: Any, name: str) -> bool:
    """Whether joint ``name`` has finite, increasing URDF limits (not continuous)."""
    j = model.joint_all_names.index(name)
    lo, hi = float(model.joint_lower[j]), float(model.joint_upper[j])
    return model.joint_type[j] != "continuous" and math.isfinite(lo) and math.isfinite(hi) and lo < hi


def within_limits(q: Mapping[str, float], model: Any) -> dict[str, float]:
    """``q`` (``--q`` values by joint name) checked against the joints' limits: a value outside
    a joint's URDF limits (or, for an unlimited prismatic joint, its slider's range) is refused
    in one line naming the closest valid value; a revolute angle without limits is wrapped into
    -pi..pi (the same pose)."""
    limits, out = slider_limits(model), {}
    for name, value in q.items():
        lo, hi = limits[name]
        j = model.joint_all_names.index(name)
        prismatic = model.joint_type[j] == "prismatic"
        if not prismatic and not _has_limits(model, name):
            out[name] = math.remainder(value, 2 * math.pi)
            continue
        if not lo <= value <= hi:
            unit = "m" if prismatic else "rad"
            what = "the joint's limits" if _has_limits(model, name) else "the slider's range (the joint has no limits)"
            raise SimbenchError(outside_limits(f"--q {name}={value:g}{degrees_note(value, unit)}", value, lo, hi,
                                               unit, what))
        out[name] = value
    return out


def parse_q(items: Sequence[str]) -> dict[str, float]:
    """``["NAME=VALUE", ...]`` as a mapping; a clear error for a malformed item."""
    q = {}
    for item in items:
        name, sep, value = item.partition("=")
        if name in q:
            raise SimbenchError(f"--q {shown(item)}: joint {name!r} is given twice ({name}={q[name]:g} too); "
                                "expected one value per joint")
        try:
            if not sep or not name:
                raise ValueError
            q[name] = float(value)
        except ValueError:
            raise SimbenchError(f"--q {shown(item)}: expected NAME=VALUE with a joint name and a number "
                                "(radians or metres), e.g. lbr_iiwa_joint_2=0.5") from None
        if not math.isfinite(q[name]):
            raise SimbenchError(f"--q {shown(item)}: expected a finite number")
    return q


def scene_of(target: str) -> Any:
    """A scene from a TOML file, or a one-body scene (fixed base, named "robot") from a URDF."""
    from .bullet.scene import Scene

    if target.endswith(".toml"):
        from .paths import resolve_path

        return Scene.from_toml(resolve_path(target))
    if target.lower().endswith((".yaml", ".yml", ".json")):   # read as a URDF it was "malformed XML"
        from .errors import SceneError

        raise SceneError(f"{target}: scene files are TOML ([[body]] tables, see docs/scenes.md), not "
                         f"{target.rsplit('.', 1)[1].upper()}; robots are URDF files")
    if not target.endswith((".urdf", ".xacro")):
        # neither a URDF nor a scene by its name: a missing one is a file, not body 'robot''s URDF
        # ("file not found: 'simbench:wall_iiwa.tml'; did you mean 'simbench:wall_iiwa.toml'?")
        from .paths import resolve_path

        found = resolve_path(target, what="file")
        if found.suffix == ".toml":
            return Scene.from_toml(found)
    return Scene.from_dict({"body": [{"name": "robot", "urdf": target, "fixed_base": True}]},
                           base_dir=Path.cwd(), source=target)


@dataclass(frozen=True)
class Distance:
    """The closest points between the robot and one obstacle (or one pair of the scene)."""

    label: str
    distance: float
    result: Any


class Viewer:
    """A :class:`~simbench.sim.Simulation` of ``target`` with joint sliders (GUI) and distances.
    ``q``: start values by joint name (clipped into the slider limits; with ``strict``, as
    ``view --q`` does, a value outside a joint's limits is an error, see :func:`within_limits`)."""

    def __init__(self, target: str, gui: bool | None = None, q: Mapping[str, float] | None = None,
                 render: str = "continuous", strict: bool = False, robot: str | None = None):
        from .sim import Simulation

        # the window stays blank until frame() below: it showed the robot at q = 0 for 2-12 s
        # while the sliders came
        self.sim = Simulation(scene_of(target), gui=gui, render=render, show_window=False)
        try:
            self.robot = self.sim.robot if robot is None else self._posed(robot, target)
            self.model = self.robot.model
            self.limits = slider_limits(self.model)
            start = dict(zip(self.robot.joint_names, self.robot.initial_q.tolist()))
            unknown = [name for name in q or {} if name not in self.robot.joint_names]
            body = unknown[0].split("/")[0] if unknown and "/" in unknown[0] else None
            if body in self.sim.bodies and body != self.robot.name:   # `--q wall_arm/joint_4=-1`
                raise SimbenchError(f"--q {unknown[0]}: the joints posed are those of body {self.robot.name!r}; to pose "
                                    f"{body!r}, write --robot {body} --q {unknown[0].split('/', 1)[1]}=VALUE")
            if unknown:   # one clear line with close matches, naming the file rather than our body name
                raise UnknownNameError("movable joint", unknown[0], self.robot.joint_names, f"--q of {target}")
            start.update(within_limits(q, self.model) if strict and q else (q or {}))
            self.start = {n: float(np.clip(start[n], *self.limits[n])) for n in self.robot.joint_names}
            self.groups = self._pairs()
            self.detector = self.sim.detector([pair for _, pairs in self.groups for pair in pairs],
                                              robot=self.robot.name) if self.groups else None
            self.sliders: dict[str, int] = {}
            if self.sim.window is not None:  # no time readout: nothing steps here
                self.sim.window.show_time = False
                self.sim.window.clear()
            if self.sim.window is not None:  # the sliders' panel, and the Explorer panel with it
                self.sim.window.show_panels()
                for name in self.robot.joint_names:
                    lo, hi = self.limits[name]
                    # PyBullet's panel loses the first character of every caption ("'br_iiwa_joint_1")
                    self.sliders[name] = p.addUserDebugParameter(" " + name, lo, hi, self.start[name],
                                                                 physicsClientId=self.sim.client)
            self.q = self.apply(self.start)
            if self.sim.window is not None:
                self.frame()
        except BaseException:
            self.sim.close()
            raise

    def _posed(self, name: str, target: str) -> Any:
        """The handle of body ``name``, the one ``--robot`` asks to pose."""
        movable = [n for n in self.sim.bodies if self.sim.body(n).movable_indices]
        if name not in self.sim.bodies:
            raise UnknownNameError("body", name, self.sim.bodies, f"--robot of {target}")
        if name not in movable:
            raise SimbenchError(f"--robot {name}: body {name!r} has no movable joints; expected one of "
                                f"{', '.join(movable) or '(none)'}")
        return self.sim.handle(name)

    def frame(self) -> dict[str, Any]:
        """Point the window's camera at the bodies as they are (not the space the joints can
        sweep), filling the part of the window between the panels as the headless picture
        fills its frame (``frame_scene(reach=False)``): framed for the whole window, the robot
        came out at 2.05 m instead of 1.28-1.38 m and the panels covered a third of it."""
        from .sim.camera import frame_bodies, lens

        window = self.sim.window
        assert window is not None
        fov, aspect = lens(window.camera())
        camera = frame_bodies(self.sim.client, self.sim.bodies.values(), self.robot.id, yaw=None, pitch=-30.0,
                              fov=fov, aspect=aspect, reach=False, viewport=window.viewport())
        self.sim.set_camera(camera["target"], camera["distance"], camera["yaw"], camera["pitch"])
        return camera

    def _pairs(self) -> list[tuple[str, list]]:
        """``[(label, pairs), ...]``: the scene's own pairs (one label each) when it has some,
        else, per other body, every robot link against it."""
        from .bullet.collision import robot_vs_world
        from .bullet.collision_names import as_pair

        scene_pairs = getattr(self.sim.pair.scene, "pairs", None)
        if scene_pairs:
            pairs = [as_pair(x) for x in scene_pairs]
            return [(f"{a} - {b}", [(a, b)]) for a, b in pairs]
        others = [n for n in self.sim.bodies if n != self.robot.name]
        out = []
        for name in others:
            pairs = robot_vs_world(self.sim.pair.collision, self.robot.name, [name])
            if pairs:
                out.append((name, pairs))
        return out

    def read_sliders(self) -> dict[str, float]:
        """The sliders' values by joint name (``readUserDebugParameter``); headless, the start values."""
        if not self.sliders:
            return dict(self.start)
        return {name: float(p.readUserDebugParameter(item, physicsClientId=self.sim.client))
                for name, item in self.sliders.items()}

    def apply(self, q: Mapping[str, float]) -> np.ndarray:
        """Put the robot at ``q`` (by joint name); returns q in ``joint_names`` order."""
        self.robot.reset(dict(q))
        return self.robot.q

    def distances(self, max_distance: float = 2.0) -> list[Distance]:
        """Per group, the closest pair: its label, signed distance (m) and closest points
        (shown with ``sim.draw_closest_points``)."""
        if self.detector is None:
            return []
        results = self.detector.closest_points(self.q, max_distance)
        filtered = self.detector.filtered
        out, k = [], 0
        for label, pairs in self.groups:
            chunk = results[k:k + len(pairs)]
            off = all(filtered[k:k + len(pairs)])
            k += len(pairs)
            best = min(chunk, key=lambda r: r.distance)
            link = getattr(best.a, "link", None) if best.found else None
            name = f"{label} ({link})" if link and len(pairs) > 1 else label
            if not best.found:   # said in words: no distance to print
                name += " (never touches: collision filters)" if off else f" (beyond {max_distance:g} m)"
            out.append(Distance(name, float(best.distance), best))
        found = [d for d in out if d.result.found]
        self.sim.draw_closest_points([d.result for d in found], labels=[d.label for d in found])
        return out

    def poll(self) -> list[Distance] | None:
        """Read the sliders; when the configuration changed, apply it and return the distances."""
        q = self.read_sliders()
        if np.allclose([q[n] for n in self.robot.joint_names], self.q, atol=1e-6, rtol=0):
            return None
        self.q = self.apply(q)
        return self.distances()

    def close(self) -> None:
        self.sim.close()


def format_distances(distances: Sequence[Distance]) -> str:
    return "  ".join(f"{d.label}: {d.distance:.4f} m" if d.result.found else d.label
                     for d in distances) or "(no other bodies: no distances)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``simbench view``."""
    from .runner import _size, add_window_arguments

    # nargs="?": "--q a=1 TARGET" gives --q the target too; run_cli takes it back (see _target)
    parser.add_argument("target", nargs="?", help="a URDF (path, pybullet_data:NAME or simbench:NAME) or a "
                                                  "scene .toml; before or after --q")
    add_window_arguments(parser, direct_help="headless: write --out and exit")
    parser.add_argument("--q", action="extend", nargs="+", default=[], metavar="NAME=VALUE",
                        help="joint values (rad or m) within the joints' limits: slider start values, or "
                             "the headless picture's pose; one or more, --q repeatable (--q a=1 b=2 and "
                             "--q a=1 --q b=2 are the same); an item without '=' after them is the target")
    parser.add_argument("--robot", metavar="NAME", action="append", help="the scene body posed by the sliders "
                                                                          "and --q (default: the scene's robot)")
    parser.add_argument("--out", metavar="PNG", help="headless picture (default view.png)")
    parser.add_argument("--size", type=_size, default=(800, 600), metavar="WxH", help="picture size (800x600)")
    parser.add_argument("--duration", type=float, metavar="S", help="close the window after S seconds")


def run_cli(args: argparse.Namespace) -> int:
    """The command: returns 0, or 130 / 143 after SIGINT / SIGTERM."""
    from .outputs import png_file, writable_file
    from .runner import EXIT_INTERRUPTED, EXIT_TERMINATED, Terminated, stop_on_signals
    from .sim.camera import describe
    from .sim.recording import check_size

    target, items = _target(args.target, args.q)
    q = parse_q(items)
    out = None if args.out is None else png_file(args.out, "--out", "--out picture")  # before any work
    size = check_size(args.size)
    if args.duration is not None and not (math.isfinite(args.duration) and args.duration > 0):
        raise SimbenchError(f"--duration {shown(args.duration)}: expected a positive number of seconds")
    if args.robot and len(set(args.robot)) > 1:   # one body is posed
        raise SimbenchError(f"--robot is given {len(args.robot)} times ({', '.join(args.robot)}); expected one body "
                            f"to pose, e.g. --robot {args.robot[-1]}")
    viewer = Viewer(target, gui=args.gui, q=q, render=args.render, strict=True,
                    robot=args.robot[-1] if args.robot else None)
    restore = stop_on_signals(None, sys.stderr, "simbench view")
    try:
        print(viewer.model.summary())
        if not viewer.sim.gui:
            viewer.sim.frame_scene(reach=False)  # headless: the pose asked for, filling the picture
        print(describe(viewer.sim.camera))
        print("q: " + "  ".join(f"{n}={v:.4f}" for n, v in zip(viewer.robot.joint_names, viewer.q)))
        distances = viewer.distances()
        print("distances: " + format_distances(distances), flush=True)
        if not viewer.sim.gui:
            path = out if out is not None else writable_file("view.png", "--out picture")
            # the title, then the legend of the drawn segments (each pair's name and distance)
            viewer.sim.screenshot(path, size, lines=[f"{viewer.robot.name}: {viewer.model.name}"],
                                  show_time=False)
            print(f"wrote {path}")
            return 0
        print("move the sliders (right panel); press Ctrl-C to quit (closing the window ends the process at once: "
              "PyBullet's window takes no close request)", flush=True)
        t_end = None if args.duration is None else time.perf_counter() + args.duration
        last_q_line = 0.0
        while t_end is None or time.perf_counter() < t_end:
            if not p.isConnected(physicsClientId=viewer.sim.client):
                break
            changed = viewer.poll()
            now = time.perf_counter()
            if changed is not None and (_moved(distances, changed) or (not changed and now - last_q_line > 0.5)):
                print("q: " + "  ".join(f"{n}={v:.4f}" for n, v in zip(viewer.robot.joint_names, viewer.q)))
                last_q_line = now
                if changed:
                    print("distances: " + format_distances(changed), flush=True)
                distances = changed
            if viewer.sim.window is not None:
                viewer.sim.window.tick(viewer.sim.t)
            time.sleep(POLL_S)
        return 0
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except Terminated:
        return EXIT_TERMINATED
    finally:
        viewer.close()
        restore()


def _target(target: str | None, items: Sequence[str]) -> tuple[str, list[str]]:
    """The target and the ``--q`` items: ``--q a=1 TARGET`` leaves the target among the items
    (argparse gives ``--q`` every word up to the next option); the last item, when it has no
    '=', is the target then."""
    items = list(items)
    if target is None and items and "=" not in items[-1]:
        target = items.pop()
    if target is None:
        raise SimbenchError("the following arguments are required: target (a URDF or a scene .toml; "
                            "see simbench view --help)")
    return target, items


def _moved(old: Sequence[Distance], new: Sequence[Distance]) -> bool:
    return len(old) != len(new) or any(abs(a.distance - b.distance) >= CHANGE_M for a, b in zip(old, new))


__all__ = ["Viewer", "slider_limits", "within_limits", "parse_q", "scene_of", "Distance", "run_cli", "add_arguments"]
