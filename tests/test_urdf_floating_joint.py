"""A root link ``world`` joined to the robot by ``<joint type="floating">`` (the ROS humanoid
pattern) was refused, even by ``RobotModel.from_urdf(path, floating_base=True)``, whose message told
the user to pass floating_base=True.

What PyBullet 3.2 does with such a file (measured here): it loads it, keeps ``world`` as its base
(massless, so static even without useFixedBase) and makes the floating joint a fixed joint
(getNumJoints 2: ``float`` JOINT_FIXED, ``hip``): the robot is welded where the joint's origin
puts it. simbench drops the world link and the joint: the robot's root is ``base``, the
free-flyer with floating_base=True, else welded at the joint's origin as in PyBullet.

Oracles: Pinocchio's own URDF parser on the file without the world link and floating joint, with
``JointModelFreeFlyer`` (inverse dynamics and mass matrix at random states); PyBullet on a DIRECT
client for the welded robot (getLinkState and calculateInverseDynamics).
"""
import numpy as np
import pybullet as p
import pytest

from simbench import RobotModel
from simbench.cli import main
from simbench.dynamics import forward_kinematics, inverse_dynamics, mass_matrix
from simbench.errors import URDFError
from simbench.oracles.pinocchio import PinocchioMap, import_pinocchio

pin = pytest.importorskip("pinocchio")

INERT = '<inertial><origin xyz="{c}"/><mass value="{m}"/><inertia ixx="{i}" iyy="{j}" izz="{k}" ixy="0.001" ixz="0" iyz="0"/></inertial>'
WORLD = '<link name="world"/>\n<joint name="float" type="floating"><parent link="world"/><child link="base"/>{origin}</joint>\n'
BODY = f"""<link name="base">{INERT.format(c="0.01 0 0.02", m=3, i=0.1, j=0.12, k=0.08)}</link>
<joint name="hip" type="revolute"><parent link="base"/><child link="thigh"/><origin xyz="0 0.1 -0.1" rpy="0.1 0 0"/>
 <axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="10" velocity="2"/></joint>
<link name="thigh">{INERT.format(c="0 0 -0.2", m=1, i=0.01, j=0.011, k=0.004)}</link>
<joint name="knee" type="prismatic"><parent link="thigh"/><child link="shin"/><origin xyz="0 0 -0.4"/>
 <axis xyz="0 0 1"/><limit lower="-0.1" upper="0.1" effort="10" velocity="2"/></joint>
<link name="shin">{INERT.format(c="0 0.02 -0.1", m=0.5, i=0.004, j=0.005, k=0.003)}</link>
<joint name="arm" type="continuous"><parent link="base"/><child link="arm"/><origin xyz="0.1 0 0.1"/><axis xyz="1 0 0"/></joint>
<link name="arm">{INERT.format(c="0 0 0.1", m=0.7, i=0.006, j=0.006, k=0.003)}</link>
"""
ORIGIN = '<origin xyz="0.2 -0.1 1" rpy="0 0 0.5"/>'


def write(tmp_path, name, world=True, origin=ORIGIN):
    path = tmp_path / name
    path.write_text('<robot name="hum">\n' + (WORLD.format(origin=origin) if world else "") + BODY + "</robot>\n")
    return path


@pytest.mark.parametrize("origin", [ORIGIN, '<origin xyz="0.2 -0.1 1" rpy="0.3 -0.2 0.5"/>'])
def test_floating_base_makes_the_floating_joint_the_free_flyer_as_pinocchio(tmp_path, origin):
    """The joint's origin, rolled and pitched too, leaves the free flyer's gravity the world's
    (a rolled origin had tilted it: the welded model's R^T g was kept)."""
    model = RobotModel.from_urdf(write(tmp_path, "hum.urdf", origin=origin), floating_base=True)
    assert model.floating_base and model.link_names == ("base", "thigh", "shin", "arm")
    assert model.joint_names == ("hip", "knee", "arm") and (model.nq, model.nv) == (10, 9)
    # oracle: Pinocchio's parser on the file without the world link, with its free flyer
    pm = pin.buildModelFromUrdf(str(write(tmp_path, "plain.urdf", world=False)), pin.JointModelFreeFlyer())
    pm.gravity.linear = np.array([0.0, 0.0, -9.81])
    data, to_pin = pm.createData(), PinocchioMap(model, pm)
    assert import_pinocchio() is pin and pm.nv == model.nv
    rng = np.random.default_rng(7)
    states = 0
    for _ in range(6):
        q = model.random_configuration(rng)
        v, a = rng.normal(size=model.nv), rng.normal(size=model.nv)
        expected = to_pin.back(pin.rnea(pm, data, to_pin.q(q), to_pin.v(v), to_pin.v(a)))
        np.testing.assert_allclose(inverse_dynamics(model, q, v, a), expected, rtol=1e-9, atol=1e-9)
        M = to_pin.back_matrix(pin.crba(pm, data, to_pin.q(q)))
        np.testing.assert_allclose(mass_matrix(model, q), np.triu(M) + np.triu(M, 1).T, atol=1e-10)
        states += 1
    assert states == 6
    (issue,) = [i for i in model.issues if i.kind == "floating_root_joint"]
    assert issue.element == "joint 'float'" and issue.data["root"] == "base"
    assert "with floating_base=True (simbench info --floating) the joint is the free-flyer" in issue.message
    assert "use RobotModel" not in issue.message and "instead of" not in issue.message


def test_without_floating_base_the_robot_is_welded_as_pybullet_welds_it(tmp_path, direct_client):
    c = direct_client
    path = write(tmp_path, "hum.urdf", origin='<origin xyz="0.2 -0.1 1" rpy="0.3 -0.2 0.5"/>')
    model = RobotModel.from_urdf(path, floating_base=False)
    assert not model.floating_base and model.link_names[0] == "base" and model.nq == 3
    # oracle: PyBullet keeps 'world' as its (static, massless) base and welds 'float'
    body = p.loadURDF(str(path), flags=p.URDF_USE_INERTIA_FROM_FILE, physicsClientId=c)
    assert p.getBodyInfo(body, physicsClientId=c)[0] == b"world"
    assert p.getDynamicsInfo(body, -1, physicsClientId=c)[0] == 0.0
    infos = [p.getJointInfo(body, j, physicsClientId=c) for j in range(p.getNumJoints(body, physicsClientId=c))]
    assert [(i[1], i[2]) for i in infos] == [(b"float", p.JOINT_FIXED), (b"hip", p.JOINT_REVOLUTE),
                                            (b"knee", p.JOINT_PRISMATIC), (b"arm", p.JOINT_REVOLUTE)]
    p.setGravity(0, 0, -9.81, physicsClientId=c)
    rng = np.random.default_rng(5)
    compared = 0
    for _ in range(4):
        q = model.random_configuration(rng)
        qd, qdd = rng.normal(size=3), rng.normal(size=3)
        for j, x in zip((1, 2, 3), q):
            p.resetJointState(body, j, x, physicsClientId=c)
        for k in range(model.nlinks):   # PyBullet's link k is simbench's link k ('world' is -1)
            st = p.getLinkState(body, k, computeForwardKinematics=True, physicsClientId=c)
            T = forward_kinematics(model, q)[k]
            np.testing.assert_allclose(T[:3, 3], st[4], atol=1e-6)   # PyBullet: float rpy
            np.testing.assert_allclose(T[:3, :3], np.reshape(p.getMatrixFromQuaternion(st[5]), (3, 3)),
                                       atol=1e-6)
        tau = p.calculateInverseDynamics(body, list(q), list(qd), list(qdd), physicsClientId=c)
        np.testing.assert_allclose(inverse_dynamics(model, q, qd, qdd), tau, rtol=1e-6, atol=1e-6)
        compared += 1
    assert compared == 4
    (issue,) = [i for i in model.issues if i.kind == "floating_root_joint"]
    assert "'base' is welded to the world at its <origin> (xyz 0.2 -0.1 1, rpy 0.3 -0.2 0.5)" in issue.message


def test_info_lists_the_dropped_joint_with_and_without_floating(tmp_path, capsys):
    path = str(write(tmp_path, "hum.urdf"))
    for extra, base in (([], "fixed to the world"), (["--floating"], "floating")):
        assert main(["info", path, *extra]) == 0
        out = capsys.readouterr().out
        assert f"base: {base}" in out and "floating_root_joint: joint 'float': a floating joint from " \
            "the massless root link 'world' to 'base': simbench drops both, so 'base' is the root" in out


@pytest.mark.parametrize("world, why", [
    ('<link name="world"><inertial><mass value="2"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" '
     'iyz="0"/></inertial></link>', "the root link 'world' has mass 2 kg (PyBullet moves it with the robot)"),
    ('<link name="world"/><link name="table"/><joint name="bolt" type="fixed"><parent link="world"/>'
     '<child link="table"/></joint>', "the root link 'world' also has joint ['bolt']"),
])
def test_a_floating_joint_simbench_cannot_read_says_why_not_to_pass_floating_base(tmp_path, world, why):
    path = tmp_path / "bad.urdf"
    path.write_text('<robot name="hum">' + world + WORLD.format(origin="").replace('<link name="world"/>\n', "")
                    + BODY + "</robot>")
    for floating in (True, False):
        with pytest.raises(URDFError) as err:
            RobotModel.from_urdf(path, floating_base=floating)
        msg = str(err.value)
        assert msg.startswith(f"{path}: joint 'float' has type 'floating', which simbench does not model there")
        assert f"massless root link (ROS's world link), which it then drops, but {why}; expected e.g. " \
            "<link name=\"world\"/> with this joint alone" in msg and "\n" not in msg
        assert "floating_base=True instead" not in msg


def test_in_a_scene_the_files_weld_comes_after_the_mount(tmp_path):
    """A scene body from such a file: PyBullet's base is 'world' (massless: held still) and
    'base' sits at the joint's origin from it. sim.model's root pose was the mount alone (the
    file's weld dropped): link poses off by the origin. Oracles: PyBullet's getLinkState of every
    link, and computed torque from sim.model holding the pose in PyBullet's stepping."""
    import simbench
    from simbench.dynamics import link_pose

    path = write(tmp_path, "hum.urdf", origin='<origin xyz="0.2 -0.1 1" rpy="0.3 -0.2 0.5"/>')
    scene = {"body": [{"name": "hum", "urdf": str(path), "position": [0.5, 0.2, 0.3], "orientation": [0.2, 0, 0.4]}]}
    hold = np.array([0.3, 0.05, 0.7])
    with simbench.Simulation(scene, gui=False) as sim:
        robot, model = sim.robot, sim.model
        assert not robot.floating and model.joint_names == ("hip", "knee", "arm")
        robot.reset(hold)
        bid = sim.bodies["hum"]
        compared = 0
        for j in range(p.getNumJoints(bid, physicsClientId=sim.client)):
            name = p.getJointInfo(bid, j, physicsClientId=sim.client)[12].decode()
            st = p.getLinkState(bid, j, computeForwardKinematics=True, physicsClientId=sim.client)
            T = link_pose(model, hold, name)
            np.testing.assert_allclose(T[:3, 3], st[4], atol=1e-6, err_msg=name)
            compared += 1
        assert compared == 4   # base, thigh, shin, arm (PyBullet's base is 'world')
        robot.change_dynamics(linearDamping=0.0, angularDamping=0.0, jointDamping=0.0)
        err = 0.0
        for _ in range(240):
            q, qd = robot.state()
            robot.set_torques(inverse_dynamics(model, q, qd, 25.0 * (hold - q) - 10.0 * qd))
            sim.step()
            err = max(err, float(np.abs(robot.q - hold).max()))
    assert err < 1e-6, err
