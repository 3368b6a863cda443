"""The one writer of benchmark results: a console table, JSON, and Markdown for the README.

All three read a :class:`~simbench.bench.schema.Report`; times are microseconds per
configuration (one-off costs of a second or more are shown in seconds), ratios are a row's time
over its reference's time in the same run (lower is faster).
"""
from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TextIO

from ..outputs import parent_made
from .schema import Report, Row


def fmt_us(us: float) -> str:
    """Microseconds as text: seconds from 0.1 s up, thousands separated, 3 significant digits."""
    if us >= 1e5:
        return f"{us / 1e6:.2f} s"
    if us >= 1000:
        return f"{us:,.0f}"
    return f"{us:.3g}" if us < 10 else f"{us:.1f}"


def fmt_ratio(ratio: float | None) -> str:
    return "" if ratio is None else f"{ratio:.3g}"


def _groups(rows: Iterable[Row]) -> dict[tuple[str, str], list[Row]]:
    out: dict[tuple[str, str], list[Row]] = {}
    for r in rows:
        out.setdefault((r.suite, r.robot), []).append(r)
    return out


def header(report: Report) -> list[str]:
    """Machine, versions and settings, one line each."""
    m, s = report.machine, report.settings
    settings = ", ".join(f"{k} {v}" for k, v in s.items() if not isinstance(v, (dict, list)))
    return [f"machine: {m.get('cpu')}, {m.get('cores')} cores ({m.get('usable_cores')} usable), "
            f"{m.get('platform')}, load {m.get('load_average_1min')}",
            "versions: " + ", ".join(f"{k} {v}" for k, v in report.versions.items()),
            f"settings: {settings}",
            "us = median microseconds per configuration over interleaved rounds; ratio = time / the "
            "reference's time in the same run (lower is faster)"]


def _quantity_line(r: Row) -> str:
    return f"  {r.quantity}" + (f" (ratio to {r.reference})" if r.reference else "")


def _row_line(r: Row, width: int) -> str:
    return (f"    {r.contender:<{width}} {r.n:>7} {fmt_us(r.us_per_config):>10} "
            f"{fmt_ratio(r.ratio):>7}  {r.notes}".rstrip())


def stopped(report: Report) -> str:
    """'' for a whole run; else what stopped it, for the last line and the Markdown."""
    if report.interrupted is None:
        return ""
    how = "terminated (SIGTERM)" if report.interrupted == "SIGTERM" else "interrupted (SIGINT)"
    return f"{how} before the run was done: {len(report.rows)} rows finished, the suites' other rows not measured"


def console(report: Report) -> str:
    """The report as plain text: the header, then one table per suite and robot."""
    lines = header(report) + [""]
    for (suite, robot), rows in _groups(report.rows).items():
        lines.append(f"== {suite}: {robot}")
        width = max(len(r.contender) for r in rows)
        quantity = None
        for r in rows:
            if r.quantity != quantity:
                quantity = r.quantity
                lines.append(_quantity_line(r))
            lines.append(_row_line(r, width))
        lines.append("")
    lines += [f"note: {n}" for n in report.notes]
    if report.interrupted:
        lines.append(stopped(report))
    return "\n".join(lines).rstrip() + "\n"


class Live:
    """:func:`console`'s text printed as the run goes: the header at the start, each group of
    rows as it is timed (so that an interrupted run has shown what it measured), the notes at
    the end."""

    def __init__(self, out: TextIO | None = None):
        self.out = out
        self._group: tuple[str, str] | None = None
        self._quantity: str | None = None

    def _print(self, lines: list[str]) -> None:
        out = self.out or sys.stdout
        out.write("".join(line + "\n" for line in lines))
        out.flush()

    def start(self, report: Report) -> None:
        self._print(header(report))

    def rows(self, rows: Sequence[Row]) -> None:
        lines: list[str] = []
        width = max(len(r.contender) for r in rows)
        for r in rows:
            if (r.suite, r.robot) != self._group:
                self._group, self._quantity = (r.suite, r.robot), None
                lines += ["", f"== {r.suite}: {r.robot}"]
            if r.quantity != self._quantity:
                self._quantity = r.quantity
                lines.append(_quantity_line(r))
            lines.append(_row_line(r, width))
        self._print(lines)

    def end(self, report: Report) -> None:
        self._print([""] + [f"note: {n}" for n in report.notes] + ([stopped(report)] if report.interrupted else []))


def markdown(report: Report, suites: Sequence[str] | None = None) -> str:
    """Markdown tables, one per suite (all suites, or ``suites``), after a line naming the
    machine and versions of the run; a robot and a quantity (with its reference) are written
    on their first row only."""
    m = report.machine
    out = [f"Measured on {m.get('cpu')} ({m.get('cores')} cores, load {m.get('load_average_1min')}): "
           + ", ".join(f"{k} {v}" for k, v in report.versions.items()) + "."]
    if report.interrupted:
        out += ["", f"**{stopped(report)[:1].upper()}{stopped(report)[1:]}.**"]
    by_suite: dict[str, list[Row]] = {}
    for r in report.rows:
        by_suite.setdefault(r.suite, []).append(r)
    for suite, rows in by_suite.items():
        if suites is not None and suite not in suites:
            continue
        out += ["", f"**{suite}**", "", "| robot | quantity (ratio to) | contender | n | µs per config | ratio "
                "| notes |", "|---|---|---|---:|---:|---:|---|"]
        last: tuple[str, str] = ("", "")
        for r in rows:
            robot = r.robot if r.robot != last[0] else ""
            quantity = (r.quantity + (f" (ratio to {r.reference})" if r.reference else "")
                        if (r.robot, r.quantity) != last else "")
            last = (r.robot, r.quantity)
            notes = r.notes.replace("|", "/")
            out.append(f"| {robot} | {quantity} | {r.contender} | {r.n:,} | {fmt_us(r.us_per_config)} "
                       f"| {fmt_ratio(r.ratio)} | {notes} |")
    return "\n".join(out) + "\n"


def write_json(report: Report, path: str | os.PathLike) -> Path:
    """Write the report's JSON layout (see :mod:`simbench.bench.schema`) to ``path``."""
    path = parent_made(path)
    path.write_text(json.dumps(report.to_json(), indent=2) + "\n")
    return path


def read_json(path: str | os.PathLike) -> Report:
    return Report.from_json(json.loads(Path(path).read_text()))


__all__ = ["console", "Live", "stopped", "markdown", "write_json", "read_json", "header", "fmt_us", "fmt_ratio"]
