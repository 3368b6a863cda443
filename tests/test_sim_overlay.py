"""Pictures that carry information: headless frames, screenshots and recordings show the
simulated time and the closest-point segments being shown, drawn where the witness points are.

Oracles: the witness points projected here with PyBullet's own view and projection matrices
(``computeViewMatrixFromYawPitchRoll`` / ``computeProjectionMatrixFOV``) and the OpenGL
convention written out in numpy; the unannotated frame of the same state; the Simulation's
calls to ``ServerPair.mark_changed`` counted on the pair.
"""
import numpy as np
import pybullet as p
import pytest
from PIL import Image

from simbench.bullet.collision import NamedCollisionObject as O
from simbench.errors import SimbenchError
from simbench.sim import Simulation

W, H = 320, 240


def pixel(point, camera, size=(W, H)):
    V = np.array(p.computeViewMatrixFromYawPitchRoll(list(camera["target"]), camera["distance"], camera["yaw"],
                                                     camera["pitch"], 0, 2)).reshape(4, 4).T
    P = np.array(p.computeProjectionMatrixFOV(60, size[0] / size[1], 0.02, 100)).reshape(4, 4).T
    c = P @ V @ np.r_[point, 1.0]
    return (c[0] / c[3] + 1) * size[0] / 2, (1 - c[1] / c[3]) * size[1] / 2


def green(img):
    r, g, b = (img[..., k].astype(int) for k in range(3))
    return (g > 200) & (r < 80) & (b < 80)


def test_segments_and_time_are_drawn_where_they_belong(tmp_path):
    with Simulation(gui=False) as sim:
        sim.robot.reset({"lbr_iiwa_joint_2": 0.6})
        sim.step(12)
        det = sim.detector([(O("robot", "lbr_iiwa_link_7"), O("cube2"))])
        (res,) = det.closest_points(sim.robot.q, 2.0)
        assert res.distance > 0.3  # drawn fully green
        plain = sim.frame((W, H))
        sim.draw_closest_points([res])
        shown = sim.frame((W, H), annotate=True)
        gif = tmp_path / "a.gif"
        sim.record(gif, fps=10, size=(W, H))
        sim.step(1)
        camera = dict(sim.camera)
    mask = green(shown) & ~green(plain)
    checked = 0
    for s in np.linspace(0.15, 0.85, 8):  # points along the segment, away from its label
        u, v = pixel(res.point_a + s * (res.point_b - res.point_a), camera)
        win = mask[int(v) - 3:int(v) + 4, int(u) - 3:int(u) + 4]
        assert win.any(), (s, u, v)
        checked += 1
    assert checked == 8
    changed = np.abs(shown.astype(int) - plain.astype(int)).sum(axis=-1) > 60
    assert changed[:20, :80].sum() > 30            # "t = 0.050 s" in the top-left corner
    frame = np.asarray(Image.open(gif).convert("RGB"))
    assert (green(frame)).sum() > 20 and frame.shape == (H, W, 3)  # recordings carry them too


def test_mark_changed_is_called_for_every_change_of_the_main_world():
    with Simulation(gui=False) as sim:
        calls = []
        sim.pair.mark_changed = lambda stepped=False: calls.append(1)  # the interface coll's ServerPair provides
        sim.step(3)
        assert len(calls) == 3
        sim.set_pose("cube1", [2, 2, 0.5])
        sim.reset()
        sim.robot.reset({"lbr_iiwa_joint_1": 0.3})
        assert len(calls) == 6


def test_add_and_remove_body_on_both_servers_vs_direct_pybullet():
    """sim.add_body / sim.remove_body: the body is in both servers at the pose asked for (read
    back with plain PyBullet calls), the collision queries see it at once, and it is gone from
    both after removal."""
    box = "simbench:urdf/shapes/box.urdf"  # half extents 0.2 0.3 0.4
    with Simulation(gui=False) as sim:
        n_main = p.getNumBodies(physicsClientId=sim.client)
        bid = sim.add_body("box", box, position=[0.0, 2.0, 0.4], fixed_base=True)
        assert sim.bodies["box"] == sim.pair.collision.bodies["box"] == bid
        checked = 0
        for client in (sim.client, sim.collision_client):
            pos, _ = p.getBasePositionAndOrientation(bid, physicsClientId=client)
            np.testing.assert_allclose(pos, [0.0, 2.0, 0.4], atol=1e-12)
            checked += 1
        assert checked == 2 and p.getNumBodies(physicsClientId=sim.client) == n_main + 1
        det = sim.detector([(O("ground"), O("box"))])
        assert abs(det.compute_distances()[0]) < 1e-6        # resting on the ground plane z = 0
        with pytest.raises(SimbenchError, match="already in the scene"):
            sim.add_body("box", box)
        with pytest.raises(SimbenchError, match="scale = 0"):
            sim.add_body("box2", box, scale=0)
        sim.remove_body("box")
        assert "box" not in sim.bodies and "box" not in sim.pair.collision.bodies
        for client in (sim.client, sim.collision_client):
            assert p.getNumBodies(physicsClientId=client) == n_main
        with pytest.raises(SimbenchError, match="'box' was removed"):
            det.compute_distances()


def test_pictures_carry_the_windows_legend():
    """Three segments on a black picture (green, yellow and red by clearance): the top-left
    legend holds the time, then one row per segment in order, each with a swatch of its
    segment's colour at the left edge and white text to its right, and a grey leader line that
    ends at the segment's midpoint, projected with the camera's matrices (PyBullet's
    computeViewMatrix / computeProjectionMatrixFOV: an independent projection)."""
    from simbench.sim.camera import matrices
    from simbench.sim.overlay import Segment, annotate

    camera = {"target": (0.0, 0.0, 0.5), "distance": 2.0, "yaw": 0.0, "pitch": 0.0}
    w, h = 640, 480
    view, proj = matrices(camera, (w, h))
    xs = (-0.5, 0.0, 0.5)
    segs = [Segment((x, 0, 0.3), (x, 0, 0.7), d, name) for x, d, name in
            zip(xs, (0.5, 0.15, -0.1), ("far", "near", "touching"))]
    img = annotate(np.zeros((h, w, 3), np.uint8), view=view, proj=proj, segments=segs, time=1.5).astype(int)
    V, P = (np.array(m).reshape(4, 4).T for m in (p.computeViewMatrix([0, -2, 0.5], [0, 0, 0.5], [0, 0, 1]),
                                                   p.computeProjectionMatrixFOV(60, w / h, 0.02, 100)))
    np.testing.assert_allclose(np.array(view).reshape(4, 4).T, V, atol=1e-6)  # the camera is the one above
    np.testing.assert_allclose(np.array(proj).reshape(4, 4).T, P, atol=1e-6)
    r, g, b = img[..., 0], img[..., 1], img[..., 2]
    colour = {"green": (g > 200) & (r < 60), "yellow": (r > 200) & (g > 200) & (b < 60), "red": (r > 200) & (g < 60)}
    size = max(9, min(16, h // 32))
    left = slice(6, 6 + 2 * size)
    rows = []
    for name in ("green", "yellow", "red"):
        ys = np.nonzero(colour[name][:150, left].any(axis=1))[0]
        assert len(ys) >= 3, name                       # the swatch
        rows.append(ys.mean())
    assert rows[0] < rows[1] < rows[2] and all(b - a >= size for a, b in zip(rows, rows[1:])), rows
    white = (r > 240) & (g > 240) & (b > 240)
    for y in rows:
        band = white[int(y) - size // 2:int(y) + size // 2, 6 + 2 * size:200]
        assert band.sum() > 40, y                        # its text beside it
    assert white[2:2 + size + 4, 4:150].sum() > 30       # the time above them
    compared = 0
    for x in xs:                                         # each leader ends at its segment's midpoint
        c = V @ np.array([x, 0, 0.5, 1.0])
        ndc = (P @ c)[:2] / (P @ c)[3]
        u, v = (ndc[0] + 1) * w / 2, (1 - ndc[1]) * h / 2
        patch = img[int(v) - 3:int(v) + 4, int(u) - 3:int(u) + 4]
        grey = (np.abs(patch - 70).max(axis=-1) < 25).sum()
        assert grey >= 1, (x, u, v)
        compared += 1
    assert compared == 3


def test_distance_text_rounds_to_the_millimetre_without_a_negative_zero():
    """A touching pair's distance comes out of PyBullet as a tiny negative number (-3e-5 m):
    the legend said '-0.000 m'. Shown to the millimetre, -0.0004 is 0.000; -0.0006 a real
    penetration of -0.001; the values by Python's own rounding otherwise."""
    from simbench.sim.overlay import Segment

    cases = {-3e-5: "0.000 m", -0.0004: "0.000 m", 0.0: "0.000 m", -0.0006: "-0.001 m",
             0.8334: "0.833 m", -0.0123: "-0.012 m", 1.2345678: "1.235 m"}
    for d, want in cases.items():
        assert Segment((0, 0, 0), (0, 0, 1), d).text == want, d
    assert len(cases) == 7


def test_a_recorded_frame_shows_what_the_script_drew_at_its_time(tmp_path):
    """Frames are taken just before the next step (or at the end), so the distances a script
    draws after step() returns are in the frame of that time (a walkthrough's GIF showed every
    measurement one frame late: 't = 0.067 s' carried the t = 0.033 s distance). Each frame's
    overlay label, the time it was drawn at, is compared with the frame's own time; the first
    frame shows the set-up the script made before its first step."""
    with Simulation("simbench:kuka_cubes.toml", gui=False, dt=1 / 240) as sim:
        det = sim.detector([(O("robot", "lbr_iiwa_link_7"), "cube1")])
        seen = []
        frame = sim.frame

        def logged(*args, **kwargs):
            labels = [s.label for segs in sim.overlays.values() for s in segs]
            seen.append((round(sim.t, 6), labels))
            return frame(*args, **kwargs)

        sim.frame = logged
        rec = sim.record(tmp_path / "r.gif", fps=30, size=(64, 48))
        sim.draw_closest_points(det.closest_points(max_distance=5.0), labels=[f"{sim.t:.6f}"])   # the set-up
        for _ in range(40):
            sim.step()
            sim.set_pose("cube1", [0.6 + 0.3 * np.sin(20 * sim.t), 0.0, 0.4])
            sim.draw_closest_points(det.closest_points(max_distance=5.0), labels=[f"{sim.t:.6f}"])
        rec.stop()
    assert rec.frames == len(seen) == 6            # t = 0, 1/30, ..., 5/30 (40 steps of 1/240 s)
    assert [t for t, _ in seen] == [round(k / 30, 6) for k in range(6)]
    for t, labels in seen:
        assert labels == [f"{t:.6f}"], (t, labels)


def test_an_obstacle_named_twice_in_the_legend_carries_the_robot_link():
    """Two links against cube1 were both labelled 'cube1' in the legend; now the link is beside
    the name where an obstacle comes twice, and each label's distance is PyBullet's own
    getClosestPoints between that link and the cube (the oracle)."""
    with Simulation(gui=False) as sim:
        sim.robot.reset({"lbr_iiwa_joint_2": 0.6})
        det = sim.detector([(O("robot", "lbr_iiwa_link_5"), O("cube1")), (O("robot", "lbr_iiwa_link_7"), O("cube1")),
                            (O("robot", "lbr_iiwa_link_7"), O("cube2"))])
        segs = sim.draw_closest_points(det.closest_points(sim.robot.q, 5.0))
        robot, links = sim.bodies["robot"], {}
        for j in range(p.getNumJoints(robot, physicsClientId=sim.client)):
            links[p.getJointInfo(robot, j, physicsClientId=sim.client)[12].decode()] = j
        truth = {}
        for link, cube in (("lbr_iiwa_link_5", "cube1"), ("lbr_iiwa_link_7", "cube1"), ("lbr_iiwa_link_7", "cube2")):
            pts = p.getClosestPoints(robot, sim.bodies[cube], 5.0, linkIndexA=links[link], physicsClientId=sim.client)
            truth[(link, cube)] = min(pt[8] for pt in pts)
    # both sides named, the links where two pairs join the same bodies (walkthrough S)
    assert [s.label for s in segs] == ["robot/lbr_iiwa_link_5 - cube1", "robot/lbr_iiwa_link_7 - cube1",
                                       "robot - cube2"]
    got = [s.distance for s in segs]
    np.testing.assert_allclose(got, [truth[("lbr_iiwa_link_5", "cube1")], truth[("lbr_iiwa_link_7", "cube1")],
                                     truth[("lbr_iiwa_link_7", "cube2")]], atol=1e-9)


def test_what_is_drawn_after_the_last_step_ends_the_recording(tmp_path):
    """The README's block draws the closest points after its last step, between two frame
    times: no frame was due, and the GIF ended without the segment. Now closing adds one last
    frame when the overlays changed since the last one; PIL reads the GIF's frames back, and
    the overlay labels each frame was drawn with are logged."""
    with Simulation("simbench:kuka_cubes.toml", gui=False, dt=1 / 240) as sim:
        det = sim.detector([(O("robot", "lbr_iiwa_link_7"), "cube1")])
        seen, frame = [], sim.frame

        def logged(*args, **kwargs):
            seen.append([s.label for segs in sim.overlays.values() for s in segs])
            return frame(*args, **kwargs)

        sim.frame = logged
        rec = sim.record(tmp_path / "r.gif", fps=30, size=(64, 48))
        sim.step(9)                                                  # t = 0.0375: frame 1 was due at 1/30
        sim.draw_closest_points(det.closest_points(max_distance=5.0), labels=["drawn last"])
    with Image.open(tmp_path / "r.gif") as gif:
        n = gif.n_frames
    assert seen == [[], [], ["drawn last"]] and n == 3 == rec.frames
