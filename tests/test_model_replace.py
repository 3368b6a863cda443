"""RobotModel.replace checks what it is given (field names, per-joint arrays by
``model.joint_all_names``, one number for every joint, ``{joint name: value}``), and the dynamics'
``damping=`` / ``friction=`` flags are booleans. Each bad value is one line.

Oracle for the numbers: Pinocchio's ``rnea`` / ``aba`` plus ``D q' + f_c sign(q')`` (Ankur Handa,
"Understanding Physics Engines: Dynamic Models of Manipulators") with D and f_c written by hand,
entry by entry from the joint names, not from ``model.joint_v_start``.
"""
import numpy as np
import pytest

from _dyn_helpers import rel_err, require
from simbench.errors import ShapeError, SimbenchError, UnknownNameError
from simbench.model import RobotModel
from simbench.paths import resolve_path as simbench_path
from simbench.dynamics import forward_dynamics, inverse_dynamics

IIWA = RobotModel.from_urdf("pybullet_data:kuka_iiwa/model.urdf")
PANDA = RobotModel.from_urdf("pybullet_data:franka_panda/panda.urdf")   # fixed joints among movable ones
NAMES = "('lbr_iiwa_joint_1', 'lbr_iiwa_joint_2', 'lbr_iiwa_joint_3', 'lbr_iiwa_joint_4', " \
        "'lbr_iiwa_joint_5', 'lbr_iiwa_joint_6', 'lbr_iiwa_joint_7')"
ORDER = f"one per joint in model.joint_all_names order {NAMES}"
OR = "or one number for every joint, or {joint name: value} for some"
D = np.arange(1, 8) * 0.1

BAD_REPLACE = [
    (dict(joint_damping=D[:6]), ShapeError,
     f"joint_damping has 6 values; expected 7, {ORDER}, {OR}"),
    (dict(joint_damping=np.r_[D, 1.0]), ShapeError,
     f"joint_damping has 8 values; expected 7, {ORDER}, {OR}"),
    (dict(joint_friction=D[:, None]), ShapeError,
     f"joint_friction has shape (7, 1); expected shape (7,), {ORDER}, {OR}"),
    (dict(joint_damping={"lbr_iiwa_joint_9": 0.1}), UnknownNameError,
     "unknown joint 'lbr_iiwa_joint_9' in joint_damping; did you mean 'lbr_iiwa_joint_7', 'lbr_iiwa_joint_6', "
     f"'lbr_iiwa_joint_5'? Valid joint names: {NAMES[1:-1].replace(chr(39), '')}"),
    (dict(joint_damping={"lbr_iiwa_joint_1": "x"}), ShapeError,
     "joint_damping['lbr_iiwa_joint_1'] = 'x'; expected a finite number >= 0 (text, not numbers; convert it "
     "with float() first)"),
    (dict(joint_friction=np.full(7, np.nan)), ShapeError,
     "joint_friction[0] (joint 'lbr_iiwa_joint_1') = nan; expected a finite number >= 0"),
    (dict(joint_damping=np.r_[D[:2], -0.5, D[3:]]), ShapeError,
     "joint_damping[2] (joint 'lbr_iiwa_joint_3') = -0.5; expected a finite number >= 0 (did you mean 0.0?)"),
    (dict(joint_damping={"lbr_iiwa_joint_4": -1}), ShapeError,
     "joint_damping['lbr_iiwa_joint_4'] = -1.0; expected a finite number >= 0 (did you mean 0.0?)"),
    (dict(joint_friction=-0.3), ShapeError, "joint_friction = -0.3; expected a finite number >= 0 (did you mean 0.0?)"),
    (dict(joint_damping=np.inf), ShapeError, "joint_damping = inf; expected a finite number >= 0"),
    (dict(joint_damping=True), ShapeError, f"joint_damping = True; expected numbers, {ORDER}, not True/False"),
    (dict(joint_damping="0.3"), ShapeError,
     f"joint_damping = '0.3'; expected numbers, {ORDER} (text, not numbers; convert it with float() first)"),
    (dict(joint_lower=np.nan), ShapeError, "joint_lower = nan; expected a number (-inf/inf: no limit)"),
    (dict(joint_effort=-1), ShapeError,
     "joint_effort = -1.0; expected a number >= 0 (inf: no limit) (did you mean 0.0?)"),
    (dict(root_pose=np.eye(3)), ShapeError, "root_pose has shape (3, 3); expected a (4, 4) rigid transform, or None"),
    (dict(root_pose=np.diag([1.0, 1.0, -1.0, 1.0])), ShapeError,
     "root_pose = array([[ 1., 0., 0., 0.], [ 0., 1., 0., 0.], [ 0., 0., -1., 0.], [ 0., 0., 0., 1.]], "
     "shape=(4, 4)); expected a (4, 4) rigid transform: a rotation (R R^T = 1, det R = 1) and a translation, "
     "last row 0 0 0 1, or None"),
    (dict(joint_dampng=D), SimbenchError, "replace() got 'joint_dampng'; did you mean 'joint_damping'?"),
    (dict(joint_Friction=D), SimbenchError, "replace() got 'joint_Friction'; did you mean 'joint_friction'?"),
]


def test_bad_replace_arguments_are_one_line_each():
    """Every case of the walkthrough (short, long, nan, negative, misspelt) and its neighbours."""
    compared = 0
    for changes, error, message in BAD_REPLACE:
        with pytest.raises(error) as info:
            IIWA.replace(**changes)
        assert str(info.value) == message, changes
        assert "\n" not in str(info.value)
        compared += 1
    assert compared == len(BAD_REPLACE) == 18


FLAG = "expected True or False, whether to add the model's"
BAD_FLAGS = [
    (dict(damping="yes"), f"damping = 'yes'; {FLAG} joint_damping (did you mean True?)"),
    (dict(friction="off"), f"friction = 'off'; {FLAG} joint_friction (did you mean False?)"),
    (dict(damping=1), f"damping = 1; {FLAG} joint_damping (did you mean True?)"),
    (dict(damping=None), f"damping = None; {FLAG} joint_damping (did you mean False?)"),
    (dict(damping=D), f"damping = array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]); {FLAG} joint_damping; per-joint "
                      "values go in the model: model.replace(joint_damping=...), then damping=True"),
    (dict(friction=0.3), f"friction = 0.3; {FLAG} joint_friction; per-joint values go in the model: "
                         "model.replace(joint_friction=...), then friction=True"),
    (dict(friction={"lbr_iiwa_joint_1": 0.1}), f"friction = {{'lbr_iiwa_joint_1': 0.1}}; {FLAG} joint_friction; "
     "per-joint values go in the model: model.replace(joint_friction=...), then friction=True"),
]


@pytest.fixture(params=["C entry", "Python path"])
def path(request, monkeypatch):
    """The flags are checked on the C entry's path and on the path that replaces it."""
    from simbench.dynamics import forward, rnea

    if request.param == "Python path":
        for module in (rnea, forward):
            monkeypatch.setattr(module, "CALL", None)
    return request.param


def test_damping_and_friction_flags_are_booleans_on_both_dynamics(path):
    q = np.zeros(7)
    compared = 0
    for fn in (inverse_dynamics, forward_dynamics):
        for flags, message in BAD_FLAGS:
            with pytest.raises(SimbenchError) as info:
                fn(IIWA, q, q, q, **flags)
            assert str(info.value) == message, (fn.__name__, flags)
            compared += 1
    assert compared == 2 * len(BAD_FLAGS) == 14


def _oracle_losses(model, values: dict[str, tuple[float, float]], qd: np.ndarray) -> np.ndarray:
    """``D q' + f_c sign(q')`` with D and f_c placed by hand: joint name -> its entry of v."""
    Dv, Fv = np.zeros(model.nv), np.zeros(model.nv)
    for name, (d, f) in values.items():
        if name in model.joint_names:   # fixed joints have no entry
            Dv[model.joint_names.index(name)], Fv[model.joint_names.index(name)] = d, f
    return Dv * qd + Fv * np.sign(qd)


@pytest.mark.parametrize("base", [IIWA, PANDA], ids=["iiwa", "panda"])
def test_mapping_scalar_and_array_give_pinocchios_torques(base):
    """``joint_damping=0.3`` (every joint), ``{name: value}`` (some joints, the others keep the
    array's) and the equivalent per-joint array give the same torques, equal to Pinocchio's rnea
    plus the losses; and accelerations equal to Pinocchio's aba of tau less the losses."""
    require("pinocchio")
    from simbench.oracles.pinocchio import PinocchioDynamics

    names = base.joint_all_names
    start = base.replace(joint_damping=np.linspace(0.1, 0.7, len(names)),
                         joint_friction=np.linspace(0.05, 0.4, len(names)))
    first = dict(zip(names, zip(start.joint_damping, start.joint_friction)))
    some = {base.joint_names[1]: 0.9, base.joint_names[-1]: 0.25}   # panda: a joint after the fixed ones
    variants = {   # name -> (model, the joint values written out by hand)
        "scalar": (base.replace(joint_damping=0.3, joint_friction=0.2), {n: (0.3, 0.2) for n in names}),
        "mapping": (start.replace(joint_damping=some, joint_friction={base.joint_names[0]: 0.0}),
                    {n: (some.get(n, d), 0.0 if n == base.joint_names[0] else f) for n, (d, f) in first.items()}),
    }
    rng = np.random.default_rng(5)
    Q, QD, X = base.random_configuration(rng, 4), rng.normal(size=(4, base.nv)), rng.normal(size=(4, base.nv))
    QD[:, 2] = 0.0   # sign(0) = 0: no friction there
    compared = 0
    for label, (model, by_hand) in variants.items():
        array = base.replace(joint_damping=[by_hand[n][0] for n in names],
                             joint_friction=[by_hand[n][1] for n in names])
        pin = PinocchioDynamics(model)
        for q, qd, x in zip(Q, QD, X):
            losses = _oracle_losses(model, by_hand, qd)
            tau = inverse_dynamics(model, q, qd, x, damping=True, friction=np.True_)
            assert np.array_equal(tau, inverse_dynamics(array, q, qd, x, damping=True, friction=True)), label
            assert rel_err(tau, pin.inverse_dynamics(q, qd, x) + losses) < 1e-12, label
            qdd = forward_dynamics(model, q, qd, x, damping=np.True_, friction=True)
            assert rel_err(qdd, pin.forward_dynamics(q, qd, x - losses)) < 1e-10, label
            compared += 1
    assert compared == 2 * 4


def test_flag_false_in_numpys_form_is_the_plain_call(path):
    q, qd, x = np.full((3, 7), 0.4)
    plain = inverse_dynamics(IIWA, q, qd, x)
    assert np.array_equal(inverse_dynamics(IIWA, q, qd, x, damping=np.False_, friction=False), plain)
    assert not np.array_equal(inverse_dynamics(IIWA, q, qd, x, damping=np.True_), plain)   # the file's 0.5


PLANAR = "simbench:planar_2r.urdf"
LINKS = "('base', 'link1', 'link2')"
BAD_LINK_FIELDS = [   # (replace() arguments, error, message); a walkthrough's inputs first
    (dict(link_mass={"link2": "x"}), ShapeError,
     "link_mass['link2'] = 'x'; expected a mass in kg (text, not numbers; convert it with float() first)"),
    (dict(link_mass=[1, 1.2, 0.8, 99.0]), ShapeError,
     f"link_mass has shape (4,); expected (3,): masses in kg, one per link in model.link_names order {LINKS}, "
     "or {link name: value} for some"),
    (dict(link_mass=[1, 1.2, -0.8]), ShapeError,
     "link_mass[2] (link 'link2') = -0.8; expected a mass >= 0 in kg (did you mean 0.0?)"),
    (dict(link_mass=-1.0), ShapeError,
     f"link_mass has shape (); expected (3,): masses in kg, one per link in model.link_names order {LINKS}, "
     "or {link name: value} for some"),
    (dict(link_com=[[0, 0, 0]]), ShapeError,
     "link_com has shape (1, 3); expected (3, 3): centres of mass (x, y, z in m, link frame), one per link in "
     f"model.link_names order {LINKS}, or {{link name: value}} for some"),
    (dict(link_mass={"link9": 1}), UnknownNameError,
     "unknown link 'link9' in link_mass; did you mean 'link2', 'link1'? Valid link names: base, link1, link2"),
    (dict(link_inertia={"link2": np.full((3, 3), np.nan)}), ShapeError,
     "link_inertia['link2'] holds a non-finite value; expected finite numbers: a 3x3 inertia matrix about the "
     "COM (kg m^2, link axes)"),
    (dict(link_com={"link1": [0.1, 0.2]}), ShapeError,
     "link_com['link1'] has shape (2,); expected (3,): a centre of mass (x, y, z in m, link frame)"),
]


def test_bad_link_fields_are_one_line_each():
    """replace() checks the per-link fields as it checks the per-joint ones (a walkthrough's
    link_mass={'link2': 1.0} was stored as a dict and crashed inside numpy at the first call;
    4 masses for 3 links and negative masses gave numbers); with_link_inertial goes through it."""
    model = RobotModel.from_urdf(PLANAR)
    compared = 0
    for changes, error, message in BAD_LINK_FIELDS:
        with pytest.raises(error) as err:
            model.replace(**changes)
        assert str(err.value) == message
        compared += 1
    for kwargs, message in ((dict(mass=-1.0), "link_mass['link2'] = -1; expected a mass >= 0 in kg (did you mean 0.0?)"),
                            (dict(mass="2"), "link_mass['link2'] = '2'; expected a mass in kg (text, not numbers; "
                                             "convert it with float() first)")):
        with pytest.raises(ShapeError) as err:
            model.with_link_inertial("link2", **kwargs)
        assert str(err.value) == message
        compared += 1
    assert compared == len(BAD_LINK_FIELDS) + 2 == 10


def test_good_link_fields_change_the_dynamics_as_pinocchio_says():
    """A mapping changes the named link only; the result's mass matrix equals Pinocchio's of the
    model with that link's inertial set directly."""
    require("pinocchio")
    from simbench.dynamics import mass_matrix
    from simbench.oracles.pinocchio import PinocchioDynamics

    model = RobotModel.from_urdf(PLANAR)
    heavier = model.replace(link_mass={"link2": 2.5})
    assert heavier.link_mass.tolist() == [model.link_mass[0], model.link_mass[1], 2.5]
    assert heavier.link_mass.flags.writeable is False
    same = model.with_link_inertial("link2", mass=2.5)
    q = np.array([[0.3, -0.7], [1.1, 0.4]])
    np.testing.assert_allclose(mass_matrix(heavier, q), PinocchioDynamics.from_model(heavier).mass_matrix(q), atol=1e-12)
    np.testing.assert_allclose(mass_matrix(same, q), mass_matrix(heavier, q), atol=0)
    assert not np.allclose(mass_matrix(model, q), mass_matrix(heavier, q))


def test_a_files_own_negative_mass_does_not_block_other_changes(tmp_path):
    """A model read from a file with a negative mass (said at load) still takes other changes, as
    simbench check's PyBullet substitutions make them; only a negative mass given is refused."""
    text = open(simbench_path(PLANAR)).read().replace('<mass value="0.8"/>', '<mass value="-0.3"/>')
    (tmp_path / "neg.urdf").write_text(text)
    model = RobotModel.from_urdf(tmp_path / "neg.urdf")
    assert model.link_mass[2] == -0.3
    changed = model.with_link_inertial("link1", mass=2.0).replace(joint_damping=0.1)
    assert changed.link_mass.tolist() == [model.link_mass[0], 2.0, -0.3]
    with pytest.raises(ShapeError, match=r"link_mass\['link1'\] = -2; expected a mass >= 0"):
        model.with_link_inertial("link1", mass=-2.0)


def test_moving_the_root_keeps_the_worlds_gravity():
    """``iiwa.replace(root_pose=T)`` with T a 90 degree roll moved poses into the world but left
    gravity "down" in the root frame: gravity torques off by 29 N m, silently. A new root pose
    without ``gravity`` now keeps the world's gravity. Oracle: Pinocchio with T put in front of
    joint 1 (gravity in the world), for gravity torques, potential energy and the flange's pose;
    a second move and a move back; a gravity given with the pose is kept as given."""
    pin = require("pinocchio")
    from simbench.dynamics import gravity_torques, link_pose, potential_energy
    from simbench.oracles.pinocchio import PinocchioMap, urdf_model

    def pose(roll, pitch, p):
        T = np.eye(4)
        T[:3, :3] = pin.rpy.rpyToMatrix(roll, pitch, 0.0)
        T[:3, 3] = p
        return T

    rng = np.random.default_rng(3)
    Q = rng.uniform(-2, 2, size=(5, 7))
    compared = 0
    for T in (pose(np.pi / 2, 0, [0.5, 0.2, 1.0]), pose(0.3, -1.1, [0, 1, 2]), pose(np.pi, 0, [0, 0, 3])):
        placed = IIWA.replace(root_pose=T)
        again = IIWA.replace(root_pose=pose(0.4, 0.4, [1, 1, 1])).replace(root_pose=T)   # moved twice
        pm = urdf_model(IIWA)
        pm.jointPlacements[1] = pin.SE3(T) * pm.jointPlacements[1]
        pd, mp = pm.createData(), PinocchioMap(IIWA, pm)
        for q in Q:
            qp = mp.q(q)
            want = mp.back(pin.rnea(pm, pd, qp, np.zeros(7), np.zeros(7)))
            for model in (placed, again):
                assert rel_err(gravity_torques(model, q), want) < 1e-12
            pin.framesForwardKinematics(pm, pd, qp)
            flange = pd.oMf[pm.getFrameId("lbr_iiwa_link_7")].homogeneous
            assert np.abs(link_pose(placed, q, "lbr_iiwa_link_7") - flange).max() < 1e-12
            pe = pin.computePotentialEnergy(pm, pd, qp)   # Pinocchio leaves out the root link (0 kg here)
            assert abs(potential_energy(placed, q) - pe) < 1e-9 * max(1.0, abs(pe))
            compared += 1
    assert compared == 15
    assert np.allclose(IIWA.replace(root_pose=pose(1.0, 0.5, [0, 0, 1])).replace(root_pose=None).gravity, IIWA.gravity)
    given = IIWA.replace(root_pose=pose(np.pi / 2, 0, [0, 0, 0]), gravity=(0.0, 0.0, -1.62))
    assert given.gravity == (0.0, 0.0, -1.62)


def test_a_floating_base_refuses_a_root_pose():
    """``a1.replace(root_pose=T)`` on a floating a1 moved every pose by T while gravity stayed, so
    gravity torques were those of the unmoved robot, silently: a floating base's pose is q[:7].
    Oracle: the one-line refusal; root_pose=None is still accepted."""
    a1 = RobotModel.from_urdf("pybullet_data:a1/a1.urdf", floating_base=True)
    T = np.eye(4)
    T[:3, 3] = [0.5, -0.2, 1.0]
    with pytest.raises(SimbenchError, match=r"^root_pose places a welded root; a floating base's pose is q\[:7\]"):
        a1.replace(root_pose=T)
    assert a1.replace(root_pose=None).nq == 19
