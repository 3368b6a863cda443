"""A URDF's mistakes as a user meets them, each said in one line that names the bad value, what
was expected and the closest valid choice:

* a mesh file not found names the closest existing mesh file, written the way the URDF wrote its
  path (``meshes/bal.obj`` -> ``meshes/ball.obj``, ``mesh/link.stl`` -> ``meshes/link.stl``,
  ``package://my_robot/mesh/...`` -> ``package://my_robot/meshes/...``), and a package not found
  the closest known package (``package://my_robt/`` -> ``my_robot``), in ``simbench info``'s
  issues, in ``RobotModel.from_urdf``'s ``model.issues`` and in the one-line error of a scene
  load (``simbench view``);
* a zero ``<axis>`` says what is expected, and what PyBullet does with it.

Oracles: the files written next to the URDF (the suggestion must be one of them, and the URDF
with the suggestion put in loads in PyBullet), and PyBullet itself for what it makes of a zero
axis (``loadURDF`` takes the file; getJointState/getLinkState/calculateInverseDynamics show it).
"""
import math
import os
import subprocess
import sys

import pybullet as p
import pytest

import simbench
from simbench import packages
from simbench.errors import URDFError
from simbench.urdf_source import load_source

INERT = '<inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial>'
OBJ = "v 0 0 0\nv 0.1 0 0\nv 0 0.1 0\nv 0 0 0.1\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n"
PACKAGE_XML = "<package format=\"2\"><name>my_robot</name><version>0.0.1</version></package>"


def mesh_urdf(filename):
    return (f'<robot name="r"><link name="base">{INERT}<visual><geometry><mesh filename="{filename}"/>'
            '</geometry></visual></link></robot>')


def write(root, files):
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def cli(args, cwd, **env):
    full = {k: v for k, v in os.environ.items() if k not in ("ROS_PACKAGE_PATH", "AMENT_PREFIX_PATH")}
    full.update(env)
    return subprocess.run([sys.executable, "-m", "simbench", *args], cwd=cwd, env=full, capture_output=True,
                          text=True, timeout=300)


WS = {"ws/src/my_robot/package.xml": PACKAGE_XML, "ws/src/my_robot/meshes/link.obj": OBJ}
# (case, files, the URDF, its mesh filename, what the message ends with, the filename that loads)
CASES = [
    ("file name", {"robot/meshes/ball.obj": OBJ, "robot/meshes/link.obj": OBJ}, "robot/r.urdf",
     "meshes/bal.obj", "; did you mean 'meshes/ball.obj'?", "meshes/ball.obj"),
    ("folder name", {"robot/meshes/link.obj": OBJ, "robot/meshes/ball.obj": OBJ}, "robot/r.urdf",
     "mesh/link.obj", "; did you mean 'meshes/link.obj'?", "meshes/link.obj"),
    # the URDF in urdf/, the meshes beside that folder (PyBullet looks in the folders above)
    ("folder above", {"robot/meshes/link3.obj": OBJ, **{f"robot/meshes/link{i}.obj": OBJ for i in range(8)}},
     "robot/urdf/r.urdf", "meshes/link_3.obj", "; did you mean 'meshes/link3.obj'?", "meshes/link3.obj"),
    ("case", {"robot/meshes/link.obj": OBJ}, "robot/r.urdf", "meshes/Link.OBJ",
     "; did you mean 'meshes/link.obj'?", "meshes/link.obj"),
    ("package folder", WS, "ws/src/my_robot/urdf/r.urdf", "package://my_robot/mesh/link.obj",
     "; did you mean 'package://my_robot/meshes/link.obj'?", "package://my_robot/meshes/link.obj"),
    ("package name", WS, "ws/src/my_robot/urdf/r.urdf", "package://my_robt/meshes/link.obj",
     "give its folder with --package my_robt=DIR or ROS_PACKAGE_PATH; did you mean package 'my_robot'?",
     "package://my_robot/meshes/link.obj"),
]


@pytest.mark.parametrize("case, files, urdf, filename, ending, fixed", CASES, ids=[c[0] for c in CASES])
def test_missing_mesh_names_the_closest_file_in_info_the_api_and_a_scene_load(
        tmp_path, direct_client, case, files, urdf, filename, ending, fixed):
    write(tmp_path, {**files, urdf: mesh_urdf(filename)})
    info = cli(["info", urdf], tmp_path)
    assert info.returncode == 0, info.stderr
    lines = [line for line in info.stdout.splitlines() if "missing_mesh:" in line]
    assert len(lines) == 1 and lines[0].startswith(f"    - missing_mesh: link 'base': <visual> mesh '{filename}' "
                                                   "not found"), info.stdout
    assert lines[0].endswith(ending), lines[0]
    assert lines[0].count("did you mean") == 1
    # the Python API: the same line in model.issues (a warning is no error here)
    model = simbench.RobotModel.from_urdf(tmp_path / urdf)
    [issue] = [i for i in model.issues if i.kind == "missing_mesh"]
    assert "<visual> " + lines[0].split("<visual> ", 1)[1] == issue.message
    # a scene holding the file: its load error is one line with the suggestion
    (tmp_path / "scene.toml").write_text(f'[[body]]\nname = "arm"\nurdf = "{urdf}"\nfixed_base = true\n')
    view = cli(["view", "scene.toml", "--direct", "--out", "v.png"], tmp_path)
    assert view.returncode == 2 and len(view.stderr.strip().splitlines()) == 1, view.stderr
    assert f"{ending} PyBullet cannot load this file" in view.stderr, view.stderr
    # oracle: the suggestion is a file that exists, and PyBullet loads the file that names it
    (tmp_path / urdf).write_text(mesh_urdf(fixed))
    source = load_source(tmp_path / urdf)
    assert not source.refusals, source.refusals
    assert p.loadURDF(str(source.pybullet_path()), physicsClientId=direct_client) >= 0


def test_a_known_package_is_suggested_from_ros_package_path_and_the_package_map(tmp_path, monkeypatch):
    """The package is not above the URDF but on ROS_PACKAGE_PATH (the command line) or in the
    package map (the API)."""
    write(tmp_path, {**WS, "other/r.urdf": mesh_urdf("package://my_robt/meshes/link.obj")})
    info = cli(["info", "other/r.urdf"], tmp_path, ROS_PACKAGE_PATH=str(tmp_path / "ws" / "src"))
    assert info.stdout.rstrip().endswith("; did you mean package 'my_robot'?"), info.stdout
    monkeypatch.delenv("ROS_PACKAGE_PATH", raising=False)
    model = simbench.RobotModel.from_urdf(tmp_path / "other/r.urdf",
                                          package_map={"my_robot": tmp_path / "ws/src/my_robot"})
    assert model.issues[0].message.endswith("; did you mean package 'my_robot'?"), model.issues[0].message
    # with neither, nothing known is close: no suggestion
    info = cli(["info", "other/r.urdf"], tmp_path)
    assert "missing_mesh" in info.stdout and "did you mean" not in info.stdout, info.stdout


def test_a_package_of_the_same_prefix_is_no_suggestion():
    """simbench's ROS example: arm_with_tool.urdf (in simbench_demo_description) refers to
    simbench_tool, found only through ROS_PACKAGE_PATH; simbench_demo_description is known (its
    package.xml is above the file) and difflib finds it 0.58 alike: not a misspelling."""
    model = simbench.RobotModel.from_urdf("simbench:ros/simbench_demo_description/urdf/arm_with_tool.urdf")
    [issue] = [i for i in model.issues if i.kind == "missing_mesh"]
    assert issue.message.endswith("; give its folder with --package simbench_tool=DIR or ROS_PACKAGE_PATH")


def test_nothing_close_suggests_nothing(tmp_path):
    write(tmp_path, {"robot/meshes/link.obj": OBJ, "robot/r.urdf": mesh_urdf("meshes/zzz.obj")})
    model = simbench.RobotModel.from_urdf(tmp_path / "robot/r.urdf")
    assert "not found" in model.issues[0].message and "did you mean" not in model.issues[0].message


def test_the_search_for_close_files_is_bounded(tmp_path, monkeypatch):
    """A URDF in a large tree: the suggestion's walk reads at most packages._NEAR_ENTRIES folder
    entries (counted at os.scandir)."""
    for i in range(30):
        write(tmp_path, {f"big/d{i:02d}/f{j:03d}.obj": "" for j in range(100)})
    write(tmp_path, {"big/r.urdf": mesh_urdf("meshes/f007.obj")})
    seen = [0]
    real = os.scandir

    class Counting:
        def __init__(self, path):
            self.it = real(path)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.it.close()

        def __iter__(self):
            for entry in self.it:
                seen[0] += 1
                yield entry

    monkeypatch.setattr(packages.os, "scandir", Counting)
    model = simbench.RobotModel.from_urdf(tmp_path / "big/r.urdf")
    assert "not found" in model.issues[0].message
    assert 0 < seen[0] <= packages._NEAR_ENTRIES + 1


# ---------------------------------------------------------------------- a zero axis
def axis_urdf(jtype):
    return (f'<robot name="r"><link name="base">{INERT}</link><link name="arm">{INERT}</link>'
            f'<joint name="slide" type="{jtype}"><parent link="base"/><child link="arm"/><axis xyz="0 0 0"/>'
            '<limit lower="-1" upper="1" effort="10" velocity="1"/></joint></robot>')


ZERO = ("joint 'slide' <axis xyz=\"0 0 0\"/>: a zero axis; expected a non-zero direction, e.g. "
        "<axis xyz=\"0 0 1\"/> (URDF's default, without <axis>, is 1 0 0); "
        "PyBullet loads it without a warning and ")
NAN = "puts the link at NaN (its inverse dynamics fail)"
SAID = {"prismatic": "the joint never moves its link", "revolute": NAN, "continuous": NAN}


@pytest.mark.parametrize("jtype", sorted(SAID))
def test_zero_axis_says_what_is_expected_and_what_pybullet_does(tmp_path, direct_client, jtype):
    path = tmp_path / "r.urdf"
    path.write_text(axis_urdf(jtype))
    expected = f"{path}: {ZERO}{SAID[jtype]}"
    info = cli(["info", "r.urdf"], tmp_path)
    assert info.returncode == 2 and info.stderr == f"simbench info: error: {expected}\n", info.stderr
    with pytest.raises(URDFError) as err:
        simbench.RobotModel.from_urdf(path)
    assert str(err.value) == expected
    # oracle: PyBullet takes the file, and does what the message says
    body = p.loadURDF(str(path), useFixedBase=True, physicsClientId=direct_client)
    assert p.getJointInfo(body, 0, physicsClientId=direct_client)[13] == (0.0, 0.0, 0.0)
    if jtype == "prismatic":
        p.setJointMotorControl2(body, 0, p.VELOCITY_CONTROL, targetVelocity=1, force=100,
                                physicsClientId=direct_client)
        for _ in range(50):
            p.stepSimulation(physicsClientId=direct_client)
        assert p.getJointState(body, 0, physicsClientId=direct_client)[0] == 0.0
        assert p.getLinkState(body, 0, physicsClientId=direct_client)[4] == (0.0, 0.0, 0.0)
    else:
        assert all(math.isnan(v) for v in p.getLinkState(body, 0, physicsClientId=direct_client)[4])
        with pytest.raises(Exception):
            p.calculateInverseDynamics(body, [0.0], [0.0], [0.0], physicsClientId=direct_client)


def test_a_mimic_of_a_joint_the_file_lacks_says_so(tmp_path):
    """<mimic joint="finger1"> in a file whose joint is finger_1: the issue named the mimic
    only; now it says the file has no such joint and the closest one."""
    inertial = '<inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>'
    limit = '<axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="1" velocity="1"/>'
    (tmp_path / "m.urdf").write_text(
        f'<robot name="m"><link name="base"/><link name="a">{inertial}</link><link name="b">{inertial}</link>'
        f'<joint name="finger_1" type="revolute"><parent link="base"/><child link="a"/>{limit}</joint>'
        f'<joint name="finger_2" type="revolute"><parent link="base"/><child link="b"/>{limit}'
        f'<mimic joint="finger1"/></joint></robot>')
    from simbench.model import RobotModel

    issues = [i for i in RobotModel.from_urdf(str(tmp_path / "m.urdf")).issues if i.kind == "mimic_joint"]
    assert len(issues) == 1
    assert "mimics 'finger1' (a joint the file does not have; did you mean 'finger_1'?)" in issues[0].message


def test_a_link_nested_in_a_link_is_an_issue(tmp_path):
    """A <link> inside a <link> was dropped without a word ("issues: none"); PyBullet (the
    oracle) loads the file without it too: its link count excludes 'inner'."""
    import pybullet as p

    inertial = '<inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>'
    (tmp_path / "n.urdf").write_text(
        f'<robot name="n"><link name="base">{inertial}<link name="inner"/></link><link name="a">{inertial}</link>'
        '<joint name="j" type="revolute"><parent link="base"/><child link="a"/><axis xyz="0 1 0"/>'
        '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint></robot>')
    from simbench.model import RobotModel

    m = RobotModel.from_urdf(str(tmp_path / "n.urdf"))
    (issue,) = [i for i in m.issues if i.kind == "unknown_element"]
    assert issue.element == "link 'base'" and "<link name='inner'> inside <link> is ignored" in issue.message
    c = p.connect(p.DIRECT)
    try:
        body = p.loadURDF(str(tmp_path / "n.urdf"), physicsClientId=c)
        names = [p.getJointInfo(body, j, physicsClientId=c)[12].decode() for j in range(p.getNumJoints(body, physicsClientId=c))]
    finally:
        p.disconnect(physicsClientId=c)
    assert names == ["a"] and m.link_names == ("base", "a")
