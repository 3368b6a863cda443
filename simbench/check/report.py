"""What ``simbench check`` concludes: verdicts, error measures, causes, and the report as a
text table, JSON and Markdown.

Verdicts, one per robot:

* ``PASS``: the dynamics under test match PyBullet within the tolerance;
* ``EXPLAINED``: they differ, and every difference is reproduced by a demonstrated change that
  PyBullet makes to the model or to the inputs (:mod:`simbench.check.causes`);
* ``FAIL``: they differ unexplained, or the dynamics under test returned non-finite torques;
* ``ERROR``: the dynamics under test could not be evaluated (its module does not import, it
  raised, it returned something that is not torques, it did not return within the timeout);
* ``SKIPPED``: nothing could be compared (PyBullet or simbench refuses the model), with the
  reason in one line.

Exit status of a report: 130 when it was interrupted (Ctrl-C), 143 after SIGTERM; 1 on any ``FAIL`` or ``ERROR``
(and ``EXPLAINED`` with ``strict``) and when nothing at all was compared (only ``SKIPPED``); 0
otherwise.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

PASS, EXPLAINED, FAIL, ERROR, SKIPPED = "PASS", "EXPLAINED", "FAIL", "ERROR", "SKIPPED"
VERDICTS = (PASS, EXPLAINED, FAIL, ERROR, SKIPPED)
INTERRUPTED = 130  # the exit status after Ctrl-C (128 + SIGINT)
#: how the reason of a robot that an interrupted check did not finish starts (verdict SKIPPED)
NOT_CHECKED = "not checked: "
TERMINATED = 143   # the exit status after SIGTERM (128 + SIGTERM)


@dataclass
class Errors:
    """Max abs / relative errors of ``tau`` and ``M`` (relative to the largest reference value)."""

    tau_abs: float
    tau_rel: float
    M_abs: float
    M_rel: float
    tau_scale: float = 1.0
    M_scale: float = 1.0

    def within(self, tol: float) -> bool:
        """``max|tau - tau_ref| <= tol max(1, max|tau_ref|)`` and the same for ``M``."""
        return (self.tau_abs <= tol * max(1.0, self.tau_scale)
                and self.M_abs <= tol * max(1.0, self.M_scale))

    def brief(self) -> str:
        return f"tau {self.tau_abs:.2e} ({self.tau_rel:.1e} rel), M {self.M_abs:.2e} ({self.M_rel:.1e} rel)"

    def as_dict(self) -> dict[str, float | None]:
        return {k: _num(v) for k, v in asdict(self).items()}

    @classmethod
    def from_dict(cls, data: dict[str, float | None]) -> "Errors":
        return cls(**{k: (math.inf if v is None else v) for k, v in data.items()})


def measure(tau: np.ndarray, M: np.ndarray, tau_ref: np.ndarray, M_ref: np.ndarray) -> Errors:
    """:class:`Errors` of ``(tau, M)`` against a reference; infinite when anything is not finite."""
    ts, ms = float(np.abs(tau_ref).max(initial=0.0)), float(np.abs(M_ref).max(initial=0.0))
    if not (np.all(np.isfinite(tau)) and np.all(np.isfinite(M))):
        return Errors(math.inf, math.inf, math.inf, math.inf, ts, ms)
    ta, ma = float(np.abs(tau - tau_ref).max(initial=0.0)), float(np.abs(M - M_ref).max(initial=0.0))
    return Errors(ta, ta / ts if ts else ta, ma, ma / ms if ms else ma, ts, ms)


@dataclass
class Cause:
    """A demonstrated reason for a disagreement: ``before`` is the error with every other
    suspected change applied but this one, ``after`` with all of them applied."""

    kind: str
    links: list[str]
    message: str
    before: Errors
    after: Errors

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "links": list(self.links), "message": self.message,
                "before": self.before.as_dict(), "after": self.after.as_dict()}

    def line(self) -> str:
        return (f"{self.kind} [{', '.join(self.links)}]: tau error {self.before.tau_abs:.2e} -> "
                f"{self.after.tau_abs:.2e}, M error {self.before.M_abs:.2e} -> {self.after.M_abs:.2e}")


@dataclass
class RobotResult:
    """The outcome for one robot. ``errors`` compares the dynamics under test (on the model as
    the target describes it) with PyBullet."""

    target: str
    name: str = ""
    path: str = ""
    verdict: str = SKIPPED
    reason: str = ""
    dof: int = 0
    samples: int = 0
    errors: Errors | None = None
    causes: list[Cause] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    worst: dict[str, Any] | None = None
    pinocchio: dict[str, Any] | None = None
    seconds: float = 0.0
    looks_like: str | None = None  # a verified guess at what a user's FAILing dynamics got wrong
    #: a user's dynamics judged against the true dynamics (PyBullet shown wrong): its errors there,
    #: the numbers the table shows (``errors`` stays against PyBullet)
    errors_true: Errors | None = None

    @property
    def shown_errors(self) -> Errors | None:
        """The errors a table shows: against the judge (the true dynamics when PyBullet is wrong)."""
        return self.errors_true if self.errors_true is not None else self.errors

    def line(self) -> str:
        """One line: verdict, target, errors, and the reason or the causes."""
        shown = self.shown_errors
        err = (shown.brief() + (" vs true" if self.errors_true is not None else "")) if shown else ""
        why = self.reason or ", ".join(f"{c.kind} [{', '.join(c.links)}]" for c in self.causes)
        text = f"{self.verdict:<9s} {self.target:<48s} {err}" + (f"  {why}" if why else "")
        return " ".join(text.split("\n"))

    def worst_line(self) -> str:
        """The worst disagreement as a reproducible state ('' when there is none): the state
        itself when it is short, else a pointer to the JSON report, which keeps it in full."""
        w = self.worst
        if w and "joint" not in w and "q" in w:  # a call that raised, crashed or returned NaN
            return f"state of sample {w['sample']}: {_state(w)}"
        if not w or "joint" not in w:
            return ""
        label = w.get("dynamics", "simbench.dynamics")
        who = "ours" if label == "simbench.dynamics" else f"yours ({label})"
        true = f", true (simbench.dynamics) {w['tau_true']!r}" if "tau_true" in w else ""
        return (f"worst {'entry' if w.get('base_entry') else 'joint'} {w['joint']!r}: {who} "
                f"{w.get('tau_tested', w.get('tau_ours'))!r}{true}, PyBullet {w['tau_pybullet']!r} at "
                + (_state(w) if _short_state(w) else f"sample {w['sample']}: {_state(w)}"))

    def as_dict(self) -> dict[str, Any]:
        return {"target": self.target, "name": self.name, "path": self.path, "verdict": self.verdict,
                "reason": self.reason, "dof": self.dof, "samples": self.samples,
                "errors": self.errors.as_dict() if self.errors else None,
                "causes": [c.as_dict() for c in self.causes], "notes": list(self.notes),
                "worst": self.worst, "pinocchio": self.pinocchio, "seconds": round(self.seconds, 4),
                "looks_like": self.looks_like,
                "errors_true": self.errors_true.as_dict() if self.errors_true else None}


#: a state of more numbers (q, qd, qdd together) is not printed, only pointed to in the JSON
SHOWN_STATE = 24


def _short_state(w: dict[str, Any]) -> bool:
    return len(w["q"]) + len(w["qd"]) + len(w["qdd"]) <= SHOWN_STATE


def _state(w: dict[str, Any]) -> str:
    """``q=[...] qd=[...] qdd=[...] gravity=[...]``, or for a long state (a floating base's 19 +
    18 + 18 numbers) where its full values are: the JSON report's ``worst``."""
    if _short_state(w):
        return f"q={w['q']!r} qd={w['qd']!r} qdd={w['qdd']!r} gravity={w['gravity']!r}"
    return (f"q, qd, qdd of {len(w['q'])}, {len(w['qd'])}, {len(w['qdd'])} numbers in full in the JSON report's "
            f"worst (--json FILE), gravity={w['gravity']!r}")


def _counted(n: object, thing: str) -> str:
    """``"1 robot"``, ``"2 robots"``."""
    return f"{n} {thing}{'' if n == 1 else 's'}"


@dataclass
class Report:
    """Results of a check over one or more robots."""

    results: list[RobotResult]
    settings: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    interrupted: bool = False
    #: the resolved targets by label (for plots; not part of the JSON)
    targets: dict[str, Any] = field(default_factory=dict, repr=False)
    #: what interrupted the check: "SIGINT" (Ctrl-C) or "SIGTERM" (exit status 143); None if nothing
    signal: str | None = None
    #: seconds of ``--plot`` (the dynamics under test run again along a trajectory), in ``seconds``
    plot_seconds: float = 0.0

    def counts(self) -> dict[str, int]:
        out = {v: 0 for v in VERDICTS}
        for r in self.results:
            out[r.verdict] += 1
        return out

    @property
    def compared(self) -> int:
        """How many robots were compared at all (anything but SKIPPED)."""
        return sum(r.verdict != SKIPPED for r in self.results)

    def exit_code(self, strict: bool = False) -> int:
        """The exit status of ``simbench check``: 130 when interrupted; 1 on a FAIL or ERROR (with
        ``strict`` also EXPLAINED) or when nothing was compared; 0 otherwise."""
        if self.interrupted:
            return TERMINATED if self.signal == "SIGTERM" else INTERRUPTED
        bad = {FAIL, ERROR, EXPLAINED} if strict else {FAIL, ERROR}
        if any(r.verdict in bad for r in self.results) or not self.compared:
            return 1
        return 0

    def __getitem__(self, target: str | int) -> RobotResult:
        """The result of a target (its label, path or robot name), or ``report[i]``, the i-th."""
        if isinstance(target, (int, np.integer)) and not isinstance(target, bool):
            try:
                return self.results[target]
            except IndexError:
                raise IndexError(f"report[{target}]: the report has {_counted(len(self.results), 'result')} "
                                 f"(0 .. {len(self.results) - 1})") from None
        for r in self.results:
            if target in (r.target, r.path, r.name):
                return r
        labels = [r.target for r in self.results]
        raise KeyError(f"{target!r}: no such target in the report; expected one of {labels} or an index "
                       f"0 .. {len(labels) - 1}")

    def __len__(self) -> int:
        return len(self.results)

    def __iter__(self) -> Any:
        return iter(self.results)

    def summary(self) -> str:
        c = self.counts()
        line = (f"{_counted(len(self.results), 'robot')}: " + ", ".join(f"{n} {k}" for k, n in c.items())
                + f" ({self.seconds:.1f} s" + (f", {self.plot_seconds:.1f} s of it plotting" if self.plot_seconds
                                                 else "") + ")")
        if self.results and not self.compared:
            line += "; nothing was compared"
        unfinished = sum(r.reason.startswith(NOT_CHECKED) for r in self.results)
        return line + (f"; {self.stopped_by()}" + (f", {unfinished} of {_counted(len(self.results), 'robot')} "
                                                   f"not checked" if unfinished else "") if self.interrupted else "")

    def stopped_by(self) -> str:
        """'interrupted' (Ctrl-C) or 'terminated (SIGTERM)'."""
        return "terminated (SIGTERM)" if self.signal == "SIGTERM" else "interrupted"

    def text(self) -> str:
        return "\n".join([r.line() for r in self.results] + [self.summary()])

    def to_json(self) -> dict[str, Any]:
        return {"version": 2, "settings": dict(self.settings),
                "summary": {**self.counts(), "compared": self.compared,
                            "not_checked": sum(x.reason.startswith(NOT_CHECKED) for x in self.results
                                               if x.verdict == SKIPPED),   # of SKIPPED: not reached
                            "exit_code": self.exit_code(bool(self.settings.get("strict"))),
                            "interrupted": self.interrupted,
                            "signal": (self.signal or "SIGINT") if self.interrupted else None,
                            "seconds": round(self.seconds, 3), "plot_seconds": round(self.plot_seconds, 3)},
                "robots": [r.as_dict() for r in self.results]}

    def to_markdown(self) -> str:
        c = self.counts()
        rows = ["| robot | verdict | dof | tau abs | tau rel | M abs | M rel | cause or reason |",
                "|---|---|---:|---:|---:|---:|---:|---|"]
        for r in self.results:
            e = r.shown_errors
            nums = ([f"{e.tau_abs:.2e}", f"{e.tau_rel:.1e}", f"{e.M_abs:.2e}", f"{e.M_rel:.1e}"]
                    if e else ["", "", "", ""])
            why = r.reason or "; ".join(
                f"{x.kind} ({', '.join(x.links)}): {x.before.tau_abs:.2e} -> {x.after.tau_abs:.2e}"
                for x in r.causes)
            why = " ".join(why.split()).replace("|", "\\|")
            rows.append("| " + " | ".join([f"`{r.target}`", f"**{r.verdict}**", str(r.dof), *nums, why]) + " |")
        head = (f"### simbench check: {c[PASS]} PASS, {c[EXPLAINED]} EXPLAINED, {c[FAIL]} FAIL, "
                f"{c[ERROR]} ERROR, {c[SKIPPED]} SKIPPED (tol {self.settings.get('tol')}, "
                f"{_counted(self.settings.get('samples'), 'sample')})"
                + (f", {self.stopped_by()}" if self.interrupted else "") + "\n\n")
        notes = [f"- `{r.target}`: " + " ".join(n.split()) for r in self.results for n in r.notes]
        return head + "\n".join(rows) + "\n" + ("\nNotes:\n\n" + "\n".join(notes) + "\n" if notes else "")


def _num(x: float) -> float | None:
    x = float(x)
    return x if math.isfinite(x) else None


__all__ = ["PASS", "EXPLAINED", "FAIL", "ERROR", "SKIPPED", "VERDICTS", "NOT_CHECKED", "Errors", "measure", "Cause",
           "RobotResult", "Report"]
