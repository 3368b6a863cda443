"""Bad inputs, each driven through the command line (a child process) and the API.

For every case the command exits with the case's ``status`` and nothing on its output is a
traceback:

* status 2 (a usage error): exactly one line on stderr, ``simbench CMD: error: ...``, naming the bad
  value (``bad``) and what was expected (``expected``); the output files it names are not created
  (checked before the work). The API raises a SimbenchError whose message is that same kind of line.
* status 1 (``check`` judging faulty user dynamics): exactly one line names ``bad`` (the robot's
  ERROR or FAIL verdict with its reason, ``expected`` in it), and the reports are still written,
  with the reason.
* status 130 / 143 (SIGINT / SIGTERM sent once the file ``signal[1]`` exists): exactly one stderr
  line names ``bad``; recordings and reports are still written; no process the command started is
  left running.

Adding a case is one line in CASES: ``C(id, route, files, bad, expected, ...)``. A route is the pair
(command-line arguments, API expression); either may be empty where the other has no counterpart.
Each case runs in a fresh folder holding ``files`` plus ``ok.urdf`` (a valid two-link robot, joint
``j``), ``two.toml`` (it and a second copy named ``other``), ``script.py`` (a scenario that does
nothing), ``long.py`` (one that never ends) and ``userdyn.py`` (faulty user dynamics). API
expressions see ``np``, ``dyn`` (simbench.dynamics), ``model`` (ok.urdf), ``arm`` (the bundled
planar 2R arm), ``det`` (a CollisionDetector of link ``robot/b`` against ``other`` in two.toml) and
the names the URDF and scene cases use.
"""
import io
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pytest

from simbench import dynamics, sweep
from simbench.bullet.collision_detector import CollisionDetector
from simbench.check import compare
from simbench.bullet.scene import Scene
from simbench.errors import SimbenchError
from simbench.model import RobotModel
from simbench.oracles.pinocchio import pinocchio_model
from simbench.outputs import writable_dir, writable_file
from simbench.runner import run_script
from simbench.sim import Recording, Simulation
from simbench.testing import assert_matches_pybullet
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

SCRIPT = "def main(sim):\n    pass\n"
TWO = scene() + '[[body]]\nname = "other"\nurdf = "ok.urdf"\nposition = [2, 0, 0]\n'
USERDYN = textwrap.dedent("""\
    import pathlib
    import time

    import numpy as np

    def raises(q, qd, qdd):
        raise RuntimeError("boom")

    def shape(q, qd, qdd):
        return np.zeros(len(q) + 2)

    def nan(q, qd, qdd):
        return np.full(len(q), np.nan)

    def strings(q, qd, qdd):
        return ["a"] * len(q)

    def none(q, qd, qdd):
        return None

    def huge(q, qd, qdd):
        return [10**400] * len(q)

    not_callable = 3
    not_callable_either = 2.5

    def slow(q, qd, qdd):
        pathlib.Path("started").touch()
        time.sleep(600)
        return np.zeros(len(q))
""")
LONG = "import pathlib\nDURATION = None\n\ndef main(sim):\n    pathlib.Path('started').touch()\n    while True:\n        sim.step()\n"
SLEEPY = "import pathlib, time\n\ndef main(sim):\n    pathlib.Path('started').touch()\n    time.sleep(600)\n"

# routes: (command-line arguments, API expression)
INFO = (["info", "bad.urdf"], "RobotModel.from_urdf('bad.urdf')")
BODY = (["run", "script.py", "--scene", "bad.urdf"],
        "Scene.from_dict({'body': [{'name': 'robot', 'urdf': 'bad.urdf'}]})")
SCENE = (["run", "script.py", "--scene", "scene.toml"], "Scene.from_toml('scene.toml')")
XINFO = (["info", "x.urdf.xacro"], "RobotModel.from_urdf('x.urdf.xacro')")


def info(*argv, api):
    return (["info", *argv], api)


def api(expr):
    """An API-only route (no command-line counterpart)."""
    return ([], expr)


def cli(*argv):
    """A command-line-only route (no API counterpart)."""
    return (list(argv), "")


def npy(array):
    """The bytes of a .npy file holding ``array``."""
    out = io.BytesIO()
    np.save(out, np.asarray(array))
    return out.getvalue()


def dyncheck(spec, *more):
    """``simbench check ok.urdf`` of the user dynamics ``spec``, with both reports."""
    return cli("check", "ok.urdf", "--samples", "3", "--dynamics", spec, "--json", "r.json", "--markdown", "r.md", *more)


SWEEP = ("sweep", "collision", "two.toml", "--out", "sw")
LONG_SWEEP = cli(*SWEEP, "--samples", "2000000", "--chunk-size", "20000", "--workers", "1")
LONG_RUN = ("run", "long.py", "--direct", "--scene", "ok.urdf", "--record", "rec.gif", "--size", "64x48", "--quiet")
SLOW_CHECK = dyncheck("userdyn:slow")


class C(NamedTuple):
    id: str
    route: tuple
    files: dict
    bad: str
    expected: str
    hide: tuple = ()     # modules made unimportable (a missing extra)
    status: int = 2      # the command line's exit status
    signal: tuple = ()   # (signal, file): sent to the command once the file exists
    xfail: str = ""      # a known bug left for its owner: why (strict xfail)


CASES = [
    # ---- URDF files: finding and reading them
    C("urdf-missing", info("nope.urdf", api="RobotModel.from_urdf('nope.urdf')"), {}, "'nope.urdf'", "not found"),
    C("urdf-pybullet-data-missing", info("pybullet_data:kuka.urdf", api="RobotModel.from_urdf('pybullet_data:kuka.urdf')"), {}, "'pybullet_data:kuka.urdf'", "looked in"),
    C("urdf-robot-name-only", info("kuka.urdf", api="RobotModel.from_urdf('kuka.urdf')"), {}, "'kuka.urdf'", "did you mean 'pybullet_data:kuka_iiwa/model.urdf'"),
    C("urdf-is-yaml", info("cell.yaml", api="RobotModel.from_urdf('cell.yaml')"), {"cell.yaml": "body:\n  - name: r\n"}, "'cell.yaml' is a YAML file", "expected a URDF (XML) file, or a scene as a TOML file"),
    C("view-scene-is-yaml", cli("view", "cell.yaml", "--direct"), {"cell.yaml": "body:\n  - name: r\n"}, "cell.yaml: scene files are TOML", "not YAML; robots are URDF files"),
    C("scene-is-yaml", api("Scene.from_toml('cell.yaml')"), {"cell.yaml": "body:\n  - name: r\n"}, "cell.yaml: not valid TOML", "scene files are TOML ([[body]] tables, see docs/scenes.md), not YAML"),
    C("check-scene-body-in-yaml", cli("check", "cell.yaml:robot"), {"cell.yaml": "body:\n  - name: r\n"}, "cell.yaml:robot: scene files are TOML", "not YAML; expected SCENE.toml:BODY"),
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
    C("urdf-box-two-numbers", INFO, {"bad.urdf": urdf(geo('<box size="0.05 0.3"/>'))}, '<box size="0.05 0.3">', "expected 3 numbers (x y z in m), got 2"),
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
    C("body-box-commas", BODY, {"bad.urdf": urdf(geo('<box size="0.05,0.05,0.3"/>'))}, '<box size="0.05,0.05,0.3">', "separate numbers with spaces, not commas"),
    # ---- scene files
    C("scene-missing", (["run", "script.py", "--scene", "nope.toml"], "Scene.from_toml('nope.toml')"), {}, "nope.toml'", "scene file not found"),
    C("scene-bundled-misspelled", (["run", "script.py", "--scene", "kuka_cube.toml"], "Simulation('kuka_cube.toml', gui=False)"), {}, "scene file not found: 'kuka_cube.toml'", "did you mean 'simbench:kuka_cubes.toml'?"),
    C("urdf-bundled-misspelled", info("planar_2.urdf", api="RobotModel.from_urdf('planar_2.urdf')"), {}, "URDF file not found: 'planar_2.urdf'", "did you mean 'simbench:planar_2r.urdf'"),
    C("urdf-pybullet-data-named-by-folder", info("kuka_iiwa.urdf", api="load_source('kuka_iiwa.urdf')"), {}, "URDF file not found: 'kuka_iiwa.urdf'", "did you mean 'pybullet_data:kuka_iiwa/model.urdf'"),
    C("scene-not-toml", SCENE, {"scene.toml": "[[body]\nname = 1"}, "scene.toml", "not valid TOML"),
    C("scene-no-bodies", SCENE, {"scene.toml": "gravity = [0, 0, -9.81]"}, "[[body]]", "the scene has no"),
    C("scene-fixed-base-string", SCENE, {"scene.toml": scene('fixed_base = "no"')}, "fixed_base = 'no'", "a TOML boolean (true or false)"),
    C("scene-self-collision-string", SCENE, {"scene.toml": scene('self_collision = "false"')}, "self_collision = 'false'", "a TOML boolean"),
    C("scene-fixed-base-number", SCENE, {"scene.toml": scene("fixed_base = 1")}, "fixed_base = 1", "a TOML boolean"),
    C("scene-orientation-degrees", SCENE, {"scene.toml": scene("orientation = [0, 90, 0]")}, "orientation = [0, 90, 0]: 90 rad is more than a turn", "expected roll pitch yaw in radians (90 degrees is 1.571 rad)"),
    C("scene-scale-zero", SCENE, {"scene.toml": scene("scale = 0")}, "scale = 0", "a finite number > 0"),
    C("scene-scale-negative", SCENE, {"scene.toml": scene("scale = -1")}, "scale = -1", "a finite number > 0"),
    C("scene-scale-string", SCENE, {"scene.toml": scene('scale = "big"')}, "scale = 'big'", "a finite number > 0"),
    C("scene-scale-infinite", SCENE, {"scene.toml": scene("scale = inf")}, "scale = inf", "a finite number > 0"),
    C("scene-position-length", SCENE, {"scene.toml": scene("position = [1, 2]")}, "position = [1, 2]", "3 finite numbers"),
    C("scene-position-string", SCENE, {"scene.toml": scene('position = "0 0 0"')}, "position = '0 0 0'", "3 finite numbers"),
    C("scene-orientation-length", SCENE, {"scene.toml": scene("orientation = [0, 0]")}, "orientation = [0, 0]", "3 finite numbers or 4 finite numbers"),
    C("scene-orientation-quaternion-in-degrees", SCENE, {"scene.toml": scene("orientation = [-90, 0, 0, 1]")}, "orientation = [-90, 0, 0, 1]: -90 is more than a turn", "roll pitch yaw in radians (3 numbers; -90 degrees is -1.571 rad)"),
    C("scene-orientation-zero-quaternion", SCENE, {"scene.toml": scene("orientation = [0, 0, 0, 0]")}, "orientation = [0.0, 0.0, 0.0, 0.0]", "a non-zero quaternion"),
    C("scene-gravity-length", SCENE, {"scene.toml": scene(top="gravity = [0, -9.81]")}, "gravity = [0, -9.81]", "3 finite numbers"),
    C("scene-unknown-body-key", SCENE, {"scene.toml": scene("positon = [0, 0, 1]")}, "'positon'", "did you mean 'position'?"),
    C("scene-unknown-scene-key", SCENE, {"scene.toml": scene(top="gravty = [0, 0, -1]")}, "'gravty'", "did you mean 'gravity'?"),
    C("scene-robot-case", SCENE, {"scene.toml": scene(top='robot = "ROBOT"')}, "'ROBOT'", "did you mean 'robot'?"),
    C("scene-duplicate-names", SCENE, {"scene.toml": scene() + scene()}, "['robot']", "body names must be unique"),
    C("scene-utf16", SCENE, {"scene.toml": scene().encode("utf-16")}, "not UTF-8 text (byte 0xff at 0)", "expected a TOML file saved as UTF-8"),
    C("scene-toml-capital-true", SCENE, {"scene.toml": scene("fixed_base = True")}, "'fixed_base = True'", "expected a TOML boolean, true"),
    C("scene-toml-unquoted-text", SCENE, {"scene.toml": '[[body]]\nname = robot\nurdf = "ok.urdf"'}, "'name = robot'", 'expected text in quotes, "robot"'),
    C("scene-body-name-slash", SCENE, {"scene.toml": '[[body]]\nname = "a/b"\nurdf = "ok.urdf"'}, "body name 'a/b'", "without '/' or ':' (they separate body/link and SCENE.toml:BODY), e.g. 'a_b'"),
    C("scene-body-name-colon", SCENE, {"scene.toml": '[[body]]\nname = "a:b"\nurdf = "ok.urdf"'}, "body name 'a:b'", "e.g. 'a_b'"),
    C("scene-body-without-urdf", SCENE, {"scene.toml": '[[body]]\nname = "robot"'}, "'urdf'", "missing"),
    C("scene-body-name-empty", SCENE, {"scene.toml": '[[body]]\nname = ""\nurdf = "ok.urdf"'}, "name = ''", "a non-empty string"),
    C("scene-body-urdf-missing", SCENE, {"scene.toml": '[[body]]\nname = "robot"\nurdf = "nope.urdf"'}, "'nope.urdf'", "not found"),
    C("scene-joint-value", SCENE, {"scene.toml": scene("joints = { j = 'up' }")}, "body 'robot': joints.j = 'up'", "expected a finite number"),
    C("scene-joint-nan", SCENE, {"scene.toml": scene("joints = { j = nan }")}, "body 'robot': joints.j = nan", "expected a finite number"),
    C("scene-joint-inf", SCENE, {"scene.toml": scene("joints = { j = -inf }")}, "body 'robot': joints.j = -inf", "expected a finite number"),
    C("scene-collision-group-float", SCENE, {"scene.toml": scene("collision_group = 1.5")}, "collision_group = 1.5", "an integer"),
    C("scene-collision-mask-range", SCENE, {"scene.toml": scene("collision_mask = 4294967296")}, "collision_mask = 4294967296", "an integer from -2147483648 to 2147483647"),
    C("scene-package-map-folder", SCENE, {"scene.toml": scene(top='package_map = { foo = "nowhere" }')}, "'nowhere' does not exist", "expected the folder"),
    C("scene-xacro-args-plain-urdf", SCENE, {"scene.toml": scene('xacro_args = { a = 1 }')}, "a:=1", "not xacro"),
    # ---- output paths, checked before the work
    C("demo-out-is-a-file", (["demo", "--direct", "--out", "ok.urdf"], "writable_dir('ok.urdf', '--out folder')"), {}, "'ok.urdf' is a file", "expected a folder"),
    C("demo-out-cannot-be-created", (["demo", "--direct", "--out", "ok.urdf/sub"], "writable_dir('ok.urdf/sub', '--out folder')"), {}, "'ok.urdf/sub'", "expected a folder you can write to"),
    C("check-json-in-proc", (["check", "ok.urdf", "--json", "/proc/x.json"], "writable_file('/proc/x.json', '--json file')"), {}, "'/proc' is not writable (it takes no new files)", "expected a folder you can write to"),
    C("bench-json-in-proc", (["bench", "--quick", "--json", "/proc/b.json"], "writable_file('/proc/b.json', '--json report')"), {}, "'/proc'", "expected a folder you can write to"),
    C("bench-robot-unknown", (["bench", "--quick", "--robot", "kukka_iiwa"], ""), {}, "'kukka_iiwa'", "did you mean 'kuka_iiwa'"),
    # ---- scripts and more output paths
    C("run-script-without-main", cli("run", "nomain.py", "--scene", "ok.urdf"), {"nomain.py": "X = 1\n"}, "nomain.py defines no main(sim)", "a scenario script needs 'def main(sim): ...'"),
    C("run-main-misspelt", cli("run", "mian.py", "--scene", "ok.urdf"), {"mian.py": "def mian(sim):\n    pass\n"}, "mian.py defines no main(sim) function ('mian' is defined: did you mean main?)", "a scenario script needs 'def main(sim): ...'"),
    C("run-main-two-arguments", cli("run", "two.py", "--scene", "ok.urdf"), {"two.py": "def main(sim, other):\n    pass\n"}, "two.py:1: main(sim, other)", "cannot be called as main(sim)"),
    C("run-script-scene-dict-key", cli("run", "sd.py"), {"sd.py": "SCENE = {'body': [{'name': 'r', 'urdf': 'ok.urdf', 'fixd_base': True}]}\n" + SCRIPT}, "SCENE of sd.py: body 'r': unknown body key 'fixd_base'", "did you mean 'fixed_base'"),
    C("run-script-syntax-error", cli("run", "broken.py", "--scene", "ok.urdf"), {"broken.py": "def main(sim:\n"}, "'broken.py' line 1: '(' was never closed", "expected a Python script"),
    C("run-script-scene-missing", cli("run", "scn.py"), {"scn.py": "SCENE = 'nope.toml'\n" + SCRIPT}, "nope.toml'", "scene file not found"),
    C("run-record-format", cli("run", "script.py", "--scene", "ok.urdf", "--record", "r.avi"), {}, "'r.avi'", "expected one of .gif, .mp4"),
    C("run-screenshot-folder-is-a-file", cli("run", "script.py", "--scene", "ok.urdf", "--screenshot", "ok.urdf/x.png"), {}, "'ok.urdf' is a file", "expected a folder"),
    C("check-json-markdown-same-file", cli("check", "ok.urdf", "--json", "same.json", "--markdown", "same.json"), {}, "--json and --markdown both name 'same.json'", "expected a path of its own for each (e.g. --markdown same.md)"),
    C("check-json-is-the-plot-folder", cli("check", "ok.urdf", "--json", "x.json", "--plot", "x.json"), {}, "--json and --plot both name 'x.json'", "(e.g. --plot x_plots)"),
    C("bench-json-markdown-same-file", cli("bench", "--quick", "--suite", "dynamics", "--json", "a.json", "--markdown", "a.json"), {}, "--json and --markdown both name 'a.json'", "(e.g. --markdown a.md)"),
    C("check-plot-is-a-file", cli("check", "ok.urdf", "--plot", "ok.urdf"), {}, "'ok.urdf' is a file", "expected a folder"),
    # ---- arrays: the dynamics (API only)
    C("api-set-pose-nan", api("Simulation(gui=False).set_pose('cube1', [float('nan'), 0, 0])"), {}, "position = [nan, 0, 0]", "expected 3 finite numbers, metres"),
    C("api-run-script-none", api("run_script(None)"), {}, "script = None", "expected the path of a Python file"),
    C("api-sweep-out-none", api("sweep('collision', 'simbench:kuka_cubes.toml', out=None, samples=3)"), {}, "(--out) = None", "expected a path"),
    C("api-urdf-none", api("RobotModel.from_urdf(None)"), {}, "URDF file = None", "expected a path (a str or pathlib.Path)"),
    C("api-urdf-bytes", api("RobotModel.from_urdf(b'ok.urdf')"), {}, "URDF file = b'ok.urdf'", "expected a path"),
    C("api-scene-none", api("Scene.from_toml(None)"), {}, "scene file = None", "expected a path"),
    C("api-simulation-number", api("Simulation(5)"), {}, "scene = 5", "a Scene, a dict of the scene file's form"),
    C("id-q-too-long", api("dyn.inverse_dynamics(model, [0, 0], [0], [0])"), {}, "q has shape (2,)", "expected (..., 1) with joints in order ['j']"),
    C("id-q-nan", api("dyn.inverse_dynamics(model, np.array([np.nan]), np.zeros(1), np.zeros(1))"), {}, "non-finite value nan", "expected finite numbers"),
    C("id-qd-inf-list", api("dyn.inverse_dynamics(model, [0.0], [np.inf], [0.0])"), {}, "qd holds a non-finite value inf", "expected finite numbers"),
    C("id-q-strings", api("dyn.inverse_dynamics(model, np.array(['a']), np.zeros(1), np.zeros(1))"), {}, "array(['a']", "must be numbers"),
    # text that numpy would read as numbers ("0" -> 0.0) is refused on every path: lists through the
    # C entry and the Python fast path, text arrays, text beside numbers, the damping path, kinematics
    C("id-q-text-list", api("dyn.inverse_dynamics(arm, ['0', '0.5'], np.zeros(2), np.zeros(2))"), {}, "got ['0', '0.5'] (text, not numbers", "q must be numbers"),
    C("id-qdd-text-beside-numbers", api("dyn.inverse_dynamics(arm, [0.0, 0.0], [0.0, 0.0], [0.0, '1'])"), {}, "qdd must be numbers", "(text, not numbers; convert it with float() first)"),
    C("id-q-text-array-beside-list", api("dyn.inverse_dynamics(arm, np.array(['0', '0']), [0.0, 0.0], [0.0, 0.0])"), {}, "q must be numbers", "(text, not numbers; convert it with float() first)"),
    C("mass-matrix-text-batch", api("dyn.mass_matrix(arm, np.full((100, 2), '0'))"), {}, "q must be numbers", "(text, not numbers; convert it with float() first)"),
    C("fd-tau-text-with-damping", api("dyn.forward_dynamics(arm, np.zeros(2), np.zeros(2), ['1', '2'], damping=True)"), {}, "tau must be numbers", "(text, not numbers; convert it with float() first)"),
    C("fk-q-text-list", api("dyn.forward_kinematics(arm, ['0', '0'])"), {}, "q must be numbers", "(text, not numbers; convert it with float() first)"),
    C("id-q-none", api("dyn.inverse_dynamics(model, None, [0], [0])"), {}, "q must be numbers, got None", "(None instead of numbers)"),
    C("id-q-ragged", api("dyn.inverse_dynamics(arm, [[0, 0], [0]], np.zeros(2), np.zeros(2))"), {}, "[[0, 0], [0]]", "must be numbers"),
    C("id-batch-mismatch", api("dyn.inverse_dynamics(model, np.zeros((3, 1)), np.zeros((2, 1)), np.zeros(1))"), {}, "q (3, 1), qd (2, 1)", "do not broadcast"),
    C("id-qdd-wrong-joints", api("dyn.inverse_dynamics(arm, np.zeros((2, 2)), np.zeros((2, 2)), np.zeros((2, 3)))"), {}, "qdd has shape (2, 3)", "expected (..., 2) with joints in order ['theta1', 'theta2']"),
    C("id-gravity-length", api("dyn.inverse_dynamics(model, [0.0], [0.0], [0.0], gravity=(0, -9.81))"), {}, "(0, -9.81)", "gravity must be 3 finite numbers"),
    C("id-fext-shape", api("dyn.inverse_dynamics(model, [0.0], [0.0], [0.0], f_ext={'b': np.zeros(3)})"), {}, "f_ext['b'] has shape (3,)", "expected (..., 6)"),
    C("id-fext-nan", api("dyn.inverse_dynamics(model, [0.0], [0.0], [0.0], f_ext={'b': [np.nan] * 6})"), {}, "f_ext['b'] holds a non-finite value", "expected finite numbers"),
    C("id-fext-inf-batch", api("dyn.inverse_dynamics(model, [0.0], [0.0], [0.0], f_ext={'b': np.where(np.arange(600).reshape(100, 6) == 343, np.inf, 0.0)})"), {}, "f_ext['b'] holds a non-finite value inf at index (57, 1)", "expected finite numbers"),
    C("id-overflow-batch", api("dyn.inverse_dynamics(arm, np.zeros((40, 2)), np.full((40, 2), 1e200), np.zeros((40, 2)))"), {}, "max |qd| = 1e+200", "small enough for float64"),
    # large float64 batches run the kernels first and check the results (inputs.plain_batch): the same errors
    C("id-nan-large-batch", api("dyn.inverse_dynamics(arm, np.zeros((2000, 2)), np.where(np.arange(4000).reshape(2000, 2) == 2467, np.nan, 0.0), np.zeros((2000, 2)))"), {}, "qd holds a non-finite value nan at index (1233, 1) (joint 'theta2')", "expected finite numbers"),
    C("id-inf-large-batch-qdd", api("dyn.inverse_dynamics(arm, np.zeros((2000, 2)), np.zeros((2000, 2)), np.where(np.arange(4000).reshape(2000, 2) == 6, -np.inf, 0.0))"), {}, "qdd holds a non-finite value -inf at index (3, 0) (joint 'theta1')", "expected finite numbers"),
    C("id-overflow-large-batch", api("dyn.inverse_dynamics(arm, np.zeros((2000, 2)), np.full((2000, 2), 1e200), np.zeros((2000, 2)))"), {}, "max |qd| = 1e+200", "small enough for float64"),
    C("mass-matrix-nan-large-batch", api("dyn.mass_matrix(arm, np.where(np.arange(4000).reshape(2000, 2) == 3999, np.nan, 0.0))"), {}, "q holds a non-finite value nan at index (1999, 1) (joint 'theta2')", "expected finite numbers"),
    C("fd-nan-large-batch", api("dyn.forward_dynamics(arm, np.where(np.arange(4000).reshape(2000, 2) == 0, np.nan, 0.0), np.zeros((2000, 2)), np.zeros((2000, 2)))"), {}, "q holds a non-finite value nan at index (0, 0) (joint 'theta1')", "expected finite numbers"),
    C("fd-overflow-large-batch", api("dyn.forward_dynamics(arm, np.zeros((2000, 2)), np.full((2000, 2), 1e200), np.zeros((2000, 2)))"), {}, "overflowed", "velocities or torques are too large"),
    C("id-overflow-one", api("dyn.inverse_dynamics(arm, np.zeros(2), np.full(2, 1e200), np.zeros(2))"), {}, "max |qd| = 1e+200", "small enough for float64"),
    C("id-complex-array", api("dyn.inverse_dynamics(model, np.array([1j]), np.zeros(1), np.zeros(1))"), {}, "complex values", "expected real numbers"),
    C("mass-matrix-complex", api("dyn.mass_matrix(model, np.array([1j]))"), {}, "complex values", "expected real numbers"),
    C("id-q-huge-int-list", api("dyn.inverse_dynamics(model, [10**400], [0.0], [0.0])"), {}, "[1000000000", "q must be numbers"),
    C("id-gravity-huge-int", api("dyn.inverse_dynamics(model, [0.0], [0.0], [0.0], gravity=(0, 0, -10**400))"), {}, "gravity must be 3 finite numbers", "got (0, 0, -1000"),
    C("id-fext-huge-int", api("dyn.inverse_dynamics(model, [0.0], [0.0], [0.0], f_ext={'b': [10**400] * 6})"), {}, "f_ext['b']", "expected finite numbers"),
    C("mass-matrix-huge-int", api("dyn.mass_matrix(model, [10**400])"), {}, "[1000000000", "q must be numbers"),
    C("id-q-huge-int-list-beside-arrays", api("dyn.inverse_dynamics(model, [10**400], np.zeros(1), np.zeros(1))"), {}, "[1000000000", "q must be numbers"),
    C("mass-matrix-q-short", api("dyn.mass_matrix(arm, np.zeros(3))"), {}, "q has shape (3,)", "expected (..., 2)"),
    C("fd-tau-inf", api("dyn.forward_dynamics(model, np.zeros(1), np.zeros(1), np.array([np.inf]))"), {}, "tau holds a non-finite value inf", "expected finite numbers"),
    C("fd-tau-string", api("dyn.forward_dynamics(model, np.zeros(1), np.zeros(1), 'x')"), {}, "got 'x'", "tau must be numbers"),
    C("fd-overflow", api("dyn.forward_dynamics(arm, np.zeros(2), np.full(2, 1e200), np.zeros(2))"), {}, "overflowed", "velocities or torques are too large"),
    C("gravity-torques-q-long", api("dyn.gravity_torques(model, np.zeros(5))"), {}, "q has shape (5,)", "expected (..., 1)"),
    C("kinetic-energy-qd-short", api("dyn.kinetic_energy(arm, np.zeros(2), np.zeros(1))"), {}, "qd has shape (1,)", "expected (..., 2)"),
    C("kinetic-energy-batches", api("dyn.kinetic_energy(model, np.zeros((2, 1)), np.zeros((3, 1)))"), {}, "q (2, 1), qd (3, 1)", "joint arrays do not broadcast"),
    C("integrate-dt-nan", api("dyn.integrate(model, [0.0], [1.0], float('nan'))"), {}, "dt = nan", "expected a finite number of seconds"),
    C("integrate-dt-text", api("dyn.integrate(model, [0.0], [1.0], 'x')"), {}, "dt = 'x'", "expected a number of seconds"),
    C("integrate-v-long", api("dyn.integrate(model, [0.0], [0.0, 0.0])"), {}, "v has shape (2,)", "expected (..., 1)"),
    C("simulate-dt-negative", api("dyn.simulate_model(model, [0.0], [0.0], dt=-0.01, steps=10)"), {}, "got -0.01", "dt must be a positive number of seconds"),
    C("simulate-steps-negative", api("dyn.simulate_model(model, [0.0], [0.0], dt=0.01, steps=-1)"), {}, "got -1", "steps must be a non-negative integer"),
    C("simulate-method-unknown", api("dyn.simulate_model(model, [0.0], [0.0], dt=0.01, steps=1, method='rk5')"), {}, "'rk5'", "expected one of ['euler'"),
    # ---- arrays: collision queries (API only)
    C("collision-q-too-long", api("det.compute_distances([0, 0])"), {}, "q has shape (2,)", "expected (1,) or (N, 1)"),
    C("collision-q-nan", api("det.compute_distances([np.nan])"), {}, "non-finite value nan", "(joint 'j')"),
    C("collision-q-strings", api("det.compute_distances(['x'])"), {}, "['x']", "must be numbers"),
    C("collision-q-text", api("det.compute_distances(['0.5'])"), {}, "q must be numbers, got ['0.5']", "(text, not numbers"),
    C("collision-q-huge-int", api("det.compute_distances([10**400])"), {}, "[1000000000", "must be numbers"),
    C("collision-max-distance-huge-int", api("det.compute_distances([0.0], max_distance=10**400)"), {}, "max_distance = 1000000000", "expected a number"),
    C("collision-batch-columns", api("det.compute_distances(np.zeros((3, 2)))"), {}, "q has shape (3, 2)", "expected (1,) or (N, 1)"),
    C("collision-set-configuration-batch", api("det.set_configuration(np.zeros((2, 1)))"), {}, "q has shape (2, 1)", "expected (1,)"),
    C("collision-max-distance-negative", api("det.compute_distances([0.0], max_distance=-0.5)"), {}, "max_distance = -0.5", "expected a distance >= 0 m"),
    C("collision-closest-points-negative", api("det.closest_points([0.0], max_distance=-1)"), {}, "max_distance = -1", "expected a distance >= 0 m"),
    C("collision-link-distances-negative", api("det.link_distances([0.0], max_distance=-1)"), {}, "max_distance = -1", "expected a distance >= 0 m"),
    C("collision-max-distance-nan", api("det.compute_distances([0.0], max_distance=float('nan'))"), {}, "max_distance = nan", "expected a finite number of metres"),
    C("collision-margin-nan", api("det.in_collision([0.0], margin=float('nan'))"), {}, "margin = nan", "expected a finite number of metres"),
    C("collision-resolution-zero", api("det.path_is_free([0.0], [1.0], resolution=0)"), {}, "resolution = 0", "expected a positive number of metres"),
    C("collision-workers-zero", api("det.compute_distances(np.zeros((3, 1)), workers=0)"), {}, "workers = 0", "expected an integer >= 1"),
    C("collision-workers-zero-built", api("CollisionDetector(det.loaded, [('robot', 'other')], workers=0)"), {}, "workers = 0", "expected an integer >= 1 (1: this process only)"),
    # ---- huge values outside the dynamics (API only): cut around "..." to one short line
    C("collision-q-huge-list", api("det.compute_distances(['x'] * 10_000)"), {}, "q must be numbers, got ['x', 'x',", "...]"),
    C("id-q-huge-strings", api("dyn.inverse_dynamics(model, ['x' * 10_000], [0.0], [0.0])"), {}, "q must be numbers, got ['xxx", "(text, not numbers; convert it with float() first)"),
    C("collision-q-huge-strings", api("det.compute_distances(['x' * 10_000])"), {}, "q must be numbers, got ['xxx", "(text, not numbers; convert it with float() first)"),
    C("collision-workers-huge-int", api("det.compute_distances(np.zeros((3, 1)), workers=-10**400)"), {}, "workers = -1000", "expected an integer >= 1"),
    C("collision-padding-huge-int", api("CollisionDetector(det.loaded, [('robot', 'other')], padding=10**400)"), {}, "padding of robot/a is 1000", "expected metres"),
    C("collision-pair-huge-list", api("CollisionDetector(det.loaded, [['robot'] * 10_000])"), {}, "got ['robot', 'robot',", "a collision pair must be two objects"),
    C("scene-key-huge-string", api("Scene.from_dict({'body': [{'name': 'robot', 'urdf': 'ok.urdf'}], 'x' * 10_000: 1})"), {}, "unknown scene key 'xxx", "Valid scene keys"),
    C("sweep-samples-huge-int", api("sweep.prepare('dynamics', ['ok.urdf'], samples=-10**400)"), {}, "samples = -1000", "expected an integer >= 1"),
    C("sweep-seed-huge-list", api("sweep.prepare('dynamics', ['ok.urdf'], samples=5, seed=[0] * 10_000)"), {}, "seed = [0, 0,", "expected an integer >= 0"),
    C("sweep-kind-huge-string", api("sweep.prepare('x' * 10_000, ['ok.urdf'])"), {}, "unknown job kind 'xxx", "expected one of collision, dynamics, check"),
    C("run-size-huge-list", api("run_script('script.py', scene='ok.urdf', record='r.gif', size=[640] * 10_000)"), {}, "size = [640, 640,", "expected (width, height) in pixels"),
    C("urdf-path-huge-string", api("RobotModel.from_urdf('d/' * 2_000 + 'r.urdf')"), {}, "not found: 'd/d/", "r.urdf'"),
    C("sim-render-huge-string", api("Simulation(render='x' * 10_000)"), {}, "render = 'xxx", "expected one of 'continuous', 'sync'"),
    C("sim-dt-huge-int", api("Simulation(dt=10**400)"), {}, "dt = 1000", "expected a number of seconds, 0 < dt <= 1"),
    C("sim-duration-huge-list", api("Simulation(duration=[1] * 10_000)"), {}, "duration = [1, 1,", "expected a number of seconds > 0"),
    C("recording-fps-huge-int", api("Recording(None, 'r.gif', fps=10**400)"), {}, "fps = 1000", "expected a number of frames per second > 0"),
    C("collision-resolution-huge-list", api("det.path_is_free([0.0], [1.0], resolution=[1] * 10_000)"), {}, "resolution = [1, 1,", "expected a number of metres > 0"),
    C("scene-position-huge-int", api("Scene.from_dict({'body': [{'name': 'robot', 'urdf': 'ok.urdf', 'position': [10**400, 0, 0]}]})"), {}, "position = [1000", "expected 3 finite numbers"),
    C("urdf-path-huge-name", api("RobotModel.from_urdf('x' * 5_000 + '.urdf')"), {}, "URDF file 'xxx", "cannot be looked up: File name too long"),
    C("scene-path-huge-name", api("Scene.from_toml('y' * 5_000 + '.toml')"), {}, "scene file 'yyy", "cannot be looked up: File name too long"),
    # ---- arrays: the command line
    C("view-q-nan", cli("view", "--direct", "ok.urdf", "--q", "j=nan", "--out", "v.png"), {}, "'j=nan'", "expected a finite number"),
    C("view-q-not-a-number", cli("view", "--direct", "ok.urdf", "--q", "j=abc", "--out", "v.png"), {}, "'j=abc'", "expected NAME=VALUE"),
    C("view-q-twice", cli("view", "--direct", "ok.urdf", "--q", "j=1", "j=0.5", "--out", "v.png"), {}, "joint 'j' is given twice (j=1 too)", "expected one value per joint"),
    C("view-q-without-value", cli("view", "--direct", "ok.urdf", "--q", "j", "--out", "v.png"), {}, "--q 'j'", "expected NAME=VALUE"),
    C("view-size-zero", cli("view", "--direct", "ok.urdf", "--size", "0x0", "--out", "v.png"), {}, "size = (0, 0)", "between 8 and 4096 pixels"),
    C("view-duration-negative", cli("view", "--direct", "ok.urdf", "--duration", "-1", "--out", "v.png"), {}, "--duration -1.0", "a positive number of seconds"),
    C("sweep-configs-columns", cli(*SWEEP, "--configs", "c.npy"), {"c.npy": npy(np.zeros((4, 3)))}, "shape (4, 3)", "expected (N, 1) numbers"),
    C("sweep-configs-nan", cli(*SWEEP, "--configs", "c.npy"), {"c.npy": npy(np.full((4, 1), np.nan))}, "non-finite value at row 0", "expected finite joint values"),
    C("sweep-configs-strings", cli(*SWEEP, "--configs", "c.npy"), {"c.npy": npy([["a"]] * 4)}, "<U1 array", "expected (N, 1) numbers"),
    C("sweep-configs-missing", cli(*SWEEP, "--configs", "nope.npy"), {}, "'nope.npy'", "not found"),
    C("sweep-configs-format", cli(*SWEEP, "--configs", "c.csv"), {"c.csv": "0\n"}, "c.csv'", "expected a .npy or .parquet file"),
    C("sweep-samples-negative", cli(*SWEEP, "--samples", "-5"), {}, "--samples = '-5'", "expected an integer >= 1"),
    C("sweep-chunk-size-zero", cli(*SWEEP, "--samples", "5", "--chunk-size", "0"), {}, "--chunk-size = '0'", "expected an integer >= 1"),
    C("sweep-workers-zero", cli(*SWEEP, "--samples", "5", "--workers", "0"), {}, "--workers = '0'", "expected an integer >= 1"),
    C("sweep-seed-negative", cli(*SWEEP, "--samples", "5", "--seed", "-1"), {}, "--seed = '-1'", "expected an integer >= 0"),
    C("sweep-max-distance-negative", cli(*SWEEP, "--samples", "5", "--max-distance", "-1"), {}, "max_distance = -1.0", "expected a distance >= 0 m"),
    C("sweep-qd-max-nan", cli("sweep", "dynamics", "ok.urdf", "--samples", "5", "--qd-max", "nan", "--out", "sw"), {}, "qd_max = nan", "expected a finite number >= 0"),
    C("sweep-kind-unknown", cli("sweep", "colision", "two.toml", "--samples", "5", "--out", "sw"), {}, "'colision'", "expected one of collision, dynamics, check"),
    C("model-replace-gravity-short", api("model.replace(gravity=[0, 0])"), {}, "gravity = [0, 0]", "expected 3 finite numbers in m/s^2 (root frame), e.g. (0, 0, -9.81)"),
    C("xacro-args-a-number", api("RobotModel.from_urdf('ok.urdf', xacro_args=5)"), {}, "xacro_args = 5", "expected a mapping {name: value} or a list of NAME:=VALUE strings"),
    C("pinocchio-model-of-a-path", api("pinocchio_model('ok.urdf')"), {}, "model = 'ok.urdf'", "expected a RobotModel, made once by simbench.RobotModel.from_urdf('ok.urdf')"),
    C("check-floating-text", api("compare('ok.urdf', samples=3, floating='no')"), {}, "floating = 'no'", "expected True or False (did you mean False?)"),
    C("check-pinocchio-text", api("compare('ok.urdf', samples=3, pinocchio='off')"), {}, "pinocchio = 'off'", "expected True or False (did you mean False?)"),
    C("assert-floating-text", api("assert_matches_pybullet('ok.urdf', floating='yes')"), {}, "floating = 'yes'", "expected True or False (did you mean True?)"),
    C("assert-allow-explained-text", api("assert_matches_pybullet('ok.urdf', allow_explained='false')"), {}, "allow_explained = 'false'", "expected True or False (did you mean False?)"),
    C("check-samples-zero", cli("check", "ok.urdf", "--samples", "0"), {}, "--samples 0", "expected a positive integer"),
    C("check-tol-negative", cli("check", "ok.urdf", "--tol", "-1"), {}, "--tol -1.0", "expected a positive number"),
    C("check-tol-nan", cli("check", "ok.urdf", "--tol", "nan"), {}, "--tol nan", "expected a positive number"),
    C("check-timeout-zero", cli("check", "ok.urdf", "--timeout", "0"), {}, "--timeout 0.0", "expected a positive number of seconds"),
    C("check-base-orientation-degrees", cli("check", "ok.urdf", "--base-orientation", "0", "0", "90"), {}, "base orientation [0.0, 0.0, 90.0]: 90 rad is more than a turn", "(90 degrees is 1.571 rad)"),
    C("check-base-orientation-length", cli("check", "ok.urdf", "--base-orientation", "1", "2"), {}, "[1.0, 2.0]", "expected roll pitch yaw (3 numbers)"),
    C("run-duration-negative", cli("run", "script.py", "--scene", "ok.urdf", "--duration", "-1"), {}, "--duration -1.0", "expected a positive number of seconds, e.g. --duration 1 (leave it out for the script's DURATION)"),
    C("run-script-typo", (["run", "scrpt.py"], "run_script('scrpt.py')"), {}, "script not found: 'scrpt.py'", "did you mean 'script.py'"),
    C("run-script-in-scripts", (["run", "scenario_free_bdy.py"], "run_script('scenario_free_bdy.py')"), {"scripts/scenario_free_body.py": "def main(sim):\n    pass\n"}, "script not found: 'scenario_free_bdy.py'", "did you mean 'scripts/scenario_free_body.py'?"),
    C("scene-typo", (["run", "script.py", "--scene", "tw.toml"], "Simulation('tw.toml')"), {}, "scene file not found: 'tw.toml'", "did you mean 'two.toml'?"),
    C("sim-gui-string", api("Simulation(gui='yes')"), {}, "gui = 'yes'", "expected True (a window), False (headless, DIRECT) or None (a window when a display answers); did you mean True?"),
    C("model-from-scene-file", (["info", "two.toml"], "RobotModel.from_urdf('two.toml')"), {}, "'two.toml' is a scene file, not a URDF", "simbench.Simulation('two.toml', gui=False).model; the URDF of its body 'robot' is 'ok.urdf'"),
    C("scene-joint-outside-limits", (["run", "script.py", "--scene", "lim.toml"], "Simulation('lim.toml')"), {"lim.toml": '[[body]]\nname = "robot"\nurdf = "ok.urdf"\n[body.joints]\nj = 5.0\n'}, "lim.toml: body 'robot': joint j = 5", "outside the joint's limits [-1, 1] rad; closest valid value 1"),
    C("run-dt-zero", cli("run", "script.py", "--scene", "ok.urdf", "--dt", "0"), {}, "dt = 0.0", "expected a time step in seconds, 0 < dt <= 1"),
    C("run-fps-zero", cli("run", "script.py", "--scene", "ok.urdf", "--fps", "0", "--record", "r.gif"), {}, "fps = 0.0", "expected a positive number of frames per second"),
    C("run-size-zero", cli("run", "script.py", "--scene", "ok.urdf", "--size", "0x10", "--record", "r.gif"), {}, "size = (0, 10)", "between 8 and 4096 pixels"),
    C("run-size-format", cli("run", "script.py", "--size", "big"), {}, "size 'big'", "expected WIDTHxHEIGHT"),
    C("sweep-samples-huge", cli(*SWEEP, "--samples", "1e99"), {}, "samples = 1e+99", "expected at most 1,000,000 chunks"),
    C("sweep-tol-negative", cli("sweep", "check", "ok.urdf", "--samples", "2", "--tol", "-1", "--out", "sw"), {}, "tol = -1.0", "expected a positive number"),
    C("sweep-margin-nan", cli(*SWEEP, "--samples", "5", "--margin", "nan"), {}, "margin = nan", "expected a finite number of metres"),
    C("check-seed-negative", cli("check", "ok.urdf", "--seed", "-1"), {}, "--seed -1", "expected an integer >= 0"),
    C("run-camera-yaw-string", cli("run", "cam.py", "--scene", "ok.urdf", "--direct"), {"cam.py": "CAMERA = {'yaw': 'abc'}\n" + SCRIPT}, "camera yaw = 'abc'", "expected a number"),
    C("run-camera-target-link", cli("run", "cam.py", "--scene", "ok.urdf", "--direct"), {"cam.py": "CAMERA = {'target': 'b'}\n" + SCRIPT}, "'b'", "expected"),
    C("demo-steps-not-a-number", cli("demo", "--direct", "--steps", "x"), {}, "'x'", "invalid int value"),
    C("demo-steps-zero", cli("demo", "--direct", "--steps", "0"), {}, "--steps 0", "expected a positive integer (closest valid: --steps 1)"),
    C("demo-steps-negative", cli("demo", "--direct", "--steps", "-2"), {}, "--steps -2", "expected a positive integer (closest valid: --steps 1)"),
    C("demo-steps-beyond-the-waypoints", cli("demo", "--direct", "--steps", "10"), {}, "--steps 10: the demo has 6 waypoints", "expected 1 to 6 (closest valid: --steps 6)"),
    C("demo-hold-negative", cli("demo", "--direct", "--hold", "-1"), {}, "--hold -1.0", "expected a number of seconds >= 0 (closest valid: --hold 0)"),
    C("demo-hold-nan", cli("demo", "--direct", "--hold", "nan"), {}, "--hold nan", "expected a number of seconds >= 0"),
    C("run-seed-negative", cli("run", "script.py", "--scene", "ok.urdf", "--seed", "-1"), {}, "--seed -1", "expected an integer >= 0 (closest valid: --seed 0)"),
    # ---- names: unknown links, bodies and joints get the closest valid name
    C("id-q-dict-unknown-joint", api("dyn.inverse_dynamics(model, {'jj': 0}, [0], [0])"), {}, "'jj'", "did you mean 'j'?"),
    C("id-fext-unknown-link", api("dyn.inverse_dynamics(model, [0.0], [0.0], [0.0], f_ext={'bb': np.zeros(6)})"), {}, "'bb'", "did you mean 'b'?"),
    C("jacobian-unknown-link", api("dyn.link_jacobian(model, [0.0], 'B')"), {}, "'B'", "did you mean 'b'?"),
    C("pose-link-as-list", api("dyn.link_pose(model, [0.0], ['b', 'a'])"), {}, "link = ['b', 'a']", "expected one link name (a str), e.g. 'b'"),
    C("jacobian-link-as-index", api("dyn.link_jacobian(model, [0.0], 1)"), {}, "link = 1", "expected one link name (a str)"),
    C("model-joint-case", api("model.joint_index('J')"), {}, "'J'", "did you mean 'j'?"),
    C("sim-detector-max-distance", api("sim.detector([(('robot', 'b'), 'other')], max_distance=3)"), {}, "detector() got max_distance=3", "max_distance is given to each query: det = detector(pairs); det.compute_distances(q, max_distance=3)"),
    C("sim-detector-unknown-argument", api("sim.detector([(('robot', 'b'), 'other')], robt='robot')"), {}, "unknown argument 'robt'", "did you mean 'robot'?"),
    C("collision-q-dict-unknown-joint", api("det.compute_distances({'jj': 0})"), {}, "'jj'", "did you mean 'j'?"),
    C("collision-pair-unknown-body", api("CollisionDetector(det.loaded, [('robott', 'other')])"), {}, "'robott'", "did you mean 'robot'?"),
    C("collision-pair-unknown-link", api("CollisionDetector(det.loaded, [(('robot', 'bb'), 'other')])"), {}, "'bb'", "did you mean 'b'?"),
    C("collision-robot-unknown", api("CollisionDetector(det.loaded, [('robot', 'other')], robot='robo')"), {}, "'robo'", "did you mean 'robot'?"),
    C("collision-padding-unknown", api("CollisionDetector(det.loaded, [('robot', 'other')], padding={'bx': 0.1})"), {}, "'bx'", "did you mean 'b'?"),
    C("collision-disabled-unknown", api("CollisionDetector(det.loaded, [('robot', 'other')], disabled=[('a', 'bx')])"), {}, "'bx'", "did you mean 'b'?"),
    C("view-q-unknown-joint", cli("view", "--direct", "ok.urdf", "--q", "jj=1", "--out", "v.png"), {}, "'jj'", "did you mean 'j'?"),
    C("check-scene-body-unknown", cli("check", "two.toml:robott"), {}, "'robott'", "did you mean 'robot'?"),
    C("sweep-pair-unknown-body", cli(*SWEEP, "--samples", "5", "--pair", "robott", "other"), {}, "'robott'", "did you mean 'robot'?"),
    C("sweep-pair-unknown-link", cli(*SWEEP, "--samples", "5", "--pair", "robot/bb", "other"), {}, "'bb'", "did you mean 'b'?"),
    C("sweep-pairs-unknown", cli(*SWEEP, "--samples", "5", "--pairs", "everything"), {}, "pairs = 'everything'", "expected one of all, world, self"),
    C("sweep-engine-unknown", cli(*SWEEP, "--samples", "5", "--engine", "rey"), {}, "'rey'", "expected local or ray (did you mean ray?)"),
    C("check-corpus-unknown", cli("check", "--corpus", "pybulet_data"), {}, "'pybulet_data'", "choose from 'pybullet_data'"),
    C("view-scene-q-unknown-joint", cli("view", "--direct", "two.toml", "--q", "jj=1", "--out", "v.png"), {}, "'jj'", "did you mean 'j'?"),
    C("view-scene-misspelled-suffix", cli("view", "--direct", "simbench:wall_iiwa.tml", "--out", "v.png"), {}, "error: file not found: 'simbench:wall_iiwa.tml'", "did you mean 'simbench:wall_iiwa.toml'"),
    C("view-local-scene-misspelled-suffix", cli("view", "--direct", "two.tml", "--out", "v.png"), {}, "error: file not found: 'two.tml'", "did you mean 'two.toml'?"),
    C("view-scene-joint-unknown", cli("view", "--direct", "scene.toml", "--out", "v.png"), {"scene.toml": scene("joints = { jj = 1.0 }")}, "'jj'", "did you mean 'j'?"),
    C("run-scene-joint-unknown", cli(*SCENE[0], "--direct"), {"scene.toml": scene("joints = { jj = 1.0 }")}, "'jj'", "did you mean 'j'?"),
    # ---- user functions: check judges them (ERROR or FAIL, exit status 1, reports written)
    C("check-function-raises", dyncheck("userdyn:raises"), {}, "raised RuntimeError: boom", "(at userdyn.py:", status=1),
    C("check-function-wrong-shape", dyncheck("userdyn:shape"), {}, "returned shape (3,)", "expected 1 torques", status=1),
    C("check-function-nan", dyncheck("userdyn:nan"), {}, "returned nan for joint 'j'", "from finite inputs", status=1),
    C("check-function-strings", dyncheck("userdyn:strings"), {}, "returned list ['a']", "not real numbers", status=1),
    C("check-function-none", dyncheck("userdyn:none"), {}, "returned None", "expected 1 torques", status=1),
    C("check-function-huge-int", dyncheck("userdyn:huge"), {}, "returned list", "not real numbers", status=1),
    C("check-function-timeout", dyncheck("userdyn:slow", "--timeout", "1"), {}, "did not return within 1 s", "(--timeout); the worker was stopped", status=1),
    C("check-module-syntax-error", dyncheck("broken:tau"), {"broken.py": "def tau(:\n"}, "SyntaxError", "cannot import 'broken'"),  # a usage error, as a missing function
    C("check-module-import-fails", dyncheck("broken:tau"), {"broken.py": "import nosuchdep\n"}, "No module named 'nosuchdep'", "cannot import 'broken'"),  # a usage error, as a missing function
    C("check-module-missing", dyncheck("nosuchmodule:f"), {}, "'nosuchmodule:f'", "expected module:function"),
    C("check-function-missing", dyncheck("userdyn:rasies"), {}, "no function 'rasies'", "did you mean 'raises'?"),
    C("check-dynamics-format", dyncheck("userdyn"), {}, "'userdyn'", "expected module:function"),
    C("check-function-not-callable", dyncheck("userdyn:not_callable"), {}, "'not_callable' in 'userdyn' is an int", "expected a function tau = f(q, qd, qdd)"),
    C("check-float-not-callable", dyncheck("userdyn:not_callable_either"), {}, "'not_callable_either' in 'userdyn' is a float", "expected a function"),
    # ---- signals: stopped cleanly, outputs kept, no process left behind
    C("run-sigint", cli(*LONG_RUN), {}, "interrupted at t =", "servers closed", status=130, signal=(signal.SIGINT, "started")),
    C("run-sigterm", cli(*LONG_RUN), {}, "terminated (SIGTERM) at t =", "servers closed", status=143, signal=(signal.SIGTERM, "started")),
    C("run-sigint-says-recording", cli(*LONG_RUN), {}, "SIGINT: stopping (finishing the recording, closing the servers)", "simbench run: ", status=130, signal=(signal.SIGINT, "started")),
    C("run-sigint-no-recording", cli("run", "sleepy.py", "--direct", "--scene", "ok.urdf", "--quiet"), {"sleepy.py": SLEEPY}, "SIGINT: stopping (closing the servers)", "simbench run: ", status=130, signal=(signal.SIGINT, "started")),
    C("run-sigint-sleeping-script", cli("run", "sleepy.py", "--direct", "--scene", "ok.urdf", "--quiet"), {"sleepy.py": SLEEPY}, "interrupted at t =", "servers closed", status=130, signal=(signal.SIGINT, "started")),
    C("check-sigint-slow-function", SLOW_CHECK, {}, "interrupted;", "the results so far are in the reports", status=130, signal=(signal.SIGINT, "started")),
    C("check-sigterm-slow-function", SLOW_CHECK, {}, "terminated (SIGTERM);", "the results so far are in the reports", status=143, signal=(signal.SIGTERM, "started")),
    C("sweep-sigint", LONG_SWEEP, {}, "interrupted", "simbench sweep: ", status=130, signal=(signal.SIGINT, "sw/_manifest.json")),
    C("sweep-sigterm", LONG_SWEEP, {}, "terminated (SIGTERM)", "simbench sweep: ", status=143, signal=(signal.SIGTERM, "sw/_manifest.json")),
]

OK_URDF = urdf()
ALWAYS = {"ok.urdf": OK_URDF, "two.toml": TWO, "script.py": SCRIPT, "long.py": LONG, "userdyn.py": USERDYN}
LAUNCH = textwrap.dedent("""\
    import sys
    for name in {hide!r}:
        sys.modules[name] = None
    from simbench.cli import main
    sys.exit(main({argv!r}))
""")
#: options whose value is a file or folder the command writes
OUTPUTS = ("--json", "--markdown", "--record", "--out", "--plot", "--screenshot")


def _folder(tmp_path, case):
    for name, data in {**ALWAYS, **case.files}.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data) if isinstance(data, bytes) else path.write_text(data)
    return tmp_path


def _env():
    env = {k: v for k, v in os.environ.items() if k not in ("ROS_PACKAGE_PATH", "AMENT_PREFIX_PATH")}
    env.pop("DISPLAY", None)
    return env


def _params(cases):
    return [pytest.param(c, id=c.id, marks=[pytest.mark.xfail(strict=True, reason=c.xfail)] if c.xfail else [])
            for c in cases]


def _descendants(pid):
    """The processes whose parent chain leads to ``pid`` (from /proc, so no psutil)."""
    children = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # gone meanwhile
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    out, todo = [], [pid]
    while todo:
        found = children.get(todo.pop(), [])
        out += found
        todo += found
    return out


def _running(pid):
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _signal_when_ready(proc, folder, signum, ready):
    """Send ``signum`` once ``folder/ready`` exists; the descendants the command had then."""
    deadline = time.monotonic() + 150
    while not (folder / ready).exists():
        assert proc.poll() is None, f"the command ended before {ready} appeared: {proc.communicate()}"
        assert time.monotonic() < deadline, f"{ready} did not appear"
        time.sleep(0.1)
    time.sleep(0.5)  # well inside the work
    kids = _descendants(proc.pid)
    proc.send_signal(signum)
    return kids


def test_the_table_is_large_and_its_ids_unique():
    assert len(CASES) >= 100 and len({c.id for c in CASES}) == len(CASES)
    assert all(c.route[0] or c.route[1] for c in CASES)


def test_readme_lists_the_exit_statuses_the_table_asserts():
    readme = (Path(__file__).parents[1] / "README.md").read_text()
    section = readme.split("### Errors and exit statuses", 1)[1].split("\n#", 1)[0]
    statuses = {0} | {c.status for c in CASES}
    assert statuses == {0, 1, 2, 130, 143}
    assert all(f"| **{s}** |" in section for s in statuses), section


@pytest.mark.parametrize("case", _params([c for c in CASES if c.route[0]]))
def test_command_line_exit_status_and_one_line(tmp_path, case):
    folder = _folder(tmp_path, case)
    argv = case.route[0]
    outputs = [folder / v for k, v in zip(argv, argv[1:]) if k in OUTPUTS]
    existed = [p.exists() for p in outputs]
    proc = subprocess.Popen([sys.executable, "-c", LAUNCH.format(hide=case.hide, argv=argv)], cwd=folder,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env())
    kids = _signal_when_ready(proc, folder, *case.signal) if case.signal else []
    try:
        out, err = proc.communicate(timeout=180)
    finally:
        proc.kill()
    assert proc.returncode == case.status, (proc.returncode, out, err)
    assert "Traceback" not in out + err, err
    if case.status == 2:  # a usage error: one line on stderr, nothing written
        lines = err.splitlines()
        assert len(lines) == 1, err
        assert lines[0].startswith(f"simbench {argv[0]}: error: "), lines[0]
        assert not any(p.exists() and not e for p, e in zip(outputs, existed)), outputs
    else:  # a verdict or a stop: one line says which, and what was made is kept
        lines = [line for line in (out if case.status == 1 else err).splitlines() if case.bad in line]
        assert len(lines) == 1, (out, err)
        assert all(p.exists() and (p.is_dir() or p.stat().st_size > 0) for p in outputs), outputs
        for path in outputs if case.status == 1 else []:  # the reason is in the reports
            assert path.suffix != ".md" or case.bad in path.read_text(), path.read_text()
            if path.suffix == ".json":
                report = json.loads(path.read_text())
                assert [r["verdict"] for r in report["robots"]] in (["ERROR"], ["FAIL"]), report
                assert report["summary"]["exit_code"] == 1 and case.bad in report["robots"][0]["reason"], report
    assert case.bad in lines[0] and case.expected in lines[0], lines[0]
    left = [pid for pid in kids if _running(pid)]
    assert not left, f"processes left behind: {left}"


class _Names(dict):
    """The names of the API expressions, each made when first used."""

    def __init__(self, close):
        super().__init__(np=np, dyn=dynamics, RobotModel=RobotModel, Scene=Scene, load_source=load_source,
                         writable_dir=writable_dir, writable_file=writable_file,
                         CollisionDetector=CollisionDetector, sweep=sweep, run_script=run_script,
                         Simulation=Simulation, Recording=Recording, compare=compare,
                         assert_matches_pybullet=assert_matches_pybullet, pinocchio_model=pinocchio_model)
        self.close = close

    def __missing__(self, key):
        if key == "model":
            value = RobotModel.from_urdf("ok.urdf")
        elif key == "arm":
            value = RobotModel.from_urdf("simbench:planar_2r.urdf")
        elif key == "det":
            import pybullet as p

            client = p.connect(p.DIRECT)
            self.close.append(lambda: p.disconnect(physicsClientId=client))
            value = CollisionDetector(Scene.from_toml("two.toml").load(client), [(("robot", "b"), "other")])
        elif key == "sim":
            value = Simulation("two.toml", gui=False)
            self.close.append(value.close)
        else:
            raise KeyError(key)
        self[key] = value
        return value


def _api_message(tmp_path, monkeypatch, case):
    """The message of the SimbenchError that ``case``'s API expression raises."""
    folder = _folder(tmp_path, case)
    monkeypatch.chdir(folder)
    for name in ("ROS_PACKAGE_PATH", "AMENT_PREFIX_PATH"):
        monkeypatch.delenv(name, raising=False)
    for name in case.hide:
        monkeypatch.setitem(sys.modules, name, None)
    closers = []
    try:
        with pytest.raises(SimbenchError) as err:
            eval(case.route[1], {}, _Names(closers))
    finally:
        for close in closers:
            close()
    return str(err.value)


@pytest.mark.parametrize("case", _params([c for c in CASES if c.route[1]]))
def test_api_raises_one_line_simbench_error(tmp_path, monkeypatch, case):
    message = _api_message(tmp_path, monkeypatch, case)
    assert "\n" not in message
    assert case.bad in message and case.expected in message, message


def test_output_checks_try_for_real_and_leave_nothing_behind(tmp_path):
    """/proc passes the permission bits for root but refuses new files; a folder to be made is
    not made by the check (it is when the output is written), and an existing file keeps its
    content and modification time."""
    with pytest.raises(SimbenchError, match="'/proc' is not writable"):
        writable_file("/proc/x.json", "--json file")
    out = writable_file(tmp_path / "sub" / "r.json")
    assert out == tmp_path / "sub" / "r.json" and not out.parent.exists()
    old = tmp_path / "old.json"
    old.write_text("keep")
    before = old.stat().st_mtime_ns
    assert writable_file(old) == old and old.read_text() == "keep" and old.stat().st_mtime_ns == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.json"]


def test_huge_values_are_shown_on_one_short_line():
    """A bad value too long to print (an int of 401 digits, 10,000 numbers) is shown with its
    ends kept around "...": the message stays one line (under 300 characters) that names the
    input."""
    model = RobotModel.from_urdf("pybullet_data:kuka_iiwa/model.urdf")
    z = np.zeros(7)
    cases = {
        "gravity must be 3 finite numbers": lambda: dynamics.inverse_dynamics(model, z, z, z, gravity=[0, 0, 10**400]),
        "gravity must be 3 finite numbers ": lambda: dynamics.inverse_dynamics(model, z, z, z, gravity=np.ones(10_000)),
        "q must be numbers": lambda: dynamics.inverse_dynamics(model, [0] * 6 + [10**400], z, z),
        "f_ext['lbr_iiwa_link_7'] =": lambda: dynamics.inverse_dynamics(
            model, z, z, z, f_ext={"lbr_iiwa_link_7": ["x"] * 10_000}),
    }
    for start, call in cases.items():
        with pytest.raises(SimbenchError) as info:
            call()
        msg = str(info.value)
        assert msg.startswith(start.strip()) and "..." in msg and "\n" not in msg, msg
        assert len(msg) < 300, (len(msg), msg)
    assert len(cases) == 4


@pytest.mark.parametrize("case", _params([c for c in CASES if "-huge-" in c.id and c.route[1]
                                          and not c.route[1].startswith("dyn.")]))
def test_huge_values_outside_the_dynamics_are_shown_on_one_short_line(tmp_path, monkeypatch, case):
    """The table's huge values outside the dynamics (API routes: collision queries, scenes,
    sweeps, recordings, simulations) are cut around "...": one line under 300 characters that
    still names the argument (``bad``)."""
    message = _api_message(tmp_path, monkeypatch, case)
    assert "\n" not in message and "..." in message and case.bad in message, message
    assert len(message) < 300, (len(message), message)
