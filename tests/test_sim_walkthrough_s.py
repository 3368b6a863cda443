"""Walkthrough S without a window: a pick-and-place cell (three arms, a table, a ball the
script teleports) scripted with ``simbench run``.

* the collision server's sync reads only the bases that can have moved (one GUI-server call
  each in the real window), and still sees every teleport and every change it is told of;
* removing the scene's robot no longer hands ``sim.robot`` to another arm;
* legend rows name both sides of a pair, the same whatever else is shown, and keep a row for a
  pair beyond the query's distance (``> 1 m``);
* two fixed bodies never get contact points (PyBullet's rule), as the docstring says;
* ``simbench -q run`` prints no summary, ``(1 frame)``; an interrupted demo says one line and
  keeps its picture.

Oracles: PyBullet's own ``getClosestPoints`` on the main server, call counts of wrapped
PyBullet functions, the command's output.
"""
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pybullet as p
import pytest

import simbench
from simbench.bullet import sync as sync_module
from simbench.bullet.collision import NamedCollisionObject as O
from simbench.errors import SimbenchError
from simbench.sim.overlay import legend_texts, segments_of

ROOT = Path(__file__).resolve().parents[1]
CELL = {
    "gravity": [0, 0, 0], "robot": "left",
    "body": [
        {"name": "ground", "urdf": "pybullet_data:plane.urdf", "fixed_base": True},
        {"name": "left", "urdf": "pybullet_data:kuka_iiwa/model.urdf", "position": [0, 0.6, 0], "fixed_base": True},
        {"name": "right", "urdf": "pybullet_data:kuka_iiwa/model.urdf", "position": [0, -0.6, 0], "fixed_base": True},
        {"name": "wall_arm", "urdf": "pybullet_data:kuka_iiwa/model.urdf", "position": [1.2, 0, 1.0],
         "orientation": [0, 1.5708, 0], "fixed_base": True},
        {"name": "table", "urdf": "pybullet_data:cube.urdf", "position": [0.7, 0, 0.2], "scale": 0.4,
         "fixed_base": True},
        {"name": "ball", "urdf": "pybullet_data:sphere_small.urdf", "position": [0.7, 0, 0.6], "fixed_base": True},
    ],
}
PAIRS = [(O("left", "lbr_iiwa_link_7"), "ball"), (O("right", "lbr_iiwa_link_7"), "ball"), ("ball", "table"),
         (O("wall_arm", "lbr_iiwa_link_7"), "table")]


def truth(sim, a, b, link=-1):
    """PyBullet's getClosestPoints on the main server: the smallest distance of bodies a and b."""
    pts = p.getClosestPoints(sim.bodies[a], sim.bodies[b], 5.0, linkIndexA=link, physicsClientId=sim.client)
    return min(pt[8] for pt in pts)


def test_the_sync_reads_only_the_bases_that_can_have_moved(monkeypatch):
    """A loop pass (ball teleported, three arms reset, 4 steps, a query) read all 6 bases from
    the main server; each read is a GUI-server call waiting for a frame in the window. Now one
    base per pass (the ball's), and after an unknown change (pair.mark_changed(), a body
    moved with PyBullet directly) every base again; the distances stay PyBullet's own."""
    reads = []
    real = sync_module.p.getBasePositionAndOrientation

    def counted(bid, *args, **kwargs):
        reads.append(bid)
        return real(bid, *args, **kwargs)

    with simbench.Simulation(CELL, gui=False) as sim:
        det = sim.detector(PAIRS)
        det.closest_points(max_distance=5.0)
        monkeypatch.setattr(sync_module.p, "getBasePositionAndOrientation", counted)
        for k in range(5):
            reads.clear()
            sim.set_pose("ball", [0.7 + 0.05 * k, 0.02 * k, 0.6])
            for i, name in enumerate(("left", "right", "wall_arm")):
                sim.handle(name).reset([0.2 * (k + i) % 1.0] * 7)
            sim.step(4)
            res = det.closest_points(max_distance=5.0)
            assert reads == [sim.bodies["ball"]], reads
            assert res[2].distance == pytest.approx(truth(sim, "ball", "table"), abs=1e-6)
        # the table moved behind the simulation's back: said with mark_changed(), read again
        p.resetBasePositionAndOrientation(sim.bodies["table"], [0.7, 0, 0.1], [0, 0, 0, 1],
                                          physicsClientId=sim.client)
        sim.pair.mark_changed()
        reads.clear()
        res = det.closest_points(max_distance=5.0)
        assert sorted(reads) == sorted(sim.bodies.values())
        assert res[2].distance == pytest.approx(truth(sim, "ball", "table"), abs=1e-6)
        assert res[3].distance == pytest.approx(truth(sim, "wall_arm", "table", link=6), abs=1e-6)


def test_removing_the_scenes_robot_does_not_hand_sim_robot_to_another_arm():
    """robot = "left"; sim.remove_body("left"); sim.robot gave Robot('wall_arm', ...) and
    sim.detector(pairs) posed the wall arm. Now one line naming the removed robot and
    sim.handle(NAME), and the detector poses no robot unless told (robot=...)."""
    with simbench.Simulation(CELL, gui=False) as sim:
        assert sim.robot.name == "left"
        sim.remove_body("left")
        with pytest.raises(SimbenchError) as err:
            sim.robot
        assert "'left' was removed" in str(err.value) and "sim.handle(NAME)" in str(err.value)
        assert "\n" not in str(err.value)
        with pytest.raises(SimbenchError):
            sim.model
        det = sim.detector([("ball", "table")])
        assert det.robot_name is None
        assert det.closest_points()[0].distance == pytest.approx(truth(sim, "ball", "table"), abs=1e-6)
        assert sim.detector([(O("right", "lbr_iiwa_link_7"), "ball")], robot="right").robot_name == "right"
        assert sim.handle("wall_arm").name == "wall_arm"


def test_legend_rows_name_both_sides_and_keep_their_row():
    """The cell's rows read 'table: 0.130 m' (the ball never named), 'table (sphere_link)' (the
    ball's link, read as the table's), 'right: 0.962 m' for (left, link_7) vs (right, link_7);
    a row's label changed when other rows dropped out, and a pair beyond max_distance had no
    row. Now: 'left - ball', 'right - ball', 'ball - table', 'wall_arm - table', the same label
    whichever rows are near, '> 0.3 m' for a far pair; distances are PyBullet's."""
    with simbench.Simulation(CELL, gui=False) as sim:
        det = sim.detector(PAIRS + [(O("left", "lbr_iiwa_link_7"), O("right", "lbr_iiwa_link_7"))])
        labels = []
        for x in (0.7, 0.2, 0.0):            # the ball moves near the left arm: rows come into range
            sim.set_pose("ball", [x, 0.6 if x < 0.5 else 0.0, 1.3])
            segs = sim.draw_closest_points(det.closest_points(max_distance=0.3))
            assert len(segs) == 5
            labels.append([s.label for s in segs])
            texts = legend_texts(segs)
            for s, text in zip(segs, texts):
                assert text == (f"{s.label}: {s.text}")
                assert text.endswith("> 0.3 m") == (not s.found)
                if s.found:
                    assert s.text == f"{0.0 if abs(s.distance) < 5e-4 else s.distance:.3f} m"
            assert legend_texts(segs[:2]) == texts[:2]       # whatever else is shown
        assert labels[0] == labels[1] == labels[2] == ["left - ball", "right - ball", "ball - table",
                                                       "wall_arm - table", "left - right"], labels
        near = [s for s in segs if s.found]
        assert near and segs[0].distance == pytest.approx(truth(sim, "left", "ball", link=6), abs=1e-6)
        # two pairs joining the same bodies name the links (those the pairs named)
        det2 = sim.detector([(O("left", "lbr_iiwa_link_7"), "ball"), (O("left", "lbr_iiwa_link_5"), "ball")])
        assert [s.label for s in segments_of(det2.closest_points(max_distance=5.0))] == \
            ["left/lbr_iiwa_link_7 - ball", "left/lbr_iiwa_link_5 - ball"]
        frame = sim.screenshot(size=(320, 240))     # a far row in a picture: no line, a row
        assert frame.shape == (240, 320, 3)


def test_two_fixed_bodies_get_no_contact_points_and_the_docstring_says_so():
    """sim.contacts("ball", "table") found nothing for two overlapping fixed bodies while the
    detector said -0.15 m: PyBullet's rule. Now the docstring and docs/collision.md say it."""
    with simbench.Simulation(CELL, gui=False) as sim:
        sim.set_pose("ball", [0.7, 0, 0.35])
        sim.step()
        d = sim.detector([("ball", "table")]).closest_points()[0].distance
        assert d < 0 and d == pytest.approx(truth(sim, "ball", "table"), abs=1e-6)
        assert sim.contacts("ball", "table") == []
    doc = " ".join(simbench.Simulation.contacts.__doc__.split())
    assert "Two fixed bodies never get contact points" in doc and "sim.detector" in doc
    assert "Two fixed bodies never get contact points" in (ROOT / "docs" / "collision.md").read_text()


SCRIPT = """
    SCENE = "pybullet_data:kuka_iiwa/model.urdf"
    def main(sim):
        sim.step(2)
        return {"steps": sim.steps}
"""


def cli(*args, cwd, **kwargs):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("DISPLAY", None)
    return subprocess.run([sys.executable, "-m", "simbench.cli", *args], cwd=cwd, capture_output=True,
                          text=True, env=env, timeout=300, **kwargs)


def test_quiet_run_prints_no_summary_and_one_frame_is_one_frame(tmp_path):
    """simbench -q run s.py --direct still printed 'simbench run: ... reached its duration ...;
    servers closed' (-q keeps warnings and errors only), and a recording of one frame read
    '(1 frames)'. Now -q (before or after run) prints nothing on stderr, the results still on
    stdout; a failing script is still said."""
    (tmp_path / "s.py").write_text(textwrap.dedent(SCRIPT))
    for args in (("-q", "run", "s.py", "--direct", "--duration", "0.01"),
                 ("run", "s.py", "--direct", "--duration", "0.01", "-q")):
        proc = cli(*args, cwd=tmp_path)
        assert proc.returncode == 0 and proc.stderr == "", (args, proc.stderr)
        assert "steps: 2" in proc.stdout
    proc = cli("run", "s.py", "--direct", "--record", "r.gif", "--size", "32x24", "--duration", "0.01",
               cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "simbench run: recording r.gif (1 frame)\n" in proc.stderr, proc.stderr
    (tmp_path / "bad.py").write_text("def main(sim):\n    raise ValueError('boom')\n")
    proc = cli("-q", "run", "bad.py", "--direct", cwd=tmp_path)
    assert proc.returncode == 1 and "ValueError: boom" in proc.stderr and "bad.py failed" in proc.stderr


SLOW_DEMO = """
import sys
import simbench.demo as demo
from simbench import cli
real = demo.run_demo
def slow(*args, **kwargs):
    kwargs["settle_steps"] = 3000
    return real(*args, **kwargs)
demo.run_demo = slow
sys.exit(cli.main(["demo", "--direct", "--out", "d3"]))
"""


def test_an_interrupted_demo_says_one_line_and_keeps_the_last_waypoints_picture(tmp_path):
    """simbench demo --direct --out d3, SIGINT after 0.9 s: rc 130 with stderr '' then
    'simbench demo: SIGINT: stopping (closing the servers)' (another time 'simbench demo:
    interrupted'), and no PNG even with every waypoint printed. Now (the waypoints slowed down,
    SIGINT once waypoint 0 is printed): rc 130, stderr exactly 'simbench demo: interrupted',
    d3/demo.png written (Pillow opens it) and said on stdout."""
    from PIL import Image

    (tmp_path / "slow.py").write_text(SLOW_DEMO)
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("DISPLAY", None)
    proc = subprocess.Popen([sys.executable, "slow.py"], cwd=tmp_path, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    lines, deadline = [], time.monotonic() + 240
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line)
        if line.split()[:1] == ["0"]:        # waypoint 0's row
            proc.send_signal(signal.SIGINT)
            break
    out, err = proc.communicate(timeout=120)
    out = "".join(lines) + out
    assert proc.returncode == 130, (out, err)
    assert err == "simbench demo: interrupted\n", repr(err)
    assert "wrote d3/demo.png" in out, out
    with Image.open(tmp_path / "d3" / "demo.png") as img:
        assert img.size == (640, 480)
        assert np.asarray(img.convert("RGB")).std() > 5
