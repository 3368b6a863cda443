"""The adapter between simbench's joint order and Pinocchio's, Pinocchio's configuration back to
ours (``PinocchioMap.q_back``): a Pinocchio user's q, with its free flyer, quaternions of
spherical joints and (cos, sin) of continuous joints, read as simbench's.

Oracle: Pinocchio's own ``rnea`` on its random configurations, against simbench's inverse
dynamics on the configuration mapped back (joints by name), and the round trip ``q(q_back(x))``.
"""
import numpy as np
import pytest

from _dyn_helpers import rel_err, require
from simbench.dynamics import inverse_dynamics
from simbench.errors import ShapeError
from simbench.model import RobotModel


@pytest.mark.parametrize("urdf, floating", [("pybullet_data:r2d2.urdf", False),        # continuous wheels
                                            ("pybullet_data:a1/a1.urdf", True),        # free flyer
                                            ("pybullet_data:humanoid/humanoid.urdf", True)])   # spherical
def test_pinocchio_configurations_read_back_as_ours(urdf, floating):
    pin = require("pinocchio")
    from simbench.oracles.pinocchio import PinocchioMap, pinocchio_model
    model = RobotModel.from_urdf(urdf, floating_base=floating)
    pm = pinocchio_model(model)
    pd, mp = pm.createData(), PinocchioMap(model, pm)
    pm.lowerPositionLimit[:] = np.maximum(pm.lowerPositionLimit, -3.0)
    pm.upperPositionLimit[:] = np.minimum(pm.upperPositionLimit, 3.0)
    rng = np.random.default_rng(11)
    qs = np.stack([pin.randomConfiguration(pm) for _ in range(6)])
    ours = mp.q_back(qs)                                   # batched: (6, pm.nq) -> (6, nq)
    assert ours.shape == (6, model.nq)
    np.testing.assert_allclose(mp.q(ours), qs, atol=1e-14)
    compared = 0
    for q_pin, q in zip(qs, ours):
        v, a = rng.normal(size=model.nv), rng.normal(size=model.nv)
        want = mp.back(pin.rnea(pm, pd, q_pin, mp.v(v), mp.v(a)))
        assert rel_err(inverse_dynamics(model, q, v, a), want) < 1e-10
        compared += 1
    assert compared == 6
    with pytest.raises(ShapeError, match=rf"q_pin has shape \({model.nq + 3},\); expected \(\.\.\., {pm.nq}\)"):
        mp.q_back(np.zeros(model.nq + 3))


def test_pinocchios_model_of_a_moved_root_is_in_the_same_world():
    """``pinocchio_model(model.replace(root_pose=T))`` carried gravity but not T: every pose,
    the centre of mass and A_G of a re-mounted model disagreed with "the same" Pinocchio model.
    Oracle: Pinocchio's frame placements and generalized gravity on the Panda (its root link has
    mass, so the universe's frames move too), parsed and built, against our poses and torques."""
    pin = require("pinocchio")
    from simbench.dynamics import gravity_torques, link_pose
    from simbench.oracles.pinocchio import PinocchioMap, built_model, pinocchio_model
    T = np.eye(4)
    T[:3, :3] = pin.rpy.rpyToMatrix(1.2, 0.3, -0.4)
    T[:3, 3] = [1.0, 2.0, 3.0]
    model = RobotModel.from_urdf("pybullet_data:franka_panda/panda.urdf").replace(root_pose=T)
    rng = np.random.default_rng(4)
    compared = 0
    for pm in (pinocchio_model(model), built_model(model)):
        pd, mp = pm.createData(), PinocchioMap(model, pm)
        for q in rng.uniform(-1, 1, (3, model.nq)):
            pin.framesForwardKinematics(pm, pd, mp.q(q))
            for link in model.link_names:
                assert np.abs(link_pose(model, q, link) - pd.oMf[pm.getFrameId(link)].homogeneous).max() < 1e-12
                compared += 1
            assert rel_err(gravity_torques(model, q), mp.back(pin.computeGeneralizedGravity(pm, pd, mp.q(q)))) < 1e-12
    assert compared == 2 * 3 * len(model.link_names)


def test_q_back_refuses_what_is_not_a_pinocchio_configuration():
    """nan, text and a continuous joint at (cos, sin) = (0, 0) came back as nan, a raw ValueError
    and a silent 0; a str model raised AttributeError. Each is one line now."""
    require("pinocchio")
    from simbench.oracles.pinocchio import PinocchioMap, pinocchio_model
    model = RobotModel.from_urdf("pybullet_data:r2d2.urdf", floating_base=False)
    pm = pinocchio_model(model)
    mp = PinocchioMap(model, pm)
    for bad, text in [(np.full(pm.nq, np.nan), "holds nan or inf; expected finite numbers"),
                      ("x", f"q_pin = 'x'; expected (..., {pm.nq}) numbers, Pinocchio's q"),
                      (np.zeros(pm.nq), "a continuous joint's (cos, sin) = (0, 0); expected a point of the unit circle")]:
        with pytest.raises(ShapeError) as err:
            mp.q_back(bad)
        assert text in str(err.value) and "\n" not in str(err.value)
    from simbench.errors import SimbenchError
    with pytest.raises(SimbenchError, match=r"^PinocchioMap\('panda', Model\); expected \(a simbench RobotModel"):
        PinocchioMap("panda", pm)
