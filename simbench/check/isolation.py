"""Running user code so that nothing it does can take ``simbench check`` down with it.

Two runners, one interface (``load()``, ``evaluate(q, qd, qdd, names, label)``, ``close()``):

* :class:`ProcessRunner` for a ``"module:function"`` spec (the CLI's ``--dynamics``): the
  function is imported and called in a worker process (a fresh interpreter, ``python -c``,
  talking over a pipe of its own, so the user's prints still reach the terminal); a call that
  does not return within the timeout (a loop, a sleep, a numba kernel that never releases the
  GIL), a crash (a segfault, ``os._exit``) or a hang at import gets a verdict, and the worker is
  killed and reaped, with every process the user's code started (the worker leads a process
  group of its own, killed whole whenever the worker is stopped: a timeout, Ctrl-C, SIGTERM, the
  end of the run). One worker serves every robot of a run; it is replaced after a timeout.
  Not ``multiprocessing``: its fork start method breaks numba under GNU OpenMP (a process forked
  after running a parallel kernel is killed by libgomp when it runs one itself, measured), and
  its spawn and forkserver methods re-run the caller's ``__main__`` script in the worker.
* :class:`ThreadRunner` for a Python callable given through the API (a lambda, a closure, a
  function whose module state a test has set up): it runs in this process, in a daemon thread
  joined with the timeout; a call that never returns is reported and left running in the
  background (a thread cannot be killed).

Measured on the iiwa, 50 samples (450 calls of a user function calling
``simbench.dynamics.inverse_dynamics``), medians of 7 in one run on a shared 2-core machine:
in-process 2.4 ms, thread 2.8 ms, worker process 2.7 ms per robot once the worker runs;
starting the worker and importing the user's module 0.83 s, once per run (and after a timeout).
``signal.alarm`` was not chosen: it works only in the main thread and cannot interrupt C code
that holds the GIL, nor survive a crash.
"""
from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from multiprocessing.connection import Pipe
from typing import Any

import numpy as np

from .report import ERROR
from .usercode import FunctionNotFound, UserCodeFault, evaluate

logger = logging.getLogger(__name__)


def _seconds(t: float | None) -> str:
    return f"{t:g} s"


#: seconds a fresh worker may take to start Python and import simbench, before the user's module
#: is imported: ours, not the user's code, so not bounded by ``--timeout`` (a busy machine)
STARTUP_TIMEOUT = 60.0


def kill_group(pgid: int) -> None:
    """SIGKILL what is left of the worker's process group (the worker leads its own session:
    ``start_new_session``), i.e. every process the user's code started and did not end itself
    (a ``subprocess.Popen`` left running would outlive the check, reparented to PID 1, and hold
    its stdout open, so that ``simbench check ... | tail`` never ends). A process that made a
    session of its own (``setsid``, a daemon) is beyond it."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):  # nothing left in the group
        return
    # a SIGKILLed process ends when it is next scheduled: wait for that (on Linux), so that what
    # the user's code started is gone when the check returns
    deadline = time.monotonic() + GROUP_EXIT_TIMEOUT
    while _running_in_group(pgid) and time.monotonic() < deadline:
        time.sleep(0.005)


#: seconds to wait for the processes of a killed group to end
GROUP_EXIT_TIMEOUT = 2.0


def _running_in_group(pgid: int) -> bool:
    """Whether a process of group ``pgid`` still runs (is not a zombie), from ``/proc``; False
    where there is no ``/proc``."""
    try:
        entries = [e.name for e in os.scandir("/proc") if e.name.isdigit()]
    except OSError:
        return False
    for name in entries:
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):  # ended meanwhile
            continue
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            return True
    return False


def _exited(proc: subprocess.Popen, timeout: float) -> bool:
    """Whether ``proc`` ends within ``timeout`` seconds, leaving it unreaped (``WNOWAIT``)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            if os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                return True
        except ChildProcessError:  # already reaped
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.01)


class ProcessRunner:
    """``"module:function"`` evaluated in a worker process with a timeout per request; the
    import of the module gets ``import_timeout`` (default: ``timeout``, counted once the worker
    has started, so a short timeout is not spent on starting Python)."""

    def __init__(self, spec: str, timeout: float | None = 60.0, search_path: Sequence[str] | None = None,
                 import_timeout: float | None = None):
        self.spec, self.timeout = spec, timeout
        self.import_timeout = import_timeout if import_timeout is not None else timeout
        self.search_path = list(search_path if search_path is not None else [os.getcwd()])
        self._proc: subprocess.Popen | None = None
        self._conn: Any = None
        self.broken: UserCodeFault | None = None  # the module cannot be imported: every robot ERRORs

    # -------------------------------------------------------------- lifetime
    def _start(self) -> None:
        parent, child = Pipe(duplex=True)
        fd = child.fileno()
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([p for p in sys.path if p] + [env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        code = f"from simbench.check.usercode import serve_fd; serve_fd({fd})"
        t0 = time.perf_counter()
        self._proc = subprocess.Popen([sys.executable, "-c", code], pass_fds=(fd,), env=env,
                                      stdin=subprocess.DEVNULL, start_new_session=True)
        child.close()
        self._conn = parent
        try:  # the worker says it runs before the user's module is imported
            ready = parent.recv() if parent.poll(STARTUP_TIMEOUT) else None
        except (EOFError, OSError):
            ready = None
        except BaseException:  # Ctrl-C while it starts: the worker goes too
            self.close()
            raise
        if ready != ("ready",):
            proc = self._proc
            self.close()
            raise UserCodeFault(ERROR, f"the worker process for {self.spec} did not start within "
                                       f"{_seconds(STARTUP_TIMEOUT)} (exit status {proc.poll()})")
        logger.debug("worker %s for %s started in %.3f s", self._proc.pid, self.spec, time.perf_counter() - t0)

    def close(self) -> None:
        """Stop the worker (killed if it does not stop at once), reap it, and kill every process
        left in its process group (whatever the user's code started)."""
        proc, conn = self._proc, self._conn
        self._proc = self._conn = None
        if conn is not None:
            try:
                conn.send(("stop",))
            except (OSError, ValueError):
                pass
            conn.close()
        if proc is not None:
            _exited(proc, 0.5)   # not reaped yet: the group's id cannot be taken by another process
            kill_group(proc.pid)  # the worker too, if it did not stop at once
            proc.wait()

    def __enter__(self) -> "ProcessRunner":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -------------------------------------------------------------- requests
    def _request(self, message: tuple, what: str) -> tuple:
        if self._proc is None:
            self._start()
        timeout = self.import_timeout if message[0] == "load" else self.timeout
        try:
            self._conn.send(message)
            reply = self._conn.recv() if self._conn.poll(timeout) else None
        except (EOFError, OSError):
            reply = ("died",)
        except BaseException:  # Ctrl-C while waiting: the worker goes too
            self.close()
            raise
        if reply is None:
            self.close()
            given = " (--timeout)" if timeout == self.timeout else ""
            if message[0] == "load":
                raise UserCodeFault(ERROR, f"{self.spec} did not finish importing within {_seconds(timeout)}"
                                           f"{given}; the worker was stopped")
            raise UserCodeFault(ERROR, f"{self.spec} did not return within {_seconds(timeout)} {what}{given}; "
                                       f"the worker was stopped")
        if reply[0] == "died":
            proc = self._proc
            ended = proc is not None and _exited(proc, 5)
            self.close()
            code = proc.returncode if ended and proc is not None else None
            how = (f"killed by signal {signal.Signals(-code).name}" if code is not None and code < 0
                   else f"exit status {code}")
            raise UserCodeFault(ERROR, f"the process running {self.spec} died {what} ({how})")
        if reply[0] == "fault":
            if message[0] == "load":
                self.close()
            raise UserCodeFault(reply[1], reply[2])
        if reply[0] == "missing":
            self.close()
            raise FunctionNotFound(reply[1])
        return reply[1:]

    def load(self) -> None:
        """Import the module and find the function (within the timeout). Raises
        :class:`FunctionNotFound` (a usage error) or :class:`UserCodeFault`, which is kept in
        ``broken`` so every later request fails the same way at once."""
        if self.broken is not None:
            raise self.broken
        try:
            self.close()
            self._request(("load", self.spec, self.search_path), "while importing it")
        except UserCodeFault as fault:
            self.broken = fault
            raise

    def evaluate(self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, joint_names: Sequence[str],
                 label: str, with_M: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
        """(tau, M) of the user's function over the samples (see :func:`usercode.evaluate`)."""
        if self.broken is not None:
            raise self.broken
        if self._proc is None:
            self.load()
        tau, M = self._request(("eval", q, qd, qdd, list(joint_names), label, with_M), f"on {len(q)} samples")
        return tau, M


class ThreadRunner:
    """A Python callable evaluated in a daemon thread of this process, joined with a timeout."""

    def __init__(self, func: Callable[..., Any], timeout: float | None = 60.0):
        self.func, self.timeout = func, timeout
        self.broken: UserCodeFault | None = None

    def load(self) -> None:
        """Nothing to import: the callable exists."""

    def close(self) -> None:
        """Nothing to stop (a thread still running after a timeout is a daemon)."""

    def __enter__(self) -> "ThreadRunner":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def run(self, work: Callable[[], Any], label: str, what: str) -> Any:
        """``work()`` in a daemon thread; its result, its :class:`UserCodeFault`, or a timeout fault."""
        box: dict[str, Any] = {}

        def target() -> None:
            try:
                box["value"] = work()
            except BaseException as exc:  # handed to the caller's thread
                box["error"] = exc

        thread = threading.Thread(target=target, name=f"simbench-check {label}", daemon=True)
        thread.start()
        thread.join(self.timeout)
        if thread.is_alive():
            raise UserCodeFault(ERROR, f"{label} did not return within {_seconds(self.timeout)} {what} "
                                       f"(timeout); it keeps running in a background thread")
        if "error" in box:
            raise box["error"]
        return box["value"]

    def evaluate(self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, joint_names: Sequence[str],
                 label: str, with_M: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
        return self.run(lambda: evaluate(self.func, q, qd, qdd, joint_names, label, with_M), label,
                        f"on {len(q)} samples")


__all__ = ["ProcessRunner", "ThreadRunner"]
