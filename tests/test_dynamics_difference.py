"""``simbench.dynamics.difference`` on continuous joints against ``pin.difference`` (the oracle:
Pinocchio stores a continuous joint as ``(cos q, sin q)`` and its difference is the wrapped
angle). r2d2 has continuous wheels and head, a prismatic and two limited revolute joints; joints
are matched by name through Pinocchio's own ``idx_q`` / ``idx_v``, not simbench's adapter."""
from __future__ import annotations

import os

import numpy as np
import pybullet_data
import pytest

import simbench
from simbench.dynamics import difference, integrate

pin = pytest.importorskip("pinocchio")

R2D2 = "pybullet_data:r2d2.urdf"
N = 200


def _pin_model(model: simbench.RobotModel, floating: bool):
    path = os.path.join(pybullet_data.getDataPath(), "r2d2.urdf")
    return pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer()) if floating \
        else pin.buildModelFromUrdf(str(path))


def _to_pin(model, pm, q: np.ndarray) -> np.ndarray:
    """simbench q -> Pinocchio q, joint by joint by name (continuous: cos, sin)."""
    out = pin.neutral(pm)
    if model.floating_base:
        out[:7] = q[:7]
    for name in model.joint_names:
        pj = pm.joints[pm.getJointId(name)]
        x = q[model.joint_index(name)]
        if pj.nq == 2:
            out[pj.idx_q:pj.idx_q + 2] = np.cos(x), np.sin(x)
        else:
            out[pj.idx_q] = x
    return out


def _from_pin_v(model, pm, v_pin: np.ndarray) -> np.ndarray:
    out = np.zeros(model.nv)
    if model.floating_base:
        out[:6] = v_pin[:6]
    for name in model.joint_names:
        out[model.velocity_index(name)] = v_pin[pm.joints[pm.getJointId(name)].idx_v]
    return out


def _random_pairs(model, rng):
    """q0, q1 (N, nq): continuous joints anywhere in [-3 pi, 3 pi] (many pairs more than pi
    apart), the others within their limits."""
    q0, q1 = model.random_configuration(rng, N), model.random_configuration(rng, N)
    for name, kind in zip(model.joint_all_names, model.joint_type):
        if kind == "continuous":
            i = model.joint_index(name)
            q0[:, i], q1[:, i] = rng.uniform(-3 * np.pi, 3 * np.pi, (2, N))
    return q0, q1


@pytest.mark.parametrize("floating", [False, True])
def test_difference_wraps_continuous_joints_as_pinocchio(floating):
    model = simbench.RobotModel.from_urdf(R2D2, floating_base=floating)
    pm = _pin_model(model, floating)
    kinds = dict(zip(model.joint_all_names, model.joint_type))
    assert sorted(set(kinds[n] for n in model.joint_names)) == ["continuous", "prismatic", "revolute"]
    q0, q1 = _random_pairs(model, np.random.default_rng(7))
    ours = difference(model, q0, q1)
    cont = [model.velocity_index(n) for n in model.joint_names if kinds[n] == "continuous"]
    assert (np.abs(q1 - q0)[:, [model.joint_index(n) for n in model.joint_names
                                if kinds[n] == "continuous"]] > np.pi).sum() > 100
    compared = 0
    for k in range(N):
        ref = _from_pin_v(model, pm, pin.difference(pm, _to_pin(model, pm, q0[k]), _to_pin(model, pm, q1[k])))
        np.testing.assert_allclose(ours[k], ref, rtol=0, atol=1e-9)
        compared += 1
    assert compared == N
    assert np.all((ours[:, cont] >= -np.pi) & (ours[:, cont] < np.pi))


def test_the_continuous_joint_of_the_walkthrough():
    """q0 = -2.968, q1 = 0.989: 3.958 rad the long way, -2.326 rad (pin.difference) the short."""
    model = simbench.RobotModel.from_urdf(R2D2, floating_base=False)
    pm = _pin_model(model, False)
    q0, q1 = model.neutral(), model.neutral()
    i = model.joint_index("head_swivel")
    q0[i], q1[i] = -2.968, 0.989
    ref = pin.difference(pm, _to_pin(model, pm, q0), _to_pin(model, pm, q1))
    got = difference(model, q0, q1)[model.velocity_index("head_swivel")]
    assert got == pytest.approx(ref[pm.joints[pm.getJointId("head_swivel")].idx_v], abs=1e-12)
    assert got == pytest.approx(0.989 + 2.968 - 2 * np.pi, abs=1e-12)


def test_integrate_of_difference_is_q1_up_to_whole_turns():
    """The round trip on the manifold: cos and sin of every angle agree with q1's (200 pairs),
    and the limited revolute and prismatic joints agree exactly."""
    model = simbench.RobotModel.from_urdf(R2D2, floating_base=False)
    q0, q1 = _random_pairs(model, np.random.default_rng(3))
    back = integrate(model, q0, difference(model, q0, q1))
    np.testing.assert_allclose(np.cos(back), np.cos(q1), atol=1e-12)
    np.testing.assert_allclose(np.sin(back), np.sin(q1), atol=1e-12)
    plain = [model.joint_index(n) for n, t in zip(model.joint_all_names, model.joint_type)
             if t in ("revolute", "prismatic")]
    assert len(plain) == 3
    np.testing.assert_allclose(back[:, plain], q1[:, plain], atol=1e-12)
    assert back.shape == (N, model.nq)
