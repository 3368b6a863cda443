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
