"""The local engine: chunks computed on this machine, with no extra dependency.

``workers=1`` computes in this process. ``workers=k > 1`` starts ``k`` worker processes (forked
or spawned, see :func:`_start_method`); each
builds its runner once (loads the scene or robot into its own DIRECT server) and then computes
the chunks it is sent, two at a time in flight so it never waits for the driver. The driver
(this process) only writes the finished files. A worker that dies (killed, crashed) is
replaced and its unfinished chunks go to the queue again; a chunk whose worker dies
:data:`MAX_ATTEMPTS` times is reported as the failure, with its sample range. Workers ignore
SIGINT: Ctrl-C reaches the driver, which stops them (none is left behind) and keeps every
chunk already written.

Deliberately small: no scheduling beyond "next chunk to the next free worker", no timeouts, no
second machine; that is what the Ray engine is for.
"""
from __future__ import annotations

import logging
import multiprocessing as mp
import os
import signal
import sys
import traceback
from collections import deque
from collections.abc import Callable
from multiprocessing.connection import wait
from typing import Any

from .jobs import Chunk, ChunkData, JobSpec, produce
from .output import SweepError

logger = logging.getLogger(__name__)

DEPTH = 2          # chunks in flight per worker
MAX_ATTEMPTS = 3   # a chunk whose worker died this often fails the sweep
MAX_EARLY_DEATHS = 3   # more workers than this dying in a row before their first chunk fail the sweep
WORKER_NAME = "simbench-sweep-worker"
#: the exit status of a spawned worker whose import of the user's script called sweep again
GUARD_EXIT = 3
GUARD_LINE = ("simbench.sweep was called while a worker process imported your script{script}: put the call under "
              "if __name__ == '__main__': (workers are spawned, and each imports the script that started them)")


def _script() -> str:
    main = sys.modules.get("__mp_main__") or sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    return f" ({os.path.basename(path)})" if path else ""


def refuse_in_worker_import() -> None:
    """A sweep started while a spawned process imports the script that started it (a script
    calling ``simbench.sweep`` without the ``if __name__ == "__main__":`` guard): one line, and
    the process ends. A sweep worker ends with :data:`GUARD_EXIT`, silently: its driver says
    the line once."""
    current = mp.current_process()
    if not getattr(current, "_inheriting", False):   # set by multiprocessing while a spawned child imports __main__
        return
    line = GUARD_LINE.format(script=_script())
    if not current.name.startswith(WORKER_NAME):
        try:
            sys.stderr.write(line + "\n")
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
    raise SystemExit(GUARD_EXIT)


def _worker_main(conn: Any, spec: JobSpec, inherited: tuple[int, ...]) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the driver decides when workers stop
    for fd in inherited:  # the driver's pipe ends, inherited through fork: EOF when the driver dies
        try:
            os.close(fd)
        except OSError:
            pass
    try:
        runner = spec.open()
    except BaseException:
        conn.send(("error", -1, traceback.format_exc()))
        return
    conn.send(("ready", -1, None))
    try:
        while True:
            try:
                chunk = conn.recv()
            except (EOFError, OSError):
                break
            if chunk is None:
                break
            try:
                conn.send(("done", chunk.index, produce(spec, runner, chunk)))
            except BaseException:
                conn.send(("error", chunk.index, traceback.format_exc()))
    finally:
        runner.close()


class _Worker:
    def __init__(self, ctx: Any, spec: JobSpec, others: list["_Worker"], number: int):
        self.conn, child = ctx.Pipe(duplex=True)
        inherited: tuple[int, ...] = ()
        if ctx.get_start_method() == "fork":  # the child must not hold the driver's ends (its own included)
            inherited = (self.conn.fileno(), *(w.conn.fileno() for w in others if not w.conn.closed))
        self.proc = ctx.Process(target=_worker_main, args=(child, spec, inherited), daemon=True,
                                name=f"{WORKER_NAME}-{number}")
        self.proc.start()
        child.close()
        self.inflight: deque[Chunk] = deque()
        self.number = number
        self.ready = False  # its runner is built
        self.done = 0       # chunks it computed

    @property
    def name(self) -> str:
        return f"sweep worker {self.number} (pid {self.proc.pid})"

    def stop(self) -> None:
        try:
            self.conn.send(None)
        except (OSError, ValueError):
            pass
        self.proc.join(timeout=1.0)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join(timeout=2.0)
        self.conn.close()


def _start_method() -> str:
    """``fork`` (a ready worker in about 0.1 s) when this process is single-threaded and has no
    GUI or shared-memory PyBullet client; otherwise ``spawn`` (about 1 s; scripts then need the
    ``if __name__ == "__main__":`` guard): threads do not survive a fork, and GNU OpenMP, which
    numba's parallel kernels start, kills a forked child outright. ``SIMBENCH_WORKER_START``
    overrides."""
    from ..bullet.collision_workers import start_method

    method = start_method()
    if method == "fork" and not os.environ.get("SIMBENCH_WORKER_START"):
        try:
            threads = len(os.listdir("/proc/self/task"))
        except OSError:
            threads = 1
        if threads > 1:
            return "spawn"
    return method


def run_local(spec: JobSpec, todo: list[Chunk], deliver: Callable[[ChunkData], None], workers: int) -> dict[str, Any]:
    """Compute ``todo`` with ``workers`` processes, handing each finished chunk to ``deliver``
    (in this process). Returns facts about the run (``replaced``: workers that died)."""
    if not todo:
        return {"replaced": 0}
    if workers <= 1:
        runner = spec.open()
        try:
            for chunk in todo:
                deliver(produce(spec, runner, chunk))
        finally:
            runner.close()
        return {"replaced": 0}
    return _Pool(spec, min(workers, len(todo))).run(todo, deliver)


class _Pool:
    def __init__(self, spec: JobSpec, n: int):
        self.spec = spec
        self.ctx = mp.get_context(_start_method())
        self.count = 0
        self.workers: list[_Worker] = []
        try:
            for _ in range(n):
                self.workers.append(self._new())
        except BaseException:
            self.close()
            raise

    def _new(self) -> _Worker:
        self.count += 1
        return _Worker(self.ctx, self.spec, self.workers, self.count)

    def close(self) -> None:
        for w in self.workers:
            try:
                w.conn.send(None)
            except (OSError, ValueError):
                pass
        for w in self.workers:
            w.stop()
        self.workers = []

    def run(self, todo: list[Chunk], deliver: Callable[[ChunkData], None]) -> dict[str, Any]:
        queue = deque(todo)
        attempts: dict[int, int] = {}
        replaced = early = 0   # early: workers dead in a row before their first chunk
        try:
            while queue or any(w.inflight for w in self.workers):
                for w in self.workers:
                    while w.ready and queue and len(w.inflight) < DEPTH:
                        chunk = queue.popleft()
                        w.inflight.append(chunk)
                        w.conn.send(chunk)
                for conn in wait([w.conn for w in self.workers]):
                    w = next(x for x in self.workers if x.conn is conn)
                    try:
                        tag, index, payload = conn.recv()
                    except (EOFError, OSError):  # the worker died: its chunks go back to the queue
                        w.proc.join(timeout=1.0)
                        code = w.proc.exitcode
                        if code == GUARD_EXIT and not w.ready:
                            raise SweepError(GUARD_LINE.format(script=_script())) from None
                        early = early + 1 if not w.done else 0
                        if early > MAX_EARLY_DEATHS:
                            raise SweepError(f"{early} sweep workers in a row died before computing a chunk (last: "
                                             f"{w.name}, exit code {code}); expected a worker to load the job and "
                                             "compute: run with --workers 1 to see the error in this process") from None
                        for chunk in reversed(w.inflight):
                            attempts[chunk.index] = attempts.get(chunk.index, 0) + 1
                            if attempts[chunk.index] >= MAX_ATTEMPTS:
                                raise SweepError(f"chunk {chunk.index} (samples {chunk.start}-{chunk.stop - 1}) lost "
                                                 f"its worker {MAX_ATTEMPTS} times (last exit code {code})")
                            queue.appendleft(chunk)
                        logger.warning("%s died (exit code %s); %d chunk(s) computed again by a new worker",
                                       w.name, w.proc.exitcode, len(w.inflight))
                        w.inflight.clear()
                        w.stop()
                        self.workers[self.workers.index(w)] = self._new()
                        replaced += 1
                        continue
                    if tag == "ready":
                        w.ready = True
                    elif tag == "done":
                        if not w.inflight or w.inflight[0].index != index:
                            raise SweepError(f"{w.name} answered chunk {index} out of order")  # cannot happen
                        w.inflight.popleft()
                        w.done += 1
                        deliver(payload)
                    else:
                        where = "while loading" if index < 0 else f"on chunk {index}"
                        last = payload.strip().splitlines()[-1] if payload.strip() else "unknown error"
                        raise SweepError(f"{w.name} failed {where}: {last}\n{payload}" if logger.isEnabledFor(logging.DEBUG)
                                         else f"{w.name} failed {where}: {last}")
        finally:
            self.close()
        return {"replaced": replaced}


__all__ = ["run_local", "refuse_in_worker_import", "DEPTH", "MAX_ATTEMPTS", "MAX_EARLY_DEATHS"]
