"""The four scenario scripts, each run headless for a short duration through ``run_script``,
asserting on their numbers against independent oracles.

Measured on the development machine (numbers printed by the scripts):

* computed torque, Kp = 25, Kd = 10, 1 s per model: max |q_d - q| = 7.7e-6 rad with our model,
  0.40 rad with lbr_iiwa_link_4's mass doubled. Without the half-step velocity alignment the
  error with our model is 6.2e-3 rad; with PyBullet's default damping kept on, ~1 rad.
* triple pendulum over 10 s at 240 Hz: our semi-implicit Euler equals PyBullet (damping off) to
  3e-14 rad; energy error / swing energy: RK4 5.9e-7, semi-implicit and PyBullet 0.30;
  PyBullet's default link damping dissipates 70 % of the swing energy.
* free box (intermediate axis) over 10 s: RKMK4 energy error 3.4e-10, momentum 8e-9; PyBullet's
  body angular velocity equals our Lie-group Euler to 4e-12 rad/s (energy error 9.6 %).
"""
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pybullet as p
import pytest
from PIL import Image

from simbench.paths import resolve_path
from simbench.runner import load_script, run_script

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


def run(name, tmp_path, **kw):
    res = run_script(SCRIPTS / name, gui=False, out_dir=tmp_path, progress=False, **kw)
    assert res.exit_code == 0, res
    return res


def test_computed_torque_tracks_with_our_model_not_with_a_wrong_one(tmp_path):
    res = run("scenario_computed_torque.py", tmp_path, duration=2.0)
    v = res.value
    assert v["steps_ours"] == v["steps_wrong"] == 240
    assert v["max_error_ours"] < 5e-5          # measured 7.7e-6 rad
    assert v["max_error_wrong"] > 0.05         # measured 0.40 rad (link 4 mass doubled)
    assert v["max_error_wrong"] > 1000 * v["max_error_ours"]
    png = Image.open(v["plot"])
    assert png.size[0] > 400 and np.asarray(png.convert("L")).std() > 10


def test_pendulum_vs_pybullet_energy_and_integrator(tmp_path):
    res = run("scenario_pendulum_vs_pybullet.py", tmp_path, duration=3.0)
    v = res.value
    assert v["duration"] == pytest.approx(3.0)
    assert v["energy_drift_rk4"] < 1e-5                               # measured ~6e-7
    assert v["max_dq_semi_implicit_vs_pybullet_undamped"] < 1e-9      # the same integrator
    assert v["energy_drift_pybullet_undamped"] > 100 * v["energy_drift_rk4"]
    assert v["energy_drift_semi_implicit"] == pytest.approx(v["energy_drift_pybullet_undamped"], rel=1e-6)
    assert v["energy_loss_pybullet_default"] > 0.1                    # link damping 0.04
    assert v["t_default_departs_0.1rad"] < 3.0
    assert Path(v["plot"]).stat().st_size > 10_000


BASE_MASS = float(ET.parse(resolve_path("simbench:sim/pendulum3.urdf")).find("link/inertial/mass").get("value"))


def test_pendulum_energy_function_matches_pybullet_link_states():
    """The scenario's energy K + P against one computed from PyBullet's own link states:
    sum of 1/2 m v_c^2 + 1/2 w^T R I_c R^T w + m g z_c over the rods, plus m g z_c of the fixed
    base (sim.model stands where the scene puts it: both potentials are zero at the world origin)."""
    ns = load_script(SCRIPTS / "scenario_pendulum_vs_pybullet.py")
    import simbench

    with simbench.Simulation(ns["SCENE"], gui=False) as sim:
        r, model = sim.robot, sim.model
        rng = np.random.default_rng(0)
        for _ in range(3):
            q, qd = rng.uniform(-2, 2, 3), rng.uniform(-3, 3, 3)
            r.reset(q, qd)
            e_pb = 0.0
            for li in range(3):
                st = p.getLinkState(r.id, li, computeLinkVelocity=True, computeForwardKinematics=True,
                                    physicsClientId=sim.client)
                m, inertia = p.getDynamicsInfo(r.id, li, physicsClientId=sim.client)[:3:2]
                R = np.array(p.getMatrixFromQuaternion(st[1])).reshape(3, 3)
                w, v = np.array(st[7]), np.array(st[6])
                e_pb += 0.5 * m * v @ v + 0.5 * w @ R @ np.diag(inertia) @ R.T @ w + m * 9.81 * st[0][2]
            # the fixed base's constant m g z_c (PyBullet reports a fixed base's mass as 0: the file's)
            e_pb += BASE_MASS * 9.81 * p.getBasePositionAndOrientation(r.id, physicsClientId=sim.client)[0][2]
            e_ours = float(ns["energy"](model, q, qd))   # sim.model is placed at the scene's pose, so
            assert e_ours == pytest.approx(e_pb, abs=1e-9)  # both potentials are zero at the world origin


def test_free_body_flip_against_scipy(tmp_path):
    from scipy.integrate import solve_ivp

    res = run("scenario_free_body.py", tmp_path, duration=4.0)
    v = res.value
    assert v["energy_drift_rk4"] < 1e-8 and v["momentum_drift_rk4"] < 1e-7   # measured 3e-10, 4e-9
    assert v["energy_drift_euler"] > 1e-2 and v["energy_drift_pybullet"] > 1e-2
    assert v["max_dw_euler_vs_pybullet"] < 1e-9   # PyBullet = explicit Euler on w (measured 4e-12)
    # oracle: Euler's equations I w' = (I w) x w with a tight-tolerance general ODE solver
    I3 = np.array([0.4 ** 2 + 0.1 ** 2, 0.4 ** 2 + 0.1 ** 2, 0.4 ** 2 + 0.2 ** 2]) / 12
    I3[0] = (0.2 ** 2 + 0.1 ** 2) / 12
    t = v["t"]
    sol = solve_ivp(lambda _, w: np.cross(I3 * w, w) / I3, (0, t[-1]), [0.05, 6.0, 0.0], t_eval=t,
                    method="DOP853", rtol=1e-12, atol=1e-12)
    assert np.abs(v["w_rk4"] - sol.y.T).max() < 1e-5
    w_y = sol.y[1]
    k = np.flatnonzero(np.sign(w_y[1:]) != np.sign(w_y[:-1]))[0]
    t_flip = t[k] + (t[k + 1] - t[k]) * w_y[k] / (w_y[k] - w_y[k + 1])
    assert len(v["flips_rk4"]) == 1 and v["flips_rk4"][0] == pytest.approx(t_flip, abs=1e-4)
    assert v["flips_pybullet"][0] == pytest.approx(t_flip, abs=0.05)
    assert Image.open(v["plot"]).size[0] > 400


def test_collision_loop_moves_only_through_free_space(tmp_path):
    gif = tmp_path / "loop.gif"
    res = run("scenario_collision_loop.py", tmp_path, duration=4.0, seed=1, record=gif, fps=10, size=(80, 60))
    v = res.value
    assert v["moves"] >= 2 and v["sampled"] >= v["moves"]
    # every sample was rejected, or moved to (the last move may be cut short by the duration)
    assert v["sampled"] - v["moves"] - v["rejected_goal"] - v["rejected_path"] in (0, 1)
    # the independent check: PyBullet's getClosestPoints on the main server while moving
    assert v["min_clearance_main"] > 0.0
    assert v["max_reach_error"] < 1e-3
    im = Image.open(gif)
    assert im.n_frames == 1 + 40
    im.seek(20)
    assert np.asarray(im.convert("RGB"), dtype=float).std() > 5
