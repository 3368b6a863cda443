"""Speed of simbench.dynamics against Pinocchio and PyBullet, measured in the same run (issue 3).

``run_benchmark()`` returns one row per (robot, case) with medians in microseconds per
configuration (batched cases) or per call (single calls), the speed-up ``other / ours`` and
the issue's target. PyBullet and Pinocchio are imported inside the function only.
Measurements are interleaved (ours, Pinocchio, PyBullet, ours, ...) so that load from other
processes hits all of them alike; the median of ``repeats`` rounds is reported (and the best
round in the JSON). The loops over Pinocchio / PyBullet get their inputs pre-split into rows
(pre-converted to lists for PyBullet), so they pay no conversion inside the timed loop; one
extra row times PyBullet converting each numpy row with ``.tolist()`` inside the loop, as a
loop over a numpy batch must.
"""
from __future__ import annotations

import json
import os
import platform
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

ROBOTS = {
    "kuka_iiwa": "pybullet_data:kuka_iiwa/model.urdf",
    "franka_panda": "pybullet_data:franka_panda/panda.urdf",
}

#: case -> (other library, minimum speed-up other/ours); issue 3's targets
TARGETS = {
    ("inverse_dynamics batched", "pinocchio"): 5.0,
    ("inverse_dynamics batched", "pybullet"): 8.0,
    ("inverse_dynamics batched, pb .tolist() in loop", "pybullet"): 8.0,
    ("mass_matrix batched", "pinocchio"): 2.5,
    ("forward_dynamics batched", "pinocchio"): 2.5,
    ("inverse_dynamics single call", "pinocchio"): 1 / 1.5,
}


def _time(fn: Callable[[], Any], number: int) -> float:
    t0 = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - t0) / number


def _interleaved(fns: dict[str, tuple[Callable[[], Any], int, int]], repeats: int
                 ) -> tuple[dict[str, float], dict[str, float]]:
    """Median and best seconds per unit for each ``name -> (fn, calls per round, units per call)``."""
    for fn, _, _ in fns.values():
        fn()  # warm-up (numba compile or cache load)
    samples: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(repeats):
        for name, (fn, number, units) in fns.items():
            samples[name].append(_time(fn, number) / units)
    return ({k: float(np.median(v)) for k, v in samples.items()},
            {k: float(np.min(v)) for k, v in samples.items()})


def run_benchmark(robots: Sequence[str] = ("kuka_iiwa", "franka_panda"), n: int = 10_000,
                  json_path: str | os.PathLike | None = None, *, repeats: int = 7,
                  single_calls: int = 2000, batch_calls: int = 10, lagrange_n: int = 500,
                  seed: int = 0, quick: bool = False) -> list[dict]:
    """Benchmark rows (list of dicts); also written as JSON to ``json_path`` when given.

    ``robots``: names of :data:`ROBOTS` or URDF paths. ``n``: batch size of the batched cases;
    a round times ``batch_calls`` batched calls of ours (one loop of the others, which is
    ~10 times longer), ``single_calls`` single calls of each. ``quick``: a smoke run
    (n <= 1000, 3 rounds, fewer calls), for CI; its numbers are not the issue's measurement.
    """
    if quick:
        n, repeats = min(n, 1000), min(repeats, 3)
        single_calls, batch_calls, lagrange_n = min(single_calls, 200), min(batch_calls, 3), min(lagrange_n, 50)
    import numba
    import pinocchio as pin
    import pybullet as p

    from .dynamics import forward_dynamics, inverse_dynamics, lagrange, mass_matrix
    from .model import RobotModel

    rows: list[dict] = []
    client = p.connect(p.DIRECT)
    try:
        for robot in robots:
            spec = ROBOTS.get(robot, robot)
            model = RobotModel.from_urdf(spec)
            pm = pin.buildModelFromUrdf(str(model.source))
            pd = pm.createData()
            if pm.nq != model.dof or list(pm.names)[1:] != list(model.joint_names):
                raise RuntimeError(f"{robot}: Pinocchio's joint order differs from ours; the "
                                   f"benchmark needs a robot without continuous joints or branches")
            body = p.loadURDF(str(model.source), useFixedBase=True,
                              flags=p.URDF_USE_INERTIA_FROM_FILE, physicsClientId=client)
            p.setGravity(0, 0, -9.81, physicsClientId=client)
            rng = np.random.default_rng(seed)
            Q = model.random_configuration(rng, n)
            QD = rng.normal(size=(n, model.dof))
            QDD = rng.normal(size=(n, model.dof))
            qs, qds, qdds = list(Q), list(QD), list(QDD)
            Ql, QDl, QDDl = Q.tolist(), QD.tolist(), QDD.tolist()
            q, qd, qdd = Q[0].copy(), QD[0].copy(), QDD[0].copy()

            def pin_rnea_loop() -> None:
                for i in range(n):
                    pin.rnea(pm, pd, qs[i], qds[i], qdds[i])

            def pb_id_loop() -> None:
                for i in range(n):
                    p.calculateInverseDynamics(body, Ql[i], QDl[i], QDDl[i], physicsClientId=client)

            def pb_id_loop_tolist() -> None:
                for i in range(n):
                    p.calculateInverseDynamics(body, Q[i].tolist(), QD[i].tolist(), QDD[i].tolist(),
                                               physicsClientId=client)

            def pin_crba_loop() -> None:
                for i in range(n):
                    pin.crba(pm, pd, qs[i])

            def pb_mass_loop() -> None:
                for i in range(n):
                    p.calculateMassMatrix(body, Ql[i], physicsClientId=client)

            def pin_aba_loop() -> None:
                for i in range(n):
                    pin.aba(pm, pd, qs[i], qds[i], qdds[i])

            def batched(ours: Callable[[], Any], **others: Callable[[], Any]) -> dict:
                """Our batched call (``batch_calls`` per round) against one loop of each other."""
                return {"ours": (ours, batch_calls, n), **{k: (fn, 1, n) for k, fn in others.items()}}

            def single(**fns: Callable[[], Any]) -> dict:
                return {k: (fn, single_calls, 1) for k, fn in fns.items()}

            cases: list[tuple[str, dict[str, tuple[Callable[[], Any], int, int]], int]] = [
                ("inverse_dynamics batched", batched(lambda: inverse_dynamics(model, Q, QD, QDD),
                                                     pinocchio=pin_rnea_loop, pybullet=pb_id_loop), n),
                ("inverse_dynamics batched, pb .tolist() in loop", batched(
                    lambda: inverse_dynamics(model, Q, QD, QDD), pybullet=pb_id_loop_tolist), n),
                ("mass_matrix batched", batched(lambda: mass_matrix(model, Q),
                                                pinocchio=pin_crba_loop, pybullet=pb_mass_loop), n),
                ("forward_dynamics batched", batched(lambda: forward_dynamics(model, Q, QD, QDD),
                                                     pinocchio=pin_aba_loop), n),
                ("inverse_dynamics single call", single(
                    ours=lambda: inverse_dynamics(model, q, qd, qdd),
                    pinocchio=lambda: pin.rnea(pm, pd, q, qd, qdd),
                    pybullet=lambda: p.calculateInverseDynamics(body, Ql[0], QDl[0], QDDl[0],
                                                                physicsClientId=client)), 1),
                ("mass_matrix single call", single(ours=lambda: mass_matrix(model, q),
                                                   pinocchio=lambda: pin.crba(pm, pd, q)), 1),
                ("forward_dynamics single call", single(
                    ours=lambda: forward_dynamics(model, q, qd, qdd),
                    pinocchio=lambda: pin.aba(pm, pd, q, qd, qdd)), 1),
                ("lagrangian inverse_dynamics single call", {
                    "ours": (lambda: lagrange.inverse_dynamics(model, q, qd, qdd),
                             max(1, single_calls // 50), 1)}, 1),
                ("lagrangian inverse_dynamics batched", {
                    "ours": (lambda: lagrange.inverse_dynamics(model, Q[:lagrange_n], QD[:lagrange_n],
                                                               QDD[:lagrange_n]), 1, lagrange_n)},
                 lagrange_n),
            ]
            for case, fns, batch in cases:
                med, best = _interleaved(fns, repeats)
                row: dict[str, Any] = {"robot": robot, "dof": model.dof, "case": case, "n": batch,
                                       "ours_us": med["ours"] * 1e6, "ours_best_us": best["ours"] * 1e6}
                for other in ("pinocchio", "pybullet"):
                    if other in med:
                        row[f"{other}_us"] = med[other] * 1e6
                        row[f"{other}_best_us"] = best[other] * 1e6
                        row[f"best_speedup_vs_{other}"] = best[other] / best["ours"]
                        row[f"speedup_vs_{other}"] = med[other] / med["ours"]
                        target = TARGETS.get((case, other))
                        if target is not None:
                            row[f"target_vs_{other}"] = target
                            row[f"ok_vs_{other}"] = bool(med[other] / med["ours"] >= target)
                rows.append(row)
            p.removeBody(body, physicsClientId=client)
    finally:
        p.disconnect(physicsClientId=client)
    if json_path is not None:
        meta = {"machine": platform.machine(), "python": platform.python_version(),
                "cpus": os.cpu_count(), "numba": numba.__version__,
                "numba_threads": numba.get_num_threads(),
                "threading_layer": _threading_layer(), "pinocchio": pin.__version__,
                "time_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "repeats": repeats, "n": n, "quick": quick}
        with open(json_path, "w") as fh:
            json.dump({"meta": meta, "rows": rows}, fh, indent=2)
    return rows


def _threading_layer() -> str:
    import numba

    try:
        return str(numba.threading_layer())
    except ValueError:
        return "not initialised"


def format_table(rows: list[dict]) -> str:
    """A plain-text table of :func:`run_benchmark` rows (times in microseconds)."""
    head = (f"{'robot':<13} {'case':<47} {'n':>6} {'ours us':>9} {'pin us':>8} {'pb us':>8} "
            f"{'x pin':>7} {'x pb':>7}  target")
    lines = [head, "-" * len(head)]
    for r in rows:
        def num(key: str, fmt: str) -> str:
            return format(r[key], fmt) if key in r else "-"

        tgt = []
        for other, short in (("pinocchio", "pin"), ("pybullet", "pb")):
            if f"target_vs_{other}" in r:
                mark = "ok" if r[f"ok_vs_{other}"] else "MISSED"
                tgt.append(f">= {r[f'target_vs_{other}']:.3g}x {short} {mark}")
        lines.append(f"{r['robot']:<13} {r['case']:<47} {r['n']:>6} {num('ours_us', '9.3f')} "
                     f"{num('pinocchio_us', '8.3f')} {num('pybullet_us', '8.3f')} "
                     f"{num('speedup_vs_pinocchio', '7.2f')} {num('speedup_vs_pybullet', '7.2f')}  "
                     + ", ".join(tgt))
    lines.append("x pin / x pb: speed-up = their time / our time (per configuration or per call); "
                 "medians of interleaved rounds.")
    return "\n".join(lines)


__all__ = ["run_benchmark", "format_table", "ROBOTS", "TARGETS"]
