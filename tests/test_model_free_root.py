"""``RobotModel.from_urdf`` without ``floating_base`` on a legged robot welds its root to the
world, as before, but now says so in one warning line naming the file, the root link and both
choices; ``floating_base=False`` welds it silently, ``True`` floats it, a fixed arm says nothing.

Oracles: the file itself (the movable joints counted in its XML, the root link's name) and
Pinocchio's free-flyer model of the same file (``nq`` 7 + 12)."""
import logging
import os
import xml.etree.ElementTree as ET

import pybullet_data
import pytest

from simbench import RobotModel
from simbench.bench.dynamics import resolve_robots

A1 = "pybullet_data:a1/a1.urdf"
A1_PATH = os.path.join(pybullet_data.getDataPath(), "a1", "a1.urdf")
IIWA = "pybullet_data:kuka_iiwa/model.urdf"


def _file_facts():
    """(movable joints, root link) read from the XML."""
    root = ET.parse(A1_PATH).getroot()
    joints = root.findall("joint")
    movable = sum(j.get("type") in ("revolute", "continuous", "prismatic") for j in joints)
    children = {j.find("child").get("link") for j in joints}
    (top,) = [ln.get("name") for ln in root.findall("link") if ln.get("name") not in children]
    return movable, top


def _lines(caplog):
    return [r for r in caplog.records if r.name.startswith("simbench") and "floating_base" in r.getMessage()]


def test_default_welds_a_legged_robot_with_one_line(caplog):
    movable, top = _file_facts()
    assert (movable, top) == (12, "trunk")
    with caplog.at_level(logging.INFO, logger="simbench"):
        m = RobotModel.from_urdf(A1)
    assert not m.floating_base and m.nq == movable
    lines = _lines(caplog)
    assert len(lines) == 1, [r.getMessage() for r in caplog.records]
    msg = lines[0].getMessage()
    assert lines[0].levelno == logging.WARNING and "\n" not in msg
    assert "a1.urdf" in msg and repr(top) in msg and f"nq = {movable}" in msg
    assert "floating_base=True" in msg and "floating_base=False" in msg


@pytest.mark.parametrize("floating", [False, True])
def test_an_explicit_choice_says_nothing(caplog, floating):
    pin = pytest.importorskip("pinocchio")
    with caplog.at_level(logging.INFO, logger="simbench"):
        m = RobotModel.from_urdf(A1, floating_base=floating)
    assert _lines(caplog) == []
    expected = pin.buildModelFromUrdf(A1_PATH, pin.JointModelFreeFlyer()).nq if floating else _file_facts()[0]
    assert m.floating_base is floating and m.nq == expected == (19 if floating else 12)


def test_a_fixed_arm_says_nothing(caplog):
    with caplog.at_level(logging.INFO, logger="simbench"):
        m = RobotModel.from_urdf(IIWA)
    assert _lines(caplog) == [] and not m.floating_base and m.nq == 7
    assert not [i for i in m.issues if i.kind == "free_root"]


def test_the_bench_loading_a_legged_file_on_purpose_says_nothing(caplog):
    """``simbench bench --robot FILE`` benches a file welded (its docs say so): no line."""
    with caplog.at_level(logging.INFO, logger="simbench"):
        got = resolve_robots([A1])
    assert got == {"a1": (A1, False)} and _lines(caplog) == []
