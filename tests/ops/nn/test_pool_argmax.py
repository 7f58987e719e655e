"""MaxPoolWithArgmax and its gradient ops; tf.nn.pool, max_pool_v2, avg_pool_v2."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from op_helpers import gradient_case as _case
from op_helpers import graph, run  # noqa: F401 (graph: autouse fixture)

import tensorflux as tf
from tensorflux.ops.nn import pool_argmax as pool_argmax_ops

COVERED_OPS = {"MaxPoolWithArgmax", "MaxPoolGradWithArgmax", "MaxPoolGradGradWithArgmax"}


def _geometry(size, k, s, padding):
    if padding == "SAME":
        out = -(-size // s)
        return out, max(0, (out - 1) * s + k - size) // 2
    return (size - k) // s + 1, 0


def argmax_ref(x, ksize, strides, padding, include_batch):
    """(pooled, argmax) by scanning each window for its first maximum."""
    n, h, w, c = x.shape
    (oh, top), (ow, left) = (_geometry(h, ksize[0], strides[0], padding),
                             _geometry(w, ksize[1], strides[1], padding))
    out = np.zeros((n, oh, ow, c), x.dtype)
    arg = np.zeros((n, oh, ow, c), np.int64)
    for b, i, j, ch in itertools.product(range(n), range(oh), range(ow), range(c)):
        best, where = None, None
        for di, dj in itertools.product(range(ksize[0]), range(ksize[1])):
            y, xx = i * strides[0] + di - top, j * strides[1] + dj - left
            if 0 <= y < h and 0 <= xx < w and (best is None or x[b, y, xx, ch] > best):
                best, where = x[b, y, xx, ch], (y * w + xx) * c + ch
        out[b, i, j, ch] = best
        arg[b, i, j, ch] = where + (b * h * w * c if include_batch else 0)
    return out, arg


TIES = np.array([[1, 3, 3, 1], [3, 0, 2, 3], [1, 1, 1, 1], [1, 1, 1, 1]],
                np.float32).reshape(1, 4, 4, 1).repeat(2, axis=0)
X = np.random.RandomState(0).randint(-5, 5, (2, 5, 6, 3)).astype(np.float32)


@pytest.mark.parametrize("x", [TIES, X], ids=["ties", "random"])
@pytest.mark.parametrize("ksize,strides,padding", [
    ((2, 2), (2, 2), "SAME"), ((3, 3), (2, 2), "SAME"), ((2, 3), (1, 2), "VALID")])
@pytest.mark.parametrize("include_batch", [False, True])
def test_max_pool_with_argmax(x, ksize, strides, padding, include_batch):
    y, arg = tf.nn.max_pool_with_argmax(x, [1, *ksize, 1], [1, *strides, 1], padding,
                                        include_batch_in_index=include_batch)
    expected_y, expected_arg = argmax_ref(x, ksize, strides, padding, include_batch)
    y_v, arg_v = run([y, arg])
    assert arg.dtype == tf.int64 and arg_v.dtype == np.int64
    assert y.shape.as_list() == list(expected_y.shape) == arg.shape.as_list()
    np.testing.assert_array_equal(y_v, expected_y)
    np.testing.assert_array_equal(arg_v, expected_arg)


def test_gradient_routes_to_argmax():
    x = tf.constant(X)
    y, arg = tf.nn.max_pool_with_argmax(x, 3, 2, "SAME", Targmax=tf.int32)
    g = np.random.RandomState(1).randn(2, 3, 3, 3).astype(np.float32)
    dx = tf.gradients(y, x, g)[0]
    assert dx.op.type == "MaxPoolGradWithArgmax"
    arg_v, dx_v = run([arg, dx])
    assert arg_v.dtype == np.int32
    expected = np.zeros(X.size, np.float32)
    flat = arg_v.reshape(2, -1) + np.arange(2)[:, None] * X[0].size
    np.add.at(expected, flat.reshape(-1), g.reshape(-1))
    np.testing.assert_allclose(dx_v, expected.reshape(X.shape), rtol=1e-6)


def test_grad_grad_reads_argmax():
    _, arg = tf.nn.max_pool_with_argmax(X, 2, 2, "VALID", include_batch_in_index=True)
    gg = np.arange(X.size, dtype=np.float32).reshape(X.shape)
    out = pool_argmax_ops.MaxPoolGradGradWithArgmax(
        X, gg, arg, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID",
        include_batch_in_index=True)
    arg_v, out_v = run([arg, out])
    np.testing.assert_array_equal(out_v, arg_v.astype(np.float32))
    assert out.shape.as_list() == [2, 2, 3, 3]


def test_argmax_errors():
    with pytest.raises(ValueError, match="NHWC"):
        tf.nn.max_pool_with_argmax(X, 2, 2, "SAME", data_format="NCHW")
    with pytest.raises(ValueError, match="ksize"):
        tf.nn.max_pool_with_argmax(X, [2, 2, 2, 1], 2, "SAME")
    bad = pool_argmax_ops.MaxPoolGradWithArgmax(
        X, np.ones((2, 1, 1, 3), np.float32), np.full((2, 1, 1, 3), 10 ** 6, np.int64),
        ksize=[1, 5, 6, 1], strides=[1, 1, 1, 1], padding="VALID")
    with pytest.raises(tf.errors.InvalidArgumentError, match="argmax"):
        run(bad)


@settings(max_examples=15, deadline=None)
@given(h=st.integers(1, 5), w=st.integers(1, 5), k=st.integers(1, 3), s=st.integers(1, 3),
       padding=st.sampled_from(["SAME", "VALID"]), include_batch=st.booleans())
def test_argmax_hypothesis(h, w, k, s, padding, include_batch):
    if padding == "VALID" and (h < k or w < k):
        return
    x = np.random.RandomState(h * 10 + w).randint(-3, 3, (2, h, w, 2)).astype(np.float64)
    with tf.Graph().as_default():
        outs = tf.nn.max_pool_with_argmax(x, k, s, padding,
                                          include_batch_in_index=include_batch)
        y_v, arg_v = run(list(outs))
    expected_y, expected_arg = argmax_ref(x, (k, k), (s, s), padding, include_batch)
    np.testing.assert_array_equal(y_v, expected_y)
    np.testing.assert_array_equal(arg_v, expected_arg)


# -- tf.nn.pool, max_pool_v2, avg_pool_v2 ------------------------------------------------------


def dilated_pool_ref(x, window, rates, kind):
    """VALID dilated pooling of a channels-last 2-D input."""
    n, h, w, c = x.shape
    oh, ow = h - (window[0] - 1) * rates[0], w - (window[1] - 1) * rates[1]
    out = np.zeros((n, oh, ow, c), x.dtype)
    for i, j in itertools.product(range(oh), range(ow)):
        patch = x[:, i:i + (window[0] - 1) * rates[0] + 1:rates[0],
                  j:j + (window[1] - 1) * rates[1] + 1:rates[1]]
        out[:, i, j] = patch.max(axis=(1, 2)) if kind == "MAX" else patch.mean(axis=(1, 2))
    return out


@pytest.mark.parametrize("kind", ["MAX", "AVG"])
@pytest.mark.parametrize("rates", [(2, 2), (1, 3), (3, 1)])
def test_pool_dilated(kind, rates):
    x = -np.arange(2 * 7 * 8 * 2, dtype=np.float32).reshape(2, 7, 8, 2) % 11
    y = tf.nn.pool(x, [2, 2], kind, "VALID", dilation_rate=rates)
    expected = dilated_pool_ref(x, (2, 2), rates, kind)
    np.testing.assert_allclose(run(y), expected, rtol=1e-6)
    assert y.shape.is_compatible_with(expected.shape)


def test_pool_dilated_channels_first_and_gradient():
    x = tf.constant(np.random.RandomState(2).randn(1, 2, 6, 5))
    y = tf.nn.pool(x, [2, 2], "AVG", "VALID", dilations=[2, 1], data_format="NCHW")
    dx = tf.gradients(y, x)[0]
    y_v, dx_v = run([y, dx])
    x_v = run(x)
    expected = np.moveaxis(dilated_pool_ref(np.moveaxis(x_v, 1, -1), (2, 2), (2, 1), "AVG"),
                           -1, 1)
    np.testing.assert_allclose(y_v, expected, rtol=1e-12)
    counts = np.zeros((6, 5))
    for i, j in itertools.product(range(4), range(4)):
        counts[[i, i + 2], j:j + 2] += 0.25
    np.testing.assert_allclose(dx_v, np.broadcast_to(counts, (1, 2, 6, 5)), rtol=1e-12)


def test_pool_dilated_1d_and_3d():
    x1 = np.arange(20.0).reshape(1, 10, 2)
    x3 = np.random.RandomState(0).randn(1, 5, 6, 5, 1)
    y1 = tf.nn.pool(x1, [3], "MAX", "VALID", dilation_rate=[2])
    y3 = tf.nn.pool(x3, [2, 2, 2], "AVG", "VALID", dilation_rate=[2, 1, 2])
    v1, v3 = run([y1, y3])
    np.testing.assert_array_equal(v1, x1[:, 4:10])
    expected = np.zeros((1, 3, 5, 3, 1))
    for i, j, k in itertools.product(range(3), range(5), range(3)):
        expected[0, i, j, k, 0] = x3[0, [i, i + 2]][:, j:j + 2][:, :, [k, k + 2]].mean()
    np.testing.assert_allclose(v3, expected, rtol=1e-12)
    assert y3.shape.as_list() == [1, 3, 5, 3, 1]


def test_pool_plain_ranks():
    x1 = np.random.RandomState(3).randn(2, 7, 3)
    y1 = tf.nn.pool(x1, [3], "MAX", "SAME", strides=[2])
    x2 = np.random.RandomState(4).randn(2, 5, 6, 3)
    y2 = tf.nn.pool(x2, [2, 3], "AVG", "VALID", strides=[1, 3])
    x3 = np.random.RandomState(5).randn(1, 4, 4, 4, 2)
    y3 = tf.nn.pool(x3, [2, 2, 2], "AVG", "SAME", strides=[2, 2, 2])
    v1, v2, v3 = run([y1, y2, y3])
    padded = np.pad(x1, [(0, 0), (1, 1), (0, 0)], constant_values=-np.inf)
    np.testing.assert_array_equal(v1, np.stack([padded[:, i:i + 3].max(1) for i in (0, 2, 4, 6)],
                                                axis=1))
    np.testing.assert_allclose(v2[:, 0, 1], x2[:, 0:2, 3:6].mean(axis=(1, 2)))
    np.testing.assert_allclose(v3[0, 1, 0, 1], x3[0, 2:4, 0:2, 2:4].mean(axis=(0, 1, 2)))
    assert y1.shape.as_list() == [2, 4, 3] and y3.shape.as_list() == [1, 2, 2, 2, 2]


def test_pool_v2_dispatch():
    x1 = np.arange(12, dtype=np.float32).reshape(1, 6, 2)
    x2 = np.arange(32, dtype=np.float32).reshape(2, 4, 4, 1)
    x3 = np.arange(64, dtype=np.float32).reshape(1, 4, 4, 4, 1)
    outs = [tf.nn.max_pool_v2(x1, 2, 2, "VALID"), tf.nn.avg_pool_v2(x1, 3, 3, "VALID"),
            tf.nn.max_pool_v2(x2, [2, 2], 2, "SAME"), tf.nn.avg_pool_v2(x3, 2, 2, "VALID"),
            tf.nn.max_pool_v2(np.moveaxis(x2, -1, 1), 2, 2, "SAME", data_format="NCHW")]
    v = run(outs)
    np.testing.assert_array_equal(v[0], x1.reshape(1, 3, 2, 2).max(2))
    np.testing.assert_allclose(v[1], x1.reshape(1, 2, 3, 2).mean(2))
    np.testing.assert_array_equal(v[2], x2.reshape(2, 2, 2, 2, 2, 1).max(axis=(2, 4)))
    np.testing.assert_allclose(v[3], x3.reshape(1, 2, 2, 2, 2, 2, 2, 1).mean(axis=(2, 4, 6)))
    np.testing.assert_array_equal(v[4], np.moveaxis(v[2], -1, 1))
    assert [o.op.type for o in outs[2:4]] == ["MaxPool", "AvgPool3D"]


def test_pool_errors():
    x = np.zeros((1, 6, 6, 1), np.float32)
    with pytest.raises(ValueError, match="SAME"):
        tf.nn.pool(x, [2, 2], "MAX", "SAME", dilation_rate=[2, 2])
    with pytest.raises(ValueError, match="strides"):
        tf.nn.pool(x, [2, 2], "MAX", "VALID", dilation_rate=[2, 2], strides=[2, 2])
    with pytest.raises(ValueError, match="pooling_type"):
        tf.nn.pool(x, [2, 2], "MIN", "VALID")
    with pytest.raises(ValueError, match="rank"):
        tf.nn.pool(x, [2], "MAX", "VALID")
    with pytest.raises(ValueError, match="rank"):
        tf.nn.max_pool_v2(np.zeros((2, 2)), 1, 1, "VALID")


_XC = np.random.RandomState(7).permutation(32).reshape(2, 4, 4, 1) / 9.0
_A = dict(ksize=[1, 2, 2, 1], strides=[1, 2, 1, 1], padding="SAME")


def _with_argmax(tf, g, op):
    x = tf.constant(_XC)
    _, arg = tf.nn.max_pool_with_argmax(x, _A["ksize"], _A["strides"], "SAME")
    return op(x, g, arg, **_A)


GRADIENT_CASES = [
    ("MaxPoolWithArgmax", _case(
        lambda tf, x: tf.nn.max_pool_with_argmax(x, 2, [2, 1], "SAME")[0], [2, 4, 3, 2])),
    ("MaxPoolGradWithArgmax", _case(
        lambda tf, g: _with_argmax(tf, g, pool_argmax_ops.MaxPoolGradWithArgmax),
        [2, 2, 4, 1])),
    ("MaxPoolGradGradWithArgmax", _case(
        lambda tf, g: _with_argmax(tf, g, pool_argmax_ops.MaxPoolGradGradWithArgmax),
        [2, 4, 4, 1])),
]
