#!/usr/bin/env python
"""Collision detector benchmark: per-configuration cost vs the raw PyBullet minimum,
a per-joint-reset loop and a pyb_utils-style loop; 1 vs N worker throughput.

    python scripts/bench_collision.py [--n 100000] [--workers 2] [--json out/bench_collision.json]
"""
import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000, help="configurations in the worker batch")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=15, help="interleaved rounds of the per-configuration loops")
    ap.add_argument("--block", type=int, default=2000, help="configurations per round")
    ap.add_argument("--json", default=None, help="write the rows as JSON here")
    args = ap.parse_args()
    from simbench.bullet.collision_bench import format_table, run_benchmark

    rows = run_benchmark(n=args.n, workers=args.workers, json_path=args.json, rounds=args.rounds, block=args.block)
    print(format_table(rows))


if __name__ == "__main__":
    main()
