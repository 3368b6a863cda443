"""Make the README's two window pictures from the real PyBullet window: ``simbench demo --gui``
and ``simbench view`` run under a private Xvfb server and the X screen is grabbed (Pillow), as
the GUI tests do. Writes ``docs/images/demo_window.png`` and ``docs/images/view_window.png``
(palette PNGs, each well under 150 KB).

Run it: ``python scripts/readme_images.py`` (needs Xvfb and Pillow).
"""
import os
import subprocess
import sys
import time
from pathlib import Path

from PIL import Image, ImageGrab

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "images"
SIMBENCH = [sys.executable, "-m", "simbench.cli"]


def start_xvfb(number: int = 871) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen(["Xvfb", f":{number}", "-screen", "0", "1024x768x24", "-nolisten", "tcp"],
                            stderr=subprocess.DEVNULL)
    while not Path(f"/tmp/.X11-unix/X{number}").exists():
        if proc.poll() is not None:
            raise SystemExit(f"Xvfb :{number} did not start")
        time.sleep(0.05)
    return proc, f":{number}"


def grab_when(cmd: list[str], display: str, line_prefix: str, delay: float) -> Image.Image:
    """Run ``cmd``; ``delay`` s after a stdout line starting with ``line_prefix``, grab the screen."""
    env = dict(os.environ, DISPLAY=display, OPENBLAS_NUM_THREADS="1")
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    shot = None
    for line in proc.stdout:
        if shot is None and line.lstrip().startswith(line_prefix):
            time.sleep(delay)
            shot = ImageGrab.grab(xdisplay=display)
    proc.wait()
    if shot is None:
        raise SystemExit(f"{' '.join(cmd)}: never printed {line_prefix!r}")
    return shot


def save(image: Image.Image, name: str, size: tuple[int, int]) -> Path:
    path = OUT / name
    image.convert("RGB").resize(size, Image.Resampling.LANCZOS).quantize(256, dither=Image.Dither.NONE).save(
        path, optimize=True)
    return path


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    xvfb, display = start_xvfb()
    try:
        demo = grab_when([*SIMBENCH, "demo", "--gui", "--hold", "2"], display, "1 ", 0.6)
        view = grab_when([*SIMBENCH, "view", "simbench:kuka_cubes.toml", "--duration", "4", "--q",
                          "lbr_iiwa_joint_1=0.6", "lbr_iiwa_joint_2=1.0", "lbr_iiwa_joint_4=-1.1",
                          "lbr_iiwa_joint_6=0.7"], display, "move the sliders", 1.5)
    finally:
        xvfb.terminate()
    for path in (save(demo, "demo_window.png", (800, 600)), save(view, "view_window.png", (800, 600))):
        print(f"wrote {path} ({path.stat().st_size / 1024:.0f} KB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
