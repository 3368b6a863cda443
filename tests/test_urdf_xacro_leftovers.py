"""Numbers holding xacro left unexpanded (``$(optenv X 0.19 0 0.149)``, ``$(arg x)``, ``${pi/2}``),
as in ``pybullet_data:husky/husky.urdf``: PyBullet loads such a file, so simbench reads each number
as PyBullet does and lists an ``unexpanded_xacro`` issue (``simbench info`` exits 0).

What PyBullet 3.2 reads (UrdfParser.cpp; measured here): a vector (``xyz``, ``rpy``) is split at
spaces and each piece read by C's ``atof`` (``"$(optenv"`` is 0, ``"0.149)"`` 0.149), the first 3
kept: ``$(optenv X 0.19 0 0.149)`` is 0 0 0.19. With fewer than 3 pieces (``$(arg x)``) an
``<origin>`` keeps 0 0 0 and an ``<axis>`` makes PyBullet refuse the file. A scalar (mass,
inertia, limits, damping) is ``atof`` of the text: ``${m}`` is 0, ``3${x}`` is 3.

Oracle: PyBullet itself, on a DIRECT client: getLinkState (link frames), getJointInfo (axis,
limits, damping, friction) and getDynamicsInfo (mass, COM, principal moments) of each file,
against simbench's model of the same file.
"""
import numpy as np
import pybullet as p
import pytest

from simbench import RobotModel
from simbench.cli import main
from simbench.dynamics.kinematics import forward_kinematics
from simbench.errors import URDFError

HUSKY = "pybullet_data:husky/husky.urdf"
FIX = "expand the file with xacro"
T = """<robot name="r">
 <link name="base"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>
 <joint name="j" type="revolute"><parent link="base"/><child link="arm"/>
  <origin xyz="{xyz}" rpy="{rpy}"/><axis xyz="{axis}"/>
  <limit lower="{lo}" upper="{hi}" effort="{eff}" velocity="{vel}"/><dynamics damping="{damp}" friction="{fric}"/></joint>
 <link name="arm"><inertial><origin xyz="{cxyz}" rpy="0 0 0"/><mass value="{mass}"/>
  <inertia ixx="{ixx}" iyy="2" izz="2" ixy="{ixy}" ixz="0" iyz="0"/></inertial></link>
</robot>"""
PLAIN = dict(xyz="0.1 0.2 0.3", rpy="0.1 0.2 0.3", axis="0 0 1", lo="-1", hi="1", eff="10", vel="2",
             damp="0.5", fric="0.1", cxyz="0.01 0.02 0.03", mass="2", ixx="1", ixy="0.1")
#: (key in T, element, attribute, text, what PyBullet reads)
VARIANTS = [
    ("xyz", "joint 'j'", "xyz", "$(optenv X 0.19 0 0.149)", [0, 0, 0.19]),
    ("xyz", "joint 'j'", "xyz", "$(arg x)", [0, 0, 0]),            # 2 pieces: kept at 0 0 0
    ("xyz", "joint 'j'", "xyz", "${x} 0 0.1", [0, 0, 0.1]),
    ("xyz", "joint 'j'", "xyz", "0.1 ${y} 0.2", [0.1, 0, 0.2]),
    ("xyz", "joint 'j'", "xyz", "$(arg x) 0.5 0.25", [0, 0, 0.5]),
    ("xyz", "joint 'j'", "xyz", "0.5${x} 1 2", [0.5, 1, 2]),
    ("rpy", "joint 'j'", "rpy", "$(optenv R 0 -1.5708 3.1416)", [0, 0, 0]),
    ("rpy", "joint 'j'", "rpy", "0 0 ${pi/2}", [0, 0, 0]),
    ("rpy", "joint 'j'", "rpy", "$(arg r)", [0, 0, 0]),
    ("rpy", "joint 'j'", "rpy", "0.3 $(arg p) 0.2 0.1", [0.3, 0, 0]),  # "p)" is the 3rd
    ("axis", "joint 'j'", "xyz", "${ax} 0 1", [0, 0, 1]),
    ("axis", "joint 'j'", "xyz", "1 0 ${z}", [1, 0, 0]),
    ("lo", "joint 'j'", "lower", "$(arg lo)", [0]),
    ("lo", "joint 'j'", "lower", "-${pi}", [0]),
    ("hi", "joint 'j'", "upper", "3${x}", [3]),
    ("eff", "joint 'j'", "effort", "${e}", [0]),
    ("vel", "joint 'j'", "velocity", "$(arg v)", [0]),
    ("damp", "joint 'j'", "damping", "${d}", [0]),
    ("fric", "joint 'j'", "friction", "$(arg f)", [0]),
    ("cxyz", "link 'arm'", "xyz", "${c} 0 0.1", [0, 0, 0.1]),
    ("cxyz", "link 'arm'", "xyz", "$(arg c)", [0, 0, 0]),
    ("mass", "link 'arm'", "value", "${m}", [0]),
    ("ixx", "link 'arm'", "ixx", "${i}", [0]),
    ("ixy", "link 'arm'", "ixy", "$(arg i)", [0]),
]


def pose(pos, orn):
    T = np.eye(4)
    T[:3, :3] = np.reshape(p.getMatrixFromQuaternion(orn), (3, 3))
    T[:3, 3] = pos
    return T


def pybullet_frames(body, client):
    """World pose of every link frame (base first), as PyBullet has it now."""
    com = pose(*p.getBasePositionAndOrientation(body, physicsClientId=client))
    inertial = pose(*p.getDynamicsInfo(body, -1, physicsClientId=client)[3:5])
    frames = [com @ np.linalg.inv(inertial)]
    for j in range(p.getNumJoints(body, physicsClientId=client)):
        st = p.getLinkState(body, j, computeForwardKinematics=True, physicsClientId=client)
        frames.append(pose(st[4], st[5]))
    return np.array(frames)


def compare_to_pybullet(path, client):
    """Assert simbench's model of ``path`` is PyBullet's (link frames at two configurations, so
    the joint's origin and axis; its limits, damping and friction; the arm's mass, COM and
    principal moments); return the model and how many numbers were compared. (getJointInfo's
    jointAxis is in the child's principal inertia frame, so the axis is compared by its motion.)"""
    model = RobotModel.from_urdf(path)
    body = p.loadURDF(str(path), useFixedBase=True, flags=p.URDF_USE_INERTIA_FROM_FILE,
                      physicsClientId=client)
    n = 0
    for q in (0.0, 0.6):
        p.resetJointState(body, 0, q, physicsClientId=client)
        ours, theirs = forward_kinematics(model, [q]), pybullet_frames(body, client)
        np.testing.assert_allclose(ours, theirs, atol=1e-6)
        n += ours.size
    ji = p.getJointInfo(body, 0, physicsClientId=client)
    got = [model.joint_lower[0], model.joint_upper[0], model.joint_effort[0], model.joint_velocity[0],
           model.joint_damping[0], model.joint_friction[0]]
    assert got == pytest.approx([ji[8], ji[9], ji[10], ji[11], ji[6], ji[7]], abs=1e-12)
    dyn = p.getDynamicsInfo(body, 0, physicsClientId=client)
    assert model.link_mass[1] == pytest.approx(dyn[0], abs=1e-12)
    np.testing.assert_allclose(model.link_com[1], dyn[3], atol=1e-12)
    np.testing.assert_allclose(np.linalg.eigvalsh(model.link_inertia[1]), sorted(dyn[2]), atol=1e-9)
    p.removeBody(body, physicsClientId=client)
    return model, n + 6 + 1 + 3 + 3


def test_each_leftover_is_read_as_pybullet_reads_it_and_listed(tmp_path, direct_client):
    path = tmp_path / "plain.urdf"   # the control: the same file without xacro
    path.write_text(T.format(**PLAIN))
    model, compared = compare_to_pybullet(path, direct_client)
    assert compared == 77 and not [i for i in model.issues if i.kind == "unexpanded_xacro"]
    for k, (key, element, attr, text, read) in enumerate(VARIANTS):
        path = tmp_path / f"v{k}.urdf"
        off_diagonal = {"ixy": "0"} if key == "ixx" else {}   # ixx 0, ixy 0.1: no body's inertia
        path.write_text(T.format(**{**PLAIN, **off_diagonal, key: text}))
        model, n = compare_to_pybullet(path, direct_client)
        found = [i for i in model.issues if i.kind == "unexpanded_xacro"]
        assert len(found) == 1, (text, model.issues)
        issue = found[0]
        assert issue.element == element and issue.data["attribute"] == attr
        assert issue.data["value"] == text and issue.data["read"] == pytest.approx(read, abs=0)
        numbers = " ".join(f"{x:g}" for x in read)
        assert f"{attr}='{text}'" in issue.message and f" {numbers} " in issue.message, issue.message
        assert FIX in issue.message
        compared += n
    assert k + 1 == len(VARIANTS) == 24
    assert compared == 25 * (2 * 2 * 16 + 13)


def test_an_axis_pybullet_cannot_read_is_refused_in_one_line(tmp_path, direct_client):
    path = tmp_path / "axis.urdf"
    path.write_text(T.format(**{**PLAIN, "axis": "$(arg axis)"}))
    with pytest.raises(p.error):   # oracle: PyBullet refuses it ("Malformed axis element")
        p.loadURDF(str(path), physicsClientId=direct_client)
    with pytest.raises(URDFError) as err:
        RobotModel.from_urdf(path)
    msg = str(err.value)
    assert "\n" not in msg and "joint 'j' <axis xyz='$(arg axis)'>" in msg
    assert "expected 3 numbers, got 2" in msg and "PyBullet refuses the file" in msg and FIX in msg


def test_an_axis_read_as_zero_is_the_zero_axis_error_naming_the_text(tmp_path, direct_client):
    path = tmp_path / "axis0.urdf"
    path.write_text(T.format(**{**PLAIN, "axis": "$(optenv A 0 0 1)"}))
    body = p.loadURDF(str(path), physicsClientId=direct_client)   # oracle: PyBullet reads 0 0 0
    assert p.getJointInfo(body, 0, physicsClientId=direct_client)[13] == (0.0, 0.0, 0.0)
    with pytest.raises(URDFError) as err:
        RobotModel.from_urdf(path)
    msg = str(err.value)
    assert "<axis xyz='$(optenv A 0 0 1)'/>: a zero axis; expected a non-zero direction" in msg
    assert "read as 0 0 0 as PyBullet reads it" in msg and FIX in msg and "\n" not in msg


def test_husky_info_exits_0_listing_the_leftovers(capsys):
    assert main(["info", HUSKY]) == 0
    out = capsys.readouterr().out
    lines = [line.strip() for line in out.splitlines() if "unexpanded_xacro" in line]
    assert len(lines) == 2, out
    assert lines[0].startswith("- unexpanded_xacro: joint 'imu_joint': <origin xyz='$(optenv "
                               "HUSKY_IMU_XYZ 0.19 0 0.149)'>: unexpanded xacro; PyBullet reads 0 0 0.19")
    assert lines[1].startswith("- unexpanded_xacro: joint 'imu_joint': <origin rpy='$(optenv "
                               "HUSKY_IMU_RPY 0 -1.5708 3.1416)'>: unexpanded xacro; PyBullet reads 0 0 0")


def test_husky_model_is_pybullets_at_every_joint_and_link(direct_client):
    model = RobotModel.from_urdf(HUSKY)
    from simbench.urdf_source import load_source

    body = p.loadURDF(str(load_source(HUSKY).pybullet_path()), useFixedBase=True,
                      physicsClientId=direct_client)
    nj = p.getNumJoints(body, physicsClientId=direct_client)
    names = [p.getJointInfo(body, j, physicsClientId=direct_client)[1].decode() for j in range(nj)]
    assert tuple(names) == model.joint_all_names and nj == 10
    moving = [names.index(n) for n in model.joint_names]
    rng = np.random.default_rng(3)
    poses = 0
    for k in range(4):
        q = np.zeros(model.nq) if k == 0 else rng.uniform(-np.pi, np.pi, model.nq)
        for j, v in zip(moving, q):
            p.resetJointState(body, j, v, physicsClientId=direct_client)
        theirs = pybullet_frames(body, direct_client)
        np.testing.assert_allclose(forward_kinematics(model, q), theirs, atol=1e-6)
        poses += len(theirs)
        if k == 0:   # every joint origin: the child's frame in its parent's, at q = 0
            parent = model.link_parent
            for j in range(nj):
                rel = np.linalg.inv(theirs[parent[j + 1]]) @ theirs[j + 1]
                np.testing.assert_allclose(model.joint_origin[j], rel, atol=1e-6)
            imu = np.linalg.inv(theirs[parent[names.index("imu_joint") + 1]]) @ \
                theirs[names.index("imu_joint") + 1]
            np.testing.assert_allclose(imu[:3, 3], [0, 0, 0.19], atol=1e-9)  # as the issue says
            np.testing.assert_allclose(imu[:3, :3], np.eye(3), atol=1e-9)
    assert poses == 4 * 11
