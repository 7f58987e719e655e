"""Pooling configurations TF supports: depth-window max pool, MaxPoolV2 (ksize/strides as
tensors) and its gradients, constant-tensor ksize in tf.nn.max_pool / avg_pool."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from op_helpers import gradient_case, graph, run  # noqa: F401

import tensorflux as tf
from tensorflux.ops.nn import pooling

COVERED_OPS = {"MaxPoolV2", "MaxPoolGradV2"}


def _max_pool_ref(x, k, s, padding):
    """NHWC max pool by loops over output positions."""
    n, h, w, c = x.shape
    if padding == "VALID":
        oh, ow, ph, pw = (h - k[0]) // s[0] + 1, (w - k[1]) // s[1] + 1, 0, 0
    else:
        oh, ow = -(-h // s[0]), -(-w // s[1])
        ph = max(0, (oh - 1) * s[0] + k[0] - h) // 2
        pw = max(0, (ow - 1) * s[1] + k[1] - w) // 2
    out = np.full((n, oh, ow, c), -np.inf, x.dtype)
    for i in range(oh):
        for j in range(ow):
            r0, c0 = i * s[0] - ph, j * s[1] - pw
            win = x[:, max(r0, 0):max(r0 + k[0], 0), max(c0, 0):max(c0 + k[1], 0), :]
            out[:, i, j, :] = win.max(axis=(1, 2))
    return out


@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
@pytest.mark.parametrize("k", [1, 2, 3])
def test_depth_window_max_pool(data_format, k):
    v = np.random.RandomState(k).randn(2, 3, 3, 6)
    x = v if data_format == "NHWC" else v.transpose(0, 3, 1, 2)
    ksize = [1, 1, 1, k] if data_format == "NHWC" else [1, k, 1, 1]
    y = tf.nn.max_pool(tf.constant(x), ksize, ksize, "VALID", data_format=data_format)
    want = v.reshape(2, 3, 3, 6 // k, k).max(-1)
    if data_format == "NCHW":
        want = want.transpose(0, 3, 1, 2)
    assert y.shape.as_list() == list(want.shape)
    np.testing.assert_array_equal(run(y), want)


@pytest.mark.parametrize("ksize,strides,message", [
    ([1, 2, 1, 2], [1, 1, 1, 2], "exactly one of pooling across depth"),
    ([1, 1, 1, 2], [1, 1, 1, 1], "depth stride"),
    ([1, 1, 1, 4], [1, 1, 1, 4], "evenly divide")])
def test_depth_window_errors_come_from_the_kernel(ksize, strides, message):
    # As in TF, the graph is built (depth and spatial dims unknown) and the kernel refuses.
    y = tf.nn.max_pool(tf.zeros([1, 2, 2, 6]), ksize, strides, "VALID")
    assert y.shape.as_list() == [1, None, None, None] or message == "evenly divide"
    with pytest.raises(tf.errors.UnimplementedError, match=message):
        run(y)


def test_batch_pooling_is_refused_when_the_kernel_is_built():
    # TF's kernel constructor check: the input's producer never runs.
    for pool in (tf.nn.max_pool, tf.nn.avg_pool):
        p = tf.placeholder(tf.float32)
        y = pool(tf.py_func(lambda v: pytest.fail("ran"), [p], tf.float32), [1, 1, 1, 1],
                 [2, 1, 1, 1], "SAME")
        with pytest.raises(tf.errors.UnimplementedError, match="batch dimension"):
            run(y, {p: np.zeros([2, 2, 2, 1], np.float32)})


def test_depth_window_fed_depth():
    p = tf.placeholder(tf.float32, [1, 2, 2, None])
    y = tf.nn.max_pool(p, [1, 1, 1, 4], [1, 1, 1, 4], "VALID")
    with pytest.raises(tf.errors.UnimplementedError, match="evenly divide"):
        run(y, {p: np.zeros([1, 2, 2, 6])})


@settings(max_examples=15, deadline=None)
@given(st.integers(1, 3), st.integers(1, 3), st.integers(1, 2), st.integers(1, 2),
       st.sampled_from(["SAME", "VALID"]), st.integers(0, 100))
def test_max_pool_v2_matches_reference(kh, kw, sh, sw, padding, seed):
    v = np.random.RandomState(seed).randn(2, 4, 5, 3)
    with tf.Graph().as_default():
        k = tf.placeholder(tf.int32, [4])
        s = tf.placeholder(tf.int32, [4])
        y = pooling.MaxPoolV2(tf.constant(v), k, s, padding=padding)
        assert y.shape.ndims == 4
        got = run(y, {k: [1, kh, kw, 1], s: [1, sh, sw, 1]})
    np.testing.assert_array_equal(got, _max_pool_ref(v, (kh, kw), (sh, sw), padding))


def test_max_pool_v2_static_shape_and_gradient_match_max_pool():
    v = np.random.RandomState(0).randn(2, 5, 5, 4)
    x = tf.constant(v)
    y = pooling.MaxPoolV2(x, [1, 2, 2, 1], [1, 2, 2, 1], padding="SAME")
    ref = tf.nn.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
    assert y.shape.as_list() == [2, 3, 3, 4]
    (g,) = tf.gradients(tf.reduce_sum(y * y), x)
    (g_ref,) = tf.gradients(tf.reduce_sum(ref * ref), x)
    got = run([y, ref, g, g_ref])
    np.testing.assert_array_equal(got[0], got[1])
    np.testing.assert_allclose(got[2], got[3])


def test_tensor_ksize_in_wrappers():
    v = np.arange(2 * 4 * 4 * 2, dtype=np.float32).reshape(2, 4, 4, 2)
    x = tf.constant(v)
    ks, st_ = tf.constant([1, 2, 2, 1]), tf.constant([1, 2, 2, 1])
    m, a = run([tf.nn.max_pool(x, ks, st_, "VALID"), tf.nn.avg_pool(x, ks, st_, "VALID")])
    blocks = v.reshape(2, 2, 2, 2, 2, 2)
    np.testing.assert_array_equal(m, blocks.max(axis=(2, 4)))
    np.testing.assert_allclose(a, blocks.mean(axis=(2, 4)))
    with pytest.raises(TypeError, match="ksize"):
        tf.nn.avg_pool(x, tf.placeholder(tf.int32, [4]), [1, 1, 1, 1], "VALID")


def test_max_pool_v2_bad_ksize_length():
    with pytest.raises(ValueError, match="4 elements"):
        pooling.MaxPoolV2(tf.zeros([1, 2, 2, 1]), [1, 2, 2], [1, 1, 1, 1], padding="VALID")


def _v2(tf, x):
    return pooling.MaxPoolV2(x, tf.constant([1, 2, 2, 1]), tf.constant([1, 1, 1, 1]),
                             padding="VALID")


def _grad_v2(tf, x, g):
    y = _v2(tf, x)
    return pooling.MaxPoolGradV2(x, y, g, tf.constant([1, 2, 2, 1]), tf.constant([1, 1, 1, 1]),
                                 padding="VALID")


GRADIENT_CASES = [
    ("MaxPoolV2", gradient_case(_v2, (1, 3, 3, 2))),
    ("MaxPoolGradV2", gradient_case(_grad_v2, (1, 3, 3, 2), (1, 2, 2, 2))),
]
