"""A floating quadruped (pybullet_data's a1, ``fixed_base = false``) far from any ground: our
``simulate`` next to PyBullet's stepping from the same state, in two phases.

1. Free fall from rest, zero joint torque. The closed form: the base accelerates at g
   (``R^T g`` in the base frame), every joint acceleration is 0, so the joints and the base
   orientation stay put and ``z(t) = z0 - g t^2 / 2``.
2. Zero gravity, joint torques from a PD law tracking a sine per joint (the legs swing), from
   rest. The torques are internal: no external force or torque acts, so linear and angular
   momentum are conserved (zero from rest) while the base turns and shifts in reaction.

Two robots hang side by side: ``pybullet``, stepped by PyBullet (its default velocity damping
and the joint motors off, torques held through each step), and ``ours``, posed at every step
from our RK4 integration (``simulate_model``, on SE(3) for the base). We also integrate with our
semi-implicit Euler (not shown). Momentum is evaluated on every state with our model:
``p = sum m_i v_ci``, ``L = sum (R_i I_i R_i^T w_i + m_i c_i x v_ci)`` about the world origin
(Featherstone, *Rigid Body Dynamics Algorithms*, section 2.13).

What the numbers show (measured at 240 Hz, 1 s per phase; the test asserts them):

* free fall: our forward dynamics gives base acceleration g and joint accelerations 0 to
  ~1e-14; RK4 keeps ``z0 - g t^2 / 2`` to 3e-14 m (exact for a quadratic); PyBullet lags it by
  exactly ``g dt t / 2`` (2.0e-2 m after 1 s), the closed form of semi-implicit Euler
  (``v += dt a``, then ``x += dt v``), and its joints do not move (1e-14 rad);
* zero gravity: our RK4 keeps both momenta at zero to 1e-6 kg m/s and 3e-5 kg m^2/s (fourth
  order: 1e-10 and 3e-9 at 2400 Hz); PyBullet's momenta wander to ~0.1 kg m/s and ~2.4
  kg m^2/s, like our own semi-implicit Euler's (0.10 and 2.5), and shrink at first order with
  dt (our semi-implicit Euler at 960 Hz: 0.025 and 0.65): PyBullet is a first-order method on
  the same equations of motion, so the two trajectories part by its integration error (~0.1
  rad on the joints after 1 s here), not by a modelling difference.

Run it: ``simbench run scripts/scenario_quadruped.py [--gui] [--record dog.gif]``; the plot
``OUT/quadruped.png`` has the base height, a joint angle and the momenta.
"""
import sys
from pathlib import Path

import numpy as np

from simbench.dynamics import forward_dynamics, link_com_jacobians, simulate_model
from simbench.plotting import save_figure, stacked_axes

URDF = "pybullet_data:a1/a1.urdf"
HEIGHT = 30.0  # m: the free fall must not reach anything
SCENE = {"robot": "pybullet", "gravity": [0, 0, -9.81],
         "body": [{"name": "pybullet", "urdf": URDF, "position": [0, -0.5, HEIGHT]},
                  {"name": "ours", "urdf": URDF, "position": [0, 0.5, HEIGHT], "collision_mask": 0}]}
DURATION = 2.0  # s: half free fall, half zero gravity
CAMERA = {"target": (0.0, 0.0, HEIGHT), "distance": 2.5, "yaw": 50.0, "pitch": -20.0}
#: joint pose of both phases (hip, thigh, calf per leg)
Q_JOINTS = np.array([0.0, 0.8, -1.6] * 4)
SWING = 0.4     # rad, amplitude of the phase-2 joint targets
FREQ = 1.5      # Hz
KP, KD = 5.0, 0.1  # N m/rad, N m s/rad


def momentum(model, q, v):
    """World-frame linear momentum (..., 3) and angular momentum about the world origin (..., 3)."""
    T, J = link_com_jacobians(model, q)
    twist = np.einsum("...lij,...j->...li", J, v)      # per link [w; v_com], world-aligned
    w, vc = twist[..., :3], twist[..., 3:]
    R = T[..., :3, :3]
    c = T[..., :3, 3] + np.einsum("...lij,lj->...li", R, model.link_com)
    m = np.asarray(model.link_mass)
    I_world = np.einsum("...lij,ljk,...lmk->...lim", R, model.link_inertia, R)
    p = np.einsum("l,...li->...i", m, vc)
    L = (np.einsum("...lij,...lj->...i", I_world, w)
         + np.einsum("l,...li->...i", m, np.cross(c, vc)))
    return p, L


def torques(t: float, q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Joint torques (12,) of phase 2: ``KP (q* - q) - KD q'`` with targets
    ``q*(t) = Q_JOINTS + SWING sin(2 pi FREQ t + 0.7 j)``."""
    target = Q_JOINTS + SWING * np.sin(2 * np.pi * FREQ * t + np.arange(12) * 0.7)
    return KP * (target - q[7:]) - KD * v[6:]


def start_state(model, y: float) -> tuple[np.ndarray, np.ndarray]:
    q = np.r_[0.0, y, HEIGHT, 0.0, 0.0, 0.0, 1.0, Q_JOINTS]
    return q, np.zeros(model.nv)


def run_phase(sim, model, seconds: float, controller) -> dict:
    """Both robots from the same state for ``seconds``; our trajectories (RK4, semi-implicit)
    and PyBullet's, in our (q, v)."""
    pb, ghost = sim.handle("pybullet"), sim.handle("ours")
    q0, v0 = start_state(model, -0.5)
    n = round(seconds / sim.dt)
    ctrl = None if controller is None else (lambda t, q, v: np.r_[np.zeros(6), controller(t, q, v)])
    ours = {m: simulate_model(model, q0, v0, sim.dt, n, ctrl, method=m) for m in ("rk4", "semi_implicit")}
    shift = np.r_[0.0, 1.0, 0.0]  # the ghost flies 1 m to the side
    pb.set_model_state(q0, v0)
    t0 = sim.t
    log = [pb.model_state()]

    def advance(sim) -> None:
        k = len(log)
        q = ours["rk4"].q[min(k, n)].copy()
        q[:3] += shift
        ghost.set_model_state(q, ours["rk4"].qd[min(k, n)])
        log.append(pb.model_state())
        if controller is not None:  # held through the next step, as our integrators do
            pb.set_torques(controller(k * sim.dt, *log[-1]))

    if controller is not None:
        pb.set_torques(controller(0.0, q0, v0))
    sim.run_until(t0 + n * sim.dt - 1e-9, advance)
    Q = np.array([s[0] for s in log])[:n + 1]
    V = np.array([s[1] for s in log])[:n + 1]
    return {"t": ours["rk4"].t[:len(Q)], "rk4": (ours["rk4"].q[:len(Q)], ours["rk4"].qd[:len(Q)]),
            "semi_implicit": (ours["semi_implicit"].q[:len(Q)], ours["semi_implicit"].qd[:len(Q)]),
            "pybullet": (Q, V)}


def main(sim):
    import pybullet as p

    total = sim.duration if sim.duration is not None else DURATION
    half = total / 2
    pb = sim.handle("pybullet")
    pb.change_dynamics(linearDamping=0.0, angularDamping=0.0, jointDamping=0.0)
    pb.release()  # motors off: torque control with zero torque
    model = sim.model  # floating base, gravity (0, 0, -9.81)
    g = np.array(model.gravity)

    # ---- phase 1: free fall from rest
    q0, v0 = start_state(model, -0.5)
    a0 = forward_dynamics(model, q0, v0, np.zeros(model.nv))
    fall = run_phase(sim, model, half, None)
    t = fall["t"]
    z_closed = q0[2] + 0.5 * g[2] * t ** 2
    res = {"duration": 2 * float(t[-1]), "dt": sim.dt,
           "fall_accel_base_error": float(np.abs(a0[:3] - g).max()),  # identity orientation: R^T g = g
           "fall_accel_angular_max": float(np.abs(a0[3:6]).max()),
           "fall_accel_joints_max": float(np.abs(a0[6:]).max())}
    for k in ("rk4", "semi_implicit", "pybullet"):
        Q, V = fall[k]
        res[f"fall_z_error_{k}"] = float(np.abs(Q[:, 2] - z_closed).max())
        res[f"fall_joint_drift_{k}"] = float(np.abs(Q[:, 7:] - Q_JOINTS).max())
    res["fall_z_error_pybullet_expected"] = float(abs(g[2]) * sim.dt * t[-1] / 2)  # semi-implicit: g dt t / 2

    # ---- phase 2: zero gravity, joint torques
    p.setGravity(0, 0, 0, physicsClientId=sim.client)
    model0 = model.replace(gravity=(0.0, 0.0, 0.0))
    swim = run_phase(sim, model0, half, torques)
    P, Lm = {}, {}
    for k in ("rk4", "semi_implicit", "pybullet"):
        P[k], Lm[k] = momentum(model0, *swim[k])
        res[f"momentum_linear_max_{k}"] = float(np.abs(P[k]).max())
        res[f"momentum_angular_max_{k}"] = float(np.abs(Lm[k]).max())
    Qr, Qs, Qp = swim["rk4"][0], swim["semi_implicit"][0], swim["pybullet"][0]
    res["swim_joint_range"] = float(np.ptp(Qr[:, 7:], axis=0).max())
    res["swim_base_turn_rad"] = float(2 * np.arccos(min(1.0, abs(Qr[-1, 6]))))
    res["swim_dq_joints_semi_implicit_vs_pybullet"] = float(np.abs(Qs[:, 7:] - Qp[:, 7:]).max())
    res["swim_dq_joints_rk4_vs_pybullet"] = float(np.abs(Qr[:, 7:] - Qp[:, 7:]).max())
    res["swim_dbase_rk4_vs_pybullet"] = float(np.abs(Qr[:, :3] - Qp[:, :3]).max())
    res["plot"] = plot(fall, swim, z_closed, P, Lm, Path(sim.out_dir) / "quadruped.png")
    report(res, model)
    return res


def report(r: dict, model) -> None:
    print(f"a1 with a floating base (nq = {model.nq}, nv = {model.nv}), dt = {r['dt']:.6g} s, "
          f"{r['duration'] / 2:.2f} s per phase, no contacts")
    print(f"  free fall from rest: forward dynamics gives base acceleration g to {r['fall_accel_base_error']:.1e}, "
          f"angular {r['fall_accel_angular_max']:.1e}, joints {r['fall_accel_joints_max']:.1e} rad/s^2")
    print(f"    |z - (z0 - g t^2/2)|: ours RK4 {r['fall_z_error_rk4']:.1e} m, PyBullet {r['fall_z_error_pybullet']:.2e} m "
          f"(semi-implicit Euler lags by g dt t / 2 = {r['fall_z_error_pybullet_expected']:.2e} m); joints moved "
          f"{r['fall_joint_drift_rk4']:.1e} (ours), {r['fall_joint_drift_pybullet']:.1e} rad (PyBullet)")
    print(f"  zero gravity, PD joint torques tracking {SWING:g} rad sines at {FREQ:g} Hz: joints swing over "
          f"{r['swim_joint_range']:.2f} rad, the base turns {r['swim_base_turn_rad']:.3f} rad in reaction")
    print(f"    momentum (zero from rest), max |p| / max |L|: ours RK4 {r['momentum_linear_max_rk4']:.1e} / "
          f"{r['momentum_angular_max_rk4']:.1e}, PyBullet {r['momentum_linear_max_pybullet']:.1e} / "
          f"{r['momentum_angular_max_pybullet']:.1e} (kg m/s, kg m^2/s)")
    print(f"    joints, ours semi-implicit vs PyBullet: {r['swim_dq_joints_semi_implicit_vs_pybullet']:.1e} rad "
          f"(both first order, the base integrated differently); ours RK4 vs PyBullet: "
          f"{r['swim_dq_joints_rk4_vs_pybullet']:.1e} rad, base {r['swim_dbase_rk4_vs_pybullet']:.1e} m "
          f"(PyBullet's first-order integration error)")
    if r["plot"]:
        print(f"  plot: {r['plot']}")


def plot(fall, swim, z_closed, P, Lm, path: Path):
    made = stacked_axes(3, figsize=(10, 9))
    if made is None:
        return None
    fig, (ax1, ax2, ax3) = made
    t1, t2 = fall["t"], swim["t"]
    ax1.plot(t1, z_closed, "k-", lw=3, alpha=0.3, label="closed form z0 - g t^2/2")
    for k, style in (("rk4", "--"), ("pybullet", ":")):
        ax1.plot(t1, fall[k][0][:, 2], style, label=f"base z, {'ours (RK4)' if k == 'rk4' else 'PyBullet'}")
    ax1.set_ylabel("free fall: base z (m)")
    ax1.legend(fontsize=8)
    for k, style in (("rk4", "-"), ("pybullet", ":")):
        ax2.plot(t2, swim[k][0][:, 8], style, label=f"FR thigh, {'ours (RK4)' if k == 'rk4' else 'PyBullet'}")
        ax2.plot(t2, swim[k][0][:, 9], style, label=f"FR calf, {'ours (RK4)' if k == 'rk4' else 'PyBullet'}")
    ax2.set_ylabel("zero gravity: joint (rad)")
    ax2.legend(fontsize=8, ncol=2)
    for k, style in (("rk4", "-"), ("pybullet", ":")):
        name = "ours (RK4)" if k == "rk4" else "PyBullet"
        ax3.semilogy(t2, np.linalg.norm(P[k], axis=1) + 1e-18, style, label=f"|p|, {name}")
        ax3.semilogy(t2, np.linalg.norm(Lm[k], axis=1) + 1e-18, style, label=f"|L|, {name}")
    ax3.set_ylabel("momentum (zero from rest)")
    ax3.set_xlabel("t (s) within the phase")
    ax3.legend(fontsize=8, ncol=2)
    return save_figure(fig, path)


if __name__ == "__main__":
    from simbench.runner import main as _run

    raise SystemExit(_run([__file__, *sys.argv[1:]]))
