"""Grouped Conv2D (input depth a multiple of the filter's input depth) as TF's GPU kernels
compute it: one convolution per group, against the loop reference and finite differences;
empty inputs through convolution and its backprops."""

import numpy as np
import pytest
from conv_refs import geometry, ref_conv
from hypothesis import given, settings
from hypothesis import strategies as st
from op_helpers import graph, run  # noqa: F401

import tensorflux as tf


def _grouped_ref(x, w, stride, padding):
    groups = x.shape[3] // w.shape[2]
    c, per = w.shape[2], w.shape[3] // groups
    geo = geometry(w.shape[:2], (stride, stride), (1, 1), padding)
    return np.concatenate([ref_conv(x[..., g * c:(g + 1) * c], w[..., g * per:(g + 1) * per],
                                    geo) for g in range(groups)], axis=3)


@settings(max_examples=12, deadline=None)
@given(st.sampled_from([(4, 2, 2), (6, 2, 3), (6, 3, 4), (3, 1, 3)]), st.integers(1, 2),
       st.sampled_from(["SAME", "VALID"]), st.sampled_from(["NHWC", "NCHW"]),
       st.integers(0, 50))
def test_grouped_conv2d_matches_per_group_reference(depths, stride, padding, fmt, seed):
    in_depth, filter_depth, per_group_out = depths
    out_depth = per_group_out * (in_depth // filter_depth)
    rng = np.random.RandomState(seed)
    xv = rng.randn(2, 5, 4, in_depth)
    wv = rng.randn(3, 2, filter_depth, out_depth)
    want = _grouped_ref(xv, wv, stride, padding)
    with tf.Graph().as_default():
        x = tf.constant(xv if fmt == "NHWC" else xv.transpose(0, 3, 1, 2))
        strides = [1, stride, stride, 1] if fmt == "NHWC" else [1, 1, stride, stride]
        y = tf.nn.conv2d(x, tf.constant(wv), strides, padding, data_format=fmt)
        got = run(y)
    if fmt == "NCHW":
        got = got.transpose(0, 2, 3, 1)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("fmt", ["NHWC", "NCHW"])
def test_grouped_conv2d_gradients_finite_differences(fmt):
    rng = np.random.RandomState(1)
    xv, wv = rng.randn(1, 3, 3, 4), rng.randn(2, 2, 2, 4)
    if fmt == "NCHW":
        xv = xv.transpose(0, 3, 1, 2)
    x = tf.placeholder(tf.float64, xv.shape)
    w = tf.placeholder(tf.float64, wv.shape)
    strides = [1, 1, 1, 1]
    y = tf.nn.conv2d(x, w, strides, "SAME", data_format=fmt)
    weights = tf.constant(rng.randn(*y.shape.as_list()))
    loss = tf.reduce_sum(y * weights)
    gx, gw = tf.gradients(loss, [x, w])
    with tf.Session() as sess:
        feed = {x: xv, w: wv}
        agx, agw = sess.run([gx, gw], feed)
        for value, analytic, key in ((xv, agx, x), (wv, agw, w)):
            numeric = np.zeros(value.size)
            for i in range(value.size):
                for sign in (1, -1):
                    bumped = value.copy().reshape(-1)
                    bumped[i] += sign * 1e-6
                    numeric[i] += sign * sess.run(loss, {**feed, key: bumped.reshape(
                        value.shape)}) / 2e-6
            np.testing.assert_allclose(analytic.reshape(-1), numeric, rtol=1e-5, atol=1e-6)


def test_grouped_conv2d_shape_errors():
    with pytest.raises(ValueError, match="not a multiple of input depth of filter"):
        tf.nn.conv2d(tf.zeros([1, 3, 3, 5]), tf.zeros([1, 1, 2, 4]), [1, 1, 1, 1], "SAME")
    with pytest.raises(ValueError, match="not a multiple of the number of groups"):
        tf.nn.conv2d(tf.zeros([1, 3, 3, 4]), tf.zeros([1, 1, 2, 3]), [1, 1, 1, 1], "SAME")
    p = tf.placeholder(tf.float32, [1, 3, 3, None])
    y = tf.nn.conv2d(p, tf.zeros([1, 1, 2, 4]), [1, 1, 1, 1], "SAME")
    with pytest.raises(tf.errors.InvalidArgumentError, match="not a multiple"):
        run(y, {p: np.zeros([1, 3, 3, 5])})


def test_empty_batch_conv_and_backprops():
    x = tf.zeros([0, 4, 4, 2])
    w = tf.ones([3, 3, 2, 5])
    g = tf.zeros([0, 4, 4, 5])
    y = tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME")
    dx = tf.nn.conv2d_backprop_input([0, 4, 4, 2], w, g, [1, 1, 1, 1], "SAME")
    dw = tf.nn.conv2d_backprop_filter(x, [3, 3, 2, 5], g, [1, 1, 1, 1], "SAME")
    vy, vdx, vdw = run([y, dx, dw])
    assert vy.shape == (0, 4, 4, 5) and vdx.shape == (0, 4, 4, 2)
    np.testing.assert_array_equal(vdw, np.zeros([3, 3, 2, 5]))


def test_pad_empty():
    got = run([tf.pad(tf.zeros([0, 3]), [[1, 1], [0, 0]]),
               tf.pad(tf.zeros([0, 0]), [[0, 0], [2, 0]], constant_values=1.0)])
    np.testing.assert_array_equal(got[0], np.zeros([2, 3]))
    assert got[1].shape == (0, 2)
