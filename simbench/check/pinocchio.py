"""The one adapter between our joint order and Pinocchio's (joints matched by name), for
``simbench check``'s third voice, the benchmarks and the tests.

Our ``q`` lists the movable joints in PyBullet's order (``model.joint_names``); Pinocchio orders
its joints depth first by its own parser and gives a continuous joint two entries in ``q``
(``cos``, ``sin``). :class:`JointMap` converts vectors and matrices both ways (batched over
leading dimensions); :class:`PinocchioDynamics` runs ``pin.rnea`` / ``pin.crba`` in our order,
from Pinocchio's own URDF parser (:meth:`~PinocchioDynamics.from_urdf`, an independent
reading of the file) or from our model's arrays (:meth:`~PinocchioDynamics.from_model`, so
modified copies work).

Pinocchio is a test dependency (``pip install pin``), imported only here, when used.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import SimbenchError
from ..model import FIXED, GRAVITY, PRISMATIC, REVOLUTE

if TYPE_CHECKING:
    from ..model import RobotModel


def import_pinocchio() -> Any:
    """``pinocchio``, or a :class:`SimbenchError` naming the package to install."""
    try:
        import pinocchio
    except ImportError:
        raise SimbenchError("Pinocchio is not installed: pip install pin") from None
    return pinocchio


class JointMap:
    """Our joint order <-> a Pinocchio model's, joints matched by name.

    ``names`` is a :class:`~simbench.model.RobotModel` or its ``joint_names``. Every joint must
    exist in ``pm`` with one velocity entry, and ``pm`` must have no other velocity entries."""

    def __init__(self, names: "RobotModel | Sequence[str]", pm: Any):
        names = list(getattr(names, "joint_names", names))
        self.names, self.pm = names, pm
        self.idx_q, self.nq, self.idx_v = [], [], []
        for n in names:
            jid = pm.getJointId(n)
            if jid >= pm.njoints:
                raise SimbenchError(f"Pinocchio has no joint {n!r}; its joints: {list(pm.names)[1:]}")
            j = pm.joints[jid]
            if j.nv != 1:
                raise SimbenchError(f"Pinocchio's joint {n!r} is a {j.shortname()} with {j.nv} velocity "
                                    f"entries; expected 1")
            self.idx_q.append(j.idx_q)
            self.nq.append(j.nq)
            self.idx_v.append(j.idx_v)
        if pm.nv != len(names):
            raise SimbenchError(f"Pinocchio's model has {pm.nv} velocity entries; expected {len(names)}")
        n = len(names)
        self.P = np.zeros((pm.nv, n))  # v_pin = P v_ours
        self.P[self.idx_v, np.arange(n)] = 1.0
        self._cont = np.array([k for k in range(n) if self.nq[k] == 2], dtype=int)
        self._plain = np.array([k for k in range(n) if self.nq[k] == 1], dtype=int)

    def q(self, q: np.ndarray) -> np.ndarray:
        """(..., n) our q -> (..., pm.nq) Pinocchio's (a continuous joint as cos, sin)."""
        q = np.asarray(q, float)
        out = np.zeros(q.shape[:-1] + (self.pm.nq,))
        iq = np.asarray(self.idx_q, dtype=int)
        out[..., iq[self._plain]] = q[..., self._plain]
        out[..., iq[self._cont]] = np.cos(q[..., self._cont])
        out[..., iq[self._cont] + 1] = np.sin(q[..., self._cont])
        return out

    def v(self, v: np.ndarray) -> np.ndarray:
        """(..., n) our velocity-space vector -> Pinocchio's."""
        v = np.asarray(v, float)
        out = np.zeros(v.shape[:-1] + (self.pm.nv,))
        out[..., self.idx_v] = v
        return out

    def back(self, v_pin: np.ndarray) -> np.ndarray:
        """(..., pm.nv) Pinocchio velocity-space vector (e.g. torques) -> our order."""
        return np.asarray(v_pin)[..., self.idx_v]

    def back_matrix(self, M_pin: np.ndarray) -> np.ndarray:
        """(..., nv, nv) Pinocchio matrix -> our order."""
        M_pin = np.asarray(M_pin)
        return M_pin[..., self.idx_v, :][..., :, self.idx_v]


class PinocchioDynamics:
    """``pin.rnea`` / ``pin.crba`` in our joint order, batched over leading dimensions."""

    def __init__(self, pm: Any, joints: JointMap, label: str = "pinocchio"):
        self.pin = import_pinocchio()
        self.pm, self.map, self.label = pm, joints, label
        self.data = pm.createData()

    @classmethod
    def from_urdf(cls, path: str, names: "RobotModel | Sequence[str]") -> "PinocchioDynamics":
        """Pinocchio's own URDF parser (an independent reading of the file)."""
        pin = import_pinocchio()
        try:
            pm = pin.buildModelFromUrdf(str(path))
        except Exception as exc:  # Pinocchio raises ValueError / RuntimeError on odd files
            raise SimbenchError(f"Pinocchio cannot read the URDF: {' '.join(str(exc).split())[:160]}") from None
        return cls(pm, JointMap(names, pm), "pinocchio (its URDF parser)")

    @classmethod
    def from_model(cls, model: "RobotModel") -> "PinocchioDynamics":
        """A Pinocchio model built from our model's arrays (joint frames, axes, inertials)."""
        pin = import_pinocchio()
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
                axis = np.array(model.joint_axis[j], float)
                kind = pin.JointModelRevoluteUnaligned if code == REVOLUTE else pin.JointModelPrismaticUnaligned
                joint_of[k] = pm.addJoint(joint_of[par], kind(axis), M, model.joint_all_names[j])
                place[k] = pin.SE3.Identity()
            else:
                raise SimbenchError(f"the Pinocchio adapter does not handle {model.joint_type[j]} joint "
                                    f"{model.joint_all_names[j]!r}")
            if joint_of[k] != 0:
                inertia = pin.Inertia(float(model.link_mass[k]), np.array(model.link_com[k], float),
                                      np.array(model.link_inertia[k], float))
                pm.appendBodyToJoint(joint_of[k], inertia, place[k])
        return cls(pm, JointMap(model, pm), "pinocchio (built from the simbench model)")

    def inverse_dynamics(self, q: Any, qd: Any, qdd: Any, *,
                         gravity: Sequence[float] = GRAVITY) -> np.ndarray:
        """``pin.rnea`` per row; gravity in the root frame."""
        self.pm.gravity = self.pin.Motion(np.r_[np.asarray(gravity, float), 0.0, 0.0, 0.0])
        q, qd, qdd = np.broadcast_arrays(*(np.asarray(a, float) for a in (q, qd, qdd)))
        Q, V, A = self.map.q(q), self.map.v(qd), self.map.v(qdd)
        flat = [x.reshape(-1, x.shape[-1]) for x in (Q, V, A)]
        out = np.array([self.pin.rnea(self.pm, self.data, a, b, c).copy() for a, b, c in zip(*flat)])
        return self.map.back(out).reshape(q.shape)

    def mass_matrix(self, q: Any) -> np.ndarray:
        """``pin.crba`` per row (made symmetric: Pinocchio fills the upper triangle)."""
        q = np.asarray(q, float)
        Q = self.map.q(q).reshape(-1, self.pm.nq)
        out = []
        for a in Q:
            M = self.pin.crba(self.pm, self.data, a)
            out.append(np.triu(M) + np.triu(M, 1).T)
        return self.map.back_matrix(np.array(out)).reshape(q.shape + q.shape[-1:])


__all__ = ["JointMap", "PinocchioDynamics", "import_pinocchio"]
