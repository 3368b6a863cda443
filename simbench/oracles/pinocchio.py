"""Pinocchio as an oracle: the project's one adapter between simbench's joint order and a
Pinocchio model's, used by ``simbench check`` (its third voice), the benchmarks and the tests.

Our ``q`` and ``v`` follow :class:`~simbench.model.RobotModel` (movable joints in PyBullet's
order; a floating base first, ``[x y z qx qy qz qw]`` and ``[v; w]`` in the base frame; a
spherical joint as a quaternion ``x y z w`` and its angular velocity in the child frame).
Pinocchio orders its joints depth first by its own parser, gives a continuous joint two entries
in ``q`` (``cos``, ``sin``) and calls the free flyer ``root_joint``; its free-flyer and spherical
conventions are the ones simbench adopted, so those blocks copy as they are.

* :func:`pinocchio_model`: Pinocchio's model of a :class:`~simbench.model.RobotModel`, from its
  own URDF parser (:func:`urdf_model`: an independent reading of the file, with
  ``JointModelFreeFlyer`` for a floating base) or built joint by joint from our numbers
  (:func:`built_model`: modified copies, and spherical joints, a PyBullet extension of URDF
  that Pinocchio's parser refuses);
* :class:`PinocchioMap`: vectors and matrices between the two orders, batched over leading
  dimensions, joints matched by name;
* :class:`PinocchioDynamics`: ``pin.rnea`` / ``pin.crba`` / ``pin.aba`` in our order, batched.

Pinocchio is a test dependency (``pip install pin``), imported only here, when used. This
module sits beside :mod:`simbench.dynamics` (which never imports Pinocchio), under the
checks, benchmarks and tests that use it.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import MissingExtraError, ShapeError, SimbenchError, shown
from ..model import FIXED, PRISMATIC, REVOLUTE, SPHERICAL

if TYPE_CHECKING:
    from ..model import RobotModel


def import_pinocchio() -> Any:
    """``pinocchio``, or a :class:`~simbench.errors.MissingExtraError` naming the extra."""
    from ..extras import require

    return require("pinocchio", "test", "Pinocchio as a reference (pip install pin)")


# ---------------------------------------------------------------------- Pinocchio's model
def urdf_model(model: "RobotModel", xml: str | bytes | None = None) -> Any:
    """Pinocchio's own parse of the model's URDF (``xml``, the file's text, when given: e.g. an
    expanded xacro file; else the file ``model.source``), with ``JointModelFreeFlyer`` for a
    floating base, gravity ``model.gravity`` and a welded root at ``model.root_pose`` (gravity then
    in the world, ``R g``). :class:`SimbenchError` when Pinocchio refuses
    the file or its joints do not map onto ours."""
    if not hasattr(model, "floating_base"):   # a file name, say
        from ..joint_space import not_a_model
        raise not_a_model(model)
    pin = import_pinocchio()
    root = (pin.JointModelFreeFlyer(),) if model.floating_base else ()
    try:
        if xml is not None:
            pm = pin.buildModelFromXML(xml.decode() if isinstance(xml, bytes) else xml, *root)
        else:
            pm = pin.buildModelFromUrdf(str(model.source), *root)
    except Exception as exc:  # noqa: BLE001 - Pinocchio raises ValueError / RuntimeError on odd files
        raise SimbenchError(f"Pinocchio cannot read the URDF: {' '.join(str(exc).split())[:160]}") from None
    PinocchioMap(model, pm)  # the joints must map
    pm.gravity.linear = np.asarray(model.gravity, dtype=float)
    return _placed(pm, model)


def _placed(pm: Any, model: "RobotModel") -> Any:
    """``pm`` with a welded root moved to ``model.root_pose`` (the joints and frames on the
    universe placed by it) and gravity turned into the world, ``R g``: the same world as our
    kinematics (poses, centre of mass, Jacobians) and the same torques."""
    if model.root_pose is None or model.floating_base:
        return pm
    pin = import_pinocchio()
    T = np.asarray(model.root_pose, dtype=float)
    P = pin.SE3(T[:3, :3].copy(), T[:3, 3].copy())
    for j in range(1, pm.njoints):
        if pm.parents[j] == 0:
            pm.jointPlacements[j] = P * pm.jointPlacements[j]
    for frame in pm.frames:
        if frame.parentJoint == 0 and frame.name != "universe":
            frame.placement = P * frame.placement
    pm.gravity.linear = _world_gravity(model, model.gravity)
    return pm


def _world_gravity(model: "RobotModel", gravity: Sequence[float]) -> np.ndarray:
    """Gravity given in the model's root frame (ours), in Pinocchio's world: turned by a welded
    root's rotation at ``model.root_pose``."""
    g = np.asarray(gravity, dtype=float)
    pose = model.root_pose
    return g if pose is None or model.floating_base else np.asarray(pose)[:3, :3] @ g


def built_model(model: "RobotModel") -> Any:
    """A Pinocchio model built joint by joint from our numbers (origins, axes, inertias):
    ``JointModelRevoluteUnaligned`` / ``PrismaticUnaligned`` / ``Spherical``, a
    ``JointModelFreeFlyer`` root when the model floats, links attached by fixed joints appended
    as bodies of their parent joint, every link a BODY frame; gravity ``model.gravity``."""
    pin = import_pinocchio()
    pm = pin.Model()
    pm.gravity.linear = np.asarray(model.gravity, dtype=float)

    def inertia(k: int) -> Any:
        return pin.Inertia(float(model.link_mass[k]), np.array(model.link_com[k], float),
                           np.array(model.link_inertia[k], float))

    jid = pm.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), "root_joint") \
        if model.floating_base else 0
    fid = pm.addFrame(pin.Frame(model.link_names[0], jid, 0, pin.SE3.Identity(), pin.FrameType.BODY))
    pm.appendBodyToJoint(jid, inertia(0), pin.SE3.Identity())
    joint_of = {0: (jid, pin.SE3.Identity(), fid)}
    for k in range(1, model.nlinks):
        j = k - 1
        pj, place, pf = joint_of[int(model.link_parent[k])]
        T = np.array(model.joint_origin[j])
        placement = place * pin.SE3(T[:3, :3].copy(), T[:3, 3].copy())
        code, name = int(model.joint_type_code[j]), model.joint_all_names[j]
        axis = np.array(model.joint_axis[j], float)
        if code == FIXED:
            fid = pm.addFrame(pin.Frame(model.link_names[k], pj, pf, placement, pin.FrameType.BODY))
            pm.appendBodyToJoint(pj, inertia(k), placement)
            joint_of[k] = (pj, placement, fid)
            continue
        if code == REVOLUTE:
            jm = pin.JointModelRevoluteUnaligned(axis)
        elif code == PRISMATIC:
            jm = pin.JointModelPrismaticUnaligned(axis)
        elif code == SPHERICAL:
            jm = pin.JointModelSpherical()
        else:
            raise SimbenchError(f"the Pinocchio adapter does not handle {model.joint_type[j]} joint {name!r}")
        jid = pm.addJoint(pj, jm, placement, name)
        fid = pm.addFrame(pin.Frame(model.link_names[k], jid, pf, pin.SE3.Identity(), pin.FrameType.BODY))
        pm.appendBodyToJoint(jid, inertia(k), pin.SE3.Identity())
        joint_of[k] = (jid, pin.SE3.Identity(), fid)
    return _placed(pm, model)


def pinocchio_model(model: "RobotModel", xml: str | bytes | None = None) -> Any:
    """:func:`urdf_model`, or :func:`built_model` where Pinocchio's parser refuses the file
    (spherical joints) or its joints do not map onto ours."""
    if not hasattr(model, "floating_base"):   # a file name, say
        from ..joint_space import not_a_model
        raise not_a_model(model)
    try:
        return urdf_model(model, xml)
    except MissingExtraError:
        raise
    except SimbenchError:
        return built_model(model)


# ---------------------------------------------------------------------- the joint-order map
class PinocchioMap:
    """Our q / v order <-> Pinocchio model ``pm``'s, joints matched by name, batched over
    leading dimensions: :meth:`q` and :meth:`v` map ours to Pinocchio's, :meth:`q_back`,
    :meth:`back` and :meth:`back_matrix` Pinocchio's to ours. ``P`` is the (pm.nv, nv) permutation matrix with
    ``v_pin = P @ v``.

    The free flyer (``root_joint``, first) and spherical joints copy as blocks (the same
    conventions); a continuous joint of a URDF-parsed model becomes ``(cos q, sin q)``."""

    def __init__(self, model: "RobotModel", pm: Any):
        if not hasattr(model, "movable") or not hasattr(pm, "nv"):
            raise SimbenchError(f"PinocchioMap({shown(model)}, {type(pm).__name__}); expected (a simbench RobotModel, a "
                                "pinocchio.Model), e.g. PinocchioMap(model, pinocchio_model(model))")
        if pm.nv != model.nv:
            raise SimbenchError(f"Pinocchio's model has nv = {pm.nv}; simbench's {model.name!r} has "
                                f"nv = {model.nv}")
        self.model, self.pm = model, pm
        ours_q: list[int] = []   # entries copied as they are: ours -> Pinocchio's
        pin_q: list[int] = []
        cont_ours: list[int] = []  # continuous joints: ours -> Pinocchio's (cos), +1 (sin)
        cont_pin: list[int] = []
        pin_of_v = np.full(model.nv, -1, dtype=int)
        if model.floating_base:
            jid = pm.getJointId("root_joint")
            root = pm.joints[jid] if jid < pm.njoints else None
            if root is None or root.nq != 7 or root.nv != 6:
                raise SimbenchError("Pinocchio's model has no free-flyer root_joint (expected "
                                    "JointModelFreeFlyer for a floating base)")
            ours_q += range(7)
            pin_q += range(root.idx_q, root.idx_q + 7)
            pin_of_v[:6] = np.arange(root.idx_v, root.idx_v + 6)
        for j in model.movable:
            name = model.joint_all_names[j]
            jid = pm.getJointId(name)
            if jid >= pm.njoints:
                raise SimbenchError(f"Pinocchio has no joint {name!r}; its joints: {list(pm.names)[1:]}")
            pj = pm.joints[jid]
            nv = 3 if int(model.joint_type_code[j]) == SPHERICAL else 1
            if pj.nv != nv:
                raise SimbenchError(f"joint {name!r}: Pinocchio's {pj.shortname()} has {pj.nv} velocity "
                                    f"entries, simbench's {nv}")
            iq, iv = int(model.joint_q_start[j]), int(model.joint_v_start[j])
            pin_of_v[iv:iv + nv] = np.arange(pj.idx_v, pj.idx_v + nv)
            if nv == 1 and pj.nq == 2:
                cont_ours.append(iq)
                cont_pin.append(pj.idx_q)
            else:
                n = 4 if nv == 3 else 1
                if pj.nq != n:
                    raise SimbenchError(f"joint {name!r}: Pinocchio's {pj.shortname()} has {pj.nq} "
                                        f"configuration entries, simbench's {n}")
                ours_q += range(iq, iq + n)
                pin_q += range(pj.idx_q, pj.idx_q + n)
        self._ours_q, self._pin_q = np.array(ours_q, int), np.array(pin_q, int)
        self._cont_ours, self._cont_pin = np.array(cont_ours, int), np.array(cont_pin, int)
        #: Pinocchio's index of each of our velocity entries
        self.pin_of_v = pin_of_v
        covered = len(pin_q) + 2 * len(cont_pin)
        if covered != pm.nq or sorted(pin_of_v.tolist()) != list(range(pm.nv)):
            raise SimbenchError(f"Pinocchio's model has joints simbench's {model.name!r} does not "
                                f"(nq {pm.nq} vs {covered} mapped)")

    @property
    def P(self) -> np.ndarray:
        """(pm.nv, nv) with ``v_pin = P @ v`` and ``v = P.T @ v_pin``."""
        out = np.zeros((self.pm.nv, self.model.nv))
        out[self.pin_of_v, np.arange(self.model.nv)] = 1.0
        return out

    def q(self, q: Any) -> np.ndarray:
        """(..., nq) our configuration -> (..., pm.nq) Pinocchio's."""
        q = np.asarray(q, dtype=float)
        out = np.empty(q.shape[:-1] + (self.pm.nq,))
        out[..., self._pin_q] = q[..., self._ours_q]
        out[..., self._cont_pin] = np.cos(q[..., self._cont_ours])
        out[..., self._cont_pin + 1] = np.sin(q[..., self._cont_ours])
        return out

    def v(self, v: Any) -> np.ndarray:
        """(..., nv) our velocity-space vector (velocity, acceleration, torque) -> Pinocchio's."""
        v = np.asarray(v, dtype=float)
        out = np.empty(v.shape[:-1] + (self.pm.nv,))
        out[..., self.pin_of_v] = v
        return out

    def q_back(self, q_pin: Any) -> np.ndarray:
        """(..., pm.nq) Pinocchio's configuration -> (..., nq) ours (a continuous joint's
        ``(cos, sin)`` becomes ``atan2(sin, cos)``, in (-pi, pi])."""
        given = q_pin
        try:
            q_pin = np.asarray(q_pin, dtype=float)
        except (TypeError, ValueError):
            raise ShapeError(f"q_pin = {shown(given)}; expected (..., {self.pm.nq}) numbers, Pinocchio's q") from None
        if q_pin.shape[-1:] != (self.pm.nq,):
            raise ShapeError(f"q_pin has shape {q_pin.shape}; expected (..., {self.pm.nq}), Pinocchio's nq")
        if not np.isfinite(q_pin).all():
            raise ShapeError(f"q_pin = {shown(given)} holds nan or inf; expected finite numbers")
        norms = np.hypot(q_pin[..., self._cont_pin], q_pin[..., self._cont_pin + 1])
        if norms.size and not (norms > 1e-9).all():
            raise ShapeError("q_pin holds a continuous joint's (cos, sin) = (0, 0); expected a point of the unit circle")
        out = np.empty(q_pin.shape[:-1] + (self.model.nq,))
        out[..., self._ours_q] = q_pin[..., self._pin_q]
        out[..., self._cont_ours] = np.arctan2(q_pin[..., self._cont_pin + 1], q_pin[..., self._cont_pin])
        return out

    def back(self, v_pin: Any) -> np.ndarray:
        """(..., pm.nv) Pinocchio velocity-space vector -> (..., nv) ours."""
        return np.asarray(v_pin)[..., self.pin_of_v]

    def back_matrix(self, M_pin: Any) -> np.ndarray:
        """(..., pm.nv, pm.nv) Pinocchio matrix (e.g. M) -> (..., nv, nv) ours."""
        M_pin = np.asarray(M_pin)
        return M_pin[..., self.pin_of_v[:, None], self.pin_of_v[None, :]]


# ---------------------------------------------------------------------- dynamics in our order
def symmetric(M_pin: np.ndarray) -> np.ndarray:
    """Pinocchio's ``crba`` fills the upper triangle only: the full symmetric matrix."""
    return np.triu(M_pin) + np.triu(M_pin, 1).T


class PinocchioDynamics:
    """``pin.rnea`` / ``pin.crba`` / ``pin.aba`` in our order, batched over leading dimensions.

    ``pm``: Pinocchio's model (default :func:`pinocchio_model`); the constructors
    :meth:`from_urdf` (Pinocchio's own parser, an independent reading of the file) and
    :meth:`from_model` (built from our arrays, so modified copies work) say which."""

    def __init__(self, model: "RobotModel", pm: Any = None, label: str = "pinocchio"):
        self.pin = import_pinocchio()
        self.model = model
        self.pm = pinocchio_model(model) if pm is None else pm
        self.map = PinocchioMap(model, self.pm)
        self.data = self.pm.createData()
        self.label = label

    @classmethod
    def from_urdf(cls, model: "RobotModel", xml: str | bytes | None = None) -> "PinocchioDynamics":
        """Pinocchio's URDF parser on the model's file (or its text ``xml``); see :func:`urdf_model`."""
        return cls(model, urdf_model(model, xml), "pinocchio (its URDF parser)")

    @classmethod
    def from_model(cls, model: "RobotModel") -> "PinocchioDynamics":
        """A Pinocchio model built from our model's numbers; see :func:`built_model`."""
        return cls(model, built_model(model), "pinocchio (built from the simbench model)")

    def _gravity(self, gravity: Sequence[float] | None) -> None:
        """Gravity in the root frame (ours), set in Pinocchio's world (:func:`_world_gravity`)."""
        self.pm.gravity.linear = _world_gravity(self.model, self.model.gravity if gravity is None else gravity)

    def inverse_dynamics(self, q: Any, v: Any, a: Any, *, gravity: Sequence[float] | None = None) -> np.ndarray:
        """``pin.rnea`` per row: (..., nq), (..., nv), (..., nv) -> (..., nv); gravity in the
        root frame (default ``model.gravity``)."""
        return self._per_row(self.pin.rnea, q, v, a, gravity)

    def mass_matrix(self, q: Any) -> np.ndarray:
        """``pin.crba`` per row (made symmetric): (..., nq) -> (..., nv, nv)."""
        Q = self.map.q(q)
        lead = Q.shape[:-1]
        out = np.array([symmetric(self.pin.crba(self.pm, self.data, x)) for x in Q.reshape(-1, self.pm.nq)])
        return self.map.back_matrix(out.reshape(lead + (self.pm.nv, self.pm.nv)))

    def forward_dynamics(self, q: Any, v: Any, tau: Any, *, gravity: Sequence[float] | None = None) -> np.ndarray:
        """``pin.aba`` per row: (..., nq), (..., nv), (..., nv) -> accelerations (..., nv)."""
        return self._per_row(self.pin.aba, q, v, tau, gravity)

    def _per_row(self, fn: Any, q: Any, v: Any, x: Any, gravity: Sequence[float] | None) -> np.ndarray:
        """``fn(model, data, q, v, x)`` (``pin.rnea`` or ``pin.aba``) on every row of the
        broadcast batch, in our joint order."""
        self._gravity(gravity)
        Q, V, X = self.map.q(q), self.map.v(v), self.map.v(x)
        lead = np.broadcast_shapes(Q.shape[:-1], V.shape[:-1], X.shape[:-1])
        Q, V, X = (np.broadcast_to(y, lead + y.shape[-1:]).reshape(-1, y.shape[-1]) for y in (Q, V, X))
        out = np.array([fn(self.pm, self.data, a, b, c).copy() for a, b, c in zip(Q, V, X)])
        return self.map.back(out.reshape(lead + (self.pm.nv,)))


__all__ = ["PinocchioMap", "PinocchioDynamics", "pinocchio_model", "urdf_model", "built_model",
           "import_pinocchio", "symmetric"]
