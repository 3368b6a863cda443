"""``scripts/scenario_quadruped.py`` run headless the way a user runs it (``simbench run ...
--direct``), its reported numbers asserted against closed forms.

Closed forms: free fall from rest has base acceleration g and joint accelerations 0, so
``z = z0 - g t^2 / 2`` with the joints still; semi-implicit Euler (PyBullet's stepping) lags that
by exactly ``g dt t / 2``; with no external force or torque (zero gravity, joint torques only)
linear and angular momentum stay at their initial value, zero from rest.
"""
import os
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from simbench.runner import run_script

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "scenario_quadruped.py"


def test_quadruped_free_fall_and_momentum_against_closed_forms(tmp_path):
    res = run_script(SCRIPT, gui=False, out_dir=tmp_path, progress=False, duration=2.0)
    assert res.exit_code == 0, res
    v = res.value
    assert v["duration"] == pytest.approx(2.0)
    # free fall from rest
    assert v["fall_accel_base_error"] < 1e-12 and v["fall_accel_angular_max"] < 1e-12
    assert v["fall_accel_joints_max"] < 1e-10                       # measured 2.8e-14
    assert v["fall_z_error_rk4"] < 1e-9 and v["fall_joint_drift_rk4"] < 1e-10
    assert v["fall_z_error_pybullet"] == pytest.approx(9.81 * v["dt"] * 1.0 / 2, rel=1e-3)  # g dt t / 2
    assert v["fall_z_error_semi_implicit"] == pytest.approx(9.81 * v["dt"] * 1.0 / 2, rel=1e-9)
    assert v["fall_joint_drift_pybullet"] < 1e-9
    # zero gravity, internal torques: momentum stays zero
    assert v["swim_joint_range"] > 0.5 and v["swim_base_turn_rad"] > 0.1    # the robot really moved
    assert v["momentum_linear_max_rk4"] < 1e-4 and v["momentum_angular_max_rk4"] < 1e-3  # 1.1e-6, 3.3e-5
    assert v["momentum_linear_max_pybullet"] > 100 * v["momentum_linear_max_rk4"]
    # PyBullet drifts like our own first-order method
    for kind in ("linear", "angular"):
        assert v[f"momentum_{kind}_max_pybullet"] == pytest.approx(v[f"momentum_{kind}_max_semi_implicit"], rel=0.3)
    png = Image.open(v["plot"])
    assert png.size[0] > 400


def test_quadruped_scenario_via_cli(tmp_path):
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, "-m", "simbench", "run", str(SCRIPT), "--direct", "--duration", "1",
                           "--out", str(tmp_path / "out")], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "free fall from rest" in proc.stdout and "momentum (zero from rest)" in proc.stdout
    assert (tmp_path / "out" / "quadruped.png").stat().st_size > 10_000
