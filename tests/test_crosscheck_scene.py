"""Scene targets: ``simbench check SCENE.toml:BODY`` checks the body as the scene loads it (base
orientation, ``scale``), with the model a simulation hands its user (``LoadedBody.posed_model``)
with the file's own inertials.

Oracles: PyBullet called directly (a fixed base loaded rotated; ``globalScaling``) and
Pinocchio's own URDF parser with gravity expressed in the base frame, ``R^T g``.
"""
import json

import numpy as np
import pinocchio as pin
import pybullet as p
import pytest

import simbench.check as cc
from simbench.cli import main
from simbench.model import RobotModel
from simbench.paths import resolve_urdf

KUKA = "pybullet_data:kuka_iiwa/model.urdf"
G = np.array([0.0, 0.0, -9.81])
ROLL_90 = p.getQuaternionFromEuler([np.pi / 2, 0, 0])
FLIP = p.getQuaternionFromEuler([np.pi, 0, 0])

SCENE = f"""
gravity = [0, 0, -9.81]

[[body]]
name = "wall_arm"
urdf = "{KUKA}"
orientation = [1.5707963267948966, 0, 0]
fixed_base = true

[[body]]
name = "ceiling_arm"
urdf = "{KUKA}"
position = [2, 0, 2]
orientation = [3.141592653589793, 0, 0]
fixed_base = true

[[body]]
name = "big_arm"
urdf = "{KUKA}"
position = [4, 0, 0]
fixed_base = true
scale = 2.0

[[body]]
name = "cube"
urdf = "pybullet_data:cube.urdf"
position = [1, 1, 0.5]
"""


@pytest.fixture
def scene(tmp_path):
    path = tmp_path / "wall.toml"
    path.write_text(SCENE)
    return path


def rotation(quat):
    return np.array(p.getMatrixFromQuaternion(quat)).reshape(3, 3)


def pin_tau(q, qd, qdd, gravity):
    pm = pin.buildModelFromUrdf(str(resolve_urdf(KUKA)))  # the iiwa: Pinocchio's order is the file's
    pm.gravity = pin.Motion(np.r_[gravity, 0, 0, 0])
    d = pm.createData()
    return np.array([pin.rnea(pm, d, a, b, c).copy() for a, b, c in zip(q, qd, qdd)])


def bullet_tau(q, qd, qdd, orn=(0, 0, 0, 1), scale=1.0):
    c = p.connect(p.DIRECT)
    try:
        p.setGravity(*G, physicsClientId=c)
        b = p.loadURDF(str(resolve_urdf(KUKA)), [0, 0, 0], list(orn), useFixedBase=True, globalScaling=scale,
                       flags=p.URDF_USE_INERTIA_FROM_FILE, physicsClientId=c)
        return np.array([p.calculateInverseDynamics(b, list(a), list(v), list(w), physicsClientId=c)
                         for a, v, w in zip(q, qd, qdd)])
    finally:
        p.disconnect(physicsClientId=c)


def test_pybullet_ignores_a_fixed_bases_orientation_in_inverse_dynamics():
    rng = np.random.default_rng(3)
    q, qd, qdd = rng.uniform(-1, 1, (3, 5, 7))
    compared = 0
    for orn in (ROLL_90, FLIP):
        tb = bullet_tau(q, qd, qdd, orn)
        assert np.abs(tb - pin_tau(q, qd, qdd, G)).max() < 1e-10               # as if upright
        assert np.abs(tb - pin_tau(q, qd, qdd, rotation(orn).T @ G)).max() > 1  # not the true gravity
        compared += 1
    assert compared == 2


@pytest.mark.parametrize("body, orn", [("wall_arm", ROLL_90), ("ceiling_arm", FLIP)])
def test_wall_mounted_and_upside_down_arms_are_explained(scene, body, orn):
    r = cc.compare(f"{scene}:{body}", samples=8)
    assert r.verdict == cc.EXPLAINED, r.line()
    assert [c.kind for c in r.causes] == ["base_orientation_ignored"]
    c = r.causes[0]
    assert c.before.tau_abs > 1 and c.after.within(1e-10)
    # the model under test carries the true gravity R^T g: Pinocchio with R^T g agrees with it
    assert cc.Errors.from_dict(r.pinocchio["vs_ours"]).within(1e-10)
    assert not cc.Errors.from_dict(r.pinocchio["vs_pybullet"]).within(1e-3)
    gravity_notes = [n for n in r.notes if n.startswith("LoadedBody.model carries gravity")]
    loaded_gravity_is_right = not gravity_notes  # LoadedBody.model already rotates gravity
    assert loaded_gravity_is_right or "checked with R^T g" in gravity_notes[0]


def test_scene_alone_checks_its_robot_and_the_seed_scene_passes(scene, capsys):
    assert main(["check", str(scene), "simbench:kuka_cubes.toml", "--samples", "4", "--no-pinocchio"]) == 0
    out = capsys.readouterr().out
    assert f"EXPLAINED {scene}:wall_arm" in out  # the first body with movable joints
    assert "PASS      simbench:kuka_cubes.toml:robot" in out  # its "robot" key
    assert "2 robots: 1 PASS, 1 EXPLAINED, 0 FAIL, 0 ERROR, 0 SKIPPED" in out


def test_pybullet_global_scaling_scales_lengths_and_keeps_inertia():
    c = p.connect(p.DIRECT)
    try:
        rows = []
        for s in (1.0, 2.0):
            b = p.loadURDF(str(resolve_urdf(KUKA)), useFixedBase=True, globalScaling=s,
                           flags=p.URDF_USE_INERTIA_FROM_FILE, physicsClientId=c)
            info = p.getDynamicsInfo(b, 3, physicsClientId=c)
            rows.append((info[0], np.array(info[2]), np.array(info[3]), np.array(p.getJointInfo(b, 3, physicsClientId=c)[14])))
    finally:
        p.disconnect(physicsClientId=c)
    (m1, I1, c1, o1), (m2, I2, c2, o2) = rows
    assert m2 == m1 and np.array_equal(I2, I1)  # mass and inertia as in the file
    np.testing.assert_allclose(c2, 2 * c1, rtol=1e-12)
    np.testing.assert_allclose(o2, 2 * o1, rtol=1e-12)


def _scaled(keep_inertia: bool):
    """A stand-in for RobotModel.scaled(s): lengths x s; inertia kept (PyBullet) or x s^2."""
    def scaled(self, s):
        jo, io = np.array(self.joint_origin), np.array(self.link_inertial_origin)
        jo[:, :3, 3] *= s
        io[:, :3, 3] *= s
        inertia = np.array(self.link_inertia) * (1.0 if keep_inertia else s * s)
        return self.replace(joint_origin=jo, link_inertial_origin=io, link_com=np.array(self.link_com) * s,
                            link_inertia=inertia)
    return scaled


def test_scaled_body(scene):
    r = cc.compare(f"{scene}:big_arm", samples=6)
    if not hasattr(RobotModel, "scaled"):
        assert r.verdict == cc.SKIPPED and "scale 2 not supported yet" in r.reason
    else:  # RobotModel.scaled exists: the model the scene hands out matches PyBullet, or is explained
        assert r.verdict in (cc.PASS, cc.EXPLAINED), r.line()
        assert {c.kind for c in r.causes} <= {"global_scaling_keeps_inertia"}
        assert r.pinocchio == {"available": False, "reason": "scaled body: Pinocchio reads the unscaled file"}


@pytest.mark.parametrize("keep, verdict", [(True, cc.PASS), (False, cc.EXPLAINED)])
def test_scaled_body_with_either_scaling_convention(scene, monkeypatch, keep, verdict):
    monkeypatch.setattr(RobotModel, "scaled", _scaled(keep), raising=False)
    r = cc.compare(f"{scene}:big_arm", samples=6)
    assert r.verdict == verdict, r.line()
    if verdict == cc.EXPLAINED:
        assert [c.kind for c in r.causes] == ["global_scaling_keeps_inertia"]
        assert r.causes[0].before.tau_abs > 1e-3 and r.causes[0].after.within(1e-10)
    # oracle for the PASS: PyBullet directly at globalScaling 2 equals our scaled model's torques
    rng = np.random.default_rng(0)
    q, qd, qdd = rng.uniform(-1, 1, (3, 4, 7))
    import simbench.dynamics as d

    ours = d.inverse_dynamics(_scaled(True)(RobotModel.from_urdf(KUKA), 2.0), q, qd, qdd)
    assert np.abs(ours - bullet_tau(q, qd, qdd, scale=2.0)).max() < 1e-10


@pytest.mark.parametrize("argv, words", [
    (["{scene}:nobody"], ["unknown body 'nobody'", "wall_arm"]),
    (["{scene}:wall_arm", "--base-orientation", "0", "0", "1"], ["--base-orientation applies to URDF targets"]),
    (["no_such_scene.toml"], ["scene file not found"]),
])
def test_scene_usage_errors_exit_2_with_one_line(scene, capsys, argv, words):
    assert main(["check", *[a.format(scene=scene) for a in argv]]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and all(w in err for w in words), err


def test_scene_body_without_movable_joints_is_skipped(scene, tmp_path, capsys):
    js = tmp_path / "r.json"
    assert main(["check", f"{scene}:cube", f"{scene}:wall_arm", "--samples", "3", "--json", str(js)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[:2] == ["SKIPPED", f"{scene}:cube"] and out[0].endswith("no movable joints")
    robots = json.loads(js.read_text())["robots"]
    assert [(r["target"], r["verdict"]) for r in robots] == [(f"{scene}:cube", "SKIPPED"),
                                                               (f"{scene}:wall_arm", "EXPLAINED")]
    assert main(["check", f"{scene}:cube", "-q"]) == 1  # nothing was compared


def test_scene_target_in_the_json_report(scene, tmp_path):
    js = tmp_path / "r.json"
    assert main(["check", f"{scene}:wall_arm", "--samples", "3", "--json", str(js), "-q"]) == 0
    robot = json.loads(js.read_text())["robots"][0]
    assert robot["target"] == f"{scene}:wall_arm" and robot["path"] == str(resolve_urdf(KUKA))
    assert robot["verdict"] == "EXPLAINED" and robot["causes"][0]["kind"] == "base_orientation_ignored"


@pytest.mark.parametrize("defect, kind", [("missing_inertial", "missing_inertial_default"),
                                          ("triangle_inequality", "triangle_inequality_zeroed")])
def test_scene_body_with_pybullets_inertial_substitution_is_explained_as_its_urdf(tmp_path, defect, kind):
    """A scene body whose URDF PyBullet alters silently (a link without <inertial>, a
    triangle-breaking inertia) is checked against the file, as the URDF alone is: EXPLAINED by
    the substitution on link2, and the model under test agrees with Pinocchio's parse of the
    file (which makes no substitution), not with PyBullet. A simulation's ``sim.model`` carries
    PyBullet's inertials instead; the check of the scene body once said PASS with them."""
    urdf = resolve_urdf(f"simbench:urdf/defects/{defect}.urdf")
    path = tmp_path / "s.toml"
    path.write_text(f'[[body]]\nname = "arm"\nurdf = "{urdf}"\nfixed_base = true\n')
    compared = 0
    for target in (f"{path}:arm", str(urdf)):
        r = cc.compare(target, samples=6)
        assert r.verdict == cc.EXPLAINED, r.line()
        assert [(c.kind, list(c.links)) for c in r.causes] == [(kind, ["link2"])], r.line()
        assert cc.Errors.from_dict(r.pinocchio["vs_ours"]).within(1e-10)
        assert not cc.Errors.from_dict(r.pinocchio["vs_pybullet"]).within(1e-3)
        compared += 1
    assert compared == 2
