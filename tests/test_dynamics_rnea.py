"""simbench.dynamics.rnea: inverse dynamics, the fast path's input forms, external wrenches,
joint losses. Oracles: Pinocchio (``rnea``, frame Jacobians), the fast path's own result for the
other input forms (each form must give the same numbers as a plain float64 array), and the
closed form ``D q' + f_c sign(q')`` of the joint losses."""
import numpy as np
import pytest

from _dyn_helpers import rel_err, require
from simbench.oracles.pinocchio import PinocchioMap, symmetric
from simbench.errors import ShapeError
from simbench.model import RobotModel
import simbench.dynamics as dyn

IIWA = RobotModel.from_urdf("pybullet_data:kuka_iiwa/model.urdf")
PANDA = RobotModel.from_urdf("pybullet_data:franka_panda/panda.urdf")
R2D2 = RobotModel.from_urdf("pybullet_data:r2d2.urdf")
A1 = RobotModel.from_urdf("pybullet_data:a1/a1.urdf", floating_base=True)


def _sample(model, seed, n=None):
    rng = np.random.default_rng(seed)
    size = (model.nv,) if n is None else (n, model.nv)
    return model.random_configuration(rng, n), rng.normal(size=size), rng.normal(size=size)


@pytest.mark.parametrize("model", [IIWA, PANDA, A1], ids=["iiwa", "panda", "a1-floating"])
def test_input_forms_give_the_fast_path_numbers(model):
    """Lists (of numpy or Python floats, tuples too: the packed entry), read-only arrays,
    float32, an equal gravity tuple and one-row batches all give what a float64 array gives
    (float32: to float32 precision)."""
    q, qd, qdd = _sample(model, 1)
    ref = dyn.inverse_dynamics(model, q, qd, qdd)
    ro = [np.array(x) for x in (q, qd, qdd)]
    for x in ro:
        x.setflags(write=False)
    forms = {
        "list": dyn.inverse_dynamics(model, list(q), list(qd), list(qdd)),
        "tuples of floats": dyn.inverse_dynamics(model, tuple(q.tolist()), qd.tolist(), tuple(qdd.tolist())),
        "read-only": dyn.inverse_dynamics(model, *ro),
        "gravity tuple": dyn.inverse_dynamics(model, q, qd, qdd, gravity=tuple(model.gravity)),
        "strided": dyn.inverse_dynamics(model, np.repeat(q, 2)[::2], qd, qdd),
    }
    for name, got in forms.items():
        assert got.shape == ref.shape and rel_err(got, ref) < 1e-15, name
    one = dyn.inverse_dynamics(model, q[None], qd[None], qdd[None])
    assert one.shape == (1, model.nv) and rel_err(one[0], ref) < 1e-15
    f32 = dyn.inverse_dynamics(model, *(x.astype(np.float32) for x in (q, qd, qdd)))
    ref32 = dyn.inverse_dynamics(model, *(x.astype(np.float32).astype(float) for x in (q, qd, qdd)))
    assert f32.dtype == np.float64 and rel_err(f32, ref32) < 1e-15
    assert len(forms) + 2 == 7


def test_bad_length_on_the_fast_path_is_the_clear_error():
    q, qd, qdd = _sample(IIWA, 2)
    with pytest.raises(ShapeError, match=r"qd has shape \(6,\); expected \(\.\.\., 7\)"):
        dyn.inverse_dynamics(IIWA, q, qd[:6], qdd)
    with pytest.raises(ShapeError, match="non-finite"):
        dyn.inverse_dynamics(IIWA, q, qd, np.r_[qdd[:6], np.inf])


def test_a_model_used_with_lists_still_pickles():
    """The packed fast path of lists keeps a struct packer with the model's kernel data; a model
    sent to another process (multiprocessing, Ray) after such a call must still pickle, and give
    the same numbers there."""
    import pickle

    q, qd, qdd = _sample(PANDA, 4)
    before = dyn.inverse_dynamics(PANDA, q.tolist(), qd.tolist(), qdd.tolist())
    again = pickle.loads(pickle.dumps(PANDA))
    after = dyn.inverse_dynamics(again, q.tolist(), qd.tolist(), qdd.tolist())
    assert np.array_equal(before, after) and np.array_equal(after, dyn.inverse_dynamics(PANDA, q, qd, qdd))


def test_skip_checks_is_deprecated_and_ignored():
    """skip_checks no longer changes anything (it measured the same as the checked fast path):
    one DeprecationWarning, the same numbers as Pinocchio's, lists converted, bad lengths the
    clear error."""
    import simbench.dynamics.rnea as rnea

    q, qd, qdd = _sample(IIWA, 3)
    rnea._warned.clear()
    with pytest.warns(DeprecationWarning, match="skip_checks=True. is deprecated"):
        got = dyn.inverse_dynamics(IIWA, list(q), qd, qdd, skip_checks=True)
    pin = require("pinocchio")
    pm = pin.buildModelFromUrdf(IIWA.source)
    mp = PinocchioMap(IIWA, pm)
    ref = mp.back(pin.rnea(pm, pm.createData(), mp.q(q), mp.v(qd), mp.v(qdd)))
    assert rel_err(got, ref) < 1e-13
    with pytest.raises(ShapeError, match=r"q has shape \(8,\)"):
        dyn.inverse_dynamics(IIWA, np.r_[q, 0.0], qd, qdd, skip_checks=True)


@pytest.mark.parametrize("model", [IIWA, R2D2, A1], ids=["iiwa", "r2d2", "a1-floating"])
def test_batched_broadcast_and_threaded_equal_single_calls(model):
    """Single calls, serial small batches, threaded large batches and broadcasting agree
    (identical arithmetic: to the last bits of the vectorised loops)."""
    rng = np.random.default_rng(0)
    for n in (6, 2000):
        Q = model.random_configuration(rng, n)
        QD, QDD = rng.normal(size=(n, model.nv)), rng.normal(size=(n, model.nv))
        tau = dyn.inverse_dynamics(model, Q, QD, QDD)
        assert tau.shape == (n, model.nv)
        for i in (0, n // 2, n - 1):
            assert np.allclose(tau[i], dyn.inverse_dynamics(model, Q[i], QD[i], QDD[i]), rtol=0, atol=1e-11)
    t2 = dyn.inverse_dynamics(model, Q[0], QD[:3].reshape(3, 1, -1), QDD[:3].reshape(3, 1, -1))
    assert t2.shape == (3, 1, model.nv)
    assert np.allclose(t2[1, 0], dyn.inverse_dynamics(model, Q[0], QD[1], QDD[1]), rtol=0, atol=1e-11)


def test_external_wrenches_on_fixed_links_against_pinocchio():
    """Wrenches on links attached by fixed joints (merged into their parent body for the
    dynamics): tau = ID - sum J^T F with Pinocchio's frame Jacobians; batched and single."""
    pin = require("pinocchio")
    model = PANDA
    pm = pin.buildModelFromUrdf(model.source)
    pd = pm.createData()
    mp = PinocchioMap(model, pm)
    rng = np.random.default_rng(11)
    Q = model.random_configuration(rng, 2)
    QD, QDD = rng.normal(size=(2, model.dof)), rng.normal(size=(2, model.dof))
    links = ["panda_hand", "panda_link8", "panda_link3"]
    F = {name: rng.normal(size=(2, 6)) for name in links}
    got = dyn.inverse_dynamics(model, Q, QD, QDD, f_ext=F)
    for s in range(2):
        pin.computeJointJacobians(pm, pd, mp.q(Q[s]))
        pin.updateFramePlacements(pm, pd)
        expected = mp.back(pin.rnea(pm, pd, mp.q(Q[s]), mp.v(QD[s]), mp.v(QDD[s])))
        for name in links:
            J = pin.getFrameJacobian(pm, pd, pm.getFrameId(name, pin.FrameType.BODY),
                                     pin.ReferenceFrame.LOCAL_WORLD_ALIGNED) @ mp.P
            expected = expected - np.vstack([J[3:], J[:3]]).T @ F[name][s]
        assert rel_err(got[s], expected) < 1e-9
        single = dyn.inverse_dynamics(model, Q[s], QD[s], QDD[s], f_ext={k: v[s] for k, v in F.items()})
        assert rel_err(single, expected) < 1e-9


def test_external_wrench_on_a_floating_base_against_pinocchio():
    """A wrench on the trunk of a floating a1 and one on a foot: Pinocchio's rnea with fext."""
    pin = require("pinocchio")
    pm = pin.buildModelFromUrdf(A1.source, pin.JointModelFreeFlyer())
    pd = pm.createData()
    mp = PinocchioMap(A1, pm)
    q, v, a = _sample(A1, 5)
    F = {"trunk": np.array([0.3, -0.2, 0.1, 5.0, -3.0, 20.0]), "FR_lower": np.array([0.0, 0.1, 0.0, 1.0, 2.0, -30.0])}
    pin.computeJointJacobians(pm, pd, mp.q(q))
    pin.updateFramePlacements(pm, pd)
    want = mp.back(pin.rnea(pm, pd, mp.q(q), mp.v(v), mp.v(a)))
    for name, w in F.items():
        J = pin.getFrameJacobian(pm, pd, pm.getFrameId(name, pin.FrameType.BODY),
                                 pin.ReferenceFrame.LOCAL_WORLD_ALIGNED) @ mp.P
        want = want - np.vstack([J[3:], J[:3]]).T @ w
    assert rel_err(dyn.inverse_dynamics(A1, q, v, a, f_ext=F), want) < 1e-9


def test_joint_losses_closed_form():
    """``damping=True`` adds D q', ``friction=True`` adds f_c sign(q') (Ankur Handa,
    "Understanding Physics Engines": the d_ii q'_i term)."""
    d = np.linspace(0.1, 0.7, len(IIWA.joint_all_names))
    f = np.linspace(0.05, 0.4, len(IIWA.joint_all_names))
    model = IIWA.replace(joint_damping=d, joint_friction=f)
    q, qd, qdd = _sample(model, 7)
    base = dyn.inverse_dynamics(model, q, qd, qdd)
    mov = model.movable
    assert rel_err(dyn.inverse_dynamics(model, q, qd, qdd, damping=True) - base, d[mov] * qd) < 1e-14
    assert rel_err(dyn.inverse_dynamics(model, q, qd, qdd, friction=True) - base, f[mov] * np.sign(qd)) < 1e-14


def test_bias_and_gravity_against_pinocchio_on_a_floating_base():
    """``bias_forces`` = pin.nonLinearEffects, ``gravity_torques`` = pin.computeGeneralizedGravity
    (the base rows: the weight of the robot in the base frame)."""
    pin = require("pinocchio")
    pm = pin.buildModelFromUrdf(A1.source, pin.JointModelFreeFlyer())
    pd = pm.createData()
    mp = PinocchioMap(A1, pm)
    q, v, _ = _sample(A1, 9)
    assert rel_err(dyn.bias_forces(A1, q, v), mp.back(pin.nonLinearEffects(pm, pd, mp.q(q), mp.v(v)))) < 1e-9
    g = dyn.gravity_torques(A1, q)
    assert rel_err(g, mp.back(pin.computeGeneralizedGravity(pm, pd, mp.q(q)))) < 1e-9
    M = dyn.mass_matrix(A1, q)
    assert rel_err(M, mp.back_matrix(symmetric(pin.crba(pm, pd, mp.q(q))))) < 1e-9


def test_large_joint_angles_against_pinocchio():
    """sin and cos of a revolute angle: vectorised polynomials up to 1e7 rad, math.sin beyond,
    in single calls and in blocks alike (Pinocchio's std::sin as the oracle)."""
    pin = require("pinocchio")
    pm = pin.buildModelFromUrdf(IIWA.source)
    pd = pm.createData()
    mp = PinocchioMap(IIWA, pm)
    rng = np.random.default_rng(13)
    Q = rng.uniform(-3, 3, (700, 7)) + rng.choice([0.0, 5e6, -9e6, 3e7, -2e8], size=(700, 7))
    QD, QDD = rng.normal(size=Q.shape), rng.normal(size=Q.shape)
    tau = dyn.inverse_dynamics(IIWA, Q, QD, QDD)
    for i in range(0, 700, 50):
        want = mp.back(pin.rnea(pm, pd, mp.q(Q[i]), mp.v(QD[i]), mp.v(QDD[i])))
        assert rel_err(tau[i], want) < 1e-9
        assert rel_err(dyn.inverse_dynamics(IIWA, Q[i], QD[i], QDD[i]), want) < 1e-9
