"""Writing images without optional dependencies (PNG via zlib)."""
from __future__ import annotations

import os
import struct
import zlib

import numpy as np


def write_png(path: str | os.PathLike, image: np.ndarray) -> None:
    """Write an (H, W, 3) or (H, W, 4) uint8 array as a PNG file (its folder made if missing)."""
    img = np.ascontiguousarray(image, dtype=np.uint8)
    if img.ndim != 3 or img.shape[2] not in (3, 4):
        raise ValueError(f"image has shape {img.shape}; expected (H, W, 3) or (H, W, 4)")
    h, w, c = img.shape
    raw = b"".join(b"\x00" + img[row].tobytes() for row in range(h))

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))

    header = struct.pack(">IIBBBBB", w, h, 8, 6 if c == 4 else 2, 0, 0, 0)
    from .outputs import parent_made

    with open(parent_made(path), "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 6))
                + chunk(b"IEND", b""))
