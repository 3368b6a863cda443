"""Collision detector vs closed-form geometry (simbench:shapes.toml).

Shapes: sphere radius R = 0.25; box half extents H = (0.2, 0.3, 0.4); plane z = 0. The
movable "ball" and "block" sit at their joint values q = (x, y, z). Normals point from B to A.

Bullet gives boxes a collision margin of m = 1 mm and computes distances to edges/corners of
the box *rounded* by m (the box shrunk by m, Minkowski-summed with a ball of radius m); on
faces this is the box itself. Corner cases are therefore checked against the rounded-box closed
form, face cases against the plain box.
"""
import numpy as np
import pybullet as p
import pytest

from simbench.bullet.collision import CollisionDetector, NamedCollisionObject
from simbench.bullet.scene import ASSETS_DIR, Scene
from simbench.errors import SimbenchError

R = 0.25
H = np.array([0.2, 0.3, 0.4])
M = 0.001  # Bullet's collision margin for URDF boxes
SPHERE_C = np.array([2.0, 0.0, 1.0])
BOX_C = np.array([-2.0, 0.0, 1.0])
TOL = 1e-6


@pytest.fixture(scope="module")
def loaded():
    client = p.connect(p.DIRECT)
    yield Scene.from_toml(ASSETS_DIR / "scenes" / "shapes.toml").load(client)
    p.disconnect(physicsClientId=client)


def one(loaded, robot, other, q, **kw):
    link = {"ball": "ball", "block": "block"}[robot]
    det = CollisionDetector(loaded, [(NamedCollisionObject(robot, link), other)], robot=robot, **kw)
    return det, det.closest_points(q, max_distance=10.0)[0]


@pytest.mark.parametrize("q", [[2.3, 0.4, 2.2], [1.0, -0.5, 0.3], [2.1, 0.2, 1.3], [2.0, 0.0, 1.4]])
def test_sphere_sphere(loaded, q):
    q = np.array(q)
    det, r = one(loaded, "ball", "sphere", q)
    v = q - SPHERE_C
    u = v / np.linalg.norm(v)
    assert abs(r.distance - (np.linalg.norm(v) - 2 * R)) < TOL
    np.testing.assert_allclose(r.point_a, q - R * u, atol=TOL)
    np.testing.assert_allclose(r.point_b, SPHERE_C + R * u, atol=TOL)
    np.testing.assert_allclose(r.normal, u, atol=TOL)
    assert det.in_collision(q) == (np.linalg.norm(v) < 2 * R)
    assert det.compute_distances(q, max_distance=10.0)[0] == r.distance


def test_penetration_is_negative(loaded):
    q = np.array([2.3, 0.0, 1.0])  # centres 0.3 apart: 0.2 deep
    det, r = one(loaded, "ball", "sphere", q)
    assert abs(r.distance + 0.2) < TOL and r.in_collision and det.in_collision(q)
    assert det.colliding_pairs(q) == det.pairs


@pytest.mark.parametrize("z", [1.0, 0.3, 0.25 + 1e-3, 0.1])
def test_sphere_plane(loaded, z):
    q = np.array([0.7, -0.4, z])
    _, r = one(loaded, "ball", "ground", q)
    assert abs(r.distance - (z - R)) < TOL
    np.testing.assert_allclose(r.point_a, [0.7, -0.4, z - R], atol=TOL)
    np.testing.assert_allclose(r.point_b, [0.7, -0.4, 0.0], atol=TOL)
    np.testing.assert_allclose(r.normal, [0, 0, 1], atol=TOL)


@pytest.mark.parametrize("z", [1.0, 0.41, 0.3])
def test_box_plane(loaded, z):
    q = np.array([0.5, 0.5, z])
    _, r = one(loaded, "block", "ground", q)
    assert abs(r.distance - (z - H[2])) < TOL
    assert abs(r.point_a[2] - (z - H[2])) < TOL and abs(r.point_b[2]) < TOL
    assert np.all(np.abs(r.point_a[:2] - q[:2]) <= H[:2] + TOL)  # on the bottom face
    np.testing.assert_allclose(r.normal, [0, 0, 1], atol=TOL)


@pytest.mark.parametrize("gap", [0.15, 0.01, -0.05, -0.12])
def test_box_box_face(loaded, gap):
    """Separated (or overlapping) along x only: distance = gap along x, witness points on the
    facing faces with equal y, z inside the overlap."""
    q = BOX_C + np.array([2 * H[0] + gap, 0.1, -0.2])
    _, r = one(loaded, "block", "box", q)
    assert abs(r.distance - gap) < TOL
    assert abs(r.point_a[0] - (q[0] - H[0])) < TOL and abs(r.point_b[0] - (BOX_C[0] + H[0])) < TOL
    np.testing.assert_allclose(r.point_a[1:], r.point_b[1:], atol=TOL)
    lo = np.maximum(q[1:] - H[1:], BOX_C[1:] - H[1:]) - TOL
    hi = np.minimum(q[1:] + H[1:], BOX_C[1:] + H[1:]) + TOL
    assert np.all((lo <= r.point_a[1:]) & (r.point_a[1:] <= hi))
    np.testing.assert_allclose(r.normal, [1, 0, 0], atol=TOL)


@pytest.mark.parametrize("gap", [[0.1, 0.2, 0.3], [0.01, 0.02, 0.5], [0.3, 0.001, 0.002]])
def test_box_box_corner(loaded, gap):
    """Corner to corner, separated on every axis by ``gap``: rounded-box closed form
    d = |g + 2m| - 2m, witness points at the shrunk corners plus m along the direction."""
    g = np.array(gap)
    q = BOX_C + 2 * H + g
    _, r = one(loaded, "block", "box", q)
    w = g + 2 * M
    u = w / np.linalg.norm(w)
    assert abs(r.distance - (np.linalg.norm(w) - 2 * M)) < TOL
    np.testing.assert_allclose(r.point_a, q - H + M - M * u, atol=TOL)
    np.testing.assert_allclose(r.point_b, BOX_C + H - M + M * u, atol=TOL)
    np.testing.assert_allclose(r.normal, u, atol=TOL)
    # the sharp-box distance differs by less than the margin
    assert abs(r.distance - np.linalg.norm(g)) < 2 * M


def test_sphere_box_face_and_corner(loaded):
    q = BOX_C + np.array([0.05, -0.1, H[2] + 0.1 + R])  # above the top face, 0.1 clear
    _, r = one(loaded, "ball", "box", q)
    assert abs(r.distance - 0.1) < TOL
    np.testing.assert_allclose(r.point_b, [q[0], q[1], BOX_C[2] + H[2]], atol=TOL)
    v = np.array([0.3, 0.3, 0.3])
    q = BOX_C + H + v  # off a corner: rounded corner, d = |v + m| - m - R
    _, r = one(loaded, "ball", "box", q)
    assert abs(r.distance - (np.linalg.norm(v + M) - M - R)) < TOL


def test_padding_and_saturation(loaded):
    q = np.array([2.6, 0.0, 1.0])  # 0.1 clear of the sphere
    det = CollisionDetector(loaded, [(("ball", None), "sphere"), (NamedCollisionObject("ball", "ball"), "sphere")],
                            robot="ball", padding={"sphere": 0.03, NamedCollisionObject("ball", "ball"): 0.05})
    d = det.compute_distances(q)
    # ("ball", None) is the geometry-less base link: nothing found, saturates at max_distance
    assert d[0] == 1.0
    assert abs(d[1] - (0.1 - 0.08)) < TOL
    cp = det.closest_point_arrays(q)
    np.testing.assert_allclose(cp["point_a"][1], [2.6 - R - 0.05, 0, 1], atol=TOL)
    np.testing.assert_allclose(cp["point_b"][1], [2.0 + R + 0.03, 0, 1], atol=TOL)
    assert np.isnan(cp["point_a"][0]).all()
    assert not det.in_collision(q) and det.in_collision(q, margin=0.021)
    assert det.in_collision([2.55, 0, 1])  # raw 0.05 clear, padded -0.03
    assert det.compute_distances(q, max_distance=0.01)[1] == 0.01
    # a link key beats a body key; a link with itself is refused
    det3 = CollisionDetector(loaded, [(NamedCollisionObject("ball", "ball"), "sphere")], robot="ball",
                             padding={NamedCollisionObject("sphere", None): 0.01, "sphere": 0.5})
    assert abs(det3.compute_distances(q)[0] - 0.09) < TOL
    with pytest.raises(SimbenchError, match="itself"):
        CollisionDetector(loaded, [("sphere", "sphere")], robot="ball")
    with pytest.raises(SimbenchError, match="padding"):
        CollisionDetector(loaded, [("ball", "sphere")], robot="ball", padding=-0.1)
    # a number pads every link of the robot only
    det2 = CollisionDetector(loaded, [(NamedCollisionObject("ball", "ball"), "sphere")], robot="ball", padding=0.04)
    assert abs(det2.compute_distances(q)[0] - 0.06) < TOL


# ---------------------------------------------------------------------- bad distances, zero-DOF robots
def test_negative_max_distance_is_one_clear_error(loaded):
    det = CollisionDetector(loaded, [(NamedCollisionObject("ball", "ball"), "sphere")], robot="ball")
    q = np.array([2.6, 0.0, 1.0])
    for call in (det.compute_distances, det.closest_points, det.closest_point_arrays):
        with pytest.raises(SimbenchError) as err:
            call(q, max_distance=-0.5)
        msg = str(err.value)
        assert "max_distance = -0.5" in msg and ">= 0" in msg and "\n" not in msg
    assert det.in_collision(q, margin=-0.05) is False  # a negative margin stays allowed


def test_robot_without_movable_joints_in_every_query_form(tmp_path):
    """Two fixed boxes (half extents 0.2 0.3 0.4) 1 m apart along x: the faces are 0.6 m apart."""
    box = str(ASSETS_DIR / "urdf" / "shapes" / "box.urdf")
    scene = Scene.from_dict({"robot": "a", "body": [{"name": "a", "urdf": box, "fixed_base": True},
                                                   {"name": "b", "urdf": box, "position": [1, 0, 0],
                                                    "fixed_base": True}]})
    client = p.connect(p.DIRECT)
    try:
        loaded0 = scene.load(client)
        det = CollisionDetector(loaded0, [("a", "b")], workers=2)
        assert det.dof == 0 and det.joint_names == ()
        gap = 1.0 - 0.4
        for q in (np.zeros(0), [], None):
            assert abs(det.compute_distances(q)[0] - gap) < TOL
            rec = det.closest_points(q)[0]
            assert abs(rec.distance - gap) < TOL and rec.a.link == "box_link" and rec.b.body == "b"
            arr = det.closest_point_arrays(q)
            assert abs(arr["point_a"][0][0] - 0.2) < TOL and abs(arr["point_b"][0][0] - 0.8) < TOL
            assert det.in_collision(q) is False and det.in_collision(q, margin=0.7) is True
            assert det.colliding_pairs(q, margin=0.7) == det.pairs and det.colliding_pairs(q) == []
        Q = np.zeros((5, 0))
        d = det.compute_distances(Q, workers=2)
        assert d.shape == (5, 1) and np.allclose(d, gap, atol=TOL)
        assert np.asarray(det.in_collision(Q)).shape == (5,)
        assert det.closest_point_arrays(np.zeros((2, 3, 0)))["distance"].shape == (2, 3, 1)
        assert len(det.closest_points([[], []])) == 2
        det.close()
    finally:
        p.disconnect(physicsClientId=client)
