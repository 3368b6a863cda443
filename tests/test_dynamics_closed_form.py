"""Closed forms from the documents simbench grew from against simbench.dynamics (RNEA/CRBA path and Lagrangian path).

* slide 12 of the "AI Robotics" lecture slides, *Dynamics*: planar 2R with point masses (M, c, g exactly as written on the slide);
* Adam Heins, "Lagrangian dynamics of a planar mobile manipulator": planar mobile manipulator (the post's ManualDynamics formulas, G = 9.8);
* Naru Muraleedharan, "Dynamic Modeling of Robotic Systems": 3-link anthropomorphic arm, derived with sympy the way the post does it
  (kinetic energy with the pseudo-inertia tensor, H = d2K/dqd2, d, g = dU/dq).
"""
import numpy as np
import pytest

from _dyn_helpers import asset, rel_err, require
from simbench.model import RobotModel
import simbench.dynamics as dyn
from simbench.dynamics import lagrange

TOL = 1e-12
rng = np.random.default_rng(12)


# ---------------------------------------------------------------- slide 12: planar 2R
M1, M2, L1, L2, G0 = 1.2, 0.8, 0.6, 0.4, 9.81


def slide12(th, thd):
    t1, t2 = th
    d1, d2 = thd
    c2, s2 = np.cos(t2), np.sin(t2)
    M = np.array([[M1 * L1**2 + M2 * (L1**2 + 2 * L1 * L2 * c2 + L2**2), M2 * (L1 * L2 * c2 + L2**2)],
                  [M2 * (L1 * L2 * c2 + L2**2), M2 * L2**2]])
    c = np.array([-M2 * L1 * L2 * s2 * (2 * d1 * d2 + d2**2), M2 * L1 * L2 * d1**2 * s2])
    g = np.array([(M1 + M2) * L1 * G0 * np.cos(t1) + M2 * G0 * L2 * np.cos(t1 + t2),
                  M2 * G0 * L2 * np.cos(t1 + t2)])
    return M, c, g


@pytest.fixture(scope="module")
def planar():
    return RobotModel.from_urdf(asset("planar_2r.urdf"))


def test_planar_2r_slide_12(planar):
    assert planar.joint_names == ("theta1", "theta2")
    for _ in range(10):
        th = rng.uniform(-np.pi, np.pi, 2)
        thd, thdd = rng.normal(size=2) * 2, rng.normal(size=2)
        M, c, g = slide12(th, thd)
        tau = M @ thdd + c + g
        assert rel_err(dyn.mass_matrix(planar, th), M) < TOL
        assert rel_err(dyn.gravity_torques(planar, th), g) < TOL
        assert rel_err(dyn.bias_forces(planar, th, thd) - dyn.gravity_torques(planar, th), c) < 1e-11
        assert rel_err(dyn.inverse_dynamics(planar, th, thd, thdd), tau) < TOL
        assert rel_err(lagrange.inverse_dynamics(planar, th, thd, thdd), tau) < TOL
        assert rel_err(lagrange.mass_matrix(planar, th), M) < TOL
        assert rel_err(lagrange.gravity_torques(planar, th), g) < TOL
        assert rel_err(dyn.forward_dynamics(planar, th, thd, tau), thdd) < 1e-10


def test_planar_2r_kinematics(planar):
    th = np.array([0.3, -1.1])
    T = dyn.forward_kinematics(planar, th)
    tip = np.array([L1 * np.cos(th[0]) + L2 * np.cos(th.sum()), 0.0,
                    L1 * np.sin(th[0]) + L2 * np.sin(th.sum())])
    elbow = np.array([L1 * np.cos(th[0]), 0.0, L1 * np.sin(th[0])])
    assert np.allclose(T[planar.link_index("link2"), :3, 3], elbow, atol=1e-14)
    # the point mass of link 2 at (L2, 0, 0) of its frame is the tip
    J = dyn.link_jacobian(planar, th, "link2", point=[L2, 0, 0])
    Jtip = np.array([[-L1 * np.sin(th[0]) - L2 * np.sin(th.sum()), -L2 * np.sin(th.sum())],
                     [L1 * np.cos(th[0]) + L2 * np.cos(th.sum()), L2 * np.cos(th.sum())]])
    assert np.allclose(J[[3, 5]], Jtip, atol=1e-14)
    assert np.allclose(J[[0, 2]], 0.0) and np.allclose(J[1], [-1.0, -1.0])   # w = -y (th1' + th2')
    assert np.allclose(T[planar.link_index("link2"), :3, :3] @ [L2, 0, 0] + elbow, tip)
    # potential energy of the point masses
    P = M1 * G0 * elbow[2] + M2 * G0 * tip[2]
    assert abs(dyn.potential_energy(planar, th) - P) < 1e-12


# ---------------------------------------------------------------- Adam Heins: planar mobile manipulator
PM1, PM2, PM3, LX, LY, PL2, PL3 = 3.0, 2.0, 1.0, 0.1, 0.1, 1.0, 0.5
PI2, PI3 = PM2 * PL2**2 / 12, PM3 * PL3**2 / 12
PG = 9.8


def heins_manual_dynamics(q, dq):
    """The post's ManualDynamics (mass matrix, Christoffel array, gravity vector)."""
    x1, t2, t3 = q
    t23 = t2 + t3
    m11 = PM1 + PM2 + PM3
    m12 = -(0.5 * PM2 + PM3) * PL2 * np.sin(t2) - 0.5 * PM3 * PL3 * np.sin(t23)
    m13 = -0.5 * PM3 * PL3 * np.sin(t23)
    m22 = ((0.25 * PM2 + PM3) * PL2**2 + 0.25 * PM3 * PL3**2 + PM3 * PL2 * PL3 * np.cos(t3) + PI2 + PI3)
    m23 = 0.5 * PM3 * PL3 * (0.5 * PL3 + PL2 * np.cos(t3)) + PI3
    m33 = 0.25 * PM3 * PL3**2 + PI3
    M = np.array([[m11, m12, m13], [m12, m22, m23], [m13, m23, m33]])
    d2_12 = -0.5 * PM2 * PL2 * np.cos(t2) - PM3 * PL2 * np.cos(t2) - 0.5 * PM3 * PL3 * np.cos(t23)
    d2_13 = -0.5 * PM3 * PL3 * np.cos(t23)
    dM2 = np.array([[0, d2_12, d2_13], [d2_12, 0, 0], [d2_13, 0, 0]])
    d3_12 = -0.5 * PM3 * PL3 * np.cos(t23)
    d3_13 = -0.5 * PM3 * PL3 * np.cos(t23)
    d3_22 = -PM3 * PL2 * PL3 * np.sin(t3)
    d3_23 = -0.5 * PM3 * PL2 * PL3 * np.sin(t3)
    dM3 = np.array([[0, d3_12, d3_13], [d3_12, d3_22, d3_23], [d3_13, d3_23, 0]])
    dMdq = np.stack([np.zeros((3, 3)), dM2, dM3])
    Gam = dMdq.T - 0.5 * dMdq
    C = np.dot(dq, Gam)
    g = np.array([0, (0.5 * PM2 + PM3) * PG * PL2 * np.cos(t2) + 0.5 * PM3 * PL3 * PG * np.cos(t23),
                  0.5 * PM3 * PL3 * PG * np.cos(t23)])
    return M, C, g, dMdq


def test_mobile_manipulator_heins_lagrangian_post():
    model = RobotModel.from_urdf(asset("mobile_manipulator.urdf"))
    assert model.joint_names == ("x1", "theta2", "theta3")
    grav = (0.0, 0.0, -PG)
    for _ in range(10):
        q = np.array([rng.uniform(-2, 2), *rng.uniform(-np.pi, np.pi, 2)])
        dq, ddq = rng.normal(size=3), rng.normal(size=3)
        M, C, g, dMdq = heins_manual_dynamics(q, dq)
        tau = M @ ddq + C @ dq + g
        assert rel_err(dyn.mass_matrix(model, q), M) < TOL
        assert rel_err(dyn.gravity_torques(model, q, gravity=grav), g) < TOL
        assert rel_err(dyn.inverse_dynamics(model, q, dq, ddq, gravity=grav), tau) < TOL
        assert rel_err(lagrange.inverse_dynamics(model, q, dq, ddq, gravity=grav), tau) < TOL
        # the analytic dM/dq of the Lagrangian path against the post's hand derivatives
        assert rel_err(lagrange.mass_matrix_derivative(model, q), dMdq) < TOL
        # C differs as a matrix (the post's Gamma is not symmetrised) but C q' agrees
        assert rel_err(dyn.coriolis_matrix(model, q, dq) @ dq, C @ dq) < TOL


# ---------------------------------------------------------------- Naru Muraleedharan: anthropomorphic arm
A_PARAMS = dict(m1=2.0, J1=np.diag([0.012, 0.012, 0.02]), c1=[0, 0, 0],
                m2=1.5, J2=np.diag([0.004, 0.032, 0.03]), c2=[0.25, 0, 0], a2=0.5,
                m3=1.0, J3=np.diag([0.002, 0.014, 0.013]), c3=[0.2, 0, 0])


@pytest.fixture(scope="module")
def muraleedharan_functions():
    """H, d, g of Naru Muraleedharan's post with sympy: K = sum of 1/2 m r'^T r' + 1/2 tr(T' Jhat T'^T)
    + m r'^T T' rCM (Jhat = 1/2 tr(J) 1 - J, J about the frame origin), U = sum m g^T (r + T rCM)."""
    sp = require("sympy")
    th = sp.symbols("th1 th2 th3")
    thd = sp.symbols("th1d th2d th3d")
    q, qd = sp.Matrix(th), sp.Matrix(thd)

    def rotz(a):
        return sp.Matrix([[sp.cos(a), -sp.sin(a), 0], [sp.sin(a), sp.cos(a), 0], [0, 0, 1]])

    def roty(a):
        return sp.Matrix([[sp.cos(a), 0, sp.sin(a)], [0, 1, 0], [-sp.sin(a), 0, sp.cos(a)]])

    def chain_diff(y):
        return sum((y.diff(th[n]) * thd[n] for n in range(3)), sp.zeros(*y.shape))

    def about_origin(m, Jc, c):
        c = np.asarray(c, dtype=float)
        return np.asarray(Jc) + m * (c @ c * np.eye(3) - np.outer(c, c))

    P = A_PARAMS
    gvec = sp.Matrix([0, 0, 9.81])
    frames = [(P["m1"], about_origin(P["m1"], P["J1"], P["c1"]), P["c1"], sp.zeros(3, 1), rotz(th[0])),
              (P["m2"], about_origin(P["m2"], P["J2"], P["c2"]), P["c2"], sp.zeros(3, 1), roty(th[1])),
              (P["m3"], about_origin(P["m3"], P["J3"], P["c3"]), P["c3"], sp.Matrix([P["a2"], 0, 0]),
               roty(th[2]))]
    K, U = 0, 0
    r, T = sp.zeros(3, 1), sp.eye(3)
    for m, J, c, r_rel, T_rel in frames:
        r = r + T * r_rel
        T = T * T_rel
        rd, Td = chain_diff(r), chain_diff(T)
        Jm = sp.Matrix(J)
        rcm = sp.Matrix(c)
        Jhat = sp.Rational(1, 2) * Jm.trace() * sp.eye(3) - Jm
        K += sp.Rational(1, 2) * m * (rd.T * rd)[0, 0]
        K += sp.Rational(1, 2) * (Td * Jhat * Td.T).trace()
        K += m * (rd.T * Td * rcm)[0, 0]
        U += m * (gvec.T * (r + T * rcm))[0, 0]
    Kq = sp.Matrix([[K]])
    H = Kq.jacobian(qd).T.jacobian(qd)
    D = Kq.jacobian(qd).T.jacobian(q) * qd - Kq.jacobian(q).T
    G = sp.Matrix([[U]]).jacobian(q).T
    return (sp.lambdify([th, thd], H, "numpy"), sp.lambdify([th, thd], D, "numpy"),
            sp.lambdify([th], G, "numpy"))


def test_anthropomorphic_arm_muraleedharan(muraleedharan_functions):
    fH, fD, fG = muraleedharan_functions
    model = RobotModel.from_urdf(asset("anthropomorphic_3link.urdf"))
    assert model.joint_names == ("th1", "th2", "th3")
    for _ in range(8):
        q = rng.uniform(-np.pi, np.pi, 3)
        qd, qdd = rng.normal(size=3) * 2, rng.normal(size=3)
        H = np.array(fH(q, qd), dtype=float)
        d = np.array(fD(q, qd), dtype=float).ravel()
        g = np.array(fG(q), dtype=float).ravel()
        assert rel_err(dyn.mass_matrix(model, q), H) < 1e-12
        assert rel_err(dyn.gravity_torques(model, q), g) < 1e-12
        assert rel_err(dyn.bias_forces(model, q, qd) - g, d) < 1e-11
        tau = H @ qdd + d + g
        assert rel_err(dyn.inverse_dynamics(model, q, qd, qdd), tau) < 1e-12
        assert rel_err(lagrange.inverse_dynamics(model, q, qd, qdd), tau) < 1e-12


# ---------------------------------------------------------------- a free body and a floating base
FREE_BODY = """<robot name="box"><link name="box"><inertial><origin xyz="0.03 -0.02 0.05" rpy="0.3 -0.2 0.4"/>
  <mass value="2.5"/><inertia ixx="0.04" ixy="0.002" ixz="-0.001" iyy="0.03" iyz="0.003" izz="0.05"/>
  </inertial></link></robot>"""


def test_single_free_body_is_the_newton_euler_equations_of_rigid_body():
    """A one-link robot with a floating base: inverse and forward dynamics are Newton's and
    Euler's equations ``I xi' = F + ad_xi^T I xi`` of simbench.dynamics.rigid_body (Michael
    Bauer, "Rigid Body Dynamics on Lie Groups"), with v = [v; w] and the wrench [f; m]."""
    from simbench.dynamics import rigid_body as rb
    from simbench.spatial import quat_to_matrix

    model = RobotModel.from_urdf_string(FREE_BODY).with_floating_base()
    assert (model.nq, model.nv) == (7, 6)
    I = model.link_spatial_inertia[0]
    for _ in range(10):
        q = model.random_configuration(rng)
        v, a = rng.normal(size=6), rng.normal(size=6)
        xi, xid = np.r_[v[3:], v[:3]], np.r_[a[3:], a[:3]]
        g = np.eye(4)
        g[:3, :3] = quat_to_matrix(q[3:7])
        Fg = rb.gravity_wrench(g, model.total_mass, model.gravity, model.link_com[0])
        F = I @ xid - rb.coad(xi, I @ xi) - Fg            # the wrench the body needs, (m, f)
        assert rel_err(dyn.inverse_dynamics(model, q, v, a), np.r_[F[3:], F[:3]]) < 1e-13
        acc = rb.acceleration(I, xi, Fg)
        assert rel_err(dyn.forward_dynamics(model, q, v, np.zeros(6)), np.r_[acc[3:], acc[:3]]) < 1e-12


def test_floating_robot_held_still_needs_its_weight():
    """At rest, the base rows of g(q) are the robot's weight, upwards, in the base frame, and the
    moment of that weight about the base origin (sum of m_i c_i)."""
    from simbench.spatial import quat_to_matrix

    model = RobotModel.from_urdf("pybullet_data:a1/a1.urdf", floating_base=True)
    for _ in range(5):
        q = model.random_configuration(rng)
        R = quat_to_matrix(q[3:7])
        g = dyn.gravity_torques(model, q)
        f_world = -model.total_mass * np.asarray(model.gravity)
        assert rel_err(g[:3], R.T @ f_world) < 1e-13
        c = dyn.center_of_mass(model, q) - q[:3]          # COM relative to the base, world
        assert rel_err(g[3:6], R.T @ np.cross(c, f_world)) < 1e-12
