"""PyBullet's collision filters honoured by the detector's pair lists.

Oracle: PyBullet's own simulation contacts (``performCollisionDetection`` + ``getContactPoints``
on the main server), which apply the filters, for every robot link overlapping the cube (found
with raw ``getClosestPoints``, which ignores them)."""
import subprocess
import sys

import numpy as np
import pybullet as p
import pytest

import simbench
from simbench.bullet.collision import (NamedCollisionObject as O, set_collision_filter_group_mask,
                                       set_collision_filter_pair)
from simbench.errors import SimbenchError

CASES = [  # (robot group/mask, cube group/mask, pair filters (robot link, enable)); None: PyBullet's default
    (None, None, []),
    (None, (0, 0), []),
    ((2, -1), None, []),
    ((1, 1), None, []),
    ((1, -1), (4, 1), []),
    ((1, -1), (4, 2), []),
    ((1, 1), (4, 1), []),   # only one direction matches: PyBullet lets them touch (an "or")
    ((4, 4), (4, 2), []),
    ((1, 2), (4, 2), []),   # neither direction matches
    (None, None, [("lbr_iiwa_link_1", False), ("lbr_iiwa_link_2", False)]),
    (None, (0, 0), [("lbr_iiwa_link_1", True)]),
]


@pytest.mark.parametrize("robot_gm, cube_gm, pair_filters", CASES)
def test_filters_match_pybullet_simulation_contacts(robot_gm, cube_gm, pair_filters):
    with simbench.connect(gui=False) as pair:
        main, rid, cid = pair.main.client, pair.main.bodies["robot"], pair.main.bodies["cube1"]
        for loaded in (pair.main, pair.collision):  # the cube overlaps the lower arm at q = 0
            p.resetBasePositionAndOrientation(loaded.bodies["cube1"], [0.45, 0, 0.5], [0, 0, 0, 1],
                                              physicsClientId=loaded.client)
        if robot_gm is not None:
            set_collision_filter_group_mask(pair, "robot", *robot_gm)
        if cube_gm is not None:
            set_collision_filter_group_mask(pair, "cube1", *cube_gm)
        for link, enable in pair_filters:
            set_collision_filter_pair(pair, ("robot", link), "cube1", enable)
        links = list(pair.main.robot.links.items())
        det = pair.detector([(O("robot", name), O("cube1")) for name, _ in links])
        whole = pair.detector([(O("robot"), O("cube1"))])
        assert [a.link for a, _ in det.pairs] == [name for name, _ in links]   # one column per pair asked
        d_links = det.compute_distances(np.zeros(7), 1.0)
        kept = {a.link for (a, _), d in zip(det.pairs, d_links) if d < 1.0}   # a filtered pair: nothing found
        p.performCollisionDetection(physicsClientId=main)
        contact = {pt[3] for pt in p.getContactPoints(rid, cid, physicsClientId=main)}
        compared = 0
        overlapping = []
        for name, li in links:
            raw = p.getClosestPoints(rid, cid, 0.0, li, -1, physicsClientId=main)
            if raw and min(pt[8] for pt in raw) < -1e-3:  # clearly overlapping, whatever the filters
                overlapping.append(name)
                if li == -1 and robot_gm is None and cube_gm is None:
                    # the fixed base and the fixed cube are both static: PyBullet's simulation never
                    # lets them touch; without explicit groups/masks the detector checks them (documented)
                    assert name in kept
                    continue
                assert (name in kept) == (li in contact), (name, kept, contact)
                compared += 1
        assert compared >= 3, overlapping
        # the whole-body pair skips exactly the filtered links
        d = whole.closest_point_arrays(np.zeros(7))
        if kept & set(overlapping):
            assert d["distance"][0] < 0 and whole.closest_points(np.zeros(7))[0].a.link in kept
        else:
            assert len(whole.pairs) == 1 and d["distance"][0] >= 0


def test_filter_api_errors():
    with simbench.connect(gui=False) as pair:
        with pytest.raises(SimbenchError, match="collision group = 1.5; expected an integer"):
            set_collision_filter_group_mask(pair, "cube1", 1.5, 1)
        with pytest.raises(simbench.UnknownNameError, match="did you mean 'cube1'"):
            set_collision_filter_pair(pair, "cube11", "robot", False)


SCENE_CASES = [(None, None), ({"collision_group": 2}, None), ({"collision_mask": 1}, None),
               ({"collision_group": 1, "collision_mask": 1}, {"collision_group": 4, "collision_mask": 1}),
               ({"collision_group": 1, "collision_mask": 2}, {"collision_group": 4, "collision_mask": 2}),
               (None, {"collision_group": 0, "collision_mask": 0})]


@pytest.mark.parametrize("robot_keys, cube_keys", SCENE_CASES)
def test_scene_keys_set_the_filters_on_both_servers_vs_pybullet_contacts(robot_keys, cube_keys):
    """The scene keys collision_group / collision_mask, through the Simulation: on both servers
    PyBullet's own contacts (performCollisionDetection + getContactPoints, which apply the
    filters) are the same, and the detector keeps exactly the links that touch."""
    scene = {"body": [{"name": "robot", "urdf": "pybullet_data:kuka_iiwa/model.urdf", "fixed_base": True,
                       **(robot_keys or {})},
                      {"name": "cube", "urdf": "pybullet_data:cube.urdf", "position": [0.45, 0, 0.5],
                       "fixed_base": True, **(cube_keys or {})}]}
    with simbench.Simulation(scene, gui=False) as sim:
        rid, cid = sim.bodies["robot"], sim.bodies["cube"]
        contacts = []
        for client in (sim.client, sim.collision_client):
            p.performCollisionDetection(physicsClientId=client)
            contacts.append({pt[3] for pt in p.getContactPoints(rid, cid, physicsClientId=client)})
        assert contacts[0] == contacts[1]  # the simulation and the collision server agree
        links = sim.body("robot").links
        det = sim.detector([(O("robot", name), O("cube")) for name in links])
        kept = {a.link for (a, _), d in zip(det.pairs, det.compute_distances(np.zeros(7), 1.0)) if d < 1.0}
        compared = 0
        for name, li in links.items():
            raw = p.getClosestPoints(rid, cid, 0.0, li, -1, physicsClientId=sim.client)
            if raw and min(pt[8] for pt in raw) < -1e-3 and li != -1:  # overlapping (filters ignored)
                assert (name in kept) == (li in contacts[0]), (name, kept, contacts[0])
                compared += 1
        assert compared >= 3
        if robot_keys is None and cube_keys is None:
            assert contacts[0]  # unfiltered: the arm and the cube touch
        if cube_keys == {"collision_group": 0, "collision_mask": 0} or robot_keys == {"collision_group": 1,
                                                                                     "collision_mask": 2}:
            assert not contacts[0] and not kept & {n for n, i in links.items() if i != -1}


Q = np.array([0.785, 1.2, 0, -0.6, 0, 0.6, 0])   # the arm presses into cube1


def _contacts(sim) -> int:
    """PyBullet's own contacts between the arm and cube1 (filters applied) on the main server."""
    p.performCollisionDetection(physicsClientId=sim.client)
    return len(p.getContactPoints(sim.bodies["robot"], sim.bodies["cube1"], physicsClientId=sim.client))


@pytest.mark.parametrize("disabled_first", [True, False])
def test_a_detector_follows_filters_set_after_it_was_built(disabled_first):
    """A walkthrough built a detector while robot-cube1 was filtered out, then enabled the pair:
    the simulation had 3 contacts and the detector said 'not in collision' (and the other way
    round). Now every query reads the filters as they are, checked against PyBullet's own
    contacts; the columns stay one per pair asked, in order (the filtered pair's column used to
    disappear, shifting cube3's distance into column 0)."""
    with simbench.Simulation("simbench:kuka_cubes.toml", gui=False) as sim:
        sim.robot.reset(Q)
        if disabled_first:
            set_collision_filter_pair(sim.pair, "robot", "cube1", False)
        det = sim.detector([("robot", "cube1"), ("robot", "cube3")])
        assert det.pair_names == [("robot", "cube1"), ("robot", "cube3")]
        raw = min(pt[8] for pt in p.getClosestPoints(sim.bodies["robot"], sim.bodies["cube1"], 1.0,
                                                   physicsClientId=sim.client))
        far = min(pt[8] for pt in p.getClosestPoints(sim.bodies["robot"], sim.bodies["cube3"], 1.0,
                                                   physicsClientId=sim.client))
        assert raw < -1e-3 < far   # overlapping cube1, clear of cube3 (getClosestPoints ignores filters)
        compared = 0
        for enabled in ((False, True) if disabled_first else (True, False)):
            set_collision_filter_pair(sim.pair, "robot", "cube1", enabled)
            touching = _contacts(sim) > 0
            assert touching == enabled
            d = det.compute_distances(Q)
            for got in (d, det.compute_distances(Q[None])[0], det.closest_point_arrays(Q)["distance"]):
                np.testing.assert_allclose(got, [raw if enabled else 1.0, far], atol=1e-9)
            assert det.in_collision(Q) == touching and det.in_collision(Q[None])[0] == touching
            assert [(str(a), str(b)) for a, b in det.colliding_pairs(Q)] == ([("robot", "cube1")] if touching else [])
            found = det.closest_points(Q)[0]
            assert found.found == enabled and found.b.body == "cube1"
            assert det.filtered == [not enabled, False]
            compared += 1
        assert compared == 2


def test_view_of_a_scene_whose_filters_keep_a_body_away(tmp_path):
    """`simbench view` crashed (min() of an empty list) when the filters left no pair between
    the robot and a body; now it says so, and the ground's distance is PyBullet's own
    getClosestPoints over the arm's links that move (view leaves out the welded base)."""
    (tmp_path / "f.toml").write_text(
        'robot = "robot"\n[[body]]\nname = "robot"\nurdf = "pybullet_data:kuka_iiwa/model.urdf"\nfixed_base = true\n'
        'collision_group = 1\ncollision_mask = 1\n[[body]]\nname = "cube"\nurdf = "pybullet_data:cube.urdf"\n'
        'position = [0.5, 0.5, 0.5]\nfixed_base = true\ncollision_group = 2\ncollision_mask = 2\n[[body]]\n'
        'name = "ground"\nurdf = "pybullet_data:plane.urdf"\nfixed_base = true\n')
    proc = subprocess.run([sys.executable, "-m", "simbench", "view", "f.toml", "--direct", "--out", "f.png"],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    line = next(x for x in proc.stdout.splitlines() if x.startswith("distances:"))
    assert "cube (never touches: collision filters)" in line, line
    with simbench.Simulation(str(tmp_path / "f.toml"), gui=False) as sim:
        rid, gid = sim.bodies["robot"], sim.bodies["ground"]
        truth = min(pt[8] for li in range(p.getNumJoints(rid, physicsClientId=sim.client))   # the moving links:
                    for pt in p.getClosestPoints(rid, gid, 2.0, linkIndexA=li, physicsClientId=sim.client))  # view's
    shown = float(line.split("ground (")[1].split(": ")[1].split(" m")[0])
    assert abs(shown - truth) < 1e-4 and (tmp_path / "f.png").exists()
