"""``simbench check``: arguments, the run, and what is printed and written.

Everything that can be checked before the work starts is (the targets resolved and parsed, the
output paths writable, the ``--dynamics`` module found and its function present); a usage error
prints one line and exits 2. After that, every robot gets a verdict, the summary is printed and
the reports are written whatever the user's code does; Ctrl-C keeps what was done (exit 130).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from ..errors import SimbenchError, shown_path
from ..outputs import distinct_outputs, parent_made, writable_dir, writable_file
from ..signals import sigterm_interrupts
from .bullet import as_quaternion
from .checker import check
from .dynamics import DEFAULT_TIMEOUT, load_dynamics
from .floating import HINT
from .inputs import MAX_SAMPLES, check_numbers
from .plots import _pyplot, file_stem, is_png, plot_robot
from .report import ERROR, EXPLAINED, FAIL, SKIPPED, Report, RobotResult
from .targets import FLOATING_ORIENTATION, Target, resolve_target
from .usercode import UserCodeFault


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``simbench check``."""
    parser.description = ("Cross-check inverse dynamics and mass matrix against PyBullet's "
                          "calculateInverseDynamics / calculateMassMatrix (and Pinocchio), explaining "
                          "every disagreement. Exit status: 0 nothing failed, 1 a FAIL or ERROR (or "
                          "EXPLAINED with --strict) or nothing compared, 2 usage error, 130 interrupted.")
    parser.add_argument("targets", nargs="*", metavar="TARGET",
                        help="a URDF path, pybullet_data:NAME or simbench:NAME; or SCENE.toml:BODY (the body "
                             "as the scene loads it), SCENE.toml for its robot")
    parser.add_argument("--corpus", choices=["pybullet_data"],
                        help="also check every distinct URDF with movable joints in this corpus")
    parser.add_argument("--samples", type=int, default=50,
                        help=f"random states per robot (default 50, at most {MAX_SAMPLES:,}: they are held in memory)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--tol", type=float, default=1e-8,
                        help="pass when max|error| <= tol * max(1, max|PyBullet|) (default 1e-8)")
    parser.add_argument("--json", metavar="FILE", help="write the report as JSON")
    parser.add_argument("--markdown", metavar="FILE", help="write the report as a Markdown table")
    parser.add_argument("--plot", metavar="DIR", help="write per-robot torque plots (PNG; needs matplotlib) in folder DIR, "
                             "or as FILE.png (FILE-<robot>.png for several robots): the dynamics under "
                             "test runs again along a 200-point trajectory (torques only), its time counted")
    parser.add_argument("--strict", action="store_true", help="EXPLAINED counts as a failure too")
    parser.add_argument("--dynamics", metavar="MODULE:FUNCTION",
                        help="check your own tau = f(q, qd, qdd) (joint_names order) instead of simbench's; "
                             "it runs in a worker process")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="SECONDS",
                        help=f"seconds per robot for the --dynamics function, and for importing its module "
                             f"(default {DEFAULT_TIMEOUT:g}; inf for no limit)")
    parser.add_argument("--base-orientation", nargs="+", metavar="X",
                        help="fixed-base orientation of URDF targets: roll pitch yaw, or quaternion x y z w")
    parser.add_argument("--floating", action="store_true",
                        help="check URDF targets (and the corpus) with a floating base (free-flyer root: q = base "
                             "pose + joints, v = base twist + joint rates); scene targets follow fixed_base")
    parser.add_argument("--inertia-from-shapes", action="store_true",
                        help="load without URDF_USE_INERTIA_FROM_FILE (PyBullet recomputes inertia)")
    parser.add_argument("--no-pinocchio", action="store_true", help="skip Pinocchio as the third voice")
    parser.add_argument("-q", "--quiet", action="store_true", help="print only the summary line")


def _usage(msg: str) -> int:
    print(f"simbench check: error: {' '.join(msg.split())}", file=sys.stderr)
    return 2


def _say(line: str) -> None:
    """A result line, printed above a progress bar when one is drawn."""
    from tqdm import tqdm

    tqdm.write(line, file=sys.stdout)
    sys.stdout.flush()


def _resolve(args: argparse.Namespace) -> list[Target]:
    """Every target resolved and parsed once; a :class:`SimbenchError` for the first bad one. A
    robot without movable joints is not an error: it gets its SKIPPED verdict ("no movable
    joints") in the report, and the other targets are checked."""
    return [resolve_target(text, base_orientation=args.base_orientation,
                           inertia_from_file=not args.inertia_from_shapes, floating=bool(args.floating))
            for text in args.targets]


def _details(report: Report) -> None:
    for r in report.results:
        if r.verdict in (FAIL, ERROR) and r.worst_line():
            _say(f"  {r.verdict} {r.target}: {r.worst_line()}")
        for c in r.causes:
            _say(f"  {r.target}: {c.line()}")
        for note in r.notes:
            if note.startswith(HINT):   # e.g. a root that looks free, checked welded
                _say(f"  {r.target}: {note}")


def _write(report: Report, args: argparse.Namespace) -> None:
    for path, text in ((args.json, lambda: json.dumps(report.to_json(), indent=1, allow_nan=False) + "\n"),
                       (args.markdown, report.to_markdown)):
        if path:
            try:
                parent_made(path).write_text(text())   # its folder checked, not made, before the work
            except OSError as exc:
                raise SimbenchError(f"cannot write the report {shown_path(path)}: {exc.strerror}") from None


def _plots(report: Report, targets: dict[str, Target], args: argparse.Namespace, dyn: object) -> None:
    drawn = [r for r in report.results
             if r.errors is not None and r.verdict not in (ERROR, SKIPPED) and targets.get(r.target) is not None]
    one_file = Path(args.plot)
    for r in drawn:
        target = targets[r.target]
        out = one_file.with_name(f"{one_file.stem}-{file_stem(target.label)}.png") if is_png(args.plot) and \
            len(drawn) > 1 else args.plot      # FILE.png: that file for one robot, FILE-<robot>.png for more
        # the difference drawn against the verdict's reference: the true dynamics where it judged
        against_true = r.errors_true is not None or (r.verdict == EXPLAINED and not getattr(dyn, "trusted", True))
        try:
            png = plot_robot(target, out, dyn, against_true=against_true)  # type: ignore[arg-type]
        except (UserCodeFault, SimbenchError) as exc:
            why = " ".join(str(exc).split())
            _say(f"  plot: none for {r.target}: {why}")
            r.notes.append(f"plot not drawn: {why}")   # in the JSON and Markdown too
            continue
        if not args.quiet:
            _say(f"  plot: {png}")


def _orientation(args: argparse.Namespace) -> str | None:
    """Split ``--base-orientation``'s words into its 3 or 4 numbers and the TARGETs after them
    (nargs="+" takes every word up to the next option); a usage message, or None."""
    words, numbers = list(args.base_orientation), []
    while words:
        try:
            numbers.append(float(words[0]))
        except ValueError:
            break
        words.pop(0)
    if words and len(numbers) not in (3, 4):   # else its numbers are judged with the other checks
        got = " ".join(args.base_orientation[:len(numbers) + 1])
        return (f"--base-orientation {got}: expected roll pitch yaw (3 numbers, radians) or a quaternion "
                "x y z w (4 numbers)")
    args.base_orientation, args.targets = numbers, [*args.targets, *words]
    return None


def run_cli(args: argparse.Namespace) -> int:
    """Run ``simbench check``; the exit status (0, 1, 2 on a usage error, 130 interrupted, 143
    after SIGTERM)."""
    with sigterm_interrupts() as terminated:
        return _run(args, terminated)


def _run(args: argparse.Namespace, terminated: list[int]) -> int:
    """:func:`run_cli` with ``terminated`` non-empty once SIGTERM has arrived."""
    corpus = getattr(args, "corpus", None)
    if args.base_orientation is not None:   # its numbers; TARGETs written after them are targets
        said = _orientation(args)
        if said:
            return _usage(said)
    if not args.targets and not corpus:
        return _usage("give at least one TARGET (a URDF path, pybullet_data:NAME or SCENE.toml[:BODY]) "
                      "or --corpus pybullet_data")
    try:  # the same judge as the API's (--timeout inf: no limit)
        args.samples, args.seed, args.tol, args.timeout = check_numbers(
            args.samples, args.seed, args.tol, args.timeout, DEFAULT_TIMEOUT, cli=True)
    except SimbenchError as exc:
        return _usage(str(exc))
    try:
        distinct_outputs(json=args.json, markdown=args.markdown, plot=args.plot, folders=("plot",))
        if args.json:
            writable_file(args.json, "--json file")
        if args.markdown:
            writable_file(args.markdown, "--markdown file")
        if args.plot:
            (writable_file if is_png(args.plot) else writable_dir)(args.plot, "--plot " + (
                "file" if is_png(args.plot) else "folder"))
            _pyplot()
        if args.base_orientation is not None:
            if args.floating:  # whatever the targets (URDFs, scenes, --corpus), before any work
                raise SimbenchError(FLOATING_ORIENTATION)
            as_quaternion(args.base_orientation)
        try:
            targets = _resolve(args)
        except KeyboardInterrupt:   # an empty report, marked interrupted, is still written
            targets, corpus = None, None
        dyn = load_dynamics(args.dynamics, timeout=args.timeout)
    except SimbenchError as exc:
        return _usage(str(exc))
    quiet = bool(args.quiet)

    def on_result(r: RobotResult) -> None:
        if not quiet:
            _say(r.line())

    try:
        try:
            report = check(targets or [], corpus=corpus, samples=args.samples, seed=args.seed, tol=args.tol,
                           dynamics=dyn, pinocchio=not args.no_pinocchio, timeout=args.timeout,
                           on_result=on_result, base_orientation=args.base_orientation,
                           inertia_from_file=not args.inertia_from_shapes, floating=bool(args.floating))
        except SimbenchError as exc:
            return _usage(str(exc))
        if targets is None:
            report.interrupted = True
        if report.interrupted:
            report.signal = "SIGTERM" if terminated else "SIGINT"
        if targets is None:
            report.settings["corpus"] = args.corpus
        report.settings["strict"] = bool(args.strict)
        if not quiet:
            _details(report)
        if args.plot and report.interrupted:   # said where the plots would be looked for
            for r in report.results:
                if r.errors is not None:
                    r.notes.append(f"plot not drawn: the check was {report.stopped_by()}")
        if args.plot and not report.interrupted:  # before the summary and the reports: its time counts
            t0 = time.perf_counter()
            try:
                _plots(report, report.targets, args, dyn)
            except KeyboardInterrupt:
                report.interrupted, report.signal = True, "SIGTERM" if terminated else "SIGINT"
            report.plot_seconds = time.perf_counter() - t0
            report.seconds += report.plot_seconds
        _say(report.summary())
        try:
            _write(report, args)
        except SimbenchError as exc:
            return _usage(str(exc))
    finally:
        dyn.close()
    if report.interrupted:   # as the summary line and the JSON say it
        print(f"simbench check: {report.stopped_by()}; the results so far are in the reports", file=sys.stderr)
    return report.exit_code(args.strict)  # 130 when interrupted, 143 after SIGTERM, as the JSON says


__all__ = ["add_arguments", "run_cli"]
