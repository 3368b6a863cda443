"""Scenes: TOML parsing, loading into the two servers, isolation between them, error paths."""
import os

import numpy as np
import pybullet as p
import pytest

import simbench
from simbench.bullet.scene import DEFAULT_SCENE, Scene, SceneError
from simbench.errors import UnknownNameError


def test_default_scene_loads_into_both_servers_with_equal_ids():
    with simbench.connect(gui=False) as pair:
        assert pair.main.bodies == pair.collision.bodies == {
            "ground": 0, "robot": 1, "cube1": 2, "cube2": 3, "cube3": 4}
        assert pair.main.client != pair.collision.client
        for loaded in (pair.main, pair.collision):
            pos, orn = p.getBasePositionAndOrientation(loaded.bodies["cube1"], physicsClientId=loaded.client)
            np.testing.assert_allclose(pos, [1, 1, 0.5])
            assert p.getPhysicsEngineParameters(physicsClientId=loaded.client)["gravityAccelerationZ"] == pytest.approx(-9.81)
            mass = p.getDynamicsInfo(loaded.bodies["robot"], 6, physicsClientId=loaded.client)[0]
            assert mass == pytest.approx(0.3)  # kuka link 7 from the file, not recomputed
        robot = pair.collision.robot
        assert robot.movable_names == tuple(f"lbr_iiwa_joint_{i}" for i in range(1, 8))
        assert pair.collision.link("robot", "lbr_iiwa_link_7") == (1, 6)
        assert pair.collision.link("cube1") == (2, -1)
        assert robot.model.joint_names == robot.movable_names


def test_moving_the_collision_robot_leaves_the_main_server_untouched():
    with simbench.connect(gui=False) as pair:
        main = pair.main.robot
        p.setJointMotorControlArray(main.id, main.movable_indices, p.VELOCITY_CONTROL,
                                    targetVelocities=[0.5] * 7, forces=[50] * 7, physicsClientId=pair.main.client)
        for _ in range(50):
            p.stepSimulation(physicsClientId=pair.main.client)
        before = p.getJointStates(main.id, main.movable_indices, physicsClientId=pair.main.client)
        col = pair.collision.robot
        for q in np.random.default_rng(0).uniform(-2, 2, (20, 7)):
            for j, v in zip(col.movable_indices, q):
                p.resetJointState(col.id, j, v, 1.0, physicsClientId=pair.collision.client)
            p.getClosestPoints(col.id, pair.collision.bodies["cube1"], 1.0, physicsClientId=pair.collision.client)
        after = p.getJointStates(main.id, main.movable_indices, physicsClientId=pair.main.client)
        assert [s[:2] for s in before] == [s[:2] for s in after]  # bit for bit


def test_orientation_rpy_and_quaternion_and_initial_joints(tmp_path):
    f = tmp_path / "s.toml"
    f.write_text("""
gravity = [0, 0, -3.7]
[[body]]
name = "arm"
urdf = "pybullet_data:kuka_iiwa/model.urdf"
position = [0.5, 0, 0.1]
orientation = [0, 0, 1.5707963267948966]
fixed_base = true
[body.joints]
lbr_iiwa_joint_2 = 0.7
[[body]]
name = "box"
urdf = "pybullet_data:cube_small.urdf"
orientation = [0, 0, 2, 0]
""")
    scene = Scene.from_toml(f)
    assert scene.body("box").orientation == (0.0, 0.0, 1.0, 0.0)
    with simbench.connect(f, gui=False) as pair:
        c = pair.main.client
        _, orn = p.getBasePositionAndOrientation(pair.bodies["arm"], physicsClientId=c)
        np.testing.assert_allclose(orn, [0, 0, np.sqrt(0.5), np.sqrt(0.5)], atol=1e-12)
        assert p.getJointState(pair.bodies["arm"], 1, physicsClientId=c)[0] == pytest.approx(0.7)
        assert p.getPhysicsEngineParameters(physicsClientId=c)["gravityAccelerationZ"] == pytest.approx(-3.7)
        assert pair.main.robot_name == "arm"


@pytest.mark.parametrize("text, message", [
    ('[[body]]\nname = "a"\nurdf = "nope.urdf"', r"body 'a': URDF file not found: 'nope.urdf'"),
    ('[[body]]\nname = "a"\nurdf = "pybullet_data:cube.urdf"\nposition = [1, 2]',
     r"body 'a': position = \[1, 2\]; expected 3 finite numbers"),
    ('[[body]]\nname = "a"\nurdf = "pybullet_data:cube.urdf"\npositon = [1, 2, 3]',
     r"unknown body key 'positon'.*did you mean 'position'"),
    ('[[body]]\nname = "a"\nurdf = "pybullet_data:cube.urdf"\n[[body]]\nname = "a"\nurdf = "pybullet_data:cube.urdf"',
     r"body names must be unique; repeated: \['a'\]"),
    ('robot = "robt"\n[[body]]\nname = "robot"\nurdf = "pybullet_data:cube.urdf"', r"unknown body 'robt'.*'robot'"),
    ('[[body]\nname = "a"', r"not valid TOML"),
    ('gravity = [0, 0, -9.81]', r"the scene has no \[\[body\]\] entries"),
])
def test_scene_errors_name_the_problem(tmp_path, text, message):
    f = tmp_path / "bad.toml"
    f.write_text(text)
    with pytest.raises((SceneError, UnknownNameError), match=message):
        Scene.from_toml(f)


def test_unknown_link_and_joint_names_list_close_matches():
    with simbench.connect(DEFAULT_SCENE, gui=False) as pair:
        with pytest.raises(UnknownNameError, match=r"unknown link 'lbr_iiwa_link_77' in body 'robot'; did you mean 'lbr_iiwa_link_7'"):
            pair.collision.link("robot", "lbr_iiwa_link_77")
        with pytest.raises(UnknownNameError, match=r"unknown joint 'joint_2'.*'lbr_iiwa_joint_2'"):
            pair.main.robot.joint_index("joint_2")
        with pytest.raises(UnknownNameError, match=r"unknown body 'cube4'.*did you mean 'cube3', 'cube2', 'cube1'"):
            pair.main.body("cube4")


def test_missing_scene_file():
    with pytest.raises(SceneError, match=r"scene file not found: 'no/such/scene.toml'"):
        simbench.connect("no/such/scene.toml", gui=False)


def test_gui_without_display_falls_back_with_a_notice(monkeypatch, caplog):
    monkeypatch.delenv("DISPLAY", raising=False)
    with simbench.connect(gui=True) as pair:
        assert pair.gui is False
    assert "no display found" in caplog.text  # one logged line (simbench.bullet.display)


def test_schema_keys_reach_the_body_spec(tmp_path):
    """collision_group / collision_mask (PyBullet's filter bits, for the collision queries),
    booleans, scale and vectors as typed values; absent keys keep PyBullet's defaults."""
    f = tmp_path / "s.toml"
    f.write_text('[[body]]\nname = "a"\nurdf = "pybullet_data:cube_small.urdf"\ncollision_group = 2\n'
                 'collision_mask = -1\nfixed_base = true\nscale = 0.5\nposition = [1, 2, 3]\n'
                 '[[body]]\nname = "b"\nurdf = "pybullet_data:cube_small.urdf"\n')
    a, b = Scene.from_toml(f).bodies
    assert (a.collision_group, a.collision_mask, a.fixed_base, a.scale, a.position) == (2, -1, True, 0.5, (1.0, 2.0, 3.0))
    assert (b.collision_group, b.collision_mask, b.fixed_base, b.scale) == (None, None, False, 1.0)


def test_scene_package_map_and_xacro_args_load_into_pybullet(tmp_path, monkeypatch):
    """A ROS-style body whose tool mesh lives in another package, found through the scene's
    package_map (relative to the scene file), and a xacro body with arguments. Oracle: PyBullet's
    own link names and the tool's collision mesh file."""
    from simbench.paths import assets_dir

    monkeypatch.delenv("ROS_PACKAGE_PATH", raising=False)
    tool = assets_dir() / "ros" / "elsewhere" / "tool_pkg"
    f = tmp_path / "s.toml"
    f.write_text(f'package_map = {{ simbench_tool = "{os.path.relpath(tool, tmp_path)}" }}\n'
                 '[[body]]\nname = "arm"\nurdf = "simbench:ros/simbench_demo_description/urdf/arm_with_tool.urdf"\n'
                 'fixed_base = true\n'
                 '[[body]]\nname = "left"\nurdf = "simbench:ros/simbench_demo_description/urdf/arm.urdf.xacro"\n'
                 'xacro_args = { prefix = "left_" }\nposition = [1, 0, 0]\n')
    with simbench.connect(f, gui=False) as pair:
        c = pair.collision.client
        arm, left = pair.bodies["arm"], pair.bodies["left"]
        links = [p.getJointInfo(left, j, physicsClientId=c)[12].decode() for j in range(p.getNumJoints(left, physicsClientId=c))]
        assert links == ["left_link1", "left_link2"]
        tool_shape = p.getCollisionShapeData(arm, 2, physicsClientId=c)[0]
        assert os.path.samefile(tool_shape[4].decode(), tool / "meshes" / "tool.stl")
        assert pair.scene.body("left").robot_model().joint_names == ("left_joint1", "left_joint2")


JOINTS_URDF = """<?xml version="1.0"?>
<robot name="arm">
  <link name="base"/>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="l1"/><axis xyz="0 1 0"/>
    <limit lower="-3" upper="3" effort="10" velocity="1"/></joint>
  <link name="l1"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="wrist" type="continuous"><parent link="l1"/><child link="l2"/><axis xyz="0 0 1"/></joint>
  <link name="l2"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="slide" type="prismatic"><parent link="l2"/><child link="l3"/><axis xyz="0 0 1"/>
    <limit lower="0" upper="0.2" effort="10" velocity="1"/></joint>
  <link name="l3"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
</robot>
"""


def joints_scene(tmp_path, joints, scale=1.0):
    (tmp_path / "arm.urdf").write_text(JOINTS_URDF)
    f = tmp_path / "s.toml"
    f.write_text(f'[[body]]\nname = "arm"\nurdf = "arm.urdf"\nfixed_base = true\nscale = {scale}\n'
                 "[body.joints]\n" + "".join(f"{k} = {v}\n" for k, v in joints.items()))
    return f


@pytest.mark.parametrize("joints, scale, message", [
    ({"shoulder": 5.0}, 1.0, "joint shoulder = 5: outside the joint's limits [-3, 3] rad; closest valid value 3"),
    ({"shoulder": -3.5}, 1.0, "joint shoulder = -3.5: outside the joint's limits [-3, 3] rad; closest valid value -3"),
    ({"slide": 0.3}, 1.0, "joint slide = 0.3: outside the joint's limits [0, 0.2] m; closest valid value 0.2"),
    ({"shoulder": 45}, 1.0, "joint shoulder = 45 (degrees? 45 degrees is 0.7854 rad): outside the joint's limits "
                            "[-3, 3] rad; closest valid value 3"),
    # PyBullet reports a prismatic joint's limits times globalScaling, as sim.model does
    ({"slide": 0.5}, 2.0, "joint slide = 0.5: outside the joint's limits [0, 0.4] m; closest valid value 0.4"),
    ({"shouldr": 1.0}, 1.0, "unknown joint 'shouldr'; did you mean 'shoulder', 'slide'? Valid joint names: shoulder, slide, wrist"),
])
def test_scene_joint_values_outside_limits_or_unknown_are_one_line(tmp_path, joints, scale, message):
    """The URDF's limits (written above) are the oracle; the line names the file, body and joint.
    (Simulation started at q = 5 for shoulder = 5, and view showed 3.0, clamped silently.)"""
    f = joints_scene(tmp_path, joints, scale)
    with pytest.raises(SceneError) as err:
        Scene.from_toml(f)
    assert str(err.value) == f"{f}: body 'arm': {message}"


def test_scene_joint_values_within_limits_and_continuous_are_set(tmp_path):
    q = {"shoulder": 3.0, "wrist": 7.0, "slide": 0.3}    # wrist is continuous: no limits
    f = joints_scene(tmp_path, q, scale=2.0)
    with simbench.connect(f, gui=False) as pair:
        body = pair.main.robot
        got = {n: p.getJointState(body.id, body.joints[n], physicsClientId=pair.main.client)[0] for n in q}
    assert got == pytest.approx(q, abs=1e-12) and len(got) == 3


def test_bad_scene_joint_is_one_line_before_any_server(tmp_path):
    """Checked before the server opens: no 'no display found' line before the error."""
    import subprocess
    import sys

    f = joints_scene(tmp_path, {"shoulder": 5.0})
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    proc = subprocess.run([sys.executable, "-m", "simbench", "view", str(f)], capture_output=True, text=True,
                          timeout=120, env=env, cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [f"simbench view: error: {f}: body 'arm': joint shoulder = 5: outside the "
                                        "joint's limits [-3, 3] rad; closest valid value 3"]


def test_missing_scene_file_names_the_closest(tmp_path, monkeypatch):
    (tmp_path / "scene.toml").write_text('[[body]]\nname = "a"\nurdf = "pybullet_data:cube.urdf"\n')
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SceneError) as err:
        simbench.Simulation("scen.toml", gui=False)
    assert str(err.value) == "scene file not found: 'scen.toml'; did you mean 'scene.toml'?"


FREE_ARM_SCENE = """
[[body]]
name = "arm"
urdf = "simbench:planar_2r.urdf"
position = [0, 0, 1]
{arm}
[[body]]
name = "kuka"
urdf = "pybullet_data:kuka_iiwa/model.urdf"
position = [-1, 0, 0]
[[body]]
name = "dog"
urdf = "pybullet_data:a1/a1.urdf"
position = [2, 0, 0.5]
[[body]]
name = "cube"
urdf = "pybullet_data:cube_small.urdf"
position = [1, 0, 0.5]
"""


@pytest.mark.parametrize("arm, gravity, warned", [
    ("", "", True),                                  # fixed_base left out: the arm falls
    ("fixed_base = false", "", False),               # free on purpose
    ("fixed_base = true", "", False),
    ("", "gravity = [0, 0, 0]\n", False),            # nothing falls
])
def test_an_arm_left_free_is_said_once_at_the_first_step(tmp_path, caplog, arm, gravity, warned):
    """A scene that leaves ``fixed_base`` out of an arm (the default is free) made a user's
    wall-mounted arm fall to the floor without a word. At the first step, one warning names the
    arm (planar 2R, a 1 kg base); legs (a1: four limbs), a cube and the KUKA (a massless base,
    which PyBullet keeps still) are not named, nor a body whose scene says
    fixed_base, nor anything without gravity, nor a scene that is only loaded (collision
    queries and sweeps do not step). Oracle: PyBullet's own base position, which falls."""
    (tmp_path / "s.toml").write_text(gravity + FREE_ARM_SCENE.format(arm=arm))
    with caplog.at_level("WARNING"), simbench.Simulation(str(tmp_path / "s.toml"), gui=False) as sim:
        assert not [r for r in caplog.records if "fixed_base" in r.getMessage()]
        z0 = p.getBasePositionAndOrientation(sim.bodies["arm"], physicsClientId=sim.client)[0][2]
        sim.step(120)
        sim.step(120)
        z1 = p.getBasePositionAndOrientation(sim.bodies["arm"], physicsClientId=sim.client)[0][2]
    said = [r.getMessage() for r in caplog.records if "fixed_base" in r.getMessage()]
    if warned:
        assert said == ["body 'arm': fixed_base is not set, so its base is free and the arm falls under "
                        "gravity; set fixed_base = true to mount it (fixed_base = false keeps it free "
                        "without this line)"], said
        assert z1 < z0 - 0.05, (z0, z1)              # it did fall
    else:
        assert said == [], said
