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

``floating=True`` (``--floating``, as ``simbench check --floating``) attaches the root link to
the world by a free flyer (``RobotModel.from_urdf(path, floating_base=True)``; the layout of
docs/dynamics.md, Pinocchio's): columns are named by ``RobotModel.q_labels`` / ``v_labels``,
so ``q`` starts with ``q(base_x)`` ... ``q(base_qw)`` (base position in the world, uniform in
[-1, 1] m; orientation a unit quaternion uniform on SO(3)), and ``qd``, ``qdd``, ``tau``,
``qdd_free`` with ``base_vx`` ... ``base_wz`` (the base twist, its rate and the wrench on the
base, linear first, in the base frame; the twist and its rate uniform in [-qd_max, qd_max] and
[-qdd_max, qdd_max] as the joints), ``M`` is (6 + n, 6 + n). ``qdd_free`` is then the free
fall of the whole unactuated robot. Sampled columns per row: base position (3), ``u1, u2, u3``
of the orientation (:func:`~simbench.sweep.sampling.unit_quaternions`), joints, then qd and
qdd (6 + n each). Without ``floating``, a robot whose root looks free (``simbench info``'s
``free_root``: legs, a mobile base) is swept welded to the world, with one warning saying so.
"""
from __future__ import annotations

import logging
import math
from typing import Any

import numpy as np

from ..errors import SimbenchError, shown, shown_path
from ..paths import resolve_urdf
from .jobs import Array, Chunk, JobSpec, check_count, file_entry, labelled, scalar
from .sampling import check_seed, uniform, unit_quaternions

logger = logging.getLogger(__name__)

DEFAULT_CHUNK = 10_000
#: the local engine's default processes: one. The batched kernels already run threads on every
#: core, so a second process competes for them (2-core machine, 30,000 panda states, medians of
#: 3: see the commit that set it)
LOCAL_WORKERS = 1
#: rows of the warm-up batch: more than ``SERIAL_ROWS`` (32), so the batched (span) kernels the
#: chunks use compile, fewer than two threads' worth (``MIN_ROWS_PER_THREAD``, 512), so no thread
#: starts in the driver before it forks its workers
WARM_ROWS = 64
BASE_POSITION = 1.0   # the base position is uniform in [-1, 1] m per axis (random_configuration's)


def state_bounds(model: Any, qd_max: float, qdd_max: float) -> tuple[list[float], list[float]]:
    """Bounds of the sampled columns [q, qd, qdd] (the rule of ``RobotModel.random_configuration``);
    a floating base's q part is its position ([-1, 1] m) and ``u1, u2, u3`` in [0, 1) for its
    orientation (see the module docstring)."""
    from ..model import PRISMATIC
    from ..model_checks import sampled_limits

    k = 7 if model.floating_base else 0
    lo, hi = np.array(model.lower[k:], float), np.array(model.upper[k:], float)
    codes = np.asarray(model.joint_type_code)[np.asarray(model.dof_joint)[k:]]
    bad = ~(sampled_limits(lo) & sampled_limits(hi) & (lo <= hi))
    span = np.where(codes == PRISMATIC, 1.0, math.pi)
    lo[bad], hi[bad] = -span[bad], span[bad]
    base_lo, base_hi = ([-BASE_POSITION] * 3 + [0.0] * 3, [BASE_POSITION] * 3 + [1.0] * 3) if k else ([], [])
    n = model.nv
    return ([*base_lo, *lo, *[-qd_max] * n, *[-qdd_max] * n], [*base_hi, *hi, *[qd_max] * n, *[qdd_max] * n])


def states(model: Any, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(q, qd, qdd) from rows of sampled columns (see :func:`state_bounds`): a floating base's
    orientation from its ``u1, u2, u3`` (uniform on SO(3)), normalised as q needs."""
    nv = model.nv
    raw, qd, qdd = x[:, :x.shape[1] - 2 * nv], x[:, -2 * nv:-nv], x[:, -nv:]
    if model.floating_base:
        from ..dynamics.configuration import normalize

        raw = normalize(model, np.concatenate([raw[:, :3], unit_quaternions(raw[:, 3:6]), raw[:, 6:]], axis=1))
    return tuple(np.ascontiguousarray(a) for a in (raw, qd, qdd))  # type: ignore[return-value]


def _welded_note(model: Any, target: str) -> tuple[str, ...]:
    """The warning line when a free-looking root is welded to the world (``free_root``), held in
    the spec's notes: it is said once the output folder is open, so a refused run stays one line."""
    issue = next((i for i in model.issues if i.kind == "free_root"), None)
    if issue is None:
        return ()
    data = issue.data or {}
    return (f"{target}: the base (root link {data.get('link')!r}: {len(data.get('limbs', ()))} limbs, "
            f"{data.get('mass', math.nan):.4g} kg) is welded to the world; --floating (floating=True) simulates it "
            f"free, with the base pose, twist and wrench as columns",)


def _positive(value: Any, what: str) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError, OverflowError):
        v = math.nan
    if not (math.isfinite(v) and v >= 0):
        raise SimbenchError(f"{what} = {shown(value)}; expected a finite number >= 0")
    return v


def prepare(targets: list[str], *, samples: Any = None, seed: Any = 0, chunk_size: int | None = None,
            qd_max: float = 2.0, qdd_max: float = 5.0, floating: bool = False, **unused: Any) -> JobSpec:
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
    if not isinstance(floating, (bool, np.bool_)):
        raise SimbenchError(f"floating = {shown(floating)}; expected True (a free-flyer base) or False (welded)")
    model = RobotModel.from_urdf(path, floating_base=bool(floating))
    if model.dof == 0:
        raise SimbenchError(f"{targets[0]}: the robot has no movable joints; expected a robot to sweep "
                            "(or --floating for a free body)")
    if len(model.joint_names) + (6 if floating else 0) != model.dof:
        raise SimbenchError(f"{targets[0]}: the robot has spherical joints; sweep dynamics samples revolute and "
                            "prismatic joints only")
    joints, qs, vs = list(model.joint_names), list(model.q_labels), list(model.v_labels)
    low, high = state_bounds(model, _positive(qd_max, "qd_max"), _positive(qdd_max, "qdd_max"))
    m = Array("M", "float64", (len(vs), len(vs)), tuple(f"M({a}, {b})" for a in vs for b in vs))
    arrays = (scalar("sample", "int64"), labelled("q", "float64", qs), labelled("qd", "float64", vs),
              labelled("qdd", "float64", vs), labelled("tau", "float64", vs),
              m, labelled("qdd_free", "float64", vs))
    options = (("floating", bool(floating)), ("joints", joints), ("low", low), ("high", high),
               ("qd_max", float(qd_max)), ("qdd_max", float(qdd_max)))
    chunk = check_count(DEFAULT_CHUNK if chunk_size is None else chunk_size, "chunk_size")
    return JobSpec("dynamics", n, chunk, seed_v, arrays, (file_entry("urdf", path),), options,
                   notes=() if floating else _welded_note(model, str(targets[0])))


class DynamicsRunner:
    """The robot model, loaded once per process."""

    def __init__(self, spec: JobSpec):
        from ..model import RobotModel

        self.spec = spec
        self.model = RobotModel.from_urdf(spec.path("urdf"), floating_base=bool(spec.option("floating", False)))
        if list(self.model.joint_names) != spec.option("joints"):
            raise SimbenchError("the robot's joints differ in this worker from the driver's")

    def run(self, chunk: Chunk) -> dict[str, Any]:
        from ..dynamics import forward_dynamics, inverse_dynamics, mass_matrix

        x = uniform(self.spec.seed, chunk.start, chunk.stop, self.spec.option("low"), self.spec.option("high"))
        model = self.model
        q, qd, qdd = states(model, x)
        return {"sample": np.arange(chunk.start, chunk.stop), "q": q, "qd": qd, "qdd": qdd,
                "tau": inverse_dynamics(model, q, qd, qdd), "M": mass_matrix(model, q),
                "qdd_free": forward_dynamics(model, q, qd, np.zeros_like(qd))}

    def close(self) -> None:
        pass


def open_runner(spec: JobSpec) -> DynamicsRunner:
    return DynamicsRunner(spec)


def warm_up(spec: JobSpec) -> None:
    """Compile (or load from numba's disk cache) the kernels the chunks will use, in this process:
    the rows of the first and the last chunk, cut to :data:`WARM_ROWS`, through the runner
    (results dropped). A batch of up to 32 rows takes the serial kernels, a larger one the batched
    ones: both sizes where the chunks have both."""
    from ..dynamics.inputs import SERIAL_ROWS

    chunks = spec.chunks()
    sizes = {min(c.rows, WARM_ROWS) for c in (chunks[0], chunks[-1])}
    sizes = {min(s for s in sizes if s <= SERIAL_ROWS), max(sizes)} if min(sizes) <= SERIAL_ROWS else {max(sizes)}
    runner = DynamicsRunner(spec)
    try:
        for rows in sorted(sizes):
            runner.run(Chunk(-1, 0, rows))
    finally:
        runner.close()


__all__ = ["prepare", "open_runner", "warm_up", "DynamicsRunner", "state_bounds", "states", "DEFAULT_CHUNK",
           "LOCAL_WORKERS"]
