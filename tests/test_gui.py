"""The real PyBullet window, looked at the way a user sees it: the commands run as subprocesses
(as users run them; PyBullet allows one GUI per process) on an Xvfb server started here, and
the X screen itself is grabbed with Pillow (``ImageGrab.grab(xdisplay=...)``), never an
offscreen ``getCameraImage``. A frozen or blank window fails these tests.

Oracles: the screen; where the robot must appear, computed here from the camera the command
prints, PyBullet's forward kinematics in a DIRECT client of our own and the GUI's projection
(measured: vertical field of view 90 degrees, aspect = window width / height); the URDF's
limits read with ElementTree.

Grabbing starts only after the command printed the line that follows its window's opening
(a new X connection racing another client's start is what made PyBullet's own
``XOpenDisplay`` fail now and then; see :func:`simbench.bullet.display.choose_gui_held`).
"""
import json
import math
import os
import re
import shutil
import subprocess
import sys
import textwrap
import threading
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pybullet as p
import pybullet_data
import pytest
from PIL import Image, ImageGrab

ROOT = Path(__file__).resolve().parents[1]
SIMBENCH = [sys.executable, "-m", "simbench.cli"]
WIDTH, HEIGHT = 1024, 768           # the Xvfb screen = PyBullet's default window
GUI_FOV = 90.0                      # PyBullet's window: vertical field of view (measured)
TIME_BOX = (slice(0, 70), slice(0, 300))  # the time readout's corner, left out of "motion"
pytestmark = pytest.mark.gui


# ---------------------------------------------------------------------- helpers
@pytest.fixture(scope="module")
def display():
    """A private Xvfb server on a random high display number (measured: with ``-displayfd``
    the server took :0, whose socket vanished while other suites ran theirs)."""
    exe = shutil.which("Xvfb")
    if exe is None:
        if os.environ.get("CI"):
            pytest.fail("Xvfb is missing in CI (.ci/run installs the xvfb package)")
        pytest.skip("Xvfb not installed")
    rng = np.random.default_rng()
    for _ in range(20):
        number = int(rng.integers(300, 900))
        if Path(f"/tmp/.X{number}-lock").exists() or Path(f"/tmp/.X11-unix/X{number}").exists():
            continue
        proc = subprocess.Popen([exe, f":{number}", "-screen", "0", f"{WIDTH}x{HEIGHT}x24", "-nolisten", "tcp"],
                                stderr=subprocess.DEVNULL)
        for _ in range(100):
            if proc.poll() is not None or Path(f"/tmp/.X11-unix/X{number}").exists():
                break
            time.sleep(0.05)
        if proc.poll() is None:
            break
    else:
        pytest.fail("could not start Xvfb on a free display")
    yield f":{number}"
    proc.terminate()
    proc.wait(timeout=10)


def env_for(display_name):
    env = dict(os.environ, DISPLAY=display_name, OPENBLAS_NUM_THREADS="1",
               PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("XAUTHORITY", None)
    return env


def run_gui(cmd, display_name, **kw):
    return subprocess.run(cmd, env=env_for(display_name), capture_output=True, text=True, **kw)


class Watched:
    """A command under observation: its output lines with arrival times, and screen grabs
    (time, RGB array) taken every ``period`` s once ``ready(line)`` matched a line."""

    def __init__(self, cmd, display_name, ready, period=0.2, timeout=240, cwd=None, env=None):
        self.lines, self.grabs = [], []
        self.proc = subprocess.Popen(cmd, env=env or env_for(display_name), cwd=cwd, text=True,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        started = threading.Event()

        def read(stream, name):
            for line in stream:
                self.lines.append((time.perf_counter(), name, line.rstrip("\n")))
                if ready(line):
                    started.set()

        readers = [threading.Thread(target=read, args=(s, n), daemon=True)
                   for s, n in ((self.proc.stdout, "out"), (self.proc.stderr, "err"))]
        for t in readers:
            t.start()
        deadline = time.perf_counter() + timeout
        try:
            while not started.wait(0.05):
                if self.proc.poll() is not None or time.perf_counter() > deadline:
                    break
            while started.is_set() and self.proc.poll() is None and time.perf_counter() < deadline:
                try:
                    img = ImageGrab.grab(xdisplay=display_name)
                except OSError:  # measured: a grab fails now and then while windows open or close
                    time.sleep(0.05)
                    continue
                self.grabs.append((time.perf_counter(), np.asarray(img.convert("RGB"))))
                time.sleep(period)
            self.proc.wait(timeout=max(1.0, deadline - time.perf_counter()))
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
        for t in readers:
            t.join(timeout=5)
        self.returncode = self.proc.returncode

    def text(self, which="out"):
        return "\n".join(line for _, name, line in self.lines if name == which)

    def time_of(self, pattern):
        return next(t for t, _, line in self.lines if re.search(pattern, line))


def camera_from(text):
    m = re.search(r"camera:? target \(([-\d.]+), ([-\d.]+), ([-\d.]+)\), distance ([\d.]+) m, "
                  r"yaw ([-\d.]+), pitch ([-\d.]+)", text)
    assert m, text[-2000:]
    x, y, z, d, yaw, pitch = map(float, m.groups())
    return (x, y, z), d, yaw, pitch


def project(points, camera):
    """Screen pixels (column, row) of world points seen by the window's camera."""
    target, distance, yaw, pitch = camera
    V = np.array(p.computeViewMatrixFromYawPitchRoll(target, distance, yaw, pitch, 0, 2)).reshape(4, 4).T
    P = np.array(p.computeProjectionMatrixFOV(GUI_FOV, WIDTH / HEIGHT, 0.01, 100)).reshape(4, 4).T
    h = np.c_[np.asarray(points, float), np.ones(len(points))] @ (P @ V).T
    ndc = h[:, :2] / h[:, 3:]
    return np.c_[(ndc[:, 0] + 1) * WIDTH / 2, (1 - ndc[:, 1]) * HEIGHT / 2]


def kuka_link_points(configurations):
    """World positions of the iiwa's link frames (base at the origin) over configurations,
    from PyBullet's forward kinematics in a DIRECT client of our own."""
    c = p.connect(p.DIRECT)
    try:
        body = p.loadURDF(pybullet_data.getDataPath() + "/kuka_iiwa/model.urdf", useFixedBase=True,
                          physicsClientId=c)
        pts = [(0.0, 0.0, 0.0)]
        for q in configurations:
            for j, v in enumerate(q):
                p.resetJointState(body, j, float(v), physicsClientId=c)
            pts += [p.getLinkState(body, j, computeForwardKinematics=True, physicsClientId=c)[4] for j in range(7)]
        return np.array(pts)
    finally:
        p.disconnect(c)


def region(pixels, margin=50):
    lo = np.maximum(pixels.min(axis=0) - margin, 0).astype(int)
    hi = np.minimum(pixels.max(axis=0) + margin, (WIDTH, HEIGHT)).astype(int)
    return slice(lo[1], hi[1]), slice(lo[0], hi[0])


def changed(a, b, where=None):
    """Pixels that differ between two grabs (outside the time readout), inside ``where``."""
    diff = np.abs(a.astype(int) - b.astype(int)).sum(axis=-1) > 40
    diff[TIME_BOX] = False
    return int(diff[where].sum()) if where is not None else int(diff.sum())


LEGEND_SWATCHES = (slice(0, 200), slice(0, 40))   # the window legend's colour swatches


def clearance_pixels(img):
    """Pixels in the clearance colours: pure green (far) and pure red (touching); no other
    part of these scenes has them (the robot's orange has green ~100, the floor is blue/white),
    except the legend's swatches: left out of the green, which counts the segments themselves;
    counted in the red (a touching segment has no length; its swatch shows the contact)."""
    r, g, b = (img[..., k].astype(int) for k in range(3))
    green, red = (g > 200) & (r < 80) & (b < 80), (r > 200) & (g < 60) & (b < 60)
    green[LEGEND_SWATCHES] = False
    return int(green.sum()), int(red.sum())


def assert_not_blank(img):
    assert img.std() > 10 and len(np.unique(img.reshape(-1, 3)[::7], axis=0)) > 50


# ---------------------------------------------------------------------- demo and run
def test_demo_gui_window_shows_the_motion_and_the_clearance_lines(display, tmp_path):
    from simbench.demo import WAYPOINTS

    w = Watched([*SIMBENCH, "demo", "--gui", "--hold", "1"], display, cwd=tmp_path,
                ready=lambda line: line.startswith("distance from"))
    out = w.text()
    assert w.returncode == 0, w.text("err")[-3000:]
    assert "main server GUI" in out and "running headless" not in w.text("err")
    assert not (tmp_path / "out").exists()      # a window writes no picture: no empty out/ left behind
    assert len(w.grabs) >= 10, len(w.grabs)
    t_first, t_last = w.time_of(r"^\s+0\s"), w.time_of(r"^\s+5\s")
    holding = [img for t, img in w.grabs if t_last < t < t_last + 0.8]  # the window is still open
    assert holding
    for img in holding:
        assert_not_blank(img)
    # where the arm is on the screen: its link frames along the scripted motion, projected
    path = [a + s * (b - a) for a, b in zip(WAYPOINTS[:-1], WAYPOINTS[1:]) for s in np.linspace(0, 1, 8)]
    where = region(project(kuka_link_points(path), camera_from(out)))
    moving = [img for t, img in w.grabs if t_first - 0.5 < t < t_last]
    diffs = [changed(a, b, where) for a, b in zip(moving, moving[1:])]
    assert sum(d > 300 for d in diffs) >= 3, diffs          # the robot moves on the screen
    colours = [clearance_pixels(img) for t, img in w.grabs if t > t_first + 0.3]
    assert max(g for g, _ in colours) > 200, colours          # green segments (clear)
    assert max(r for _, r in colours) > 20, colours           # red ones (cube 1 touched at waypoints 1-2)


def test_scenario_gui_window_is_live(display, tmp_path):
    script = ROOT / "scripts" / "scenario_collision_loop.py"
    w = Watched([*SIMBENCH, "run", str(script), "--gui", "--duration", "5", "--seed", "1", "--out", str(tmp_path)],
                display, cwd=tmp_path, ready=lambda line: "GUI window" in line)
    err = w.text("err")
    assert w.returncode == 0, err[-3000:]
    assert "GUI); servers closed" in err
    camera = camera_from(err)
    # the arm sweeps at most its upright reach around its base (0.0, 0.0, 0.0)
    reach = float(np.linalg.norm(kuka_link_points([np.zeros(7)]), axis=1).max())
    sphere = [(reach * x, reach * y, max(reach * z, 0.0)) for x in (-1, 0, 1) for y in (-1, 0, 1) for z in (0, 0.5, 1)]
    where = region(project(np.array(sphere), camera), margin=0)
    diffs = [changed(a, b, where) for (_, a), (_, b) in zip(w.grabs, w.grabs[1:])]
    assert len(diffs) >= 8 and sum(d > 300 for d in diffs) >= len(diffs) // 3, diffs
    assert max(clearance_pixels(img)[0] for _, img in w.grabs) > 100
    for _, img in w.grabs[len(w.grabs) // 2:len(w.grabs) // 2 + 2]:
        assert_not_blank(img)


def test_sync_rendering_still_redraws(display, tmp_path):
    """``--render sync`` (PyBullet's single-step rendering) froze the window; it must redraw."""
    w = Watched([*SIMBENCH, "demo", "--gui", "--render", "sync", "--steps", "3"], display, cwd=tmp_path,
                ready=lambda line: line.startswith("distance from"))
    assert w.returncode == 0, w.text("err")[-3000:]
    diffs = [changed(a, b) for (_, a), (_, b) in zip(w.grabs, w.grabs[1:])]
    assert sum(d > 300 for d in diffs) >= 2, diffs


# ---------------------------------------------------------------------- view
def test_view_shows_the_robot(display, tmp_path):
    q = {"lbr_iiwa_joint_2": 0.7, "lbr_iiwa_joint_4": -1.0}
    w = Watched([*SIMBENCH, "view", "pybullet_data:kuka_iiwa/model.urdf", "--duration", "3",
                 "--q", *(f"{k}={v}" for k, v in q.items())], display, cwd=tmp_path,
                ready=lambda line: line.startswith("move the sliders"))
    out = w.text()
    assert w.returncode == 0, w.text("err")[-3000:]
    assert "robot 'lbr_iiwa'" in out and "movable joints (q order)" in out  # info's summary
    assert len(w.grabs) >= 3
    img = w.grabs[len(w.grabs) // 2][1]   # the window is open for 3 s after the line
    assert_not_blank(img)
    pts = kuka_link_points([[0, q["lbr_iiwa_joint_2"], 0, q["lbr_iiwa_joint_4"], 0, 0, 0]])
    where = region(project(pts, camera_from(out)), margin=40)
    r, g, b = (img[..., k].astype(int) for k in range(3))
    orange = (r > 200) & (g > 60) & (g < 160) & (b < 80)   # the iiwa's orange links
    assert orange[where].sum() > 300 and orange[where].sum() > 0.9 * orange.sum(), (orange[where].sum(), orange.sum())


SLIDERS = textwrap.dedent("""
    import json, sys
    import pybullet as p
    from simbench.view import Viewer
    v = Viewer(sys.argv[1], gui=True, q=json.loads(sys.argv[2]))
    read = v.read_sliders()
    v.poll()
    states = {n: p.getJointState(v.robot.id, v.robot.body.joint_index(n), physicsClientId=v.sim.client)[0]
              for n in v.robot.joint_names}
    print(json.dumps({"gui": v.sim.gui, "sliders": read, "joints": states}))
    v.close()
""")


def urdf_limits(path):
    out = {}
    for joint in ET.parse(path).getroot().iter("joint"):
        kind, limit = joint.get("type"), joint.find("limit")
        if kind in ("revolute", "prismatic") and limit is not None:
            out[joint.get("name")] = (float(limit.get("lower", 0)), float(limit.get("upper", 0)))
        elif kind == "continuous":
            out[joint.get("name")] = (-math.pi, math.pi)
    return out


@pytest.mark.parametrize("urdf, asked", [
    ("kuka_iiwa/model.urdf", {"lbr_iiwa_joint_2": 0.5, "lbr_iiwa_joint_4": -5.0, "lbr_iiwa_joint_7": 9.0}),
    ("r2d2.urdf", {"right_front_wheel_joint": 10.0, "gripper_extension": -0.2, "head_swivel": -1.0}),
])
def test_sliders_drive_the_joints_within_the_urdf_limits(display, tmp_path, urdf, asked):
    """Through Viewer.read_sliders: each slider starts at the asked value clipped into the
    URDF's limits (continuous joints: -pi..pi) and drives its own joint."""
    proc = run_gui([sys.executable, "-c", SLIDERS, f"pybullet_data:{urdf}", json.dumps(asked)], display,
                   cwd=tmp_path, timeout=180)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["gui"] is True, proc.stderr[-2000:]
    limits = urdf_limits(pybullet_data.getDataPath() + "/" + urdf)
    compared = 0
    for name, value in got["sliders"].items():
        lo, hi = limits.get(name, (-math.pi, math.pi))
        want = min(max(asked.get(name, 0.0), lo), hi)
        assert value == pytest.approx(want, abs=1e-5), name
        assert got["joints"][name] == pytest.approx(value, abs=1e-6), name  # sliders hold float32
        compared += 1
    assert compared == len(got["sliders"]) >= len(asked)
    assert any(got["sliders"][n] != pytest.approx(v) for n, v in asked.items())  # some were clipped


def test_recording_and_screenshot_come_from_the_window(display, tmp_path):
    """In the GUI, frames come from the window's camera with the OpenGL renderer, annotated."""
    shot, gif = tmp_path / "gui.png", tmp_path / "gui.gif"
    proc = run_gui([*SIMBENCH, "run", str(ROOT / "scripts" / "scenario_collision_loop.py"), "--gui", "--duration",
                    "0.5", "--seed", "2", "--no-real-time", "--screenshot", str(shot), "--record", str(gif),
                    "--fps", "5", "--size", "320x240", "--out", str(tmp_path)], display, cwd=tmp_path, timeout=180)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "running headless" not in proc.stderr and "GUI); servers closed" in proc.stderr
    clearance = float(proc.stdout.split("min_clearance_main: ")[1].split()[0])
    assert 0 < clearance < 1
    img = np.asarray(Image.open(shot).convert("RGB"))
    assert img.shape == (240, 320, 3)
    assert_not_blank(img)
    assert clearance_pixels(img)[0] > 20  # the post's four segments drawn into the picture
    im = Image.open(gif)
    assert im.n_frames == 1 + 2 + 1   # t = 0, 0.2, 0.4 s, and the end (0.5 s: drawn after the last frame's time)
    im.seek(im.n_frames - 1)
    assert np.asarray(im.convert("RGB"), dtype=float).std() > 5


NO_INERTIAL = """<robot name="arm">
  <link name="base"><collision><geometry><box size="0.2 0.2 0.2"/></geometry></collision></link>
  <link name="l1"><inertial><mass value="1"/><inertia ixx="0.02" iyy="0.002" izz="0.002" ixy="0" ixz="0" iyz="0"/>
    </inertial><collision><origin xyz="0 0 0.2"/><geometry><box size="0.05 0.05 0.4"/></geometry></collision></link>
  <link name="l2"><collision><origin xyz="0 0 0.2"/><geometry><box size="0.05 0.05 0.4"/></geometry></collision></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><origin xyz="0 0 0.1"/><axis xyz="0 1 0"/>
    <limit lower="-2" upper="2" effort="10" velocity="1"/></joint>
  <joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/><origin xyz="0 0 0.4"/><axis xyz="0 1 0"/>
    <limit lower="-2" upper="2" effort="10" velocity="1"/></joint>
</robot>
"""


def test_a_gui_server_keeps_pybullets_inertial_warnings_to_one_line_of_ours(display, tmp_path):
    """With a GUI server PyBullet prints its importer's warnings as 'b3Printf: ' lines with blank
    lines between (a walkthrough saw 8 of them around `view --gui` and `run --gui`; the DIRECT
    server's form was already filtered): a window on an arm without <inertial> on two links, one
    of them breaking the triangle inequality, prints simbench's one line and none of PyBullet's."""
    (tmp_path / "arm.urdf").write_text(NO_INERTIAL)
    proc = subprocess.run([*SIMBENCH, "view", "arm.urdf", "--gui", "--duration", "1"], capture_output=True,
                          text=True, timeout=120, cwd=tmp_path, env={**os.environ, "DISPLAY": display})
    assert proc.returncode == 0, proc.stderr[-3000:]
    both = proc.stdout + proc.stderr
    assert "b3Warning" not in both and "No inertial data" not in both and "Bad inertia" not in both, both[-3000:]
    ours = [ln for ln in proc.stderr.splitlines() if "no <inertial>" in ln]
    assert len(ours) == 1 and "link 'l2'" in ours[0] and "link 'l1'" in ours[0], ours
