"""Exceptions raised by simbench. Every message names the bad value and what was expected."""
from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from typing import TypeVar

V = TypeVar("V")


class SimbenchError(Exception):
    """Base class of every error simbench raises on bad user input."""


class URDFError(SimbenchError, ValueError):
    """A URDF file is missing, malformed or describes an impossible tree."""


class UnknownNameError(SimbenchError, LookupError):
    """A body, link or joint name that does not exist. Lists the close matches."""

    def __init__(self, what: str, name: object, valid: Iterable[str], where: str = ""):
        self.what, self.name, self.valid = what, name, sorted(set(valid))
        close = difflib.get_close_matches(str(name), self.valid, n=3, cutoff=0.5)
        msg = f"unknown {what} {name!r}" + (f" in {where}" if where else "")
        if close:
            msg += f"; did you mean {', '.join(map(repr, close))}?"
        shown = self.valid if len(self.valid) <= 40 else self.valid[:40] + ["..."]
        msg += f" Valid {what} names: {', '.join(shown) if shown else '(none)'}"
        super().__init__(msg)

    def __str__(self) -> str:  # LookupError would otherwise repr() the message
        return self.args[0]


class ShapeError(SimbenchError, ValueError):
    """An array argument has the wrong shape or holds NaN/inf."""


class SceneError(SimbenchError, ValueError):
    """A scene file or description that cannot be used."""


class SRDFError(SimbenchError, ValueError):
    """An SRDF file (allowed-collision pairs) that cannot be read."""


class RecordingError(SimbenchError):
    """A recording that cannot be written (unsupported format, missing encoder)."""


def lookup(mapping: Mapping[str, V], name: str, what: str, where: str = "") -> V:
    """``mapping[name]``, or an :class:`UnknownNameError` listing close matches."""
    try:
        return mapping[name]
    except (KeyError, TypeError):
        raise UnknownNameError(what, name, mapping.keys(), where) from None
