"""Running user code so that nothing it does can take ``simbench check`` down with it.

Two runners, one interface (``load()``, ``evaluate(q, qd, qdd, names, label)``, ``close()``):

* :class:`ProcessRunner` for a ``"module:function"`` spec (the CLI's ``--dynamics``): the
  function is imported and called in a worker process (a fresh interpreter, ``python -c``,
  talking over a pipe of its own); a call that
  does not return within the timeout (a loop, a sleep, a numba kernel that never releases the
  GIL), a crash (a segfault, ``os._exit``) or a hang at import gets a verdict, and the worker is
  killed and reaped, with every process the user's code started (the worker leads a process
  group of its own, killed whole whenever the worker is stopped: a timeout, Ctrl-C, SIGTERM, the
  end of the run). One worker serves every robot of a run; it is replaced after a timeout.
  Not ``multiprocessing``: its fork start method breaks numba under GNU OpenMP (a process forked
  after running a parallel kernel is killed by libgomp when it runs one itself, measured), and
  its spawn and forkserver methods re-run the caller's ``__main__`` script in the worker.
* :class:`ForkRunner` for a Python callable given through the API (a lambda, a closure, a
  function whose module state a test has set up, a model-level module): a child forked from
  this process for each robot, so it sees the caller's state as it is, with the same
  protection (a crash, ``os._exit`` or a timeout is a verdict with the sample it was at; the
  child and what it started are killed and reaped). Where ``os.fork`` does not exist
  (Windows), :class:`ThreadRunner`: a daemon thread joined with the timeout, a call that
  never returns left running in the background, and a crash takes the process down. The
  fork costs about 0.08 s per robot (numpy function, 2-link arm, 50 samples, loaded 2-core
  machine: 0.23 s against 0.15 s in a thread), plus the function's first-call work each time
  (a lazily compiled numba function: 0.4 s per robot on the iiwa).

What a worker prints (stdout and stderr) goes to this process's stderr, never into the report
on stdout; its last line is kept for the message when the worker dies.

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
from .usercode import FunctionNotFound, ImportFailed, UserCodeFault, evaluate

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


class Output:
    """What a worker writes (its stdout and stderr, one pipe): passed on to this process's
    stderr as it comes, so that a user's prints never mix with the report on stdout, and its
    last line kept for the message when the worker dies."""

    def __init__(self) -> None:
        self.read_fd, self.write_fd = os.pipe()
        self.tail = b""
        self._thread = threading.Thread(target=self._pump, name="simbench-check worker output", daemon=True)
        self._thread.start()

    def _pump(self) -> None:
        while True:
            try:
                chunk = os.read(self.read_fd, 65536)
            except OSError:
                chunk = b""
            if not chunk:   # every writer gone (the worker and what it started): ours to close
                os.close(self.read_fd)
                return
            self.tail = (self.tail + chunk)[-4096:]
            try:
                sys.stderr.write(chunk.decode(errors="replace"))
                sys.stderr.flush()
            except (OSError, ValueError, AttributeError):
                pass

    def started(self) -> None:
        """The worker holds the write end now: close ours, so the pump ends when the worker does."""
        os.close(self.write_fd)

    def last_line(self, wait: float = 1.0) -> str:
        """' (its last output: "...")', once the pipe is drained (at most ``wait`` s); '' if silent."""
        self._thread.join(wait)
        lines = [ln.strip() for ln in self.tail.decode(errors="replace").splitlines() if ln.strip()]
        if not lines:
            return ""
        text = lines[-1] if len(lines[-1]) <= 200 else lines[-1][:197] + "..."
        return f"; its last output: {text!r}"

    def close(self) -> None:
        """Let the pump finish (it closes the pipe when the last writer has gone)."""
        self._thread.join(0.5)


def died(label: str, status: int | None, where: str) -> str:
    """'the process running LABEL died at sample 3 before returning (killed by signal SIGSEGV:
    a crash in C code?)': how a worker ended, for a fault's message."""
    if status is not None and status < 0:
        name = signal.Signals(-status).name
        why = f"killed by signal {name}" + (": a crash in C code?" if name in ("SIGSEGV", "SIGBUS", "SIGABRT",
                                                                                "SIGFPE", "SIGILL") else "")
    elif status is None:
        why = "its exit status is unknown"
    else:
        why = f"exit status {status}" + (": did it call os._exit?" if status == 0 else "")
    return f"the process running {label} died {where}{'' if where.startswith('while') else ' before returning'} ({why})"


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
        self._output: Output | None = None
        self.broken: UserCodeFault | None = None  # the module cannot be imported: every robot ERRORs

    # -------------------------------------------------------------- lifetime
    def _start(self) -> None:
        parent, child = Pipe(duplex=True)
        fd = child.fileno()
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([p for p in sys.path if p] + [env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        code = f"from simbench.check.usercode import serve_fd; serve_fd({fd})"
        t0 = time.perf_counter()
        self._output = Output()
        try:
            self._proc = subprocess.Popen([sys.executable, "-c", code], pass_fds=(fd,), env=env,
                                          stdin=subprocess.DEVNULL, stdout=self._output.write_fd,
                                          stderr=self._output.write_fd, start_new_session=True)
        finally:
            self._output.started()
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
        proc, conn, output = self._proc, self._conn, self._output
        self._proc = self._conn = self._output = None
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
        if output is not None:
            output.close()

    def __enter__(self) -> "ProcessRunner":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -------------------------------------------------------------- requests
    def _request(self, message: tuple, what: str) -> tuple:
        if self._proc is None:
            self._start()
        timeout = self.import_timeout if message[0] == "load" else self.timeout
        deadline = None if timeout is None else time.monotonic() + timeout
        sample, where = None, what
        try:
            self._conn.send(message)
            while True:
                left = None if deadline is None else max(0.0, deadline - time.monotonic())
                reply = self._conn.recv() if self._conn.poll(left) else None
                if reply is None or reply[0] != "at":
                    break
                sample, where = reply[1], reply[2]   # the sample being computed: where it died
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
            raise UserCodeFault(ERROR, f"{self.spec} did not return within {_seconds(timeout)} {what}"
                                       + (f", still {where}" if sample is not None else "")
                                       + f"{given}; the worker was stopped", sample)
        if reply[0] == "died":
            proc, output = self._proc, self._output
            ended = proc is not None and _exited(proc, 5)
            self.close()
            code = proc.returncode if ended and proc is not None else None
            said = output.last_line() if output is not None else ""
            raise UserCodeFault(ERROR, died(self.spec, code, where) + said, sample)
        if reply[0] == "fault":
            if message[0] == "load":
                self.close()
                raise ImportFailed(reply[1], reply[2])
            raise UserCodeFault(reply[1], reply[2], reply[3] if len(reply) > 3 else None)
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


class ForkRunner(ThreadRunner):
    """A Python callable evaluated in a child forked from this process for each robot (it sees
    the caller's state as it is: a closure, a module a test has set up; what it changes there
    is not seen back), with the worker's protection: a crash (``os._exit``, a segfault) or a
    call that does not return within the timeout is a verdict, and the child, with every
    process it started, is killed and reaped. Where ``os.fork`` does not exist, :func:`runner`
    gives a :class:`ThreadRunner`."""

    def run(self, work: Callable[..., Any], label: str, what: str) -> Any:
        """``work(progress)`` in a forked child; its result, its :class:`UserCodeFault`, or a fault
        saying how the child died or that it did not return."""
        recv, send = Pipe(duplex=False)
        output = Output()
        for stream in (sys.stdout, sys.stderr):  # nothing buffered here is written twice
            try:
                stream.flush()
            except (OSError, ValueError, AttributeError):
                pass
        pid = os.fork()
        if pid == 0:  # the child: never returns, whatever happens
            _child(work, recv, send, output)
        try:
            os.setpgid(pid, pid)   # as the child does: a group to kill even before it ran a line
        except OSError:
            pass
        output.started()
        send.close()
        deadline = None if self.timeout is None else time.monotonic() + self.timeout
        sample, where, reply = None, what, None
        try:
            while True:
                left = None if deadline is None else max(0.0, deadline - time.monotonic())
                reply = recv.recv() if recv.poll(left) else None
                if reply is None or reply[0] != "at":
                    break
                sample, where = reply[1], reply[2]
        except (EOFError, OSError):
            reply = ("died",)
        finally:
            if reply is None or reply[0] == "died":
                _exited_pid(pid, 5 if reply is not None else 0)
            kill_group(pid)   # the child leads its group: it and what it started, if still there
            status = os.waitpid(pid, 0)[1]
            recv.close()
            output.close()
        if reply is None:
            raise UserCodeFault(ERROR, f"{label} did not return within {_seconds(self.timeout)} {what} "
                                       f"(timeout{f'; still {where}' if sample is not None else ''}); "
                                       f"its process was stopped", sample)
        if reply[0] == "died":
            code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
            raise UserCodeFault(ERROR, died(label, code, where) + output.last_line(), sample)
        if reply[0] == "fault":
            raise UserCodeFault(*reply[1:])
        return reply[1]

    def evaluate(self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, joint_names: Sequence[str],
                 label: str, with_M: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
        return self.run(lambda progress: evaluate(self.func, q, qd, qdd, joint_names, label, with_M, progress),
                        label, f"on {len(q)} samples")


def _exited_pid(pid: int, timeout: float) -> None:
    """Wait up to ``timeout`` s for child ``pid`` to end, leaving it unreaped."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                return
        except ChildProcessError:
            return
        if time.monotonic() >= deadline:
            return
        time.sleep(0.01)


def _child(work: Callable[..., Any], recv: Any, send: Any, output: Output) -> None:
    """The forked child of :meth:`ForkRunner.run`: ``work`` once, its reply sent, then ``_exit``."""
    code = 0
    try:
        os.setpgid(0, 0)   # its own group: killed whole with what the user's code starts
        signal.signal(signal.SIGINT, signal.SIG_IGN)   # the parent handles Ctrl-C and stops us
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        recv.close()
        os.close(output.read_fd)
        os.dup2(output.write_fd, 2)
        try:
            reply: tuple = ("ok", work(lambda i, where: send.send(("at", i, where))))
        except UserCodeFault as fault:
            reply = ("fault", fault.verdict, fault.message, fault.sample)
        except BaseException as exc:  # our own failure: report it, do not die silently
            reply = ("fault", ERROR, f"the worker failed: {type(exc).__name__}: {exc}", None)
        try:
            sys.stdout.flush()
        except BaseException:
            pass
        send.send(reply)
    except BaseException:
        code = 1
    finally:
        os._exit(code)


def runner(func: Callable[..., Any], timeout: float | None) -> ThreadRunner:
    """The runner for a Python callable: a :class:`ForkRunner` where ``os.fork`` exists, else a
    :class:`ThreadRunner` (no protection from a crash: it takes this process down)."""
    return ForkRunner(func, timeout) if hasattr(os, "fork") else ThreadRunner(func, timeout)


__all__ = ["ProcessRunner", "ThreadRunner", "ForkRunner", "runner", "died"]
