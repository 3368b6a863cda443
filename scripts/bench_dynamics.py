#!/usr/bin/env python
"""Benchmark of issue 3: simbench.dynamics vs Pinocchio and PyBullet (KUKA iiwa, Franka Panda).

    python scripts/bench_dynamics.py [--n 10000] [--repeats 5] [--json bench_dynamics.json]

Prints a table of medians (microseconds per configuration or per call) and speed-ups
(their time / our time), measured in the same run, and writes it as JSON with --json.
"""
import argparse
import os
import sys

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from simbench.bench_dynamics import ROBOTS, format_table, run_benchmark  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--robots", nargs="+", default=list(ROBOTS),
                    help=f"robot names ({', '.join(ROBOTS)}) or URDF paths")
    ap.add_argument("--n", type=int, default=10_000, help="batch size (default 10000)")
    ap.add_argument("--repeats", type=int, default=7, help="interleaved rounds (median)")
    ap.add_argument("--single-calls", type=int, default=2000, help="calls per single-call round")
    ap.add_argument("--json", metavar="FILE", help="write the rows as JSON")
    ap.add_argument("--quick", action="store_true", help="a short smoke run (n <= 1000)")
    args = ap.parse_args(argv)
    rows = run_benchmark(args.robots, n=args.n, json_path=args.json, repeats=args.repeats,
                         single_calls=args.single_calls, quick=args.quick)
    print(format_table(rows))
    missed = [r for r in rows if any(k.startswith("ok_vs_") and not v for k, v in r.items())]
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
