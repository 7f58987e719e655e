"""ExtractImagePatches against a loop reference and values recorded from TensorFlow 2.21."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from op_helpers import graph, run  # noqa: F401 (graph: autouse fixture)

import tensorflux as tf

COVERED_OPS = {"ExtractImagePatches"}


def _case(ksizes, strides, rates, padding, shape):
    def build(tf):
        x = tf.placeholder(tf.float64, shape)
        y = tf.extract_image_patches(x, ksizes, strides, rates, padding)
        return y, [x], [np.random.RandomState(0).uniform(-1, 1, shape)]

    return build


GRADIENT_CASES = [
    ("ExtractImagePatches", _case([1, 2, 3, 1], [1, 1, 2, 1], [1, 1, 1, 1], "SAME",
                                  [1, 3, 4, 2])),
    ("ExtractImagePatches", _case([1, 2, 2, 1], [1, 1, 1, 1], [1, 2, 1, 1], "VALID",
                                  [2, 4, 3, 1])),
]

X = np.arange(1, 26, dtype=np.float32).reshape(1, 5, 5, 1)


def _axis(size, k, stride, rate, padding):
    effective = k + (k - 1) * (rate - 1)
    if padding == "VALID":
        out = max(-(-(size - effective + 1) // stride), 0)
        return out, 0
    out = -(-size // stride)
    return out, max((out - 1) * stride + effective - size, 0) // 2


def reference(x, ksizes, strides, rates, padding):
    b, rows, cols, d = x.shape
    (kr, kc), (sr, sc), (rr, rc) = ksizes[1:3], strides[1:3], rates[1:3]
    out_r, top = _axis(rows, kr, sr, rr, padding)
    out_c, left = _axis(cols, kc, sc, rc, padding)
    out = np.zeros((b, out_r, out_c, kr, kc, d), x.dtype)
    for i in range(out_r):
        for j in range(out_c):
            for a in range(kr):
                for c in range(kc):
                    r, q = i * sr + a * rr - top, j * sc + c * rc - left
                    if 0 <= r < rows and 0 <= q < cols:
                        out[:, i, j, a, c] = x[:, r, q]
    return out.reshape(b, out_r, out_c, kr * kc * d)


# Recorded from TensorFlow 2.21 (tf.image.extract_patches on X).
TF_CASES = [
    (([1, 2, 2, 1], [1, 3, 3, 1], [1, 1, 1, 1], "SAME"),
     [[[1, 2, 6, 7], [4, 5, 9, 10]], [[16, 17, 21, 22], [19, 20, 24, 25]]]),
    (([1, 2, 2, 1], [1, 2, 2, 1], [1, 2, 2, 1], "VALID"),
     [[[1, 3, 11, 13], [3, 5, 13, 15]], [[11, 13, 21, 23], [13, 15, 23, 25]]]),
    (([1, 3, 2, 1], [1, 2, 3, 1], [1, 1, 2, 1], "SAME"),
     [[[0, 0, 1, 3, 6, 8], [0, 0, 4, 0, 9, 0]], [[6, 8, 11, 13, 16, 18], [9, 0, 14, 0, 19, 0]],
      [[16, 18, 21, 23, 0, 0], [19, 0, 24, 0, 0, 0]]]),
]


@pytest.mark.parametrize("args,expected", TF_CASES)
def test_matches_tensorflow(args, expected):
    y = tf.image.extract_patches(X, *args)
    assert y.op.type == "ExtractImagePatches"
    expected = np.asarray(expected, np.float32)[None]
    assert y.shape.as_list() == list(expected.shape)
    value = run(y)
    assert value.dtype == np.float32
    np.testing.assert_array_equal(value, expected)


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 7), st.integers(1, 7), st.lists(st.integers(1, 3), min_size=6,
                                                      max_size=6),
       st.sampled_from(["SAME", "VALID"]), st.sampled_from([np.float64, np.int32, np.uint8]))
def test_matches_reference(rows, cols, window, padding, dtype):
    x = np.random.RandomState(rows * 7 + cols).randint(0, 100, (2, rows, cols, 2)).astype(dtype)
    ksizes, strides, rates = ([1, window[i], window[i + 1], 1] for i in (0, 2, 4))
    with tf.Graph().as_default():
        y = tf.extract_image_patches(x, ksizes, strides, rates, padding)
        value = run(y)
    want = reference(x, ksizes, strides, rates, padding)
    assert value.dtype == dtype and y.shape.as_list() == list(want.shape)
    np.testing.assert_array_equal(value, want)


def test_gradient_with_unknown_shape_matches_reference_adjoint():
    x = tf.placeholder(tf.float64, [None, None, None, 2])
    args = ([1, 3, 2, 1], [1, 2, 1, 1], [1, 1, 2, 1], "SAME")
    y = tf.image.extract_image_patches(x, *args)
    value = np.random.RandomState(1).uniform(-1, 1, (2, 5, 4, 2))
    weights = np.random.RandomState(2).uniform(-1, 1, reference(value, *args).shape)
    grad = run(tf.gradients(tf.reduce_sum(y * weights), x)[0], {x: value})
    # sum(patches(x) * w) is linear in x: its gradient at e_i is reference(e_i) . w
    want = np.zeros_like(value)
    for idx in np.ndindex(value.shape):
        unit = np.zeros_like(value)
        unit[idx] = 1
        want[idx] = np.sum(reference(unit, *args) * weights)
    np.testing.assert_allclose(grad, want, atol=1e-12)


def test_argument_errors():
    with pytest.raises(ValueError, match="ksizes must be"):
        tf.extract_image_patches(X, [2, 2, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1], "SAME")
    with pytest.raises(ValueError, match="strides must be positive"):
        tf.extract_image_patches(X, [1, 2, 2, 1], [1, 0, 1, 1], [1, 1, 1, 1], "SAME")
    with pytest.raises(ValueError):
        tf.extract_image_patches(X, [1, 2, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1], "FULL")
    with pytest.raises(ValueError, match="padding"):
        tf.extract_image_patches(X, [1, 2, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1])
    with pytest.raises(ValueError):
        tf.extract_image_patches(X[0], [1, 2, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1], "SAME")


def test_aliases():
    assert tf.image.extract_image_patches is tf.extract_image_patches
    y = tf.image.extract_image_patches(X, sizes=[1, 5, 5, 1], strides=[1, 1, 1, 1],
                                       rates=[1, 1, 1, 1], padding="VALID")
    np.testing.assert_array_equal(run(y), X.reshape(1, 1, 1, 25))
