"""The command line's loading options as a user mistypes them: ``--xacro-arg`` names the file does
not declare (or given for a plain URDF), ``--package`` names no file refers to or folders that do
not exist, ``simbench:`` with no file name, and the plural of ``check``'s summary line.

Each case runs ``python -m simbench ...`` in a fresh folder holding a tiny ROS workspace:
``ws/my_robot`` (package.xml, meshes/link.stl), ``robot.urdf`` (its mesh is
``package://my_robot/meshes/link.stl``; the package is not beside the file, so it is found only
through ``--package``) and ``robot.urdf.xacro`` (``<xacro:arg name="hardware">``, an included
``parts.xacro`` declaring ``side``, and ``$(find my_robot)``).
"""
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest

from simbench.paths import assets_dir

STL = assets_dir() / "ros" / "simbench_demo_description" / "meshes" / "link.stl"
INERT = '<inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial>'
URDF = (f'<robot name="r"><link name="a">{INERT}</link><link name="b">{INERT}<visual><geometry>'
        '<mesh filename="package://my_robot/meshes/link.stl"/></geometry></visual></link>'
        '<joint name="j" type="revolute"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/>'
        '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint></robot>')
XACRO = ('<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro">'
         '<xacro:arg name="hardware" default="real"/><xacro:include filename="parts.xacro"/>'
         f'<link name="$(arg hardware)_$(arg side)">{INERT}<visual><geometry>'
         '<mesh filename="$(find my_robot)/meshes/link.stl"/></geometry></visual></link></robot>')
PARTS = ('<robot xmlns:xacro="http://www.ros.org/wiki/xacro">'
         '<xacro:arg name="side" default="left"/></robot>')
PKG = "--package=my_robot=ws/my_robot"


def run(tmp_path: Path, *argv: str) -> subprocess.CompletedProcess:
    """``python -m simbench ARGV`` in ``tmp_path`` (the workspace written there first), with no
    ROS search path of the environment's."""
    (tmp_path / "ws" / "my_robot" / "meshes").mkdir(parents=True, exist_ok=True)
    (tmp_path / "ws" / "my_robot" / "package.xml").write_text("<package><name>my_robot</name></package>")
    shutil.copy(STL, tmp_path / "ws" / "my_robot" / "meshes" / "link.stl")
    (tmp_path / "robot.urdf").write_text(URDF)
    (tmp_path / "robot.urdf.xacro").write_text(XACRO)
    (tmp_path / "parts.xacro").write_text(PARTS)
    env = {k: v for k, v in os.environ.items() if k not in ("ROS_PACKAGE_PATH", "AMENT_PREFIX_PATH")}
    return subprocess.run([sys.executable, "-m", "simbench", *argv], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)


class Case(NamedTuple):
    id: str
    argv: tuple[str, ...]
    status: int
    #: the one stderr line (error or warning) holds each of these
    says: tuple[str, ...]
    #: and stdout holds this
    out: str = ""


CASES = [
    # --xacro-arg: a name the file (or a file it includes) neither declares nor reads is refused
    Case("xacro-arg-misspelled", ("info", "robot.urdf.xacro", PKG, "--xacro-arg", "hardwre:=sim"), 2,
         ("error: unknown xacro argument 'hardwre'", "robot.urdf.xacro", "did you mean 'hardware'?",
          "Valid xacro argument names: hardware, side")),
    Case("xacro-arg-misspelled-check", ("check", "robot.urdf.xacro", PKG, "--xacro-arg", "sdie:=right"), 2,
         ("error: unknown xacro argument 'sdie'", "did you mean 'side'?")),
    Case("xacro-arg-declared-in-include", ("info", "robot.urdf.xacro", PKG, "--xacro-arg", "side:=right",
                                           "--xacro-arg", "hardware:=sim"), 0, (), "sim_right"),
    Case("xacro-arg-plain-urdf-check", ("check", "simbench:planar_2r.urdf", "--xacro-arg", "hardware:=sim"), 0,
         ("warning: --xacro-arg hardware:=sim ignored: planar_2r.urdf is plain URDF, not xacro",),
         "1 robot: 1 PASS"),
    Case("xacro-arg-plain-urdf-info", ("info", "robot.urdf", PKG, "--xacro-arg", "hardware:=sim"), 2,
         ("error:", "hardware:=sim", "given, but the file is plain URDF, not xacro")),
    # --package: a name no file refers to is warned about, with the closest name referred to
    Case("package-name-unused", ("info", "robot.urdf", PKG, "--package", "my_robt=ws"), 0,
         ("warning: --package my_robt=DIR unused: no file loaded refers to package 'my_robt'; "
          "did you mean 'my_robot'? (packages referred to: my_robot)",), "issues: none"),
    Case("package-name-unused-xacro", ("info", "robot.urdf.xacro", PKG, "--package", "other=ws"), 0,
         ("--package other=DIR unused", "(packages referred to: my_robot)")),
    # ... and when the package it was meant for is then not found, the failure names it
    Case("package-misspelled-mesh", ("info", "robot.urdf", "--package", "my_robt=ws/my_robot"), 0,
         ("--package my_robt=DIR unused",),
         "(--package my_robt=DIR was given, close to 'my_robot': a misspelling, in the option or in the file?)"),
    Case("package-misspelled-find", ("info", "robot.urdf.xacro", "--package", "my_robt=ws/my_robot"), 2,
         ("error:", "$(find my_robot): package 'my_robot' not found",
          "(--package my_robt=DIR was given, close to 'my_robot': a misspelling, in the option or in the file?)")),
    Case("package-folder-missing", ("info", "robot.urdf", "--package", "my_robot=ws/my_robt"), 2,
         ("error: package 'my_robot': folder 'ws/my_robt' does not exist",
          "did you mean '", "ws/my_robot'?")),
    # simbench: and pybullet_data: with no file name
    Case("simbench-prefix-alone", ("info", "simbench:"), 2,
         ("error: URDF file 'simbench:' is a folder; expected a file, e.g. 'simbench:urdf/",)),
    Case("simbench-folder", ("info", "simbench:urdf"), 2,
         ("error: URDF file 'simbench:urdf' is a folder; expected a file, e.g. 'simbench:urdf/",)),
    Case("pybullet-data-prefix-alone", ("info", "pybullet_data:"), 2,
         ("error: URDF file 'pybullet_data:' is a folder; expected a file, e.g. 'pybullet_data:",)),
]


def test_case_count():
    assert len(CASES) == 13


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_loading_input(case: Case, tmp_path: Path):
    pytest.importorskip("xacro")
    proc = run(tmp_path, *case.argv)
    lines = proc.stderr.splitlines()
    assert proc.returncode == case.status, proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    if case.says:
        assert len(lines) == 1, proc.stderr
        assert lines[0].startswith(f"simbench {case.argv[0]}: ")
        missing = [s for s in case.says if s not in lines[0]]
        assert not missing, lines[0]
    else:
        assert lines == []
    assert case.out in proc.stdout


def test_simbench_prefix_alone_names_each_folder_once(tmp_path: Path):
    """``simbench:nothing`` lists the three folders it looked in, each once."""
    proc = run(tmp_path, "info", "simbench:nothing")
    assert proc.returncode == 2
    looked = proc.stderr.split("(looked in ")[1].split(")")[0].split(", ")
    assert len(looked) == 3 and len(set(looked)) == 3, proc.stderr


def test_check_summary_counts_robots_in_the_plural(tmp_path: Path):
    proc = run(tmp_path, "check", "simbench:planar_2r.urdf", "simbench:anthropomorphic_3link.urdf")
    assert proc.stdout.splitlines()[-1].startswith("2 robots: "), proc.stdout


def test_symbolic_links_to_nothing_are_said_as_such(tmp_path):
    """A loop of links was 'not found; did you mean loop2.urdf?' (the other half of the loop),
    a dangling link got a folder suggested; now each says what the link is."""
    import subprocess
    import sys

    (tmp_path / "loop1.urdf").symlink_to("loop2.urdf")
    (tmp_path / "loop2.urdf").symlink_to("loop1.urdf")
    (tmp_path / "dang.urdf").symlink_to("nothere.urdf")
    said = {}
    for name in ("loop1.urdf", "dang.urdf"):
        proc = subprocess.run([sys.executable, "-m", "simbench", "info", name], capture_output=True, text=True,
                              cwd=tmp_path, timeout=120)
        assert proc.returncode == 2, proc.stderr
        said[name] = proc.stderr.strip()
    assert said == {
        "loop1.urdf": "simbench info: error: URDF file 'loop1.urdf' is a symbolic link that is a loop of symbolic "
                      "links; expected a file",
        "dang.urdf": "simbench info: error: URDF file 'dang.urdf' is a symbolic link that points to 'nothere.urdf', "
                     "which does not exist; expected a file"}
