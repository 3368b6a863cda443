"""Figures for the scenario scripts, through matplotlib's object API (no pyplot, so no display
and no global state): a figure of stacked axes, and saving it as a PNG."""
from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)


def stacked_axes(rows: int = 2, figsize: tuple[float, float] = (10, 7)) -> tuple[Any, list[Any]] | None:
    """``(figure, [axes, ...])``: a tight-layout figure of ``figsize`` inches with ``rows`` axes
    stacked top to bottom; ``None`` (after one logged warning naming the ``plot`` extra) when
    matplotlib is not installed."""
    from .errors import MissingExtraError

    try:
        from matplotlib.figure import Figure
    except ImportError:
        logger.warning("%s; no plot", MissingExtraError("matplotlib", "plot", "drawing the scenario's plots"))
        return None
    fig = Figure(figsize=figsize, tight_layout=True)
    return fig, [fig.add_subplot(rows, 1, i + 1) for i in range(rows)]


def save_figure(fig: Any, path: str | os.PathLike, dpi: int = 80) -> Path:
    """Write ``fig`` to ``path`` (its folder created as needed); returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi)
    return path


__all__ = ["stacked_axes", "save_figure"]
