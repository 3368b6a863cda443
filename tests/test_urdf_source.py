"""Reading URDF files the way PyBullet does: constructs PyBullet refuses (oracle: p.loadURDF),
package:// resolution (oracle: the files on disk and PyBullet's own collision shapes), xacro."""
import os
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pybullet as p
import pybullet_data
import pytest

from simbench._quiet import quiet_fds
from simbench.errors import MissingExtraError, SimbenchError, URDFError
from simbench.model import RobotModel
from simbench.packages import find_package
from simbench.paths import assets_dir
from simbench.urdf_source import load_source, source_from_string
from test_model import _corpus

ROS = assets_dir() / "ros"
DEMO = ROS / "simbench_demo_description"
ARM_WITH_TOOL = "simbench:ros/simbench_demo_description/urdf/arm_with_tool.urdf"
TOOL_PKG = ROS / "elsewhere" / "tool_pkg"
INERT = ('<inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" '
         'izz="0.1"/></inertial>')
LIMIT = '<limit lower="-1" upper="1" effort="1" velocity="1"/>'


def _robot(body, joint=LIMIT, jtype="revolute", name=' name="r"'):
    return (f'<robot{name}><link name="a">{INERT}</link><link name="b">{body}</link>'
            f'<joint name="j" type="{jtype}"><parent link="a"/><child link="b"/>'
            f'<axis xyz="0 0 1"/>{joint}</joint></robot>')


def _geo(inner, tag="collision"):
    return f"{INERT}<{tag}><geometry>{inner}</geometry></{tag}>"


# (case, URDF text, the issue kind we expect, or None when PyBullet loads the file)
VARIANTS = [
    ("sphere", _robot(_geo('<sphere radius="0.1"/>')), None),
    ("sphere without radius", _robot(_geo("<sphere/>")), "incomplete_geometry"),
    ("visual sphere without radius", _robot(_geo("<sphere/>", "visual")), "incomplete_geometry"),
    ("sphere radius empty", _robot(_geo('<sphere radius=""/>')), None),
    ("box without size", _robot(_geo("<box/>")), "incomplete_geometry"),
    ("cylinder without radius", _robot(_geo('<cylinder length="1"/>')), "incomplete_geometry"),
    ("cylinder without length", _robot(_geo('<cylinder radius="1"/>')), "incomplete_geometry"),
    ("capsule without length", _robot(_geo('<capsule radius="1"/>', "visual")), "incomplete_geometry"),
    ("capsule", _robot(_geo('<capsule radius="1" length="1"/>')), None),
    ("mesh without filename", _robot(_geo("<mesh/>")), "incomplete_geometry"),
    ("mesh filename empty", _robot(_geo('<mesh filename=""/>', "visual")), "incomplete_geometry"),
    ("mesh missing", _robot(_geo('<mesh filename="nope.obj"/>')), "missing_mesh"),
    ("visual mesh missing", _robot(_geo('<mesh filename="nope.obj"/>', "visual")), "missing_mesh"),
    ("package mesh missing", _robot(_geo('<mesh filename="package://nopkg/m.obj"/>')), "missing_mesh"),
    ("mesh obj", _robot(_geo('<mesh filename="m.obj"/>')), None),
    ("mesh STL upper case", _robot(_geo('<mesh filename="m.STL"/>')), None),
    ("mesh in folder above", _robot(_geo('<mesh filename="up.obj"/>')), None),
    ("mesh ply", _robot(_geo('<mesh filename="m.ply"/>')), "unsupported_mesh"),
    ("mesh without extension", _robot(_geo('<mesh filename="m"/>', "visual")), "unsupported_mesh"),
    ("geometry empty", _robot(_geo("")), "incomplete_geometry"),
    ("no geometry", _robot(INERT + "<visual></visual>"), "incomplete_geometry"),
    ("unknown shape", _robot(_geo('<cone radius="1"/>')), "incomplete_geometry"),
    ("comment before the shape", _robot(_geo('<!-- c --><sphere radius="1"/>')), None),
    ("inertial without mass", _robot('<inertial><inertia ixx="1" iyy="1" izz="1"/></inertial>'),
     "incomplete_inertial"),
    ("mass without value", _robot('<inertial><mass/><inertia ixx="1" iyy="1" izz="1"/></inertial>'),
     "incomplete_inertial"),
    ("inertial without inertia", _robot('<inertial><mass value="1"/></inertial>'), "incomplete_inertial"),
    ("inertia without iyy", _robot('<inertial><mass value="1"/><inertia ixx="1" izz="1"/></inertial>'),
     "incomplete_inertial"),
    ("inertia without ixy", _robot('<inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1"/>'
                                   '</inertial>'), None),
    ("revolute without limit", _robot(INERT, joint=""), "missing_limit"),
    ("prismatic without limit", _robot(INERT, joint="", jtype="prismatic"), "missing_limit"),
    ("continuous without limit", _robot(INERT, joint="", jtype="continuous"), None),
    ("limit without effort", _robot(INERT, joint='<limit lower="-1" upper="1" velocity="1"/>'), None),
    ("reversed limits", _robot(INERT, joint='<limit lower="1" upper="-1" effort="1" velocity="1"/>'),
     None),
    ("robot without name", _robot(INERT, name=""), "unnamed_robot"),
    ("robot name empty", _robot(INERT, name=' name=""'), None),
    ("missing texture", _robot(INERT + '<visual><geometry><sphere radius="1"/></geometry><material '
                               'name="m"><texture filename="nope.png"/></material></visual>'), None),
]


@pytest.fixture
def mesh_dir(tmp_path):
    sub = tmp_path / "robot"
    sub.mkdir()
    obj = "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 2 3\nf 1 2 4\nf 1 3 4\nf 2 3 4\n"
    for name in ("m.obj", "m.STL", "m.ply", "m"):
        (sub / name).write_text(obj)
    (tmp_path / "up.obj").write_text(obj)
    return sub


def test_issues_flag_exactly_the_files_pybullet_refuses(mesh_dir, direct_client):
    """Oracle: pybullet.loadURDF on each variant. A file with no refusal loads; a file with one
    is refused, and the issue names the construct."""
    compared = refused = 0
    for case, xml, kind in VARIANTS:
        f = mesh_dir / f"case{compared}.urdf"
        f.write_text(xml)
        try:
            with quiet_fds():
                p.loadURDF(str(f), physicsClientId=direct_client)
            loads = True
        except p.error:
            loads = False
        kinds = [i.kind for i in load_source(f).refusals]
        assert loads == (not kinds), (case, kinds)
        assert kinds == ([kind] if kind else []), case
        compared += 1
        refused += not loads
    assert (compared, refused) == (36, 23)


@pytest.mark.parametrize("case, xml", [
    ("joint without type", '<robot name="r"><link name="a"/><link name="b"/><joint name="j">'
                           '<parent link="a"/><child link="b"/></joint></robot>'),
    ("joint defined twice", '<robot name="r"><link name="a"/><link name="b"/><link name="c"/>'
                            '<joint name="j" type="fixed"><parent link="a"/><child link="b"/></joint>'
                            '<joint name="j" type="fixed"><parent link="b"/><child link="c"/></joint></robot>'),
    ("two roots", '<robot name="r"><link name="a"/><link name="b"/></robot>'),
    ("link with two parents", '<robot name="r"><link name="a"/><link name="b"/><link name="c"/>'
                              '<joint name="j1" type="fixed"><parent link="a"/><child link="c"/></joint>'
                              '<joint name="j2" type="fixed"><parent link="b"/><child link="c"/></joint></robot>'),
])
def test_trees_that_crash_pybullet_never_reach_it(tmp_path, case, xml):
    """Oracle: PyBullet itself, in a child process, dies of a segmentation fault on these files;
    load_source refuses them first, in one line naming the file and the element."""
    f = tmp_path / "crash.urdf"
    f.write_text(xml)
    code = f"import pybullet as p; p.connect(p.DIRECT); p.loadURDF({str(f)!r})"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60)
    assert proc.returncode == -11, case  # SIGSEGV
    with pytest.raises(URDFError, match=rf"^{f}: (joint|link|2 root)") as err:
        load_source(f)
    assert "\n" not in str(err.value)


def test_every_pybullet_data_file_without_refusals_loads_in_pybullet(direct_client):
    """Oracle: pybullet.loadURDF over every distinct URDF bundled with PyBullet: a file we read
    without refusals is one PyBullet loads; a file PyBullet refuses is one we refuse."""
    clean, refused = 0, []
    for path in _corpus():
        try:
            src = load_source(path)
        except URDFError:
            continue  # a broken tree: never given to PyBullet
        p.resetSimulation(physicsClientId=direct_client)
        try:
            with quiet_fds():
                p.loadURDF(path, physicsClientId=direct_client)
            loads = True
        except p.error:
            loads = False
        assert loads == (not src.refusals), (path, src.refusals)
        clean += loads
        if not loads:
            refused.append((os.path.relpath(path, pybullet_data.getDataPath()), src.refusals[0].kind))
    assert clean > 1000
    # both name meshes that are not there (a .cdf file, and meshes/coarse/ of the iiwa)
    assert sorted(refused) == [("kuka_iiwa/model_for_sdf.urdf", "missing_mesh"),
                               ("toys/concave_box.urdf", "missing_mesh")]


# ---------------------------------------------------------------------- package://
def test_missing_package_mesh_is_named_with_where_it_was_looked_for(monkeypatch):
    monkeypatch.delenv("ROS_PACKAGE_PATH", raising=False)
    monkeypatch.delenv("AMENT_PREFIX_PATH", raising=False)
    model = RobotModel.from_urdf(ARM_WITH_TOOL)
    (issue,) = model.issues
    assert issue.kind == "missing_mesh" and issue.refused_by_pybullet
    assert issue.element == "link 'tool'" and issue.data["uri"] == "package://simbench_tool/meshes/tool.stl"
    assert "ROS_PACKAGE_PATH (unset)" in issue.message and "--package simbench_tool=DIR" in issue.message
    with pytest.raises(URDFError, match=r"arm_with_tool.urdf: link 'tool': <visual>, <collision> mesh "
                                        r"'package://simbench_tool/meshes/tool.stl' not found"):
        load_source(ARM_WITH_TOOL).pybullet_path()


def _tool_aabb_width(path):
    """Width along x of the tool link's collision AABB, from PyBullet loading ``path``."""
    client = p.connect(p.DIRECT)
    try:
        with quiet_fds():
            body = p.loadURDF(str(path), useFixedBase=True, physicsClientId=client)
        tool = [j for j in range(p.getNumJoints(body, physicsClientId=client))
                if p.getJointInfo(body, j, physicsClientId=client)[12] == b"tool"][0]
        shape = p.getCollisionShapeData(body, tool, physicsClientId=client)[0]
        lo, hi = p.getAABB(body, tool, physicsClientId=client)
        return shape[4].decode(), hi[0] - lo[0]
    finally:
        p.disconnect(client)


@pytest.mark.parametrize("how", ["ROS_PACKAGE_PATH", "AMENT_PREFIX_PATH", "package_map"])
def test_package_found_and_pybullet_loads_the_resolved_copy(tmp_path, monkeypatch, how):
    """Oracle: PyBullet's collision shape of the tool is the package's mesh file, and its AABB is
    the 0.08 m box that file holds (plus PyBullet's collision margin)."""
    monkeypatch.delenv("ROS_PACKAGE_PATH", raising=False)
    monkeypatch.delenv("AMENT_PREFIX_PATH", raising=False)
    kwargs = {}
    if how == "ROS_PACKAGE_PATH":
        monkeypatch.setenv("ROS_PACKAGE_PATH", f"{tmp_path}{os.pathsep}{ROS / 'elsewhere'}")
    elif how == "AMENT_PREFIX_PATH":
        shutil.copytree(TOOL_PKG, tmp_path / "share" / "simbench_tool")
        monkeypatch.setenv("AMENT_PREFIX_PATH", str(tmp_path))
    else:
        kwargs["package_map"] = {"simbench_tool": TOOL_PKG}
    src = load_source(ARM_WITH_TOOL, **kwargs)
    assert src.refusals == () and RobotModel.from_urdf(ARM_WITH_TOOL, **kwargs).issues == ()
    path = src.pybullet_path()
    assert path != src.path and path.parent.name == "urdf"  # a resolved copy in the cache
    mesh, width = _tool_aabb_width(path)
    expected = (tmp_path / "share" / "simbench_tool" if how == "AMENT_PREFIX_PATH" else TOOL_PKG)
    assert os.path.samefile(mesh, expected / "meshes" / "tool.stl")
    assert 0.08 <= width <= 0.08 + 2 * 0.02


def test_ancestors_find_a_package_by_folder_name_and_by_package_xml(tmp_path, monkeypatch):
    monkeypatch.delenv("ROS_PACKAGE_PATH", raising=False)
    # a workspace: src/simbench_tool (folder named after the package), src/demo/urdf/arm.urdf
    ws = tmp_path / "ws" / "src"
    shutil.copytree(TOOL_PKG, ws / "simbench_tool")
    shutil.copytree(DEMO, ws / "demo")
    urdf = ws / "demo" / "urdf" / "arm_with_tool.urdf"
    assert load_source(urdf).refusals == ()
    # the package.xml of the URDF's own folder names the package (its folder is named otherwise)
    roots, _ = find_package("simbench_demo_description", near=urdf)
    assert roots == [(ws / "demo").resolve()]
    # an explicit map wins over everything else
    roots, _ = find_package("simbench_tool", package_map={"simbench_tool": TOOL_PKG}, near=urdf)
    assert roots[0] == TOOL_PKG.resolve() and (ws / "simbench_tool").resolve() in roots


def test_plain_urdf_is_given_to_pybullet_as_it_is():
    src = load_source("simbench:planar_2r.urdf")
    assert src.pybullet_path() == src.path


# ---------------------------------------------------------------------- xacro
XACRO = "simbench:ros/simbench_demo_description/urdf/arm.urdf.xacro"


def test_xacro_expands_to_the_plain_urdf_with_a_prefix(direct_client):
    """Oracle: the hand-written arm.urdf of the same package (same inertias and joints), and
    PyBullet's joint names for the expanded copy."""
    plain = RobotModel.from_urdf(DEMO / "urdf" / "arm.urdf")
    model = RobotModel.from_urdf(XACRO, xacro_args={"prefix": "left_"})
    assert model.link_names == tuple("left_" + n for n in plain.link_names)
    np.testing.assert_array_equal(model.link_mass, plain.link_mass)
    np.testing.assert_array_equal(model.joint_origin, plain.joint_origin)
    assert [i.kind for i in model.issues] == ["xacro_input"] and "prefix:=left_" in model.issues[0].message
    path = load_source(XACRO, xacro_args=["prefix:=left_"]).pybullet_path()
    body = p.loadURDF(str(path), physicsClientId=direct_client)
    names = [p.getJointInfo(body, j, physicsClientId=direct_client)[1].decode()
             for j in range(p.getNumJoints(body, physicsClientId=direct_client))]
    assert names == list(model.joint_all_names) == ["left_joint1", "left_joint2"]
    other = load_source(XACRO, xacro_args={"prefix": "right_"}).pybullet_path()
    assert other != path  # a copy per content: PyBullet caches paths


def test_xacro_errors_are_one_line(tmp_path, monkeypatch):
    f = tmp_path / "r.urdf.xacro"
    f.write_text('<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro">'
                 '<link name="$(arg base)"/></robot>')
    with pytest.raises(URDFError, match=r"r.urdf.xacro: xacro cannot expand the file: .*base.*"
                                        r"--xacro-arg NAME:=VALUE"):
        load_source(f)
    assert RobotModel.from_urdf(f, xacro_args=["base:=b0"]).link_names == ("b0",)
    with pytest.raises(SimbenchError, match=r"xacro argument 'base=b0': expected NAME:=VALUE"):
        load_source(f, xacro_args=["base=b0"])
    monkeypatch.setitem(sys.modules, "xacro", None)  # as if the extra were not installed
    with pytest.raises(MissingExtraError, match=r"r.urdf.xacro is a xacro file; expanding it needs "
                                                r"xacro, which is not installed; install the 'xacro' "
                                                r"extra: pip install 'simbench\[xacro\]'"):
        load_source(f)


def test_a_urdf_using_xacro_elements_is_expanded_and_reported(tmp_path):
    f = tmp_path / "looks_plain.urdf"
    f.write_text(textwrap.dedent("""\
        <robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro">
          <xacro:property name="n" value="a"/>
          <link name="${n}"/>
        </robot>"""))
    model = RobotModel.from_urdf(f)
    assert model.link_names == ("a",) and [i.kind for i in model.issues] == ["xacro_input"]


# ---------------------------------------------------------------------- the ROS example, end to end
def _cli(args, cwd, **env):
    full = {k: v for k, v in os.environ.items() if k not in ("ROS_PACKAGE_PATH", "AMENT_PREFIX_PATH")}
    full.update(env)
    return subprocess.run([sys.executable, "-m", "simbench", *args], cwd=cwd, env=full, capture_output=True,
                          text=True, timeout=600)


def test_ros_example_loads_in_info_a_scene_and_check_with_ros_package_path(tmp_path):
    """The same file with and without ROS_PACKAGE_PATH, as a user runs it from another folder.
    Oracle: PyBullet, through ``simbench check`` (it loads the resolved copy and compares our model
    of the file and of the scene body, wall-mounted and scaled, with calculateInverseDynamics)."""
    scene = tmp_path / "scene.toml"
    scene.write_text(f'[[body]]\nname = "arm"\nurdf = "{ARM_WITH_TOOL}"\nfixed_base = true\n'
                     'orientation = [1.5707963267948966, 0, 0]\nscale = 2.0\n')
    env = {"ROS_PACKAGE_PATH": str(ROS / "elsewhere")}
    info = _cli(["info", ARM_WITH_TOOL], tmp_path, **env)
    assert info.returncode == 0 and info.stdout.rstrip().endswith("issues: none"), info.stdout + info.stderr
    check = _cli(["check", ARM_WITH_TOOL, "scene.toml", "--samples", "5"], tmp_path, **env)
    assert check.returncode == 0, check.stdout + check.stderr
    lines = check.stdout.splitlines()
    assert lines[0].startswith("PASS      " + ARM_WITH_TOOL)
    assert lines[1].startswith("EXPLAINED scene.toml:arm") and "base_orientation_ignored" in lines[1]
    assert "2 robots: 1 PASS, 1 EXPLAINED, 0 FAIL" in check.stdout
    view = _cli(["view", "scene.toml", "--direct", "--out", "v.png"], tmp_path, **env)  # the scene loads
    assert view.returncode == 0 and "robot 'demo_arm_with_tool'" in view.stdout, view.stderr
    assert (tmp_path / "v.png").stat().st_size > 1000
    # --package instead of the environment, for every command that loads URDF files
    package = ["--package", f"simbench_tool={TOOL_PKG}"]
    for args in (["info", ARM_WITH_TOOL], ["check", "scene.toml", "--samples", "2"],
                 ["view", "scene.toml", "--direct", "--out", "w.png"]):
        proc = _cli([*args, *package], tmp_path)
        assert proc.returncode == 0, (args, proc.stderr)
    # without it: info names the missing mesh, check skips the file with that line, the scene is refused
    info = _cli(["info", ARM_WITH_TOOL], tmp_path)
    assert info.returncode == 0
    assert ("missing_mesh: link 'tool': <visual>, <collision> mesh 'package://simbench_tool/meshes/tool.stl' "
            "not found: package 'simbench_tool' is in none of") in info.stdout
    check = _cli(["check", ARM_WITH_TOOL, "--samples", "2"], tmp_path)
    assert check.returncode == 1 and check.stdout.startswith("SKIPPED")
    assert "mesh 'package://simbench_tool/meshes/tool.stl' not found" in check.stdout.splitlines()[0]
    assert "nothing was compared" in check.stdout
    check = _cli(["check", "scene.toml"], tmp_path)
    assert check.returncode == 2 and len(check.stderr.strip().splitlines()) == 1
    assert "body 'arm'" in check.stderr and "simbench_tool/meshes/tool.stl' not found" in check.stderr


def test_scene_model_applies_xacro_args_orientation_and_scale(direct_client):
    """LoadedBody.model of a xacro body: the arguments (oracle: PyBullet's joint names of the
    loaded body), gravity R^T g of the loaded base orientation (oracle: PyBullet's base
    orientation) and scale (oracle: PyBullet's joint frame positions)."""
    from simbench.bullet.scene import Scene

    scene = Scene.from_dict({"body": [{"name": "arm", "urdf": XACRO, "xacro_args": {"prefix": "left_"},
                                       "fixed_base": True, "orientation": [0.0, 3.141592653589793, 0.0],
                                       "scale": 2.0}]})
    loaded = scene.load(direct_client)
    body = loaded.body("arm")
    model = body.model
    names = [p.getJointInfo(body.id, j, physicsClientId=direct_client)[1].decode()
             for j in range(p.getNumJoints(body.id, physicsClientId=direct_client))]
    assert list(model.joint_all_names) == names == ["left_joint1", "left_joint2"]
    _, orn = p.getBasePositionAndOrientation(body.id, physicsClientId=direct_client)
    R = np.array(p.getMatrixFromQuaternion(orn)).reshape(3, 3)
    np.testing.assert_allclose(model.gravity, R.T @ np.array([0, 0, -9.81]), atol=1e-12)
    assert model.gravity[2] > 9.8  # upside down: gravity points up the base's z axis
    # PyBullet's joint frame position is relative to the parent link's inertial frame (its COM)
    parent = [p.getJointInfo(body.id, j, physicsClientId=direct_client)[14] for j in range(2)]
    ours = [model.joint_origin[j][:3, 3] - model.link_inertial_origin[int(model.link_parent[j + 1])][:3, 3]
            for j in range(2)]
    np.testing.assert_allclose(ours, parent, atol=1e-6)
    assert abs(ours[1][2] - 2 * (0.4 - 0.2)) < 1e-12  # scaled: joint at 0.4 m, link COM at 0.2 m, times 2


# ---------------------------------------------------------------------- misspelled tags
PLANAR = assets_dir() / "urdf" / "planar_2r.urdf"
LINK1_INERTIAL = ('<inertial>\n      <origin xyz="0.6 0 0"/>\n      <mass value="1.2"/>\n      <inertia '
                  'ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/>\n    </inertial>')
MISSPELLED = [  # (old, new, the issue naming the misspelling)
    ('<origin xyz="0.6 0 0" rpy="0 0 0"/>', '<orign xyz="0.6 0 0" rpy="0 0 0"/>',
     "unknown_element: joint 'theta2': <orign> is not a URDF element of <joint>; did you mean <origin>?"),
    (LINK1_INERTIAL, LINK1_INERTIAL.replace("<inertial>", "<inertal>").replace("</inertial>", "</inertal>"),
     "unknown_element: link 'link1': <inertal> is not a URDF element of <link>; did you mean <inertial>?"),
    ('<mass value="1.2"/>', '<mass vaue="1.2"/>',
     "unknown_attribute: link 'link1': <mass vaue=...>: expected value"),
]


def _unknown(issues):
    return [str(i) for i in issues if i.kind in ("unknown_element", "unknown_attribute")]


@pytest.mark.parametrize("old, new, expected", MISSPELLED)
def test_misspelled_tag_or_attribute_is_named_with_a_suggestion(tmp_path, old, new, expected):
    """A misspelled element or attribute was silently ignored (by PyBullet and by us): the joint
    sat at its parent's origin. Now an issue names it and the spec's name, in `simbench info` too."""
    text = PLANAR.read_text()
    assert text.count(old) == 1
    f = tmp_path / "planar_2r.urdf"
    f.write_text(text.replace(old, new))
    model = RobotModel.from_urdf(str(f))
    assert _unknown(model.issues) == [expected]
    assert "\n" not in expected
    proc = subprocess.run([os.path.join(os.path.dirname(sys.executable), "simbench"), "info", str(f)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and f"    - {expected}\n" in proc.stdout, proc.stdout + proc.stderr


def test_unknown_names_in_strict_elements_and_extensions(tmp_path):
    """Inside <inertial>, <origin>, <axis>, <limit>... any unknown name is reported; elsewhere only a
    near-miss of a spec name; namespaced names, <gazebo>/<transmission> blocks and PyBullet's
    <contact> parameters never."""
    body = (INERT.replace('<mass value="1"/>', '<mass value="1"/><com xyz="0 0 0"/>')
            + '<contact><lateral_friction value="1"/><rolling_friction value="0.1"/></contact>'
            + '<visual><origin xyz="0 0 0" foo="1"/><geometry><box size="1 1 1"/></geometry>'
            + '<material name="m"><colour rgba="1 0 0 1"/></material></visual>')
    xml = _robot(body).replace('<robot name="r">', '<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro">')
    xml = xml.replace("</robot>", '<gazebo reference="b"><mu1>0.2</mu1><orign/></gazebo><transmission '
                      'name="t"><type>x</type></transmission><my_tool/><xacro:property name="p" value="1"/>'
                      '</robot>')
    issues = _unknown(source_from_string(xml, base_dir=tmp_path).issues)
    assert issues == ["unknown_element: link 'b': <com> is not a URDF element of <inertial>; expected "
                      "<origin>, <mass>, <inertia>",
                      "unknown_attribute: link 'b': <origin foo=...>: expected xyz, rpy",
                      "unknown_element: link 'b': <colour> is not a URDF element of <material>; did you "
                      "mean <color>?"]


def test_no_unknown_names_in_the_corpus():
    """False positives: every distinct URDF bundled with PyBullet or simbench that we can read
    has no unknown_element or unknown_attribute issue (measured: 1093 + 21 files, none)."""
    counts, flagged = [0, 0], []
    for k, paths in enumerate((_corpus(), sorted(map(str, assets_dir().rglob("*.urdf"))))):
        for path in paths:
            try:
                src = load_source(path)
            except URDFError:
                continue  # a broken tree
            counts[k] += 1
            flagged += [(path, i) for i in _unknown(src.issues)]
    assert flagged == []
    assert counts == [1093, 21]
    assert _unknown(load_source(PLANAR).issues) == []
