"""Follow-ups of a sweep user's walkthrough: the dynamics kernels compiled once in the driver
with one line (the rate without the compile), one process by default for dynamics, a Ray
cluster that refuses the driver's token said in one line, a changed input file named by path,
and a folder grown with more --samples. Oracles: the calls the runner saw (process, chunk),
a sweep made at full size in one go (chunk checksums and rows), SHA-256 of the files computed
here, the process's own streams."""
import hashlib
import json
import logging
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
import pytest

from simbench.errors import SimbenchError
from simbench.paths import default_scene_path
from simbench.sweep import read, read_manifest, sweep

SCENE = "simbench:kuka_cubes.toml"
LINK7 = "robot/lbr_iiwa_link_7"
PAIRS = [(LINK7, "ground"), (LINK7, "cube1")]
ARM = "simbench:planar_2r.urdf"


def checksums(out) -> list[str]:
    m = read_manifest(out)
    return [m["chunks"][str(i)]["sha256"] for i in range(m["n_chunks"])]


def sha(path) -> str:
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


# ---------------------------------------------------------------------- workers and compiling
def test_dynamics_sweeps_default_to_one_process_and_collision_to_every_cpu(tmp_path):
    from simbench.sweep.run import default_workers

    cpus = len(os.sched_getaffinity(0))
    assert default_workers("dynamics") == 1 and default_workers("collision") == cpus == default_workers()
    res = sweep("dynamics", ARM, out=tmp_path / "d", samples=400, chunk_size=100, progress=False)
    assert res.facts["workers"] == 1 and read_manifest(tmp_path / "d")["runs"][-1]["workers"] == 1
    assert "1 worker)" in res.summary()
    col = sweep("collision", SCENE, out=tmp_path / "c", samples=40, chunk_size=10, pairs=PAIRS, progress=False)
    assert col.facts["workers"] == min(cpus, 4)


def test_the_kernels_compile_once_in_the_driver_with_one_line_and_the_rate_leaves_it_out(tmp_path, monkeypatch, caplog):
    """A stand-in for numba's first compile (the dynamics logger's lines and 1.5 s) in the
    runner's first call in this process: the warm-up batch takes it here, before any chunk, as
    one sweep line; the summary's seconds leave it out; the files equal a run without it."""
    from simbench.sweep import dynamics_job

    calls, real_run = [], dynamics_job.DynamicsRunner.run
    compile_s = 1.5

    def run(self, chunk):
        calls.append((os.getpid(), chunk.index, chunk.rows))
        if len(calls) == 1 and os.getpid() == here:
            dyn = logging.getLogger("simbench.dynamics")
            dyn.info("compiling simbench dynamics kernel rnea_span once (about 3-20 s); cached in X")
            time.sleep(compile_s)
            dyn.info("compiled rnea_span in %.1f s", compile_s)
        return real_run(self, chunk)

    here = os.getpid()
    monkeypatch.setattr(dynamics_job.DynamicsRunner, "run", run)
    caplog.set_level(logging.INFO, logger="simbench")
    t = time.perf_counter()
    res = sweep("dynamics", ARM, out=tmp_path / "w", samples=600, chunk_size=200, workers=2, progress=False)
    wall = time.perf_counter() - t
    assert calls[0] == (here, -1, 64), calls   # the warm-up, in this process, before every chunk
    lines = [r.getMessage() for r in caplog.records]
    assert sum("compiling the dynamics kernels (first use" in m for m in lines) == 1, lines
    assert not any(m.startswith(("compiling simbench", "compiled rnea")) for m in lines), lines
    assert res.facts["compile_seconds"] >= compile_s and res.seconds <= wall - compile_s + 0.05
    assert f"kernels compiled first in {res.facts['compile_seconds']:.1f} s" in res.summary()
    assert read_manifest(tmp_path / "w")["runs"][-1]["compile_seconds"] == res.facts["compile_seconds"]
    caplog.clear()
    again = sweep("dynamics", ARM, out=tmp_path / "w1", samples=600, chunk_size=200, workers=1, progress=False)
    assert "compile_seconds" not in again.facts and "compiled first" not in again.summary()
    assert not any("compiling" in r.getMessage() for r in caplog.records)
    assert checksums(tmp_path / "w") == checksums(tmp_path / "w1") and len(checksums(tmp_path / "w")) == 3


def test_the_warm_up_takes_the_serial_kernels_too_when_a_chunk_is_that_short(monkeypatch, tmp_path):
    from simbench.sweep import dynamics_job, prepare

    sizes = []
    monkeypatch.setattr(dynamics_job.DynamicsRunner, "run", lambda self, chunk: sizes.append(chunk.rows))
    cases = [(1000, 300, [64]), (1010, 500, [10, 64]), (20, 100, [20]), (90, 30, [30])]
    for samples, chunk, expected in cases:
        sizes.clear()
        dynamics_job.warm_up(prepare("dynamics", [ARM], samples=samples, chunk_size=chunk))
        assert sizes == expected, (samples, chunk, sizes)
    assert len(cases) == 4


# ---------------------------------------------------------------------- Ray's token
HOLDER = """
import logging, sys, ray
ctx = ray.init(address="local", num_cpus=1, include_dashboard=False, log_to_driver=False,
         object_store_memory=80 * 2**20, logging_level=logging.ERROR, _temp_dir=sys.argv[1])
print(ctx.address_info["gcs_address"], flush=True)
sys.stdin.read()
ray.shutdown()
"""


@pytest.fixture(scope="module")
def token_ray():
    """A private Ray instance with token authentication, in its own process and temp folder
    (HOME too: its token file is the test's), stopped when the module's tests are done."""
    pytest.importorskip("ray")
    home = tempfile.mkdtemp(prefix="sbh")
    temp = tempfile.mkdtemp(prefix="/tmp/rt")
    env = {**os.environ, "HOME": home, "RAY_AUTH_MODE": "token"}
    os.makedirs(os.path.join(home, ".ray"))
    with open(os.path.join(home, ".ray", "auth_token"), "w") as f:
        f.write(secrets.token_hex(32))
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, temp], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, env=env)
    address = proc.stdout.readline().strip()
    assert address, "the private Ray instance did not start"
    yield address, home
    proc.stdin.close()
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
    shutil.rmtree(home, ignore_errors=True)
    shutil.rmtree(temp, ignore_errors=True)


def test_a_cluster_refusing_the_token_is_one_line_without_the_start_a_cluster_hint(tmp_path, token_ray):
    address, home = token_ray
    env = {**os.environ, "HOME": home, "RAY_AUTH_MODE": "disabled"}
    proc = subprocess.run([sys.executable, "-m", "simbench", "sweep", "dynamics", ARM, "--samples", "100",
                           "--out", "o", "--engine", "ray", "--ray-address", address, "-q"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 2, proc.stderr[-2000:]
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "gcs_client" not in proc.stderr, proc.stderr[-2000:]
    line = lines[0]
    assert line.startswith(f"simbench sweep: error: Ray at '{address}' refused to authenticate this driver"), line
    for said in ("InvalidAuthToken", "RAY_AUTH_MODE is 'disabled' here", "~/.ray/auth_token", "RAY_AUTH_MODE=token"):
        assert said in line, (said, line)
    assert "ray start" not in line and not (tmp_path / "o").exists()


def test_the_same_cluster_with_its_token_writes_the_local_engines_files(tmp_path, token_ray):
    address, home = token_ray
    env = {**os.environ, "HOME": home, "RAY_AUTH_MODE": "token"}
    args = ["dynamics", ARM, "--samples", "300", "--chunk-size", "100", "--seed", "2", "-q"]
    proc = subprocess.run([sys.executable, "-m", "simbench", "sweep", *args, "--out", "r", "--engine", "ray",
                           "--ray-address", address, "--workers", "1"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0 and "gcs_client" not in proc.stderr, proc.stderr[-2000:]
    sweep("dynamics", ARM, out=tmp_path / "l", samples=300, chunk_size=100, seed=2, progress=False)
    assert checksums(tmp_path / "r") == checksums(tmp_path / "l") and len(checksums(tmp_path / "l")) == 3


# ---------------------------------------------------------------------- resuming
def test_a_changed_input_file_is_named_by_its_path_then_the_hashes(tmp_path):
    scene = tmp_path / "scene.toml"
    shutil.copy(default_scene_path(), scene)
    urdf = tmp_path / "arm.urdf"
    from simbench.paths import resolve_urdf

    shutil.copy(resolve_urdf(ARM), urdf)
    kw = dict(samples=50, seed=0, pairs=PAIRS, workers=1, progress=False)
    sweep("collision", scene, out=tmp_path / "c", **kw)
    sweep("dynamics", urdf, out=tmp_path / "d", samples=50, progress=False)
    cases = []
    for path, edit in ((scene, lambda t: t.replace("position = [1, 1, 0.5]", "position = [1, 1, 0.6]")),
                       (scene, lambda t: t + "\n# a comment\n"), (urdf, lambda t: t.replace("</robot>", "</robot>\n"))):
        before = sha(path)
        original = path.read_text()
        path.write_text(edit(original))
        assert path.read_text() != original
        after = sha(path)
        kind, role, out = ("collision", "scene", "c") if path == scene else ("dynamics", "urdf", "d")
        with pytest.raises(SimbenchError) as exc:
            if kind == "collision":
                sweep(kind, path, out=tmp_path / out, **kw)
            else:
                sweep(kind, path, out=tmp_path / out, samples=50, progress=False)
        said = str(exc.value)
        assert (f"holds another sweep: {role} file {str(path)!r} changed since the sweep began (SHA-256 "
                f"'{before[:12]}...' there, '{after[:12]}...' in this run); use another --out") in said, said
        assert "\n" not in said
        cases.append(said)
        path.write_text(original)
    assert len(cases) == 3


def _stop_after(n):
    seen = []

    def on_chunk(result):
        seen.append(result.chunk.index)
        if len(seen) >= n:
            raise KeyboardInterrupt

    return on_chunk


def test_more_samples_grow_a_finished_or_unfinished_folder_to_the_one_go_sweep(tmp_path, caplog):
    """Row i depends only on the seed and i: the grown folder's chunks are byte for byte those
    of the sweep made at full size in one go; only the new chunks (and a last chunk that was
    shorter) are computed."""
    caplog.set_level(logging.INFO, logger="simbench")
    dyn = dict(seed=5, chunk_size=300, workers=1, progress=False)
    whole = sweep("dynamics", ARM, out=tmp_path / "whole", samples=2000, **dyn)
    first = sweep("dynamics", ARM, out=tmp_path / "grown", samples=1000, **dyn)   # chunks 300, 300, 300, 100
    assert first.complete and first.computed == 4
    grown = sweep("dynamics", ARM, out=tmp_path / "grown", samples=2000, **dyn)
    assert grown.complete and grown.skipped == 3 and grown.computed == 4   # chunk 3 grows from 100 to 300 rows
    assert checksums(tmp_path / "grown") == checksums(whole.out) and len(checksums(whole.out)) == 7
    a, b = read(tmp_path / "grown"), read(whole.out)
    assert all(np.array_equal(a[k], b[k]) for k in b) and a["tau"].shape == (2000, 2)
    assert any("growing the sweep" in r.getMessage() and "from 1,000 to 2,000 samples" in r.getMessage()
               for r in caplog.records)
    manifest = read_manifest(tmp_path / "grown")
    assert manifest["job"]["samples"] == 2000 and manifest["n_chunks"] == 7 and manifest["grown"][0]["from"] == 1000

    col = dict(seed=1, chunk_size=250, pairs=PAIRS, workers=1, progress=False)
    whole_c = sweep("collision", SCENE, out=tmp_path / "cw", samples=1000, **col)
    with pytest.raises(KeyboardInterrupt):   # unfinished: 1 of 3 chunks
        sweep("collision", SCENE, out=tmp_path / "cg", samples=600, on_chunk=_stop_after(1), **col)
    assert len(read_manifest(tmp_path / "cg")["chunks"]) == 1
    grown_c = sweep("collision", SCENE, out=tmp_path / "cg", samples=1000, **col)
    assert grown_c.complete and grown_c.skipped == 1 and grown_c.computed == 3
    assert checksums(tmp_path / "cg") == checksums(whole_c.out) and len(checksums(whole_c.out)) == 4


def test_fewer_samples_are_refused_in_one_line_and_leave_the_folder_as_it_was(tmp_path):
    out = tmp_path / "o"
    sweep("dynamics", ARM, out=out, samples=500, chunk_size=100, progress=False)
    before = (out / "_manifest.json").read_text()
    with pytest.raises(SimbenchError) as exc:
        sweep("dynamics", ARM, out=out, samples=300, chunk_size=100, progress=False)
    assert str(exc.value) == (f"sweep output folder {str(out)!r} holds a sweep of 500 samples; --samples 300 would "
                              "shrink it: use another --out for a smaller sweep (or read the first 300 rows of this one)")
    after = json.loads((out / "_manifest.json").read_text())
    assert after["job"] == json.loads(before)["job"] and len(after["runs"]) == 1
    with pytest.raises(SimbenchError, match="holds another sweep: --samples is 500 there, 900 in this run; also "
                       "differ: --seed; use another --out"):   # more samples and another seed: refused
        sweep("dynamics", ARM, out=out, samples=900, chunk_size=100, seed=1, progress=False)


# ---------------------------------------------------------------------- reading some columns
def test_read_takes_some_results_or_columns_and_reads_only_those(tmp_path, monkeypatch):
    """Oracle: read() of everything (rows in sample order) and the Parquet columns asked of pyarrow."""
    import pyarrow.dataset as pads

    out = tmp_path / "d"
    res = sweep("dynamics", ARM, out=out, samples=700, chunk_size=200, seed=3, progress=False)
    full = read(out)
    asked = []
    real = pads.dataset

    class Recorded:
        def __init__(self, *a, **kw):
            self.ds = real(*a, **kw)

        def to_table(self, columns=None, **kw):
            asked.append(columns)
            return self.ds.to_table(columns=columns, **kw)

    monkeypatch.setattr(pads, "dataset", Recorded)
    joint = full.columns["tau"][1]
    cases = [("q", ["q"]), (["tau", "M"], ["tau", "M"]), ([joint, "qd"], [joint, "qd"])]
    for columns, names in cases:
        got = read(out, columns)
        assert list(got) == names and asked[-1][0] == "sample"
        assert set(asked[-1]) == {"sample", *(c for n in names for c in (full.columns[n] if n in full else [n]))}
        for n in names:
            expected = full[n] if n in full else full["tau"][:, 1]
            assert np.array_equal(got[n], expected) and got[n].shape == expected.shape
    assert len(cases) == 3 and full["M"].shape == (700, 2, 2)
    assert np.array_equal(res.arrays("qdd")["qdd"], full["qdd"])
    with pytest.raises(SimbenchError, match=r"column 'tauu' is not in this sweep \(did you mean 'tau'\?\); its results "
                       r"are sample, q, qd, qdd, tau, M, qdd_free"):
        read(out, "tauu")
    with pytest.raises(SimbenchError, match="columns = 3; expected a result's name"):
        read(out, 3)


def test_a_sweep_folder_given_as_configs_says_how_to_reuse_its_configurations(tmp_path):
    """``--configs lab1`` (a sweep's output folder, to relabel its configurations against a changed
    scene) said only 'expected a .npy or .parquet file'. It now gives the line to write them to
    one; following it, the new sweep's columns equal the first sweep's, row for row (the same
    configurations in the same scene)."""
    scene = str(default_scene_path())
    first = sweep("collision", scene, samples=24, seed=3, out=tmp_path / "lab1", progress=False)
    with pytest.raises(SimbenchError) as err:
        sweep("collision", scene, configs=str(tmp_path / "lab1"), out=tmp_path / "lab2", progress=False)
    message = str(err.value)
    assert "is a sweep's folder; expected a .npy or a .parquet file: write its configurations to one with " \
           "numpy.save('q.npy', simbench.sweep.read(" in message, message
    np.save(tmp_path / "q.npy", read(tmp_path / "lab1", columns=["q"])["q"])
    sweep("collision", scene, configs=str(tmp_path / "q.npy"), out=tmp_path / "lab2", progress=False)
    a, b = read(tmp_path / "lab1"), read(tmp_path / "lab2")
    assert first is not None and a["q"].shape == (24, 7)
    assert list(b.columns) == list(a.columns) and "distance" in a.columns
    assert np.array_equal(a["q"], b["q"]) and np.array_equal(a["distance"], b["distance"])
    assert np.array_equal(a["in_collision"], b["in_collision"])
