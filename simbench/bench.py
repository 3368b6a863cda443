"""``simbench bench``: every dynamics formulation on one table.

One run, medians over interleaved rounds, ratios to Pinocchio measured in the same run, on
the planar mobile manipulator of Adam Heins, "Lagrangian dynamics of a planar mobile
manipulator", the KUKA iiwa and the Franka Panda:

* inverse dynamics: our RNEA (single call, batched), our Lagrangian path, the lambdified
  sympy model and its generated C (ctypes) where the robot derives (a serial chain),
  PyBullet ``calculateInverseDynamics``, Pinocchio ``rnea`` (the reference);
* mass matrix and forward dynamics the same way (``crba`` / ``aba`` as the reference);
* the collision query figures of :mod:`simbench.bullet.collision_bench` when it is there.

Rows that :func:`simbench.bench_dynamics.run_benchmark` measures are taken from it when that
module exists (it is not re-timed); this module adds the symbolic rows. Output: a table like
Adam Heins's post's (microseconds per call), the machine and library versions, and JSON with stable
keys (``machine``, ``versions``, ``settings``, ``rows``; each row has ``robot``, ``quantity``,
``method``, ``mode``, ``n``, ``value``, ``unit``, ``ratio_to_pinocchio``, ``note``).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .errors import SimbenchError, closest
from .model import RobotModel
from .oracles.pinocchio import PinocchioDynamics
from .paths import assets_dir

ASSETS = assets_dir() / "urdf"
ROBOTS = {
    "mobile_manipulator": str(ASSETS / "mobile_manipulator.urdf"),
    "kuka_iiwa": "pybullet_data:kuka_iiwa/model.urdf",
    "franka_panda": "pybullet_data:franka_panda/panda.urdf",
    "a1_floating": "pybullet_data:a1/a1.urdf",
    "humanoid_floating": "pybullet_data:humanoid/humanoid.urdf",
}
#: robots loaded with a floating base (free-flyer root)
FLOATING = {"a1_floating", "humanoid_floating"}
#: The figures of Adam Heins's "Lagrangian dynamics of a planar mobile manipulator with manual,
#: automatic and symbolic differentiation" for its 3-DOF robot (us per call of tau), for context.
LAGRANGIAN_POST_US = {"manual": 60.0, "automatic (jax)": 30.0, "symbolic (sympy lambdify)": 160.0}

QUANTITIES = ("inverse_dynamics", "mass_matrix", "forward_dynamics")
REFERENCE = {"inverse_dynamics": "pinocchio rnea", "mass_matrix": "pinocchio crba",
             "forward_dynamics": "pinocchio aba"}


# ---------------------------------------------------------------------- machine, versions
def machine_info() -> dict[str, Any]:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        affinity = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        affinity = os.cpu_count() or 0
    return {"cpu": cpu, "cores": os.cpu_count() or 0, "usable_cores": affinity,
            "platform": platform.platform(), "load_average_1min": _load()}


def _load() -> float:
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return float("nan")


def library_versions() -> dict[str, str]:
    from importlib import metadata

    out = {"python": platform.python_version()}
    for key, dist in (("numpy", "numpy"), ("numba", "numba"), ("pybullet", "pybullet"),
                      ("pin", "pin"), ("sympy", "sympy"), ("simbench", "simbench")):
        try:
            out[key] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[key] = "not installed"
    if out["pin"] == "not installed":
        try:
            import pinocchio

            out["pin"] = pinocchio.__version__
        except ImportError:
            pass
    return out


# ---------------------------------------------------------------------- timing helpers
def _median_rounds(methods: dict[str, Callable[[], float]], rounds: int) -> dict[str, float]:
    """Run every timing function ``rounds`` times, interleaved (order reversed every other
    round), after one warm-up round; medians of the returned microseconds per call."""
    times: dict[str, list[float]] = {k: [] for k in methods}
    for r in range(rounds + 1):
        order = list(methods) if r % 2 == 0 else list(methods)[::-1]
        for name in order:
            us = methods[name]()
            if r > 0:
                times[name].append(us)
    return {k: statistics.median(v) for k, v in times.items()}


def _loop(fn: Callable, args: list[tuple]) -> Callable[[], float]:
    def run() -> float:
        t = time.perf_counter()
        for a in args:
            fn(*a)
        return (time.perf_counter() - t) / len(args) * 1e6
    return run


def _batch(fn: Callable, args: tuple, n: int) -> Callable[[], float]:
    def run() -> float:
        t = time.perf_counter()
        fn(*args)
        return (time.perf_counter() - t) / n * 1e6
    return run


# ---------------------------------------------------------------------- references
class _PyBullet:
    def __init__(self, model: RobotModel):
        import pybullet as p

        self.p = p
        self.client = p.connect(p.DIRECT)
        self.body = p.loadURDF(model.source, useFixedBase=True, flags=p.URDF_USE_INERTIA_FROM_FILE,
                               physicsClientId=self.client)
        p.setGravity(0, 0, -9.81, physicsClientId=self.client)

    def close(self) -> None:
        self.p.disconnect(physicsClientId=self.client)


# ---------------------------------------------------------------------- symbolic rows
def _symbolic(name: str, model: RobotModel, max_dof: int, want_c: bool,
              notes: list[str]) -> tuple[Any, Any, list[dict]]:
    """(lambdified, compiled or None, derivation rows); (None, None, rows) if it does not derive."""
    try:
        from .dynamics import symbolic
    except ImportError as exc:
        notes.append(f"{name}: symbolic rows skipped ({exc})")
        return None, None, []
    rows: list[dict] = []
    t = time.perf_counter()
    try:  # refuses trees first, then more than max_dof joints (--symbolic-max-dof)
        eom = symbolic.derive(model, max_dof=max_dof)
    except SimbenchError as exc:
        notes.append(f"{name}: no symbolic rows: {exc}")
        return None, None, rows
    t_derive = time.perf_counter() - t
    t = time.perf_counter()
    lam = eom.lambdify()
    t_lambdify = time.perf_counter() - t
    rows.append(_row(name, "derivation", "sympy derive (M, C, g)", "once", 1, t_derive, "s"))
    rows.append(_row(name, "derivation", "sympy lambdify (cse)", "once", 1, t_lambdify, "s"))
    compiled = None
    if want_c:
        t = time.perf_counter()
        opt = "-O2" if model.dof <= 4 else "-O0"  # gcc -O2 needs ~40 s on a 7-DOF arm's code
        try:
            compiled = eom.compile(opt=opt)
            compiled.label = f"symbolic C {opt} (ctypes)"
            rows.append(_row(name, "derivation", f"C codegen + cc {opt}", "once", 1,
                             time.perf_counter() - t, "s"))
        except SimbenchError as exc:
            notes.append(f"{name}: generated C not timed ({str(exc).splitlines()[0]})")
    return lam, compiled, rows


def _row(robot: str, quantity: str, method: str, mode: str, n: int, value: float, unit: str,
         ratio: float | None = None, note: str = "") -> dict:
    return {"robot": robot, "quantity": quantity, "method": method, "mode": mode, "n": int(n),
            "value": float(value), "unit": unit,
            "ratio_to_pinocchio": None if ratio is None else float(ratio), "note": note}


# ---------------------------------------------------------------------- one robot
def bench_robot(name: str, spec: str, *, n: int, single: int, rounds: int, symbolic_max_dof: int,
                want_c: bool, skip: set[str], notes: list[str]) -> list[dict]:
    """All rows of one robot (see the module docstring)."""
    from . import dynamics
    from .dynamics import lagrange

    model = RobotModel.from_urdf(spec, floating_base=name in FLOATING)
    dof = model.dof
    rng = np.random.default_rng(0)
    Q = model.random_configuration(rng, n)
    QD = rng.normal(0.0, 1.0, (n, dof))
    QDD = rng.normal(0.0, 1.0, (n, dof))
    TAU = dynamics.inverse_dynamics(model, Q, QD, QDD)
    # single-call inputs: separate C-contiguous arrays, as a user loop would have them
    S = [(np.array(Q[i]), np.array(QD[i]), np.array(QDD[i]), np.array(TAU[i])) for i in range(single)]
    rows: list[dict] = []
    lam = compiled = None
    if "symbolic" not in skip:
        lam, compiled, srows = _symbolic(name, model, symbolic_max_dof, want_c, notes)
        rows += srows
    pin_ref = None
    if "pinocchio" not in skip:
        try:
            pin_ref = PinocchioDynamics.from_urdf(model)  # Pinocchio's parse of the same file
        except (ImportError, SimbenchError) as exc:
            notes.append(f"{name}: Pinocchio reference unavailable ({exc})")
    external = None if "bench_dynamics" in skip else _dynamics_rows(name, spec, n, single, rounds, notes)
    numeric = external is None  # time our numeric dynamics here only if bench_dynamics did not
    if external:
        rows += external
    pyb = None if ("pybullet" in skip or not numeric) else _PyBullet(model)
    try:
        for quantity in QUANTITIES:
            methods: dict[str, tuple[str, int, Callable[[], float]]] = {}

            def add(method: str, mode: str, fn: Callable[[], float], count: int) -> None:
                if not numeric and method.startswith(("simbench", "pybullet")):
                    return  # measured by simbench.bench_dynamics already
                methods[method] = (mode, count, fn)

            def add_symbolic(fn: str, single_args: list[tuple], batch_args: tuple) -> None:
                """The lambdified and the compiled C rows of ``fn``: single calls, then batched."""
                for impl, label in ((lam, "symbolic lambdify"), (compiled, getattr(compiled, "label", ""))):
                    if impl is not None:
                        add(label, "single", _loop(getattr(impl, fn), single_args), single)
                        add(label + " batched", "batch", _batch(getattr(impl, fn), batch_args, n), n)

            if quantity == "inverse_dynamics":
                if pin_ref is not None:
                    P = [(pin_ref.pm, pin_ref.data, pin_ref.map.q(q), pin_ref.map.v(qd), pin_ref.map.v(qdd))
                         for q, qd, qdd, _ in S]
                    add("pinocchio rnea", "loop", _loop(pin_ref.pin.rnea, P), single)
                add("simbench RNEA", "single", _loop(dynamics.inverse_dynamics,
                                                     [(model, q, qd, qdd) for q, qd, qdd, _ in S]), single)
                add("simbench RNEA batched", "batch", _batch(dynamics.inverse_dynamics, (model, Q, QD, QDD), n), n)
                add("simbench Lagrangian", "single", _loop(lagrange.inverse_dynamics,
                                                           [(model, q, qd, qdd) for q, qd, qdd, _ in S]), single)
                add("simbench Lagrangian batched", "batch",
                    _batch(lagrange.inverse_dynamics, (model, Q, QD, QDD), n), n)
                add_symbolic("inverse_dynamics", [(q, qd, qdd) for q, qd, qdd, _ in S], (Q, QD, QDD))
                if pyb is not None:
                    L = [(pyb.body, q.tolist(), qd.tolist(), qdd.tolist()) for q, qd, qdd, _ in S]
                    cid = pyb.client
                    add("pybullet calculateInverseDynamics", "loop",
                        _loop(lambda b, q, qd, qdd: pyb.p.calculateInverseDynamics(b, q, qd, qdd, physicsClientId=cid), L),
                        single)
            elif quantity == "mass_matrix":
                if pin_ref is not None:
                    P = [(pin_ref.pm, pin_ref.data, pin_ref.map.q(q)) for q, _, _, _ in S]
                    add("pinocchio crba", "loop", _loop(pin_ref.pin.crba, P), single)
                add("simbench CRBA", "single", _loop(dynamics.mass_matrix, [(model, s[0]) for s in S]), single)
                add("simbench CRBA batched", "batch", _batch(dynamics.mass_matrix, (model, Q), n), n)
                add("simbench Lagrangian", "single", _loop(lagrange.mass_matrix, [(model, s[0]) for s in S]), single)
                add_symbolic("mass_matrix", [(s[0],) for s in S], (Q,))
                if pyb is not None:
                    cid = pyb.client
                    L = [(pyb.body, s[0].tolist()) for s in S]
                    add("pybullet calculateMassMatrix", "loop",
                        _loop(lambda b, q: pyb.p.calculateMassMatrix(b, q, physicsClientId=cid), L), single)
            else:
                if pin_ref is not None:
                    P = [(pin_ref.pm, pin_ref.data, pin_ref.map.q(q), pin_ref.map.v(qd), pin_ref.map.v(tau))
                         for q, qd, _, tau in S]
                    add("pinocchio aba", "loop", _loop(pin_ref.pin.aba, P), single)
                add("simbench ABA/CRBA", "single", _loop(dynamics.forward_dynamics,
                                                         [(model, q, qd, tau) for q, qd, _, tau in S]), single)
                add("simbench batched", "batch", _batch(dynamics.forward_dynamics, (model, Q, QD, TAU), n), n)
                if lam is not None:
                    def fd_sym(q, qd, tau, lam=lam):
                        b = lam.inverse_dynamics(q, qd, np.zeros_like(qd))
                        return np.linalg.solve(lam.mass_matrix(q), (tau - b)[..., None])[..., 0]
                    add("symbolic lambdify + solve", "single", _loop(fd_sym, [(q, qd, tau) for q, qd, _, tau in S]),
                        single)
                    add("symbolic lambdify + solve batched", "batch", _batch(fd_sym, (Q, QD, TAU), n), n)
            med = _median_rounds({k: v[2] for k, v in methods.items()}, rounds)
            ref = REFERENCE[quantity]
            for method, (mode, count, _) in methods.items():
                if method == ref and not numeric:
                    continue  # bench_dynamics reports Pinocchio; this one is the symbolic rows' reference
                ratio = med[method] / med[ref] if ref in med else None
                note = f"median of {rounds} rounds, {count} {'configurations' if mode == 'batch' else 'calls'}"
                if not numeric and ratio is not None:
                    note += f"; ratio to {ref} timed alongside ({med[ref]:.3g} us)"
                rows.append(_row(name, quantity, method, mode, count, med[method], "us/call", ratio, note))
    finally:
        if pyb is not None:
            pyb.close()
    order = {q: i for i, q in enumerate(("derivation",) + QUANTITIES)}
    rows.sort(key=lambda r: order.get(r["quantity"], 99))  # stable: insertion order within a quantity
    return rows


# ---------------------------------------------------------------------- dynamics rows from bench_dynamics
#: bench_dynamics case -> (quantity, our method name, mode, pinocchio name, pybullet name)
_CASES = {
    "inverse_dynamics batched": ("inverse_dynamics", "simbench RNEA batched", "batch",
                                 "pinocchio rnea (loop over the batch)", "pybullet calculateInverseDynamics (loop)"),
    "inverse_dynamics single call": ("inverse_dynamics", "simbench RNEA", "single",
                                     "pinocchio rnea (single call)", "pybullet calculateInverseDynamics (single call)"),
    "mass_matrix batched": ("mass_matrix", "simbench CRBA batched", "batch",
                            "pinocchio crba (loop over the batch)", "pybullet calculateMassMatrix (loop)"),
    "mass_matrix single call": ("mass_matrix", "simbench CRBA", "single", "pinocchio crba (single call)", None),
    "forward_dynamics batched": ("forward_dynamics", "simbench forward dynamics batched", "batch",
                                 "pinocchio aba (loop over the batch)", None),
    "forward_dynamics single call": ("forward_dynamics", "simbench forward dynamics", "single",
                                     "pinocchio aba (single call)", None),
    "lagrangian inverse_dynamics single call": ("inverse_dynamics", "simbench Lagrangian", "single", None, None),
    "lagrangian inverse_dynamics batched": ("inverse_dynamics", "simbench Lagrangian batched", "batch", None, None),
    **{f"inverse_dynamics single call, {form}": ("inverse_dynamics", f"simbench RNEA, {form}", "single", None, None)
       for form in ("list", "read-only", "float32", "gravity tuple", "one-row batch", "skip_checks")},
}


def _dynamics_rows(name: str, spec: str, n: int, single: int, rounds: int,
                   notes: list[str]) -> list[dict] | None:
    """Our numeric rows from :func:`simbench.bench_dynamics.run_benchmark` (None if that
    module is missing or refuses the robot)."""
    try:
        from . import bench_dynamics
    except ImportError:
        return None
    try:
        raw = bench_dynamics.run_benchmark(robots=[name if name in bench_dynamics.ROBOTS else spec], n=n,
                                           repeats=rounds, single_calls=single)
    except Exception as exc:  # e.g. a joint order Pinocchio does not share: time it here instead
        notes.append(f"{name}: simbench.bench_dynamics failed ({exc}); numeric rows timed by simbench.bench")
        return None
    pin_us = {}
    for r in raw:
        case = _CASES.get(r["case"])
        if case and case[3] and "pinocchio_us" in r:
            pin_us[(case[0], case[2])] = r["pinocchio_us"]
    rows = []
    for r in raw:
        case = _CASES.get(r["case"])
        if case is None:
            continue
        quantity, ours, mode, pin_name, pb_name = case
        ref = pin_us.get((quantity, mode))
        note = f"simbench.bench_dynamics, median of {rounds} rounds, n = {r['n']}"
        if "speedup_vs_fast_path" in r:
            note += f"; x{r['speedup_vs_fast_path']:.2f} the plain float64 call ({r['fast_path_us']:.3g} us)"
        rows.append(_row(name, quantity, ours, mode, r["n"], r["ours_us"], "us/call",
                         r["ours_us"] / ref if ref else None, note))
        if pin_name and "pinocchio_us" in r:
            rows.append(_row(name, quantity, pin_name, "loop" if mode == "batch" else "single", r["n"],
                             r["pinocchio_us"], "us/call", 1.0, note))
        if pb_name and "pybullet_us" in r:
            rows.append(_row(name, quantity, pb_name, "loop" if mode == "batch" else "single", r["n"],
                             r["pybullet_us"], "us/call", r["pybullet_us"] / ref if ref else None, note))
    order = {q: i for i, q in enumerate(QUANTITIES)}
    rows.sort(key=lambda r: order.get(r["quantity"], 99))  # stable: keeps bench_dynamics' order inside
    return rows


def _first_use_rows(notes: list[str]) -> list[dict]:
    """Seconds of each dynamics function's first call with an empty numba cache (each compiles
    only the kernels it needs), from :func:`simbench.bench_dynamics.first_use_rows`."""
    from . import bench_dynamics

    try:
        raw = bench_dynamics.first_use_rows()
    except Exception as exc:  # noqa: BLE001 - a subprocess: report, do not lose the other rows
        notes.append(f"first-use compile times not measured ({exc})")
        return []
    return [_row(r["robot"], "first use", r["case"].split(": ", 1)[1], "once", 1, r["seconds"], "s", None,
                 "a fresh process with an empty numba cache" + (f"; target < {r['target_seconds']:.0f} s"
                                                                 if "target_seconds" in r else ""))
            for r in raw]


# ---------------------------------------------------------------------- collision rows
def _collision_rows(quick: bool, notes: list[str]) -> list[dict]:
    run = None
    for module in ("simbench.bullet.collision_bench", "simbench.bullet.collision"):
        try:
            mod = __import__(module, fromlist=["run_benchmark"])
        except ImportError:
            continue
        run = getattr(mod, "run_benchmark", None)
        if run is not None:
            break
    if run is None:
        notes.append("collision figures skipped: no run_benchmark in simbench.bullet.collision_bench")
        return []
    kw = dict(n=4000, workers=2, block=500, rounds=3) if quick else dict(n=40_000, workers=2, block=2000, rounds=9)
    try:
        raw = run(**kw)
    except TypeError:
        raw = run()
    rows = []
    for r in raw:
        rows.append(_row("kuka_iiwa (kuka_cubes scene)", "collision", str(r["name"]), "", kw.get("n", 0),
                         float(r["value"]), str(r["unit"]), None, str(r.get("note", ""))))
    return rows


# ---------------------------------------------------------------------- public entry points
def run_benchmark(robots: Sequence[str] | None = None, *, n: int = 10_000, single: int = 500,
                  rounds: int = 7, quick: bool = False, symbolic_max_dof: int = 7,
                  want_c: bool = True, collision: bool = True, skip: Sequence[str] = (),
                  json_path: str | os.PathLike | None = None) -> dict[str, Any]:
    """Run everything; returns ``{"machine", "versions", "settings", "rows", "notes"}``
    (and writes it as JSON to ``json_path``)."""
    if quick:
        n, single, rounds = min(n, 2000), min(single, 100), min(rounds, 3)
        symbolic_max_dof = min(symbolic_max_dof, 3)
    chosen = _resolve_robots(robots)
    notes: list[str] = []
    rows: list[dict] = []
    t0 = time.perf_counter()
    for name, spec in chosen.items():
        rows += bench_robot(name, spec, n=n, single=single, rounds=rounds,
                            symbolic_max_dof=symbolic_max_dof, want_c=want_c, skip=set(skip), notes=notes)
    if not quick and "first_use" not in skip:
        rows += _first_use_rows(notes)
    if collision:
        rows += _collision_rows(quick, notes)
    result = {
        "machine": machine_info(),
        "versions": library_versions(),
        "settings": {"robots": chosen, "n": n, "single_calls": single, "rounds": rounds, "quick": quick,
                     "symbolic_max_dof": symbolic_max_dof, "gravity": [0.0, 0.0, -9.81],
                     "seconds": round(time.perf_counter() - t0, 1)},
        "lagrangian_post_us_per_call": LAGRANGIAN_POST_US,
        "rows": rows,
        "notes": notes,
    }
    if json_path is not None:
        path = Path(json_path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(result, indent=2, sort_keys=False) + "\n")
    return result


def _resolve_robots(robots: Sequence[str] | None) -> dict[str, str]:
    if not robots:
        return dict(ROBOTS)
    out = {}
    for r in robots:
        if r in ROBOTS:
            out[r] = ROBOTS[r]
        else:
            alias = {"iiwa": "kuka_iiwa", "kuka": "kuka_iiwa", "panda": "franka_panda",
                     "franka": "franka_panda", "mobile": "mobile_manipulator"}.get(r)
            if alias:
                out[alias] = ROBOTS[alias]
            elif ":" in r or r.endswith((".urdf", ".xacro")) or os.sep in r:
                RobotModel.from_urdf(r)  # a clear URDFError if it cannot be read
                out[Path(r.split(":", 1)[-1]).stem] = r
            else:
                close = closest(r, list(ROBOTS) + ["iiwa", "kuka", "panda", "franka", "mobile"])
                hint = f"; did you mean {close[0]!r}?" if close else ""
                raise SimbenchError(f"--robot {r!r}: expected one of {', '.join(ROBOTS)} or a URDF file "
                                    f"(a path, pybullet_data:NAME or simbench:NAME){hint}")
    return out


def format_table(result: dict[str, Any]) -> str:
    """The result as text: machine and versions, then one table per robot."""
    m, v = result["machine"], result["versions"]
    lines = [f"machine: {m['cpu']}, {m['cores']} cores ({m['usable_cores']} usable), {m['platform']}, "
             f"load {m['load_average_1min']}",
             "versions: " + ", ".join(f"{k} {val}" for k, val in v.items()),
             f"settings: batch n = {result['settings']['n']}, {result['settings']['single_calls']} single "
             f"calls, medians of {result['settings']['rounds']} interleaved rounds; x pin = time / "
             f"Pinocchio's time in the same run (lower is faster)", ""]
    robots = list(dict.fromkeys(r["robot"] for r in result["rows"]))
    for robot in robots:
        rows = [r for r in result["rows"] if r["robot"] == robot]
        lines.append(f"== {robot}")
        lines.append(f"  {'quantity':<18} {'method':<48} {'mode':<7} {'value':>10} {'unit':<8} {'x pin':>7}")
        for r in rows:
            val = r["value"]
            text = (f"{val:,.0f}" if abs(val) >= 10_000 else f"{val:.3g}" if abs(val) < 1 else f"{val:.2f}")
            ratio = "" if r["ratio_to_pinocchio"] is None else f"{r['ratio_to_pinocchio']:.2f}"
            lines.append(f"  {r['quantity']:<18} {r['method']:<48} {r['mode']:<7} {text:>10} {r['unit']:<8} {ratio:>7}")
        lines.append("")
    if any(r["robot"] == "mobile_manipulator" for r in result["rows"]):
        lines.append("Adam Heins's post (its laptop, tau per call of the same 3-DOF robot): " + ", ".join(
            f"{k} {val:.0f} us" for k, val in result["lagrangian_post_us_per_call"].items()))
    for note in result["notes"]:
        lines.append(f"note: {note}")
    return "\n".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--robot", action="append", metavar="NAME_OR_URDF",
                        help=f"robot to time (repeatable): {', '.join(ROBOTS)} or a URDF path / "
                             f"pybullet_data:NAME (default: the three)")
    parser.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    parser.add_argument("--quick", action="store_true",
                        help="small batches and few rounds (a smoke run, about a minute)")
    parser.add_argument("--n", type=int, default=10_000, help="batch size (default 10000)")
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds per median (default 7)")
    parser.add_argument("--symbolic-max-dof", type=int, default=7,
                        help="derive the sympy model only up to this many DOF (default 7: about 20 s for "
                             "the iiwa; --quick uses 3)")
    parser.add_argument("--no-c", action="store_true", help="skip compiling the generated C code")
    parser.add_argument("--no-collision", action="store_true", help="skip the collision query figures")


def run_cli(args: argparse.Namespace) -> int:
    """Run ``simbench bench``: bad options and an unwritable ``--json`` are a
    :class:`SimbenchError` before any work."""
    from .outputs import writable_file

    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    if args.n < 1 or args.rounds < 1:
        raise SimbenchError(f"--n {args.n} and --rounds {args.rounds}: expected positive integers")
    if args.json:
        writable_file(args.json, "--json report")
    _resolve_robots(args.robot)  # unknown robots: one line, before the work
    result = run_benchmark(args.robot, n=args.n, rounds=args.rounds, quick=args.quick,
                           symbolic_max_dof=args.symbolic_max_dof, want_c=not args.no_c,
                           collision=not args.no_collision, json_path=args.json)
    print(format_table(result))
    if args.json:
        print(f"wrote {args.json}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python scripts/bench.py [options]``: the same as ``simbench bench``."""
    from .cli import main as simbench_main

    return simbench_main(["bench", *(sys.argv[1:] if argv is None else argv)])


__all__ = ["run_benchmark", "bench_robot", "format_table", "add_arguments", "run_cli", "main",
           "machine_info", "library_versions", "ROBOTS"]
