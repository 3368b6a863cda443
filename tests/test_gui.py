"""A real PyBullet GUI window under Xvfb: connect, load the scene, step, grab an image."""
import subprocess
import sys
import textwrap

import pytest

from conftest import require_xvfb

SCRIPT = textwrap.dedent("""
    import numpy as np, pybullet as p, simbench
    from simbench.bullet.servers import render
    from simbench.imaging import write_png
    with simbench.connect(gui=None) as pair:
        assert pair.gui, "expected a GUI server under Xvfb"
        for _ in range(10):
            p.stepSimulation(physicsClientId=pair.main.client)
        try:
            simbench.connect(gui=True)
        except simbench.SimbenchError as exc:
            print("second GUI refused:", exc)
        img = render(pair.main.client, (320, 240), renderer=p.ER_BULLET_HARDWARE_OPENGL)
        write_png(sys.argv[1], img)
        print("std", float(img.std()), "distinct", len(np.unique(img.reshape(-1, 3), axis=0)))
""")


@pytest.mark.gui
def test_gui_window_under_xvfb(tmp_path):
    xvfb = require_xvfb()
    out = tmp_path / "gui.png"
    proc = subprocess.run([xvfb, "-a", "-s", "-screen 0 1024x768x24", sys.executable, "-c",
                           "import sys; " + SCRIPT, str(out)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "second GUI refused: PyBullet allows one GUI server per process" in proc.stdout
    std = float(proc.stdout.split("std ")[1].split()[0])
    distinct = int(proc.stdout.split("distinct ")[1].split()[0])
    assert std > 5 and distinct > 20, proc.stdout  # not a blank frame
    assert out.stat().st_size > 1000
