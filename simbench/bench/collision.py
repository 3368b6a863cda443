"""The collision suite: the query of Adam Heins, "shortest distances with PyBullet", on the
bundled ``kuka_cubes`` scene (link 7 of the KUKA iiwa against the ground and three cubes: 7
joints, 4 pairs, ``max_distance`` large enough that every pair returns a point).

Interleaved groups (:mod:`simbench.bench.harness`; per configuration, CPU time of this process
except the worker throughput, which is wall time):

* per configuration, against the raw PyBullet minimum (one ``resetJointStatesMultiDof`` + 4
  raw ``getClosestPoints``, inputs pre-converted, results thrown away): a per-joint
  ``resetJointState`` loop, pyb_utils v1's ``compute_distances`` loop (reset every joint,
  keyword calls, ``np.min`` over the points), ``CollisionDetector.compute_distances`` on the
  batch and once per configuration;
* one world: a detector on the collision server as it is, the same pairs through
  ``ServerPair.detector`` (which syncs with the main world before each query: nothing changed),
  and with ``mark_changed()`` before every query (the main world read every time);
* path checking, per edge: uniform sampling against conservative advancement (same guarantee);
* throughput on a batch: one worker against ``workers`` processes (helpers reused, and
  helpers started inside the timing).
"""
from __future__ import annotations

import logging
from typing import Any

import numpy as np

from .harness import Contender, interleaved
from .schema import Row, RowsCallback, emit, rows_from

log = logging.getLogger(__name__)

ROBOT = "kuka_iiwa (kuka_cubes scene)"
MAX_DISTANCE = 10.0
LINK7 = "lbr_iiwa_link_7"
OBSTACLES = ("ground", "cube1", "cube2", "cube3")
RAW = "raw PyBullet minimum"


def _per_config(p: Any, loaded: Any, det: Any, Q: np.ndarray) -> list[Contender]:
    client, robot = loaded.client, loaded.bodies["robot"]
    indices = list(loaded.robot.movable_indices)
    raw_pairs = [(a, b, la, lb) for a, b, la, lb, *_ in det._pair_args]
    num_joints = p.getNumJoints(robot, physicsClientId=client)
    nested, rows = Q[:, :, None].tolist(), Q.tolist()  # built outside the timing

    def raw_minimum() -> None:
        for qs in nested:
            p.resetJointStatesMultiDof(robot, indices, qs, physicsClientId=client)
            for a, b, la, lb in raw_pairs:
                p.getClosestPoints(a, b, MAX_DISTANCE, la, lb, physicsClientId=client)

    def per_joint_reset() -> None:
        for q in rows:
            for j, x in zip(indices, q):
                p.resetJointState(robot, j, x, physicsClientId=client)
            for a, b, la, lb in raw_pairs:
                p.getClosestPoints(a, b, MAX_DISTANCE, la, lb, physicsClientId=client)

    def pyb_utils_style() -> None:
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

    def ours_single() -> None:
        for q in Q:
            det.compute_distances(q, MAX_DISTANCE)

    n = len(Q)
    return [Contender(RAW, raw_minimum, n, clock="cpu"),
            Contender("per-joint resetJointState loop", per_joint_reset, n, clock="cpu"),
            Contender("pyb_utils v1 style compute_distances", pyb_utils_style, n, clock="cpu"),
            Contender("simbench compute_distances, batch", lambda: det.compute_distances(Q, MAX_DISTANCE),
                      n, clock="cpu"),
            Contender("simbench compute_distances, one call per configuration", ours_single, n, clock="cpu")]


def _sync_rows(Q: np.ndarray, rounds: int) -> list[Row]:
    from ..bullet.collision import CollisionDetector, NamedCollisionObject
    from ..bullet.servers import connect
    from ..paths import default_scene_path

    link7 = NamedCollisionObject("robot", LINK7)
    pairs = [(link7, o) for o in OBSTACLES]
    with connect(default_scene_path(), gui=False) as pair:
        bare, synced = CollisionDetector(pair.collision, pairs), pair.detector(pairs)

        def loop(det: Any, changed: bool) -> Any:
            def run() -> None:
                for q in Q:
                    if changed:
                        pair.mark_changed()
                    det.compute_distances(q, MAX_DISTANCE)
            return run

        timings = interleaved([Contender("detector on the collision server", loop(bare, False), len(Q), clock="cpu"),
                               Contender("ServerPair.detector, nothing changed", loop(synced, False), len(Q),
                                         clock="cpu"),
                               Contender("ServerPair.detector, mark_changed() before each query",
                                         loop(synced, True), len(Q), clock="cpu")], rounds)
    return rows_from("collision", ROBOT, "one world: one query per call in a tight loop", timings,
                     "detector on the collision server",
                     {"ServerPair.detector, nothing changed": "target ratio < 1.05"})


def _path_rows(p: Any, edges: int, rounds: int, seed: int, resolution: float = 0.005) -> list[Row]:
    from ..bullet.collision import CollisionDetector
    from ..bullet.scene import Scene
    from ..paths import default_scene_path

    client = p.connect(p.DIRECT)
    try:
        loaded = Scene.from_toml(default_scene_path()).load(client)
        det = CollisionDetector(loaded, [("robot", o) for o in ("cube1", "cube2", "cube3", "ground")],
                                disabled=[(("robot", None), "ground")])
        rng = np.random.default_rng(seed)
        q0 = rng.uniform(-2.0, 2.0, (edges, det.dof))
        q1 = q0 + rng.uniform(-1.0, 1.0, (edges, det.dof))
        verdicts = {m: [det.path_is_free(a, b, resolution, method=m) for a, b in zip(q0, q1)]
                    for m in ("uniform", "advance")}  # also the warm-up

        def edges_with(method: str) -> Any:
            return lambda: [det.path_is_free(a, b, resolution, method=method) for a, b in zip(q0, q1)]

        timings = interleaved([Contender("conservative advancement", edges_with("advance"), edges, clock="cpu",
                                         warmup=False),
                               Contender("uniform sampling", edges_with("uniform"), edges, clock="cpu",
                                         warmup=False)], rounds)
    finally:
        p.disconnect(physicsClientId=client)
    agree = sum(a == b for a, b in zip(verdicts["uniform"], verdicts["advance"]))
    note = (f"{edges} random edges, resolution {resolution * 1e3:g} mm; verdicts agree on {agree} of "
            f"{edges}, {sum(verdicts['advance'])} free")
    return rows_from("collision", ROBOT, "path checking, per edge (n = edges)", timings,
                     "conservative advancement", {"conservative advancement": note,
                                                  "uniform sampling": "target ratio >= 3"})


def _throughput_rows(det: Any, Q: np.ndarray, workers: int, rounds: int) -> list[Row]:
    one = det.compute_distances(Q, MAX_DISTANCE, workers=1)
    same = np.array_equal(one, det.compute_distances(Q, MAX_DISTANCE, workers=workers))

    def cold() -> None:
        det.close()  # stops the helper processes: the call starts them again
        det.compute_distances(Q, MAX_DISTANCE, workers=workers)

    n = len(Q)
    timings = interleaved([Contender("1 worker", lambda: det.compute_distances(Q, MAX_DISTANCE, workers=1), n,
                                     clock="wall"),
                           Contender(f"{workers} workers, helpers reused",
                                     lambda: det.compute_distances(Q, MAX_DISTANCE, workers=workers), n,
                                     clock="wall"),
                           Contender(f"{workers} workers, helpers started inside the timing", cold, n,
                                     clock="wall", warmup=False)], rounds)
    return rows_from("collision", ROBOT, f"throughput on a batch of {n:,}", timings, "1 worker",
                     {f"{workers} workers, helpers reused": f"bit-for-bit equal to 1 worker: {same}; "
                                                            f"target ratio <= {1 / 1.7:.3g} (1.7x)"})


def run(*, block: int = 2000, rounds: int = 7, n: int = 40_000, workers: int = 2, edges: int = 50,
        seed: int = 0, notes: list[str] | None = None, on_rows: RowsCallback | None = None) -> list[Row]:
    """The suite's rows (see the module docstring): ``block`` configurations per round of the
    per-configuration groups, ``n`` for the throughput, ``edges`` random path edges; each group
    handed to ``on_rows`` as it is timed."""
    from .._quiet import import_pybullet
    from ..bullet.collision import CollisionDetector, NamedCollisionObject
    from ..bullet.scene import Scene
    from ..paths import default_scene_path

    p = import_pybullet()
    rng = np.random.default_rng(seed)
    client = p.connect(p.DIRECT)
    rows: list[Row] = []
    det = None
    try:
        loaded = Scene.from_toml(default_scene_path()).load(client)
        link7 = NamedCollisionObject("robot", LINK7)
        det = CollisionDetector(loaded, [(link7, o) for o in OBSTACLES])
        Q = np.pi * (rng.random((block, det.dof)) - 0.5)
        log.info("collision: per configuration")
        timings = interleaved(_per_config(p, loaded, det, Q), rounds)
        rows += emit(rows_from("collision", ROBOT, "distances of 4 pairs, per configuration", timings, RAW,
                               {"simbench compute_distances, batch": "target ratio <= 1",
                                "per-joint resetJointState loop": "what a detector built on these calls can gain"}),
                     on_rows)
        if workers > 1:
            log.info("collision: throughput")
            rows += emit(_throughput_rows(det, np.pi * (rng.random((n, det.dof)) - 0.5), workers,
                                          max(1, rounds // 3)), on_rows)
    finally:
        if det is not None:
            det.close()
        p.disconnect(physicsClientId=client)
    log.info("collision: one world")
    rows += emit(_sync_rows(Q, rounds), on_rows)
    log.info("collision: paths")
    rows += emit(_path_rows(p, edges, max(1, rounds // 3), seed), on_rows)
    return rows


__all__ = ["run", "ROBOT", "MAX_DISTANCE"]
