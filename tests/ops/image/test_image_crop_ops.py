"""CropAndResize and its gradient ops against a per-element NumPy reference, finite
differences, and values recorded from TensorFlow 2.21."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from op_helpers import graph, run  # noqa: F401 (graph: autouse fixture)

import tensorflux as tf
from tensorflux.framework import errors
from tensorflux.ops.image import crop as image_crop_ops

COVERED_OPS = {"CropAndResize", "CropAndResizeGradImage", "CropAndResizeGradBoxes",
               "ExtractGlimpse"}

IMAGE = (np.arange(24, dtype=np.float32).reshape(2, 3, 4, 1) ** 1.5) / 10
BOXES = np.array([[0.1, 0.2, 0.8, 0.9], [0.7, 0.6, 0.2, 0.1], [-0.2, -0.1, 1.3, 1.2]],
                 np.float32)
BOX_IND = np.array([0, 1, 1], np.int32)


def _image_case(method):
    def build(tf):
        x = tf.placeholder(tf.float64, [2, 4, 5, 2])
        boxes = np.array([[0.1, 0.15, 0.77, 0.9], [0.85, 0.6, 0.05, 0.2]], np.float32)
        y = tf.image.crop_and_resize(x, boxes, [1, 0], [3, 2], method=method)
        # the crops are float32: a zero image keeps finite differences exact
        return y, [x], [np.zeros((2, 4, 5, 2))]

    return build


GRADIENT_CASES = [
    ("CropAndResize", _image_case("bilinear")),
    ("CropAndResize", _image_case("nearest")),
]


def reference(image, boxes, box_ind, crop, method="bilinear", fill=0.0):
    """Per-element crop_and_resize in float64 (TF's coordinate conventions)."""
    _, h, w, d = image.shape
    ch, cw = crop
    out = np.full((len(boxes), ch, cw, d), fill, np.float64)
    for n, (y1, x1, y2, x2) in enumerate(np.asarray(boxes, np.float64)):
        for i in range(ch):
            y = y1 * (h - 1) + i * (y2 - y1) * (h - 1) / (ch - 1) if ch > 1 else (
                0.5 * (y1 + y2) * (h - 1))
            if not 0 <= y <= h - 1:
                continue
            for j in range(cw):
                x = x1 * (w - 1) + j * (x2 - x1) * (w - 1) / (cw - 1) if cw > 1 else (
                    0.5 * (x1 + x2) * (w - 1))
                if not 0 <= x <= w - 1:
                    continue
                img = image[box_ind[n]].astype(np.float64)
                if method == "nearest":
                    out[n, i, j] = img[int(np.floor(y + 0.5)), int(np.floor(x + 0.5))]
                    continue
                t, b = int(np.floor(y)), int(np.ceil(y))
                left, r = int(np.floor(x)), int(np.ceil(x))
                dy, dx = y - t, x - left
                top = img[t, left] * (1 - dx) + img[t, r] * dx
                bottom = img[b, left] * (1 - dx) + img[b, r] * dx
                out[n, i, j] = top * (1 - dy) + bottom * dy
    return out


# Recorded from TensorFlow 2.21: crop_and_resize(IMAGE, BOXES, BOX_IND, [2, 3],
# extrapolation_value=-1) and the gradients of sum(crops ** 2).
TF_BILINEAR = [[[0.246164, 0.444401, 0.706332], [1.911386, 2.338933, 2.796421]],
               [[8.57868, 8.087666, 7.608876], [6.081363, 5.645124, 5.22272]],
               [[-1, -1, -1], [-1, -1, -1]]]
TF_NEAREST = [[[0.1, 0.282843, 0.519615], [2.7, 3.162278, 3.648287]],
              [[7.636753, 7.00928, 6.4], [5.23832, 4.687217, 4.156922]],
              [[-1, -1, -1], [-1, -1, -1]]]
TF_BILINEAR_GRAD_IMAGE = [
    [[0.157545, 0.485182, 0.801216, 0.791092], [0.65103, 1.693662, 2.087691, 1.763768],
     [0.917465, 2.35855, 2.83108, 2.348993]],
    [[4.387084, 9.775147, 6.176817, 0.], [9.316178, 20.53478, 12.838673, 0.],
     [4.26097, 9.345344, 5.813863, 0.]]]
TF_BILINEAR_GRAD_BOXES = [[6.562378, 7.901819, 46.948025, 11.807534],
                          [254.32364, 80.65659, 157.84586, 72.43394], [0, 0, 0, 0]]
TF_NEAREST_GRAD_IMAGE = [
    [[0., 0.2, 0.565685, 1.039231], [0., 0., 0., 0.], [0., 5.4, 6.324555, 7.296575]],
    [[8.313845, 9.374434, 10.476641, 0.], [12.8, 14.018559, 15.273506, 0.],
     [0., 0., 0., 0.]]]
TF_NEAREST_GRAD_BOXES = [[4.32685, 10.546759, 63.249355, 14.709352],
                         [220.57428, 70.22493, 131.23383, 60.429325], [0, 0, 0, 0]]


@pytest.mark.parametrize("method,crops,grad_image,grad_boxes", [
    ("bilinear", TF_BILINEAR, TF_BILINEAR_GRAD_IMAGE, TF_BILINEAR_GRAD_BOXES),
    ("nearest", TF_NEAREST, TF_NEAREST_GRAD_IMAGE, TF_NEAREST_GRAD_BOXES),
])
def test_matches_tensorflow(method, crops, grad_image, grad_boxes):
    image, boxes = tf.constant(IMAGE), tf.constant(BOXES)
    y = tf.image.crop_and_resize(image, boxes, BOX_IND, [2, 3], method=method,
                                 extrapolation_value=-1.0)
    assert y.op.type == "CropAndResize" and y.shape.as_list() == [3, 2, 3, 1]
    gi, gb = tf.gradients(tf.reduce_sum(y * y), [image, boxes])
    assert gi.op.type == "CropAndResizeGradImage" and gi.shape.as_list() == [2, 3, 4, 1]
    assert gb.op.type == "CropAndResizeGradBoxes" and gb.shape.as_list() == [3, 4]
    got_y, got_gi, got_gb = run([y, gi, gb])
    assert got_y.dtype == got_gi.dtype == got_gb.dtype == np.float32
    np.testing.assert_allclose(got_y[..., 0], crops, rtol=2e-6, atol=1e-6)
    np.testing.assert_allclose(got_gi[..., 0], grad_image, rtol=2e-6, atol=1e-6)
    np.testing.assert_allclose(got_gb, grad_boxes, rtol=2e-5, atol=1e-5)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from(["bilinear", "nearest"]),
       st.integers(1, 4), st.integers(1, 4))
def test_matches_reference(seed, method, ch, cw):
    rng = np.random.RandomState(seed)
    image = rng.uniform(-1, 1, (2, 5, 6, 3)).astype(np.float32)
    boxes = rng.uniform(-0.3, 1.3, (4, 4)).astype(np.float32)
    box_ind = rng.randint(0, 2, 4).astype(np.int32)
    with tf.Graph().as_default():
        got = run(tf.image.crop_and_resize(image, boxes, box_ind, [ch, cw], method=method,
                                           extrapolation_value=0.5))
    want = reference(image, boxes, box_ind, (ch, cw), method, 0.5)
    np.testing.assert_allclose(got, want, atol=2e-5)


def test_integer_image_and_box_indices_alias():
    image = np.arange(2 * 4 * 4 * 1, dtype=np.uint8).reshape(2, 4, 4, 1)
    y = tf.image.crop_and_resize(image, [[0, 0, 1, 1]], crop_size=[4, 4], box_indices=[1])
    np.testing.assert_allclose(run(y), image[1:].astype(np.float32))
    # no image gradient for integer images, as in TF
    boxes, integer_image = tf.constant([[0.0, 0.0, 1.0, 1.0]]), tf.constant(image)
    grads = tf.gradients(tf.image.crop_and_resize(integer_image, boxes, [0], [2, 2]),
                         [integer_image, boxes])
    assert grads[0] is None and grads[1] is not None


def _loss_reference(image, boxes, weights, crop):
    return np.sum(reference(image, boxes, [0, 0, 0], crop) * weights)


def test_boxes_gradient_finite_differences():
    rng = np.random.RandomState(4)
    image = rng.uniform(-1, 1, (1, 6, 7, 2)).astype(np.float32)
    boxes = np.array([[0.13, 0.21, 0.71, 0.88], [0.82, 0.67, 0.31, 0.12], [0.23, 0.31, 0.63, 0.43]],
                     np.float64)
    crop = (3, 4)
    weights = rng.uniform(0.5, 1.5, (3, *crop, 2))
    grads = tf.constant(weights.astype(np.float32))
    got = run(image_crop_ops.CropAndResizeGradBoxes(grads, image, boxes.astype(np.float32),
                                                    [0, 0, 0]))
    eps = 1e-6
    numeric = np.zeros_like(boxes)
    for idx in np.ndindex(boxes.shape):
        up, down = boxes.copy(), boxes.copy()
        up[idx] += eps
        down[idx] -= eps
        numeric[idx] = (_loss_reference(image, up, weights, crop)
                        - _loss_reference(image, down, weights, crop)) / (2 * eps)
    np.testing.assert_allclose(got, numeric, rtol=1e-4, atol=1e-4)


def test_image_gradient_is_adjoint():
    rng = np.random.RandomState(5)
    boxes = rng.uniform(-0.2, 1.2, (5, 4)).astype(np.float32)
    box_ind = rng.randint(0, 2, 5).astype(np.int32)
    grads = rng.uniform(-1, 1, (5, 3, 2, 3)).astype(np.float32)
    probe = rng.uniform(-1, 1, (2, 4, 5, 3))
    for method in ("bilinear", "nearest"):
        with tf.Graph().as_default():
            back = run(image_crop_ops.CropAndResizeGradImage(
                grads, boxes, box_ind, [2, 4, 5, 3], T=tf.float64, method=method))
        assert back.dtype == np.float64
        forward = reference(probe, boxes, box_ind, (3, 2), method)
        np.testing.assert_allclose(np.sum(back * probe), np.sum(forward * grads), rtol=1e-5)


def test_errors():
    with pytest.raises(errors.InvalidArgumentError, match="box_index has values outside"):
        run(tf.image.crop_and_resize(IMAGE, BOXES, [0, 1, 2], [2, 2]))
    with pytest.raises(errors.InvalidArgumentError, match="crop dimensions must be positive"):
        run(tf.image.crop_and_resize(IMAGE, BOXES, BOX_IND,
                                     tf.placeholder_with_default([0, 2], [2])))
    with pytest.raises(ValueError, match="4 coordinates"):
        tf.image.crop_and_resize(IMAGE, tf.zeros([3, 5]), BOX_IND, [2, 2])
    with pytest.raises(ValueError, match="box_ind"):
        tf.image.crop_and_resize(IMAGE, BOXES, crop_size=[2, 2])
    with pytest.raises(ValueError):
        tf.image.crop_and_resize(IMAGE, BOXES, BOX_IND, [2, 2], method="bicubic")


def test_dynamic_shapes_and_empty_boxes():
    image = tf.placeholder(tf.float32, [None, None, None, 1])
    boxes = tf.placeholder(tf.float32, [None, 4])
    y = tf.image.crop_and_resize(image, boxes, tf.zeros([tf.shape(boxes)[0]], tf.int32), [3, 2])
    assert y.shape.as_list() == [None, 3, 2, 1]
    out = run(y, {image: IMAGE, boxes: np.zeros((0, 4), np.float32)})
    assert out.shape == (0, 3, 2, 1)


# -- ExtractGlimpse -------------------------------------------------------------------------------

GLIMPSE_IMAGE = np.arange(1, 101, dtype=np.float32).reshape(1, 10, 10, 1)


# Recorded from TensorFlow 2.21: ExtractGlimpse(GLIMPSE_IMAGE, ..., noise="zero").
@pytest.mark.parametrize("size,offset,centered,normalized,expected", [
    ([2, 2], [0.15, 0.15], True, True, [[45, 46], [55, 56]]),
    ([2, 2], [0.25, 0.35], True, True, [[56, 57], [66, 67]]),
    ([2, 2], [-0.05, -0.15], True, True, [[34, 35], [44, 45]]),
    ([3, 3], [1.5, 1.5], False, False, [[1, 2, 3], [11, 12, 13], [21, 22, 23]]),
    ([3, 3], [-1.5, -2.5], False, False, np.zeros((3, 3))),
    ([3, 3], [2.5, 0.5], False, False, [[0, 11, 12], [0, 21, 22], [0, 31, 32]]),
])
def test_glimpse_matches_tensorflow(size, offset, centered, normalized, expected):
    out = image_crop_ops.ExtractGlimpse(GLIMPSE_IMAGE, size, np.array([offset], np.float32),
                                        centered=centered, normalized=normalized,
                                        uniform_noise=False, noise="zero")
    assert out.shape.as_list() == [1, *size, 1]
    value = run(out)
    assert value.dtype == np.float32
    np.testing.assert_array_equal(value[0, :, :, 0], expected)


def test_glimpse_noise_kinds():
    image = np.stack([np.arange(1, 43, dtype=np.float32).reshape(6, 7),
                      1000 + np.arange(42, dtype=np.float32).reshape(6, 7)], -1)[None]
    offsets = np.array([[-0.9, -0.9]], np.float32)
    outside = np.ones((4, 5), bool)
    outside[1:, 2:] = False
    inside = image[0, :3, :3]
    values = run({noise: image_crop_ops.ExtractGlimpse(image, [4, 5], offsets,
                                                       uniform_noise=False, noise=noise)
                  for noise in ("gaussian", "uniform", "")})
    default = run(tf.image.extract_glimpse(image, [4, 5], offsets))
    for noise, value in [*values.items(), ("default", default)]:
        np.testing.assert_array_equal(value[0, 1:, 2:], inside, err_msg=noise)
    # uniform: independent draws over the whole image's range
    for value in (values["uniform"], default):
        assert ((value[0][outside] >= 1) & (value[0][outside] <= 1041)).all()
    # '': one draw per pixel within each channel's range; gaussian: one draw per pixel
    legacy = values[""][0][outside]
    assert ((legacy[:, 0] >= 1) & (legacy[:, 0] <= 42)).all()
    np.testing.assert_allclose(legacy[:, 1] - legacy[:, 0], 999, rtol=1e-6)
    np.testing.assert_allclose(np.diff(values["gaussian"][0][outside], axis=1), 999, rtol=1e-6)


def test_glimpse_errors():
    with pytest.raises(ValueError, match="uniform_noise should not be True"):
        image_crop_ops.ExtractGlimpse(GLIMPSE_IMAGE, [2, 2], [[0.0, 0.0]], noise="gaussian")
    with pytest.raises(errors.InvalidArgumentError, match="offsets must be"):
        run(tf.image.extract_glimpse(GLIMPSE_IMAGE, [2, 2],
                                     tf.placeholder_with_default([[0.0, 0.0]] * 2, [None, 2])))
