"""simbench: URDF robots in PyBullet, named-link collision queries, dynamics checked against PyBullet.

A user error (bad path, unknown name, bad shape) prints one line and exits with status 2.
"""
from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence

from .errors import SimbenchError

# Subcommands implemented in other modules: name -> (module, help). Each module defines
# add_arguments(parser) and run_cli(args) -> int.
_DELEGATED = {
    "check": ("simbench.bullet.crosscheck", "cross-check our dynamics against PyBullet (and Pinocchio)"),
    "run": ("simbench.runner", "run a scenario script that defines main(sim)"),
    "bench": ("simbench.bench", "benchmark every formulation against PyBullet and Pinocchio"),
    "demo": ("simbench.demo", "the bundled KUKA-among-cubes scene: move the arm, print distances"),
    "view": ("simbench.view", "look at a URDF or scene: joint sliders, live named-link distances"),
}


def cmd_info(args: argparse.Namespace) -> int:
    """Print the kinematic tree, DOF, total mass, joints with limits, and model issues."""
    from .model import RobotModel

    print(RobotModel.from_urdf(args.urdf).summary())
    return 0


def build_parser() -> argparse.ArgumentParser:
    from ._quiet import import_pybullet

    import_pybullet()  # before the subcommand modules import it, without its banner
    parser = argparse.ArgumentParser(prog="simbench", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    p_info = sub.add_parser("info", help="describe a URDF: tree, DOF, mass, joints, issues")
    p_info.add_argument("urdf", help="a URDF path or pybullet_data:NAME (e.g. pybullet_data:kuka_iiwa/model.urdf)")
    p_info.set_defaults(func=cmd_info)

    for name, (module_name, help_text) in _DELEGATED.items():
        sp = sub.add_parser(name, help=help_text)
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            sp.set_defaults(func=_unavailable(name, exc))
            continue
        module.add_arguments(sp)
        sp.set_defaults(func=module.run_cli)
    return parser


def _unavailable(name: str, exc: Exception) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        print(f"simbench {name}: not available in this installation ({exc})", file=sys.stderr)
        return 2

    return run


def _version() -> str:
    from . import __version__

    return f"simbench {__version__}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except SimbenchError as exc:
        print(f"simbench {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # e.g. `simbench info ... | head`
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        print(f"simbench {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
