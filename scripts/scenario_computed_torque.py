"""Computed-torque control of the KUKA iiwa in PyBullet's torque mode, with the torques from
*our* inverse dynamics (``simbench.dynamics.inverse_dynamics``)::

    tau = M(q) (q''_d + Kp e + Kd e') + h(q, q') = inverse_dynamics(model, q, q', q''_d + Kp e + Kd e')

with ``e = q_d - q``. If our model of the robot is the one PyBullet simulates, the feedback
terms have nothing to correct and the error stays near zero even with the small gains used
here (Kp = 25 1/s^2, Kd = 10 1/s). The run has two halves: first with our model, then with a
deliberately wrong one (the mass of ``lbr_iiwa_link_4`` doubled), which tracks visibly worse.
The maximum errors are printed and a plot of desired vs actual is saved to
``OUT/computed_torque.png``.

Two PyBullet details matter at this level of agreement (measured numbers in the docstring of
``tests/test_sim_scenarios.py``):

* PyBullet adds damping our model does not have: the URDF's joint damping (0.5 N m s/rad on
  every joint, applied explicitly, which makes the light link 7 ring) and a default velocity
  damping of 0.04 on every link. The scenario switches both off (``change_dynamics``); with
  them on, the error with our undamped model grows to about 1 rad.
* PyBullet integrates with semi-implicit Euler: ``q'_{k+1} = q'_k + dt q''_k``, then
  ``q_{k+1} = q_k + dt q'_{k+1}``. Its velocities therefore sit half a step behind its
  positions (``q'_k ~ q'(t_k - dt/2)``), so the controller compares them with
  ``q'_d(t - dt/2)``. Ignoring this leaves a lag error of about ``dt/2 |q'_d|`` (6 mrad here).

Run it: ``simbench run scripts/scenario_computed_torque.py [--gui] [--record ct.gif]``.
"""
import sys
from pathlib import Path

import numpy as np

from simbench.dynamics import inverse_dynamics
from simbench.plotting import save_figure, stacked_axes

SCENE = {"robot": "robot",
         "body": [{"name": "ground", "urdf": "pybullet_data:plane.urdf", "fixed_base": True},
                  {"name": "robot", "urdf": "pybullet_data:kuka_iiwa/model.urdf", "fixed_base": True}]}
DURATION = 8.0      # s: half with our model, half with the wrong one
CAMERA = {"target": (0.0, 0.0, 0.6), "distance": 2.4, "yaw": 225.0, "pitch": -20.0}
KP, KD = 25.0, 10.0
WRONG_LINK = "lbr_iiwa_link_4"

# a smooth trajectory inside the joint limits that keeps the arm off the ground
Q_MID = np.array([0.0, 0.5, 0.0, -1.0, 0.0, 0.6, 0.0])
AMP = np.array([0.6, 0.5, 0.6, 0.7, 0.8, 0.8, 1.0])
OMEGA = 2 * np.pi * np.array([0.30, 0.25, 0.35, 0.30, 0.40, 0.45, 0.50])


def desired(t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """q_d, q'_d, q''_d at time t (s): a sine per joint."""
    s, c = np.sin(OMEGA * t), np.cos(OMEGA * t)
    return Q_MID + AMP * s, AMP * OMEGA * c, -AMP * OMEGA ** 2 * s


def switch_off_pybullet_damping(robot) -> None:
    """PyBullet's joint damping (from the URDF) and default link damping (0.04) are not in the
    rigid-body model; switch them off so that PyBullet simulates exactly M q'' + h = tau."""
    robot.change_dynamics(linearDamping=0.0, angularDamping=0.0, jointDamping=0.0)


def track(sim, model, seconds: float, kp: float = KP, kd: float = KD) -> dict:
    """Computed-torque tracking of :func:`desired` for ``seconds`` (or until the run stops);
    the trajectory clock starts at 0. Returns the log and the error statistics (rad)."""
    robot, dt = sim.robot, sim.dt
    q0, _, _ = desired(0.0)
    robot.reset(q0, desired(-dt / 2)[1])  # PyBullet's velocity lags half a step (docstring)
    start = sim.t
    n = int(round(seconds / dt))
    log_t, log_q = [], []
    for _ in range(n):
        if not sim.running:
            break
        tt = sim.t - start
        q, qd = robot.state()
        q_des, _, qdd_des = desired(tt)
        qd_des = desired(tt - dt / 2)[1]
        tau = inverse_dynamics(model, q, qd, qdd_des + kp * (q_des - q) + kd * (qd_des - qd))
        robot.set_torques(tau)
        log_t.append(tt), log_q.append(q)
        sim.step()
    t = np.array(log_t)
    q = np.array(log_q).reshape(len(t), robot.dof)
    q_des = np.array([desired(x)[0] for x in t]).reshape(q.shape)
    err = np.abs(q_des - q)
    return {"t": t, "q": q, "q_des": q_des,
            "max_error": float(err.max()) if len(t) else float("nan"),
            "rms_error": float(np.sqrt(np.mean(err ** 2))) if len(t) else float("nan"),
            "max_error_per_joint": err.max(axis=0) if len(t) else np.full(robot.dof, np.nan)}


def wrong_model(model, link: str = WRONG_LINK):
    """Our model with one link's mass doubled."""
    return model.with_link_inertial(link, mass=2.0 * model.link_mass[model.link_index(link)])


def plot(ours: dict, wrong: dict, path: Path, joint_names) -> Path | None:
    made = stacked_axes(2)
    if made is None:
        return None
    fig, (ax1, ax2) = made
    for j, color in ((1, "C0"), (3, "C1"), (5, "C2")):
        for run, style, label in ((ours, "-", "our model"), (wrong, "--", f"{WRONG_LINK} mass x2")):
            if len(run["t"]):
                ax1.plot(run["t"], run["q"][:, j], style, color=color, label=f"{joint_names[j]}, {label}")
        if len(ours["t"]):
            ax1.plot(ours["t"], ours["q_des"][:, j], ":", color="k", lw=1)
    ax1.set_ylabel("q (rad); dotted: desired")
    ax1.legend(fontsize=7, ncol=2)
    for run, label in ((ours, "our model"), (wrong, f"{WRONG_LINK} mass x2")):
        if len(run["t"]):
            ax2.semilogy(run["t"], np.maximum(np.abs(run["q_des"] - run["q"]).max(axis=1), 1e-12),
                         label=f"{label}: max {run['max_error']:.2e} rad")
    ax2.set_xlabel("t (s)")
    ax2.set_ylabel("max_j |q_d - q| (rad)")
    ax2.set_title(f"computed-torque tracking, Kp = {KP:g}, Kd = {KD:g}")
    ax2.legend()
    return save_figure(fig, path)


def main(sim):
    total = sim.duration if sim.duration is not None else DURATION
    switch_off_pybullet_damping(sim.robot)
    model = sim.model
    ours = track(sim, model, total / 2)
    wrong = track(sim, wrong_model(model), total / 2)
    png = plot(ours, wrong, Path(sim.out_dir) / "computed_torque.png", sim.robot.joint_names)
    print(f"computed torque, Kp = {KP:g}, Kd = {KD:g}, dt = {sim.dt:.6g} s")
    print(f"  our model:            max |q_d - q| = {ours['max_error']:.3e} rad over {len(ours['t'])} steps")
    print(f"  {WRONG_LINK} mass x2: max |q_d - q| = {wrong['max_error']:.3e} rad over {len(wrong['t'])} steps")
    if png:
        print(f"  plot: {png}")
    return {"max_error_ours": ours["max_error"], "rms_error_ours": ours["rms_error"],
            "max_error_wrong": wrong["max_error"], "rms_error_wrong": wrong["rms_error"],
            "steps_ours": len(ours["t"]), "steps_wrong": len(wrong["t"]), "plot": png}


if __name__ == "__main__":
    from simbench.runner import main as _run

    raise SystemExit(_run([__file__, *sys.argv[1:]]))
