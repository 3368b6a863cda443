"""A minimal Parquet writer: flat tables of float64, int64, bool and UTF-8 string columns.

Why our own: a sweep must write its output on a fresh install with no extra, and the one format
that ``pyarrow.dataset.dataset(DIR)`` reads without options is Parquet; pyarrow itself is
170 MB installed (55 MB wheel), a quarter more than simbench's whole core install, for users
who may never run a sweep. Writing the subset we need is short: one row group per file, one
data page (v1) per column, PLAIN encoding, no compression, every column REQUIRED (no
definition or repetition levels), a CRC-32 per page. The same arrays always give the same bytes,
so a chunk's checksum is a content hash whatever engine or machine wrote it.

Layout (Apache Parquet format specification, "File Format" and ``parquet.thrift``)::

    "PAR1" | per column: PageHeader, values | FileMetaData | footer length (u32 LE) | "PAR1"

The metadata are Thrift structs in the compact protocol (Apache Thrift, "Thrift Compact
Protocol" specification): a field header byte ``(id delta << 4) | type``, zigzag varints for
integers, varint-prefixed binaries, ``(size << 4) | element type`` list headers, 0 to end.
Reading needs a Parquet reader (pyarrow, the ``sweep`` extra; or polars, DuckDB, Spark).
"""
from __future__ import annotations

import zlib
from collections.abc import Mapping
from typing import Any

import numpy as np

MAGIC = b"PAR1"

# parquet.thrift enums
_BOOLEAN, _INT64, _DOUBLE, _BYTE_ARRAY = 0, 2, 5, 6   # Type
_REQUIRED = 0                                         # FieldRepetitionType
_UTF8 = 0                                             # ConvertedType
_PLAIN, _RLE = 0, 3                                   # Encoding
_UNCOMPRESSED = 0                                     # CompressionCodec
_DATA_PAGE = 0                                        # PageType

# Thrift compact protocol field types
_T_I32, _T_I64, _T_BINARY, _T_LIST, _T_STRUCT = 5, 6, 8, 9, 12


# ---------------------------------------------------------------------- Thrift compact protocol
def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _zigzag(n: int) -> int:
    return (n << 1) ^ (n >> 63)


class _Struct:
    """Fields of one Thrift struct, written in increasing id order."""

    def __init__(self) -> None:
        self.buf = bytearray()
        self.last = 0

    def _header(self, fid: int, ftype: int) -> None:
        delta = fid - self.last
        if not 0 < delta <= 15:
            raise ValueError("fields must be written in increasing id order, less than 16 apart")
        self.buf.append((delta << 4) | ftype)
        self.last = fid

    def i32(self, fid: int, v: int) -> "_Struct":
        self._header(fid, _T_I32)
        self.buf += _varint(_zigzag(int(v)))
        return self

    def i64(self, fid: int, v: int) -> "_Struct":
        self._header(fid, _T_I64)
        self.buf += _varint(_zigzag(int(v)))
        return self

    def binary(self, fid: int, v: bytes | str) -> "_Struct":
        data = v.encode() if isinstance(v, str) else v
        self._header(fid, _T_BINARY)
        self.buf += _varint(len(data)) + data
        return self

    def struct(self, fid: int, s: "_Struct") -> "_Struct":
        self._header(fid, _T_STRUCT)
        self.buf += s.end()
        return self

    def seq(self, fid: int, etype: int, items: list) -> "_Struct":
        self._header(fid, _T_LIST)
        n = len(items)
        self.buf += bytes([(n << 4) | etype]) if n < 15 else bytes([0xF0 | etype]) + _varint(n)
        for it in items:
            if etype == _T_I32:
                self.buf += _varint(_zigzag(int(it)))
            elif etype == _T_BINARY:
                data = it.encode() if isinstance(it, str) else it
                self.buf += _varint(len(data)) + data
            else:  # structs
                self.buf += it.end()
        return self

    def end(self) -> bytes:
        return bytes(self.buf) + b"\x00"


# ---------------------------------------------------------------------- values
def _plain(values: Any) -> tuple[int, bytes, int, str]:
    """(parquet type, PLAIN-encoded bytes, row count, kind) of one column."""
    if isinstance(values, np.ndarray) and values.dtype.kind in "fiub":
        arr = values.reshape(-1)
        if arr.dtype.kind == "b":
            return _BOOLEAN, np.packbits(arr, bitorder="little").tobytes(), arr.size, "bool"
        if arr.dtype.kind == "f":
            return _DOUBLE, arr.astype("<f8", copy=False).tobytes(), arr.size, "float64"
        return _INT64, arr.astype("<i8", copy=False).tobytes(), arr.size, "int64"
    items = list(values)
    if not all(isinstance(s, str) for s in items):
        raise TypeError("a column must be a numeric or bool numpy array, or a list of str")
    out = bytearray()
    for s in items:
        data = s.encode("utf-8")
        out += len(data).to_bytes(4, "little") + data
    return _BYTE_ARRAY, bytes(out), len(items), "string"


def encode(columns: Mapping[str, Any], key_value: Mapping[str, str] | None = None) -> bytes:
    """One Parquet file (bytes) holding ``columns`` (name -> 1-D numpy array of float, int or
    bool, or a list of str), all of one length, in the given order."""
    if not columns:
        raise ValueError("a Parquet file needs at least one column")
    out = bytearray(MAGIC)
    schema = [_Struct().binary(4, "schema").i32(5, len(columns))]
    chunks, nrows = [], None
    for name, values in columns.items():
        ptype, data, n, kind = _plain(values)
        if nrows is None:
            nrows = n
        elif n != nrows:
            raise ValueError(f"column {name!r} has {n} rows; the others have {nrows}")
        element = _Struct().i32(1, ptype).i32(3, _REQUIRED).binary(4, name)
        if kind == "string":
            element.i32(6, _UTF8).struct(10, _Struct().struct(1, _Struct()))  # LogicalType STRING
        schema.append(element)
        page = (_Struct().i32(1, _DATA_PAGE).i32(2, len(data)).i32(3, len(data))
                .i32(4, _signed32(zlib.crc32(data)))
                .struct(5, _Struct().i32(1, n).i32(2, _PLAIN).i32(3, _RLE).i32(4, _RLE))).end()
        offset = len(out)
        out += page + data
        size = len(page) + len(data)
        meta = (_Struct().i32(1, ptype).seq(2, _T_I32, [_PLAIN]).seq(3, _T_BINARY, [name])
                .i32(4, _UNCOMPRESSED).i64(5, n).i64(6, size).i64(7, size).i64(9, offset))
        chunks.append((offset, size, meta))
    nrows = int(nrows or 0)
    total = sum(size for _, size, _ in chunks)
    group = (_Struct().seq(1, _T_STRUCT, [_Struct().i64(2, off).struct(3, meta) for off, _, meta in chunks])
             .i64(2, total).i64(3, nrows).i64(5, chunks[0][0]).i64(6, total))
    footer = _Struct().i32(1, 1).seq(2, _T_STRUCT, schema).i64(3, nrows).seq(4, _T_STRUCT, [group])
    if key_value:
        footer.seq(5, _T_STRUCT, [_Struct().binary(1, k).binary(2, v) for k, v in key_value.items()])
    footer.binary(6, "simbench sweep (minimal Parquet writer)")
    meta_bytes = footer.end()
    out += meta_bytes + len(meta_bytes).to_bytes(4, "little") + MAGIC
    return bytes(out)


def _signed32(u: int) -> int:
    return u - (1 << 32) if u >= 1 << 31 else u


__all__ = ["encode"]
