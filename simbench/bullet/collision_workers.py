"""Worker processes for batched collision queries, built from plain data.

``workers=k`` splits a batch into chunks that ``k`` processes take as they become free: the
calling process itself and ``k - 1`` helper processes (started once per detector and kept;
``CollisionDetector.close()``, dropping the detector, or the end of the interpreter stops them).
Each helper opens its own DIRECT server, loads the scene into it with the same body ids, and
runs the very same loops (:mod:`simbench.bullet.collision_kernels`) on a
:class:`~simbench.bullet.collision_kernels.QueryCore`, so results equal the one-at-a-time
results exactly. At the start of every batch the helpers copy the base poses and joint
positions of all bodies from the caller's collision server, so moved obstacles are seen.

A helper that does not answer within ``timeout`` seconds (default 60; the detector's
``worker_timeout``), or within :data:`PACE` times the slowest chunk this process computed
itself when that is longer (a loaded machine slows every process: at a load of 24-80 on 2
cores, helpers were replaced one after another and two processes took 25 times as long as
one), is reported by name in a warning, killed and replaced; its chunks are done again, so a
frozen helper delays a batch by the timeout but never hangs it.

Helpers are forked on Linux (about 0.1 s to a ready helper) unless this process has a PyBullet
GUI open, in which case they are spawned (about 0.5 s; scripts then need the usual
``if __name__ == "__main__":`` guard). The helpers' servers are fresh either way. Forking
after threads is safe here (measured: after a batched ``inverse_dynamics``, whose thread pool
stays alive, forked helpers answer bit-identically to the in-process query, 9 of 9 runs): the
dynamics run batches on plain Python threads, not numba's OpenMP layer (whose GNU runtime
kills forked children that use it), and a helper runs only PyBullet and numpy.
"""
from __future__ import annotations

import logging
import multiprocessing as mp
import os
import sys
import time
import traceback
import weakref
from collections import deque
from multiprocessing.connection import wait
from typing import Any, NamedTuple

import numpy as np

from ..errors import SimbenchError
from .collision_kernels import KERNELS, QueryCore

logger = logging.getLogger(__name__)

CHUNK = 128             # configurations per chunk (about 8 ms of work for the kuka_cubes query)
DEPTH = 3               # chunks queued ahead per helper
DEFAULT_TIMEOUT = 60.0  # seconds a helper may take to answer before it is replaced
START_TIMEOUT = 30.0    # at least this long to start (a helper that is not ready holds no work)
PACE = 20.0             # a helper may take this many times this process's slowest chunk
PROGRESS_MIN = 100_000  # batches at least this large show a progress bar


class WorkerSpec(NamedTuple):
    """What a helper needs: the scene, the body ids it must reproduce, and the query core
    (whose client is replaced by the helper's own)."""

    scene: Any
    bodies: dict[str, int]
    core: QueryCore


# ---------------------------------------------------------------------- world state copies
def snapshot(client: int, bodies: dict[str, int]) -> list[tuple]:
    """Base pose and non-fixed joint positions of every body of ``client``."""
    import pybullet as p

    from .records import JointState
    from .sync import movable_joints

    snap = []
    for bid in bodies.values():
        pos, orn = p.getBasePositionAndOrientation(bid, physicsClientId=client)
        idx = movable_joints(bid, client)
        joints = tuple(JointState(*s).position for s in p.getJointStatesMultiDof(bid, idx, physicsClientId=client)) if idx else ()
        snap.append((bid, pos, orn, tuple(idx), joints))
    return snap


def apply_snapshot(client: int, snap: list[tuple]) -> None:
    """Copy poses that differ (so an unmoved scene stays bit-for-bit as loaded)."""
    import pybullet as p

    from .records import JointState

    for bid, pos, orn, idx, joints in snap:
        if p.getBasePositionAndOrientation(bid, physicsClientId=client) != (pos, orn):
            p.resetBasePositionAndOrientation(bid, pos, orn, physicsClientId=client)
        if idx:
            now = tuple(JointState(*s).position for s in p.getJointStatesMultiDof(bid, list(idx), physicsClientId=client))
            if now != joints:
                p.resetJointStatesMultiDof(bid, list(idx), [list(v) for v in joints], physicsClientId=client)


def load_with_ids(scene: Any, bodies: dict[str, int], client: int) -> dict[str, int]:
    """Load the bodies of ``scene`` named in ``bodies`` into a fresh client so that each gets
    the id it has in ``bodies`` (ids freed by removed bodies are filled with empty bodies,
    removed again at the end). Returns the ids obtained."""
    import pybullet as p

    from .scene import Scene

    by_id = {bid: name for name, bid in bodies.items()}
    got, fillers = {}, []
    for bid in range(max(by_id, default=-1) + 1):
        if bid in by_id:
            one = Scene((scene.body(by_id[bid]),), gravity=scene.gravity, source=scene.source)
            got.update(one.load(client, quiet=True).bodies)
        else:
            fillers.append(p.createMultiBody(baseMass=0, physicsClientId=client))
    for f in fillers:
        p.removeBody(f, physicsClientId=client)
    return got


# ---------------------------------------------------------------------- the helper process
def _helper_main(conn: Any, spec: WorkerSpec, inherited: tuple[int, ...] = ()) -> None:
    """Loop of one helper process: load the scene, then answer chunks until told to stop.

    ``inherited``: the caller's pipe ends that a forked child inherits; closing them lets the
    helper see end-of-file (and exit) if the caller dies."""
    for fd in inherited:
        try:
            os.close(fd)
        except OSError:
            pass
    try:
        import pybullet as p

        client = p.connect(p.DIRECT)
        got = load_with_ids(spec.scene, spec.bodies, client)
        if got != spec.bodies:
            conn.send(("error", -1, f"body ids differ in the worker: {got} vs {spec.bodies}"))
            return
        core = spec.core._replace(client=client)
        conn.send(("ready", -1, None))
    except BaseException:
        conn.send(("error", -1, traceback.format_exc()))
        return
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            break
        if msg is None:
            break
        tag, ci, payload, kind, arg = msg
        try:
            if tag == "sync":
                apply_snapshot(client, payload)
                continue
            res = KERNELS[kind](core, payload[:, :, None].tolist(), arg)
            conn.send(("result", ci, res))
        except BaseException:
            conn.send(("error", ci, traceback.format_exc()))
    try:
        p.disconnect(physicsClientId=client)
    except Exception:
        pass


def start_method() -> str:
    """``fork`` on Linux when every PyBullet client of this process is DIRECT (a GUI or a
    shared-memory connection runs threads that a forked child must not inherit) and jax is not
    loaded (its runtime threads, likewise: jax warns on ``os.fork``); otherwise ``spawn``. The environment variable ``SIMBENCH_WORKER_START`` overrides."""
    env = os.environ.get("SIMBENCH_WORKER_START")
    if env:
        return env
    import pybullet as p

    from . import servers

    if not sys.platform.startswith("linux") or servers._gui_client is not None or "jax" in sys.modules:
        return "spawn"
    for client in range(64):
        info = p.getConnectionInfo(physicsClientId=client)
        if info["isConnected"] and info["connectionMethod"] != p.DIRECT:
            return "spawn"
    return "fork"


_parent_ends: "weakref.WeakSet[Any]" = weakref.WeakSet()  # our ends of all helper pipes
_counter = [0]


class _Helper:
    def __init__(self, ctx: Any, spec: WorkerSpec):
        self.conn, child = ctx.Pipe(duplex=True)
        inherited: tuple[int, ...] = ()
        _parent_ends.add(self.conn)
        if ctx.get_start_method() == "fork":
            inherited = tuple(c.fileno() for c in list(_parent_ends) if not c.closed)
        _counter[0] += 1
        self.number = _counter[0]
        self.proc = ctx.Process(target=_helper_main, args=(child, spec, inherited), daemon=True,
                                name=f"simbench-collision-worker-{self.number}")
        self.proc.start()
        child.close()
        self.ready = False
        self.done = 0  # chunks answered (over the helper's life)
        self.inflight: deque[int] = deque()
        self.since = time.monotonic()  # last sign of life while work was pending

    @property
    def name(self) -> str:
        return f"collision worker {self.number} (pid {self.proc.pid})"

    def stop(self, kill: bool = False) -> None:
        if not kill:
            try:
                self.conn.send(None)
            except (OSError, ValueError):
                pass
            self.proc.join(timeout=2)
        if self.proc.is_alive():
            self.proc.kill()  # SIGKILL also ends a stopped (SIGSTOP) process
            self.proc.join(timeout=2)
        self.conn.close()
        _parent_ends.discard(self.conn)


def _shutdown(helpers: list[_Helper]) -> None:
    for h in helpers:
        try:
            h.conn.send(None)
        except (OSError, ValueError):
            pass
    for h in list(helpers):
        h.stop()
    helpers.clear()


class WorkerPool:
    """Helper processes for one detector (see the module docstring)."""

    def __init__(self, spec: WorkerSpec, n_helpers: int, timeout: float = DEFAULT_TIMEOUT):
        self.spec, self.timeout = spec, float(timeout)
        self._ctx = mp.get_context(start_method())
        self.helpers: list[_Helper] = [_Helper(self._ctx, spec) for _ in range(n_helpers)]
        self.replaced: list[str] = []  #: names of the helpers replaced after a timeout
        self._finalizer = weakref.finalize(self, _shutdown, self.helpers)  # on GC and at exit

    def grow(self, n_helpers: int) -> None:
        while len(self.helpers) < n_helpers:
            self.helpers.append(_Helper(self._ctx, self.spec))

    def _replace(self, h: _Helper, why: str) -> _Helper:
        logger.warning("%s %s; replaced by a new worker", h.name, why)
        self.replaced.append(h.name)
        h.stop(kill=True)
        new = _Helper(self._ctx, self.spec)
        self.helpers[self.helpers.index(h)] = new
        return new

    def _receive(self, h: _Helper) -> tuple:
        try:
            return h.conn.recv()
        except (EOFError, OSError):
            raise SimbenchError(f"{h.name} died (exit code {h.proc.exitcode})") from None

    def wait_ready(self, timeout: float | None = None) -> None:
        """Block until every helper has loaded its scene; a helper not ready within
        ``timeout`` (default: the pool's) is replaced once, then reported as an error."""
        timeout = self.timeout if timeout is None else float(timeout)
        for k in range(len(self.helpers)):
            for attempt in range(2):
                h = self.helpers[k]
                end = time.monotonic() + timeout
                while not h.ready and h.conn.poll(max(0.0, end - time.monotonic())):
                    tag, _, payload = self._receive(h)
                    if tag == "error":
                        raise SimbenchError(f"{h.name} failed:\n{payload}")
                    h.ready = tag == "ready"
                if h.ready:
                    break
                if attempt == 1:
                    raise SimbenchError(f"{h.name} was not ready after {timeout} s")
                self._replace(h, f"was not ready after {timeout} s")

    def close(self) -> None:
        self._finalizer()

    # ------------------------------------------------------------------ one batch
    def run(self, kind: str, flat: np.ndarray, arg: float, local: QueryCore, snap: list, n_helpers: int,
            bar: Any = None) -> list:
        """Run kernel ``kind`` on configurations ``flat`` (n, dof) with this process (on
        ``local``) and ``n_helpers`` helpers; the flat result list in input order."""
        self.grow(n_helpers)
        n = flat.shape[0]
        size = max(1, min(CHUNK, -(-n // (4 * (n_helpers + 1)))))
        starts = list(range(0, n, size))
        results: list[Any] = [None] * len(starts)
        todo = deque(range(len(starts)))
        active = self.helpers[:n_helpers]
        for h in active:
            h.conn.send(("sync", -1, snap, kind, arg))

        def feed(h: _Helper) -> None:
            while h.ready and len(h.inflight) < DEPTH and todo:
                ci = todo.popleft()
                if not h.inflight:
                    h.since = time.monotonic()
                h.inflight.append(ci)
                h.conn.send(("run", ci, flat[starts[ci]:starts[ci] + size], kind, arg))

        def done(ci: int, payload: list) -> None:
            results[ci] = payload
            if bar is not None:
                bar.update(min(size, n - starts[ci]))

        def service(h: _Helper) -> None:
            try:
                tag, ci, payload = h.conn.recv()
            except (EOFError, OSError):  # the helper died: do its chunks again elsewhere
                k = active.index(h)
                todo.extendleft(reversed(h.inflight))
                active[k] = self._replace(h, f"died (exit code {h.proc.exitcode})")
                active[k].conn.send(("sync", -1, snap, kind, arg))
                return
            h.since = time.monotonic()
            if tag == "ready":
                h.ready = True
            elif tag == "result":
                if not h.inflight or h.inflight[0] != ci:
                    raise SimbenchError(f"{h.name} answered out of order")  # cannot happen
                h.inflight.popleft()
                h.done += 1
                done(ci, payload)
            else:
                raise SimbenchError(f"{h.name} failed:\n{payload}")
            feed(h)

        pace = [0.0]   # the slowest chunk this process computed itself

        def limit(h: _Helper) -> float:   # a loaded machine slows every process alike: stretch with it
            return max(self.timeout if h.ready else max(self.timeout, START_TIMEOUT), PACE * pace[0])

        def check_deadlines() -> None:
            now = time.monotonic()
            for k, h in enumerate(active):
                if (h.inflight or not h.ready) and now - h.since > limit(h):
                    todo.extendleft(reversed(h.inflight))
                    state = "did not answer" if h.ready else "was not ready"
                    new = self._replace(h, f"{state} within {limit(h):g} s")
                    new.conn.send(("sync", -1, snap, kind, arg))
                    active[k] = new

        for h in active:
            feed(h)
        while True:
            by_conn = {h.conn: h for h in active}
            for conn in [c for c in by_conn if c.poll()]:
                service(by_conn[conn])
            by_conn = {h.conn: h for h in active}
            if todo:  # do a chunk here, in the calling process
                ci = todo.popleft()
                s, t = starts[ci], time.monotonic()
                done(ci, KERNELS[kind](local, flat[s:s + size, :, None].tolist(), arg))
                pace[0] = max(pace[0], time.monotonic() - t)
                check_deadlines()
                continue
            if not any(h.inflight for h in active) and all(r is not None for r in results):
                break
            waiting = [h for h in active if h.inflight or not h.ready]
            deadline = min(h.since + limit(h) for h in waiting)
            ready = wait([h.conn for h in waiting], timeout=max(0.0, deadline - time.monotonic()) + 1e-3)
            for conn in ready:
                service(by_conn[conn])
            check_deadlines()
        out: list = []
        for r in results:
            out.extend(r)
        return out


__all__ = ["WorkerPool", "WorkerSpec", "snapshot", "apply_snapshot", "load_with_ids", "start_method",
           "CHUNK", "DEFAULT_TIMEOUT", "PROGRESS_MIN"]
