"""The joint and base modelling of simbench.model (floating base, spherical joints, the
configuration space) and what ``simbench info`` says about it. Oracles: the URDF's own tree
(limbs, masses), Pinocchio's free-flyer sizes, and the CLI's output read as a user reads it."""
import os
import subprocess
import sys

import numpy as np
import pytest

from simbench.model import RobotModel


@pytest.mark.parametrize("path, limbs", [("pybullet_data:a1/a1.urdf", 4), ("pybullet_data:laikago/laikago.urdf", 4),
                                         ("pybullet_data:humanoid/humanoid.urdf", 3)])
def test_a_root_that_looks_free_gets_an_issue_line(path, limbs):
    model = RobotModel.from_urdf(path)
    (issue,) = [i for i in model.issues if i.kind == "free_root"]
    assert len(issue.data["limbs"]) == limbs and "floating_base=True" in issue.message
    assert not any(i.kind == "free_root" for i in RobotModel.from_urdf(path, floating_base=True).issues)


@pytest.mark.parametrize("path", ["pybullet_data:kuka_iiwa/model.urdf", "pybullet_data:franka_panda/panda.urdf",
                                  "simbench:mobile_manipulator.urdf"])
def test_arms_mounted_on_the_world_get_no_free_root_issue(path):
    assert not any(i.kind == "free_root" for i in RobotModel.from_urdf(path).issues)


TORSO_ON_WORLD = """<robot name="torso">
  <link name="world"/>
  <joint name="mount" type="fixed"><parent link="world"/><child link="torso"/><origin xyz="0 0 0.5"/></joint>
  <link name="torso"><inertial><mass value="10"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  {arms}
</robot>"""
ARM = """<joint name="{s}_j" type="revolute"><parent link="torso"/><child link="{s}_arm"/><origin xyz="0 {y} 0.3"/>
    <axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="10" velocity="1"/></joint>
  <link name="{s}_arm"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>"""


@pytest.mark.parametrize("root, said", [("world", False), ("stand", True)])
def test_a_root_link_named_world_is_welded_as_ros_means_it(tmp_path, root, said):
    """A two-armed torso under a massless root link and a fixed joint: ROS's `world` link says the
    file means it welded (a walkthrough's torso got 'free_root ... use floating_base=True'); the
    same tree under any other root name still looks free (2 limbs, 10 kg, counted from the file)."""
    text = TORSO_ON_WORLD.format(arms=ARM.format(s="left", y=0.2) + ARM.format(s="right", y=-0.2)).replace(
        "world", root)
    (tmp_path / "t.urdf").write_text(text)
    issues = [i for i in RobotModel.from_urdf(tmp_path / "t.urdf").issues if i.kind == "free_root"]
    assert bool(issues) == said
    if said:
        assert issues[0].data["limbs"] == ["left_arm", "right_arm"] and issues[0].data["mass"] == 10.0


def test_floating_base_sizes_labels_and_configurations():
    fixed = RobotModel.from_urdf("pybullet_data:humanoid/humanoid.urdf")
    model = fixed.with_floating_base()
    n_sph = sum(lbl.endswith("[qx]") for lbl in fixed.q_labels)
    assert n_sph == 8
    assert (model.nq, model.nv) == (fixed.nq + 7, fixed.nv + 6) == (43, 34)
    assert model.joint_names == fixed.joint_names and model.dof == model.nv
    assert model.q_labels[:7] == ("base_x", "base_y", "base_z", "base_qx", "base_qy", "base_qz", "base_qw")
    assert model.v_labels[:6] == ("base_vx", "base_vy", "base_vz", "base_wx", "base_wy", "base_wz")
    assert model.lower.shape == model.upper.shape == (model.nq,)
    q0 = model.neutral()
    assert q0.shape == (43,) and q0[6] == 1.0 and np.count_nonzero(q0) == 1 + n_sph
    Q = model.random_configuration(0, 50)
    starts = [3] + [i for i, lbl in enumerate(model.q_labels) if lbl.endswith("[qx]")]
    for s in starts:
        assert np.allclose(np.linalg.norm(Q[:, s:s + 4], axis=1), 1.0, rtol=0, atol=1e-14)
    assert model.with_floating_base(False).nq == fixed.nq


def test_info_states_the_base_and_how_to_float_it(tmp_path):
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    run = lambda *a: subprocess.run([sys.executable, "-m", "simbench.cli", "info", *a], cwd=tmp_path,  # noqa: E731
                                    capture_output=True, text=True, env=env, check=True).stdout
    fixed = run("pybullet_data:a1/a1.urdf")
    assert "base: fixed to the world, nq: 12, nv: 12" in fixed
    assert "free_root: link 'trunk'" in fixed and "simbench info --floating" in fixed
    floating = run("--floating", "pybullet_data:a1/a1.urdf")
    assert "base: floating (free-flyer root), nq: 19, nv: 18" in floating and "free_root" not in floating
