"""simbench.dynamics.inputs: bad input gets one clear error naming the value, what was expected
and the order of the entries (oracle: the expected message)."""
import numpy as np
import pytest

from simbench.errors import ShapeError, UnknownNameError
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


def test_kinematics_bad_values_on_and_off_the_fast_path():
    """A non-finite q as a plain float64 array (the compiled fast path refuses it) still gets the
    general path's message naming the joint; bad points name the point and the link."""
    q = Z.copy()
    q[3] = np.nan
    for call in (lambda: dyn.forward_kinematics(MODEL, q), lambda: dyn.link_jacobian(MODEL, q, "lbr_iiwa_link_7")):
        with pytest.raises(ShapeError, match="non-finite") as e:
            call()
        assert "lbr_iiwa_joint_4" in str(e.value)
    for point, shown in (([0.0, np.inf, 0.0], "inf"), (np.zeros(2), "0., 0."), ("abc", "'abc'")):
        with pytest.raises(ShapeError, match=r"point is .*expected \(\.\.\., 3\) finite numbers") as e:
            dyn.link_jacobian(MODEL, Z, "lbr_iiwa_link_7", point=point)
        assert shown in str(e.value) and "'lbr_iiwa_link_7'" in str(e.value)
    with pytest.raises(ShapeError, match="does not broadcast"):
        dyn.link_jacobian(MODEL, np.zeros((4, 7)), "lbr_iiwa_link_7", point=np.zeros((3, 3)))


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


def test_zero_dof_robot_gives_empty_results():
    m = RobotModel.from_urdf("pybullet_data:cube.urdf")
    z = np.zeros(0)
    assert dyn.inverse_dynamics(m, z, z, z).shape == (0,)
    assert dyn.mass_matrix(m, np.zeros((4, 0))).shape == (4, 0, 0)
    assert dyn.forward_dynamics(m, np.zeros((3, 0)), z, z).shape == (3, 0)
    assert dyn.forward_kinematics(m, z).shape == (1, 4, 4)


def test_floating_base_shapes_and_names():
    model = RobotModel.from_urdf("pybullet_data:a1/a1.urdf", floating_base=True)
    assert (model.nq, model.nv, len(model.joint_names)) == (19, 18, 12)
    with pytest.raises(ShapeError, match=r"q has shape \(12,\); expected \(\.\.\., 19\).*'base_x'"):
        dyn.inverse_dynamics(model, np.zeros(12), np.zeros(18), np.zeros(18))
    with pytest.raises(ShapeError, match=r"give an array of 19 values"):
        dyn.mass_matrix(model, {n: 0.0 for n in model.joint_names})


@pytest.mark.parametrize("jtype", ["floating", "planar"])
def test_floating_and_planar_joints_in_the_tree_are_refused_clearly(jtype):
    from simbench.errors import URDFError

    xml = f"""<robot name="r"><link name="a"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1"
      ixy="0" ixz="0" iyz="0"/></inertial></link><link name="b"><inertial><mass value="1"/><inertia
      ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>
      <joint name="j" type="{jtype}"><parent link="a"/><child link="b"/></joint></robot>"""
    with pytest.raises(URDFError, match=f"joint 'j' has type '{jtype}'.*" +
                       ("floating_base=True" if jtype == "floating" else "two prismatic joints")):
        RobotModel.from_urdf_string(xml)


def test_a_zero_quaternion_is_named_by_every_function_and_form():
    """A zero quaternion names no rotation: the base's (a1) or a spherical joint's (the humanoid's
    'chest', in one row of a batch) is refused by every public function, on the fast paths (one
    configuration as an array or a list, a small batch) and on the batched kernels, with the
    quaternion's entries and joint named (before: an overflow blamed on qd and qdd, nan poses or
    a nan mass matrix returned). A quaternion of another norm is normalised: the same poses."""
    a1 = RobotModel.from_urdf("pybullet_data:a1/a1.urdf", floating_base=True)
    hum = RobotModel.from_urdf("pybullet_data:humanoid/humanoid.urdf", floating_base=True)
    q = a1.neutral()
    q[3:7] = 0.0
    z = np.zeros(a1.nv)
    Q = hum.random_configuration(0, 100)
    Q[37, 7:11] = 0.0
    Z = np.zeros((100, hum.nv))
    link = a1.link_names[3]
    cases = {
        "q[..., 3:7] (the quaternion x y z w of 'base') is zero;": [
            lambda: dyn.inverse_dynamics(a1, q, z, z), lambda: dyn.inverse_dynamics(a1, list(q), z, z),
            lambda: dyn.forward_dynamics(a1, q, z, z), lambda: dyn.forward_kinematics(a1, q),
            lambda: dyn.forward_kinematics(a1, list(q)), lambda: dyn.link_jacobian(a1, q, link),
            lambda: dyn.link_com_jacobians(a1, q), lambda: dyn.center_of_mass(a1, q)],
        "q[..., 7:11] (the quaternion x y z w of 'chest') is zero at batch index (37,)": [
            lambda: dyn.inverse_dynamics(hum, Q, Z, Z), lambda: dyn.forward_dynamics(hum, Q, Z, Z),
            lambda: dyn.mass_matrix(hum, Q), lambda: dyn.forward_kinematics(hum, Q)],
        "q[..., 7:11] (the quaternion x y z w of 'chest') is zero at batch index (7,)": [
            lambda: dyn.mass_matrix(hum, Q[30:40]), lambda: dyn.inverse_dynamics(hum, Q[30:40], Z[:10], Z[:10])],
        "q[..., 7:11] (the quaternion x y z w of 'chest') is zero;": [
            lambda: dyn.mass_matrix(hum, Q[37]), lambda: dyn.mass_matrix(hum, list(Q[37])),
            lambda: dyn.forward_dynamics(hum, Q[37], Z[0], Z[0])],
    }
    checked = 0
    for text, calls in cases.items():
        for call in calls:
            with pytest.raises(ShapeError) as e:
                call()
            assert text in str(e.value) and "expected a unit quaternion" in str(e.value), str(e.value)
            checked += 1
    assert checked == 17
    q2 = a1.neutral()
    q2[3:7] = [0.0, 0.0, 0.0, 2.0]
    assert np.array_equal(dyn.forward_kinematics(a1, q2), dyn.forward_kinematics(a1, a1.neutral()))


def test_none_and_jax_tracers_are_named():
    """``[None, None]`` was reported as 'a non-finite value nan'; ``jax.grad`` through the numpy
    functions as a ShapeError about a GradTracer: each now says what it is (and where jax
    derivatives are)."""
    from _dyn_helpers import require

    jax = require("jax")
    model = RobotModel.from_urdf("simbench:planar_2r.urdf")
    with pytest.raises(ShapeError, match=r"q must be numbers, got \[None, None\] \(None instead of numbers\)"):
        dyn.inverse_dynamics(model, [None, None], [0.0, 0.0], [0.0, 0.0])
    with pytest.raises(ShapeError, match=r"\(a jax tracer; for jax.grad use simbench.dynamics.autodiff\)"):
        jax.grad(lambda q: dyn.inverse_dynamics(model, q, np.zeros(2), np.zeros(2)).sum())(np.zeros(2))


def test_every_dynamics_function_given_a_file_name_instead_of_a_model_says_so():
    """``inverse_dynamics("kuka.urdf", q, v, a)`` raised "'str' object has no attribute '_cache'"
    (walkthrough T); every public function of simbench.dynamics that takes the model first now
    says what to pass. Oracle: the functions' own signatures, each called with a path."""
    import inspect

    import simbench.dynamics as dyn
    from simbench.errors import SimbenchError

    checked = []
    for name in dyn.__all__:
        f = getattr(dyn, name)
        if inspect.isclass(f) or not callable(f) or next(iter(inspect.signature(f).parameters), "") != "model":
            continue
        required = [p for p in inspect.signature(f).parameters.values()
                    if p.default is inspect.Parameter.empty and p.kind is p.POSITIONAL_OR_KEYWORD]
        with pytest.raises(SimbenchError) as err:
            f("robot.urdf", *[np.zeros(7)] * (len(required) - 1))
        assert str(err.value) == ("model = 'robot.urdf'; expected a RobotModel, made once by "
                                  "simbench.RobotModel.from_urdf('robot.urdf') and passed to every call"), name
        checked.append(name)
    assert len(checked) >= 25 and {"inverse_dynamics", "integrate", "center_of_mass"} <= set(checked), checked
