"""Helpers for the dynamics tests: declared oracles, the pybullet_data corpus, Pinocchio models and
the mapping between our q / v order and Pinocchio's."""
from __future__ import annotations

import glob
import hashlib
import importlib
import os
import re

import numpy as np
import pytest

from simbench.model import FIXED, PRISMATIC, REVOLUTE, SPHERICAL
from simbench.paths import assets_dir

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ASSETS = str(assets_dir() / "urdf")
MOVABLE = re.compile(rb"""type\s*=\s*["'](revolute|continuous|prismatic|spherical)["']""")


def require(name: str):
    """Import a declared test dependency (pin, sympy, ...): a skip outside CI, a failure in CI
    (where .ci/run installs it), so that an oracle suite never goes green by being skipped."""
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        if os.environ.get("CI"):
            pytest.fail(f"{name} is a declared test dependency and is missing in CI: {exc}")
        pytest.skip(f"{name} is not installed ({exc}); pip install -e '.[test]'",
                    allow_module_level=True)


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


def pin_model_from(model):
    """A Pinocchio model built joint by joint from our model's numbers (origins, axes, inertias),
    with ``JointModelRevoluteUnaligned`` / ``PrismaticUnaligned`` / ``Spherical`` and a
    ``JointModelFreeFlyer`` root when the model floats; links attached by fixed joints become
    bodies appended to their parent joint, and every link a BODY frame. For files Pinocchio's
    URDF parser does not read (spherical joints are a PyBullet extension of URDF)."""
    pin = require("pinocchio")
    pm = pin.Model()
    pm.gravity.linear = np.asarray(model.gravity, dtype=float)

    def inertia(k):
        return pin.Inertia(float(model.link_mass[k]), np.array(model.link_com[k]),
                           np.array(model.link_inertia[k]))

    joint_of = {}   # link -> (pin joint, placement of the link in that joint's frame, frame id)
    if model.floating_base:
        jid = pm.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), "root_joint")
    else:
        jid = 0
    fid = pm.addFrame(pin.Frame(model.link_names[0], jid, 0, pin.SE3.Identity(), pin.FrameType.BODY))
    pm.appendBodyToJoint(jid, inertia(0), pin.SE3.Identity())
    joint_of[0] = (jid, pin.SE3.Identity(), fid)
    for k in range(1, model.nlinks):
        j = k - 1
        pj, place, pf = joint_of[int(model.link_parent[k])]
        T = np.array(model.joint_origin[j])
        placement = place * pin.SE3(T[:3, :3], T[:3, 3])
        code, name = int(model.joint_type_code[j]), model.joint_all_names[j]
        if code == FIXED:
            fid = pm.addFrame(pin.Frame(model.link_names[k], pj, pf, placement, pin.FrameType.BODY))
            pm.appendBodyToJoint(pj, inertia(k), placement)
            joint_of[k] = (pj, placement, fid)
            continue
        axis = np.array(model.joint_axis[j])
        jm = {REVOLUTE: lambda: pin.JointModelRevoluteUnaligned(axis),
              PRISMATIC: lambda: pin.JointModelPrismaticUnaligned(axis),
              SPHERICAL: pin.JointModelSpherical}[code]()
        jid = pm.addJoint(pj, jm, placement, name)
        fid = pm.addFrame(pin.Frame(model.link_names[k], jid, pf, pin.SE3.Identity(), pin.FrameType.BODY))
        pm.appendBodyToJoint(jid, inertia(k), pin.SE3.Identity())
        joint_of[k] = (jid, pin.SE3.Identity(), fid)
    return pm


class PinMap:
    """Our q / v order <-> a Pinocchio model's (joints matched by name; the free-flyer root as
    ``root_joint``; continuous joints of a URDF-built Pinocchio model as (cos, sin))."""

    def __init__(self, model, pm):
        self.model, self.pm = model, pm
        self.Pv = np.zeros((pm.nv, model.nv))      # v_pin = Pv v_ours
        self.qmap: list[tuple[int, int, int, int]] = []   # (ours, pin, count, pin nq)
        assert pm.nv == model.nv, (pm.nv, model.nv)
        if model.floating_base:
            root = pm.joints[pm.getJointId("root_joint")]
            assert root.nq == 7 and root.idx_q == 0
            self.qmap.append((0, 0, 7, 7))
            self.Pv[:6, :6] = np.eye(6)
        for j in np.flatnonzero(np.asarray(model.joint_type_code) != FIXED):
            name = model.joint_all_names[j]
            jid = pm.getJointId(name)
            assert jid < pm.njoints, f"Pinocchio has no joint {name!r}"
            pj = pm.joints[jid]
            iq, iv = int(model.joint_q_start[j]), int(model.joint_v_start[j])
            n = 3 if model.joint_type_code[j] == SPHERICAL else 1
            assert pj.nv == n, (name, pj.shortname())
            self.Pv[pj.idx_v:pj.idx_v + n, iv:iv + n] = np.eye(n)
            self.qmap.append((iq, pj.idx_q, 4 if n == 3 else 1, pj.nq))

    def q(self, q):
        out = np.zeros(self.pm.nq)
        for iq, pq, n, pn in self.qmap:
            if pn == 2 and n == 1:   # continuous joint: (cos, sin)
                out[pq], out[pq + 1] = np.cos(q[iq]), np.sin(q[iq])
            else:
                out[pq:pq + n] = q[iq:iq + n]
        return out

    def v(self, v):
        return self.Pv @ v

    def back(self, v_pin):
        """Pinocchio velocity-space vector -> our order."""
        return self.Pv.T @ v_pin

    def back_matrix(self, M_pin):
        return self.Pv.T @ M_pin @ self.Pv

    @property
    def P(self):
        return self.Pv


def rel_err(a, b) -> float:
    a, b = np.asarray(a), np.asarray(b)
    scale = max(np.abs(a).max(initial=0.0), np.abs(b).max(initial=0.0), 1e-300)
    return float(np.abs(a - b).max(initial=0.0) / scale)


def symmetric(M_pin):
    """Pinocchio's crba fills the upper triangle only."""
    return np.triu(M_pin) + np.triu(M_pin, 1).T
