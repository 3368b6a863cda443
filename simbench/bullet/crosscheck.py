"""``simbench check``: our inverse dynamics and mass matrix against PyBullet's
``calculateInverseDynamics`` / ``calculateMassMatrix`` (and Pinocchio when installed), with
every disagreement explained by a demonstration.

For each robot: load the URDF into a fresh DIRECT server (``URDF_USE_INERTIA_FROM_FILE``,
gravity set, fixed base), draw ``samples`` states within the joint limits, and compare
``tau`` and ``M`` joint by joint (joints matched by name). Errors are measured as
``max |ours - pybullet|`` (absolute) and that divided by ``max |pybullet|`` (relative); a robot
passes when ``abs <= tol * max(1, max |pybullet|)`` for both ``tau`` and ``M``.

When they differ, the model's issues and the load options point at known ways in which PyBullet
alters a model on import (see :data:`CAUSES`). Each suspected change is applied to a copy of our
model ("the robot as PyBullet sees it") and the comparison is rerun: if the copy matches, the
verdict is ``EXPLAINED`` and every cause that was needed is listed with the error before and
after it; otherwise ``FAIL`` with the worst joint and state, printed so it can be reproduced.
"""
from __future__ import annotations

import argparse
import contextlib
import hashlib
import importlib
import json
import math
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .._quiet import import_pybullet
from ..errors import SimbenchError
from ..model import GRAVITY, SPHERICAL, RobotModel
from ..paths import PYBULLET_DATA_PREFIX, pybullet_data_dir, resolve_urdf

p = import_pybullet()

PASS, EXPLAINED, FAIL, SKIPPED = "PASS", "EXPLAINED", "FAIL", "SKIPPED"

#: The ways PyBullet alters a model on import that ``check`` can demonstrate.
CAUSES = {
    "triangle_inequality_zeroed": "link inertia breaks the triangle inequality: PyBullet zeroes its "
                                  "rotational inertia (keeps mass and COM)",
    "missing_inertial_default": "link without <inertial>: PyBullet gives it 1 kg, unit inertia and an "
                                "identity inertial frame",
    "root_inertial_gravity_tilt": "root <inertial> has a rotation: PyBullet treats the root's inertial "
                                  "frame as world-aligned, so inverse dynamics sees gravity R_inertial @ g "
                                  "in the root link frame",
    "base_orientation_ignored": "fixed base loaded with a base orientation: calculateInverseDynamics "
                                "treats the base as upright (gravity not rotated)",
    "inertia_from_collision_shapes": "loaded without URDF_USE_INERTIA_FROM_FILE: PyBullet recomputes link "
                                     "inertia from the collision shapes (rebuilt from getDynamicsInfo)",
}


# ---------------------------------------------------------------------- report objects
@dataclass
class Errors:
    """Max abs / relative errors of ``tau`` and ``M`` (relative to the largest PyBullet value)."""

    tau_abs: float
    tau_rel: float
    M_abs: float
    M_rel: float
    tau_scale: float = 1.0
    M_scale: float = 1.0

    def within(self, tol: float) -> bool:
        return (self.tau_abs <= tol * max(1.0, self.tau_scale)
                and self.M_abs <= tol * max(1.0, self.M_scale))

    def brief(self) -> str:
        return f"tau {self.tau_abs:.2e} ({self.tau_rel:.1e} rel), M {self.M_abs:.2e} ({self.M_rel:.1e} rel)"

    def as_dict(self) -> dict[str, float]:
        return {k: _num(v) for k, v in asdict(self).items()}


@dataclass
class Cause:
    """A demonstrated reason for a disagreement: ``before`` is the error with every other
    suspected change applied but this one, ``after`` with all of them applied."""

    kind: str
    links: list[str]
    message: str
    before: Errors
    after: Errors

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "links": list(self.links), "message": self.message,
                "before": self.before.as_dict(), "after": self.after.as_dict()}


@dataclass
class RobotResult:
    """The outcome for one robot. ``errors`` compares the dynamics under test (on the model
    as written in the file) with PyBullet."""

    target: str
    name: str = ""
    path: str = ""
    verdict: str = SKIPPED
    reason: str = ""
    dof: int = 0
    samples: int = 0
    errors: Errors | None = None
    causes: list[Cause] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    worst: dict[str, Any] | None = None
    pinocchio: dict[str, Any] | None = None
    seconds: float = 0.0

    def line(self) -> str:
        err = self.errors.brief() if self.errors else ""
        why = self.reason or ", ".join(f"{c.kind} [{', '.join(c.links)}]" for c in self.causes)
        return f"{self.verdict:<9s} {self.target:<48s} {err}" + (f"  {why}" if why else "")

    def as_dict(self) -> dict[str, Any]:
        return {"target": self.target, "name": self.name, "path": self.path, "verdict": self.verdict,
                "reason": self.reason, "dof": self.dof, "samples": self.samples,
                "errors": self.errors.as_dict() if self.errors else None,
                "causes": [c.as_dict() for c in self.causes], "notes": list(self.notes),
                "worst": self.worst, "pinocchio": self.pinocchio, "seconds": round(self.seconds, 4)}


@dataclass
class Report:
    """Results of a check over one or more robots."""

    results: list[RobotResult]
    settings: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0

    def counts(self) -> dict[str, int]:
        out = {v: 0 for v in (PASS, EXPLAINED, FAIL, SKIPPED)}
        for r in self.results:
            out[r.verdict] += 1
        return out

    def exit_code(self, strict: bool = False) -> int:
        """0 when nothing failed (and, with ``strict``, nothing was merely explained), else 1."""
        bad = {FAIL, EXPLAINED} if strict else {FAIL}
        return 1 if any(r.verdict in bad for r in self.results) else 0

    def __getitem__(self, target: str) -> RobotResult:
        for r in self.results:
            if r.target == target or r.path == target or r.name == target:
                return r
        raise KeyError(target)

    def text(self) -> str:
        lines = [r.line() for r in self.results]
        c = self.counts()
        lines.append(f"{len(self.results)} robots: " + ", ".join(f"{n} {k}" for k, n in c.items())
                     + f" ({self.seconds:.1f} s)")
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return {"version": 1, "settings": dict(self.settings), "summary": {**self.counts(),
                "exit_code": self.exit_code(bool(self.settings.get("strict"))),
                "seconds": round(self.seconds, 3)},
                "robots": [r.as_dict() for r in self.results]}

    def to_markdown(self) -> str:
        c = self.counts()
        rows = ["| robot | verdict | dof | tau abs | tau rel | M abs | M rel | cause |",
                "|---|---|---:|---:|---:|---:|---:|---|"]
        for r in self.results:
            e = r.errors
            nums = ([f"{e.tau_abs:.2e}", f"{e.tau_rel:.1e}", f"{e.M_abs:.2e}", f"{e.M_rel:.1e}"]
                    if e else ["", "", "", ""])
            why = r.reason or "; ".join(
                f"{x.kind} ({', '.join(x.links)}): {x.before.tau_abs:.2e} -> {x.after.tau_abs:.2e}"
                for x in r.causes)
            rows.append("| " + " | ".join([f"`{r.target}`", f"**{r.verdict}**", str(r.dof), *nums,
                                           why.replace("|", "\\|")]) + " |")
        head = (f"### simbench check: {c[PASS]} PASS, {c[EXPLAINED]} EXPLAINED, {c[FAIL]} FAIL, "
                f"{c[SKIPPED]} SKIPPED (tol {self.settings.get('tol')}, "
                f"{self.settings.get('samples')} samples)\n\n")
        return head + "\n".join(rows) + "\n"


def _num(x: float) -> float | None:
    x = float(x)
    return x if math.isfinite(x) else None


# ---------------------------------------------------------------------- PyBullet side
@contextlib.contextmanager
def captured_output() -> Iterator[list[str]]:
    """Capture C-level stdout/stderr (PyBullet's warnings) into the yielded list's one item."""
    box: list[str] = []
    try:
        sys.stdout.flush()
        sys.stderr.flush()
        saved = (os.dup(1), os.dup(2))
    except (OSError, ValueError):
        yield box
        return
    with tempfile.TemporaryFile(mode="w+b") as tmp:
        try:
            os.dup2(tmp.fileno(), 1)
            os.dup2(tmp.fileno(), 2)
            yield box
        finally:
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
            tmp.seek(0)
            box.append(tmp.read().decode("utf-8", errors="replace"))


class BulletRobot:
    """A robot in its own fresh DIRECT server (a URDF path is cached per connection, so every
    robot gets a new client). Use as a context manager or call :meth:`close`."""

    def __init__(self, path: str | os.PathLike, *, base_orientation: Sequence[float] | None = None,
                 inertia_from_file: bool = True, gravity: Sequence[float] = GRAVITY):
        self.client = p.connect(p.DIRECT)
        self.log = ""
        try:
            p.setGravity(*gravity, physicsClientId=self.client)
            flags = p.URDF_USE_INERTIA_FROM_FILE if inertia_from_file else 0
            orn = list(base_orientation) if base_orientation is not None else [0, 0, 0, 1]
            with captured_output() as out:
                try:
                    self.body = p.loadURDF(str(path), [0, 0, 0], orn, useFixedBase=True, flags=flags,
                                           physicsClientId=self.client)
                except p.error as exc:
                    raise SimbenchError(f"PyBullet cannot load {str(path)!r}: {exc}") from None
            self.log = out[0] if out else ""
            n = p.getNumJoints(self.body, physicsClientId=self.client)
            self.joint_info = [p.getJointInfo(self.body, i, physicsClientId=self.client) for i in range(n)]
            self.joint_names = [ji[1].decode() for ji in self.joint_info if ji[2] != p.JOINT_FIXED]
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        if self.client >= 0 and p.isConnected(physicsClientId=self.client):
            p.disconnect(physicsClientId=self.client)
        self.client = -1

    def __enter__(self) -> "BulletRobot":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def inverse_dynamics(self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> np.ndarray:
        """``p.calculateInverseDynamics`` per row of (N, dof) arrays."""
        return np.array([p.calculateInverseDynamics(self.body, a.tolist(), b.tolist(), c.tolist(),
                                                    physicsClientId=self.client)
                         for a, b, c in zip(q, qd, qdd)], dtype=float).reshape(q.shape)

    def mass_matrix(self, q: np.ndarray) -> np.ndarray:
        return np.array([p.calculateMassMatrix(self.body, a.tolist(), physicsClientId=self.client)
                         for a in q], dtype=float).reshape(q.shape + q.shape[-1:])

    def link_inertials(self) -> list[tuple[float, np.ndarray, np.ndarray]]:
        """(mass, COM in the link frame, COM inertia in link axes) of PyBullet links 0..n-1,
        from ``getDynamicsInfo``."""
        out = []
        for i in range(len(self.joint_info)):
            info = p.getDynamicsInfo(self.body, i, physicsClientId=self.client)
            R = np.array(p.getMatrixFromQuaternion(info[4])).reshape(3, 3)
            out.append((float(info[0]), np.array(info[3], float), R @ np.diag(info[2]) @ R.T))
        return out


# ---------------------------------------------------------------------- dynamics under test
Dynamics = Callable[..., np.ndarray]


class ModelDynamics:
    """Inverse dynamics and mass matrix of a :class:`RobotModel` from a module with
    ``inverse_dynamics(model, q, qd, qdd, *, gravity)`` and ``mass_matrix(model, q)``."""

    def __init__(self, module: Any, label: str):
        self.module, self.label = module, label

    def tau(self, model: RobotModel, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray,
            gravity: Sequence[float]) -> np.ndarray:
        return np.asarray(self.module.inverse_dynamics(model, q, qd, qdd, gravity=tuple(gravity)), float)

    def M(self, model: RobotModel, q: np.ndarray) -> np.ndarray:
        return np.asarray(self.module.mass_matrix(model, q), float)


class PinocchioAdapter:
    """Pinocchio as ``inverse_dynamics(model, q, qd, qdd, *, gravity)`` / ``mass_matrix(model, q)``
    for a :class:`RobotModel` (built from the model's arrays, so modified copies work)."""

    def __init__(self) -> None:
        import pinocchio

        self.pin = pinocchio
        self._built: dict[int, Any] = {}

    def build(self, model: RobotModel) -> Any:
        key = id(model)
        if key in self._built and self._built[key][0] is model:
            return self._built[key][1:]
        pin = self.pin
        from ..model import FIXED, PRISMATIC, REVOLUTE

        pm = pin.Model()
        joint_of, place = {0: 0}, {0: pin.SE3.Identity()}
        for k in range(1, model.nlinks):
            j, par = k - 1, int(model.link_parent[k])
            T = np.array(model.joint_origin[j])
            M = place[par] * pin.SE3(T[:3, :3].copy(), T[:3, 3].copy())
            code = int(model.joint_type_code[j])
            if code == FIXED:
                joint_of[k], place[k] = joint_of[par], M
            elif code in (REVOLUTE, PRISMATIC):
                axis = np.array(model.joint_axis[j])
                jm = (pin.JointModelRevoluteUnaligned if code == REVOLUTE else pin.JointModelPrismaticUnaligned)(axis)
                joint_of[k] = pm.addJoint(joint_of[par], jm, M, model.joint_all_names[j])
                place[k] = pin.SE3.Identity()
            else:
                raise SimbenchError(f"the Pinocchio adapter does not handle {model.joint_type[j]} joint "
                                    f"{model.joint_all_names[j]!r}")
            if joint_of[k] != 0:
                inertia = pin.Inertia(float(model.link_mass[k]), np.array(model.link_com[k]),
                                      np.array(model.link_inertia[k]))
                pm.appendBodyToJoint(joint_of[k], inertia, place[k])
        order = [pm.getJointId(n) for n in model.joint_names]
        idx = np.array([pm.joints[i].idx_v for i in order])
        self._built = {key: (model, pm, pm.createData(), idx)}
        return pm, pm.createData(), idx

    def inverse_dynamics(self, model: RobotModel, q: Any, qd: Any, qdd: Any, *,
                         gravity: Sequence[float] = GRAVITY) -> np.ndarray:
        pm, data, idx = self.build(model)
        pm.gravity = self.pin.Motion(np.r_[np.asarray(gravity, float), 0.0, 0.0, 0.0])
        q, qd, qdd = (np.atleast_2d(np.asarray(a, float)) for a in (q, qd, qdd))
        out = np.empty_like(q)
        for i in range(len(q)):
            x = [np.empty(model.dof) for _ in range(3)]
            for src, dst in zip((q[i], qd[i], qdd[i]), x):
                dst[idx] = src
            out[i] = self.pin.rnea(pm, data, *x)[idx]
        return out

    def mass_matrix(self, model: RobotModel, q: Any) -> np.ndarray:
        pm, data, idx = self.build(model)
        q = np.atleast_2d(np.asarray(q, float))
        out = np.empty(q.shape + q.shape[-1:])
        for i in range(len(q)):
            x = np.empty(model.dof)
            x[idx] = q[i]
            M = self.pin.crba(pm, data, x)
            M = np.triu(M) + np.triu(M, 1).T
            out[i] = M[np.ix_(idx, idx)]
        return out


def default_dynamics() -> ModelDynamics:
    """``simbench.dynamics`` (the code under test); the Pinocchio adapter until it exists."""
    try:
        module = importlib.import_module("simbench.dynamics")
        if hasattr(module, "inverse_dynamics") and hasattr(module, "mass_matrix"):
            return ModelDynamics(module, "simbench.dynamics")
    except ImportError:
        pass
    return ModelDynamics(PinocchioAdapter(), "pinocchio-adapter (simbench.dynamics not available)")


class UserDynamics:
    """A user's ``tau = f(q, qd, qdd)`` (joint_names order) for one robot. ``M`` is derived from
    it column by column: ``M e_i = f(q, 0, e_i) - f(q, 0, 0)``."""

    def __init__(self, func: Callable[..., Any], label: str):
        self.func, self.label = func, label

    def _call(self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> np.ndarray:
        out = np.empty_like(q)
        for i in range(len(q)):
            tau = np.asarray(self.func(q[i].copy(), qd[i].copy(), qdd[i].copy()), float)
            if tau.size != q.shape[-1]:
                raise SimbenchError(f"{self.label} returned shape {tau.shape}; expected ({q.shape[-1]},) "
                                    f"torques in joint_names order")
            out[i] = tau.reshape(-1)
        return out

    def tau(self, model: RobotModel, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray,
            gravity: Sequence[float]) -> np.ndarray:
        return self._call(q, qd, qdd)

    def M(self, model: RobotModel, q: np.ndarray) -> np.ndarray:
        n, dof = q.shape
        zero = np.zeros_like(q)
        bias = self._call(q, zero, zero)
        out = np.empty((n, dof, dof))
        for i in range(dof):
            e = np.zeros_like(q)
            e[:, i] = 1.0
            out[:, :, i] = self._call(q, zero, e) - bias
        return out


def load_dynamics(spec: str | Callable[..., Any] | None) -> Any:
    """``None`` -> simbench.dynamics; ``"module:function"`` or a callable -> the user's
    ``tau = f(q, qd, qdd)``; an object with ``inverse_dynamics``/``mass_matrix`` -> used as a
    model-level module."""
    if spec is None:
        return default_dynamics()
    if isinstance(spec, (ModelDynamics, UserDynamics)):
        return spec
    if isinstance(spec, str):
        mod_name, _, func_name = spec.partition(":")
        if not mod_name or not func_name:
            raise SimbenchError(f"--dynamics {spec!r}: expected module:function, e.g. mypkg.dyn:tau")
        sys.path.insert(0, os.getcwd())
        try:
            module = importlib.import_module(mod_name)
        except ImportError as exc:
            raise SimbenchError(f"--dynamics {spec!r}: cannot import {mod_name!r}: {exc}") from None
        finally:
            sys.path.pop(0)
        func = getattr(module, func_name, None)
        if not callable(func):
            raise SimbenchError(f"--dynamics {spec!r}: module {mod_name!r} has no function {func_name!r}")
        return UserDynamics(func, spec)
    if hasattr(spec, "inverse_dynamics") and hasattr(spec, "mass_matrix"):
        return ModelDynamics(spec, getattr(spec, "__name__", type(spec).__name__))
    if callable(spec):
        return UserDynamics(spec, getattr(spec, "__name__", repr(spec)))
    raise SimbenchError(f"dynamics must be None, 'module:function' or a callable, got {spec!r}")


# ---------------------------------------------------------------------- sampling, errors
def sample_states(model: RobotModel, n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``n`` states: q uniform within the limits, qd in [-2, 2] rad/s, qdd in [-5, 5] rad/s^2."""
    rng = np.random.default_rng(seed)
    q = model.random_configuration(rng, n)
    qd = rng.uniform(-2.0, 2.0, (n, model.dof))
    qdd = rng.uniform(-5.0, 5.0, (n, model.dof))
    return q, qd, qdd


def measure(tau: np.ndarray, M: np.ndarray, tau_ref: np.ndarray, M_ref: np.ndarray) -> Errors:
    ts, ms = float(np.abs(tau_ref).max(initial=0.0)), float(np.abs(M_ref).max(initial=0.0))
    ta, ma = float(np.abs(tau - tau_ref).max(initial=0.0)), float(np.abs(M - M_ref).max(initial=0.0))
    if not (np.all(np.isfinite(tau)) and np.all(np.isfinite(M))):
        ta = ma = math.inf
    return Errors(ta, ta / ts if ts else ta, ma, ma / ms if ms else ma, ts, ms)


def _rotation(orientation: Sequence[float] | None) -> np.ndarray:
    if orientation is None:
        return np.eye(3)
    return np.array(p.getMatrixFromQuaternion(list(orientation))).reshape(3, 3)


def as_quaternion(orientation: Sequence[float] | None) -> tuple[float, ...] | None:
    """Roll-pitch-yaw (3) or a quaternion x y z w (4) -> a unit quaternion."""
    if orientation is None:
        return None
    o = [float(x) for x in orientation]
    if len(o) == 3:
        return tuple(p.getQuaternionFromEuler(o))
    if len(o) == 4 and all(map(math.isfinite, o)) and np.linalg.norm(o) > 0:
        return tuple(np.asarray(o) / np.linalg.norm(o))
    raise SimbenchError(f"base orientation {orientation!r}: expected roll pitch yaw (3 numbers) or a "
                        f"quaternion x y z w (4 numbers, not all zero)")


# ---------------------------------------------------------------------- suspected causes
@dataclass
class _Change:
    kind: str
    links: list[str]
    message: str
    apply: Callable[[RobotModel], RobotModel] | None = None  # model change
    gravity: Callable[[np.ndarray], np.ndarray] | None = None  # gravity change (root frame)


def from_dynamics_info(model: RobotModel, bullet: BulletRobot
                       ) -> tuple[Callable[[RobotModel], RobotModel], list[str]]:
    """A function that gives every moving link PyBullet's own mass, COM and inertia (from
    ``getDynamicsInfo``), and the links whose values differ from the file's (beyond 1e-12)."""
    inertials = bullet.link_inertials()
    changed = [model.link_names[k + 1] for k, (m, c, I) in enumerate(inertials)
               if not (np.isclose(m, model.link_mass[k + 1], rtol=1e-12, atol=1e-12)
                       and np.allclose(c, model.link_com[k + 1], rtol=1e-12, atol=1e-12)
                       and np.allclose(I, model.link_inertia[k + 1], rtol=1e-12, atol=1e-12))]

    def rebuild(mod: RobotModel) -> RobotModel:
        masses, coms, Is = np.array(mod.link_mass), np.array(mod.link_com), np.array(mod.link_inertia)
        for k, (m, c, I) in enumerate(inertials):
            masses[k + 1], coms[k + 1], Is[k + 1] = m, c, I
        return mod.replace(link_mass=masses, link_com=coms, link_inertia=Is)

    return rebuild, changed


def suspect(model: RobotModel, bullet: BulletRobot, *, base_rotation: np.ndarray,
            inertia_from_file: bool) -> list[_Change]:
    """The changes PyBullet may have made to this model, from its issues and the load options."""
    changes: list[_Change] = []
    if not inertia_from_file:
        rebuild, changed = from_dynamics_info(model, bullet)
        changes.append(_Change("inertia_from_collision_shapes", changed,
                               f"{len(changed)} link inertials differ from the file", apply=rebuild))
    else:
        tri = [i.data["link"] for i in model.issues if i.kind == "inertia_triangle_inequality"
               and model.link_index(i.data["link"]) > 0]
        if tri:
            def zero_rot(mod: RobotModel, links: list[str] = tri) -> RobotModel:
                for name in links:
                    mod = mod.with_link_inertial(name, inertia=np.zeros((3, 3)))
                return mod

            changes.append(_Change("triangle_inequality_zeroed", tri,
                                   "rotational inertia zeroed (PyBullet: 'Bad inertia tensor properties')",
                                   apply=zero_rot))
        missing = [i.data["link"] for i in model.issues if i.kind == "missing_inertial"
                   and i.data["link"] != "world" and model.link_index(i.data["link"]) > 0]
        if missing:
            def default(mod: RobotModel, links: list[str] = missing) -> RobotModel:
                for name in links:
                    mod = mod.with_link_inertial(name, mass=1.0, com=np.zeros(3), inertia=np.eye(3))
                return mod

            changes.append(_Change("missing_inertial_default", missing, "1 kg, unit inertia, COM at the "
                                   "link origin", apply=default))
    R_in = np.array(model.link_inertial_origin[0][:3, :3])
    if not np.allclose(R_in, np.eye(3), atol=1e-12):
        changes.append(_Change("root_inertial_gravity_tilt", [model.link_names[0]],
                               "gravity in the root frame is R_inertial @ g",
                               gravity=lambda g, R=R_in: R @ g))
    if not np.allclose(base_rotation, np.eye(3), atol=1e-12):
        # ours uses the true gravity R_base^T g; PyBullet uses g as if upright
        changes.append(_Change("base_orientation_ignored", [model.link_names[0]],
                               "gravity not rotated by the base orientation",
                               gravity=lambda g, R=base_rotation: R @ g))
    return changes


def _as_bullet_sees(model: RobotModel, gravity: np.ndarray, changes: Sequence[_Change]) -> tuple[RobotModel, np.ndarray]:
    g = np.array(gravity, float)
    # gravity changes: the base one first (undo R_base^T), then the root inertial tilt
    for ch in sorted(changes, key=lambda c: c.kind != "base_orientation_ignored"):
        if ch.apply is not None:
            model = ch.apply(model)
        if ch.gravity is not None:
            g = ch.gravity(g)
    return model, g


# ---------------------------------------------------------------------- Pinocchio (third voice)
def pinocchio_voice(path: str, model: RobotModel, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray,
                    gravity: np.ndarray) -> tuple[np.ndarray, np.ndarray] | str:
    """Pinocchio's own URDF parser + rnea/crba, joints matched by name; a reason string when
    Pinocchio is missing or cannot read the file."""
    try:
        import pinocchio as pin
    except ImportError:
        return "Pinocchio not installed"
    try:
        with captured_output():
            pm = pin.buildModelFromUrdf(path)
    except Exception as exc:  # pinocchio raises ValueError/RuntimeError on odd files
        return f"Pinocchio cannot read the URDF: {str(exc).strip()[:120]}"
    pm.gravity = pin.Motion(np.r_[gravity, 0.0, 0.0, 0.0])
    data = pm.createData()
    names = list(pm.names)
    slots = []
    for n in model.joint_names:
        if n not in names:
            return f"Pinocchio has no joint {n!r}"
        jm = pm.joints[names.index(n)]
        slots.append((jm.idx_q, jm.nq, jm.idx_v, jm.nv))
    if any(nv != 1 for *_, nv in slots) or pm.nv != model.dof:
        return "Pinocchio's joints differ (dof or joint types)"
    tau = np.empty_like(q)
    M = np.empty(q.shape + q.shape[-1:])
    iv = [s[2] for s in slots]
    for i in range(len(q)):
        x = pin.neutral(pm)
        v, a = np.zeros(pm.nv), np.zeros(pm.nv)
        for k, (iq, nq, jv, _) in enumerate(slots):
            if nq == 2:
                x[iq], x[iq + 1] = math.cos(q[i, k]), math.sin(q[i, k])
            else:
                x[iq] = q[i, k]
            v[jv], a[jv] = qd[i, k], qdd[i, k]
        tau[i] = pin.rnea(pm, data, x, v, a)[iv]
        Mi = pin.crba(pm, data, x)
        M[i] = (np.triu(Mi) + np.triu(Mi, 1).T)[np.ix_(iv, iv)]
    return tau, M


# ---------------------------------------------------------------------- the check
def _target_label(target: str | os.PathLike) -> str:
    text = os.fspath(target)
    try:
        rel = Path(text).resolve().relative_to(pybullet_data_dir())
        return PYBULLET_DATA_PREFIX + rel.as_posix()
    except (ValueError, OSError):
        return text


def compare(target: str | os.PathLike, samples: int = 50, seed: int = 0, tol: float = 1e-8,
            dynamics: Any = None, *, base_orientation: Sequence[float] | None = None,
            inertia_from_file: bool = True, gravity: Sequence[float] = GRAVITY,
            pinocchio: bool = True, model: RobotModel | None = None) -> RobotResult:
    """Check one robot (a URDF path or ``pybullet_data:NAME``); see the module docstring.

    ``dynamics``: ``None`` (``simbench.dynamics``), ``"module:function"`` or a callable
    ``tau = f(q, qd, qdd)`` in ``model.joint_names`` order. ``base_orientation``: roll pitch yaw
    or quaternion x y z w of the fixed base. ``inertia_from_file=False`` loads without
    ``URDF_USE_INERTIA_FROM_FILE``.
    """
    t0 = time.perf_counter()
    res = RobotResult(target=_target_label(target), samples=int(samples))
    path = resolve_urdf(target)
    res.path = str(path)
    dyn = load_dynamics(dynamics)
    ref = dyn if isinstance(dyn, ModelDynamics) else default_dynamics()
    try:
        if model is None:
            model = RobotModel.from_urdf(path)
    except SimbenchError as exc:
        res.reason = f"simbench cannot read the URDF: {exc}"
        return _done(res, t0)
    res.name, res.dof = model.name, model.dof
    if model.dof == 0:
        res.reason = "no movable joints"
        return _done(res, t0)
    quat = as_quaternion(base_orientation)
    R_base = _rotation(quat)
    g_world = np.asarray(gravity, float)
    g_true = R_base.T @ g_world  # gravity in the root link frame
    try:
        bullet = BulletRobot(path, base_orientation=quat, inertia_from_file=inertia_from_file,
                             gravity=g_world)
    except SimbenchError as exc:
        res.reason = str(exc)
        return _done(res, t0)
    with bullet:
        if bullet.joint_names != list(model.joint_names):
            res.verdict, res.reason = FAIL, (f"joint names differ: PyBullet {bullet.joint_names}, "
                                             f"simbench {list(model.joint_names)}")
            return _done(res, t0)
        if any(int(c) == SPHERICAL for c in model.joint_type_code):
            res.reason = ("spherical joints: PyBullet's calculateInverseDynamics rejects quaternion "
                          "positions (nq != nv) and simbench does not compare them")
            try:
                zero = np.zeros((1, model.dof))
                ref.tau(model, zero, zero, zero, g_true)
            except Exception as exc:  # the dynamics refusing spherical joints is expected
                res.reason = f"spherical joints: {exc}"
            return _done(res, t0)
        q, qd, qdd = sample_states(model, int(samples), seed)
        try:
            with captured_output():
                tau_b = bullet.inverse_dynamics(q, qd, qdd)
                M_b = bullet.mass_matrix(q)
        except p.error as exc:
            res.reason = f"PyBullet's calculateInverseDynamics/MassMatrix failed: {exc}"
            return _done(res, t0)
        try:
            tau = dyn.tau(model, q, qd, qdd, g_true)
            M = dyn.M(model, q)
        except SimbenchError as exc:
            if isinstance(dyn, UserDynamics):
                res.verdict = FAIL
            res.reason = f"{getattr(dyn, 'label', 'dynamics')} refuses this robot: {exc}"
            return _done(res, t0)
        res.errors = err = measure(tau, M, tau_b, M_b)
        _notes(res, model, bullet, qd, tau_b)
        if pinocchio:
            voice = pinocchio_voice(str(path), model, q, qd, qdd, g_true)
            if isinstance(voice, str):
                res.pinocchio = {"available": False, "reason": voice}
            else:
                res.pinocchio = {"available": True,
                                 "vs_pybullet": measure(*voice, tau_b, M_b).as_dict(),
                                 "vs_ours": measure(tau, M, *voice).as_dict()}
        if err.within(tol):
            res.verdict = PASS
            if isinstance(dyn, ModelDynamics) and not err.within(1e-12):
                # a small residual: PyBullet stores inertia as principal moments + rotation
                rebuild, changed = from_dynamics_info(model, bullet)
                if changed:
                    m2 = rebuild(model)
                    e2 = measure(ref.tau(m2, q, qd, qdd, g_true), ref.M(m2, q), tau_b, M_b)
                    res.notes.append(f"residual {err.brief()} comes from PyBullet's diagonalised link "
                                     f"inertia (links {', '.join(changed)}): with getDynamicsInfo's values "
                                     f"it is {e2.brief()}")
            return _done(res, t0)
        # ---- explain: rebuild the model as PyBullet sees it and rerun
        changes = suspect(model, bullet, base_rotation=R_base, inertia_from_file=inertia_from_file)
        own = isinstance(dyn, ModelDynamics)
        if not own:
            # the user's function must match our dynamics on the file's model ...
            tau_r, M_r = ref.tau(model, q, qd, qdd, g_true), ref.M(model, q)
            if not measure(tau, M, tau_r, M_r).within(tol):
                changes = []

        def run(chs: Sequence[_Change]) -> Errors:
            m2, g2 = _as_bullet_sees(model, g_true, chs)
            if own or chs:
                return measure(ref.tau(m2, q, qd, qdd, g2), ref.M(m2, q), tau_b, M_b)
            return err

        after = run(changes) if changes else err
        if changes and after.within(tol):
            needed = []
            for ch in changes:
                before = run([c for c in changes if c is not ch])
                if not before.within(tol):
                    needed.append(Cause(ch.kind, ch.links, f"{CAUSES[ch.kind]}; {ch.message}", before, after))
                else:
                    res.notes.append(f"suspected {ch.kind} ({', '.join(ch.links)}) has no measurable effect")
            if not own:
                res.notes.append(f"{dyn.label} matches {ref.label} on the file's model; the difference "
                                 f"to PyBullet is explained with {ref.label}")
            if needed:
                res.verdict, res.causes = EXPLAINED, needed
                return _done(res, t0)
        # ---- unexplained
        res.verdict = FAIL
        scaled = np.abs(tau - tau_b) / max(1.0, err.tau_scale)
        i, j = np.unravel_index(int(np.argmax(scaled)), scaled.shape)
        res.worst = {"joint": model.joint_names[j], "sample": int(i), "q": q[i].tolist(),
                     "qd": qd[i].tolist(), "qdd": qdd[i].tolist(), "gravity": g_true.tolist(),
                     "tau_ours": float(tau[i, j]), "tau_pybullet": float(tau_b[i, j])}
        if not np.isfinite(err.tau_abs) or err.tau_abs <= tol * max(1.0, err.tau_scale):
            Ms = np.abs(M - M_b)
            i, a, b = np.unravel_index(int(np.argmax(np.nan_to_num(Ms, nan=np.inf))), Ms.shape)
            res.worst.update({"M_entry": [model.joint_names[a], model.joint_names[b]], "M_sample": int(i),
                              "M_q": q[i].tolist(), "M_ours": float(M[i, a, b]), "M_pybullet": float(M_b[i, a, b])})
        res.reason = (f"unexplained: worst joint {res.worst['joint']!r} at sample {i}"
                      + (f"; tried {', '.join(c.kind for c in changes)} -> {after.brief()}" if changes else ""))
        if res.pinocchio and res.pinocchio.get("available"):
            pv = Errors(**{k: (math.inf if v is None else v) for k, v in res.pinocchio["vs_pybullet"].items()})
            if pv.within(tol):
                res.reason += "; Pinocchio agrees with PyBullet, so the dynamics under test is wrong"
        if own:  # a hint, not an explanation: does PyBullet hold other inertials than the file?
            rebuild, changed = from_dynamics_info(model, bullet)
            if changed:
                m2 = rebuild(model)
                e2 = measure(ref.tau(m2, q, qd, qdd, g_true), ref.M(m2, q), tau_b, M_b)
                res.notes.append(f"PyBullet's inertials (getDynamicsInfo) differ from the file for links "
                                 f"{changed}; with them the error is {e2.brief()}")
        res.worst = {k: (_num(v) if isinstance(v, float) else v) for k, v in res.worst.items()}
        return _done(res, t0)


def _notes(res: RobotResult, model: RobotModel, bullet: BulletRobot, qd: np.ndarray, tau_b: np.ndarray) -> None:
    """PyBullet-specific facts worth knowing about this robot (measured where possible)."""
    d = np.array(model.joint_damping)[model.movable]
    if np.any(d):
        res.notes.append(f"joint damping {dict(zip(np.array(model.joint_names)[d != 0].tolist(), d[d != 0].tolist()))} "
                         f"is not part of calculateInverseDynamics (adding d*qd would change tau by up to "
                         f"{float(np.abs(d * qd).max()):.3g} N m)")
    for issue in model.issues:
        if issue.kind in ("mimic_joint", "sloppy_number", "trailing_content", "axis_not_unit"):
            res.notes.append(str(issue))
    if "Bad inertia" in bullet.log or "No inertial data" in bullet.log:
        warned = sorted({ln.split(":")[-1].strip() for ln in bullet.log.splitlines()
                         if "setting inertia to zero for link" in ln})
        if warned:
            res.notes.append(f"PyBullet warned 'Bad inertia tensor properties' for {warned}")


def _done(res: RobotResult, t0: float) -> RobotResult:
    res.seconds = time.perf_counter() - t0
    return res


# ---------------------------------------------------------------------- corpus
def corpus_targets(name: str = "pybullet_data") -> tuple[list[str], list[RobotResult]]:
    """Every distinct URDF file (by content) in the corpus that has movable joints, and SKIPPED
    results for those that cannot be used (with a reason)."""
    if name != "pybullet_data":
        raise SimbenchError(f"unknown corpus {name!r}; expected 'pybullet_data'")
    root = pybullet_data_dir()
    seen: dict[str, str] = {}
    targets, skipped = [], []
    for f in sorted(root.rglob("*.urdf")):
        digest = hashlib.sha1(f.read_bytes()).hexdigest()
        label = PYBULLET_DATA_PREFIX + f.relative_to(root).as_posix()
        if digest in seen:
            continue
        seen[digest] = label
        try:
            with captured_output():
                model = RobotModel.from_urdf(f)
        except SimbenchError as exc:
            skipped.append(RobotResult(label, path=str(f), reason=f"simbench cannot read the URDF: {exc}"))
            continue
        if model.dof:
            targets.append(label)
    return targets, skipped


def check(targets: Sequence[str | os.PathLike], *, corpus: str | None = None, samples: int = 50,
          seed: int = 0, tol: float = 1e-8, dynamics: Any = None, progress: Callable[[RobotResult], None] | None = None,
          **kwargs: Any) -> Report:
    """Run :func:`compare` over targets (and a corpus); returns a :class:`Report`."""
    t0 = time.perf_counter()
    dyn = load_dynamics(dynamics)
    todo = [os.fspath(t) for t in targets]
    results: list[RobotResult] = []
    if corpus:
        extra, skipped = corpus_targets(corpus)
        todo += extra
        results += skipped
        for r in skipped:
            if progress:
                progress(r)
    for t in todo:
        try:
            r = compare(t, samples=samples, seed=seed, tol=tol, dynamics=dyn, **kwargs)
        except Exception as exc:  # one broken robot must not hide the others' results
            if not corpus:
                raise
            r = RobotResult(_target_label(t), verdict=FAIL, reason=f"crashed: {type(exc).__name__}: {exc}")
        results.append(r)
        if progress:
            progress(r)
    settings = {"samples": samples, "seed": seed, "tol": tol, "dynamics": getattr(dyn, "label", str(dynamics)),
                "corpus": corpus, **{k: (list(v) if isinstance(v, tuple) else v) for k, v in kwargs.items()}}
    return Report(results, settings, time.perf_counter() - t0)


# ---------------------------------------------------------------------- plots
def smooth_trajectory(model: RobotModel, n: int = 200, duration: float = 4.0
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``t, q, qd, qdd`` of ``q_i(t) = c_i + a_i sin(w_i t + phi_i)`` inside the limits."""
    lo, hi = np.array(model.lower), np.array(model.upper)
    finite = np.isfinite(lo) & np.isfinite(hi) & (lo <= hi)
    c = np.where(finite, 0.5 * (np.where(finite, lo, 0) + np.where(finite, hi, 0)), 0.0)
    a = np.where(finite, np.minimum(0.45 * (np.where(finite, hi, 1) - np.where(finite, lo, 0)), 1.0), 1.0)
    k = np.arange(model.dof)
    w = 2 * math.pi * (0.25 + 0.1 * (k % 5))
    phi = 0.7 * k
    t = np.linspace(0.0, duration, n)[:, None]
    s, co = np.sin(w * t + phi), np.cos(w * t + phi)
    return t[:, 0], c + a * s, a * w * co, -a * w * w * s


def plot_robot(target: str | os.PathLike, out_dir: str | os.PathLike, dynamics: Any = None, *,
               base_orientation: Sequence[float] | None = None, inertia_from_file: bool = True,
               gravity: Sequence[float] = GRAVITY, max_joints: int = 12) -> Path:
    """PNG of per-joint torque along :func:`smooth_trajectory`: ours, PyBullet, Pinocchio, and
    |ours - PyBullet|. Needs matplotlib (the ``plot`` extra)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise SimbenchError("--plot needs matplotlib: pip install 'simbench[plot]'") from None
    path = resolve_urdf(target)
    model = RobotModel.from_urdf(path)
    dyn = load_dynamics(dynamics)
    quat = as_quaternion(base_orientation)
    g_true = _rotation(quat).T @ np.asarray(gravity, float)
    t, q, qd, qdd = smooth_trajectory(model)
    with BulletRobot(path, base_orientation=quat, inertia_from_file=inertia_from_file, gravity=gravity) as b:
        with captured_output():
            tau_b = b.inverse_dynamics(q, qd, qdd)
    tau = dyn.tau(model, q, qd, qdd, g_true)
    voice = pinocchio_voice(str(path), model, q, qd, qdd, g_true)
    tau_p = None if isinstance(voice, str) else voice[0]
    nj = min(model.dof, max_joints)
    cols = min(3, nj + 1)
    rows = math.ceil((nj + 1) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 2.6 * rows), squeeze=False)
    for i in range(nj):
        ax = axes.flat[i]
        ax.plot(t, tau_b[:, i], color="k", lw=2.5, alpha=0.35, label="PyBullet")
        ax.plot(t, tau[:, i], color="C0", lw=1.2, label=getattr(dyn, "label", "ours").split(" ")[0])
        if tau_p is not None:
            ax.plot(t, tau_p[:, i], color="C1", lw=1, ls="--", label="Pinocchio")
        ax.set_title(model.joint_names[i], fontsize=9)
        ax.set_ylabel("N m / N", fontsize=8)
        ax.tick_params(labelsize=7)
    axes.flat[0].legend(fontsize=7)
    ax = axes.flat[nj]
    for i in range(nj):
        ax.semilogy(t, np.abs(tau - tau_b)[:, i] + 1e-18, lw=1, label=model.joint_names[i])
    ax.set_title("|ours - PyBullet|", fontsize=9)
    ax.set_xlabel("t [s]", fontsize=8)
    ax.tick_params(labelsize=7)
    for extra in list(axes.flat)[nj + 1:]:
        extra.axis("off")
    fig.suptitle(f"{_target_label(target)}: joint torque along a smooth trajectory", fontsize=10)
    fig.tight_layout()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    stem = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in _target_label(target))
    png = out / f"{stem}.png"
    fig.savefig(png, dpi=80)
    plt.close(fig)
    return png


# ---------------------------------------------------------------------- CLI
def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``simbench check``."""
    parser.description = ("Cross-check inverse dynamics and mass matrix against PyBullet's "
                          "calculateInverseDynamics / calculateMassMatrix (and Pinocchio), explaining "
                          "every disagreement. Exit status: 0 nothing failed, 1 a FAIL (or EXPLAINED "
                          "with --strict), 2 usage error.")
    parser.add_argument("targets", nargs="*", metavar="TARGET",
                        help="a URDF path or pybullet_data:NAME (e.g. pybullet_data:kuka_iiwa/model.urdf)")
    parser.add_argument("--corpus", choices=["pybullet_data"],
                        help="also check every distinct URDF with movable joints in this corpus")
    parser.add_argument("--samples", type=int, default=50, help="random states per robot (default 50)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--tol", type=float, default=1e-8,
                        help="pass when max|error| <= tol * max(1, max|PyBullet|) (default 1e-8)")
    parser.add_argument("--json", metavar="FILE", help="write the report as JSON")
    parser.add_argument("--markdown", metavar="FILE", help="write the report as a Markdown table")
    parser.add_argument("--plot", metavar="DIR", help="write per-robot torque plots (PNG; needs matplotlib)")
    parser.add_argument("--strict", action="store_true", help="EXPLAINED counts as a failure too")
    parser.add_argument("--dynamics", metavar="MODULE:FUNCTION",
                        help="check your own tau = f(q, qd, qdd) (joint_names order) instead of simbench's")
    parser.add_argument("--base-orientation", nargs="+", type=float, metavar="X",
                        help="fixed-base orientation: roll pitch yaw, or quaternion x y z w")
    parser.add_argument("--inertia-from-shapes", action="store_true",
                        help="load without URDF_USE_INERTIA_FROM_FILE (PyBullet recomputes inertia)")
    parser.add_argument("--no-pinocchio", action="store_true", help="skip Pinocchio as the third voice")
    parser.add_argument("-q", "--quiet", action="store_true", help="print only the summary line")


def _usage(msg: str) -> int:
    print(f"simbench check: error: {msg}", file=sys.stderr)
    return 2


def run_cli(args: argparse.Namespace) -> int:
    """Run ``simbench check``; returns the exit status (0, 1, or 2 on a usage error)."""
    targets = list(getattr(args, "targets", None) or [])
    corpus = getattr(args, "corpus", None)
    if not targets and not corpus:
        return _usage("give at least one TARGET (a URDF path or pybullet_data:NAME) or --corpus pybullet_data")
    if args.samples < 1:
        return _usage(f"--samples {args.samples}: expected a positive integer")
    if not (args.tol > 0 and math.isfinite(args.tol)):
        return _usage(f"--tol {args.tol}: expected a positive number")
    try:
        for t in targets:
            resolve_urdf(t)
        dyn = load_dynamics(args.dynamics)
        quat = as_quaternion(args.base_orientation)
        for t in targets:
            model = RobotModel.from_urdf(t)
            if model.dof == 0:
                return _usage(f"{t}: the robot has no movable joints, nothing to check")
    except SimbenchError as exc:
        return _usage(str(exc))
    kwargs = dict(base_orientation=quat, inertia_from_file=not args.inertia_from_shapes,
                  pinocchio=not args.no_pinocchio)
    quiet = getattr(args, "quiet", False)
    progress = None if quiet else (lambda r: print(r.line(), flush=True))
    report = check(targets, corpus=corpus, samples=args.samples, seed=args.seed, tol=args.tol,
                   dynamics=dyn, progress=progress, **kwargs)
    report.settings["strict"] = bool(args.strict)
    if not quiet:
        for r in report.results:
            if r.verdict == FAIL and r.worst:
                w = r.worst
                print(f"  FAIL {r.target}: worst joint {w['joint']!r}: ours {w['tau_ours']:.10g}, PyBullet "
                      f"{w['tau_pybullet']:.10g} at q={w['q']!r} qd={w['qd']!r} qdd={w['qdd']!r} "
                      f"gravity={w['gravity']!r}")
            for c in r.causes:
                print(f"  {r.target}: {c.kind} [{', '.join(c.links)}]: tau error {c.before.tau_abs:.2e} -> "
                      f"{c.after.tau_abs:.2e}, M error {c.before.M_abs:.2e} -> {c.after.M_abs:.2e}")
    print(report.text().splitlines()[-1])
    try:
        if args.json:
            Path(args.json).write_text(json.dumps(report.to_json(), indent=1, allow_nan=False) + "\n")
        if args.markdown:
            Path(args.markdown).write_text(report.to_markdown())
    except OSError as exc:
        return _usage(f"cannot write the report: {exc}")
    if args.plot:
        for r in report.results:
            if r.errors is not None:
                try:
                    png = plot_robot(r.path, args.plot, dyn, base_orientation=quat,
                                     inertia_from_file=not args.inertia_from_shapes)
                except SimbenchError as exc:
                    return _usage(str(exc))
                if not quiet:
                    print(f"  plot: {png}")
    return report.exit_code(args.strict)
