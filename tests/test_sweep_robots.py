"""simbench sweep collision over several robots (``--robot NAME`` repeated, ``robots=``): two iiwa
arms 0.8 m apart sharing a workspace with a cube, both moved. Oracle: a DIRECT PyBullet client of
this file's own, the same URDFs loaded by hand, each arm's joints set by name with
resetJointState, the distance of a pair the least ``getClosestPoints`` over its links (saturating
at max_distance, as the sweep does). Before --robot the sweep moved only the scene's robot and
warned that the other robot's pairs stood still."""
import json
import subprocess
import sys

import numpy as np
import pyarrow.dataset as ds
import pybullet as p
import pybullet_data
import pytest

from simbench.errors import SimbenchError
from simbench.sweep import read_manifest, sweep

AT = {"a": [0.0, -0.4, 0.0], "b": [0.0, 0.4, 0.0]}
CUBE_AT = [0.45, 0.0, 0.55]
SCENE = f"""robot = "a"
[[body]]
name = "ground"
urdf = "pybullet_data:plane.urdf"
fixed_base = true
[[body]]
name = "a"
urdf = "pybullet_data:kuka_iiwa/model.urdf"
position = {AT["a"]}
fixed_base = true
[[body]]
name = "b"
urdf = "pybullet_data:kuka_iiwa/model.urdf"
position = {AT["b"]}
fixed_base = true
[[body]]
name = "cube"
urdf = "pybullet_data:cube_small.urdf"
position = {CUBE_AT}
fixed_base = true
"""
SEPARATE = "does not move with the swept robot"
JOINTS = [f"{arm}/lbr_iiwa_joint_{i}" for arm in "ab" for i in range(1, 8)]


@pytest.fixture(scope="module")
def scene(tmp_path_factory):
    path = tmp_path_factory.mktemp("arms") / "arms.toml"
    path.write_text(SCENE)
    return path


def _run(scene, *args, cwd):
    return subprocess.run([sys.executable, "-m", "simbench", "sweep", "collision", str(scene), "-q", *args],
                          capture_output=True, text=True, cwd=cwd, timeout=600)


class Oracle:
    """The scene loaded by hand on a DIRECT client of its own."""

    def __init__(self, at=AT):
        self.c = p.connect(p.DIRECT)
        data = pybullet_data.getDataPath()
        kw = dict(useFixedBase=True, physicsClientId=self.c)
        self.ids = {"ground": p.loadURDF(f"{data}/plane.urdf", **kw),
                    "a": p.loadURDF(f"{data}/kuka_iiwa/model.urdf", at["a"], **kw),
                    "b": p.loadURDF(f"{data}/kuka_iiwa/model.urdf", at["b"], **kw),
                    "cube": p.loadURDF(f"{data}/cube_small.urdf", CUBE_AT, **kw)}
        self.links, self.joints, self.moving = {}, {}, {}
        for name, bid in self.ids.items():
            infos = [p.getJointInfo(bid, j, physicsClientId=self.c) for j in range(p.getNumJoints(bid, physicsClientId=self.c))]
            self.links[name] = {p.getBodyInfo(bid, physicsClientId=self.c)[0].decode(): -1,
                                **{i[12].decode(): i[0] for i in infos}}
            self.joints[name] = {i[1].decode(): i[0] for i in infos}
            moves = {-1: False}
            for i in infos:     # a link moves with q when its joint, or one above it, is not fixed
                moves[i[0]] = i[2] != p.JOINT_FIXED or moves[i[16]]
            self.moving[name] = [k for k, v in moves.items() if v]

    def close(self):
        p.disconnect(physicsClientId=self.c)

    def side(self, text):
        """``body``, ``body/(moving)`` or ``body/link`` -> (body id, link indices)."""
        body, _, link = text.partition("/")
        if not link:
            return self.ids[body], sorted(self.links[body].values())
        if link == "(moving)":
            return self.ids[body], self.moving[body]
        return self.ids[body], [self.links[body][link]]

    def pose(self, names, row):
        for name, x in zip(names, row):
            body, _, joint = name.partition("/")
            p.resetJointState(self.ids[body], self.joints[body][joint], float(x), physicsClientId=self.c)

    def distance(self, label, md):
        (ia, la), (ib, lb) = (self.side(s) for s in label.split(", "))
        found = [c[8] for x in la for y in lb
                 for c in p.getClosestPoints(ia, ib, md, linkIndexA=x, linkIndexB=y, physicsClientId=self.c)]
        return min(min(found, default=md), md)


def _compare(table, md, n_rows=30, seed=0, at=AT):
    """Every distance column of ``n_rows`` rows (a random sample) against the oracle; returns
    (rows, columns) compared."""
    names = table.column_names
    qcols = [c for c in names if c.startswith("q(")]
    dcols = [c for c in names if c.startswith("distance(")]
    q = np.column_stack([table.column(c).to_numpy() for c in qcols])
    d = np.column_stack([table.column(c).to_numpy() for c in dcols])
    rows = np.random.default_rng(seed).choice(len(q), size=min(n_rows, len(q)), replace=False)
    oracle = Oracle(at)
    try:
        truth = np.empty((len(rows), len(dcols)))
        for k, i in enumerate(rows):
            oracle.pose([c[2:-1] for c in qcols], q[i])
            truth[k] = [oracle.distance(c[len("distance("):-1], md) for c in dcols]
    finally:
        oracle.close()
    np.testing.assert_allclose(d[rows], truth, rtol=0, atol=1e-9)
    return truth.shape


def _limits():
    c = p.connect(p.DIRECT)
    try:
        bid = p.loadURDF(f"{pybullet_data.getDataPath()}/kuka_iiwa/model.urdf", physicsClientId=c)
        info = [p.getJointInfo(bid, j, physicsClientId=c) for j in range(p.getNumJoints(bid, physicsClientId=c))]
        return np.array([[i[8], i[9]] for i in info if i[2] == p.JOINT_REVOLUTE])
    finally:
        p.disconnect(physicsClientId=c)


def test_two_arms_swept_through_the_api_every_distance_against_pybullet(scene, tmp_path, caplog):
    md = 0.6
    res = sweep("collision", scene, robots=("a", "b"), samples=200, seed=3, out=tmp_path / "s", chunk_size=64,
                workers=1, max_distance=md, progress=False)
    table = ds.dataset(tmp_path / "s").to_table().sort_by("sample")
    assert table.num_rows == 200
    assert [c for c in table.column_names if c.startswith("q(")] == [f"q({j})" for j in JOINTS]
    labels = [c[len("distance("):-1] for c in table.column_names if c.startswith("distance(")]
    # each arm against each other body (the arms once), per arm the base out of the ground pair only
    assert labels[:5] == ["a/(moving), ground", "a, b", "a, cube", "b/(moving), ground", "b, cube"]
    assert len(labels) > 9 and all(x.startswith("a/") for x in labels[5:10]) and labels[-1].startswith("b/")
    assert _compare(table, md) == (30, len(labels))      # 30 rows x 15 columns against getClosestPoints
    # each arm sampled within its own limits, both moving
    q = np.column_stack([table.column(f"q({j})").to_numpy() for j in JOINTS])
    lim = np.tile(_limits(), (2, 1))
    assert (q >= lim[:, 0]).all() and (q <= lim[:, 1]).all() and (q.std(axis=0) > 0.3).all()
    d = np.column_stack([table.column(f"distance({x})").to_numpy() for x in labels])
    assert d[:, 1].std() > 0.01 and (d[:, 1] < 0).any()    # the arms meet in some configurations
    warned = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(warned) == 2 and [w.split("'")[0] for w in warned] == ["a", "b"]
    assert all("fixed links (lbr_iiwa_link_0)" in w and "m from ground" in w for w in warned)
    assert res.manifest["job"]["options"]["robot"] == ["a", "b"]


def test_two_arms_through_the_command_line_and_explicit_moving_pairs(scene, tmp_path):
    md = "0.5"
    proc = _run(scene, "--robot", "a", "--robot", "b", "--pairs", "world", "--samples", "60", "--seed", "5",
                "--chunk-size", "25", "--max-distance", md, "--out", "w", "--workers", "1", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert SEPARATE not in proc.stderr and "other robots" not in proc.stderr
    table = ds.dataset(tmp_path / "w").to_table().sort_by("sample")
    assert table.num_rows == 60
    assert _compare(table, 0.5, seed=1) == (30, 5)       # 30 rows x 5 world columns
    again = _run(scene, "--robot", "a", "--robot", "b", "--pairs", "world", "--samples", "60", "--seed", "5",
                 "--chunk-size", "25", "--max-distance", md, "--out", "w", "--workers", "1", cwd=tmp_path)
    assert again.returncode == 0 and "3 chunks already done" in again.stdout, again.stdout + again.stderr
    proc = _run(scene, "--robot", "b", "--robot", "a", "--pair", "a/(moving)", "b/(moving)", "--pair",
                "b/lbr_iiwa_link_7", "cube", "--pair", "a/(moving)", "ground", "--samples", "40", "--out", "e",
                "--workers", "1", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    table = ds.dataset(tmp_path / "e").to_table().sort_by("sample")
    assert [c for c in table.column_names if c.startswith("q(")] == [f"q({j})" for j in JOINTS[7:] + JOINTS[:7]]
    assert _compare(table, 1.0, seed=2) == (30, 3)       # 30 rows x 3 explicit columns
    assert read_manifest(tmp_path / "e")["job"]["options"]["robot"] == ["b", "a"]


def test_two_arms_whose_bases_overlap_leave_both_bases_out_of_their_pair(tmp_path, caplog):
    """Bases 0.2 m apart overlap in every configuration: the arms' pair is their moving links
    (distance(a/(moving), b/(moving))), one warning line says so; the ground is left out here."""
    at = {"a": [0.0, -0.1, 0.0], "b": [0.0, 0.1, 0.0]}
    text = SCENE.replace(str(AT["a"]), str(at["a"])).replace(str(AT["b"]), str(at["b"]))
    (tmp_path / "close.toml").write_text('robot = "a"\n' + text[text.index('[[body]]\nname = "a"'):])  # no ground
    res = sweep("collision", tmp_path / "close.toml", robots=["a", "b"], pairs="world", samples=40, seed=1,
                out=tmp_path / "c", workers=1, progress=False)
    table = ds.dataset(tmp_path / "c").to_table().sort_by("sample")
    assert [c for c in table.column_names if c.startswith("distance(")] == [
        "distance(a/(moving), b/(moving))", "distance(a, cube)", "distance(b, cube)"]
    assert _compare(table, 1.0, at=at) == (30, 3)        # 30 rows x 3 columns against getClosestPoints
    warned = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(warned) == 1 and warned[0].startswith("a's fixed links (lbr_iiwa_link_0) and b's (lbr_iiwa_link_0) "
                                                     "are -0.0")
    assert warned[0].endswith("column distance(a/(moving), b/(moving)) leaves them out (--pair a b: the whole robots)")
    assert res.totals["in collision"] < 40                # the moving links clear each other sometimes


def test_without_robot_the_job_is_the_one_before_and_the_scene_robot_alone_resumes_it(scene, tmp_path):
    first = _run(scene, "--pairs", "world", "--samples", "30", "--out", "d", "--workers", "1", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    job = read_manifest(tmp_path / "d")["job"]
    assert list(job["options"]) == ["robot", "joints", "pairs", "disabled", "max_distance", "margin", "witness",
                                    "sampler"]
    assert job["options"]["robot"] == "a" and job["options"]["joints"] == [j[2:] for j in JOINTS[:7]]
    again = _run(scene, "--pairs", "world", "--samples", "30", "--out", "d", "--workers", "1", cwd=tmp_path)
    assert again.returncode == 0 and "1 chunk already done" in again.stdout, again.stdout + again.stderr
    res = sweep("collision", scene, robots="a", pairs="world", samples=30, out=tmp_path / "d", workers=1,
                progress=False)   # the scene's robot given: the same job, resumed
    assert (res.computed, res.skipped) == (0, 1)
    assert json.dumps(res.manifest["job"], sort_keys=True) == json.dumps(job, sort_keys=True)
    with pytest.raises(SimbenchError, match="holds another sweep"):
        sweep("collision", scene, robots=("a", "b"), pairs="world", samples=30, out=tmp_path / "d", progress=False)


@pytest.mark.parametrize("args, line", [
    (["--robot", "A"], "robot 'A': no body of that name in scene 'arms.toml'; expected one of a, b (its bodies "
                       "with movable joints); did you mean 'a'?"),
    (["--robot", "a", "--robot", "left"], "robot 'left': no body of that name in scene 'arms.toml'; expected one "
                                          "of a, b (its bodies with movable joints)"),
    (["--robot", "cube"], "robot 'cube': body 'cube' of scene 'arms.toml' has no movable joints, nothing to "
                          "sweep; expected one of a, b (its bodies with movable joints)"),
    (["--robot", "b", "--robot", "ground"], "robot 'ground': body 'ground' of scene 'arms.toml' has no movable "
                                            "joints, nothing to sweep; expected one of a, b (its bodies with "
                                            "movable joints)"),
    (["--robot", "a", "--robot", "a"], "robot 'a' given twice; expected each robot once"),
])
def test_a_bad_robot_is_one_line_naming_it(scene, tmp_path, args, line):
    proc = _run(scene.name, *args, "--samples", "5", "--out", "x", cwd=scene.parent)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [f"simbench sweep: error: {line}"]
    assert not (scene.parent / "x").exists()


def test_robots_in_the_api_and_robot_beside_another_kind(scene, tmp_path):
    with pytest.raises(SimbenchError, match=r"^robot 'zz': no body of that name in scene .*; expected one of a, b"):
        sweep("collision", scene, robots=["a", "zz"], samples=5, out=tmp_path / "x", progress=False)
    with pytest.raises(SimbenchError, match=r"^robots = \(\); expected a body name or a sequence of them"):
        sweep("collision", scene, robots=(), samples=5, out=tmp_path / "x", progress=False)
    proc = subprocess.run([sys.executable, "-m", "simbench", "sweep", "dynamics", "pybullet_data:kuka_iiwa/model.urdf",
                           "--robot", "a", "--samples", "5", "--out", "x"], capture_output=True, text=True,
                          cwd=tmp_path, timeout=300)
    assert proc.returncode == 2 and proc.stderr.strip() == "simbench sweep: error: --robot is not an option of sweep dynamics"


def test_the_still_warning_names_only_pairs_without_a_swept_robot(scene, tmp_path):
    pairs = ["--pair", "b", "cube", "--pair", "a", "b"]
    one = _run(scene, *pairs, "--samples", "10", "--out", "one", "--workers", "1", cwd=tmp_path)
    assert one.returncode == 0, one.stderr
    assert f"pair (b, cube) {SEPARATE} 'a'" in one.stderr and "other robots (b)" in one.stderr
    both = _run(scene, *pairs, "--robot", "a", "--robot", "b", "--samples", "10", "--out", "both", "--workers", "1",
                cwd=tmp_path)
    assert both.returncode == 0 and both.stderr == "", both.stderr        # nothing stands still
    d = ds.dataset(tmp_path / "both").to_table().column("distance(b, cube)").to_numpy()
    assert d.std() > 1e-3
    static = _run(scene, "--pair", "cube", "ground", "--pair", "a", "cube", "--robot", "a", "--robot", "b",
                  "--samples", "10", "--out", "static", "--workers", "1", cwd=tmp_path)
    assert static.returncode == 0, static.stderr
    assert static.stderr.strip().splitlines() == [
        "simbench sweep: warning: pair (cube, ground) does not move with the swept robots 'a', 'b': the same "
        "distance in every row"]


def test_configuration_files_hold_every_swept_joint(scene, tmp_path):
    """``--configs`` with (N, 14) columns: degrees in the second arm's joints are said, naming the
    joint as its column does; a file of one arm's 7 columns is refused; a sweep's own Parquet
    chunk read back gives its distances again."""
    rng = np.random.default_rng(0)
    q = rng.uniform(-1, 1, (40, 14))
    q[:, 7:] *= 100      # degrees
    np.save(tmp_path / "deg.npy", q)
    np.save(tmp_path / "arm.npy", q[:, :7])
    deg = _run(scene, "--robot", "a", "--robot", "b", "--configs", "deg.npy", "--out", "deg", "--workers", "1",
               cwd=tmp_path)
    assert deg.returncode == 0, deg.stderr
    lines = deg.stderr.strip().splitlines()
    said = [x for x in lines if "deg.npy" in x]
    assert len(said) == 1 and "joint 'b/lbr_iiwa_joint_" in said[0] and "swept as radians" in said[0]
    short = _run(scene, "--robot", "a", "--robot", "b", "--configs", "arm.npy", "--out", "arm", cwd=tmp_path)
    assert short.returncode == 2 and len(short.stderr.strip().splitlines()) == 1
    assert "shape (40, 7); expected (N, 14)" in short.stderr and "'b/lbr_iiwa_joint_7'" in short.stderr
    first = _run(scene, "--robot", "a", "--robot", "b", "--pairs", "world", "--samples", "20", "--out", "src",
                 "--workers", "1", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    back = _run(scene, "--robot", "a", "--robot", "b", "--pairs", "world", "--configs", "src/chunk-000000.parquet",
                "--out", "back", "--workers", "1", cwd=tmp_path)
    assert back.returncode == 0, back.stderr
    a = ds.dataset(tmp_path / "src").to_table().sort_by("sample")
    b = ds.dataset(tmp_path / "back").to_table().sort_by("sample")
    assert a.num_rows == b.num_rows == 20
    for c in a.column_names:
        if c.startswith(("q(", "distance(")):
            np.testing.assert_array_equal(a.column(c).to_numpy(), b.column(c).to_numpy())


def test_a_folder_of_another_robot_set_is_refused_naming_robot(scene, tmp_path):
    """Resuming a one-arm folder with both arms named the consequence (--pairs/--pair has 7
    values there, 13 in this run), not the option given; now --robot is named first."""
    first = _run(scene, "--pairs", "world", "--samples", "10", "--out", "o", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    proc = _run(scene, "--robot", "a", "--robot", "b", "--pairs", "world", "--samples", "10", "--out", "o",
                cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    line = proc.stderr.strip()
    assert "\n" not in line and "holds another sweep: --robot is 'a' there, ['a', 'b'] in this run" in line, line


def test_read_names_the_entries_of_each_row(scene, tmp_path):
    """simbench.sweep.read gave a (N, 5) distance array with no names; .columns names each
    entry as the Parquet table does (pyarrow, the oracle), and its values are those columns."""
    from simbench.sweep import read

    sweep("collision", scene, robots=("a", "b"), pairs="world", samples=30, seed=1, out=tmp_path / "r",
          progress=False, workers=1)
    arrays = read(tmp_path / "r")
    table = ds.dataset(tmp_path / "r").to_table().sort_by("sample")
    names = arrays.columns["distance"]
    assert names == [c for c in table.column_names if c.startswith("distance(")] and len(names) == 5
    for k, name in enumerate(names):
        np.testing.assert_array_equal(arrays["distance"][:, k], table[name].to_numpy())
    assert arrays.columns["q"] == [f"q({j})" for j in JOINTS]
