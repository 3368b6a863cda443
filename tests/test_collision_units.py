"""Joint angles that look like degrees, in collision queries and sweeps: a value beyond a turn
and outside its joint's limits (read here from PyBullet's getJointInfo) is said once, in one
line with the reading in radians, and the query is answered as given (checked against direct
getClosestPoints calls). Values inside the limits, below a turn, or of joints without limits
(continuous, prismatic) are not judged."""
from __future__ import annotations

import logging
import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pybullet as p
import pytest

from simbench.bullet.collision import CollisionDetector
from simbench.bullet.scene import load_scene
from simbench.paths import resolve_path

SCENE = "simbench:kuka_cubes.toml"
DEG = np.array([0.0, 45.0, 0.0, -90.0, 0.0, 30.0, 0.0])   # an iiwa pose written in degrees
LINE = re.compile(r"joint 'lbr_iiwa_joint_2' = 45 rad.*beyond a turn and outside its limits "
                  r"\[-2\.094, 2\.094\] rad \(degrees\? 45 degrees is 0\.7854 rad\)")


def _direct_distance(q: np.ndarray) -> float:
    """min over the iiwa's links of getClosestPoints to cube1, q set with resetJointState on a
    server of its own."""
    c = p.connect(p.DIRECT)
    try:
        loaded = load_scene(SCENE).load(c)
        robot, cube = loaded.bodies["robot"], loaded.bodies["cube1"]
        movable = [j for j in range(p.getNumJoints(robot, physicsClientId=c))
                   if p.getJointInfo(robot, j, physicsClientId=c)[2] != p.JOINT_FIXED]
        for j, v in zip(movable, q):
            p.resetJointState(robot, j, float(v), physicsClientId=c)
        pts = p.getClosestPoints(robot, cube, 5.0, physicsClientId=c)
        return min(pt[8] for pt in pts)
    finally:
        p.disconnect(physicsClientId=c)


def _limits_of_joint_2() -> tuple[float, float]:
    c = p.connect(p.DIRECT)
    try:
        loaded = load_scene(SCENE).load(c)
        robot = loaded.bodies["robot"]
        names = [p.getJointInfo(robot, j, physicsClientId=c)[1].decode() for j in range(p.getNumJoints(robot, physicsClientId=c))]
        info = p.getJointInfo(robot, names.index("lbr_iiwa_joint_2"), physicsClientId=c)
        return info[8], info[9]
    finally:
        p.disconnect(physicsClientId=c)


@pytest.fixture()
def detector():
    c = p.connect(p.DIRECT)
    try:
        yield CollisionDetector(load_scene(SCENE).load(c), [("robot", "cube1")])
    finally:
        p.disconnect(physicsClientId=c)


def _said(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING and "degrees?" in r.getMessage()]


def test_the_premise_45_is_beyond_a_turn_and_outside_the_limits():
    lo, hi = _limits_of_joint_2()
    assert 45.0 > 2 * math.pi and not lo <= 45.0 <= hi
    assert (round(lo, 3), round(hi, 3)) == (-2.094, 2.094)


@pytest.mark.parametrize("form", ["array", "list", "mapping", "batch", "in_collision"])
def test_degrees_said_once_and_answered_as_radians(detector, caplog, form):
    q = {"array": DEG, "list": DEG.tolist(), "mapping": dict(zip(detector.joint_names, DEG)),
         "batch": np.stack([np.zeros(7), DEG]), "in_collision": DEG}[form]
    with caplog.at_level(logging.WARNING, logger="simbench"):
        if form == "in_collision":
            got = [detector.in_collision(q, margin=0.0) for _ in range(3)]
            truth = _direct_distance(DEG)
            assert got == [truth < 0.0] * 3
        else:
            got = [detector.compute_distances(q, max_distance=5.0) for _ in range(3)]
            rows = np.atleast_2d(q if form != "mapping" else DEG)
            truth = np.array([_direct_distance(r) for r in np.asarray(rows, dtype=float)])
            for d in got:
                np.testing.assert_allclose(np.atleast_2d(d)[:, 0], truth, atol=1e-9)
    lines = _said(caplog)
    assert len(lines) == 1, lines                 # three queries, one line
    assert LINE.search(lines[0]), lines[0]
    assert "answered as radians" in lines[0]
    if form == "batch":
        assert "in 1 of 2 configurations" in lines[0]


def test_check_units_false_answers_without_a_word(caplog):
    """A caller that judged q itself (the sweep's driver) builds its detectors with
    check_units=False: the same degrees pose is answered as radians, as the direct call has it."""
    c = p.connect(p.DIRECT)
    try:
        det = CollisionDetector(load_scene(SCENE).load(c), [("robot", "cube1")], check_units=False)
        with caplog.at_level(logging.WARNING, logger="simbench"):
            d = det.compute_distances(DEG, max_distance=5.0)
    finally:
        p.disconnect(physicsClientId=c)
    assert _said(caplog) == []
    np.testing.assert_allclose(d[0], _direct_distance(DEG), atol=1e-9)


@pytest.mark.parametrize("q", [np.zeros(7), np.array([0.0, 2.5, 0, 0, 0, 0, 0]),
                               np.array([0.0, -2.0, 0, 1.5, 0, 0.3, 0]), np.array([0.0, 0.5, 0, -2.0, 0, 1.0, 3.0])])
def test_radians_are_not_judged(detector, caplog, q):
    """Inside the limits, or outside them below a turn (2.5 rad on joint 2): not a word."""
    with caplog.at_level(logging.WARNING, logger="simbench"):
        detector.compute_distances(q)
        detector.compute_distances(np.stack([q, q]))
    assert _said(caplog) == []


URDF = """<robot name="rail">
  <link name="base"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><geometry><box size="0.2 0.2 0.2"/></geometry></collision></link>
  <link name="cart"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><geometry><box size="0.1 0.1 0.1"/></geometry></collision></link>
  <link name="wheel"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><geometry><sphere radius="0.05"/></geometry></collision></link>
  <joint name="slide" type="prismatic"><parent link="base"/><child link="cart"/><origin xyz="0 0 0.3"/>
    <axis xyz="1 0 0"/><limit lower="-0.5" upper="0.5" effort="10" velocity="1"/></joint>
  <joint name="spin" type="continuous"><parent link="cart"/><child link="wheel"/><origin xyz="0 0 0.2"/>
    <axis xyz="0 0 1"/></joint>
</robot>
"""


def test_joints_without_angle_limits_are_not_judged(tmp_path, caplog):
    """A continuous joint at 100 rad and a prismatic joint at 10 m are not degrees."""
    (tmp_path / "rail.urdf").write_text(URDF)
    (tmp_path / "scene.toml").write_text('robot = "rail"\n[[body]]\nname = "rail"\nurdf = "rail.urdf"\n'
                                         'fixed_base = true\n[[body]]\nname = "post"\n'
                                         f'urdf = "{resolve_path("simbench:shapes/box.urdf")}"\n'
                                         'position = [2, 0, 0.4]\nfixed_base = true\n')
    c = p.connect(p.DIRECT)
    try:
        det = CollisionDetector(load_scene(tmp_path / "scene.toml").load(c), [("rail", "post")])
        assert det.joint_names == ("slide", "spin")
        with caplog.at_level(logging.WARNING, logger="simbench"):
            det.compute_distances(np.array([10.0, 100.0]))
            det.compute_distances(np.array([[10.0, 100.0], [-10.0, -100.0]]))
        assert _said(caplog) == []
    finally:
        p.disconnect(physicsClientId=c)


def _sweep(tmp_path: Path, rows: np.ndarray, name: str) -> subprocess.CompletedProcess:
    np.save(tmp_path / f"{name}.npy", rows)
    return subprocess.run([sys.executable, "-m", "simbench", "sweep", "collision", SCENE, "--configs",
                           str(tmp_path / f"{name}.npy"), "--out", str(tmp_path / name), "--workers", "2"],
                          capture_output=True, text=True, timeout=300)


def test_sweep_configs_in_degrees_said_in_one_line(tmp_path):
    rows = np.stack([DEG, np.zeros(7), DEG, np.full(7, 0.1)])
    r = _sweep(tmp_path, rows, "deg")
    assert r.returncode == 0, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if "degrees?" in ln]
    assert len(lines) == 1, r.stderr               # the driver's line; none from the workers
    assert lines[0].startswith("simbench sweep: warning: configuration file ")
    assert LINE.search(lines[0]) and "in 2 of 4 configurations" in lines[0] and "swept as radians" in lines[0]
    ok = _sweep(tmp_path, np.stack([np.zeros(7), np.full(7, 0.1)]), "rad")
    assert ok.returncode == 0 and "degrees?" not in ok.stderr, ok.stderr


def test_a_pair_named_as_results_print_it(detector):
    """'robot/lbr_iiwa_link_7' and 'robot/(base)', the form results and the sweep's --pair use,
    name a link, as ("robot", "lbr_iiwa_link_7") and ("robot", None) do (a walkthrough's
    sim.detector([("torso/right_shoulder", "ball")]) was an unknown body); the distances equal
    direct getClosestPoints of those links; a mistyped body gets the closest body name."""
    from simbench.errors import UnknownNameError

    det = CollisionDetector(detector.loaded, [("robot/lbr_iiwa_link_7", "cube1"), ("robot/(base)", "cube1")])
    assert det.pair_names == [("robot/lbr_iiwa_link_7", "cube1"), ("robot/(base)", "cube1")]
    q = np.array([0.785, 1.2, 0.0, -0.6, 0.0, 0.6, 0.0])
    got = det.compute_distances(q, max_distance=5.0)
    c = detector.client
    robot, cube = detector.loaded.bodies["robot"], detector.loaded.bodies["cube1"]
    for j, v in zip([j for j in range(p.getNumJoints(robot, physicsClientId=c))
                     if p.getJointInfo(robot, j, physicsClientId=c)[2] != p.JOINT_FIXED], q):
        p.resetJointState(robot, j, float(v), physicsClientId=c)
    link7 = [j for j in range(p.getNumJoints(robot, physicsClientId=c))
             if p.getJointInfo(robot, j, physicsClientId=c)[12].decode() == "lbr_iiwa_link_7"][0]
    for k, link in enumerate((link7, -1)):
        pts = p.getClosestPoints(robot, cube, 5.0, linkIndexA=link, physicsClientId=c)
        assert abs(got[k] - min(pt[8] for pt in pts)) < 1e-9
    with pytest.raises(UnknownNameError, match=r"unknown body 'robt' .*\(in 'robt/lbr_iiwa_link_7'\); did you "
                                               r"mean 'robot'\?"):
        CollisionDetector(detector.loaded, [("robt/lbr_iiwa_link_7", "cube1")])


def test_the_count_is_the_named_joints(detector, caplog):
    """'in k of n configurations' counts the rows where the joint it names is beyond a turn and
    outside its limits, not those where any joint is (a walkthrough counted 94,586 where the
    line said 100,000); counted here from the URDF limits read with getJointInfo."""
    only_4 = np.zeros(7)
    only_4[3] = -90.0                              # joint 4 only, in degrees
    q = np.stack([DEG, only_4, only_4, np.zeros(7)])
    lo, hi = _limits_of_joint_2()
    expected = int(((np.abs(q[:, 1]) > 2 * math.pi) & ((q[:, 1] < lo) | (q[:, 1] > hi))).sum())
    with caplog.at_level(logging.WARNING, logger="simbench"):
        detector.compute_distances(q)
    (line,) = _said(caplog)
    assert expected == 1 and f"joint 'lbr_iiwa_joint_2' = 45 rad in {expected} of 4 configurations" in line, line


def test_values_filled_in_from_the_world_are_not_judged(caplog):
    """Two arms; the right one's joint 7 is at 6.4 rad in the world (knocked there in a
    walkthrough's run). q = {"left": zeros} fills the right arm in from the world: that value is
    not the caller's, so no degrees line (there was one, naming right/lbr_iiwa_joint_7); the
    same value given by the caller is said. The distance is the direct getClosestPoints one."""
    import simbench

    scene = {"robot": "left", "body": [
        {"name": "left", "urdf": "pybullet_data:kuka_iiwa/model.urdf", "fixed_base": True, "position": [0, -0.6, 0]},
        {"name": "right", "urdf": "pybullet_data:kuka_iiwa/model.urdf", "fixed_base": True, "position": [0, 0.6, 0]}]}
    with simbench.Simulation(scene, gui=False) as sim:
        det = sim.detector([("left", "right")], robot=("left", "right"))
        p.resetJointState(sim.bodies["right"], 6, 6.4, physicsClientId=sim.client)
        sim.pair.sync()
        with caplog.at_level(logging.WARNING, logger="simbench"):
            d = det.compute_distances({"left": np.zeros(7)}, max_distance=5.0)
            assert _said(caplog) == []
            truth = min(pt[8] for pt in p.getClosestPoints(sim.bodies["left"], sim.bodies["right"], 5.0,
                                                          physicsClientId=sim.client))
            np.testing.assert_allclose(d, [truth], atol=1e-9)
            det.compute_distances({"right": np.r_[np.zeros(6), 6.4]}, max_distance=5.0)
        lines = _said(caplog)
    assert len(lines) == 1 and "right/lbr_iiwa_joint_7" in lines[0], lines


def test_the_readmes_one_tuple_form_is_the_whole_body():
    """README: queries between ("robot", "lbr_iiwa_link_7") and ("cube1",); ("cube1",) was
    refused ("cannot read ('cube1',) as a collision object"). Its distance equals the body
    name's and direct getClosestPoints over the cube."""
    import simbench

    q = np.array([0.785, 1.2, 0, -0.6, 0, 0.6, 0])
    with simbench.Simulation(SCENE, gui=False) as sim:
        link7 = ("robot", "lbr_iiwa_link_7")
        d = sim.detector([(link7, ("cube1",)), (link7, "cube1")]).compute_distances(q, 5.0)
        sim.robot.reset(q)
        li = sim.body("robot").links["lbr_iiwa_link_7"]
        truth = min(pt[8] for pt in p.getClosestPoints(sim.bodies["robot"], sim.bodies["cube1"], 5.0,
                                                      linkIndexA=li, physicsClientId=sim.client))
    np.testing.assert_allclose(d, [truth, truth], atol=1e-9)
    # and the README's simbench.check.compare after `import simbench` alone (an AttributeError)
    proc = subprocess.run([sys.executable, "-c", "import simbench; print(simbench.check.compare.__name__)"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip() == "compare", proc.stderr
