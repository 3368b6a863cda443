"""simbench sweep's one-line messages for a misspelt pair set and a bad --configs file, through
the command line: exit 2, one stderr line naming the value, what was expected and the closest
valid choice (found by a user walkthrough: no suggestion, or numpy's allow_pickle text)."""
import subprocess
import sys

import numpy as np
import pytest

SCENE = "simbench:kuka_cubes.toml"


def run_cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "simbench.cli", "sweep", "collision", SCENE, "--out", "o", "-q",
                           *args], capture_output=True, text=True, timeout=300, cwd=cwd)


@pytest.mark.parametrize("args, line", [
    (["--samples", "3", "--pairs", "wrld"],
     "pairs = 'wrld'; expected one of all, world, self or explicit pairs (--pair A B); did you mean 'world'?"),
    (["--samples", "3", "--pairs", "cube1"],
     "pairs = 'cube1'; expected one of all, world, self or explicit pairs (--pair A B); for the robot against "
     "that body: --pair robot cube1"),
    # the valid .npy file beside it, not the text file also named .npy
    (["--configs", "nothere.npy"],
     "configuration file not found: 'nothere.npy'; expected a .npy or .parquet file; did you mean 'configs.npy'?"),
    (["--configs", "data/confgs.npy"], "configuration file not found: 'data/confgs.npy'; expected a .npy or "
     ".parquet file; did you mean 'data/configs.npy'?"),
    (["--configs", "text.npy"],
     "configuration file 'text.npy' is not a .npy file (text starting '0 0.1 0 0 0 0 0'); expected an (N, 7) array "
     "written by numpy.save, e.g. numpy.save('text.npy', numpy.loadtxt(TEXT_FILE))"),
    (["--configs", "objects.npy"],
     "configuration file 'objects.npy' holds Python objects (a pickled object array); expected an (N, 7) array of "
     "numbers, e.g. numpy.save('objects.npy', numpy.asarray(rows, dtype=float))"),
])
def test_bad_pairs_and_configs_are_one_line_with_the_closest_choice(tmp_path, args, line):
    (tmp_path / "data").mkdir()
    for folder in (tmp_path, tmp_path / "data"):
        np.save(folder / "configs.npy", np.zeros((4, 7)))
    (tmp_path / "text.npy").write_text("0 0.1 0 0 0 0 0\n0 0 0 0 0 0 0\n")
    np.save(tmp_path / "objects.npy", np.array([[1.0, "a"]], dtype=object), allow_pickle=True)
    proc = run_cli(*args, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.splitlines() == [f"simbench sweep: error: {line}"], proc.stderr
    assert not (tmp_path / "o").exists()


def test_self_pairs_all_disabled_by_the_default_matrix_say_why_in_one_line(tmp_path):
    """A 3-link arm whose non-adjacent link pairs never touch within its limits (+-0.6 rad):
    the default matrix disables all three, and the message says so (it said only 'no collision
    pairs left to check')."""
    from test_sweep_pairs import ARM

    (tmp_path / "arm.urdf").write_text(ARM)
    (tmp_path / "arm.toml").write_text('robot = "arm"\n\n[[body]]\nname = "arm"\nurdf = "arm.urdf"\nfixed_base = true\n')
    matrix = ("the default allowed-collision matrix of robot 'arm' disables all 3 of its non-adjacent link pairs "
              "(3 never in collision in 10,000 sampled configurations); to check one anyway: --pair arm/plate arm/l2")
    for which, why in (("self", matrix), ("all", f"no body in the scene but the robot; {matrix}")):
        proc = subprocess.run([sys.executable, "-m", "simbench.cli", "sweep", "collision", "arm.toml", "--samples", "3",
                               "--out", "o", "--pairs", which], capture_output=True, text=True, timeout=300, cwd=tmp_path)
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.splitlines() == [f"simbench sweep: error: scene 'arm.toml': no collision pairs left to "
                                            f"check (pairs = {which!r}): {why}"], proc.stderr
        assert not (tmp_path / "o").exists()
    # the pair it names is one to check: a sweep of it runs
    ok = subprocess.run([sys.executable, "-m", "simbench.cli", "sweep", "collision", "arm.toml", "--samples", "3",
                         "--out", "o", "-q", "--pair", "arm/plate", "arm/l2"], capture_output=True, text=True,
                        timeout=300, cwd=tmp_path)
    assert ok.returncode == 0 and ok.stderr == "", ok.stderr


def test_a_live_simulation_as_the_target_is_one_line_with_the_road_to_take(tmp_path):
    """sweep("collision", sim, ...) raised a bare TypeError ('Simulation' object is not
    iterable); now one line says what it takes and how to sweep the world as it is now."""
    import simbench
    from simbench.errors import SimbenchError
    from simbench.sweep import sweep

    with simbench.Simulation("simbench:kuka_cubes.toml", gui=False) as sim:
        for target in (sim, sim.pair):
            with pytest.raises(SimbenchError) as exc:
                sweep("collision", target, out=tmp_path / "o", samples=10)
            said = str(exc.value)
            assert said.startswith(f"sweep collision: target has type {type(target).__name__}; expected a path")
            assert "sim.detector(pairs).compute_distances(Q, workers=W)" in said and "\n" not in said
    with pytest.raises(SimbenchError, match=r"^sweep dynamics: target has type int; expected a path"):
        sweep("dynamics", 3, out=tmp_path / "o", samples=10)
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("text", ["[]", "3", '"x"'])
def test_a_manifest_that_is_not_a_json_object_is_one_line(tmp_path, text):
    """`echo '[]' > o/_manifest.json` then the same sweep gave "unexpected AttributeError: 'list'
    object has no attribute 'get'" (exit 1); now the manifest's one line, exit 2."""
    (tmp_path / "o").mkdir()
    (tmp_path / "o" / "_manifest.json").write_text(text)
    proc = subprocess.run([sys.executable, "-m", "simbench", "sweep", "collision", "simbench:kuka_cubes.toml",
                           "--samples", "5", "--out", "o", "-q"], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "sweep manifest 'o/_manifest.json' cannot be read (it holds a JSON" in lines[0], lines


FILTERED = """robot = "robot"
[[body]]
name = "robot"
urdf = "pybullet_data:kuka_iiwa/model.urdf"
fixed_base = true
collision_group = 1
collision_mask = 1
[[body]]
name = "cube"
urdf = "pybullet_data:cube.urdf"
position = [0.5, 0.5, 0.5]
fixed_base = true
collision_group = 2
collision_mask = 2
"""


def test_a_body_the_filters_keep_away_has_no_column_and_alone_is_refused(tmp_path):
    """Detectors keep a column for a pair the filters exclude (it reads max_distance); a sweep
    leaves such pairs out, as it did before, rather than store a column of 1.0 in every row.
    Oracle: PyBullet's own contacts say the filters keep robot and cube apart where they overlap."""
    import pyarrow.dataset as ds
    import pybullet as p

    import simbench

    (tmp_path / "f.toml").write_text(FILTERED + '[[body]]\nname = "ground"\nurdf = "pybullet_data:plane.urdf"\n'
                                                'fixed_base = true\n')
    (tmp_path / "alone.toml").write_text(FILTERED)
    with simbench.Simulation(str(tmp_path / "alone.toml"), gui=False) as sim:
        sim.set_pose("cube", [0.0, 0.0, 0.5])   # inside the arm: getClosestPoints says overlap
        rid, cid = sim.bodies["robot"], sim.bodies["cube"]
        assert min(pt[8] for pt in p.getClosestPoints(rid, cid, 0.0, physicsClientId=sim.client)) < 0
        p.performCollisionDetection(physicsClientId=sim.client)
        assert p.getContactPoints(rid, cid, physicsClientId=sim.client) == ()   # the filters apply
    run = [sys.executable, "-m", "simbench", "sweep", "collision"]
    opts = ["--samples", "20", "-q", "--pairs", "world"]
    proc = subprocess.run([*run, "f.toml", *opts, "--out", "o"], capture_output=True, text=True, cwd=tmp_path,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    columns = [c for c in ds.dataset(tmp_path / "o").to_table().column_names if c.startswith("distance(")]
    assert columns == ["distance(robot/(moving), ground)"]
    proc = subprocess.run([*run, "alone.toml", *opts, "--out", "o2"], capture_output=True, text=True, cwd=tmp_path,
                          timeout=300)
    assert proc.returncode == 2 and proc.stderr.strip().endswith(
        "no collision pairs left to check (pairs = 'world'): the scene's collision filters exclude the robot "
        "against every other body"), proc.stderr
