"""Bad inputs, each driven through the command line (a child process) and the API.

For every case: the command exits with status 2 and writes exactly one line to stderr, without a
traceback, in the form ``simbench CMD: error: ...``; the API raises a SimbenchError whose message
is that same kind of line; and both name the bad value (``bad``) and what was expected
(``expected``).

Adding a case is one line in CASES: ``C(id, route, files, bad, expected)``. A route is the pair
(command-line arguments, API expression), evaluated in a fresh folder holding ``files`` plus
``ok.urdf`` (a valid two-link robot) and ``script.py`` (a scenario that does nothing).
"""
import os
import subprocess
import sys
import textwrap
from typing import NamedTuple

import pytest

from simbench.bullet.scene import Scene
from simbench.errors import SimbenchError
from simbench.model import RobotModel
from simbench.outputs import writable_dir, writable_file
from simbench.urdf_source import load_source

INERT = '<inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial>'
LIMIT = '<limit lower="-1" upper="1" effort="1" velocity="1"/>'


def urdf(b="", joint=LIMIT, jtype="revolute", robot='name="r"', extra=""):
    """A two-link robot (links a, b; joint j), with ``b`` inside link b's element."""
    return (f'<robot {robot}><link name="a">{INERT}</link><link name="b">{INERT}{b}</link>'
            f'<joint name="j" type="{jtype}"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/>'
            f'{joint}</joint>{extra}</robot>')


def geo(shape):
    return f"<collision><geometry>{shape}</geometry></collision>"


def tree(links, joints):
    """A robot from link names and (joint, parent, child) triples (fixed joints)."""
    return ('<robot name="t">' + "".join(f'<link name="{n}"/>' for n in links) + "".join(
        f'<joint name="{j}" type="fixed"><parent link="{a}"/><child link="{c}"/></joint>'
        for j, a, c in joints) + "</robot>")


def scene(body="", top=""):
    """A scene with one body (ok.urdf) and ``body`` lines added to it."""
    return f'{top}\n[[body]]\nname = "robot"\nurdf = "ok.urdf"\n{body}\n'


XACRO = ('<robot name="x" xmlns:xacro="http://www.ros.org/wiki/xacro">'
         '<link name="$(arg base)"/></robot>')
XACRO_FIND = ('<robot name="x" xmlns:xacro="http://www.ros.org/wiki/xacro">'
              '<link name="a"><visual><geometry><mesh filename="$(find nopkg)/m.stl"/></geometry>'
              '</visual></link></robot>')

# routes: (command-line arguments, API expression)
INFO = (["info", "bad.urdf"], "RobotModel.from_urdf('bad.urdf')")
BODY = (["run", "script.py", "--scene", "bad.urdf"],
        "Scene.from_dict({'body': [{'name': 'robot', 'urdf': 'bad.urdf'}]})")
SCENE = (["run", "script.py", "--scene", "scene.toml"], "Scene.from_toml('scene.toml')")
XINFO = (["info", "x.urdf.xacro"], "RobotModel.from_urdf('x.urdf.xacro')")


def info(*argv, api):
    return (["info", *argv], api)


class C(NamedTuple):
    id: str
    route: tuple
    files: dict
    bad: str
    expected: str
    hide: tuple = ()   # modules made unimportable (a missing extra)


CASES = [
    # ---- URDF files: finding and reading them
    C("urdf-missing", info("nope.urdf", api="RobotModel.from_urdf('nope.urdf')"), {}, "'nope.urdf'", "not found"),
    C("urdf-pybullet-data-missing", info("pybullet_data:kuka.urdf", api="RobotModel.from_urdf('pybullet_data:kuka.urdf')"), {}, "'pybullet_data:kuka.urdf'", "looked in"),
    C("urdf-simbench-missing", info("simbench:nope.urdf", api="RobotModel.from_urdf('simbench:nope.urdf')"), {}, "'simbench:nope.urdf'", "looked in"),
    C("urdf-is-a-folder", info("sub", api="RobotModel.from_urdf('sub')"), {"sub/x": ""}, "'sub' is a folder", "expected a file"),
    C("urdf-empty-file", INFO, {"bad.urdf": ""}, "bad.urdf", "malformed XML"),
    C("urdf-malformed", INFO, {"bad.urdf": '<robot name="r"><link name="a"></robot>'}, "bad.urdf", "malformed XML"),
    C("urdf-root-element", INFO, {"bad.urdf": '<rob name="r"><link name="a"/></rob>'}, "<rob>", "expected <robot>"),
    C("urdf-no-links", INFO, {"bad.urdf": '<robot name="r"/>'}, "no <link>", "the robot has"),
    C("urdf-link-without-name", INFO, {"bad.urdf": '<robot name="r"><link/></robot>'}, "<link> element (line 1)", "has no name"),
    C("urdf-link-twice", INFO, {"bad.urdf": tree(["a", "a"], [])}, "link 'a'", "defined twice"),
    C("urdf-joint-twice", INFO, {"bad.urdf": tree("abc", [("j", "a", "b"), ("j", "b", "c")])}, "joint 'j'", "defined twice"),
    C("urdf-joint-type-unknown", INFO, {"bad.urdf": urdf(jtype="hinge")}, "'hinge'", "expected one of revolute"),
    C("urdf-joint-without-type", INFO, {"bad.urdf": urdf().replace(' type="revolute"', "")}, "type None", "expected one of revolute"),
    C("urdf-joint-unknown-link", INFO, {"bad.urdf": tree(["base", "upper_arm"], [("j", "base", "uper_arm")])}, "'uper_arm'", "did you mean 'upper_arm'"),
    C("urdf-joint-without-parent", INFO, {"bad.urdf": urdf().replace('<parent link="a"/>', "")}, "joint 'j'", "no <parent link=...>"),
    C("urdf-two-roots", INFO, {"bad.urdf": tree("ab", [])}, "2 root links ['a', 'b']", "exactly one"),
    C("urdf-two-parents", INFO, {"bad.urdf": tree("abc", [("j1", "a", "c"), ("j2", "b", "c")])}, "link 'c'", "a URDF must be a tree"),
    C("urdf-cycle", INFO, {"bad.urdf": tree("abc", [("j1", "b", "c"), ("j2", "c", "b")])}, "links ['b', 'c']", "not reachable from the root 'a'"),
    C("urdf-bad-number", INFO, {"bad.urdf": urdf(joint=LIMIT.replace('lower="-1"', 'lower="abc"'))}, "lower='abc'", "expected 1 finite number"),
    C("urdf-short-vector", INFO, {"bad.urdf": urdf(b='<visual><origin xyz="1 2"/><geometry><sphere radius="1"/></geometry></visual>').replace("<axis xyz=\"0 0 1\"/>", '<axis xyz="0 1"/>')}, "xyz='0 1'", "expected 3 finite numbers"),
    C("urdf-infinite-mass", INFO, {"bad.urdf": urdf().replace('<mass value="1"/>', '<mass value="inf"/>', 1)}, "value='inf'", "expected 1 finite number"),
    # ---- xacro and packages on the command line
    C("xacro-undefined-arg", XINFO, {"x.urdf.xacro": XACRO}, "base", "--xacro-arg NAME:=VALUE"),
    C("xacro-arg-format", info("x.urdf.xacro", "--xacro-arg", "base=b0", api="RobotModel.from_urdf('x.urdf.xacro', xacro_args=['base=b0'])"), {"x.urdf.xacro": XACRO}, "'base=b0'", "expected NAME:=VALUE"),
    C("xacro-arg-for-plain-urdf", info("ok.urdf", "--xacro-arg", "a:=1", api="RobotModel.from_urdf('ok.urdf', xacro_args=['a:=1'])"), {}, "a:=1", "not xacro"),
    C("xacro-find-unknown-package", XINFO, {"x.urdf.xacro": XACRO_FIND}, "$(find nopkg)", "--package nopkg=DIR"),
    C("xacro-malformed", XINFO, {"x.urdf.xacro": "<robot><link"}, "x.urdf.xacro", "xacro cannot expand the file"),
    C("xacro-extra-missing", XINFO, {"x.urdf.xacro": XACRO}, "xacro", "pip install 'simbench[xacro]'", hide=("xacro",)),
    C("package-option-format", info("ok.urdf", "--package", "foo", api="load_source('ok.urdf', package_map=['foo'])"), {}, "'foo'", "expected NAME=DIR"),
    C("package-option-folder", info("ok.urdf", "--package", "foo=nowhere", api="load_source('ok.urdf', package_map={'foo': 'nowhere'})"), {}, "'nowhere' does not exist", "expected the folder"),
    C("package-option-name", info("ok.urdf", "--package", "a b=.", api="load_source('ok.urdf', package_map={'a b': '.'})"), {}, "'a b'", "expected letters, digits"),
    # ---- files PyBullet would refuse: loading them into a server fails in one line
    C("body-sphere-without-radius", BODY, {"bad.urdf": urdf(geo("<sphere/>"))}, "<sphere> without radius", "PyBullet cannot load this file"),
    C("body-box-without-size", BODY, {"bad.urdf": urdf(geo("<box/>"))}, "<box> without size", "PyBullet cannot load this file"),
    C("body-mesh-without-filename", BODY, {"bad.urdf": urdf(geo("<mesh/>"))}, "<mesh> without filename", "PyBullet cannot load this file"),
    C("body-mesh-missing", BODY, {"bad.urdf": urdf(geo('<mesh filename="meshes/nope.stl"/>'))}, "'meshes/nope.stl' not found", "tried"),
    C("body-package-mesh-missing", BODY, {"bad.urdf": urdf(geo('<mesh filename="package://nopkg/m.stl"/>'))}, "'package://nopkg/m.stl'", "--package nopkg=DIR"),
    C("body-mesh-format", BODY, {"bad.urdf": urdf(geo('<mesh filename="m.ply"/>')), "m.ply": "ply"}, "'m.ply' is a .ply file", "PyBullet reads .obj"),
    C("body-unknown-shape", BODY, {"bad.urdf": urdf(geo('<cone radius="1"/>'))}, "<cone>", "expected one of <sphere>"),
    C("body-inertial-without-inertia", BODY, {"bad.urdf": urdf().replace(INERT, '<inertial><mass value="1"/></inertial>', 1)}, "<inertial> without <inertia>", "PyBullet cannot load"),
    C("body-revolute-without-limit", BODY, {"bad.urdf": urdf(joint="")}, "joint 'j'", "needs <limit"),
    C("body-robot-without-name", BODY, {"bad.urdf": urdf(robot="")}, "<robot> has no name attribute", "PyBullet cannot load"),
    # ---- scene files
    C("scene-missing", (["run", "script.py", "--scene", "nope.toml"], "Scene.from_toml('nope.toml')"), {}, "nope.toml'", "scene file not found"),
    C("scene-not-toml", SCENE, {"scene.toml": "[[body]\nname = 1"}, "scene.toml", "not valid TOML"),
    C("scene-no-bodies", SCENE, {"scene.toml": "gravity = [0, 0, -9.81]"}, "[[body]]", "the scene has no"),
    C("scene-fixed-base-string", SCENE, {"scene.toml": scene('fixed_base = "no"')}, "fixed_base = 'no'", "a TOML boolean (true or false)"),
    C("scene-self-collision-string", SCENE, {"scene.toml": scene('self_collision = "false"')}, "self_collision = 'false'", "a TOML boolean"),
    C("scene-fixed-base-number", SCENE, {"scene.toml": scene("fixed_base = 1")}, "fixed_base = 1", "a TOML boolean"),
    C("scene-scale-zero", SCENE, {"scene.toml": scene("scale = 0")}, "scale = 0", "a finite number > 0"),
    C("scene-scale-negative", SCENE, {"scene.toml": scene("scale = -1")}, "scale = -1", "a finite number > 0"),
    C("scene-scale-string", SCENE, {"scene.toml": scene('scale = "big"')}, "scale = 'big'", "a finite number > 0"),
    C("scene-scale-infinite", SCENE, {"scene.toml": scene("scale = inf")}, "scale = inf", "a finite number > 0"),
    C("scene-position-length", SCENE, {"scene.toml": scene("position = [1, 2]")}, "position = [1, 2]", "3 finite numbers"),
    C("scene-position-string", SCENE, {"scene.toml": scene('position = "0 0 0"')}, "position = '0 0 0'", "3 finite numbers"),
    C("scene-orientation-length", SCENE, {"scene.toml": scene("orientation = [0, 0]")}, "orientation = [0, 0]", "3 finite numbers or 4 finite numbers"),
    C("scene-orientation-zero-quaternion", SCENE, {"scene.toml": scene("orientation = [0, 0, 0, 0]")}, "orientation = [0.0, 0.0, 0.0, 0.0]", "a non-zero quaternion"),
    C("scene-gravity-length", SCENE, {"scene.toml": scene(top="gravity = [0, -9.81]")}, "gravity = [0, -9.81]", "3 finite numbers"),
    C("scene-unknown-body-key", SCENE, {"scene.toml": scene("positon = [0, 0, 1]")}, "'positon'", "did you mean 'position'?"),
    C("scene-unknown-scene-key", SCENE, {"scene.toml": scene(top="gravty = [0, 0, -1]")}, "'gravty'", "did you mean 'gravity'?"),
    C("scene-robot-case", SCENE, {"scene.toml": scene(top='robot = "ROBOT"')}, "'ROBOT'", "did you mean 'robot'?"),
    C("scene-duplicate-names", SCENE, {"scene.toml": scene() + scene()}, "['robot']", "body names must be unique"),
    C("scene-body-without-urdf", SCENE, {"scene.toml": '[[body]]\nname = "robot"'}, "'urdf'", "missing"),
    C("scene-body-name-empty", SCENE, {"scene.toml": '[[body]]\nname = ""\nurdf = "ok.urdf"'}, "name = ''", "a non-empty string"),
    C("scene-body-urdf-missing", SCENE, {"scene.toml": '[[body]]\nname = "robot"\nurdf = "nope.urdf"'}, "'nope.urdf'", "not found"),
    C("scene-joint-value", SCENE, {"scene.toml": scene("joints = { j = 'up' }")}, "joints = {'j': 'up'}", "a table of name = number"),
    C("scene-collision-group-float", SCENE, {"scene.toml": scene("collision_group = 1.5")}, "collision_group = 1.5", "an integer"),
    C("scene-collision-mask-range", SCENE, {"scene.toml": scene("collision_mask = 4294967296")}, "collision_mask = 4294967296", "an integer from"),
    C("scene-package-map-folder", SCENE, {"scene.toml": scene(top='package_map = { foo = "nowhere" }')}, "'nowhere' does not exist", "expected the folder"),
    C("scene-xacro-args-plain-urdf", SCENE, {"scene.toml": scene('xacro_args = { a = 1 }')}, "a:=1", "not xacro"),
    # ---- output paths, checked before the work
    C("demo-out-is-a-file", (["demo", "--direct", "--out", "ok.urdf"], "writable_dir('ok.urdf', '--out folder')"), {}, "'ok.urdf' is a file", "expected a folder"),
    C("demo-out-cannot-be-created", (["demo", "--direct", "--out", "ok.urdf/sub"], "writable_dir('ok.urdf/sub', '--out folder')"), {}, "'ok.urdf/sub'", "expected a folder you can write to"),
    C("check-json-in-proc", (["check", "ok.urdf", "--json", "/proc/x.json"], "writable_file('/proc/x.json', '--json file')"), {}, "'/proc'", "expected a folder you can write to"),
    C("bench-json-in-proc", (["bench", "--quick", "--json", "/proc/b.json"], "writable_file('/proc/b.json', '--json report')"), {}, "'/proc'", "expected a folder you can write to"),
    C("bench-robot-unknown", (["bench", "--quick", "--robot", "kukka_iiwa"], ""), {}, "'kukka_iiwa'", "did you mean 'kuka_iiwa'"),
]

OK_URDF = urdf()
SCRIPT = "def main(sim):\n    pass\n"
LAUNCH = textwrap.dedent("""\
    import sys
    for name in {hide!r}:
        sys.modules[name] = None
    from simbench.cli import main
    sys.exit(main({argv!r}))
""")


def _folder(tmp_path, case):
    for name, text in {"ok.urdf": OK_URDF, "script.py": SCRIPT, **case.files}.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def _env():
    env = {k: v for k, v in os.environ.items() if k not in ("ROS_PACKAGE_PATH", "AMENT_PREFIX_PATH")}
    env.pop("DISPLAY", None)
    return env


def test_the_table_is_large_and_its_ids_unique():
    assert len(CASES) >= 60 and len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_command_line_prints_one_line_and_exits_2(tmp_path, case):
    folder = _folder(tmp_path, case)
    argv = case.route[0]
    proc = subprocess.run([sys.executable, "-c", LAUNCH.format(hide=case.hide, argv=argv)], cwd=folder,
                          capture_output=True, text=True, timeout=180, env=_env())
    lines = proc.stderr.splitlines()
    assert proc.returncode == 2, proc.stderr
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert lines[0].startswith(f"simbench {argv[0]}: error: "), lines[0]
    assert case.bad in lines[0] and case.expected in lines[0], lines[0]


@pytest.mark.parametrize("case", [c for c in CASES if c.route[1]], ids=[c.id for c in CASES if c.route[1]])
def test_api_raises_one_line_simbench_error(tmp_path, monkeypatch, case):
    folder = _folder(tmp_path, case)
    monkeypatch.chdir(folder)
    for name in ("ROS_PACKAGE_PATH", "AMENT_PREFIX_PATH"):
        monkeypatch.delenv(name, raising=False)
    for name in case.hide:
        monkeypatch.setitem(sys.modules, name, None)
    names = {"RobotModel": RobotModel, "Scene": Scene, "load_source": load_source, "writable_dir": writable_dir,
             "writable_file": writable_file}
    with pytest.raises(SimbenchError) as err:
        eval(case.route[1], names)
    message = str(err.value)
    assert "\n" not in message
    assert case.bad in message and case.expected in message, message


def test_output_checks_try_for_real_and_leave_nothing_behind(tmp_path):
    """/proc passes the permission bits for root but refuses new files; a good folder is left
    as it was, and an existing file keeps its content and modification time."""
    with pytest.raises(SimbenchError, match="'/proc' is not writable"):
        writable_file("/proc/x.json", "--json file")
    out = writable_file(tmp_path / "sub" / "r.json")
    assert out.parent.is_dir() and list(out.parent.iterdir()) == []
    old = tmp_path / "old.json"
    old.write_text("keep")
    before = old.stat().st_mtime_ns
    assert writable_file(old) == old and old.read_text() == "keep" and old.stat().st_mtime_ns == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.json", "sub"]
