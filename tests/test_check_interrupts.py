"""Ctrl-C in ``simbench check`` keeps what was done at any moment: exit status 130 and the
reports written, marked interrupted. Oracles: the process's exit status and the JSON file.

Two ways it was lost (a user walkthrough): yourdfpy imports trimesh, which wraps its optional
imports in ``except BaseException``, so a Ctrl-C during that import vanished and the check ran
to the end (exit 0); and a Ctrl-C while the targets were read ended the process with no report.
"""
import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

HOLD = textwrap.dedent("""
    import os, signal, sys, threading, time
    from simbench.urdf_model import _import_yourdfpy
    assert "yourdfpy" not in sys.modules and "trimesh" not in sys.modules
    threading.Timer(float(sys.argv[1]), lambda: os.kill(os.getpid(), signal.SIGINT)).start()
    t0 = time.perf_counter()
    try:
        _import_yourdfpy()
        time.sleep(2)
        print("lost")
    except KeyboardInterrupt:
        print("held" if "yourdfpy" in sys.modules else "partial", round(time.perf_counter() - t0, 2))
""")


@pytest.mark.parametrize("delay", [0.05, 0.2])
def test_ctrl_c_during_the_yourdfpy_import_is_delivered_after_it(delay):
    """SIGINT sent while yourdfpy (and trimesh) import: the import completes and the
    KeyboardInterrupt comes right after it, in our code (without the hold: 'lost' or 'partial')."""
    proc = subprocess.run([sys.executable, "-c", HOLD, str(delay)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    word, seconds = proc.stdout.split()
    assert word == "held", proc.stdout
    assert float(seconds) > delay   # the import outlasted the signal: it was held, not early


def _interrupted_check(tmp_path, after):
    report = tmp_path / "r.json"
    proc = subprocess.Popen([sys.executable, "-m", "simbench.cli", "check", "--corpus", "pybullet_data",
                             "--json", str(report), "-q"], cwd=tmp_path, start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(after)
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    return proc.returncode, err, (json.loads(report.read_text()) if report.exists() else None)


@pytest.mark.parametrize("after", [2.5, 4.0])
def test_interrupted_corpus_check_writes_its_report(tmp_path, after):
    """SIGINT while the corpus is read and while robots are compared (measured here: 2.5 s in,
    no robot compared yet; 4.5 s in, 12 of the 45; the whole check takes 7-8 s): exit 130 and
    the JSON written with exit_code 130, interrupted."""
    code, err, report = _interrupted_check(tmp_path, after)
    assert code == 130, err[-2000:]
    assert "interrupted; the results so far are in the reports" in err
    assert report is not None, err[-2000:]
    assert report["summary"]["exit_code"] == 130 and report["summary"]["interrupted"] is True
    assert report["settings"]["corpus"] == "pybullet_data"
    checked = [r for r in report["robots"] if not r["reason"].startswith("not checked: ")]
    assert len(checked) < 45       # stopped before the corpus's 45 robots (the rest listed, not checked)


def _user_check(tmp_path, module, *extra):
    (tmp_path / "userdyn.py").write_text(textwrap.dedent(module))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    return subprocess.Popen([sys.executable, "-m", "simbench.cli", "check", "simbench:planar_2r.urdf",
                             "--dynamics", "userdyn:tau", "--no-pinocchio", "--json", "r.json", *extra],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_sigterm_is_recorded_as_sigterm(tmp_path):
    """SIGTERM while the user's function runs: exit 143, and the JSON says 143 and SIGTERM (it
    said 130 while the process exited 143)."""
    proc = _user_check(tmp_path, """
        import os, time
        def tau(q, qd, qdd):
            open("worker.pid", "w").write(str(os.getpid()))
            time.sleep(600)
    """)
    for _ in range(600):
        if (tmp_path / "worker.pid").exists():
            break
        time.sleep(0.1)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert "; terminated (SIGTERM)" in out
    summary = json.loads((tmp_path / "r.json").read_text())["summary"]
    assert proc.returncode == 143 == summary["exit_code"], err[-2000:]
    assert summary["interrupted"] is True and summary["signal"] == "SIGTERM"
    assert "simbench check: terminated (SIGTERM); the results so far are in the reports" in err


def test_timeout_bounds_the_import_of_the_users_module(tmp_path):
    """--timeout 3 and a module that sleeps at import: the verdict within seconds (it waited 60 s),
    the worker's own start not counted against the user."""
    t0 = time.perf_counter()
    proc = _user_check(tmp_path, """
        import time
        time.sleep(600)
        def tau(q, qd, qdd):
            return q
    """, "--timeout", "3")
    out, err = proc.communicate(timeout=120)
    seconds = time.perf_counter() - t0
    assert proc.returncode == 1, err[-2000:]
    assert "userdyn:tau did not finish importing within 3 s (--timeout); the worker was stopped" in out
    assert 3 < seconds < 30, seconds
