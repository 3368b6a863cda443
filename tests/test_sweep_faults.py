"""Faults during a sweep on the local engine: a worker process killed, Ctrl-C (SIGINT to the
whole process group, as a terminal sends it), the driver killed outright. The oracle is a
clean run of the same sweep: every chunk must end up exactly once, bit-identical."""
import json
import multiprocessing
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pyarrow.dataset as ds

from simbench import SimbenchError
from simbench.sweep import read, read_manifest, sweep

SCENE = "simbench:kuka_cubes.toml"
LINK7 = "robot/lbr_iiwa_link_7"
PAIRS = [(LINK7, "ground"), (LINK7, "cube1"), (LINK7, "cube2"), (LINK7, "cube3")]
# 160 chunks, about 8 s on 2 workers: a Ctrl-C sent once the manifest (flushed once a second)
# shows 3 chunks lands mid-run (with 60,000 configurations, 2.1 s, the run finished first, once)
SAMPLES = 240_000
CLI = ["collision", SCENE, "--samples", str(SAMPLES), "--seed", "9", "--chunk-size", "1500", "--pair", LINK7, "ground",
       "--pair", LINK7, "cube1", "--pair", LINK7, "cube2", "--pair", LINK7, "cube3", "-q"]


def checksums(out) -> list[str]:
    m = read_manifest(out)
    return [m["chunks"][str(i)]["sha256"] for i in range(m["n_chunks"])]


def exactly_once(out, n: int) -> bool:
    samples = np.sort(ds.dataset(out).to_table(columns=["sample"])["sample"].to_numpy())
    return np.array_equal(samples, np.arange(n))


def _workers() -> list:
    return [c for c in multiprocessing.active_children() if c.name.startswith("simbench-sweep-worker")]


def test_a_worker_killed_mid_sweep_still_yields_every_chunk_exactly_once(tmp_path, caplog):
    kw = dict(samples=12_000, seed=2, chunk_size=1000, pairs=PAIRS, progress=False)
    ref = sweep("collision", SCENE, out=tmp_path / "ref", workers=1, **kw)
    killed = []

    def kill_one(result):
        if not killed:
            victim = _workers()[0]
            os.kill(victim.pid, signal.SIGKILL)
            killed.append(victim.pid)

    with caplog.at_level("WARNING", logger="simbench.sweep"):
        res = sweep("collision", SCENE, out=tmp_path / "k", workers=2, on_chunk=kill_one, **kw)
    assert len(killed) == 1 and res.facts["replaced"] == 1
    assert f"(pid {killed[0]}) died (exit code -9)" in caplog.text
    assert res.complete and res.computed == 12 and checksums(tmp_path / "k") == checksums(tmp_path / "ref")
    assert exactly_once(tmp_path / "k", 12_000) and ref.complete
    assert _workers() == []  # none left behind


def _cli(args, cwd, **kw):
    return subprocess.Popen([sys.executable, "-m", "simbench.cli", "sweep", *args], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True, **kw)


def _wait_for_chunks(out, at_least: int, proc, timeout: float = 120) -> int:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            n = len(json.loads((out / "_manifest.json").read_text())["chunks"])
            if n >= at_least:
                return n
        except (OSError, ValueError):
            pass
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    raise AssertionError("the sweep did not get going")


def _group_gone(pgid: int, timeout: float = 10) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def test_sigint_then_rerun_completes_with_identical_results(tmp_path):
    ref = subprocess.run([sys.executable, "-m", "simbench.cli", "sweep", *CLI, "--out", "ref", "--workers", "1"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert ref.returncode == 0, ref.stderr
    proc = _cli([*CLI, "--out", "o", "--workers", "2"], tmp_path)
    _wait_for_chunks(tmp_path / "o", 3, proc)
    os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C in a terminal does: every process of the group
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and err.strip().splitlines()[-1] == "simbench sweep: interrupted", err
    assert _group_gone(proc.pid)  # no worker left behind
    m = read_manifest(tmp_path / "o")
    assert not m["complete"] and m["runs"][-1]["status"] == "interrupted"
    done = len(m["chunks"])
    assert 3 <= done < SAMPLES // 1500 and not list((tmp_path / "o").glob(".chunk-*"))
    assert not (tmp_path / "o" / "_lock").exists()  # released and removed on Ctrl-C too
    # what is done can be read before the rerun: the reference's rows at those samples, no others
    try:
        read(tmp_path / "o")
        raise AssertionError("an unfinished sweep was read whole")
    except SimbenchError as exc:
        assert f"({done:,} of {SAMPLES // 1500:,} chunks)" in str(exc) and "read(out, partial=True)" in str(exc)
    try:
        read(tmp_path / "o", partial="false")   # any text is True in Python: 'false' read the chunks
        raise AssertionError("partial='false' was taken")
    except SimbenchError as exc:
        assert str(exc) == "partial = 'false'; expected True or False (did you mean False?)", exc
    part, whole = read(tmp_path / "o", partial=True), read(tmp_path / "ref")
    expected = np.concatenate([np.arange(e["start"], e["stop"]) for e in m["chunks"].values()])
    assert np.array_equal(part.samples, np.sort(expected)) and len(part.samples) == done * 1500
    assert np.array_equal(whole.samples, np.arange(SAMPLES)) and part.columns == whole.columns
    for name in whole:
        assert np.array_equal(part[name], whole[name][part.samples]), name
    again = subprocess.run([sys.executable, "-m", "simbench.cli", "sweep", *CLI, "--out", "o", "--workers", "2"],
                           cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr
    assert f"{done} chunks already done" in again.stdout
    assert checksums(tmp_path / "o") == checksums(tmp_path / "ref") and exactly_once(tmp_path / "o", SAMPLES)


def test_driver_killed_outright_then_rerun_completes_with_identical_results(tmp_path):
    proc = _cli([*CLI, "--out", "o", "--workers", "2"], tmp_path)
    _wait_for_chunks(tmp_path / "o", 2, proc)
    os.kill(proc.pid, signal.SIGKILL)  # the driver only: its workers must notice and exit
    proc.communicate(timeout=60)
    assert _group_gone(proc.pid)
    again = subprocess.run([sys.executable, "-m", "simbench.cli", "sweep", *CLI, "--out", "o", "--workers", "1"],
                           cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr
    ref = sweep("collision", SCENE, samples=SAMPLES, seed=9, chunk_size=1500, pairs=PAIRS, out=tmp_path / "ref",
                workers=2, progress=False)
    assert checksums(tmp_path / "o") == checksums(ref.out) and exactly_once(tmp_path / "o", SAMPLES)
    assert not list((tmp_path / "o").glob(".chunk-*"))


def test_a_script_that_ran_parallel_numba_kernels_first_still_gets_working_workers(tmp_path):
    """numba's OpenMP pool kills forked children ("fork() called from a process already using
    GNU OpenMP"): such a process spawns its workers instead. The oracle: one worker in-process."""
    script = tmp_path / "script.py"
    script.write_text(
        "import numpy as np, simbench\n"
        "from simbench.dynamics import inverse_dynamics\n"
        "if __name__ == '__main__':\n"
        "    m = simbench.RobotModel.from_urdf('pybullet_data:kuka_iiwa/model.urdf')\n"
        "    q = np.zeros((20000, 7))\n"
        "    inverse_dynamics(m, q, q, q)  # a batch: numba's parallel kernels start their threads\n"
        "    for w in (2, 1):\n"
        "        r = simbench.sweep('dynamics', 'pybullet_data:kuka_iiwa/model.urdf', samples=400, seed=0,\n"
        "                           chunk_size=100, workers=w, out=f'w{w}', progress=False)\n"
        "        print(w, r.complete, r.facts['replaced'], [c['sha256'] for c in r.manifest['chunks'].values()])\n")
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0 and "OpenMP" not in proc.stderr, proc.stderr
    two, one = (line.split(" ", 3) for line in proc.stdout.splitlines())
    assert two[1:3] == ["True", "0"] and one[1:3] == ["True", "0"]
    assert sorted(eval(two[3])) == sorted(eval(one[3])) and len(eval(one[3])) == 4


def test_a_full_disk_is_one_line_and_leaves_no_temporary_files(tmp_path):
    """Writes that fail (here: a file-size limit, as a full disk would; the walkthrough's tmpfs)
    end the sweep with one line naming the file, the folder, what is kept and how to go on,
    with no temporary file left (an OSError was 'unexpected ... rerun with -v' and left a 2 MB
    .chunk-*.tmp and ._manifest.json.tmp behind, the latter for good); the same command then
    resumes into files equal to a clean run's."""
    import resource

    def limited():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (300_000, 300_000))

    args = ["collision", "simbench:kuka_cubes.toml", "--samples", "40000", "--chunk-size", "10000", "--witness", "-q"]
    cmd = [sys.executable, "-m", "simbench", "sweep", *args, "--out", str(tmp_path / "full")]
    proc = subprocess.run(cmd, preexec_fn=limited, capture_output=True, text=True, timeout=300)
    lines = [ln for ln in proc.stderr.splitlines() if "fixed links" not in ln]
    assert proc.returncode == 1 and len(lines) == 1, proc.stderr
    assert "cannot write chunk-" in lines[0] and "(File too large)" in lines[0], lines
    assert "chunks are kept: free some space (or give another --out) and run the same command to resume" in lines[0]
    assert [p.name for p in (tmp_path / "full").iterdir() if ".tmp" in p.name] == []
    (tmp_path / "full" / "._manifest.json.tmp99999").write_text("{}")   # a stale one, as a killed run leaves
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    clean = subprocess.run([sys.executable, "-m", "simbench", "sweep", *args, "--out", str(tmp_path / "clean")],
                           capture_output=True, text=True, timeout=300)
    assert clean.returncode == 0, clean.stderr
    names = sorted(p.name for p in (tmp_path / "clean").glob("chunk-*.parquet"))
    assert len(names) == 4 and names == sorted(p.name for p in (tmp_path / "full").glob("chunk-*.parquet"))
    for name in names:
        assert (tmp_path / "full" / name).read_bytes() == (tmp_path / "clean" / name).read_bytes()
    assert [p.name for p in (tmp_path / "full").iterdir() if ".tmp" in p.name] == []
