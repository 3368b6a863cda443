"""simbench: URDF robots in PyBullet, named-link collision queries, dynamics checked against PyBullet.

Exit status: 0 ok, 1 check failed or script error (or a bug: rerun with -v for the traceback),
2 usage error (one line on stderr naming the bad value), 130 interrupted (143 after SIGTERM).
"""
from __future__ import annotations

import argparse
import difflib
import importlib
import logging
import math
import re
import sys
import traceback
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from . import log
from .errors import SimbenchError
from .signals import sigterm_interrupts

# Subcommands implemented in other modules: name -> (module, help). Each module defines
# add_arguments(parser) and run_cli(args) -> int.
_DELEGATED = {
    "check": ("simbench.check.cli", "cross-check our dynamics against PyBullet (and Pinocchio)"),
    "run": ("simbench.runner", "run a scenario script that defines main(sim)"),
    "bench": ("simbench.bench.cli", "benchmark every formulation against PyBullet and Pinocchio"),
    "sweep": ("simbench.sweep.cli", "large collision/dynamics/check jobs in resumable chunks, locally or on Ray"),
    "demo": ("simbench.demo", "the bundled KUKA-among-cubes scene: move the arm, print distances"),
    "view": ("simbench.view", "look at a URDF or scene: joint sliders, live named-link distances"),
}
#: how close an unknown option or choice must be to a valid one to be suggested (difflib's ratio:
#: --sample / --samples 0.94, chek / check 0.89; --n / --margin 0.55 is not suggested)
OPTION_CUTOFF = 0.75
#: subcommands that load URDF files, and so take --package and --xacro-arg
_LOADS_URDF = ("info", "check", "run", "view")


class ArgumentParser(argparse.ArgumentParser):
    """argparse with usage errors on one line (``simbench CMD: error: ...``, exit status 2), no
    abbreviated options (``sweep --n 5`` was taken for ``--no-pinocchio``), and an unknown
    option answered with the command's closest ones."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        command = self.prog.split(" ", 1)[1] if " " in self.prog else None
        bad = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)$", message)
        if bad:   # argparse lists the choices; the closest one is said too
            near = difflib.get_close_matches(bad.group(1), re.findall(r"'([^']*)'", bad.group(2)), 1,
                                              OPTION_CUTOFF)
            message += f"; did you mean {near[0]!r}?" if near else ""
        print(log.line(command, f"{message} (see {self.prog} --help)", logging.ERROR), file=sys.stderr)
        sys.exit(2)

    def parse_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                   namespace: argparse.Namespace | None = None) -> argparse.Namespace:
        words = list(sys.argv[1:] if args is None else args)
        for word in words:   # before the command: only the global options (else argparse says
            if not word.startswith("-"):   # "COMMAND required" about `simbench --verbos`)
                break
            if word.startswith("--") and word.split("=")[0] not in self._option_string_actions:
                self.error(f"unrecognized arguments: {word}{self._closest_options([word], self)}")
        ns, extras = self.parse_known_args(words, namespace)
        if extras:   # said by the command's own parser, which knows its options
            chosen = self._chosen_command(ns)
            lead = next((k for k, word in enumerate(extras) if word.startswith("-")), len(extras))
            if lead and self._takes_targets(chosen):   # `sweep collision --samples 20
                ns.targets = [*ns.targets, *extras[:lead]]   # scene.toml`: argparse gives TARGET...
                extras = extras[lead:]                        # only the words before the first option
            if not extras:
                return ns
            chosen.error(f"unrecognized arguments: {' '.join(extras)}{self._closest_options(extras, chosen)}")
        return ns

    @staticmethod
    def _takes_targets(chosen: argparse.ArgumentParser) -> bool:
        """Whether the command has a ``TARGET...`` list (words left over after options join it)."""
        return any(a.dest == "targets" and a.nargs in ("*", "+") for a in chosen._actions)

    def _closest_options(self, words: Sequence[str], chosen: argparse.ArgumentParser) -> str:
        """``"; did you mean --samples?"`` for the unknown options among ``words``, or ``""``."""
        options = [o for o in {**self._option_string_actions, **chosen._option_string_actions} if o.startswith("--")]
        near = [c for x in words if x.startswith("--")
                for c in difflib.get_close_matches(x.split("=")[0], options, 1, OPTION_CUTOFF)]
        return f"; did you mean {', '.join(near)}?" if near else ""

    def _chosen_command(self, ns: argparse.Namespace) -> argparse.ArgumentParser:
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction) and getattr(ns, action.dest, None):
                return action.choices[getattr(ns, action.dest)]
        return self


def cmd_info(args: argparse.Namespace) -> int:
    """Print the kinematic tree, DOF, total mass, joints with limits, and model issues."""
    from .model import RobotModel

    model = RobotModel.from_urdf(args.urdf, package_map=args.package or None,
                                 xacro_args=args.xacro_arg or None,
                                 floating_base=bool(getattr(args, "floating", False)))
    print(model.summary())
    if not any(i.refused_by_pybullet for i in model.issues):   # a mesh in millimetres (PyBullet reads
        from .bullet.mesh_units import check_file                # the meshes)

        check_file(args.urdf, package_map=args.package or None, xacro_args=args.xacro_arg or None)
    if getattr(args, "collision", False):  # the sampled self-collision matrix (cached per file)
        from .bullet.collision_sampling import robot_matrix

        print(robot_matrix(args.urdf).table())
    return 0


def add_loading_arguments(parser: argparse.ArgumentParser) -> None:
    """``--package NAME=DIR`` and ``--xacro-arg NAME:=VALUE`` (repeatable), for every command
    that loads URDF files; :func:`main` applies them to every load of the command."""
    parser.add_argument("--package", action="append", default=[], metavar="NAME=DIR",
                        help="where ROS package NAME is, for package://NAME/... URIs (repeatable; "
                             "ROS_PACKAGE_PATH and AMENT_PREFIX_PATH are searched too)")
    parser.add_argument("--xacro-arg", action="append", default=[], metavar="NAME:=VALUE",
                        help="an argument of a .xacro file (repeatable; needs the xacro extra)")


def build_parser(only: str | None = None) -> ArgumentParser:
    """The whole command line; with ``only``, the module of that command alone is imported (the
    others are listed with their help, as ``simbench --help`` shows them; ``""``: none), so that
    a command starts without importing every other one (``simbench --version``: 1.3 -> 0.1 s)."""
    parser = ArgumentParser(prog="simbench", description=__doc__.splitlines()[0],
                            epilog=__doc__.split("\n\n", 1)[1].strip())
    parser.add_argument("--version", action="version", version=_version())
    noise = parser.add_mutually_exclusive_group()
    noise.add_argument("-v", "--verbose", dest="log_verbosity", action="store_const", const=log.VERBOSE,
                       default=log.NORMAL, help="debug messages, and the traceback of an unexpected error")
    noise.add_argument("-q", "--quiet", dest="log_verbosity", action="store_const", const=log.QUIET,
                       help="warnings and errors only, no progress bars")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    p_info = sub.add_parser("info", help="describe a URDF: tree, DOF, mass, joints, issues",
                            description="Describe a URDF (or xacro) file: kinematic tree, DOF, mass, "
                                        "joints with limits, and its issues (missing meshes with the "
                                        "paths tried, constructs PyBullet refuses, reversed limits).")
    p_info.add_argument("urdf", help="a URDF or xacro path, pybullet_data:NAME or simbench:NAME "
                                     "(e.g. pybullet_data:kuka_iiwa/model.urdf)")
    p_info.add_argument("--collision", action="store_true",
                        help="also print the sampled self-collision matrix (MoveIt-like defaults)")
    p_info.add_argument("--floating", action="store_true",
                        help="model the root as a floating base (free-flyer joint: legged robots, "
                             "humanoids, mobile bases); q gains the base pose, v the base twist")
    p_info.set_defaults(func=cmd_info)

    parsers = {"info": p_info}
    for name, (module_name, help_text) in _DELEGATED.items():
        sp = parsers[name] = sub.add_parser(name, help=help_text,   # a module may set its own
                                            description=help_text[:1].upper() + help_text[1:] + ".")
        if only is not None and name != only:
            continue
        try:
            from ._quiet import import_pybullet

            import_pybullet()  # before the subcommand modules import it, without its banner
            module = importlib.import_module(module_name)
        except ImportError as exc:
            sp.set_defaults(func=_unavailable(name, exc))
            continue
        module.add_arguments(sp)
        sp.set_defaults(func=module.run_cli)
    for sp in parsers.values():   # -v / -q after the command too (`simbench run x.py -q`), where
        for flags, const in ((("-v", "--verbose"), log.VERBOSE), (("-q", "--quiet"), log.QUIET)):
            if not any(f in sp._option_string_actions for f in flags):   # the command's own wins
                sp.add_argument(*flags, dest="log_verbosity", action="store_const", const=const,
                                default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    for name in _LOADS_URDF:
        if only is not None and name != only:
            continue
        if "--package" not in parsers[name]._option_string_actions:  # unless the command has its own
            add_loading_arguments(parsers[name])
    return parser


def _unavailable(name: str, exc: Exception) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        print(log.line(name, f"not available in this installation ({exc})", logging.ERROR),
              file=sys.stderr)
        return 2

    return run


def _version() -> str:
    from . import __version__

    return f"simbench {__version__}"


def main(argv: Sequence[str] | None = None) -> int:
    """The ``simbench`` command. User errors print one line and return 2; an unexpected
    exception prints one line and a hint to rerun with ``-v`` (which shows the traceback) and
    returns 1."""
    words = list(sys.argv[1:] if argv is None else argv)
    try:   # Ctrl-C while the command's modules load: the same line and status as later
        args = build_parser(_command_word(words) or "").parse_args(words)
    except KeyboardInterrupt:
        print(log.line(_command_word(words), "interrupted"), file=sys.stderr)
        return 130
    command = args.command
    with log.configured(command, args.log_verbosity), sigterm_interrupts() as terminated:
        try:
            code = _run(args)
            return 143 if terminated and code == 130 else code
        except SimbenchError as exc:
            _say(command, exc)
            return 2
        except BrokenPipeError:  # e.g. `simbench info ... | head`
            sys.stderr.close()
            return 0
        except KeyboardInterrupt:
            print(log.line(command, "terminated (SIGTERM)" if terminated else "interrupted"), file=sys.stderr)
            return 143 if terminated else 130
        except Exception as exc:  # a bug (or an error we do not know yet): one line, -v for more
            if args.log_verbosity >= log.VERBOSE:
                traceback.print_exc()
            hint = "" if args.log_verbosity >= log.VERBOSE else "; rerun with -v for the traceback"
            _say(command, f"unexpected {type(exc).__name__}: {exc}{hint}")
            return 1


def _command_word(words: Sequence[str]) -> str | None:
    """The command among ``words`` (the first word that is not a global option), when it is one
    of ours; else None (no command's module is needed: the parser lists the commands, or
    suggests one)."""
    for word in words:
        if not word.startswith("-"):
            return word if word == "info" or word in _DELEGATED else None
    return None


#: numeric options checked before a command runs: command -> (option, test, what is expected,
#: the closest valid value). ``check`` and ``view`` check their own; these commands' modules do not.
_NUMBER_CHECKS: dict[str, tuple[tuple[str, Callable[[Any], bool], str, Callable[[Any], Any]], ...]] = {
    "demo": (("--steps", lambda v: v >= 1, "a positive integer", lambda v: 1),
             ("--hold", lambda v: math.isfinite(v) and v >= 0, "a number of seconds >= 0",
              lambda v: 0 if v < 0 else None)),
    "run": (("--seed", lambda v: v >= 0, "an integer >= 0", lambda v: 0),),
}


def check_numbers(args: argparse.Namespace) -> None:
    """Raise a one-line :class:`SimbenchError` (exit status 2) naming the first numeric option
    of ``args.command`` whose value makes no sense, in the style of ``simbench check``:
    ``--steps 0: expected a positive integer``. Options left unset (None) are skipped."""
    from .errors import shown

    for option, ok, expected, nearest in _NUMBER_CHECKS.get(getattr(args, "command", None) or "", ()):
        value = getattr(args, option.lstrip("-").replace("-", "_"), None)
        if value is not None and not ok(value):
            near = nearest(value)
            hint = "" if near is None else f" (closest valid: {option} {near})"
            raise SimbenchError(f"{option} {shown(value)}: expected {expected}{hint}")


def _run(args: argparse.Namespace) -> int:
    from .urdf_source import loading_defaults

    check_numbers(args)

    package = getattr(args, "package", None)
    xacro = getattr(args, "xacro_arg", None)
    with loading_defaults(package or None, xacro or None):
        return int(args.func(args) or 0)


def _say(command: str, message: Any) -> None:
    print(log.line(command, message, logging.ERROR), file=sys.stderr)


__all__ = ["main", "build_parser", "check_numbers", "add_loading_arguments", "ArgumentParser"]


if __name__ == "__main__":
    sys.exit(main())
