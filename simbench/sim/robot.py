"""The handle of one body with movable joints: state, control by joint name, resets.

Control follows PyBullet: every joint starts with PyBullet's default velocity motor (target
0); :meth:`Robot.set_joint_targets` gives position or velocity targets to the motors;
:meth:`Robot.set_torques` switches the named joints' motors off (``VELOCITY_CONTROL`` with
force 0, which torque control needs) and applies the torques as a zero-order hold: PyBullet
clears applied torques after every step, so :meth:`Simulation.step` re-applies them.
"""
from __future__ import annotations

import logging
import weakref
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .._quiet import import_pybullet
from ..bullet.records import JointState, LinkState, dynamics_info, joint_info
from ..bullet.scene import LoadedBody
from ..errors import (ShapeError, SimbenchError, UnknownNameError, finite_number, degrees_note, lookup,
                      outside_limits, real_array, shown)
from .ball_joints import BallJoints
from .poses import base_link_pose, set_base_pose

if TYPE_CHECKING:
    from .simulation import Simulation

p = import_pybullet()
logger = logging.getLogger(__name__)

#: the keywords of ``p.changeDynamics`` (PyBullet 3.2), for :meth:`Robot.change_dynamics`
DYNAMICS_KEYS = ("mass", "lateralFriction", "spinningFriction", "rollingFriction", "restitution", "linearDamping",
                 "angularDamping", "contactStiffness", "contactDamping", "frictionAnchor", "localInertiaDiagonal",
                 "ccdSweptSphereRadius", "contactProcessingThreshold", "activationState", "jointDamping",
                 "anisotropicFriction", "maxJointVelocity", "collisionMargin", "jointLowerLimit", "jointUpperLimit",
                 "jointLimitForce")
#: those of them that take three numbers
DYNAMICS_VECTORS = ("localInertiaDiagonal", "anisotropicFriction")


class Robot:
    """One body of the simulation with movable joints, addressed by joint names.

    ``q``, ``qd`` and ``tau`` are arrays in ``joint_names`` order (the URDF's, = the order of
    ``sim.model``'s joints); setters take such an array or a ``{joint name: value}`` mapping.
    :meth:`model_state` / :meth:`set_model_state` speak ``sim.model``'s full ``(q, v)``: for a
    floating base (``fixed_base = false``) the base pose and twist come first.
    """

    def __init__(self, sim: "Simulation", body: LoadedBody):
        self._sim = weakref.ref(sim)  # no cycle: a dropped simulation is freed at once
        self.body = body
        self.name, self.id = body.name, body.id
        self._cid = sim.client
        self._gone = sim._gone  # the simulation's closed flag (non-empty once closed)
        rows = [joint_info(body.id, int(j), self._client) for j in body.movable_indices]
        ball = [row.type == p.JOINT_SPHERICAL for row in rows]
        info = [row for row, b in zip(rows, ball) if not b]
        #: the revolute and prismatic joints, the entries of ``q``, ``qd`` and ``tau``
        self.joint_names: tuple[str, ...] = tuple(n for n, b in zip(body.movable_names, ball) if not b)
        #: the spherical joints: driven through :meth:`model_state` / :meth:`set_model_state`
        #: (a quaternion each) and :meth:`set_torques` with ``sim.model.nv`` values
        self.spherical_names: tuple[str, ...] = tuple(n for n, b in zip(body.movable_names, ball) if b)
        self._position = {n: i for i, n in enumerate(self.joint_names)}
        self._idx = np.array([j for j, b in zip(body.movable_indices, ball) if not b], dtype=int)
        self._ball = BallJoints(body, rows, ball, self._client)
        effort = np.array([row.max_force for row in info], dtype=float)
        #: motor force limits used by set_joint_targets when none are given (the URDF's effort
        #: limits; 500 N or N m where the file gives none)
        self.max_forces = np.where(np.isfinite(effort) & (effort > 0), effort, 500.0)
        #: joint limits as PyBullet has them (lower > upper: none, as for continuous joints)
        self._limits = [(row.lower_limit, row.upper_limit, "m" if row.type == p.JOINT_PRISMATIC else "rad")
                        for row in info]
        self._outside: set[str] = set()                 # joints warned of a value outside their limits
        self._torque = np.zeros(self.dof, dtype=bool)   # joints under torque control
        self._tau = np.zeros(self.dof)
        self._modes = ["velocity"] * self.dof           # PyBullet's default motors
        self._pos_target: dict[int, tuple[float, dict]] = {}  # joint -> (force, gains)
        spec_joints = body.spec.joints if body.spec is not None else {}
        #: the configuration the scene loads (its ``joints`` table, 0 elsewhere); ``reset()`` target
        self.initial_q = np.array([float(spec_joints.get(n, 0.0)) for n in self.joint_names])
        #: the base's centre of mass in the base link frame (PyBullet's local inertial frame)
        self._base_com = np.array(dynamics_info(body.id, -1, self._client).local_inertial_position, dtype=float)
        self._quat = np.array([0.0, 0.0, 0.0, 1.0])   # the base quaternion last set or reported

    @property
    def _client(self) -> int:
        """The main server's client id while the simulation is open, else one clear error (an id
        of a closed server may be reused by the next one)."""
        if self._gone:
            raise SimbenchError(f"the simulation of robot {self.name!r} was {self._gone[0]}; reading or driving "
                                "its joints needs an open Simulation")
        return self._cid

    @property
    def sim(self) -> "Simulation":
        sim = self._sim()
        if sim is None:
            raise SimbenchError(f"the simulation of robot {self.name!r} no longer exists")
        return sim

    # ------------------------------------------------------------------ state
    @property
    def dof(self) -> int:
        return len(self.joint_names)

    @property
    def model(self):
        """Our :class:`~simbench.model.RobotModel` of this body as PyBullet simulates it (same
        joint order; gravity in the base frame, the scene's ``scale``): see
        :attr:`~simbench.bullet.scene.LoadedBody.model`."""
        return self.body.model

    def _states(self) -> list[JointState]:
        rows = p.getJointStates(self.id, self._idx.tolist(), physicsClientId=self._client)
        return [JointState(*row) for row in rows]

    @property
    def q(self) -> np.ndarray:
        """Joint positions (rad or m), shape (dof,)."""
        return np.array([s.position for s in self._states()], dtype=float)

    @property
    def qd(self) -> np.ndarray:
        """Joint velocities, shape (dof,)."""
        return np.array([s.velocity for s in self._states()], dtype=float)

    def state(self) -> tuple[np.ndarray, np.ndarray]:
        """``(q, qd)`` from one PyBullet call (in the GUI every call is a round trip to the
        window's thread, so this is twice as fast as reading ``q`` and ``qd``)."""
        states = self._states()
        return (np.array([s.position for s in states], dtype=float),
                np.array([s.velocity for s in states], dtype=float))

    @property
    def floating(self) -> bool:
        """True when the base is free (``fixed_base = false``, and a base with mass: PyBullet
        keeps a massless one still): :attr:`model` then has a floating base and
        :meth:`model_state` includes the base pose and twist."""
        return not self.body.fixed_base

    def model_state(self) -> tuple[np.ndarray, np.ndarray]:
        """``(q, v)`` in the conventions of :attr:`model` (Pinocchio's), shapes ``(nq,)`` and
        ``(nv,)``: for a floating base ``q = [x, y, z, qx, qy, qz, qw, joints]`` (base link frame
        in the world) and ``v = [v; w; joint rates]`` (velocity of the base link origin and
        angular velocity, both in the base link frame); for a fixed base the joints only.

        PyBullet places and reports the base by its inertial (COM) frame with world-frame COM
        velocities; with ``R`` the base link orientation and ``c`` the COM in the base link frame,
        ``w = R^T w_world`` and ``v = R^T (v_com - w_world x R c)`` (rigid-body velocity transfer,
        Lynch & Park, *Modern Robotics*, section 3.3). Of the two quaternions of the base's
        orientation, ``q`` holds the one nearer the last set or reported (PyBullet may answer
        either): :meth:`set_model_state` then ``model_state()`` gives q back, and a trajectory's
        quaternions do not jump sign."""
        q, qd = self.state()
        if self._ball.n:   # the joint part in sim.model's order, a quaternion per spherical joint
            q, qd = self._ball.join(q, qd, *self._ball.read(self._client))
        if not self.floating:
            return q, qd
        pos, quat = base_link_pose(self._client, self.id)
        self._quat = quat = -quat if quat @ self._quat < 0 else quat
        v_com, w_world = (np.array(x, dtype=float) for x in p.getBaseVelocity(self.id, physicsClientId=self._client))
        R = _rotation(quat)
        v_origin = v_com - np.cross(w_world, R @ self._base_com)
        return np.concatenate([pos, quat, q]), np.concatenate([R.T @ v_origin, R.T @ w_world, qd])

    def set_model_state(self, q: Any, v: Any = None) -> None:
        """Teleport the body to ``(q, v)`` of :attr:`model` (:meth:`model_state`'s conventions;
        ``v`` None: at rest): the base pose and twist (floating base) and the joints, in one call.
        Modes, torques and motor targets are kept (see :meth:`reset`)."""
        model = self.model
        qv = np.asarray(q, dtype=float)
        vv = np.zeros(model.nv) if v is None else np.asarray(v, dtype=float)
        for what, arr, n, labels in (("q", qv, model.nq, "q_labels"), ("v", vv, model.nv, "v_labels")):
            if arr.shape != (n,) or not np.isfinite(arr).all():
                raise ShapeError(f"set_model_state: {what} has shape {arr.shape}" +
                                 ("" if arr.shape != (n,) else " with non-finite entries") +
                                 f"; expected {n} finite numbers (sim.model.{labels} names them)")
        if self.floating:
            quat = qv[3:7]
            if not np.linalg.norm(quat) > 0:
                raise ShapeError(f"set_model_state: base quaternion q[3:7] = {quat.tolist()}; expected a "
                                 f"non-zero quaternion (x, y, z, w)")
            self._quat = quat / np.linalg.norm(quat)
            R = _rotation(self._quat)
            w_world = R @ vv[3:6]
            v_com = R @ vv[:3] + np.cross(w_world, R @ self._base_com)
            set_base_pose(self._client, self.id, qv[:3], quat, v_com, w_world)
            qv, vv = qv[7:], vv[6:]
        qv, vv, quats, rates = self._ball.split(qv, vv)
        self._ball.write(self._client, quats, rates, "set_model_state")
        self._not_degrees(np.arange(self.dof), qv, "set_model_state")
        self.reset(qv, vv, who="set_model_state")

    @property
    def tau(self) -> np.ndarray:
        """Applied joint torques/forces: the commanded ones for joints under torque control
        (PyBullet reports 0 there), the motor's for the others."""
        motor = np.array([s.applied_torque for s in self._states()], dtype=float)
        return np.where(self._torque, self._tau, motor)

    @property
    def modes(self) -> dict[str, str]:
        """Control mode per joint: ``"position"``, ``"velocity"`` or ``"torque"``."""
        return dict(zip(self.joint_names, self._modes))

    def joint_index(self, name: str) -> int:
        """Position of joint ``name`` in ``q``."""
        return lookup(self._position, name, "joint", f"body {self.name!r}")

    def link_pose(self, link: str | None = None) -> tuple[np.ndarray, np.ndarray]:
        """World position (3,) and quaternion (x, y, z, w) of a link frame (None: the base)."""
        li = self.body.link_index(link)
        if li < 0:
            return self.sim.base_pose(self.name)
        st = LinkState(*p.getLinkState(self.id, li, computeForwardKinematics=True,
                                       physicsClientId=self._client))
        return np.array(st.frame_position), np.array(st.frame_orientation)

    # ------------------------------------------------------------------ values by name
    def _values(self, value: Any, what: str, partial: bool) -> tuple[np.ndarray, np.ndarray]:
        """(joint positions in q, values) from an array (dof,) or a mapping by joint name."""
        if isinstance(value, Mapping):
            sel = np.array([self.joint_index(str(k)) for k in value], dtype=int)
            if not partial and len(set(sel.tolist())) != self.dof:
                missing = [n for n in self.joint_names if n not in value]
                raise ShapeError(f"{what} is missing joints {missing}; expected every joint of "
                                 f"{list(self.joint_names)}")
            vals = np.array([finite_number(v, f"{what}[{k!r}]", error=ShapeError) for k, v in value.items()], dtype=float)
            return sel, vals
        try:
            arr = np.asarray(value, dtype=float)
        except (TypeError, ValueError, OverflowError):
            raise ShapeError(f"{what} = {shown(value)}; expected {self.dof} numbers for joints "
                             f"{list(self.joint_names)} or a mapping by joint name") from None
        if arr.shape != (self.dof,):
            full = self.model.nv   # set_torques also takes the whole model's (spherical joints, a zero base)
            also = f", or ({full},) in the order of the whole model's v_labels (robot.model.v_labels)" if what == "tau" and full != self.dof else ""
            raise ShapeError(f"{what} has shape {arr.shape}; expected ({self.dof},) with joints in "
                             f"order {list(self.joint_names)}{also}")
        if not np.all(np.isfinite(arr)):
            i = int(np.flatnonzero(~np.isfinite(arr))[0])
            raise ShapeError(f"{what} holds {arr[i]} for joint {self.joint_names[i]!r}; expected finite numbers")
        return np.arange(self.dof), arr

    def _not_degrees(self, sel: np.ndarray, qv: np.ndarray, who: str) -> None:
        """Refuse an angle of a limited revolute joint beyond a turn and outside its limits:
        degrees, most likely (just past a limit is fine: the limit stops a target there)."""
        for i, v in zip(sel, qv):
            lo, hi, unit = self._limits[i]
            note = degrees_note(v, unit)
            if note and lo < hi and not lo <= v <= hi:
                raise SimbenchError(f"{who}: " + outside_limits(f"{self.joint_names[i]} = {v:g}{note}", v, lo, hi, unit))

    def _warn_outside(self, sel: np.ndarray, qv: np.ndarray, who: str) -> None:
        """One warning line per joint (once per robot) set outside its limits. A joint given the
        value it has (a state read and written back: the a1 loads with its knees at 0, outside
        [-2.697, -0.916]) is not set by the user and gets no line."""
        now = None
        for i, v in zip(sel, qv):
            lo, hi, unit = self._limits[i]
            name = self.joint_names[i]
            if lo < hi and not lo - 1e-9 <= v <= hi + 1e-9 and name not in self._outside:
                now = self.q if now is None else now
                if abs(v - now[i]) <= 1e-12:
                    continue
                self._outside.add(name)
                logger.warning("%s: joint %r set to %g %s, outside its limits [%.4g, %.4g]; PyBullet's "
                               "limit pushes it back from the next step", who, name, v, unit, lo, hi)

    def _velocities_for(self, sel: np.ndarray, qd: Any) -> np.ndarray:
        """The velocities that go with positions for joints ``sel``: zeros when ``qd`` is None,
        else ``qd``, which must name the same joints in the same order."""
        if qd is None:
            return np.zeros(len(sel))
        sel_qd, qdv = self._values(qd, "qd", partial=True)
        if not np.array_equal(sel, sel_qd):
            raise ShapeError(f"qd names joints {[self.joint_names[i] for i in sel_qd]}; expected the joints of q "
                             f"in the same order, {[self.joint_names[i] for i in sel]}")
        return qdv

    # ------------------------------------------------------------------ control
    def set_joint_targets(self, q: Any = None, qd: Any = None, *, kp: float | Sequence[float] | None = None,
                          kd: float | Sequence[float] | None = None, forces: Any = None) -> None:
        """Position targets ``q`` (with optional velocity targets ``qd``) or, with ``q=None``,
        velocity targets ``qd`` for PyBullet's joint motors.

        A mapping by joint name commands only those joints. ``kp``/``kd`` are PyBullet's
        ``positionGain``/``velocityGain`` (its motor drives ``kp (q* - q) + kd (qd* - qd)`` to
        zero within the force limit; defaults 0.1 and 1.0); ``forces`` are the motor force
        limits (default :attr:`max_forces`). Joints under torque control switch back to motors.
        """
        if q is None and qd is None:
            raise SimbenchError("set_joint_targets needs position targets q or velocity targets qd")
        if q is not None:
            sel, qv = self._values(q, "q", partial=True)
            self._not_degrees(sel, qv, "set_joint_targets")
            qdv = self._velocities_for(sel, qd)
            mode, label = p.POSITION_CONTROL, "position"
        else:
            sel, qdv = self._values(qd, "qd", partial=True)
            qv, mode, label = None, p.VELOCITY_CONTROL, "velocity"
        kwargs: dict[str, Any] = {"targetVelocities": qdv.tolist()}
        if qv is not None:
            kwargs["targetPositions"] = qv.tolist()
        f = self.max_forces[sel] if forces is None else self._broadcast(forces, len(sel), "forces", nonneg=True)
        kwargs["forces"] = f.tolist()
        if kp is not None:
            kwargs["positionGains"] = self._broadcast(kp, len(sel), "kp", nonneg=True).tolist()
        if kd is not None:
            kwargs["velocityGains"] = self._broadcast(kd, len(sel), "kd", nonneg=True).tolist()
        p.setJointMotorControlArray(self.id, self._idx[sel].tolist(), mode, physicsClientId=self._client,
                                    **kwargs)
        self._torque[sel] = False
        gains = {key: kwargs[key] for key in ("positionGains", "velocityGains") if key in kwargs}
        for k, i in enumerate(sel):
            self._modes[i] = label
            if qv is not None:  # remembered so that reset() can move the target along
                self._pos_target[int(i)] = (float(f[k]), {key[:-1]: val[k] for key, val in gains.items()})
            else:
                self._pos_target.pop(int(i), None)

    def set_torques(self, tau: Any) -> None:
        """Pure torque control: joint torques (N m) / forces (N), held until changed.

        The first call for a joint switches its motor off (``VELOCITY_CONTROL`` with force 0);
        the torques are applied at every following :meth:`Simulation.step` (PyBullet clears
        them after each step). No clipping to the effort limits. A mapping by joint name sets
        only those joints.
        """
        sel, vals = self._values(self._joint_torques(tau), "tau", partial=True)
        new = sel[~self._torque[sel]]
        if len(new):
            p.setJointMotorControlArray(self.id, self._idx[new].tolist(), p.VELOCITY_CONTROL,
                                        forces=[0.0] * len(new), physicsClientId=self._client)
        self._torque[sel] = True
        self._tau[sel] = vals
        for i in sel:
            self._modes[i] = "torque"
            self._pos_target.pop(int(i), None)

    def _joint_torques(self, tau: Any) -> Any:
        """``tau`` of :meth:`set_torques` as the scalar joints' torques: given ``sim.model.nv``
        values (a floating base's 6 first, which must be zero: nothing drives the base) or,
        with spherical joints, the joint part of them, the spherical joints' 3 each are held
        here and the scalar joints' returned; anything else as it came."""
        arr = None if isinstance(tau, Mapping) else _floats(tau)
        if arr is None or arr.ndim != 1 or len(arr) == self.dof or not np.all(np.isfinite(arr)):
            return tau
        base = 6 if self.floating else 0
        if base and len(arr) == base + self._ball.nv:
            if np.any(arr[:6] != 0):
                raise ShapeError(f"tau has {len(arr)} values (sim.model.nv) with {arr[:6].tolist()} on the floating "
                                 f"base, which no motor drives; pass the joints' tau[6:] ({self._ball.nv} values)")
            arr = arr[6:]
        if len(arr) != self._ball.nv or not self._ball.n:
            return arr
        qs, ts, _, sph = self._ball.split(np.zeros(self._ball.nq), arr)
        self._ball.set_torques(self._client, sph)
        return ts

    def release(self) -> None:
        """Let every joint move freely: torque control with zero torque (motors off)."""
        self.set_torques(np.zeros(self.dof))
        if self._ball.n:
            self._ball.set_torques(self._client, np.zeros((self._ball.n, 3)))

    def _apply(self) -> None:
        if self._ball.torque.any():
            self._ball.apply(self._client)
        if self._torque.any():
            p.setJointMotorControlArray(self.id, self._idx[self._torque].tolist(), p.TORQUE_CONTROL,
                                        forces=self._tau[self._torque].tolist(), physicsClientId=self._client)

    def reset(self, q: Any = None, qd: Any = None, *, who: str = "reset") -> None:
        """Teleport the joints to ``q`` (default: the scene's initial configuration) with
        velocities ``qd`` (default 0). Joints under position control get ``q`` as their new
        target so they stay there; torques and modes are kept. A value outside the joint's limits
        is set (PyBullet's limit acts on it from the next step) with one warning line per joint.
        Spherical joints: :meth:`set_model_state`."""
        sel, qv = (np.arange(self.dof), self.initial_q) if q is None else self._values(q, "q", partial=True)
        self._not_degrees(sel, qv, who)
        self._warn_outside(sel, qv, who)
        qdv = self._velocities_for(sel, qd)
        if not len(sel):
            self.sim._changed()
            return
        p.resetJointStatesMultiDof(self.id, self._idx[sel].tolist(), targetValues=[[float(a)] for a in qv],
                                   targetVelocities=[[float(b)] for b in qdv], physicsClientId=self._client)
        for k, i in enumerate(sel):
            if int(i) in self._pos_target:
                force, gains = self._pos_target[int(i)]
                p.setJointMotorControl2(self.id, int(self._idx[i]), p.POSITION_CONTROL, targetPosition=float(qv[k]),
                                        targetVelocity=float(qdv[k]), force=force, physicsClientId=self._client,
                                        **gains)
        self.sim._changed()

    def change_dynamics(self, links: str | Sequence[str] | None = None, **kwargs: Any) -> None:
        """``p.changeDynamics(**kwargs)`` for the named link(s), default every link (base
        included), e.g. ``linearDamping=0, angularDamping=0`` to switch off PyBullet's default
        velocity damping (0.04 on every link) and ``jointDamping=0`` for the URDF's joint damping.
        Keywords are PyBullet's (:data:`DYNAMICS_KEYS`), values finite numbers (three for
        :data:`DYNAMICS_VECTORS`)."""
        if links is None:
            indices = list(self.body.links.values())
        else:
            names = [links] if isinstance(links, (str, int)) else list(links)
            indices = [self.body.link_index(n) for n in names]
        kwargs = {key: _dynamics_value(key, value) for key, value in kwargs.items()}
        for li in indices:
            p.changeDynamics(self.id, li, physicsClientId=self._client, **kwargs)

    def _broadcast(self, value: Any, n: int, what: str, nonneg: bool = False) -> np.ndarray:
        arr = _floats(value)
        if arr is not None and arr.ndim == 0:
            arr = np.full(n, float(arr))
        if arr is None or arr.shape != (n,) or not np.all(np.isfinite(arr)) or (nonneg and np.any(arr < 0)):
            raise ShapeError(f"{what} = {shown(value)}; expected one non-negative number or {n} of them")
        return arr

    def __repr__(self) -> str:
        return f"Robot({self.name!r}, dof={self.dof}, joints={list(self.joint_names)})"


def _floats(value: Any) -> np.ndarray | None:
    """``value`` as a float array, None when it is not numbers (text included)."""
    try:
        return real_array(value)
    except (TypeError, ValueError, OverflowError):
        return None


def _dynamics_value(key: str, value: Any) -> Any:
    """A ``change_dynamics`` keyword's value checked: a known key (else the close ones named),
    finite numbers (three for :data:`DYNAMICS_VECTORS`)."""
    if key not in DYNAMICS_KEYS:
        raise UnknownNameError("change_dynamics keyword", key, DYNAMICS_KEYS, "PyBullet's changeDynamics")
    what = f"change_dynamics({key}=...)"
    if key in ("activationState", "frictionAnchor"):  # PyBullet's flags
        if not isinstance(value, (int, np.integer)):
            raise ShapeError(f"{what} = {shown(value)}; expected an integer (PyBullet's flag)")
        return int(value)
    if key not in DYNAMICS_VECTORS:
        return finite_number(value, what, error=ShapeError)
    arr = _floats(value)
    if arr is None or arr.shape != (3,) or not np.all(np.isfinite(arr)):
        raise ShapeError(f"{what} = {shown(value)}; expected three finite numbers (x, y, z)")
    return arr.tolist()


def _rotation(quat: np.ndarray) -> np.ndarray:
    """3x3 rotation of a unit quaternion (x, y, z, w)."""
    return np.array(p.getMatrixFromQuaternion(np.asarray(quat, dtype=float).tolist())).reshape(3, 3)


__all__ = ["Robot"]
