"""``simbench sweep check TARGET...``: the PyBullet cross-check (``simbench check``) over a list or
corpus of robots, one row per robot.

Rows: ``sample`` (the robot's index), ``target``, ``name``, ``verdict`` (PASS, EXPLAINED, FAIL,
SKIPPED), ``dof``, the errors against PyBullet ``tau_abs``, ``tau_rel``, ``M_abs``, ``M_rel``
(NaN when not compared), ``causes`` (the demonstrated causes, comma separated), ``reason`` and
``notes``. Each robot is checked on ``states`` random states drawn from ``seed``, exactly as
``simbench check TARGET --samples states --seed seed`` does.

The check itself is reached through :func:`check_row` and :func:`corpus` only (the adapter):
when the cross-check moves, the one import below changes.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import check as _check  # the adapter: the only line that names the check's module
from ..errors import SimbenchError, shown
from ..paths import resolve_urdf
from .jobs import Chunk, JobSpec, check_count, file_entry, scalar

DEFAULT_CHUNK = 1
CORPORA = ("pybullet_data",)


def check_row(target: str, states: int, seed: int, tol: float, pinocchio: bool,
              floating: bool = False) -> dict[str, Any]:
    """One robot's cross-check as a flat row (see the module docstring)."""
    try:
        r = _check.compare(target, samples=states, seed=seed, tol=tol, pinocchio=pinocchio, floating=floating)
    except Exception as exc:  # one broken robot must not stop the sweep (as check --corpus does)
        return {"target": str(target), "name": "", "verdict": "FAIL", "dof": 0, "tau_abs": math.nan,
                "tau_rel": math.nan, "M_abs": math.nan, "M_rel": math.nan, "causes": "",
                "reason": f"crashed: {type(exc).__name__}: {exc}", "notes": ""}
    e = r.errors
    nums = {k: (math.nan if e is None else float(getattr(e, k))) for k in ("tau_abs", "tau_rel", "M_abs", "M_rel")}
    return {"target": r.target, "name": r.name, "verdict": r.verdict, "dof": int(r.dof), **nums,
            "causes": ", ".join(c.kind for c in r.causes), "reason": r.reason, "notes": "; ".join(r.notes)}


def corpus(name: str) -> list[str]:
    """Every distinct URDF of a corpus (those simbench cannot read too: they come out SKIPPED)."""
    targets, skipped = _check.corpus_targets(name)
    return sorted([t.label for t in targets] + [s.target for s in skipped])


_STRINGS = ("target", "name", "verdict", "causes", "reason", "notes")
_FLOATS = ("tau_abs", "tau_rel", "M_abs", "M_rel")


def prepare(targets: list[str], *, samples: Any = 50, seed: Any = 0, chunk_size: int | None = None,
            corpus_name: str | None = None, tol: float = 1e-8, pinocchio: bool = True, floating: bool = False,
            **unused: Any) -> JobSpec:
    """The spec of a check sweep over ``targets`` (and a corpus); ``samples``: states per robot;
    ``floating``: each URDF with a free-flyer root, as ``simbench check --floating``."""
    from .sampling import check_seed

    if unused:
        raise SimbenchError(f"sweep check does not take {', '.join(sorted(unused))}")
    todo = list(targets)
    if corpus_name is not None:
        if corpus_name not in CORPORA:
            raise SimbenchError(f"corpus {shown(corpus_name)}; expected one of {', '.join(CORPORA)}")
        todo += corpus(corpus_name)
    if not todo:
        raise SimbenchError("sweep check needs at least one TARGET (a URDF path or pybullet_data:NAME) or "
                            "--corpus pybullet_data")
    states = check_count(50 if samples is None else samples, "samples (states per robot)")
    from ..check.inputs import check_samples

    check_samples(states)   # the check's own bound: its states are held in memory
    try:
        tol_v = float(tol)
    except (TypeError, ValueError, OverflowError):
        tol_v = math.nan
    if not (math.isfinite(tol_v) and tol_v > 0):
        raise SimbenchError(f"tol = {shown(tol)}; expected a positive number")
    files = tuple(file_entry(f"urdf:{i}", resolve_urdf(t)) for i, t in enumerate(todo))
    todo = [name for _, name, _ in files]  # portable names: found the same way on every node
    arrays = (scalar("sample", "int64"), *(scalar(k, "string") for k in _STRINGS[:3]), scalar("dof", "int64"),
              *(scalar(k, "float64") for k in _FLOATS), *(scalar(k, "string") for k in _STRINGS[3:]))
    options = (("targets", todo), ("states", states), ("tol", tol_v), ("pinocchio", bool(pinocchio)),
               ("corpus", corpus_name))
    if floating:  # only then: a welded sweep's folder of an earlier version still resumes
        options += (("floating", True),)
    chunk = check_count(DEFAULT_CHUNK if chunk_size is None else chunk_size, "chunk_size")
    return JobSpec("check", len(todo), chunk, check_seed(seed), arrays, files, options)


class CheckRunner:
    def __init__(self, spec: JobSpec):
        self.spec = spec

    def run(self, chunk: Chunk) -> dict[str, Any]:
        o = dict(self.spec.options)
        rows = [check_row(t, o["states"], self.spec.seed, o["tol"], o["pinocchio"], o.get("floating", False))
                for t in o["targets"][chunk.start:chunk.stop]]
        out: dict[str, Any] = {"sample": np.arange(chunk.start, chunk.stop)}
        for k in _STRINGS:
            out[k] = [r[k] for r in rows]
        out["dof"] = np.array([r["dof"] for r in rows], dtype=np.int64)
        for k in _FLOATS:
            out[k] = np.array([r[k] for r in rows], dtype=float)
        return out

    def close(self) -> None:
        pass


def summarize(result: dict[str, Any]) -> dict[str, int]:
    return {v: result["verdict"].count(v) for v in ("PASS", "EXPLAINED", "FAIL", "SKIPPED")}


def open_runner(spec: JobSpec) -> CheckRunner:
    return CheckRunner(spec)


__all__ = ["prepare", "open_runner", "check_row", "corpus", "CORPORA", "DEFAULT_CHUNK"]
