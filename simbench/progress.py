"""Progress bars for long work (tqdm), and the one switch that silences them.

The choice of tqdm: one small pure-Python dependency with no dependencies of its own, used by
most of the scientific Python stack, maintained, and it shows rate and ETA out of the box. Bars
go to stderr, only when stderr is a terminal (so logs and CI output stay clean) and only while
the ``simbench`` logger lets INFO through (``simbench -q`` silences them).

    for chunk in progress(chunks, desc="collision", unit="chunk"):
        ...
"""
from __future__ import annotations

import logging
import os
import sys
from collections.abc import Iterable, Iterator
from typing import Any, TypeVar

T = TypeVar("T")

logger = logging.getLogger("simbench")


def enabled() -> bool:
    """True when progress bars should be drawn (stderr is a terminal, INFO is not filtered,
    and ``SIMBENCH_PROGRESS`` is not ``0``)."""
    env = os.environ.get("SIMBENCH_PROGRESS")
    if env is not None:
        return env not in ("0", "", "false", "no")
    return sys.stderr.isatty() and logger.isEnabledFor(logging.INFO)


def progress(iterable: Iterable[T] | None = None, *, total: float | None = None, desc: str = "",
             unit: str = "it", **kwargs: Any) -> Any:
    """A tqdm bar over ``iterable`` (or a manual bar with ``total``; call ``.update(n)``),
    disabled when :func:`enabled` is false. Use as an iterator or a context manager."""
    from tqdm.auto import tqdm

    return tqdm(iterable, total=total, desc=desc, unit=unit, disable=not enabled(),
                file=sys.stderr, dynamic_ncols=True, leave=False, **kwargs)


def track(iterable: Iterable[T], **kwargs: Any) -> Iterator[T]:
    """Iterate ``iterable`` with a progress bar (see :func:`progress`)."""
    with progress(iterable, **kwargs) as bar:
        yield from bar
