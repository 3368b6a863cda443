"""A user's ``tau = f(q, qd, qdd)`` under test: loading it by name, calling it, and judging what
it returns, so that faulty code gets a verdict instead of crashing ``check``.

The contract (:class:`simbench.dynamics.protocols.InverseDynamicsFunction`): ``f`` takes three
arrays of shape ``(n,)`` in ``model.joint_names`` order and returns ``n`` finite torques; for a
floating base (``check --floating``) q has ``model.nq`` entries (the base pose first) and qd,
qdd and the result ``model.nv``, in ``model.v_labels`` order (the base's twist and wrench
first, Pinocchio's free-flyer convention). The mass matrix is derived from it column by
column, ``M e_j = f(q, 0, e_j) - f(q, 0, 0)``
(Featherstone, *Rigid Body Dynamics Algorithms*, the unit-vector method for the joint-space
inertia matrix).

A breach becomes a :class:`UserCodeFault` with a verdict and one line: ``ERROR`` when no
torques came back (an exception, ``None``, strings, a wrong shape, an import that fails),
``FAIL`` when the torques are not finite for finite inputs. :func:`serve` is the loop of the
worker process that :mod:`simbench.check.isolation` runs the function in.
"""
from __future__ import annotations

import difflib
import importlib
import inspect
import math
import os
import re
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..errors import shown
from ..model import RobotModel
from .report import ERROR, FAIL


class UserCodeFault(Exception):
    """The dynamics under test broke its contract; ``verdict`` is ERROR or FAIL."""

    def __init__(self, verdict: str, message: str, sample: int | None = None):
        super().__init__(message)
        #: the sample (index into the check's states) whose call broke the contract, when known
        self.verdict, self.message, self.sample = verdict, message, sample

    def __reduce__(self) -> tuple:
        return (UserCodeFault, (self.verdict, self.message, self.sample))


class ImportFailed(UserCodeFault):
    """The module of ``"module:function"`` raised while being imported (a SyntaxError, a missing
    dependency): a usage error, said before any work."""


class FunctionNotFound(Exception):
    """The module imports but has no such function (a usage error, not a verdict)."""


def split_spec(spec: str) -> tuple[str, str]:
    """``"module:function"`` -> (module, function); ``ValueError`` naming the expected form."""
    mod, _, func = spec.partition(":")
    if not mod or not func or ":" in func:
        raise ValueError(f"--dynamics {shown(spec)}: expected module:function, e.g. mypkg.dyn:tau")
    return mod, func


def where_raised(exc: BaseException) -> str:
    """' (at file.py:12 in name)': the innermost frame of an exception's traceback ('' if none)."""
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return ""
    f = frames[-1]
    return f" (at {os.path.basename(f.filename)}:{f.lineno} in {f.name})"


def _describe(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def defined_at(func: Any) -> str:
    """'file.py:12' where ``func`` (or, for a callable object, its ``__call__``) is defined; ''
    when Python does not know (a builtin, a C extension)."""
    target = inspect.unwrap(func) if inspect.isroutine(func) else getattr(type(func), "__call__", func)
    target = getattr(target, "py_func", target)  # a numba dispatcher: the Python function it compiles
    code = getattr(inspect.unwrap(target), "__code__", None)
    return f"{os.path.basename(code.co_filename)}:{code.co_firstlineno}" if code is not None else ""


def signature_problem(func: Any) -> str | None:
    """Why ``func`` cannot be called as ``f(q, qd, qdd)``, with where it is defined and the
    signature expected; None when it can (or when its signature cannot be read)."""
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):
        return None
    try:
        sig.bind(None, None, None)
    except TypeError as exc:
        name = getattr(func, "__name__", type(func).__name__)
        where = defined_at(func)
        return (f"{name}{sig}{f' (defined at {where})' if where else ''} cannot be called as f(q, qd, qdd): "
                f"{exc}; expected def {name}(q, qd, qdd) returning the n joint torques (q, qd, qdd: "
                f"arrays of shape (n,) in joint_names order)")
    return None


def load_function(spec: str, search_path: Sequence[str] = ()) -> Callable[..., Any]:
    """Import ``module`` of ``"module:function"`` (``search_path`` first on ``sys.path``) and
    return the function. :class:`UserCodeFault` (ERROR) when the import fails;
    :class:`FunctionNotFound` when the name is missing (with the closest names)."""
    mod_name, func_name = split_spec(spec)
    for entry in reversed(list(search_path)):
        if entry not in sys.path:
            sys.path.insert(0, entry)
    try:
        module = importlib.import_module(mod_name)
    except BaseException as exc:  # SyntaxError, ImportError, anything the module raises
        if isinstance(exc, SyntaxError):
            where = f" ({os.path.basename(exc.filename or '?')}, line {exc.lineno})"
            raise UserCodeFault(ERROR, f"cannot import {shown(mod_name)}: SyntaxError: {exc.msg}{where}") from None
        raise UserCodeFault(ERROR, f"cannot import {shown(mod_name)}: {_describe(exc)}{where_raised(exc)}") from None
    func = getattr(module, func_name, None)
    if func is None:
        names = [n for n in dir(module) if not n.startswith("_") and callable(getattr(module, n, None))]
        close = difflib.get_close_matches(func_name, names, n=3, cutoff=0.5)
        own = [n for n in names if getattr(getattr(module, n), "__module__", None) == module.__name__]
        hint = f"; did you mean {', '.join(map(repr, close))}?" if close else \
            f"; it defines {', '.join(map(repr, own[:6]))}" if own else "; it defines no function"
        raise FunctionNotFound(f"--dynamics {shown(spec)}: module {shown(mod_name)} has no function {shown(func_name)}{hint}")
    if not callable(func):
        raise FunctionNotFound(f"--dynamics {shown(spec)}: {shown(func_name)} in {shown(mod_name)} is "
                               f"{a_type(func)}; expected a function tau = f(q, qd, qdd)")
    problem = signature_problem(func)
    if problem:
        raise FunctionNotFound(f"--dynamics {shown(spec)}: {problem}")
    return func


def a_type(value: Any) -> str:
    """The type of ``value`` with its article: ``an int``, ``a float``, ``an ndarray``."""
    name = type(value).__name__
    return f"{'an' if name[:1].lower() in 'aeio' else 'a'} {name}"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def not_real(arr: np.ndarray) -> str:
    """Why ``arr`` is not real floating numbers ('' when it is: floats or integers). Booleans are
    refused (True/False are not torques), complex numbers and objects (strings, sympy) too."""
    kind = arr.dtype.kind
    if kind in "iuf":
        return ""
    return {"b": "booleans, not numbers", "c": "complex, not real numbers"}.get(kind, "not real numbers")


def _what(out: Any, arr: np.ndarray) -> str:
    """What a function returned, for a message: 'an ndarray array([ True, False]) of dtype bool'."""
    if isinstance(out, np.ndarray):
        return f"an ndarray {_short(out)} of dtype {arr.dtype}"
    return f"{type(out).__name__} {_short(out)}" + (f" (shape {arr.shape})" if arr.ndim else "")


def as_torques(out: Any, joint_names: Sequence[str], label: str, where: str) -> np.ndarray:
    """``out`` as ``(n,)`` float torques, or a :class:`UserCodeFault` saying what is wrong.
    ``joint_names``: a name per entry of v (``model.v_labels``; the joints' names when the
    base is fixed and every joint has one entry)."""
    n = len(joint_names)
    labels = any(name.startswith("base_") or name.endswith("]") for name in joint_names)
    if labels:
        expected = (f"expected {n} generalised forces (shape ({n},)) in model.v_labels order "
                    f"({', '.join(joint_names[:2])}, ...)")
    else:
        expected = f"expected {n} torques (shape ({n},)) in joint_names order"
    if out is None:
        raise UserCodeFault(ERROR, f"{label} returned None {where}; {expected}")
    try:
        arr = np.asarray(out)
    except Exception:  # ragged sequences and objects numpy cannot hold
        raise UserCodeFault(ERROR, f"{label} returned {type(out).__name__} {_short(out)} {where}; "
                                   f"{expected}") from None
    problem = not_real(arr)
    if problem:
        raise UserCodeFault(ERROR, f"{label} returned {_what(out, arr)} {where}, {problem}; {expected} "
                                   f"as floats")
    if arr.shape != (n,):
        raise UserCodeFault(ERROR, f"{label} returned shape {arr.shape} {where}; {expected}"
                            + (f" ({n} numbers in another shape: return np.ravel(tau) if they are in joint order)"
                               if arr.size == n else ""))
    if arr.dtype.kind in "iu":  # rounded torques would FAIL with no word on why
        raise UserCodeFault(ERROR, f"{label} returned {arr.dtype} {_short(out)} {where}, integers (torques "
                                   f"rounded or truncated?); {expected} as floats, e.g. np.asarray(tau, float) "
                                   f"before any rounding")
    arr = np.asarray(arr, float)
    bad = ~np.isfinite(arr)
    if bad.any():
        j = int(np.flatnonzero(bad)[0])
        raise UserCodeFault(FAIL, f"{label} returned {arr[j]} for {'' if labels else 'joint '}{joint_names[j]!r} {where} "
                                  f"from finite inputs ({int(bad.sum())} of {n} torques not finite)")
    return arr


def _given(q: np.ndarray, joint_names: Sequence[str], exc: BaseException | None = None) -> str:
    """For a floating base (q longer than v): what the function was given, since a fixed-base
    function fails on it with numpy's words only; on a welded base, when the error names a
    floating base's sizes, that --floating checks it so."""
    nv = len(joint_names)
    if len(q) == nv:
        from .floating import floating_hint_for_error

        return floating_hint_for_error(f"{type(exc).__name__}: {exc}", nv) if exc is not None else ""
    return (f" (it was given q of {len(q)} entries and qd, qdd of {nv}: with a floating base the model has "
            f"nq = {len(q)}, nv = {nv}, the base's pose (x y z qx qy qz qw) and twist first; a function for the "
            f"fixed-base robot takes {nv - 6} joints: check without --floating, or see model.v_labels)")


def call(func: Callable[..., Any], q: np.ndarray, qd: np.ndarray, qdd: np.ndarray,
         joint_names: Sequence[str], label: str, where: str) -> np.ndarray:
    """One call of the user's function, judged."""
    try:
        out = func(q.copy(), qd.copy(), qdd.copy())
    except BaseException as exc:  # anything the user's code raises, SystemExit and KeyboardInterrupt
        # included: Ctrl-C never reaches this code (the worker ignores SIGINT; a thread gets no signals)
        problem = signature_problem(func)  # the call itself failed: not the user's line, the signature
        if problem and isinstance(exc, TypeError) and len(traceback.extract_tb(exc.__traceback__)) == 1:
            raise UserCodeFault(ERROR, f"{label}: {problem}") from None
        raise UserCodeFault(ERROR, f"{label} raised {_describe(exc)}{where_raised(exc)} {where}"
                                   + _given(q, joint_names, exc)) from None
    return as_torques(out, joint_names, label, where)


def evaluate(func: Callable[..., Any], q: np.ndarray, qd: np.ndarray, qdd: np.ndarray,
             joint_names: Sequence[str], label: str, with_M: bool = True,
             progress: Callable[[int, str], None] | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """``tau`` (N, n) for each sample and ``M`` (N, n, n) by columns (None without ``with_M``:
    N calls instead of N (n + 2)); :class:`UserCodeFault` on the first breach, with its
    ``sample``. ``progress(i, where)`` is told each sample before its first call (so that the
    process watching a worker can say where it died)."""
    try:
        return _evaluate(func, q, qd, qdd, joint_names, label, with_M, progress)
    except UserCodeFault as fault:
        if fault.sample is None:
            found = re.search(r"\bat sample (\d+)", fault.message)
            fault.sample = int(found.group(1)) if found else None
        raise


def _evaluate(func: Callable[..., Any], q: np.ndarray, qd: np.ndarray, qdd: np.ndarray,
              joint_names: Sequence[str], label: str, with_M: bool,
              progress: Callable[[int, str], None] | None) -> tuple[np.ndarray, np.ndarray | None]:
    N, n = qd.shape      # n entries of v (q has more with a floating base)
    tau = np.empty((N, n))
    M = np.empty((N, n, n))
    zero = np.zeros(n)
    for i in range(N):
        if progress:
            progress(i, f"at sample {i}")
        tau[i] = call(func, q[i], qd[i], qdd[i], joint_names, label, f"at sample {i}")
    if not with_M:
        return tau, None
    for i in range(N):
        if progress:
            progress(i, f"at sample {i} (qd = 0, for the mass matrix)")
        bias = call(func, q[i], zero, zero, joint_names, label, f"at sample {i} with qd = qdd = 0")
        for j in range(n):
            e = np.zeros(n)
            e[j] = 1.0
            M[i, :, j] = call(func, q[i], zero, e, joint_names, label,
                              f"at sample {i} with qd = 0, qdd = e[{joint_names[j]!r}]") - bias
    return tau, M


# ---------------------------------------------------------------------- what a FAIL looks like
# A user's dynamics that FAILs: the most likely bug, from the numbers already at hand. Each
# hypothesis is a cheap rewrite of the true dynamics (the judge the FAIL was measured against):
# gravity negated or zero, the Coriolis and centrifugal terms left out (M qdd + g), a constant
# factor (units), the joints in another order (reversed, Pinocchio's order of the URDF, sorted by
# name), float32 output. One is said only when the user's numbers match it to the check's
# tolerance on every sample (tau, and M where the rewrite changes it predictably).

#: constant factors that have a name (a unit mistake)
FACTORS = {100.0: "x100 (N cm instead of N m?)", 0.01: "x0.01", 1000.0: "x1000 (N mm instead of N m?)",
           0.001: "x0.001", 180 / math.pi: "x180/pi (degrees instead of radians?)",
           math.pi / 180: "xpi/180 (radians read as degrees?)", -1.0: "x-1 (the sign of every torque)"}

#: float32's unit roundoff: a float64 result rounded to float32 is off by at most this, relatively
F32_EPS = 2.0 ** -24


def _within(tau: np.ndarray, tau_h: np.ndarray, tol: float) -> float | None:
    """max |tau - tau_h| when it is within ``tol * max(1, max |tau_h|)``, else None."""
    d = float(np.max(np.abs(tau - tau_h))) if tau.size else 0.0
    return d if d <= tol * max(1.0, float(np.max(np.abs(tau_h)))) else None


def _gravity_used(q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, tau: np.ndarray, g: np.ndarray, tol: float,
                  tau_of: Callable[..., np.ndarray], R: np.ndarray | None) -> str | None:
    """The gravity the user's torques were computed with, when some gravity explains them: tau
    is linear in g (tau(g) = tau(0) + G(q) g), so g is fitted by least squares over every sample
    and verified; named when it is a known mistake (negated, left out, the world's gravity on a
    rotated base, R g for R^T g), else given as a vector."""
    scale = float(np.linalg.norm(g))
    zero, z3 = np.zeros_like(qd), np.zeros(3)
    base = tau_of(q, qd, qdd, z3)
    cols = [tau_of(q, zero, zero, scale * e) for e in np.eye(3)]
    A = np.stack([c.ravel() for c in cols], axis=1)
    x = np.linalg.lstsq(A, (tau - base).ravel(), rcond=None)[0]
    used = scale * x
    d = _within(tau, tau_of(q, qd, qdd, used), tol)
    if d is None or _within(tau, tau_of(q, qd, qdd, g), tol) is not None:
        return None

    def same(c: np.ndarray) -> bool:   # indistinguishable on these states (a direction no joint feels)
        return _within(base + (A @ (np.asarray(c) / scale)).reshape(tau.shape), tau, tol) is not None

    fmt = "({})".format
    vec = lambda v: fmt(", ".join(f"{(float(t) if abs(t) > 1e-9 * scale else 0.0):.4g}" for t in v))  # noqa: E731
    names = []
    if same(-g):
        names.append("gravity with the wrong sign")
    if same(z3):
        names.append("gravity left out")
    if R is not None and not np.allclose(R, np.eye(3)):
        if same(R @ g):
            names.append(f"the world's gravity {vec(R @ g)} used in the base frame (the base's orientation ignored)")
        if same(R @ R @ g):
            names.append(f"the base's rotation applied the wrong way round (R g instead of R^T g: {vec(R @ R @ g)})")
    if not names:
        return f"gravity {vec(used)} in the base frame instead of the model's {vec(g)} (fitted; matches to {d:.1e})"
    how = {("gravity with the wrong sign",): "g negated", ("gravity left out",): "g = 0"}.get(
        tuple(names), f"g = {vec(used)} fitted")
    return f"{' or, the same on this robot, '.join(names)} (matches to {d:.1e} with {how})"


def _permutations(model: RobotModel, pin_order: list[int] | None) -> list[tuple[str, np.ndarray]]:
    """Joint orders a user may have used instead of ``model.joint_names``: (name, p) with the
    user's joint ``k`` being our joint ``p[k]``. ``pin_order``: Pinocchio's index of each of our
    joints among its joints."""
    names = list(model.joint_names)
    n = len(names)
    out = [("reversed", np.arange(n)[::-1])]
    if pin_order is not None and list(pin_order) != list(range(n)):
        out.append(("Pinocchio's order of the URDF", np.argsort(np.asarray(pin_order))))
    by_name = np.argsort(names, kind="stable")
    out.append(("sorted by name", by_name))
    seen: set[tuple[int, ...]] = set()
    unique = []
    for name, p in out:
        key = tuple(int(x) for x in p)
        if key != tuple(range(n)) and key not in seen:
            seen.add(key)
            unique.append((name, np.asarray(p, int)))
    return unique


def looks_like(model: RobotModel, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, tau: np.ndarray,
               M: np.ndarray, truth: tuple[np.ndarray, np.ndarray], tol: float,
               tau_of: Callable[..., np.ndarray], M_of: Callable[[np.ndarray], np.ndarray],
               pin_order: list[int] | None = None, base_rotation: np.ndarray | None = None) -> str | None:
    """The first verified hypothesis for the user's ``(tau, M)`` against ``truth``; None when no
    hypothesis matches. ``tau_of(q, qd, qdd, gravity)`` and ``M_of(q)``: the true dynamics of
    the model (batched); ``pin_order``: Pinocchio's index of each of our velocity entries, if known;
    ``base_rotation``: R_world_base of a fixed base (to name gravity rotated the wrong way)."""
    T, MT = truth
    g = np.asarray(model.gravity, float)
    if not (np.all(np.isfinite(tau)) and np.all(np.isfinite(M))):
        return None
    # float32: every torque is a float32 and the error is rounding (relative, per entry)
    if np.array_equal(tau.astype(np.float32).astype(float), tau):
        floor = 1e-6 * float(np.max(np.abs(T))) if T.size else 0.0
        worst = float(np.max(np.abs(tau - T) / np.maximum(np.abs(T), floor))) if floor > 0 else 0.0
        if 0 < worst <= 64 * F32_EPS:
            return (f"float32 output (every torque is a float32; relative error up to {worst:.1e}, "
                    f"float32's resolution is {F32_EPS:.1e}: jax's default dtype)")
    same_M = _within(M, MT, tol) is not None
    if same_M:
        if np.any(g):
            said = _gravity_used(q, qd, qdd, tau, g, tol, tau_of, base_rotation)
            if said:
                return said
        if np.any(qd):
            d = _within(tau, tau_of(q, np.zeros_like(qd), qdd, g), tol)
            if d is not None:
                return (f"Coriolis and centrifugal terms left out (tau = M qdd + g matches to {d:.1e})")
    # a constant factor on everything (tau and M)
    denom = float(np.sum(T * T))
    if denom > 0:
        c = float(np.sum(tau * T)) / denom
        if c != 0 and abs(c - 1) > 1e-6:
            d = _within(tau, c * T, tol)
            if d is not None and _within(M, c * MT, tol) is not None:
                named = next((text for f, text in FACTORS.items() if abs(c / f - 1) <= 1e-6), None)
                return (f"every torque and mass-matrix entry scaled by {c:.6g}"
                        + (f", {named}" if named else "") + f" (matches to {d:.1e})")
    # joints in another order: the user's f treats our q as its own order (a floating base's
    # entries first, in place; joints of one entry each)
    n = len(model.joint_names)
    bq, bv = model.nq - n, model.nv - n
    if n > 1 and (bq, bv) in ((0, 0), (7, 6)):
        joints = None if pin_order is None else [int(k) - bv for k in pin_order[bv:]]
        for name, pj in _permutations(model, joints):
            pq, p = np.r_[np.arange(bq), bq + pj], np.r_[np.arange(bv), bv + pj]
            iq, inv = np.argsort(pq), np.argsort(p)
            # the user's entry k is our entry p[k]: f(x) = P T(P^T x), i.e. T(x[inv])[p] in our indices
            tau_h = tau_of(q[:, iq], qd[:, inv], qdd[:, inv], g)[:, p]
            d = _within(tau, tau_h, tol)
            if d is not None:
                M_h = M_of(q[:, iq])[:, p][:, :, p]
                if _within(M, M_h, tol) is not None:
                    order = [model.joint_names[int(k)] for k in pj]
                    return (f"joints in another order: {name} ({', '.join(order[:4])}"
                            f"{', ...' if len(order) > 4 else ''}), not joint_names order (matches to {d:.1e})")
    return None


# ---------------------------------------------------------------------- the worker process
def _die_with_parent() -> None:
    """End this worker when the check that started it ends (even by SIGKILL): Linux's
    PR_SET_PDEATHSIG where available, and a thread that watches the parent's pid."""
    parent = os.getppid()
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass

    def watch() -> None:
        while True:
            time.sleep(1.0)
            if os.getppid() != parent:
                _end_group()

    threading.Thread(target=watch, name="parent watch", daemon=True).start()
    if os.getppid() != parent:
        _end_group()


def _end_group() -> None:
    """End this worker and every process the user's code started (the worker leads its group)."""
    try:
        os.killpg(0, signal.SIGKILL)
    finally:
        os._exit(1)


def serve_fd(fd: int) -> None:
    """Entry point of the worker process: serve requests on the pipe end ``fd``."""
    from multiprocessing.connection import Connection

    _die_with_parent()
    conn = Connection(fd)
    conn.send(("ready",))  # started: the parent's --timeout for the import counts from here
    serve(conn)


def serve(conn: Any) -> None:
    """Worker loop: ``("load", spec, search_path)`` and ``("eval", q, qd, qdd, names, label)``
    requests on ``conn``; replies ``("ok", ...)``, ``("fault", verdict, message)`` or
    ``("missing", message)``. Never raises (nothing the user's code does prints a traceback)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and stops us
    func: Callable[..., Any] | None = None
    while True:
        try:
            request = conn.recv()
        except (EOFError, OSError):
            return
        try:
            if request[0] == "load":
                func = load_function(request[1], request[2])
                reply: tuple = ("ok",)
            elif request[0] == "eval" and func is not None:
                reply = ("ok", *evaluate(func, *request[1:], progress=lambda i, where: conn.send(("at", i, where))))
            else:
                return
        except UserCodeFault as fault:
            reply = ("fault", fault.verdict, fault.message, fault.sample)
        except FunctionNotFound as exc:
            reply = ("missing", str(exc))
        except BaseException as exc:  # our own failure: report it, do not die silently
            reply = ("fault", ERROR, f"the worker failed: {_describe(exc)}")
        try:
            conn.send(reply)
        except (OSError, ValueError, TypeError):
            return


__all__ = ["looks_like", "FACTORS", "UserCodeFault", "ImportFailed", "FunctionNotFound", "split_spec", "defined_at", "signature_problem", "load_function", "as_torques", "call",
           "evaluate", "serve", "serve_fd"]
