"""Closed-form equations of motion with sympy: M(q), C(q, q'), g(q) of a serial chain.

``tau = M(q) q'' + C(q, q') q' + g(q)`` (Ankur Handa,
"Understanding Physics Engines"; Adam Heins, "Lagrangian dynamics of a planar mobile manipulator"), derived from the same
:class:`~simbench.model.RobotModel` as the numeric code:

* each moving body (a movable joint's child link with every link fixed to it merged in)
  gets its world pose ``T_i(q)`` as a product of the joint origins and joint motions;
* ``M = sum_i m_i Jv_i^T Jv_i + Jw_i^T R_i I_i R_i^T Jw_i`` with the geometric Jacobians
  of the body centres of mass (the "AI Robotics" slides; Adam Heins's post);
* Christoffel symbols ``Gamma_ijk = 1/2 (dM_ij/dq_k + dM_ik/dq_j - dM_jk/dq_i)`` and
  ``C_ij = sum_k Gamma_ijk q'_k``, so ``M' - 2C`` is skew-symmetric;
* ``g = dP/dq`` with ``P = -sum_i m_i gravity . p_ci``.

sympy is an optional dependency (``pip install 'simbench[symbolic]'``); it is imported
only by this module. Example::

    from simbench.model import load
    from simbench.dynamics.symbolic import derive
    eom = derive(load("simbench:planar_2r.urdf"))
    eom.M, eom.C, eom.g          # sympy matrices in eom.q, eom.qd
    f = eom.lambdify()
    f.inverse_dynamics(q, qd, qdd)  # numpy, leading batch dimensions allowed
    eom.to_c("planar_2r_eom.c")     # C99 source (and a .h next to it)
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import SimbenchError, UnknownNameError, finite_or_none, flag, is_count, nearest_hint, shown
from ..extras import require
from ..model import FIXED, PRISMATIC, SPHERICAL, RobotModel

sp = require("sympy", "symbolic", "simbench.dynamics.symbolic")   # one line naming the extra

#: Derivations with more degrees of freedom than this are refused (expression swell).
MAX_DOF = 7

_CLEAN_TOL = 1e-12


# ---------------------------------------------------------------------- helpers
def _ident(name: str) -> str:
    """A C/Python identifier made from a URDF name."""
    s = re.sub(r"\W", "_", name)
    return s if s and not s[0].isdigit() else "_" + s


def _chain_bodies(model: RobotModel, max_dof: int) -> list[dict]:
    """The movable joints as a serial chain, each with its fixed links merged in.

    Returns one dict per movable joint (q order): ``joint`` (index into the all-joints
    arrays), ``link`` (its child link), ``T_fixed`` (4x4 numeric transform from the
    previous body's frame, or the root frame, to this joint's frame at q = 0),
    ``mass``, ``com`` (body frame), ``inertia`` (about the COM, body axes).
    """
    codes = model.joint_type_code
    who = f"{model.name} ({Path(model.source).name})" if getattr(model, "source", "") else model.name
    if model.floating_base:
        raise SimbenchError(f"{who}: symbolic derivation needs a fixed base (minimal "
                            f"coordinates); a floating base puts a quaternion in q. Use "
                            f"simbench.dynamics.inverse_dynamics / mass_matrix for it")
    if np.any(codes == SPHERICAL):
        bad = [model.joint_all_names[j] for j in np.flatnonzero(codes == SPHERICAL)]
        raise SimbenchError(f"{who}: symbolic derivation handles revolute, continuous and "
                            f"prismatic joints only; spherical joints {bad}")
    movable = [int(j) for j in model.movable]
    if not movable:
        raise SimbenchError(f"{who}: no movable joint, nothing to derive")
    parent = model.link_parent
    # body of each link: the nearest ancestor-or-self link entered through a movable joint
    body_of = np.full(model.nlinks, -1, dtype=int)   # index into `movable`, -1 = static
    T_body_link = [np.eye(4) for _ in range(model.nlinks)]
    pos_in_chain = {j: i for i, j in enumerate(movable)}
    for k in range(1, model.nlinks):  # depth-first numbering: parents come first
        j = k - 1
        if codes[j] != FIXED:
            body_of[k] = pos_in_chain[j]
        else:
            p = int(parent[k])
            body_of[k] = body_of[p]
            T_body_link[k] = T_body_link[p] @ model.joint_origin[j]
    # serial chain: the parent link of movable joint i+1 must lie on body i
    for i in range(1, len(movable)):
        j = movable[i]
        if body_of[int(parent[j + 1])] != i - 1:
            prev = model.joint_all_names[movable[i - 1]]
            where = int(body_of[int(parent[j + 1])])
            other = "the fixed root" if where < 0 else f"joint {model.joint_all_names[movable[where]]!r}"
            raise SimbenchError(
                f"{who} is not a serial chain: movable joint {model.joint_all_names[j]!r} "
                f"hangs below {other}, not below the previous movable joint {prev!r}; symbolic "
                f"derivation handles serial chains only (joints in q order: {list(model.joint_names)}); "
                f"lock the other branch first: simbench.lock_joints(model, {{{model.joint_all_names[j]!r}: 0.0}})")
    if len(movable) > max_dof:
        raise SimbenchError(
            f"{who} has {len(movable)} degrees of freedom; symbolic derivation is limited "
            f"to {max_dof} (pass max_dof= to try more, expect minutes and huge expressions)")
    bodies = []
    for i, j in enumerate(movable):
        p = int(parent[j + 1])
        T_prev_link = T_body_link[p]  # body frame (or root frame) -> parent link frame
        links = [k for k in range(model.nlinks) if body_of[k] == i]
        m = float(sum(model.link_mass[k] for k in links))
        com = np.zeros(3)
        I = np.zeros((3, 3))
        if m > 0:
            pts = [T_body_link[k][:3, :3] @ model.link_com[k] + T_body_link[k][:3, 3] for k in links]
            com = (pts[0] if len(links) == 1  # exactly the file's numbers when nothing is merged
                   else sum(model.link_mass[k] * c for k, c in zip(links, pts)) / m)
            for k, c in zip(links, pts):
                R = T_body_link[k][:3, :3]
                d = c - com
                I += R @ model.link_inertia[k] @ R.T + model.link_mass[k] * (d @ d * np.eye(3) - np.outer(d, d))
        else:  # massless body: keep the rotational inertia (if any) of its links
            for k in links:
                R = T_body_link[k][:3, :3]
                I += R @ model.link_inertia[k] @ R.T
        bodies.append(dict(joint=j, link=j + 1, T_fixed=T_prev_link @ model.joint_origin[j],
                           mass=m, com=com, inertia=0.5 * (I + I.T)))
    return bodies


# ---------------------------------------------------------------------- derivation
@dataclass
class SymbolicDynamics:
    """Closed-form ``tau = M(q) q'' + C(q, q') q' + g(q)`` of a serial chain.

    ``q``, ``qd``, ``qdd``: sympy symbol matrices (n x 1) named ``q1..qn``, ``qd1..``,
    ``qdd1..`` in the order of ``joint_names``. ``parameters`` maps every parameter
    symbol (with ``symbolic_parameters=True``) to its value in the model.
    """

    model_name: str
    joint_names: tuple[str, ...]
    q: Any
    qd: Any
    qdd: Any
    M: Any
    C: Any
    g: Any
    parameters: dict = field(default_factory=dict)
    parameter_info: dict = field(default_factory=dict)
    timings: dict = field(default_factory=dict)
    dM: list = field(default_factory=list, repr=False)  # dM[k] = dM/dq_k (n x n)
    _program_cache: Any = field(default=None, repr=False, compare=False)

    def _program(self) -> "_Program":
        if self._program_cache is None:
            self._program_cache = _Program(self)
        return self._program_cache

    @property
    def dof(self) -> int:
        return len(self.joint_names)

    @property
    def c(self) -> Any:
        """The Coriolis and centrifugal vector ``c = C(q, q') q'``."""
        return (self.C * self.qd).applyfunc(sp.expand)

    @property
    def tau(self) -> Any:
        """``M q'' + C q' + g`` as an n x 1 sympy matrix."""
        return self.M * self.qdd + self.C * self.qd + self.g

    def numeric(self, values: Mapping[Any, float] | None = None) -> "SymbolicDynamics":
        """A copy with the parameter symbols replaced by numbers (the model's values, or
        ``values`` keyed by symbol or symbol name, which override them)."""
        subs = self._parameter_values(values)
        if not subs:
            return self
        f = lambda e: e.xreplace(subs)  # noqa: E731
        return SymbolicDynamics(self.model_name, self.joint_names, self.q, self.qd, self.qdd,
                                self.M.applyfunc(f), self.C.applyfunc(f), self.g.applyfunc(f),
                                {}, {}, dict(self.timings), dM=[D.applyfunc(f) for D in self.dM])

    def _parameter_values(self, values: Mapping[Any, float] | None) -> dict:
        subs = {s: sp.Float(v) for s, v in self.parameters.items()}
        if values:
            by_name = {str(s): s for s in self.parameters}
            for key, v in values.items():
                sym = by_name.get(str(key))   # a Symbol by its name: derive's are real=True
                if sym is None and not by_name:
                    raise SimbenchError(f"parameter {shown(key)} given, but {self.model_name}'s expressions hold "
                                        "numbers, not parameters; derive with symbolic_parameters=True")
                if sym is None:
                    raise UnknownNameError("parameter", str(key), by_name, self.model_name)
                number = finite_or_none(v)
                if number is None:
                    raise SimbenchError(f"parameter {sym} = {shown(v)}; expected a finite number "
                                        f"(the model's value: {float(self.parameters[sym]):.6g})")
                subs[sym] = sp.Float(number)
        return subs

    # -------------------------------------------------------------- outputs
    def lambdify(self, values: Mapping[Any, float] | None = None) -> "LambdifiedDynamics":
        """numpy functions of M, C, g and tau (parameters replaced by ``values`` or the
        model's numbers)."""
        return LambdifiedDynamics(self.numeric(values))

    def latex(self) -> str:
        """M, C, c = C q' and g as a LaTeX ``align*`` block (``\\dot q`` for velocities)."""
        names = {s: f"q_{{{i + 1}}}" for i, s in enumerate(self.q)}
        names.update({s: f"\\dot{{q}}_{{{i + 1}}}" for i, s in enumerate(self.qd)})
        names.update({s: f"\\ddot{{q}}_{{{i + 1}}}" for i, s in enumerate(self.qdd)})
        tex = lambda e: sp.latex(e, symbol_names=names)  # noqa: E731
        return ("\\begin{align*}\n"
                f"M(q) &= {tex(self.M)} \\\\\n"
                f"C(q, \\dot{{q}}) &= {tex(self.C)} \\\\\n"
                f"c(q, \\dot{{q}}) = C(q, \\dot{{q}})\\,\\dot{{q}} &= {tex(self.c)} \\\\\n"
                f"g(q) &= {tex(self.g)}\n"
                "\\end{align*}\n")

    def to_c(self, path: str | os.PathLike, prefix: str | None = None,
             values: Mapping[Any, float] | None = None) -> Path:
        """Write C99 source for M, C, g (and tau) to ``path`` and a header next to it.

        Functions (arrays row-major, joints in ``joint_names`` order)::

            void PREFIX_mass_matrix(const double *q, double *M);            /* n*n */
            void PREFIX_coriolis_matrix(const double *q, const double *qd, double *C);
            void PREFIX_gravity_torques(const double *q, double *g);        /* n */
            void PREFIX_inverse_dynamics(const double *q, const double *qd,
                                         const double *qdd, double *tau);   /* n */
            int PREFIX_dof(void);

        The code comes from sympy's C99 printer after common-subexpression elimination.
        """
        path = Path(path)
        if not path.parent.is_dir():
            raise SimbenchError(f"to_c({str(path)!r}): the folder {str(path.parent)!r} does not exist; "
                                f"create it first (the .c and .h files go there)")
        prefix = _ident(prefix or path.stem)
        num = self.numeric(values)
        source, header = _c_source(num, prefix, path.with_suffix(".h").name)
        path.write_text(source)
        path.with_suffix(".h").write_text(header)
        return path

    def compile(self, path: str | os.PathLike | None = None, *, cc: str | None = None,
                opt: str = "-O2", values: Mapping[Any, float] | None = None) -> "CompiledDynamics":
        """Write the C source, build a shared library with the system C compiler and
        load it with ctypes. ``path``: where the .c file goes (a temporary folder by default).
        The temporary folder is removed with the returned object (garbage collection, or at the
        latest when Python exits); pass ``path`` to keep the files.
        ``opt``: the optimisation flag (``-O2`` takes about 40 s for a 7-DOF arm, ``-O0`` 1 s
        for code about 1.3x slower)."""
        compiler = cc or os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
        if not compiler:
            raise SimbenchError("no C compiler found (looked for $CC, cc, gcc)")
        if not shutil.which(compiler):
            found = shutil.which("cc") or shutil.which("gcc")
            raise SimbenchError(f"C compiler {compiler!r} (cc= or $CC) not found" +
                                (f"; the system's is {found!r}" if found else "; install gcc"))
        temporary = None
        if path is None:   # removed when the CompiledDynamics is garbage-collected, or at exit
            temporary = tempfile.mkdtemp(prefix="simbench_eom_")
            path = Path(temporary) / f"{_ident(self.model_name)}_eom.c"
        path = Path(path).absolute()   # ctypes loads a bare "x.so" from the library path only
        prefix = _ident(path.stem)
        self.to_c(path, prefix=prefix, values=values)
        lib = path.with_suffix(".so")
        cmd = [compiler, "-std=c99", opt, "-shared", "-fPIC", "-o", str(lib), str(path), "-lm"]
        res = subprocess.run(cmd, capture_output=True, text=True)
        if res.returncode != 0:
            raise SimbenchError(f"compiling {path} failed ({' '.join(cmd)}):\n{res.stderr}")
        return CompiledDynamics(lib, prefix, self.dof, self.joint_names, temporary=temporary)


def derive(model: RobotModel | str | os.PathLike, simplify: bool | str = True,
           symbolic_parameters: bool = False, *,
           gravity: Sequence[float] | None = None, max_dof: int = MAX_DOF) -> SymbolicDynamics:
    """Symbolic M(q), C(q, q') (Christoffel symbols) and g(q) of a serial chain.

    ``model``: revolute / continuous / prismatic joints in one chain (fixed joints are
    merged into the body they hang from; branches of fixed links are fine, branches of
    movable joints are refused), at most ``max_dof`` degrees of freedom.

    The derivation runs on sparse polynomials (sympy ``ring``) in ``s_i = sin q_i``,
    ``c_i = cos q_i`` (and the prismatic ``q_i``); derivatives use
    ``d/dq_i = c_i d/ds_i - s_i d/dc_i``.
    ``simplify``: ``True`` reduces every intermediate result modulo ``s_i^2 + c_i^2 = 1``
    (a canonical form, cheap: well under a second for 3 DOF) and drops float round-off terms
    (coefficients below 1e-13 of the largest in the same entry); ``"trig"`` also runs
    sympy's ``trigsimp`` on the final entries (angle sums such as ``cos(q1 + q2)``; slow
    beyond 3 DOF); ``False`` only expands.
    ``symbolic_parameters``: masses, COMs, inertias (merged per body, named after the
    body's link: ``m_LINK``, ``cx_LINK``, ``Ixx_LINK``, ...), joint offsets (``px_JOINT``, ...:
    the translation from the previous body's frame to the joint frame) and the gravity
    magnitude ``g`` become symbols; only entries that are non-zero in the model get a
    symbol, the zeros stay exact zeros. Their values are in ``.parameters``.
    ``gravity``: the gravity vector in the root frame (default ``model.gravity``, as every
    numeric function takes it).
    """
    from sympy.polys.domains import RR
    from sympy.polys.rings import ring as make_ring

    if isinstance(model, (str, os.PathLike)):   # a file or "pybullet_data:" / "simbench:" name
        from ..model import load
        model = load(model)
    if not isinstance(model, RobotModel):
        raise SimbenchError(f"derive(model): expected a RobotModel or a URDF path, got {shown(model)}")
    if simplify is not True and simplify is not False and simplify != "trig":
        raise SimbenchError(f"simplify must be True, False or 'trig', got {simplify!r}")
    symbolic_parameters = flag(symbolic_parameters, "symbolic_parameters")
    if not is_count(max_dof) or max_dof < 1:
        raise SimbenchError(f"max_dof = {shown(max_dof)}; expected a whole number >= 1 (default "
                            f"{MAX_DOF}){nearest_hint(max_dof, True)}")
    t0 = time.perf_counter()
    bodies = _chain_bodies(model, max_dof)
    n = len(bodies)
    if gravity is None:
        gravity = model.gravity
    gvec = np.asarray(gravity, dtype=float)
    if gvec.shape != (3,) or not np.all(np.isfinite(gvec)):
        raise SimbenchError(f"gravity must be 3 finite numbers, got {shown(gravity)}")
    q = sp.Matrix(sp.symbols(f"q1:{n + 1}", real=True))
    qd = sp.Matrix(sp.symbols(f"qd1:{n + 1}", real=True))
    qdd = sp.Matrix(sp.symbols(f"qdd1:{n + 1}", real=True))
    revolute = [model.joint_type_code[b["joint"]] != PRISMATIC for b in bodies]

    # ---- parameters: numbers, or symbols for the non-zero ones
    params: dict = {}
    info: dict = {}

    def param(name: str, value: float, what: str) -> Any:
        v = _clean(value)
        if not symbolic_parameters or v == 0:
            return v
        s = sp.Symbol(name, real=True)
        params[s] = float(value)
        info[s] = what
        return s

    if symbolic_parameters and np.any(gvec != 0):
        gsym = sp.Symbol("g", positive=True)
        gnorm = float(np.linalg.norm(gvec))
        params[gsym], info[gsym] = gnorm, "gravity magnitude"
        grav = [(_clean(x / gnorm), gsym) for x in gvec]
    else:
        grav = [(_clean(x), None) for x in gvec]
    spec = []
    for b in bodies:
        j = b["joint"]
        jname, lname = _ident(model.joint_all_names[j]), _ident(model.link_names[b["link"]])
        what = f"body {model.link_names[b['link']]!r}"
        Tf = b["T_fixed"]
        I = {}
        for (r, c_), nm in {(0, 0): "xx", (1, 1): "yy", (2, 2): "zz", (0, 1): "xy", (0, 2): "xz",
                            (1, 2): "yz"}.items():
            I[r, c_] = I[c_, r] = param(f"I{nm}_{lname}", b["inertia"][r, c_],
                                        f"inertia {nm} of {what} about its COM")
        spec.append(dict(
            R=[[_clean(x) for x in row] for row in Tf[:3, :3]],
            p=[param(f"p{a}_{jname}", Tf[k, 3], f"offset {a} of joint {model.joint_all_names[j]!r}")
               for k, a in enumerate("xyz")],
            axis=[_clean(x) for x in model.joint_axis[j]],
            m=param(f"m_{lname}", b["mass"], f"mass of {what}"),
            c=[param(f"c{a}_{lname}", b["com"][k], f"centre of mass {a} of {what}") for k, a in enumerate("xyz")],
            I=[[I[r, c_] for c_ in range(3)] for r in range(3)]))

    # ---- the polynomial ring: s_i, c_i (revolute), q_i (prismatic), parameters, q'
    S_sym = {i: sp.Symbol(f"_s{i + 1}") for i in range(n) if revolute[i]}
    C_sym = {i: sp.Symbol(f"_c{i + 1}") for i in range(n) if revolute[i]}
    Q_sym = {i: q[i] for i in range(n) if not revolute[i]}
    psyms = list(params)
    gens = list(S_sym.values()) + list(C_sym.values()) + list(Q_sym.values()) + psyms + list(qd)
    R, *G = make_ring(gens, RR, order="lex")
    gen_of = dict(zip(gens, G))
    s_of = {i: gen_of[S_sym[i]] for i in S_sym}
    c_of = {i: gen_of[C_sym[i]] for i in C_sym}
    nS = len(S_sym)
    red = _RingReducer(R, nS, simplify is not False)

    def el(x: Any) -> Any:
        if isinstance(x, sp.Symbol):
            return gen_of[x]
        return R(x)

    def mat(A: list) -> list:
        return [[el(x) for x in row] for row in A]

    def mul(A: list, B: list) -> list:
        return [[red(sum((A[i][k] * B[k][j] for k in range(len(B))), R.zero)) for j in range(len(B[0]))]
                for i in range(len(A))]

    def cross(a: list, b: list) -> list:
        return [red(a[1] * b[2] - a[2] * b[1]), red(a[2] * b[0] - a[0] * b[2]), red(a[0] * b[1] - a[1] * b[0])]

    def col(v: list) -> list:
        return [[x] for x in v]

    def ddq(e: Any, i: int) -> Any:
        if revolute[i]:
            return red(c_of[i] * e.diff(s_of[i]) - s_of[i] * e.diff(c_of[i]))
        return red(e.diff(gen_of[Q_sym[i]]))

    # ---- forward kinematics of every body
    Rw = [[R(1 if r == c_ else 0) for c_ in range(3)] for r in range(3)]
    pw = [R.zero] * 3
    axes_w, origins_w, com_w, R_body = [], [], [], []
    for i, b in enumerate(spec):
        pf = [el(x) for x in b["p"]]
        p_joint = [red(pw[r] + sum((Rw[r][k] * pf[k] for k in range(3)), R.zero)) for r in range(3)]
        R_joint = mul(Rw, mat(b["R"]))
        a = b["axis"]
        z = [red(sum((R_joint[r][k] * R(a[k]) for k in range(3)), R.zero)) for r in range(3)]
        if revolute[i]:
            s, c = s_of[i], c_of[i]
            K = [[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]]
            K2 = [[sum(K[r][k] * K[k][c_] for k in range(3)) for c_ in range(3)] for r in range(3)]
            Rq = [[R(1 if r == c_ else 0) + s * R(K[r][c_]) + (R(1) - c) * R(K2[r][c_]) for c_ in range(3)]
                  for r in range(3)]  # Rodrigues, exact for a unit axis
            Rw, pw = mul(R_joint, Rq), p_joint
        else:
            qi = gen_of[Q_sym[i]]
            Rw, pw = R_joint, [red(p_joint[r] + z[r] * qi) for r in range(3)]
        axes_w.append(z)
        origins_w.append(p_joint)
        cb = [el(x) for x in b["c"]]
        com_w.append([red(pw[r] + sum((Rw[r][k] * cb[k] for k in range(3)), R.zero)) for r in range(3)])
        R_body.append(Rw)
    t_kin = time.perf_counter()

    # ---- mass matrix from the COM Jacobians, potential energy
    M = [[R.zero] * n for _ in range(n)]
    P = R.zero
    gr = [(R(v) * gen_of[s]) if s is not None else R(v) for v, s in grav]
    for i, b in enumerate(spec):
        m, I = el(b["m"]), mat(b["I"])
        Jv, Jwb = [], []  # columns
        Rt = [[R_body[i][c_][r] for c_ in range(3)] for r in range(3)]
        for k in range(n):
            if k > i:
                Jv.append([R.zero] * 3)
                Jwb.append([R.zero] * 3)
            elif revolute[k]:
                Jv.append(cross(axes_w[k], [com_w[i][r] - origins_w[k][r] for r in range(3)]))
                Jwb.append([red(sum((Rt[r][t] * axes_w[k][t] for t in range(3)), R.zero)) for r in range(3)])
            else:
                Jv.append(axes_w[k])
                Jwb.append([R.zero] * 3)
        IJ = [[red(sum((I[r][t] * Jwb[k][t] for t in range(3)), R.zero)) for r in range(3)] for k in range(n)]
        for r in range(i + 1):
            for c_ in range(r, i + 1):
                lin = sum((Jv[r][t] * Jv[c_][t] for t in range(3)), R.zero)
                ang = sum((Jwb[r][t] * IJ[c_][t] for t in range(3)), R.zero)
                M[r][c_] = red(M[r][c_] + m * red(lin) + ang)
        P = red(P - m * sum((gr[t] * com_w[i][t] for t in range(3)), R.zero))
    for r in range(n):
        for c_ in range(r):
            M[r][c_] = M[c_][r]
    t_M = time.perf_counter()

    # ---- Christoffel symbols: Gamma_ijk = 1/2 (dM_ij/dq_k + dM_ik/dq_j - dM_jk/dq_i)
    dM = [[[ddq(M[r][c_], k) if c_ >= r else None for c_ in range(n)] for r in range(n)] for k in range(n)]
    for k in range(n):
        for r in range(n):
            for c_ in range(r):
                dM[k][r][c_] = dM[k][c_][r]
    qdg = [gen_of[x] for x in qd]
    half = R(0.5)
    C = [[red(half * sum(((dM[k][i][j] + dM[j][i][k] - dM[i][j][k]) * qdg[k] for k in range(n)), R.zero))
          for j in range(n)] for i in range(n)]
    t_C = time.perf_counter()
    g = [ddq(P, i) for i in range(n)]
    t_g = time.perf_counter()

    # ---- back to sympy expressions in sin(q_i), cos(q_i)
    back = [sp.sin(q[i]) for i in S_sym] + [sp.cos(q[i]) for i in C_sym] + list(Q_sym.values()) + psyms + list(qd)
    to_expr = lambda e: _ring_to_expr(e, back)  # noqa: E731
    Mx = sp.Matrix(n, n, lambda r, c_: to_expr(M[r][c_]))
    Cx = sp.Matrix(n, n, lambda r, c_: to_expr(C[r][c_]))
    gx = sp.Matrix(n, 1, lambda r, _: to_expr(g[r]))
    dMx = [sp.Matrix(n, n, lambda r, c_, k=k: to_expr(dM[k][r][c_])) for k in range(n)]
    if simplify == "trig":
        Mx, Cx, gx = (X.applyfunc(lambda e: _chop(sp.expand(sp.trigsimp(e)))) for X in (Mx, Cx, gx))
    t_end = time.perf_counter()
    timings = dict(kinematics=t_kin - t0, mass_matrix=t_M - t_kin, coriolis=t_C - t_M,
                   gravity=t_g - t_C, to_sympy=t_end - t_g, total=t_end - t0)
    return SymbolicDynamics(model.name, tuple(model.joint_names), q, qd, qdd, Mx, Cx, gx,
                            params, info, timings, dM=dMx)


def _clean(x: float) -> float:
    """Values within 1e-12 of 0 or +-1 become exactly that (rotations by rpy = pi/2 give
    exact zeros instead of 6e-17)."""
    x = float(x)
    for exact in (0.0, 1.0, -1.0):
        if abs(x - exact) < _CLEAN_TOL:
            return exact
    return x


class _RingReducer:
    """Reduce a ring element modulo ``s_i^2 + c_i^2 - 1`` (replace ``s_i^2`` by ``1 - c_i^2``:
    the result is linear in each ``s_i``, a canonical form; the first ``ns`` generators are
    the s_i, the next ``ns`` the c_i) and chop float round-off (see :func:`_chop`)."""

    def __init__(self, ring: Any, ns: int, active: bool, rel: float = 1e-13):
        self.ring, self.ns, self.active, self.rel = ring, ns, active, rel

    def __call__(self, p: Any) -> Any:
        if not self.active or not p:
            return p
        ns = self.ns
        needs = ns and any(m[k] >= 2 for m in p.itermonoms() for k in range(ns))
        terms: dict = {}
        if needs:
            for monom, coeff in p.iterterms():
                todo = [(monom, coeff)]
                while todo:
                    mono, cf = todo.pop()
                    for k in range(ns):
                        if mono[k] >= 2:  # s^a = s^(a-2) (1 - c^2)
                            a = list(mono)
                            a[k] -= 2
                            b = list(a)
                            b[ns + k] += 2
                            todo.append((tuple(a), cf))
                            todo.append((tuple(b), -cf))
                            break
                    else:
                        terms[mono] = terms.get(mono, 0) + cf
        else:
            terms = dict(p.iterterms())
        big = max((abs(c) for c in terms.values()), default=0)
        cut = self.rel * big
        return self.ring.from_dict({m: c for m, c in terms.items() if abs(c) > cut})


def _ring_to_expr(p: Any, back: list) -> "sp.Expr":
    """A ring element as a sympy expression; integral float coefficients become integers."""
    terms = []
    for monom, coeff in p.iterterms():
        c = float(coeff)
        cexpr = sp.Integer(int(c)) if c.is_integer() and abs(c) < 2**53 else sp.Float(c)
        terms.append(sp.Mul(cexpr, *[b ** e for b, e in zip(back, monom) if e]))
    return sp.Add(*terms)


def _chop(e: "sp.Expr", rel: float = 1e-13) -> "sp.Expr":
    """Drop the terms of a sum whose float coefficient is below ``rel`` times the largest
    (round-off of rotations such as 6e-17 left over by cancelling terms)."""
    if not isinstance(e, sp.Add):
        return e
    terms = e.args
    coeffs = [abs(float(t.as_coeff_Mul()[0])) for t in terms]
    big = max(coeffs)
    if big == 0:
        return e
    keep = [t for t, c in zip(terms, coeffs) if c >= rel * big or not t.as_coeff_Mul()[0].is_Float]
    return sp.Add(*keep) if len(keep) != len(terms) else e


# the numeric halves (lambdify, C code), re-exported here: :mod:`.symbolic_codegen`
from .symbolic_codegen import CompiledDynamics, LambdifiedDynamics, _c_source, _Program  # noqa: E402

__all__ = ["derive", "SymbolicDynamics", "LambdifiedDynamics", "CompiledDynamics", "MAX_DOF"]
