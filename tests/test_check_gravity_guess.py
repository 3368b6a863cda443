"""A FAIL caused by the wrong gravity names the gravity used, fitted (torque is linear in g) and
verified: another standard value, and on a wall-mounted arm the base rotation applied the wrong
way round (R g for R^T g), which on a 90-degree mount is also g negated, so both are said.
Oracle: the hand-written Lagrangian of the 2-link arm with the gravity the bug uses, R = Ry(90)."""
from __future__ import annotations

import numpy as np

import simbench.check as cc
from test_check_plot_reference import LAGRANGE, SCENE, URDF


def test_the_gravity_a_failing_function_used_is_named(tmp_path, monkeypatch):
    (tmp_path / "arm2.urdf").write_text(URDF)
    (tmp_path / "wall.toml").write_text(SCENE)
    namespace: dict = {}
    exec(LAGRANGE, namespace)
    M, cor = namespace["M"], namespace["cor"]
    m1, m2, l1, lc1, lc2 = (namespace[k] for k in ("m1", "m2", "l1", "lc1", "lc2"))

    def upright(q, qd, qdd, g=(0.0, 0.0, -9.80665)):   # gravity components x, z of the base frame
        c1, c12, s1, s12 = np.cos(q[0]), np.cos(q[0] + q[1]), np.sin(q[0]), np.sin(q[0] + q[1])
        # the arm moves in the x-z plane, joints about -y: tau_k = -sum m (r x g)_y
        gx, gz = g[0], g[2]
        a, b = (m1 * lc1 + m2 * l1), m2 * lc2
        grav = np.array([-(a * c1 + b * c12) * gz + (a * s1 + b * s12) * gx, -b * c12 * gz + b * s12 * gx])
        return M(q) @ qdd + cor(q, qd) + grav

    monkeypatch.chdir(tmp_path)
    r = cc.compare("arm2.urdf", samples=10, dynamics=upright, pinocchio=False)
    assert r.verdict == "FAIL", r.line()
    assert r.looks_like.startswith("gravity (0, 0, -9.807) in the base frame instead of the model's (0, 0, -9.81)"), \
        r.looks_like

    Ry = np.array([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [-1.0, 0.0, 0.0]])   # the scene's orientation [0, pi/2, 0]
    g_world = np.array([0.0, 0.0, -9.81])
    right_g, wrong_g = Ry.T @ g_world, Ry @ g_world   # R^T g (the base frame's) and the bug's R g
    assert np.allclose(right_g, [9.81, 0, 0]) and np.allclose(wrong_g, -right_g)

    def good(q, qd, qdd):
        return upright(q, qd, qdd, right_g)

    def transposed(q, qd, qdd):
        return upright(q, qd, qdd, wrong_g)

    assert cc.compare("wall.toml:arm2", samples=10, dynamics=good, pinocchio=False).verdict == "EXPLAINED"
    r = cc.compare("wall.toml:arm2", samples=10, dynamics=transposed, pinocchio=False)
    assert r.verdict == "FAIL", r.line()
    assert r.looks_like.startswith("gravity with the wrong sign or, the same on this robot, the base's rotation "
                                   "applied the wrong way round (R g instead of R^T g: (-9.81, 0, 0))"), r.looks_like
    assert r.reason.endswith("; looks like: " + r.looks_like)
