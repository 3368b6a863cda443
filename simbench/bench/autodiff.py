"""The autodiff suite: :mod:`simbench.dynamics.autodiff` (jax) against Pinocchio, in one run.

References are Pinocchio's (``rnea``, ``computeRNEADerivatives``, ``computeABADerivatives``;
a Python loop over the batch for vmap batches), reached through :mod:`simbench.oracles.pinocchio`.
For the planar mobile manipulator of Adam Heins, "Lagrangian dynamics of a planar mobile
manipulator with manual, automatic and symbolic differentiation", the single-call group also
holds the post's own automatic method (its link poses typed by hand, ``jax.jacfwd``) and the
sympy model; the post quotes manual 60 us, jax 30 us and sympy 160 us per call on its author's
laptop: compare ratios, not microseconds, across machines. jax is optional (the ``autodiff``
extra): without it the suite logs one line naming the extra and gives no rows.
"""
from __future__ import annotations

import importlib.util
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from .harness import Contender, interleaved, once
from .schema import Row, RowsCallback, emit, one_off, rows_from

log = logging.getLogger(__name__)

ROBOTS = {"mobile_manipulator": "simbench:mobile_manipulator.urdf",
          "kuka_iiwa": "pybullet_data:kuka_iiwa/model.urdf",
          "franka_panda": "pybullet_data:franka_panda/panda.urdf"}
#: the post's figures (us per call of tau, its author's laptop)
POST_US = {"manual": 60.0, "automatic (jax)": 30.0, "symbolic (sympy lambdify)": 160.0}
MISSING = "autodiff: no jax rows: install the 'autodiff' extra (pip install 'simbench[autodiff]')"
NO_PINOCCHIO = ("autodiff: no rows: its references are Pinocchio's, which is not installed "
                "(pip install pin, or the 'test' extra)")


def _post_automatic(g0: float = 9.8) -> Callable:
    """The post's automatic method for its mobile manipulator: link poses (x, y, theta) typed
    by hand, ``J_i = jacfwd(P_i)``, ``M = sum J^T G J``, ``Gamma`` from ``jacfwd(M)``,
    ``g = jacfwd(P)``; jitted ``tau(q, dq, ddq)``."""
    from ..dynamics.autodiff._jax import jax, jnp

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


def robot_rows(robot: str, spec: str | None = None, *, batch: int = 128, rounds: int = 7, calls: int = 200, seed: int = 0,
               cold: bool = True, notes: list[str] | None = None, on_rows: RowsCallback | None = None) -> list[Row]:
    """Rows of one robot (``spec``: its URDF, by default ``ROBOTS[robot]``; fixed base), each group
    handed to ``on_rows`` as it is timed. ``cold``: compile times are first calls after
    ``jax.clear_caches()``. ``batch`` <= 128 (one block)."""
    from .. import dynamics as dyn
    from ..dynamics import autodiff as ad
    from ..dynamics.autodiff._jax import jax, jnp
    from ..model import RobotModel
    from ..oracles.pinocchio import PinocchioMap, import_pinocchio, pinocchio_model
    from . import symbolic

    pin = import_pinocchio()
    model = RobotModel.from_urdf(spec or ROBOTS.get(robot, robot), floating_base=False)
    pm = pinocchio_model(model)
    pd = pm.createData()
    mp = PinocchioMap(model, pm)
    rng = np.random.default_rng(seed)
    Q = model.random_configuration(rng, batch)
    V, A = rng.normal(size=(2, batch, model.nv))
    q, v, a = Q[0], V[0], A[0]
    cols = [list(mp.q(Q)), list(mp.v(V)), list(mp.v(A))]
    pq, pv, pa = (c[0] for c in cols)
    J = ad.jax_dynamics(model)
    qj, vj, aj, gj = (jnp.asarray(x) for x in (q, v, a, np.array(model.gravity)))
    if cold:
        jax.clear_caches()
    compiles = {"inverse dynamics (RNEA)": once(lambda: J.inverse_dynamics(qj, vj, aj, gj).block_until_ready()),
                "inverse dynamics derivatives": once(lambda: jax.block_until_ready(
                    J.inverse_dynamics_derivatives(qj, vj, aj, gj))),
                "Lagrangian inverse dynamics": once(
                    lambda: J.lagrangian_inverse_dynamics(qj, vj, aj, gj).block_until_ready())}

    def loop(fn: Callable) -> Callable[[], None]:
        def run() -> None:
            for args in zip(*cols):
                fn(pm, pd, *args)
        return run

    def single(name: str, fn: Callable) -> Contender:
        return Contender(name, fn, calls=calls)

    groups: list[tuple[str, str, list[Contender]]] = [
        ("inverse dynamics, single call", "pinocchio rnea", [
            single("pinocchio rnea", lambda: pin.rnea(pm, pd, pq, pv, pa)),
            single("numba RNEA (simbench.dynamics, the default)", lambda: dyn.inverse_dynamics(model, q, v, a)),
            single("jax RNEA after jit (jax arrays)", lambda: J.inverse_dynamics(qj, vj, aj, gj).block_until_ready()),
            single("jax RNEA, numpy API", lambda: ad.inverse_dynamics(model, q, v, a)),
            single("jax Lagrangian (M, Gamma, g by jacfwd)",
                   lambda: J.lagrangian_inverse_dynamics(qj, vj, aj, gj).block_until_ready())]),
        (f"inverse dynamics, vmap batch of {batch}", "pinocchio rnea loop", [
            Contender("pinocchio rnea loop", loop(pin.rnea), batch),
            Contender("jax RNEA, numpy API", lambda: ad.inverse_dynamics(model, Q, V, A), batch)]),
        ("inverse dynamics derivatives, single call", "pinocchio computeRNEADerivatives", [
            single("pinocchio computeRNEADerivatives", lambda: pin.computeRNEADerivatives(pm, pd, pq, pv, pa)),
            single("jax after jit (jax arrays)",
                   lambda: jax.block_until_ready(J.inverse_dynamics_derivatives(qj, vj, aj, gj)))]),
        (f"inverse dynamics derivatives, vmap batch of {batch}", "pinocchio computeRNEADerivatives loop", [
            Contender("pinocchio computeRNEADerivatives loop", loop(pin.computeRNEADerivatives), batch),
            Contender("jax, numpy API", lambda: ad.inverse_dynamics_derivatives(model, Q, V, A), batch)]),
        ("forward dynamics derivatives, single call", "pinocchio computeABADerivatives", [
            single("pinocchio computeABADerivatives", lambda: pin.computeABADerivatives(pm, pd, pq, pv, pa)),
            single("jax, numpy API", lambda: ad.forward_dynamics_derivatives(model, q, v, a))]),
        (f"forward dynamics derivatives, vmap batch of {batch}", "pinocchio computeABADerivatives loop", [
            Contender("pinocchio computeABADerivatives loop", loop(pin.computeABADerivatives), batch),
            Contender("jax, numpy API", lambda: ad.forward_dynamics_derivatives(model, Q, V, A), batch)]),
    ]
    row_notes = {}
    if robot == "mobile_manipulator":
        post = _post_automatic()
        groups[0][2].append(single("the post's automatic method (poses typed by hand, jacfwd)",
                                   lambda: post(qj, vj, aj).block_until_ready()))
        row_notes["the post's automatic method (poses typed by hand, jacfwd)"] = (
            f"the post quotes ~{POST_US['automatic (jax)']:.0f} us on its author's laptop")
        _, impls = symbolic.prepare(robot, model, model.dof, False, [] if notes is None else notes)
        if symbolic.LAMBDIFY in impls:
            lam = impls[symbolic.LAMBDIFY]
            groups[0][2].append(single("sympy lambdify (the post's symbolic method)",
                                       lambda: lam.inverse_dynamics(q, v, a)))
            row_notes["sympy lambdify (the post's symbolic method)"] = (
                f"the post quotes ~{POST_US['symbolic (sympy lambdify)']:.0f} us")
        row_notes["numba RNEA (simbench.dynamics, the default)"] = (
            f"the post's manual method: ~{POST_US['manual']:.0f} us on its author's laptop")
    rows: list[Row] = []
    for quantity, reference, contenders in groups:
        rows += emit(rows_from("autodiff", robot, quantity, interleaved(contenders, rounds), reference, row_notes),
                     on_rows)
    rows += emit([one_off("autodiff", robot, "jax compile, first call (once)", name, us / 1e6,
                     "one-off XLA compile" + ("" if cold else " (caches kept)")) for name, us in compiles.items()],
                 on_rows)
    return rows


def run(robots: Mapping[str, str] | Sequence[str] = tuple(ROBOTS), *, notes: list[str] | None = None,
        on_rows: RowsCallback | None = None, **settings: Any) -> list[Row]:
    """The suite's rows for ``robots`` (names of :data:`ROBOTS`, or name -> URDF); none (one logged line naming the ``autodiff`` extra)
    without jax, none (one line) without Pinocchio, the suite's references. ``settings`` go to :func:`robot_rows`."""
    notes = [] if notes is None else notes
    for module, line in (("jax", MISSING), ("pinocchio", NO_PINOCCHIO)):
        if importlib.util.find_spec(module) is None:   # the other suites' rows are kept
            log.warning(line)
            notes.append(line)
            return []
    import jax
    jax.config.update("jax_enable_x64", True)   # the bench's own choice: no line about it
    rows: list[Row] = []
    specs = dict(robots) if isinstance(robots, Mapping) else {r: ROBOTS.get(r, r) for r in robots}
    for robot, spec in specs.items():
        log.info("autodiff: %s", robot)
        rows += robot_rows(robot, spec, notes=notes, on_rows=on_rows, **settings)
    return rows


__all__ = ["run", "robot_rows", "ROBOTS", "POST_US", "MISSING", "NO_PINOCCHIO"]
