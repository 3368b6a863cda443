"""Walkthrough T of sweeps: a script without the ``__main__`` guard (spawned workers import it
and call sweep again), a usage error after the folder was made, SIGTERM on the Ray engine."""
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from simbench import SimbenchError
from simbench.sweep import sweep
from simbench.sweep.local import GUARD_EXIT, MAX_EARLY_DEATHS, _Pool
from simbench.sweep.output import SweepError
from test_sweep_faults import _group_gone

ROOT = Path(__file__).resolve().parents[1]


def _env(**extra) -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    env.update(extra)
    return env




def _run_script(tmp_path, body: str, timeout: float = 120, **env):
    script = tmp_path / "sw_noguard.py"
    script.write_text(textwrap.dedent(body))
    proc = subprocess.Popen([sys.executable, str(script)], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True, env=_env(**env))
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        raise AssertionError(f"the script ran for more than {timeout} s: {err[-2000:]}")
    assert _group_gone(proc.pid), "a process of the script was left behind"
    return proc.returncode, out, err


def test_a_script_without_the_main_guard_fails_in_one_line_and_leaves_nothing_running(tmp_path):
    # spawn, as when the user's process has threads (the walkthrough's 670 workers and 23,000 lines)
    rc, out, err = _run_script(tmp_path, """
        import simbench
        simbench.sweep("collision", "simbench:kuka_cubes.toml", out="xs", samples=3000, seed=0, chunk_size=500,
                       workers=2, progress=False)
        """, SIMBENCH_WORKER_START="spawn")
    assert rc == 1, err[-3000:]
    said = [ln for ln in err.splitlines() if "under if __name__ == '__main__':" in ln]
    assert len(said) == 1, err[-3000:]   # the driver's, once; the workers exit silently
    assert "sw_noguard.py" in said[0] and "in use by" not in err and "died" not in err
    assert len(err.splitlines()) < 40
    assert "EOFError" not in err and "During handling" not in err, err   # the error alone, no chained pipe error
    assert not list((tmp_path / "xs").glob("chunk-*"))


def test_a_script_with_the_guard_sweeps_on_spawned_workers(tmp_path):
    rc, out, err = _run_script(tmp_path, """
        import simbench
        if __name__ == "__main__":
            r = simbench.sweep("collision", "simbench:kuka_cubes.toml", out="xs", samples=1000, seed=0,
                               chunk_size=500, workers=2, progress=False)
            print("complete", r.complete)
        """, SIMBENCH_WORKER_START="spawn")
    assert rc == 0 and "complete True" in out, err[-3000:]


def test_the_guard_line_in_a_spawned_child_that_is_no_sweep_worker(tmp_path):
    # the user's own spawned process importing the script: the line there too, and no sweep runs in it
    rc, out, err = _run_script(tmp_path, """
        import multiprocessing as mp
        import simbench
        simbench.sweep("collision", "simbench:kuka_cubes.toml", out="xs", samples=10, seed=0, workers=1,
                       progress=False) if mp.current_process().name != "MainProcess" else None
        if __name__ == "__main__":
            p = mp.get_context("spawn").Process(target=print, name="mine")
            p.start(); p.join()
            print("child exit", p.exitcode)
        """)
    assert rc == 0 and f"child exit {GUARD_EXIT}" in out, err[-3000:]
    assert err.count("under if __name__ == '__main__':") == 1 and not (tmp_path / "xs").exists()


class _Dead:
    """A job whose workers die at once, before loading anything."""

    kind = "collision"

    def open(self):
        os._exit(7)


def test_workers_dying_before_their_first_chunk_stop_the_sweep_after_a_few(tmp_path):
    from simbench.sweep.jobs import Chunk

    def endless(signum, frame):
        raise AssertionError(f"{pool.count} workers started in 60 s: replaced without limit")

    pool = _Pool(_Dead(), 2)
    t = time.monotonic()
    old = signal.signal(signal.SIGALRM, endless)
    signal.alarm(60)
    try:
        with pytest.raises(SweepError, match=r"sweep workers in a row died before computing a chunk .*exit code 7"):
            pool.run([Chunk(i, i * 10, i * 10 + 10) for i in range(4)], lambda r: None)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    assert time.monotonic() - t < 30 and pool.count <= 2 + MAX_EARLY_DEATHS + 1
    assert pool.workers == []


MASSLESS = """<robot name="r">
  <link name="base"/>
  <link name="l1">{inertial}</link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
</robot>"""
INERTIAL = '<inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial>'


def _cli(args, cwd):
    return subprocess.run([sys.executable, "-m", "simbench.cli", "sweep", *args, "-q"], cwd=cwd,
                          capture_output=True, text=True, env=_env(), timeout=600)


def test_a_usage_error_after_the_folder_was_made_leaves_no_folder_and_the_fixed_run_goes(tmp_path):
    urdf = tmp_path / "fixme.urdf"
    urdf.write_text(MASSLESS.format(inertial=""))
    args = ["dynamics", str(urdf), "--samples", "10", "--seed", "0", "--out", "sdx/inner"]
    bad = _cli(args, tmp_path)
    lines = [ln for ln in bad.stderr.strip().splitlines() if "compiling the dynamics kernels" not in ln]  # cold cache
    assert bad.returncode == 2 and "massless" in bad.stderr and len(lines) == 1, bad.stderr
    assert not (tmp_path / "sdx").exists()   # nor the parent it made
    urdf.write_text(MASSLESS.format(inertial=INERTIAL))
    good = _cli(args, tmp_path)
    assert good.returncode == 0, good.stderr
    assert json.loads((tmp_path / "sdx/inner/_manifest.json").read_text())["complete"]


def test_a_usage_error_keeps_a_folder_that_was_there_and_an_earlier_sweep(tmp_path):
    urdf = tmp_path / "fixme.urdf"
    urdf.write_text(MASSLESS.format(inertial=""))
    (tmp_path / "mine").mkdir()
    with pytest.raises(SimbenchError, match="massless"):
        sweep("dynamics", str(urdf), out=tmp_path / "mine", samples=10, progress=False)
    assert (tmp_path / "mine").is_dir() and not list((tmp_path / "mine").iterdir())
    urdf.write_text(MASSLESS.format(inertial=INERTIAL))
    sweep("dynamics", str(urdf), out=tmp_path / "done", samples=10, progress=False)
    before = sorted(p.name for p in (tmp_path / "done").iterdir())
    urdf.write_text(MASSLESS.format(inertial=""))
    with pytest.raises(SimbenchError):   # another sweep in the folder: refused, the folder untouched
        sweep("dynamics", str(urdf), out=tmp_path / "done", samples=10, progress=False)
    assert sorted(p.name for p in (tmp_path / "done").iterdir()) == before


RAY_CLI = ["collision", "simbench:kuka_cubes.toml", "--samples", "200000", "--chunk-size", "5000", "--seed", "0",
           "--out", "r3", "--engine", "ray", "--workers", "2"]


def _ray_run_stopped(tmp_path, how):
    """The walkthrough's Ray sweep, stopped by ``how(proc)`` once two chunks are written."""
    proc = subprocess.Popen([sys.executable, "-m", "simbench.cli", "sweep", *RAY_CLI], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True, env=_env())
    try:
        end = time.monotonic() + 240
        while time.monotonic() < end:
            try:
                if len(json.loads((tmp_path / "r3/_manifest.json").read_text())["chunks"]) >= 2:
                    break
            except (OSError, ValueError, KeyError):
                pass
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.1)
        else:
            raise AssertionError("the Ray sweep did not get going")
        how(proc)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert _group_gone(proc.pid, 60), "a process of the Ray sweep was left behind"
    return proc.returncode, out, err


def test_sigterm_on_the_ray_engine_is_143_with_the_resume_hint(tmp_path):
    rc, out, err = _ray_run_stopped(tmp_path, lambda p: os.kill(p.pid, signal.SIGTERM))
    lines = err.strip().splitlines()
    assert rc == 143 and lines[-1] == "simbench sweep: terminated (SIGTERM)", err[-3000:]
    assert any("the same command resumes the rest" in ln for ln in lines), err[-3000:]
    assert "SIGTERM received" not in err and "logging.cc" not in err, err[-3000:]
    m = json.loads((tmp_path / "r3/_manifest.json").read_text())
    assert m["runs"][-1]["status"] == "interrupted" and len(m["chunks"]) >= 2


def test_ctrl_c_on_the_ray_engine_prints_no_ray_retry_lines(tmp_path):
    # Ctrl-C to the group: the actors' pending calls were retried, and Ray printed coloured
    # '(raylet) Task SweepActor.run failed ... will be retried' lines on stdout
    rc, out, err = _ray_run_stopped(tmp_path, lambda p: os.killpg(p.pid, signal.SIGINT))
    assert rc == 130 and err.strip().splitlines()[-1] == "simbench sweep: interrupted", err[-3000:]
    assert out == "" and "will be retried" not in err, out[-3000:]
