"""Helpers for the dynamics tests: the pybullet_data corpus and the Pinocchio joint mapping."""
from __future__ import annotations

import glob
import hashlib
import os
import re

import numpy as np

from simbench.paths import assets_dir

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ASSETS = str(assets_dir() / "urdf")
MOVABLE = re.compile(rb"""type\s*=\s*["'](revolute|continuous|prismatic)["']""")


def asset(name: str) -> str:
    return os.path.join(ASSETS, name)


def movable_corpus() -> list[str]:
    """pybullet_data URDFs that have a movable joint, identical files once."""
    import pybullet_data

    data = pybullet_data.getDataPath()
    seen, out = set(), []
    for path in sorted(glob.glob(os.path.join(data, "**", "*.urdf"), recursive=True)):
        text = open(path, "rb").read()
        if not MOVABLE.search(text):
            continue
        digest = hashlib.sha1(text).hexdigest()
        if digest not in seen:
            seen.add(digest)
            out.append(path)
    return out


class PinMap:
    """Our joint order <-> a Pinocchio model (joints matched by name)."""

    def __init__(self, model, pm):
        self.model, self.pm = model, pm
        names = list(model.joint_names)
        self.idx_q, self.nq, self.idx_v = [], [], []
        for n in names:
            jid = pm.getJointId(n)
            assert jid < pm.njoints, f"Pinocchio has no joint {n!r}"
            j = pm.joints[jid]
            self.idx_q.append(j.idx_q)
            self.nq.append(j.nq)
            self.idx_v.append(j.idx_v)
            assert j.nv == 1, (n, j.shortname())
        assert pm.nv == model.dof, (pm.nv, model.dof)
        self.P = np.zeros((pm.nv, model.dof))       # v_pin = P v_ours
        self.P[self.idx_v, np.arange(model.dof)] = 1.0

    def q(self, q: np.ndarray) -> np.ndarray:
        out = np.zeros(self.pm.nq)
        for i, (iq, nq) in enumerate(zip(self.idx_q, self.nq)):
            if nq == 2:   # continuous joint: (cos, sin)
                out[iq], out[iq + 1] = np.cos(q[i]), np.sin(q[i])
            else:
                out[iq] = q[i]
        return out

    def v(self, v: np.ndarray) -> np.ndarray:
        return self.P @ v

    def back(self, v_pin: np.ndarray) -> np.ndarray:
        """Pinocchio velocity-space vector -> our joint order."""
        return self.P.T @ v_pin

    def back_matrix(self, M_pin: np.ndarray) -> np.ndarray:
        return self.P.T @ M_pin @ self.P


def rel_err(a, b) -> float:
    a, b = np.asarray(a), np.asarray(b)
    scale = max(np.abs(a).max(initial=0.0), np.abs(b).max(initial=0.0), 1e-300)
    return float(np.abs(a - b).max(initial=0.0) / scale)
