"""What a user walkthrough of simbench.dynamics.symbolic found. Oracle: Pinocchio (rnea,
nonLinearEffects, crba) on the same URDF, with the overridden mass set in Pinocchio's model."""
from __future__ import annotations

import gc
import math

import numpy as np
import pytest

from _dyn_helpers import require
from simbench.errors import ShapeError, SimbenchError, UnknownNameError
from simbench.model import RobotModel
from simbench.paths import resolve_urdf

sp = require("sympy")
pin = require("pinocchio")

from simbench.dynamics.symbolic import derive  # noqa: E402

URDF = "simbench:planar_2r.urdf"


@pytest.fixture(scope="module")
def arm():
    model = RobotModel.from_urdf(URDF)
    return model, derive(model, symbolic_parameters=True)


def _pin(mass2=None):
    pm = pin.buildModelFromUrdf(str(resolve_urdf(URDF)))
    pm.gravity.linear[:] = [0.0, 0.0, -9.81]
    if mass2 is not None:   # same COM and rotational inertia about it, another mass
        I = pm.inertias[2]
        pm.inertias[2] = pin.Inertia(mass2, I.lever, I.inertia)
    return pm, pm.createData()


def _states(n=3):
    rng = np.random.default_rng(11)
    return rng.uniform(-3, 3, (n, 2)), rng.normal(0, 2, (n, 2)), rng.normal(0, 3, (n, 2))


def test_parameter_overrides_keyed_by_symbol_are_used(arm, tmp_path):
    """``{sp.Symbol("m_link2"): 3.0}`` was silently ignored (derive's symbols are real=True,
    so the user's Symbol was another one); now it sets the mass as the str key does."""
    model, eom = arm
    pm, pd = _pin(3.0)
    pm0, pd0 = _pin()
    assert abs(eom.parameters[sp.Symbol("m_link2", real=True)] - 3.0) > 0.1   # the model's value differs
    keys = [sp.Symbol("m_link2"), "m_link2", sp.Symbol("m_link2", real=True)]
    fns = [eom.lambdify({k: 3.0}) for k in keys] + [eom.numeric({sp.Symbol("m_link2"): 3.0}).lambdify()]
    fns.append(eom.compile(tmp_path / "over.c", opt="-O0", values={sp.Symbol("m_link2"): 3.0}))
    Q, QD, QDD = _states()
    n, err = 0, 0.0
    for f in fns:
        for q, qd, qdd in zip(Q, QD, QDD):
            want = pin.rnea(pm, pd, q, qd, qdd)
            err = max(err, np.abs(f.inverse_dynamics(q, qd, qdd) - want).max() / np.abs(want).max())
            assert np.abs(want - pin.rnea(pm0, pd0, q, qd, qdd)).max() > 0.1   # the override matters
            n += 1
    print(f"{n} comparisons with pin.rnea (m_link2 = 3), max relative error {err:.1e}")
    assert err < 1e-10 and n == 15
    for bad, close in [(sp.Symbol("mass_link2"), "m_link2"), (sp.Symbol("q1"), None)]:
        with pytest.raises(UnknownNameError, match=rf"^unknown parameter '{bad}'") as e:
            eom.lambdify({bad: 3.0})
        assert close is None or close in str(e.value)
        with pytest.raises(UnknownNameError):
            eom.numeric({bad: 3.0})


def test_compile_relative_path_missing_compiler_folder_and_cleanup(arm, tmp_path, monkeypatch):
    model, eom = arm
    num = eom.numeric()
    monkeypatch.chdir(tmp_path)
    lib = num.compile("dyn.c", opt="-O0")   # crashed: OSError dyn.so: cannot open shared object file
    pm, pd = _pin()
    Q, QD, _ = _states()
    n = 0
    for q, qd in zip(Q, QD):
        want = pin.nonLinearEffects(pm, pd, q, qd)
        assert np.abs(lib.bias_forces(q, qd) - want).max() < 1e-10 * np.abs(want).max()
        n += 1
    assert np.abs(lib.bias_forces(Q, QD) - [pin.nonLinearEffects(pm, pd, *x) for x in zip(Q, QD)]).max() < 1e-9
    assert n == 3
    with pytest.raises(SimbenchError, match=r"^C compiler 'clang-99' \(cc= or \$CC\) not found") as e:
        num.compile(cc="clang-99")
    assert "\n" not in str(e.value)
    with pytest.raises(SimbenchError, match=r"^to_c\('nodir/x.c'\): the folder 'nodir' does not exist"):
        num.to_c("nodir/x.c")
    tmp = num.compile(opt="-O0")
    folder = tmp.library.parent
    assert folder.name.startswith("simbench_eom_") and folder.is_dir()
    del tmp
    gc.collect()
    assert not folder.exists()


def test_derive_and_call_input_checks(arm, tmp_path):
    model, eom = arm
    by_path = derive(str(resolve_urdf(URDF)))      # AttributeError 'str' ... joint_type_code before
    by_name = derive(URDF)
    pm, pd = _pin()
    q = np.array([0.4, -1.1])
    want = pin.crba(pm, pd, q)
    want = np.triu(want) + np.triu(want, 1).T
    for e in (by_path, by_name):
        assert np.abs(e.lambdify().mass_matrix(q) - want).max() < 1e-12
    cases = [
        (lambda: derive(model, max_dof="x"), SimbenchError, r"^max_dof = 'x'; expected a whole number >= 1"),
        (lambda: derive(model, max_dof=3.0), SimbenchError, r"did you mean 3\?"),
        (lambda: derive(model, symbolic_parameters="yes"), SimbenchError,
         r"^symbolic_parameters = 'yes'; expected True or False \(did you mean True\?\)"),
        (lambda: derive(42), SimbenchError, r"^derive\(model\): expected a RobotModel or a URDF path"),
        (lambda: derive(RobotModel.from_urdf("pybullet_data:laikago/laikago_toes_zup.urdf", floating_base=True)),
         SimbenchError, r"\(laikago_toes_zup.urdf\): symbolic derivation needs a fixed base"),
    ]
    f = eom.lambdify()
    c = eom.numeric().compile(tmp_path / "chk.c", opt="-O0")
    for g in (f, c):
        cases += [
            (lambda g=g: g.inverse_dynamics(np.zeros((3, 2)), np.zeros((4, 2)), np.zeros(2)), ShapeError,
             r"^joint arrays do not broadcast: q \(3, 2\), qd \(4, 2\), qdd \(2,\)"),
            (lambda g=g: g.inverse_dynamics([0.1, math.nan], np.zeros(2), np.zeros(2)), ShapeError,
             r"^q holds a non-finite value nan at index \(1,\) \(joint 'theta2'\)"),
            (lambda g=g: g.mass_matrix(np.array([[0.1, 0.2], [0.0, math.inf]])), ShapeError,
             r"^q holds a non-finite value inf at index \(1, 1\) \(joint 'theta2'\)"),
            (lambda g=g: g.coriolis_matrix(np.zeros(2), [math.nan, 0.0]), ShapeError,
             r"^qd holds a non-finite value nan at index \(0,\) \(joint 'theta1'\)"),
        ]
    for call, kind, message in cases:
        with pytest.raises(kind, match=message) as err:
            call()
        assert "\n" not in str(err.value)
    assert len(cases) == 13


def test_latex_prints_the_matrix_C(arm):
    """The teacher's C(q, q'): the line printed is sympy's LaTeX of eom.C, and C q' is slide
    12's c for the numeric planar 2R (checked in test_symbolic); here C itself against
    Pinocchio's computeCoriolisMatrix at one state through the printed expression."""
    model, _ = arm
    eom = derive(model)
    tex = eom.latex()
    line = next(ln for ln in tex.splitlines() if ln.startswith("C(q, \\dot{q}) &= "))
    qs, qds = list(eom.q), list(eom.qd)
    names = {s: f"q_{{{i + 1}}}" for i, s in enumerate(qs)}
    names.update({s: f"\\dot{{q}}_{{{i + 1}}}" for i, s in enumerate(qds)})
    assert line == f"C(q, \\dot{{q}}) &= {sp.latex(eom.C, symbol_names=names)} \\\\"
    pm, pd = _pin()
    q, qd = np.array([0.3, 0.9]), np.array([-1.2, 0.7])
    C = np.array(eom.C.subs(dict(zip(qs + qds, [*q, *qd]))).evalf(), dtype=float)
    assert np.abs(C - pin.computeCoriolisMatrix(pm, pd, q, qd)).max() < 1e-10


def test_lock_outside_the_limits_says_so_in_one_warning(caplog):
    """``lock_joints(panda, {"panda_finger_joint1": 2.0})`` locked a finger 2 m out (limit
    0.04 m) without a word. It is still locked there (a pose is not a motion), with one warning
    line per joint naming the limits and the closest valid value; the locked robot's dynamics
    are Pinocchio's reduced model at that value (the panda's arm is then derived by sympy)."""
    import logging

    import simbench
    from simbench.dynamics import inverse_dynamics
    from simbench.oracles.pinocchio import PinocchioMap, pinocchio_model

    panda = RobotModel.from_urdf("pybullet_data:franka_panda/panda.urdf")
    locked = {"panda_finger_joint1": 2.0, "panda_finger_joint2": 2.0}   # the second mimics the first
    with caplog.at_level(logging.WARNING, logger="simbench.model_lock"):
        arm = simbench.lock_joints(panda, locked)
    lines = [r.getMessage() for r in caplog.records if r.name == "simbench.model_lock"]
    assert lines == [f"panda: joint 'panda_finger_joint{i}' = 2: outside the joint's limits [0, 0.04] m; "
                     "closest valid value 0.04; locked there anyway (lock_joints)" for i in (1, 2)]
    pm = pinocchio_model(panda)
    q_ref = panda.neutral()
    for name, value in locked.items():
        q_ref[panda.joint_index(name)] = value
    rm = pin.buildReducedModel(pm, [pm.getJointId(n) for n in locked], PinocchioMap(panda, pm).q(q_ref))
    rd, mp = rm.createData(), PinocchioMap(arm, rm)
    rng = np.random.default_rng(8)
    n = 0
    for _ in range(3):
        q, v, a = arm.random_configuration(rng), *rng.normal(size=(2, arm.nv))
        want = mp.back(pin.rnea(rm, rd, mp.q(q), mp.v(v), mp.v(a)))
        assert np.abs(inverse_dynamics(arm, q, v, a) - want).max() < 1e-10 * np.abs(want).max()
        n += 1
    assert n == 3
