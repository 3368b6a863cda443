"""Running a sweep: the job spec, the output folder, an engine, and progress with rate and ETA."""
from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import SimbenchError, shown
from .jobs import ChunkData, JobSpec, check_count, job_module
from .local import refuse_in_worker_import
from .output import SweepError, SweepFolder, read, totals

logger = logging.getLogger(__name__)

ENGINES = ("local", "ray")
UNITS = {"collision": "config", "dynamics": "state", "check": "robot"}


@dataclass
class SweepResult:
    """What a sweep did: the folder, the manifest, how many chunks were computed now, skipped
    (finished before) and redone (their file failed its checksum), the rows computed now, the
    wall time and rate, and facts from the engine (workers, Ray start-up time, workers
    replaced)."""

    out: Path
    manifest: dict[str, Any]
    computed: int
    skipped: int
    redone: int
    rows: int
    seconds: float
    engine: str
    facts: dict[str, Any] = field(default_factory=dict)

    @property
    def rate(self) -> float:
        """Rows computed per second of wall time (this run; a first use's compile of the
        dynamics kernels, ``facts["compile_seconds"]``, is not in ``seconds``)."""
        return self.rows / self.seconds if self.seconds > 0 else 0.0

    @property
    def complete(self) -> bool:
        return bool(self.manifest.get("complete"))

    def dataset(self) -> Any:
        """The output as a ``pyarrow.dataset.Dataset`` (needs the ``sweep`` extra)."""
        from .output import require_pyarrow

        return require_pyarrow("reading a sweep").dataset.dataset(str(self.out), format="parquet")

    def arrays(self, columns: Any = None) -> dict[str, Any]:
        """The results as numpy arrays in sample order; ``columns``: only those (see
        :func:`simbench.sweep.read`)."""
        return read(self.out, columns)

    def summary(self) -> str:
        job = self.manifest["job"]
        n, total = len(self.manifest["chunks"]), self.manifest["n_chunks"]
        what = f"{_count(self.rows, UNITS.get(job['kind'], 'row'))} in {_count(self.computed, 'chunk')}"
        rate = f", {self.rate:,.0f}/s" if self.rate >= 10 else f", {self.rate:.2g}/s" if self.rate else ""
        extra = f", Ray start-up {self.facts['ray_startup_seconds']:.1f} s" if "ray_startup_seconds" in self.facts else ""
        extra += (f", kernels compiled first in {self.facts['compile_seconds']:.1f} s (once: cached for later runs)"
                  if "compile_seconds" in self.facts else "")
        extra += f", {_count(self.skipped, 'chunk')} already done" if self.skipped else ""
        extra += f", {self.redone} redone (checksum)" if self.redone else ""
        state = "complete" if self.complete else f"{n} of {total} chunks"
        counts = self.totals
        if counts:
            state += " (" + ", ".join(f"{v:,} {k}" for k, v in counts.items()) + ")"
        workers = self.facts.get("workers", "?")
        return (f"sweep {job['kind']}: {what} ({self.seconds:.1f} s{rate}, {self.engine} engine, "
                f"{_count(workers, 'worker') if isinstance(workers, int) else f'{workers} workers'})"
                f"{extra}; {self.out}: {state}")

    @property
    def totals(self) -> dict[str, int]:
        """The job's counts over every finished chunk (configurations in collision; robots
        per verdict)."""
        return totals(self.manifest)


#: more chunk files than this in one folder is a mistake
MAX_CHUNKS = 1_000_000


def prepare(kind: str, targets: Sequence[str], **options: Any) -> JobSpec:
    """The job spec of a sweep (input files hashed, names resolved; nothing computed yet)."""
    module = job_module(kind)
    options = {k: v for k, v in options.items() if v is not None}
    spec = module.prepare(list(targets), **options)
    chunks = -(-spec.samples // spec.chunk_size)
    if chunks > MAX_CHUNKS:  # the chunk list alone would never be built
        raise SimbenchError(f"samples = {spec.samples:.3g} in chunks of {spec.chunk_size} rows is {chunks:.3g} chunk "
                            f"files; expected at most {MAX_CHUNKS:,} chunks (fewer --samples or a larger --chunk-size)")
    return spec


def default_workers(kind: str | None = None) -> int:
    """The local engine's processes when ``workers`` is not given: every CPU of this machine,
    except for a job whose module sets ``LOCAL_WORKERS`` (dynamics: 1, its batched kernels
    already run threads on every core, so more processes only compete for them)."""
    if kind is not None:
        own = getattr(job_module(kind), "LOCAL_WORKERS", None)
        if own is not None:
            return own
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


class _CompileWatch(logging.Filter):
    """On the ``simbench.dynamics`` logger during a warm-up: its per-kernel "compiling ..." /
    "compiled ..." lines become one line of the sweep's (the first time one comes); other records
    pass as the logger's level allowed before."""

    def __init__(self, level: int):
        super().__init__()
        self.level, self.seen = level, False

    def filter(self, record: logging.LogRecord) -> bool:
        if record.getMessage().startswith(("compiling", "compiled")):
            if not self.seen:
                self.seen = True
                logger.info("compiling the dynamics kernels (first use, about a minute; cached on disk for the "
                            "workers and later runs) ...")
            return False
        return record.levelno >= self.level


def _warm_up(spec: JobSpec) -> float | None:
    """Run the job's ``warm_up(spec)`` (if its module has one: a tiny batch through the same
    compiled kernels) in this process, before any worker starts, so that the kernels are
    compiled once and cached on disk, and the workers load them. Returns the seconds it took
    when it compiled (announced in one line), None when the kernels were cached already."""
    warm = getattr(job_module(spec.kind), "warm_up", None)
    if warm is None:
        return None
    dyn = logging.getLogger("simbench.dynamics")
    watch = _CompileWatch(dyn.getEffectiveLevel())
    saved = dyn.level
    dyn.setLevel(min(logging.INFO, dyn.getEffectiveLevel()))   # to see the compile even with -q
    dyn.addFilter(watch)
    t = time.perf_counter()
    try:
        warm(spec)
    finally:
        dyn.removeFilter(watch)
        dyn.setLevel(saved)
    return time.perf_counter() - t if watch.seen else None


def execute(spec: JobSpec, out: str | os.PathLike, *, engine: str = "local", workers: int | None = None,
            ray_address: str | None = None, progress: bool = True,
            on_chunk: Callable[[ChunkData], None] | None = None, on_start: Callable[[list], None] | None = None
            ) -> SweepResult:
    """Run ``spec`` into folder ``out`` (resuming what is there) on ``engine``. A usage error
    (the job cannot run as given) leaves no folder or manifest behind unless one was there."""
    refuse_in_worker_import()
    if engine not in ENGINES:
        raise SimbenchError(f"engine = {shown(engine)}; expected one of {', '.join(ENGINES)}")
    if ray_address is not None and engine != "ray":
        raise SimbenchError(f"ray_address = {shown(ray_address)} needs engine 'ray' (--engine ray)")
    if workers is not None:
        workers = check_count(workers, "workers")
        if engine == "local":   # processes of this machine, each loading the job's files
            from ..bullet.collision_setup import check_workers

            check_workers(workers)
    ray, started, facts = None, False, {}
    if engine == "ray":  # joined (or started) before the folder is touched: a bad address writes nothing
        from .ray_engine import require_ray, start

        ray = require_ray()
        t = time.perf_counter()
        started = start(ray, ray_address, workers)
        if started:
            facts["ray_startup_seconds"] = time.perf_counter() - t
    n_workers = workers or (default_workers(spec.kind) if engine == "local" else 0)
    t0 = time.perf_counter()
    try:
        folder = SweepFolder(out, spec, engine=engine, workers=n_workers)
    except BaseException:
        if started:
            ray.shutdown()
        raise
    for note in spec.notes:  # after the folder opened: a bad --out stays one line
        logger.warning("%s", note)
    status = "failed"
    facts["workers"] = min(n_workers, max(1, len(folder.todo))) if engine == "local" else n_workers
    rows = sum(c.rows for c in folder.todo)
    from ..progress import progress as bar_of

    bar = None
    compiled = None
    try:
        if folder.todo and (engine == "local" or ray_address is None):  # workers on this machine share the cache
            compiled = _warm_up(spec)
            if compiled is not None:
                facts["compile_seconds"] = compiled
        bar = bar_of(total=rows, desc=f"sweep {spec.kind}", unit=UNITS.get(spec.kind, "row")) if progress else None

        def deliver(result: ChunkData) -> None:
            folder.write(result)
            if bar is not None:
                bar.update(result.chunk.rows)
            if on_chunk is not None:
                on_chunk(result)

        if engine == "local":
            facts.update(_run_local(spec, folder.todo, deliver, n_workers))
        else:
            from .ray_engine import run_ray

            facts.update(run_ray(spec, folder.todo, deliver, workers, on_start))
        status = "complete"
    except SweepError:
        raise
    except SimbenchError:   # a usage error (the job cannot run as given): no trace of this run stays
        status = "refused"
        raise
    except KeyboardInterrupt:
        status = "interrupted"
        done = len(folder.chunks) - len(folder.todo) + folder.written
        logger.warning("%s holds %s of %s; the same command resumes the rest", folder.dir, _count(done, "chunk"),
                       f"{len(folder.chunks):,}")
        raise
    finally:
        if bar is not None:
            bar.close()
        seconds = time.perf_counter() - t0 - (compiled or 0.0)   # the rate is the sweep's, not the compiler's
        folder.run_record.update({k: v for k, v in facts.items()
                                  if k in ("workers", "replaced", "ray_startup_seconds", "compile_seconds")})
        folder.close(status, seconds)
        if status == "refused":
            folder.discard()
        if started:
            ray.shutdown()
    result = SweepResult(folder.dir, folder.manifest, folder.written, len(folder.chunks) - len(folder.todo),
                         folder.redone, rows, seconds, engine, facts)
    logger.debug("%s", result.summary())   # the CLI prints it (once); execute()'s caller has it
    return result


def _count(n: int, noun: str) -> str:
    """``1 chunk``, ``2 chunks``, ``1,000 configs``."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def _run_local(spec: JobSpec, todo: list, deliver: Callable[[ChunkData], None], workers: int) -> dict[str, Any]:
    from .local import run_local

    return run_local(spec, todo, deliver, workers)


def sweep(kind: str, target: str | os.PathLike | Sequence[str | os.PathLike] = (), *, out: str | os.PathLike,
          samples: Any = None, seed: int = 0, chunk_size: int | None = None, workers: int | None = None,
          engine: str = "local", ray_address: str | None = None, progress: bool = True,
          on_chunk: Callable[[ChunkData], None] | None = None, **options: Any) -> SweepResult:
    """Run a sweep into folder ``out``, resuming what is there; see ``simbench sweep --help``.

    ``kind``: ``"collision"`` (``target`` a scene; options ``pairs``, ``max_distance``,
    ``margin``, ``witness``, ``configs``, ``robots``: the robots moved, a name or a sequence,
    default the scene's robot), ``"dynamics"`` (a URDF; ``qd_max``, ``qdd_max``,
    ``floating``: a free-flyer base, its pose, twist and wrench as columns) or
    ``"check"`` (URDFs; ``corpus_name``, ``tol``, ``pinocchio``, ``floating``; ``samples`` =
    states per robot). The same ``seed`` and ``chunk_size`` give bit-identical files whatever ``engine``
    (``"local"`` or ``"ray"``) and ``workers``.
    """
    refuse_in_worker_import()   # a script without the __main__ guard, imported by a spawned worker
    spec = prepare(kind, _paths(kind, target), samples=samples, seed=seed, chunk_size=chunk_size, **options)
    return execute(spec, out, engine=engine, workers=workers, ray_address=ray_address, progress=progress,
                   on_chunk=on_chunk)


def _paths(kind: str, target: Any) -> list[str]:
    """``target`` of :func:`sweep` as a list of paths, or one line naming what came instead (a
    live Simulation: its workers load files, so the world as it is now has another road)."""
    items = [target] if isinstance(target, (str, os.PathLike)) else target
    if not isinstance(items, (list, tuple)) or not all(isinstance(t, (str, os.PathLike)) for t in items):
        what = type(target).__name__
        live = "" if what not in ("Simulation", "ServerPair", "LoadedScene", "Scene") else (
            "; a sweep's workers load the scene from its file, so the world as it is now (moved or added "
            "bodies) is swept with sim.detector(pairs).compute_distances(Q, workers=W)")
        raise SimbenchError(f"sweep {kind}: target has type {what}; expected a path (a scene TOML, a URDF or "
                            f"simbench:NAME), or a list of paths{live}")
    return [os.fspath(t) for t in items]


__all__ = ["sweep", "prepare", "execute", "SweepResult", "ENGINES", "default_workers"]
