"""Speed of simbench.dynamics against Pinocchio and PyBullet, measured in the same run.

``run_benchmark()`` returns one row per (robot, case) with medians in microseconds per
configuration (batched cases) or per call (single calls), the speed-up ``other / ours`` and the
target. Measurements are interleaved (ours, Pinocchio, PyBullet, ours, ...) so that load from
other processes hits all of them alike; the median of ``repeats`` rounds is reported (and the
best round). The loops over Pinocchio / PyBullet get their inputs pre-split into rows in
Pinocchio's order (and as lists for PyBullet), so they pay no conversion inside the timed loop.
Batches are timed by the wall clock (ours runs on threads), single calls by the process's CPU time
(one thread each side; robust to other processes on a shared machine).

Cases: batched inverse dynamics, mass matrix and forward dynamics against a loop of
``pin.rnea`` / ``pin.crba`` / ``pin.aba``; single calls; every input form of the fast path (a
list, a read-only array, float32, gravity given as an equal tuple, a one-row batch, the
unchecked ``skip_checks=True``) against the plain float64 call; the Lagrangian path; and, with
``compile_times=True``, the first use of each entry point with an empty numba cache (in a
subprocess). Floating-base robots are compared with Pinocchio's ``JointModelFreeFlyer``.
PyBullet and Pinocchio are imported inside the functions only.
"""
from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

#: name -> (URDF, floating base)
ROBOTS = {
    "kuka_iiwa": ("pybullet_data:kuka_iiwa/model.urdf", False),
    "franka_panda": ("pybullet_data:franka_panda/panda.urdf", False),
    "mobile_manipulator": ("simbench:mobile_manipulator.urdf", False),
    "a1_floating": ("pybullet_data:a1/a1.urdf", True),
    "humanoid_floating": ("pybullet_data:humanoid/humanoid.urdf", True),
}

#: (case, other library) -> minimum speed-up other/ours, fixed base
TARGETS = {
    ("inverse_dynamics batched", "pinocchio"): 15.0,
    ("inverse_dynamics batched", "pybullet"): 8.0,
    ("mass_matrix batched", "pinocchio"): 10.0,
    ("forward_dynamics batched", "pinocchio"): 10.0,
    ("inverse_dynamics single call", "pinocchio"): 1.0,
}
#: the same for a floating base
FLOATING_TARGETS = {
    ("inverse_dynamics batched", "pinocchio"): 8.0,
    ("inverse_dynamics single call", "pinocchio"): 1 / 1.2,
}
#: an input form of the fast path must run within 1.3x of the plain call
FORM_TARGET = 1 / 1.3
FORMS = ("list", "read-only", "float32", "gravity tuple", "one-row batch", "skip_checks")


# ---------------------------------------------------------------------- timing
def _time(fn: Callable[[], Any], number: int, clock: Callable[[], float]) -> float:
    t0 = clock()
    for _ in range(number):
        fn()
    return (clock() - t0) / number


def _interleaved(fns: dict[str, tuple[Callable[[], Any], int, int]], repeats: int
                 ) -> tuple[dict[str, float], dict[str, float]]:
    """Median and best seconds per unit for each ``name -> (fn, calls per round, units per call)``.

    Batches (units > 1: ours runs on several threads) are timed by the wall clock; single calls
    (one thread, ours and theirs alike) by the process's CPU time, which on a shared machine
    does not count the time other processes hold the core."""
    for fn, _, _ in fns.values():
        fn()  # warm-up (numba compile or cache load)
    samples: dict[str, list[float]] = {k: [] for k in fns}
    for r in range(repeats):
        order = list(fns) if r % 2 == 0 else list(fns)[::-1]
        for name in order:
            fn, number, units = fns[name]
            clock = time.perf_counter if units > 1 else time.process_time
            samples[name].append(_time(fn, number, clock) / units)
    return ({k: float(np.median(v)) for k, v in samples.items()},
            {k: float(np.min(v)) for k, v in samples.items()})


def _resolve(robot: str | tuple) -> tuple[str, str, bool]:
    if isinstance(robot, tuple):
        return str(robot[0]), str(robot[0]), bool(robot[1])
    if robot in ROBOTS:
        return robot, *ROBOTS[robot]
    return robot, robot, False


def run_benchmark(robots: Sequence[Any] = ("kuka_iiwa", "franka_panda", "mobile_manipulator",
                                           "a1_floating", "humanoid_floating"),
                  n: int = 10_000, json_path: str | os.PathLike | None = None, *, repeats: int = 7,
                  single_calls: int = 2000, batch_calls: int = 10, lagrange_n: int = 500,
                  seed: int = 0, quick: bool = False, compile_times: bool = False) -> list[dict]:
    """Benchmark rows (list of dicts); also written as JSON to ``json_path`` when given.

    ``robots``: names of :data:`ROBOTS`, URDF paths, or ``(urdf, floating)`` pairs. ``n``: batch
    size; a round times ``batch_calls`` batched calls of ours against one loop of the others and
    ``single_calls`` single calls of each. ``quick``: a smoke run (n <= 1000, 3 rounds).
    """
    if quick:
        n, repeats = min(n, 1000), min(repeats, 3)
        single_calls, batch_calls, lagrange_n = min(single_calls, 200), min(batch_calls, 3), min(lagrange_n, 50)
    import numba

    from .model import RobotModel

    rows: list[dict] = []
    for robot in robots:
        name, spec, floating = _resolve(robot)
        model = RobotModel.from_urdf(spec, floating_base=floating)
        rows += _robot_rows(name, model, n, repeats, single_calls, batch_calls, lagrange_n, seed)
    if compile_times:
        rows += first_use_rows()
    if json_path is not None:
        meta = {"machine": platform.machine(), "python": platform.python_version(),
                "cpus": os.cpu_count(), "numba": numba.__version__,
                "threads": _threads(), "time_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "repeats": repeats, "n": n, "quick": quick, "load_average_1min": _load()}
        with open(json_path, "w") as fh:
            json.dump({"meta": meta, "rows": rows}, fh, indent=2)
    return rows


def _threads() -> int:
    from .dynamics.kernels import threads

    return threads()


def _load() -> float:
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return float("nan")


def _robot_rows(name: str, model: Any, n: int, repeats: int, single_calls: int, batch_calls: int,
                lagrange_n: int, seed: int) -> list[dict]:
    from . import dynamics as dyn
    from .oracles.pinocchio import PinocchioMap, import_pinocchio, pinocchio_model

    pin = import_pinocchio()
    pm = pinocchio_model(model)
    pd = pm.createData()
    mp = PinocchioMap(model, pm)
    rng = np.random.default_rng(seed)
    Q = model.random_configuration(rng, n)
    QD, QDD = rng.normal(size=(n, model.nv)), rng.normal(size=(n, model.nv))
    PQ, PV, PA = list(mp.q(Q)), list(mp.v(QD)), list(mp.v(QDD))  # rows in Pinocchio's order
    q, qd, qdd = Q[0].copy(), QD[0].copy(), QDD[0].copy()
    pq, pv, pa = PQ[0], PV[0], PA[0]
    pyb = None if model.floating_base else _PyBullet(model)

    def loop(fn: Callable, *cols: list) -> Callable[[], None]:
        def run() -> None:
            for args in zip(*cols):
                fn(pm, pd, *args)
        return run

    def batched(ours: Callable[[], Any], **others: Callable[[], Any]) -> dict:
        return {"ours": (ours, batch_calls, n), **{k: (fn, 1, n) for k, fn in others.items()}}

    def single(**fns: Callable[[], Any]) -> dict:
        return {k: (fn, single_calls, 1) for k, fn in fns.items()}

    others_id = {"pinocchio": loop(pin.rnea, PQ, PV, PA)}
    others_single = {"pinocchio": lambda: pin.rnea(pm, pd, pq, pv, pa)}
    if pyb is not None:
        others_id["pybullet"] = pyb.id_loop(Q, QD, QDD)
        others_single["pybullet"] = pyb.id_single(q, qd, qdd)
    forms = _forms(model, q, qd, qdd)
    cases: list[tuple[str, dict, int]] = [
        ("inverse_dynamics batched", batched(lambda: dyn.inverse_dynamics(model, Q, QD, QDD), **others_id), n),
        ("mass_matrix batched", batched(lambda: dyn.mass_matrix(model, Q), pinocchio=loop(pin.crba, PQ)), n),
        ("forward_dynamics batched", batched(lambda: dyn.forward_dynamics(model, Q, QD, QDD),
                                             pinocchio=loop(pin.aba, PQ, PV, PA)), n),
        ("inverse_dynamics single call", single(ours=lambda: dyn.inverse_dynamics(model, q, qd, qdd),
                                                **others_single), 1),
        ("mass_matrix single call", single(ours=lambda: dyn.mass_matrix(model, q),
                                           pinocchio=lambda: pin.crba(pm, pd, pq)), 1),
        ("forward_dynamics single call", single(ours=lambda: dyn.forward_dynamics(model, q, qd, qdd),
                                                pinocchio=lambda: pin.aba(pm, pd, pq, pv, pa)), 1),
        ("inverse_dynamics input forms", single(ours=lambda: dyn.inverse_dynamics(model, q, qd, qdd),
                                                **forms), 1),
    ]
    if not model.floating_base and model.nq == model.nv:
        cases += [
            ("lagrangian inverse_dynamics single call", {
                "ours": (lambda: dyn.lagrange.inverse_dynamics(model, q, qd, qdd), max(1, single_calls // 50), 1)}, 1),
            ("lagrangian inverse_dynamics batched", {
                "ours": (lambda: dyn.lagrange.inverse_dynamics(model, Q[:lagrange_n], QD[:lagrange_n],
                                                                QDD[:lagrange_n]), 1, lagrange_n)}, lagrange_n)]
    targets = FLOATING_TARGETS if model.floating_base else TARGETS
    rows: list[dict] = []
    try:
        for case, fns, batch in cases:
            med, best = _interleaved(fns, repeats)
            base = {"robot": name, "floating_base": model.floating_base, "nq": model.nq, "nv": model.nv,
                    "dof": model.dof, "n": batch}
            if case == "inverse_dynamics input forms":
                for form in forms:
                    rows.append({**base, "case": f"inverse_dynamics single call, {form}",
                                 "ours_us": med[form] * 1e6, "ours_best_us": best[form] * 1e6,
                                 "fast_path_us": med["ours"] * 1e6,
                                 "speedup_vs_fast_path": med["ours"] / med[form],
                                 "target_vs_fast_path": FORM_TARGET,
                                 "ok_vs_fast_path": bool(med["ours"] / med[form] >= FORM_TARGET)})
                continue
            row: dict[str, Any] = {**base, "case": case, "ours_us": med["ours"] * 1e6,
                                   "ours_best_us": best["ours"] * 1e6}
            for other in ("pinocchio", "pybullet"):
                if other in med:
                    row[f"{other}_us"] = med[other] * 1e6
                    row[f"{other}_best_us"] = best[other] * 1e6
                    row[f"speedup_vs_{other}"] = med[other] / med["ours"]
                    row[f"best_speedup_vs_{other}"] = best[other] / best["ours"]
                    target = targets.get((case, other))
                    if target is not None:
                        row[f"target_vs_{other}"] = target
                        row[f"ok_vs_{other}"] = bool(med[other] / med["ours"] >= target)
            rows.append(row)
    finally:
        if pyb is not None:
            pyb.close()
    return rows


def _forms(model: Any, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> dict[str, Callable[[], Any]]:
    """The fast path's input forms, each built outside the timed call."""
    from . import dynamics as dyn

    lists = [x.tolist() for x in (q, qd, qdd)]
    ro = [np.array(x) for x in (q, qd, qdd)]
    for x in ro:
        x.setflags(write=False)
    f32 = [x.astype(np.float32) for x in (q, qd, qdd)]
    rows = [x[None] for x in (q, qd, qdd)]
    g = tuple(float(x) for x in model.gravity)
    return {"list": lambda: dyn.inverse_dynamics(model, *lists),
            "read-only": lambda: dyn.inverse_dynamics(model, *ro),
            "float32": lambda: dyn.inverse_dynamics(model, *f32),
            "gravity tuple": lambda: dyn.inverse_dynamics(model, q, qd, qdd, gravity=g),
            "one-row batch": lambda: dyn.inverse_dynamics(model, *rows),
            "skip_checks": lambda: dyn.inverse_dynamics(model, q, qd, qdd, skip_checks=True)}


class _PyBullet:
    """PyBullet's inverse dynamics of a fixed-base robot, inputs pre-converted to lists."""

    def __init__(self, model: Any):
        import pybullet as p

        self.p = p
        self.client = p.connect(p.DIRECT)
        self.body = p.loadURDF(str(model.source), useFixedBase=True, flags=p.URDF_USE_INERTIA_FROM_FILE,
                               physicsClientId=self.client)
        p.setGravity(*model.gravity, physicsClientId=self.client)

    def id_loop(self, Q: np.ndarray, QD: np.ndarray, QDD: np.ndarray) -> Callable[[], None]:
        p, body, cid = self.p, self.body, self.client
        L = list(zip(Q.tolist(), QD.tolist(), QDD.tolist()))

        def run() -> None:
            for a, b, c in L:
                p.calculateInverseDynamics(body, a, b, c, physicsClientId=cid)
        return run

    def id_single(self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> Callable[[], Any]:
        a, b, c = q.tolist(), qd.tolist(), qdd.tolist()
        return lambda: self.p.calculateInverseDynamics(self.body, a, b, c, physicsClientId=self.client)

    def close(self) -> None:
        self.p.disconnect(physicsClientId=self.client)


# ---------------------------------------------------------------------- first use
_FIRST_USE = r"""
import json, sys, time
import numpy as np
t0 = time.perf_counter()
import simbench.dynamics as dyn
from simbench.model import RobotModel
out = {"import": time.perf_counter() - t0}
m = RobotModel.from_urdf("pybullet_data:kuka_iiwa/model.urdf")
q = np.zeros(7)
Q = m.random_configuration(0, 4000)
for name, call in [("inverse_dynamics single", lambda: dyn.inverse_dynamics(m, q, q, q)),
                   ("inverse_dynamics batched", lambda: dyn.inverse_dynamics(m, Q, Q, Q)),
                   ("mass_matrix single", lambda: dyn.mass_matrix(m, q)),
                   ("mass_matrix batched", lambda: dyn.mass_matrix(m, Q)),
                   ("forward_dynamics single", lambda: dyn.forward_dynamics(m, q, q, q)),
                   ("forward_dynamics batched", lambda: dyn.forward_dynamics(m, Q, Q, Q)),
                   ("forward_kinematics", lambda: dyn.forward_kinematics(m, q))]:
    t = time.perf_counter()
    call()
    out[name] = time.perf_counter() - t
json.dump(out, sys.stdout)
"""


def first_use_rows() -> list[dict]:
    """Seconds of the first call of each public function with an empty numba cache (a fresh
    process and cache directory): each compiles only the entry points it needs."""
    with tempfile.TemporaryDirectory(prefix="simbench-numba-") as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache, "OPENBLAS_NUM_THREADS": "1"}
        res = subprocess.run([sys.executable, "-c", _FIRST_USE], env=env, check=True,
                             capture_output=True, text=True)
    times = json.loads(res.stdout)
    total = sum(v for k, v in times.items() if k != "import")
    rows = [{"robot": "kuka_iiwa", "case": f"first use, empty cache: {k}", "n": 1, "seconds": v}
            for k, v in times.items()]
    rows.append({"robot": "kuka_iiwa", "case": "first use, empty cache: all of the above", "n": 1,
                 "seconds": total, "target_seconds": 30.0, "ok_seconds": bool(total < 30.0)})
    return rows


def format_table(rows: list[dict]) -> str:
    """A plain-text table of :func:`run_benchmark` rows (times in microseconds)."""
    head = (f"{'robot':<19} {'case':<46} {'n':>6} {'ours us':>9} {'pin us':>8} {'pb us':>8} "
            f"{'x pin':>6} {'x pb':>6}  target")
    lines = [head, "-" * len(head)]
    for r in rows:
        if "seconds" in r:
            mark = "" if "target_seconds" not in r else \
                f"< {r['target_seconds']:.0f} s {'ok' if r['ok_seconds'] else 'MISSED'}"
            lines.append(f"{r['robot']:<19} {r['case']:<46} {'':>6} {r['seconds']:>8.2f}s  {mark}")
            continue

        def num(key: str, fmt: str) -> str:
            return format(r[key], fmt) if key in r else "-"

        tgt = []
        for other, short in (("pinocchio", "pin"), ("pybullet", "pb"), ("fast_path", "fast path")):
            if f"target_vs_{other}" in r:
                mark = "ok" if r[f"ok_vs_{other}"] else "MISSED"
                tgt.append(f">= {r[f'target_vs_{other}']:.3g}x {short} {mark}"
                           + (f" (x{r['speedup_vs_fast_path']:.2f})" if other == "fast_path" else ""))
        lines.append(f"{r['robot']:<19} {r['case'][:46]:<46} {r['n']:>6} {num('ours_us', '9.3f')} "
                     f"{num('pinocchio_us', '8.3f')} {num('pybullet_us', '8.3f')} "
                     f"{num('speedup_vs_pinocchio', '6.2f')} {num('speedup_vs_pybullet', '6.2f')}  "
                     + ", ".join(tgt))
    lines.append("x pin / x pb: their time / our time (per configuration or per call), medians of "
                 "interleaved rounds; x fast path: the plain float64 call's time / this form's.")
    return "\n".join(lines)


__all__ = ["run_benchmark", "format_table", "first_use_rows", "ROBOTS", "TARGETS", "FLOATING_TARGETS", "FORM_TARGET"]
