"""Speed of :mod:`simbench.dynamics.autodiff` (jax), in rows for the benchmark table.

:func:`autodiff_rows` returns plain dicts (``name``, ``robot``, ``us``: microseconds per call,
or per configuration for batches, or the one-off compile time; ``ratio``: ours / ``reference``,
measured in the same run, interleaved; ``reference``; ``notes``). Pinocchio is the reference
for the dynamics and their derivatives (``rnea``, ``computeRNEADerivatives``,
``computeABADerivatives``, a Python loop for batches). For Adam Heins's planar mobile manipulator
("Lagrangian dynamics of a planar mobile manipulator with manual, automatic and symbolic
differentiation") the rows also hold the post's own automatic method (its link poses typed by
hand, ``jax.jacfwd``), timed here next to ours; the post quotes about 30 us per call for it on
its author's laptop (manual 60 us, sympy 160 us): compare ratios, not microseconds, across
machines. ``python -m simbench.bench_autodiff`` prints the table.
"""
from __future__ import annotations

import statistics
import time
import timeit
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .paths import assets_dir

ROBOTS = {
    "mobile_manipulator": str(assets_dir() / "urdf" / "mobile_manipulator.urdf"),
    "kuka_iiwa": "pybullet_data:kuka_iiwa/model.urdf",
    "franka_panda": "pybullet_data:franka_panda/panda.urdf",
}
#: the post's figures (us per call of tau, its author's laptop)
from .bench import LAGRANGIAN_POST_US as POST_US  # noqa: E402  (one table of the post's figures)


def _medians(fns: dict[str, tuple[Callable[[], Any], int, int]], repeats: int) -> dict[str, float]:
    """Median microseconds per unit of each ``name -> (fn, calls per round, units per call)``,
    rounds interleaved so that load from other processes hits all alike."""
    timers = {k: (timeit.Timer(fn), calls, units) for k, (fn, calls, units) in fns.items()}
    samples: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(repeats):
        for k, (timer, calls, units) in timers.items():
            samples[k].append(timer.timeit(calls) / calls / units * 1e6)
    return {k: statistics.median(v) for k, v in samples.items()}


def _first_call(fn: Callable[[], Any]) -> float:
    """Microseconds of a first call (the compile)."""
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) * 1e6


def _post_automatic(g0: float = 9.8) -> Callable:
    """The post's automatic method for its mobile manipulator: link poses (x, y, theta) typed
    by hand, ``J_i = jacfwd(P_i)``, ``M = sum J^T G J``, ``Gamma`` from ``jacfwd(M)``,
    ``g = jacfwd(P)``; jitted ``tau(q, dq, ddq)``."""
    from .dynamics.autodiff._jax import jax, jnp

    m1, m2, m3, lx, ly, l2, l3 = 3.0, 2.0, 1.0, 0.1, 0.1, 1.0, 0.5
    G = [jnp.diag(jnp.array([m1, m1, 0.0])), jnp.diag(jnp.array([m2, m2, m2 * l2 ** 2 / 12])),
         jnp.diag(jnp.array([m3, m3, m3 * l3 ** 2 / 12]))]

    def poses(q):
        p1 = jnp.array([q[0], 0.0, 0.0])
        p2 = p1 + jnp.array([lx + 0.5 * l2 * jnp.cos(q[1]), ly + 0.5 * l2 * jnp.sin(q[1]), q[1]])
        p3 = p2 + jnp.array([0.5 * l2 * jnp.cos(q[1]) + 0.5 * l3 * jnp.cos(q[1] + q[2]),
                             0.5 * l2 * jnp.sin(q[1]) + 0.5 * l3 * jnp.sin(q[1] + q[2]), q[2]])
        return p1, p2, p3

    def mass(q):
        Js = jax.jacfwd(poses)(q)
        return sum(J.T @ Gi @ J for J, Gi in zip(Js, G))

    def tau(q, dq, ddq):
        dM = jax.jacfwd(mass)(q)
        C = dq @ (dM - 0.5 * jnp.transpose(dM, (2, 1, 0)))
        g = jax.jacfwd(lambda x: g0 * sum(m * p[1] for m, p in zip((m1, m2, m3), poses(x))))(q)
        return mass(q) @ ddq + C @ dq + g

    return jax.jit(tau)


_REFERENCE = {"pin rnea": "pinocchio rnea", "pin rnea loop": "pinocchio rnea, Python loop",
              "pin rnea derivatives": "pinocchio computeRNEADerivatives",
              "pin rnea derivatives loop": "pinocchio computeRNEADerivatives, Python loop",
              "pin aba derivatives": "pinocchio computeABADerivatives",
              "pin aba derivatives loop": "pinocchio computeABADerivatives, Python loop"}
#: (timing, row name, reference timing, notes)
_CASES = (
    ("numba rnea", "inverse dynamics, numba RNEA (the default), single call", "pin rnea", ""),
    ("jax rnea", "inverse dynamics, jax RNEA, single call after jit", "pin rnea",
     "jax arrays in and out"),
    ("jax rnea numpy", "inverse dynamics, jax RNEA, numpy API single call", "pin rnea",
     "simbench.dynamics.autodiff.inverse_dynamics"),
    ("jax rnea batch", "inverse dynamics, jax RNEA, vmap batch of {batch}", "pin rnea loop",
     "per configuration"),
    ("jax lagrange", "inverse dynamics, jax Lagrangian (M, Gamma, g by jacfwd), single call",
     "pin rnea", "the post's automatic method on the URDF"),
    ("sympy", "inverse dynamics, sympy lambdify (simbench.dynamics.symbolic), single call",
     "pin rnea", "the post's symbolic method on the URDF"),
    ("jax id derivatives", "inverse dynamics derivatives, jax, single call after jit",
     "pin rnea derivatives", "jax arrays in and out"),
    ("jax id derivatives batch", "inverse dynamics derivatives, jax, vmap batch of {batch}",
     "pin rnea derivatives loop", "per configuration; numpy API"),
    ("jax fd derivatives", "forward dynamics derivatives, jax, numpy API single call",
     "pin aba derivatives", ""),
    ("jax fd derivatives batch", "forward dynamics derivatives, jax, vmap batch of {batch}",
     "pin aba derivatives loop", "per configuration; numpy API"),
)


def _lambdified(model: Any) -> Any:
    """The model's sympy dynamics, lambdified; None without sympy (the ``symbolic`` extra)."""
    try:
        from .dynamics import symbolic
    except ImportError:
        return None
    return symbolic.derive(model).lambdify()


def autodiff_rows(robots: Sequence[str] = tuple(ROBOTS), *, batch: int = 128, repeats: int = 7,
                  calls: int = 200, seed: int = 0, cold: bool = True) -> list[dict]:
    """Benchmark rows for ``robots`` (names of :data:`ROBOTS` or URDF paths; fixed base). Needs
    jax (the ``autodiff`` extra) and Pinocchio. ``cold``: compile times are first calls after
    ``jax.clear_caches()`` (robots of the same padded size share compiled RNEA code); without
    it they are whatever the process has already compiled. ``batch`` <= 128 (one block)."""
    import pinocchio as pin

    from . import dynamics as dyn
    from .dynamics import autodiff as ad
    from .dynamics.autodiff._jax import jax, jnp
    from .model import RobotModel

    rows: list[dict] = []

    def row(name: str, robot: str, us: float, ratio: float | None = None,
            reference: str | None = None, notes: str = "") -> None:
        rows.append(dict(name=name, robot=robot, us=us, ratio=ratio, reference=reference,
                         notes=notes))

    for robot in robots:
        model = RobotModel.from_urdf(ROBOTS.get(robot, robot))
        pm = pin.buildModelFromUrdf(str(model.source))
        pd = pm.createData()
        if pm.nq != model.nq or pm.nv != model.nv:
            raise ValueError(f"{robot}: Pinocchio's q has {pm.nq} entries, ours {model.nq}; the "
                             f"timing needs a robot without continuous joints")
        rng = np.random.default_rng(seed)
        Q = model.random_configuration(rng, batch)
        V, A = rng.normal(size=(2, batch, model.nv))
        q, v, a = Q[0], V[0], A[0]
        g = np.array(model.gravity)
        J = ad.jax_dynamics(model)
        qj, vj, aj, gj = (jnp.asarray(x) for x in (q, v, a, g))
        qs, vs, as_ = list(Q), list(V), list(A)

        if cold:
            jax.clear_caches()
        compile_id = _first_call(lambda: J.inverse_dynamics(qj, vj, aj, gj).block_until_ready())
        compile_did = _first_call(lambda: jax.block_until_ready(
            J.inverse_dynamics_derivatives(qj, vj, aj, gj)))
        compile_lag = _first_call(
            lambda: J.lagrangian_inverse_dynamics(qj, vj, aj, gj).block_until_ready())
        ad.inverse_dynamics_derivatives(model, Q, V, A)          # compiles the batched code
        ad.forward_dynamics_derivatives(model, Q, V, A)
        ad.forward_dynamics_derivatives(model, q, v, a)
        ad.inverse_dynamics(model, Q, V, A)

        def loop(fn: Callable) -> Callable[[], None]:
            def run() -> None:
                for i in range(batch):
                    fn(pm, pd, qs[i], vs[i], as_[i])
            return run

        fns = {
            "pin rnea": (lambda: pin.rnea(pm, pd, q, v, a), calls, 1),
            "pin rnea loop": (loop(pin.rnea), 1, batch),
            "pin rnea derivatives": (lambda: pin.computeRNEADerivatives(pm, pd, q, v, a), calls, 1),
            "pin rnea derivatives loop": (loop(pin.computeRNEADerivatives), 1, batch),
            "pin aba derivatives": (lambda: pin.computeABADerivatives(pm, pd, q, v, a), calls, 1),
            "pin aba derivatives loop": (loop(pin.computeABADerivatives), 1, batch),
            "numba rnea": (lambda: dyn.inverse_dynamics(model, q, v, a), calls, 1),
            "jax rnea": (lambda: J.inverse_dynamics(qj, vj, aj, gj).block_until_ready(), calls, 1),
            "jax rnea numpy": (lambda: ad.inverse_dynamics(model, q, v, a), calls, 1),
            "jax rnea batch": (lambda: ad.inverse_dynamics(model, Q, V, A), 1, batch),
            "jax lagrange": (lambda: J.lagrangian_inverse_dynamics(qj, vj, aj, gj)
                             .block_until_ready(), calls, 1),
            "jax id derivatives": (lambda: jax.block_until_ready(
                J.inverse_dynamics_derivatives(qj, vj, aj, gj)), calls, 1),
            "jax id derivatives batch": (lambda: ad.inverse_dynamics_derivatives(model, Q, V, A),
                                         1, batch),
            "jax fd derivatives": (lambda: ad.forward_dynamics_derivatives(model, q, v, a), calls, 1),
            "jax fd derivatives batch": (lambda: ad.forward_dynamics_derivatives(model, Q, V, A),
                                         1, batch),
        }
        if robot == "mobile_manipulator":
            post = _post_automatic()
            post(qj, vj, aj).block_until_ready()
            fns["post automatic"] = (lambda: post(qj, vj, aj).block_until_ready(), calls, 1)
            lam = _lambdified(model)
            if lam is not None:
                fns["sympy"] = (lambda: lam.inverse_dynamics(q, v, a), calls, 1)
        t = _medians(fns, repeats)
        for key, name, ref, notes in _CASES:
            if key in t:
                row(name.format(batch=batch), robot, t[key], t[key] / t[ref], _REFERENCE[ref], notes)
        if "post automatic" in t:
            row("inverse dynamics, the post's automatic method (poses by hand), single call", robot,
                t["post automatic"], t["jax lagrange"] / t["post automatic"],
                "ratio: our Lagrangian / the post's", f"the post quotes ~{POST_US['automatic (jax)']:.0f}"
                f" us on its author's laptop (manual {POST_US['manual']:.0f}, sympy "
                f"{POST_US['symbolic (sympy lambdify)']:.0f})")
        for name, us in (("inverse dynamics (RNEA)", compile_id),
                         ("inverse dynamics derivatives", compile_did),
                         ("Lagrangian inverse dynamics", compile_lag)):
            row(f"compile time, {name}, first call", robot, us, None, None,
                f"one-off XLA compile: {us / 1e6:.2f} s")
    return rows


def format_rows(rows: Sequence[dict]) -> str:
    """The rows as a Markdown table."""
    lines = ["| robot | case | us | ratio | reference | notes |", "|---|---|---:|---:|---|---|"]
    for r in rows:
        ratio = "" if r["ratio"] is None else f"{r['ratio']:.2f}"
        lines.append(f"| {r['robot']} | {r['name']} | {r['us']:.1f} | {ratio} | "
                     f"{r['reference'] or ''} | {r['notes']} |")
    return "\n".join(lines)


if __name__ == "__main__":  # pragma: no cover - a measurement, not a test
    print(format_rows(autodiff_rows()))
