"""Output paths (``--json``, ``--markdown``, ``--plot``, ``--record``, ``--screenshot``, ``--out``):
checked before the work without creating anything, their folders made only when the output is
written. Every command runs as the user runs it (``python -m simbench.cli`` in a fresh folder);
the oracle is the disk afterwards, the exit status and the exact stderr line."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from simbench.errors import SimbenchError
from simbench.outputs import writable_dir, writable_file

ROOT = Path(__file__).resolve().parents[1]

OK_URDF = """<?xml version="1.0"?>
<robot name="one">
  <link name="base"><inertial><mass value="1"/>
    <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="arm"><inertial><origin xyz="0 0 0.25"/><mass value="1"/>
    <inertia ixx="0.02" iyy="0.02" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><origin xyz="0 0 0.25"/><geometry><box size="0.05 0.05 0.5"/></geometry></collision></link>
  <joint name="j" type="revolute"><parent link="base"/><child link="arm"/><origin xyz="0 0 0.1"/>
    <axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="10" velocity="1"/></joint>
</robot>
"""
SCRIPT = "def main(sim):\n    sim.step(10)\n"
PNG, GIF = b"\x89PNG\r\n\x1a\n", b"GIF89a"


def _env(**extra: str) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               OPENBLAS_NUM_THREADS="1", **extra)
    env.pop("DISPLAY", None)
    return env


def _folder(tmp_path: Path) -> Path:
    """A fresh working folder holding ok.urdf (one revolute joint, limits +-1) and s.py."""
    (tmp_path / "ok.urdf").write_text(OK_URDF)
    (tmp_path / "s.py").write_text(SCRIPT)
    return tmp_path


def _simbench(cwd: Path, *args: str, timeout: float = 300, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "simbench.cli", *args], cwd=cwd, env=_env(**env),
                          capture_output=True, text=True, timeout=timeout)


def _listing(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


# ---------------------------------------------------------------------- usage errors make no folder
USAGE_ERRORS = [
    (["check", "nope.urdf", "--plot", "newpl"], ["newpl"],
     "simbench check: error: URDF file not found: 'nope.urdf'; did you mean 'ok.urdf'?"),
    (["check", "ok.urdf", "--dynamics", "nosuch:f", "--plot", "p3", "--json", "c/r.json"], ["p3", "c"],
     "simbench check: error: --dynamics 'nosuch:f': no module named 'nosuch' in the current folder ({cwd}) or on "
     "sys.path; expected module:function, e.g. mypkg.dyn:tau"),
    (["run", "nope.py", "--record", "x/y.gif"], ["x"], "simbench run: error: script not found: 'nope.py'"),
    (["view", "--direct", "ok.urdf", "--q", "j=5", "--out", "nv/v.png"], ["nv"],
     "simbench view: error: --q j=5: outside the joint's limits [-1, 1] rad; closest valid value 1"),
]


def test_usage_errors_leave_no_output_folder(tmp_path):
    """Each command stops with a usage error after its output paths were checked: exit 2, one
    line, and none of the output folders exists afterwards (each was created before)."""
    cwd = _folder(tmp_path)
    left = {}
    for args, folders, line in USAGE_ERRORS:
        proc = _simbench(cwd, *args)
        assert proc.returncode == 2, (args, proc.stderr)
        assert proc.stderr.splitlines() == [line.format(cwd=cwd)], args
        assert proc.stdout == "", args
        made = [f for f in folders if (cwd / f).exists()]
        if made:
            left[args[0] + " " + " ".join(args[1:])] = made
        for f in made:
            (cwd / f).rmdir()   # (empty) so that the next case starts from the same folder
        assert _listing(cwd) == ["ok.urdf", "s.py"], args   # nothing else either
    assert left == {}
    assert _listing(cwd) == ["ok.urdf", "s.py"] and len(USAGE_ERRORS) == 4


def test_good_runs_make_their_nested_output_folders(tmp_path):
    """A good run of each command writes its output under folders that did not exist: the
    files are there, of their format (10 files from 6 commands)."""
    cwd = _folder(tmp_path)
    (cwd / "scene.toml").write_text('[[body]]\nname = "robot"\nurdf = "ok.urdf"\n')
    runs = [
        (["check", "ok.urdf", "--json", "a/b/r.json", "--markdown", "m/n/r.md", "--plot", "pl/q"],
         ["a/b/r.json", "m/n/r.md", "pl/q/ok.urdf.png"]),
        (["run", "s.py", "--direct", "--quiet", "--record", "x/y.gif", "--screenshot", "s/t/shot.png"],
         ["x/y.gif", "s/t/shot.png"]),
        (["view", "--direct", "ok.urdf", "--out", "nv/w/v.png"], ["nv/w/v.png"]),
        (["demo", "--direct", "--out", "d/e"], ["d/e/demo.png"]),
        (["sweep", "dynamics", "ok.urdf", "--samples", "5", "--seed", "0", "--workers", "1", "--out", "w/v"],
         ["w/v/_manifest.json"]),
        (["bench", "--quick", "--suite", "dynamics", "--robot", "kuka_iiwa", "--no-c", "--n", "10", "--rounds", "1",
          "--json", "bj/k/b.json", "--markdown", "bm/n/b.md"], ["bj/k/b.json", "bm/n/b.md"]),
    ]
    written = 0
    for args, files in runs:
        proc = _simbench(cwd, *args)
        assert proc.returncode == 0, (args, proc.stderr)
        for name in files:
            data = (cwd / name).read_bytes()
            if name.endswith(".png"):
                assert data.startswith(PNG), name
            elif name.endswith(".gif"):
                assert data.startswith(GIF) and data.endswith(b"\x3b"), name
            elif name.endswith(".json"):
                assert isinstance(json.loads(data), dict), name
            else:
                assert data.strip(), name
            written += 1
    assert written == 10 and len(runs) == 6


def test_the_checks_create_nothing(tmp_path):
    """writable_file / writable_dir judge a missing folder by its nearest existing ancestor and
    leave the disk as it was; the folders are made by parent_made / folder_made."""
    from simbench.outputs import folder_made, parent_made

    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    assert writable_file(tmp_path / "a" / "b" / "r.json", "--json file") == tmp_path / "a" / "b" / "r.json"
    assert writable_dir(tmp_path / "p" / "q", "--plot folder") == tmp_path / "p" / "q"
    assert writable_file(a_file) == a_file and a_file.read_text() == "x"
    assert _listing(tmp_path) == ["a_file"]
    refused = {
        (str(a_file / "x" / "r.json"), "--json file"):
            f"folder of the --json file '{a_file / 'x'}' cannot be created (Not a directory); expected a folder "
            "you can write to",
        (str(a_file / "x"), "--plot folder"):
            f"--plot folder '{a_file / 'x'}' cannot be created (Not a directory); expected a folder you can write to",
        (str(a_file), "--plot folder"): f"--plot folder '{a_file}' is a file; expected a folder",
        ("/proc/x.json", "--json file"):
            "folder of the --json file '/proc' is not writable (it takes no new files); expected a folder you can "
            "write to",
    }
    for (path, what), message in refused.items():
        check = writable_file if path.endswith(".json") else writable_dir
        with pytest.raises(SimbenchError) as info:
            check(path, what)
        assert str(info.value) == message
    assert _listing(tmp_path) == ["a_file"] and len(refused) == 4
    assert parent_made(tmp_path / "a" / "b" / "r.json").parent.is_dir()
    assert folder_made(tmp_path / "p" / "q").is_dir()
    assert _listing(tmp_path) == ["a", "a/b", "a_file", "p", "p/q"]


# ---------------------------------------------------------------------- pictures are PNG, named so
def test_picture_names_other_than_png_are_refused(tmp_path):
    """``--screenshot shot.jpg`` and ``--out v.txt`` wrote PNG data under those names: now one
    usage line naming the value, .png and the name to give, before the script runs; a .PNG in
    capitals is a PNG name and is written."""
    cwd = _folder(tmp_path)
    (cwd / "s.py").write_text(f"open({str(cwd / 'ran')!r}, 'w').close()\n{SCRIPT}")
    refused = [
        (["run", "s.py", "--direct", "--screenshot", "shot.jpg"],
         "simbench run: error: --screenshot 'shot.jpg': expected a .png file name, as pictures are written as PNG "
         "only (closest valid: --screenshot 'shot.png')"),
        (["view", "--direct", "ok.urdf", "--out", "v.txt"],
         "simbench view: error: --out 'v.txt': expected a .png file name, as pictures are written as PNG only "
         "(closest valid: --out 'v.png')"),
        (["view", "--direct", "ok.urdf", "--out", "sub/v"],
         "simbench view: error: --out 'sub/v': expected a .png file name, as pictures are written as PNG only "
         "(closest valid: --out 'sub/v.png')"),
    ]
    for args, line in refused:
        proc = _simbench(cwd, *args)
        assert (proc.returncode, proc.stderr.splitlines(), proc.stdout) == (2, [line], ""), args
        assert _listing(cwd) == ["ok.urdf", "s.py"], args   # nothing written, the script not run
    proc = _simbench(cwd, "view", "--direct", "ok.urdf", "--out", "V.PNG")
    assert proc.returncode == 0 and (cwd / "V.PNG").read_bytes().startswith(PNG), proc.stderr
    assert len(refused) == 3


# ---------------------------------------------------------------------- MP4 without the 'video' extra
WRAPPER = """import sys
for name in sys.argv[1].split(","):
    sys.modules[name] = None   # import name fails: as if not installed
from simbench.cli import main
sys.exit(main(sys.argv[2:]))
"""


def test_mp4_without_ffmpeg_names_the_video_extra(tmp_path):
    """No ffmpeg on PATH and imageio_ffmpeg not importable: one line naming the 'video' extra
    (and the .gif way), exit 2 before the script runs. The writer needs imageio-ffmpeg's ffmpeg
    only, not imageio: with imageio not importable the MP4 is written (an ISO-BMFF 'ftyp' box)."""
    cwd = _folder(tmp_path)
    (cwd / "s.py").write_text(f"open({str(cwd / 'ran')!r}, 'w').close()\n{SCRIPT}")
    (cwd / "wrap.py").write_text(WRAPPER)
    (cwd / "bin").mkdir()   # PATH: no ffmpeg in it
    cases = {"imageio_ffmpeg": 2, "imageio": 0}
    for blocked, code in cases.items():
        proc = subprocess.run([sys.executable, "wrap.py", blocked, "run", "s.py", "--direct", "--quiet",
                               "--record", "x.mp4"], cwd=cwd, env=_env(PATH=str(cwd / "bin")),
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == code, (blocked, proc.stderr)
        if code:
            assert proc.stderr.splitlines() == [
                "simbench run: error: writing 'x.mp4' needs ffmpeg, which was not found; install the 'video' "
                "extra: pip install 'simbench[video]' (its imageio-ffmpeg brings ffmpeg), or put ffmpeg on PATH "
                "(apt-get install ffmpeg), or record a .gif instead"]
            assert _listing(cwd) == ["bin", "ok.urdf", "s.py", "wrap.py"]   # no x.mp4, the script not run
        else:
            assert (cwd / "x.mp4").read_bytes()[4:8] == b"ftyp" and (cwd / "ran").exists()
    assert len(cases) == 2
