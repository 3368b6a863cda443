"""A scene body whose URDF joins a massless ``world`` link to the robot by a floating joint:
PyBullet makes the joint fixed, so the robot hangs where it was put; the scene says so in one
line, and PyBullet's own stray text is not printed."""
import logging
import os
import re
import subprocess
import sys
import textwrap

import pybullet_data
import pytest

import simbench

pb = pytest.importorskip("pybullet")


@pytest.fixture
def a1_world(tmp_path):
    src = open(os.path.join(pybullet_data.getDataPath(), "a1", "a1.urdf")).read()
    extra = ('<link name="world"/><joint name="root_joint" type="floating"><parent link="world"/>'
             '<child link="trunk"/></joint>')
    text = re.sub(r"(<robot[^>]*>)", r"\1" + extra, src, count=1)
    path = tmp_path / "a1" / "a1_world.urdf"
    path.parent.mkdir()
    path.write_text(text)
    for entry in os.listdir(os.path.join(pybullet_data.getDataPath(), "a1")):   # the meshes beside it
        if entry != "a1.urdf":
            os.symlink(os.path.join(pybullet_data.getDataPath(), "a1", entry), path.parent / entry)
    return path


def test_welded_floating_joint_is_said_once_per_body(a1_world, caplog):
    scene = {"body": [{"name": "a1", "urdf": str(a1_world), "position": [0, 0, 2]},
                      {"name": "b1", "urdf": str(a1_world), "position": [3, 0, 2]}]}
    with simbench.Simulation(scene, gui=False) as sim, caplog.at_level(logging.WARNING):
        sim.advance(0.5)
        # the oracle: PyBullet's own base position, still where the scene put it
        z = [pb.getBasePositionAndOrientation(sim.bodies[n], physicsClientId=sim.client)[0][2] for n in ("a1", "b1")]
        assert z == pytest.approx([2.0, 2.0], abs=1e-9)
        sim.advance(0.5)
    lines = [r.getMessage() for r in caplog.records if "floating" in r.getMessage()]
    assert len(lines) == 2, lines
    assert lines[0] == ("body 'a1': the URDF joins the massless link 'world' to 'trunk' by <joint type=\"floating\"> "
                        "'root_joint', which PyBullet makes a fixed joint, so the robot is welded where the scene puts "
                        "it and cannot move (sim.model is welded too); for a free base remove link 'world' and joint "
                        "'root_joint' from the file")
    assert lines[1].startswith("body 'b1': ")


def test_pybullet_stray_text_is_not_printed(a1_world, tmp_path):
    code = textwrap.dedent(f"""
        import simbench
        with simbench.Simulation({{"body": [{{"name": "a1", "urdf": {str(a1_world)!r}, "position": [0, 0, 2]}}]}},
                                 gui=False) as sim:
            sim.step()
    """)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert run.returncode == 0, run.stderr
    out = run.stdout + run.stderr
    assert "joint unsupported" not in out
    assert out.count("PyBullet makes a fixed joint") == 1, out


def test_welded_on_purpose_says_nothing(a1_world, caplog):
    scene = {"body": [{"name": "a1", "urdf": str(a1_world), "position": [0, 0, 2], "fixed_base": True}]}
    with simbench.Simulation(scene, gui=False) as sim, caplog.at_level(logging.WARNING):
        sim.step()
    assert not [r for r in caplog.records if "floating" in r.getMessage()]
