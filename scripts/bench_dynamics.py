#!/usr/bin/env python
"""simbench.dynamics vs Pinocchio and PyBullet: batched and single calls, the fast path's input
forms, floating bases (a1, the pybullet_data humanoid), and first-use compile times.

    python scripts/bench_dynamics.py [--n 10000] [--repeats 7] [--json bench_dynamics.json]

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
    ap.add_argument("--compile-times", action="store_true",
                    help="also time each function's first call with an empty numba cache")
    args = ap.parse_args(argv)
    rows = run_benchmark(args.robots, n=args.n, json_path=args.json, repeats=args.repeats,
                         single_calls=args.single_calls, quick=args.quick,
                         compile_times=args.compile_times)
    print(format_table(rows))
    missed = [r for r in rows if any(k.startswith("ok_") and not v for k, v in r.items())]
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
