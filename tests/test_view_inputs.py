"""``simbench view``'s joint values as a user types them: ``--q`` before or after the target,
repeated or with several items; values outside a joint's limits refused in one line naming the
closest valid value (they were clamped silently); unknown joint names with a suggestion.

Oracles: the command's exit status, its ``q:`` line and its one-line errors; the limits are
the URDFs' (kuka_iiwa: joint 2 within +-2.094 rad; r2d2: gripper_extension within [-0.38, 0] m,
the wheels continuous).
"""
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
KUKA = "pybullet_data:kuka_iiwa/model.urdf"
R2D2 = "pybullet_data:r2d2.urdf"


def view(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1",
               PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("DISPLAY", None)
    return subprocess.run([sys.executable, "-m", "simbench", "view", *args], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=180)


def q_line(stdout: str) -> dict[str, float]:
    line = next(line for line in stdout.splitlines() if line.startswith("q: "))
    return {name: float(value) for name, value in (item.split("=") for item in line[3:].split())}


@pytest.mark.parametrize("args", [
    ["--q", "lbr_iiwa_joint_2=0.5", KUKA, "--direct"],                              # the walkthrough's
    ["--q", "lbr_iiwa_joint_2=0.5", "lbr_iiwa_joint_4=1", KUKA, "--direct"],
    ["--direct", "--q", "lbr_iiwa_joint_2=0.5", "--q", "lbr_iiwa_joint_4=1", KUKA],  # repeated
    [KUKA, "--q", "lbr_iiwa_joint_2=0.5", "lbr_iiwa_joint_4=1", "--direct"],         # as before
    [KUKA, "--direct", "--q=lbr_iiwa_joint_2=0.5", "--q", "lbr_iiwa_joint_4=1"],
])
def test_q_before_or_after_the_target(tmp_path, args):
    proc = view(tmp_path, *args, "--out", "v.png")
    assert proc.returncode == 0, proc.stderr[-2000:]
    q = q_line(proc.stdout)
    asked = {a.split("=")[-2].lstrip("-"): float(a.split("=")[-1]) for a in args if a.count("=") >= 1}
    compared = 0
    for name in q:
        assert q[name] == pytest.approx(asked.get(name, 0.0), abs=1e-4), (name, args)
        compared += 1
    assert compared == 7 and len(asked) in (1, 2)
    assert (tmp_path / "v.png").stat().st_size > 1000


def test_q_help_says_how_to_give_several_values(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "simbench", "view", "--help"], capture_output=True,
                          text=True, timeout=60, cwd=tmp_path)
    text = " ".join(proc.stdout.split())
    assert proc.returncode == 0 and "--q a=1 b=2 and --q a=1 --q b=2 are the same" in text
    assert "before or after --q" in text


BAD = [  # arguments, the one line expected on stderr
    ([KUKA, "--q", "lbr_iiwa_joint_2=4"],
     "simbench view: error: --q lbr_iiwa_joint_2=4: outside the joint's limits [-2.094, 2.094] rad; "
     "closest valid value 2.094"),
    (["--q", "lbr_iiwa_joint_4=1", "lbr_iiwa_joint_2=-2.5", KUKA],
     "simbench view: error: --q lbr_iiwa_joint_2=-2.5: outside the joint's limits [-2.094, 2.094] rad; "
     "closest valid value -2.094"),
    ([R2D2, "--q", "gripper_extension=0.3"],
     "simbench view: error: --q gripper_extension=0.3: outside the joint's limits [-0.38, 0] m; "
     "closest valid value 0"),
    ([KUKA, "--q", "lbr_iiwa_joint_2=45"],      # degrees, most likely: 45 rad is beyond a turn
     "simbench view: error: --q lbr_iiwa_joint_2=45 (degrees? 45 degrees is 0.7854 rad): outside the joint's "
     "limits [-2.094, 2.094] rad; closest valid value 2.094"),
    (["--q", "lbr_iiwa_joint_2=1"],
     "simbench view: error: the following arguments are required: target (a URDF or a scene .toml; "
     "see simbench view --help)"),
]


def test_bad_q_is_refused_in_one_line(tmp_path):
    compared = 0
    for args, expected in BAD:
        proc = view(tmp_path, "--direct", *args, "--out", "v.png")
        assert proc.returncode == 2, (args, proc.stderr[-2000:])
        assert proc.stderr.strip().splitlines() == [expected], args
        assert not (tmp_path / "v.png").exists()   # nothing written
        compared += 1
    assert compared == len(BAD) == 5


def test_unknown_joint_gets_a_suggestion(tmp_path):
    proc = view(tmp_path, "--direct", KUKA, "--q", "lbr_iiwa_jiont_2=1", "--out", "v.png")
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr[-2000:]
    assert proc.stderr.startswith("simbench view: error: unknown movable joint 'lbr_iiwa_jiont_2' in --q of "
                                  f"{KUKA}; "
                                  "did you mean 'lbr_iiwa_joint_2'")


def test_continuous_joint_takes_any_angle_wrapped(tmp_path):
    """A continuous joint has no limits: 10 rad is the pose of 10 - 4 pi = -2.5664 rad."""
    proc = view(tmp_path, "--direct", R2D2, "--q", "right_front_wheel_joint=10", "gripper_extension=-0.2",
                "--out", "v.png")
    assert proc.returncode == 0, proc.stderr[-2000:]
    q = q_line(proc.stdout)
    assert q["right_front_wheel_joint"] == pytest.approx(-2.5664, abs=1e-4)
    assert q["gripper_extension"] == pytest.approx(-0.2, abs=1e-4)


def _runs(mask_rows):
    """(first, last + 1) of each run of True rows."""
    out, start = [], None
    for i, on in enumerate(list(mask_rows) + [False]):
        if on and start is None:
            start = i
        elif not on and start is not None:
            out.append((start, i))
            start = None
    return out


def test_view_picture_has_one_legend_naming_each_pair(tmp_path):
    """The headless picture of a scene: the title line, then one legend row per obstacle (a
    swatch and 'ground (lbr_iiwa_link_1): 0.146 m'), as the printed ``distances:`` line has
    them. Before, the picture held every distance twice: as coloured text lines and again as
    the legend (9 text lines for 4 obstacles). Oracle: the picture's pixels (text rows and
    saturated swatch rows in the top-left column; the text is
    white outlined in black) and the printed line's four entries."""
    from PIL import Image
    import numpy as np

    proc = view(tmp_path, "simbench:kuka_cubes.toml", "--direct", "--out", "v.png")
    assert proc.returncode == 0, proc.stderr[-2000:]
    printed = next(line for line in proc.stdout.splitlines() if line.startswith("distances: "))
    assert printed.count(" m") == 4 and "ground (lbr_iiwa_link_1)" in printed, printed
    img = np.asarray(Image.open(tmp_path / "v.png").convert("RGB")).astype(int)[:200, :400]
    inked = (img[:, 40:300].max(axis=-1) < 40).sum(axis=1) > 12   # the text's black outline
    lines = [(a, b) for a, b in _runs(inked) if b - a >= 4]
    swatch = img[:, 6:36]
    sat = ((swatch.max(axis=-1) - swatch.min(axis=-1)) > 150).sum(axis=1) > 10
    swatches = _runs(sat)
    assert len(lines) == 5, lines                  # the title and four entries, nothing twice
    assert len(swatches) == 4, swatches
    for (a, b), (c, d) in zip(lines[1:], swatches):
        assert a <= c < d <= b + 2, (lines, swatches)   # each entry beside its swatch


TWO_ARMS = """
[[body]]
name = "floor"
urdf = "pybullet_data:kuka_iiwa/model.urdf"
fixed_base = true

[[body]]
name = "wall"
urdf = "pybullet_data:kuka_iiwa/model.urdf"
fixed_base = true
position = [0.9, 0.0, 1.0]
orientation = [0.0, -1.5707963267948966, 0.0]
"""


def test_robot_chooses_the_scene_body_to_pose(tmp_path):
    """``view two_arms.toml --q wall_arm/joint=...`` was refused (unknown joint): only the scene's
    robot could be posed. ``--robot NAME`` poses another body, whose distances to the others are
    measured; ``--q body/joint`` says to write ``--robot body``. Oracle: PyBullet on a DIRECT
    client with both arms loaded by hand at the scene's poses, the wall arm's joints set, the
    closest points between the two bodies (distance and the wall arm's link). Without the fix the
    detector set the floor arm to the wall arm's q: 0.090 m where PyBullet says 0.037 m."""
    import numpy as np
    import pybullet as p
    import pybullet_data
    (tmp_path / "two.toml").write_text(TWO_ARMS)
    proc = view(tmp_path, "two.toml", "--direct", "--robot", "wall", "--q", "lbr_iiwa_joint_2=0.5",
                "lbr_iiwa_joint_4=-1", "--out", "v.png")
    assert proc.returncode == 0, proc.stderr
    q = q_line(proc.stdout)
    assert q["lbr_iiwa_joint_2"] == 0.5 and q["lbr_iiwa_joint_4"] == -1.0 and len(q) == 7
    line = next(l for l in proc.stdout.splitlines() if l.startswith("distances: "))
    label, value = line[len("distances: "):].rsplit(": ", 1)
    c = p.connect(p.DIRECT)
    try:
        urdf = os.path.join(pybullet_data.getDataPath(), "kuka_iiwa/model.urdf")
        floor = p.loadURDF(urdf, useFixedBase=True, flags=p.URDF_USE_INERTIA_FROM_FILE, physicsClientId=c)
        wall = p.loadURDF(urdf, [0.9, 0, 1], p.getQuaternionFromEuler([0, -np.pi / 2, 0]), useFixedBase=True,
                          flags=p.URDF_USE_INERTIA_FROM_FILE, physicsClientId=c)
        for j, v in ((1, 0.5), (3, -1.0)):
            p.resetJointState(wall, j, v, physicsClientId=c)
        points = p.getClosestPoints(wall, floor, 2.0, physicsClientId=c)
        best = min(points, key=lambda pt: pt[8])
        link = p.getJointInfo(wall, best[3], physicsClientId=c)[12].decode()   # the posed robot's link
    finally:
        p.disconnect(c)
    assert len(points) > 0 and label == f"floor ({link})" and abs(float(value.split()[0]) - best[8]) < 1e-4, line
    hint = view(tmp_path, "two.toml", "--direct", "--q", "wall/lbr_iiwa_joint_4=-1")
    assert hint.returncode == 2 and ("--q wall/lbr_iiwa_joint_4: the joints posed are those of body 'floor'; to pose "
                                     "'wall', write --robot wall --q lbr_iiwa_joint_4=VALUE") in hint.stderr, hint.stderr
    twice = view(tmp_path, "two.toml", "--direct", "--robot", "wall", "--robot", "floor")
    assert twice.returncode == 2 and ("--robot is given 2 times (wall, floor); expected one body to pose, "
                                      "e.g. --robot floor") in twice.stderr, twice.stderr
    typo = view(tmp_path, "two.toml", "--direct", "--robot", "wal")
    assert typo.returncode == 2 and "unknown body 'wal' in --robot of two.toml; did you mean 'wall'?" in typo.stderr
