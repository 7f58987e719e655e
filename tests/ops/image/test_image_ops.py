"""tf.image resizing and geometry: resize kernels against NumPy references and values recorded
from TensorFlow, their gradients, flips, rotations, crops, pads and random crops."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorflux as tf
from tensorflux.ops.image import resize as resize_ops

COVERED_OPS = {"ResizeBilinear", "ResizeNearestNeighbor", "ResizeBicubic", "ResizeArea",
               "ResizeBilinearGrad", "ResizeNearestNeighborGrad", "ResizeBicubicGrad"}


def _zero_image_case(op):
    # NOTE: these ops output float32 whatever the input type. They are linear, so at x = 0 the
    # float32 outputs are exact multiples of the finite-difference step and the check stays
    # accurate; the gradient does not depend on x.
    def build(tf):
        x = tf.placeholder(tf.float64, [2, 3, 4, 2])
        return op(x, [5, 3]), [x], [np.zeros((2, 3, 4, 2))]

    return build


def _nearest_case(tf):
    x = tf.placeholder(tf.float64, [1, 3, 5, 2])
    y = tf.image.resize_nearest_neighbor(x, [4, 3])
    return y, [x], [np.random.RandomState(1).randn(1, 3, 5, 2)]


def _half_pixel_case(op):
    def build(tf):
        x = tf.placeholder(tf.float64, [1, 4, 3, 1])
        return op(x, [3, 7], half_pixel_centers=True), [x], [np.zeros((1, 4, 3, 1))]

    return build


GRADIENT_CASES = [
    ("ResizeBilinear", _zero_image_case(tf.image.resize_bilinear)),
    ("ResizeBilinear", _half_pixel_case(tf.image.resize_bilinear)),
    ("ResizeBicubic", _zero_image_case(tf.image.resize_bicubic)),
    ("ResizeBicubic", _half_pixel_case(tf.image.resize_bicubic)),
    ("ResizeNearestNeighbor", _nearest_case),
]

RNG = np.random.RandomState(11)


@pytest.fixture(autouse=True)
def fresh_graph():
    with tf.Graph().as_default():
        yield


def run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


# -- NumPy references -------------------------------------------------------------------------

def np_scale(n_in, n_out, align):
    if align and n_out > 1:
        return np.float32(n_in - 1) / np.float32(n_out - 1)
    return np.float32(n_in) / np.float32(n_out)


def interp_matrix(n_in, n_out, align, half, kind):
    """[n_out, n_in] weights of one axis, straight from the definition of each method."""
    scale = np_scale(n_in, n_out, align)
    out = np.arange(n_out, dtype=np.float32)
    matrix = np.zeros((n_out, n_in))
    if kind == "nearest":
        src = (out + np.float32(0.5)) * scale if half else out * scale
        pick = np.where(src - np.floor(src) >= 0.5, np.ceil(src), np.floor(src)) if align \
            else np.floor(src)
        matrix[np.arange(n_out), np.clip(pick.astype(int), 0, n_in - 1)] = 1
        return matrix
    src = ((out + np.float32(0.5)) * scale - np.float32(0.5) if half else out * scale)
    src = src.astype(np.float64)
    if kind == "bilinear":
        lerp = src - np.floor(src)
        low = np.clip(np.floor(src), 0, n_in - 1).astype(int)
        high = np.clip(np.ceil(src), 0, n_in - 1).astype(int)
        np.add.at(matrix, (np.arange(n_out), low), 1 - lerp)
        np.add.at(matrix, (np.arange(n_out), high), lerp)
        return matrix
    a = -0.5 if half else -0.75
    for o in range(n_out):
        base = int(np.floor(src[o]))
        taps = [base - 1, base, base + 1, base + 2]
        t = np.abs(src[o] - np.array(taps, float))
        w = np.where(t <= 1, ((a + 2) * t - (a + 3)) * t * t + 1,
                     ((a * t - 5 * a) * t + 8 * a) * t - 4 * a)
        idx = np.clip(taps, 0, n_in - 1)
        if half:  # Keys: drop taps outside the image and renormalise
            w = np.where(idx == np.array(taps), w, 0)
            w = w / w.sum()
        np.add.at(matrix[o], idx, w)
    return matrix


def area_matrix(n_in, n_out, align):
    scale = float(np_scale(n_in, n_out, align))
    if scale == 0:  # a single pixel stretched with align_corners: TF copies it
        return np.ones((n_out, 1))
    matrix = np.zeros((n_out, n_in))
    for o in range(n_out):
        low, high = o * scale, (o + 1) * scale
        for i in range(int(np.floor(low)), int(np.ceil(high))):
            overlap = min(i + 1, high) - max(i, low)
            matrix[o, min(max(i, 0), n_in - 1)] += overlap / scale
    return matrix


def np_resize(x, size, kind, align=False, half=False):
    if kind == "area":
        rows, cols = area_matrix(x.shape[1], size[0], align), area_matrix(x.shape[2], size[1],
                                                                           align)
    else:
        rows = interp_matrix(x.shape[1], size[0], align, half, kind)
        cols = interp_matrix(x.shape[2], size[1], align, half, kind)
    return np.einsum("oh,bhwc,pw->bopc", rows, x.astype(np.float64), cols)


RESIZERS = {"bilinear": tf.image.resize_bilinear, "nearest": tf.image.resize_nearest_neighbor,
            "bicubic": tf.image.resize_bicubic, "area": tf.image.resize_area}
OP_TYPES = {"bilinear": "ResizeBilinear", "nearest": "ResizeNearestNeighbor",
            "bicubic": "ResizeBicubic", "area": "ResizeArea"}
TOLERANCE = {"bilinear": 1e-5, "nearest": 0, "bicubic": 3e-3, "area": 1e-5}
FLAG_SETS = [(False, False), (True, False), (False, True)]


METHOD_FLAGS = [(kind, align, half) for kind in ["bilinear", "nearest", "bicubic", "area"]
                for align, half in FLAG_SETS if not (kind == "area" and half)]


@pytest.mark.parametrize("kind,align,half", METHOD_FLAGS)
@pytest.mark.parametrize("in_size,out_size", [((4, 5), (7, 3)), ((5, 5), (2, 9)),
                                              ((6, 4), (1, 1)), ((1, 7), (4, 10))])
def test_resize_against_numpy(kind, align, half, in_size, out_size):
    x = RNG.uniform(-3, 3, (2,) + in_size + (3,)).astype(np.float32)
    kwargs = {"align_corners": align} if kind == "area" else {"align_corners": align,
                                                              "half_pixel_centers": half}
    y = RESIZERS[kind](x, list(out_size), **kwargs)
    assert y.op.type == OP_TYPES[kind]
    assert y.shape.as_list() == [2, *out_size, 3]
    value = run(y)
    assert value.dtype == np.float32
    expected = np_resize(x, out_size, kind, align, half)
    np.testing.assert_allclose(value, expected, atol=TOLERANCE[kind] * 10 + 1e-6,
                               rtol=TOLERANCE[kind])


# Values recorded from TensorFlow 2.21 (tf.compat.v1) for x = [[0, 1, 4], [9, 2, 5]] -> 3x5.
X_SMALL = np.array([[0.0, 1.0, 4.0], [9.0, 2.0, 5.0]], np.float32).reshape(1, 2, 3, 1)
TF_VALUES = {
    ("bilinear", False, False): [[0.0, 0.6, 1.6, 3.4, 4.0], [6.0, 3.4, 2.2666669, 4.0666661,
                                                             4.666666], [9.0, 4.8, 2.6, 4.4, 5.0]],
    ("bilinear", True, False): [[0.0, 0.5, 1.0, 2.5, 4.0], [4.5, 3.0, 1.5, 3.0, 4.5],
                                [9.0, 5.5, 2.0, 3.5, 5.0]],
    ("bilinear", False, True): [[0.0, 0.4, 1.0, 2.8, 4.0], [4.5, 3.3, 1.5, 3.3, 4.5],
                                [9.0, 6.2, 2.0, 3.8, 5.0]],
    ("nearest", False, False): [[0, 0, 1, 1, 4], [0, 0, 1, 1, 4], [9, 9, 2, 2, 5]],
    ("nearest", True, False): [[0, 1, 1, 4, 4], [9, 2, 2, 5, 5], [9, 2, 2, 5, 5]],
    ("nearest", False, True): [[0, 0, 1, 4, 4], [9, 9, 2, 5, 5], [9, 9, 2, 5, 5]],
    ("bicubic", False, False): [[0.0, 0.287672, 1.624627, 3.495461, 4.323894],
                                [6.169841, 3.103498, 1.783415, 4.04915, 5.009432],
                                [10.0, 4.851526, 1.881988, 4.392874, 5.435005]],
    ("bicubic", True, False): [[0.0, 0.21875, 1.0, 2.59375, 4.0],
                               [4.5, 2.71875, 1.5, 2.71875, 4.5],
                               [9.0, 5.21875, 2.0, 2.84375, 5.0]],
    ("bicubic", False, True): [[-0.708335, -0.191187, 0.934111, 2.948984, 4.160687],
                               [4.726576, 3.311898, 1.5, 3.311898, 4.726576],
                               [10.161487, 6.814982, 2.065889, 3.674812, 5.292464]],
    ("area", False, False): [[0.0, 0.333333, 1.0, 3.0, 4.0], [4.5, 3.5, 1.5, 3.5, 4.5],
                             [9.0, 6.666666, 2.0, 4.0, 5.0]],
    ("area", True, False): [[0, 0, 1, 1, 4], [0, 0, 1, 1, 4], [9, 9, 2, 2, 5]],
}


@pytest.mark.parametrize("key", sorted(TF_VALUES), ids=str)
def test_resize_matches_recorded_tensorflow_values(key):
    kind, align, half = key
    kwargs = {"align_corners": align} if kind == "area" else {"align_corners": align,
                                                              "half_pixel_centers": half}
    value = run(RESIZERS[kind](X_SMALL, [3, 5], **kwargs))[0, :, :, 0]
    np.testing.assert_allclose(value, TF_VALUES[key], rtol=1e-6, atol=2e-6)


def test_resize_dtypes_and_integer_inputs():
    x = RNG.randint(0, 256, (1, 3, 4, 2)).astype(np.uint8)
    bilinear = tf.image.resize_bilinear(x, [5, 6])
    nearest = tf.image.resize_nearest_neighbor(x, [5, 6])
    assert bilinear.dtype == tf.float32 and nearest.dtype == tf.uint8
    b, n = run([bilinear, nearest])
    np.testing.assert_allclose(b, np_resize(x, (5, 6), "bilinear"), atol=1e-4)
    np.testing.assert_array_equal(n, np_resize(x, (5, 6), "nearest").astype(np.uint8))
    assert n.dtype == np.uint8
    area = run(tf.image.resize_area(np.ones((1, 9, 9, 1), np.int32) * 7, [4, 4]))
    np.testing.assert_allclose(area, 7, rtol=1e-6)


def test_resize_area_downscale_averages_blocks():
    x = RNG.rand(1, 8, 6, 2).astype(np.float32)
    value = run(tf.image.resize_area(x, [4, 3]))
    blocks = x.reshape(1, 4, 2, 3, 2, 2).mean(axis=(2, 4))
    np.testing.assert_allclose(value, blocks, rtol=1e-5)


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 7), st.integers(1, 7), st.integers(1, 9), st.integers(1, 9),
       st.booleans(), st.sampled_from(["bilinear", "nearest", "area"]))
def test_resize_random_sizes(h, w, oh, ow, align, kind):
    with tf.Graph().as_default():
        x = np.random.RandomState(h * 100 + w).randn(1, h, w, 2).astype(np.float32)
        images = tf.placeholder(tf.float32, [None, None, None, 2])
        size = tf.placeholder(tf.int32, [2])
        y = RESIZERS[kind](images, size, align_corners=align)
        assert y.shape.as_list() == [None, None, None, 2]
        value = run(y, {images: x, size: [oh, ow]})
    expected = np_resize(x, (oh, ow), kind, align)
    np.testing.assert_allclose(value, expected, atol=1e-5)


def test_resize_kernel_errors():
    x = tf.placeholder(tf.float32)
    size = tf.placeholder(tf.int32)
    y = tf.image.resize_bilinear(x, size)
    with pytest.raises(tf.errors.InvalidArgumentError, match="input must be 4-dimensional"):
        run(y, {x: np.zeros((2, 3, 1)), size: [2, 2]})
    with pytest.raises(tf.errors.InvalidArgumentError, match="output dimensions must be positive"):
        run(y, {x: np.zeros((1, 2, 3, 1)), size: [0, 2]})
    with pytest.raises(tf.errors.InvalidArgumentError, match="shape_t must have two elements"):
        run(y, {x: np.zeros((1, 2, 3, 1)), size: [2, 2, 2]})
    with pytest.raises(tf.errors.InvalidArgumentError, match="input image must be of non-zero"):
        run(y, {x: np.zeros((1, 0, 3, 1)), size: [2, 2]})
    both = tf.image.resize_nearest_neighbor(np.zeros((1, 2, 2, 1)), [3, 3], align_corners=True,
                                            half_pixel_centers=True)
    with pytest.raises(tf.errors.InvalidArgumentError, match="align_corners must be False"):
        run(both)
    with pytest.raises(ValueError, match="rank 4"):
        tf.image.resize_bilinear(np.zeros((2, 3)), [2, 2])
    with pytest.raises(ValueError, match="2 elements"):
        tf.image.resize_bilinear(np.zeros((1, 2, 3, 1)), [2, 2, 2])


# -- gradients -----------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("align,half", FLAG_SETS)
def test_resize_gradient_is_the_adjoint(kind, align, half):
    x = RNG.randn(2, 4, 5, 3)
    g = RNG.randn(2, 6, 3, 3).astype(np.float32)
    images = tf.constant(x)
    y = RESIZERS[kind](images, [6, 3], align_corners=align, half_pixel_centers=half)
    (grad,) = tf.gradients(y, images, grad_ys=tf.cast(g, y.dtype))
    assert grad.op.type == OP_TYPES[kind] + "Grad"
    assert grad.dtype == tf.float64 and grad.shape.as_list() == [2, 4, 5, 3]
    forward, backward = run([y, grad])
    # <resize(x), g> == <x, resize^T(g)> for a linear map.
    np.testing.assert_allclose(np.sum(forward * g), np.sum(x * backward), rtol=1e-5)
    np.testing.assert_allclose(forward, np_resize(x, (6, 3), kind, align, half), atol=1e-2)


# Gradients of x = X_SMALL resized to 3x5 with grad_ys = arange(15), recorded from TensorFlow.
TF_GRADS = {
    "bilinear": [[2.866666, 6.399999, 12.4], [19.333334, 26.000002, 38.000004]],
    "nearest": [[12.0, 20.0, 13.0], [21.0, 25.0, 14.0]],
    "bicubic": [[0.734438, 4.08148, 9.523597], [18.663399, 30.077578, 41.91951]],
}


@pytest.mark.parametrize("kind", sorted(TF_GRADS))
def test_resize_gradient_matches_recorded_tensorflow(kind):
    x = tf.constant(X_SMALL)
    y = RESIZERS[kind](x, [3, 5])
    dy = np.arange(15, dtype=np.float32).reshape(1, 3, 5, 1)
    (grad,) = tf.gradients(y, x, grad_ys=dy)
    np.testing.assert_allclose(run(grad)[0, :, :, 0], TF_GRADS[kind], rtol=1e-5)


def test_gradient_ops_directly():
    grads = RNG.randn(1, 3, 5, 2).astype(np.float32)
    original = np.zeros((1, 2, 3, 2), np.float64)
    out = resize_ops.ResizeBilinearGrad(grads, original)
    assert out.dtype == tf.float64 and out.shape.as_list() == [1, 2, 3, 2]
    value = run(out)
    np.testing.assert_allclose(value, np.einsum("oh,bopc,pw->bhwc",
                                                interp_matrix(2, 3, False, False, "bilinear"),
                                                grads, interp_matrix(3, 5, False, False,
                                                                     "bilinear")), rtol=1e-5)
    nearest = resize_ops.ResizeNearestNeighborGrad(grads, [2, 3])
    assert nearest.shape.as_list() == [1, 2, 3, 2]
    np.testing.assert_allclose(run(nearest), np.einsum(
        "oh,bopc,pw->bhwc", interp_matrix(2, 3, False, False, "nearest"), grads,
        interp_matrix(3, 5, False, False, "nearest")), rtol=1e-5)
    cubic = resize_ops.ResizeBicubicGrad(grads, np.zeros((1, 2, 3, 2), np.float32))
    assert cubic.dtype == tf.float32
    assert run(cubic).shape == (1, 2, 3, 2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="original_image must be 4-dim"):
        run(resize_ops.ResizeBilinearGrad(grads, tf.placeholder_with_default(
            np.zeros((2, 3, 2)), None)))


def test_integer_images_have_no_gradient():
    x = tf.constant(np.zeros((1, 2, 2, 1), np.int32))
    y = tf.image.resize_bilinear(x, [3, 3])
    assert tf.gradients(y, x) == [None]


# -- resize_images ----------------------------------------------------------------------------

def test_resize_images_methods_batches_and_dtypes():
    image = RNG.randint(0, 255, (4, 6, 3)).astype(np.uint8)
    for method, kind in enumerate(["bilinear", "nearest", "bicubic", "area"]):
        out = tf.image.resize_images(image, [5, 3], method=method)
        assert out.shape.as_list() == [5, 3, 3]
        assert out.dtype == (tf.uint8 if kind == "nearest" else tf.float32)
        expected = np_resize(image[None], (5, 3), kind)[0]
        np.testing.assert_allclose(run(out), expected, atol=TOLERANCE[kind] * 300 + 1e-3)
    batch = tf.image.resize_images(np.zeros((2, 4, 6, 1), np.float32), [8, 8],
                                   method=tf.image.ResizeMethod.BICUBIC, align_corners=True)
    assert batch.shape.as_list() == [2, 8, 8, 1] and batch.op.type == "ResizeBicubic"
    assert batch.op.get_attr("align_corners") is True


def test_resize_images_same_size_is_returned_unchanged():
    image = tf.constant(np.zeros((4, 6, 3), np.uint8))
    same = tf.image.resize_images(image, [4, 6])
    assert same is image or same.op.type in ("Identity", "Squeeze")
    assert same.dtype == tf.uint8
    with pytest.raises(ValueError, match="Resize method is not implemented"):
        tf.image.resize_images(image, [2, 2], method=7)
    with pytest.raises(ValueError, match="3 or 4 dimensions"):
        tf.image.resize_images(np.zeros((2, 2)), [3, 3])


def test_resize_images_preserve_aspect_ratio():
    image = np.zeros((10, 20, 1), np.float32)
    value = run(tf.image.resize_images(image, [8, 8], preserve_aspect_ratio=True))
    assert value.shape == (4, 8, 1)
    value = run(tf.image.resize_images(image, [30, 100], preserve_aspect_ratio=True))
    assert value.shape == (30, 60, 1)


# -- flips, transposes, rotations ---------------------------------------------------------------

IMAGE = RNG.randint(0, 100, (3, 4, 2)).astype(np.float32)
BATCH = RNG.randint(0, 100, (3, 3, 4, 2)).astype(np.float32)


@pytest.mark.parametrize("fn,axis", [(tf.image.flip_left_right, 1), (tf.image.flip_up_down, 0)])
def test_flips(fn, axis):
    np.testing.assert_array_equal(run(fn(IMAGE)), np.flip(IMAGE, axis))
    np.testing.assert_array_equal(run(fn(BATCH)), np.flip(BATCH, axis + 1))
    unknown = tf.placeholder(tf.float32)
    flipped = fn(unknown)
    np.testing.assert_array_equal(run(flipped, {unknown: IMAGE}), np.flip(IMAGE, axis))
    np.testing.assert_array_equal(run(flipped, {unknown: BATCH}), np.flip(BATCH, axis + 1))
    with pytest.raises(ValueError, match="at least three-dimensional"):
        fn(np.zeros((2, 2)))


@pytest.mark.parametrize("fn,axis", [(tf.image.random_flip_left_right, 1),
                                     (tf.image.random_flip_up_down, 0)])
def test_random_flips(fn, axis):
    single = fn(IMAGE, seed=3)
    batch = fn(np.repeat(IMAGE[None], 16, axis=0), seed=4)
    assert single.shape.as_list() == [3, 4, 2] and batch.shape.as_list() == [16, 3, 4, 2]
    with tf.Session() as sess:
        seen = {sess.run(single).tobytes() for _ in range(30)}
        batches = sess.run(batch)
    assert seen == {IMAGE.tobytes(), np.flip(IMAGE, axis).tobytes()}
    flipped = [np.array_equal(b, np.flip(IMAGE, axis)) for b in batches]
    kept = [np.array_equal(b, IMAGE) for b in batches]
    assert all(f or k for f, k in zip(flipped, kept)) and 0 < sum(flipped) < 16


def test_transpose_and_rot90():
    np.testing.assert_array_equal(run(tf.image.transpose_image(IMAGE)), IMAGE.transpose(1, 0, 2))
    np.testing.assert_array_equal(run(tf.image.transpose_image(BATCH)),
                                  BATCH.transpose(0, 2, 1, 3))
    k = tf.placeholder(tf.int32, [])
    dynamic = tf.image.rot90(BATCH, k)
    assert dynamic.shape.as_list() == [3, None, None, 2]
    for turns in range(-1, 6):
        np.testing.assert_array_equal(run(tf.image.rot90(IMAGE, turns)),
                                      np.rot90(IMAGE, turns, axes=(0, 1)))
        np.testing.assert_array_equal(run(dynamic, {k: turns}),
                                      np.rot90(BATCH, turns, axes=(1, 2)))


# -- crops and pads ---------------------------------------------------------------------------

def test_crop_and_pad_to_bounding_box():
    crop = tf.image.crop_to_bounding_box(BATCH, 1, 1, 2, 3)
    assert crop.shape.as_list() == [3, 2, 3, 2]
    np.testing.assert_array_equal(run(crop), BATCH[:, 1:3, 1:4])
    pad = tf.image.pad_to_bounding_box(IMAGE, 2, 1, 6, 7)
    assert pad.shape.as_list() == [6, 7, 2]
    np.testing.assert_array_equal(run(pad), np.pad(IMAGE, [(2, 1), (1, 2), (0, 0)]))
    with pytest.raises(ValueError, match="width must be >= target \\+ offset"):
        tf.image.crop_to_bounding_box(IMAGE, 0, 2, 2, 3)
    with pytest.raises(ValueError, match="offset_height must be >= 0"):
        tf.image.pad_to_bounding_box(IMAGE, -1, 0, 5, 5)
    offset = tf.placeholder(tf.int32, [])
    dynamic = tf.image.crop_to_bounding_box(IMAGE, offset, 0, 2, 2)
    np.testing.assert_array_equal(run(dynamic, {offset: 1}), IMAGE[1:3, 0:2])
    with pytest.raises(tf.errors.InvalidArgumentError, match="height must be >= target"):
        run(dynamic, {offset: 2})


def np_crop_or_pad(image, th, tw):
    h, w = image.shape[:2]
    top, left = max((h - th) // 2, 0), max((w - tw) // 2, 0)
    crop = image[top:top + min(th, h), left:left + min(tw, w)]
    pad_top, pad_left = max((th - h) // 2, 0), max((tw - w) // 2, 0)
    out = np.zeros((th, tw) + image.shape[2:], image.dtype)
    out[pad_top:pad_top + crop.shape[0], pad_left:pad_left + crop.shape[1]] = crop
    return out


@pytest.mark.parametrize("target", [(3, 4), (1, 1), (6, 2), (2, 9), (7, 7)])
def test_resize_image_with_crop_or_pad(target):
    out = tf.image.resize_image_with_crop_or_pad(IMAGE, *target)
    assert out.shape.as_list() == [*target, 2]
    np.testing.assert_array_equal(run(out), np_crop_or_pad(IMAGE, *target))
    batch = run(tf.image.resize_image_with_crop_or_pad(BATCH, *target))
    np.testing.assert_array_equal(batch[1], np_crop_or_pad(BATCH[1], *target))


def test_resize_image_with_pad():
    image = np.arange(7 * 10, dtype=np.float32).reshape(7, 10, 1) / 70
    out = tf.image.resize_image_with_pad(image, 6, 6)
    value = run(out)
    assert value.shape == (6, 6, 1)
    # Resized to floor(7 / (10 / 6)) = 4 rows; padding floor((6 - 4.2) / 2) = 0 rows on top.
    np.testing.assert_allclose(value[:4], np_resize(image[None], (4, 6), "bilinear")[0],
                               rtol=1e-5)
    np.testing.assert_array_equal(value[4:], 0)
    nearest = run(tf.image.resize_image_with_pad(image, 12, 9, method=1))
    assert nearest.shape == (12, 9, 1)
    np.testing.assert_array_equal(nearest[:2], 0)
    np.testing.assert_array_equal(nearest[2:8], np_resize(image[None], (6, 9), "nearest")[0])


def test_central_crop():
    image = RNG.rand(7, 10, 2).astype(np.float32)
    out = tf.image.central_crop(image, 0.33)
    assert out.shape.as_list() == [3, 4, 2]  # TF: start = int((7 - 7 * 0.33) / 2) = 2, 3
    np.testing.assert_array_equal(run(out), image[2:5, 3:7])
    assert tf.image.central_crop(image, 1.0).shape.as_list() == [7, 10, 2]
    fraction = tf.placeholder(tf.float32, [])
    dynamic = tf.image.central_crop(image[None], fraction)
    np.testing.assert_array_equal(run(dynamic, {fraction: 0.5})[0], image[1:6, 2:8])
    with pytest.raises(ValueError, match="central_fraction must be within"):
        tf.image.central_crop(image, 1.5)


def test_random_crop_windows_and_errors():
    value = np.arange(6 * 7 * 2).reshape(6, 7, 2)
    crop = tf.random_crop(value, [3, 4, 2], seed=5)
    assert crop.shape.as_list() == [3, 4, 2]
    starts = set()
    with tf.Session() as sess:
        for _ in range(40):
            out = sess.run(crop)
            top, left = divmod(int(out[0, 0, 0]) // 2, 7)
            np.testing.assert_array_equal(out, value[top:top + 3, left:left + 4])
            starts.add((top, left))
    assert len(starts) > 6 and all(t <= 3 and left <= 3 for t, left in starts)
    assert tf.image.random_crop is tf.random_crop
    too_big = tf.random_crop(value, [7, 2, 2])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Need value.shape >= size"):
        run(too_big)


def test_crops_and_flips_have_gradients():
    x = tf.constant(RNG.rand(4, 5, 1))
    y = tf.image.resize_image_with_crop_or_pad(tf.image.flip_left_right(x), 3, 7)
    (grad,) = tf.gradients(tf.reduce_sum(y * 2.0), x)
    expected = np.zeros((4, 5, 1))
    expected[0:3] = 2.0  # the crop keeps rows 0..2; padding adds nothing
    np.testing.assert_allclose(run(grad), expected)
