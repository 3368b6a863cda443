"""Bad input to simbench.dynamics: clear errors that name the value and what was expected."""
import numpy as np
import pytest

from _dyn_helpers import asset
from simbench.errors import ShapeError, SimbenchError, UnknownNameError
from simbench.model import RobotModel
import simbench.dynamics as dyn

MODEL = RobotModel.from_urdf("pybullet_data:kuka_iiwa/model.urdf")
Z = np.zeros(MODEL.dof)


def test_wrong_shape_names_expected_shape_and_joint_order():
    with pytest.raises(ShapeError) as e:
        dyn.inverse_dynamics(MODEL, np.zeros(6), Z, Z)
    msg = str(e.value)
    assert "(6,)" in msg and "(..., 7)" in msg and "lbr_iiwa_joint_1" in msg and "q " in msg
    with pytest.raises(ShapeError, match="qdd"):
        dyn.inverse_dynamics(MODEL, Z, Z, np.zeros((2, 8)))
    with pytest.raises(ShapeError, match="do not broadcast"):
        dyn.inverse_dynamics(MODEL, np.zeros((2, 7)), np.zeros((3, 7)), Z)
    with pytest.raises(ShapeError, match=r"\(\.\.\., 7\)"):
        dyn.mass_matrix(MODEL, 0.0)
    with pytest.raises(ShapeError, match="tau"):
        dyn.forward_dynamics(MODEL, Z, Z, np.zeros(3))


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_values(bad):
    q = Z.copy()
    q[3] = bad
    for call in (lambda: dyn.inverse_dynamics(MODEL, q, Z, Z),          # the lean single path
                 lambda: dyn.inverse_dynamics(MODEL, Z, q, Z),
                 lambda: dyn.inverse_dynamics(MODEL, np.stack([Z, q]), Z, Z),
                 lambda: dyn.mass_matrix(MODEL, q),
                 lambda: dyn.forward_dynamics(MODEL, Z, Z, q),
                 lambda: dyn.forward_kinematics(MODEL, q)):
        with pytest.raises(ShapeError, match="non-finite") as e:
            call()
        assert "lbr_iiwa_joint_4" in str(e.value)


def test_f_ext_errors():
    with pytest.raises(UnknownNameError) as e:
        dyn.inverse_dynamics(MODEL, Z, Z, Z, f_ext={"lbr_iiwa_link_77": np.zeros(6)})
    assert "did you mean" in str(e.value) and "lbr_iiwa_link_7" in str(e.value)
    with pytest.raises(ShapeError, match=r"\(\.\.\., 6\)"):
        dyn.inverse_dynamics(MODEL, Z, Z, Z, f_ext={"lbr_iiwa_link_7": np.zeros(3)})
    with pytest.raises(ShapeError, match="non-finite"):
        dyn.inverse_dynamics(MODEL, Z, Z, Z, f_ext={"lbr_iiwa_link_7": [0, 0, np.nan, 0, 0, 0]})
    with pytest.raises(ShapeError, match="dict"):
        dyn.inverse_dynamics(MODEL, Z, Z, Z, f_ext=np.zeros(6))
    with pytest.raises(ShapeError, match="broadcast"):
        dyn.inverse_dynamics(MODEL, np.zeros((4, 7)), Z, Z, f_ext={"lbr_iiwa_link_7": np.zeros((3, 6))})


def test_gravity_and_names():
    with pytest.raises(ShapeError, match="gravity"):
        dyn.inverse_dynamics(MODEL, Z, Z, Z, gravity=(0, -9.81))
    with pytest.raises(UnknownNameError, match="did you mean"):
        dyn.link_jacobian(MODEL, Z, "lbr_iiwa_link_8")
    with pytest.raises(UnknownNameError):
        dyn.inverse_dynamics(MODEL, {"lbr_iiwa_joint_1": 0.0, "nope": 1.0}, Z, Z)


def test_dict_configuration_accepted():
    q = {n: 0.1 * i for i, n in enumerate(MODEL.joint_names)}
    assert np.allclose(dyn.gravity_torques(MODEL, q), dyn.gravity_torques(MODEL, 0.1 * np.arange(7)))


def test_spherical_joint_q_length_names_quaternion_entries():
    """A spherical joint takes four q entries (a quaternion) and three v entries."""
    model = RobotModel.from_urdf("pybullet_data:humanoid/humanoid.urdf")
    assert (model.nq, model.nv) == (36, 28)
    with pytest.raises(ShapeError, match=r"expected \(\.\.\., 36\).*'chest\[qx\]'"):
        dyn.inverse_dynamics(model, np.zeros(model.nv), np.zeros(model.nv), np.zeros(model.nv))
    with pytest.raises(ShapeError, match=r"qd has shape \(36,\); expected \(\.\.\., 28\).*'chest\[wx\]'"):
        dyn.inverse_dynamics(model, model.neutral(), np.zeros(model.nq), np.zeros(model.nv))


def test_singular_mass_matrix():
    """A massless moving leaf link: M is singular, forward dynamics says so."""
    model = RobotModel.from_urdf(asset("planar_2r.urdf")).with_link_inertial("link2", mass=0.0)
    with pytest.raises(SimbenchError, match="singular.*link2"):
        dyn.forward_dynamics(model, np.zeros(2), np.zeros(2), np.zeros(2))
    with pytest.raises(SimbenchError, match="singular"):
        dyn.forward_dynamics(model, np.zeros((3, 2)), np.zeros(2), np.zeros(2))


def test_simulate_errors():
    m = RobotModel.from_urdf(asset("planar_2r.urdf"))
    with pytest.raises(SimbenchError, match="rk4"):
        dyn.simulate(m, np.zeros(2), np.zeros(2), None, 0.01, 3, method="midpoint")
    with pytest.raises(SimbenchError, match="dt"):
        dyn.simulate(m, np.zeros(2), np.zeros(2), None, -0.01, 3)
    with pytest.raises(ShapeError, match=r"controller returned shape \(3,\)"):
        dyn.simulate(m, np.zeros(2), np.zeros(2), lambda t, q, qd: np.zeros(3), 0.01, 3)
    with pytest.raises(ShapeError, match=r"\(2,\)"):
        dyn.simulate(m, np.zeros((2, 2)), np.zeros(2), None, 0.01, 3)
    with pytest.raises(SimbenchError, match="diverged"):
        dyn.simulate(m, np.zeros(2), np.zeros(2), lambda t, q, qd: np.array([1e200, -1e200]), 1.0, 5,
                     method="euler")


def test_dynamics_does_not_import_pybullet():
    import subprocess
    import sys

    code = ("import sys, simbench.dynamics, simbench.dynamics.lagrange, simbench.dynamics.rigid_body, "
            "simbench.spatial, simbench.bench_dynamics; "
            "assert 'pybullet' not in sys.modules and 'pinocchio' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_zero_dof_robot_gives_empty_results():
    m = RobotModel.from_urdf("pybullet_data:cube.urdf")
    z = np.zeros(0)
    assert dyn.inverse_dynamics(m, z, z, z).shape == (0,)
    assert dyn.mass_matrix(m, np.zeros((4, 0))).shape == (4, 0, 0)
    assert dyn.forward_dynamics(m, np.zeros((3, 0)), z, z).shape == (3, 0)
    assert dyn.forward_kinematics(m, z).shape == (1, 4, 4)
