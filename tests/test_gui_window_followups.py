"""The window's legend after a user walkthrough (two arms, a busy script, a removed body), looked
at on the screen of an Xvfb server (:mod:`test_gui`'s fixture and :class:`~test_gui.Watched`:
the scripts run as subprocesses, the X screen grabbed every few hundredths of a second):

* the camera moved while the script computes or steps slowly: the legend comes back to the
  window's top-left corner without a step (it was gone, or floated in the sky until the next step);
* the time readout never runs ahead of the distances drawn for it;
* a removed body's segments and legend rows leave the window, the screenshots, the recordings
  and ``sim.overlays``;
* two rows that would read the same get the robot's body and link beside the obstacle.

Oracles: the screen only, read with :mod:`test_gui_labels`' pixel rules (near-black text,
saturated swatches); distances from PyBullet's ``getClosestPoints`` on a DIRECT client of our
own; the texts the script sent to PyBullet's window, logged by a wrapper of ``addUserDebugText``.
"""
import json
import shutil
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pybullet as p
import pybullet_data
import pytest
import test_gui  # its Xvfb fixture and helpers
from test_gui import Watched, env_for
from test_gui_labels import legend_rows

display = test_gui.display
pytestmark = pytest.mark.gui

SCENE = textwrap.dedent("""
    gravity = [0, 0, 0]
    robot = "robot"
    [[body]]
    name = "robot"
    urdf = "pybullet_data:kuka_iiwa/model.urdf"
    fixed_base = true
    [body.joints]
    lbr_iiwa_joint_2 = 0.5
    [[body]]
    name = "box"
    urdf = "pybullet_data:cube_small.urdf"
    position = [0.9, 0.4, 0.5]
    fixed_base = true
    [[body]]
    name = "ball"
    urdf = "pybullet_data:sphere_small.urdf"
    position = [0.55, -0.15, 0.95]
    fixed_base = true
""")
Q2 = 0.5   # the robot's joint 2 in SCENE


def oracle_distance(link, urdf, position, q=None, second_base=None):
    """PyBullet's getClosestPoints between the iiwa's ``link`` (index) and a body, on a DIRECT
    client of our own (the iiwa at the origin, joint 2 at :data:`Q2`, or based at ``second_base``
    = (position, quaternion))."""
    c = p.connect(p.DIRECT)
    try:
        base = second_base or ((0, 0, 0), (0, 0, 0, 1))
        robot = p.loadURDF(pybullet_data.getDataPath() + "/kuka_iiwa/model.urdf", base[0], base[1],
                           useFixedBase=True, physicsClientId=c)
        for j, v in enumerate(q if q is not None else [0, Q2, 0, 0, 0, 0, 0]):
            p.resetJointState(robot, j, v, physicsClientId=c)
        body = p.loadURDF(pybullet_data.getDataPath() + "/" + urdf, position, useFixedBase=True, physicsClientId=c)
        pts = p.getClosestPoints(robot, body, 5.0, linkIndexA=link, physicsClientId=c)
        return min(pt[8] for pt in pts)
    finally:
        p.disconnect(c)


def run(script, display, tmp_path, ready, period=0.05, scene=SCENE, act=None):
    """``script`` run in ``tmp_path`` beside ``scene.toml``, the screen grabbed every ``period``
    s from its line starting with ``ready`` (then ``act()`` is called, once)."""
    (tmp_path / "scene.toml").write_text(scene)
    (tmp_path / "script.py").write_text(textwrap.dedent(script))

    def seen(line):
        if not line.startswith(ready):
            return False
        if act is not None and not acted:
            acted.append(act())
        return True

    acted = []
    return Watched([sys.executable, "script.py"], display, cwd=tmp_path, period=period, timeout=180, ready=seen)


def dark_mask(img, top=0, height=170, width=150):
    """Near-black pixels at the window's top left: the legend's text (left of its leaders)."""
    return img[top:top + height, :width].astype(int).max(axis=-1) < 60


def legend_ok(img, n):
    """The legend in the window's top-left corner: the time and ``n`` rows, each beside a swatch."""
    lines, swatches = legend_rows(img)
    return (len(lines) == n + 1 and len(swatches) == n and lines[0][2] >= 25
            and all(ink >= 100 for *_, ink in lines[1:]))


def save(img, path):
    """A grab kept beside the test's files (to look at when it fails)."""
    from PIL import Image

    Image.fromarray(img).save(path)


def overlap(a, b):
    return (a & b).sum() / max(1, (a | b).sum())


# ---------------------------------------------------------------------- item 1: camera moves
MOVED = """
    import sys, time
    import pybullet as p
    import simbench
    from simbench.bullet.collision import NamedCollisionObject as O
    mode = sys.argv[1] if len(sys.argv) > 1 else "{mode}"
    with simbench.Simulation("scene.toml", gui=True) as sim:
        det = sim.detector([(O("robot", "lbr_iiwa_link_7"), "box"), (O("robot", "lbr_iiwa_link_7"), "ball")])
        sim.step(10)
        sim.draw_closest_points(det.closest_points())
        sim.step(2)
        cam = sim.window.camera()
        print("ready", cam["yaw"], flush=True)

        def busy(seconds):               # the script computes: no step
            end, x = time.perf_counter() + seconds, 0
            while time.perf_counter() < end:
                x += 1

        busy(2.0)
        for k, (dyaw, dpitch) in enumerate([(35, -12), (-70, 4)] if mode != "drag" else []):
            if mode == "slow":           # a step (and a drawing) 1 s before the move, the next 4.5 s later
                sim.step()           # (the window caught up with it before the move)
                sim.draw_closest_points(det.closest_points())
            busy(1.0)
            p.resetDebugVisualizerCamera(cam["distance"] * 1.2, cam["yaw"] + dyaw, cam["pitch"] + dpitch,
                                         cam["target"], physicsClientId=sim.client)
            print(f"moved {{k}} {{time.perf_counter()}}", flush=True)
            busy(3.5)
        busy(14.0 if mode == "drag" else 0.0)   # the test drags the view meanwhile
        print("done", sim.window.camera()["yaw"], flush=True)
"""


def ctrl_drag(display, dx, dy):
    """The user turning the view: Ctrl + left button dragged from the window's middle (xdotool)."""
    def xdo(*args):
        subprocess.run(["xdotool", *map(str, args)], env=env_for(display), check=True, timeout=20)

    xdo("mousemove", 500, 400, "keydown", "ctrl", "mousedown", 1)
    for i in range(1, 21):
        xdo("mousemove", 500 + i * dx // 20, 400 + i * dy // 20)
        time.sleep(0.03)
    xdo("mouseup", 1, "keyup", "ctrl")


@pytest.mark.parametrize("mode", ["busy", "slow", "drag"])
def test_legend_follows_a_camera_moved_between_steps(display, tmp_path, mode):
    """The camera moved while the script computes (busy.py: no step any more) or steps slowly
    (slowstep.py; here 1 s before the move and 3.5 s after): the legend, drawn in the 3D scene 0.1 m before the eye it was placed
    for, was gone (busy) or floated in the sky until the next step (slow). Now, within 1.5 s of
    each of two moves and on every grab after that until the next move, the top-left corner
    holds the time and two rows beside two swatches, their text pixels where they were before
    the move (>= 0.8 of the dark pixels shared), while the scene itself changed (thousands of pixels).
    Mode drag: the busy script, the view turned by two Ctrl-drags of the mouse (xdotool) as the
    user did."""
    dragged = []
    if mode == "drag":
        if shutil.which("xdotool") is None:
            pytest.skip("xdotool not installed")

        def drags():
            for dx, dy in ((160, 40), (-320, -30)):
                time.sleep(4.0)
                t0 = time.perf_counter()
                ctrl_drag(display, dx, dy)
                dragged.append((t0, time.perf_counter()))

        thread = threading.Thread(target=drags, daemon=True)
        w = run(MOVED.format(mode=mode), display, tmp_path, "ready", act=thread.start)
        thread.join(timeout=30)
        yaws = [float(line.split()[1]) for line in w.text().splitlines() if line.split()[0] in ("ready", "done")]
        assert len(dragged) == 2 and abs(yaws[1] - yaws[0]) > 5, (dragged, w.text())   # the view turned
    else:
        w = run(MOVED.format(mode=mode), display, tmp_path, "ready")
    assert w.returncode == 0, w.text("err")[-3000:]
    moves = [t1 for _, t1 in dragged] or [float(line.split()[2]) for _, name, line in w.lines
                                          if name == "out" and line.startswith("moved")]
    starts = [t0 for t0, _ in dragged] or moves   # when each move began
    done = w.time_of("^done")
    assert len(moves) == 2
    before = [img for t, img in w.grabs if t < starts[0] - 0.2 and legend_ok(img, 2)]
    assert before, [legend_rows(img)[0] for _, img in w.grabs[:10]]
    ref = before[-1]
    rows = legend_rows(ref)[0][1][0] - 2   # the rows below the time (which changes in mode slow)
    save(ref, tmp_path / "before.png")
    checked = 0
    for k, start in enumerate(moves):
        end = starts[k + 1] if k + 1 < len(moves) else done
        after = [(t, img) for t, img in w.grabs if start + 1.5 < t < end - 0.3]
        assert len(after) >= 6, len(after)   # grabs take 0.05-0.2 s each on a loaded machine (CI: 8 in 1.7 s)
        save(after[0][1], tmp_path / f"moved{k}_first.png")
        save(after[-1][1], tmp_path / f"moved{k}_last.png")
        assert test_gui.changed(ref, after[-1][1]) > 3000        # the view did turn
        for t, img in after:
            assert legend_ok(img, 2), (mode, k, round(t - start, 2), legend_rows(img))
            assert overlap(dark_mask(img, rows), dark_mask(ref, rows)) >= 0.8, (mode, k, round(t - start, 2))
            checked += 1
    assert checked >= 12, checked


# ---------------------------------------------------------------------- item 5: time with its rows
TIMED = """
    import time
    import simbench
    from simbench.bullet.collision import NamedCollisionObject as O
    with simbench.Simulation("scene.toml", gui=True, dt=0.25) as sim:
        det = sim.detector([(O("robot", "lbr_iiwa_link_7"), "box")])
        link7 = sim.robot.link_pose("lbr_iiwa_link_7")[0]
        print("ready", flush=True)
        for k in range(1, 41):                  # t = 0.25 ... 10.00 s
            if k == 40:                         # the window caught up (within 2/3 s), then the step's
                time.sleep(1.2)                 # text update is due: the race
            sim.step()
            far = k == 40
            sim.set_pose("box", [0.9, 0.4, 0.5] if far else link7.tolist())
            (res,) = det.closest_points()
            sim.draw_closest_points([res])      # right after the step, as scripts do
            print(f"drawn t={sim.t:.2f} d={res.distance:.6f} q={','.join(map(repr, sim.robot.q.tolist()))}", flush=True)
            time.sleep(0.05)
        time.sleep(2.0)
        print("done", flush=True)
"""


def swatch_colour(img):
    """The colour of the legend's one swatch: red, green, other, or none."""
    swatches = legend_rows(img)[1]
    if len(swatches) != 1:
        return "none"
    r, g, _ = swatches[0][2]
    return "red" if r > 200 and g < 60 else "green" if g > 200 and r < 60 else "other"


def test_the_time_never_runs_ahead_of_its_distances(display, tmp_path):
    """The step to t = 10 s pushed the time text (its update was due), then the script drew the
    box moved away: for up to 2/3 s the window read 't = 10.00 s' beside the red swatch of the
    distance drawn at 9.75 s (the box inside link 7). Every grab from the first step on: the
    time row as it reads once the window is idle at the end ('t = 10.00 s', pixel for pixel)
    only ever beside the green swatch of the drawing made at 10 s; both states seen (counted), and the drawn distances are PyBullet's getClosestPoints on a
    DIRECT client (box inside link 7: < 0; moved away: > 0.3, green)."""
    w = run(TIMED, display, tmp_path, "ready", period=0.02)
    assert w.returncode == 0, w.text("err")[-3000:]
    drawn = [line.split() for line in w.text().splitlines() if line.startswith("drawn")]
    assert len(drawn) == 40 and drawn[-1][1] == "t=10.00"
    (d_in, q_in), (d_out, q_out) = [(float(row[2][2:]), [float(v) for v in row[3][2:].split(",")])
                                    for row in (drawn[0], drawn[-1])]
    c = p.connect(p.DIRECT)
    try:   # link 7's frame at the start, where the box was put
        robot = p.loadURDF(pybullet_data.getDataPath() + "/kuka_iiwa/model.urdf", useFixedBase=True, physicsClientId=c)
        p.resetJointState(robot, 1, Q2, physicsClientId=c)
        link7 = p.getLinkState(robot, 6, computeForwardKinematics=True, physicsClientId=c)[4]
    finally:
        p.disconnect(c)
    assert d_in == pytest.approx(oracle_distance(6, "cube_small.urdf", link7, q_in), abs=1e-4) and d_in < 0
    assert d_out == pytest.approx(oracle_distance(6, "cube_small.urdf", (0.9, 0.4, 0.5), q_out), abs=1e-4)
    assert d_out > 0.3
    start, done = w.time_of("^drawn"), w.time_of("^done")
    shown = [(t, img) for t, img in w.grabs if start < t < done]
    # the reference: the window 1.5 s after the last drawing, idle since: 't = 10.00 s' beside
    # the green swatch of the box moved away (test_gui_labels' catch-up test pins this)
    reference = [img for t, img in shown if t > w.time_of("t=10.00") + 1.5]
    assert len(reference) >= 5, len(reference)
    ref = reference[-1]
    time_row = legend_rows(ref)[0][0]
    rows = slice(time_row[0] - 1, time_row[1] + 1)
    assert swatch_colour(ref) == "green"
    states = {}
    for t, img in shown:
        now = bool(np.array_equal(img[rows, :300], ref[rows, :300]))   # reads 't = 10.00 s'
        state = (now, swatch_colour(img))
        if state not in states:
            save(img, tmp_path / f"time_{'10' if now else 'before'}_{state[1]}.png")
        states.setdefault(state, []).append(round(t - start, 2))
    assert (True, "green") in states and (False, "red") in states, states.keys()   # both seen
    bad = [ts for (now, colour), ts in states.items() if now and colour != "green"]
    assert not bad, (bad, states.keys())
    counted = sum(len(ts) for ts in states.values())
    assert counted >= 50, counted


# ---------------------------------------------------------------------- item 3: a removed body
REMOVED = """
    import json, time
    import simbench
    from simbench.bullet.collision import NamedCollisionObject as O

    def shown(sim):
        return json.dumps({k: [[s.label, s.distance] for s in v] for k, v in sim.overlays.items()})

    with simbench.Simulation("scene.toml", gui=True) as sim:
        l7 = O("robot", "lbr_iiwa_link_7")
        det = sim.detector([(l7, "box"), (l7, "ball")])
        only = sim.detector([(O("robot", "lbr_iiwa_link_4"), "box")])
        sim.step(10)
        sim.draw_closest_points(det.closest_points())
        sim.draw_closest_points(only.closest_points(), key="only_box")
        rec = sim.record("run.gif", fps=20, size=(320, 240))
        sim.step(12)
        sim.screenshot("before.png", size=(320, 240))
        print("before", shown(sim), flush=True)
        time.sleep(2.0)
        print("removing", flush=True)
        sim.remove_body("box")
        print("removed", shown(sim), flush=True)
        print("q", json.dumps(sim.robot.q.tolist()), flush=True)
        time.sleep(2.0)                    # no step: the window alone
        print("stepping", flush=True)
        sim.step(30)
        sim.screenshot("after.png", size=(320, 240))
        rec.stop()
        time.sleep(2.0)
        print("done", flush=True)
"""


def green_pixels(img):
    """Pure green pixels (the far segments and their swatches; nothing else in SCENE is)."""
    r, g, b = (img[..., k].astype(int) for k in range(3))
    return int(((g > 200) & (r < 80) & (b < 80)).sum())


def test_a_removed_bodys_segments_leave_the_window_pictures_and_overlays(display, tmp_path):
    """remove.py: after sim.remove_body("box") the window and the screenshots still showed
    'box: 0.806 m' and a green segment ending in empty space, and sim.overlays still listed the
    box. Now: sim.overlays keeps only the ball's segment (its distance getClosestPoints' on a
    DIRECT client) and forgets the key that only had the box; the window shows the time and one
    row, without green segments, within 1 s of the removal (no step) and after 30 more steps;
    the screenshot and the GIF's last frame have no green, the ones before it do (counted)."""
    from PIL import Image

    w = run(REMOVED, display, tmp_path, "before", period=0.1)
    assert w.returncode == 0, w.text("err")[-3000:]
    out = {line.split()[0]: line.split(maxsplit=1)[1] for line in w.text().splitlines() if " " in line}
    before, after, q = json.loads(out["before"]), json.loads(out["removed"]), json.loads(out["q"])
    assert sorted(before) == ["closest", "only_box"] and len(before["closest"]) == 2
    assert list(after) == ["closest"] and [label for label, _ in after["closest"]] == ["robot - ball"]
    assert after["closest"][0][1] == pytest.approx(oracle_distance(6, "sphere_small.urdf", (0.55, -0.15, 0.95), q),
                                                   abs=1e-6)
    assert after["closest"][0][1] == before["closest"][1][1]
    t_removed, t_step, t_done = w.time_of("^removed"), w.time_of("^stepping"), w.time_of("^done")
    phases = {"before": [img for t, img in w.grabs if t < w.time_of("^removing") - 0.1],
              "removed": [img for t, img in w.grabs if t_removed + 1.0 < t < t_step],
              "stepped": [img for t, img in w.grabs if t_step + 1.0 < t < t_done]}
    assert all(len(imgs) >= 5 for imgs in phases.values()), {k: len(v) for k, v in phases.items()}
    save(phases["before"][-1], tmp_path / "window_before.png")
    save(phases["removed"][-1], tmp_path / "window_removed.png")
    checked = 0
    for img in phases["before"][-3:]:
        assert legend_ok(img, 3) and test_gui.clearance_pixels(img)[0] > 100, legend_rows(img)
    for phase in ("removed", "stepped"):
        for img in phases[phase]:
            assert legend_ok(img, 1), (phase, legend_rows(img))
            assert test_gui.clearance_pixels(img)[0] == 0, phase
            checked += 1
    assert checked >= 10, checked
    shots = [np.asarray(Image.open(tmp_path / f"{name}.png").convert("RGB")) for name in ("before", "after")]
    assert green_pixels(shots[0]) > 50 and green_pixels(shots[1]) == 0, [green_pixels(s) for s in shots]
    gif = Image.open(tmp_path / "run.gif")
    frames = []
    for k in range(gif.n_frames):
        gif.seek(k)
        frames.append(green_pixels(np.asarray(gif.convert("RGB"))))
    assert len(frames) >= 4 and frames[0] > 50 and frames[-1] == 0, frames


# ---------------------------------------------------------------------- item 4: rows told apart
TWO_ARMS = textwrap.dedent("""
    gravity = [0, 0, 0]
    robot = "floor_arm"
    [[body]]
    name = "floor_arm"
    urdf = "pybullet_data:kuka_iiwa/model.urdf"
    fixed_base = true
    [body.joints]
    lbr_iiwa_joint_2 = 0.5
    [[body]]
    name = "wall_arm"
    urdf = "pybullet_data:kuka_iiwa/model.urdf"
    position = [1.6, 0, 1.0]
    orientation = [0, -1.5708, 0]
    fixed_base = true
    [[body]]
    name = "ball"
    urdf = "pybullet_data:sphere_small.urdf"
    position = [0.55, -0.15, 0.95]
    fixed_base = true
    [[body]]
    name = "obst"
    urdf = "pybullet_data:cube_small.urdf"
    position = [0.8, 0.5, 0.9]
    fixed_base = true
""")
WALL_BASE = ((1.6, 0, 1.0), tuple(p.getQuaternionFromEuler((0, -1.5708, 0))))

LABELS = """
    import json, time
    import pybullet
    import simbench
    from simbench.bullet.collision import NamedCollisionObject as O

    sent, add, remove = {}, pybullet.addUserDebugText, pybullet.removeUserDebugItem
    def logged_add(text, *args, **kwargs):      # what the window is asked to show
        item = add(text, *args, **kwargs)
        sent[item] = text
        return item
    def logged_remove(item, *args, **kwargs):
        sent.pop(item, None)
        return remove(item, *args, **kwargs)
    pybullet.addUserDebugText, pybullet.removeUserDebugItem = logged_add, logged_remove

    with simbench.Simulation("scene.toml", gui=True) as sim:
        f7, w7 = O("floor_arm", "lbr_iiwa_link_7"), O("wall_arm", "lbr_iiwa_link_7")
        sim.step(5)
        sim.draw_closest_points(sim.detector([(f7, "ball")]).closest_points(), key="floor")
        sim.draw_closest_points(sim.detector([(w7, "ball")], robot="wall_arm").closest_points(), key="wall")
        sim.draw_closest_points(sim.detector([(f7, "obst"), (w7, "obst")]).closest_points(), key="one")
        print("q", json.dumps([sim.robot.q.tolist(), sim.handle("wall_arm").q.tolist()]), flush=True)
        sim.screenshot("shot.png", size=(640, 480))
        time.sleep(2.0)
        print("sent", json.dumps(sorted(text for text in sent.values() if not text.startswith("t ="))), flush=True)
        print("overlays", json.dumps({k: [s.label for s in v] for k, v in sim.overlays.items()}), flush=True)
        time.sleep(1.0)
        print("done", flush=True)
"""


def ink_rows(mask):
    """(top, bottom, width) of the text lines in a boolean mask (rows of ink, 2 px gaps joined)."""
    from test_gui_labels import runs

    out = []
    for a, b in runs(mask.sum(axis=1), join=2):
        cols = np.flatnonzero(mask[a:b].any(axis=0))
        out.append((a, b, int(cols[-1] - cols[0])))
    return out


def test_rows_that_would_read_the_same_name_the_robot(display, tmp_path):
    """Two arms: keys 'floor' and 'wall' each drew link 7 against the ball ('ball: 0.764 m' and
    'ball: 0.646 m'), and one detector drew both link 7s against obst ('obst (lbr_iiwa_link_7)'
    twice). Now the four rows sent to the window name both sides, 'floor_arm - ball: ...' (the
    same in every key: walkthrough S), with getClosestPoints' distances (DIRECT client);
    sim.overlays keeps the labels. On the screen (idle) and in the screenshot the four
    rows' ink widths follow those texts' lengths (px per character within 25 % of the time's)."""
    from PIL import Image

    w = run(LABELS, display, tmp_path, "q", period=0.1, scene=TWO_ARMS)
    assert w.returncode == 0, w.text("err")[-3000:]
    out = {line.split()[0]: json.loads(line.split(maxsplit=1)[1]) for line in w.text().splitlines()
           if line.split()[0] in ("q", "sent", "overlays")}
    q_floor, q_wall = out["q"]
    truth = {(arm, obj): oracle_distance(6, urdf, pos, q, base)
             for arm, q, base in (("floor_arm", q_floor, None), ("wall_arm", q_wall, WALL_BASE))
             for obj, urdf, pos in (("ball", "sphere_small.urdf", (0.55, -0.15, 0.95)),
                                    ("obst", "cube_small.urdf", (0.8, 0.5, 0.9)))}
    # both sides named, the same in every key and whatever else is shown (walkthrough S)
    want = [f"{arm} - {obj}: {d:.3f} m" for (arm, obj), d in truth.items()]
    assert out["sent"] == sorted(want), (out["sent"], want)
    assert out["overlays"] == {"floor": ["floor_arm - ball"], "wall": ["wall_arm - ball"],
                               "one": ["floor_arm - obst", "wall_arm - obst"]}
    order = [want[0], want[2], want[1], want[3]]   # floor, wall, one (floor, wall)
    idle = [img for t, img in w.grabs if w.time_of("^q") + 1.0 < t < w.time_of("^sent")]
    assert len(idle) >= 5, len(idle)
    save(idle[-1], tmp_path / "window.png")
    shot = np.asarray(Image.open(tmp_path / "shot.png").convert("RGB"))
    pictures = {"window": (idle[-1][:170, 14:700].astype(int).max(axis=-1) < 60, "t = 0.02 s"),
                "screenshot": (shot[:110, :640].astype(int).min(axis=-1) > 235, "t = 0.021 s")}
    checked = 0
    for name, (mask, time_label) in pictures.items():
        rows = ink_rows(mask)
        assert len(rows) == 5, (name, rows)
        per_char = rows[0][2] / len(time_label)
        for (_, _, width), text in zip(rows[1:], order):
            assert abs(width / len(text) / per_char - 1) < 0.25, (name, width, text, per_char)
            checked += 1
    assert checked == 8
