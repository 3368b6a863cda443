"""The equations of :mod:`simbench.dynamics.symbolic` as numbers: numpy functions from sympy's
``lambdify`` (:class:`LambdifiedDynamics`) and C99 code compiled and loaded with ctypes
(:class:`CompiledDynamics`), both after common-subexpression elimination (:class:`_Program`).
Imported by :mod:`.symbolic` (it needs sympy, the ``symbolic`` extra).
"""
from __future__ import annotations

import ctypes
import math
import os
import re
import shutil
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import sympy as sp

from ..errors import ShapeError, SimbenchError
from .inputs import batch_shape

if TYPE_CHECKING:
    from .symbolic import SymbolicDynamics


# ---------------------------------------------------------------------- numeric evaluation
def _inputs(inputs: tuple, labels: Sequence[str], names: Sequence[str]) -> tuple[list, tuple]:
    """q, qd, qdd as float arrays (..., n) and their broadcast batch shape; one ShapeError line
    naming the argument for a wrong length or batch shapes that do not broadcast."""
    n, arrs = len(names), []
    for x, label in zip(inputs, labels):
        try:
            a = np.asarray(x, dtype=float)
        except (TypeError, ValueError):
            raise ShapeError(f"{label} must be numbers, got {x!r:.80}") from None
        if a.ndim == 0 or a.shape[-1] != n:
            raise ShapeError(f"{label} has shape {a.shape}; expected (..., {n}) with joints in "
                             f"order {list(names)}")
        arrs.append(a)
    batch = batch_shape(arrs, labels, f"each must be (..., {n}) with the same or broadcastable leading dimensions")
    return arrs, batch


def _finite(out: np.ndarray, arrs: list, labels: Sequence[str], names: Sequence[str]) -> np.ndarray:
    """``out``, or one ShapeError line naming the non-finite input that made it non-finite (one
    test of the result per call: the inputs are searched only then)."""
    if np.isfinite(out).all():
        return out
    for a, label in zip(arrs, labels):
        if not np.isfinite(a).all():
            bad = np.argwhere(~np.isfinite(a))[0]
            raise ShapeError(f"{label} holds a non-finite value {a[tuple(bad)]} at index "
                             f"{tuple(int(i) for i in bad)} (joint {names[bad[-1]]!r}); expected finite numbers")
    return out


class LambdifiedDynamics:
    """numpy evaluation of a :class:`SymbolicDynamics` (sympy ``lambdify`` with CSE).

    Every function accepts leading batch dimensions: ``q`` of shape (..., n). A single
    configuration (1-D inputs) goes through a ``math``-module version of the same code.
    """

    def __init__(self, eom: SymbolicDynamics):
        if eom.parameters:
            raise SimbenchError("substitute the parameters first (SymbolicDynamics.numeric)")
        self.joint_names = eom.joint_names
        self.dof = n = eom.dof
        self.model_name = eom.model_name
        prog = eom._program()
        self._f = {key: (prog.python(key, "numpy"), prog.python(key, "math"), prog.shape(key))
                   for key in ("M", "C", "g", "tau")}
        self._n = n

    def _call(self, key: str, inputs: tuple, names: str) -> np.ndarray:
        vec, scalar, shape = self._f[key]
        labels = names.split()
        arrays, batch = _inputs(inputs, labels, self.joint_names)
        if all(a.ndim == 1 for a in arrays):
            args = [v for a in arrays for v in a.tolist()]
            try:
                out = np.array(scalar(*args), dtype=float).reshape(shape)
            except ValueError:   # math.sin(inf)
                out = np.full(shape, np.nan)
            return _finite(out, arrays, labels, self.joint_names)
        cols = [np.broadcast_to(a[..., i], batch) for a in arrays for i in range(self._n)]
        with np.errstate(invalid="ignore", over="ignore"):   # nan / inf inputs: named below
            values = vec(*cols)
        out = np.empty(batch + (len(values),))
        for i, v in enumerate(values):
            out[..., i] = v
        return _finite(out.reshape(batch + shape), arrays, labels, self.joint_names)

    def mass_matrix(self, q: Any) -> np.ndarray:
        """M(q), shape (..., n, n)."""
        return self._call("M", (q,), "q")

    def coriolis_matrix(self, q: Any, qd: Any) -> np.ndarray:
        """C(q, q') from the Christoffel symbols, shape (..., n, n)."""
        return self._call("C", (q, qd), "q qd")

    def gravity_torques(self, q: Any) -> np.ndarray:
        """g(q), shape (..., n)."""
        return self._call("g", (q,), "q")

    def bias_forces(self, q: Any, qd: Any) -> np.ndarray:
        """C(q, q') q' + g(q)."""
        return self.inverse_dynamics(q, qd, np.zeros(self._n))

    def inverse_dynamics(self, q: Any, qd: Any, qdd: Any) -> np.ndarray:
        """tau = M q'' + C q' + g, shape (..., n)."""
        return self._call("tau", (q, qd, qdd), "q qd qdd")


# ---------------------------------------------------------------------- code generation
class _Program:
    """Straight-line code for M, C, g and tau shared by the Python and C generators.

    One common-subexpression elimination over the entries of M (upper triangle), of
    dM/dq_k and of g; then ``C_ij = 1/2 sum_k (D_kij + D_jik - D_ijk) q'_k`` and
    ``tau = M q'' + C q' + g`` in terms of those named entries (so the large Coriolis
    polynomials are never expanded)."""

    def __init__(self, eom: SymbolicDynamics):
        if eom.parameters:
            raise SimbenchError("substitute the parameters first (SymbolicDynamics.numeric)")
        n = self.n = eom.dof
        self.q, self.qd, self.qdd = list(eom.q), list(eom.qd), list(eom.qdd)
        dM = eom.dM or [eom.M.diff(x) for x in eom.q]
        names, exprs = [], []
        for r in range(n):
            for c in range(r, n):
                names.append(("M", r, c))
                exprs.append(eom.M[r, c])
        for k in range(n):
            for r in range(n):
                for c in range(r, n):
                    names.append(("D", k, r, c))
                    exprs.append(dM[k][r, c])
        for r in range(n):
            names.append(("g", r))
            exprs.append(eom.g[r])
        repl, reduced = sp.cse(exprs, symbols=sp.numbered_symbols("x"), order="none")
        self.defs: list[tuple[Any, Any]] = list(repl)
        val: dict = {}
        for key, e in zip(names, reduced):
            if e.is_Number:
                val[key] = e
            else:
                sym = sp.Symbol("_".join(map(str, key)))
                self.defs.append((sym, e))
                val[key] = sym
        Mv = lambda r, c: val["M", min(r, c), max(r, c)]  # noqa: E731
        Dv = lambda k, r, c: val["D", k, min(r, c), max(r, c)]  # noqa: E731
        Cv = {}
        for i in range(n):
            for j in range(n):
                e = sp.Add(*[(Dv(k, i, j) + Dv(j, i, k) - Dv(i, j, k)) * self.qd[k] for k in range(n)]) / 2
                if e.is_Number:
                    Cv[i, j] = e
                else:
                    sym = sp.Symbol(f"C_{i}_{j}")
                    self.defs.append((sym, e))
                    Cv[i, j] = sym
        self.outputs = {
            "M": [Mv(r, c) for r in range(n) for c in range(n)],
            "C": [Cv[i, j] for i in range(n) for j in range(n)],
            "g": [val["g", r] for r in range(n)],
            "tau": [sp.Add(*[Mv(i, j) * self.qdd[j] + Cv[i, j] * self.qd[j] for j in range(n)]) + val["g", i]
                    for i in range(n)],
        }
        self.inputs = {"M": self.q, "C": self.q + self.qd, "g": self.q,
                       "tau": self.q + self.qd + self.qdd}

    def shape(self, key: str) -> tuple:
        return (self.n, self.n) if key in ("M", "C") else (self.n,)

    def statements(self, key: str) -> list[tuple[Any, Any]]:
        """The definitions that ``key``'s outputs need, in order."""
        needed = set().union(*(sp.sympify(e).free_symbols for e in self.outputs[key]))
        for sym, e in reversed(self.defs):
            if sym in needed:
                needed |= e.free_symbols
        return [(sym, e) for sym, e in self.defs if sym in needed]

    def python(self, key: str, module: str) -> Any:
        """A Python function of the input symbols (numpy: broadcasts; math: scalars)."""
        if module == "numpy":
            from sympy.printing.numpy import NumPyPrinter as Printer
        else:
            from sympy.printing.pycode import PythonCodePrinter as Printer
        pr = Printer({"fully_qualified_modules": True, "standard": "python3"})
        args = ", ".join(str(s) for s in self.inputs[key])
        lines = [f"def _f({args}):"]
        lines += [f"    {sym} = {pr.doprint(e)}" for sym, e in self.statements(key)]
        lines.append("    return [" + ", ".join(pr.doprint(sp.sympify(e)) for e in self.outputs[key]) + "]")
        namespace = {"numpy": np, "math": math}
        exec(compile("\n".join(lines), f"<simbench.symbolic {key} {module}>", "exec"), namespace)
        return namespace["_f"]

    def c_body(self, key: str, out: str) -> list[str]:
        from sympy.printing.c import C99CodePrinter

        pr = C99CodePrinter()
        lines = []
        for arr, syms in (("q", self.q), ("qd", self.qd), ("qdd", self.qdd)):
            for i, s_ in enumerate(syms):
                if s_ in self.inputs[key]:
                    lines.append(f"    const double {s_} = {arr}[{i}];")
        used = set().union(*(sp.sympify(e).free_symbols for e in self.outputs[key]))
        for sym, e in self.statements(key):
            used |= e.free_symbols
        lines = [ln for ln in lines if sp.Symbol(ln.split()[2], real=True) in used]
        lines += [f"    const double {sym} = {pr.doprint(e)};" for sym, e in self.statements(key)]
        lines += [f"    {out}[{i}] = {pr.doprint(sp.sympify(e))};" for i, e in enumerate(self.outputs[key])]
        return lines


def _c_source(eom: SymbolicDynamics, prefix: str, header_name: str) -> tuple[str, str]:
    n = eom.dof
    prog = eom._program()
    funcs = [
        (f"void {prefix}_mass_matrix(const double *q, double *M)", "M", "M"),
        (f"void {prefix}_coriolis_matrix(const double *q, const double *qd, double *C)", "C", "C"),
        (f"void {prefix}_gravity_torques(const double *q, double *g)", "g", "g"),
        (f"void {prefix}_inverse_dynamics(const double *q, const double *qd, const double *qdd, "
         f"double *tau)", "tau", "tau"),
    ]
    doc = (f"/* Equations of motion of {eom.model_name!r}, generated by simbench.dynamics.symbolic\n"
           f" * (sympy {sp.__version__}): tau = M(q) qdd + C(q, qd) qd + g(q).\n"
           f" * Joints (q order): {', '.join(eom.joint_names)}.\n"
           f" * Matrices are row-major {n}x{n}; SI units. The *_batch functions loop over `count`\n"
           f" * configurations stored one after the other. */\n")
    header = [doc, f"#ifndef {prefix.upper()}_H", f"#define {prefix.upper()}_H",
              f"int {prefix}_dof(void);"]
    header += [sig + ";" for sig, _, _ in funcs]
    src = [doc, "#include <math.h>", f'#include "{header_name}"', "",
           f"int {prefix}_dof(void) {{ return {n}; }}", ""]
    batch_sigs = []
    for sig, _, _ in funcs:
        name = sig.split("(")[0].split()[-1]
        pointers = re.findall(r"(const )?double \*(\w+)", sig)
        stride = {"M": n * n, "C": n * n}
        params = ", ".join(f"{c}double *{a}" for c, a in pointers)
        call = ", ".join(f"{a} + b * {stride.get(a, n)}" for _, a in pointers)
        batch_sigs.append((f"void {name}_batch(long count, {params})", f"{name}({call})"))
    header += [sig + ";" for sig, _ in batch_sigs]
    for sig, key, out in funcs:
        pointers = re.findall(r"const double \*(\w+)", sig)
        unused = "    " + " ".join(f"(void){a};" for a in pointers)  # constant entries: no warning
        src += [sig, "{", unused, *prog.c_body(key, out), "}", ""]
    for sig, call in batch_sigs:
        src += [sig, "{", "    for (long b = 0; b < count; ++b) " + call + ";", "}", ""]
    header += [f"#endif /* {prefix.upper()}_H */", ""]
    return "\n".join(src), "\n".join(header)


class CompiledDynamics:
    """The generated C code loaded with ctypes; same methods as :class:`LambdifiedDynamics`.
    Batched inputs go through the ``*_batch`` C functions (one ctypes call)."""

    _ARGS = {"mass_matrix": 1, "coriolis_matrix": 2, "gravity_torques": 1, "inverse_dynamics": 3}

    def __init__(self, library: str | os.PathLike, prefix: str, dof: int,
                 joint_names: Sequence[str] = (), temporary: str | None = None):
        self.library = Path(library).absolute()   # a bare "x.so" is looked up on the library path
        self._lib = ctypes.CDLL(str(self.library))
        if temporary is not None:   # compile()'s own folder: removed with this object, or at exit
            weakref.finalize(self, shutil.rmtree, temporary, ignore_errors=True)
        self.dof = dof
        self.joint_names = tuple(joint_names)
        vp = ctypes.c_void_p
        self._f, self._fb = {}, {}
        for name, nin in self._ARGS.items():
            fn = getattr(self._lib, f"{prefix}_{name}")
            fn.argtypes, fn.restype = [ctypes.POINTER(ctypes.c_double)] * (nin + 1), None
            fb = getattr(self._lib, f"{prefix}_{name}_batch")
            fb.argtypes, fb.restype = [ctypes.c_long] + [vp] * (nin + 1), None
            self._f[name], self._fb[name] = fn, fb
        if self._lib[f"{prefix}_dof"]() != dof:
            raise SimbenchError(f"{self.library} was built for {self._lib[f'{prefix}_dof']()} joints, "
                                f"expected {dof}")

    def _run(self, name: str, inputs: tuple, out_shape: tuple) -> np.ndarray:
        n, labels = self.dof, ("q", "qd", "qdd")
        names = self.joint_names or tuple(f"q{i + 1}" for i in range(n))
        arrs, batch = _inputs(inputs, labels, names)
        if all(a.ndim == 1 for a in arrs):  # one configuration: ctypes arrays over the buffers
            vec = ctypes.c_double * n
            ptrs = [vec.from_buffer(a) if a.flags.c_contiguous and a.flags.writeable else vec(*a.tolist())
                    for a in arrs]
            out = np.empty(out_shape)
            self._f[name](*ptrs, (ctypes.c_double * out.size).from_buffer(out))
            return _finite(out, arrs, labels, names)
        count = int(np.prod(batch, dtype=int))
        flat = [np.ascontiguousarray(np.broadcast_to(a, batch + (n,)).reshape(count, n)) for a in arrs]
        out = np.empty((count,) + out_shape)
        self._fb[name](count, *[a.ctypes.data for a in flat], out.ctypes.data)
        return _finite(out.reshape(batch + out_shape), arrs, labels, names)

    def mass_matrix(self, q: Any) -> np.ndarray:
        return self._run("mass_matrix", (q,), (self.dof, self.dof))

    def coriolis_matrix(self, q: Any, qd: Any) -> np.ndarray:
        return self._run("coriolis_matrix", (q, qd), (self.dof, self.dof))

    def gravity_torques(self, q: Any) -> np.ndarray:
        return self._run("gravity_torques", (q,), (self.dof,))

    def inverse_dynamics(self, q: Any, qd: Any, qdd: Any) -> np.ndarray:
        return self._run("inverse_dynamics", (q, qd, qdd), (self.dof,))

    def bias_forces(self, q: Any, qd: Any) -> np.ndarray:
        """C(q, q') q' + g(q)."""
        return self._run("inverse_dynamics", (q, qd, np.zeros(self.dof)), (self.dof,))


__all__ = ["LambdifiedDynamics", "CompiledDynamics"]
