"""A DISPLAY that is set but unreachable is found before PyBullet touches it (PyBullet would
print "cannot connect to X server" and end the process), reported in one line, and the run
goes on headless: the same in ``demo``, ``run`` and ``view``.

Oracles: the commands' exit status and stderr, and fake X servers on local TCP ports speaking
the first bytes of the X11 connection setup (X Window System Protocol, "Connection Setup").
Also, on a real window (Xvfb, tests/test_gui.py's fixture): a hidden window draws no body before
its camera is set (the distance legend on the screen: tests/test_gui_labels.py).
"""
import os
import socket
import struct
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import test_gui  # its Xvfb fixture and helpers
from PIL import Image


from simbench.bullet.display import choose_gui, probe_display

ROOT = Path(__file__).resolve().parents[1]
STALE = "localhost:10.0"   # a stale `ssh -X` display, as left in a tmux session


def stale_env():
    env = dict(os.environ, DISPLAY=STALE, OPENBLAS_NUM_THREADS="1",
               PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return env


def one_display_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if "DISPLAY" in line]
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr and "cannot connect to X server" not in stderr, stderr
    return lines[0]


def test_stale_display_falls_back_in_demo_run_and_view(tmp_path):
    assert not probe_display(STALE).ok  # nothing listens there on this machine
    script = tmp_path / "s.py"
    script.write_text(textwrap.dedent("""
        SCENE = "pybullet_data:kuka_iiwa/model.urdf"
        def main(sim):
            sim.step(3)
            return {"gui": sim.gui}
        """))
    commands = {
        "demo": ["demo", "--steps", "1", "--out", str(tmp_path / "out")],
        "demo --gui": ["demo", "--gui", "--steps", "1", "--out", str(tmp_path / "out")],
        "run --gui": ["run", str(script), "--gui", "--quiet"],
        "view --gui": ["view", "pybullet_data:kuka_iiwa/model.urdf", "--gui", "--out", str(tmp_path / "v.png")],
    }
    for name, args in commands.items():
        proc = subprocess.run([sys.executable, "-m", "simbench.cli", *args], env=stale_env(), cwd=tmp_path,
                              capture_output=True, text=True, timeout=180)
        assert proc.returncode == 0, (name, proc.stderr[-2000:])
        line = one_display_line(proc.stderr)
        command = name.split()[0]
        assert line == (f"simbench {command}: warning: DISPLAY={STALE} cannot be reached (Connection refused); "
                        "running headless (DIRECT) instead of the GUI"), (name, line)
    assert (tmp_path / "out" / "demo.png").stat().st_size > 10_000
    assert (tmp_path / "v.png").stat().st_size > 10_000
    assert len(commands) == 4


# ---------------------------------------------------------------------- fake X servers
class FakeX:
    """A TCP server on 127.0.0.1:6000+n answering the X setup request with ``reply`` (None:
    accept and say nothing)."""

    def __init__(self, reply):
        self.reply = reply
        self.sock = None
        for n in range(350, 450):
            s = socket.socket()
            try:
                s.bind(("127.0.0.1", 6000 + n))
            except OSError:
                s.close()
                continue
            self.sock, self.n = s, n
            break
        assert self.sock is not None
        self.sock.listen(4)
        self.requests = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        conn, _ = self.sock.accept()
        self.requests.append(conn.recv(64))
        if self.reply is not None:
            conn.sendall(self.reply)
        time.sleep(3)
        conn.close()

    @property
    def display(self):
        return f"127.0.0.1:{self.n}"


def test_probe_against_fake_x_servers():
    cases = 0
    ok = FakeX(b"\x01\x00" + struct.pack("<HHH", 11, 0, 0))
    assert probe_display(ok.display).ok
    assert ok.requests[0][:6] == b"l\x00\x0b\x00\x00\x00"  # little-endian, protocol 11.0
    cases += 1
    reason = b"No protocol specified"
    padded = reason + b"\0" * (-len(reason) % 4)
    refused = FakeX(bytes([0, len(reason)]) + struct.pack("<HHH", 11, 0, len(padded) // 4) + padded)
    status = probe_display(refused.display)
    assert not status.ok and status.reason == (f"the X server at DISPLAY={refused.display} refused the "
                                               "connection: No protocol specified")
    cases += 1
    silent = FakeX(None)
    t0 = time.perf_counter()
    status = probe_display(silent.display, timeout=0.5)
    assert not status.ok and "sent no X setup answer within 0.5 s" in status.reason
    assert time.perf_counter() - t0 < 2.0
    cases += 1
    http = FakeX(b"HTTP/1.1 400 Bad Request\r\n\r\n")
    status = probe_display(http.display)
    assert not status.ok and "is not an X server" in status.reason
    cases += 1
    for bad in ("garbage", "host:x", ":"):
        assert not probe_display(bad).ok and "malformed" in probe_display(bad).reason
        cases += 1
    assert cases == 7


def test_gui_choice_logs_one_line(monkeypatch, caplog):
    caplog.set_level("DEBUG", logger="simbench")
    monkeypatch.delenv("DISPLAY", raising=False)
    assert choose_gui(False) is False and not caplog.records          # asked for headless: no probe
    assert choose_gui(None) is False   # no display, none asked for: an information line
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
        ("INFO", "no display found (DISPLAY is not set); running headless (DIRECT)")]
    caplog.clear()
    monkeypatch.setenv("DISPLAY", STALE)
    assert choose_gui(None) is False and choose_gui(True) is False
    assert [r.levelname for r in caplog.records] == ["WARNING", "WARNING"]


def test_no_display_is_said_in_one_line(tmp_path):
    """DISPLAY unset and no --gui / --direct: demo and view say once, on stderr, that they run
    headless (as README's "Displays" promises); -q leaves the line out."""
    env = {k: v for k, v in stale_env().items() if k != "DISPLAY"}
    runs = {
        "demo": (["demo", "--steps", "1", "--out", str(tmp_path / "out")],
                 ["simbench demo: no display found (DISPLAY is not set); running headless (DIRECT)"]),
        "view": (["view", "pybullet_data:kuka_iiwa/model.urdf", "--out", str(tmp_path / "v.png")],
                 ["simbench view: no display found (DISPLAY is not set); running headless (DIRECT)"]),
        "-q demo": (["-q", "demo", "--steps", "1", "--out", str(tmp_path / "out")], []),
    }
    for name, (args, expected) in runs.items():
        proc = subprocess.run([sys.executable, "-m", "simbench", *args], env=env, cwd=tmp_path,
                              capture_output=True, text=True, timeout=180)
        assert proc.returncode == 0, (name, proc.stderr[-2000:])
        assert proc.stderr.splitlines() == expected, name
    assert (tmp_path / "v.png").exists() and (tmp_path / "out" / "demo.png").exists()
    assert len(runs) == 3


# ---------------------------------------------------------------------- the real window (Xvfb)
display = test_gui.display

HIDDEN = textwrap.dedent("""
    import sys, time
    from PIL import ImageGrab
    from simbench.bullet.servers import ServerPair
    from simbench.sim.camera import framing, scene_points
    from simbench.sim.window import Window

    t = time.perf_counter()
    pair = ServerPair("simbench:kuka_cubes.toml", gui=True, hidden=True)   # as a Simulation opens it
    print(f"loaded in {time.perf_counter() - t:.2f} s", flush=True)
    time.sleep(1.0)
    ImageGrab.grab(xdisplay=sys.argv[1]).save("hidden.png")
    c = pair.main.client
    Window(c).set_camera(framing(scene_points(c, pair.bodies.values()), yaw=225))
    time.sleep(1.5)
    ImageGrab.grab(xdisplay=sys.argv[1]).save("shown.png")
    pair.close()
""")


@pytest.mark.gui
def test_hidden_window_draws_no_body_until_its_camera_is_set(display, tmp_path):
    """A Simulation's window (ServerPair(hidden=True)) draws nothing while the bodies load, so
    PyBullet's default camera (a small robot growing as its meshes load) is never seen; the
    window's first set_camera shows them framed."""
    proc = test_gui.run_gui([sys.executable, "-c", HIDDEN, display], display, cwd=tmp_path, timeout=180)
    assert proc.returncode == 0, proc.stderr[-3000:]
    orange = []
    for name in ("hidden.png", "shown.png"):
        r, g, b = (np.asarray(Image.open(tmp_path / name).convert("RGB"))[..., k].astype(int) for k in range(3))
        orange.append(int(((r > 200) & (g > 60) & (g < 160) & (b < 80)).sum()))   # the iiwa's orange links
    assert orange[0] == 0 and orange[1] > 300, orange
