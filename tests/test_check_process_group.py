"""Processes started by a user's ``--dynamics`` function end with its worker: the worker leads a
process group of its own, killed whole when the worker is stopped (a timeout, Ctrl-C, SIGTERM,
the end of the run). Oracle: the grandchild's pid (written to a file by the user's function)
looked up in the process table after the check returned, and the check's stdout read to its end
through a pipe (``simbench check ... | cat``), which an orphan holding it open would never close."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ARM = "simbench:planar_2r.urdf"

USER = '''
import os, subprocess, time
import numpy as np

_child = None

def _start():
    global _child
    if _child is None:
        _child = subprocess.Popen(["sleep", "777"])
        tmp = os.environ["PIDFILE"] + ".tmp"
        with open(tmp, "w") as f:
            f.write(str(_child.pid))
        os.replace(tmp, os.environ["PIDFILE"])

def hang(q, qd, qdd):
    _start()
    time.sleep(1000)

def zeros(q, qd, qdd):
    _start()
    return np.zeros(len(qd))
'''


def alive(pid: int) -> bool:
    """Whether ``pid`` runs: in the process table and not a zombie (PID 1 of a container may
    leave a killed orphan unreaped)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


@pytest.fixture
def user(tmp_path, monkeypatch):
    (tmp_path / "ud.py").write_text(USER)
    pidfile = tmp_path / "grandchild.pid"
    monkeypatch.setenv("PIDFILE", str(pidfile))
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "1")
    started: list[int] = []

    def pid() -> int:
        p = int(pidfile.read_text())
        started.append(p)
        return p

    yield tmp_path, pidfile, pid
    for p in started:   # a failing test leaves nothing behind either
        if alive(p):
            os.kill(p, signal.SIGKILL)


def _cmd(spec: str, timeout: str = "3") -> list[str]:
    return [sys.executable, "-m", "simbench", "check", ARM, "--dynamics", spec, "--timeout", timeout,
            "--no-pinocchio", "--samples", "3"]


def test_a_timeout_kills_what_the_function_started_and_a_pipe_reaches_its_end(user):
    cwd, pidfile, pid = user
    # stdout is a pipe read to its end: the sleep inheriting it would keep it open for 777 s
    r = subprocess.run(_cmd("ud:hang"), cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=90)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "did not return within 3 s" in r.stdout and "the worker was stopped" in r.stdout, r.stdout
    grandchild = pid()
    assert not alive(grandchild)


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_an_interrupt_kills_what_the_function_started(user, sig, code):
    cwd, pidfile, pid = user
    proc = subprocess.Popen(_cmd("ud:hang", "600"), cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        deadline = time.monotonic() + 90
        while not pidfile.exists():
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.05)
        grandchild = pid()
        assert alive(grandchild)   # the oracle sees it running before the signal
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)   # to the end of the pipe
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == code, out + err
    assert not alive(grandchild), err


def test_the_end_of_a_run_kills_what_the_function_started(user, monkeypatch):
    import simbench.check as cc

    cwd, pidfile, pid = user
    monkeypatch.chdir(cwd)
    monkeypatch.syspath_prepend(str(cwd))
    r = cc.compare(ARM, samples=3, dynamics="ud:zeros", pinocchio=False, timeout=60)
    assert r.verdict == "FAIL", r.line()   # zeros are not the arm's torques: it ran to its verdict
    assert r.samples == 3
    grandchild = pid()
    assert not alive(grandchild), Path(f"/proc/{grandchild}/stat").read_text()
