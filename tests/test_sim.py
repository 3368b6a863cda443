"""simbench.Simulation: time, robot state and control, torque mode, poses, recordings, errors.

Oracles: direct PyBullet calls on the same clients or on a separate raw client, and Pillow
reading the recorded files back.
"""
import inspect
import math

import numpy as np
import pybullet as p
import pytest
from PIL import Image

import simbench
from simbench.bullet.scene import DEFAULT_SCENE
from simbench.sim import GifWriter, RecordingError, Simulation, SimulationDone, ffmpeg_executable

KUKA = "pybullet_data:kuka_iiwa/model.urdf"
KUKA_ONLY = {"body": [{"name": "robot", "urdf": KUKA, "fixed_base": True}]}


@pytest.fixture(scope="module")
def sim():
    with Simulation(gui=False) as s:
        yield s


def test_servers_scene_time_and_close():
    s = Simulation(gui=False, dt=1 / 100)
    clients = (s.client, s.collision_client)
    assert not s.gui and s.client != s.collision_client
    assert list(s.bodies) == ["ground", "robot", "cube1", "cube2", "cube3"]  # the bundled KUKA-among-cubes scene
    assert p.getPhysicsEngineParameters(physicsClientId=s.client)["fixedTimeStep"] == pytest.approx(0.01)
    assert s.step(7) == pytest.approx(0.07) and s.steps == 7 and s.t == pytest.approx(0.07)
    assert s.advance(0.5) == pytest.approx(0.57)
    s.close()
    s.close()  # idempotent
    assert s.closed and not any(p.isConnected(physicsClientId=c) for c in clients)
    assert "closed" in repr(s)


def test_duration_and_stop_request():
    with Simulation(KUKA_ONLY, gui=False, dt=0.01, duration=0.1) as s:
        n = 0
        with pytest.raises(SimulationDone) as done:
            while True:
                s.step()
                n += 1
        assert done.value.reason == "duration" and n == 10 and s.t == pytest.approx(0.1)
        assert not s.running
    with Simulation(KUKA_ONLY, gui=False, dt=0.01) as s:
        s.step(3)
        assert s.running
        s.request_stop("enough")
        assert not s.running
        with pytest.raises(SimulationDone, match="enough"):
            s.step()
        assert s.steps == 3
    assert not issubclass(SimulationDone, Exception)  # a script's `except Exception` won't eat it


def test_run_until_stops_quietly_and_removes_its_callback():
    with Simulation(KUKA_ONLY, gui=False, dt=0.01, duration=0.1) as s:
        seen = []
        assert s.run_until(0.05, lambda sim: seen.append(sim.steps)) == pytest.approx(0.05)
        assert seen == [1, 2, 3, 4, 5] and s.steps == 5
        assert s.run_until(1.0) == pytest.approx(0.1) and s.steps == 10  # the duration: no raise
        assert s.run_until(0.3) == pytest.approx(0.1) and seen == [1, 2, 3, 4, 5]  # callback gone
    with Simulation(KUKA_ONLY, gui=False, dt=0.01) as s:  # a stop request ends it too
        s.run_until(0.05, lambda sim: sim.request_stop("enough") if sim.steps == 2 else None)
        assert s.steps == 2 and not s.running


def test_robot_state_matches_pybullet(sim):
    r = sim.robot
    assert r.joint_names == sim.model.joint_names and r.dof == 7
    q = np.linspace(-0.6, 0.6, 7)
    qd = np.linspace(0.1, 0.7, 7)
    r.reset(q, qd)
    states = [p.getJointState(r.id, j, physicsClientId=sim.client) for j in range(7)]
    np.testing.assert_array_equal(r.q, [s[0] for s in states])
    np.testing.assert_array_equal(r.qd, [s[1] for s in states])
    np.testing.assert_allclose(r.q, q) and np.testing.assert_allclose(r.qd, qd)
    sim.reset()  # back to the scene's initial configuration, at rest
    np.testing.assert_array_equal(r.q, np.zeros(7))
    np.testing.assert_array_equal(r.qd, np.zeros(7))
    sim.reset({"lbr_iiwa_joint_4": -1.0})  # partial dict: only that joint
    assert r.q[3] == pytest.approx(-1.0) and np.all(r.q[[0, 1, 2, 4, 5, 6]] == 0)
    sim.reset()


def test_link_pose_matches_pybullet(sim):
    sim.reset({"lbr_iiwa_joint_2": 0.7})
    pos, quat = sim.robot.link_pose("lbr_iiwa_link_7")
    st = p.getLinkState(sim.robot.id, 6, computeForwardKinematics=True, physicsClientId=sim.client)
    np.testing.assert_allclose(pos, st[4], atol=1e-12)
    np.testing.assert_allclose(quat, st[5], atol=1e-12)
    base, orn = sim.robot.link_pose()  # the base link frame, not PyBullet's base COM frame
    np.testing.assert_allclose(base, [0, 0, 0], atol=1e-12)
    np.testing.assert_allclose(orn, [0, 0, 0, 1], atol=1e-12)
    assert p.getBasePositionAndOrientation(sim.robot.id, physicsClientId=sim.client)[0] == \
        pytest.approx((-0.1, 0, 0.07))  # the file's base <inertial><origin>
    sim.reset()


def test_set_pose_places_the_link_frame():
    with Simulation(KUKA_ONLY, gui=False) as s:
        R = np.array([[0, -1, 0], [1, 0, 0], [0, 0, 1.0]])  # 90 deg about z
        s.set_pose("robot", [1.0, 2.0, 0.5], R)
        pos, quat = s.base_pose("robot")
        np.testing.assert_allclose(pos, [1, 2, 0.5], atol=1e-12)
        np.testing.assert_allclose(np.array(p.getMatrixFromQuaternion(quat.tolist())).reshape(3, 3), R, atol=1e-12)
        com = p.getBasePositionAndOrientation(s.bodies["robot"], physicsClientId=s.client)[0]
        np.testing.assert_allclose(com, np.array([1, 2, 0.5]) + R @ [-0.1, 0, 0.07], atol=1e-12)


def test_position_and_velocity_control():
    with Simulation(KUKA_ONLY, gui=False) as s:
        r = s.robot
        target = {"lbr_iiwa_joint_2": 0.6, "lbr_iiwa_joint_4": -1.1}
        r.set_joint_targets(target)
        s.advance(1.5)
        assert r.q[1] == pytest.approx(0.6, abs=1e-3) and r.q[3] == pytest.approx(-1.1, abs=1e-3)
        assert r.modes["lbr_iiwa_joint_2"] == "position" and r.modes["lbr_iiwa_joint_1"] == "velocity"
        # the motor torque PyBullet reports holds the arm against gravity
        assert abs(r.tau[1]) > 10
        r.set_joint_targets(qd={"lbr_iiwa_joint_1": 0.5})
        s.advance(0.5)
        assert r.qd[0] == pytest.approx(0.5, abs=1e-3)
        assert r.modes["lbr_iiwa_joint_1"] == "velocity"


def test_reset_moves_position_targets_along():
    with Simulation(KUKA_ONLY, gui=False) as s:
        r = s.robot
        r.set_joint_targets({"lbr_iiwa_joint_2": 0.5}, kp=0.3, kd=1.0)
        s.advance(1.0)
        assert r.q[1] == pytest.approx(0.5, abs=1e-3)
        r.reset({"lbr_iiwa_joint_2": -0.3})
        s.advance(0.5)
        assert r.q[1] == pytest.approx(-0.3, abs=1e-3)  # held at the reset value, not pulled back
        assert r.modes["lbr_iiwa_joint_2"] == "position"
        r.reset()
        np.testing.assert_allclose(r.q, 0.0, atol=1e-12)


def test_torque_mode_equals_raw_pybullet():
    """Torque control must be exactly: motors off with force 0, torques re-applied every step."""
    tau = np.array([2.0, -5.0, 1.0, 3.0, -0.5, 0.2, 0.05])
    q0 = np.array([0.1, 0.4, -0.2, -1.0, 0.3, 0.5, 0.0])
    with Simulation(KUKA_ONLY, gui=False) as s:
        r = s.robot
        r.reset(q0)
        r.set_torques(tau)
        s.step(120)
        ours_q, ours_qd = r.q, r.qd
        np.testing.assert_array_equal(r.tau, tau)  # PyBullet reports 0 in torque mode
        assert set(r.modes.values()) == {"torque"}
    c = p.connect(p.DIRECT)
    try:
        p.setGravity(0, 0, -9.81, physicsClientId=c)
        p.setTimeStep(1 / 240, physicsClientId=c)
        b = p.loadURDF(str(simbench.paths.resolve_urdf(KUKA)), useFixedBase=True,
                       flags=p.URDF_USE_INERTIA_FROM_FILE, physicsClientId=c)
        for j in range(7):
            p.resetJointState(b, j, q0[j], 0.0, physicsClientId=c)
        p.setJointMotorControlArray(b, range(7), p.VELOCITY_CONTROL, forces=[0] * 7, physicsClientId=c)
        for _ in range(120):
            p.setJointMotorControlArray(b, range(7), p.TORQUE_CONTROL, forces=tau.tolist(), physicsClientId=c)
            p.stepSimulation(physicsClientId=c)
        st = p.getJointStates(b, range(7), physicsClientId=c)
        np.testing.assert_array_equal(ours_q, [x[0] for x in st])
        np.testing.assert_array_equal(ours_qd, [x[1] for x in st])
    finally:
        p.disconnect(physicsClientId=c)


def test_bad_inputs_name_the_joints(sim):
    r = sim.robot
    with pytest.raises(simbench.ShapeError, match=r"shape \(3,\); expected \(7,\).*lbr_iiwa_joint_1"):
        r.set_torques([1, 2, 3])
    with pytest.raises(simbench.UnknownNameError, match="did you mean 'lbr_iiwa_joint_2'"):
        r.set_joint_targets({"lbr_iiwa_joint2": 0.1})
    with pytest.raises(simbench.ShapeError, match="lbr_iiwa_joint_3"):
        r.reset([0, 0, np.nan, 0, 0, 0, 0])
    with pytest.raises(simbench.ShapeError, match="missing joints"):
        r._values({"lbr_iiwa_joint_1": 0.0}, "q", partial=False)
    with pytest.raises(simbench.SimbenchError, match="needs position targets"):
        r.set_joint_targets()
    with pytest.raises(simbench.UnknownNameError, match="cube1"):
        sim.set_pose("cube4", [0, 0, 0])
    with pytest.raises(simbench.SimbenchError, match="'cube1' has no movable joints"):
        sim.handle("cube1")
    with pytest.raises(simbench.UnknownNameError, match="lbr_iiwa_link_7"):
        r.change_dynamics("lbr_iiwa_link7", linearDamping=0.0)
    with pytest.raises(simbench.SimbenchError, match="dt"):
        Simulation(KUKA_ONLY, gui=False, dt=0)
    with pytest.raises(simbench.SimbenchError, match="duration = -1"):
        Simulation(KUKA_ONLY, gui=False, duration=-1)
    with pytest.raises(RecordingError, match=r"unknown extension '\.avi'"):
        sim.record("x.avi")


def test_set_pose_with_matrix_and_quaternion():
    scene = {"gravity": [0, 0, 0], "body": [{"name": "box", "urdf": "pybullet_data:cube_small.urdf"}]}
    with Simulation(scene, gui=False) as s:
        rng = np.random.default_rng(3)
        for _ in range(5):
            quat = rng.normal(size=4)
            quat /= np.linalg.norm(quat)
            R = np.array(p.getMatrixFromQuaternion(quat.tolist())).reshape(3, 3)
            s.set_pose("box", [0.1, 0.2, 0.3], R, angular_velocity=[0, 0, 1.0])
            pos, got = p.getBasePositionAndOrientation(s.bodies["box"], physicsClientId=s.client)
            np.testing.assert_allclose(pos, [0.1, 0.2, 0.3])
            assert abs(abs(np.dot(got, quat)) - 1) < 1e-12  # same rotation (q and -q)
            assert p.getBaseVelocity(s.bodies["box"], physicsClientId=s.client)[1] == pytest.approx((0, 0, 1.0))
        with pytest.raises(simbench.ShapeError, match="not a rotation"):
            s.set_pose("box", [0, 0, 0], 2 * np.eye(3))


def test_detector_uses_collision_server(sim):
    det = sim.detector([(("robot", "lbr_iiwa_link_7"), "cube1")])
    assert det.client == sim.collision_client
    before = sim.robot.q
    far = det.compute_distances(np.zeros(7))[0]
    near = det.compute_distances([0.785, 1.2, 0, -0.3, 0, 0, 0])[0]
    assert near < far
    np.testing.assert_array_equal(sim.robot.q, before)  # the main simulation did not move


def test_gif_recording_frames_timing_and_content(tmp_path):
    path = tmp_path / "run.gif"
    with Simulation(KUKA_ONLY, gui=False) as s:
        rec = s.record(path, fps=20, size=(96, 72))
        s.robot.set_joint_targets({"lbr_iiwa_joint_2": 1.0, "lbr_iiwa_joint_1": 1.5})
        s.advance(0.5)
        assert rec.frames == 1 + 10  # the initial frame and one every 1/20 s
    assert rec.closed
    im = Image.open(path)
    assert im.format == "GIF" and im.size == (96, 72) and im.n_frames == 11
    assert im.info["loop"] == 0
    frames, total = [], 0
    for k in range(im.n_frames):
        im.seek(k)
        total += im.info["duration"]
        frames.append(np.asarray(im.convert("RGB"), dtype=float))
    assert total == pytest.approx(11 * 50, abs=10)
    assert frames[0].std() > 5  # not blank
    assert np.abs(frames[-1] - frames[0]).mean() > 0.5  # the arm moved


def test_gif_writer_survives_an_interrupted_frame(tmp_path):
    """A frame cut short (Ctrl-C in the middle of a write) is dropped; the file stays readable."""
    path = tmp_path / "cut.gif"
    w = GifWriter(path, (32, 24), 10)
    img = np.zeros((24, 32, 3), np.uint8)
    for k in range(3):
        img[:, :] = (80 * k, 40, 200)
        w.add(img)
    w._file.write(b"\x21\xf9\x04\x04\x0a")  # half a frame, as if interrupted mid-write
    w.close()
    im = Image.open(path)
    assert im.n_frames == 3
    im.seek(2)
    assert tuple(np.asarray(im.convert("RGB"))[0, 0]) == (160, 40, 200)


def test_mp4_without_ffmpeg_says_so(sim, tmp_path, monkeypatch):
    monkeypatch.setattr("simbench.sim.recording.ffmpeg_executable", lambda: None)
    with pytest.raises(RecordingError, match="needs ffmpeg.*imageio-ffmpeg.*\\.gif"):
        sim.record(tmp_path / "run.mp4")
    assert not (tmp_path / "run.mp4").exists()


FAKE_FFMPEG = """#!{python}
import json, sys
args = sys.argv[1:]
data = sys.stdin.buffer.read()
with open(args[-1], "w") as f:
    json.dump({{"args": args, "bytes": len(data)}}, f)
"""


def test_mp4_frames_are_piped_to_ffmpeg(tmp_path, monkeypatch):
    """With a stand-in ffmpeg on PATH: the raw RGB frames and the size/rate options it gets."""
    import json
    import sys

    fake = tmp_path / "bin" / "ffmpeg"
    fake.parent.mkdir()
    fake.write_text(FAKE_FFMPEG.format(python=sys.executable))
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(fake.parent))
    assert ffmpeg_executable() == str(fake)
    path = tmp_path / "run.mp4"
    with Simulation(KUKA_ONLY, gui=False) as s:
        rec = s.record(path, fps=10, size=(96, 72))
        s.advance(0.3)
    assert rec.frames == 4
    got = json.loads(path.read_text())
    assert got["bytes"] == 4 * 96 * 72 * 3
    args = got["args"]
    assert args[args.index("-s") + 1] == "96x72" and args[args.index("-r") + 1] == "10"
    assert args[args.index("-pix_fmt") + 1] == "rgb24"
    with Simulation(KUKA_ONLY, gui=False) as s:
        with pytest.raises(RecordingError, match="even width and height"):
            s.record(tmp_path / "odd.mp4", size=(95, 72))


@pytest.mark.skipif(ffmpeg_executable() is None, reason="needs ffmpeg (or imageio-ffmpeg)")
def test_mp4_recording(tmp_path):
    path = tmp_path / "run.mp4"
    with Simulation(KUKA_ONLY, gui=False) as s:
        rec = s.record(path, fps=10, size=(96, 72))
        s.advance(0.3)
    assert rec.frames == 4 and path.stat().st_size > 1000
    assert path.read_bytes()[4:8] == b"ftyp"


def test_signature_and_lazy_export():
    params = inspect.signature(Simulation).parameters
    assert list(params)[:4] == ["scene", "gui", "dt", "real_time"]
    assert params["scene"].default is None and params["gui"].default is None
    assert math.isclose(params["dt"].default, 1 / 240) and params["real_time"].default is False
    assert simbench.Simulation is Simulation
    assert DEFAULT_SCENE.name == "kuka_cubes.toml"
