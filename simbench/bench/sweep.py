"""The sweep suite: configurations per second of ``simbench sweep collision`` on the query of
Adam Heins, "shortest distances with PyBullet" (link 7 of the KUKA iiwa against the ground and
three cubes, configurations uniform within the joint limits): the local engine with one and
``workers`` processes and the Ray engine with ``workers`` CPUs.

Each run is a fresh Python process (``python -m simbench.bench.sweep --one ...``), so that
peak resident memory (``VmHWM`` of every process taking part) belongs to that run alone; the
engines are interleaved round by round by :func:`simbench.bench.harness.interleaved`, each
reporting the seconds of its sweep (Ray's ``ray.init`` left out: it is a row of its own). The
notes hold the CPU time of the whole process tree (driver, workers, Ray's raylet, GCS and
actors) per configuration: other users of a shared machine do not change it, and with every CPU
busy the rates of two engines go as the inverse of their CPU times.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .harness import Contender, interleaved
from .schema import Row, RowsCallback, emit, one_off, rows_from

log = logging.getLogger(__name__)

SCENE = "simbench:kuka_cubes.toml"
LINK7 = "robot/lbr_iiwa_link_7"
POST_PAIRS = [(LINK7, "ground"), (LINK7, "cube1"), (LINK7, "cube2"), (LINK7, "cube3")]
ROBOT = "kuka_iiwa (kuka_cubes scene)"


def _peak_rss(pid: int) -> int:
    """Peak resident memory (VmHWM) of a live process, bytes; 0 if it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def tree_cpu_seconds(root: int | None = None) -> float:
    """CPU time (user + system, including reaped children) of process ``root`` (default: this
    one) and every live descendant."""
    root = os.getpid() if root is None else root
    ticks = os.sysconf("SC_CLK_TCK")
    children: dict[int, list[int]] = {}
    cpu: dict[int, float] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
        cpu[int(entry)] = sum(int(x) for x in fields[11:15]) / ticks  # utime stime cutime cstime
    total, todo = 0.0, [root]
    while todo:
        pid = todo.pop()
        total += cpu.get(pid, 0.0)
        todo += children.get(pid, [])
    return total


def one(engine: str, workers: int, samples: int, chunk_size: int, out: str) -> dict[str, Any]:
    """One sweep in this process (a fresh one: see the module docstring); its facts."""
    import multiprocessing

    from ..sweep.run import execute, prepare

    spec = prepare("collision", [SCENE], samples=samples, seed=0, chunk_size=chunk_size, pairs=POST_PAIRS)
    facts: dict[str, Any] = {"engine": engine, "workers": workers, "chunks": len(spec.chunks())}
    pids: list[int] = []
    peak: dict[str, Any] = {"workers": 0, "done": 0}

    def on_start(actors: list) -> None:
        import ray

        pids.extend(ray.get([a.pid.remote() for a in actors]))

    def on_chunk(result: Any) -> None:  # worker peaks, read while they live (every 8 chunks)
        peak["done"] += 1
        last = peak["done"] == facts["chunks"]
        if peak["done"] % 8 == 0 or last:
            live = pids or [c.pid for c in multiprocessing.active_children()]
            peak["workers"] = max([peak["workers"], *(_peak_rss(p) for p in live)])
        if last:  # before the workers stop, while their CPU time is still theirs
            peak["cpu"] = tree_cpu_seconds()

    if engine == "ray":
        import ray

        t0 = time.perf_counter()
        ray.init(address="local", num_cpus=workers, include_dashboard=False, log_to_driver=False,
                 logging_level=logging.WARNING)
        facts["ray_startup_seconds"] = time.perf_counter() - t0
    cpu0 = tree_cpu_seconds()
    res = execute(spec, out, engine=engine, workers=workers, progress=False, on_chunk=on_chunk, on_start=on_start)
    facts.update(seconds=res.seconds, driver_peak_rss=_peak_rss(os.getpid()), worker_peak_rss=peak["workers"],
                 cpu_seconds=peak.get("cpu", tree_cpu_seconds()) - cpu0)
    if engine == "ray":
        import ray

        ray.shutdown()
    return facts


def _runner(engine: str, workers: int, samples: int, chunk_size: int, tmp: str,
            facts: list[dict[str, Any]]) -> Any:
    """A contender: one sweep in a fresh process; returns its seconds, keeps its facts."""
    def run() -> float:
        out = Path(tmp) / f"{engine}{workers}-{len(facts)}"
        cmd = [sys.executable, "-m", "simbench.bench.sweep", "--one", engine, str(workers), str(samples),
               str(chunk_size), str(out)]
        proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "SIMBENCH_PROGRESS": "0"})
        if proc.returncode != 0:
            raise RuntimeError(f"benchmark sweep {engine} x{workers} failed:\n{proc.stderr[-2000:]}")
        facts.append(json.loads(proc.stdout.strip().splitlines()[-1]))
        return facts[-1]["seconds"]
    return run


def run(*, samples: int = 200_000, chunk_size: int = 10_000, workers: int = 2, rounds: int = 1,
        ray: bool = True, notes: list[str] | None = None, on_rows: RowsCallback | None = None) -> list[Row]:
    """The suite's rows: one interleaved group of fresh-process sweeps (see the module docstring),
    handed to ``on_rows`` when it is timed."""
    notes = [] if notes is None else notes
    if ray and importlib.util.find_spec("ray") is None:
        notes.append("sweep: no Ray rows: install the 'sweep' extra (pip install 'simbench[sweep]')")
        ray = False
    configs = [("local", 1), ("local", workers)] + ([("ray", workers)] if ray else [])
    names = {("local", 1): "local engine, 1 worker", ("local", workers): f"local engine, {workers} workers",
             ("ray", workers): f"Ray engine, {workers} CPUs"}
    facts: dict[tuple[str, int], list[dict[str, Any]]] = {c: [] for c in configs}
    with tempfile.TemporaryDirectory(prefix="simbench-bench-sweep-") as tmp:
        timings = interleaved([Contender(names[c], _runner(*c, samples, chunk_size, tmp, facts[c]), samples,
                                         clock="reported", warmup=False) for c in configs], rounds)
    mb = 2 ** 20
    cpu_ref = statistics.median(f["cpu_seconds"] for f in facts[("local", workers)])
    row_notes = {}
    for c in configs:
        got = facts[c]
        cpu = statistics.median(f["cpu_seconds"] for f in got)
        worker_rss = statistics.median(f["worker_peak_rss"] for f in got) / mb
        row_notes[names[c]] = (f"CPU {1e6 * cpu / samples:.1f} us per config ({cpu / cpu_ref:.2f} of local, "
                               f"{workers} workers); peak RSS driver "
                               f"{statistics.median(f['driver_peak_rss'] for f in got) / mb:.0f} MB, "
                               + (f"each worker {worker_rss:.0f} MB" if worker_rss else "in-process"))
    quantity = f"collision sweep of {samples:,} configurations, chunks of {chunk_size:,}"
    rows = rows_from("sweep", ROBOT, quantity, timings, names[("local", workers)], row_notes)
    if ray:
        startup = statistics.median(f["ray_startup_seconds"] for f in facts[("ray", workers)])
        rows.append(one_off("sweep", ROBOT, "start-up (once)", "ray.init", startup,
                            "left out of the Ray engine's rate"))
    return emit(rows, on_rows)


def main(argv: list[str] | None = None) -> int:
    """``python -m simbench.bench.sweep --one ENGINE WORKERS SAMPLES CHUNK OUT``: one run (the
    suite's fresh process), its facts as JSON on the last line."""
    parser = argparse.ArgumentParser(prog="python -m simbench.bench.sweep", description=main.__doc__)
    parser.add_argument("--one", nargs=5, required=True, metavar=("ENGINE", "WORKERS", "SAMPLES", "CHUNK", "OUT"))
    engine, w, n, k, out = parser.parse_args(argv).one
    print(json.dumps(one(engine, int(w), int(n), int(k), out)))
    return 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = ["run", "one", "tree_cpu_seconds", "POST_PAIRS"]
