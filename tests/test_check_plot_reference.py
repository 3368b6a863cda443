"""``check --plot`` draws the difference against the reference its verdict used (the true
dynamics where PyBullet is shown wrong, here a wall-mounted arm), titled with the dynamics under
test, with a legend; a plot that cannot be drawn leaves a note in the JSON. Oracle: a
hand-written Lagrangian of the 2-link arm, upright and wall-mounted, on the plot's trajectory."""
from __future__ import annotations

import json
import os
import sys

import numpy as np
import pytest

pytest.importorskip("matplotlib")

URDF = """<?xml version="1.0"?>
<robot name="arm2">
  <link name="base"/>
  <link name="upper"><inertial><origin xyz="0.2 0 0"/><mass value="2.0"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.05" iyz="0" izz="0.045"/></inertial></link>
  <link name="fore"><inertial><origin xyz="0.3 0 0"/><mass value="1.5"/>
    <inertia ixx="0.008" ixy="0" ixz="0" iyy="0.03" iyz="0" izz="0.025"/></inertial></link>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="upper"/>
    <axis xyz="0 -1 0"/><limit lower="-3" upper="3" effort="100" velocity="10"/></joint>
  <joint name="elbow" type="revolute"><parent link="upper"/><child link="fore"/>
    <origin xyz="0.5 0 0"/><axis xyz="0 -1 0"/><limit lower="-2.5" upper="2.5" effort="100" velocity="10"/></joint>
</robot>
"""

SCENE = """gravity = [0, 0, -9.81]
robot = "arm2"

[[body]]
name = "arm2"
urdf = "arm2.urdf"
position = [0, 0, 1]
orientation = [0, 1.5707963267948966, 0]
fixed_base = true
"""

LAGRANGE = '''
import numpy as np
m1, m2, l1, lc1, lc2, I1, I2, G = 2.0, 1.5, 0.5, 0.2, 0.3, 0.05, 0.03, 9.81

def M(q):
    c2 = np.cos(q[1])
    a = m1 * lc1**2 + I1 + m2 * (l1**2 + lc2**2 + 2 * l1 * lc2 * c2) + I2
    b = m2 * (lc2**2 + l1 * lc2 * c2) + I2
    return np.array([[a, b], [b, m2 * lc2**2 + I2]])

def cor(q, qd):
    h = -m2 * l1 * lc2 * np.sin(q[1])
    return np.array([h * (2 * qd[0] * qd[1] + qd[1] ** 2), -h * qd[0] ** 2])

def tau(q, qd, qdd):          # upright: gravity -z
    c1, c12 = np.cos(q[0]), np.cos(q[0] + q[1])
    return M(q) @ qdd + cor(q, qd) + np.array([(m1 * lc1 + m2 * l1) * G * c1 + m2 * lc2 * G * c12,
                                               m2 * lc2 * G * c12])

def tau_wall(q, qd, qdd):     # mounted Ry(pi/2): gravity +x in the base frame
    s1, s12 = np.sin(q[0]), np.sin(q[0] + q[1])
    return M(q) @ qdd + cor(q, qd) + np.array([(m1 * lc1 + m2 * l1) * G * s1 + m2 * lc2 * G * s12,
                                               m2 * lc2 * G * s12])

CALLS = [0]
def tau_count(q, qd, qdd):    # breaks after 20 calls: in the plot, not in the check (12 calls)
    CALLS[0] += 1
    if CALLS[0] > 20:
        raise RuntimeError("out of licence seats")
    return tau(q, qd, qdd)
'''


@pytest.fixture
def project(tmp_path, monkeypatch):
    (tmp_path / "arm2.urdf").write_text(URDF)
    (tmp_path / "wall.toml").write_text(SCENE)
    (tmp_path / "lagr.py").write_text(LAGRANGE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), *[p for p in sys.path if p]]))
    return tmp_path


def _drawn(monkeypatch):
    """What the plots draw on a log axis and their titles, recorded."""
    from matplotlib.axes import Axes

    logs, titles = [], []
    semilogy, set_title = Axes.semilogy, Axes.set_title
    monkeypatch.setattr(Axes, "semilogy", lambda self, x, y, *a, **k: (logs.append(np.array(y)),
                                                                        semilogy(self, x, y, *a, **k))[1])
    monkeypatch.setattr(Axes, "set_title", lambda self, t, *a, **k: (titles.append(t), set_title(self, t, *a, **k))[1])
    return logs, titles


@pytest.mark.parametrize("func, verdict, other", [("tau", "FAIL", "tau_wall"), ("tau_wall", "EXPLAINED", "tau")])
def test_the_difference_drawn_is_against_the_verdicts_reference(project, monkeypatch, func, verdict, other):
    import lagr
    from simbench.check.plots import smooth_trajectory
    from simbench.cli import main
    from simbench.model import load

    logs, titles = _drawn(monkeypatch)
    code = main(["check", "wall.toml:arm2", "--dynamics", f"lagr:{func}", "--samples", "5", "--no-pinocchio",
                 "--plot", "plots", "--json", "r.json"])
    robots = json.loads((project / "r.json").read_text())["robots"]
    assert len(robots) == 1 and robots[0]["verdict"] == verdict, robots
    assert code == (1 if verdict == "FAIL" else 0)
    assert (project / "plots" / "wall.toml_arm2.png").is_file()
    t, q, qd, qdd = smooth_trajectory(load(project / "arm2.urdf"))
    true_diff = np.abs([getattr(lagr, func)(*x) - lagr.tau_wall(*x) for x in zip(q, qd, qdd)])
    assert len(logs) == 2   # one line per joint
    for j in range(2):
        np.testing.assert_allclose(logs[j] - 1e-18, true_diff[:, j], atol=1e-9)
    assert f"|lagr:{func} - true|" in titles, titles
    if verdict == "FAIL":   # upright gravity on a wall: the drawn difference is gravity's, tens of N m
        assert logs[0].max() > 10


def test_a_plot_that_fails_leaves_a_note_in_the_json(project):
    import subprocess

    proc = subprocess.run([sys.executable, "-m", "simbench", "check", "arm2.urdf", "--dynamics", "lagr:tau_count",
                           "--samples", "3", "--no-pinocchio", "--plot", "plots", "--json", "r.json",
                           "--markdown", "r.md"], capture_output=True, text=True, timeout=600)
    robots = json.loads((project / "r.json").read_text())["robots"]
    assert len(robots) == 1 and robots[0]["verdict"] == "PASS", robots
    notes = [n for n in robots[0]["notes"] if n.startswith("plot not drawn")]
    line = next(k for k, text in enumerate(LAGRANGE.splitlines(), 1) if "raise RuntimeError" in text)
    # 12 calls in the check (3 + 3 x 3), the 21st is point 8 of the trajectory
    assert notes == [f"plot not drawn: lagr:tau_count raised RuntimeError: out of licence seats (at lagr.py:{line} "
                     "in tau_count) at point 8 of the 200-point plot trajectory"], (notes, proc.stdout)
    # the Markdown report carries the notes too (it had none)
    assert (project / "r.md").read_text().endswith(f"\nNotes:\n\n- `arm2.urdf`: {notes[0]}\n")
