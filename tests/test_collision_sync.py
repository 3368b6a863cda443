"""One world, never stale: the collision server follows the main simulation.

Oracles: direct ``getClosestPoints`` on a reference client into which the main world's state is
copied with plain PyBullet calls, and analytic geometry (a box falling onto a plane).
"""
import numpy as np
import pybullet as p
import pytest

import simbench
from simbench.bullet.collision import NamedCollisionObject as O
from simbench.bullet.collision import robot_vs_world
from simbench.errors import SimbenchError

LINK7 = O("robot", "lbr_iiwa_link_7")
Q_SEED = np.array([0.785, 1.2, 0, -0.6, 0, 0.6, 0])  # link 7 inside cube 1 (the issue's reproduction)
BOX = "simbench:urdf/shapes/box.urdf"  # half extents 0.2 0.3 0.4


def reference(sim_or_pair, q_by_body):
    """A fresh client with the scene, the main world's base poses and joints copied by plain
    PyBullet calls, and the queried robots' joints set one by one."""
    pair = getattr(sim_or_pair, "pair", sim_or_pair)
    client = p.connect(p.DIRECT)
    ref = pair.scene.load(client)  # the same bodies by name (ids may differ after removals)
    assert set(ref.bodies) == set(pair.main.bodies)
    main = pair.main.client
    for name, bid in ref.bodies.items():
        mid = pair.main.bodies[name]
        pos, orn = p.getBasePositionAndOrientation(mid, physicsClientId=main)
        p.resetBasePositionAndOrientation(bid, pos, orn, physicsClientId=client)
        for j in range(p.getNumJoints(bid, physicsClientId=client)):
            p.resetJointState(bid, j, p.getJointState(mid, j, physicsClientId=main)[0], physicsClientId=client)
        if name in q_by_body:
            for j, x in zip(ref.body(name).movable_indices, q_by_body[name]):
                p.resetJointState(bid, j, x, physicsClientId=client)
    return ref


def direct(ref, a, b, max_distance=1.0):
    ia, la = (ref.bodies[a.body], -2) if a.whole_body else ref.link(a.body, a.link)
    ib, lb = (ref.bodies[b.body], -2) if b.whole_body else ref.link(b.body, b.link)
    pts = p.getClosestPoints(ia, ib, max_distance, la, lb, physicsClientId=ref.client)
    return min([pt[8] for pt in pts]) if pts else max_distance


def expected(sim, det, q_by_body, max_distance=1.0):
    ref = reference(sim, q_by_body)
    try:
        return np.array([direct(ref, a, b, max_distance) for a, b in det.pairs])
    finally:
        p.disconnect(physicsClientId=ref.client)


@pytest.mark.parametrize("workers", [1, 2])
def test_teleported_cube_issue_reproduction_vs_direct_pybullet(workers):
    with simbench.Simulation(gui=False) as sim:
        det = sim.detector([(LINK7, O("cube1")), (LINK7, O("ground"))], workers=workers)
        Q = np.stack([Q_SEED, Q_SEED * 0.5, np.zeros(7)])
        before = det.compute_distances(Q, workers=workers)
        assert abs(before[0, 0] - (-0.1469)) < 1e-4  # link 7 inside cube 1
        np.testing.assert_allclose(before[0], expected(sim, det, {"robot": Q_SEED}), atol=1e-12)
        sim.set_pose("cube1", [3, 3, 0.5])
        after = det.compute_distances(Q, workers=workers)
        assert after[0, 0] == 1.0  # the cube is 3 m away now: saturated, no longer -0.1469
        for q, row in zip(Q, after):
            np.testing.assert_allclose(row, expected(sim, det, {"robot": q}), atol=1e-12)
        assert det.compute_distances(Q_SEED)[0] == 1.0  # the single-configuration path too
        det.close()


@pytest.mark.parametrize("workers", [1, 2])
def test_falling_box_distance_tracks_its_height_analytic(workers):
    scene = {"body": [{"name": "ground", "urdf": "pybullet_data:plane.urdf", "fixed_base": True},
                      {"name": "robot", "urdf": "pybullet_data:kuka_iiwa/model.urdf", "fixed_base": True},
                      {"name": "box", "urdf": BOX, "position": [0.6, 0.0, 2.0]}]}
    with simbench.Simulation(scene, gui=False) as sim:
        det = sim.detector([(O("box"), O("ground")), (LINK7, O("box"))], workers=workers)
        q = np.array([0.0, 0.6, 0.0, -0.5, 0.0, 0.4, 0.0])
        analytic = direct_ok = 0
        heights = []
        for _ in range(40):
            sim.step(4)
            z = p.getBasePositionAndOrientation(sim.bodies["box"], physicsClientId=sim.client)[0][2]
            d = det.compute_distances(np.stack([q, q]), 3.0, workers=workers)[0]
            heights.append(z)
            if z > 0.41:  # in flight, upright: the box's bottom face is z - 0.4 above the plane z = 0
                assert abs(d[0] - (z - 0.4)) < 1e-6, (z, d)
                analytic += 1
            np.testing.assert_allclose(d, expected(sim, det, {"robot": q}, 3.0), atol=1e-9)
            direct_ok += 1
        assert analytic >= 30 and direct_ok == 40 and heights[0] - heights[-1] > 1.5  # it really fell


def test_second_robot_moving_and_posed_away_bodies_restored():
    iiwa = "pybullet_data:kuka_iiwa/model.urdf"
    scene = {"body": [{"name": "ground", "urdf": "pybullet_data:plane.urdf", "fixed_base": True},
                      {"name": "robot", "urdf": iiwa, "fixed_base": True},
                      {"name": "robot2", "urdf": iiwa, "position": [0.9, 0, 0], "fixed_base": True}],
             "robot": "robot"}
    rng = np.random.default_rng(3)
    with simbench.Simulation(scene, gui=False) as sim:
        det_a = sim.detector([(O("robot"), O("robot2")), (LINK7, O("robot2"))])
        det_b = sim.detector([(O("robot2", "lbr_iiwa_link_7"), O("ground"))], robot="robot2")
        compared = 0
        for _ in range(15):
            q_main2 = rng.uniform(-1.5, 1.5, 7)
            sim.handle("robot2").reset(q_main2)  # the second robot moves in the main world
            qa = rng.uniform(-1.5, 1.5, 7)
            want = expected(sim, det_a, {"robot": qa}, 2.0)
            np.testing.assert_allclose(det_a.compute_distances(qa, 2.0), want, atol=1e-12)
            det_b.compute_distances(rng.uniform(-2, 2, 7))  # poses robot2 away on the collision server
            # nothing changed in the main world, yet robot2 must be back at its main-world state
            np.testing.assert_allclose(det_a.compute_distances(qa, 2.0), want, atol=1e-12)
            np.testing.assert_allclose(det_a.compute_distances(np.stack([qa, qa]), 2.0)[1], want, atol=1e-12)
            compared += 3
        assert compared == 45
        # several robots in one detector: a mapping body -> q, a robot left out keeps its main-world q
        both = sim.detector([(O("robot"), O("robot2"))], robot=("robot", "robot2"))
        assert both.dof == 14 and both.joint_names[7] == "robot2/lbr_iiwa_joint_1"
        qa, qb = rng.uniform(-1, 1, 7), rng.uniform(-1, 1, 7)
        want = expected(sim, both, {"robot": qa, "robot2": qb}, 2.0)
        np.testing.assert_allclose(both.compute_distances(np.concatenate([qa, qb]), 2.0), want, atol=1e-12)
        np.testing.assert_allclose(both.compute_distances({"robot": qa, "robot2": qb}, 2.0), want, atol=1e-12)
        main_q2 = sim.handle("robot2").q
        np.testing.assert_allclose(both.compute_distances({"robot": qa}, 2.0),
                                   expected(sim, both, {"robot": qa, "robot2": main_q2}, 2.0), atol=1e-12)


@pytest.mark.parametrize("workers", [1, 2])
def test_bodies_added_and_removed_vs_direct_pybullet(workers):
    with simbench.Simulation(gui=False) as sim:
        old = sim.detector([(LINK7, O("cube1")), (LINK7, O("cube2"))], workers=workers)
        keep = sim.detector([(LINK7, O("cube3"))], workers=workers)
        Q = np.random.default_rng(5).uniform(-1.5, 1.5, (6, 7))
        old.compute_distances(Q, workers=workers)
        sim.remove_body("cube1")
        with pytest.raises(SimbenchError, match="'cube1' was removed"):
            old.compute_distances(Q[0])
        for q, row in zip(Q, keep.compute_distances(Q, workers=workers)):
            np.testing.assert_allclose(row, expected(sim, keep, {"robot": q}), atol=1e-12)
        bid = sim.add_body("box", BOX, position=[0.5, 0.2, 0.6], fixed_base=True)
        assert bid == sim.pair.collision.bodies["box"] == sim.bodies["box"]
        assert "cube1" not in sim.bodies and sim.scene.scene.body("box").position == (0.5, 0.2, 0.6)
        det = sim.detector(robot_vs_world(sim.scene, "robot"), workers=workers)
        assert any(b.body == "box" for _, b in det.pairs)
        det.start_workers()  # wait until the helper has loaded the scene with the same (reused) ids
        D = det.compute_distances(np.repeat(Q, 20, axis=0), workers=workers)[::20]
        if workers == 2:
            assert det._pool.helpers[0].done > 0
        assert (D < 1.0).any()
        for q, row in zip(Q, D):
            np.testing.assert_allclose(row, expected(sim, det, {"robot": q}), atol=1e-12)
        if workers == 2:
            assert np.array_equal(D, det.compute_distances(Q, workers=1))
        for d in (old, keep, det):
            d.close()


def test_query_without_q_uses_the_main_world_configuration():
    with simbench.Simulation(gui=False) as sim:
        det = sim.detector(robot_vs_world(sim.scene, "robot"))
        for q in np.random.default_rng(1).uniform(-1.5, 1.5, (5, 7)):
            sim.robot.reset(q)
            d = det.compute_distances()
            assert np.array_equal(d, det.compute_distances(q))
            np.testing.assert_allclose(d, expected(sim, det, {}), atol=1e-12)
            assert det.in_collision() == bool((d < 0).any())
            np.testing.assert_allclose(det.current_configuration(), q, atol=1e-12)


def test_pair_sync_for_users_driving_pybullet_directly():
    with simbench.connect(gui=False) as pair:
        det = pair.detector([(LINK7, O("cube1"))])
        bare = simbench.CollisionDetector(pair.collision, [(LINK7, O("cube1"))])  # a LoadedScene: as it is
        assert det.compute_distances(Q_SEED)[0] < -0.1
        p.resetBasePositionAndOrientation(pair.main.bodies["cube1"], [3, 3, 0.5], [0, 0, 0, 1],
                                          physicsClientId=pair.main.client)
        pair.sync()
        assert det.compute_distances(Q_SEED)[0] == 1.0
        np.testing.assert_allclose(det.compute_distances(Q_SEED), expected(pair, det, {"robot": Q_SEED}), atol=0)
        assert bare.compute_distances(Q_SEED)[0] == 1.0  # sync() moved the collision server's cube
        # the main world is only read after a change (the tight query loop stays fast)
        ws = pair.world_sync()
        reads = ws.reads
        for q in np.random.default_rng(0).uniform(-1, 1, (50, 7)):
            det.compute_distances(q)
            det.in_collision(q)
        assert ws.reads == reads
        pair.mark_changed()
        det.compute_distances(Q_SEED)
        det.compute_distances(Q_SEED)
        assert ws.reads == reads + 1
