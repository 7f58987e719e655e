"""A small PNG encoder (8-bit gray, gray+alpha, RGB, RGBA) for image summaries and encode_png.

Rows are written with filter type 0 and compressed with zlib; chunk CRCs are zlib's CRC-32.
"""

from __future__ import annotations

import struct
import zlib

import numpy as np

_COLOR_TYPES = {1: 0, 2: 4, 3: 2, 4: 6}
_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _chunk(kind: bytes, data: bytes) -> bytes:
    crc = zlib.crc32(kind + data) & 0xFFFFFFFF
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)


def encode(image: np.ndarray, compression: int = 6) -> bytes:
    """Encodes a [height, width, channels] uint8 or uint16 array as PNG bytes."""
    array = np.asarray(image)
    if array.ndim == 2:
        array = array[:, :, None]
    if array.ndim != 3 or array.shape[2] not in _COLOR_TYPES:
        raise ValueError(f"PNG images need shape [height, width, 1-4 channels], got "
                         f"{array.shape}")
    if array.dtype == np.uint8:
        depth = 8
        raw = array
    elif array.dtype == np.uint16:
        depth = 16
        raw = array.astype(">u2")
    else:
        raise ValueError(f"PNG images must be uint8 or uint16, got {array.dtype}")
    height, width, channels = array.shape
    rows = raw.reshape(height, width * channels).view(np.uint8).reshape(height, -1)
    body = np.concatenate([np.zeros((height, 1), np.uint8), rows], axis=1).tobytes()
    level = compression if compression >= 0 else 6
    header = struct.pack(">IIBBBBB", width, height, depth, _COLOR_TYPES[channels], 0, 0, 0)
    return (_SIGNATURE + _chunk(b"IHDR", header) + _chunk(b"IDAT", zlib.compress(body, level))
            + _chunk(b"IEND", b""))
