"""What ``simbench check`` accepts from user dynamics: a model-level module gets every sample at
once (and says so when it was written for one configuration), a function returns exactly
``(n,)`` real floats. The oracle is the closed-form Lagrangian dynamics of the planar 2R arm
(point masses), which PyBullet and Pinocchio agree with."""
from __future__ import annotations

import types

import numpy as np
import pytest

import simbench.check as cc

ARM = "simbench:planar_2r.urdf"
m1, m2, L1, L2, G = 1.2, 0.8, 0.6, 0.4, 9.81


def M_closed(q):
    c2 = np.cos(q[1])
    a = m1 * L1**2 + m2 * (L1**2 + 2 * L1 * L2 * c2 + L2**2)
    b = m2 * (L1 * L2 * c2 + L2**2)
    return np.array([[a, b], [b, m2 * L2**2]])


def tau_closed(q, qd, qdd, g=G):
    s2 = np.sin(q[1])
    cor = np.array([-m2 * L1 * L2 * s2 * (2 * qd[0] * qd[1] + qd[1]**2), m2 * L1 * L2 * qd[0]**2 * s2])
    grav = np.array([(m1 + m2) * L1 * g * np.cos(q[0]) + m2 * g * L2 * np.cos(q[0] + q[1]),
                     m2 * g * L2 * np.cos(q[0] + q[1])])
    return M_closed(q) @ qdd + cor + grav


def per_configuration_module():
    """A module written for one configuration per call (like pin.rnea)."""
    def inverse_dynamics(model, q, qd, qdd, *, gravity=None):
        return np.array([float(x) for x in tau_closed(q, qd, qdd)])  # float() of an array row raises

    def mass_matrix(model, q):
        return M_closed(q)

    return types.SimpleNamespace(__name__="percfg", inverse_dynamics=inverse_dynamics, mass_matrix=mass_matrix)


def test_a_per_configuration_module_is_told_the_batch_contract():
    r = cc.compare(ARM, samples=20, dynamics=per_configuration_module(), pinocchio=False)
    assert r.verdict == "ERROR", r.line()
    for words in ["percfg.inverse_dynamics raised ValueError", "test_check_usercode_contract.py:",
                  "when given q of shape (20, 2)", "every sample at once",
                  "called with one configuration (q of shape (2,)) it works"]:
        assert words in r.reason, (words, r.reason)
    # the same functions looped over the rows: the closed form agrees with PyBullet on all 20 samples
    one = per_configuration_module()
    batched = types.SimpleNamespace(
        __name__="looped",
        inverse_dynamics=lambda model, q, qd, qdd, *, gravity=None: np.array(
            [one.inverse_dynamics(model, *x) for x in zip(q, qd, qdd)]),
        mass_matrix=lambda model, q: np.array([one.mass_matrix(model, x) for x in q]))
    r = cc.compare(ARM, samples=20, dynamics=batched, pinocchio=False)
    assert r.verdict == "PASS" and r.samples == 20 and r.errors.tau_abs < 1e-10 and r.errors.M_abs < 1e-10, r.line()


def test_a_module_returning_one_configuration_is_told_the_expected_shape():
    mod = types.SimpleNamespace(__name__="first", mass_matrix=lambda model, q: np.array([M_closed(x) for x in q]),
                                inverse_dynamics=lambda model, q, qd, qdd, *, gravity=None:
                                tau_closed(q[0], qd[0], qdd[0]))
    r = cc.compare(ARM, samples=5, dynamics=mod, pinocchio=False)
    assert r.verdict == "ERROR" and "first.inverse_dynamics returned shape (2,) for q of shape (5, 2); expected " \
        "(5, 2): a model-level module's functions get every sample at once" in r.reason, r.reason


@pytest.mark.parametrize("name, wrap, words", [
    ("column", lambda t: t.reshape(2, 1), "returned shape (2, 1) at sample 0; expected 2 torques (shape (2,))"),
    ("row", lambda t: t.reshape(1, 2), "returned shape (1, 2) at sample 0; expected 2 torques (shape (2,))"),
    ("scalar", lambda t: float(t[0]), "returned shape () at sample 0"),
    ("bool", lambda t: t > 0, "of dtype bool at sample 0, booleans, not numbers; expected 2 torques"),
    ("complex", lambda t: t + 0j, "of dtype complex128 at sample 0, complex, not real numbers"),
    ("object", lambda t: np.array([t[0], "x"], dtype=object), "of dtype object at sample 0, not real numbers"),
])
def test_a_function_returning_the_wrong_shape_or_type_is_an_error(name, wrap, words):
    r = cc.compare(ARM, samples=5, dynamics=lambda q, qd, qdd: wrap(tau_closed(q, qd, qdd)), pinocchio=False)
    assert r.verdict == "ERROR" and words in r.reason, (name, r.reason)


def test_the_closed_form_itself_passes_in_every_accepted_form():
    """The control: the same numbers as a flat float64, float list and int-free tuple pass on
    all 30 samples (errors below 1e-10 against PyBullet)."""
    forms = [lambda t: t, lambda t: [float(x) for x in t], lambda t: tuple(t)]
    for wrap in forms:
        r = cc.compare(ARM, samples=30, dynamics=lambda q, qd, qdd, w=wrap: w(tau_closed(q, qd, qdd)),
                       pinocchio=False)
        assert r.verdict == "PASS" and r.samples == 30 and r.errors.tau_abs < 1e-10, r.line()
    assert len(forms) == 3
