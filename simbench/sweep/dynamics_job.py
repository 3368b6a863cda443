"""``simbench sweep dynamics URDF``: random states -> inverse dynamics, mass matrix and forward
dynamics of a robot (simbench's own dynamics, :mod:`simbench.dynamics`).

Per row: the state ``q(joint)`` (uniform within the joint limits; joints without limits in
[-pi, pi] rad or [-1, 1] m, as :meth:`RobotModel.random_configuration`), ``qd(joint)`` uniform
in [-qd_max, qd_max] and ``qdd(joint)`` in [-qdd_max, qdd_max] (defaults 2 rad/s and
5 rad/s^2, as ``simbench check`` samples); the results

* ``tau(joint)`` = M(q) qdd + C(q, qd) qd + g(q): inverse dynamics (RNEA);
* ``M(joint_i, joint_j)``: the joint-space mass matrix (CRBA), every entry;
* ``qdd_free(joint)`` = -M(q)^-1 (C(q, qd) qd + g(q)): forward dynamics with zero torque (the
  acceleration of the unactuated robot in that state).

Featherstone, *Rigid Body Dynamics Algorithms*, chapters 5-6; gravity is the model's
(``simbench.model.GRAVITY`` in the root frame). Joints in ``RobotModel.joint_names`` order.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import SimbenchError, shown, shown_path
from ..paths import resolve_urdf
from .jobs import Array, Chunk, JobSpec, check_count, file_entry, labelled, scalar
from .sampling import check_seed, uniform

DEFAULT_CHUNK = 10_000


def state_bounds(model: Any, qd_max: float, qdd_max: float) -> tuple[list[float], list[float]]:
    """Bounds of the sampled columns [q, qd, qdd] (the rule of ``RobotModel.random_configuration``)."""
    from ..model import PRISMATIC

    lo, hi = np.array(model.lower, float), np.array(model.upper, float)
    codes = np.asarray(model.joint_type_code)[model.dof_joint]
    bad = ~(np.isfinite(lo) & np.isfinite(hi) & (lo <= hi))
    span = np.where(codes == PRISMATIC, 1.0, math.pi)
    lo[bad], hi[bad] = -span[bad], span[bad]
    n = model.dof
    return ([*lo, *[-qd_max] * n, *[-qdd_max] * n], [*hi, *[qd_max] * n, *[qdd_max] * n])


def _positive(value: Any, what: str) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError, OverflowError):
        v = math.nan
    if not (math.isfinite(v) and v >= 0):
        raise SimbenchError(f"{what} = {shown(value)}; expected a finite number >= 0")
    return v


def prepare(targets: list[str], *, samples: Any = None, seed: Any = 0, chunk_size: int | None = None,
            qd_max: float = 2.0, qdd_max: float = 5.0, **unused: Any) -> JobSpec:
    """The spec of a dynamics sweep over the robot ``targets[0]`` (see the module docstring)."""
    from ..model import RobotModel

    if len(targets) != 1:
        raise SimbenchError(f"sweep dynamics takes one URDF (a path, pybullet_data:NAME or simbench:NAME); "
                            f"got {len(targets)}")
    if unused:
        raise SimbenchError(f"sweep dynamics does not take {', '.join(sorted(unused))}")
    if samples is None:
        raise SimbenchError("samples is missing; expected the number of states (--samples N)")
    n = check_count(samples, "samples")
    seed_v = check_seed(seed)
    path = resolve_urdf(targets[0])
    if path.suffix.lower() == ".toml":   # else read as XML: "malformed XML"
        raise SimbenchError(f"sweep dynamics takes a URDF; {shown_path(targets[0])} is a scene "
                            f"(sweep collision takes a scene)")
    model = RobotModel.from_urdf(path)
    if model.dof == 0:
        raise SimbenchError(f"{targets[0]}: the robot has no movable joints; expected a robot to sweep")
    if len(model.joint_names) != model.dof:
        raise SimbenchError(f"{targets[0]}: the robot has spherical joints; sweep dynamics samples revolute and "
                            "prismatic joints only")
    joints = list(model.joint_names)
    low, high = state_bounds(model, _positive(qd_max, "qd_max"), _positive(qdd_max, "qdd_max"))
    m = Array("M", "float64", (len(joints), len(joints)), tuple(f"M({a}, {b})" for a in joints for b in joints))
    arrays = (scalar("sample", "int64"), labelled("q", "float64", joints), labelled("qd", "float64", joints),
              labelled("qdd", "float64", joints), labelled("tau", "float64", joints),
              m, labelled("qdd_free", "float64", joints))
    options = (("joints", joints), ("low", low), ("high", high), ("qd_max", float(qd_max)), ("qdd_max", float(qdd_max)))
    chunk = check_count(DEFAULT_CHUNK if chunk_size is None else chunk_size, "chunk_size")
    return JobSpec("dynamics", n, chunk, seed_v, arrays, (file_entry("urdf", path),), options)


class DynamicsRunner:
    """The robot model, loaded once per process."""

    def __init__(self, spec: JobSpec):
        from ..model import RobotModel

        self.spec = spec
        self.model = RobotModel.from_urdf(spec.path("urdf"))
        if list(self.model.joint_names) != spec.option("joints"):
            raise SimbenchError("the robot's joints differ in this worker from the driver's")

    def run(self, chunk: Chunk) -> dict[str, Any]:
        from ..dynamics import forward_dynamics, inverse_dynamics, mass_matrix

        x = uniform(self.spec.seed, chunk.start, chunk.stop, self.spec.option("low"), self.spec.option("high"))
        q, qd, qdd = np.split(x, 3, axis=1)
        q, qd, qdd = (np.ascontiguousarray(a) for a in (q, qd, qdd))
        model = self.model
        return {"sample": np.arange(chunk.start, chunk.stop), "q": q, "qd": qd, "qdd": qdd,
                "tau": inverse_dynamics(model, q, qd, qdd), "M": mass_matrix(model, q),
                "qdd_free": forward_dynamics(model, q, qd, np.zeros_like(q))}

    def close(self) -> None:
        pass


def open_runner(spec: JobSpec) -> DynamicsRunner:
    return DynamicsRunner(spec)


__all__ = ["prepare", "open_runner", "DynamicsRunner", "state_bounds", "DEFAULT_CHUNK"]
