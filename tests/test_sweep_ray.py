"""The Ray engine on a local Ray instance started by the test (``ray.init(num_cpus=2)``): the
oracle is the local engine, whose files the Ray engine must reproduce bit for bit, also when
an actor process is killed mid-sweep. One Ray instance serves the module (its start-up takes
seconds; the work in each test is a second or two)."""
import logging
import os
import shutil
import signal
import time

import numpy as np
import pyarrow.dataset as ds
import pytest
import ray

from simbench.errors import SimbenchError
from simbench.paths import default_scene_path
from simbench.sweep import execute, prepare, read_manifest, sweep

SCENE = "simbench:kuka_cubes.toml"
LINK7 = "robot/lbr_iiwa_link_7"
PAIRS = [(LINK7, "ground"), (LINK7, "cube1"), (LINK7, "cube2"), (LINK7, "cube3")]
log = logging.getLogger(__name__)


@pytest.fixture(scope="module")
def local_ray():
    t0 = time.perf_counter()
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False,
             object_store_memory=100 * 2**20, logging_level=logging.WARNING)
    log.info("ray.init(num_cpus=2) took %.1f s", time.perf_counter() - t0)
    yield
    ray.shutdown()


def checksums(out) -> list[str]:
    m = read_manifest(out)
    return [m["chunks"][str(i)]["sha256"] for i in range(m["n_chunks"])]


def test_ray_engine_writes_the_local_engines_files_bit_for_bit(tmp_path, local_ray):
    kw = dict(samples=4000, seed=3, chunk_size=500, pairs=PAIRS + [("robot", "cube2")], witness=True, progress=False)
    local = sweep("collision", SCENE, out=tmp_path / "local", workers=2, **kw)
    remote = sweep("collision", SCENE, out=tmp_path / "ray", engine="ray", workers=2, **kw)
    assert remote.engine == "ray" and remote.facts["workers"] == 2 and remote.computed == 8
    assert checksums(tmp_path / "ray") == checksums(tmp_path / "local") and len(checksums(local.out)) == 8
    a, b = local.arrays(), remote.arrays()
    assert all(np.array_equal(a[k], b[k], equal_nan=a[k].dtype.kind == "f") for k in a) and len(a) == 7
    dyn = dict(samples=600, seed=1, chunk_size=200, progress=False)
    sweep("dynamics", "simbench:planar_2r.urdf", out=tmp_path / "dl", workers=1, **dyn)
    sweep("dynamics", "simbench:planar_2r.urdf", out=tmp_path / "dr", engine="ray", workers=2, **dyn)
    assert checksums(tmp_path / "dl") == checksums(tmp_path / "dr")
    assert ray.is_initialized()  # the engine leaves an instance it did not start running


def test_an_actor_killed_mid_sweep_still_yields_every_chunk_exactly_once(tmp_path, local_ray):
    kw = dict(samples=12_000, seed=4, chunk_size=1000, pairs=PAIRS)
    sweep("collision", SCENE, out=tmp_path / "ref", workers=1, progress=False, **kw)
    spec = prepare("collision", [SCENE], **kw)
    pids, killed = [], []

    def remember(actors):
        pids.extend(ray.get([a.pid.remote() for a in actors]))

    def kill_one(result):
        if not killed:
            os.kill(pids[0], signal.SIGKILL)
            killed.append(pids[0])

    res = execute(spec, tmp_path / "k", engine="ray", workers=2, on_chunk=kill_one, on_start=remember, progress=False)
    assert killed and len(set(pids)) == 2
    assert res.complete and res.computed == 12
    assert checksums(tmp_path / "k") == checksums(tmp_path / "ref")
    samples = np.sort(ds.dataset(tmp_path / "k").to_table(columns=["sample"])["sample"].to_numpy())
    assert np.array_equal(samples, np.arange(12_000))


def test_a_worker_with_another_copy_of_the_scene_refuses_in_one_line(tmp_path, local_ray):
    scene = tmp_path / "scene.toml"
    shutil.copy(default_scene_path(), scene)
    spec = prepare("collision", [str(scene)], samples=10, pairs=PAIRS[:1])
    scene.write_text(scene.read_text() + "\n# edited after the driver hashed it\n")
    with pytest.raises(SimbenchError, match=r"a Ray worker cannot load the job: scene file '.*scene.toml' differs on "
                                            r"this node \(SHA-256 [0-9a-f]{12}, driver [0-9a-f]{12}\)"):
        execute(spec, tmp_path / "o", engine="ray", workers=1, progress=False)
    assert not (tmp_path / "o").exists()   # a usage error: the folder this run made is gone again (walkthrough T)


def test_the_command_line_on_its_own_ray_instance_says_only_its_lines(tmp_path):
    """``simbench sweep ... --engine ray`` starting its own local Ray: stdout is the summary and
    stderr empty (every run printed Ray's 'Token authentication is enabled for this Ray
    cluster' warning; a user walkthrough). Oracle: the process's streams and the manifest."""
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "simbench", "sweep", "dynamics", "pybullet_data:kuka_iiwa/model.urdf",
                           "--samples", "200", "--chunk-size", "100", "--seed", "1", "--out", "o", "--engine", "ray",
                           "--workers", "1", "-q"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stderr == "", proc.stderr[-3000:]
    assert proc.stdout.startswith("sweep dynamics: 200 states in 2 chunks") and "ray engine" in proc.stdout, proc.stdout
    assert read_manifest(tmp_path / "o")["complete"]
