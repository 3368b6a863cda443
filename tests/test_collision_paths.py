"""Path checking: the motion bound against PyBullet's forward kinematics sampled densely, and
the edge checks against dense sampling with direct ``getClosestPoints`` calls."""
import numpy as np
import pybullet as p
import pytest

from simbench.bullet.collision import CollisionDetector, NamedCollisionObject as O
from simbench.bullet.collision_paths import motion_bound, steps
from simbench.bullet.scene import ASSETS_DIR, Scene
from simbench.errors import ShapeError, SimbenchError

OBSTACLES = ("cube1", "cube2", "cube3", "ground")


@pytest.fixture(scope="module")
def world():
    client = p.connect(p.DIRECT)
    ref_client = p.connect(p.DIRECT)
    scene = Scene.from_toml(ASSETS_DIR / "scenes" / "kuka_cubes.toml")
    loaded, ref = scene.load(client), scene.load(ref_client)
    # the whole robot against whole obstacles, except its base resting on the ground
    det = CollisionDetector(loaded, [(O("robot"), O(o)) for o in OBSTACLES], disabled=[(("robot", None), "ground")])
    yield det, ref
    det.close()
    for c in (client, ref_client):
        p.disconnect(physicsClientId=c)


def edges(seed, n, spread):
    rng = np.random.default_rng(seed)
    q0 = rng.uniform(-2.0, 2.0, (n, 7))
    return q0, q0 + rng.uniform(-spread, spread, (n, 7))


def set_q(ref, q):
    for j, x in zip(ref.robot.movable_indices, q):
        p.resetJointState(ref.bodies["robot"], j, x, physicsClientId=ref.client)


def test_motion_bound_vs_dense_forward_kinematics_on_1000_edges(world):
    """Points fixed on each link (the corners of a box containing its geometry) never travel
    farther than the resolution between two checked configurations."""
    det, ref = world
    rid, c = ref.bodies["robot"], ref.client
    links = list(range(7))
    set_q(ref, np.zeros(7))
    corners = []  # per link: 8 points in the link frame
    for li in links:
        lo, hi = p.getAABB(rid, li, physicsClientId=c)
        st = p.getLinkState(rid, li, computeForwardKinematics=1, physicsClientId=c)
        inv_pos, inv_orn = p.invertTransform(st[4], st[5])
        corners.append([p.multiplyTransforms(inv_pos, inv_orn, [x, y, z], [0, 0, 0, 1])[0]
                        for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])])

    def points(q):
        set_q(ref, q)
        states = p.getLinkStates(rid, links, computeForwardKinematics=1, physicsClientId=c)
        return np.array([[p.multiplyTransforms(s[4], s[5], pt, [0, 0, 0, 1])[0] for pt in corners[k]]
                         for k, s in enumerate(states)])

    resolution = 0.005
    q0, q1 = edges(11, 1000, 0.4)
    n = steps(det, q1 - q0, resolution)
    rng = np.random.default_rng(1)
    worst, checked = 0.0, 0
    for a, b, k in zip(q0, q1, n):
        for i in {0, int(rng.integers(k)), k - 1}:  # checked step i: from t = i/k to (i+1)/k
            ts = np.linspace(i / k, (i + 1) / k, 9)
            pts = np.array([points(a + t * (b - a)) for t in ts])      # (9, links, 8, 3)
            travel = np.linalg.norm(np.diff(pts, axis=0), axis=-1).sum(axis=0)
            worst = max(worst, travel.max() / resolution)
            checked += 1
    assert checked >= 2000
    assert worst <= 1.0, worst       # the bound holds
    assert worst > 0.2, worst        # and is not absurdly loose


def dense_collides(ref, a, b, k):
    """Direct PyBullet on 4 k + 1 configurations: (any penetration, smallest distance found)."""
    rid, c = ref.bodies["robot"], ref.client
    hit, smallest = False, np.inf
    for t in np.linspace(0.0, 1.0, 4 * k + 1):
        set_q(ref, a + t * (b - a))
        for name in OBSTACLES:
            for pt in p.getClosestPoints(rid, ref.bodies[name], 0.05, physicsClientId=c):
                if name == "ground" and pt[3] == -1:
                    continue  # the base on the ground, disabled in the detector too
                smallest = min(smallest, pt[8])
                hit = hit or pt[8] < 0
    return hit, smallest


def test_path_checks_never_miss_a_collision_dense_sampling_finds_on_1000_edges(world):
    det, ref = world
    resolution = 0.02
    q0, q1 = edges(5, 1000, 0.3)
    n = steps(det, q1 - q0, resolution)
    counts = {"dense_hit": 0, "uniform_flagged": 0, "advance_flagged": 0, "flagged_far_from_contact": 0}
    for a, b, k in zip(q0, q1, n):
        hit, smallest = dense_collides(ref, a, b, k)
        free_u = det.path_is_free(a, b, resolution, method="uniform")
        free_a = det.path_is_free(a, b, resolution, method="advance")
        counts["dense_hit"] += hit
        counts["uniform_flagged"] += not free_u
        counts["advance_flagged"] += not free_a
        if hit:
            assert not free_u and not free_a, (a, b)  # never a miss
        if not (free_u and free_a) and smallest > 2 * resolution:
            counts["flagged_far_from_contact"] += 1
    assert counts["dense_hit"] >= 150, counts
    assert counts["flagged_far_from_contact"] == 0, counts
    assert counts["uniform_flagged"] >= counts["dense_hit"] and counts["advance_flagged"] >= counts["dense_hit"]


def test_first_collision_batched_over_edges_matches_edge_by_edge(world):
    det, _ = world
    rng = np.random.default_rng(8)
    into_cube1 = np.array([0.785, 1.2, 0, -0.6, 0, 0.6, 0])  # link 7 inside cube 1
    path = np.linspace(np.zeros(7), into_cube1, 40) + rng.uniform(-0.02, 0.02, (40, 7))
    path = np.concatenate([path, path[::-1]])  # there and back: the first hit is on the way there
    per_edge = [det.path_is_free(a, b, 0.01, method="uniform") for a, b in zip(path[:-1], path[1:])]
    assert not all(per_edge) and any(per_edge)
    first = per_edge.index(False)
    for method in ("uniform", "advance"):
        hit = det.first_collision(path, 0.01, method=method)
        assert hit is not None and hit.edge == first, (method, hit, first)
        expected_q = path[first] + hit.t * (path[first + 1] - path[first])
        np.testing.assert_allclose(hit.q, expected_q, atol=1e-12)
        assert hit.pair in det.pairs and det.compute_distances(hit.q, 0.1).min() < 0.05
    assert det.first_collision(path[:first + 1], 0.01) is None
    with pytest.raises(SimbenchError, match="resolution"):
        det.path_is_free(path[0], path[1], resolution=0)
    with pytest.raises(ShapeError):
        det.first_collision(path[:1])
    assert motion_bound(det).R.shape == (7, 8)
