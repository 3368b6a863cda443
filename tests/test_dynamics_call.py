"""The single-call entry of the dynamics: the C extension (``kernels/_call.c``) and, where it is
not built, the Python fast path. Every input form a user passes for one configuration or a small
batch must give Pinocchio's numbers (``rnea``, ``crba``, ``aba``) on both paths, and bad values
the same clear error. Oracle: Pinocchio on the same values as float64 arrays."""
import os
import shutil
import sysconfig

import numpy as np
import pytest

from _dyn_helpers import rel_err, require
from simbench.errors import ShapeError
from simbench.model import RobotModel
import simbench.dynamics as dyn
from simbench.dynamics import crba, forward, rnea
from simbench.dynamics.configuration import normalize
from simbench.dynamics.inputs import SERIAL_ROWS
from simbench.dynamics.kernels import entries as E

require("pinocchio")
from simbench.oracles.pinocchio import PinocchioDynamics  # noqa: E402

IIWA = RobotModel.from_urdf("pybullet_data:kuka_iiwa/model.urdf")
MOBILE = RobotModel.from_urdf("simbench:mobile_manipulator.urdf")
A1 = RobotModel.from_urdf("pybullet_data:a1/a1.urdf", floating_base=True)


def _can_build() -> bool:
    """A C compiler and Python's headers: where both exist the extension must have been built."""
    include = sysconfig.get_paths().get("include") or ""
    return bool(shutil.which("cc") or shutil.which("gcc")) and os.path.exists(os.path.join(include, "Python.h"))


@pytest.fixture(params=["C entry", "Python fast path"])
def path(request, monkeypatch):
    """Each test runs through the C extension and through the Python path that replaces it."""
    if request.param == "C entry":
        if E.CALL is None:
            if os.environ.get("CI") or _can_build():
                pytest.fail("the C extension simbench.dynamics.kernels._call was not built although a "
                            "C compiler and Python.h are present (pip install -e . builds it)")
            pytest.skip("no C compiler here: the extension is optional")
    else:
        for module in (rnea, crba, forward):
            monkeypatch.setattr(module, "CALL", None)
    return request.param


def _forms(model, Q, QD, X):
    """name -> (q, qd, x, the same values as float64 arrays) for one configuration (the first
    rows of Q, QD, X) and small batches, as users pass them."""
    q, qd, x = Q[0], QD[0], X[0]
    ints = np.random.default_rng(7).integers(-2, 3, model.nv)
    ro = [np.array(a) for a in (q, qd, x)]
    for a in ro:
        a.setflags(write=False)
    f32 = [a.astype(np.float32) for a in (q, qd, x)]
    forms = {
        "float64": (q, qd, x),
        "read-only": tuple(ro),
        "strided": tuple(np.repeat(a, 2)[::2] for a in (q, qd, x)),
        "float32": tuple(f32),
        "big-endian float64": tuple(a.astype(">f8") for a in (q, qd, x)),
        "lists of floats": tuple(a.tolist() for a in (q, qd, x)),
        "tuples": tuple(tuple(a.tolist()) for a in (q, qd, x)),
        "lists of numpy floats": tuple(list(a) for a in (q, qd, x)),
        "ints in a list": (q.tolist(), [int(i) for i in ints], x.tolist()),
        "one-row batch": tuple(a[None] for a in (q, qd, x)),
        "small batch, Fortran order": tuple(np.asfortranarray(A) for A in (Q, QD, X)),
        "small batch, float32": tuple(A.astype(np.float32) for A in (Q, QD, X)),
        "rows broadcast by stride 0": tuple(np.broadcast_to(a, (3, a.size)) for a in (q, qd, x)),
        "a batch beside one configuration": (Q, qd, x),
        f"batch of {SERIAL_ROWS} rows": tuple(np.repeat(A[:1], SERIAL_ROWS, axis=0) for A in (Q, QD, X)),
    }
    # the float64 values (quaternions of float32 forms normalised, as the dynamics read them)
    return {k: v + ((normalize(model, np.asarray(v[0], dtype=float)),) +
                    tuple(np.asarray(a, dtype=float) for a in v[1:]),) for k, v in forms.items()}


@pytest.mark.parametrize("model", [MOBILE, IIWA, A1], ids=["mobile", "iiwa", "a1-floating"])
def test_every_input_form_gives_pinocchios_numbers(model, path):
    rng = np.random.default_rng(3)
    Q, (QD, X) = model.random_configuration(rng, 3), rng.normal(size=(2, 3, model.nv))
    pin = PinocchioDynamics(model)
    compared = 0
    for name, (a, b, c, (fa, fb, fc)) in _forms(model, Q, QD, X).items():
        lead = np.broadcast_shapes(np.shape(fa)[:-1], np.shape(fb)[:-1], np.shape(fc)[:-1])
        tau = dyn.inverse_dynamics(model, a, b, c)
        assert tau.shape == lead + (model.nv,) and tau.dtype == np.float64, name
        assert rel_err(tau, pin.inverse_dynamics(fa, fb, fc)) < 1e-12, name
        M = dyn.mass_matrix(model, a)
        assert M.shape == lead + (model.nv, model.nv), name
        assert rel_err(M, pin.mass_matrix(fa)) < 1e-12, name
        qdd2 = dyn.forward_dynamics(model, a, b, c)      # c read as torques
        assert qdd2.shape == lead + (model.nv,), name
        assert rel_err(qdd2, pin.forward_dynamics(fa, fb, fc)) < 1e-10, name
        compared += 3
    assert compared == 3 * 15


@pytest.mark.parametrize("bad, message", [
    (lambda q, qd, qdd: (q.tolist()[:-1], qd, qdd), r"q has shape \(6,\); expected \(\.\.\., 7\)"),
    (lambda q, qd, qdd: (q, tuple(qd[:-1].tolist()) + (float("nan"),), qdd), r"qd.*non-finite.*nan"),
    (lambda q, qd, qdd: (q, qd, qdd.tolist()[:-1] + ["x"]), r"qdd.*'x'"),
    (lambda q, qd, qdd: (q, qd.tolist()[:-1] + [10 ** 400], qdd), r"qd.*10{10}"),
    (lambda q, qd, qdd: (np.vstack([q, q]), qd[None].repeat(3, 0), qdd[None].repeat(3, 0)),
     r"do not broadcast: q \(2, 7\), qd \(3, 7\)"),
    (lambda q, qd, qdd: (q.astype(np.float32), qd, np.r_[qdd[:-1], np.inf]), r"qdd.*non-finite.*inf"),
], ids=["short list", "nan in a tuple", "a string", "an int too large", "rows differ", "inf beside float32"])
def test_bad_values_give_the_clear_error_on_both_paths(bad, message, path):
    rng = np.random.default_rng(5)
    q, qd, qdd = IIWA.random_configuration(rng), rng.normal(size=7), rng.normal(size=7)
    with pytest.raises((ShapeError, ValueError, TypeError), match=message):
        dyn.inverse_dynamics(IIWA, *bad(q, qd, qdd))


def test_c_entry_rows_limit_is_the_serial_batch_size():
    """Batches above SERIAL_ROWS go to the threaded span kernels: the C entry declines them."""
    if E.CALL is None:
        pytest.skip("the C extension is not built")
    from simbench.dynamics.kernels import _call

    assert _call.MAX_ROWS == SERIAL_ROWS
    d = IIWA._cache.get("simbench.dynamics") or dyn.packing.kernel_model(IIWA)
    Q = np.zeros((SERIAL_ROWS + 1, 7))
    assert E.CALL(E.id_c.address, d.packed, 7, -1, Q, Q, Q) is None
    assert E.CALL(E.id_c.address, d.packed, 7, -1, Q[1:], Q[1:], Q[1:]).shape == (SERIAL_ROWS, 7)


def test_gravity_in_any_form_gives_pinocchios_numbers(path):
    """Gravity as a tuple, a list (ints too), an array, or another direction (a robot mounted on
    a wall): inverse and forward dynamics equal Pinocchio's with that gravity, one configuration
    and a small batch."""
    rng = np.random.default_rng(11)
    Q, (QD, X) = IIWA.random_configuration(rng, 4), rng.normal(size=(2, 4, 7))
    pin = PinocchioDynamics(IIWA)
    forms = {"equal tuple": tuple(IIWA.gravity), "list of ints": [0, 0, -10],
             "array": np.array([0.0, 0.0, -9.81]), "wall (x)": (9.81, 0.0, 0.0),
             "float32 array": np.array([0.0, 3.0, -9.0], dtype=np.float32)}
    compared = 0
    for name, g in forms.items():
        gf = [float(x) for x in g]
        for q, qd, x in ((Q[0], QD[0], X[0]), (Q, QD, X)):
            assert rel_err(dyn.inverse_dynamics(IIWA, q, qd, x, gravity=g),
                           pin.inverse_dynamics(q, qd, x, gravity=gf)) < 1e-12, name
            assert rel_err(dyn.forward_dynamics(IIWA, q, qd, x, gravity=g),
                           pin.forward_dynamics(q, qd, x, gravity=gf)) < 1e-10, name
            compared += 2
    assert compared == 2 * 2 * len(forms)


@pytest.mark.parametrize("gravity, shown", [([0.0, -9.81], r"\[0.0, -9.81\]"),
                                            ((0.0, 0.0, float("nan")), r"\(0.0, 0.0, nan\)"),
                                            ("abc", "'abc'")], ids=["two numbers", "nan", "a string"])
def test_bad_gravity_is_the_clear_error_on_both_paths(gravity, shown, path):
    q = np.zeros(7)
    for fn in (dyn.inverse_dynamics, dyn.forward_dynamics):
        with pytest.raises(ShapeError, match="gravity must be 3 finite numbers .*got " + shown):
            fn(IIWA, q, q, q, gravity=gravity)


@pytest.mark.parametrize("base", [IIWA, A1], ids=["iiwa", "a1-floating"])
def test_damping_and_friction_in_every_input_form_give_pinocchios_numbers(base, path):
    """Viscous damping and Coulomb friction on one configuration and small batches, in every
    input form, on both paths: ``tau = RNEA(q, q', q'') + D q' + f_c sign(q')`` and
    ``q'' = ABA(q, q', tau - D q' - f_c sign(q'))`` with Pinocchio's ``rnea`` and ``aba``, D and
    f_c the joints' values (the URDF's ``<dynamics damping friction>``; none for the floating
    base). Some velocities are exactly zero (no friction there: sign(0) = 0)."""
    n = len(base.joint_all_names)
    model = base.replace(joint_damping=np.linspace(0.1, 0.7, n), joint_friction=np.linspace(0.05, 0.4, n))
    mov = model.movable
    D, Fc = np.zeros(model.nv), np.zeros(model.nv)
    D[model.joint_v_start[mov]] = model.joint_damping[mov]
    Fc[model.joint_v_start[mov]] = model.joint_friction[mov]
    assert np.count_nonzero(D) == np.count_nonzero(Fc) == model.nv - (6 if model.floating_base else 0)
    rng = np.random.default_rng(13)
    Q, (QD, X) = model.random_configuration(rng, 3), rng.normal(size=(2, 3, model.nv))
    QD[:, ::3] = 0.0
    pin = PinocchioDynamics(model)
    compared = 0
    for name, (a, b, c, (fa, fb, fc)) in _forms(model, Q, QD, X).items():
        for damping, friction in ((True, False), (False, True), (True, True)):
            losses = (D * fb if damping else 0.0) + (Fc * np.sign(fb) if friction else 0.0)
            tau = dyn.inverse_dynamics(model, a, b, c, damping=damping, friction=friction)
            want = pin.inverse_dynamics(fa, fb, fc) + losses
            assert tau.shape == np.shape(want) and rel_err(tau, want) < 1e-12, (name, damping, friction)
            qdd = dyn.forward_dynamics(model, a, b, c, damping=damping, friction=friction)
            want = pin.forward_dynamics(fa, fb, fc - losses)
            assert qdd.shape == np.shape(want) and rel_err(qdd, want) < 1e-10, (name, damping, friction)
            compared += 2
    assert compared == 15 * 3 * 2
