"""The PyBullet side of ``simbench check``: one robot in its own DIRECT server, and its
``calculateInverseDynamics`` / ``calculateMassMatrix`` in our conventions.

How a body is loaded (:class:`BulletLoad`) is separate from how PyBullet's inputs and outputs
map to ours (:class:`FixedBaseConvention`), so that the floating-base convention (PyBullet's
base quaternion order, world-frame base velocities, ``flags``) plugs in as another convention.

Spherical joints: PyBullet's ``calculateInverseDynamics`` and ``calculateMassMatrix`` take 3
position numbers per spherical joint, roll, pitch and yaw (``getEulerFromQuaternion``:
R = Rz(yaw) Ry(pitch) Rx(roll)), and everything about the joint is in PyBullet's frame of the
child link, its *inertial* frame (axes ``R_in``, ``getDynamicsInfo``'s local inertial
orientation): the rotation is ``R_in^T R_joint R_in``, velocities and accelerations are the
child's angular velocity relative to the parent and its derivative in inertial axes, the output
is the joint moment in inertial axes. :meth:`BulletRobot.inverse_dynamics` / ``mass_matrix``
map ours to that and back. Measured on pybullet_data's humanoid and spherical_joint_limit and on
simbench's ``urdf/defects/spherical_joint.urdf`` (rotated inertial frame) to 4e-14, with the
pivot defect of :mod:`simbench.check.causes` applied.

Facts measured about PyBullet that this module relies on: a URDF path is cached per
connection even after the file changes (so every robot gets a fresh client); gravity is 0 until
``setGravity``; PyBullet prints its reasons for refusing a model on the C-level stdout/stderr
(``b3Error[...]`` / ``b3Warning[...]`` lines), which :func:`captured_output` collects and
:func:`pybullet_reason` turns into one line.
"""
from __future__ import annotations

import contextlib
import logging
import os
import re
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from .._quiet import import_pybullet
from ..bullet.records import dynamics_info, joint_infos
from ..errors import SimbenchError, beyond_a_turn, shown, shown_path
from ..model import GRAVITY

p = import_pybullet()
logger = logging.getLogger(__name__)

#: PyBullet's fixed-size joint arrays in its shared-memory commands (MAX_DEGREE_OF_FREEDOM in
#: bullet3's SharedMemoryPublic.h): inputs beyond this many DOF overflow (see causes.py).
PYBULLET_MAX_DOF = 128


class BulletRefused(SimbenchError):
    """PyBullet refused to load or compute with a model; the message is PyBullet's reason."""


@contextlib.contextmanager
def captured_output() -> Iterator[list[str]]:
    """Capture C-level stdout/stderr (PyBullet's messages) into the yielded list's one item."""
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


_MARKER = re.compile(r"b3(?:Error|Warning|Printf)\[[^\]]*\]:\s*")
_MISSING_MESH = re.compile(r"cannot find '([^']+)'")


def pybullet_reason(log: str, limit: int = 300) -> str:
    """PyBullet's own messages from a captured log as one line ('' when it said nothing). A
    missing mesh is named (PyBullet: "cannot find 'NAME' in any directory in urdf path")."""
    text = " ".join(w for w in " ".join(_MARKER.sub(" ", log).split()).split(" ")
                    if w and not w.startswith("pybullet"))
    text = text.replace("build time: ", "")
    meshes = list(dict.fromkeys(_MISSING_MESH.findall(log)))
    if meshes:
        links = list(dict.fromkeys(re.findall(r"for Link:\s*(\S+?)(?=\s|$)", text)))
        text = (f"mesh {', '.join(map(repr, meshes))}" + (f" of link {', '.join(map(repr, links))}" if links else "")
                + " not found (PyBullet looked in the URDF's folder and its search path)")
    return text if len(text) <= limit else text[: limit - 3] + "..."


@dataclass(frozen=True)
class BulletLoad:
    """How a body is loaded: fixed base (always, for now), base orientation (quaternion x y z w),
    ``globalScaling``, ``URDF_USE_INERTIA_FROM_FILE`` and world gravity."""

    path: Path
    base_orientation: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 1.0)
    scale: float = 1.0
    inertia_from_file: bool = True
    gravity: tuple[float, float, float] = GRAVITY
    fixed_base: bool = True

    @property
    def base_rotation(self) -> np.ndarray:
        """R_world_base of the loaded base."""
        return np.array(p.getMatrixFromQuaternion(list(self.base_orientation))).reshape(3, 3)


def rotation_from_quaternion(quat: np.ndarray) -> np.ndarray:
    """(..., 4) unit quaternions x y z w -> (..., 3, 3) rotation matrices."""
    x, y, z, w = np.moveaxis(np.asarray(quat, float), -1, 0)
    return np.stack([np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], -1),
                     np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], -1),
                     np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], -1)], -2)


def rpy_from_rotation(R: np.ndarray) -> np.ndarray:
    """(..., 3, 3) -> (..., 3) roll, pitch, yaw with R = Rz(yaw) Ry(pitch) Rx(roll), the branch
    ``p.getEulerFromQuaternion`` picks (pitch in [-pi/2, pi/2])."""
    R = np.asarray(R, float)
    return np.stack([np.arctan2(R[..., 2, 1], R[..., 2, 2]), np.arcsin(np.clip(-R[..., 2, 0], -1.0, 1.0)),
                     np.arctan2(R[..., 1, 0], R[..., 0, 0])], -1)


def rpy_from_quaternion(quat: np.ndarray) -> np.ndarray:
    """(..., 4) unit quaternions x y z w -> (..., 3) roll, pitch, yaw as ``p.getEulerFromQuaternion``."""
    return rpy_from_rotation(rotation_from_quaternion(quat))


class Convention(Protocol):
    """Maps our (q, qd, qdd) and results to a PyBullet body's calls (one per plug-in)."""

    def inverse_dynamics(self, robot: "BulletRobot", q: np.ndarray, qd: np.ndarray,
                         qdd: np.ndarray) -> np.ndarray: ...

    def mass_matrix(self, robot: "BulletRobot", q: np.ndarray) -> np.ndarray: ...


class FixedBaseConvention:
    """Fixed base: PyBullet's q, qd, qdd and tau are ours (movable joints in file order)."""

    def inverse_dynamics(self, robot: "BulletRobot", q: np.ndarray, qd: np.ndarray,
                         qdd: np.ndarray) -> np.ndarray:
        return np.array([p.calculateInverseDynamics(robot.body, a.tolist(), b.tolist(), c.tolist(),
                                                    physicsClientId=robot.client)
                         for a, b, c in zip(q, qd, qdd)], dtype=float).reshape(q.shape)

    def mass_matrix(self, robot: "BulletRobot", q: np.ndarray) -> np.ndarray:
        return np.array([p.calculateMassMatrix(robot.body, a.tolist(), physicsClientId=robot.client)
                         for a in q], dtype=float).reshape(q.shape + q.shape[-1:])


class BulletRobot:
    """A robot in its own fresh DIRECT server. Use as a context manager or call :meth:`close`.

    Raises :class:`BulletRefused` with PyBullet's reason when it cannot load the file."""

    def __init__(self, load: BulletLoad, convention: Convention | None = None):
        self.load = load
        self.convention = convention or FixedBaseConvention()
        self.client = p.connect(p.DIRECT)
        self.log = ""
        try:
            p.setGravity(*load.gravity, physicsClientId=self.client)
            flags = p.URDF_USE_INERTIA_FROM_FILE if load.inertia_from_file else 0
            with captured_output() as out:
                try:
                    self.body = p.loadURDF(str(load.path), [0, 0, 0], list(load.base_orientation),
                                           useFixedBase=load.fixed_base, flags=flags,
                                           globalScaling=float(load.scale), physicsClientId=self.client)
                except p.error as exc:
                    failed = str(exc)
                else:
                    failed = ""
            self.log = out[0] if out else ""
            if failed:
                why = pybullet_reason(self.log)
                raise BulletRefused(f"PyBullet cannot load {shown_path(str(load.path))}: {why or failed}")
            self.joints = joint_infos(self.body, self.client)
            self.joint_names = [j.name for j in self.joints if j.type != p.JOINT_FIXED]
            # each spherical joint: PyBullet's q and u index of it in the joint part of our q and v
            # (its state holds 7 and 6 base entries first, then the joints in our order) and the
            # child's inertial axes R_in, the frame PyBullet's spherical coordinates live in
            self.spherical = [(j.q_index - 7, j.u_index - 6, np.array(p.getMatrixFromQuaternion(
                dynamics_info(self.body, j.index, self.client).local_inertial_orientation)).reshape(3, 3))
                for j in self.joints if j.type == p.JOINT_SPHERICAL]
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

    def _call(self, what: str, run: Any) -> np.ndarray:
        """``run()`` with PyBullet's messages captured; :class:`BulletRefused` with its reason."""
        with captured_output() as out:
            try:
                return run()
            except (p.error, SystemError) as exc:  # a SystemError chains PyBullet's own error
                failed = str(exc.__cause__ or exc.__context__ or exc)
        log = out[0] if out else ""
        self.log += log
        why = pybullet_reason(log)
        raise BulletRefused(f"PyBullet's {what} refuses this model: {failed}" + (f" ({why})" if why else ""))

    def positions(self, q: np.ndarray) -> np.ndarray:
        """Our q (N, nq) -> the positions PyBullet's dynamics calls take: every spherical joint's
        quaternion (rotation R) replaced by the roll, pitch, yaw of ``R_in^T R R_in``."""
        q = np.atleast_2d(np.asarray(q, float))
        if not self.spherical:
            return q
        base = 0 if self.load.fixed_base else 7
        parts, at = [], 0
        for s, _, R_in in self.spherical:
            R = rotation_from_quaternion(q[:, base + s:base + s + 4])
            parts += [q[:, at:base + s], rpy_from_rotation(R_in.T @ R @ R_in)]
            at = base + s + 4
        return np.concatenate(parts + [q[:, at:]], axis=1)

    def _rates(self, x: np.ndarray, inverse: bool = False) -> np.ndarray:
        """Our v-shaped (N, nv) -> PyBullet's (each spherical block in its inertial axes: R_in^T x);
        ``inverse``: PyBullet's back to ours (R_in x)."""
        x = np.array(np.atleast_2d(np.asarray(x, float)))
        base = 0 if self.load.fixed_base else 6
        for _, u, R_in in self.spherical:
            blk = x[:, base + u:base + u + 3]
            x[:, base + u:base + u + 3] = blk @ R_in.T if inverse else blk @ R_in
        return x

    def inverse_dynamics(self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> np.ndarray:
        """``calculateInverseDynamics`` per row of (N, nq), (N, nv), (N, nv) arrays, in our
        convention; (N, nv)."""
        qb, vb, ab = self.positions(q), self._rates(qd), self._rates(qdd)
        tau = self._call("calculateInverseDynamics",
                         lambda: self.convention.inverse_dynamics(self, qb, vb, ab))
        return self._rates(tau, inverse=True) if self.spherical else tau

    def mass_matrix(self, q: np.ndarray) -> np.ndarray:
        """``calculateMassMatrix`` per row of an (N, nq) array, in our convention; (N, nv, nv):
        ``T^T M_pybullet T`` with ``T`` mapping our rates to PyBullet's."""
        qb = self.positions(q)
        M = self._call("calculateMassMatrix", lambda: self.convention.mass_matrix(self, qb))
        if not self.spherical:
            return M
        T = self._rates(np.eye(M.shape[-1])).T  # columns: PyBullet's rates of our unit rates
        return np.swapaxes(T, 0, 1) @ M @ T

    def link_inertials(self) -> list[tuple[float, np.ndarray, np.ndarray]]:
        """(mass, COM in the link frame, COM inertia in link axes) of PyBullet links 0..n-1,
        from ``getDynamicsInfo``."""
        out = []
        for i in range(len(self.joints)):
            info = dynamics_info(self.body, i, self.client)
            R = np.array(p.getMatrixFromQuaternion(info.local_inertial_orientation)).reshape(3, 3)
            out.append((float(info.mass), np.array(info.local_inertial_position, float),
                        R @ np.diag(info.local_inertia_diagonal) @ R.T))
        return out

    def warned_links(self) -> list[str]:
        """Links PyBullet warned about ('Bad inertia tensor properties, setting inertia to zero')."""
        return sorted({ln.split(":")[-1].strip() for ln in self.log.splitlines()
                       if "setting inertia to zero for link" in ln})


def as_quaternion(orientation: Sequence[float] | None) -> tuple[float, float, float, float]:
    """Roll-pitch-yaw (3) or a quaternion x y z w (4) -> a unit quaternion (identity for None)."""
    if orientation is None:
        return (0.0, 0.0, 0.0, 1.0)
    try:
        o = [float(x) for x in orientation]
    except (TypeError, ValueError, OverflowError):
        o = []
    if len(o) == 3 and all(map(np.isfinite, o)):
        if beyond_a_turn(o):
            raise SimbenchError(f"base orientation {shown(orientation)}: {beyond_a_turn(o)}")
        return tuple(p.getQuaternionFromEuler(o))  # type: ignore[return-value]
    if len(o) == 4 and all(map(np.isfinite, o)) and np.linalg.norm(o) > 0:
        return tuple(float(x) for x in np.asarray(o) / np.linalg.norm(o))  # type: ignore[return-value]
    raise SimbenchError(f"base orientation {shown(orientation)}: expected roll pitch yaw (3 numbers) or a "
                        f"quaternion x y z w (4 numbers, not all zero)")


__all__ = ["PYBULLET_MAX_DOF", "BulletRefused", "BulletLoad", "BulletRobot", "Convention",
           "FixedBaseConvention", "captured_output", "pybullet_reason", "as_quaternion", "rotation_from_quaternion",
           "rpy_from_rotation", "rpy_from_quaternion"]
