"""One clear line for user mistakes around ``simbench check``: a KeyboardInterrupt raised by user
code (file:line, like any exception), a fixed-base function under ``--floating`` (the shapes given
and the model's nq / nv, Pinocchio's free-flyer counts), a file path given as ``--dynamics``
(the dotted module name to use), and the pytest helper hiding its own source."""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import simbench.check as cc

ARM = "simbench:planar_2r.urdf"


def kbint(q, qd, qdd):
    raise KeyboardInterrupt


def test_a_keyboardinterrupt_raised_by_user_code_is_judged_with_its_line(tmp_path, monkeypatch):
    line = kbint.__code__.co_firstlineno + 1
    r = cc.compare(ARM, samples=3, dynamics=kbint, pinocchio=False)      # in a thread
    assert r.verdict == "ERROR" and f"raised KeyboardInterrupt (at test_check_user_messages.py:{line} in kbint)" \
        in r.reason, r.reason
    (tmp_path / "kb_dyn.py").write_text("def tau(q, qd, qdd):\n    raise KeyboardInterrupt\n")
    monkeypatch.chdir(tmp_path)
    r = cc.compare(ARM, samples=3, dynamics="kb_dyn:tau", pinocchio=False)  # in the worker process
    assert r.verdict == "ERROR" and "kb_dyn:tau raised KeyboardInterrupt (at kb_dyn.py:2 in tau) at sample 0" \
        in r.reason, r.reason


def test_a_fixed_base_function_under_floating_is_told_the_shapes():
    pin = pytest.importorskip("pinocchio")
    import pybullet_data

    pm = pin.buildModelFromUrdf(os.path.join(pybullet_data.getDataPath(), "a1/a1.urdf"), pin.JointModelFreeFlyer())
    joints = pm.nv - 6

    def fixed_base(q, qd, qdd):
        return np.zeros(joints) + q      # numpy: operands could not be broadcast together

    r = cc.compare("pybullet_data:a1/a1.urdf", samples=2, dynamics=fixed_base, floating=True, pinocchio=False)
    assert r.verdict == "ERROR", r.line()
    for words in ["raised ValueError: operands could not be broadcast",
                  f"it was given q of {pm.nq} entries and qd, qdd of {pm.nv}",
                  f"nq = {pm.nq}, nv = {pm.nv}", f"takes {joints} joints: check without --floating"]:
        assert words in r.reason, (words, r.reason)


def test_a_file_path_as_dynamics_gets_the_module_name(tmp_path, monkeypatch, capsys):
    (tmp_path / "user").mkdir()
    (tmp_path / "user" / "arm2.py").write_text("def tau(q, qd, qdd):\n    return q\n")
    monkeypatch.chdir(tmp_path)
    for spec in ["user/arm2.py:tau", "./user/arm2:tau"]:
        parser = argparse.ArgumentParser()
        cc.add_arguments(parser)
        assert cc.run_cli(parser.parse_args([ARM, "--dynamics", spec])) == 2
        err = capsys.readouterr().err
        assert f"--dynamics '{spec}'" in err and "is a file path; expected module:function with the module's " \
            f"import name: user.arm2:tau (from {tmp_path})" in err, err
        assert len(err.strip().splitlines()) == 1


def test_the_pytest_helper_hides_its_own_source(tmp_path):
    (tmp_path / "test_user.py").write_text(textwrap.dedent("""
        import numpy as np
        from simbench.testing import assert_matches_pybullet
        def test_mine():
            assert_matches_pybullet("simbench:planar_2r.urdf", dynamics=lambda q, qd, qdd: np.zeros(2), samples=3)
    """))
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path / "test_user.py")],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stdout[-3000:]
    assert "dynamics do not match PyBullet" in proc.stdout
    assert "raise AssertionError(" not in proc.stdout and "kwargs.setdefault" not in proc.stdout, proc.stdout[-3000:]
