"""The collision detector: distances between named objects, for robot configurations ``q``.

Adam Heins, "shortest distances with PyBullet": a second, DIRECT server holds the same scene and
answers "how far is link X from object Y in configuration q" without touching the running
simulation. Beyond his pyb_utils: one ``resetJointStatesMultiDof`` call per robot, several
robots, whole bodies or single links, named results with witness points, padding, disabled
pairs and collision filters (applied to the pair list: ``getClosestPoints`` ignores them),
batches over worker processes, thread safety, and one world (:mod:`simbench.bullet.sync`).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pybullet as p

from ..errors import ShapeError, SimbenchError, real_array, reason, shown
from .collision_kernels import KERNELS, QueryCore, kernel_collision, kernel_distances, thresholds
from .collision_names import ALL_LINKS, ClosestPoints, NamedCollisionObject, Pair
from .collision_paths import PathHit, first_collision
from .collision_setup import check_distance, check_workers, given_columns, plan, refreshed, source
from .collision_workers import DEFAULT_TIMEOUT, PROGRESS_MIN, WorkerPool, WorkerSpec, snapshot
from .collision_world import FloatingBases, facts, is_server_pair
from .records import JointState
from .scene import LoadedBody
from .servers import PAIR_CLOSED
from .sync import WorldSync, client_state


class CollisionDetector:
    """Distances between named pairs of objects, for robot configurations ``q``.

    ``CollisionDetector(scene, pairs)``: ``scene`` is a ``ServerPair`` (its collision server,
    synced with the main world before each query), a
    :class:`~simbench.bullet.scene.LoadedScene` (queried as it is), or a PyBullet client id
    with ``bodies=`` a dict body name -> body id (the form of Adam Heins's "shortest distances
    with PyBullet", queried as it is).

    * ``pairs``: ``(A, B)`` with A, B a body name (the whole body: every link with geometry),
      a ``(body, link)`` tuple (link None: the base link) or a :class:`NamedCollisionObject`.
      Names are resolved once, here.
    * ``robot``: the body (or a sequence of bodies) whose movable joints ``q`` sets; default
      the scene's robot. With several robots ``q`` is one stacked vector, robots in the order
      given, each robot's joints in file order (:attr:`joint_names`), or a mapping body name
      -> q (a robot left out keeps its current configuration).
    * ``padding``: metres added around links: a number (every link of the robots), or a dict
      keyed by robot link name, body name (every link of it) or NamedCollisionObject.
      distance = raw distance - padding(A) - padding(B).
    * ``disabled``: pairs never checked: pairs of robot link names (as in an SRDF), of body
      names (every link) or NamedCollisionObjects, or an SRDF file path.
    * PyBullet's collision filters (groups/masks, pair filters) known when the detector is
      built are honoured (:mod:`simbench.bullet.collision_filters`).
    * ``workers``: default number of processes for batches; ``worker_timeout``: seconds a
      worker may take to answer before it is replaced.
    * ``check_units``: False leaves out the once-per-detector degrees warning (its caller judged q).
    """

    def __init__(self, scene: Any, pairs: Iterable[Any], *, bodies: Mapping[str, int] | None = None,
                 robot: str | Sequence[str] | None = None, padding: float | Mapping[Any, float] | None = None,
                 disabled: Any = None, workers: int = 1, worker_timeout: float = DEFAULT_TIMEOUT,
                 sync: WorldSync | None = None, check_units: bool = True):
        loaded, sync = source(scene, bodies, sync)
        if isinstance(pairs, Mapping):
            raise SimbenchError("CollisionDetector(client, bodies, pairs) is the argument order of Adam Heins's post; "
                                "write CollisionDetector(client, pairs, bodies=bodies)")
        self.loaded, self._sync = loaded, sync
        self.client = loaded.client
        #: the ServerPair's closed flag, shared with its Simulation (empty while open)
        self._gone: Sequence[str] = getattr(scene, "gone", ()) if is_server_pair(scene) else ()
        self._state = client_state(self.client)
        self._lock = self._state.lock
        self._plan = pl = plan(loaded, robot, pairs, padding, disabled)
        if not check_units:
            pl.said.append("not asked")
        self.robots: tuple[str, ...] = pl.robots
        self.robot_bodies: tuple[LoadedBody, ...] = pl.robot_bodies
        #: joint order of ``q`` (with several robots: ``"body/joint"``, robots in the given order)
        self.joint_names: tuple[str, ...] = pl.joint_names
        self.dof = pl.dof
        self.pairs: list[Pair] = pl.pairs
        self._poses, self._body_ids = pl.poses, pl.body_ids
        self._use(pl)
        self._shape1 = (self.dof,)
        self._bases = FloatingBases(self.robot_bodies, pl.poses)
        #: columns of a ``q`` that also poses the floating robots' bases (see :class:`FloatingBases`)
        self.nq = self._bases.nq
        self._generation = sync.generation if sync is not None else 0
        self._posing = frozenset(b.id for b in self.robot_bodies if b.movable_indices)
        self.workers = check_workers(workers)
        self.worker_timeout = float(worker_timeout)
        self._pool: WorkerPool | None = None
        if self.workers > 1 and self.scene is not None:  # boot the helpers in the background now
            self._ensure_pool(self.workers - 1)

    @property
    def bodies(self) -> dict[str, int]:
        return self.loaded.bodies

    @property
    def robot_name(self) -> str | None:
        """The (first) robot's body name."""
        return self.robots[0] if self.robots else None

    @property
    def robot_body(self) -> LoadedBody | None:
        return self.robot_bodies[0] if self.robot_bodies else None

    def _use(self, pl: Any) -> None:
        """Query with plan ``pl`` (its pairs' links, exclusions and padding)."""
        self._plan, self._pair_args = pl, pl.pair_args
        #: per pair, ((body id, link indices), (body id, link indices)) of its two sides
        self.pair_links = pl.pair_links
        self._core = QueryCore(self.client, self._poses, self._pair_args)
        self._search: dict[float, list] = {}  # the pairs' search distances by max_distance (fast path)
        if getattr(self, "_pool", None) is not None:
            self._close_pool()   # the helpers hold the old plan

    # ------------------------------------------------------------------ one world
    def _prepare(self) -> None:
        """Bring the collision server to the state the query needs (call with the lock held):
        the bodies, the poses, and the collision filters set since the last query."""
        if self._gone:  # a closed simulation's client id may already serve another one
            self._check_connected()
        new = refreshed(self._plan, self.loaded)
        if new is not None:
            self._use(new)
        s = self._sync
        if s is None:
            self._state.posed |= self._posing
            return
        if s.generation != self._generation:
            self._check_bodies()
        s.prepare(self._posing)

    def _check_connected(self) -> None:
        """One clear line when the queried server is gone: called after a PyBullet error, and
        before a query once the owning Simulation is closed (a working query pays one truth test)."""
        if self._gone and self._gone[0] != PAIR_CLOSED:
            raise SimbenchError(f"the simulation was {self._gone[0]}; distances need an open Simulation") from None
        if self._gone or not p.isConnected(physicsClientId=self.client):
            why = "its ServerPair was closed (pair.close())" if self._sync is not None else \
                f"PyBullet client {self.client} was disconnected"
            raise SimbenchError(f"the collision server of this detector is gone: {why}; distances need "
                                "connected servers (build a new detector on open ones)") from None

    def _check_bodies(self) -> None:
        for name, bid in sorted(self._body_ids.items()):
            if self.bodies.get(name) != bid:
                raise SimbenchError(f"body {name!r} was removed from the scene after this detector was built; "
                                    "build a new detector")
        self._generation = self._sync.generation
        self._close_pool()  # the helpers' servers hold the old set of bodies

    def current_configuration(self) -> np.ndarray:
        """The robots' configuration (dof,) in the main world (synced detectors) or on the
        queried client (others), in :attr:`joint_names` order."""
        try:
            with self._lock:
                self._prepare()
                return self._current()
        except p.error:
            self._check_connected()
            raise

    def _current(self) -> np.ndarray:
        out = np.empty(self.dof)
        for body, idx, start, stop in self._poses:
            if not idx:
                continue
            if self._sync is not None:
                out[start:stop] = self._sync.joint_positions(body)
            else:
                out[start:stop] = [JointState(*s).position for s in p.getJointStates(body, idx, physicsClientId=self.client)]
        return out

    # ------------------------------------------------------------------ configurations
    def check_q(self, q: Any, name: str = "q", bases: bool = True) -> np.ndarray:
        """``q`` as a float array (..., dof) in :attr:`joint_names` order, or (``bases``) with
        :attr:`nq` columns when it also poses the bases of floating robots
        (:class:`~simbench.bullet.collision_world.FloatingBases`). Accepts a mapping by joint
        name, or (several robots) by body name -> that robot's q; ``None`` is the current
        configuration (see :meth:`current_configuration`)."""
        if q is None:
            return self.current_configuration()
        if isinstance(q, Mapping):   # judged: the values given, not the current ones filled in
            arr = self._plan.from_mapping(q, name, self.current_configuration)
            self._plan.check_values(np.where(given_columns(self._plan, q), arr, 0.0), name)
            return arr
        try:
            arr = real_array(q)     # not text, which numpy would read as numbers
        except (TypeError, ValueError, OverflowError) as exc:
            raise ShapeError(f"{name} must be numbers, got {shown(q)} ({reason(exc)})") from None
        full = bases and self.nq != self.dof and arr.ndim > 0 and arr.shape[-1] == self.nq
        if arr.ndim == 0 or (arr.shape[-1] != self.dof and not full):
            also = f" (or {self.nq} columns: base pose x y z qx qy qz qw before each floating robot's joints)" \
                if bases and self.nq != self.dof else ""
            raise ShapeError(f"{name} has shape {arr.shape}; expected ({self.dof},) or (N, {self.dof}) "
                             f"with joints in order {list(self.joint_names)}{also}")
        self._plan.check_values(arr, name, self._bases.joint_cols if full else None)
        return arr

    def set_configuration(self, q: Any) -> None:
        """Put the robots of the collision server in configuration ``q`` (one call per robot)."""
        try:
            with self._lock:
                self._prepare()
                q = self.check_q(q, bases=False)
                if q.ndim != 1:
                    raise ShapeError(f"q has shape {q.shape}; expected ({self.dof},)")
                for body, idx, start, stop in self._poses:
                    if idx:
                        p.resetJointStatesMultiDof(body, idx, q[start:stop, None].tolist(), physicsClientId=self.client)
        except p.error:
            self._check_connected()
            raise

    # ------------------------------------------------------------------ running the loops
    def _run(self, kind: str, q: Any, arg: float, workers: int | None) -> tuple[list, tuple, int]:
        """Validate q, run loop ``kind`` over every configuration; (flat results, batch shape, n)."""
        workers = self.workers if workers is None else check_workers(workers)
        try:
            return self._run_locked(kind, q, arg, workers)
        except p.error:
            self._check_connected()
            raise

    def _run_locked(self, kind: str, q: Any, arg: float, workers: int) -> tuple[list, tuple, int]:
        """:meth:`_run` past its argument checks, with the lock held."""
        with self._lock:
            self._prepare()
            arr = self.check_q(q)
            batch = arr.shape[:-1]
            n = int(np.prod(batch, dtype=int))
            if arr.shape[-1] != self.dof:  # base poses too: one configuration at a time, here
                return self._run_posed(kind, arr.reshape(n, self.nq), arg), batch, n
            flat = arr.reshape(n, self.dof)
            bar = None
            if n >= PROGRESS_MIN:
                from ..progress import progress

                bar = progress(total=n, desc=f"collision {kind}", unit="config")
            try:
                if workers > 1 and n > 1:   # no more processes than rows
                    return self._run_parallel(kind, flat, arg, min(int(workers), n), bar), batch, n
                if bar is None:
                    return KERNELS[kind](self._core, flat[:, :, None].tolist(), arg), batch, n
                out: list = []
                for s in range(0, n, 4096):
                    out += KERNELS[kind](self._core, flat[s:s + 4096, :, None].tolist(), arg)
                    bar.update(min(4096, n - s))
                return out, batch, n
            finally:
                if bar is not None:
                    bar.close()

    def _run_posed(self, kind: str, flat: np.ndarray, arg: float) -> list:
        """Loop ``kind`` over full rows (nq,): each row's bases posed, then its joints; the
        bases are put back afterwards."""
        out: list = []
        joints = flat[:, self._bases.joint_cols]
        with self._bases.kept(self.client):
            for row, jrow in zip(flat, joints):
                self._bases.pose(self.client, row)
                out += KERNELS[kind](self._core, jrow[None, :, None].tolist(), arg)
        return out

    def _ensure_pool(self, n_helpers: int) -> WorkerPool:
        if self.scene is None:
            raise SimbenchError("workers > 1 need a detector built from a LoadedScene or ServerPair: "
                                "the workers load the same scene into their own servers")
        if self._pool is not None and self._pool.spec.bodies != self.bodies:
            self._close_pool()  # bodies were added or removed since the helpers started
        if self._pool is None:
            spec = WorkerSpec(self.scene, dict(self.bodies), self._core._replace(client=-1))
            self._pool = WorkerPool(spec, n_helpers, self.worker_timeout)
        self._pool.timeout = self.worker_timeout
        self._pool.grow(n_helpers)
        return self._pool

    def _run_parallel(self, kind: str, flat: np.ndarray, arg: float, workers: int, bar: Any) -> list:
        pool = self._ensure_pool(workers - 1)
        try:
            return pool.run(kind, flat, arg, self._core, snapshot(self.client, self.bodies), workers - 1, bar)
        except BaseException:
            self._close_pool()  # a half-finished batch leaves answers in the pipes
            raise

    def _close_pool(self) -> None:
        if self._pool is not None:
            self._pool.close()
            self._pool = None

    # ------------------------------------------------------------------ queries
    def compute_distances(self, q: Any = None, max_distance: float = 1.0, *,
                          workers: int | None = None) -> np.ndarray:
        """Signed distance of every pair, saturating at ``max_distance`` (>= 0): shape
        (n_pairs,) for one configuration, (..., n_pairs) for a batch (...) of configurations;
        ``q`` None: the current configuration.

        ``workers`` > 1 spreads a batch over that many processes (this one included), each with
        its own DIRECT server loaded from the same scene; results are in input order and equal
        the one-at-a-time results.
        """
        md = check_distance(max_distance, "max_distance", minimum=0.0)
        if type(q) is np.ndarray and q.shape == self._shape1 and q.dtype == np.float64:
            ql = q.tolist()  # fast path for one configuration: same loop, lighter checks
            total = sum(ql)
            if total - total == 0.0:  # all finite
                self._plan.turned(ql)
                try:
                    with self._lock:
                        self._prepare()
                        pairs = self._search.get(md)
                        if pairs is None:
                            if len(self._search) > 32:
                                self._search.clear()
                            pairs = self._search[md] = thresholds(self._core, md)
                        out = np.array(kernel_distances(self._core, [[[x] for x in ql]], md, pairs))
                except p.error:
                    self._check_connected()
                    raise
                return np.minimum(out, md, out=out)
        flat, batch, n = self._run("distances", q, md, workers)
        out = np.asarray(flat, dtype=float).reshape(*batch, len(self.pairs))
        return np.minimum(out, md, out=out)

    def closest_points(self, q: Any = None, max_distance: float = 1.0, *,
                       workers: int | None = None) -> list[ClosestPoints] | list:
        """Per pair a :class:`ClosestPoints` record (names of the closest links, distance,
        witness points, normal); for a batch of configurations, a (nested) list of such lists."""
        arrays = self.closest_point_arrays(q, max_distance, workers=workers)
        d, pa, pb, nrm = arrays["distance"], arrays["point_a"], arrays["point_b"], arrays["normal"]
        la, lb = arrays["link_a"], arrays["link_b"]

        def name(obj: NamedCollisionObject, link: int) -> NamedCollisionObject:
            if not obj.whole_body or link == -2:
                return obj
            return NamedCollisionObject(obj.body, facts(self.loaded.body(obj.body)).names[int(link)])

        def records(idx: tuple) -> list[ClosestPoints]:
            return [ClosestPoints(name(a, la[idx + (k,)]), name(b, lb[idx + (k,)]), float(d[idx + (k,)]),
                                  pa[idx + (k,)], pb[idx + (k,)], nrm[idx + (k,)])
                    for k, (a, b) in enumerate(self.pairs)]

        batch = d.shape[:-1]
        if not batch:
            return records(())

        def nest(prefix: tuple) -> list:
            if len(prefix) == len(batch):
                return records(prefix)
            return [nest(prefix + (i,)) for i in range(batch[len(prefix)])]

        return nest(())

    def closest_point_arrays(self, q: Any = None, max_distance: float = 1.0, *,
                             workers: int | None = None) -> dict[str, np.ndarray]:
        """The closest points as arrays: ``distance`` (..., P), ``point_a``, ``point_b``,
        ``normal`` (..., P, 3), and ``link_a``, ``link_b`` (..., P): PyBullet link indices of
        the closest links (-1 the base; -2 nothing found for a whole-body object). Padding moves
        the witness points out along the normal so that ``point_a - point_b = distance * normal``."""
        md = check_distance(max_distance, "max_distance", minimum=0.0)
        flat, batch, n = self._run("closest", q, md, workers)
        P = len(self.pairs)
        rows = list(zip(*flat)) if flat else [()] * 8
        d = np.array(rows[0], dtype=float).reshape(n, P)
        pa = np.array(rows[1], dtype=float).reshape(n, P, 3)
        pb = np.array(rows[2], dtype=float).reshape(n, P, 3)
        nrm = np.array(rows[3], dtype=float).reshape(n, P, 3)
        la = np.array(rows[4], dtype=int).reshape(n, P)
        lb = np.array(rows[5], dtype=int).reshape(n, P)
        pad_a = np.array(rows[6], dtype=float).reshape(n, P, 1)
        pad_b = np.array(rows[7], dtype=float).reshape(n, P, 1)
        pa = pa - pad_a * nrm
        pb = pb + pad_b * nrm
        d = np.minimum(d, md)
        return {"distance": d.reshape(*batch, P), "point_a": pa.reshape(*batch, P, 3),
                "point_b": pb.reshape(*batch, P, 3), "normal": nrm.reshape(*batch, P, 3),
                "link_a": la.reshape(*batch, P), "link_b": lb.reshape(*batch, P)}

    def in_collision(self, q: Any = None, margin: float = 0.0, *,
                     workers: int | None = None) -> bool | np.ndarray:
        """True when any pair is closer than ``margin`` (distance < margin); (...,) for a batch."""
        mg = check_distance(margin, "margin")
        if type(q) is np.ndarray and q.shape == self._shape1 and q.dtype == np.float64:
            ql = q.tolist()
            total = sum(ql)
            if total - total == 0.0:
                self._plan.turned(ql)
                try:
                    with self._lock:
                        self._prepare()
                        return kernel_collision(self._core, [[[x] for x in ql]], mg)[0]
                except p.error:
                    self._check_connected()
                    raise
        flat, batch, n = self._run("collision", q, mg, workers)
        if not batch:
            return bool(flat[0])
        return np.asarray(flat, dtype=bool).reshape(batch)

    def link_distances(self, q: Any = None, max_distance: float = 1.0, *, workers: int | None = None) -> tuple | list:
        """Per configuration (a list for a batch (N, dof)) and per pair, the tuple of
        (link A, link B, distance) of every point PyBullet finds within ``max_distance``, links
        by name, padding applied: for a whole-body pair, every link pair that comes that close,
        not only the closest."""
        names = [(facts(self.loaded.body(a.body)).names, facts(self.loaded.body(b.body)).names) for a, b in self.pairs]
        rows = self._link_index_distances(q, max_distance, workers)
        named = [tuple(tuple((na[la], nb[lb], d) for la, lb, d in pts) for (na, nb), pts in zip(names, row))
                 for row in (rows if isinstance(rows, list) else [rows])]
        return named if isinstance(rows, list) else named[0]

    def _link_index_distances(self, q: Any, max_distance: float, workers: int | None) -> tuple | list:
        """:meth:`link_distances` with PyBullet link indices (the path checks' motion bounds)."""
        flat, batch, n = self._run("links", q, check_distance(max_distance, "max_distance", minimum=0.0), workers)
        rows = [tuple(flat[k * len(self.pairs):(k + 1) * len(self.pairs)]) for k in range(n)]
        return rows[0] if not batch else rows

    def colliding_pairs(self, q: Any = None, margin: float = 0.0, *, workers: int | None = None) -> list:
        """The pairs closer than ``margin``: a list of (A, B) for one configuration, a list of
        such lists for a batch (N, dof)."""
        d = self.compute_distances(q, max_distance=max(margin, 0.0) + 1e-3, workers=workers)
        if d.ndim == 1:
            return [pr for pr, x in zip(self.pairs, d) if x < margin]
        flat = d.reshape(-1, len(self.pairs))
        return [[pr for pr, x in zip(self.pairs, row) if x < margin] for row in flat]

    # ------------------------------------------------------------------ paths
    def path_is_free(self, q0: Any, q1: Any, resolution: float = 0.005, *, margin: float = 0.0,
                     method: str = "advance") -> bool:
        """True when the straight segment from ``q0`` to ``q1`` is free (every pair farther
        than ``margin``) everywhere, not only at samples; see :mod:`simbench.bullet.collision_paths`."""
        path = np.stack([self.check_q(q0, "q0", bases=False), self.check_q(q1, "q1", bases=False)])
        return self._first_collision(path, resolution, margin, method) is None

    def first_collision(self, path: Any, resolution: float = 0.005, *, margin: float = 0.0,
                        method: str = "advance") -> PathHit | None:
        """The first flagged configuration along ``path`` (K, dof), straight edges between
        consecutive rows, as a ``PathHit(edge, t, q, pair)``, or None when every edge is free
        (every pair at least ``margin`` apart everywhere on it); batched over edges. See
        :mod:`simbench.bullet.collision_paths` for the guarantee."""
        return self._first_collision(self.check_q(path, "path", bases=False), resolution, margin, method)

    def _first_collision(self, path: np.ndarray, resolution: float, margin: float, method: str) -> PathHit | None:
        if self._gone:  # its motion bounds read the server before any query
            self._check_connected()
        try:
            return first_collision(self, path, resolution, margin=margin, method=method)
        except p.error:
            self._check_connected()
            raise

    # ------------------------------------------------------------------ misc
    @property
    def pair_names(self) -> list[tuple[str, str]]:
        return [(str(a), str(b)) for a, b in self.pairs]

    @property
    def filtered(self) -> list[bool]:
        """Per pair, True when PyBullet's collision filters let none of its links touch: its
        column reads "nothing found" (``max_distance``) while they do."""
        with self._lock:
            self._prepare()
            return [w is not None and len(w.excluded) == len(la) * len(lb)
                    for (*_, w), ((_, la), (_, lb)) in zip(self._pair_args, self.pair_links)]

    @property
    def scene(self) -> Any:
        """The scene description (None for a raw client + bodies dict)."""
        return self.loaded.scene

    def start_workers(self, workers: int | None = None, wait: bool = True) -> None:
        """Start the helper processes for ``workers`` processes now (``wait``: until they
        have loaded the scene) instead of at the first batch."""
        workers = self.workers if workers is None else int(workers)
        if workers < 2:
            return
        with self._lock:
            pool = self._ensure_pool(workers - 1)
            if wait:
                pool.wait_ready()

    def close(self) -> None:
        """Stop the worker processes (the collision server itself belongs to the caller)."""
        with self._lock:
            self._close_pool()

    def __enter__(self) -> "CollisionDetector":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return (f"CollisionDetector(client={self.client}, robots={list(self.robots)}, dof={self.dof}, "
                f"pairs={len(self.pairs)}, synced={self._sync is not None})")


__all__ = ["CollisionDetector", "ClosestPoints", "ALL_LINKS"]
