"""``simbench check --plot`` runs the dynamics under test again along a 200-point trajectory: the
torques only (one call per point, not n + 2), and the time it takes is part of the time shown
(the summary line and the JSON's ``seconds``, with ``plot_seconds`` apart). Oracles: the calls
counted by the user's function itself, and the wall clock."""
from __future__ import annotations

import argparse
import json
import re
import textwrap
import time

import pytest

import simbench.check as cc

pytest.importorskip("matplotlib")

MODULE = """
import time
import numpy as np
m1, m2, L1, L2, g = 1.2, 0.8, 0.6, 0.4, 9.81
def tau(q, qd, qdd):
    with open(__file__ + ".calls", "a") as f:
        f.write("x")
    time.sleep(0.004)
    c2, s2 = np.cos(q[1]), np.sin(q[1])
    a = m1*L1**2 + m2*(L1**2 + 2*L1*L2*c2 + L2**2); b = m2*(L1*L2*c2 + L2**2)
    M = np.array([[a, b], [b, m2*L2**2]])
    cor = np.array([-m2*L1*L2*s2*(2*qd[0]*qd[1] + qd[1]**2), m2*L1*L2*qd[0]**2*s2])
    grav = np.array([(m1+m2)*L1*g*np.cos(q[0]) + m2*g*L2*np.cos(q[0]+q[1]), m2*g*L2*np.cos(q[0]+q[1])])
    return M @ qdd + cor + grav
"""


def test_plot_calls_the_function_once_per_point_and_its_time_is_shown(tmp_path, monkeypatch, capsys):
    (tmp_path / "arm_dyn.py").write_text(textwrap.dedent(MODULE))
    monkeypatch.chdir(tmp_path)
    parser = argparse.ArgumentParser()
    cc.add_arguments(parser)
    args = parser.parse_args(["simbench:planar_2r.urdf", "--dynamics", "arm_dyn:tau", "--samples", "5",
                              "--no-pinocchio", "--plot", str(tmp_path / "plots"), "--json", str(tmp_path / "r.json")])
    t0 = time.perf_counter()
    assert cc.run_cli(args) == 0
    wall = time.perf_counter() - t0
    calls = len((tmp_path / "arm_dyn.py.calls").read_text())
    assert calls == 5 * (2 + 2) + 200, calls        # the check: tau + bias + 2 columns per sample; the plot: 200
    assert len(list((tmp_path / "plots").glob("*.png"))) == 1
    summary = json.loads((tmp_path / "r.json").read_text())["summary"]
    assert summary["plot_seconds"] >= 200 * 0.004     # the plot's calls alone sleep 0.8 s
    assert summary["plot_seconds"] < summary["seconds"] <= wall and summary["seconds"] > 0.5 * wall, (summary, wall)
    out = capsys.readouterr().out
    # the line rounds the measured seconds to 0.1 s, the JSON to 0.001 s: rounding the JSON's again
    # can differ by one digit (1.150 -> '1.1' while the line's 1.1504 -> '1.2'), so each shown
    # number is within half a digit of the JSON's
    shown = re.search(r"\((\d+\.\d) s, (\d+\.\d) s of it plotting\)", out)
    assert shown, out
    assert abs(float(shown[1]) - summary["seconds"]) <= 0.0505, (shown[0], summary)
    assert abs(float(shown[2]) - summary["plot_seconds"]) <= 0.0505, (shown[0], summary)


def test_plot_given_a_png_name_writes_that_file(tmp_path):
    """``--plot torques.png`` (a file name, as users type it) writes that one PNG for one robot,
    not a folder named ``torques.png``; for two robots ``torques-<robot>.png`` beside it. Oracle:
    the files on disk, opened as images by Pillow."""
    import subprocess
    import sys

    Image = pytest.importorskip("PIL.Image")
    run = [sys.executable, "-m", "simbench", "check", "--samples", "3", "--no-pinocchio"]
    one = subprocess.run(run + ["simbench:planar_2r.urdf", "--plot", "torques.png"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=300)
    assert one.returncode == 0, one.stderr
    assert (tmp_path / "torques.png").is_file() and "plot: torques.png" in one.stdout
    two = subprocess.run(run + ["simbench:planar_2r.urdf", "simbench:anthropomorphic_3link.urdf", "--plot",
                                "out/t.png"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert two.returncode == 0, two.stderr
    made = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert made == ["t-simbench_anthropomorphic_3link.urdf.png", "t-simbench_planar_2r.urdf.png"], made
    inside = subprocess.run(run + ["simbench:planar_2r.urdf", "--plot", "both", "--json", "both/r.json"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=300)   # a report inside the plot folder is fine
    assert inside.returncode == 0 and (tmp_path / "both" / "r.json").is_file(), inside.stderr
    assert (tmp_path / "both" / "simbench_planar_2r.urdf.png").is_file()
    for name in ["torques.png", "out/" + made[0], "out/" + made[1]]:
        with Image.open(tmp_path / name) as im:
            assert im.format == "PNG" and im.size[0] > 300
