"""Exceptions raised by simbench, and the argument checks that raise them. Every message names
the bad value and what was expected."""
from __future__ import annotations

import difflib
import math
import os
import reprlib
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    import numpy as np

__all__ = ["flag", "meant_flag", "SimbenchError", "URDFError", "UnknownNameError", "ShapeError", "SceneError", "SRDFError",
           "RecordingError", "MissingExtraError", "CLOSE_CUTOFF", "likeness", "closest", "lookup", "finite_number",
           "shown", "shown_path", "path_text",
           "reason", "real_array", "outside_limits", "in_degrees", "degrees_note", "beyond_a_turn", "quaternion_of_angles", "degrees_hint", "is_count", "nearest_hint", "as_rng"]

V = TypeVar("V")


class SimbenchError(Exception):
    """Base class of every error simbench raises on bad user input."""


class URDFError(SimbenchError, ValueError):
    """A URDF file is missing, malformed or describes an impossible tree."""


class UnknownNameError(SimbenchError, LookupError):
    """A body, link or joint name that does not exist. Lists the close matches."""

    def __init__(self, what: str, name: object, valid: Iterable[str], where: str = ""):
        self.what, self.name, self.valid = what, name, sorted(set(valid))
        close = closest(str(name), self.valid)
        msg = f"unknown {what} {shown(name)}" + (f" in {where}" if where else "")
        msg += f"; did you mean {', '.join(map(repr, close))}?" if close else "."
        listed = self.valid if len(self.valid) <= 40 else self.valid[:40] + ["..."]
        msg += f" Valid {what} names: {', '.join(listed) if listed else '(none)'}"
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


#: how alike (0 to 1, :func:`likeness`) a name must be for :func:`closest` to suggest it
CLOSE_CUTOFF = 0.5


def likeness(name: str, other: str) -> float:
    """How alike two names are, 0 to 1, case ignored: difflib's ratio, as :func:`closest` and
    ``difflib.get_close_matches`` rank them."""
    return difflib.SequenceMatcher(None, name.casefold(), other.casefold()).ratio()


def closest(name: str, valid: Iterable[str], n: int = 3) -> list[str]:
    """Up to ``n`` valid names close to ``name``: the ones equal to it but for case when there
    are any (``"ROBOT"`` suggests ``"robot"``), else difflib's close matches ignoring case."""
    valid = list(dict.fromkeys(valid))
    folded: dict[str, list[str]] = {}
    for v in valid:
        folded.setdefault(v.casefold(), []).append(v)
    key = name.casefold()
    out = [v for v in folded.get(key, []) if v != name]
    if out:  # the same name but for case: that is the answer
        return out[:n]
    for match in difflib.get_close_matches(key, list(folded), n=n, cutoff=CLOSE_CUTOFF):
        out.extend(v for v in folded[match] if v not in out and v != name)
    return out[:n]


def lookup(mapping: Mapping[str, V], name: str, what: str, where: str = "") -> V:
    """``mapping[name]``, or an :class:`UnknownNameError` listing close matches."""
    try:
        return mapping[name]
    except (KeyError, TypeError):
        error = UnknownNameError(what, name, mapping.keys(), where)
        if not isinstance(name, str):   # `link_pose(m, q, 7)`, a list of names: say the type
            first = next(iter(name), None) if isinstance(name, (list, tuple)) else None
            near = [first] if first in error.valid else closest(str(name), error.valid, n=1)
            error.args = (f"{what} = {shown(name)}{' in ' + where if where else ''}; expected one {what} name "
                          f"(a str){f', e.g. {near[0]!r}' if near else ''}. Valid {what} names: "
                          f"{', '.join(error.valid[:40])}",)
        raise error from None


_SHORT = reprlib.Repr()   # its defaults: 40 digits of an int, 6 items of a list ...
_SHORT.maxstring, _SHORT.maxother = 60, 80
_SHORT.maxlist = _SHORT.maxtuple = _SHORT.maxdict = _SHORT.maxset = 8
#: longest value a message shows
SHOWN_CHARS = 200


def shown(value: Any) -> str:
    """``repr(value)`` on one line of at most :data:`SHOWN_CHARS` characters, for messages: long
    numbers, strings and sequences keep their ends around ``...``, numpy arrays their first and
    last three entries.

    >>> shown(10**400)
    '100000000000000000...0000000000000000000'
    >>> shown([0.5] * 100)
    '[0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, ...]'
    """
    if type(value).__module__ == "numpy" and hasattr(value, "shape"):
        import numpy as np

        with np.printoptions(threshold=8, edgeitems=3):
            text = repr(value)
    else:
        text = _SHORT.repr(value)
    return _one_line(text, SHOWN_CHARS)


#: longest exception text a message quotes after the value
REASON_CHARS = 80


def reason(exc: BaseException) -> str:
    """An exception's text on one line of at most :data:`REASON_CHARS` characters, for the
    parenthesis after a message that already shows the value (numpy quotes the whole string it
    could not convert)."""
    return _one_line(str(exc), REASON_CHARS)


def _one_line(text: str, limit: int) -> str:
    text = " ".join(text.split())
    if len(text) > limit:
        half = (limit - 3) // 2
        text = text[:half] + "..." + text[-half:]
    return text


def path_text(value: Any, what: str, also: str = "") -> str:
    """The text of a path given as a str or an ``os.PathLike`` (not bytes), or one line naming
    what came instead: ``"{what} = None; expected a path (a str or pathlib.Path){also}"``."""
    text = os.fspath(value) if isinstance(value, (str, os.PathLike)) else None
    if not isinstance(text, str):
        raise SimbenchError(f"{what} = {shown(value)}; expected a path (a str or pathlib.Path){also}")
    return text


def shown_path(value: Any) -> str:
    """``repr(value)`` of a file or folder path, whole when it fits in :data:`SHOWN_CHARS`
    characters (a path cut in the middle cannot be looked for), else :func:`shown`."""
    text = repr(value)
    return text if len(text) <= SHOWN_CHARS else shown(value)


def finite_number(value: Any, what: str, unit: str = "", error: type[SimbenchError] = SimbenchError) -> float:
    """``float(value)``, or ``error`` naming the value: ``"{what} = 'x'; expected a number{unit}"``
    (``"... a finite number{unit}"`` for nan and inf).

    >>> finite_number("2.5", "camera yaw")
    2.5
    """
    try:
        v = float(value)
    except (TypeError, ValueError, OverflowError):
        raise error(f"{what} = {shown(value)}; expected a number{unit}") from None
    if not math.isfinite(v):
        raise error(f"{what} = {shown(value)}; expected a finite number{unit}")
    return v


def finite_or_none(value: Any) -> float | None:
    """``value`` as a finite float, or None for text, booleans, nan, inf and what ``float``
    refuses (a value typed as a number, not one parsed from text)."""
    if isinstance(value, (str, bytes, bool)):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return number if math.isfinite(number) else None


def real_array(value: Any) -> Any:
    """``numpy.asarray(value, dtype=float)`` for numbers only: TypeError for text (numpy would read
    ``"0.5"`` as 0.5) and complex numbers (numpy would drop the imaginary part), so that
    a q read from a file as strings is refused rather than guessed at.

    >>> real_array([1, 2.5])
    array([1. , 2.5])
    """
    import numpy as np

    try:
        raw = value if isinstance(value, np.ndarray) else np.asarray(value)
    except TypeError:
        if "Tracer" in type(value).__name__:   # jax.grad / jax.jit through the numpy functions
            raise TypeError("a jax tracer; for jax.grad use simbench.dynamics.autodiff") from None
        raise
    kind = raw.dtype.kind
    if kind == "O" and any(v is None for v in raw.flat):
        raise TypeError("None instead of numbers")
    if kind == "O" and any(isinstance(v, (str, bytes)) for v in raw.flat):
        kind = "U"            # text among other objects (objects such as Decimal convert below)
    if kind in "USc":
        raise TypeError("complex values; expected real numbers" if kind == "c" else
                        "text, not numbers; convert it with float() first")
    return raw.astype(float, copy=False)


def outside_limits(given: str, value: float, lo: float, hi: float, unit: str,
                   range_name: str = "the joint's limits") -> str:
    """The one line for a joint value outside its range, ``given`` as the user wrote it, with
    the closest valid value (the scene's ``[body.joints]`` and ``view --q`` say it alike).

    >>> outside_limits("joint j1 = 5", 5.0, -3.0, 3.0, "rad")
    "joint j1 = 5: outside the joint's limits [-3, 3] rad; closest valid value 3"
    """
    return (f"{given}: outside {range_name} [{lo:.4g}, {hi:.4g}] {unit}; "
            f"closest valid value {min(max(value, lo), hi):.4g}")


def in_degrees(angle: float) -> str:
    """The reading of an angle given in degrees, for a hint: ``"90 degrees is 1.571 rad"``."""
    return f"{angle:g} degrees is {math.radians(angle):.4g} rad"


def degrees_note(value: float, unit: str = "rad") -> str:
    """``" (degrees? 90 degrees is 1.571 rad)"`` for an angle beyond a turn, else ``""``: the
    hint beside a value refused as outside a joint's limits, or in :func:`degrees_hint`."""
    return f" (degrees? {in_degrees(value)})" if unit == "rad" and abs(value) > 2 * math.pi else ""


def beyond_a_turn(rpy: Sequence[float]) -> str:
    """``""``, or why roll pitch yaw ``rpy`` look like degrees: ``"90 rad is more than a turn;
    expected roll pitch yaw in radians (90 degrees is 1.571 rad)"`` (an angle beyond 2 pi)."""
    big = [float(x) for x in rpy if abs(float(x)) > 2 * math.pi]
    if not big:
        return ""
    return f"{big[0]:g} rad is more than a turn; expected roll pitch yaw in radians ({in_degrees(big[0])})"


def quaternion_of_angles(q: Sequence[float]) -> str:
    """Why a 4-number orientation with an entry beyond a turn is refused: a quaternion (any
    non-zero one is normalised) never holds such a number, angles in degrees do."""
    big = max((float(x) for x in q), key=abs)
    return (f"{big:g} is more than a turn: not a quaternion x y z w (whose entries lie within [-1, 1] once "
            f"normalised) but angles, in degrees? Give roll pitch yaw in radians (3 numbers; {in_degrees(big)})")


def degrees_hint(q: "np.ndarray", names: Sequence[str], lo: "np.ndarray", hi: "np.ndarray") -> str:
    """``""``, or one line on the first joint value of ``q`` (..., n) beyond a turn and outside
    its limits [lo, hi] rad (per column; -inf, inf for joints not judged): an angle that looks
    like degrees. ``"joint 'j2' = 90 rad: beyond a turn and outside its limits [-2.094, 2.094]
    rad (degrees? 90 degrees is 1.571 rad)"``, with how many of a batch's configurations hold one."""
    import numpy as np

    bad = (np.abs(q) > 2 * math.pi) & ((q < lo) | (q > hi))
    if not bad.any():
        return ""
    where = tuple(int(i) for i in np.argwhere(bad)[0])
    col, v = where[-1], float(q[where])
    rows = bad.reshape(-1, bad.shape[-1])[:, col]    # that joint's count, not any joint's
    many = f" in {int(rows.sum()):,} of {rows.size:,} configurations" if q.ndim > 1 else ""
    return (f"joint {names[col]!r} = {v:g} rad{many}: beyond a turn and outside its limits "
            f"[{lo[col]:.4g}, {hi[col]:.4g}] rad{degrees_note(v)}")


_MEANT = {"true": True, "yes": True, "on": True, "1": True, "false": False, "no": False, "off": False,
          "0": False, "": False}


def meant_flag(value: Any) -> bool | None:
    """The True or False a user most likely meant by ``value`` ('no', 'yes', 0, 1, None), or None."""
    import numpy as np

    if isinstance(value, str):
        return _MEANT.get(value.strip().lower())
    return bool(value) if value is None or (isinstance(value, (int, np.integer)) and value in (0, 1)) else None


def flag(value: Any, what: str) -> bool:
    """``value`` as a bool when it is one (numpy's too); otherwise one line naming it, since
    Python reads any non-empty text, 'no' included, as True."""
    import numpy as np

    if value is True or value is False or isinstance(value, np.bool_):
        return bool(value)
    meant = meant_flag(value)
    hint = f" (did you mean {meant}?)" if meant is not None else ""
    raise SimbenchError(f"{what} = {shown(value)}; expected True or False{hint}")


def is_count(value: Any) -> bool:
    """True for an integer >= 0 (numpy's too), False for anything else (bools included)."""
    import numpy as np

    return isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value >= 0


def nearest_hint(value: Any, whole: bool) -> str:
    """`` (did you mean X?)`` for a bad count (``whole``) or non-negative number with a close
    valid one: a number in a string, a fraction for a count, a negative number (0); else ``""``."""
    import numpy as np

    x = value
    if isinstance(value, str):
        try:
            x = float(value)
        except ValueError:
            return ""
    if not isinstance(x, (int, float, np.integer, np.floating)) or not math.isfinite(x):
        return ""
    best = max(0, round(x)) if whole else max(0.0, float(x))
    return f" (did you mean {best!r}?)"


def as_rng(rng: Any, what: str = "rng") -> np.random.Generator:
    """A numpy Generator from ``rng``: a Generator (used as is), an integer seed >= 0, or None
    (fresh entropy); one line naming anything else."""
    import numpy as np

    if rng is None or isinstance(rng, np.random.Generator):
        return np.random.default_rng(rng)
    if is_count(rng):
        return np.random.default_rng(int(rng))
    raise SimbenchError(f"{what} = {shown(rng)}; expected a numpy Generator (np.random.default_rng(...)), an "
                        f"integer seed >= 0 or None{nearest_hint(rng, whole=True)}")


class MissingExtraError(SimbenchError, ImportError):
    """An optional dependency is not installed; the message names the extra that provides it."""

    def __init__(self, module: str, extra: str, purpose: str):
        self.module, self.extra = module, extra
        super().__init__(f"{purpose} needs {module}, which is not installed; install the "
                         f"'{extra}' extra: pip install 'simbench[{extra}]'")
