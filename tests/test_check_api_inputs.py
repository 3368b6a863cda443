"""``simbench.check.compare`` / ``check`` judge their numbers as ``simbench check`` does: a bad
``samples`` (0, negative, not an integer, beyond the 100,000 that fit in memory), ``seed``, ``tol``
or ``timeout`` is one line naming the value, what was expected and the closest valid choice,
raised before any work (the user's function is never called, no report is written). Oracle for
the valid ones: the closed-form dynamics of the planar 2R arm (point masses), counted calls of it
(a function is called N (n + 2) times for N samples of an n-joint robot) and the files read back."""
from __future__ import annotations

import json
import os
import subprocess
import tempfile
import sys

import numpy as np
import pytest

import simbench.check as cc
from simbench.errors import SimbenchError

ARM = "simbench:planar_2r.urdf"
KUKA = "pybullet_data:kuka_iiwa/model.urdf"
m1, m2, L1, L2, G = 1.2, 0.8, 0.6, 0.4, 9.81

CLOSED_FORM = f'''
import numpy as np
m1, m2, L1, L2, G = {m1}, {m2}, {L1}, {L2}, {G}

def tau(q, qd, qdd):
    c2, s2 = np.cos(q[1]), np.sin(q[1])
    a = m1 * L1**2 + m2 * (L1**2 + 2 * L1 * L2 * c2 + L2**2)
    b = m2 * (L1 * L2 * c2 + L2**2)
    M = np.array([[a, b], [b, m2 * L2**2]])
    cor = np.array([-m2 * L1 * L2 * s2 * (2 * qd[0] * qd[1] + qd[1]**2), m2 * L1 * L2 * qd[0]**2 * s2])
    grav = np.array([(m1 + m2) * L1 * G * np.cos(q[0]) + m2 * G * L2 * np.cos(q[0] + q[1]),
                     m2 * G * L2 * np.cos(q[0] + q[1])])
    return M @ qdd + cor + grav
'''
_ns: dict = {}
exec(CLOSED_FORM, _ns)
tau_closed = _ns["tau"]


class Counted:
    """The closed form, counting its calls."""

    def __init__(self):   # counted in a file: the function runs in a child forked for each robot
        fd, self.path = tempfile.mkstemp(prefix="simbench-calls-")
        os.close(fd)

    @property
    def calls(self):
        return os.path.getsize(self.path)

    def __call__(self, q, qd, qdd):
        with open(self.path, "a") as f:
            f.write("x")
        return tau_closed(q, qd, qdd)


NAN, INF = float("nan"), float("inf")
BAD = [  # keyword, value, words the one line must hold
    ("samples", 0, ["samples = 0: expected a positive integer", "closest valid: samples = 1"]),
    ("samples", -3, ["samples = -3: expected a positive integer", "closest valid: samples = 1"]),
    ("samples", 2.5, ["samples = 2.5: expected a positive integer, not a float", "closest valid: samples = 2"]),
    ("samples", True, ["samples = True: expected a positive integer, not a bool"]),
    ("samples", "50", ["samples = '50': expected a positive integer, not a str", "closest valid: samples = 50"]),
    ("samples", 99999999999, ["samples = 99999999999: expected a positive integer up to 100,000",
                              "held in memory", "closest valid: samples = 100000"]),
    ("samples", 100_001, ["samples = 100001: expected a positive integer up to 100,000"]),
    ("seed", -1, ["seed = -1: expected an integer >= 0", "closest valid: seed = 0"]),
    ("seed", 1.5, ["seed = 1.5: expected an integer >= 0, not a float"]),
    ("tol", NAN, ["tol = nan: expected a positive number, a finite one", "e.g. tol = 1e-08, the default"]),
    ("tol", INF, ["tol = inf: expected a positive number, a finite one"]),
    ("tol", -1, ["tol = -1: expected a positive number", "e.g. tol = 1e-08"]),
    ("tol", 0.0, ["tol = 0.0: expected a positive number"]),
    ("tol", "x", ["tol = 'x': expected a positive number, not a str"]),
    ("timeout", 0, ["timeout = 0: expected a positive number of seconds", "None for no limit", "e.g. timeout = 60"]),
    ("timeout", -1.0, ["timeout = -1.0: expected a positive number of seconds"]),
    ("timeout", NAN, ["timeout = nan: expected a positive number of seconds"]),
]


@pytest.mark.parametrize("target", [ARM, KUKA])
def test_bad_numbers_are_one_line_before_any_work(target):
    compared = 0
    for key, value, words in BAD:
        for api in ("compare", "check"):
            f = Counted()
            kwargs = {"dynamics": f, "pinocchio": False, key: value}
            with pytest.raises(SimbenchError) as info:
                if api == "compare":
                    cc.compare(target, **kwargs)
                else:
                    cc.check([target], **kwargs)
            line = str(info.value)
            assert "\n" not in line and all(w in line for w in words), (api, key, value, line)
            assert f.calls == 0, (api, key, value)   # before any work
            compared += 1
    assert compared == 2 * len(BAD) == 34


def test_the_edges_of_the_valid_numbers_run_as_asked():
    """samples = 1 and a numpy integer, seed 0, timeout None and inf (no limit): the closed form
    PASSes, called N (n + 2) times."""
    runs = 0
    for samples, timeout, seed in ((1, None, 0), (np.int64(3), INF, np.int64(5)), (2, 30, 7)):
        f = Counted()
        r = cc.compare(ARM, samples=samples, seed=seed, dynamics=f, pinocchio=False, timeout=timeout)
        assert r.verdict == "PASS" and r.samples == int(samples), r.line()
        assert f.calls == int(samples) * (2 + 2)
        assert r.errors.tau_abs < 1e-9 and r.errors.M_abs < 1e-9
        runs += 1
    assert runs == 3


def _cli(args, cwd):
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-m", "simbench", "check", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("args, words", [
    (["--samples", "99999999999"], "--samples 99999999999: expected a positive integer up to 100,000 random states"),
    (["--samples", "100001"], "--samples 100001: expected a positive integer up to 100,000"),
    (["--tol", "inf"], "--tol inf: expected a positive number, a finite one"),
    (["--timeout", "nan"], "--timeout nan: expected a positive number of seconds, or inf for no limit"),
])
def test_the_command_refuses_them_with_exit_2_and_writes_nothing(tmp_path, args, words):
    r = _cli([ARM, *args, "--json", "r.json", "--markdown", "r.md"], tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stdout == "" and r.stderr.count("\n") == 1 and words in r.stderr, r.stderr
    assert sorted(os.listdir(tmp_path)) == []


def test_timeout_inf_means_no_limit_on_the_command_line(tmp_path):
    (tmp_path / "arm.py").write_text(CLOSED_FORM)
    r = _cli([ARM, "--dynamics", "arm:tau", "--timeout", "inf", "--samples", "3", "--no-pinocchio",
              "--json", "r.json"], tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    results = report["robots"]
    assert [x["verdict"] for x in results] == ["PASS"] and results[0]["samples"] == 3
    assert results[0]["errors"]["tau_abs"] < 1e-9   # the closed form against PyBullet
    assert report["settings"]["timeout"] is None
