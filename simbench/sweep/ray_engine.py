"""The Ray engine (the ``sweep`` extra): chunks as tasks on Ray actors, on one machine or a cluster.

One actor per worker (``num_cpus=1`` each) holds a loaded runner: the scene is loaded into the
actor's own DIRECT server once, not per chunk. Chunks are actor method calls, two in flight per
actor; the finished Parquet bytes come back to the driver, which alone writes the output
folder (so the folder needs to exist only where the driver runs). A worker process that dies
is restarted by Ray and its pending chunks are retried (``max_restarts``, ``max_task_retries``);
if an actor is lost for good, its chunks go to the others and a new actor replaces it.

Where Ray runs: ``address=None`` starts a private local instance with ``workers`` CPUs
(``ray.init(address="local")``) and stops it at the end; ``"auto"`` or ``"HOST:PORT"`` joins a
running cluster (``ray start --head`` on one machine, ``ray start --address HOST:PORT`` on the
others) and uses one actor per CPU unless ``workers`` says otherwise. If Ray is already
initialised in this process (the Python API), that instance is used and left running. Every
node needs simbench installed (same version) and the input files at the same paths; each actor
checks the files' SHA-256 against the driver's before it starts.
"""
from __future__ import annotations

import logging
import os
import re
import signal
import threading
from collections.abc import Callable
from typing import Any

from .._quiet import filtered_fd
from ..errors import SimbenchError, shown
from .jobs import Chunk, ChunkData, JobSpec, produce
from .output import SweepError

logger = logging.getLogger(__name__)

DEPTH = 2           # chunks in flight per actor
RESTARTS = 3        # Ray restarts of one actor (and retries of its pending calls)
MAX_ATTEMPTS = 3    # a chunk lost this often (beyond Ray's own retries) fails the sweep


def require_ray() -> Any:
    from ..extras import require

    return require("ray", "sweep", "--engine ray")


class SweepActor:
    """A Ray actor holding one runner (created remotely with ``ray.remote``)."""

    def __init__(self, spec: JobSpec):
        self.spec, self.runner, self.error = spec, None, None
        try:
            spec.check_files()
            self.runner = spec.open()
        except Exception as exc:  # reported by ready(), so the driver can say it in one line
            self.error = f"{type(exc).__name__}: {exc}" if not isinstance(exc, SimbenchError) else str(exc)

    def ready(self) -> str | None:
        return self.error

    def run(self, chunk: Chunk) -> ChunkData:
        return produce(self.spec, self.runner, chunk)

    def pid(self) -> int:
        return os.getpid()

    def max_rss(self) -> int:
        """Peak resident memory of this actor's process, bytes."""
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def probe(address: str, timeout: float = 5.0) -> None:
    """One clear error if nothing listens at a ``HOST:PORT`` (or ``ray://HOST:PORT``) address:
    ``ray.init`` would otherwise retry for minutes."""
    import socket

    host, sep, port = address.split("://", 1)[-1].rpartition(":")
    if not sep or not port.isdigit():
        raise SimbenchError(f"--ray-address {shown(address)}: expected auto or HOST:PORT (e.g. 10.0.0.5:6379)")
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except OSError as exc:
        raise SimbenchError(f"cannot reach a Ray cluster at {shown(address)} ({exc.strerror or exc}); start one with "
                            "`ray start --head --port PORT` there, or leave out --ray-address for a local instance") from None


def start(ray: Any, address: str | None, workers: int | None) -> bool:
    """Initialise Ray (see the module docstring); True when this call started it."""
    if ray.is_initialized():
        return False
    if address not in (None, "auto", "local"):
        probe(address)
    kwargs: dict[str, Any] = dict(include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING)
    said: list[str] = []   # what Ray wrote on stderr while joining
    main = threading.current_thread() is threading.main_thread()
    on_term = signal.getsignal(signal.SIGTERM) if main else None
    try:
        if address is None:   # our own private instance: Ray's note that it made a token for
            # it ("Token authentication is enabled for this Ray cluster ...", every run) is not
            # the user's business; a cluster they run keeps its messages
            token = logging.getLogger("ray._private.authentication.authentication_token_setup")
            level = token.level
            token.setLevel(logging.ERROR)
            try:
                ray.init(address="local", num_cpus=workers or os.cpu_count() or 1, **kwargs)
            finally:
                token.setLevel(level)
        else:
            with filtered_fd(2, RETRY_LINES, said):   # Ray's C++ client retries for ~20 s, a line a second
                ray.init(address=address, **kwargs)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise SimbenchError(_refusal(address, exc, "".join(said))) from None
    finally:
        if callable(on_term):   # ray.init's handler (sys.exit, and a C++ one) replaced simbench's (143, the
            signal.signal(signal.SIGTERM, on_term)   # resume hint): this process's own handler again
    return True


#: words of Ray's answer when a cluster refused this driver's token (or its lack of one)
AUTH_MARKS = ("authenticationerror", "unauthenticated", "invalidauthtoken", "auth token", "authentication token")
#: Ray's C++ client's line per failed attempt to join (``gcs_client.cc``), dropped from stderr
RETRY_LINES = re.compile(r"[^\n]*Failed to get cluster ID from GCS server[^\n]*\n?")


def _refusal(address: str | None, exc: BaseException, said: str) -> str:
    """The one line for a ``ray.init`` that failed: an authentication refusal says so (the
    address answered: no hint to start a cluster); an address that answered but could not be
    joined says that; only where nothing was found the hint to start a cluster."""
    chain, e = [], exc
    while e is not None and len(chain) < 5:
        chain.append(f"{type(e).__name__}: {e}")
        e = e.__cause__ or e.__context__
    text = "\n".join(chain) + "\n" + said
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if any(m in text.lower() for m in AUTH_MARKS):
        mode = os.environ.get("RAY_AUTH_MODE")
        return (f"Ray at {shown(address)} refused to authenticate this driver (InvalidAuthToken: its token is missing "
                f"or not the cluster's; RAY_AUTH_MODE is {shown(mode) if mode else 'unset'} here): give it the "
                "cluster's token in ~/.ray/auth_token (or RAY_AUTH_TOKEN_PATH, RAY_AUTH_TOKEN) with RAY_AUTH_MODE=token, "
                "as Ray's token authentication guide says")
    if address not in (None, "auto", "local"):   # probe() found it listening
        return (f"cannot join Ray at {shown(address)}: it answers, but as no Ray cluster this driver can join ({first}); "
                "expected the head node's GCS port (ray start --head --port PORT) and the same Ray version")
    return (f"cannot connect to Ray at {shown(address)} ({first}); start a cluster with `ray start --head` "
            "or leave out --ray-address for a local instance")


def cluster_cpus(ray: Any) -> int:
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


def run_ray(spec: JobSpec, todo: list[Chunk], deliver: Callable[[ChunkData], None], workers: int | None,
            on_start: Callable[[list], None] | None = None) -> dict[str, Any]:
    """Compute ``todo`` on Ray actors (Ray initialised, see :func:`start`), handing each finished
    chunk to ``deliver``. Returns facts about the run (``workers``, ``actor_start_seconds``:
    until every actor has loaded the job, ``replaced``: actors lost for good)."""
    import time

    ray = require_ray()
    t0 = time.perf_counter()
    actors: list[Any] = []
    inflight: dict[Any, tuple[Chunk, int]] = {}
    try:
        n = workers or cluster_cpus(ray)
        n = min(n, len(todo)) if todo else 0
        remote = ray.remote(num_cpus=1, max_restarts=RESTARTS, max_task_retries=RESTARTS)(SweepActor)
        actors = [remote.remote(spec) for _ in range(n)]
        for err in ray.get([a.ready.remote() for a in actors]):
            if err is not None:
                raise SimbenchError(f"a Ray worker cannot load the job: {err}")
        ready = time.perf_counter() - t0
        if on_start is not None:
            on_start(actors)
        replaced = _loop(ray, remote, spec, actors, todo, deliver, inflight)
        return {"workers": n, "actor_start_seconds": ready, "replaced": replaced}
    finally:
        for ref in inflight:   # an interrupted sweep: its pending calls cancelled, not retried on a dying actor
            try:                # (Ray printed '(raylet) Task SweepActor.run failed ... will be retried' on stdout)
                ray.cancel(ref, force=False)
            except Exception:
                pass
        for a in actors:
            try:
                ray.kill(a)
            except Exception:
                pass


def _loop(ray: Any, remote: Any, spec: JobSpec, actors: list, todo: list[Chunk],
          deliver: Callable[[ChunkData], None], inflight: dict[Any, tuple[Chunk, int]]) -> int:
    from collections import deque

    from ray.exceptions import RayTaskError

    queue = deque(todo)
    load = [0] * len(actors)
    attempts: dict[int, int] = {}
    replaced = 0

    def feed(k: int) -> None:
        while queue and load[k] < DEPTH:
            chunk = queue.popleft()
            inflight[actors[k].run.remote(chunk)] = (chunk, k)
            load[k] += 1

    for k in range(len(actors)):
        feed(k)
    while inflight:
        done, _ = ray.wait(list(inflight), num_returns=1)
        for ref in done:
            chunk, k = inflight.pop(ref)
            load[k] -= 1
            try:
                result = ray.get(ref)
            except RayTaskError as exc:  # our code raised: it would again
                cause = exc.cause if getattr(exc, "cause", None) is not None else exc
                raise SweepError(f"chunk {chunk.index} (samples {chunk.start}-{chunk.stop - 1}) failed on a Ray "
                                 f"worker: {type(cause).__name__}: {cause}") from None
            except Exception as exc:  # the actor (or its node) is gone for good
                attempts[chunk.index] = attempts.get(chunk.index, 0) + 1
                if attempts[chunk.index] >= MAX_ATTEMPTS:
                    raise SweepError(f"chunk {chunk.index} (samples {chunk.start}-{chunk.stop - 1}) lost its Ray "
                                     f"worker {MAX_ATTEMPTS} times: {type(exc).__name__}") from None
                logger.warning("Ray worker %d lost (%s); chunk %d goes to another worker", k, type(exc).__name__,
                               chunk.index)
                queue.appendleft(chunk)
                stale = [r for r, (_, kk) in inflight.items() if kk == k]
                for r in stale:  # the same actor's other calls fail too: requeue them now
                    c, _ = inflight.pop(r)
                    queue.appendleft(c)
                load[k] = 0
                actors[k] = remote.remote(spec)
                replaced += 1
                feed(k)
                continue
            deliver(result)
            del result
            feed(k)
    return replaced


__all__ = ["run_ray", "require_ray", "SweepActor", "start", "cluster_cpus", "DEPTH"]
