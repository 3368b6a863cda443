"""Per-robot torque plots of ``simbench check --plot``: the dynamics under test, PyBullet's and
Pinocchio's joint torques along a smooth trajectory, and the difference to the reference the
verdict used (PyBullet, or the true dynamics where PyBullet is shown wrong). Needs matplotlib
(the ``plot`` extra)."""
from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np

from ..errors import SimbenchError
from ..model import RobotModel
from .bullet import BulletRobot, captured_output
from .checker import pinocchio_voice
from .dynamics import Dynamics, SimbenchDynamics
from .targets import Target
from .usercode import UserCodeFault


def smooth_trajectory(model: RobotModel, n: int = 200, duration: float = 4.0
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``t, q, qd, qdd`` of ``q_i(t) = c_i + a_i sin(w_i t + phi_i)`` inside the limits."""
    lo, hi = np.array(model.lower), np.array(model.upper)
    finite = np.isfinite(lo) & np.isfinite(hi) & (lo <= hi)
    c = np.where(finite, 0.5 * (np.where(finite, lo, 0) + np.where(finite, hi, 0)), 0.0)
    a = np.where(finite, np.minimum(0.45 * (np.where(finite, hi, 1) - np.where(finite, lo, 0)), 1.0), 1.0)
    k = np.arange(model.dof)
    w = 2 * math.pi * (0.25 + 0.1 * (k % 5))
    phi = 0.7 * k
    t = np.linspace(0.0, duration, n)[:, None]
    s, co = np.sin(w * t + phi), np.cos(w * t + phi)
    return t[:, 0], c + a * s, a * w * co, -a * w * w * s


def _pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise SimbenchError("--plot needs matplotlib: pip install 'simbench[plot]'") from None
    return plt


def plot_robot(target: Target, out_dir: str | Path, dyn: Dynamics, *, max_joints: int = 12,
               n: int = 200, against_true: bool = False) -> Path:
    """A PNG (``out_dir/<robot>.png``, or ``out_dir`` itself when it ends in ``.png``) of per-joint torque along :func:`smooth_trajectory`: the dynamics under test,
    PyBullet, Pinocchio, and the difference of the dynamics under test to the verdict's
    reference: PyBullet, or with ``against_true`` the true dynamics (simbench.dynamics on the
    model, drawn too), as when the verdict says ``vs true``. Raises what ``dyn.evaluate`` raises
    for a faulty user function (:class:`~simbench.check.usercode.UserCodeFault`), its sample
    named as the trajectory's point."""
    plt = _pyplot()
    with BulletRobot(target.load) as bullet:
        model, _ = target.model_in(bullet)
        t, q, qd, qdd = smooth_trajectory(model, n)
        with captured_output():
            tau_b = bullet.inverse_dynamics(q, qd, qdd)
    try:
        tau, _ = dyn.evaluate(model, q, qd, qdd, with_M=False)  # the torques only: n calls of a user function
    except UserCodeFault as fault:  # its "sample" is a point of this trajectory, not one of the check's
        raise UserCodeFault(fault.verdict, re.sub(r"\b(at|on) (\d+ )?samples?\b( (\d+))?", lambda m: (
            f"at point {m.group(4)} of the {n}-point plot trajectory" if m.group(4) else
            f"on the {n}-point plot trajectory"), fault.message)) from None
    tau_ref = SimbenchDynamics().tau(model, q, qd, qdd) if against_true else tau_b
    ref_name = "true" if against_true else "PyBullet"
    who = "ours" if dyn.label == "simbench.dynamics" else dyn.label
    voice = pinocchio_voice(model, q, qd, qdd, target.xml) if target.scale == 1.0 else "scaled"
    tau_p = None if isinstance(voice, str) else voice[0]
    nj = min(model.dof, max_joints)
    cols = min(3, nj + 1)
    rows = math.ceil((nj + 1) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 2.6 * rows), squeeze=False)
    for i in range(nj):
        ax = axes.flat[i]
        ax.plot(t, tau_b[:, i], color="k", lw=2.5, alpha=0.35, label="PyBullet")
        ax.plot(t, tau[:, i], color="C0", lw=1.2, label=dyn.label.split(" ")[0])
        if tau_p is not None:
            ax.plot(t, tau_p[:, i], color="C1", lw=1, ls="--", label="Pinocchio")
        if against_true:
            ax.plot(t, tau_ref[:, i], color="C2", lw=1, ls=":", label="true (simbench.dynamics)")
        ax.set_title(model.joint_names[i], fontsize=9)
        ax.set_ylabel("N m / N", fontsize=8)
        ax.tick_params(labelsize=7)
    axes.flat[0].legend(fontsize=7)
    ax = axes.flat[nj]
    for i in range(nj):
        ax.semilogy(t, np.abs(tau - tau_ref)[:, i] + 1e-18, lw=1, label=model.joint_names[i])
    ax.set_title(f"|{who} - {ref_name}|", fontsize=9)
    ax.legend(fontsize=6)
    ax.set_xlabel("t [s]", fontsize=8)
    ax.tick_params(labelsize=7)
    for extra in list(axes.flat)[nj + 1:]:
        extra.axis("off")
    fig.suptitle(f"{target.label}: joint torque along a smooth trajectory", fontsize=10)
    fig.tight_layout()
    png = Path(out_dir) if is_png(out_dir) else Path(out_dir) / f"{file_stem(target.label)}.png"
    png.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(png, dpi=80)
    plt.close(fig)
    return png


def is_png(path: str | Path) -> bool:
    """True when ``--plot`` names one PNG file (``torques.png``), not a folder."""
    return Path(path).suffix.lower() == ".png" and not Path(path).is_dir()


def file_stem(label: str) -> str:
    """A robot's label as a file name: characters other than letters, digits, ``-_.`` become ``_``."""
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in label)


__all__ = ["smooth_trajectory", "plot_robot", "is_png", "file_stem"]
