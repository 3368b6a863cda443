"""What the real window shows besides the bodies, looked at on the screen of an Xvfb server
(:mod:`test_gui`'s fixture and helpers; the commands run as users run them, the X screen grabbed
every 0.25 s): the demo's distance legend at every moment of its motion, and the robot that
``view --gui`` frames between PyBullet's panels with its legend beside them.

Oracles: the screen only, read with plain pixel rules (near-black text, saturated swatches,
the window's sky colour); the clearance colours expected from the distances the command
prints (its physics, not its drawing).
"""
import re
import sys
import textwrap

import numpy as np
import pytest
import test_gui  # its Xvfb fixture and helpers
from test_gui import SIMBENCH, Watched

display = test_gui.display
pytestmark = pytest.mark.gui

SKY = (178, 178, 204)   # the window's background colour (measured)


def runs(profile, at_least=1, join=0):
    """``[(start, stop), ...]``: the runs of consecutive indices where ``profile >= at_least``,
    those at most ``join`` apart taken as one."""
    on = np.asarray(profile) >= at_least
    edges = np.flatnonzero(np.diff(np.r_[0, on.astype(int), 0]))
    out = []
    for a, b in zip(edges[::2].tolist(), edges[1::2].tolist()):
        if out and a - out[-1][1] <= join:
            a = out.pop()[0]
        out.append((a, b))
    return out


def legend_rows(img, left=0, top=0):
    """The text lines and the swatches of a legend whose column starts at (left, top): runs of
    rows holding near-black pixels (text; the leader lines are grey, 89) in the text column,
    each with its pixel count, and runs of rows holding saturated pixels in the swatch column,
    each with its mean colour."""
    box = img[top:top + 170, left + 30:left + 185].astype(int)
    dark = box.max(axis=-1) < 60
    lines = [(a, b, int(dark[a:b].sum())) for a, b in runs(dark.sum(axis=1), join=2)]  # a small
    # font's line may have an inkless pixel row (measured: the time's 't = 1.43 s' did); lines are 5 apart
    sw = img[top:top + 170, left + 8:left + 38].astype(int)
    sat = (sw.max(axis=-1) - sw.min(axis=-1)) > 150
    swatches = [(a, b, sw[a:b][sat[a:b]].mean(axis=0)) for a, b in runs(sat.sum(axis=1), 5)]
    return lines, swatches


def test_demo_legend_is_readable_at_every_moment(display, tmp_path):
    """Distance labels drawn at their segments overlapped while the arm moved and one hid
    behind a link (t = 5.61 s in an earlier look). Every grab of the whole demo once the legend
    shows: five separate text lines at the top left (the time, 12-15 px tall with ~50 px of
    ink, then four entries of 250-310 px each; measured), none merged with another and none
    missing ink, each entry beside a swatch; cube1's swatch red while the table says the arm
    touches cube1 (waypoints 1-2), all four green at the end (every distance above 0.3 m)."""
    w = Watched([*SIMBENCH, "demo", "--gui", "--hold", "1"], display, cwd=tmp_path, period=0.25,
                ready=lambda line: line.startswith("distance from"))
    assert w.returncode == 0, w.text("err")[-3000:]
    table = [line.split() for line in w.text().splitlines() if re.match(r"^\s+\d\s", line)]
    assert [float(row[2]) for row in table[1:3]] == pytest.approx([0.0, 0.0], abs=0.002)  # cube1 touched
    first = next(k for k, (_, img) in enumerate(w.grabs) if len(legend_rows(img)[0]) == 5)
    assert first <= 3, [legend_rows(img)[0] for _, img in w.grabs[:6]]  # within 0.75 s of the table's head
    shown = w.grabs[first:]
    while shown and shown[-1][1].std() < 10:  # the window closing at the end: black
        shown.pop()
    assert len(shown) >= 12, len(shown)  # the whole motion (3 s simulated at real-time pace) and the hold
    red, torn = [], []
    for k, (t, img) in enumerate(shown):
        lines, swatches = legend_rows(img)
        try:
            assert len(lines) == 5, (t, lines)
            heights = [b - a for a, b, _ in lines]
            assert all(6 <= h <= 17 for h in heights), (t, lines)    # one line each, none two merged
            assert lines[0][2] >= 25 and all(ink >= 180 for *_, ink in lines[1:]), (t, lines)  # none hidden
            assert len(swatches) == 4, (t, swatches)
            for (a, b, _), (c, d, _) in zip(lines[1:], swatches):
                assert a <= c and d <= b, (t, lines, swatches)   # each swatch beside its entry
        except AssertionError as exc:
            # PyBullet replaces a debug item by removing it and drawing the new one: one grab in
            # about 250 (5 CI runs) caught a swatch between the two. A single such grab, with
            # complete ones around it, is that; two in a row, or more than one, is a fault.
            torn.append((k, exc))
            continue
        red.append(swatches[1][2][0] > 200 and swatches[1][2][1] < 60)
    assert len(torn) <= 1 and all(0 < k < len(shown) - 1 for k, _ in torn), torn
    assert any(red), "cube1's swatch never red"
    final = legend_rows(shown[-1][1])[1]
    assert all(c[1] > 200 and c[0] < 60 for *_, c in final), final


SCENE = textwrap.dedent("""
    robot = "robot"
    [[body]]
    name = "robot"
    urdf = "pybullet_data:kuka_iiwa/model.urdf"
    fixed_base = true
    [[body]]
    name = "box"
    urdf = "pybullet_data:cube_small.urdf"
    position = [0.35, 0.0, 0.6]
    fixed_base = true
""")


def visible_area(img):
    """The 3D picture between PyBullet's panels, read from the screen: the bounding box of the
    columns and rows that are mostly sky-coloured (x0, y0, x1, y1) (a few pixels of that colour
    lie in the panels too)."""
    sky = np.all(np.abs(img.astype(int) - SKY) <= 2, axis=-1)
    xs, ys = np.flatnonzero(sky.mean(axis=0) > 0.3), np.flatnonzero(sky.mean(axis=1) > 0.3)
    return int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1


def test_view_frames_the_robot_between_the_panels(display, tmp_path):
    """``view --gui`` framed the robot for the whole window, then PyBullet's Explorer and
    Params panels covered its sides: this scene's iiwa (upright, a 5 cm box beside it) spanned
    0.37 of the visible height, and a legend at the window's top left would have been under the
    Explorer panel. Measured on the screen now: the visible 3D area is 524 x 624 px between the
    panels; the robot spans 0.73 of its height (the headless 800x600 picture of the iiwa: 0.81)
    with room on every side, and the distance legend (one entry, 229 px of ink, a swatch)
    is in the area's top-left corner. The window stays blank until it is set up."""
    scene = tmp_path / "scene.toml"
    scene.write_text(SCENE)
    # grabs from the first debug line (-v: the scene's files being read), before any window
    w = Watched([*SIMBENCH, "-v", "view", "--gui", str(scene), "--duration", "3"], display, cwd=tmp_path,
                period=0.25, ready=lambda line: True)
    assert w.returncode == 0, w.text("err")[-3000:]
    assert len(w.grabs) >= 4, len(w.grabs)
    # the last grab of the open window (the window closing at the end is black for a grab or
    # two; under CI's load for two: the one before the last had no sky pixel once)
    open_window = [img for _, img in w.grabs if np.all(np.abs(img.astype(int) - SKY) <= 2, axis=-1).mean() > 0.1]
    assert open_window, [float(img.std()) for _, img in w.grabs]
    # no grab shows the robot before the window is set up (it showed it at q = 0, without the
    # panels, for 2-12 s while the sliders came): the robot's orange only ever beside the panels
    drawn = 0
    for shot in open_window:
        c = shot.astype(int)
        if ((c[..., 0] > 180) & (c[..., 1] > 50) & (c[..., 1] < 170) & (c[..., 2] < 90)).sum() > 50:
            assert visible_area(shot)[0] >= 200, visible_area(shot)
            drawn += 1
    assert drawn >= 2, drawn
    framed = [img for img in open_window if visible_area(img)[0] >= 200]   # the panels show
    assert len(framed) >= 3, len(framed)

    def legend(img):   # one text line with a swatch, at the visible area's top left
        x0, y0, _, _ = visible_area(img)
        lines, swatches = legend_rows(img, x0, y0)
        return len(lines) == 1 and lines[0][2] >= 150 and len(swatches) == 1

    # the last grabs of the set-up window hold the legend (one of the last three: a grab as the
    # window closes may catch its items going, once in CI: a line of 130 px of ink, no swatch)
    with_legend = [img for img in framed[-3:] if legend(img)]
    assert with_legend, [legend_rows(img, *visible_area(img)[:2]) for img in framed[-3:]]
    img = with_legend[-1]
    x0, y0, x1, y1 = visible_area(img)
    assert x0 >= 200 and x1 <= test_gui.WIDTH - 200 and y1 - y0 > 500, (x0, y0, x1, y1)
    # the robot: its orange and blue links and its black base, outside the legend
    a = img[y0:y1, x0:x1].astype(int)
    r, g, b = a[..., 0], a[..., 1], a[..., 2]
    robot = ((r > 180) & (g > 50) & (g < 170) & (b < 90)) | ((b > 180) & (b - r > 60) & (g > 100)) | (a.max(-1) < 70)
    robot[:60, :220] = False
    rows, cols = np.flatnonzero(robot.sum(axis=1) >= 3), np.flatnonzero(robot.sum(axis=0) >= 3)
    fill = (rows[-1] - rows[0] + 1) / (y1 - y0)
    assert fill >= 0.6, (fill, rows[0], rows[-1], y1 - y0)
    assert rows[0] > 2 and rows[-1] < y1 - y0 - 3 and cols[0] > 2 and cols[-1] < x1 - x0 - 3, (rows, cols)


PAUSED = textwrap.dedent("""
    import sys, time
    import simbench
    from simbench.bullet.collision import NamedCollisionObject as O
    with simbench.Simulation("simbench:kuka_cubes.toml", gui=True) as sim:
        det = sim.detector([(O("robot", "lbr_iiwa_link_7"), O("cube1")),
                            (O("robot", "lbr_iiwa_link_4"), O("cube2"))])
        det.closest_points(sim.robot.q)     # set up before the timed part
        sim.robot.set_joint_targets({"lbr_iiwa_joint_2": 1.0})
        sim.step(456)                       # t = 1.90 s
        time.sleep(0.5)
        sim.step()                          # its time pushed: the texts were due
        t0 = time.perf_counter()
        for _ in range(23):                 # t = 2.00 s, steps well within one text period
            sim.step()
        sim.draw_closest_points(det.closest_points(sim.robot.q))
        print(f"paused at t = {sim.t:.2f} s after {time.perf_counter() - t0:.3f} s", flush=True)
        time.sleep(2.5)                     # the script computes: no step
        sim.window.tick(sim.t, force=True)  # the reference: the window told to draw now
        print("told", flush=True)
        time.sleep(1.5)
""")


def test_window_catches_up_when_the_script_stops_stepping(display, tmp_path):
    """A script that steps, draws closest points, then pauses (computes, sleeps) without
    another step: the window showed an earlier time ('t = 1.80 s' at sim.t = 2.0) and never drew
    the segments (texts are pushed at most 3 times a second, at steps). Within a second of the
    pause the screen must hold the legend's three lines (the time and the two drawn pairs, each
    beside a swatch) and the time row must be pixel for pixel what the window draws when told
    to draw at that moment (the reference, grabbed after ``tick(force=True)``)."""
    # the premise: no text was due before the pause, so the 23 steps took less than a text
    # period (1/3 s; they take 0.1-0.25 s, 0.34 s once on a loaded machine): run again when not
    for attempt in range(3):
        w = Watched([sys.executable, "-c", PAUSED], display, cwd=tmp_path, period=0.25,
                    ready=lambda line: line.startswith("paused"))
        assert w.returncode == 0, w.text("err")[-3000:]
        assert "paused at t = 2.00 s" in w.text()
        if float(w.text().split(" after ")[1].split()[0]) < 0.3:
            break
    else:
        raise AssertionError(f"the 23 steps took a text period or more in 3 runs: {w.text()}")
    paused, told = w.time_of("^paused"), w.time_of("^told")
    during = [img for t, img in w.grabs if paused + 1.0 < t < told - 0.1]
    after = [img for t, img in w.grabs if told + 0.5 < t]
    assert len(during) >= 3 and after, (len(during), len(after))
    while after and after[-1].std() < 10:  # the window closing at the end: black
        after.pop()
    reference = after[-1]
    time_row = legend_rows(reference)[0][0]
    assert 6 <= time_row[1] - time_row[0] <= 17 and time_row[2] >= 25, time_row
    rows = slice(time_row[0], time_row[1])
    for img in during:
        lines, swatches = legend_rows(img)
        assert len(lines) == 3 and len(swatches) == 2, (lines, swatches)
        assert np.array_equal(img[:170][rows, 30:185], reference[:170][rows, 30:185])
    compared = len(during)
    assert compared >= 3
