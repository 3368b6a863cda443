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
    assert len(report["robots"]) < 45       # stopped before the corpus's 45 robots
