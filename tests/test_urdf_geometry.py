"""Malformed shape numbers (``<box size="0.05 0.3">``, commas, text, negative sizes, nan) are
refused in one line naming the file, link, element, the text and what was expected, the way a
malformed ``<origin xyz="0 0.4">`` is (a :class:`URDFError`: ``simbench info`` exits 2 with that
line; ``RobotModel.from_urdf``, scenes and ``simbench view`` raise it).

Oracles: PyBullet itself (``p.loadURDF`` loads every malformed variant without refusing it, but
with another shape: a 0x0x0 box, so a distance that should be 0.075 m is 0.1 m), and the
closed-form box-sphere distance for the well-formed box (``p.getClosestPoints`` directly, and
simbench's CollisionDetector on a scene).
"""
import subprocess
import sys

import numpy as np
import pybullet as p
import pytest

from simbench._quiet import quiet_fds
from simbench.bullet.collision import CollisionDetector, NamedCollisionObject
from simbench.bullet.scene import Scene, SceneError
from simbench.errors import URDFError
from simbench.model import RobotModel
from simbench.urdf_source import load_source

INERT = ('<inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" '
         'izz="0.1"/></inertial>')
CUBE_OBJ = ("v -0.5 -0.5 -0.5\nv 0.5 -0.5 -0.5\nv 0.5 0.5 -0.5\nv -0.5 0.5 -0.5\nv -0.5 -0.5 0.5\n"
            "v 0.5 -0.5 0.5\nv 0.5 0.5 0.5\nv -0.5 0.5 0.5\nf 1 3 2\nf 1 4 3\nf 5 6 7\nf 5 7 8\n"
            "f 1 2 6\nf 1 6 5\nf 2 3 7\nf 2 7 6\nf 3 4 8\nf 3 8 7\nf 4 1 5\nf 4 5 8\n")
BOX = "0.05 0.05 0.3"              # what the user meant: half extents 0.025 0.025 0.15
HALF = np.array([0.025, 0.025, 0.15])
BALL_R = 0.05


def robot(geometry):
    """Links base and fore (joint j, revolute about z, at the origin); ``geometry`` in fore."""
    return (f'<robot name="r"><link name="base">{INERT}</link><link name="fore">{INERT}{geometry}'
            f'</link><joint name="j" type="revolute"><parent link="base"/><child link="fore"/>'
            f'<axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint></robot>')


def col(shape, tag="collision"):
    return f"<{tag}><geometry>{shape}</geometry></{tag}>"


# (case, fore's geometry, the message after "FILE: link 'fore': ")
MALFORMED = [
    ("box 2 numbers", col('<box size="0.05 0.3"/>'),
     '<collision><geometry><box size="0.05 0.3">: expected 3 numbers (x y z in m), got 2'),
    ("box commas", col('<box size="0.05,0.05,0.3"/>'),
     '<collision><geometry><box size="0.05,0.05,0.3">: expected 3 numbers (x y z in m), got 1 '
     '(separate numbers with spaces, not commas)'),
    ("box text", col('<box size="a b c"/>'),
     "<collision><geometry><box size=\"a b c\">: expected 3 numbers (x y z in m), got 'a', not a number"),
    ("box negative", col('<box size="0.05 -0.05 0.3"/>'),
     '<collision><geometry><box size="0.05 -0.05 0.3">: expected 3 numbers (x y z in m), got -0.05, '
     'a negative size'),
    ("box nan", col('<box size="0.05 nan 0.3"/>'),
     '<collision><geometry><box size="0.05 nan 0.3">: expected 3 numbers (x y z in m), got nan, '
     'not a finite number'),
    ("sphere text", col('<sphere radius="abc"/>'),
     "<collision><geometry><sphere radius=\"abc\">: expected 1 number (radius in m), got 'abc', not a number"),
    ("sphere negative", col('<sphere radius="-0.05"/>'),
     '<collision><geometry><sphere radius="-0.05">: expected 1 number (radius in m), got -0.05, '
     'a negative size'),
    ("sphere inf", col('<sphere radius="1e999"/>'),
     '<collision><geometry><sphere radius="1e999">: expected 1 number (radius in m), got 1e999, '
     'not a finite number'),
    ("cylinder length nan", col('<cylinder radius="0.05" length="nan"/>'),
     '<collision><geometry><cylinder length="nan">: expected 1 number (length in m), got nan, '
     'not a finite number'),
    ("capsule radius negative", col('<capsule radius="-1" length="0.3"/>'),
     '<collision><geometry><capsule radius="-1">: expected 1 number (radius in m), got -1, a negative size'),
    ("mesh scale 2 numbers", col('<mesh filename="cube.obj" scale="0.05 0.3"/>'),
     '<collision><geometry><mesh scale="0.05 0.3">: expected 3 numbers (x y z scale factors), got 2'),
    ("visual box 2 numbers", col('<box size="0.05 0.3"/>', "visual"),
     '<visual><geometry><box size="0.05 0.3">: expected 3 numbers (x y z in m), got 2'),
    ("second collision", col(f'<box size="{BOX}"/>') + col('<box size="0.05 0.3"/>'),
     '<collision> #2<geometry><box size="0.05 0.3">: expected 3 numbers (x y z in m), got 2'),
]
# the forms a user writes by mistake, each also through the command line
CLI_CASES = ("box 2 numbers", "box commas", "box text", "box negative", "box nan")
# well-formed shapes: they load, and with no issue
WELL_FORMED = [
    col(f'<box size="{BOX}"/>'),
    col('<box size="0.05, 0.05, 0.3"/>'),          # PyBullet reads "0.05," as 0.05
    col('<box size="0 0 0"/>'),
    col('<sphere radius="0.05"/>'),
    col('<cylinder radius="0.05" length="0.3"/>'),
    col('<capsule radius="0.05" length="0.3"/>', "visual"),
    col('<mesh filename="cube.obj" scale="0.05 -0.05 0.3"/>'),   # mirrored: a negative scale is fine
    col('<mesh filename="cube.obj"/>'),
]


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "cube.obj").write_text(CUBE_OBJ)
    return tmp_path


def _write(folder, k, geometry):
    f = folder / f"case{k}.urdf"     # one name per case: PyBullet caches a URDF per path
    f.write_text(robot(geometry))
    return f


def test_malformed_numbers_are_one_line_naming_the_element(folder):
    """RobotModel.from_urdf, load_source and a scene raise the same line."""
    compared = 0
    for k, (case, geometry, message) in enumerate(MALFORMED):
        f = _write(folder, k, geometry)
        line = f"{f}: link 'fore': {message}"
        with pytest.raises(URDFError) as err:
            RobotModel.from_urdf(f)
        assert str(err.value) == line, case
        with pytest.raises(URDFError) as err:
            load_source(f)
        assert str(err.value) == line, case
        with pytest.raises(SceneError) as err:
            Scene.from_dict({"body": [{"name": "robot", "urdf": str(f)}]})
        assert str(err.value).endswith(f": body 'robot': {line}"), (case, str(err.value))
        compared += 1
    assert compared == len(MALFORMED) == 13


def test_simbench_info_reports_it_and_exits_2(folder):
    """Was: exit 0, "issues: none". Now one line on stderr, exit status 2, nothing on stdout."""
    ran = 0
    for k, (case, geometry, message) in enumerate(MALFORMED):
        if case not in CLI_CASES:
            continue
        f = _write(folder, k, geometry)
        proc = subprocess.run([sys.executable, "-m", "simbench", "info", str(f)], capture_output=True,
                              text=True, timeout=120, cwd=folder)
        assert proc.returncode == 2, (case, proc.stdout, proc.stderr)
        assert proc.stdout == "", case
        assert proc.stderr.splitlines() == [f"simbench info: error: {f}: link 'fore': {message}"], case
        ran += 1
    f = _write(folder, "ok", col(f'<box size="{BOX}"/>'))
    proc = subprocess.run([sys.executable, "-m", "simbench", "info", str(f)], capture_output=True,
                          text=True, timeout=120, cwd=folder)
    assert proc.returncode == 0 and "issues: none" in proc.stdout, (proc.stdout, proc.stderr)
    assert ran == len(CLI_CASES) == 5


def test_pybullet_loads_them_as_another_shape(folder, direct_client):
    """Why they are refused (oracle: PyBullet): p.loadURDF loads each malformed collision shape
    without refusing the file, with other dimensions than written; for the user's box the
    distance to a ball is then 0.1 m (a 0x0x0 box) instead of 0.075 m, another one for a
    negative size, and none at all (no closest points) with a nan."""
    ball = p.createMultiBody(0, p.createCollisionShape(p.GEOM_SPHERE, radius=BALL_R,
                                                       physicsClientId=direct_client),
                             basePosition=[0.15, 0, 0], physicsClientId=direct_client)
    compared, distances = 0, {}
    for k, (case, geometry, _) in enumerate(MALFORMED):
        if "collision" not in geometry or case == "second collision":
            continue
        f = _write(folder, k, geometry)
        with quiet_fds():
            body = p.loadURDF(str(f), useFixedBase=True, physicsClientId=direct_client)
        dims = p.getCollisionShapeData(body, 0, physicsClientId=direct_client)[0][3]
        written = {"box": (0.05, 0.05, 0.3), "sphere": (0.05,) * 3, "mesh": (0.05, 0.05, 0.3)}
        shape = geometry.split("<", 3)[3].split()[0]
        if shape in written:
            assert not np.allclose(dims, written[shape]), (case, dims)
        if case in CLI_CASES:
            pts = p.getClosestPoints(body, ball, 1.0, 0, -1, physicsClientId=direct_client)
            distances[case] = round(pts[0][8], 4) if pts else None
        p.removeBody(body, physicsClientId=direct_client)
        compared += 1
    assert compared == 11
    negative = distances.pop("box negative")     # 0.0777 in PyBullet 3.2.7
    assert abs(negative - 0.075) > 1e-3, negative
    assert distances == {"box 2 numbers": 0.1, "box commas": 0.1, "box text": 0.1, "box nan": None}


def test_well_formed_shapes_load_with_no_issue(folder):
    for k, geometry in enumerate(WELL_FORMED):
        f = _write(folder, k, geometry)
        assert RobotModel.from_urdf(f).issues == (), geometry
        load_source(f).check_loadable()
    assert len(WELL_FORMED) == 8


def _box_sphere(c):
    """Closed form: distance from a ball of radius BALL_R at ``c`` to the box (face regions)."""
    return float(np.linalg.norm(np.maximum(np.abs(c) - HALF, 0.0))) - BALL_R


BALLS = [(0.15, 0.0, 0.0), (0.0, -0.2, 0.05), (0.0, 0.0, 0.4), (-0.1, 0.01, -0.1), (0.02, 0.09, 0.0),
         (0.0, 0.0, -0.25)]


def test_well_formed_box_gives_the_closed_form_distance(folder, direct_client):
    """The user's box, written correctly, loaded through simbench (a scene, so the check ran):
    CollisionDetector and p.getClosestPoints on the same bodies both give the closed form, the
    ball in front of each face (Bullet's 1 mm margin rounds only edges and corners)."""
    f = _write(folder, "box", col(f'<box size="{BOX}"/>'))
    sphere = col(f'<sphere radius="{BALL_R}"/>')
    (folder / "ball.urdf").write_text(f'<robot name="ball"><link name="ball">{INERT}{sphere}</link></robot>')
    loaded = Scene.from_dict({"body": [{"name": "robot", "urdf": str(f), "fixed_base": True},
                                       {"name": "ball", "urdf": str(folder / "ball.urdf"),
                                        "fixed_base": True}]}).load(direct_client)
    det = CollisionDetector(loaded, [(NamedCollisionObject("robot", "fore"), "ball")], robot="robot")
    robot_id, ball_id = loaded.bodies["robot"], loaded.bodies["ball"]
    compared = 0
    for c in BALLS:
        p.resetBasePositionAndOrientation(ball_id, c, (0, 0, 0, 1), physicsClientId=direct_client)
        want = _box_sphere(np.array(c))
        pts = p.getClosestPoints(robot_id, ball_id, 1.0, 0, -1, physicsClientId=direct_client)
        assert abs(pts[0][8] - want) < 1e-6, (c, pts[0][8], want)
        got = det.closest_points(np.zeros(1), max_distance=1.0)[0].distance
        assert abs(got - want) < 1e-6, (c, got, want)
        compared += 1
    assert compared == len(BALLS) == 6
    assert abs(_box_sphere(np.array(BALLS[0])) - 0.075) < 1e-12   # the walkthrough's 0.075 m
