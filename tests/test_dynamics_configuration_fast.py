"""The compiled paths of ``integrate``, ``difference`` and ``normalize``
(:mod:`simbench.dynamics.kernels.configuration`): the single-configuration fast path (one 1-D
float64 array each) and the general path (anything else: lists, float32, batches, broadcasting),
both against the oracle ``pin.integrate`` / ``pin.difference`` / ``pin.normalize``, joints
matched by name (:class:`simbench.oracles.pinocchio.PinocchioMap`). Models: the iiwa (revolute
joints only), the a1 with a floating base, the humanoid (floating, 8 spherical joints) and r2d2
(floating, continuous joints, whose difference Pinocchio wraps). No timing here: the speed is
the benchmark's (the module docstring of :mod:`simbench.dynamics.configuration`)."""
from __future__ import annotations

import os

import numpy as np
import pytest

import simbench.dynamics as dyn
from _dyn_helpers import require
from simbench.dynamics.configuration import quaternion_slices
from simbench.errors import ShapeError
from simbench.model import RobotModel
from simbench.oracles.pinocchio import PinocchioMap, built_model

MODELS = [("pybullet_data:kuka_iiwa/model.urdf", False), ("pybullet_data:a1/a1.urdf", True),
          ("pybullet_data:humanoid/humanoid.urdf", True), ("pybullet_data:r2d2.urdf", True)]
N = 6


def _forms(a: np.ndarray) -> list[tuple[str, object]]:
    """One configuration in the forms a user passes: float64 (the fast path), read-only,
    strided, a list, float32 (the general path), and a one-row batch."""
    ro = a.copy()
    ro.setflags(write=False)
    strided = np.repeat(a, 2)[::2]
    return [("float64", a.copy()), ("read-only", ro), ("strided", strided), ("list", a.tolist()),
            ("float32", a.astype(np.float32)), ("one row", a[None].copy())]


def _as64(x: object) -> np.ndarray:
    return np.asarray(x, dtype=np.float64).reshape(-1)


@pytest.fixture(scope="module", params=MODELS, ids=lambda p: p[0].split("/")[-1])
def setup(request):
    pin = require("pinocchio")
    path, floating = request.param
    model = RobotModel.from_urdf(path, floating_base=floating)
    if "continuous" in model.joint_type:    # Pinocchio's URDF parser: (cos, sin), wrapped
        import pybullet_data

        urdf = os.path.join(pybullet_data.getDataPath(), path.split(":", 1)[1])
        pm = pin.buildModelFromUrdf(urdf, pin.JointModelFreeFlyer())
    else:
        pm = built_model(model)
    return pin, model, pm, PinocchioMap(model, pm)


def test_integrate_and_difference_match_pinocchio_in_every_form(setup):
    pin, model, pm, mp = setup
    rng = np.random.default_rng(11)
    Q0, Q1 = model.random_configuration(rng, N), model.random_configuration(rng, N)
    V = rng.normal(size=(N, model.nv)) * 1.5
    dt = 0.37
    compared = 0
    for k in range(N):
        for (name, q), (_, v), (_, q1) in zip(_forms(Q0[k]), _forms(V[k]), _forms(Q1[k])):
            # the oracle gets the numbers each form holds (float32's are rounded: its
            # quaternions normalised first, as ours are read; Pinocchio's integrate would
            # scale the base's translation by |q|^2)
            p0, p1 = pin.normalize(pm, mp.q(_as64(q))), pin.normalize(pm, mp.q(_as64(q1)))
            want_q = np.asarray(pin.integrate(pm, p0, mp.v(dt * _as64(v))))
            want_v = mp.back(np.asarray(pin.difference(pm, p0, p1)))
            got_q = dyn.integrate(model, q, v, dt)
            got_v = dyn.difference(model, q, q1)
            assert got_q.shape == np.shape(q) and got_v.shape == np.shape(q)[:-1] + (model.nv,)
            assert got_q.dtype == np.float64 and got_v.dtype == np.float64
            np.testing.assert_allclose(mp.q(got_q.reshape(-1)), want_q, rtol=0, atol=1e-12, err_msg=name)
            np.testing.assert_allclose(got_v.reshape(-1), want_v, rtol=0, atol=1e-10, err_msg=name)
            compared += 2
    # batches: (N, nq), (2, 3, nq), and one q broadcast against N velocities
    got = dyn.integrate(model, Q0, V, dt)
    got_b = dyn.integrate(model, Q0.reshape(2, 3, -1), V.reshape(2, 3, -1), dt).reshape(N, -1)
    got_c = dyn.integrate(model, Q0[0], V, dt)
    diff = dyn.difference(model, Q0, Q1)
    diff_c = dyn.difference(model, Q0[:, None], Q1[None]).reshape(N * N, -1)
    for k in range(N):
        want_q = np.asarray(pin.integrate(pm, mp.q(Q0[k]), mp.v(dt * V[k])))
        for g in (got, got_b):
            np.testing.assert_allclose(mp.q(g[k]), want_q, rtol=0, atol=1e-12)
        np.testing.assert_allclose(mp.q(got_c[k]), pin.integrate(pm, mp.q(Q0[0]), mp.v(dt * V[k])),
                                   rtol=0, atol=1e-12)
        np.testing.assert_allclose(diff[k], mp.back(pin.difference(pm, mp.q(Q0[k]), mp.q(Q1[k]))),
                                   rtol=0, atol=1e-10)
        for j in range(N):
            np.testing.assert_allclose(diff_c[k * N + j],
                                       mp.back(pin.difference(pm, mp.q(Q0[k]), mp.q(Q1[j]))),
                                       rtol=0, atol=1e-10)
        compared += 4 + N
    assert compared == N * 12 + N * (4 + N)


def test_fast_and_general_paths_agree_and_round_trip(setup):
    """The fast path (one float64 configuration) gives the general path's numbers, row by
    row of a batch, to the last bit or near it; ``difference(q, integrate(q, v)) == v`` for
    small v (no wrapping)."""
    _, model, _, _ = setup
    rng = np.random.default_rng(12)
    Q, Q1 = model.random_configuration(rng, 50), model.random_configuration(rng, 50)
    V = rng.normal(size=(50, model.nv)) * 0.2
    batch_q, batch_v = dyn.integrate(model, Q, V), dyn.difference(model, Q, Q1)
    batch_n = dyn.normalize(model, Q * 2.5)
    for k in range(50):
        np.testing.assert_allclose(dyn.integrate(model, Q[k], V[k]), batch_q[k], rtol=0, atol=1e-15)
        np.testing.assert_allclose(dyn.difference(model, Q[k], Q1[k]), batch_v[k], rtol=0, atol=1e-15)
        np.testing.assert_allclose(dyn.normalize(model, Q[k] * 2.5), batch_n[k], rtol=0, atol=1e-15)
    np.testing.assert_allclose(dyn.difference(model, Q, batch_q), V, rtol=0, atol=1e-10)


def test_normalize_matches_pinocchio(setup):
    pin, model, pm, mp = setup
    rng = np.random.default_rng(13)
    Q = model.random_configuration(rng, N) * rng.uniform(0.3, 3.0, size=(N, 1))
    compared = 0
    for k in range(N):
        for name, q in _forms(Q[k]):
            want = np.asarray(pin.normalize(pm, mp.q(_as64(q))))
            got = dyn.normalize(model, q)
            ours = mp.q(got.reshape(-1))
            quat = np.zeros(model.nq, dtype=bool)
            base, sph = quaternion_slices(model)
            for s in [s + 3 for s, _ in base] + [s for s, _ in sph]:
                quat[s:s + 4] = True
            pin_quat = mp.q(quat.astype(float)) > 0.5
            np.testing.assert_allclose(ours[pin_quat], want[pin_quat], rtol=0, atol=1e-15, err_msg=name)
            np.testing.assert_allclose(got.reshape(-1)[~quat], _as64(q)[~quat], rtol=0, atol=0)
            compared += 1
    assert compared == N * 6


def test_the_fast_path_refuses_what_the_general_path_explains():
    """nan, a zero quaternion, the wrong length (the kernels check it), a non-finite dt: the same error as before the
    fast path (the general path's), whatever the form (one float64 array, a list, a batch of
    two float64 rows)."""
    model = RobotModel.from_urdf("pybullet_data:a1/a1.urdf", floating_base=True)
    q, v = model.neutral(), np.zeros(model.nv)
    bad_q = q.copy()
    bad_q[8] = np.nan
    zero = q.copy()
    zero[3:7] = 0.0
    cases = 0
    for args, fn, pattern in [((bad_q, v), dyn.integrate, "q holds a non-finite value nan at index"),
                              ((zero, v), dyn.integrate, "quaternion x y z w of .* is zero"),
                              ((q, v[:-1]), dyn.integrate, r"v has shape \((2, )?17,?\)"),
                              ((q, bad_q), dyn.difference, "q1 holds a non-finite value"),
                              ((zero, q), dyn.difference, "q0.* is zero"),
                              ((zero,), dyn.normalize, "q.* is zero"),
                              ((q, q[:-1]), dyn.difference, r"q1 has shape \((2, )?18,?\)"),
                              ((q[1:],), dyn.normalize, r"q has shape \((2, )?18,?\)")]:
        for form in (np.asarray, lambda a: a.tolist(), lambda a: np.stack([a, a])):
            with pytest.raises(ShapeError, match=pattern):
                fn(model, *(form(a) for a in args))
            cases += 1
    with pytest.raises(Exception, match="dt = nan; expected a finite number"):
        dyn.integrate(model, q, v, float("nan"))
    assert cases == 24


def test_the_stage_correction_kernel_matches_the_numpy_series(setup):
    """``tangent_dexp_inv`` for one increment (the kernel a Runge-Kutta-Munthe-Kaas stage of
    ``simulate_model`` calls) gives the batched numpy series' numbers (``spatial.dexp_inv``)."""
    from simbench.dynamics.configuration import tangent_dexp_inv

    _, model, _, _ = setup
    rng = np.random.default_rng(14)
    U, V = rng.normal(size=(20, model.nv)) * 0.3, rng.normal(size=(20, model.nv))
    batch = tangent_dexp_inv(model, U, V)
    for k in range(20):
        np.testing.assert_allclose(tangent_dexp_inv(model, U[k], V[k]), batch[k], rtol=0, atol=1e-14)
    assert (np.abs(batch - V) > 1e-3).any() == (model.nq != model.nv)
