"""Smaller things a user met: ``report[0]`` (a Report indexed like its results), Pinocchio's
comparison with a user's function named ``vs_tested`` (``vs_ours`` was wrong: it is not ours),
a FAIL with a verified guess not called "unexplained", integer torques named as such. Oracles:
the results list itself; a function off by exactly 0.5 N m on the first joint; the guess's own
rewrite (gravity negated)."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import simbench.check as cc
from simbench.dynamics import inverse_dynamics

ARM = "simbench:planar_2r.urdf"
MODEL = cc.resolve_target(ARM).file_model


def off_by_half(q, qd, qdd):
    return inverse_dynamics(MODEL, q, qd, qdd) + np.array([0.5, 0.0])


def gsign(q, qd, qdd):
    return inverse_dynamics(MODEL, q, qd, qdd, gravity=(0.0, 0.0, 9.81))


def test_a_report_is_indexed_like_its_results_and_says_what_exists():
    report = cc.check([ARM], samples=2, pinocchio=False)
    assert len(report) == 1 and report[0] is report.results[0] is report[ARM] and report[-1] is report[0]
    assert list(report) == report.results
    with pytest.raises(IndexError, match=r"report\[3\]: the report has 1 result \(0 \.\. 0\)"):
        report[3]
    with pytest.raises(KeyError, match=r"'nope': no such target in the report; expected one of "
                                       r"\['simbench:planar_2r.urdf'\]"):
        report["nope"]


def test_pinocchio_against_a_users_function_is_named_vs_tested():
    pytest.importorskip("pinocchio")
    r = cc.compare(ARM, samples=4, dynamics=off_by_half)
    assert r.pinocchio["available"] and "vs_ours" not in r.pinocchio, r.pinocchio
    assert abs(r.pinocchio["vs_tested"]["tau_abs"] - 0.5) < 1e-9, r.pinocchio   # exactly the 0.5 added
    ours = cc.compare(ARM, samples=4)
    assert ours.pinocchio["vs_ours"]["tau_abs"] < 1e-9 and "vs_tested" not in ours.pinocchio


def test_a_fail_with_a_verified_guess_is_not_called_unexplained():
    r = cc.compare(ARM, samples=5, dynamics=gsign, pinocchio=False)
    assert r.verdict == "FAIL" and r.looks_like.startswith("gravity with the wrong sign"), r.line()
    assert not r.reason.startswith("unexplained") and r.reason.startswith("worst joint"), r.reason
    assert r.reason.endswith("; looks like: " + r.looks_like)
    r = cc.compare(ARM, samples=5, dynamics=off_by_half, pinocchio=False)   # no guess fits: unexplained
    assert r.verdict == "FAIL" and r.looks_like is None and r.reason.startswith("unexplained: worst joint")


def test_integer_torques_are_named_as_integers(tmp_path):
    (tmp_path / "userdyn.py").write_text(
        "import numpy as np\nimport simbench.check as cc\nfrom simbench.dynamics import inverse_dynamics\n"
        "M = cc.resolve_target('simbench:planar_2r.urdf').file_model\n"
        "def rounded(q, qd, qdd):\n    return np.round(inverse_dynamics(M, q, qd, qdd)).astype(np.int64)\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    proc = subprocess.run([sys.executable, "-m", "simbench", "check", ARM, "--dynamics", "userdyn:rounded",
                           "--samples", "3", "--no-pinocchio"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 1
    first = proc.stdout.splitlines()[0]
    q, qd, qdd = cc.sample_states(MODEL, 3, 0)   # the check's sample 0, drawn again
    expected = repr(np.round(inverse_dynamics(MODEL, q[0], qd[0], qdd[0])).astype(np.int64))
    assert first.startswith(f"ERROR     {ARM}") and f"userdyn:rounded returned int64 {expected}" in first \
        and "at sample 0, integers (torques rounded or truncated?)" in first, first
