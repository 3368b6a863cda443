"""The GUI window of a simulation: how it renders, its camera, and what is drawn over the
scene (closest-point segments with distance labels, the simulated time).

Rendering modes, measured under Xvfb's software renderer (llvmpipe) on the project's 2-core
machine while other test suites ran (load average 4-7), so only same-round comparisons count:

* ``"sync"`` is PyBullet's ``COV_ENABLE_SINGLE_STEP_RENDERING``. Left alone, the window never
  redraws under Xvfb: screen grabs 0.17 s apart during 480 steps of motion differed in 0
  pixels and the debug lines never appeared. Here it is redrawn by setting the option again
  every ``1 / redraw_hz`` s of wall time, which costs a whole frame each time (18 ms without
  shadows, 43 ms with them); every other PyBullet call is then a quick round trip (a step
  ~0.02 ms, a debug text ~0.01 ms). The window is still while the script does not step.
* ``"continuous"`` (the default) is PyBullet's own render loop: the window redraws by itself,
  also while the script computes between steps, and answers the mouse. A call that touches the
  GUI thread waits for the frame being drawn (replacing a debug text 13 ms without shadows,
  25-35 ms with them; a step 0.01 ms median without shadows, 6-8 ms with them).

The collision scenario (``scripts/scenario_collision_loop.py``, 3 s simulated, 720 steps, its
own 28 ``getClosestPoints`` calls on the main server every 8 steps), three rounds of both modes:
wall time per step continuous / sync = 1.21, 0.99, 0.68 at real-time pace and 0.31, 0.91, 1.27
as fast as possible (no consistent winner); screen grabs every 0.1 s changed (outside the time
readout) in 50-78 % of the intervals with ``continuous`` and 23-47 % with ``sync``. Shadows
roughly halved that scenario's throughput (15-30 ms per step with them, 5-15 ms without, same
run). Hence the defaults: continuous rendering, shadows off (``shadows=True`` turns them on),
lines pushed to the window at most ``overlay_hz`` times per wall-clock second and texts at most
:data:`TEXT_HZ` times, a text replaced only when its string or place changed, so that drawing
never dominates a run.
"""
from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .._quiet import import_pybullet
from ..errors import SimbenchError, shown
from .camera import _matrix, project
from .overlay import Segment, clearance_rgb, stack_labels

p = import_pybullet()

RENDER_MODES = ("continuous", "sync")
REDRAW_HZ = 15.0    # forced redraws per wall-clock second in "sync" mode
OVERLAY_HZ = 10.0   # line updates per wall-clock second
TEXT_HZ = 3.0       # text updates (distance labels, time) per wall-clock second
LABEL_MOVE = 0.02   # m: a label follows its segment once the midpoint moved about this far
TEXT_SIZE = 1.1     # PyBullet's textSize of the distance labels
LABEL_PULL = 0.5    # a label is drawn this fraction of the way from the eye to its segment (see label_spots)
# a debug text's box in pixels per unit of textSize, measured under Xvfb: the glyphs span
# 13 to 3.5 px above the point it is drawn at, 7.2 px per character to its right
TEXT_TOP, TEXT_BOTTOM, TEXT_CHAR = 13.0, 3.5, 7.2


def check_render(render: str) -> str:
    if render not in RENDER_MODES:
        raise SimbenchError(f"render = {shown(render)}; expected one of {', '.join(map(repr, RENDER_MODES))}")
    return render


class Window:
    """The GUI side of a :class:`~simbench.sim.Simulation` on PyBullet client ``client``."""

    def __init__(self, client: int, render: str = "continuous", *, shadows: bool = False,
                 redraw_hz: float = REDRAW_HZ, overlay_hz: float = OVERLAY_HZ, show_time: bool = True):
        self.client, self.render = client, check_render(render)
        self.redraw_hz, self.overlay_hz, self.show_time = float(redraw_hz), float(overlay_hz), bool(show_time)
        self._lines: dict[str, list[int]] = {}
        self._texts: dict[str, list[tuple[int, tuple]]] = {}  # (item, (text, rounded position))
        self._pending: dict[str, Sequence[Segment]] = {}
        self._drawn: dict[str, Sequence[Segment]] = {}  # what each key shows, placed again when the camera moves
        self._view: tuple = ()  # the camera the labels were placed for (rounded)
        self._time_item, self._time_text = -1, ""
        self._t = 0.0
        self._shown = False  # rendering turned on at the first set_camera (ServerPair(hidden=True))
        self._last_overlay = self._last_text = -math.inf
        self._last_redraw = time.perf_counter()
        p.configureDebugVisualizer(p.COV_ENABLE_SHADOWS, int(bool(shadows)), physicsClientId=client)
        if self.render == "sync":
            p.configureDebugVisualizer(p.COV_ENABLE_SINGLE_STEP_RENDERING, 1, physicsClientId=client)

    # ------------------------------------------------------------------ camera
    def camera(self) -> dict[str, Any]:
        """The window's camera now: ``size`` (w, h), ``view`` and ``proj`` (PyBullet's flat
        matrices), ``target``, ``distance``, ``yaw``, ``pitch`` (the user may have moved it)."""
        cam = p.getDebugVisualizerCamera(physicsClientId=self.client)
        return {"size": (int(cam[0]), int(cam[1])), "view": list(cam[2]), "proj": list(cam[3]),
                "yaw": float(cam[8]), "pitch": float(cam[9]), "distance": float(cam[10]),
                "target": tuple(float(v) for v in cam[11])}

    def set_camera(self, camera: Mapping[str, Any]) -> None:
        """Point the window's camera; the first call also turns rendering on (off while a
        :class:`~simbench.bullet.servers.ServerPair` made with ``hidden=True`` loads the bodies)."""
        p.resetDebugVisualizerCamera(float(camera["distance"]), float(camera["yaw"]), float(camera["pitch"]),
                                     list(camera["target"]), physicsClientId=self.client)
        if not self._shown:
            self._shown = True
            p.configureDebugVisualizer(p.COV_ENABLE_RENDERING, 1, physicsClientId=self.client)

    # ------------------------------------------------------------------ overlay
    def show(self, key: str, segments: Sequence[Segment]) -> None:
        """Show ``segments`` under ``key`` (replacing what ``key`` showed before); pushed to the
        window at the next :meth:`tick` that is due (at once when none was pushed for
        ``1 / overlay_hz`` s)."""
        self._pending[key] = list(segments)
        self.tick(self._t)

    def tick(self, t: float, *, force: bool = False) -> None:
        """Called after every step with the simulated time ``t``: pushes the overlay when due
        and, in ``"sync"`` mode, redraws the window when due."""
        self._t = t
        now = time.perf_counter()
        if force or now - self._last_overlay >= 1.0 / self.overlay_hz:
            self._last_overlay = now
            texts = force or now - self._last_text >= 1.0 / TEXT_HZ
            if texts:
                self._last_text = now
            cam = self.camera() if texts and (self._pending or self._drawn) else None  # to place the labels
            if cam is not None and _rounded(cam) != self._view:  # the user moved it: place them again
                self._view = _rounded(cam)
                self._pending = {**self._drawn, **self._pending}
            for key, segments in list(self._pending.items()):
                self._push(key, segments, texts, cam)
                if texts:  # else pushed again (lines are cheap) until its labels are
                    del self._pending[key]
            if self.show_time and texts:
                self._push_time(t, cam)
        if self.render == "sync" and (force or now - self._last_redraw >= 1.0 / self.redraw_hz):
            self.redraw()

    def redraw(self) -> None:
        """Draw one frame now (in ``"sync"`` mode the only way the window changes)."""
        self._last_redraw = time.perf_counter()
        if self.render == "sync":
            p.configureDebugVisualizer(p.COV_ENABLE_SINGLE_STEP_RENDERING, 1, physicsClientId=self.client)

    def _push(self, key: str, segments: Sequence[Segment], texts_too: bool = True,
              cam: Mapping[str, Any] | None = None) -> None:
        lines, texts = self._lines.get(key, []), self._texts.get(key, [])
        spots = label_spots(segments, cam)
        for item in lines[len(segments):]:
            p.removeUserDebugItem(item, physicsClientId=self.client)
        for item, _ in texts[len(segments):]:
            p.removeUserDebugItem(item, physicsClientId=self.client)
        new_lines, new_texts = [], []
        for k, seg in enumerate(segments):
            color = clearance_rgb(seg.distance)
            replace = {"replaceItemUniqueId": lines[k]} if k < len(lines) else {}
            new_lines.append(p.addUserDebugLine(seg.a, seg.b, color, lineWidth=3.0,
                                                physicsClientId=self.client, **replace))
            mid = spots[k]
            label = (seg.text, tuple(np.round(mid / (LABEL_MOVE * LABEL_PULL)).astype(int).tolist()))
            if k < len(texts) and (texts[k][1] == label or not texts_too):
                new_texts.append(texts[k])  # a text replacement costs a frame: only on a change
                continue
            replace = {"replaceItemUniqueId": texts[k][0]} if k < len(texts) else {}
            item = p.addUserDebugText(seg.text, mid.tolist(), color, textSize=TEXT_SIZE,
                                      physicsClientId=self.client, **replace)
            new_texts.append((item, label))
        self._lines[key], self._texts[key], self._drawn[key] = new_lines, new_texts, list(segments)

    def _push_time(self, t: float, cam: Mapping[str, Any] | None = None) -> None:
        text = f"t = {t:.2f} s"
        if text == self._time_text:
            return
        cam = cam or self.camera()
        view = _matrix(cam["view"])
        rot, trans = view[:3, :3], view[:3, 3]
        eye = -rot.T @ trans
        proj = _matrix(cam["proj"])
        tan_v, tan_h = 1 / proj[1, 1], 1 / proj[0, 0]
        depth = 1.0  # m in front of the camera: within the near and far planes
        local = np.array([-0.92 * depth * tan_h, 0.88 * depth * tan_v, -depth])
        pos = eye + rot.T @ local
        replace = {"replaceItemUniqueId": self._time_item} if self._time_item >= 0 else {}
        self._time_item = p.addUserDebugText(text, pos.tolist(), (0.1, 0.1, 0.1), textSize=0.9,
                                             physicsClientId=self.client, **replace)
        self._time_text = text

    def clear(self, key: str | None = None) -> None:
        """Remove the items of ``key`` (None: every key and the time readout)."""
        keys = list(self._lines) if key is None else [key]
        for k in keys:
            for item in self._lines.pop(k, []):
                p.removeUserDebugItem(item, physicsClientId=self.client)
            for item, _ in self._texts.pop(k, []):
                p.removeUserDebugItem(item, physicsClientId=self.client)
            self._pending.pop(k, None)
            self._drawn.pop(k, None)
        if key is None and self._time_item >= 0:
            p.removeUserDebugItem(self._time_item, physicsClientId=self.client)
            self._time_item, self._time_text = -1, ""


def label_spots(segments: Sequence[Segment], cam: Mapping[str, Any] | None) -> list[np.ndarray]:
    """World points (3,) at which the segments' distance labels are drawn. Without the window's
    camera ``cam`` (:meth:`Window.camera`), 2 cm above each midpoint. With it, that point is
    moved down the screen below the labels before it that it would overlap
    (:func:`~simbench.sim.overlay.stack_labels`, as in pictures: in the demo every segment starts
    at link 7 and labels at nearby midpoints covered each other), then drawn :data:`LABEL_PULL`
    of the way from the eye to it: on the same pixel (a debug text keeps its size in pixels at
    any depth) but in front of the links, which hid labels before."""
    spots = [(np.asarray(s.a, dtype=float) + np.asarray(s.b, dtype=float)) / 2 + [0, 0, 0.02] for s in segments]
    if cam is None or not spots:
        return spots
    (w, h), view = cam["size"], _matrix(cam["view"])
    rot, eye = view[:3, :3], -view[:3, :3].T @ view[:3, 3]
    px, front = project(np.array(spots), cam["view"], cam["proj"], (w, h))
    keep = [k for k in range(len(spots)) if front[k] and np.all(np.abs(px[k]) < 4 * max(w, h))]
    boxes = [(px[k][0], px[k][1] - TEXT_TOP * TEXT_SIZE, px[k][0] + TEXT_CHAR * TEXT_SIZE * len(segments[k].text),
              px[k][1] - TEXT_BOTTOM * TEXT_SIZE) for k in keep]
    metres_per_px = 2 / (_matrix(cam["proj"])[1, 1] * h)  # at 1 m depth
    stacked = stack_labels(boxes, (TEXT_TOP - TEXT_BOTTOM) * TEXT_SIZE + 3)
    for k, before, after in zip(keep, boxes, stacked):
        depth = -(rot @ (spots[k] - eye))[2]  # the camera looks along its -z
        spot = spots[k] - rot[1] * (after[1] - before[1]) * metres_per_px * depth  # down the screen
        spots[k] = eye + LABEL_PULL * (spot - eye)
    return spots


def _rounded(cam: Mapping[str, Any]) -> tuple:
    """The window's camera to about a degree and a centimetre: labels are placed again when it changes."""
    return tuple(np.round([cam["yaw"], cam["pitch"], 100 * cam["distance"],
                           *(100 * np.asarray(cam["target"]))]).astype(int).tolist())


__all__ = ["Window", "label_spots", "RENDER_MODES", "check_render", "REDRAW_HZ", "OVERLAY_HZ", "TEXT_HZ"]
