"""The PNG codec: every filter type, bit depth, color type and Adam7 interlacing decoded from
files written here by a reference encoder, channel/depth conversions as TensorFlow (libpng)
does them, and malformed data."""

import io
import struct
import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tensorflux.lib.formats import png

RNG = np.random.RandomState(3)
COLOR_TYPES = {1: 0, 2: 4, 3: 2, 4: 6}


# -- a plain reference encoder (byte loops; tiny images only) ---------------------------------

def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def filter_row(kind, row, above, bpp):
    out = bytearray(len(row))
    for i, value in enumerate(row):
        left = row[i - bpp] if i >= bpp else 0
        up = above[i]
        corner = above[i - bpp] if i >= bpp else 0
        predicted = [0, left, up, (left + up) // 2, paeth(left, up, corner)][kind]
        out[i] = (value - predicted) % 256
    return bytes([kind]) + bytes(out)


def pack_rows(samples, depth):
    """[rows, values] ints -> scanline bytes at `depth` bits per value."""
    if depth == 16:
        return [row.astype(">u2").tobytes() for row in samples]
    if depth == 8:
        return [row.astype(np.uint8).tobytes() for row in samples]
    rows = []
    for row in samples:
        bits = np.unpackbits(row.astype(np.uint8)[:, None], axis=1)[:, 8 - depth:]
        rows.append(np.packbits(bits.reshape(-1)).tobytes())
    return rows


def chunk(kind, data):
    return (struct.pack(">I", len(data)) + kind + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))


def encode(samples, depth, color_type, kinds=None, interlace=False, palette=None, trns=None):
    """A PNG of [h, w, c] integer `samples` with row filters `kinds` (cycled)."""
    height, width, channels = samples.shape
    bpp = max(1, channels * depth // 8)
    kinds = kinds or [0]
    passes = png._ADAM7 if interlace else ((0, 0, 1, 1),)
    body = b""
    n = 0
    for r0, c0, rs, cs in passes:
        sub = samples[r0::rs, c0::cs]
        if sub.size == 0:
            continue
        rows = pack_rows(sub.reshape(sub.shape[0], -1), depth)
        above = bytes(len(rows[0]))
        for row in rows:
            body += filter_row(kinds[n % len(kinds)], row, above, bpp)
            above = row
            n += 1
    header = struct.pack(">IIBBBBB", width, height, depth, color_type, 0, 0, int(interlace))
    data = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
    if palette is not None:
        data += chunk(b"PLTE", palette.astype(np.uint8).tobytes())
    if trns is not None:
        data += chunk(b"tRNS", trns)
    # Split the stream over two IDAT chunks, as encoders may.
    stream = zlib.compress(body)
    half = len(stream) // 2
    return data + chunk(b"IDAT", stream[:half]) + chunk(b"IDAT", stream[half:]) + chunk(
        b"IEND", b"")


# -- decoding ---------------------------------------------------------------------------------

@pytest.mark.parametrize("kinds", [[0], [1], [2], [3], [4], [0, 1, 2, 3, 4], [4, 3, 1]])
@pytest.mark.parametrize("channels,depth", [(1, 8), (2, 8), (3, 8), (4, 8), (3, 16), (2, 16)])
@pytest.mark.parametrize("interlace", [False, True])
def test_filters_depths_and_interlacing(kinds, channels, depth, interlace):
    samples = RNG.randint(0, 1 << depth, (9, 11, channels))
    data = encode(samples, depth, COLOR_TYPES[channels], kinds, interlace)
    out = png.decode(data, dtype=np.uint16 if depth == 16 else np.uint8)
    assert out.shape == (9, 11, channels)
    assert out.dtype == (np.uint16 if depth == 16 else np.uint8)
    np.testing.assert_array_equal(out, samples)


@pytest.mark.parametrize("depth", [1, 2, 4])
@pytest.mark.parametrize("interlace", [False, True])
def test_sub_byte_gray_scales_to_8_bits(depth, interlace):
    samples = RNG.randint(0, 1 << depth, (5, 13, 1))
    out = png.decode(encode(samples, depth, 0, [0, 1, 2, 3, 4], interlace))
    np.testing.assert_array_equal(out, samples * (255 // ((1 << depth) - 1)))


@pytest.mark.parametrize("depth", [1, 2, 4, 8])
def test_palettes_and_transparency(depth):
    colors = 1 << depth
    palette = RNG.randint(0, 256, (colors, 3))
    index = RNG.randint(0, colors, (6, 7, 1))
    data = encode(index, depth, 3, [4, 1], palette=palette)
    np.testing.assert_array_equal(png.decode(data), palette[index[..., 0]])
    alpha = RNG.randint(0, 256, max(1, colors - 1))  # shorter tRNS: the rest are opaque
    with_alpha = png.decode(encode(index, depth, 3, [2], palette=palette,
                                   trns=alpha.astype(np.uint8).tobytes()))
    table = np.concatenate([alpha, [255] * (colors - alpha.size)])
    assert with_alpha.shape == (6, 7, 4)
    np.testing.assert_array_equal(with_alpha[..., 3], table[index[..., 0]])


def test_channel_conversions_follow_tensorflow():
    # RGB -> gray with libpng's fixed-point weights, truncated (values recorded from TF).
    rgb = np.random.RandomState(0).randint(0, 256, (3, 4, 3)).astype(np.uint8)
    data = png.encode(rgb)
    np.testing.assert_array_equal(png.decode(data, 1)[..., 0],
                                  [[92, 125, 119, 103], [69, 132, 156, 82], [92, 60, 102, 227]])
    rgba = png.decode(data, 4)
    np.testing.assert_array_equal(rgba[..., :3], rgb)
    np.testing.assert_array_equal(rgba[..., 3], 255)
    gray = RNG.randint(0, 256, (3, 4, 1)).astype(np.uint8)
    np.testing.assert_array_equal(png.decode(png.encode(gray), 3), np.repeat(gray, 3, 2))
    ga = RNG.randint(0, 256, (3, 4, 2)).astype(np.uint8)
    four = png.decode(png.encode(ga), 4)
    np.testing.assert_array_equal(four, np.concatenate([np.repeat(ga[..., :1], 3, 2),
                                                        ga[..., 1:]], 2))
    np.testing.assert_array_equal(png.decode(png.encode(ga), 1), ga[..., :1])


def test_depth_conversions_follow_tensorflow():
    wide = RNG.randint(0, 65536, (4, 5, 3)).astype(np.uint16)
    data = png.encode(wide)
    np.testing.assert_array_equal(png.decode(data), wide >> 8)  # libpng strips the low byte
    channels = wide.astype(np.int64)
    mixed = (9797 * channels[..., 0] + 19234 * channels[..., 1] + 3737 * channels[..., 2]
             + 16384) >> 15  # 16-bit gray rounds
    np.testing.assert_array_equal(png.decode(data, 1, np.uint16)[..., 0], mixed)
    np.testing.assert_array_equal(png.decode(data, 1)[..., 0], mixed >> 8)
    narrow = RNG.randint(0, 256, (2, 3, 1)).astype(np.uint8)
    np.testing.assert_array_equal(png.decode(png.encode(narrow), dtype=np.uint16),
                                  narrow.astype(np.uint16) * 257)


def test_single_color_transparency_and_sub_byte_alpha():
    gray = RNG.randint(0, 256, (3, 4, 1))
    key = int(gray[0, 0, 0])
    data = encode(gray, 8, 0, trns=struct.pack(">H", key))
    assert png.decode(data).shape == (3, 4, 1)  # tRNS alone adds no channel (as TF)
    np.testing.assert_array_equal(png.decode(data, 4)[..., 3], np.where(gray[..., 0] == key,
                                                                        0, 255))
    rgb = RNG.randint(0, 256, (3, 4, 3))
    data = encode(rgb, 8, 2, trns=struct.pack(">HHH", *rgb[1, 2]))
    alpha = png.decode(data, 4)[..., 3]
    assert alpha[1, 2] == 0 and alpha.sum() == 255 * 11
    # NOTE: libpng adds the opaque alpha before expanding 1/2/4-bit samples, so TF returns
    # (2**depth - 1) there; kept for identical results.
    bits = RNG.randint(0, 2, (2, 9, 1))
    np.testing.assert_array_equal(png.decode(encode(bits, 1, 0), 4)[..., 3], 1)


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 20), st.integers(1, 20), st.sampled_from([1, 2, 3, 4]),
       st.sampled_from([np.uint8, np.uint16]), st.integers(-1, 9))
def test_encode_decode_round_trip(height, width, channels, dtype, level):
    image = np.random.RandomState(height * width).randint(
        0, np.iinfo(dtype).max + 1, (height, width, channels)).astype(dtype)
    data = png.encode(image, level)
    header = png.read_header(data)
    assert (header.width, header.height, header.samples) == (width, height, channels)
    np.testing.assert_array_equal(png.decode(data, dtype=dtype), image)


def test_encoder_filters_rows_so_smooth_images_compress():
    yy, xx = np.mgrid[0:120, 0:160]
    ramp = np.stack([yy, xx, (yy + xx) >> 1], -1).astype(np.uint8)
    for image in (ramp, ramp.astype(np.uint16) * 257, ramp[..., :2]):
        data = png.encode(image, 7)
        # Unfiltered, these rows barely compress; filtered (Sub/Up/Paeth) they are near-free.
        unfiltered = zlib.compress(np.concatenate(
            [np.zeros((120, 1), np.uint8), image.astype(f">u{image.itemsize}").view(
                np.uint8).reshape(120, -1)], 1).tobytes(), 7)
        assert len(data) < len(unfiltered) / 10
        np.testing.assert_array_equal(png.decode(data, dtype=image.dtype), image)
    image_module = pytest.importorskip("PIL.Image")
    decoded = np.asarray(image_module.open(io.BytesIO(png.encode(ramp, 9))))
    np.testing.assert_array_equal(decoded, ramp)


def test_decodes_files_written_by_pillow():
    image_module = pytest.importorskip("PIL.Image")
    yy, xx = np.mgrid[0:40, 0:50]
    smooth = np.stack([(xx * 5) % 256, (yy * 6) % 256, (xx + yy) % 256], -1).astype(np.uint8)
    for mode, array in [("RGB", smooth), ("L", smooth[..., 0]), ("RGBA", np.dstack(
            [smooth, smooth[..., :1]]))]:
        buffer = io.BytesIO()
        image_module.fromarray(array, mode).save(buffer, format="PNG")
        decoded = png.decode(buffer.getvalue())
        np.testing.assert_array_equal(decoded, array.reshape(decoded.shape))


def test_malformed_data():
    good = png.encode(np.zeros((2, 2, 1), np.uint8))
    with pytest.raises(png.PngError, match="PNG signature"):
        png.decode(b"GIF89a" + good[6:])
    with pytest.raises(png.PngError, match="bad CRC"):
        png.decode(good[:-5] + bytes([good[-5] ^ 1]) + good[-4:])
    with pytest.raises(png.PngError, match="truncated|ends before"):
        png.decode(good[:40])
    with pytest.raises(png.PngError, match="unknown row filter type 7"):
        png.decode(_with_filter_byte(7))
    with pytest.raises(png.PngError, match="bit depth 3"):
        png.read_header(good[:24] + b"\x03" + good[25:])


def _with_filter_byte(kind):
    header = struct.pack(">IIBBBBB", 2, 1, 8, 0, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(bytes([kind, 1, 2]))) + chunk(b"IEND", b""))
