"""Spherical joints in ``simbench check``: PyBullet's convention and its pivot defect, shown by
direct PyBullet calls, and the CLI explaining both robots of pybullet_data that have them.

What PyBullet does (measured here; bullet3's btInverseDynamics tree, built from the btMultiBody by
btMultiBodyTreeCreator, is what ``calculateInverseDynamics`` / ``calculateMassMatrix`` run):

* positions: 3 numbers per spherical joint, roll, pitch, yaw as ``p.getEulerFromQuaternion``
  gives them (R = Rz(yaw) Ry(pitch) Rx(roll)); velocities and accelerations: the child's angular
  velocity relative to its parent and its derivative; output: the joint moment. All of it in
  PyBullet's frame of the child, its inertial frame (axes R_in from ``getDynamicsInfo``): the
  rotation is R_in^T R R_in (R ours, in the URDF child frame), rates and moments R_in^T x;
* the joint sits at the parent link's origin (the parent's pivot), not at the joint's
  ``<origin xyz>``. The oracle states this in URDF terms: simbench's dynamics on a copy of the
  file whose spherical joints have ``xyz="0 0 0"`` equals PyBullet on the original file.
"""
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pybullet as p
import pytest
from scipy.spatial.transform import Rotation

from simbench import dynamics
from simbench.check.bullet import rpy_from_quaternion
from simbench.model import RobotModel
from simbench.paths import resolve_urdf

HUMANOID, LIMIT = "pybullet_data:humanoid/humanoid.urdf", "pybullet_data:spherical_joint_limit.urdf"
DEFECT = "simbench:urdf/defects/spherical_joint.urdf"  # joint2's child has a rotated inertial frame
G = (0.0, 0.0, -9.81)


def pivot_at_parent(path, out, zero_inertia=()):
    """The URDF with every spherical joint's origin xyz set to 0 (and the named links' inertia
    zeroed, as PyBullet does for links that break the triangle inequality)."""
    text = re.sub(r"</robot>.*", "</robot>", path.read_text(errors="replace"), flags=re.S)
    root = ET.fromstring(text)
    moved = 0
    for joint in root.iter("joint"):
        if joint.get("type") == "spherical":
            joint.find("origin").set("xyz", "0 0 0")
            moved += 1
    for link in root.iter("link"):
        if link.get("name") in zero_inertia:
            link.find("inertial/inertia").attrib.update({k: "0" for k in ("ixx", "iyy", "izz", "ixy", "ixz", "iyz")})
    out.write_text(ET.tostring(root, encoding="unicode"))
    return moved


def pybullet_direct(path, q, v, a, fixed=True, inertial_axes=True):
    """PyBullet called directly, in our q, v and outputs: each spherical quaternion (x y z w, at
    PyBullet's own q index) conjugated into the child's inertial axes and turned into 3 numbers
    with ``p.getEulerFromQuaternion``; its rates rotated into those axes, its moments back."""
    c = p.connect(p.DIRECT)
    try:
        p.setGravity(*G, physicsClientId=c)
        b = p.loadURDF(str(path), useFixedBase=fixed, flags=p.URDF_USE_INERTIA_FROM_FILE, physicsClientId=c)
        joints = [p.getJointInfo(b, i, physicsClientId=c) for i in range(p.getNumJoints(b, physicsClientId=c))]
        R_in = {j[0]: Rotation.from_quat(p.getDynamicsInfo(b, j[0], physicsClientId=c)[4] if inertial_axes
                                         else [0, 0, 0, 1]) for j in joints}
        T = np.eye(len(v[0]))  # PyBullet's rates = T @ ours
        for j in joints:
            if j[2] == p.JOINT_SPHERICAL:
                T[j[4] - 6:j[4] - 3, j[4] - 6:j[4] - 3] = R_in[j[0]].as_matrix().T
        taus, Ms = [], []
        for qr, vr, ar in zip(q, v, a):
            pos = []
            for j in joints:
                if j[2] == p.JOINT_SPHERICAL:
                    R = R_in[j[0]].inv() * Rotation.from_quat(qr[j[3] - 7:j[3] - 3]) * R_in[j[0]]
                    pos += p.getEulerFromQuaternion(R.as_quat().tolist())
                elif j[2] != p.JOINT_FIXED:
                    pos.append(qr[j[3] - 7])
            tau = p.calculateInverseDynamics(b, pos, list(T @ vr), list(T @ ar), physicsClientId=c)
            taus.append(T.T @ np.array(tau))
            Ms.append(T.T @ np.array(p.calculateMassMatrix(b, pos, physicsClientId=c)) @ T)
        return np.array(taus), np.array(Ms)
    finally:
        p.disconnect(physicsClientId=c)


@pytest.mark.parametrize("name, zeroed", [(HUMANOID, ()), (LIMIT, ("neck",)), (DEFECT, ())])
def test_pybullet_equals_simbench_with_spherical_joints_at_the_parents_pivot(tmp_path, name, zeroed):
    path = resolve_urdf(name)
    edited = tmp_path / "pivot.urdf"
    assert pivot_at_parent(path, edited, zeroed) == (8 if name == HUMANOID else 1)
    model, moved = RobotModel.from_urdf(path), RobotModel.from_urdf(edited)
    rng = np.random.default_rng(3)
    n = 30
    q = model.random_configuration(rng, n)
    v, a = rng.uniform(-2, 2, (n, model.nv)), rng.uniform(-5, 5, (n, model.nv))
    tau_b, M_b = pybullet_direct(path, q, v, a)
    assert tau_b.shape == (n, model.nv) and M_b.shape == (n, model.nv, model.nv)
    tau, M = dynamics.inverse_dynamics(moved, q, v, a), dynamics.mass_matrix(moved, q)
    assert np.abs(tau - tau_b).max() <= 1e-9 * max(1.0, np.abs(tau_b).max())
    assert np.abs(M - M_b).max() <= 1e-9 * max(1.0, np.abs(M_b).max())
    if name == HUMANOID:  # the pivot matters: the file's own geometry is far off
        assert np.abs(dynamics.inverse_dynamics(model, q, v, a) - tau_b).max() > 10.0
    if name == DEFECT:  # and so do the inertial axes: the URDF frame's coordinates are off
        naive, _ = pybullet_direct(path, q, v, a, inertial_axes=False)
        assert np.abs(naive - tau).max() > 0.1


def test_rpy_from_quaternion_gives_pybullets_rotation():
    rng = np.random.default_rng(0)
    quats = rng.normal(size=(300, 4))
    quats /= np.linalg.norm(quats, axis=1, keepdims=True)
    rpy = rpy_from_quaternion(quats)
    for qu, e in zip(quats, rpy):
        ours = np.array(p.getMatrixFromQuaternion(p.getQuaternionFromEuler(e.tolist()))).reshape(3, 3)
        assert np.allclose(ours, np.array(p.getMatrixFromQuaternion(qu.tolist())).reshape(3, 3), atol=1e-12)
        assert np.allclose(e, p.getEulerFromQuaternion(qu.tolist()), atol=1e-9)


def run(args, cwd):
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-m", "simbench", "check", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=900)


@pytest.mark.parametrize("floating", [False, True])
def test_cli_explains_spherical_robots(tmp_path, floating):
    out = tmp_path / "report.json"
    r = run([HUMANOID, LIMIT, "--samples", "12", "--json", str(out)] + (["--floating"] if floating else []), tmp_path)
    assert r.returncode == 0, r.stderr
    robots = {x["target"]: x for x in json.loads(out.read_text())["robots"]}
    assert len(robots) == 2
    for name, res in robots.items():
        assert res["verdict"] == "EXPLAINED", (name, res["reason"])
        for cause in res["causes"]:
            after = cause["after"]
            assert after["tau_abs"] <= 1e-9 * max(1.0, after["tau_scale"])
            assert after["M_abs"] <= 1e-9 * max(1.0, after["M_scale"])
    hum = robots[HUMANOID]
    pivot = next(c for c in hum["causes"] if c["kind"] == "spherical_pivot_at_parent")
    assert sorted(pivot["links"]) == sorted(["chest", "neck", "right_shoulder", "left_shoulder", "right_hip",
                                             "right_ankle", "left_hip", "left_ankle"])
    assert pivot["before"]["tau_abs"] > 10.0  # N m: the pivot is far from negligible
    kinds = {c["kind"] for c in robots[LIMIT]["causes"]}
    # one link on a fixed base: where its joint sits does not change its own torque
    assert kinds == ({"triangle_inequality_zeroed", "spherical_pivot_at_parent"} if floating
                     else {"triangle_inequality_zeroed"})
    assert "2 EXPLAINED, 0 FAIL, 0 ERROR, 0 SKIPPED" in r.stdout
