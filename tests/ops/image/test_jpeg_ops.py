"""DecodeAndCropJpeg, adjust_jpeg_quality and random_jpeg_quality (Pillow codec)."""

import numpy as np
import pytest
from op_helpers import graph, run  # noqa: F401 - autouse fixture

import tensorflux as tf

pytest.importorskip("PIL")

COVERED_OPS = {"DecodeAndCropJpeg"}


def _image():
    rows, cols = np.mgrid[0:32, 0:48]
    return np.stack([rows * 7, cols * 5, (rows + cols) * 3], axis=-1).astype(np.uint8)


def test_decode_and_crop_is_decode_then_slice():
    encoded = tf.image.encode_jpeg(_image(), quality=90)
    crop = tf.image.decode_and_crop_jpeg(encoded, [4, 8, 10, 20], channels=3)
    assert crop.get_shape().as_list() == [10, 20, 3]
    got, full = run([crop, tf.image.decode_jpeg(encoded, channels=3)])
    np.testing.assert_array_equal(got, full[4:14, 8:28])
    gray = run(tf.image.decode_and_crop_jpeg(encoded, [0, 0, 32, 48], channels=1))
    assert gray.shape == (32, 48, 1)


@pytest.mark.parametrize("window", [[30, 0, 5, 5], [0, 40, 4, 9], [-1, 0, 2, 2], [0, 0, 0, 3]])
def test_crop_window_must_fit(window):
    encoded = tf.image.encode_jpeg(_image())
    with pytest.raises(tf.errors.InvalidArgumentError, match="crop window"):
        run(tf.image.decode_and_crop_jpeg(encoded, window))


def test_decode_and_crop_rejects_non_jpeg():
    png = tf.image.encode_png(_image())
    with pytest.raises(tf.errors.InvalidArgumentError):
        run(tf.image.decode_and_crop_jpeg(png, [0, 0, 2, 2]))


def test_adjust_jpeg_quality_round_trips_in_the_input_dtype():
    image = _image()
    floats = image.astype(np.float32) / 255
    high = tf.image.adjust_jpeg_quality(floats, 95)
    low = tf.image.adjust_jpeg_quality(floats, 5)
    manual = tf.image.decode_jpeg(tf.image.encode_jpeg(image, quality=95))
    h, lo, m = run([high, low, manual])
    assert high.dtype == tf.float32 and h.shape == image.shape
    np.testing.assert_allclose(h, m.astype(np.float32) / 255, atol=1e-6)
    # Lower quality loses more.
    assert np.abs(lo - floats).mean() > np.abs(h - floats).mean()


def test_random_jpeg_quality_is_seeded_and_checks_its_range():
    image = _image()
    a = run(tf.image.random_jpeg_quality(image, 20, 80, seed=7))
    b = run(tf.image.random_jpeg_quality(image, 20, 80, seed=7))
    np.testing.assert_array_equal(a, b)
    quality = np.random.RandomState(7).randint(20, 80)
    np.testing.assert_array_equal(a, run(tf.image.adjust_jpeg_quality(image, quality)))
    with pytest.raises(ValueError):
        tf.image.random_jpeg_quality(image, 50, 50)
    with pytest.raises(ValueError):
        tf.image.random_jpeg_quality(image, -1, 50)
