"""What a picture of a simulation carries besides the scene: the simulated time, closest-point
segments coloured by clearance with their distances, and a few lines of text, drawn into
headless images and recording frames with Pillow (PyBullet's debug lines and texts show only
in the GUI window, never in ``getCameraImage`` frames).

The witness points are projected with the camera's own view and projection matrices
(:func:`simbench.sim.camera.project`), so the drawn segment lies on the rendered links.
"""
from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

import numpy as np

from .camera import project

log = logging.getLogger(__name__)

#: clearance (m) at which a segment is drawn fully green; red at or below zero
FAR = 0.3


@dataclass(frozen=True)
class Segment:
    """A closest-point segment between two named objects: world points ``a`` and ``b`` (m)
    and the signed ``distance`` (negative: penetration); ``label`` names the pair. ``bodies``:
    the bodies it joins (dropped when one is removed); ``names``: the obstacle, the near side's
    link (or body) and its ``body/link``, to tell two equal labels apart (:func:`legend_texts`;
    empty for labels the script gave)."""

    a: tuple[float, float, float]
    b: tuple[float, float, float]
    distance: float
    label: str = ""
    bodies: tuple[str, ...] = field(default=(), compare=False, repr=False)
    names: tuple[str, ...] = field(default=(), compare=False, repr=False)

    @classmethod
    def from_result(cls, result: Any) -> "Segment":
        """From a :class:`~simbench.bullet.collision.ClosestPoints`; when nothing was found
        within the query's ``max_distance`` the ends are NaN (no line drawn) and the distance
        is that ``max_distance`` (the legend says ``> 1 m``)."""
        a, b = np.asarray(result.point_a, dtype=float), np.asarray(result.point_b, dtype=float)
        near, far = getattr(result, "a", None), getattr(result, "b", None)
        names = (_side(far), getattr(near, "link", None) or _side(near), str(near or ""))
        return cls(tuple(a.tolist()), tuple(b.tolist()), float(result.distance), _side(far),
                   bodies=(_side(near), _side(far)), names=names)

    @property
    def found(self) -> bool:
        """The ends are known (something lay within the query's ``max_distance``)."""
        return bool(np.all(np.isfinite(self.a)) and np.all(np.isfinite(self.b)))

    @property
    def text(self) -> str:
        """The distance as shown, to the millimetre (``0.000 m`` in contact, never ``-0.000``);
        ``> 1 m`` beyond the query's ``max_distance``."""
        d = self.distance
        if not self.found:
            return f"> {d:g} m"
        return f"{0.0 if abs(d) < 0.0005 else d:.3f} m"


def segments_of(results: Any, labels: Sequence[str] | None = None) -> list[Segment]:
    """The segments of closest-point results (``detector.closest_points(q)``), named by
    ``labels`` (one per result) or by both sides, near side first: ``ball - table``, with the
    links where two results join the same bodies (``left/lbr_iiwa_link_7 - ball``,
    ``left/lbr_iiwa_link_5 - ball``). A result with nothing found within its query's distance
    keeps its row (``left - ball: > 1 m``, no line), so that rows never jump mid-run and a
    pair's label depends only on the detector's pairs, never on which are near."""
    from .arguments import closest_labels, closest_results

    items = closest_results(results)
    given = closest_labels(labels, len(items))
    names = given or _default_labels(items)
    return [replace(s, label=name, names=() if given else s.names)
            for s, name in zip(map(Segment.from_result, items), names)]


def legend_texts(segments: Sequence[Segment]) -> list[str]:
    """The legend entries of ``segments`` shown together (every key of a window or a frame),
    ``left/lbr_iiwa_link_7 - ball: 0.130 m``: each row reads the same whatever else is shown
    (it named a pair differently as rows of other keys came and went)."""
    return [legend_text(s) for s in segments]


def without_body(overlays: dict[str, list[Segment]], body: str, window: Any = None) -> dict[str, list[Segment]]:
    """``overlays`` (key -> segments) less the segments that join ``body`` (removed from the
    scene), keys left empty dropped; a :class:`~simbench.sim.window.Window` given shows the change at once."""
    out, changed = {}, {}
    for key, segments in overlays.items():
        kept = [s for s in segments if body not in s.bodies]
        if kept:
            out[key] = kept
        if len(kept) != len(segments):
            changed[key] = kept
    if window is not None and changed:
        window.replace(changed)
    return out


def _side(obj: Any) -> str:
    """A result's side as a legend names it: its body (a NamedCollisionObject), else its text."""
    return str(getattr(obj, "body", "") or obj or "")


def _default_labels(items: Sequence[Any]) -> list[str]:
    """Each result's two sides, near side first, by body (``ball - table``); where two results
    join the same two bodies, a side that differs between them by ``body/link`` (the links the
    pairs named: ``robot/lbr_iiwa_link_5 - cube1``, ``robot/lbr_iiwa_link_7 - cube1``)."""
    sides = [(getattr(r, "a", ""), getattr(r, "b", "")) for r in items]
    short = [f"{_side(a)} - {_side(b)}" for a, b in sides]
    out = []
    for (a, b), label in zip(sides, short):
        group = [s for s, x in zip(sides, short) if x == label]
        if len(group) == 1:
            out.append(label)
            continue
        a_text = str(a) if len({str(s[0]) for s in group}) > 1 else _side(a)
        b_text = str(b) if len({str(s[1]) for s in group}) > 1 else _side(b)
        out.append(f"{a_text} - {b_text}")
    return out


def clearance_rgb(distance: float, far: float = FAR) -> tuple[float, float, float]:
    """RGB in [0, 1] for a clearance: red at or below 0, through yellow, to green at ``far``.
    The same colours as :func:`simbench.bullet.collision.clearance_color`."""
    if distance <= 0:
        return (1.0, 0.0, 0.0)
    t = min(max(distance / far, 0.0), 1.0) if far > 0 else 1.0
    return (min(1.0, 2.0 * (1.0 - t)), min(1.0, 2.0 * t), 0.0)


def _rgb255(color: Sequence[float]) -> tuple[int, int, int]:
    return tuple(int(round(255 * min(max(c, 0.0), 1.0))) for c in color[:3])  # type: ignore[return-value]


@lru_cache(maxsize=8)
def _font(size: int) -> Any:
    from PIL import ImageFont

    try:
        return ImageFont.load_default(size=size)  # a scalable font (Pillow >= 10.1)
    except TypeError:
        return ImageFont.load_default()


def legend_text(seg: Segment) -> str:
    """A legend entry: the pair and the distance, ``robot - cube1: 0.833 m``."""
    return f"{seg.label}: {seg.text}" if seg.label else seg.text


WHITE, LEADER = (255, 255, 255), (70, 70, 70)


def annotate(image: np.ndarray, *, view: Sequence[float] | None = None, proj: Sequence[float] | None = None,
             segments: Sequence[Segment] = (), time: float | None = None,
             lines: Sequence[str | tuple[str, Sequence[float]]] = (), far: float = FAR) -> np.ndarray:
    """A copy of ``image`` (H, W, 3) uint8 with ``segments`` (projected with ``view`` and
    ``proj``) drawn as lines coloured by clearance, and in the top-left corner the legend of
    the window (:mod:`.window`): ``t = ... s``, then ``lines`` (plain text or ``(text, rgb)``),
    then per segment a swatch of its colour, ``cube1: 0.833 m`` and a thin leader line to the
    segment's midpoint. Without Pillow the image comes back unchanged (one logged line)."""
    try:
        from PIL import Image, ImageDraw
    except ImportError:
        _warn_no_pillow()
        return image
    img = Image.fromarray(np.ascontiguousarray(image[:, :, :3], dtype=np.uint8))
    draw = ImageDraw.Draw(img)
    h, w = image.shape[:2]
    size = max(9, min(16, h // 32))
    font = _font(size)
    mids: list[tuple[float, float] | None] = [None] * len(segments)
    if segments and view is not None and proj is not None:
        ends = np.array([[s.a, s.b] for s in segments], dtype=float)
        px, front = project(ends, view, proj, (w, h))
        width = max(2, h // 160)
        for k, (seg, uv, ok) in enumerate(zip(segments, px, front)):
            if not (ok.all() and np.all(np.abs(uv) < 4 * max(w, h))):
                continue
            color = _rgb255(clearance_rgb(seg.distance, far))
            draw.line([tuple(uv[0]), tuple(uv[1])], fill=color, width=width)
            for end in uv:
                r = width + 1
                draw.ellipse([end[0] - r, end[1] - r, end[0] + r, end[1] + r], fill=color)
            mids[k] = tuple(uv.mean(axis=0).tolist())
    rows: list[tuple[str, tuple[int, int, int], Any, Any]] = []   # text, colour, swatch, midpoint
    if time is not None:
        rows.append((f"t = {time:.3f} s", WHITE, None, None))
    for line in lines:
        text, color = (line, WHITE) if isinstance(line, str) else (str(line[0]), _rgb255(line[1]))
        rows.append((text, color, None, None))
    for seg, mid, text in zip(segments, mids, legend_texts(segments)):
        rows.append((text, WHITE, _rgb255(clearance_rgb(seg.distance, far)), mid))
    swatch, thick = 2 * size, max(3, size // 3)
    placed = []
    y = 4
    for text, color, sw, mid in rows:
        x = 6 if sw is None else 6 + swatch + 6
        placed.append((x, y, text, color, sw, mid))
        y += size + 4
    # leaders first (no line crosses a text), all from one column right of the widest entry
    # (from each text's own end they crossed each other beside the legend)
    x1 = max((draw.textbbox((x, y), text, font=font)[2] for x, y, text, _, sw, _ in placed
              if sw is not None), default=0)
    for x, y, text, color, sw, mid in placed:
        if mid is not None:
            draw.line([(x1 + 6, y + size * 0.6), mid], fill=LEADER, width=1)
    for x, y, text, color, sw, _ in placed:
        if sw is not None:
            top = y + size * 0.6 - thick / 2
            draw.rectangle([6, top, 6 + swatch, top + thick], fill=sw, outline=(0, 0, 0))
        draw.text((x, y), text, fill=color, font=font, stroke_width=2, stroke_fill=(0, 0, 0))
    return np.asarray(img)


_warned = False


def _warn_no_pillow() -> None:
    global _warned
    if not _warned:
        _warned = True
        log.warning("drawing time and distances into images needs Pillow "
                    "(pip install 'simbench[video]'); images are left unannotated")


__all__ = ["Segment", "annotate", "clearance_rgb", "legend_text", "legend_texts", "without_body", "FAR"]
