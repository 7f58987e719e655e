"""ImageProjectiveTransformV2 against a per-pixel loop of TF's sampling rule, its exact
adjoint gradient, dtypes and errors."""

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.framework import errors
from tensorflux.ops.image.projective import (
    ImageProjectiveTransformV2,
    _ImageProjectiveTransformV2Adjoint,
)
from tests.ops.op_helpers import gradient_case, graph, run  # noqa: F401 - autouse fixture

COVERED_OPS = {"ImageProjectiveTransformV2"}

_SKEW = [0.9, 0.2, 0.4, -0.15, 1.1, -0.3, 0.03, -0.02]

GRADIENT_CASES = [
    ("ImageProjectiveTransformV2", gradient_case(
        lambda tf, x: ImageProjectiveTransformV2(x, tf.constant([_SKEW]), [4, 5],
                                                 interpolation="BILINEAR"), (2, 5, 4, 2))),
    ("ImageProjectiveTransformV2", gradient_case(
        lambda tf, x: ImageProjectiveTransformV2(x, tf.constant([[1, 0, -0.6, 0, 1, 0.7, 0, 0]],
                                                                tf.float32),
                                                 [3, 3], interpolation="NEAREST"), (1, 3, 4, 1))),
]


def _reference(images, transforms, out_h, out_w, interpolation):
    """TF's CPU functor, one output pixel at a time (float32 coordinates)."""
    batch, in_h, in_w, channels = images.shape
    out = np.zeros((batch, out_h, out_w, channels), np.float64)

    def read(b, y, x):
        if 0 <= y < in_h and 0 <= x < in_w:
            return images[b, int(y), int(x)].astype(np.float64)
        return np.zeros(channels)

    for b in range(batch):
        t = transforms[b if transforms.shape[0] > 1 else 0].astype(np.float32)
        for y in range(out_h):
            for x in range(out_w):
                fx, fy = np.float32(x), np.float32(y)
                k = t[6] * fx + t[7] * fy + np.float32(1)
                if k == 0:
                    continue
                in_x = (t[0] * fx + t[1] * fy + t[2]) / k
                in_y = (t[3] * fx + t[4] * fy + t[5]) / k
                if interpolation == "NEAREST":
                    ry = np.sign(in_y) * np.floor(abs(in_y) + 0.5)
                    rx = np.sign(in_x) * np.floor(abs(in_x) + 0.5)
                    out[b, y, x] = read(b, ry, rx)
                else:
                    y0, x0 = np.floor(in_y), np.floor(in_x)
                    top = (x0 + 1 - in_x) * read(b, y0, x0) + (in_x - x0) * read(b, y0, x0 + 1)
                    bottom = ((x0 + 1 - in_x) * read(b, y0 + 1, x0)
                              + (in_x - x0) * read(b, y0 + 1, x0 + 1))
                    out[b, y, x] = (y0 + 1 - in_y) * top + (in_y - y0) * bottom
    return out


ROWS = [
    # (image shape, transforms, output shape, interpolation)
    ((2, 5, 6, 3), [_SKEW], (5, 6), "BILINEAR"),
    ((2, 5, 6, 3), [_SKEW], (7, 4), "NEAREST"),
    ((2, 4, 4, 1), [[0, -1, 3, 1, 0, 0, 0, 0], [1, 0, 0.5, 0, 1, -0.5, 0, 0]], (4, 4), "BILINEAR"),
    ((1, 6, 5, 2), [[1, 0, 0, 0, 1, 0, -0.5, 0]], (6, 5), "NEAREST"),  # k == 0 at x = 2
    ((1, 3, 3, 1), [[1, 0, 0.5, 0, 1, -0.5, 0, 0]], (3, 3), "NEAREST"),  # halves round away
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("shape,transforms,out_shape,interpolation", ROWS)
def test_values_match_the_sampling_loop(shape, transforms, out_shape, interpolation, dtype):
    images = np.random.RandomState(0).uniform(-2, 2, shape).astype(dtype)
    transforms = np.asarray(transforms, np.float32)
    out = ImageProjectiveTransformV2(images, transforms, list(out_shape),
                                     interpolation=interpolation)
    assert out.shape.as_list() == [shape[0], *out_shape, shape[3]]
    value = run(out)
    assert value.dtype == dtype
    tol = 1e-3 if dtype == np.float16 else 1e-5
    np.testing.assert_allclose(value, _reference(images, transforms, *out_shape, interpolation),
                               rtol=tol, atol=tol)


def test_integer_images_truncate_the_blend():
    images = np.array([[[[10], [21]], [[0], [255]]]], np.uint8)
    transforms = np.array([[1, 0, 0.5, 0, 1, 0.5, 0, 0]], np.float32)
    got = run(ImageProjectiveTransformV2(images, transforms, [1, 1], interpolation="BILINEAR"))
    assert got.dtype == np.uint8
    assert got[0, 0, 0, 0] == int((10 + 21 + 0 + 255) / 4)  # 71.5 -> 71
    ints = run(ImageProjectiveTransformV2(images.astype(np.int64), transforms, [2, 2],
                                          interpolation="NEAREST"))
    np.testing.assert_array_equal(ints[0, :, :, 0], [[255, 0], [0, 0]])


def test_gradient_is_the_adjoint_of_the_sampling():
    rng = np.random.RandomState(1)
    images = rng.randn(2, 5, 6, 2)
    g = rng.randn(2, 4, 7, 2)
    transforms = np.array([_SKEW, [1, 0.1, -0.5, 0.2, 0.8, 0.3, 0, 0.01]], np.float32)
    for interpolation in ("NEAREST", "BILINEAR"):
        forward = run(ImageProjectiveTransformV2(images, transforms, [4, 7],
                                                 interpolation=interpolation))
        adjoint = run(_ImageProjectiveTransformV2Adjoint(g, transforms, [5, 6],
                                                         interpolation=interpolation))
        # <A x, g> == <x, A^T g>
        np.testing.assert_allclose(np.sum(forward * g), np.sum(images * adjoint), rtol=1e-10)


ERRORS = [
    (lambda: ImageProjectiveTransformV2(np.zeros((2, 3, 3, 1), np.float32),
                                        np.zeros((3, 8), np.float32), [3, 3],
                                        interpolation="NEAREST"), "num_images x 8"),
    (lambda: ImageProjectiveTransformV2(np.zeros((1, 3, 3, 1), np.float32),
                                        np.zeros((1, 8), np.float32), [3, 3],
                                        interpolation="CUBIC"), "interpolation"),
    (lambda: ImageProjectiveTransformV2(np.zeros((1, 3, 3, 1), np.float32),
                                        np.zeros((1, 8), np.float32),
                                        tf.placeholder_with_default([-1, 3], [2]),
                                        interpolation="NEAREST"), "non-negative"),
]


@pytest.mark.parametrize("build,words", ERRORS)
def test_bad_input_raises_invalid_argument(build, words):
    with pytest.raises(errors.InvalidArgumentError, match=words):
        run(build())


def test_static_shape_errors():
    with pytest.raises(ValueError, match="rank"):
        ImageProjectiveTransformV2(np.zeros((3, 3, 1), np.float32), np.zeros((1, 8), np.float32),
                                   [3, 3], interpolation="NEAREST")
    with pytest.raises(ValueError, match="output_shape"):
        ImageProjectiveTransformV2(np.zeros((1, 3, 3, 1), np.float32),
                                   np.zeros((1, 8), np.float32), [3, 3, 1],
                                   interpolation="NEAREST")
