"""Benchmark of sweeps: configurations per second on the kuka_cubes scene for the local engine with 1
and ``workers`` processes and the Ray engine with ``workers`` CPUs, Ray's overhead per chunk,
Ray's start-up time, and peak resident memory (driver and workers).

Each measurement runs in a fresh Python process (``python -m simbench.sweep.bench --one ...``)
so that peak RSS (``VmHWM`` of every process taking part) belongs to that run alone, and
configurations are interleaved round by round so that a shared machine's load falls on all of
them alike; compare the ratios of one run, not absolute rates across runs. Ray's start-up
(``ray.init``) is timed on its own and left out of its throughput; the actors' start (loading
the scene) is inside it, as the local workers' start is inside theirs.

Besides wall time, each run records the CPU time of its whole process tree (driver, workers,
and Ray's raylet, GCS and actors): other users of a shared machine do not change it, and with
every CPU busy the rates of two engines go as the inverse of their CPU times, so
``CPU x local-same`` predicts the throughput ratio of a quiet machine. Ray's CPU overhead is
split into its idle background (``ray_idle_cores``, measured before the sweep) and the rest.

The query is that of Adam Heins's "shortest distances with PyBullet": link 7 of the KUKA iiwa
against the ground and the three cubes
(4 pairs, ``max_distance`` 1 m), configurations uniform within the joint limits.

    from simbench.sweep.bench import measure
    rows = measure(samples=1_000_000, workers=2)     # list of dicts, one per configuration
    python -m simbench.sweep.bench --samples 1000000 --workers 2 --json sweep_bench.json
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SCENE = "simbench:kuka_cubes.toml"
LINK7 = "robot/lbr_iiwa_link_7"
POST_PAIRS = [(LINK7, "ground"), (LINK7, "cube1"), (LINK7, "cube2"), (LINK7, "cube3")]


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
    one) and every live descendant: the driver, its workers, and for Ray the raylet, GCS and
    actors it started. Unlike wall time, other users of a shared machine do not change it."""
    root = os.getpid() if root is None else root
    ticks = os.sysconf("SC_CLK_TCK")
    parent, cpu = {}, {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parent[int(entry)] = int(fields[1])
        cpu[int(entry)] = sum(int(x) for x in fields[11:15]) / ticks  # utime stime cutime cstime
    total, todo = 0.0, [root]
    children: dict[int, list[int]] = {}
    for pid, ppid in parent.items():
        children.setdefault(ppid, []).append(pid)
    while todo:
        pid = todo.pop()
        total += cpu.get(pid, 0.0)
        todo += children.get(pid, [])
    return total


def one(engine: str, workers: int, samples: int, chunk_size: int, out: str) -> dict[str, Any]:
    """One sweep in this process (a fresh one: see the module docstring); its facts."""
    import multiprocessing

    from .run import execute, prepare

    spec = prepare("collision", [SCENE], samples=samples, seed=0, chunk_size=chunk_size, pairs=POST_PAIRS)
    facts: dict[str, Any] = {"engine": engine, "workers": workers, "samples": samples, "chunk_size": chunk_size,
                             "chunks": len(spec.chunks())}
    pids: list[int] = []
    peak = {"workers": 0}

    def on_start(actors: list) -> None:
        import ray

        pids.extend(ray.get([a.pid.remote() for a in actors]))

    def on_chunk(result: Any) -> None:  # worker peaks, read while they live (sampled every 8 chunks)
        peak["done"] = peak.get("done", 0) + 1
        last = peak["done"] == facts["chunks"]
        if peak["done"] % 8 == 0 or last:
            live = pids or [c.pid for c in multiprocessing.active_children()]
            peak["workers"] = max([peak["workers"], *(_peak_rss(p) for p in live)])
        if last:  # before the workers stop, while their CPU time is still theirs
            peak["cpu"] = tree_cpu_seconds()

    if engine == "ray":
        import logging

        import ray

        t0 = time.perf_counter()
        ray.init(address="local", num_cpus=workers, include_dashboard=False, log_to_driver=False,
                 logging_level=logging.WARNING)
        facts["ray_startup_seconds"] = time.perf_counter() - t0
        time.sleep(1.0)  # let the start-up settle, then measure what an idle Ray costs
        c0, t1 = tree_cpu_seconds(), time.perf_counter()
        time.sleep(3.0)
        facts["ray_idle_cores"] = (tree_cpu_seconds() - c0) / (time.perf_counter() - t1)
    cpu0 = tree_cpu_seconds()
    res = execute(spec, out, engine=engine, workers=workers, progress=False, on_chunk=on_chunk, on_start=on_start)
    facts.update(seconds=res.seconds, rate=res.rate, driver_peak_rss=_peak_rss(os.getpid()),
                 worker_peak_rss=peak["workers"], cpu_seconds=peak["cpu"] - cpu0)
    if engine == "ray":
        facts["ray_actor_start_seconds"] = res.facts.get("actor_start_seconds")
        facts["ray_call_seconds"] = _ray_call_cost(res.out)
        import ray

        ray.shutdown()
    return facts


def _ray_call_cost(out: Path, calls: int = 100) -> float:
    """Seconds per actor call returning one chunk file's bytes (Ray's transport per chunk)."""
    import ray

    data = next(Path(out).glob("chunk-*.parquet")).read_bytes()

    @ray.remote(num_cpus=1)
    class Echo:
        def __init__(self, payload: bytes):
            self.payload = payload

        def get(self) -> bytes:
            return self.payload

    a = Echo.remote(data)
    ray.get(a.get.remote())
    t0 = time.perf_counter()
    for _ in range(calls):
        ray.get(a.get.remote())
    cost = (time.perf_counter() - t0) / calls
    ray.kill(a)
    return cost


def measure(samples: int = 1_000_000, chunk_size: int = 10_000, workers: int = 2, rounds: int = 1,
            ray: bool = True, work_dir: str | None = None) -> list[dict[str, Any]]:
    """Run the benchmark (see the module docstring); one dict per (engine, workers) with the
    median rate over ``rounds`` and the derived ratios and Ray overhead per chunk."""
    configs = [("local", 1), ("local", workers)] + ([("ray", workers)] if ray else [])
    runs: dict[tuple[str, int], list[dict[str, Any]]] = {c: [] for c in configs}
    with tempfile.TemporaryDirectory(dir=work_dir) as tmp:
        for r in range(rounds):
            for engine, w in configs:
                out = Path(tmp) / f"{engine}{w}-{r}"
                cmd = [sys.executable, "-m", "simbench.sweep.bench", "--one", engine, str(w), str(samples),
                       str(chunk_size), str(out)]
                proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "SIMBENCH_PROGRESS": "0"})
                if proc.returncode != 0:
                    raise RuntimeError(f"benchmark run {engine} x{w} failed:\n{proc.stderr[-2000:]}")
                runs[(engine, w)].append(json.loads(proc.stdout.strip().splitlines()[-1]))
    rows = []
    for (engine, w), got in runs.items():
        row = dict(got[0])
        for key in ("seconds", "rate", "cpu_seconds", "driver_peak_rss", "worker_peak_rss", "ray_startup_seconds",
                    "ray_actor_start_seconds", "ray_call_seconds", "ray_idle_cores"):
            if key in row:
                row[key] = statistics.median(g[key] for g in got)
        row["rounds"] = len(got)
        rows.append(row)
    base = {(r["engine"], r["workers"]): r for r in rows}
    local_w = base[("local", workers)]
    for r in rows:
        r["vs_local_1"] = r["rate"] / base[("local", 1)]["rate"]
        r["vs_local_same_workers"] = r["rate"] / local_w["rate"]
        r["cpu_per_config_us"] = 1e6 * r["cpu_seconds"] / r["samples"]
        # on an otherwise idle machine whose CPUs are all busy with the sweep, rates go as 1 / CPU time
        r["cpu_ratio_vs_local_same_workers"] = local_w["cpu_seconds"] / r["cpu_seconds"]
        if r["engine"] == "ray":
            r["ray_overhead_per_chunk_seconds"] = (r["seconds"] - local_w["seconds"]) / r["chunks"]
            r["ray_cpu_overhead_per_chunk_seconds"] = (r["cpu_seconds"] - local_w["cpu_seconds"]) / r["chunks"]
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    mb = 2**20
    lines = ["engine  workers  configs/s  x local-1  x local-same  CPU us/config  CPU x local-same  driver RSS  "
             "worker RSS  notes"]
    for r in rows:
        notes = ""
        if r["engine"] == "ray":
            notes = (f"ray.init {r['ray_startup_seconds']:.1f} s, idle Ray {r['ray_idle_cores']:.3f} cores, "
                     f"actors ready {r['ray_actor_start_seconds']:.1f} s, "
                     f"overhead/chunk: wall {1e3 * r['ray_overhead_per_chunk_seconds']:.1f} ms, "
                     f"CPU {1e3 * r['ray_cpu_overhead_per_chunk_seconds']:.1f} ms "
                     f"(one chunk's transport {1e3 * r['ray_call_seconds']:.2f} ms)")
        lines.append(f"{r['engine']:<7s} {r['workers']:>7d}  {r['rate']:>9,.0f}  {r['vs_local_1']:>9.2f}  "
                     f"{r['vs_local_same_workers']:>11.2f}  {r['cpu_per_config_us']:>13.1f}  "
                     f"{r['cpu_ratio_vs_local_same_workers']:>16.2f}  {r['driver_peak_rss'] / mb:>7.0f} MB  "
                     f"{r['worker_peak_rss'] / mb:>7.0f} MB  {notes}")
    r0 = rows[0]
    lines.append(f"({r0['samples']:,} configurations, chunks of {r0['chunk_size']:,}, {r0['rounds']} round(s); "
                 "medians; ratios are what to compare)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m simbench.sweep.bench", description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=1_000_000)
    parser.add_argument("--chunk-size", type=int, default=10_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--no-ray", action="store_true")
    parser.add_argument("--json", metavar="FILE")
    parser.add_argument("--one", nargs=5, metavar=("ENGINE", "WORKERS", "SAMPLES", "CHUNK", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        engine, w, n, k, out = args.one
        print(json.dumps(one(engine, int(w), int(n), int(k), out)))
        return 0
    rows = measure(args.samples, args.chunk_size, args.workers, args.rounds, ray=not args.no_ray)
    print(table(rows))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = ["measure", "one", "table", "POST_PAIRS"]
