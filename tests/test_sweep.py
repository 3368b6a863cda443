"""simbench sweep on the local engine: results against independent oracles (direct PyBullet
calls, Pinocchio, NumPy's documented streams, single-robot check calls), determinism, resuming,
and bad input (one line, exit 2)."""
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pyarrow.dataset as ds
import pybullet as p
import pytest

import simbench
from simbench.errors import SimbenchError
from simbench.paths import default_scene_path, pybullet_data_dir
from simbench.sweep import read, read_manifest, sweep
from simbench.sweep.sampling import BLOCK

SCENE = "simbench:kuka_cubes.toml"
LINK7 = "robot/lbr_iiwa_link_7"
POST_PAIRS = [(LINK7, "ground"), (LINK7, "cube1"), (LINK7, "cube2"), (LINK7, "cube3")]
IIWA = "pybullet_data:kuka_iiwa/model.urdf"


def checksums(out) -> list[str]:
    m = read_manifest(out)
    return [m["chunks"][str(i)]["sha256"] for i in range(m["n_chunks"])]


def run_cli(*args, cwd=None, timeout=300):
    return subprocess.run([sys.executable, "-m", "simbench.cli", "sweep", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=cwd)


# ---------------------------------------------------------------------- the sampler
def test_samples_follow_the_documented_numpy_rule_whatever_the_chunk_size(tmp_path):
    """Sample i comes from block i // BLOCK, SeedSequence(seed).spawn(b + 1)[b], scaled to the
    joint limits: regenerated here with NumPy alone, for two chunkings."""
    n, seed = 2 * BLOCK + 37, 7
    a = sweep("collision", SCENE, samples=n, seed=seed, out=tmp_path / "a", chunk_size=1000, workers=1,
              pairs=POST_PAIRS[:1], progress=False).arrays()
    b = sweep("collision", SCENE, samples=n, seed=seed, out=tmp_path / "b", chunk_size=333, workers=1,
              pairs=POST_PAIRS[:1], progress=False).arrays()
    client = p.connect(p.DIRECT)
    try:
        robot = p.loadURDF(str(pybullet_data_dir() / "kuka_iiwa/model.urdf"), useFixedBase=True, physicsClientId=client)
        lim = [p.getJointInfo(robot, j, physicsClientId=client)[8:10] for j in range(7)]
    finally:
        p.disconnect(physicsClientId=client)
    lo, hi = np.array(lim).T
    streams = np.random.SeedSequence(seed).spawn(3)
    u = np.concatenate([np.random.default_rng(s).random((BLOCK, 7)) for s in streams])[:n]
    expected = lo + (hi - lo) * u
    assert np.array_equal(a["q"], expected) and np.array_equal(b["q"], expected)
    assert np.array_equal(a["sample"], np.arange(n))
    assert a["q"].shape == (n, 7)


# ---------------------------------------------------------------------- collision against PyBullet
def _pybullet_oracle(q: np.ndarray, md: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Link 7 against the ground and cube1 (closest points) and the whole robot against cube2
    (min over its base and links 1-7), by direct PyBullet calls on a scene loaded by hand."""
    client = p.connect(p.DIRECT)
    try:
        data = pybullet_data_dir()
        ground = p.loadURDF(str(data / "plane.urdf"), useFixedBase=True, physicsClientId=client)
        robot = p.loadURDF(str(data / "kuka_iiwa/model.urdf"), useFixedBase=True, physicsClientId=client)
        cube1 = p.loadURDF(str(data / "cube.urdf"), [1, 1, 0.5], useFixedBase=True, physicsClientId=client)
        cube2 = p.loadURDF(str(data / "cube.urdf"), [-1, -1, 0.5], useFixedBase=True, physicsClientId=client)
        d = np.empty((len(q), 3))
        pts = np.empty((len(q), 2, 2, 3))
        for i, row in enumerate(q):
            for j, x in enumerate(row):
                p.resetJointState(robot, j, x, physicsClientId=client)
            for k, body in enumerate((ground, cube1)):
                found = p.getClosestPoints(robot, body, md, 6, -1, physicsClientId=client)
                best = min(found, key=lambda c: c[8]) if found else None
                d[i, k] = best[8] if best else md
                pts[i, k] = (best[5], best[6]) if best else np.nan
            arm = [c[8] for link in range(-1, 7) for c in p.getClosestPoints(robot, cube2, md, link, -1, physicsClientId=client)]
            d[i, 2] = min(arm, default=md)
        return np.minimum(d, md), pts, q
    finally:
        p.disconnect(physicsClientId=client)


def test_collision_rows_equal_direct_pybullet_calls(tmp_path):
    md, margin = 0.8, 0.05
    res = sweep("collision", SCENE, samples=300, seed=3, out=tmp_path / "c", chunk_size=128, workers=2,
                pairs=[(LINK7, "ground"), (LINK7, "cube1"), ("robot", "cube2")], max_distance=md, margin=margin,
                witness=True, progress=False)
    a = res.arrays()
    d, pts, _ = _pybullet_oracle(a["q"], md)
    assert a["distance"].shape == (300, 3)
    np.testing.assert_allclose(a["distance"], d, rtol=0, atol=1e-12)
    assert np.array_equal(a["in_collision"], d < margin) and np.array_equal(a["any_collision"], (d < margin).any(1))
    found = np.isfinite(pts[:, :, 0, 0])
    np.testing.assert_allclose(a["point_a"][:, :2][found], pts[:, :, 0][found], atol=1e-12)
    np.testing.assert_allclose(a["point_b"][:, :2][found], pts[:, :, 1][found], atol=1e-12)
    assert found.sum() > 300 and a["any_collision"].sum() > 0  # both outcomes occur among the 300 x 3 cases
    assert res.totals["in collision"] == int(a["any_collision"].sum())
    table = ds.dataset(tmp_path / "c").to_table()  # the folder is one dataset for pyarrow
    assert table.num_rows == 300 and "distance(robot/lbr_iiwa_link_7, ground)" in table.column_names
    assert "point_b(robot, cube2).z" in table.column_names and "q(lbr_iiwa_joint_7)" in table.column_names


def test_default_pairs_are_the_whole_arm_against_each_body_and_the_self_pairs(tmp_path):
    res = sweep("collision", SCENE, samples=50, seed=0, out=tmp_path / "d", workers=1, progress=False)
    labels = [c[len("distance("):-1] for c in res.manifest["job"]["arrays"][2]["columns"]]
    # the base rests on the ground (1 mm into it): out of that pair only, which says so
    assert labels[:4] == ["robot/(moving), ground", "robot, cube1", "robot, cube2", "robot, cube3"]
    assert len(labels) > 4 and all(lb.startswith("robot/lbr") for lb in labels[4:])  # self pairs, link against link
    d = res.arrays()["distance"]
    assert (d[:, 0] > -1e-9).mean() > 0.5


# ---------------------------------------------------------------------- dynamics against Pinocchio
def test_dynamics_rows_equal_pinocchio_rnea_crba_aba(tmp_path):
    import pinocchio as pin

    from simbench.oracles.pinocchio import PinocchioMap
    from simbench.model import RobotModel

    res = sweep("dynamics", IIWA, samples=200, seed=5, out=tmp_path / "dyn", chunk_size=64, workers=2, progress=False)
    a = res.arrays()
    path = str(pybullet_data_dir() / "kuka_iiwa/model.urdf")
    pm = pin.buildModelFromUrdf(path)
    data = pm.createData()
    mp_ = PinocchioMap(RobotModel.from_urdf(path), pm)
    P = mp_.P
    assert a["M"].shape == (200, 7, 7) and a["tau"].shape == (200, 7)
    for i in range(200):
        q, v, acc = mp_.q(a["q"][i]), P @ a["qd"][i], P @ a["qdd"][i]
        assert np.allclose(P.T @ pin.rnea(pm, data, q, v, acc), a["tau"][i], atol=1e-9)
        M = pin.crba(pm, data, q)
        M = np.triu(M) + np.triu(M, 1).T
        assert np.allclose(P.T @ M @ P, a["M"][i], atol=1e-9)
        assert np.allclose(P.T @ pin.aba(pm, data, q, v, np.zeros(7)), a["qdd_free"][i], atol=1e-7)
    assert np.all(np.abs(a["qd"]) <= 2.0) and np.all(np.abs(a["qdd"]) <= 5.0)


# ---------------------------------------------------------------------- check against single calls
def test_check_rows_equal_single_robot_compare_calls(tmp_path):
    from simbench.check import compare

    targets = [IIWA, "pybullet_data:TwoJointRobot_wo_fixedJoints.urdf", "simbench:urdf/defects/arm.urdf"]
    res = sweep("check", targets, samples=8, seed=2, out=tmp_path / "chk", workers=2, progress=False)
    a = res.arrays()
    assert list(a["sample"]) == [0, 1, 2]
    for i, t in enumerate(targets):
        r = compare(t, samples=8, seed=2)
        assert a["target"][i] == r.target and a["verdict"][i] == r.verdict and a["dof"][i] == r.dof
        assert a["tau_abs"][i] == r.errors.tau_abs and a["M_abs"][i] == r.errors.M_abs
        assert a["causes"][i] == ", ".join(c.kind for c in r.causes)
    assert sum(res.totals.values()) == 3


# ---------------------------------------------------------------------- determinism and resuming
def test_one_and_two_workers_write_bit_identical_files(tmp_path):
    kw = dict(samples=3000, seed=11, chunk_size=500, pairs=POST_PAIRS, progress=False)
    sweep("collision", SCENE, out=tmp_path / "w1", workers=1, **kw)
    sweep("collision", SCENE, out=tmp_path / "w2", workers=2, **kw)
    assert checksums(tmp_path / "w1") == checksums(tmp_path / "w2") and len(checksums(tmp_path / "w1")) == 6
    for name in sorted(os.listdir(tmp_path / "w1")):
        if name.startswith("chunk-"):
            assert (tmp_path / "w1" / name).read_bytes() == (tmp_path / "w2" / name).read_bytes()


def test_rerun_skips_finished_chunks_and_redoes_corrupted_or_missing_ones(tmp_path, caplog):
    kw = dict(samples=2000, seed=1, chunk_size=400, pairs=POST_PAIRS, workers=1, progress=False)
    out = tmp_path / "r"
    first = sweep("collision", SCENE, out=out, **kw)
    reference = checksums(out)
    again = sweep("collision", SCENE, out=out, **kw)
    assert (again.computed, again.skipped, again.redone) == (0, 5, 0)
    files = sorted(out.glob("chunk-*.parquet"))
    data = bytearray(files[2].read_bytes())
    data[300] ^= 0x10  # a flipped bit on disk
    files[2].write_bytes(bytes(data))
    files[4].unlink()
    (out / ".chunk-000001.parquet.tmp999").write_bytes(b"half")  # left by an interrupted run
    with caplog.at_level("WARNING", logger="simbench.sweep"):
        fixed = sweep("collision", SCENE, out=out, **kw)
    assert (fixed.computed, fixed.skipped, fixed.redone) == (2, 3, 2)
    assert "chunk 2 (chunk-000002.parquet) fails its checksum" in caplog.text and "chunk 4" in caplog.text
    assert checksums(out) == reference and not list(out.glob(".chunk-*"))
    assert np.array_equal(read(out)["distance"], first.arrays()["distance"])
    runs = read_manifest(out)["runs"]
    assert [r["status"] for r in runs] == ["complete"] * 3 and runs[-1]["redone"] == 2


def test_configurations_from_npy_and_from_a_sweeps_own_parquet(tmp_path):
    kw = dict(pairs=POST_PAIRS, workers=1, progress=False, chunk_size=100)
    src = sweep("collision", SCENE, samples=250, seed=4, out=tmp_path / "src", **kw).arrays()
    np.save(tmp_path / "q.npy", src["q"])
    from_npy = sweep("collision", SCENE, configs=tmp_path / "q.npy", out=tmp_path / "npy", **kw).arrays()
    first = sorted((tmp_path / "src").glob("chunk-*.parquet"))[0]  # a sweep's chunk as input: 100 rows
    from_pq = sweep("collision", SCENE, configs=first, out=tmp_path / "pq", **kw).arrays()
    assert np.array_equal(from_npy["distance"], src["distance"]) and len(from_npy["q"]) == 250
    assert np.array_equal(from_pq["distance"], src["distance"][:100]) and len(from_pq["q"]) == 100
    bad = tmp_path / "bad.npy"
    np.save(bad, np.zeros((5, 6)))
    with pytest.raises(SimbenchError, match=r"shape \(5, 6\); expected \(N, 7\)"):
        sweep("collision", SCENE, configs=bad, out=tmp_path / "bad", **kw)


def test_simbench_sweep_is_callable_from_the_package(tmp_path):
    res = simbench.sweep("dynamics", "simbench:planar_2r.urdf", samples=10, seed=0, out=tmp_path / "p2",
                         workers=1, progress=False)
    assert res.complete and res.arrays()["M"].shape == (10, 2, 2)


# ---------------------------------------------------------------------- refusals
def test_rerun_with_other_parameters_is_refused_naming_the_difference(tmp_path):
    scene = tmp_path / "scene.toml"
    shutil.copy(default_scene_path(), scene)
    out = tmp_path / "o"
    kw = dict(samples=100, seed=0, pairs=POST_PAIRS[:2], workers=1, progress=False)
    sweep("collision", scene, out=out, **kw)
    cases = [({"seed": 1}, "--seed is 0 there, 1 in this run"),
             ({"chunk_size": 50}, "--chunk-size is 10000 there, 50 in this run"),
             ({"pairs": POST_PAIRS[:1]}, "--pairs/--pair has 2 values there, 1 in this run"),
             ({"margin": 0.01}, "--margin is 0.0 there, 0.01 in this run")]
    for change, message in cases:
        with pytest.raises(SimbenchError, match="holds another sweep") as exc:
            sweep("collision", scene, out=out, **{**kw, **change})
        assert message in str(exc.value) and "\n" not in str(exc.value)
    scene.write_text(scene.read_text().replace("position = [1, 1, 0.5]", "position = [1, 1, 0.6]"))
    with pytest.raises(SimbenchError, match=r"scene file '.*scene.toml' changed since the sweep began \(SHA-256 "
                       r"'[0-9a-f]{12}\.\.\.' there, '[0-9a-f]{12}\.\.\.' in this run\); use"):
        sweep("collision", scene, out=out, **kw)
    with pytest.raises(SimbenchError, match="holds another sweep") as exc:   # every difference named
        sweep("collision", scene, out=out, **{**kw, "seed": 1, "chunk_size": 50})
    said = str(exc.value)   # and the scene changed above: three differences, the first with its values
    assert said == (f"sweep output folder {str(out)!r} holds another sweep: --chunk-size is 10000 there, 50 in "
                    "this run; also differ: --seed, the scene file; use another --out, or the same parameters to resume")
    assert len(said) <= 200 or len(str(out)) > 60, said
    assert len(cases) == 4   # fewer --samples: tests/test_sweep_followups.py (more samples grow the folder)


@pytest.mark.parametrize("args, message", [
    (["colision", SCENE, "--samples", "3", "--out", "o"],
     "unknown job kind 'colision'; expected one of collision, dynamics, check (did you mean 'collision'?)"),
    (["collision", SCENE, "--samples", "0", "--out", "o"], "--samples = '0'; expected an integer >= 1"),
    (["collision", SCENE, "--samples", "ten", "--out", "o"], "--samples = 'ten'; expected an integer >= 1"),
    (["collision", SCENE, "--samples", "1.5", "--out", "o"], "--samples = '1.5'; expected an integer >= 1"),
    (["collision", SCENE, "--samples", "5", "--seed", "-1", "--out", "o"], "--seed = '-1'; expected an integer >= 0"),
    (["collision", SCENE, "--samples", "5", "--out", "file.txt/sub"],
     "sweep output folder (--out) 'file.txt/sub' cannot be created (Not a directory)"),
    (["collision", SCENE, "--samples", "5"], "--out DIR is missing"),
    (["collision", SCENE, "--samples", "5", "--out", "o", "--engine", "spark"], "--engine 'spark'; expected local or ray"),
    (["collision", SCENE, "--samples", "5", "--out", "o", "--workers", "1000000"], "workers = 1,000,000; expected at most"),
    (["collision", SCENE, "--samples", "5", "--out", "o", "--ray-address", "auto"], "--ray-address auto needs --engine ray"),
    (["dynamics", IIWA, "--samples", "5", "--out", "o", "--witness"], "--witness is not an option of sweep dynamics"),
    (["collision", "no/such.toml", "--samples", "5", "--out", "o"], "scene file not found: 'no/such.toml'"),
    # the wrong kind of target: said so (it was "malformed XML" / "not valid TOML")
    (["dynamics", SCENE, "--samples", "5", "--out", "o"], f"sweep dynamics takes a URDF; {SCENE!r} is a scene"),
    (["collision", IIWA, "--samples", "5", "--out", "o"], f"sweep collision takes a scene (a TOML file); {IIWA!r} is a URDF"),
    (["collision", SCENE, "--samples", "5", "--out", "o", "--pair", "robot/link_9", "ground"], "unknown link 'link_9'"),
    (["collision", SCENE, "--samples", "5", "--out", "o", "--margin", "2"], "margin = 2 m exceeds max_distance = 1 m"),
    (["check", "--out", "o"], "sweep check needs at least one TARGET"),
    (["check", "simbench:planar_2r.urdf", "--samples", "200000", "--out", "o"],
     "samples = 200000: expected a positive integer up to 100,000 random states per robot"),
    (["collision", SCENE, "--samples", "5", "--out", "o", "--engine", "ray", "--ray-address", "127.0.0.1:1"],
     "cannot reach a Ray cluster at '127.0.0.1:1' (Connection refused)"),
    (["collision", SCENE, "--samples", "5", "--out", "full"], "is not empty and holds no sweep (found notes.txt)"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, args, message):
    (tmp_path / "file.txt").write_text("")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "notes.txt").write_text("mine")
    proc = run_cli(*args, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("simbench sweep: error: ") and message in lines[0], proc.stderr
    assert not (tmp_path / "o").exists()  # nothing written before the input is known to be good


def test_mismatched_rerun_from_the_command_line_is_one_line_and_exit_2(tmp_path):
    base = ["collision", SCENE, "--samples", "20", "--out", "o", "--pair", LINK7, "cube1", "-q"]
    first = run_cli(*base, "--seed", "1", cwd=tmp_path)
    assert first.returncode == 0 and "sweep collision: 20 configs in 1 chunk (" in first.stdout, first.stderr
    assert first.stdout.count("sweep collision: 20 configs") == 1 and "20 configs" not in first.stderr, first.stderr
    proc = run_cli(*base, "--seed", "2", cwd=tmp_path)
    assert proc.returncode == 2 and proc.stderr.strip() == (
        "simbench sweep: error: sweep output folder 'o' holds another sweep: --seed is 1 there, 2 in this run; "
        "use another --out, or the same parameters to resume")
    manifest = json.loads((tmp_path / "o" / "_manifest.json").read_text())
    assert manifest["complete"] and manifest["job"]["seed"] == 1 and len(manifest["runs"]) == 1


def test_command_from_another_folder_writes_a_dataset_there(tmp_path):
    proc = run_cli("dynamics", "simbench:planar_2r.urdf", "--samples", "1e3", "--seed", "3", "--out", "dyn",
                   "--chunk-size", "300", "--workers", "2", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "sweep dynamics: 1,000 states in 4 chunks" in proc.stdout and "dyn: complete" in proc.stdout
    table = ds.dataset(tmp_path / "dyn").to_table()
    assert table.num_rows == 1000 and sorted(table["sample"].to_pylist()) == list(range(1000))
    assert not (tmp_path / "dyn" / "_lock").exists()  # held while the sweep runs, removed when it ends


def test_without_the_sweep_extra_the_local_engine_writes_and_the_rest_names_the_extra(tmp_path):
    """A fresh install has neither pyarrow nor Ray: hidden here from a child interpreter."""
    code = (
        "import sys; sys.modules['pyarrow'] = None; sys.modules['ray'] = None\n"
        "from simbench.cli import main\n"
        "args = ['sweep', 'collision', 'simbench:kuka_cubes.toml', '--samples', '300', '--seed', '0', '--out', 'o',"
        " '--pair', 'robot/lbr_iiwa_link_7', 'cube1', '-q']\n"
        "print('rc', main(args)); print('rc', main(args + ['--engine', 'ray']))\n"
        "import simbench\n"
        "try:\n    simbench.sweep.read('o')\nexcept simbench.SimbenchError as e:\n    print('read:', e)\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.splitlines()
    assert out[0].startswith("sweep collision: 300 configs in 1 chunk (") and out[1] == "rc 0"
    assert out[2] == "rc 2" and ("simbench sweep: error: --engine ray needs ray, which is not installed; install "
                                 "the 'sweep' extra: pip install 'simbench[sweep]'") in proc.stderr
    assert out[3] == ("read: reading a sweep needs pyarrow, which is not installed; install the 'sweep' extra: "
                      "pip install 'simbench[sweep]'")
    table = ds.dataset(tmp_path / "o").to_table()  # what it wrote without pyarrow, read with it
    assert table.num_rows == 300 and table.column_names[-1] == "any_collision"


def test_progress_bar_shows_count_rate_and_time_left(tmp_path):
    # as on a terminal; every update drawn (tqdm's TQDM_MININTERVAL): with the kernels loaded before
    # the bar starts (the sweep's warm-up), the 6 chunks take 1-2 ms each, all within tqdm's default
    # 0.1 s between redraws, so only 0/6000 was drawn
    env = {**os.environ, "SIMBENCH_PROGRESS": "1", "TQDM_MININTERVAL": "0"}
    proc = subprocess.run([sys.executable, "-m", "simbench.cli", "sweep", "dynamics", "simbench:planar_2r.urdf",
                           "--samples", "6000", "--chunk-size", "1000", "--out", "p", "--workers", "1"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr
    import re

    lines = proc.stderr.replace("\r", "\n").split("\n")
    drawn = [line for line in lines if re.search(r"\| [1-9]\d*/6000 \[\d\d:\d\d<\d\d:\d\d, [\d.]+state/s\]", line)]
    assert drawn, proc.stderr  # rows done of the total, elapsed<time left, rate


def test_the_refusal_tells_lists_by_their_lengths_and_stays_short():
    """Bounds of another length are told by their lengths, a list's differing entries by the
    first one; what does not fit on the ~200-character line is only named."""
    from simbench.sweep.output import mismatch

    head, tail = "sweep output folder 'd' holds another sweep: ", "; use another --out, or the same parameters to resume"
    low36, low54 = [-0.8028514559] * 36, [-1.0] * 54
    said = mismatch({"options": {"low": low36}}, {"options": {"low": low54}}, head, tail)
    assert said == head + "options.low has 36 values there, 54 in this run" + tail
    said = mismatch({"options": {"low": [0.0] * 36}}, {"options": {"low": [0.0] * 3 + [0.5] * 33}}, head, tail)
    assert said == head + "options.low[3] is 0.0 there, 0.5 in this run (and 32 more entries)" + tail
    old = {"options": {"floating": False, "low": low36, "high": [0.8] * 36}, "arrays": ["q"] * 36}
    new = {"options": {"floating": True, "low": low54, "high": [1.0] * 54}, "arrays": ["q"] * 54}
    said = mismatch(old, new, head, tail)
    assert said == head + "--floating is False there, True in this run" + tail   # the bounds and columns follow
    assert len(said) < 200 and mismatch(old, old, head, tail) is None
