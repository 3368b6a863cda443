"""The one row type of every benchmark suite and the one JSON layout.

A :class:`Row` is one contender's median on one quantity of one robot: ``us_per_config``
(microseconds per configuration; a one-off cost such as a compile is one "configuration"), and
``ratio`` = its time / the time of ``reference``, another contender of the same suite, robot
and quantity *timed in the same run* (lower is faster; the reference's own row has ratio 1).
A :class:`Report` holds the rows with the machine, library versions and settings of the run;
:meth:`Report.to_json` gives the file layout::

    {"schema": "simbench.bench/1", "machine": {...}, "versions": {...}, "settings": {...},
     "rows": [{"suite", "robot", "quantity", "contender", "n", "us_per_config", "reference",
               "ratio", "notes"}, ...], "notes": [...]}

A run stopped before its suites were done (Ctrl-C, SIGTERM) adds ``"interrupted": true,
"signal": "SIGINT"`` (or ``"SIGTERM"``) after ``settings``: its rows are those finished.
"""
from __future__ import annotations

import os
import platform
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from .harness import Timing

SCHEMA = "simbench.bench/1"
SUITES = ("dynamics", "collision", "sweep", "autodiff")


@dataclass(frozen=True)
class Row:
    """One measurement (see the module docstring)."""

    suite: str
    robot: str
    quantity: str
    contender: str
    n: int
    us_per_config: float
    reference: str | None = None
    ratio: float | None = None
    notes: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


KEYS = tuple(f.name for f in fields(Row))


def rows_from(suite: str, robot: str, quantity: str, timings: Mapping[str, Timing],
              reference: str | None, notes: Mapping[str, str] | None = None) -> list[Row]:
    """Rows of one interleaved group, each with its ratio to ``reference`` (one of the group,
    or None), in the group's order."""
    notes = notes or {}
    ref = timings[reference].us if reference in timings else None
    return [Row(suite, robot, quantity, name, t.configs, t.us, reference if ref else None,
                t.us / ref if ref else None, notes.get(name, "")) for name, t in timings.items()]


#: what a suite hands each group of rows to as soon as it is timed (``on_rows=``)
RowsCallback = Callable[[list[Row]], None]


def emit(rows: list[Row], on_rows: RowsCallback | None) -> list[Row]:
    """``rows``, handed to ``on_rows`` first: a suite's rows reach the report (and the console) as
    each group is done, so that an interrupted run keeps them."""
    if on_rows is not None and rows:
        on_rows(list(rows))
    return rows


def one_off(suite: str, robot: str, quantity: str, contender: str, seconds: float,
            notes: str = "") -> Row:
    """A one-off cost (a compile, a derivation, a start-up): one call, no reference."""
    return Row(suite, robot, quantity, contender, 1, seconds * 1e6, None, None, notes)


@dataclass
class Report:
    """A run: its rows, the machine, the library versions, the settings, and notes (rows
    skipped and why); ``interrupted``: the signal that stopped the run ("SIGINT", "SIGTERM")
    before its suites were done (the rows are those finished), None for a whole run."""

    rows: list[Row] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    machine: dict[str, Any] = field(default_factory=lambda: machine_info())
    versions: dict[str, str] = field(default_factory=lambda: library_versions())
    interrupted: str | None = None

    def extend(self, rows: Iterable[Row]) -> None:
        self.rows.extend(rows)

    def to_json(self) -> dict[str, Any]:
        return {"schema": SCHEMA, "machine": self.machine, "versions": self.versions,
                "settings": self.settings,
                **({"interrupted": True, "signal": self.interrupted} if self.interrupted else {}),
                "rows": [r.as_dict() for r in self.rows], "notes": list(self.notes)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "Report":
        return cls([Row(**r) for r in data["rows"]], dict(data["settings"]), list(data["notes"]),
                   dict(data["machine"]), dict(data["versions"]), data.get("signal"))


# ---------------------------------------------------------------------- machine, versions
def machine_info() -> dict[str, Any]:
    """CPU model, cores (all and usable by this process), platform, 1-minute load average."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        usable = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        usable = os.cpu_count() or 0
    return {"cpu": cpu, "cores": os.cpu_count() or 0, "usable_cores": usable,
            "platform": platform.platform(), "load_average_1min": load_average()}


def load_average() -> float:
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return float("nan")


def library_versions() -> dict[str, str]:
    """Versions of Python and of every library a suite times ("not installed" when absent)."""
    from importlib import metadata

    out = {"python": platform.python_version()}
    for key in ("numpy", "numba", "pybullet", "pin", "sympy", "jax", "ray", "simbench"):
        try:
            out[key] = metadata.version(key)
        except metadata.PackageNotFoundError:
            out[key] = "not installed"
    return out


__all__ = ["Row", "Report", "rows_from", "one_off", "emit", "RowsCallback", "machine_info", "library_versions", "KEYS",
           "SCHEMA", "SUITES"]
