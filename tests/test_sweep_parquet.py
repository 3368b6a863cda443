"""The sweep's own Parquet writer, read back by pyarrow (the independent reader): every value
bit for bit, the types, and pyarrow's page CRC check."""
import numpy as np
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

from simbench.sweep.parquet import encode


def _columns(n: int, rng: np.random.Generator, width: int) -> dict:
    floats = rng.normal(size=n) * 10.0 ** rng.integers(-300, 300, size=n)
    special = np.array([np.nan, np.inf, -np.inf, -0.0, 5e-324, np.finfo(float).max])
    floats[: min(n, special.size)] = special[: min(n, special.size)]
    cols = {"sample": np.arange(n, dtype=np.int64) - 3,
            "big": np.array([np.iinfo(np.int64).min, np.iinfo(np.int64).max, 0] * n, dtype=np.int64)[:n],
            "x": floats, "flag": rng.random(n) < 0.4,
            "text": [("é✓" * (i % 3)) + f"r{i}" + ("" if i % 5 else "") for i in range(n)]}
    for k in range(width):  # many columns: list headers beyond 15 elements
        cols[f"q(joint {k})"] = rng.random(n)
    return cols


@pytest.mark.parametrize("n", [0, 1, 7, 8, 9, 1000, 4099])
def test_pyarrow_reads_every_value_bit_for_bit(tmp_path, n):
    rng = np.random.default_rng(n)
    cols = _columns(n, rng, width=40)
    path = tmp_path / "f.parquet"
    path.write_bytes(encode(cols, {"simbench.sweep": "{}"}))
    f = pq.ParquetFile(path, page_checksum_verification=True)
    table = f.read()
    assert table.num_rows == n and table.column_names == list(cols)
    assert f.metadata.metadata == {b"simbench.sweep": b"{}"}
    compared = 0
    for name, values in cols.items():
        got = table[name]
        if isinstance(values, list):
            assert got.type == pa.string() and got.to_pylist() == values
        elif values.dtype == bool:
            assert got.type == pa.bool_() and got.to_pylist() == values.tolist()
        else:
            assert got.type == (pa.float64() if values.dtype.kind == "f" else pa.int64())
            arr = got.to_numpy()
            assert arr.view(np.int64).tolist() == values.view(np.int64).tolist()  # bits, NaN and -0.0 included
        assert not table.schema.field(name).nullable  # REQUIRED columns
        compared += n
    assert compared == n * len(cols)


def test_a_flipped_bit_fails_pyarrows_page_crc(tmp_path):
    data = bytearray(encode({"x": np.arange(1000, dtype=float)}))
    data[200] ^= 0x01  # inside the values of the only page
    path = tmp_path / "bad.parquet"
    path.write_bytes(bytes(data))
    with pytest.raises(OSError, match="CRC"):
        pq.ParquetFile(path, page_checksum_verification=True).read()


def test_same_arrays_give_the_same_bytes_and_pyarrow_reads_a_folder_as_one_table(tmp_path):
    rng = np.random.default_rng(0)
    a = {"sample": np.arange(10), "x": rng.random(10)}
    assert encode(a) == encode({k: v.copy() for k, v in a.items()})
    (tmp_path / "chunk-0.parquet").write_bytes(encode(a))
    (tmp_path / "chunk-1.parquet").write_bytes(encode({"sample": np.arange(10, 15), "x": rng.random(5)}))
    (tmp_path / "_manifest.json").write_text("{}")  # ignored by pyarrow.dataset (leading underscore)
    assert ds.dataset(tmp_path).to_table().num_rows == 15


def test_columns_of_different_lengths_are_refused():
    with pytest.raises(ValueError, match="has 3 rows"):
        encode({"a": np.arange(4), "b": np.arange(3)})
