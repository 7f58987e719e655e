"""A small PNG codec for image summaries, encode_png and decode_png.

The encoder writes 8- or 16-bit gray, gray+alpha, RGB and RGBA rows, each with the row filter
of least absolute sum (libpng's heuristic, so smooth images compress well), compressed with
zlib; chunk CRCs are zlib's CRC-32. The decoder reads every standard PNG: bit depths 1-16,
all five color types (palettes with tRNS transparency), the five row filters and Adam7
interlacing, and converts to the channel count and sample depth asked for with libpng's
rules as TensorFlow configures them (see `decode`).
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

import numpy as np

_COLOR_TYPES = {1: 0, 2: 4, 3: 2, 4: 6}
_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _chunk(kind: bytes, data: bytes) -> bytes:
    crc = zlib.crc32(kind + data) & 0xFFFFFFFF
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)


def _filter_rows(rows: np.ndarray, bpp: int) -> np.ndarray:
    """Scanlines [rows, row_bytes] as [rows, 1 + row_bytes]: each row's filter type, then the
    row under that filter, choosing per row the filter whose bytes (read as signed) have the
    least absolute sum. Filters read the unfiltered bytes, so every row is done at once."""
    x = rows.astype(np.int16)
    left = np.zeros_like(x)
    left[:, bpp:] = x[:, :-bpp]
    up = np.zeros_like(x)
    up[1:] = x[:-1]
    corner = np.zeros_like(x)
    corner[1:, bpp:] = x[:-1, :-bpp]
    predictions = (0, left, up, (left + up) >> 1, _paeth(left, up, corner))
    candidates = np.stack([(x - p) & 0xFF for p in predictions]).astype(np.uint8)
    cost = np.abs(candidates.view(np.int8).astype(np.int32)).sum(axis=2)   # [5, rows]
    best = cost.argmin(axis=0)
    chosen = candidates[best, np.arange(rows.shape[0])]
    return np.concatenate([best[:, None].astype(np.uint8), chosen], axis=1)


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
    body = _filter_rows(rows, channels * depth // 8).tobytes()
    level = compression if compression >= 0 else 6
    header = struct.pack(">IIBBBBB", width, height, depth, _COLOR_TYPES[channels], 0, 0, 0)
    return (_SIGNATURE + _chunk(b"IHDR", header) + _chunk(b"IDAT", zlib.compress(body, level))
            + _chunk(b"IEND", b""))


# -- decoding ---------------------------------------------------------------------------------

_CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}  # color type -> samples per pixel
_ADAM7 = ((0, 0, 8, 8), (0, 4, 8, 8), (4, 0, 8, 4), (0, 2, 4, 4), (2, 0, 4, 2), (0, 1, 2, 2),
          (1, 0, 2, 1))  # (row start, column start, row step, column step) of each pass
# libpng's fixed-point rgb_to_gray coefficients for TensorFlow's (0.299, 0.587) weights.
_GRAY_RED, _GRAY_GREEN = 9797, 19234
_GRAY_BLUE = 32768 - _GRAY_RED - _GRAY_GREEN


class PngError(ValueError):
    """Malformed or unsupported PNG data."""


@dataclass(frozen=True)
class Header:
    """The IHDR fields that decoding needs."""

    width: int
    height: int
    depth: int
    color_type: int
    interlaced: bool

    @property
    def samples(self) -> int:
        return _CHANNELS[self.color_type]


def is_png(data: bytes) -> bool:
    return data[:8] == _SIGNATURE


def _chunks(data: bytes):
    """(kind, payload) of each chunk after the signature, CRCs checked."""
    pos = len(_SIGNATURE)
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        end = pos + 8 + length
        if end + 4 > len(data):
            raise PngError(f"PNG chunk {kind!r} is truncated")
        payload = data[pos + 8:end]
        (crc,) = struct.unpack(">I", data[end:end + 4])
        if zlib.crc32(kind + payload) & 0xFFFFFFFF != crc:
            raise PngError(f"PNG chunk {kind.decode('latin-1')} has a bad CRC")
        yield kind, payload
        if kind == b"IEND":
            return
        pos = end + 4
    raise PngError("PNG data ends before its IEND chunk")


def read_header(data: bytes) -> Header:
    """The image header; raises PngError for data that is not a valid PNG."""
    if not is_png(data):
        raise PngError("Invalid PNG header: the data does not start with the PNG signature")
    if len(data) < 33 or data[12:16] != b"IHDR":
        raise PngError("Invalid PNG: the first chunk is not IHDR")
    width, height, depth, color, compression, filtering, interlace = struct.unpack(
        ">IIBBBBB", data[16:29])
    allowed = {0: (1, 2, 4, 8, 16), 2: (8, 16), 3: (1, 2, 4, 8), 4: (8, 16), 6: (8, 16)}
    if color not in allowed or depth not in allowed[color]:
        raise PngError(f"Invalid PNG: bit depth {depth} with color type {color}")
    if compression or filtering or interlace > 1:
        raise PngError("Invalid PNG: unknown compression, filter or interlace method")
    if width == 0 or height == 0:
        raise PngError(f"Invalid PNG: image size {width}x{height}")
    return Header(width, height, depth, color, interlace == 1)


def _paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = np.abs(p - a), np.abs(p - b), np.abs(p - c)
    return np.where((pa <= pb) & (pa <= pc), a, np.where(pb <= pc, b, c))


def _unfilter(raw: np.ndarray, stride: int) -> np.ndarray:
    """Reconstructs filtered scanlines `raw` [rows, 1 + row_bytes] into [rows, row_bytes].

    Filters None/Sub/Up need only the row above, so those rows go one row at a time (Sub is a
    running sum per byte lane). Average and Paeth also read the reconstructed byte to the left;
    images that use them are reconstructed along anti-diagonals of pixels, every pixel of a
    diagonal at once (rows + columns steps instead of rows x columns).
    """
    kinds = raw[:, 0]
    if kinds.size and kinds.max() > 4:
        raise PngError(f"Invalid PNG: unknown row filter type {int(kinds.max())}")
    data = raw[:, 1:]
    rows, row_bytes = data.shape
    if not np.any(kinds >= 3):
        out = np.empty_like(data)
        above = np.zeros(row_bytes, np.uint8)
        for y in range(rows):
            line = data[y]
            if kinds[y] == 1:
                line = np.cumsum(line.reshape(-1, stride), axis=0, dtype=np.uint8).reshape(-1)
            elif kinds[y] == 2:
                line = line + above
            out[y] = line
            above = out[y]
        return out
    cols = row_bytes // stride
    pixels = data.reshape(rows, cols, stride).astype(np.int16)
    recon = np.zeros((rows + 1, cols + 1, stride), np.int16)  # a zero row above, column left
    for diagonal in range(rows + cols - 1):
        ys = np.arange(max(0, diagonal - cols + 1), min(rows, diagonal + 1))
        xs = diagonal - ys
        left, up, corner = recon[ys + 1, xs], recon[ys, xs + 1], recon[ys, xs]
        kind = kinds[ys][:, None]
        predicted = np.select([kind == 1, kind == 2, kind == 3, kind == 4],
                              [left, up, (left + up) >> 1, _paeth(left, up, corner)], 0)
        recon[ys + 1, xs + 1] = (pixels[ys, xs] + predicted) & 0xFF
    return recon[1:, 1:].astype(np.uint8).reshape(rows, row_bytes)


def _samples(rows: np.ndarray, header: Header, width: int) -> np.ndarray:
    """Unfiltered scanlines -> [rows, width, samples] uint8/uint16 sample values."""
    depth, samples = header.depth, header.samples
    if depth == 8:
        return rows.reshape(rows.shape[0], width, samples)
    if depth == 16:
        values = rows.reshape(rows.shape[0], -1).view(">u2").astype(np.uint16)
        return values.reshape(rows.shape[0], width, samples)
    bits = np.unpackbits(rows, axis=1)
    per_row = bits.shape[1] // depth
    weights = (1 << np.arange(depth - 1, -1, -1)).astype(np.uint8)
    values = (bits.reshape(rows.shape[0], per_row, depth) * weights).sum(axis=2, dtype=np.uint8)
    return values[:, :width * samples].reshape(rows.shape[0], width, samples)


def _pass_bytes(header: Header, width: int) -> int:
    return (width * header.samples * header.depth + 7) // 8


def _pixels(stream: bytes, header: Header) -> np.ndarray:
    """The decompressed IDAT stream -> [height, width, samples] samples, deinterlaced."""
    stride = max(1, header.samples * header.depth // 8)
    buffer = np.frombuffer(stream, np.uint8)
    passes = _ADAM7 if header.interlaced else ((0, 0, 1, 1),)
    image = None
    pos = 0
    for row0, col0, row_step, col_step in passes:
        height = (header.height - row0 + row_step - 1) // row_step
        width = (header.width - col0 + col_step - 1) // col_step
        if height <= 0 or width <= 0:
            continue
        size = height * (1 + _pass_bytes(header, width))
        if pos + size > buffer.size:
            raise PngError("Invalid PNG: the image data is shorter than the image")
        raw = buffer[pos:pos + size].reshape(height, -1)
        pos += size
        values = _samples(_unfilter(raw, stride), header, width)
        if not header.interlaced:
            return values
        if image is None:
            image = np.zeros((header.height, header.width, header.samples), values.dtype)
        image[row0::row_step, col0::col_step] = values
    return image


def _to_gray(rgb: np.ndarray, depth: int) -> np.ndarray:
    wide = rgb.astype(np.int64)
    mixed = _GRAY_RED * wide[..., 0] + _GRAY_GREEN * wide[..., 1] + _GRAY_BLUE * wide[..., 2]
    if depth == 16:
        mixed += 1 << 14  # libpng rounds 16-bit samples and truncates 8-bit ones
    return (mixed >> 15)[..., None].astype(rgb.dtype)


def _convert_channels(image: np.ndarray, channels: int, depth: int, alpha=None) -> np.ndarray:
    """Converts [h, w, have] samples to `channels`; `alpha` is the alpha to add, if any."""
    have = image.shape[-1]
    if channels == have:
        return image
    color = image[..., :3] if have >= 3 else np.repeat(image[..., :1], 3, axis=-1)
    if channels == 1:
        return image[..., :1] if have <= 2 else _to_gray(color, depth)
    if channels == 3:
        return color
    if have in (2, 4):
        alpha = image[..., -1:]
    return np.concatenate([color, np.broadcast_to(alpha, image.shape[:-1] + (1,))], axis=-1)


def decode(data: bytes, channels: int = 0, dtype=np.uint8) -> np.ndarray:
    """Decodes PNG bytes into a [height, width, channels] uint8 or uint16 array.

    `channels` 0 keeps the image's own channels (palettes give RGB, or RGBA with a tRNS chunk);
    1 converts color to gray with libpng's fixed-point (0.299, 0.587, 0.114) weights; 3 drops
    alpha or replicates gray; 4 adds an opaque alpha. 16-bit samples become 8-bit by dropping
    the low byte; 8-bit samples become 16-bit by multiplying by 257. Sub-byte gray is scaled
    to the full 8-bit range.

    Raises:
        PngError: the data is not a valid PNG.
    """
    if channels not in (0, 1, 2, 3, 4):
        raise ValueError(f"channels must be 0, 1, 2, 3 or 4, got {channels}")
    header = read_header(data)
    palette = transparency = None
    parts = []
    for kind, payload in _chunks(data):
        if kind == b"PLTE":
            palette = np.frombuffer(payload, np.uint8).reshape(-1, 3)
        elif kind == b"tRNS":
            transparency = np.frombuffer(payload, np.uint8)
        elif kind == b"IDAT":
            parts.append(payload)
    try:
        stream = zlib.decompress(b"".join(parts))
    except zlib.error as err:
        raise PngError(f"Invalid PNG: corrupt image data ({err})") from None
    image = _pixels(stream, header)
    depth = 16 if header.depth == 16 else 8
    # NOTE: libpng adds an alpha channel before expanding sub-byte samples, so TF's opaque alpha
    # for 1/2/4-bit images is (2**depth - 1), not 255.
    alpha = np.array([min((1 << header.depth) - 1, np.iinfo(image.dtype).max)], image.dtype)
    if header.color_type == 3:
        if palette is None:
            raise PngError("Invalid PNG: a palette image without a PLTE chunk")
        index = image[..., 0]
        if index.max(initial=0) >= len(palette):
            raise PngError("Invalid PNG: a palette index is out of range")
        image = palette[index]
        if transparency is not None:
            table = np.full(len(palette), 255, np.uint8)
            table[:min(len(transparency), len(palette))] = transparency[:len(palette)]
            image = np.concatenate([image, table[index][..., None]], axis=-1)
    else:
        if transparency is not None and header.color_type in (0, 2):
            key = np.frombuffer(transparency[:2 * header.samples].tobytes(), ">u2")
            clear = np.all(image == key.astype(image.dtype), axis=-1, keepdims=True)
            alpha = np.where(clear, 0, np.iinfo(image.dtype).max).astype(image.dtype)
        if header.depth < 8:
            image = image * np.uint8(255 // ((1 << header.depth) - 1))
    image = _convert_channels(image, channels or image.shape[-1], depth, alpha)
    want = np.dtype(dtype)
    if want == np.uint8 and depth == 16:
        return (image >> 8).astype(np.uint8)
    if want == np.uint16 and depth == 8:
        return image.astype(np.uint16) * np.uint16(257)
    return image
