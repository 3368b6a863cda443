"""The numbers of a check (``samples``, ``seed``, ``tol``, ``timeout``) judged once, for the
command line and the API alike: a bad one is a :class:`~simbench.errors.SimbenchError` of one
line naming the value, what was expected and the closest valid choice, before any work.

``samples`` is bounded by :data:`MAX_SAMPLES`: every state of a robot is held in memory at once,
with its torques and mass matrices from each voice (PyBullet, the dynamics under test, Pinocchio,
the true dynamics) and their differences: :func:`floats_per_sample` ``(n)`` floats per state of an
``n``-DOF robot (3.2 kB for the 7-DOF iiwa, as measured: the peak resident memory of
``compare`` grew by 3.2 kB per sample from 20,000 to 40,000 samples; 10^11 samples of a one-joint
robot asked numpy for 745 GiB).
"""
from __future__ import annotations

import math
import operator
from typing import Any

from ..errors import SimbenchError, shown

#: random states per robot, at most: 100,000 states take 0.3 GB for a 7-DOF robot, 5 GB for 30 DOF
MAX_SAMPLES = 100_000

#: the defaults, offered when nothing closer is valid
DEFAULT_SAMPLES, DEFAULT_TOL = 50, 1e-8


def floats_per_sample(dof: int) -> int:
    """Floats held per state of a ``dof``-DOF robot: q, qd, qdd, six (n,) torques and seven
    (n, n) mass matrices (PyBullet, the tested, Pinocchio, the truth, copies and differences)."""
    return 3 * dof + 6 * dof + 7 * dof * dof


def _gb(samples: int, dof: int) -> str:
    return f"{samples * floats_per_sample(dof) * 8 / 1e9:.1g} GB"


def _name(name: str, value: Any, cli: bool) -> str:
    return f"--{name} {shown(value)}" if cli else f"{name} = {shown(value)}"


def _as_int(value: Any) -> int | None:
    """``value`` as an int when it is one (numpy integers too; not a bool), else None."""
    if isinstance(value, bool):
        return None
    try:
        return operator.index(value)
    except TypeError:
        return None


def _nearby_int(value: Any, low: int, high: int | None, default: int) -> int:
    """The valid integer closest to ``value`` (a float, a numeric string), else ``default``."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        return default
    if not math.isfinite(x):
        return default if math.isnan(x) or high is None else (high if x > 0 else low)
    out = max(low, int(round(x)))
    return min(out, high) if high is not None else out


def check_samples(samples: Any, *, cli: bool = False) -> int:
    """``samples`` as an int in 1 .. :data:`MAX_SAMPLES`; else a one-line :class:`SimbenchError`."""
    n = _as_int(samples)
    flag = "--samples " if cli else "samples = "
    if n is not None and 1 <= n <= MAX_SAMPLES:
        return n
    if n is not None and n > MAX_SAMPLES:
        raise SimbenchError(f"{_name('samples', samples, cli)}: expected a positive integer up to {MAX_SAMPLES:,} "
                            f"random states per robot (all of them are held in memory with their torques and mass "
                            f"matrices: {MAX_SAMPLES:,} states of a 7-DOF robot take about {_gb(MAX_SAMPLES, 7)}, "
                            f"of a 30-DOF robot {_gb(MAX_SAMPLES, 30)}) (closest valid: {flag}{MAX_SAMPLES})")
    what = "" if n is not None else f", not {_a(samples)}"
    raise SimbenchError(f"{_name('samples', samples, cli)}: expected a positive integer{what} (closest valid: "
                        f"{flag}{_nearby_int(samples, 1, MAX_SAMPLES, DEFAULT_SAMPLES)})")


def check_seed(seed: Any, *, cli: bool = False) -> int:
    """``seed`` as an int >= 0 (numpy's ``default_rng`` refuses negative seeds)."""
    n = _as_int(seed)
    if n is not None and n >= 0:
        return n
    flag = "--seed " if cli else "seed = "
    what = "" if n is not None else f", not {_a(seed)}"
    raise SimbenchError(f"{_name('seed', seed, cli)}: expected an integer >= 0{what} (closest valid: "
                        f"{flag}{_nearby_int(seed, 0, None, 0)})")


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) and not hasattr(value, "__float__"):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _a(value: Any) -> str:
    name = type(value).__name__
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"


def check_tol(tol: Any, *, cli: bool = False) -> float:
    """``tol`` as a finite float > 0: a robot passes when max|error| <= tol * max(1, max|PyBullet|)."""
    x = _number(tol)
    if x is not None and math.isfinite(x) and x > 0:
        return x
    flag = "--tol " if cli else "tol = "
    what = f", not {_a(tol)}" if x is None else "" if math.isfinite(x) else ", a finite one"
    raise SimbenchError(f"{_name('tol', tol, cli)}: expected a positive number{what} (a robot passes when max|error| "
                        f"<= tol * max(1, max|PyBullet|)) (e.g. {flag}{DEFAULT_TOL:g}, the default)")


def check_timeout(timeout: Any, default: float, *, cli: bool = False) -> float | None:
    """``timeout`` as seconds > 0, or None for no limit (also from ``inf``)."""
    if timeout is None and not cli:
        return None
    x = _number(timeout)
    if x is not None and x > 0:
        return None if math.isinf(x) else x
    flag = "--timeout " if cli else "timeout = "
    what = f" (not {_a(timeout)})" if x is None else ""
    none = "inf" if cli else "None"
    raise SimbenchError(f"{_name('timeout', timeout, cli)}: expected a positive number of seconds{what}, or {none} for "
                        f"no limit (e.g. {flag}{default:g}, the default)")


def check_numbers(samples: Any, seed: Any, tol: Any, timeout: Any, default_timeout: float, *,
                  cli: bool = False) -> tuple[int, int, float, float | None]:
    """The four numbers of a check, judged in the order the command line lists them."""
    return (check_samples(samples, cli=cli), check_seed(seed, cli=cli), check_tol(tol, cli=cli),
            check_timeout(timeout, default_timeout, cli=cli))


__all__ = ["MAX_SAMPLES", "check_numbers", "check_samples", "check_seed", "check_tol", "check_timeout",
           "floats_per_sample"]
