"""``simbench sweep KIND TARGET... --samples N --seed S --out DIR``: the command line of sweeps.

Exit status: 0 the sweep is complete (``check``: and no robot FAILed), 1 a chunk failed for
good or a robot FAILed, 2 a usage error (one line), 130 interrupted (finished chunks are kept:
run the same command again to complete the sweep).
"""
from __future__ import annotations

import argparse
import sys

from ..errors import SimbenchError, closest, shown
from .jobs import KINDS, check_count
from .output import SweepError

EPILOG = """examples:
  simbench sweep collision simbench:kuka_cubes.toml --samples 1000000 --seed 0 --out labels
  simbench sweep collision scene.toml --samples 1e6 --seed 0 --out labels --engine ray --ray-address auto
  simbench sweep collision simbench:two_arms.toml --robot left --robot right --pairs world --samples 100000 --out both
  simbench sweep dynamics pybullet_data:kuka_iiwa/model.urdf --samples 100000 --seed 1 --out iiwa_dyn
  simbench sweep dynamics pybullet_data:a1/a1.urdf --floating --samples 100000 --seed 1 --out a1_dyn
  simbench sweep check --corpus pybullet_data --samples 20 --out check_all

Re-running the same command resumes: finished chunks are skipped (after their checksum is
verified), interrupted or corrupted ones are computed again. Read the result with
pyarrow.dataset.dataset(DIR) or simbench.sweep.read(DIR)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``simbench sweep``."""
    parser.description = ("Run a large collision, dynamics or check job in resumable chunks (Parquet files "
                          "plus a manifest), on this machine or on a Ray cluster.")
    parser.epilog = EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("kind", metavar="KIND", help=f"the job: {', '.join(KINDS)}")
    parser.add_argument("targets", nargs="*", metavar="TARGET",
                        help="collision: a scene (TOML or simbench:NAME); dynamics: a URDF; check: URDFs")
    parser.add_argument("--samples", metavar="N",
                        help="rows (configurations, states); for check: random states per robot (default 50)")
    parser.add_argument("--seed", metavar="S", default="0", help="random seed, an integer >= 0 (default 0)")
    parser.add_argument("--out", metavar="DIR", help="output folder (created; a re-run resumes it)")
    parser.add_argument("--chunk-size", metavar="K", help="rows per chunk file (default: collision and dynamics "
                        "10000, check 1)")
    parser.add_argument("--workers", metavar="W", help="processes or Ray actors (default: local: every CPU of this "
                        "machine, for dynamics 1, whose batched kernels already use every core; ray: every CPU of "
                        "the cluster)")
    parser.add_argument("--engine", default="local", metavar="local|ray",
                        help="local (default, no extra dependency) or ray (the sweep extra)")
    parser.add_argument("--ray-address", metavar="auto|ADDRESS",
                        help="join a running Ray cluster (auto, or HOST:PORT); default: a private local instance")
    col = parser.add_argument_group("collision")
    col.add_argument("--pairs", default=None, metavar="all|world|self",
                     help="world: the whole robot (base included) against each other body, its moving links only "
                          "where its base alone is closer than the margin (ROBOT/(moving), with a warning); self: "
                          "the default self-collision pairs; all (default): both; with several --robot, per robot "
                          "(two of them once)")
    col.add_argument("--pair", nargs=2, action="append", metavar=("A", "B"),
                     help="an explicit pair (repeatable): BODY (every link), BODY/LINK, BODY/(base) or ROBOT/(moving) "
                          "(the links that move with q); replaces --pairs")
    col.add_argument("--robot", action="append", metavar="NAME",
                     help="a robot the sweep moves, its movable joints sampled within its own limits (repeatable: "
                          "q stacks the robots in the order given, columns q(NAME/joint)); default: the scene's robot")
    col.add_argument("--max-distance", metavar="M", help="distances saturate here, metres (default 1.0)")
    col.add_argument("--margin", metavar="M", help="in collision when distance < margin, metres (default 0)")
    col.add_argument("--witness", action="store_true", help="also store the witness points of every pair")
    col.add_argument("--configs", metavar="FILE", help="configurations from a .npy (N, dof) or Parquet file "
                     "instead of the sampler")
    dyn = parser.add_argument_group("dynamics")
    dyn.add_argument("--qd-max", metavar="V", help="joint speeds (and the base twist with --floating) uniform in "
                     "[-V, V] (default 2)")
    dyn.add_argument("--qdd-max", metavar="A", help="joint accelerations (and the base's with --floating) uniform "
                     "in [-A, A] (default 5)")
    dyn.add_argument("--floating", action="store_true",
                     help="a floating base, as simbench check --floating (free-flyer root): q gains the base pose "
                          "q(base_x) ... q(base_qw) (position in [-1, 1] m, orientation uniform on SO(3)), qd, qdd, "
                          "tau and qdd_free the base twist, its rate and the wrench on the base (base_vx ... base_wz, "
                          "base frame); without it the root link is welded to the world. For sweep check: each URDF checked "
                          "with a free-flyer root, as simbench check --floating")
    chk = parser.add_argument_group("check")
    chk.add_argument("--corpus", metavar="pybullet_data", help="also check every distinct URDF of this corpus")
    chk.add_argument("--tol", metavar="T", help="pass tolerance as in simbench check (default 1e-8)")
    chk.add_argument("--no-pinocchio", action="store_true", help="skip Pinocchio as the third voice")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bar, only the summary line")


def _number(value: str | None, what: str) -> float | None:
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        raise SimbenchError(f"{what} {shown(value)}: expected a number") from None


def options_of(args: argparse.Namespace) -> dict:
    """The job options given on the command line, checked per kind (one clear line if an
    option does not belong to the job)."""
    from .jobs import job_module

    job_module(args.kind)  # unknown kind: one line
    given = {"pairs": args.pairs, "pair": args.pair, "max_distance": args.max_distance, "margin": args.margin,
             "witness": args.witness or None, "configs": args.configs, "qd_max": args.qd_max,
             "qdd_max": args.qdd_max, "robot": args.robot, "floating": args.floating or None, "corpus": args.corpus, "tol": args.tol, "no_pinocchio": args.no_pinocchio or None}
    own = {"collision": {"pairs", "pair", "max_distance", "margin", "witness", "configs", "robot"},
           "dynamics": {"qd_max", "qdd_max", "floating"}, "check": {"corpus", "tol", "no_pinocchio", "floating"}}[args.kind]
    for key, value in given.items():
        if value is not None and key not in own:
            raise SimbenchError(f"--{key.replace('_', '-')} is not an option of sweep {args.kind}")
    out: dict = {}
    if args.kind == "collision":
        out["pairs"] = [tuple(p) for p in args.pair] if args.pair else args.pairs
        if args.pair and args.pairs:
            raise SimbenchError("give either --pairs or --pair A B, not both")
        out.update(max_distance=_number(args.max_distance, "--max-distance"),
                   margin=_number(args.margin, "--margin"), witness=args.witness, configs=args.configs,
                   robots=args.robot)
    elif args.kind == "dynamics":
        out.update(qd_max=_number(args.qd_max, "--qd-max"), qdd_max=_number(args.qdd_max, "--qdd-max"),
                   floating=args.floating)
    else:
        out.update(corpus_name=args.corpus, tol=_number(args.tol, "--tol"), pinocchio=not args.no_pinocchio,
                   floating=args.floating)
    return out


def run_cli(args: argparse.Namespace) -> int:
    """Run ``simbench sweep``; returns the exit status."""
    import logging

    from .run import execute, prepare

    options = options_of(args)
    if args.out is None:
        raise SimbenchError("--out DIR is missing; expected the output folder of the sweep")
    if args.engine not in ("local", "ray"):
        near = closest(str(args.engine), ["local", "ray"], n=1)
        hint = f" (did you mean {near[0]}?)" if near else ""
        raise SimbenchError(f"--engine {shown(args.engine)}; expected local or ray{hint}")
    if args.ray_address is not None and args.engine != "ray":
        raise SimbenchError(f"--ray-address {args.ray_address} needs --engine ray")
    seed = check_count(args.seed, "--seed", minimum=0)
    workers = check_count(args.workers, "--workers") if args.workers is not None else None
    chunk = check_count(args.chunk_size, "--chunk-size") if args.chunk_size is not None else None
    samples = args.samples
    if samples is not None:
        samples = check_count(samples, "--samples")
    spec = prepare(args.kind, args.targets, samples=samples, seed=seed, chunk_size=chunk, **options)
    if not args.quiet and not logging.getLogger("simbench").handlers:
        logging.basicConfig(format="simbench sweep: %(message)s", level=logging.WARNING)
    try:
        result = execute(spec, args.out, engine=args.engine, workers=workers, ray_address=args.ray_address,
                         progress=not args.quiet)
    except SweepError as exc:
        print(f"simbench sweep: failed: {exc}", file=sys.stderr)
        return 1
    print(result.summary())
    if args.kind == "check" and result.totals.get("FAIL"):
        return 1
    return 0 if result.complete else 1


__all__ = ["add_arguments", "run_cli", "options_of"]
