"""A user's function that crashes, raises or returns NaN, run as users run it: the state it
failed on is printed and kept (equal to the check's own sample, drawn again here), a crash says
how the process ended, at which sample, with its last output line, and nothing goes green
silently (a plain callable in pytest gets a forked worker, as ``module:function`` does). The
user's prints go to stderr, not into the report on stdout."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np

import simbench.check as cc
from simbench.model import load

ARM = "simbench:planar_2r.urdf"

USER = '''
import os, sys
import numpy as np
import simbench
from simbench.dynamics import inverse_dynamics
from simbench.check.targets import resolve_target

MODEL = resolve_target("simbench:planar_2r.urdf").file_model

def tau(q, qd, qdd):
    return inverse_dynamics(MODEL, q, qd, qdd)

def gsign(q, qd, qdd):
    return inverse_dynamics(MODEL, q, qd, qdd, gravity=(0.0, 0.0, 9.81))

def nan_above(q, qd, qdd):
    t = tau(q, qd, qdd)
    if q[0] > 2.0:
        t[0] = np.nan
    return t

def raise_above(q, qd, qdd):
    if q[0] > 2.0:
        raise ValueError("too high")
    return tau(q, qd, qdd)

def osexit_above(q, qd, qdd):
    if q[0] > 2.0:
        os._exit(0)
    return tau(q, qd, qdd)

def gui_fails(q, qd, qdd):
    sys.stderr.write("startup noise\\ncannot connect to X server\\n")
    sys.stderr.flush()
    os._exit(1)

def prints(q, qd, qdd):
    print("debug", q)
    return tau(q, qd, qdd)

def osexit(q, qd, qdd):
    os._exit(0)
'''

N = 12
RAISE_LINE = USER.splitlines().index("        raise ValueError(\"too high\")") + 1


def _project(tmp_path):
    (tmp_path / "userdyn.py").write_text(USER)
    return tmp_path


def _run(args, cwd):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def _first_above(threshold=2.0):
    """The check's states drawn again (``sample_states`` with its seed 0): the first over q0 > 2."""
    model = load(cc.resolve_target(ARM).path)
    q, qd, qdd = cc.sample_states(model, N, 0)
    i = int(np.flatnonzero(q[:, 0] > threshold)[0])
    return i, q[i], qd[i], qdd[i]


def test_the_state_of_a_nan_a_raise_and_a_crash_is_printed_and_kept(tmp_path):
    cwd = _project(tmp_path)
    i, q, qd, qdd = _first_above()
    assert 0 < i < N
    for func, verdict, words in (("nan_above", "FAIL", f"returned nan for joint 'theta1' at sample {i}"),
                                 ("raise_above", "ERROR", f"raised ValueError: too high (at userdyn.py:{RAISE_LINE} in raise_above) at sample {i}"),
                                 ("osexit_above", "ERROR", f"died at sample {i} before returning (exit status 0: "
                                                           f"did it call os._exit?)")):
        proc = _run(["-m", "simbench", "check", ARM, "--dynamics", f"userdyn:{func}", "--samples", str(N),
                     "--no-pinocchio", "--json", "r.json"], cwd)
        assert proc.returncode == 1, proc.stdout + proc.stderr
        robot = json.loads((cwd / "r.json").read_text())["robots"]
        assert len(robot) == 1 and robot[0]["verdict"] == verdict and words in robot[0]["reason"], robot
        worst = robot[0]["worst"]
        assert worst["sample"] == i and worst["q"] == q.tolist() and worst["qd"] == qd.tolist() \
            and worst["qdd"] == qdd.tolist(), (func, worst)
        assert f"state of sample {i}: q={q.tolist()!r} qd={qd.tolist()!r}" in proc.stdout, proc.stdout


def test_a_crash_says_how_it_ended_with_the_last_output_line(tmp_path):
    cwd = _project(tmp_path)
    proc = _run(["-m", "simbench", "check", ARM, "--dynamics", "userdyn:gui_fails", "--samples", "3",
                 "--no-pinocchio", "--json", "r.json", "--markdown", "r.md"], cwd)
    assert proc.returncode == 1
    reason = json.loads((cwd / "r.json").read_text())["robots"][0]["reason"]
    assert reason == ("the process running userdyn:gui_fails died at sample 0 before returning (exit status 1); "
                      "its last output: 'cannot connect to X server'"), reason
    assert "cannot connect to X server" in (cwd / "r.md").read_text()


def test_the_users_prints_go_to_stderr_not_into_the_report(tmp_path):
    cwd = _project(tmp_path)
    proc = _run(["-m", "simbench", "check", ARM, "--dynamics", "userdyn:prints", "--samples", "3",
                 "--no-pinocchio"], cwd)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 2 and lines[0].startswith("PASS") and lines[1].startswith("1 robot: 1 PASS"), lines
    # one line per call: 3 samples for tau, then 3 x (1 + 2 columns) for M
    assert sum(ln.startswith("debug") for ln in proc.stderr.splitlines()) == 3 + 3 * 3, proc.stderr


def test_a_plain_callable_that_calls_os_exit_fails_the_pytest_run_and_the_next_test_runs(tmp_path):
    cwd = _project(tmp_path)
    (cwd / "test_user.py").write_text(textwrap.dedent('''
        import userdyn
        from simbench.testing import assert_matches_pybullet

        def test_a_osexit():
            assert_matches_pybullet("simbench:planar_2r.urdf", dynamics=userdyn.osexit)

        def test_b_wrong():
            assert_matches_pybullet("simbench:planar_2r.urdf", dynamics=userdyn.gsign)

        def test_c_right():
            assert_matches_pybullet("simbench:planar_2r.urdf", dynamics=userdyn.tau)
    '''))
    proc = _run(["-m", "pytest", "-q", "-p", "no:cacheprovider", "test_user.py"], cwd)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "2 failed, 1 passed" in out, out
    assert "osexit died at sample 0 before returning (exit status 0: did it call os._exit?)" in out, out
    assert "looks like: gravity with the wrong sign" in out, out


def test_a_callable_runs_in_a_forked_child_that_is_reaped():
    """The API too: the crash is a verdict, the child is gone, this process lives on."""
    def crash(q, qd, qdd):
        os._exit(7)

    r = cc.compare(ARM, samples=3, dynamics=crash, pinocchio=False)
    assert r.verdict == "ERROR" and "died at sample 0 before returning (exit status 7)" in r.reason, r.reason
    assert r.worst["sample"] == 0
    with open(f"/proc/{os.getpid()}/task/{os.getpid()}/children") as f:
        assert f.read().split() == []
