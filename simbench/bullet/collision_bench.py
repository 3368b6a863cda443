"""Benchmark of the collision detector on the query of Adam Heins's "shortest distances with
PyBullet" (the bundled kuka_cubes scene: KUKA iiwa, link 7 vs the ground and three cubes; 7 joints, 4 pairs, ``max_distance`` large enough that every pair
returns a point).

Per configuration, measured in the same run, interleaved round by round (medians over rounds;
CPU time of this process, so that other processes on a shared machine disturb it less):

* ``raw_minimum``: one ``resetJointStatesMultiDof`` + 4 raw ``getClosestPoints`` calls, inputs
  pre-converted to nested lists, results thrown away (nothing can do less work);
* ``per_joint_reset``: 7 ``resetJointState`` calls + the 4 raw calls;
* ``pyb_utils_style``: pyb_utils v1's ``compute_distances`` loop (reset every joint of
  ``getNumJoints`` one by one, keyword calls, ``np.min`` over the points, ``np.array``);
* ``ours_batch``: ``CollisionDetector.compute_distances(Q)`` on an (N, 7) array, per configuration;
* ``ours_single``: ``compute_distances(q)`` called once per configuration (input checks included).

Throughput: ``compute_distances`` on an ``n``-configuration batch with 1 worker and with
``workers`` processes (cold: helper processes started inside the timing; warm: pool reused).

One world (that post's query loop, one call per configuration, CPU time, interleaved rounds):

* ``sync.bare``: a detector on the collision server as it is (a ``LoadedScene``);
* ``sync.synced``: the same pairs through ``ServerPair.detector``, which syncs with the main
  world before each query (nothing changed: the check is all it costs);
* ``sync.changed``: ``mark_changed()`` before every query (the main world read every time).

Path checking on the same scene (the whole robot against the cubes and the ground, 5 mm):
``path.uniform`` and ``path.advance`` check the same random edges with ``path_is_free``, per
edge; the ratio is uniform sampling over conservative advancement, same guarantee.
"""
from __future__ import annotations

import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np
import pybullet as p

from .collision import CollisionDetector, NamedCollisionObject
from .scene import DEFAULT_SCENE, Scene
from .servers import connect

MAX_DISTANCE = 10.0
#: the per-configuration loops are timed in CPU time of this process (robust to other processes
#: sharing the machine); the worker throughput in wall time
_clock = time.process_time


def _seed_setup() -> tuple[Any, CollisionDetector]:
    client = p.connect(p.DIRECT)
    loaded = Scene.from_toml(DEFAULT_SCENE).load(client)
    link7 = NamedCollisionObject("robot", "lbr_iiwa_link_7")
    det = CollisionDetector(loaded, [(link7, o) for o in ("ground", "cube1", "cube2", "cube3")])
    return loaded, det


def _per_config_loops(loaded: Any, det: CollisionDetector) -> dict[str, Any]:
    client, robot = loaded.client, loaded.bodies["robot"]
    indices = list(loaded.robot.movable_indices)
    raw_pairs = [(a, b, la, lb) for a, b, la, lb, *_ in det._pair_args]
    num_joints = p.getNumJoints(robot, physicsClientId=client)

    def raw_minimum(Q: np.ndarray) -> None:
        nested = Q[:, :, None].tolist()  # the format resetJointStatesMultiDof takes, built untimed
        t = _clock()
        for qs in nested:
            p.resetJointStatesMultiDof(robot, indices, qs, physicsClientId=client)
            for a, b, la, lb in raw_pairs:
                p.getClosestPoints(a, b, MAX_DISTANCE, la, lb, physicsClientId=client)
        return _clock() - t

    def per_joint_reset(Q: np.ndarray) -> float:
        rows = Q.tolist()
        t = _clock()
        for q in rows:
            for j, x in zip(indices, q):
                p.resetJointState(robot, j, x, physicsClientId=client)
            for a, b, la, lb in raw_pairs:
                p.getClosestPoints(a, b, MAX_DISTANCE, la, lb, physicsClientId=client)
        return _clock() - t

    def pyb_utils_style(Q: np.ndarray) -> float:
        t = _clock()
        for q in Q:
            assert len(q) == num_joints
            for i in range(num_joints):
                p.resetJointState(robot, i, q[i], physicsClientId=client)
            distances = []
            for a, b, la, lb in raw_pairs:
                pts = p.getClosestPoints(a, b, distance=MAX_DISTANCE, linkIndexA=la, linkIndexB=lb,
                                         physicsClientId=client)
                distances.append(MAX_DISTANCE if len(pts) == 0 else np.min([pt[8] for pt in pts]))
            np.array(distances)
        return _clock() - t

    def ours_batch(Q: np.ndarray) -> float:
        t = _clock()
        det.compute_distances(Q, MAX_DISTANCE)
        return _clock() - t

    def ours_single(Q: np.ndarray) -> float:
        t = _clock()
        for q in Q:
            det.compute_distances(q, MAX_DISTANCE)
        return _clock() - t

    return {"raw_minimum": raw_minimum, "per_joint_reset": per_joint_reset,
            "pyb_utils_style": pyb_utils_style, "ours_batch": ours_batch, "ours_single": ours_single}


_HAVE_SCHEDSTAT = os.path.exists("/proc/self/schedstat")


def _pids(det: CollisionDetector) -> list[int]:
    pool = det._pool
    return [os.getpid()] + ([h.proc.pid for h in pool.helpers] if pool is not None else [])


def _sched(pids: list[int]) -> dict[int, tuple[float, float]]:
    """pid -> (CPU seconds, seconds spent runnable but waiting for a CPU), from Linux's
    /proc/PID/schedstat (empty elsewhere)."""
    out = {}
    for pid in pids:
        try:
            with open(f"/proc/{pid}/schedstat") as fh:
                run_ns, wait_ns = fh.read().split()[:2]
            out[pid] = (int(run_ns) * 1e-9, int(wait_ns) * 1e-9)
        except (OSError, ValueError):
            pass
    return out


def _sync_rows(rounds: int, block: int, seed: int) -> list[dict]:
    """The cost of one world in the post's tight query loop (see the module docstring)."""
    link7 = NamedCollisionObject("robot", "lbr_iiwa_link_7")
    pairs = [(link7, o) for o in ("ground", "cube1", "cube2", "cube3")]
    with connect(DEFAULT_SCENE, gui=False) as pair:
        bare = CollisionDetector(pair.collision, pairs)
        synced = pair.detector(pairs)

        def loop(det: CollisionDetector, changed: bool) -> Any:
            def run(Q: np.ndarray) -> float:
                t = _clock()
                for q in Q:
                    if changed:
                        pair.mark_changed()
                    det.compute_distances(q, MAX_DISTANCE)
                return _clock() - t
            return run

        loops = {"bare": loop(bare, False), "synced": loop(synced, False), "changed": loop(synced, True)}
        times = _interleaved(loops, rounds, block, seed)
    med = {k: statistics.median(v) for k, v in times.items()}
    rows = [{"name": f"sync.{k}", "value": med[k], "unit": "us",
             "note": f"per query, median of {rounds} rounds x {block}"} for k in loops]
    rows.append({"name": "ratio.sync_synced_over_bare", "value": _paired(times, "synced", "bare"), "unit": "x",
                 "note": "target < 1.05: the sync check in the post's query loop"})
    rows.append({"name": "ratio.sync_changed_over_bare", "value": _paired(times, "changed", "bare"), "unit": "x",
                 "note": "the main world read before every query (5 bodies)"})
    return rows


def _path_rows(edges: int, seed: int, resolution: float = 0.005) -> list[dict]:
    """Uniform sampling vs conservative advancement on the same random edges, same guarantee."""
    client = p.connect(p.DIRECT)
    try:
        loaded = Scene.from_toml(DEFAULT_SCENE).load(client)
        det = CollisionDetector(loaded, [("robot", o) for o in ("cube1", "cube2", "cube3", "ground")],
                                disabled=[(("robot", None), "ground")])
        rng = np.random.default_rng(seed)
        q0 = rng.uniform(-2.0, 2.0, (edges, det.dof))
        q1 = q0 + rng.uniform(-1.0, 1.0, (edges, det.dof))
        det.path_is_free(q0[0], q1[0], resolution)  # motion bound computed outside the timing
        times: dict[str, list[float]] = {"uniform": [], "advance": []}
        verdicts: dict[str, list[bool]] = {"uniform": [], "advance": []}
        for k in range(edges):
            order = ("uniform", "advance") if k % 2 == 0 else ("advance", "uniform")
            for method in order:
                t = _clock()
                verdicts[method].append(det.path_is_free(q0[k], q1[k], resolution, method=method))
                times[method].append(_clock() - t)
    finally:
        p.disconnect(physicsClientId=client)
    tu, ta = sum(times["uniform"]), sum(times["advance"])
    agree = sum(a == b for a, b in zip(verdicts["uniform"], verdicts["advance"]))
    return [
        {"name": "path.uniform", "value": tu / edges * 1e3, "unit": "ms",
         "note": f"per edge, {edges} random edges, resolution {resolution * 1e3:g} mm"},
        {"name": "path.advance", "value": ta / edges * 1e3, "unit": "ms", "note": "conservative advancement"},
        {"name": "ratio.path_uniform_over_advance", "value": tu / ta, "unit": "x",
         "note": f"target >= 3; verdicts agree on {agree} of {edges} edges, {sum(verdicts['uniform'])} free"},
    ]


def _interleaved(loops: dict[str, Any], rounds: int, block: int, seed: int) -> dict[str, list[float]]:
    """Per-configuration times (us) of each loop, rounds interleaved (round 0 warms up)."""
    rng = np.random.default_rng(seed)
    times: dict[str, list[float]] = {k: [] for k in loops}
    for r in range(rounds + 1):
        Q = np.pi * (rng.random((block, 7)) - 0.5)
        for name in (list(loops) if r % 2 == 0 else list(loops)[::-1]):
            dt = loops[name](Q)
            if r > 0:
                times[name].append(dt / block * 1e6)
    return times


def _paired(times: dict[str, list[float]], a: str, b: str) -> float:
    """Median over rounds of the same-round ratio a / b."""
    return statistics.median(x / y for x, y in zip(times[a], times[b]))


def run_benchmark(n: int = 100_000, workers: int = 2, json_path: str | os.PathLike | None = None, *,
                  block: int = 2000, rounds: int = 15, seed: int = 0, edges: int = 100) -> list[dict]:
    """Run the collision benchmark; rows of ``{"name", "value", "unit", "note"}``.

    ``n`` configurations for the worker throughput, ``rounds`` x ``block`` configurations for
    the per-configuration loops. Writes the rows as JSON to ``json_path`` when given.
    """
    loaded, det = _seed_setup()
    try:
        rng = np.random.default_rng(seed)
        loops = _per_config_loops(loaded, det)
        times = _interleaved(loops, rounds, block, seed)
        med = {k: statistics.median(v) for k, v in times.items()}

        def paired(a: str, b: str) -> float:
            return _paired(times, a, b)

        rows = [{"name": f"per_config.{k}", "value": med[k], "unit": "us",
                 "note": f"median of {rounds} rounds x {block} configurations"} for k in loops]
        rows.append({"name": "ratio.ours_batch_over_raw_minimum", "value": paired("ours_batch", "raw_minimum"),
                     "unit": "x", "note": "target <= 1.0 (median of per-round ratios)"})
        rows.append({"name": "ratio.per_joint_reset_over_ours_batch", "value": paired("per_joint_reset", "ours_batch"),
                     "unit": "x", "note": "target >= 1.4"})
        rows.append({"name": "ratio.per_joint_reset_over_raw_minimum",
                     "value": paired("per_joint_reset", "raw_minimum"), "unit": "x",
                     "note": "the most any detector built on these calls can gain over the per-joint loop"})
        rows.append({"name": "ratio.pyb_utils_style_over_ours_batch", "value": paired("pyb_utils_style", "ours_batch"),
                     "unit": "x", "note": ""})
        rows.append({"name": "ratio.ours_single_over_raw_minimum", "value": paired("ours_single", "raw_minimum"),
                     "unit": "x", "note": "one call per configuration, input checks included"})

        # throughput: 1 worker vs `workers` processes on an n-configuration batch, interleaved
        # (1, k cold, k, 1, k): medians; the 1-worker CPU share shows whether others used the CPU
        Q = np.pi * (rng.random((n, det.dof)) - 0.5)
        load_before = os.getloadavg()[0]
        walls: dict[str, list[float]] = {"1": [], "k": []}
        sched: dict[str, list[tuple[float, float]]] = {"1": [], "cold": [], "k": []}
        results = []
        for tag in (["1", "cold", "k", "1", "k"] if workers > 1 else ["1", "1"]):
            w = 1 if tag == "1" else workers
            before = _sched(_pids(det))
            t0 = time.perf_counter()
            results.append(det.compute_distances(Q, MAX_DISTANCE, workers=w))
            wall = time.perf_counter() - t0
            after = _sched(_pids(det))
            cpu = sum(a[0] - before.get(pid, (0.0, 0.0))[0] for pid, a in after.items())
            wait = sum(a[1] - before.get(pid, (0.0, 0.0))[1] for pid, a in after.items())
            sched[tag].append((cpu / (wall * w), wait))
            if tag == "cold":
                cold = wall
            else:
                walls[tag].append(wall)

        def busy(tag: str) -> str:
            if not sched[tag] or not _HAVE_SCHEDSTAT:
                return ""
            share = min(x[0] for x in sched[tag])
            wait = max(x[1] for x in sched[tag])
            return f"; processes busy {share:.2f} of the time, waited up to {wait:.2f} s for a CPU"

        t1 = statistics.median(walls["1"])
        rows.append({"name": "throughput.workers_1", "value": n / t1, "unit": "configs/s",
                     "note": f"n = {n}, load average before {load_before:.2f}{busy('1')}"})
        if workers > 1:
            tk = statistics.median(walls["k"])
            same = all(np.array_equal(results[0], r) for r in results[1:])
            rows += [
                {"name": f"throughput.workers_{workers}_cold", "value": n / cold, "unit": "configs/s",
                 "note": f"helper processes started inside the timing{busy('cold')}"},
                {"name": f"throughput.workers_{workers}_warm", "value": n / tk, "unit": "configs/s",
                 "note": f"helper processes reused{busy('k')}"},
                {"name": f"speedup.workers_{workers}_cold", "value": t1 / cold, "unit": "x", "note": "target >= 1.7"},
                {"name": f"speedup.workers_{workers}_warm", "value": t1 / tk, "unit": "x", "note": "target >= 1.7"},
                {"name": f"check.workers_{workers}_equal_one_worker", "value": float(same), "unit": "bool",
                 "note": "bit-for-bit equal distances"},
            ]
        rows += _sync_rows(rounds, block, seed)
        rows += _path_rows(edges, seed)
        rows.append({"name": "machine.cpu_count", "value": float(os.cpu_count() or 0), "unit": "",
                     "note": f"load average {os.getloadavg()[0]:.2f} at the end"})
    finally:
        det.close()
        p.disconnect(physicsClientId=loaded.client)
    if json_path is not None:
        Path(json_path).parent.mkdir(parents=True, exist_ok=True)
        Path(json_path).write_text(json.dumps(rows, indent=2) + "\n")
    return rows


def format_table(rows: list[dict]) -> str:
    """The rows as a Markdown table."""
    lines = ["| measurement | value | unit | note |", "| --- | ---: | --- | --- |"]
    for r in rows:
        v = r["value"]
        text = f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.2f}"
        lines.append(f"| {r['name']} | {text} | {r['unit']} | {r['note']} |")
    return "\n".join(lines)


__all__ = ["run_benchmark", "format_table"]
