"""pyb_utils' documented examples, done with simbench, against pyb_utils' numbers.

pyb_utils' numbers are computed here with the direct PyBullet calls its code makes (Adam Heins,
"shortest distances with PyBullet", and pyb_utils' tests): reset each joint, one
``getClosestPoints`` per pair (a bare body: link index -2, every link), the minimum distance,
``max_distance`` where nothing is found.
"""
import numpy as np
import pybullet as p
import pytest

import simbench
from simbench.bullet.collision import NamedCollisionObject as O

IIWA, CUBE = "pybullet_data:kuka_iiwa/model.urdf", "pybullet_data:cube.urdf"  # cube: 1 m, half extent 0.5


def pyb_utils_distances(client, robot, q, pairs, max_distance):
    """pyb_utils' compute_distances: per-joint reset, then the minimum of each pair's points."""
    for i in range(p.getNumJoints(robot, physicsClientId=client)):
        p.resetJointState(robot, i, q[i], physicsClientId=client)
    out = []
    for (ba, la), (bb, lb) in pairs:
        pts = p.getClosestPoints(ba, bb, distance=max_distance, linkIndexA=la, linkIndexB=lb, physicsClientId=client)
        out.append(max_distance if len(pts) == 0 else np.min([pt[8] for pt in pts]))
    return np.array(out)


def test_the_seed_posts_loop_gives_pyb_utils_numbers():
    """The blog post's loop: q = pi * (rand(7) - 0.5); distances of link 7 to the ground and
    three cubes, and in_collision, on a separate collision server."""
    rng = np.random.default_rng(2024)
    with simbench.Simulation(gui=False) as sim:
        link7 = O("robot", "lbr_iiwa_link_7")
        det = sim.detector([(link7, name) for name in ("ground", "cube1", "cube2", "cube3")])
        ref = sim.pair.scene.load(oracle := p.connect(p.DIRECT))
        rid = ref.bodies["robot"]
        pairs = [((rid, 6), (ref.bodies[name], -2)) for name in ("ground", "cube1", "cube2", "cube3")]
        same_d = same_c = 0
        for _ in range(500):
            q = np.pi * (rng.random(7) - 0.5)
            d, in_col = det.compute_distances(q), det.in_collision(q)
            expected = pyb_utils_distances(oracle, rid, q, pairs, 1.0)
            expected_col = (pyb_utils_distances(oracle, rid, q, pairs, 0.0 + 0.1) < 0.0).any()  # pyb_utils 2.x
            same_d += np.array_equal(d, expected)
            same_c += in_col == expected_col
        p.disconnect(oracle)
        assert same_d == 500 and same_c == 500


def test_whole_robot_against_a_box_gives_pyb_utils_numbers():
    """pyb_utils' robot test: the iiwa as one body against a 1 m box at (0, 0, 0.5)."""
    scene = {"body": [{"name": "robot", "urdf": IIWA, "fixed_base": True},
                      {"name": "box", "urdf": CUBE, "position": [0, 0, 0.5]}]}
    with simbench.Simulation(scene, gui=False) as sim:
        rid, bid, c = sim.bodies["robot"], sim.bodies["box"], sim.client
        whole = sim.detector([("robot", "box")])
        d = whole.compute_distances()  # no q: the robot as it stands in the main world
        expected = min(pt[8] for pt in p.getClosestPoints(rid, bid, 10.0, physicsClientId=c))
        assert d[0] == expected and abs(d[0] - (-0.5655)) < 1e-4 and whole.in_collision()
        # "or look at each link individually": the whole body is the minimum over the links
        links = [(O("robot", name), "box") for name, i in sim.body("robot").links.items() if i >= 0]
        each = sim.detector(links).compute_distances(np.zeros(7), 10.0)
        assert len(each) == 7 and each.min() == d[0]
        # results name the closest link pair
        best = min(p.getClosestPoints(rid, bid, 10.0, physicsClientId=c), key=lambda pt: pt[8])
        rec = whole.closest_points()[0]
        assert rec.a == O("robot", sim.body("robot").link_names[best[3] + 1]) and rec.b == O("box", "baseLink")
        np.testing.assert_allclose(rec.point_a, best[5], atol=0)
        # every link pair of the whole-body pair, as PyBullet's points
        pts = p.getClosestPoints(rid, bid, 10.0, physicsClientId=c)
        link_name = {-1: p.getBodyInfo(rid, physicsClientId=c)[0].decode()} | {
            j: p.getJointInfo(rid, j, physicsClientId=c)[12].decode() for j in range(p.getNumJoints(rid, physicsClientId=c))}
        assert whole.link_distances(max_distance=10.0)[0] == tuple((link_name[pt[3]], "baseLink", pt[8]) for pt in pts)
        assert len(pts) == 8 and {link_name[pt[3]] for pt in pts} == {"lbr_iiwa_link_0", "lbr_iiwa_link_1"} | {
            f"lbr_iiwa_link_{k}" for k in range(2, 8)}
        batch = whole.link_distances(np.zeros((2, 7)), max_distance=10.0)
        assert len(batch) == 2 and batch[0] == batch[1] and len(batch[0][0]) == 8 and all(
            isinstance(la, str) and lb == "baseLink" for la, lb, _ in batch[0][0])
        # the base link alone, spelled explicitly (what a bare name meant before): -0.1585
        base = sim.detector([(("robot", None), "box")]).compute_distances()
        assert abs(base[0] - (-0.1585)) < 1e-4


def test_two_boxes_moved_give_pyb_utils_numbers():
    """pyb_utils' basic test: two 1 m boxes overlapping by 0.5 m, then moved 0.5 m apart."""
    scene = {"body": [{"name": "box1", "urdf": CUBE, "position": [0, 0, 0.5]},
                      {"name": "box2", "urdf": CUBE, "position": [0.5, 0, 0.5]}]}
    with simbench.Simulation(scene, gui=False) as sim:
        det = sim.detector([("box1", "box2")])
        assert det.dof == 0
        d = det.compute_distances()
        assert len(d) == 1 and np.isclose(d[0], -0.5) and det.in_collision()
        sim.set_pose("box2", [1.5, 0, 0])
        d = det.compute_distances()
        assert np.isclose(d[0], 0.5) and not det.in_collision()
        c = sim.client
        direct = min(pt[8] for pt in p.getClosestPoints(sim.bodies["box1"], sim.bodies["box2"], 1.0,
                                                        physicsClientId=c))
        assert d[0] == direct


@pytest.mark.parametrize("form", ["stacked", "mapping", "current"])
def test_several_robots_give_pyb_utils_numbers(form):
    scene = {"body": [{"name": "ground", "urdf": "pybullet_data:plane.urdf", "fixed_base": True},
                      {"name": "left", "urdf": IIWA, "fixed_base": True},
                      {"name": "right", "urdf": IIWA, "position": [0.8, 0.1, 0], "fixed_base": True}]}
    rng = np.random.default_rng(7)
    with simbench.Simulation(scene, gui=False) as sim:
        pairs = [("left", "right"), (O("left", "lbr_iiwa_link_7"), "right"), (O("right", "lbr_iiwa_link_7"), "left"),
                 (O("left", "lbr_iiwa_link_5"), O("right", "lbr_iiwa_link_5"))]
        det = sim.detector(pairs, robot=("left", "right"))
        assert det.joint_names[:2] == ("left/lbr_iiwa_joint_1", "left/lbr_iiwa_joint_2") and det.dof == 14
        c = sim.client
        ids = {n: sim.bodies[n] for n in ("left", "right")}
        index = {"left": -2, "right": -2, ("left", "lbr_iiwa_link_7"): 6, ("right", "lbr_iiwa_link_7"): 6,
                 ("left", "lbr_iiwa_link_5"): 4, ("right", "lbr_iiwa_link_5"): 4}

        def ref_pair(obj):
            key = obj if isinstance(obj, str) else (obj.body, obj.link)
            return ids[obj if isinstance(obj, str) else obj.body], index[key]

        compared = 0
        for _ in range(30):
            ql, qr = rng.uniform(-1.5, 1.5, 7), rng.uniform(-1.5, 1.5, 7)
            if form == "stacked":
                d = det.compute_distances(np.concatenate([ql, qr]), 2.0)
            elif form == "mapping":
                d = det.compute_distances({"left": ql, "right": qr}, 2.0)
            else:  # pyb_utils' habit: whatever state the robots are in
                sim.handle("left").reset(ql)
                sim.handle("right").reset(qr)
                d = det.compute_distances(max_distance=2.0)
            for name, q in (("left", ql), ("right", qr)):  # pyb_utils' numbers on the main server
                for j in range(7):
                    p.resetJointState(ids[name], j, q[j], physicsClientId=c)
            expected = []
            for a, b in pairs:
                (ba, la), (bb, lb) = ref_pair(a), ref_pair(b)
                pts = p.getClosestPoints(ba, bb, 2.0, la, lb, physicsClientId=c)
                expected.append(min(pt[8] for pt in pts) if pts else 2.0)
            assert np.array_equal(d, expected)
            compared += 1
        assert compared == 30
