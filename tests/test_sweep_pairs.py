"""simbench sweep collision's pairs against direct PyBullet calls: ``distance(arm, X)`` is the
whole arm, its base included, as ``CollisionDetector([("arm", "X")])`` (it left the base out, so
a wall box touching the base of a wall-mounted arm was never a collision and other distances were
up to 9 mm too large, found by a user walkthrough); a pair the fixed links would keep in
collision in every configuration is ``arm/(moving)`` and its columns say so."""
import subprocess
import sys

import numpy as np
import pyarrow.dataset as ds
import pybullet as p
import pytest

from simbench.bullet.collision import CollisionDetector
from simbench.bullet.scene import Scene
from simbench.sweep import read_manifest, sweep

# a 3-link arm on a plate (its base): links along +x of the plate, joints limited to +-0.6 rad,
# so nothing but the plate ever reaches x < 0
ARM = """<robot name="wall_arm">
  <link name="plate">
    <inertial><mass value="2"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><origin xyz="0 0 0.02"/><geometry><box size="0.3 0.3 0.04"/></geometry></collision>
  </link>
  <joint name="j1" type="revolute"><parent link="plate"/><child link="l1"/><origin xyz="0.05 0 0.08"/>
    <axis xyz="0 0 1"/><limit lower="-0.6" upper="0.6" effort="10" velocity="1"/></joint>
  <link name="l1">
    <inertial><origin xyz="0.15 0 0"/><mass value="1"/><inertia ixx="0.001" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><origin xyz="0.15 0 0"/><geometry><box size="0.3 0.04 0.04"/></geometry></collision>
  </link>
  <joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/><origin xyz="0.3 0 0"/>
    <axis xyz="0 1 0"/><limit lower="-0.6" upper="0.6" effort="10" velocity="1"/></joint>
  <link name="l2">
    <inertial><origin xyz="0.15 0 0"/><mass value="1"/><inertia ixx="0.001" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><origin xyz="0.15 0 0"/><geometry><box size="0.3 0.04 0.04"/></geometry></collision>
  </link>
  <joint name="j3" type="revolute"><parent link="l2"/><child link="l3"/><origin xyz="0.3 0 0"/>
    <axis xyz="0 1 0"/><limit lower="-0.6" upper="0.6" effort="10" velocity="1"/></joint>
  <link name="l3">
    <inertial><origin xyz="0.1 0 0"/><mass value="0.5"/><inertia ixx="0.001" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><origin xyz="0.1 0 0"/><geometry><box size="0.2 0.04 0.04"/></geometry></collision>
  </link>
</robot>
"""
BOX = """<robot name="box"><link name="box">
  <inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
  <collision><geometry><box size="0.1 0.1 0.1"/></geometry></collision>
</link></robot>
"""
WALL = [np.pi / 2, 0.0, 0.0]          # the arm's plate on a wall: roll 90 degrees
ARM_AT = np.array([0.0, 0.0, 1.0])
# in the plate's frame: "box" 6.4 mm... from the plate, within reach of link 1 (either may be
# closest); "wallbox" 3 cm into the plate's far edge (x < 0), out of every link's reach
BOX_IN_PLATE = {"box": [0.25, 0.24, 0.08], "wallbox": [-0.17, 0.0, 0.02]}


def _world(local):
    rot = np.array(p.getMatrixFromQuaternion(p.getQuaternionFromEuler(WALL))).reshape(3, 3)
    return (ARM_AT + rot @ np.asarray(local)).tolist()


@pytest.fixture(scope="module")
def scene(tmp_path_factory):
    d = tmp_path_factory.mktemp("wall")
    (d / "arm.urdf").write_text(ARM)
    (d / "box.urdf").write_text(BOX)
    text = 'robot = "arm"\n\n[[body]]\nname = "arm"\nurdf = "arm.urdf"\n' \
           f"position = {ARM_AT.tolist()}\norientation = {WALL}\nfixed_base = true\n"
    for name, local in BOX_IN_PLATE.items():
        text += f'\n[[body]]\nname = "{name}"\nurdf = "box.urdf"\nposition = {_world(local)}\nfixed_base = true\n'
    (d / "wall.toml").write_text(text)
    return d / "wall.toml"


def _oracle(scene, q, md, links):
    """Per row of q: min over the arm's ``links`` (-1 the plate) and each box of direct
    pybullet.getClosestPoints on a DIRECT server loaded by hand (saturating at md)."""
    client = p.connect(p.DIRECT)
    try:
        orn = p.getQuaternionFromEuler(WALL)
        arm = p.loadURDF(str(scene.parent / "arm.urdf"), ARM_AT.tolist(), orn, useFixedBase=True,
                         physicsClientId=client)
        boxes = {n: p.loadURDF(str(scene.parent / "box.urdf"), _world(loc), useFixedBase=True, physicsClientId=client)
                 for n, loc in BOX_IN_PLATE.items()}
        out = {n: np.empty(len(q)) for n in boxes}
        for i, row in enumerate(q):
            for j, x in enumerate(row):
                p.resetJointState(arm, j, x, physicsClientId=client)
            for n, b in boxes.items():
                found = [c[8] for link in links for c in p.getClosestPoints(arm, b, md, link, -1, physicsClientId=client)]
                out[n][i] = min(found, default=md)
        return {n: np.minimum(v, md) for n, v in out.items()}
    finally:
        p.disconnect(physicsClientId=client)


def test_arm_against_a_body_is_every_link_of_the_arm_base_included(scene, tmp_path, caplog):
    md, n = 0.5, 300
    res = sweep("collision", scene, samples=n, seed=4, out=tmp_path / "s", chunk_size=128, workers=2,
                pairs="world", max_distance=md, progress=False)
    labels = [c[len("distance("):-1] for c in res.manifest["job"]["arrays"][2]["columns"]]
    assert labels == ["arm, box", "arm/(moving), wallbox"]
    a = res.arrays()
    q, d = a["q"], a["distance"]
    whole = _oracle(scene, q, md, links=[-1, 0, 1, 2])
    moving = _oracle(scene, q, md, links=[0, 1, 2])
    assert q.shape == (n, 3) and d.shape == (n, 2)
    np.testing.assert_allclose(d[:, 0], whole["box"], rtol=0, atol=1e-9)       # 300 configurations
    np.testing.assert_allclose(d[:, 1], moving["wallbox"], rtol=0, atol=1e-9)  # 300 configurations
    # the base matters: it is the closest link in some configurations, a moving link in others
    base_closest = whole["box"] < moving["box"] - 1e-6
    assert 20 < base_closest.sum() < n - 20, base_closest.sum()
    assert (moving["box"] - whole["box"]).max() > 5e-3
    # the detector's pair (the Python API) gives the same numbers
    client = p.connect(p.DIRECT)
    try:
        loaded = Scene.from_toml(scene).load(client)
        with CollisionDetector(loaded, [("arm", "box")]) as det:
            np.testing.assert_allclose(d[:, 0], det.compute_distances(q, md, workers=1)[:, 0], rtol=0, atol=1e-9)
    finally:
        p.disconnect(physicsClientId=client)
    # the plate is 3 cm into the wall box in every configuration: said once, and out of that pair only
    np.testing.assert_allclose(whole["wallbox"], -0.03, atol=1e-6)
    warned = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert warned == ["arm's fixed links (plate) are -0.03 m from wallbox in every configuration (margin 0 m); "
                      "column distance(arm/(moving), wallbox) leaves them out (--pair arm wallbox: the whole robot)"]


def test_only_the_base_touches_the_body_explicit_pair_is_in_collision_everywhere(scene, tmp_path):
    md, n = 0.5, 200
    res = sweep("collision", scene, samples=n, seed=5, out=tmp_path / "e", chunk_size=64, workers=1,
                pairs=[("arm", "wallbox"), ("arm/(moving)", "box")], max_distance=md, progress=False)
    a = res.arrays()
    assert [c for c in res.manifest["job"]["arrays"][2]["columns"]] == ["distance(arm, wallbox)",
                                                                        "distance(arm/(moving), box)"]
    whole = _oracle(scene, a["q"], md, links=[-1, 0, 1, 2])
    moving = _oracle(scene, a["q"], md, links=[0, 1, 2])
    assert a["distance"].shape == (n, 2)
    np.testing.assert_allclose(a["distance"][:, 0], whole["wallbox"], rtol=0, atol=1e-9)  # 200 configurations
    np.testing.assert_allclose(a["distance"][:, 1], moving["box"], rtol=0, atol=1e-9)     # 200 configurations
    np.testing.assert_allclose(a["distance"][:, 0], -0.03, atol=1e-6)  # only the plate touches the wall box
    assert a["in_collision"][:, 0].all() and a["any_collision"].all() and res.totals["in collision"] == n
    assert (moving["wallbox"] > 0.1).all()  # no moving link comes near it


def test_the_default_scene_keeps_the_base_out_of_the_ground_pair_only_and_says_so(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "simbench.cli", "sweep", "collision", "simbench:kuka_cubes.toml",
                           "--samples", "20", "--out", "o", "-q"], capture_output=True, text=True, cwd=tmp_path,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.strip().splitlines() == [
        "simbench sweep: warning: robot's fixed links (lbr_iiwa_link_0) are -0.001 m from ground in every "
        "configuration (margin 0 m); column distance(robot/(moving), ground) leaves them out (--pair robot "
        "ground: the whole robot)"]
    columns = read_manifest(tmp_path / "o")["job"]["arrays"][2]["columns"]
    assert columns[:4] == ["distance(robot/(moving), ground)", "distance(robot, cube1)", "distance(robot, cube2)",
                           "distance(robot, cube3)"]


def test_a_body_touching_the_base_to_round_off_gets_the_moving_column(scene, tmp_path, caplog):
    """A box resting against the plate's edge (distance 0 to round-off, in every configuration)
    would make distance(arm, touch) the same in every row, carrying nothing (a walkthrough's
    torso on the ground: 2.2e-16 m in all rows); it is arm/(moving), as for a base inside a
    body, its distances those of the moving links (direct getClosestPoints of links 0-2)."""
    at = _world([-0.2, 0.0, 0.02])                     # the box's face on the plate's far edge
    touching = scene.parent / "touch.toml"
    touching.write_text(scene.read_text() + f'\n[[body]]\nname = "touch"\nurdf = "box.urdf"\nposition = {at}\n'
                        'fixed_base = true\n')
    md, n = 0.5, 60
    res = sweep("collision", touching, samples=n, seed=5, out=tmp_path / "t", pairs="world", max_distance=md,
                progress=False)
    labels = [c[len("distance("):-1] for c in res.manifest["job"]["arrays"][2]["columns"]]
    assert labels == ["arm, box", "arm/(moving), wallbox", "arm/(moving), touch"]
    q, d = res.arrays()["q"], res.arrays()["distance"]
    client = p.connect(p.DIRECT)
    try:
        arm = p.loadURDF(str(scene.parent / "arm.urdf"), ARM_AT.tolist(), p.getQuaternionFromEuler(WALL),
                         useFixedBase=True, physicsClientId=client)
        box = p.loadURDF(str(scene.parent / "box.urdf"), at, useFixedBase=True, physicsClientId=client)
        plate = min(c[8] for c in p.getClosestPoints(arm, box, md, -1, -1, physicsClientId=client))
        assert abs(plate) < 1e-6                         # the premise: touching, to round-off
        truth = np.empty(n)
        for i, row in enumerate(q):
            for j, x in enumerate(row):
                p.resetJointState(arm, j, x, physicsClientId=client)
            truth[i] = min([c[8] for link in (0, 1, 2) for c in p.getClosestPoints(arm, box, md, link, -1,
                                                                                   physicsClientId=client)],
                           default=md)
    finally:
        p.disconnect(physicsClientId=client)
    np.testing.assert_allclose(d[:, 2], np.minimum(truth, md), rtol=0, atol=1e-9)   # 60 configurations
    assert d[:, 2].std() > 1e-3                         # a column that says something
    warned = [r.getMessage() for r in caplog.records if r.levelname == "WARNING" and "touch" in r.getMessage()]
    assert len(warned) == 1 and "column distance(arm/(moving), touch) leaves them out" in warned[0]


TWO_ROBOTS = """robot = "left"
[[body]]
name = "ground"
urdf = "pybullet_data:plane.urdf"
fixed_base = true
[[body]]
name = "left"
urdf = "pybullet_data:kuka_iiwa/model.urdf"
position = [0, -0.5, 0]
fixed_base = true
[[body]]
name = "right"
urdf = "pybullet_data:kuka_iiwa/model.urdf"
position = [0, 0.5, 0]
fixed_base = true
[[body]]
name = "box"
urdf = "pybullet_data:cube.urdf"
position = [0.8, 0, 0.5]
fixed_base = true
"""


def test_a_scene_with_two_robots_says_what_the_sweep_leaves_still(tmp_path):
    """sweep collision moves the scene's robot only; a walkthrough's second robot stood still and
    its pair's column held one number in 2,000 rows without a word. Now two warning lines say
    so; the column equals direct getClosestPoints of the second robot at its scene pose."""
    (tmp_path / "two.toml").write_text(TWO_ROBOTS)
    proc = subprocess.run([sys.executable, "-m", "simbench.cli", "sweep", "collision", "two.toml", "--samples", "50",
                           "--out", "o", "-q", "--pair", "right", "box", "--pair", "left", "right"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.strip().splitlines() == [
        "simbench sweep: warning: the scene has other robots (right): they stay at their scene configuration; "
        "sweep collision moves 'left' only (the scene's robot key chooses it)",
        "simbench sweep: warning: pair (right, box) does not move with the swept robot 'left': the same distance "
        "in every row"]
    d = ds.dataset(tmp_path / "o").to_table().column("distance(right, box)").to_numpy()
    client = p.connect(p.DIRECT)
    try:
        loaded = Scene.from_toml(tmp_path / "two.toml").load(client)
        truth = min(c[8] for c in p.getClosestPoints(loaded.bodies["right"], loaded.bodies["box"], 1.0,
                                                     physicsClientId=client))
    finally:
        p.disconnect(physicsClientId=client)
    assert d.shape == (50,) and np.allclose(d, truth, atol=1e-9, rtol=0)
