"""tf.image color ops: AdjustContrastv2, AdjustHue, AdjustSaturation, RGBToHSV, HSVToRGB and the
dtype-converting Python functions, against NumPy/colorsys references and values recorded from
TensorFlow."""

import colorsys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tensorflux as tf
from tensorflux.ops.image import color as image_color_ops

COVERED_OPS = {"AdjustContrastv2", "AdjustHue", "AdjustSaturation", "RGBToHSV", "HSVToRGB"}
GRADIENT_CASES = []

RNG = np.random.RandomState(5)
# Ties, grays, primaries and black: the branches of the hue formulas.
EDGES = np.array([[0.5, 0.5, 0.5], [0.9, 0.9, 0.1], [0.1, 0.9, 0.9], [0.9, 0.1, 0.9],
                  [1.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.2, 0.6, 0.2], [0.3, 0.3, 0.8],
                  [0.7, 0.2, 0.2]], np.float32)
IMAGE = np.concatenate([EDGES, RNG.uniform(0, 1, (31, 3)).astype(np.float32)]).reshape(2, 4, 5, 3)


@pytest.fixture(autouse=True)
def fresh_graph():
    with tf.Graph().as_default():
        yield


def run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


def per_pixel(fn, image):
    flat = image.reshape(-1, 3).astype(np.float64)
    return np.array([fn(*p) for p in flat]).reshape(image.shape)


# -- the op table ---------------------------------------------------------------------------

def _np_contrast(x, factor):
    mean = x.mean(axis=(-3, -2), keepdims=True)
    return (x - mean) * factor + mean


def _np_hue(x, delta):
    def shift(r, g, b):
        h, s, v = colorsys.rgb_to_hsv(r, g, b)
        return colorsys.hsv_to_rgb((h + delta) % 1.0, s, v)

    return per_pixel(shift, x)


def _np_saturation(x, factor):
    def scale(r, g, b):
        h, s, v = colorsys.rgb_to_hsv(r, g, b)
        return colorsys.hsv_to_rgb(h, min(1.0, s * factor), v)

    return per_pixel(scale, x)


TABLE = [
    ("AdjustContrastv2", lambda x: image_color_ops.AdjustContrastv2(x, 1.7),
     lambda x: _np_contrast(x, 1.7)),
    ("AdjustHue", lambda x: image_color_ops.AdjustHue(x, 0.3), lambda x: _np_hue(x, 0.3)),
    ("AdjustHue", lambda x: image_color_ops.AdjustHue(x, -0.85), lambda x: _np_hue(x, -0.85)),
    ("AdjustSaturation", lambda x: image_color_ops.AdjustSaturation(x, 0.4),
     lambda x: _np_saturation(x, 0.4)),
    ("AdjustSaturation", lambda x: image_color_ops.AdjustSaturation(x, 3.0),
     lambda x: _np_saturation(x, 3.0)),
    ("RGBToHSV", tf.image.rgb_to_hsv, lambda x: per_pixel(colorsys.rgb_to_hsv, x)),
    ("HSVToRGB", tf.image.hsv_to_rgb, lambda x: per_pixel(colorsys.hsv_to_rgb, x)),
]


@pytest.mark.parametrize("op_type,build,reference", TABLE,
                         ids=[f"{row[0]}-{i}" for i, row in enumerate(TABLE)])
def test_table_value_shape_dtype(op_type, build, reference):
    out = build(IMAGE)
    assert out.op.type == op_type
    assert out.shape.as_list() == [2, 4, 5, 3]
    value = run(out)
    assert value.dtype == np.float32
    np.testing.assert_allclose(value, reference(IMAGE), atol=2e-6)


def test_hsv_ops_keep_float64_and_half():
    hsv = run(tf.image.rgb_to_hsv(IMAGE.astype(np.float64)))
    assert hsv.dtype == np.float64
    np.testing.assert_allclose(hsv, per_pixel(colorsys.rgb_to_hsv, IMAGE), atol=1e-7)
    back = run(tf.image.hsv_to_rgb(hsv))
    np.testing.assert_allclose(back, IMAGE, atol=1e-6)
    half = run(image_color_ops.AdjustHue(tf.constant(IMAGE.astype(np.float16)), 0.1))
    assert half.dtype == np.float16
    np.testing.assert_allclose(half, _np_hue(IMAGE, 0.1), atol=2e-3)


@settings(max_examples=30, deadline=None)
@given(hnp.arrays(np.uint8, (3, 4, 3)), st.floats(-1, 1), st.floats(0, 4))
def test_hue_and_saturation_random_images(pixels, delta, factor):
    image = pixels.astype(np.float32) / np.float32(255)
    with tf.Graph().as_default():
        hue, sat = run([image_color_ops.AdjustHue(image, delta),
                        image_color_ops.AdjustSaturation(image, factor)])
    np.testing.assert_allclose(hue, _np_hue(image, delta), atol=2e-5)
    np.testing.assert_allclose(sat, _np_saturation(image, factor), atol=2e-5)


# Values recorded from TensorFlow 2.21 for the first EDGES pixels.
TF_HUE_03 = [[0.5, 0.5, 0.5], [0.1, 0.9, 0.74], [0.74, 0.1, 0.9], [0.9, 0.74, 0.1],
             [0.2, 1.0, 0.0], [0.0, 0.0, 0.0], [0.2, 0.28, 0.6], [0.8, 0.3, 0.4],
             [0.3, 0.7, 0.2]]
TF_HSV = [[0.0, 0.0, 0.5], [0.166667, 0.888889, 0.9], [0.5, 0.888889, 0.9],
          [0.833333, 0.888889, 0.9], [0.0, 1.0, 1.0], [0.0, 0.0, 0.0], [0.333333, 0.666667, 0.6],
          [0.666667, 0.625, 0.8], [0.0, 0.714286, 0.7]]
TF_HSV_TO_RGB = [[0.25, 0.5, 0.5], [0.1, 0.01, 0.064], [0.9, 0.576, 0.09], [0.9, 0.81, 0.864],
                 [0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.176, 0.2, 0.08], [0.608, 0.8, 0.56],
                 [0.168, 0.16, 0.2]]


def test_recorded_tensorflow_color_values():
    edges = EDGES[None]
    hue, hsv, rgb, sat = run([tf.image.adjust_hue(edges, 0.3), tf.image.rgb_to_hsv(edges),
                              tf.image.hsv_to_rgb(edges), tf.image.adjust_saturation(edges, 2.5)])
    np.testing.assert_allclose(hue[0], TF_HUE_03, atol=1e-6)
    np.testing.assert_allclose(hsv[0], TF_HSV, atol=1e-6)
    np.testing.assert_allclose(rgb[0], TF_HSV_TO_RGB, atol=1e-6)
    np.testing.assert_allclose(sat[0, [1, 6]], [[0.9, 0.9, 0.0], [0.0, 0.6, 0.0]], atol=1e-6)


def test_tensorflow_quirks_are_kept():
    # Recorded from TensorFlow: a hue that rounds up to 1.0 falls off the saturation kernel's
    # sector table and comes out black; a denormal spread counts as gray.
    odd = np.array([[[1.0, 0.0, 1e-12], [0.0, 1e-45, 1e-45]]], np.float32)
    saturated = run(tf.image.adjust_saturation(odd, 1.0))
    np.testing.assert_array_equal(saturated[0, 0], [0, 0, 0])
    np.testing.assert_array_equal(run(tf.image.rgb_to_hsv(odd))[0, 1, 0], 0)
    np.testing.assert_allclose(run(tf.image.adjust_hue(odd, 0.0))[0, 0], [1, 0, 0], atol=1e-12)


def test_kernel_errors():
    images = tf.placeholder(tf.float32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="must have 3 channels"):
        run(image_color_ops.AdjustHue(images, 0.1), {images: np.zeros((2, 2, 4))})
    with pytest.raises(tf.errors.InvalidArgumentError, match="at least 3-D"):
        run(image_color_ops.AdjustContrastv2(images, 2.0), {images: np.zeros((2, 3))})
    with pytest.raises(ValueError, match="3 channels"):
        tf.image.rgb_to_hsv(np.zeros((2, 2, 2), np.float32))
    with pytest.raises(ValueError, match="contrast_factor must be scalar"):
        image_color_ops.AdjustContrastv2(IMAGE, [1.0, 2.0])
    with pytest.raises(TypeError, match="parameter 'images' has DataType float64"):
        image_color_ops.AdjustHue(tf.constant(IMAGE.astype(np.float64)), 0.1)


# -- convert_image_dtype --------------------------------------------------------------------

FLOATS = np.array([-0.5, 0.0, 0.2, 0.5, 0.999, 1.0, 1.5], np.float32)
CONVERSIONS = [  # (input, dtype, saturate, TensorFlow's output)
    (FLOATS, tf.uint8, False, [129, 0, 51, 127, 255, 255, 127]),
    (FLOATS, tf.uint8, True, [0, 0, 51, 127, 255, 255, 255]),
    (FLOATS, tf.int16, True, [-16383, 0, 6553, 16383, 32734, 32767, 32767]),
    (np.uint8([0, 1, 127, 128, 254, 255]), tf.float32, False,
     [0.0, 0.003921569, 0.49803925, 0.5019608, 0.9960785, 1.0]),
    (np.uint8([0, 1, 127, 128, 254, 255]), tf.uint16, False,
     [0, 256, 32512, 32768, 65024, 65280]),
    (np.uint8([0, 1, 127, 128, 254, 255]), tf.int32, False,
     [0, 8388608, 1065353216, 1073741824, 2130706432, 2139095040]),
    (np.int32([0, 1 << 20, 2**31 - 1]), tf.uint8, False, [0, 0, 255]),
    (np.uint16([0, 255, 256, 65535]), tf.uint8, False, [0, 0, 1, 255]),
    (np.int8([-128, -1, 0, 127]), tf.uint8, True, [0, 0, 0, 254]),
    (np.float32([0.25, 2.0]), tf.float64, False, [0.25, 2.0]),
]


@pytest.mark.parametrize("value,dtype,saturate,expected", CONVERSIONS,
                         ids=[f"{c[0].dtype}-{c[1].name}-{c[2]}" for c in CONVERSIONS])
def test_convert_image_dtype_matches_tensorflow(value, dtype, saturate, expected):
    out = tf.image.convert_image_dtype(value, dtype, saturate=saturate)
    assert out.dtype == dtype
    result = run(out)
    assert result.dtype == dtype.as_numpy_dtype
    np.testing.assert_allclose(result, expected, rtol=1e-6)


def test_convert_image_dtype_identity_and_errors():
    x = tf.constant(np.zeros(3, np.uint8))
    assert tf.image.convert_image_dtype(x, tf.uint8).op.type == "Identity"
    with pytest.raises(AttributeError, match="floating point or integer"):
        tf.image.convert_image_dtype(x, tf.string)


# -- brightness, contrast, gamma, hue, saturation on integer images ---------------------------

UINT_IMAGE = RNG.randint(0, 256, (4, 5, 3)).astype(np.uint8)


def _to_uint8(x):
    return np.clip(x * 255.5, 0, 255).astype(np.uint8)


def test_integer_adjustments_round_trip_through_float():
    flt = UINT_IMAGE / np.float32(255)
    bright, contrast, gamma = run([tf.image.adjust_brightness(UINT_IMAGE, 0.3),
                                   tf.image.adjust_contrast(UINT_IMAGE, 1.8),
                                   tf.image.adjust_gamma(UINT_IMAGE, 0.6, 1.3)])
    for value in (bright, contrast, gamma):
        assert value.dtype == np.uint8
    np.testing.assert_array_equal(bright, _to_uint8(flt + 0.3))
    np.testing.assert_array_equal(contrast, _to_uint8(_np_contrast(flt, 1.8)))
    np.testing.assert_array_equal(gamma, _to_uint8(1.3 * flt ** 0.6))
    # First two pixels as recorded from TensorFlow.
    np.testing.assert_array_equal(run(tf.image.adjust_brightness(
        np.uint8([[78, 108, 171], [76, 144, 113]])[None], 0.3))[0],
        [[154, 184, 247], [152, 220, 189]])


def test_float_adjustments():
    value = run(tf.image.adjust_brightness(IMAGE, -0.2))
    np.testing.assert_allclose(value, IMAGE - 0.2, atol=1e-7)
    hue = run(tf.image.adjust_hue(UINT_IMAGE, 0.25))
    assert hue.dtype == np.uint8
    expected = _np_hue(UINT_IMAGE / np.float32(255), 0.25)
    np.testing.assert_allclose(hue, np.floor(expected * 255.5), atol=1)
    with pytest.raises(ValueError, match="Gamma should be a non-negative"):
        tf.image.adjust_gamma(IMAGE, -1.0)


def test_random_adjustments_stay_in_range():
    gray = np.full((2, 3, 3), 0.5, np.float32)
    bright = tf.image.random_brightness(gray, 0.2, seed=1)
    contrast = tf.image.random_contrast(IMAGE[0], 0.5, 1.5, seed=2)
    hue = tf.image.random_hue(IMAGE[0], 0.1, seed=3)
    saturation = tf.image.random_saturation(IMAGE[0], 0.2, 0.9, seed=4)
    with tf.Session() as sess:
        deltas = [sess.run(bright)[0, 0, 0] - 0.5 for _ in range(20)]
        results = [sess.run([contrast, hue, saturation]) for _ in range(5)]
    assert all(-0.2 <= d < 0.2 for d in deltas) and np.std(deltas) > 0.02
    mean = IMAGE[0].mean(axis=(0, 1))
    for c, h, s in results:
        factor = (c[0, 0] - mean) / (IMAGE[0, 0, 0] - mean)
        assert np.all((factor >= 0.5 - 1e-4) & (factor <= 1.5 + 1e-4))
        np.testing.assert_allclose(factor, factor[0], rtol=1e-3)  # one factor for the image
        assert h.shape == s.shape == (4, 5, 3)
    for call, match in [(lambda: tf.image.random_brightness(gray, -1.0), "non-negative"),
                        (lambda: tf.image.random_contrast(gray, 1.0, 0.5), "upper must be"),
                        (lambda: tf.image.random_hue(gray, 0.7), "max_delta must be <= 0.5"),
                        (lambda: tf.image.random_saturation(gray, -1.0, 1.0), "lower must")]:
        with pytest.raises(ValueError, match=match):
            call()


# -- grayscale and standardization ------------------------------------------------------------

def test_grayscale_conversions():
    gray = run(tf.image.rgb_to_grayscale(UINT_IMAGE))
    assert gray.dtype == np.uint8 and gray.shape == (4, 5, 1)
    weights = np.array([0.2989, 0.587, 0.114])
    expected = _to_uint8((UINT_IMAGE / 255.0) @ weights)[..., None]
    np.testing.assert_array_equal(gray, expected)
    assert run(tf.image.rgb_to_grayscale(np.uint8([[[78, 108, 171]]])))[0, 0, 0] == 106  # TF
    rgb = tf.image.grayscale_to_rgb(gray)
    assert rgb.shape.as_list() == [4, 5, 3]
    np.testing.assert_array_equal(run(rgb), np.repeat(gray, 3, axis=2))
    unknown = tf.placeholder(tf.float32)
    np.testing.assert_array_equal(run(tf.image.grayscale_to_rgb(unknown),
                                      {unknown: np.ones((2, 1))}), np.ones((2, 3)))
    with pytest.raises(ValueError, match="Last dimension of a grayscale image"):
        tf.image.grayscale_to_rgb(UINT_IMAGE)


def test_per_image_standardization():
    out = tf.image.per_image_standardization(UINT_IMAGE)
    assert out.dtype == tf.float32
    x = UINT_IMAGE.astype(np.float64)
    np.testing.assert_allclose(run(out), (x - x.mean()) / x.std(), rtol=1e-5)
    batch = run(tf.image.per_image_standardization(IMAGE))
    for image, value in zip(IMAGE, batch):
        np.testing.assert_allclose(value, (image - image.mean()) / image.std(), rtol=1e-4,
                                   atol=1e-5)
    flat = run(tf.image.per_image_standardization(np.full((2, 2, 1), 7.0, np.float32)))
    np.testing.assert_array_equal(flat, 0)  # stddev floored at 1/sqrt(4), mean removed
    with pytest.raises(ValueError, match="at least three-dimensional"):
        tf.image.per_image_standardization(np.zeros((3, 3)))


@pytest.mark.parametrize("shape", [(24, 24, 3), (1, 1, 1), (31, 17, 1), (2, 5, 7, 3), (0, 4, 3),
                                   (3, 0, 2, 1), (2, 3, 9, 11, 4)])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_adjust_contrast_kernel_equals_float32_mean_formula_bit_for_bit(shape, dtype):
    """The kernel's sum-and-divide mean and in-place passes give np.mean's values exactly."""
    from tensorflux.ops.image import color
    rng = np.random.default_rng(len(shape) * 7 + shape[-1])
    x = (rng.standard_normal(shape) * 100).astype(dtype)
    if x.size > 3:
        x.reshape(-1)[1], x.reshape(-1)[2] = np.nan, np.inf
    for factor in (0.2, 1.7, -3.0):
        with np.errstate(all="ignore"):
            flt = x.astype(np.float32)
            mean = flt.mean(axis=(-3, -2), keepdims=True, dtype=np.float32)
            want = ((flt - mean) * np.float32(factor) + mean).astype(dtype)
            got = color._adjust_contrast_kernel(x, np.float32(factor))
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
