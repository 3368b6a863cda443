"""A mesh written in millimetres (a CAD export) makes a 0.4 m link 400 m long: loading the scene
says so in one line, with the length in metres; the extent is checked against the mesh's own
vertices (a box of 100 x 50 x 400 units), and meshes in metres, jointless fixed bodies and the
bundled scene say nothing."""
from __future__ import annotations

import logging
import subprocess
import sys

import pybullet as p
import pytest

from simbench.bullet.scene import load_scene

#: the arm's link: a box of 100 x 50 x 400 mm, its vertices written in millimetres
SIZE = (100.0, 50.0, 400.0)


def _box_obj(size: tuple[float, float, float]) -> str:
    hx, hy, hz = (s / 2 for s in size)
    corners = [(x, y, z) for x in (-hx, hx) for y in (-hy, hy) for z in (-hz, hz)]
    faces = [(1, 2, 4, 3), (5, 7, 8, 6), (1, 5, 6, 2), (3, 4, 8, 7), (1, 3, 7, 5), (2, 6, 8, 4)]
    return "".join(f"v {x} {y} {z}\n" for x, y, z in corners) + "".join(
        f"f {a} {b} {c}\nf {a} {c} {d}\n" for a, b, c, d in faces)


def _urdf(scale: str, joint: str) -> str:
    inertial = ('<inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" '
                'iyz="0"/></inertial>')
    return f"""<robot name="cad">
  <link name="base">{inertial}<collision><geometry><box size="0.2 0.2 0.1"/></geometry></collision></link>
  <link name="arm">{inertial}<collision><geometry><mesh filename="arm.obj" scale="{scale}"/></geometry></collision></link>
  <joint name="shoulder" type="{joint}"><parent link="base"/><child link="arm"/><origin xyz="0 0 0.3"/>
    <axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="10" velocity="1"/></joint>
</robot>
"""


def _scene(tmp_path, scale: str = "1 1 1", joint: str = "revolute") -> str:
    (tmp_path / "arm.obj").write_text(_box_obj(SIZE))
    (tmp_path / "cad.urdf").write_text(_urdf(scale, joint))
    (tmp_path / "scene.toml").write_text('robot = "cad"\n[[body]]\nname = "cad"\nurdf = "cad.urdf"\n'
                                         'fixed_base = true\n')
    return str(tmp_path / "scene.toml")


def _said(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if "millimetres" in r.getMessage()]


def _load(scene: str, caplog) -> list[str]:
    c = p.connect(p.DIRECT)
    try:
        with caplog.at_level(logging.WARNING, logger="simbench"):
            load_scene(scene).load(c)
    finally:
        p.disconnect(physicsClientId=c)
    return _said(caplog)


def test_a_mesh_in_millimetres_is_said_with_its_length(tmp_path, caplog):
    lines = _load(_scene(tmp_path), caplog)
    assert len(lines) == 1, lines
    head, length = lines[0].split(" spans ")[0], float(lines[0].split(" spans ")[1].split(" m")[0])
    assert head == "body 'cad': link 'arm'"
    assert length == pytest.approx(max(SIZE), rel=1e-3)   # the box's longest side, in the file's units
    assert "(collision mesh 'arm.obj')" in lines[0]
    assert lines[0].endswith(f'scale="0.001 0.001 0.001" on its <mesh> makes it {max(SIZE) / 1000:.4g} m'), lines[0]


@pytest.mark.parametrize("scale, joint", [("0.001 0.001 0.001", "revolute"), ("1 1 1", "fixed")])
def test_metres_and_fixed_jointless_bodies_say_nothing(tmp_path, caplog, scale, joint):
    """Scaled to metres: a 0.4 m link. A fixed body without movable joints (terrain, a building)
    may be large."""
    assert _load(_scene(tmp_path, scale, joint), caplog) == []


def test_the_bundled_scenes_say_nothing(caplog):
    for name in ("simbench:kuka_cubes.toml", "simbench:wall_iiwa.toml", "simbench:kuka_self.toml"):
        assert _load(name, caplog) == [], name


def test_the_command_line_says_it_once(tmp_path):
    """As a user sees it: `simbench view SCENE --direct` loads the scene on two servers, and the
    line is on stderr once."""
    scene = _scene(tmp_path)
    proc = subprocess.run([sys.executable, "-m", "simbench", "view", scene, "--direct", "--out", "v.png"],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if "millimetres" in ln]
    assert len(lines) == 1 and lines[0].startswith("simbench view: warning: body 'cad': link 'arm' spans 400"), proc.stderr
    assert (tmp_path / "v.png").exists()


def test_info_says_it_and_nothing_else(tmp_path):
    """`simbench info` is what a user runs first on a new file: the line is on stderr, named by
    the file as given; a file in metres (PyBullet's humanoid, whose loading prints PyBullet's own
    warnings) leaves stderr empty."""
    _scene(tmp_path)
    proc = subprocess.run([sys.executable, "-m", "simbench", "info", "cad.urdf"],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0 and "issues: none" in proc.stdout, proc.stderr
    assert proc.stderr.strip() == ("simbench info: warning: cad.urdf: link 'arm' spans 400 m (collision mesh "
                                   "'arm.obj'); a mesh in millimetres? scale=\"0.001 0.001 0.001\" on its <mesh> "
                                   "makes it 0.4 m"), proc.stderr
    proc = subprocess.run([sys.executable, "-m", "simbench", "info", "pybullet_data:humanoid/humanoid.urdf"],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
