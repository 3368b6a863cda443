"""Where a sweep's inputs come from: seeded uniform samples, or rows of a ``.npy``/Parquet file.

The sampler is defined per *sample*, not per chunk or worker, so the same seed gives the same
inputs whatever the chunk size, the engine and the number of workers. Samples are drawn in
blocks of :data:`BLOCK` rows: block ``b`` (samples ``b * BLOCK`` to ``(b + 1) * BLOCK - 1``)
comes from its own stream, ``numpy.random.SeedSequence(seed).spawn(b + 1)[b]`` (equal to
``SeedSequence(seed, spawn_key=(b,))``) with NumPy's default PCG64 generator::

    u = numpy.random.default_rng(SeedSequence(seed, spawn_key=(b,))).random((BLOCK, width))
    value = low + (high - low) * u        # column by column

``width`` is the number of sampled columns (the joints for a collision sweep; ``q``, ``qd``,
``qdd`` side by side for a dynamics sweep), so anyone can regenerate a sample without simbench.
A floating base's orientation is drawn from three of those columns, ``u1, u2, u3`` in [0, 1),
by :func:`unit_quaternions` (uniform on SO(3)).
"""
from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..errors import ShapeError, SimbenchError, likeness, reason, shown, shown_path

BLOCK = 1024  # samples per random stream


def uniform(seed: int, start: int, stop: int, low: Sequence[float], high: Sequence[float]) -> np.ndarray:
    """Samples ``start`` to ``stop - 1`` (rows) of the uniform sampler with bounds ``low``,
    ``high`` (one per column); see the module docstring for the rule."""
    low, high = np.asarray(low, float), np.asarray(high, float)
    width = low.size
    first, last = start // BLOCK, (stop - 1) // BLOCK if stop > start else start // BLOCK - 1
    parts = []
    for b in range(first, last + 1):
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(b,)))
        parts.append(rng.random((BLOCK, width)))
    u = np.concatenate(parts)[start - first * BLOCK:stop - first * BLOCK] if parts else np.empty((0, width))
    return low + (high - low) * u


def unit_quaternions(u: np.ndarray) -> np.ndarray:
    """Quaternions ``(x, y, z, w)`` uniform on SO(3) from uniform ``u`` of shape (..., 3) in
    [0, 1) (K. Shoemake, "Uniform random rotations", Graphics Gems III; the rule of
    :meth:`RobotModel.random_configuration`)::

        x, y = sqrt(1 - u1) sin(2 pi u2), sqrt(1 - u1) cos(2 pi u2)
        z, w = sqrt(u1) sin(2 pi u3),     sqrt(u1) cos(2 pi u3)
    """
    u = np.asarray(u, float)
    a, b = np.sqrt(1.0 - u[..., 0]), np.sqrt(u[..., 0])
    t2, t3 = 2 * np.pi * u[..., 1], 2 * np.pi * u[..., 2]
    return np.stack([a * np.sin(t2), a * np.cos(t2), b * np.sin(t3), b * np.cos(t3)], axis=-1)


def check_seed(seed: object) -> int:
    """``seed`` as an integer >= 0 (what ``numpy.random.SeedSequence`` takes), else one clear error."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise SimbenchError(f"seed = {shown(seed)}; expected an integer >= 0")
    return int(seed)


# ---------------------------------------------------------------------- configurations from a file
#: the suffixes of configuration files
CONFIG_SUFFIXES = (".npy", ".parquet")


def config_path(text: str | os.PathLike) -> Path:
    """The configuration file ``text`` (``--configs``), or one line naming it with the closest
    configuration files beside it (``did you mean 'configs.npy'?``)."""
    from ..paths import resolve_path

    given = os.fspath(text)
    path = Path(given).expanduser()
    if (path / "_manifest.json").is_file():   # a sweep's folder: its configurations in one file first
        raise SimbenchError(f"configuration file {shown_path(given)} is a sweep's folder; expected a .npy or "
                            f"a .parquet file: write its configurations to one with numpy.save('q.npy', "
                            f"simbench.sweep.read({given!r}, columns=['q'])['q']), then --configs q.npy")
    if path.suffix.lower() not in CONFIG_SUFFIXES:
        raise SimbenchError(f"configuration file {shown_path(given)}: expected a .npy or .parquet file")
    if path.is_file():
        return resolve_path(given, what="configuration file")
    folder = path.parent
    try:
        files = sorted(p.name for s in CONFIG_SUFFIXES for p in folder.glob(f"*{s}") if _readable_kind(p))
    except OSError:
        files = []
    # close names first, then the other files of its kind (there is no other choice to suggest)
    kind = [n for n in files if n.endswith(path.suffix.lower())] or files
    ranked = sorted(kind, key=lambda n: -likeness(path.name, n))
    near = [n if folder == Path(".") else str(Path(given).parent / n) for n in ranked[:3]]
    where = "" if folder == Path(".") else f" in {shown_path(str(folder))}"
    hint = (f"; did you mean {' or '.join(map(repr, near))}?" if near else
            f" (no .npy or .parquet file{where})" if folder.is_dir() else f" (no folder {shown_path(str(folder))})")
    state = "is a folder" if path.is_dir() else "not found"
    raise SimbenchError(f"configuration file {state}: {shown_path(given)}; expected a .npy or .parquet file{hint}")


def _readable_kind(path: Path) -> bool:
    """A file that may be a configuration file: a .npy file of a 2-d array of numbers (read from
    its header), a .parquet file starting with PAR1."""
    try:
        with open(path, "rb") as f:
            if path.suffix.lower() != ".npy":
                return f.read(4) == b"PAR1"
            fmt = np.lib.format
            header = fmt.read_array_header_1_0 if fmt.read_magic(f) == (1, 0) else fmt.read_array_header_2_0
            shape, _, dtype = header(f)
            return len(shape) == 2 and dtype.kind in "fi"
    except (OSError, ValueError):
        return False


def file_rows(path: str | os.PathLike, names: Sequence[str], shown_as: str | None = None) -> int:
    """Number of rows of a configuration file, after checking its columns against ``names``
    (the joints, in order); one clear error naming the file (as ``shown_as``) otherwise."""
    return read_rows(path, names, 0, None, check_only=True, shown_as=shown_as).shape[0]


def _not_npy(path: Path, label: str, dof: int) -> SimbenchError | None:
    """The error for a ``.npy`` file that is not one (text, say), or None."""
    try:
        with open(path, "rb") as f:
            head = f.read(64)
    except OSError as exc:
        return SimbenchError(f"configuration file {label} cannot be read ({exc.strerror})")
    if head.startswith(b"\x93NUMPY"):
        return None
    try:
        text = head.decode("ascii").splitlines()[0] if head else ""
        what = f"text starting {shown(text[:30])}" if text.isprintable() else None
    except (UnicodeDecodeError, IndexError):
        what = None
    what = what or ("empty" if not head else "no NumPy header")
    return SimbenchError(f"configuration file {label} is not a .npy file ({what}); expected an (N, {dof}) array "
                         f"written by numpy.save, e.g. numpy.save({path.name!r}, numpy.loadtxt(TEXT_FILE))")


def read_rows(path: str | os.PathLike, names: Sequence[str], start: int, stop: int | None,
              check_only: bool = False, shown_as: str | None = None) -> np.ndarray:
    """Rows ``start`` to ``stop - 1`` of a configuration file as a float array (rows, len(names)).

    ``.npy``: an (N, dof) float array, columns in ``names`` order (memory-mapped, so only the
    rows asked for are read). Parquet (the ``sweep`` extra): one column per joint, named as the
    joint or ``q(joint)`` (as a sweep writes them). Messages name the file as ``shown_as`` (as
    the user wrote it), else its path."""
    path = Path(path)
    label = shown_path(str(path) if shown_as is None else shown_as)
    if path.suffix == ".npy":
        bad = _not_npy(path, label, len(names))
        if bad is not None:
            raise bad
        try:
            arr = np.load(path, mmap_mode="r")
        except (OSError, ValueError) as exc:
            if any(w in str(exc) for w in ("allow_pickle", "pickled", "Python objects")):
                raise SimbenchError(f"configuration file {label} holds Python objects (a pickled object array); "
                                    f"expected an (N, {len(names)}) array of numbers, e.g. "
                                    f"numpy.save({path.name!r}, numpy.asarray(rows, dtype=float))") from None
            raise SimbenchError(f"configuration file {label} cannot be read: {reason(exc)}") from None
        if arr.ndim != 2 or arr.shape[1] != len(names) or arr.dtype.kind not in "fi":
            raise ShapeError(f"configuration file {label} holds a {arr.dtype} array of shape {arr.shape}; "
                             f"expected (N, {len(names)}) numbers with joints in order {list(names)}")
        out = arr if check_only else np.array(arr[start:stop], dtype=float)  # check_only: every row
    elif path.suffix == ".parquet":
        from .output import require_pyarrow

        pq = require_pyarrow("reading configurations from Parquet").parquet
        try:
            f = pq.ParquetFile(path)
        except Exception as exc:  # pyarrow raises several types for a bad file
            raise SimbenchError(f"configuration file {label} is not a readable Parquet file: {exc}") from None
        have = set(f.schema_arrow.names)
        cols = []
        for n in names:
            col = n if n in have else f"q({n})"
            if col not in have:
                raise SimbenchError(f"configuration file {label} has no column {n!r} or 'q({n})'; "
                                    f"expected one column per joint of {list(names)}")
            cols.append(col)
        if check_only:
            return np.empty((f.metadata.num_rows, 0))
        table = f.read(columns=cols)
        stop = table.num_rows if stop is None else stop
        out = np.column_stack([table[c].to_numpy()[start:stop].astype(float) for c in cols]) if cols \
            else np.empty((stop - start, 0))
    else:
        raise SimbenchError(f"configuration file {label}: expected a .npy or .parquet file")
    if not np.isfinite(out).all():
        bad = np.argwhere(~np.isfinite(out))[0]
        raise ShapeError(f"configuration file {label} holds a non-finite value at row {start + bad[0]}, "
                         f"joint {names[bad[1]]!r}; expected finite joint values")
    return np.empty((out.shape[0], 0)) if check_only else out


def sha256_file(path: str | os.PathLike) -> str:
    """Hex SHA-256 of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


__all__ = ["BLOCK", "CONFIG_SUFFIXES", "uniform", "unit_quaternions", "check_seed", "config_path", "file_rows",
           "read_rows", "sha256_file"]
