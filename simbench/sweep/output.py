"""A sweep's output folder: one Parquet file per chunk, and the manifest that makes it resumable.

Layout of ``DIR`` (``pyarrow.dataset.dataset(DIR)`` reads it as one table; it skips names
starting with ``_`` or ``.``)::

    chunk-000000.parquet ...   one per chunk, written as .chunk-*.tmp<pid> then renamed
    _manifest.json             the job (everything that determines the results) and per
                               finished chunk its file, rows and SHA-256; written the same way
    _lock                      held (flock) while a sweep runs in the folder (the pid of its
                               driver); removed when the run ends, also on Ctrl-C (a driver
                               killed outright leaves it, and the next run takes it over)

Resuming: a chunk counts as finished only when the manifest lists it *and* its file's SHA-256
matches; anything else (never started, interrupted, deleted or corrupted on disk) is computed
again and its file replaced in one rename, so no chunk is ever there twice. A folder holding
another job (another seed, scene, chunk size, ...) is refused with one line naming the first
difference. The manifest is rewritten at most every :data:`FLUSH_SECONDS` and when the run
ends, so a driver killed outright may redo up to that much finished work (never lose it silently).
"""
from __future__ import annotations

import contextlib
import datetime
import json
import logging
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import SimbenchError, flag, shown, shown_path
from ..outputs import folder_made, writable_dir
from .jobs import Chunk, ChunkData, JobSpec
from .sampling import sha256_file

logger = logging.getLogger(__name__)

MANIFEST = "_manifest.json"
LOCK = "_lock"
FORMAT = "simbench-sweep/1"
FLUSH_SECONDS = 1.0
#: job kinds whose row *i* depends only on the seed and *i*: a re-run with more --samples grows
#: the folder (check's rows are robots, and its --samples is states per robot)
GROWABLE = ("collision", "dynamics")


class SweepError(SimbenchError):
    """A sweep that cannot go on (a chunk failing on every retry, a folder in use)."""


def require_pyarrow(what: str) -> Any:
    """``pyarrow`` (with its ``dataset`` and ``parquet`` modules), or one line naming the extra."""
    from ..extras import require

    for module in ("pyarrow", "pyarrow.dataset", "pyarrow.parquet"):
        require(module, "sweep", what)
    import pyarrow

    return pyarrow


def chunk_name(index: int, n_chunks: int) -> str:
    return f"chunk-{index:0{max(6, len(str(max(n_chunks - 1, 0))))}d}.parquet"


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def differences(old: Any, new: Any, path: str = "") -> Iterator[str]:
    """The key paths where two JSON-like values differ, in order."""
    if isinstance(old, dict) and isinstance(new, dict):
        for k in list(old) + [k for k in new if k not in old]:
            if k not in old or k not in new:
                yield f"{path}.{k}".lstrip(".")
            else:
                yield from differences(old[k], new[k], f"{path}.{k}")
    elif isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for i, (a, b) in enumerate(zip(old, new)):
            yield from differences(a, b, f"{path}[{i}]")
    elif old != new:
        yield path.lstrip(".")


def first_difference(old: Any, new: Any, path: str = "") -> str | None:
    """The key path where two JSON-like values first differ, or None."""
    return next(differences(old, new, path), None)


def _lookup(data: Any, path: str) -> Any:
    for part in path.replace("[", ".[").split("."):
        if not part:
            continue
        try:
            data = data[int(part[1:-1])] if part.startswith("[") else data[part]
        except (KeyError, IndexError, TypeError):
            return "(none)"
    return data


def _brief(value: Any, most: int = 6) -> str:
    """``repr(value)``, short: a long list cut to its first entries and its length (a job's
    bounds), a checksum to its first 12 digits, any other long text to its ends."""
    if isinstance(value, list) and len(value) > most:
        return "[" + ", ".join(repr(v) for v in value[:3]) + f", ... ({len(value)} values)]"
    if isinstance(value, str) and len(value) >= 32 and all(c in "0123456789abcdef" for c in value):
        return repr(value[:12] + "...")
    return shown(value)


#: the refusal to resume a folder of another sweep stays within this many characters
MISMATCH_LINE = 200


#: a job's entries as the user gives them: the command's option (the API's keyword is its name
#: without the dashes, ``--max-distance`` -> ``max_distance``)
OPTION_NAMES = {"seed": "--seed", "samples": "--samples", "chunk_size": "--chunk-size",
                "options.pairs": "--pairs/--pair", "options.max_distance": "--max-distance",
                "options.margin": "--margin", "options.witness": "--witness", "options.sampler.kind": "--configs",
                "options.floating": "--floating", "options.qd_max": "--qd-max", "options.qdd_max": "--qdd-max",
                "options.targets": "TARGET", "options.states": "--samples", "options.tol": "--tol",
                "options.corpus": "--corpus", "options.robot": "--robot"}
#: entries that follow from others (the columns from the pairs, the bounds from the URDF and
#: --floating): named only when nothing the user gives differs
DERIVED = ("arrays", "options.disabled", "options.joints", "options.low", "options.high", "options.sampler.low",
           "options.sampler.high")


def mismatch(old: Any, new: Any, head: str, tail: str) -> str | None:
    """``head + differences + tail`` on one line of about :data:`MISMATCH_LINE` characters, or
    None when the jobs are the same. Each differing option is named once, as the command line
    spells it (:data:`OPTION_NAMES`; the entries of one list together: ``options.low[3]`` and
    ``options.low[5]`` are ``options.low``); entries that follow from others (:data:`DERIVED`)
    only when nothing else differs; as many as fit are told with their two values (a list of
    another length by its lengths only), the rest only named: ``--floating is False there, True
    in this run``."""
    groups: dict[str, list[str]] = {}
    for where in differences(old, new):
        groups.setdefault(where.split("[", 1)[0], []).append(where)
    if not groups:
        return None
    given = {k: v for k, v in groups.items() if k not in DERIVED}
    groups = given or groups
    told: list[str] = []
    budget = max(60, MISMATCH_LINE - len(head) - len(tail))
    names = list(groups)
    while names:
        text = _told(old, new, names[0], groups[names[0]])
        reserve = len(f"; also differ: {names[1]}") if len(names) > 1 else 0
        if told and len("; ".join(told + [text])) + reserve > budget:
            break
        told.append(text)
        names.pop(0)
    if names:
        more = f" and {len(names) - 4} more" if len(names) > 4 else ""
        told.append("also differ: " + ", ".join(_named(n) for n in names[:4]) + more)
    return head + "; ".join(told) + tail


def _told(old: Any, new: Any, name: str, paths: list[str]) -> str:
    """One differing option with its values: a scalar's two values, a list of another length by
    its lengths, a list's first differing entry (and how many more entries differ)."""
    a, b = _lookup(old, name), _lookup(new, name)
    parts = name.split(".")
    if len(parts) == 3 and parts[0] == "files" and parts[2] == "sha256":  # an input file changed: name it
        path = _lookup(old, f"files.{parts[1]}.path")
        return (f"{parts[1].split(':')[0]} file {shown_path(str(path))} changed since the sweep began "
                f"(SHA-256 {_brief(a)} there, {_brief(b)} in this run)")
    if isinstance(a, list) and isinstance(b, list) and len(a) != len(b):
        return f"{_named(name)} has {len(a)} values there, {len(b)} in this run"
    where = paths[0]
    more = f" (and {len(paths) - 1} more entries)" if len(paths) > 1 else ""
    shown_where = _named(name) + where[len(name):]
    return f"{shown_where} is {_brief(_lookup(old, where))} there, {_brief(_lookup(new, where))} in this run{more}"


def _named(name: str) -> str:
    """A job entry as the command line spells it (``options.max_distance`` -> ``--max-distance``;
    ``files.scene.sha256`` -> ``the scene file``)."""
    parts = name.split(".")
    if len(parts) == 3 and parts[0] == "files" and parts[2] == "sha256":
        return f"the {parts[1].split(':')[0]} file"
    return OPTION_NAMES.get(name, name)


class SweepFolder:
    """The output folder of one sweep, opened for writing (see the module docstring)."""

    def __init__(self, out: str | os.PathLike, spec: JobSpec, *, engine: str, workers: int):
        self.spec, wanted = spec, writable_dir(out, "sweep output folder (--out)")
        self.made = [p for p in (wanted, *wanted.parents) if not p.exists()]   # deepest first
        self.dir, self.chunks, self.fresh, self._lock_file = folder_made(wanted), spec.chunks(), False, None
        try:
            self._lock_file = self._lock()
            for stale in self.dir.glob(".*.tmp[0-9]*"):   # left by a run that could not finish a
                stale.unlink(missing_ok=True)             # write (disk full, killed): we hold the lock
            self.manifest = self._load_or_create()
            self.todo, self.redone = self._verify()
        except BaseException:
            self._unlock()
            self._remove_made()
            raise
        self.written, self._dirty, self._last_flush = 0, True, 0.0
        self.run_record = {"engine": engine, "workers": workers, "started": _now(), "skipped": len(self.chunks) - len(self.todo),
                           "redone": self.redone, "computed": 0, "status": "running"}
        self.manifest["runs"].append(self.run_record)
        self.flush(force=True)

    # ------------------------------------------------------------------ opening
    def _lock(self) -> Any:
        try:
            import fcntl
        except ImportError:  # not POSIX: no lock
            return None
        path = self.dir / LOCK
        while True:
            f = open(path, "a+")
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                f.seek(0)
                holder = f.read().strip() or "another process"
                f.close()
                raise SimbenchError(f"sweep output folder {shown_path(str(self.dir))} is in use by {holder}; wait for "
                                    "it to finish or choose another --out") from None
            # the holder removes the file before it lets go: a lock taken on a removed file is no
            # lock (another run may hold the new file), so take the one that is there now
            try:
                same = os.path.samestat(os.fstat(f.fileno()), os.stat(path))
            except FileNotFoundError:
                same = False
            if same:
                break
            f.close()
        f.seek(0)
        f.truncate()
        f.write(f"pid {os.getpid()}\n")
        f.flush()
        return f

    def _unlock(self) -> None:
        """Remove the lock file, then release it (in that order: see :meth:`_lock`)."""
        if self._lock_file is not None:
            try:
                os.unlink(self.dir / LOCK)
            except OSError:
                pass  # gone already, or a read-only folder: the lock is released all the same
            self._lock_file.close()  # closing releases the flock
            self._lock_file = None

    def _load_or_create(self) -> dict[str, Any]:
        path = self.dir / MANIFEST
        job = self.spec.identity()
        for leftover in self.dir.glob(".chunk-*"):
            leftover.unlink(missing_ok=True)  # temporary files of an interrupted run
        if not path.exists():
            self.fresh = True
            foreign = sorted(p.name for p in self.dir.iterdir() if not p.name.startswith(("_", ".")))
            if foreign:
                raise SimbenchError(f"sweep output folder {shown_path(str(self.dir))} is not empty and holds no sweep "
                                    f"(found {', '.join(foreign[:3])}{' ...' if len(foreign) > 3 else ''}); "
                                    "expected a new or empty folder, or the folder of an earlier sweep")
            return {"format": FORMAT, "job": job, "n_chunks": len(self.chunks), "complete": False,
                    "created": _now(), "chunks": {}, "runs": []}
        try:
            manifest = _json_object(path)
            if manifest.get("format") != FORMAT:
                raise ValueError(f"format {shown(manifest.get('format'))}")
        except (ValueError, OSError) as exc:
            raise SimbenchError(f"sweep manifest {shown_path(str(path))} cannot be read ({exc}); expected a folder made by "
                                "simbench sweep (delete the folder to start again)") from None
        if self._grows(manifest, job):
            return manifest
        said = mismatch(manifest["job"], job, f"sweep output folder {shown_path(str(self.dir))} holds another sweep: ",
                        "; use another --out, or the same parameters to resume")
        if said:
            raise SimbenchError(said)
        return manifest

    def _grows(self, manifest: dict[str, Any], job: dict[str, Any]) -> bool:
        """True when this run is the folder's sweep with more samples (nothing else differs) and
        the manifest now says so: row *i* of a collision or dynamics sweep depends only on the
        seed and *i* (each block of rows has its own random stream, a configuration file's row
        is that row), and with the same chunk size the finished chunks cover the same rows, so
        they stay and the new chunks are added (a last chunk that was shorter is computed again
        at its new length, see :meth:`_verify`). Fewer samples are refused in one line."""
        old = manifest["job"]
        if old.get("kind") not in GROWABLE or [d for d in differences(old, job)] != ["samples"]:
            return False
        was, now = int(old["samples"]), int(job["samples"])
        if now < was:
            raise SimbenchError(f"sweep output folder {shown_path(str(self.dir))} holds a sweep of {was:,} samples; "
                                f"--samples {now:,} would shrink it: use another --out for a smaller sweep (or read the "
                                f"first {now:,} rows of this one)")
        logger.info("growing the sweep in %s from %s to %s samples (the first %s rows are the same by construction: "
                    "same seed, same chunk size); its finished chunks are kept", self.dir, f"{was:,}", f"{now:,}",
                    f"{was:,}")
        manifest["job"] = job
        manifest["n_chunks"] = len(self.chunks)
        manifest["complete"] = False
        manifest.setdefault("grown", []).append({"from": was, "to": now, "at": _now()})
        return True

    def _verify(self) -> tuple[list[Chunk], int]:
        """Chunks still to compute, and how many of them had a file that failed its checksum."""
        done = self.manifest["chunks"]
        todo, redone = [], 0
        for c in self.chunks:
            entry = done.get(str(c.index))
            path = self.dir / chunk_name(c.index, len(self.chunks))
            if entry is not None and "stop" in entry and (entry.get("start"), entry["stop"]) != (c.start, c.stop):
                # the last chunk of a sweep that grew (--samples larger): longer now
                logger.info("chunk %d (%s) grows from %s to %s rows; computing it again", c.index, path.name,
                            f"{entry.get('stop', 0) - entry.get('start', 0):,}", f"{c.rows:,}")
            elif entry is not None and path.exists():
                if sha256_file(path) == entry["sha256"]:
                    continue
                logger.warning("chunk %d (%s) fails its checksum (changed or corrupted on disk); computing it again",
                               c.index, path.name)
                redone += 1
            elif entry is not None:
                logger.warning("chunk %d (%s) is missing; computing it again", c.index, path.name)
                redone += 1
            done.pop(str(c.index), None)
            todo.append(c)
        self.manifest["complete"] = not todo
        return todo, redone

    # ------------------------------------------------------------------ writing
    def write(self, result: ChunkData) -> None:
        """Write one computed chunk (atomically) and record it."""
        c = result.chunk
        name = chunk_name(c.index, len(self.chunks))
        self._atomic(name, result.data)
        self.manifest["chunks"][str(c.index)] = {"file": name, "start": c.start, "stop": c.stop,
                                                 "sha256": result.sha256, "counts": result.summary}
        self.written += 1
        self.run_record["computed"] = self.written
        self._dirty = True
        self.flush()

    def flush(self, force: bool = False) -> None:
        """Rewrite the manifest (temp file + rename) if it changed and the last write is at
        least FLUSH_SECONDS old (or ``force``)."""
        now = time.monotonic()
        if not self._dirty or (not force and now - self._last_flush < FLUSH_SECONDS):
            return
        self._atomic(MANIFEST, (json.dumps(self.manifest, indent=1) + "\n").encode())
        self._dirty, self._last_flush = False, now

    def _atomic(self, name: str, data: bytes) -> None:
        """``name`` written as a temporary file then renamed; on failure (a full disk) the
        temporary file is removed and one line says what is kept and how to go on."""
        tmp = self.dir / f".{name}.tmp{os.getpid()}"
        try:
            with open(tmp, "wb") as f:
                f.write(data)
            os.replace(tmp, self.dir / name)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            kept = len(self.manifest["chunks"])
            raise SweepError(f"cannot write {name} in {shown_path(str(self.dir))} ({exc.strerror}); {kept:,} of "
                             f"{len(self.chunks):,} chunks are kept: free some space (or give another --out) "
                             "and run the same command to resume") from None

    def close(self, status: str, seconds: float) -> None:
        """Record how the run ended, write the manifest, release the folder."""
        try:
            self.manifest["complete"] = len(self.manifest["chunks"]) == len(self.chunks)
            self.run_record.update(status=status, finished=_now(), seconds=round(seconds, 3))
            self._dirty = True
            self.flush(force=True)
        finally:
            self._unlock()

    def discard(self) -> None:
        """After :meth:`close` of a run refused with a usage error: its new manifest and the folders
        it made go again if no chunk was written (the fixed command starts afresh)."""
        if self.fresh and not self.written and not self.manifest["chunks"]:
            (self.dir / MANIFEST).unlink(missing_ok=True)
            self._remove_made()

    def _remove_made(self) -> None:
        for folder in self.made:   # deepest first; one holding anything stays
            with contextlib.suppress(OSError):
                folder.rmdir()


# ---------------------------------------------------------------------- reading
def totals(manifest: dict[str, Any]) -> dict[str, int]:
    """The job's counts summed over the finished chunks (e.g. configurations in collision,
    robots per verdict)."""
    out: dict[str, int] = {}
    for entry in manifest["chunks"].values():
        for k, v in entry.get("counts", {}).items():
            out[k] = out.get(k, 0) + int(v)
    return out


def _json_object(path: Path) -> dict[str, Any]:
    """The JSON object in file ``path``; a ValueError for other JSON (``[]``) or none."""
    data = json.loads(path.read_text())
    if not isinstance(data, dict):
        raise ValueError(f"it holds a JSON {type(data).__name__}, not an object")
    return data


def read_manifest(out: str | os.PathLike) -> dict[str, Any]:
    path = Path(out) / MANIFEST
    try:
        return _json_object(path)
    except (OSError, ValueError) as exc:
        raise SimbenchError(f"no readable sweep manifest in {shown_path(str(out))} ({exc}); expected a folder made by "
                            "simbench sweep") from None


class SweepArrays(dict):
    """:func:`read`'s arrays by name; ``columns[name]`` names the entries of each row of array
    ``name`` (``["distance(robot, ground)", ...]``), in order (flattened for a 2-D row);
    ``samples`` the sample number of each row (all of 0 .. N-1 for a finished sweep)."""

    columns: dict[str, list[str]]
    samples: Any


def read(out: str | os.PathLike, columns: Any = None, *, partial: bool = False) -> SweepArrays:
    """A finished sweep's results as numpy arrays, rows in ``sample`` order: per result of the
    manifest's ``job.arrays`` an array (N, *shape) (strings: an object array), ``.columns``
    naming each array's entries and ``.samples`` the sample number of each row
    (:class:`SweepArrays`); needs pyarrow.

    ``columns``: the results to read, by array name (``"q"``, ``"tau"``, ``"M"``) or by one
    column's name (``"tau(panda_joint1)"``: an array (N,) under that name), a str or a list;
    default every result. Only those Parquet columns are read (and ``sample``, for the order):
    a million-row dynamics sweep's ``q`` is 7 of its 120 columns. ``partial``: an unfinished
    sweep (interrupted, or still running) gives the rows of the chunks its manifest lists as
    written, which are the rows a finished run gives for those samples."""
    import numpy as np

    manifest = read_manifest(out)
    done, total = len(manifest["chunks"]), manifest["n_chunks"]
    if not manifest.get("complete") and not flag(partial, "partial"):   # 'false' would read as True
        raise SimbenchError(f"the sweep in {shown_path(str(out))} is not finished ({done:,} of {total:,} chunks); "
                            f"run the same command again to complete it, or read(out, partial=True) for the "
                            f"rows of the {done:,} chunks written")
    arrays = manifest["job"]["arrays"]
    wanted = _wanted(arrays, columns)
    pa = require_pyarrow("reading a sweep")
    names = list(dict.fromkeys(["sample"] + [c for a in wanted for c in a["columns"]]))
    files = [str(Path(out) / entry["file"]) for entry in manifest["chunks"].values()]  # written whole, listed
    table = pa.dataset.dataset(files, format="parquet").to_table(columns=names) if files else None
    sample = table["sample"].to_numpy() if files else np.zeros(0, dtype=np.int64)
    order = np.argsort(sample, kind="stable")
    out_arrays = SweepArrays()
    out_arrays.columns = {a["name"]: list(a["columns"]) for a in wanted}
    out_arrays.samples = sample[order]
    if table is None:   # no chunk written yet: every array empty
        for a in wanted:
            out_arrays[a["name"]] = np.zeros((0, *a["shape"]), dtype=object if a["dtype"] == "string" else float)
        return out_arrays
    for a in wanted:
        cols = [table[c].to_numpy(zero_copy_only=False)[order] for c in a["columns"]]
        if a["dtype"] == "string":
            out_arrays[a["name"]] = cols[0]
            continue
        arr = np.stack(cols, axis=-1) if a["shape"] else cols[0]
        out_arrays[a["name"]] = arr.reshape(len(order), *a["shape"])
    return out_arrays


def _wanted(arrays: list[dict[str, Any]], columns: Any) -> list[dict[str, Any]]:
    """The manifest's arrays that :func:`read` reads for ``columns`` (a column alone as an
    array of shape ()), or one line naming what is not there and what is."""
    if columns is None:
        return arrays
    items = [columns] if isinstance(columns, str) else columns
    if not isinstance(items, (list, tuple)) or not items or not all(isinstance(c, str) for c in items):
        raise SimbenchError(f"columns = {shown(columns)}; expected a result's name (e.g. 'q') or a column's, or a "
                            "list of them")
    by_name = {a["name"]: a for a in arrays}
    by_column = {c: a for a in arrays for c in a["columns"]}
    out: list[dict[str, Any]] = []
    for c in items:
        if c in by_name:
            out.append(by_name[c])
        elif c in by_column:
            out.append({"name": c, "dtype": by_column[c]["dtype"], "shape": [], "columns": [c]})
        else:
            from ..errors import closest

            near = closest(c, list(by_name) + list(by_column), n=1)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            raise SimbenchError(f"column {shown(c)} is not in this sweep{hint}; its results are "
                                f"{', '.join(by_name)} (or one column of them, e.g. {arrays[-1]['columns'][0]!r})")
    return list({a["name"]: a for a in out}.values())


__all__ = ["SweepFolder", "SweepArrays", "SweepError", "require_pyarrow", "chunk_name", "read", "read_manifest", "MANIFEST",
           "first_difference", "differences", "totals"]
