"""``sim.contacts`` and ``sim.ray_test`` / ``ray_test_batch``: the main simulation's contact
points and ray hits by body and link name.

Oracles: direct PyBullet calls (``getContactPoints``, ``rayTest``, ``rayTestBatch``) on the
same client, statics (a box resting on the ground: the normal forces sum to m g) and analytic
geometry (a ray straight down onto a box of known size).
"""
import numpy as np
import pybullet as p
import pytest

from simbench.errors import ShapeError, UnknownNameError
from simbench.sim import Contact, RayHit, Simulation

BOX_HALF = (0.2, 0.3, 0.4)   # simbench:urdf/shapes/box.urdf
SCENE = {"gravity": [0, 0, -9.81],
         "body": [{"name": "ground", "urdf": "pybullet_data:plane.urdf", "fixed_base": True},
                  {"name": "box", "urdf": "simbench:urdf/shapes/box.urdf", "position": [0.5, -0.2, 0.45]},
                  {"name": "robot", "urdf": "pybullet_data:kuka_iiwa/model.urdf", "fixed_base": True,
                   "position": [-1.5, 0, 0]}]}


@pytest.fixture(scope="module")
def sim():
    with Simulation(SCENE, gui=False) as s:
        s.advance(1.5)  # the box falls 5 cm and comes to rest on the ground
        yield s


def test_box_resting_on_the_ground_normal_forces_sum_to_m_g(sim):
    mass = p.getDynamicsInfo(sim.bodies["box"], -1, physicsClientId=sim.client)[0]
    found = sim.contacts("box", "ground")
    assert len(found) >= 3 and all(isinstance(c, Contact) for c in found)
    assert {(c.body_a, c.link_a, c.body_b, c.link_b) for c in found} == {("box", "box_link", "ground", "planeLink")}
    assert sum(c.normal_force for c in found) == pytest.approx(mass * 9.81, rel=1e-3)
    for c in found:
        assert np.allclose(c.normal_on_b, [0, 0, 1], atol=1e-6)       # from the ground up to the box
        assert c.position_on_b[2] == pytest.approx(0.0, abs=1e-3)       # on the ground's surface
        assert abs(c.distance) < 1e-3


def test_contacts_equal_direct_pybullet_calls(sim):
    box, ground = sim.bodies["box"], sim.bodies["ground"]
    raw = p.getContactPoints(bodyA=box, bodyB=ground, physicsClientId=sim.client)
    ours = sim.contacts("box", "ground")
    assert len(ours) == len(raw) >= 3
    for c, r in zip(ours, raw):
        assert np.array_equal(c.position_on_a, r[5]) and np.array_equal(c.position_on_b, r[6])
        assert np.array_equal(c.normal_on_b, r[7]) and c.distance == r[8] and c.normal_force == r[9]
        assert (c.friction_1, c.friction_2) == (r[10], r[12])
        assert np.array_equal(c.friction_dir_1, r[11]) and np.array_equal(c.friction_dir_2, r[13])
    # the same query spelled other ways
    assert len(sim.contacts("box")) == len(p.getContactPoints(bodyA=box, physicsClientId=sim.client))
    assert len(sim.contacts(b="box")) == len(sim.contacts("box"))
    assert len(sim.contacts(("box", "box_link"), "ground")) == len(raw)
    everything = sim.contacts()
    assert len(everything) == len(p.getContactPoints(physicsClientId=sim.client))
    assert sim.contacts("box", "robot") == []                          # they do not touch


def test_contacts_bad_names(sim):
    with pytest.raises(UnknownNameError, match=r"unknown body 'boxx'.*did you mean 'box'"):
        sim.contacts("boxx")
    with pytest.raises(UnknownNameError, match=r"unknown link 'lid'"):
        sim.contacts(("box", "lid"))


def test_ray_down_onto_the_box(sim):
    pos, _ = p.getBasePositionAndOrientation(sim.bodies["box"], physicsClientId=sim.client)
    top = pos[2] + BOX_HALF[2]
    hit = sim.ray_test([pos[0], pos[1], 3.0], [pos[0], pos[1], -1.0])
    assert isinstance(hit, RayHit) and hit.hit
    assert (hit.body, hit.link) == ("box", "box_link")
    assert hit.position[2] == pytest.approx(top, abs=1e-4)  # analytic: the top face
    assert hit.fraction == pytest.approx((3.0 - top) / 4.0, abs=1e-4)
    assert np.allclose(hit.normal, [0, 0, 1], atol=1e-4)  # the box settled tilted by ~1e-5 rad
    miss = sim.ray_test([0, 0, 3.0], [0, 0, 10.0])
    assert not miss.hit and miss.body is None and miss.fraction == 1.0 and np.isnan(miss.position).all()
    ground = sim.ray_test([3, 3, 1], [3, 3, -1])
    assert (ground.body, ground.link) == ("ground", "planeLink") and ground.position[2] == pytest.approx(0, abs=1e-6)
    with pytest.raises(ShapeError, match=r"expected \(3,\) each"):
        sim.ray_test([[0, 0, 1]], [0, 0, 0])


def test_ray_batch_equals_rayTestBatch(sim):
    x, y = np.meshgrid(np.linspace(-2, 1, 30), np.linspace(-1, 1, 20))
    starts = np.stack([x, y, np.full_like(x, 2.0)], axis=-1)          # (20, 30, 3)
    ends = starts - [0, 0, 3.0]
    batch = sim.ray_test_batch(starts, ends)
    assert batch.fraction.shape == (20, 30) and batch.position.shape == (20, 30, 3)
    raw = p.rayTestBatch(starts.reshape(-1, 3).tolist(), ends.reshape(-1, 3).tolist(), physicsClientId=sim.client)
    names = {v: k for k, v in sim.bodies.items()}
    flat_b = [b for row in batch.body for b in row]
    for k, r in enumerate(raw):
        assert flat_b[k] == (names[r[0]] if r[0] >= 0 else None)
        if r[0] >= 0:
            assert batch.fraction.reshape(-1)[k] == r[2]
            assert np.array_equal(batch.position.reshape(-1, 3)[k], r[3])
    assert {"box", "ground", "robot"} <= set(flat_b)
    assert len(raw) == 600
    # more rays than one rayTestBatch call answers (16,383; 16,384 silently drop one): chunks
    many = np.repeat(starts.reshape(-1, 3), 30, axis=0)                 # 18,000 rays
    big = sim.ray_test_batch(many, many - [0, 0, 3.0])
    assert big.fraction.shape == (18000,)
    assert np.array_equal(big.fraction, np.repeat(batch.fraction.reshape(-1), 30))


def test_contacts_after_a_teleport_are_those_of_the_world_now():
    """A walkthrough teleported cube1 away from the arm pressing into it: sim.contacts still
    listed 3 points where the cube used to be, while the detector said 1 m. Oracle: analytic
    (the cube 4 m away: no contact) and PyBullet's getClosestPoints, which ignores the stale
    manifold (the cube put back into the arm: contacts exactly where it reports penetration)."""
    q = np.array([0.785, 1.2, 0, -0.6, 0, 0.6, 0])
    with Simulation("simbench:kuka_cubes.toml", gui=False) as sim:
        sim.robot.reset(q)
        sim.step()
        home = sim.base_pose("cube1")
        assert len(sim.contacts("robot", "cube1")) > 0                      # the premise
        sim.set_pose("cube1", [3.0, 3.0, 0.5])
        assert sim.contacts("robot", "cube1") == []                        # it was 3 stale points
        sim.set_pose("cube1", *home)
        got = sim.contacts("robot", "cube1")
        rid, cid = sim.bodies["robot"], sim.bodies["cube1"]
        truth = p.getClosestPoints(rid, cid, 0.0, physicsClientId=sim.client)
        names = {i: n for n, i in sim.body("robot").links.items()}
        assert got and {c.link_a for c in got} == {names[pt[3]] for pt in truth}
        assert min(c.distance for c in got) == pytest.approx(min(pt[8] for pt in truth), abs=1e-6)
        sim.step()                                                         # and a step still works
        assert sim.contacts("robot", "cube1") and sim.t > 0
