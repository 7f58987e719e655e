"""Image codec ops: PNG encode/decode (built in), JPEG, GIF and BMP (through Pillow), format
sniffing in DecodeImage, dtype scaling, static shapes and errors."""

import io
import sys

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.lib.formats import png

COVERED_OPS = {"DecodePng", "EncodePng", "DecodeJpeg", "EncodeJpeg", "DecodeGif", "DecodeBmp",
               "DecodeImage", "ExtractJpegShape"}
GRADIENT_CASES = []

Image = pytest.importorskip("PIL.Image")
RNG = np.random.RandomState(9)
YY, XX = np.mgrid[0:24, 0:40]
SMOOTH = np.stack([(XX * 6) % 256, (YY * 10) % 256, ((XX + YY) * 4) % 256],
                  -1).astype(np.uint8)


@pytest.fixture(autouse=True)
def fresh_graph():
    with tf.Graph().as_default():
        yield


def run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


def pillow_bytes(array, fmt, **options):
    buffer = io.BytesIO()
    if isinstance(array, list):
        array[0].save(buffer, format=fmt, save_all=True, append_images=array[1:], **options)
    else:
        Image.fromarray(array).save(buffer, format=fmt, **options)
    return buffer.getvalue()


def gif_frames(n=3):
    frames = [Image.fromarray(RNG.randint(0, 256, (10, 12, 3)).astype(np.uint8)).convert(
        "P", palette=Image.ADAPTIVE, colors=16) for _ in range(n)]
    data = pillow_bytes(frames, "GIF", duration=40)
    expected = []
    with Image.open(io.BytesIO(data)) as image:
        for i in range(n):
            image.seek(i)
            expected.append(np.asarray(image.convert("RGB")))
    return data, np.stack(expected)


# -- the op table ---------------------------------------------------------------------------

def test_png_round_trip_shapes_and_dtypes():
    for dtype, channels in [(np.uint8, 1), (np.uint8, 2), (np.uint8, 3), (np.uint16, 4)]:
        image = RNG.randint(0, np.iinfo(dtype).max + 1, (5, 7, channels)).astype(dtype)
        encoded = tf.image.encode_png(image)
        assert encoded.op.type == "EncodePng" and encoded.shape.as_list() == []
        decoded = tf.image.decode_png(encoded, dtype=tf.as_dtype(dtype))
        assert decoded.op.type == "DecodePng" and decoded.shape.as_list() == [None, None, None]
        data, value = run([encoded, decoded])
        assert isinstance(data, bytes) and data.startswith(b"\x89PNG")
        assert value.dtype == dtype
        np.testing.assert_array_equal(value, image)
        np.testing.assert_array_equal(png.decode(data, dtype=dtype), image)


def test_decode_png_channels_and_compression():
    contents = tf.placeholder(tf.string, [])
    gray = tf.image.decode_png(contents, channels=1)
    rgba = tf.image.decode_png(contents, channels=4)
    assert gray.shape.as_list() == [None, None, 1] and rgba.shape.as_list() == [None, None, 4]
    data = png.encode(SMOOTH)
    g, a = run([gray, rgba], {contents: data})
    np.testing.assert_array_equal(g, png.decode(data, 1))
    np.testing.assert_array_equal(a[..., :3], SMOOTH)
    small, big = run([tf.image.encode_png(SMOOTH, compression=9),
                      tf.image.encode_png(SMOOTH, compression=0)])
    assert len(small) < len(big)
    with pytest.raises(tf.errors.InvalidArgumentError, match="must be 0, 1, 3 or 4"):
        run(tf.image.decode_png(data, channels=2))
    with pytest.raises(tf.errors.InvalidArgumentError, match="3-dimensional"):
        run(tf.image.encode_png(tf.placeholder_with_default(np.zeros((2, 2), np.uint8), None)))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Unknown image file format"):
        run(tf.image.decode_png(b"not an image"))
    with pytest.raises(tf.errors.InvalidArgumentError, match="bad CRC"):
        run(tf.image.decode_png(data[:-5] + b"\x00" + data[-4:]))


def test_jpeg_round_trip_is_close():
    encoded = tf.image.encode_jpeg(SMOOTH, quality=95)
    assert encoded.op.type == "EncodeJpeg" and encoded.shape.as_list() == []
    decoded = tf.image.decode_jpeg(encoded)
    assert decoded.op.type == "DecodeJpeg" and decoded.dtype == tf.uint8
    data, value = run([encoded, decoded])
    assert data[:3] == b"\xff\xd8\xff" and value.shape == (24, 40, 3)
    assert np.abs(value.astype(int) - SMOOTH).mean() < 3
    low = run(tf.image.encode_jpeg(SMOOTH, quality=10))
    assert len(low) < len(data)
    with Image.open(io.BytesIO(data)) as image:
        assert image.info["dpi"] == (300, 300) and image.mode == "RGB"
    gray = run(tf.image.decode_jpeg(run(tf.image.encode_jpeg(SMOOTH[..., :1]))))
    assert gray.shape == (24, 40, 1)
    assert np.abs(gray.astype(int) - SMOOTH[..., :1]).mean() < 3


def test_decode_jpeg_channels_and_ratio():
    data = pillow_bytes(SMOOTH, "JPEG", quality=92)
    contents = tf.placeholder(tf.string, [])
    luma = tf.image.decode_jpeg(contents, channels=1)
    half = tf.image.decode_jpeg(contents, ratio=2)
    assert luma.shape.as_list() == [None, None, 1]
    y, h = run([luma, half], {contents: data})
    assert y.shape == (24, 40, 1) and h.shape == (12, 20, 3)
    expected_y = SMOOTH.astype(float) @ [0.299, 0.587, 0.114]
    assert np.abs(y[..., 0] - expected_y).mean() < 3
    assert np.abs(h.astype(float) - SMOOTH[::2, ::2]).mean() < 12
    with pytest.raises(tf.errors.InvalidArgumentError, match="ratio must be 1, 2, 4, or 8"):
        run(tf.image.decode_jpeg(data, ratio=3))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Invalid JPEG"):
        run(tf.image.decode_jpeg(b"\xff\xd8\xff" + b"junk" * 10))
    with pytest.raises(tf.errors.InvalidArgumentError, match="1 or 3 channels"):
        run(tf.image.encode_jpeg(np.zeros((2, 2, 4), np.uint8)))


def test_decode_png_and_jpeg_accept_each_other():
    jpeg = pillow_bytes(SMOOTH, "JPEG")
    as_png = run(tf.image.decode_png(jpeg))
    np.testing.assert_array_equal(as_png, run(tf.image.decode_jpeg(jpeg)))
    np.testing.assert_array_equal(run(tf.image.decode_jpeg(png.encode(SMOOTH))), SMOOTH)
    with pytest.raises(tf.errors.InvalidArgumentError, match="decode_bmp"):
        run(tf.image.decode_png(pillow_bytes(SMOOTH, "BMP")))


def test_gif_frames():
    data, expected = gif_frames()
    frames = tf.image.decode_gif(data)
    assert frames.op.type == "DecodeGif" and frames.shape.as_list() == [None, None, None, 3]
    np.testing.assert_array_equal(run(frames), expected)
    with pytest.raises(tf.errors.InvalidArgumentError, match="animated GIF"):
        run(tf.image.decode_png(data))
    single, one = gif_frames(1)
    np.testing.assert_array_equal(run(tf.image.decode_png(single)), one[0])


def test_bmp():
    for array in (SMOOTH, SMOOTH[..., 0]):
        out = tf.image.decode_bmp(pillow_bytes(array, "BMP"))
        assert out.op.type == "DecodeBmp"
        np.testing.assert_array_equal(run(out), array.reshape(24, 40, -1))
    rgba = run(tf.image.decode_bmp(pillow_bytes(SMOOTH, "BMP"), channels=4))
    np.testing.assert_array_equal(rgba[..., 3], 255)


def test_decode_image_sniffs_every_format():
    gif, frames = gif_frames()
    contents = tf.placeholder(tf.string, [])
    image = tf.image.decode_image(contents)
    assert image.op.type == "DecodeImage" and image.shape.ndims is None
    png_data = png.encode(SMOOTH)
    np.testing.assert_array_equal(run(image, {contents: png_data}), SMOOTH)
    np.testing.assert_array_equal(run(image, {contents: gif}), frames)
    np.testing.assert_array_equal(run(image, {contents: pillow_bytes(SMOOTH, "BMP")}), SMOOTH)
    jpeg = pillow_bytes(SMOOTH, "JPEG")
    np.testing.assert_array_equal(run(image, {contents: jpeg}), run(tf.image.decode_jpeg(jpeg)))
    still = tf.image.decode_image(contents, channels=3, expand_animations=False)
    assert still.shape.as_list() == [None, None, 3]
    np.testing.assert_array_equal(run(still, {contents: gif}), frames[0])
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Unknown image file format. One of JPEG, PNG, GIF, BMP"):
        run(image, {contents: b"plain text"})
    with pytest.raises(tf.errors.InvalidArgumentError, match="0 or 3 for GIF, got 1"):
        run(tf.image.decode_image(gif, channels=1))


def test_decode_image_dtypes():
    wide = RNG.randint(0, 65536, (3, 4, 1)).astype(np.uint16)
    floats = run(tf.image.decode_image(png.encode(wide), dtype=tf.float32))
    assert floats.dtype == np.float32
    np.testing.assert_allclose(floats, wide / 65535.0, rtol=1e-6)
    narrow = run(tf.image.decode_image(png.encode(SMOOTH), dtype=tf.float32))
    np.testing.assert_allclose(narrow, SMOOTH / 255.0, rtol=1e-6)
    jpeg = pillow_bytes(SMOOTH, "JPEG")
    as16 = run(tf.image.decode_image(jpeg, dtype=tf.uint16))
    np.testing.assert_array_equal(as16, run(tf.image.decode_jpeg(jpeg)).astype(np.uint16) * 256)
    as64 = run(tf.image.decode_image(png.encode(SMOOTH), dtype=tf.float64))
    assert as64.dtype == np.float64
    np.testing.assert_allclose(as64, SMOOTH / 255.0, rtol=1e-6)


def test_is_jpeg_and_read_file_pipeline(tmp_path):
    path = tmp_path / "image.png"
    path.write_bytes(png.encode(SMOOTH))
    contents = tf.read_file(str(path))
    image = tf.image.decode_png(contents, channels=3)
    flags = [tf.image.is_jpeg(contents), tf.image.is_jpeg(pillow_bytes(SMOOTH, "JPEG"))]
    value, is_jpeg = run([image, flags])
    np.testing.assert_array_equal(value, SMOOTH)
    assert list(is_jpeg) == [False, True]


def test_extract_jpeg_shape_reads_the_frame_header():
    gray = SMOOTH[:17, :, 0]
    contents = tf.placeholder(tf.string, [])
    shape = tf.image.extract_jpeg_shape(contents)
    shape64 = tf.image.extract_jpeg_shape(contents, output_type=tf.int64)
    assert shape.shape.as_list() == [3] and shape.dtype == tf.int32
    assert shape.op.type == "ExtractJpegShape" and shape64.dtype == tf.int64
    with tf.Session() as sess:
        for data, expect in [(pillow_bytes(SMOOTH, "JPEG"), [24, 40, 3]),
                             (pillow_bytes(gray, "JPEG", progressive=True), [17, 40, 1]),
                             (pillow_bytes(SMOOTH, "JPEG", dpi=(90, 90)), [24, 40, 3])]:
            got, got64 = sess.run([shape, shape64], {contents: data})
            assert got.tolist() == expect and got.dtype == np.int32
            assert got64.tolist() == expect and got64.dtype == np.int64
        with pytest.raises(tf.errors.InvalidArgumentError, match="ExtractJpegShape"):
            sess.run(shape, {contents: pillow_bytes(SMOOTH, "PNG")})
        with pytest.raises(tf.errors.InvalidArgumentError, match="ExtractJpegShape"):
            sess.run(shape, {contents: pillow_bytes(SMOOTH, "JPEG")[:12]})


def test_missing_pillow_is_unimplemented(monkeypatch):
    monkeypatch.setitem(sys.modules, "PIL", None)
    monkeypatch.setitem(sys.modules, "PIL.Image", None)
    jpeg = b"\xff\xd8\xff\xe0" + bytes(20)
    with pytest.raises(tf.errors.UnimplementedError, match="Pillow"):
        run(tf.image.decode_jpeg(jpeg))
    with pytest.raises(tf.errors.UnimplementedError, match="pip install"):
        run(tf.image.encode_jpeg(SMOOTH))
    np.testing.assert_array_equal(run(tf.image.decode_png(png.encode(SMOOTH))), SMOOTH)
