"""Logging: library modules log to ``logging.getLogger(__name__)`` (loggers under ``simbench``);
the command line shows those messages with :func:`configure`, one line each, in the same form as
its error lines::

    simbench check: compiling dynamics kernels once, about 40 s; cached in ...
    simbench check: warning: ...
    simbench check: error: ...          (printed by the command's frame, exit status 2)

``simbench -q CMD`` shows warnings and errors only (and no progress bars); ``simbench -v CMD``
adds debug messages (with the logger's name) and the traceback of an unexpected error.

As a library, simbench configures nothing: Python shows its warnings on stderr, and
``logging.basicConfig(level=logging.INFO)`` (or ``logging.getLogger("simbench").setLevel(...)``)
shows more. Progress bars follow the same switch (:mod:`simbench.progress`).
"""
from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Iterator

ROOT = "simbench"
QUIET, NORMAL, VERBOSE = -1, 0, 1
_LEVELS = {QUIET: logging.WARNING, NORMAL: logging.INFO, VERBOSE: logging.DEBUG}
_PREFIX = {logging.DEBUG: "debug: ", logging.INFO: "", logging.WARNING: "warning: ",
           logging.ERROR: "error: ", logging.CRITICAL: "error: "}


def one_line(text: object) -> str:
    """``text`` with its line breaks and runs of spaces collapsed into single spaces."""
    return " ".join(str(text).split())


def line(command: str | None, message: object, level: int = logging.INFO) -> str:
    """``simbench CMD: [warning: |error: |debug: ]message`` on one line."""
    head = f"simbench {command}: " if command else "simbench: "
    return head + _PREFIX.get(level, "") + one_line(message)


class _Formatter(logging.Formatter):
    def __init__(self, command: str | None, verbose: bool):
        super().__init__()
        self.command, self.verbose = command, verbose

    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        if record.levelno <= logging.DEBUG:
            message = f"{record.name}: {message}"
        text = line(self.command, message, record.levelno)
        if self.verbose and record.exc_info:
            text += "\n" + self.formatException(record.exc_info)
        return text


class _Handler(logging.Handler):
    """Writes to the *current* ``sys.stderr``, through tqdm so that a bar being drawn is not
    broken by the message."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = self.format(record)
            try:
                from tqdm import tqdm

                tqdm.write(text, file=sys.stderr)
            except ImportError:  # pragma: no cover - tqdm is a dependency
                print(text, file=sys.stderr)
        except Exception:  # never let logging break the command
            self.handleError(record)


def configure(command: str | None = None, verbosity: int = NORMAL) -> logging.Logger:
    """Show the ``simbench`` loggers' messages on stderr as one line each (the CLI calls this).

    ``verbosity``: :data:`QUIET` (warnings and errors), :data:`NORMAL` (and information, the
    default), :data:`VERBOSE` (and debug messages). Calling it again replaces the set-up.
    """
    logger = logging.getLogger(ROOT)
    for handler in list(logger.handlers):
        if isinstance(handler, _Handler):
            logger.removeHandler(handler)
    handler = _Handler()
    handler.setFormatter(_Formatter(command, verbosity >= VERBOSE))
    logger.addHandler(handler)
    logger.setLevel(_LEVELS[max(QUIET, min(VERBOSE, verbosity))])
    return logger


@contextlib.contextmanager
def configured(command: str | None = None, verbosity: int = NORMAL) -> Iterator[logging.Logger]:
    """:func:`configure` for the duration of a block; the previous set-up is restored after."""
    logger = logging.getLogger(ROOT)
    saved = (logger.level, list(logger.handlers))
    try:
        yield configure(command, verbosity)
    finally:
        logger.setLevel(saved[0])
        logger.handlers[:] = saved[1]


def verbosity() -> int:
    """The current verbosity of the ``simbench`` logger (:data:`QUIET`, :data:`NORMAL` or
    :data:`VERBOSE`)."""
    level = logging.getLogger(ROOT).getEffectiveLevel()
    return VERBOSE if level <= logging.DEBUG else NORMAL if level <= logging.INFO else QUIET


__all__ = ["configure", "configured", "line", "one_line", "verbosity", "QUIET", "NORMAL", "VERBOSE", "ROOT"]
