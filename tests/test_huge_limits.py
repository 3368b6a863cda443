"""Joint limits of +-1e308 (a file that means "no limit"): sampling them overflowed (check:
"internal error: OverflowError: Range exceeds valid bounds"; sweep dynamics: a non-finite q).
Limits beyond 1e6 are sampled as no limit, [-pi, pi] for a revolute joint; `check` then compares
the dynamics with PyBullet and Pinocchio as for any file (its PASS is theirs)."""
import subprocess
import sys

import numpy as np

from simbench.model import RobotModel

URDF = """<robot name="huge">
  <link name="base"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="arm"><inertial><origin xyz="0.2 0 0"/><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="j" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 1 0"/>
    <limit lower="-1e308" upper="1e308" effort="10" velocity="1"/></joint>
</robot>
"""


def test_huge_limits_are_sampled_as_none_and_every_command_runs(tmp_path):
    (tmp_path / "huge.urdf").write_text(URDF)
    q = RobotModel.from_urdf(str(tmp_path / "huge.urdf")).random_configuration(0, 1000)
    assert np.isfinite(q).all() and q.min() >= -np.pi and q.max() <= np.pi and q.max() - q.min() > 6.0
    outputs = []
    for args in (["check", "huge.urdf", "--samples", "5"], ["sweep", "dynamics", "huge.urdf", "--samples", "20",
                                                              "--out", "hs", "-q"]):
        proc = subprocess.run([sys.executable, "-m", "simbench", *args], capture_output=True, text=True,
                              cwd=tmp_path, timeout=300)
        assert proc.returncode == 0 and "Error" not in proc.stderr and "Warning" not in proc.stderr, proc.stderr
        outputs.append(proc.stdout)
    assert "PASS      huge.urdf" in outputs[0] and "sweep dynamics: 20 states" in outputs[1]
