"""``simbench bench`` (and ``python -m simbench.bench``): run the suites, print one table.

Suites: ``dynamics`` (our RNEA, CRBA, forward dynamics, Lagrangian and sympy paths against
Pinocchio and PyBullet; input forms; floating bases; first-use compile times), ``collision``
(the named-link query against raw PyBullet), ``sweep`` (engines in fresh processes) and
``autodiff`` (jax, optional). ``--quick`` is a smoke run of every suite (about two minutes);
``--json`` writes the :mod:`simbench.bench.schema` layout, ``--markdown`` the README's tables.
"""
from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from ..errors import SimbenchError
from ..signals import sigterm_interrupts
from . import report
from .schema import SUITES, Report, Row, RowsCallback

log = logging.getLogger(__name__)

#: suite -> settings of a full run and of --quick
FULL: dict[str, dict[str, Any]] = {
    "dynamics": dict(n=10_000, single_calls=1000, batch_calls=5, rounds=7, lagrange_n=500),
    "collision": dict(block=2000, rounds=7, n=40_000, edges=50),
    "sweep": dict(samples=200_000, rounds=1),
    "autodiff": dict(batch=128, rounds=7, calls=200),
}
QUICK: dict[str, dict[str, Any]] = {
    "dynamics": dict(n=1000, single_calls=100, batch_calls=2, rounds=3, lagrange_n=50),
    "collision": dict(block=500, rounds=3, n=4000, edges=10),
    "sweep": dict(samples=20_000, rounds=1),
    "autodiff": dict(batch=16, rounds=3, calls=20, cold=False),
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from .dynamics import ROBOTS

    parser.add_argument("--suite", action="append", choices=(*SUITES, "all"),
                        help="suite to run (repeatable; default all): " + ", ".join(SUITES))
    parser.add_argument("--robot", action="append", metavar="NAME_OR_URDF",
                        help=f"robot of the dynamics and autodiff suites (repeatable): {', '.join(ROBOTS)} "
                             f"or a URDF path / pybullet_data:NAME (default: all of them)")
    parser.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    parser.add_argument("--markdown", metavar="FILE", help="also write the tables as Markdown (the README's)")
    parser.add_argument("--quick", action="store_true",
                        help="small batches and few rounds: a smoke run of every suite")
    parser.add_argument("--n", type=int, default=None, help="batch size of the dynamics suite (default 10000)")
    parser.add_argument("--rounds", type=int, default=None, help="interleaved rounds per median (default 7)")
    parser.add_argument("--symbolic-max-dof", type=int, default=None,
                        help="derive the sympy model only up to this many DOF (default 7: about 20 s for "
                             "the iiwa; --quick uses 3)")
    parser.add_argument("--no-c", action="store_true", help="skip compiling the generated C code")
    parser.add_argument("--no-collision", action="store_true", help="leave out the collision suite")


def settings_of(args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    """Per suite, the keyword arguments of its ``run`` for these options."""
    out = {k: dict(v) for k, v in (QUICK if args.quick else FULL).items()}
    for name in out:
        if args.rounds is not None:
            out[name]["rounds"] = args.rounds
    if args.n is not None:
        out["dynamics"]["n"] = args.n
    out["dynamics"]["symbolic_max_dof"] = args.symbolic_max_dof or (3 if args.quick else 7)
    out["dynamics"]["want_c"] = not args.no_c
    out["dynamics"]["first_use"] = not args.quick
    out["dynamics"]["judge"] = not args.quick   # the targets are for the full settings
    return out


def suites_of(args: argparse.Namespace) -> list[str]:
    chosen = args.suite or ["all"]
    suites = list(SUITES) if "all" in chosen else [s for s in SUITES if s in chosen]
    return [s for s in suites if not (s == "collision" and args.no_collision)]


def run(suites: Sequence[str], robots: Sequence[str] | None, settings: dict[str, dict[str, Any]],
        *, quick: bool = False, on_start: Callable[[Report], None] | None = None,
        on_rows: RowsCallback | None = None) -> Report:
    """Run ``suites`` with ``settings`` (see :func:`settings_of`); the :class:`Report`, whose rows
    grow as each group is timed (``on_rows`` is given them then; ``on_start`` the report before
    the first). Ctrl-C (or SIGTERM made one) stops the run: the report keeps the rows finished and
    says ``interrupted``."""
    from . import autodiff, collision, dynamics, sweep

    t0 = time.perf_counter()
    result = Report(settings={"suites": list(suites), "quick": quick, **{
        f"{s}.{k}": v for s in suites for k, v in settings[s].items()}})
    notes = result.notes
    chosen = dynamics.resolve_robots(robots)
    if on_start is not None:
        on_start(result)
    taken: set[int] = set()

    def take(rows: list[Row]) -> None:
        fresh = [r for r in rows if id(r) not in taken]
        taken.update(id(r) for r in fresh)
        result.extend(fresh)
        if on_rows is not None and fresh:
            on_rows(fresh)

    try:
        for suite in suites:
            log.info("%s suite", suite)
            rows: list[Row]
            if suite == "dynamics":
                rows = dynamics.run(chosen, notes=notes, on_rows=take, **settings["dynamics"])
            elif suite == "collision":
                rows = collision.run(notes=notes, on_rows=take, **settings["collision"])
            elif suite == "sweep":
                rows = sweep.run(notes=notes, on_rows=take, **settings["sweep"])
            else:
                fixed = {k: spec for k, (spec, floating) in chosen.items() if not floating}
                if robots is None:
                    fixed = {k: v for k, v in fixed.items() if k in autodiff.ROBOTS}
                if quick:
                    fixed = dict(list(fixed.items())[:1])
                rows = autodiff.run(fixed, notes=notes, on_rows=take, **settings["autodiff"])
            take(rows)   # any row a suite returned without handing it on
    except KeyboardInterrupt:
        result.interrupted = "SIGINT"
    result.settings["seconds"] = round(time.perf_counter() - t0, 1)
    return result


def run_cli(args: argparse.Namespace) -> int:
    """Run ``simbench bench``: bad options, unknown robots and unwritable outputs are a
    :class:`SimbenchError` before any work."""
    from ..outputs import distinct_outputs, parent_made, writable_file
    from .dynamics import resolve_robots

    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    for flag, value in (("--n", args.n), ("--rounds", args.rounds), ("--symbolic-max-dof", args.symbolic_max_dof)):
        if value is not None and value < 1:
            raise SimbenchError(f"{flag} {value}: expected a positive integer")
    distinct_outputs(json=args.json, markdown=args.markdown)
    if args.json:
        writable_file(args.json, "--json report")
    if args.markdown:
        writable_file(args.markdown, "--markdown report")
    resolve_robots(args.robot)  # unknown robots: one line, before the work
    suites = suites_of(args)
    if not suites:
        raise SimbenchError("--no-collision leaves no suite to run; expected another --suite too")
    live = report.Live()
    with sigterm_interrupts() as terminated:   # Ctrl-C and SIGTERM: the rows finished are written
        result = run(suites, args.robot, settings_of(args), quick=args.quick, on_start=live.start,
                     on_rows=live.rows)
        if result.interrupted and terminated:
            result.interrupted = "SIGTERM"
        live.end(result)
        written = []
        if args.json:
            report.write_json(result, args.json)
            written.append(args.json)
        if args.markdown:   # its folder checked, not made, before the work
            parent_made(args.markdown).write_text(report.markdown(result))
            written.append(args.markdown)
        for path in written:
            print(f"wrote {path}")
    if result.interrupted:
        how = "terminated (SIGTERM)" if result.interrupted == "SIGTERM" else "interrupted"
        where = f"; the {len(result.rows)} rows finished are in {' and '.join(written)}" if written else ""
        print(f"simbench bench: {how}{where}", file=sys.stderr)
        return 143 if result.interrupted == "SIGTERM" else 130
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m simbench.bench [options]``: the same as ``simbench bench``."""
    from ..cli import main as simbench_main

    return simbench_main(["bench", *(sys.argv[1:] if argv is None else argv)])


__all__ = ["add_arguments", "run_cli", "run", "main", "settings_of", "suites_of", "FULL", "QUICK"]
