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
