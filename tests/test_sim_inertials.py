"""``sim.model`` holds the inertials PyBullet simulates where the URDF's differ: a link without
``<inertial>`` is 1 kg with unit inertia, a link whose principal moments break the triangle
inequality has no rotational inertia. One warning line per body says so; PyBullet's own
``b3Warning`` lines about it do not reach stdout.

Oracles: PyBullet itself: ``getDynamicsInfo`` (mass, local inertia diagonal, inertial frame),
``calculateMassMatrix`` / ``calculateInverseDynamics`` of the loaded body, and stepping with
torques from ``inverse_dynamics(sim.model, ...)`` (gravity compensation holds the pose; with the
file's own massless links it fell from [0.3, 0] to [-1.48, 1.78] in 1 s, a user's report).
"""
import logging

import numpy as np
import pybullet as p
import pytest

import simbench
from simbench.dynamics import inverse_dynamics, mass_matrix
from simbench.model import RobotModel

# link2: no <inertial> (PyBullet: 1 kg at the elbow, 0.5 m from the shoulder); link1: principal
# moments 0.02 > 0.002 + 0.002 (PyBullet zeroes them); the root has no <inertial> either
ARM = """<?xml version="1.0"?>
<robot name="arm">
  <link name="base"/>
  <joint name="shoulder" type="revolute">
    <parent link="base"/><child link="link1"/>
    <origin xyz="0 0 0.1"/><axis xyz="0 1 0"/>
    <limit lower="-3" upper="3" effort="100" velocity="10"/>
  </joint>
  <link name="link1">
    <inertial><origin xyz="0.05 0 0.2" rpy="0.1 0 0.2"/><mass value="1.2"/>
      <inertia ixx="0.02" ixy="0" ixz="0" iyy="0.002" iyz="0" izz="0.002"/></inertial>
    <visual><origin xyz="0 0 0.25"/><geometry><box size="0.05 0.05 0.5"/></geometry></visual>
  </link>
  <joint name="elbow" type="revolute">
    <parent link="link1"/><child link="link2"/>
    <origin xyz="0 0 0.5"/><axis xyz="0 1 0"/>
    <limit lower="-3" upper="3" effort="100" velocity="10"/>
  </joint>
  <link name="link2"><visual><origin xyz="0 0 0.2"/><geometry><box size="0.05 0.05 0.4"/></geometry></visual></link>
</robot>
"""
WARNING = ("body 'arm' ({urdf}): link 'link2' has no <inertial>; PyBullet simulates it as 1 kg with unit "
           "inertia, and so does sim.model; give it an <inertial> to choose; link 'link1' has principal "
           "moments of inertia that break the triangle inequality; PyBullet zeroes its rotational inertia "
           "(keeps mass and COM), and so does sim.model; make each moment at most the sum of the other two")
Q0 = np.array([0.3, 0.0])


@pytest.fixture
def arm(tmp_path):
    path = tmp_path / "arm.urdf"
    path.write_text(ARM)
    return str(path)


def scene(urdf, fixed=True, scale=1.0):
    return {"body": [{"name": "arm", "urdf": urdf, "fixed_base": fixed, "scale": scale,
                      "joints": {"shoulder": float(Q0[0])}}]}


def hold_error(sim, model, seconds=1.0):
    """Largest |q - q0| while PyBullet steps with tau = ID(model, q, 0, 0) (its motors off,
    no damping), driven through PyBullet directly."""
    body, c = sim.robot.body.id, sim.client
    joints = list(sim.robot.body.movable_indices)
    for j in [-1, *joints]:
        p.changeDynamics(body, j, linearDamping=0.0, angularDamping=0.0, jointDamping=0.0, physicsClientId=c)
    p.setJointMotorControlArray(body, joints, p.VELOCITY_CONTROL, forces=[0.0] * len(joints), physicsClientId=c)
    for j, q in zip(joints, Q0):
        p.resetJointState(body, j, q, 0.0, physicsClientId=c)
    err = 0.0
    for _ in range(round(seconds / sim.dt)):
        q = np.array([s[0] for s in p.getJointStates(body, joints, physicsClientId=c)])
        tau = inverse_dynamics(model, q, np.zeros(2), np.zeros(2))
        p.setJointMotorControlArray(body, joints, p.TORQUE_CONTROL, forces=tau.tolist(), physicsClientId=c)
        p.stepSimulation(physicsClientId=c)
        err = max(err, float(np.abs(q - Q0).max()))
    return err


def test_gravity_compensation_with_sim_model_holds_in_pybullet(arm):
    with simbench.Simulation(scene(arm), gui=False) as sim:
        held = hold_error(sim, sim.model)
        fell = hold_error(sim, RobotModel.from_urdf(arm))   # the file's model: massless link2
    assert held < 1e-6
    assert fell > 0.5


@pytest.mark.parametrize("scale", [1.0, 2.0])
def test_sim_model_M_and_ID_equal_pybullets(arm, scale):
    """The main and the collision server's model of the body, at 6 random (q, qd, qdd) each;
    at scale 2 too (PyBullet keeps the 1 kg and unit inertia of the link without <inertial>)."""
    rng = np.random.default_rng(3)
    cases = 0
    with simbench.Simulation(scene(arm, scale=scale), gui=False) as sim:
        body, c = sim.robot.body.id, sim.client
        for model in (sim.model, sim.pair.collision.body("arm").model):
            for _ in range(6):
                q, qd, qdd = rng.uniform(-2, 2, (3, 2))
                M_pb = np.array(p.calculateMassMatrix(body, q.tolist(), physicsClientId=c))
                tau_pb = np.array(p.calculateInverseDynamics(body, q.tolist(), qd.tolist(), qdd.tolist(),
                                                             physicsClientId=c))
                np.testing.assert_allclose(mass_matrix(model, q), M_pb, rtol=1e-9, atol=1e-12)
                np.testing.assert_allclose(inverse_dynamics(model, q, qd, qdd), tau_pb, rtol=1e-9, atol=1e-12)
                cases += 1
    assert cases == 12


@pytest.mark.parametrize("fixed", [True, False])
def test_sim_model_inertials_equal_getDynamicsInfo(arm, fixed):
    """Every moving link's mass, principal moments and COM as PyBullet holds them (a floating
    root without <inertial> moves: 1 kg too); the file's own model keeps its massless links."""
    compared = 0
    with simbench.Simulation(scene(arm, fixed), gui=False) as sim:
        model, body = sim.model, sim.robot.body
        for name, index in body.links.items():
            if fixed and index == -1:
                continue
            mass, _, diag, pos, orn = p.getDynamicsInfo(body.id, index, physicsClientId=sim.client)[:5]
            k = model.link_index(name)
            assert model.link_mass[k] == pytest.approx(mass, abs=1e-12)
            np.testing.assert_allclose(np.linalg.eigvalsh(model.link_inertia[k]), sorted(diag), atol=1e-12)
            if index >= 0:   # the base's position is its world COM; a link's is relative to its frame
                np.testing.assert_allclose(model.link_com[k], pos, atol=1e-12)
            compared += 1
    assert compared == (2 if fixed else 3)
    file_model = RobotModel.from_urdf(arm)
    assert file_model.link_mass[file_model.link_index("link2")] == 0.0
    assert {i.kind for i in file_model.issues} >= {"missing_inertial", "inertia_triangle_inequality"}


def test_one_warning_per_body_and_no_b3warning(arm, caplog, capfd):
    with caplog.at_level(logging.WARNING, logger="simbench"):
        with simbench.Simulation(scene(arm), gui=False) as sim:
            sim.model, sim.pair.collision.body("arm").model   # noqa: B018 - built, no second line
            print("script output")
    lines = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert lines == [WARNING.format(urdf=arm)]
    out = capfd.readouterr().out
    assert "b3Warning" not in out and "No inertial data" not in out and "Bad inertia" not in out
    assert out == "script output\n"


def test_rotated_root_inertial_keeps_gravity_exact_and_holds():
    """A root <inertial> with rpy on an upright fixed base: the base link frame is the world's,
    so g_base is exactly (0, 0, -9.81) (closed form); computed through PyBullet's float32
    multiplyTransforms it was off by 3e-8 and the held pose drifted 7.5e-7 rad in 1 s."""
    from simbench.paths import assets_dir

    urdf = str(assets_dir() / "urdf" / "defects" / "root_inertial_rpy.urdf")
    with simbench.Simulation({"body": [{"name": "arm", "urdf": urdf, "fixed_base": True}]}, gui=False) as sim:
        np.testing.assert_allclose(sim.model.gravity, [0.0, 0.0, -9.81], rtol=0, atol=1e-14)
        n = sim.model.nv
        body, c = sim.robot.body.id, sim.client
        joints = list(sim.robot.body.movable_indices)
        q0 = np.full(n, 0.3)
        p.setJointMotorControlArray(body, joints, p.VELOCITY_CONTROL, forces=[0.0] * n, physicsClientId=c)
        for j, q in zip(joints, q0):
            p.resetJointState(body, j, q, 0.0, physicsClientId=c)
        err = 0.0
        for _ in range(240):
            q = np.array([s[0] for s in p.getJointStates(body, joints, physicsClientId=c)])
            tau = inverse_dynamics(sim.model, q, np.zeros(n), np.zeros(n))
            p.setJointMotorControlArray(body, joints, p.TORQUE_CONTROL, forces=tau.tolist(), physicsClientId=c)
            p.stepSimulation(physicsClientId=c)
            err = max(err, float(np.abs(q - q0).max()))
    assert err < 1e-12 and n == 3


def test_collision_queries_and_sweeps_say_nothing_of_inertials(arm, tmp_path):
    """Masses play no part in a collision sweep: `simbench sweep collision` on a scene whose arm
    has no <inertial> prints its summary only (it printed the inertial line three times: twice
    from the driver, with two spellings of the path, and once bare from a worker); sampling the
    allowed-collision matrix from the scene path says nothing either, while a Simulation says it
    once (above)."""
    import subprocess
    import sys

    from simbench.paths import resolve_path

    box = resolve_path("simbench:shapes/box.urdf")
    (tmp_path / "scene.toml").write_text(f'robot = "arm"\n[[body]]\nname = "arm"\nurdf = "{arm}"\nfixed_base = true\n'
                                         f'[[body]]\nname = "box"\nurdf = "{box}"\nposition = [0.4, 0, 0.4]\n'
                                         'fixed_base = true\n')
    proc = subprocess.run([sys.executable, "-m", "simbench", "sweep", "collision", "scene.toml", "--samples", "200",
                           "--out", "sw", "--workers", "2"], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == "" and proc.stdout.startswith("sweep collision: 200 configs"), proc.stderr
    probe = ("import logging, simbench\nlogging.basicConfig(level=logging.WARNING)\n"
             "print(simbench.sample_disabled_pairs('scene.toml', 'arm', n=50).samples)\n")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0 and "inertial" not in proc.stderr, proc.stderr
