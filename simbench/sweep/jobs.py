"""What a sweep computes, as plain data: the job spec (built once, in the driver) and its runner
(built once per worker process or Ray actor, from the spec).

A :class:`JobSpec` is a frozen, picklable record of everything that determines the results:
the job kind, the input files with their SHA-256, the sampler or the configuration file, the
options, the number of rows and the chunk size. Its :meth:`~JobSpec.identity` goes into the
manifest; a re-run into the same folder must match it. A runner (:class:`Runner`) loads the
scene or robot once and then computes chunks: ``run(chunk)`` returns the chunk's columns, in
the spec's column order, as numpy arrays (strings: lists of str).

Job kinds register themselves in :data:`KINDS` (``collision``, ``dynamics``, ``check``).
"""
from __future__ import annotations

import difflib
import importlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from .. import __version__
from ..errors import SimbenchError, shown, shown_path
from .sampling import sha256_file

#: job kind -> module defining ``prepare(targets, **options) -> JobSpec`` and ``DEFAULT_CHUNK``
KINDS = {"collision": "simbench.sweep.collision_job", "dynamics": "simbench.sweep.dynamics_job",
         "check": "simbench.sweep.check_job"}


@dataclass(frozen=True)
class Chunk:
    """Rows ``start`` to ``stop - 1`` of a sweep, written to one file."""

    index: int
    start: int
    stop: int

    @property
    def rows(self) -> int:
        return self.stop - self.start


@dataclass(frozen=True)
class Array:
    """One result of every row, stored as ``columns`` (one Parquet column each): ``shape`` is
    its shape per row (``()`` for a scalar), ``dtype`` one of ``int64``, ``float64``, ``bool``,
    ``string``."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    columns: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "dtype": self.dtype, "shape": list(self.shape), "columns": list(self.columns)}


def labelled(name: str, dtype: str, labels: Sequence[str], suffixes: Sequence[str] = ()) -> Array:
    """An array with one column per label, ``name(label)`` (with ``suffixes``: one per label and
    suffix, ``name(label).x``), shape ``(len(labels),)`` or ``(len(labels), len(suffixes))``."""
    if suffixes:
        cols = tuple(f"{name}({lb}).{s}" for lb in labels for s in suffixes)
        return Array(name, dtype, (len(labels), len(suffixes)), cols)
    return Array(name, dtype, (len(labels),), tuple(f"{name}({lb})" for lb in labels))


def scalar(name: str, dtype: str) -> Array:
    return Array(name, dtype, (), (name,))


class Runner(Protocol):
    def run(self, chunk: Chunk) -> dict[str, Any]: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class JobSpec:
    """A sweep's job (see the module docstring). ``arrays``: the results per row, in column
    order (``sample`` first); ``files``: (role, path, SHA-256) of every input file;
    ``options``: the job's own settings (JSON-able). ``samples`` is the number of rows."""

    kind: str
    samples: int
    chunk_size: int
    seed: int | None
    arrays: tuple[Array, ...]
    files: tuple[tuple[str, str, str], ...] = ()
    options: tuple[tuple[str, Any], ...] = ()
    version: str = field(default=__version__)
    #: warning lines for the user, logged once the output folder is open (not part of the job)
    notes: tuple[str, ...] = field(default=(), compare=False)

    def option(self, key: str, default: Any = None) -> Any:
        return dict(self.options).get(key, default)

    @property
    def columns(self) -> list[tuple[str, str]]:
        """(column name, dtype) in file order."""
        return [(c, a.dtype) for a in self.arrays for c in a.columns]

    def chunks(self) -> list[Chunk]:
        k = self.chunk_size
        return [Chunk(i, s, min(s + k, self.samples)) for i, s in enumerate(range(0, self.samples, k))]

    def identity(self) -> dict[str, Any]:
        """Everything that determines the results (the manifest's ``job``)."""
        import json

        job = {"kind": self.kind, "samples": self.samples, "chunk_size": self.chunk_size, "seed": self.seed,
               "files": {role: {"path": path, "sha256": digest} for role, path, digest in self.files},
               "options": {k: v for k, v in self.options}, "arrays": [a.as_dict() for a in self.arrays],
               "simbench": self.version}
        return json.loads(json.dumps(job))  # as the manifest holds it (lists, not tuples)

    def path(self, role: str) -> Any:
        """The input file ``role`` on this machine (see :func:`file_entry`)."""
        from ..paths import resolve_path

        for r, name, _ in self.files:
            if r == role:
                return resolve_path(name, what=f"{role} file")
        raise KeyError(role)

    def open(self) -> Runner:
        """The runner for this spec (call in the process that computes)."""
        return importlib.import_module(KINDS[self.kind]).open_runner(self)

    def check_files(self) -> None:
        """Refuse to run where an input file differs from the one the driver hashed (a cluster
        node with another copy of the scene or robot)."""
        for role, path, digest in self.files:
            try:
                now = sha256_file(self.path(role))
            except (OSError, SimbenchError) as exc:
                raise SimbenchError(f"{role} file {shown_path(path)} cannot be read on this node ({exc}); "
                                    "every worker needs the same files at the same paths") from None
            if now != digest:
                raise SimbenchError(f"{role} file {shown_path(path)} differs on this node (SHA-256 {now[:12]}, driver "
                                    f"{digest[:12]}); every worker needs the same files")


def columns_of(spec: JobSpec, chunk: Chunk, result: dict[str, Any]) -> dict[str, Any]:
    """A runner's arrays as Parquet columns (name -> 1-D array, or list of str), checked
    against the spec's layout."""
    out: dict[str, Any] = {}
    for a in spec.arrays:
        value = result[a.name]
        if a.dtype == "string":
            if len(value) != chunk.rows:
                raise SimbenchError(f"{a.name}: {len(value)} rows for chunk {chunk.index} of {chunk.rows}")
            out[a.name] = [str(v) for v in value]
            continue
        arr = np.asarray(value, dtype=_NUMPY[a.dtype])
        if arr.shape != (chunk.rows, *a.shape):
            raise SimbenchError(f"{a.name}: shape {arr.shape} for chunk {chunk.index}; expected {(chunk.rows, *a.shape)}")
        flat = arr.reshape(chunk.rows, -1)
        for k, col in enumerate(a.columns):
            out[col] = np.ascontiguousarray(flat[:, k])
    return out


@dataclass(frozen=True)
class ChunkData:
    """One computed chunk: its Parquet file's bytes and their SHA-256."""

    chunk: Chunk
    data: bytes
    sha256: str
    summary: dict[str, int] = field(default_factory=dict)


def produce(spec: JobSpec, runner: Runner, chunk: Chunk) -> ChunkData:
    """Compute ``chunk`` with ``runner`` and encode it as a Parquet file (in the worker, so the
    driver only writes bytes); with the job's counts (its ``summarize``) for the manifest."""
    import hashlib
    import json

    from .parquet import encode

    about = json.dumps({"kind": spec.kind, "chunk": chunk.index, "start": chunk.start, "stop": chunk.stop})
    result = runner.run(chunk)
    data = encode(columns_of(spec, chunk, result), {"simbench.sweep": about})
    summarize = getattr(importlib.import_module(KINDS[spec.kind]), "summarize", None)
    return ChunkData(chunk, data, hashlib.sha256(data).hexdigest(), summarize(result) if summarize else {})


_NUMPY = {"int64": np.int64, "float64": np.float64, "bool": np.bool_}


def file_entry(role: str, path: Any) -> tuple[str, str, str]:
    """(role, portable name, SHA-256) of an input file. A file bundled with PyBullet or simbench
    is named ``pybullet_data:...`` / ``simbench:...`` (found on every node wherever Python is
    installed), any other by its absolute path."""
    from pathlib import Path

    from ..paths import assets_dir, pybullet_data_dir

    p = Path(path).resolve()
    name = str(p)
    for prefix, root in (("pybullet_data:", pybullet_data_dir), ("simbench:", assets_dir)):
        try:
            name = prefix + p.relative_to(Path(root()).resolve()).as_posix()
            break
        except ValueError:
            continue
    return role, name, sha256_file(p)


def job_module(kind: Any) -> Any:
    """The module of job ``kind``; one clear error naming the valid kinds otherwise."""
    if kind not in KINDS:
        close = difflib.get_close_matches(str(kind), KINDS, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise SimbenchError(f"unknown job kind {shown(kind)}; expected one of {', '.join(KINDS)}{hint}")
    return importlib.import_module(KINDS[kind])


def check_count(value: Any, what: str, minimum: int = 1) -> int:
    """``value`` as an integer >= ``minimum``; accepts ``1000000``, ``1_000_000`` and ``1e6``."""
    v = value
    if isinstance(v, str):
        text = v.strip().replace("_", "")
        try:
            v = int(text)
        except ValueError:
            try:
                f = float(text)
                v = int(f) if f.is_integer() else None
            except ValueError:
                v = None
    elif isinstance(v, float) and v.is_integer():
        v = int(v)
    elif hasattr(v, "__index__") and not isinstance(v, bool):
        v = int(v.__index__())
    if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
        raise SimbenchError(f"{what} = {shown(value)}; expected an integer >= {minimum}")
    return v


__all__ = ["KINDS", "Chunk", "Array", "labelled", "scalar", "Runner", "JobSpec", "columns_of", "ChunkData", "produce", "file_entry", "job_module", "check_count"]
