"""simbench.dynamics.symbolic: closed-form M, C, g with sympy, lambdify, C99 code.

Oracles: the slide-12 formulas of the "AI Robotics" lecture slides, *Dynamics* (symbolic equality), Pinocchio (rnea, crba,
computeCoriolisMatrix, computeGeneralizedGravity) and the numeric simbench.dynamics RNEA.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest


from _dyn_helpers import require  # noqa: E402
from simbench.errors import SimbenchError, ShapeError  # noqa: E402
from simbench.model import RobotModel  # noqa: E402
from simbench.paths import assets_dir  # noqa: E402
from simbench.dynamics.symbolic import derive  # noqa: E402

sp = require("sympy")
pin = require("pinocchio")
ROOT = Path(__file__).resolve().parents[1]
ASSETS = assets_dir() / "urdf"
PLANAR_2R = ASSETS / "planar_2r.urdf"
MOBILE = ASSETS / "mobile_manipulator.urdf"
ARM3 = ASSETS / "anthropomorphic_3link.urdf"

# a fixed tool (tilted) hung below the last link: merged into that body by derive()
TOOL = """
  <joint name="tool_mount" type="fixed">
    <parent link="{parent}"/><child link="tool"/>
    <origin xyz="0.45 0.02 -0.03" rpy="0.3 -0.4 0.2"/>
  </joint>
  <link name="tool">
    <inertial><origin xyz="0.03 0.01 0.02" rpy="0.1 0.2 0.3"/><mass value="0.35"/>
      <inertia ixx="0.0011" ixy="0.0001" ixz="0" iyy="0.0009" iyz="0.00005" izz="0.0007"/></inertial>
  </link>
</robot>"""


@pytest.fixture(scope="module")
def models() -> dict[str, RobotModel]:
    return {p.stem: RobotModel.from_urdf(p) for p in (PLANAR_2R, MOBILE, ARM3)}


@pytest.fixture(scope="module")
def eoms(models):
    return {name: derive(m) for name, m in models.items()}


class Pin:
    """Pinocchio on the same URDF (serial chains: same joint order, checked)."""

    def __init__(self, model: RobotModel, urdf_text: str | None = None):
        self.pm = (pin.buildModelFromXML(urdf_text) if urdf_text is not None
                   else pin.buildModelFromUrdf(model.source))
        assert tuple(self.pm.names[1:]) == model.joint_names
        self.pm.gravity.linear[:] = [0.0, 0.0, -9.81]
        self.d = self.pm.createData()

    def mass(self, q):
        M = np.array(pin.crba(self.pm, self.d, q))
        return np.triu(M) + np.triu(M, 1).T  # crba may fill the upper triangle only

    def __getattr__(self, name):
        f = getattr(pin, name)
        return lambda *args: np.array(f(self.pm, self.d, *args))


def states(model: RobotModel, n: int, seed: int):
    rng = np.random.default_rng(seed)
    q = model.random_configuration(rng, n)
    return q, rng.normal(0, 2.0, (n, model.dof)), rng.normal(0, 3.0, (n, model.dof))


def close(a, b, tol=1e-10):
    b = np.asarray(b)
    np.testing.assert_allclose(a, b, rtol=0, atol=tol * max(1.0, float(np.abs(b).max())))


# ---------------------------------------------------------------------- slide 12, exactly
def _slide12():
    th1, th2, thd1, thd2 = sp.symbols("theta1 theta2 thetadot1 thetadot2", real=True)
    m1, m2, L1, L2, g = sp.symbols("m1 m2 L1 L2 g", positive=True)
    M = sp.Matrix([[m1 * L1**2 + m2 * (L1**2 + 2 * L1 * L2 * sp.cos(th2) + L2**2),
                    m2 * (L1 * L2 * sp.cos(th2) + L2**2)],
                   [m2 * (L1 * L2 * sp.cos(th2) + L2**2), m2 * L2**2]])
    c = sp.Matrix([-m2 * L1 * L2 * sp.sin(th2) * (2 * thd1 * thd2 + thd2**2),
                   m2 * L1 * L2 * thd1**2 * sp.sin(th2)])
    gv = sp.Matrix([(m1 + m2) * L1 * g * sp.cos(th1) + m2 * g * L2 * sp.cos(th1 + th2),
                    m2 * g * L2 * sp.cos(th1 + th2)])
    return (th1, th2, thd1, thd2), (m1, m2, L1, L2, g), M, c, gv


@pytest.mark.parametrize("simplify", [True, "trig"])
def test_planar_2r_is_slide_12_exactly(models, simplify):
    model = models["planar_2r"]
    eom = derive(model, simplify=simplify, symbolic_parameters=True)
    (th1, th2, thd1, thd2), (m1, m2, L1, L2, g), M, c, gv = _slide12()
    P = {str(s): s for s in eom.parameters}
    # the only non-zero parameters of the file: two point masses at the link tips
    assert set(P) == {"m_link1", "m_link2", "cx_link1", "cx_link2", "px_theta2", "g"}
    assert eom.parameters[P["m_link1"]] == 1.2 and eom.parameters[P["m_link2"]] == 0.8
    assert eom.parameters[P["cx_link1"]] == eom.parameters[P["px_theta2"]] == 0.6
    assert eom.parameters[P["cx_link2"]] == 0.4 and eom.parameters[P["g"]] == 9.81
    to_slide = {P["m_link1"]: m1, P["m_link2"]: m2, P["cx_link1"]: L1, P["px_theta2"]: L1,
                P["cx_link2"]: L2, P["g"]: g, eom.q[0]: th1, eom.q[1]: th2,
                eom.qd[0]: thd1, eom.qd[1]: thd2}
    ours = [X.xreplace(to_slide) for X in (eom.M, eom.c, eom.g)]
    for mine, slide in zip(ours, (M, c, gv)):
        diff = (mine - slide).applyfunc(lambda e: sp.expand(sp.expand_trig(e)))
        assert diff == sp.zeros(*slide.shape), diff
        if simplify == "trig":  # the slide's form itself, cos(theta1 + theta2) included
            assert (mine - slide).applyfunc(sp.expand) == sp.zeros(*slide.shape)
    # C itself (not only C q'): Christoffel symbols of the slide's M
    C = eom.C.xreplace(to_slide)
    assert sp.expand(C[1, 1]) == 0 and sp.expand(C[1, 0] - m2 * L1 * L2 * sp.sin(th2) * thd1) == 0
    tex = eom.latex()
    assert "\\dot{q}_{2}" in tex and "\\cos" in tex and tex.startswith("\\begin{align*}")


def test_mobile_manipulator_is_heins_lagrangian_post_exactly(models):
    """Adam Heins's "Lagrangian dynamics of a planar mobile manipulator": its hand-derived M(q) and g(q) (its ManualDynamics class), symbol for symbol."""
    eom = derive(models["mobile_manipulator"], symbolic_parameters=True)
    P = {str(s): s for s in eom.parameters}
    M1, M2, M3, L2, L3, I2, I3, G, LX, LY = sp.symbols("M1 M2 M3 L2 L3 I2 I3 G LX LY", positive=True)
    x1, t2, t3 = sp.symbols("x1 theta2 theta3", real=True)
    to_post = {P["m_base"]: M1, P["m_link2"]: M2, P["m_link3"]: M3, P["cx_link2"]: L2 / 2,
               P["px_theta3"]: L2, P["cx_link3"]: L3 / 2, P["Iyy_link2"]: I2, P["Iyy_link3"]: I3,
               P["px_theta2"]: LX, P["pz_theta2"]: LY, P["g"]: G, eom.q[0]: x1, eom.q[1]: t2, eom.q[2]: t3}
    assert eom.parameters[P["cx_link2"]] * 2 == eom.parameters[P["px_theta3"]]  # COM at mid-link
    t23 = t2 + t3
    m12 = -(M2 / 2 + M3) * L2 * sp.sin(t2) - M3 * L3 / 2 * sp.sin(t23)
    m13 = -M3 * L3 / 2 * sp.sin(t23)
    m22 = (M2 / 4 + M3) * L2**2 + M3 * L3**2 / 4 + M3 * L2 * L3 * sp.cos(t3) + I2 + I3
    m23 = M3 * L3 / 2 * (L3 / 2 + L2 * sp.cos(t3)) + I3
    m33 = M3 * L3**2 / 4 + I3
    M = sp.Matrix([[M1 + M2 + M3, m12, m13], [m12, m22, m23], [m13, m23, m33]])
    g = sp.Matrix([0, (M2 / 2 + M3) * G * L2 * sp.cos(t2) + M3 * L3 / 2 * G * sp.cos(t23),
                   M3 * L3 / 2 * G * sp.cos(t23)])
    for mine, post in ((eom.M, M), (eom.g, g)):
        diff = (mine.xreplace(to_post) - post).applyfunc(lambda e: sp.expand(sp.expand_trig(e)))
        assert diff == sp.zeros(*post.shape), diff


# ---------------------------------------------------------------------- numeric oracles
@pytest.mark.parametrize("name", ["anthropomorphic_3link", "mobile_manipulator", "planar_2r"])
def test_lambdified_matches_pinocchio_and_our_rnea(models, eoms, name):
    from simbench import dynamics

    model, eom = models[name], eoms[name]
    f = eom.lambdify()
    ref = Pin(model)
    Q, QD, QDD = states(model, 40, seed=7)
    tau = f.inverse_dynamics(Q, QD, QDD)  # batched
    close(tau, dynamics.inverse_dynamics(model, Q, QD, QDD))
    close(f.mass_matrix(Q), dynamics.mass_matrix(model, Q))
    close(f.gravity_torques(Q), dynamics.gravity_torques(model, Q))
    close(f.coriolis_matrix(Q, QD), dynamics.coriolis_matrix(model, Q, QD))
    for q, qd, qdd, t in zip(Q[:10], QD[:10], QDD[:10], tau[:10]):
        close(t, ref.rnea(q, qd, qdd))
        close(f.inverse_dynamics(q, qd, qdd), t)  # unbatched
        close(f.mass_matrix(q), ref.mass(q))
        close(f.coriolis_matrix(q, qd), ref.computeCoriolisMatrix(q, qd))
        close(f.gravity_torques(q), ref.computeGeneralizedGravity(q))
    # leading batch dimensions broadcast (q of shape (2, 3, n) with one qd)
    close(f.coriolis_matrix(Q[:6].reshape(2, 3, -1), QD[0]),
          np.array([ref.computeCoriolisMatrix(q, QD[0]) for q in Q[:6]]).reshape(2, 3, model.dof, model.dof))
    with pytest.raises(ShapeError, match=r"expected \(\.\.\., %d\)" % model.dof):
        f.mass_matrix(np.zeros(model.dof + 1))


def test_derive_takes_the_models_gravity(models):
    """A model whose gravity is not upright (``model.replace(gravity=...)``, as for an arm on a
    wall): derive(model) uses it, as every numeric function does (it used (0, 0, -9.81)
    silently: g off by 15.7 N m on a user's arm). Oracle: Pinocchio's generalised gravity
    with the same vector; 10 configurations x 2 models; an explicit gravity= still wins."""
    compared = 0
    for name in ("anthropomorphic_3link", "mobile_manipulator"):
        wall = models[name].replace(gravity=(9.81, 0.0, -1.5))
        f = derive(wall).lambdify()
        ref = Pin(wall)
        ref.pm.gravity.linear[:] = [9.81, 0.0, -1.5]
        for q in states(wall, 10, seed=3)[0]:
            close(f.gravity_torques(q), ref.computeGeneralizedGravity(q))
            compared += 1
        up = derive(wall, gravity=(0.0, 0.0, -9.81)).lambdify()
        close(up.gravity_torques(q), Pin(wall).computeGeneralizedGravity(q))
    assert compared == 20


def test_skew_symmetry_and_symbolic_parameters(models, eoms):
    """M' - 2C is skew-symmetric (symbolically, modulo sin^2 + cos^2 = 1), and substituting
    the model's parameter values into the symbolic-parameter derivation gives the numbers."""
    eom = eoms["anthropomorphic_3link"]
    n = eom.dof
    Mdot = sp.zeros(n, n)
    for k in range(n):
        Mdot += eom.M.diff(eom.q[k]) * eom.qd[k]
    N = Mdot - 2 * eom.C
    S = N + N.T
    sc = {sp.sin(q): sp.Symbol(f"s{i}") for i, q in enumerate(eom.q)}
    sc.update({sp.cos(q): sp.Symbol(f"c{i}") for i, q in enumerate(eom.q)})
    basis = [sp.Symbol(f"s{i}") ** 2 + sp.Symbol(f"c{i}") ** 2 - 1 for i in range(n)]
    for e in S:
        poly = sp.expand(e.xreplace(sc))
        gens = sorted(poly.free_symbols, key=str)
        rem = sp.reduced(poly, basis, *gens)[1] if gens else poly
        assert all(abs(float(c)) < 1e-12 for c in sp.Poly(rem, *gens).coeffs()) if gens else abs(rem) < 1e-12
    sym = derive(models["anthropomorphic_3link"], symbolic_parameters=True)
    assert {str(s) for s in sym.parameters} >= {"m_frame2", "cx_frame2", "Iyy_frame3", "px_th3", "g"}
    f1, f2 = eom.lambdify(), sym.lambdify()
    Q, QD, QDD = states(models["anthropomorphic_3link"], 20, seed=3)
    close(f2.inverse_dynamics(Q, QD, QDD), f1.inverse_dynamics(Q, QD, QDD), 1e-12)
    # new parameter values: heavier third link, checked against Pinocchio on a modified model
    heavy = models["anthropomorphic_3link"].with_link_inertial("frame3", mass=2.5)
    ref = Pin(heavy, _urdf_text(heavy))
    f3 = sym.lambdify({"m_frame3": 2.5})
    for q, qd, qdd in zip(Q[:5], QD[:5], QDD[:5]):
        close(f3.inverse_dynamics(q, qd, qdd), ref.rnea(q, qd, qdd))


def _urdf_text(model: RobotModel) -> str:
    """The asset's text with the third link's mass replaced (for Pinocchio)."""
    import re

    text = Path(model.source).read_text()
    start = text.index('<link name="frame3"')
    head, tail = text[:start], text[start:]
    return head + re.sub(r'<mass value="[^"]*"', f'<mass value="{model.link_mass[model.link_index("frame3")]}"',
                         tail, count=1)


def test_fixed_links_are_merged(models):
    text = ARM3.read_text().replace("</robot>", TOOL.format(parent="frame3"))
    model = RobotModel.from_urdf_string(text)
    assert "tool" in model.link_names and model.dof == 3
    f = derive(model).lambdify()
    ref = Pin(model, text)
    Q, QD, QDD = states(model, 8, seed=11)
    for q, qd, qdd in zip(Q, QD, QDD):
        close(f.inverse_dynamics(q, qd, qdd), ref.rnea(q, qd, qdd))
        close(f.mass_matrix(q), ref.mass(q))
    # the tool changes the result (it is not silently dropped)
    q0 = Q[0]
    assert np.abs(f.gravity_torques(q0) - derive(models["anthropomorphic_3link"]).lambdify()
                  .gravity_torques(q0)).max() > 0.1


# ---------------------------------------------------------------------- C code
CC = shutil.which("cc") or shutil.which("gcc")

MAIN_C = r"""
#include <stdio.h>
#include <stdlib.h>
#include "{header}"
int main(int argc, char **argv) {{
    const int n = {prefix}_dof();
    double q[16], qd[16], qdd[16], M[256], C[256], g[16], tau[16];
    if (argc != 1 + 3 * n) return 1;
    for (int i = 0; i < n; ++i) {{
        q[i] = atof(argv[1 + i]); qd[i] = atof(argv[1 + n + i]); qdd[i] = atof(argv[1 + 2 * n + i]);
    }}
    {prefix}_mass_matrix(q, M);
    {prefix}_coriolis_matrix(q, qd, C);
    {prefix}_gravity_torques(q, g);
    {prefix}_inverse_dynamics(q, qd, qdd, tau);
    for (int i = 0; i < n * n; ++i) printf("%.17g ", M[i]);
    for (int i = 0; i < n * n; ++i) printf("%.17g ", C[i]);
    for (int i = 0; i < n; ++i) printf("%.17g ", g[i]);
    for (int i = 0; i < n; ++i) printf("%.17g ", tau[i]);
    printf("\n");
    return 0;
}}
"""


@pytest.mark.skipif(CC is None, reason="no system C compiler")
def test_generated_c_compiles_and_matches(models, eoms, tmp_path):
    from simbench import dynamics

    model, eom = models["mobile_manipulator"], eoms["mobile_manipulator"]
    src = eom.to_c(tmp_path / "mm_eom.c")
    assert src.exists() and src.with_suffix(".h").exists()
    main = tmp_path / "main.c"
    main.write_text(MAIN_C.format(header="mm_eom.h", prefix="mm_eom"))
    exe = tmp_path / "mm"
    res = subprocess.run([CC, "-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-O1",
                          "-o", str(exe), str(main), str(src), "-lm"], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    ref = Pin(model)
    n = model.dof
    Q, QD, QDD = states(model, 3, seed=5)
    for q, qd, qdd in zip(Q, QD, QDD):
        out = subprocess.run([str(exe), *[repr(float(x)) for x in (*q, *qd, *qdd)]],
                             capture_output=True, text=True, check=True).stdout.split()
        vals = np.array([float(x) for x in out])
        M, C = vals[:n * n].reshape(n, n), vals[n * n:2 * n * n].reshape(n, n)
        g, tau = vals[2 * n * n:2 * n * n + n], vals[2 * n * n + n:]
        close(M, ref.mass(q))
        close(C, ref.computeCoriolisMatrix(q, qd))
        close(g, ref.computeGeneralizedGravity(q))
        close(tau, ref.rnea(q, qd, qdd))
        close(tau, dynamics.inverse_dynamics(model, q, qd, qdd))

    # the shared-library route (ctypes), batched, on the 3D arm
    arm = eoms["anthropomorphic_3link"].compile(tmp_path / "arm_eom.c")
    ref = Pin(models["anthropomorphic_3link"])
    Q, QD, QDD = states(models["anthropomorphic_3link"], 6, seed=9)
    tau = arm.inverse_dynamics(Q, QD, QDD)
    M = arm.mass_matrix(Q)
    for i in range(len(Q)):
        close(tau[i], ref.rnea(Q[i], QD[i], QDD[i]))
        close(M[i], ref.mass(Q[i]))
        close(arm.coriolis_matrix(Q[i], QD[i]), ref.computeCoriolisMatrix(Q[i], QD[i]))


# ---------------------------------------------------------------------- refusals
def _chain(n: int, kind: str = "revolute") -> str:
    links = "".join(f'<link name="l{i}"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" '
                    f'izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>' for i in range(n + 1))
    joints = "".join(f'<joint name="j{i}" type="{kind}"><parent link="l{i}"/><child link="l{i + 1}"/>'
                     f'<origin xyz="0 0 0.1"/><axis xyz="0 1 0"/><limit lower="-1" upper="1" '
                     f'effort="1" velocity="1"/></joint>' for i in range(n))
    return f'<robot name="chain{n}">{links}{joints}</robot>'


def test_refusals():
    with pytest.raises(SimbenchError, match=r"not a serial chain.*panda_finger_joint2"):
        derive(RobotModel.from_urdf("pybullet_data:franka_panda/panda.urdf"))
    with pytest.raises(SimbenchError, match=r"8 degrees of freedom.*limited to 7"):
        derive(RobotModel.from_urdf_string(_chain(8)))
    with pytest.raises(SimbenchError, match="spherical"):
        derive(RobotModel.from_urdf_string(_chain(2, "spherical")))
    with pytest.raises(SimbenchError, match="simplify"):
        derive(RobotModel.from_urdf_string(_chain(1)), simplify="full")
    with pytest.raises(SimbenchError, match="gravity"):
        derive(RobotModel.from_urdf_string(_chain(1)), gravity=(0, 0))
    eom = derive(RobotModel.from_urdf_string(_chain(1)), symbolic_parameters=True)
    with pytest.raises(SimbenchError, match="unknown parameter 'm_l9'.*m_l1"):
        eom.lambdify({"m_l9": 1.0})


def test_missing_sympy_says_how_to_install():
    code = ("import sys; sys.modules['sympy'] = None\n"
            "try:\n    import simbench.dynamics.symbolic\n"
            "except ImportError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.stdout.strip() == ("simbench.dynamics.symbolic needs sympy, which is not installed; install the "
                                  "'symbolic' extra: pip install 'simbench[symbolic]'"), out.stdout + out.stderr


def test_parameter_values_that_cannot_be_used_name_the_parameter():
    """``lambdify({"m_fore": "x"})`` raised a bare "could not convert string to float: 'x'", and
    a model derived with numbers answered any name with "Valid parameter names: (none)". Oracle:
    the message names the parameter and its value (or the switch to derive with), and a valid
    override still changes g(q) as the closed form m g l cos q says."""
    model = RobotModel.from_urdf_string(_chain(1))
    eom = derive(model, symbolic_parameters=True)
    for bad, text in [("x", "'x'"), (None, "None"), (float("nan"), "nan"), ([1.0, 2.0], r"\[1.0, 2.0\]")]:
        with pytest.raises(SimbenchError, match=rf"^parameter m_l1 = {text}; expected a finite number \(the model's "):
            eom.lambdify({"m_l1": bad})
    with pytest.raises(SimbenchError, match=r"parameter 'm_l1' given, but .* hold numbers, not parameters; "
                                            r"derive with symbolic_parameters=True$"):
        derive(model).lambdify({"m_l1": 3.0})
    arm = derive(RobotModel.from_urdf("simbench:planar_2r.urdf"), symbolic_parameters=True)
    q = np.array([0.3, -0.7])
    g1, g3 = (arm.lambdify(v).gravity_torques(q) for v in ({}, {"g": 3 * 9.81}))   # g(q) is linear in g
    assert g1.shape == (2,) and np.allclose(g3, 3.0 * g1, rtol=1e-12) and np.abs(g1).min() > 0.1
