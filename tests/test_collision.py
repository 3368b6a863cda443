"""Collision detector vs direct PyBullet calls (the oracle), the scenario of Adam Heins's "shortest
distances with PyBullet"."""
import numpy as np
import pybullet as p
import pytest

import simbench
from simbench.bullet.collision import (ClosestPoints, CollisionDetector, NamedCollisionObject,
                                       adjacent_links, all_links, clearance_color, draw_closest_points,
                                       robot_vs_world, sample_disabled_pairs, self_collision_pairs)
from simbench.bullet.scene import ASSETS_DIR, Scene
from simbench.bullet.srdf import read_srdf_disabled, write_srdf_disabled
from simbench.errors import ShapeError, SimbenchError, UnknownNameError

SCENES = ASSETS_DIR / "scenes"
LINK7 = NamedCollisionObject("robot", "lbr_iiwa_link_7")
POST_PAIRS = [(LINK7, NamedCollisionObject(o)) for o in ("ground", "cube1", "cube2", "cube3")]


def load(name):
    client = p.connect(p.DIRECT)
    return Scene.from_toml(SCENES / name).load(client)


@pytest.fixture(scope="module")
def seed():
    loaded = load("kuka_cubes.toml")
    ref = load("kuka_cubes.toml")
    yield loaded, ref
    for x in (loaded, ref):
        p.disconnect(physicsClientId=x.client)


@pytest.fixture(scope="module")
def kuka_self():
    loaded = load("kuka_self.toml")
    pairs = self_collision_pairs(loaded, "robot", disabled=None) + robot_vs_world(loaded)
    det = CollisionDetector(loaded, pairs)
    yield loaded, det
    det.close()
    p.disconnect(physicsClientId=loaded.client)


def per_joint_reset(loaded, body, q_by_name):
    b = loaded.body(body)
    for name, value in q_by_name.items():
        p.resetJointState(b.id, b.joints[name], value, physicsClientId=loaded.client)


def direct_closest(ref, a, b, max_distance):
    """min-distance point of getClosestPoints(a, b) on the reference client (raw tuple) or None."""
    ia, la = (ref.bodies[a.body], -2) if a.whole_body else ref.link(a.body, a.link)
    ib, lb = (ref.bodies[b.body], -2) if b.whole_body else ref.link(b.body, b.link)
    pts = p.getClosestPoints(ia, ib, max_distance, linkIndexA=la, linkIndexB=lb, physicsClientId=ref.client)
    return min(pts, key=lambda pt: pt[8]) if pts else None


# ---------------------------------------------------------------------- the blog post's scenario
def test_seed_scenario_equals_direct_getclosestpoints(seed):
    loaded, ref = seed
    det = CollisionDetector(loaded.client, POST_PAIRS, bodies=loaded.bodies)  # the post's raw client form
    assert det.joint_names == loaded.robot.model.joint_names
    rng = np.random.default_rng(4)
    n_near = 0
    for q in np.pi * (rng.random((60, 7)) - 0.5):
        per_joint_reset(ref, "robot", dict(zip(det.joint_names, q)))
        d = det.compute_distances(q)
        cps = det.closest_points(q)
        for k, (a, b) in enumerate(POST_PAIRS):
            pt = direct_closest(ref, a, b, 1.0)
            expected = 1.0 if pt is None else pt[8]
            n_near += pt is not None
            assert abs(d[k] - expected) <= 1e-12
            # a whole-body object: the result names the link where the closest point lies
            b_link = b if pt is None else NamedCollisionObject(b.body, ref.body(b.body).link_names[pt[4] + 1])
            assert cps[k].a == a and cps[k].b == b_link and cps[k].distance == d[k]
            if pt is not None:
                np.testing.assert_allclose(cps[k].point_a, pt[5], atol=1e-12)
                np.testing.assert_allclose(cps[k].point_b, pt[6], atol=1e-12)
                np.testing.assert_allclose(cps[k].normal, pt[7], atol=1e-12)
        assert det.in_collision(q) == bool((d < 0).any())
    assert n_near > 60  # most queries found something within 1 m


def test_in_collision_agrees_with_contact_points_including_self(kuka_self):
    loaded, det = kuka_self
    ref = load("kuka_self.toml")
    rid = ref.bodies["robot"]
    Q = loaded.robot.model.random_configuration(0, 300)
    self_hits = world_hits = 0
    try:
        for q in Q:
            per_joint_reset(ref, "robot", dict(zip(det.joint_names, q)))
            p.performCollisionDetection(physicsClientId=ref.client)
            contacts = [cp for cp in p.getContactPoints(bodyA=rid, physicsClientId=ref.client)
                        + p.getContactPoints(bodyB=rid, physicsClientId=ref.client) if cp[8] < 0]
            self_hits += any(cp[1] == cp[2] for cp in contacts)
            world_hits += any(cp[1] != cp[2] for cp in contacts)
            assert det.in_collision(q) == bool(contacts), (q, [(cp[1:5], cp[8]) for cp in contacts])
    finally:
        p.disconnect(physicsClientId=ref.client)
    assert self_hits >= 10 and world_hits >= 10, (self_hits, world_hits)


def test_main_server_untouched():
    with simbench.connect(SCENES / "kuka_cubes.toml", gui=False) as pair:
        main, rid = pair.main.client, pair.main.bodies["robot"]
        for j, (x, v) in enumerate(zip(np.linspace(-1, 1, 7), np.linspace(0.3, -0.5, 7))):
            p.resetJointState(rid, j, x, targetVelocity=v, physicsClientId=main)
        p.setGravity(0, 0, -9.81, physicsClientId=main)
        p.stepSimulation(physicsClientId=main)

        def state():
            return (p.getJointStates(rid, range(7), physicsClientId=main),
                    [p.getLinkState(rid, j, computeLinkVelocity=1, physicsClientId=main) for j in range(7)],
                    [p.getBasePositionAndOrientation(b, physicsClientId=main) for b in pair.main.bodies.values()])

        before = state()
        det = CollisionDetector(pair, POST_PAIRS + self_collision_pairs(pair, "robot", disabled=None))
        Q = pair.main.robot.model.random_configuration(1, 40)
        det.compute_distances(Q)
        det.closest_points(Q[0])
        det.in_collision(Q)
        det.colliding_pairs(Q[3])
        assert state() == before  # bit for bit (tuples of floats)
        # and the collision server did move
        assert p.getJointState(rid, 0, physicsClientId=pair.collision.client)[0] == Q[3, 0]


def test_batched_and_workers_equal_one_at_a_time(kuka_self):
    loaded, det = kuka_self
    Q = loaded.robot.model.random_configuration(7, 300)
    single_d = np.array([det.compute_distances(q, 0.3) for q in Q])
    single_c = np.array([det.in_collision(q) for q in Q])
    single_cp = [det.closest_point_arrays(q, 0.3) for q in Q]
    assert single_d.shape == (300, len(det.pairs)) and single_c.any() and not single_c.all()
    assert np.array_equal(det.compute_distances(Q, 0.3), single_d)
    assert np.array_equal(det.compute_distances(Q.reshape(3, 100, 7), 0.3), single_d.reshape(3, 100, -1))
    assert np.array_equal(det.in_collision(Q), single_c)
    for margin in (-0.01, 0.0, 0.02):  # in_collision's early exit agrees with the distances
        assert np.array_equal(det.in_collision(Q, margin), (single_d < margin).any(axis=1))
    det.start_workers(2)
    perm = np.random.default_rng(0).permutation(300)  # a different history of configurations
    assert np.array_equal(det.compute_distances(Q[perm], 0.3, workers=2), single_d[perm])
    assert np.array_equal(det.compute_distances(Q, 0.3, workers=2), single_d)
    assert np.array_equal(det.in_collision(Q, workers=2), single_c)
    cp = det.closest_point_arrays(Q, 0.3, workers=2)
    for key in ("distance", "point_a", "point_b", "normal"):
        assert np.array_equal(cp[key], np.array([s[key] for s in single_cp]), equal_nan=True), key
    assert det._pool is not None and all(h.proc.is_alive() and h.done > 0 for h in det._pool.helpers)
    # an obstacle moved in the caller's collision server is seen by the workers too
    cube = loaded.bodies["cube1"]
    p.resetBasePositionAndOrientation(cube, [0.3, 0.3, 0.5], [0, 0, 0, 1], physicsClientId=loaded.client)
    try:
        moved = np.array([det.compute_distances(q, 0.3) for q in Q[:64]])
        assert not np.array_equal(moved, single_d[:64])
        assert np.array_equal(det.compute_distances(Q[:64], 0.3, workers=2), moved)
    finally:
        p.resetBasePositionAndOrientation(cube, [1, 1, 0.5], [0, 0, 0, 1], physicsClientId=loaded.client)
    det.close()
    assert det._pool is None


def test_spawned_workers_and_constructor_workers(kuka_self, monkeypatch):
    loaded, det = kuka_self
    monkeypatch.setenv("SIMBENCH_WORKER_START", "spawn")  # as when a GUI is open
    Q = loaded.robot.model.random_configuration(11, 100)
    expected = np.array([det.compute_distances(q) for q in Q])
    with CollisionDetector(loaded, det.pairs, workers=2) as det2:
        assert det2._pool is not None  # helpers boot in the background at construction
        det2.start_workers()  # wait until ready, so that the helper takes part
        assert np.array_equal(det2.compute_distances(Q), expected)
        assert det2._pool.helpers[0].done > 0
        assert np.array_equal(det2.compute_distances(Q, workers=1), expected)


# ---------------------------------------------------------------------- joint order, fixed joints
def test_fixed_joint_mid_chain_and_dict_q():
    loaded, ref = load("chain_fixed.toml"), load("chain_fixed.toml")
    try:
        arm = loaded.body("arm")
        pairs = self_collision_pairs(loaded, "arm", disabled=None) + robot_vs_world(loaded)
        det = CollisionDetector(loaded, pairs)
        assert det.robot_name == "arm" and det.joint_names == ("j1", "j2", "j3", "j4") == arm.model.joint_names
        rng = np.random.default_rng(2)
        for q in rng.uniform(-2.5, 2.5, (40, 4)):
            per_joint_reset(ref, "arm", dict(zip(det.joint_names, q)))
            expected = []
            for a, b in det.pairs:
                pt = direct_closest(ref, a, b, 1.0)
                expected.append(1.0 if pt is None else pt[8])
            d = det.compute_distances(dict(zip(det.joint_names, q)))
            np.testing.assert_allclose(d, expected, rtol=0, atol=1e-12)
            assert p.getJointState(arm.id, arm.joints["tool_mount"], physicsClientId=loaded.client)[0] == 0.0
    finally:
        for x in (loaded, ref):
            p.disconnect(physicsClientId=x.client)


def test_pair_builders_adjacency_across_fixed_joint_and_empty_link():
    loaded = load("chain_fixed.toml")
    try:
        adj = {tuple(sorted(x)) for x in adjacent_links(loaded, "arm")}
        assert adj == {("arm1", "base"), ("base", "tool1"), ("arm1", "tool1"), ("arm1", "arm2"),
                       ("arm2", "tool1"), ("arm2", "wrist"), ("hand", "wrist"), ("arm2", "hand")}
        pairs = {(a.link, b.link) for a, b in self_collision_pairs(loaded, "arm", disabled=None)}
        assert pairs == {("base", "arm2"), ("base", "hand"), ("arm1", "hand"), ("tool1", "hand")}
        everything = {(a.link, b.link) for a, b in self_collision_pairs(loaded, "arm", exclude_adjacent=False, disabled=None)}
        assert len(everything) == 9  # 5 links with geometry, minus the rigid arm1-tool1 pair
        assert [o.link for o in all_links(loaded, "arm")] == ["base", "arm1", "tool1", "arm2", "hand"]
        assert len(all_links(loaded, "arm", with_geometry=False)) == 6
        world = {(str(a), str(b)) for a, b in robot_vs_world(loaded)}
        assert ("arm/hand", "post/box_link") in world and not any(a == "arm/base" for a, _ in world)
        assert len(world) == 8
        # a Scene (not loaded) works too, loaded into a temporary server
        assert len(self_collision_pairs(Scene.from_toml(SCENES / "chain_fixed.toml"), "arm", disabled=None)) == 4
    finally:
        p.disconnect(physicsClientId=loaded.client)


# ---------------------------------------------------------------------- disabled pairs, SRDF, sampling
def test_disabled_pairs_and_srdf(tmp_path, seed):
    loaded, _ = seed
    pairs = self_collision_pairs(loaded, "robot", disabled=None) + POST_PAIRS
    det = CollisionDetector(loaded, pairs, disabled=[("lbr_iiwa_link_0", "lbr_iiwa_link_2"),
                                                     (LINK7, "cube2"), ("cube3", "lbr_iiwa_link_7")])
    names = det.pair_names
    assert len(det.pairs) == len(pairs) - 3
    assert ("robot/lbr_iiwa_link_0", "robot/lbr_iiwa_link_2") not in names
    assert ("robot/lbr_iiwa_link_7", "cube2") not in names and ("robot/lbr_iiwa_link_7", "cube1") in names
    path = tmp_path / "iiwa.srdf"
    write_srdf_disabled(path, [("lbr_iiwa_link_1", "lbr_iiwa_link_3", "Never"),
                               ("lbr_iiwa_link_4", "lbr_iiwa_link_6", "Never")], "iiwa")
    entries = read_srdf_disabled(path)
    assert [(e.link1, e.link2, e.reason) for e in entries] == [("lbr_iiwa_link_1", "lbr_iiwa_link_3", "Never"),
                                                              ("lbr_iiwa_link_4", "lbr_iiwa_link_6", "Never")]
    det2 = CollisionDetector(loaded, pairs, disabled=path)
    assert len(det2.pairs) == len(pairs) - 2
    assert len(self_collision_pairs(loaded, "robot", disabled=path)) == 21 - 2
    with pytest.raises(UnknownNameError, match="lbr_iiwa_link_1"):
        CollisionDetector(loaded, pairs, disabled=[("lbr_iiwa_lnk_1", "lbr_iiwa_link_3")])


def test_sampling_tool_writes_srdf(tmp_path):
    loaded, ref = load("chain_fixed.toml"), load("chain_fixed.toml")
    try:
        rep = sample_disabled_pairs(loaded, "arm", n=400, seed=1, always_fraction=0.02)
        assert rep.samples == 400 and rep.configurations.shape == (400, 4)
        assert set(rep.adjacent) == {tuple(sorted(x)) for x in adjacent_links(loaded, "arm")}
        sampled = {(a.link, b.link) for a, b in self_collision_pairs(loaded, "arm", disabled=None)}
        assert set(rep.fraction) == sampled
        # independent fractions: direct getClosestPoints on the same samples
        hits = dict.fromkeys(sampled, 0)
        for q in rep.configurations:
            per_joint_reset(ref, "arm", dict(zip(("j1", "j2", "j3", "j4"), q)))
            for a, b in sampled:
                pt = direct_closest(ref, NamedCollisionObject("arm", a), NamedCollisionObject("arm", b), 0.01)
                hits[(a, b)] += pt is not None and pt[8] < 0
        assert rep.fraction == {k: v / 400 for k, v in hits.items()}
        assert set(rep.never) == {k for k, v in hits.items() if v == 0}
        assert set(rep.always) == {k for k, v in hits.items() if v / 400 >= 0.02} == {("base", "hand")}
        assert rep.default == []
        path = tmp_path / "arm.srdf"
        rep.write(path)
        back = read_srdf_disabled(path)
        assert len(back) == len(rep.adjacent) + len(rep.always) + len(rep.never)
        assert {(e.link1, e.link2) for e in back if e.reason == "Never"} == set(rep.never)
        kept = CollisionDetector(loaded, self_collision_pairs(loaded, "arm", disabled=None), disabled=path)
        assert kept.pairs == []
        kept = CollisionDetector(loaded, self_collision_pairs(loaded, "arm", disabled=None), disabled=rep.disabled()[:-1])
        assert len(kept.pairs) == 1
    finally:
        for x in (loaded, ref):
            p.disconnect(physicsClientId=x.client)


# ---------------------------------------------------------------------- errors
def test_error_messages(seed):
    loaded, _ = seed
    with pytest.raises(UnknownNameError, match=r"unknown body 'robt'.*did you mean 'robot'"):
        CollisionDetector(loaded, [(NamedCollisionObject("robt", "lbr_iiwa_link_7"), "ground")])
    with pytest.raises(UnknownNameError, match=r"unknown link 'lbr_iiwa_link_8'.*did you mean.*lbr_iiwa_link_"):
        CollisionDetector(loaded, [(NamedCollisionObject("robot", "lbr_iiwa_link_8"), "ground")])
    with pytest.raises(UnknownNameError, match="cube1"):
        CollisionDetector(loaded.client, [(LINK7, "cube11")], bodies=loaded.bodies)
    det = CollisionDetector(loaded, POST_PAIRS)
    order = r"lbr_iiwa_joint_1', 'lbr_iiwa_joint_2', .*'lbr_iiwa_joint_7'"
    with pytest.raises(ShapeError, match=r"shape \(6,\).*expected \(7,\).*" + order):
        det.compute_distances(np.zeros(6))
    with pytest.raises(ShapeError, match=order):
        det.in_collision(np.zeros((5, 8)))
    with pytest.raises(ShapeError, match="non-finite.*lbr_iiwa_joint_3"):
        det.compute_distances([0, 0, np.nan, 0, 0, 0, 0])
    with pytest.raises(UnknownNameError, match="did you mean 'lbr_iiwa_joint_1'"):
        det.compute_distances({"lbr_iiwa_jiont_1": 0.0})
    with pytest.raises(ShapeError, match="missing joints"):
        det.compute_distances({"lbr_iiwa_joint_1": 0.0})
    # a mapping's keys are robot names (each robot's q) or joint names: a misspelled robot name
    # is suggested as such, on one punctuated line (it was read as a joint name, without a hint)
    with pytest.raises(UnknownNameError, match=r"unknown robot or movable joint 'robt' in the keys of q; "
                                               r"did you mean 'robot'\? Valid robot or movable joint names"):
        det.compute_distances({"robt": np.zeros(7)})
    assert det.compute_distances({"robot": np.zeros(7)}).shape == (len(POST_PAIRS),)
    with pytest.raises(UnknownNameError, match=r"unknown link 'nolink' in robot 'r'\. Valid link names"):
        raise UnknownNameError("link", "nolink", ["zzzzzzzz"], "robot 'r'")
    with pytest.raises(SimbenchError, match="workers"):
        det.compute_distances(np.zeros((3, 7)), workers=0)
    with pytest.raises(SimbenchError, match="LoadedScene"):
        CollisionDetector(loaded.client, POST_PAIRS, bodies=loaded.bodies).compute_distances(np.zeros((3, 7)), workers=2)


# ---------------------------------------------------------------------- GUI helper (headless here)
def test_draw_closest_points_and_colours(seed):
    loaded, _ = seed
    assert clearance_color(-0.01) == (1.0, 0.0, 0.0) and clearance_color(0.3) == (0.0, 1.0, 0.0)
    r, g, _ = clearance_color(0.15)
    assert r == 1.0 and g == 1.0  # yellow halfway
    det = CollisionDetector(loaded, POST_PAIRS)
    res = det.closest_points(np.zeros(7))
    assert all(isinstance(x, ClosestPoints) for x in res)
    ids = draw_closest_points(loaded.client, res)  # DIRECT: PyBullet draws nothing, ids are -1
    assert len(ids) == 4
    assert len(draw_closest_points(loaded.client, det.closest_points(np.full(7, 0.3)), replace=ids)) == 4
    with pytest.raises(ShapeError):
        draw_closest_points(loaded.client, res, replace=[1])


GUI_SCRIPT = """
import numpy as np, simbench
from simbench.bullet.collision import CollisionDetector, draw_closest_points, robot_vs_world
with simbench.connect(gui=True) as pair:
    det = CollisionDetector(pair, robot_vs_world(pair))
    res = det.closest_points(np.full(7, 0.4))
    ids = draw_closest_points(pair.main.client, res)
    again = draw_closest_points(pair.main.client, det.closest_points(np.full(7, -0.4)), replace=ids)
    print("found", sum(r.found for r in res), "drawn", sum(i >= 0 for i in ids), "same", ids == again or
          [a for a, b in zip(ids, again) if a >= 0 and b >= 0 and a != b] == [])
    # with a GUI open the worker processes are spawned, not forked
    from simbench.bullet.collision_workers import start_method
    Q = np.random.default_rng(0).uniform(-2, 2, (200, 7))
    det.start_workers(2)
    ok = np.array_equal(det.compute_distances(Q, workers=2), np.array([det.compute_distances(q) for q in Q]))
    print("start", start_method(), "workers_equal", ok, "helper_chunks", det._pool.helpers[0].done)
    det.close()
"""


@pytest.mark.gui
def test_draw_closest_points_in_gui():
    import subprocess
    import sys

    from conftest import require_xvfb

    proc = subprocess.run([require_xvfb(), "-a", "-s", "-screen 0 640x480x24", sys.executable, "-c", GUI_SCRIPT],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    found, drawn = int(proc.stdout.split("found ")[1].split()[0]), int(proc.stdout.split("drawn ")[1].split()[0])
    assert found > 0 and drawn == found and "same True" in proc.stdout, proc.stdout
    assert "start spawn workers_equal True" in proc.stdout and "helper_chunks 0" not in proc.stdout, proc.stdout
