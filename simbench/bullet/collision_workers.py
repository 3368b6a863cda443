"""Worker processes for batched collision queries.

``workers=k`` splits a batch into chunks that ``k`` processes take as they become free: the
calling process itself and ``k - 1`` helper processes (started once per detector and kept;
``CollisionDetector.close()`` stops them). Each helper opens its own DIRECT server and loads
the detector's scene into it (so body ids and link indices are the same) and runs the very
same kernel functions, so results equal the one-at-a-time results exactly. At the start of
every batch the helpers copy the base poses of all bodies and the joint positions of the
non-robot bodies from the caller's collision server, so moved obstacles are seen.

Helpers are forked on Linux (fast: about 0.1 s to a ready helper) unless this process has a
PyBullet GUI open, in which case they are spawned (about 0.5 s; scripts then need the usual
``if __name__ == "__main__":`` guard). The helpers' servers are fresh either way.
"""
from __future__ import annotations

import atexit
import multiprocessing as mp
import os
import sys
import traceback
import weakref
from collections import deque
from multiprocessing.connection import wait
from typing import Any

import numpy as np

from ..errors import SimbenchError

CHUNK = 128      # configurations per chunk (about 8 ms of work for the seed query)
DEPTH = 3        # chunks queued ahead per helper


def _snapshot(client: int, bodies: dict[str, int], robot: str) -> list[tuple]:
    import pybullet as p

    snap = []
    for name, bid in bodies.items():
        pos, orn = p.getBasePositionAndOrientation(bid, physicsClientId=client)
        joints: tuple = ()
        if name != robot:
            idx = [j for j in range(p.getNumJoints(bid, physicsClientId=client))
                   if p.getJointInfo(bid, j, physicsClientId=client)[2] in (p.JOINT_REVOLUTE, p.JOINT_PRISMATIC)]
            if idx:
                joints = (tuple(idx), tuple(s[0] for s in p.getJointStates(bid, idx, physicsClientId=client)))
        snap.append((bid, pos, orn, joints))
    return snap


def _apply_snapshot(client: int, snap: list[tuple]) -> None:
    """Copy poses that differ (so an unmoved scene stays bit-for-bit as loaded)."""
    import pybullet as p

    for bid, pos, orn, joints in snap:
        if p.getBasePositionAndOrientation(bid, physicsClientId=client) != (pos, orn):
            p.resetBasePositionAndOrientation(bid, pos, orn, physicsClientId=client)
        if joints:
            idx, values = joints
            now = tuple(s[0] for s in p.getJointStates(bid, list(idx), physicsClientId=client))
            if now != values:
                p.resetJointStatesMultiDof(bid, list(idx), [[v] for v in values], physicsClientId=client)


def _helper_main(conn: Any, scene: Any, bodies: dict[str, int], core_rest: tuple,
                 inherited: tuple[int, ...] = ()) -> None:
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

        from .collision import KERNELS

        client = p.connect(p.DIRECT)
        loaded = scene.load(client)
        if loaded.bodies != bodies:
            conn.send(("error", -1, f"body ids differ in the worker: {loaded.bodies} vs {bodies}"))
            return
        core = (client,) + tuple(core_rest)
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
                _apply_snapshot(client, payload)
                continue
            res = KERNELS[kind](core, payload.tolist(), arg)
            conn.send(("result", ci, res))
        except BaseException:
            conn.send(("error", ci, traceback.format_exc()))
    try:
        p.disconnect(physicsClientId=client)
    except Exception:
        pass


def start_method() -> str:
    """``fork`` on Linux when every PyBullet client of this process is DIRECT (a GUI or a
    shared-memory connection runs threads that a forked child must not inherit); otherwise
    ``spawn``. The environment variable ``SIMBENCH_WORKER_START`` overrides."""
    env = os.environ.get("SIMBENCH_WORKER_START")
    if env:
        return env
    import pybullet as p

    from . import servers

    if not sys.platform.startswith("linux") or servers._gui_client is not None:
        return "spawn"
    for client in range(64):
        info = p.getConnectionInfo(physicsClientId=client)
        if info["isConnected"] and info["connectionMethod"] != p.DIRECT:
            return "spawn"
    return "fork"


class _Helper:
    def __init__(self, ctx: Any, args: tuple):
        self.conn, child = ctx.Pipe(duplex=True)
        inherited: tuple[int, ...] = ()
        _parent_ends.add(self.conn)
        if ctx.get_start_method() == "fork":
            inherited = tuple(c.fileno() for c in list(_parent_ends) if not c.closed)
        self.proc = ctx.Process(target=_helper_main, args=(child,) + args + (inherited,), daemon=True)
        self.proc.start()
        child.close()
        self.ready = False
        self.done = 0  # chunks answered (over the helper's life)
        self.inflight: deque[int] = deque()


class WorkerPool:
    """Helper processes of one detector (see the module docstring)."""

    def __init__(self, detector: Any, n_helpers: int):
        scene = detector.scene
        if scene is None:
            raise SimbenchError("workers > 1 need a detector built from a LoadedScene (or ServerPair): "
                                "the workers load the same scene into their own servers")
        ctx = mp.get_context(start_method())
        _, robot, indices, pairs = detector._core
        args = (scene, dict(detector.bodies), (robot, list(indices), list(pairs)))
        self.helpers = [_Helper(ctx, args) for _ in range(n_helpers)]
        _live.add(self)

    def grow(self, detector: Any, n_helpers: int) -> None:
        if n_helpers > len(self.helpers):
            extra = WorkerPool(detector, n_helpers - len(self.helpers))
            _live.discard(extra)
            self.helpers += extra.helpers

    def wait_ready(self, timeout: float = 60.0) -> None:
        """Block until every helper has loaded its scene."""
        import time

        end = time.monotonic() + timeout
        for h in self.helpers:
            while not h.ready:
                if not h.conn.poll(max(0.0, end - time.monotonic())):
                    raise SimbenchError(f"a collision worker was not ready after {timeout} s")
                try:
                    tag, _, payload = h.conn.recv()
                except (EOFError, OSError):
                    raise SimbenchError(f"a collision worker process died (exit code {h.proc.exitcode})") from None
                if tag == "error":
                    raise SimbenchError(f"a collision worker failed:\n{payload}")
                h.ready = tag == "ready"

    def close(self) -> None:
        for h in self.helpers:
            try:
                h.conn.send(None)
            except (OSError, ValueError, BrokenPipeError):
                pass
        for h in self.helpers:
            h.proc.join(timeout=2)
            if h.proc.is_alive():
                h.proc.terminate()
                h.proc.join(timeout=1)
            h.conn.close()
            _parent_ends.discard(h.conn)
        self.helpers = []
        _live.discard(self)


_live: "weakref.WeakSet[WorkerPool]" = weakref.WeakSet()
_parent_ends: "weakref.WeakSet[Any]" = weakref.WeakSet()  # our ends of all helper pipes


@atexit.register
def _close_all() -> None:
    for pool in list(_live):
        pool.close()


def run_parallel(detector: Any, kind: str, flat: np.ndarray, arg: float, workers: int) -> list:
    """Run kernel ``kind`` on configurations ``flat`` (n, dof) with ``workers`` processes;
    the flat result list in input order (as the kernel returns it for the whole batch)."""
    from .collision import KERNELS

    if detector._pool is None:
        detector._pool = WorkerPool(detector, workers - 1)
    else:
        detector._pool.grow(detector, workers - 1)
    helpers = detector._pool.helpers[:workers - 1]
    n = flat.shape[0]
    size = max(1, min(CHUNK, -(-n // (4 * workers))))
    starts = list(range(0, n, size))
    results: list[Any] = [None] * len(starts)
    snap = _snapshot(detector.client, detector.bodies, detector.robot_name)
    for h in helpers:
        h.conn.send(("sync", -1, snap, kind, arg))
    state = {"next": 0}
    by_conn = {h.conn: h for h in helpers}

    def feed(h: _Helper) -> None:
        while h.ready and len(h.inflight) < DEPTH and state["next"] < len(starts):
            ci = state["next"]
            state["next"] += 1
            s = starts[ci]
            h.inflight.append(ci)
            h.conn.send(("run", ci, flat[s:s + size], kind, arg))

    def service(conns: list) -> None:
        for conn in conns:
            h = by_conn[conn]
            try:
                tag, ci, payload = conn.recv()
            except (EOFError, OSError):
                raise SimbenchError(f"a collision worker process died (exit code {h.proc.exitcode})") from None
            if tag == "ready":
                h.ready = True
            elif tag == "result":
                if not h.inflight or h.inflight[0] != ci:
                    raise SimbenchError("collision worker answered out of order")  # cannot happen
                h.inflight.popleft()
                h.done += 1
                results[ci] = payload
            else:
                detector.close()
                raise SimbenchError(f"a collision worker failed:\n{payload}")
            feed(h)

    try:
        for h in helpers:
            feed(h)
        while True:
            ready = [h.conn for h in helpers if h.conn.poll()]
            if ready:
                service(ready)
                continue
            if state["next"] < len(starts):  # do a chunk here, in the calling process
                ci = state["next"]
                state["next"] += 1
                s = starts[ci]
                results[ci] = KERNELS[kind](detector._core, flat[s:s + size].tolist(), arg)
                continue
            pending = [h.conn for h in helpers if h.inflight]
            if not pending:
                break
            service(wait(pending))
    except BaseException:
        # a half-finished batch leaves answers in the pipes: drop these helpers
        detector.close()
        raise
    out: list = []
    for r in results:
        out.extend(r)
    return out
