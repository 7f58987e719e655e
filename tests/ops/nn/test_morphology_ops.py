"""Dilation2D (tf.nn.dilation2d, tf.nn.erosion2d) and its input/filter gradients."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from op_helpers import graph  # noqa: F401 - the autouse fixture

import tensorflux as tf
from tensorflux.framework import errors

COVERED_OPS = {"Dilation2D", "Dilation2DBackpropInput", "Dilation2DBackpropFilter"}


def _run(fetches):
    with tf.Session() as sess:
        return sess.run(fetches)


def _reference(x, f, strides, rates, padding):
    """Scalar-loop dilation with the argmax positions (first maximum in tap order)."""
    n, h, w, c = x.shape
    kh, kw, _ = f.shape
    sh, sw, rh, rw = strides[1], strides[2], rates[1], rates[2]
    eh, ew = (kh - 1) * rh + 1, (kw - 1) * rw + 1
    if padding == "SAME":
        oh, ow = -(-h // sh), -(-w // sw)
        top = max((oh - 1) * sh + eh - h, 0) // 2
        left = max((ow - 1) * sw + ew - w, 0) // 2
    else:
        oh, ow, top, left = (h - eh) // sh + 1, (w - ew) // sw + 1, 0, 0
    out = np.zeros((n, oh, ow, c), x.dtype)
    gx, gf = np.zeros(x.shape), np.zeros(f.shape)
    for b in range(n):
        for y in range(oh):
            for xx in range(ow):
                for ch in range(c):
                    # No tap inside the input: the lowest value, gradient to the window's
                    # first in-bounds corner and filter tap (0, 0) (as TF).
                    best = np.finfo(x.dtype).min
                    where = (max(y * sh - top, 0), max(xx * sw - left, 0), 0, 0)
                    found = False
                    for i in range(kh):
                        for j in range(kw):
                            r, q = y * sh + i * rh - top, xx * sw + j * rw - left
                            if 0 <= r < h and 0 <= q < w:
                                v = x[b, r, q, ch] + f[i, j, ch]
                                if not found or v > best:
                                    best, where, found = v, (r, q, i, j), True
                    out[b, y, xx, ch] = best
                    gx[b, where[0], where[1], ch] += 1
                    gf[where[2], where[3], ch] += 1
    return out, gx, gf


CONFIGS = [([1, 1, 1, 1], [1, 1, 1, 1], "SAME"), ([1, 2, 3, 1], [1, 1, 1, 1], "VALID"),
           ([1, 2, 1, 1], [1, 2, 3, 1], "SAME"), ([1, 1, 2, 1], [1, 2, 1, 1], "VALID")]
# TF: cos-weighted checksums of [dilation, erosion, d/dx dilation, d/df dilation, d/dx
# erosion, d/df erosion] for the inputs built in `test_matches_tensorflow`.
TF_CHECKSUMS = [
    [-10.16484627, -7.26755905, 14.30898794, 14.97179438, 6.06608192, -1.74872625],
    [2.4545102, 3.60814813, 0.75585913, -7.70451621, 5.04075781, 9.42021032],
    [3.83853215, -4.9489453, 18.98845114, -5.68766346, 2.69220296, -2.27148611],
    [3.61705814, 1.33958612, 4.99898849, 0.35013398, -2.41780205, 2.59946707],
]


def test_matches_tensorflow():
    rng = np.random.RandomState(0)
    x = rng.randn(2, 7, 6, 3)
    f = rng.randn(3, 2, 3)
    for (strides, rates, padding), expected in zip(CONFIGS, TF_CHECKSUMS):
        xt, ft = tf.constant(x), tf.constant(f)
        y = tf.nn.dilation2d(xt, ft, strides, rates, padding)
        e = tf.nn.erosion2d(xt, ft, strides, rates, padding)
        w = tf.constant(rng.randn(*y.shape.as_list()))
        grads = tf.gradients(tf.reduce_sum(y * w), [xt, ft]) + \
            tf.gradients(tf.reduce_sum(e * w), [xt, ft])
        values = _run([y, e] + grads)
        sums = [np.sum(v * np.cos(np.arange(v.size)).reshape(v.shape)) for v in values]
        np.testing.assert_allclose(sums, expected, atol=1e-7)


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 2), st.integers(1, 6), st.integers(1, 6), st.integers(1, 3),
       st.integers(1, 3), st.integers(1, 3), st.sampled_from([1, 2]), st.sampled_from([1, 2]),
       st.sampled_from([1, 2]), st.sampled_from(["SAME", "VALID"]), st.integers(0, 10**6))
def test_matches_loop_reference(n, h, w, c, kh, kw, stride, rate_h, rate_w, padding, seed):
    if padding == "VALID" and (h < (kh - 1) * rate_h + 1 or w < (kw - 1) * rate_w + 1):
        return
    rng = np.random.RandomState(seed)
    x, f = rng.randn(n, h, w, c), rng.randn(kh, kw, c)
    strides, rates = [1, stride, stride, 1], [1, rate_h, rate_w, 1]
    out, gx, gf = _reference(x, f, strides, rates, padding)
    with tf.Graph().as_default():
        xt, ft = tf.constant(x), tf.constant(f)
        y = tf.nn.dilation2d(xt, ft, strides, rates, padding)
        assert y.shape.as_list() == list(out.shape)
        values = _run([y] + tf.gradients(y, [xt, ft]))
    np.testing.assert_allclose(values[0], out)
    np.testing.assert_allclose(values[1], gx)
    np.testing.assert_allclose(values[2], gf)


def test_window_outside_the_input_gives_lowest_value():
    x = tf.constant(np.array([[[[3.0]], [[5.0]]]]))
    f = tf.constant(np.array([[[1.0]], [[2.0]]]))
    y = tf.nn.dilation2d(x, f, [1, 1, 1, 1], [1, 3, 1, 1], "SAME")
    y_v, gx, gf = _run([y] + tf.gradients(y, [x, f]))
    np.testing.assert_array_equal(y_v.ravel(), [np.finfo(np.float64).min, 4.0])  # TF
    np.testing.assert_array_equal(gx.ravel(), [2.0, 0.0])
    np.testing.assert_array_equal(gf.ravel(), [2.0, 0.0])


def test_integer_types_ties_and_aliases():
    x = np.arange(16, dtype=np.int32).reshape(1, 4, 4, 1)
    f = np.array([[[1], [0]], [[2], [-5]]], np.int32)
    y = tf.nn.dilation2d(x, filters=f, strides=[1, 1, 1, 1], dilations=[1, 1, 1, 1],
                         padding="SAME")
    assert y.dtype == tf.int32
    np.testing.assert_array_equal(_run(y)[0, :, :, 0], [[6, 7, 8, 9], [10, 11, 12, 13],
                                                        [14, 15, 16, 17], [13, 14, 15, 16]])
    # Ties go to the first tap (TF): every output picks filter tap (0, 0).
    xt, ft = tf.constant(np.zeros((1, 3, 3, 1))), tf.constant(np.zeros((2, 2, 1)))
    gx, gf = _run(tf.gradients(tf.nn.dilation2d(xt, ft, [1, 1, 1, 1], [1, 1, 1, 1], "SAME"),
                               [xt, ft]))
    np.testing.assert_array_equal(gx, np.ones((1, 3, 3, 1)))
    np.testing.assert_array_equal(gf[:, :, 0], [[9, 0], [0, 0]])


def test_shapes_and_errors():
    x = tf.placeholder(tf.float32, [None, 8, None, 3])
    y = tf.nn.dilation2d(x, tf.zeros([3, 3, 3]), [1, 2, 2, 1], [1, 1, 1, 1], "VALID")
    assert y.shape.as_list() == [None, 3, None, 3]
    op = tf.get_default_graph().get_operation_by_name(y.op.name)
    assert op.type == "Dilation2D"
    with pytest.raises(ValueError, match="strides"):
        tf.nn.dilation2d(x, tf.zeros([3, 3, 3]), [2, 1, 1, 1], [1, 1, 1, 1], "SAME")
    with pytest.raises(ValueError, match="depth"):
        tf.nn.dilation2d(x, tf.zeros([3, 3, 2]), [1, 1, 1, 1], [1, 1, 1, 1], "SAME")
    with pytest.raises(ValueError, match="Negative dimension"):
        tf.nn.dilation2d(tf.zeros([1, 2, 2, 1]), tf.zeros([3, 3, 1]), [1, 1, 1, 1],
                         [1, 1, 1, 1], "VALID")
    with pytest.raises(ValueError, match="only one"):
        tf.nn.dilation2d(x, tf.zeros([3, 3, 3]), [1, 1, 1, 1], [1, 1, 1, 1], "SAME",
                         filters=tf.zeros([3, 3, 3]))
    fed = tf.placeholder_with_default(np.zeros((1, 4, 4, 2)), [None, None, None, None])
    with pytest.raises(errors.InvalidArgumentError, match="same depth"):
        _run(tf.nn.dilation2d(fed, np.zeros((2, 2, 3)), [1, 1, 1, 1], [1, 1, 1, 1], "SAME"))


def _case(strides, rates, padding, x_shape, f_shape, seed=0):
    def build(tf):
        rng = np.random.RandomState(seed)
        x = tf.placeholder(tf.float64, x_shape)
        f = tf.placeholder(tf.float64, f_shape)
        y = tf.nn.dilation2d(x, f, strides, rates, padding)
        return y, [x, f], [rng.randn(*x_shape), rng.randn(*f_shape)]

    return build


def _erosion_case():
    def build(tf):
        rng = np.random.RandomState(1)
        x = tf.placeholder(tf.float64, [1, 5, 4, 2])
        f = tf.placeholder(tf.float64, [2, 3, 2])
        y = tf.nn.erosion2d(x, f, [1, 1, 2, 1], [1, 2, 1, 1], "SAME")
        return y, [x, f], [rng.randn(1, 5, 4, 2), rng.randn(2, 3, 2)]

    return build


GRADIENT_CASES = [
    ("Dilation2D", _case([1, 1, 1, 1], [1, 1, 1, 1], "SAME", [2, 4, 5, 2], [2, 3, 2])),
    ("Dilation2D", _case([1, 2, 1, 1], [1, 1, 2, 1], "VALID", [1, 6, 6, 3], [3, 2, 3])),
    ("Dilation2D", _erosion_case()),
]
