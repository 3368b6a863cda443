"""The GUI window of a simulation: how it renders, its camera, and what is drawn over the
scene: closest-point segments coloured by clearance, and a legend in a column at the top left
of the part of the window that no panel covers, the simulated time and per segment a swatch
of its colour, the obstacle's name with the distance and a thin leader line to the segment.

Distance labels drawn next to their segments (PyBullet's debug texts live in the 3D scene)
overlapped each other while the arm moved and hid behind links, even stacked on the screen
each time they were replaced: the segments move between two replacements (texts are replaced
about 3 times a second, each costing a frame). The legend's places depend on the camera only:
its rows cannot overlap, and drawn 0.1 m in front of the eye no body hides them.

Rendering modes, measured under Xvfb's software renderer (llvmpipe) on the project's 2-core
machine while other test suites ran (load average 4-7), so only same-round comparisons count:

* ``"sync"`` is PyBullet's ``COV_ENABLE_SINGLE_STEP_RENDERING``. Left alone, the window never
  redraws under Xvfb: screen grabs 0.17 s apart during 480 steps of motion differed in 0
  pixels and the debug lines never appeared. Here it is redrawn by setting the option again
  every ``1 / redraw_hz`` s of wall time, which costs a whole frame each time (18 ms without
  shadows, 43 ms with them); every other PyBullet call is then a quick round trip (a step
  ~0.02 ms, a debug text ~0.01 ms). While the script does not step (it computes or sleeps)
  the idle thread redraws it, so that it follows the mouse (left alone it answered no drag),
  at most ``redraw_hz`` times a second and at most a quarter of the time (:data:`DRAW_SHARE`;
  a redraw holds the GIL: under Xvfb on a loaded machine one took 140 ms, so about 2 a second).
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
:data:`TEXT_HZ` times, a text replaced only when its string or place changed, a line only when
its ends (to 0.1 mm) or colour changed, and a push not before :data:`DRAW_SHARE` times the
last push's duration has passed, so that drawing never dominates a run: on a loaded machine a
debug line took 55 ms and a text 90-110 ms (each waits for a frame), and a pick-and-place cell
drawing 4 segments every 4 steps spent half its wall time drawing at 10 pushes a second.

What a script shows is never left behind when it stops stepping: the last steps' time and a
drawing made just after a push would otherwise wait for the next step, which a script that
pauses or computes may not take for seconds. A daemon thread (:meth:`Window._catch_up`) pushes
such a window's overlay once no step came for ``1 / TEXT_HZ`` s, and places the legend again
when the user moved the camera meanwhile (the legend lives in the 3D scene, 0.1 m in front of
the eye it was placed for: after a drag it floated in the sky or left the view until the next
step). PyBullet holds the GIL in each call, so its calls from the two threads never interleave;
the window's own state is under one lock. Asking the window for its camera waits for a frame
(29 ms median under Xvfb): the idle thread asks at most ``TEXT_HZ`` times a second.

The time readout goes out with the legend's rows, never ahead of them: a step's push shows the
time of the step before (when the script's drawings since then were made), so that a drawing
made right after a step, whose rows wait for the next text update, is never listed under the
new time with the previous drawing's distances.
"""
from __future__ import annotations

import math
import threading
import time
import weakref
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .._quiet import import_pybullet
from ..errors import SimbenchError, shown
from .camera import _matrix
from .overlay import Segment, clearance_rgb, legend_text, legend_texts

p = import_pybullet()

RENDER_MODES = ("continuous", "sync")
REDRAW_HZ = 15.0    # forced redraws per wall-clock second in "sync" mode
OVERLAY_HZ = 10.0   # line updates per wall-clock second
DRAW_SHARE = 4.0    # a push waits this many times as long as the last one took: drawing <= 1/4 of a run
TEXT_HZ = 3.0       # text updates (distance labels, time) per wall-clock second
TEXT_SIZE = 1.1     # PyBullet's textSize of the legend's entries
TIME_SIZE = 1.1     # and of the time readout (0.9 drew "=" as a dash)
# a debug text's box in pixels per unit of textSize, measured under Xvfb: the glyphs span
# 13 to 3.5 px above the point it is drawn at, 7.2 px per character to its right
TEXT_TOP, TEXT_BOTTOM, TEXT_CHAR = 13.0, 3.5, 7.2
TEXT_MID = (TEXT_TOP + TEXT_BOTTOM) / 2
# The legend: the time, then per segment a swatch of its colour, the obstacle's name and the
# distance, and a thin leader line to the segment, in a column at the top left of the part of
# the window that no panel covers (pixels).
LEGEND_LEFT, LEGEND_TOP, LEGEND_ROW = 44.0, 34.0, 20.0   # the text's left, row 0's baseline, the row pitch
SWATCH = (30.0, 8.0, 6.0)   # the swatch spans this many px left of the text (from, to), this thick
LEADER_GAP = 6.0            # px between an entry's text and its leader line
LEGEND_RGB, LEADER_RGB = (0.05, 0.05, 0.05), (0.35, 0.35, 0.35)
#: m in front of the eye where the legend is drawn: beyond the near plane (0.01 m), before any body
LEGEND_DEPTH = 0.1
#: pixels of the window (left, top, right, bottom) covered by PyBullet's panels when shown
#: (COV_ENABLE_GUI): the same at 800x600, 1024x768 and 1200x900, measured under Xvfb; the 3D
#: picture keeps the whole window (its projection does not change), the panels cover it
PANELS = (250, 22, 250, 122)


def check_render(render: str) -> str:
    if render not in RENDER_MODES:
        raise SimbenchError(f"render = {shown(render)}; expected one of {', '.join(map(repr, RENDER_MODES))}")
    return render


class Window:
    """The GUI side of a :class:`~simbench.sim.Simulation` on PyBullet client ``client``."""

    def __init__(self, client: int, render: str = "continuous", *, shadows: bool = False,
                 redraw_hz: float = REDRAW_HZ, overlay_hz: float = OVERLAY_HZ, show_time: bool = True,
                 gone: list | None = None):
        """``gone``: the owner's closed flag (a :class:`~simbench.bullet.servers.ServerPair`'s
        ``gone`` list): non-empty, nothing more is drawn (PyBullet gives a closed server's id to
        the next one it opens)."""
        self.client, self.render = client, check_render(render)
        self._gone = gone if gone is not None else []
        self._closed = False
        self._lock = threading.RLock()
        self._last_tick = self._last_look = time.perf_counter()
        self.redraw_hz, self.overlay_hz, self.show_time = float(redraw_hz), float(overlay_hz), bool(show_time)
        self._lines: dict[str, list[int]] = {}
        self._texts: dict[str, list[tuple[int, tuple]]] = {}  # legend entries: (item, what it shows)
        self._swatches: dict[str, list[tuple[int, tuple]]] = {}
        self._leader_items: dict[str, list[int]] = {}
        self._first: dict[str, int] = {}  # the legend row of each key's first entry
        self._cam: dict[str, Any] | None = None  # the camera the legend was placed for
        self.panels = False
        self._pending: dict[str, Sequence[Segment]] = {}
        self._drawn: dict[str, Sequence[Segment]] = {}  # what each key shows, placed again when the camera moves
        self._view: tuple = ()  # the camera the legend was placed for (rounded) and the panels
        self._time_item, self._time_text = -1, ""
        self._t = 0.0
        self._shown = False  # rendering turned on at the first set_camera (ServerPair(hidden=True))
        self._last_overlay = self._last_text = -math.inf
        self._push_cost = 0.0  # wall seconds the last push took
        self._line_shown: dict[int, tuple] = {}  # what each segment or leader line shows (rounded)
        self._last_redraw, self._redraw_cost = time.perf_counter(), 0.0
        self._quiet_until = -math.inf   # no drawing of any kind (push, redraw) before: one budget for all
        p.configureDebugVisualizer(p.COV_ENABLE_SHADOWS, int(bool(shadows)), physicsClientId=client)
        if self.render == "sync":
            p.configureDebugVisualizer(p.COV_ENABLE_SINGLE_STEP_RENDERING, 1, physicsClientId=client)
        threading.Thread(target=Window._catch_up, args=(weakref.ref(self),), daemon=True,
                         name=f"simbench-window-{client}").start()

    @staticmethod
    def _catch_up(ref: "weakref.ref[Window]") -> None:
        """When no step came for ``1 / TEXT_HZ`` s and the window is behind (a drawing not
        pushed, the time not the last step's) or its camera moved since the legend was placed
        (looked at most ``TEXT_HZ`` times a second), push it all now. Ends with the window
        (closed, or garbage-collected: the thread holds it only while it looks)."""
        while True:
            time.sleep(0.25 / TEXT_HZ)
            window = ref()
            if window is None or window._closed or window._gone:
                return
            with window._lock:
                if window._closed or window._gone:
                    return
                now = time.perf_counter()
                if window.render == "sync" and now - window._last_tick >= 1.0 / window.redraw_hz and \
                        now >= window._quiet_until and now - window._last_redraw >= 1.0 / window.redraw_hz:
                    try:   # the window follows the mouse while the script computes, at most 1/4 of the time
                        window.redraw()
                    except p.error:
                        return
                # no step for 1 / TEXT_HZ s (a push blocks the steps: counted from its end), and
                # the drawing budget of a step's push (DRAW_SHARE) holds here too
                if now - max(window._last_tick, window._last_overlay + window._push_cost) >= 1.0 / TEXT_HZ and \
                        now >= window._quiet_until:
                    look = now - max(window._last_look, window._last_text) >= 1.0 / TEXT_HZ
                    try:
                        if window.behind() or (look and window.moved()):
                            window._tick(window._t, True)
                    except p.error:   # the window was closed by hand: its owner says so
                        return
            del window

    def behind(self) -> bool:
        """Something drawn or stepped is not on the screen yet."""
        return bool(self._pending) or (self.show_time and self._time_text != time_text(self._t))

    def moved(self) -> bool:
        """The camera (or the panels) changed since the legend was placed (asks the window)."""
        self._last_look = time.perf_counter()
        if not (self._drawn or self._pending or self._time_item >= 0):
            return False
        return _rounded(self.camera()) + (self.panels,) != self._view

    def close(self) -> None:
        """Draw nothing more (the owner is closing the server)."""
        with self._lock:   # waits for a push of the thread that catches up
            self._closed = True

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

    # ------------------------------------------------------------------ panels
    def show_panels(self, on: bool = True) -> None:
        """Show PyBullet's side panels (Explorer, Params with the sliders of
        ``addUserDebugParameter``) or hide them. They are drawn over the 3D picture, which keeps
        the whole window: :meth:`viewport` is the part left visible, where the legend goes."""
        p.configureDebugVisualizer(p.COV_ENABLE_GUI, int(bool(on)), physicsClientId=self.client)
        if on:
            for flag in (p.COV_ENABLE_RGB_BUFFER_PREVIEW, p.COV_ENABLE_DEPTH_BUFFER_PREVIEW,
                         p.COV_ENABLE_SEGMENTATION_MARK_PREVIEW):
                p.configureDebugVisualizer(flag, 0, physicsClientId=self.client)
        self.panels = bool(on)
        self._view = ()  # the legend moves into the visible part at the next text update

    def visible(self, size: tuple[int, int]) -> tuple[int, int, int, int]:
        """The window's pixels not covered by panels, ``(x0, y0, x1, y1)``, row 0 at the top."""
        w, h = size
        if not self.panels:
            return 0, 0, w, h
        left, top, right, bottom = PANELS
        return left, top, max(left + 1, w - right), max(top + 1, h - bottom)

    def viewport(self) -> tuple[float, float, float, float]:
        """:meth:`visible` in normalised device coordinates ``(x0, y0, x1, y1)``, y up, for
        :func:`~simbench.sim.camera.framing`."""
        w, h = self.camera()["size"]
        x0, y0, x1, y1 = self.visible((w, h))
        return 2 * x0 / w - 1, 1 - 2 * y1 / h, 2 * x1 / w - 1, 1 - 2 * y0 / h

    # ------------------------------------------------------------------ overlay
    def show(self, key: str, segments: Sequence[Segment]) -> None:
        """Show ``segments`` under ``key`` (replacing what ``key`` showed before); pushed to the
        window at the next :meth:`tick` that is due (at once when none was pushed for
        ``1 / overlay_hz`` s; within ``1 / TEXT_HZ`` s when no step comes)."""
        with self._lock:
            self._pending[key] = list(segments)
            self.tick(self._t)

    def replace(self, shown: Mapping[str, Sequence[Segment]]) -> None:
        """:meth:`show` for every key of ``shown``, pushed at once with the whole legend (``[]``:
        remove the key, the rows below move up), for a change the script did not draw: a body removed."""
        with self._lock:
            for key, segments in shown.items():
                if segments:
                    self._pending[key] = list(segments)
                else:
                    self._clear(key)
            self._tick(self._t, True)

    def tick(self, t: float, *, force: bool = False) -> None:
        """Called after every step with the simulated time ``t``: pushes the overlay when due
        and, in ``"sync"`` mode, redraws the window when due."""
        with self._lock:
            self._last_tick = time.perf_counter()
            self._tick(t, force)

    def _tick(self, t: float, force: bool) -> None:
        # the drawings not pushed yet were made at self._t, before the step to t: their time
        shown_t = t if force or t == self._t else self._t
        self._t = t
        now = time.perf_counter()
        # at most overlay_hz pushes a second, and never more than 1 / DRAW_SHARE of the wall
        # time: a push waits DRAW_SHARE times as long as the last one took
        if force or (now - self._last_overlay >= 1.0 / self.overlay_hz and now >= self._quiet_until):
            self._last_overlay = now
            texts = force or now - self._last_text >= max(1.0 / TEXT_HZ, DRAW_SHARE * self._push_cost)
            if texts:
                self._last_text = now
                if self._pending or self._drawn or self.show_time:
                    self._cam = self.camera()  # the legend is placed for the camera of now
                    if _rounded(self._cam) + (self.panels,) != self._view:  # moved: place it again
                        self._view = _rounded(self._cam) + (self.panels,)
                        self._pending = {**self._drawn, **self._pending}
                        self._time_text = ""
            rows, labels = self._rows(), self._labels()
            for key in self._drawn:  # a key above got more or fewer rows: its legend moves;
                # a row of another key reads the same as one of its rows: they are told apart
                if key not in self._pending and (rows[key] != self._first.get(key) or
                                                 [x for _, (x, *_) in self._texts.get(key, [])] != labels[key]):
                    self._pending[key] = self._drawn[key]
            for key, segments in list(self._pending.items()):
                legend = texts or key not in self._texts  # a new key's legend at once
                self._push(key, segments, rows[key], labels[key], legend)
                if legend:  # else pushed again (lines are cheap) until its legend is
                    del self._pending[key]
            if self.show_time and texts:  # with every row drawn by then
                self._push_time(shown_t)
            self._push_cost = time.perf_counter() - now
            pushed = True
        else:
            pushed = False
        later = time.perf_counter()   # a sync window shows a push only once redrawn: the two go together
        if self.render == "sync" and (force or pushed or (later - self._last_redraw >= 1.0 / self.redraw_hz
                                                          and later >= self._quiet_until)):
            self.redraw()
        if pushed:
            self._spent(now)   # the push and its redraw: one drawing

    def _spent(self, start: float) -> None:
        """A drawing (a push or a redraw) that began at ``start`` has ended: the next one of any
        kind waits DRAW_SHARE times its length from its start, so that pushes and redraws
        together take at most 1 / DRAW_SHARE of the wall time (each had its own budget, and a
        sync window with a script busy between steps spent 70 % of the run drawing)."""
        self._quiet_until = max(self._quiet_until, start + DRAW_SHARE * (time.perf_counter() - start))

    def redraw(self) -> None:
        """Draw one frame now (in ``"sync"`` mode the only way the window changes)."""
        self._last_redraw = time.perf_counter()
        if self.render == "sync":
            p.configureDebugVisualizer(p.COV_ENABLE_SINGLE_STEP_RENDERING, 1, physicsClientId=self.client)
            self._redraw_cost = time.perf_counter() - self._last_redraw
            self._spent(self._last_redraw)

    def mouse_note(self) -> str:
        """How the window answers the mouse, for a start line."""
        if self.render == "sync":
            return "drag with the mouse to move it; between steps it redraws a few times a second"
        return "drag with the mouse to move it"

    def _rows(self) -> dict[str, int]:
        """The legend row of each key's first entry (row 0 holds the time), keys in the order
        they were first shown."""
        rows, row = {}, 1
        for key in {**self._drawn, **self._pending}:
            rows[key] = row
            row += len(self._pending.get(key, self._drawn.get(key, ())))
        return rows

    def _labels(self) -> dict[str, list[str]]:
        """The legend entries of each key, told apart across keys (:func:`legend_texts`)."""
        keys = {**self._drawn, **self._pending}
        segments = {key: self._pending.get(key, self._drawn.get(key, ())) for key in keys}
        texts = legend_texts([s for segs in segments.values() for s in segs])
        out, at = {}, 0
        for key, segs in segments.items():
            out[key], at = texts[at:at + len(segs)], at + len(segs)
        return out

    def _at(self, u: float, v: float) -> np.ndarray:
        """The world point drawn on pixel (u, v) at :data:`LEGEND_DEPTH` in front of the camera."""
        cam = self._cam if self._cam is not None else self.camera()
        self._cam = cam
        (w, h), view, proj = cam["size"], _matrix(cam["view"]), _matrix(cam["proj"])
        rot, eye = view[:3, :3], -view[:3, :3].T @ view[:3, 3]
        d = LEGEND_DEPTH
        local = np.array([(2 * u / w - 1) * d / proj[0, 0], (1 - 2 * v / h) * d / proj[1, 1], -d])
        return eye + rot.T @ local

    def _row_y(self, row: int) -> float:
        """The baseline (pixel row) of legend row ``row``."""
        cam = self._cam if self._cam is not None else self.camera()
        return self.visible(cam["size"])[1] + LEGEND_TOP + row * LEGEND_ROW

    def _push(self, key: str, segments: Sequence[Segment], row: int, labels: Sequence[str] | None = None,
              texts_too: bool = True) -> None:
        """The segments of ``key`` as lines, and their legend from row ``row`` down: a swatch of
        the segment's colour, the obstacle's name and distance, a leader line to the segment."""
        old = self._lines.get(key, [])
        for item in old[len(segments):]:
            self._remove(item)
        self._lines[key] = [self._line(old[k] if k < len(old) else -1, seg.a, seg.b, clearance_rgb(seg.distance), 3.0)
                            for k, seg in enumerate(segments)]
        if not texts_too and key in self._texts:  # the legend stays; its leaders follow the segments
            self._leaders(key, segments)
            return
        cam = self._cam if self._cam is not None else self.camera()
        x = self.visible(cam["size"])[0] + LEGEND_LEFT
        texts, swatches = self._texts.get(key, []), self._swatches.get(key, [])
        for item, _ in texts[len(segments):]:
            self._remove(item)
        for item, _ in swatches[len(segments):]:
            self._remove(item)
        new_texts, new_swatches = [], []
        for k, seg in enumerate(segments):
            y = self._row_y(row + k)
            text = legend_text(seg) if labels is None else labels[k]
            mid = y - TEXT_MID * TEXT_SIZE
            shown_now = (text, self._view, row + k)
            if k < len(texts) and texts[k][1] == shown_now:
                new_texts.append(texts[k])  # a text replacement costs a frame: only on a change
            else:
                replace = {"replaceItemUniqueId": texts[k][0]} if k < len(texts) else {}
                item = p.addUserDebugText(text, self._at(x, y).tolist(), LEGEND_RGB, textSize=TEXT_SIZE,
                                          physicsClientId=self.client, **replace)
                new_texts.append((item, shown_now))
            color = clearance_rgb(seg.distance)
            swatch_now = (color, self._view, row + k)
            if k < len(swatches) and swatches[k][1] == swatch_now:
                new_swatches.append(swatches[k])
            else:
                replace = {"replaceItemUniqueId": swatches[k][0]} if k < len(swatches) else {}
                item = p.addUserDebugLine(self._at(x - SWATCH[0], mid).tolist(), self._at(x - SWATCH[1], mid).tolist(),
                                          color, lineWidth=SWATCH[2], physicsClientId=self.client, **replace)
                new_swatches.append((item, swatch_now))
        self._texts[key], self._swatches[key], self._drawn[key] = new_texts, new_swatches, list(segments)
        self._first[key] = row
        self._leaders(key, segments)

    def _leaders(self, key: str, segments: Sequence[Segment]) -> None:
        """Thin grey lines from each legend entry of ``key`` (right of the widest one) to its
        segment's midpoint."""
        old, new = self._leader_items.get(key, []), []
        for item in old[len(segments):]:
            self._remove(item)
        cam = self._cam if self._cam is not None else self.camera()
        texts = self._texts.get(key, [])
        # every leader starts right of the widest entry: from one column, not each text's end
        # (leaders from ragged ends crossed each other beside the legend)
        x = self.visible(cam["size"])[0] + LEGEND_LEFT + LEADER_GAP + \
            TEXT_CHAR * TEXT_SIZE * max((len(text) for _, (text, *_) in texts), default=0)
        for k, (seg, _) in enumerate(zip(segments, texts)):
            y = self._row_y(self._first[key] + k) - TEXT_MID * TEXT_SIZE
            start = self._at(x, y)
            mid = (np.asarray(seg.a, dtype=float) + np.asarray(seg.b, dtype=float)) / 2
            new.append(self._line(old[k] if k < len(old) else -1, start.tolist(), mid.tolist(), LEADER_RGB, 1.0))
        self._leader_items[key] = new

    def _remove(self, item: int) -> None:
        if item < 0:
            return
        self._line_shown.pop(item, None)
        p.removeUserDebugItem(item, physicsClientId=self.client)

    def _line(self, item: int, a: Sequence[float], b: Sequence[float], rgb: Sequence[float], width: float) -> int:
        """Debug line ``item`` (-1: a new one) from ``a`` to ``b``; not sent again when it shows
        that already (endpoints to 0.1 mm, a colour step of 1/255): each call waits for a frame.
        No line (-1) for NaN ends: a pair with nothing within its query's distance."""
        if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
            self._remove(item)
            return -1
        shown_now = (tuple(np.round(np.asarray([*a, *b], dtype=float), 4).tolist()),
                     tuple(round(255 * c) for c in rgb), width)
        if item >= 0 and self._line_shown.get(item) == shown_now:
            return item
        replace = {"replaceItemUniqueId": item} if item >= 0 else {}
        new = p.addUserDebugLine(list(a), list(b), list(rgb), lineWidth=width, physicsClientId=self.client, **replace)
        self._line_shown.pop(item, None)
        self._line_shown[new] = shown_now
        return new

    def _push_time(self, t: float) -> None:
        text = time_text(t)
        if text == self._time_text:
            return
        cam = self._cam if self._cam is not None else self.camera()
        pos = self._at(self.visible(cam["size"])[0] + LEGEND_LEFT - SWATCH[0], self._row_y(0))
        replace = {"replaceItemUniqueId": self._time_item} if self._time_item >= 0 else {}
        self._time_item = p.addUserDebugText(text, pos.tolist(), (0.1, 0.1, 0.1), textSize=TIME_SIZE,
                                             physicsClientId=self.client, **replace)
        self._time_text = text

    def clear(self, key: str | None = None) -> None:
        """Remove the items of ``key`` (None: every key and the time readout)."""
        with self._lock:
            self._clear(key)

    def _clear(self, key: str | None) -> None:
        keys = list({**self._lines, **self._drawn, **self._pending}) if key is None else [key]
        for k in keys:
            items = self._lines.pop(k, []) + self._leader_items.pop(k, [])
            items += [item for item, _ in self._texts.pop(k, []) + self._swatches.pop(k, [])]
            for item in items:
                self._remove(item)
            self._pending.pop(k, None)
            self._drawn.pop(k, None)
            self._first.pop(k, None)
        if key is None and self._time_item >= 0:
            p.removeUserDebugItem(self._time_item, physicsClientId=self.client)
            self._time_item, self._time_text = -1, ""


def time_text(t: float) -> str:
    """The time readout, ``t = 1.25 s``."""
    return f"t = {t:.2f} s"


def _rounded(cam: Mapping[str, Any]) -> tuple:
    """The window's camera to about a degree and a centimetre: labels are placed again when it changes."""
    return tuple(np.round([cam["yaw"], cam["pitch"], 100 * cam["distance"],
                           *(100 * np.asarray(cam["target"]))]).astype(int).tolist())


__all__ = ["Window", "legend_text", "PANELS", "RENDER_MODES", "check_render", "REDRAW_HZ", "OVERLAY_HZ", "TEXT_HZ"]
