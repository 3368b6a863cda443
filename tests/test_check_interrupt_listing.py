"""An interrupted check lists every robot asked for: the one being checked and those never
reached are in the JSON and Markdown, said not checked, and the summary says how many; a plot not
drawn because of the stop says so. Run as a user runs it (SIGTERM to ``python -m simbench
check``); oracle: the calls the user's function counted in a file, and the three targets given."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

pytest.importorskip("matplotlib")

SLOW = '''
import os, time
import simbench.dynamics as d
from simbench.check.targets import resolve_target

MODEL = resolve_target("simbench:planar_2r.urdf").file_model

def tau(q, qd, qdd):
    with open("calls", "a") as f:
        f.write("x")
    time.sleep(0.05)
    return d.inverse_dynamics(MODEL, q, qd, qdd)
'''


def test_sigterm_lists_the_robot_in_progress_and_those_not_reached(tmp_path):
    urdf = subprocess.run([sys.executable, "-c", "import simbench.check as cc; "
                           "print(cc.resolve_target('simbench:planar_2r.urdf').path)"],
                          capture_output=True, text=True, check=True).stdout.strip()
    for name in "abc":
        (tmp_path / f"{name}.urdf").write_text(open(urdf).read())
    (tmp_path / "userdyn.py").write_text(SLOW)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    proc = subprocess.Popen([sys.executable, "-m", "simbench", "check", "a.urdf", "b.urdf", "c.urdf",
                             "--dynamics", "userdyn:tau", "--samples", "3", "--no-pinocchio", "--json", "r.json",
                             "--markdown", "r.md", "--plot", "plots"], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    per_robot = 3 + 3 * (1 + 2)   # tau, then M by columns: 12 calls per robot
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:   # the second robot has started
        calls = (tmp_path / "calls").stat().st_size if (tmp_path / "calls").exists() else 0
        if calls > per_robot + 2:
            break
        time.sleep(0.02)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 143, out + err
    calls = (tmp_path / "calls").stat().st_size
    assert per_robot < calls <= 2 * per_robot, calls   # stopped in robot b, or as it ended
    b_done = calls == 2 * per_robot and "PASS      b.urdf" in out
    data = json.loads((tmp_path / "r.json").read_text())
    robots = data["robots"]
    assert [r["target"] for r in robots] == ["a.urdf", "b.urdf", "c.urdf"], robots
    assert [r["verdict"] for r in robots] == ["PASS", "PASS" if b_done else "SKIPPED", "SKIPPED"]
    if not b_done:
        assert robots[1]["reason"] == "not checked: it was being checked when the check was stopped"
    assert robots[2]["reason"] == "not checked: the check was stopped before it"
    assert robots[0]["notes"] == ["plot not drawn: the check was terminated (SIGTERM)"], robots[0]["notes"]
    assert data["summary"]["PASS"] == 1 + b_done and data["summary"]["compared"] == 1 + b_done
    assert data["summary"]["not_checked"] == 2 - b_done   # of the SKIPPED, those never reached (for CI)
    summary = out.strip().splitlines()[-1]
    left = 1 if b_done else 2
    assert summary.startswith(f"3 robots: {3 - left} PASS, 0 EXPLAINED, 0 FAIL, 0 ERROR, {left} SKIPPED") \
        and summary.endswith(f"; terminated (SIGTERM), {left} of 3 robots not checked"), summary
    md = (tmp_path / "r.md").read_text()
    assert sum(line.startswith("| `") for line in md.splitlines()) == 3, md
