"""The sympy contenders of the dynamics suite: the closed-form model of
:mod:`simbench.dynamics.symbolic` derived once, lambdified, and compiled to C (ctypes), as in
the symbolic method of Adam Heins, "Lagrangian dynamics of a planar mobile manipulator with
manual, automatic and symbolic differentiation". Derivation, lambdify and compile times are
one-off rows; :func:`prepare` hands the callables to :mod:`simbench.bench.dynamics`, which
times them next to the others.
"""
from __future__ import annotations

import logging
import time
from typing import Any

from ..errors import SimbenchError
from .schema import Row, one_off

log = logging.getLogger(__name__)

LAMBDIFY = "sympy lambdify"


def prepare(robot: str, model: Any, max_dof: int, want_c: bool,
            notes: list[str]) -> tuple[list[Row], dict[str, Any]]:
    """(one-off rows, contender name -> object with ``inverse_dynamics(q, qd, qdd)`` and
    ``mass_matrix(q)``); nothing when sympy is missing (the ``symbolic`` extra) or the robot
    does not derive (a tree, a floating base, more than ``max_dof`` joints)."""
    try:
        from ..dynamics import symbolic
    except ImportError as exc:
        notes.append(f"{robot}: no sympy rows ({exc})")
        return [], {}
    t0 = time.perf_counter()
    try:
        eom = symbolic.derive(model, max_dof=max_dof)
    except SimbenchError as exc:
        notes.append(f"{robot}: no sympy rows: {str(exc).split('; ')[0]}")
        return [], {}
    rows = [one_off("dynamics", robot, "symbolic model (once)", "sympy derive (M, C, g)",
                    time.perf_counter() - t0)]
    t0 = time.perf_counter()
    impls: dict[str, Any] = {LAMBDIFY: eom.lambdify()}
    rows.append(one_off("dynamics", robot, "symbolic model (once)", "sympy lambdify (cse)",
                        time.perf_counter() - t0))
    if want_c:
        opt = "-O2" if model.dof <= 4 else "-O0"  # gcc -O2 needs ~40 s on a 7-DOF arm's code
        t0 = time.perf_counter()
        try:
            compiled = eom.compile(opt=opt)
        except SimbenchError as exc:
            notes.append(f"{robot}: generated C not timed ({str(exc).splitlines()[0]})")
        else:
            name = f"generated C {opt} (ctypes)"
            impls[name] = compiled
            rows.append(one_off("dynamics", robot, "symbolic model (once)", f"C codegen + cc {opt}",
                                time.perf_counter() - t0))
    return rows, impls


__all__ = ["prepare", "LAMBDIFY"]
