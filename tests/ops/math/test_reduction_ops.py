"""Reductions (Sum ... EuclideanNorm), ArgMax/ArgMin, Cumsum/Cumprod and the segment ops.
Each op has rows (value vs NumPy, dtype, static shape); error cases and hypothesis checks of
axis handling."""

import collections

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from op_helpers import check_outputs

import tensorflux as tf
from tensorflux.framework import errors

Row = collections.namedtuple("Row", "op build expected")
X = np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 10.0
M = np.array([[1, 3, -2], [4, 2, 9]], np.int32)
BOOLS = np.array([[True, False], [True, True]])


def _fetch(outputs, feed=None):
    with tf.Session() as sess:
        return sess.run(outputs, feed)


def check(outputs, expected, feed=None, rtol=1e-6):
    check_outputs(outputs, expected, feed, rtol)


def _unknown(value):
    return tf.placeholder_with_default(value, None)


ROWS = [
    Row("Sum", lambda: tf.reduce_sum(X), X.sum()),
    Row("Sum", lambda: tf.reduce_sum(X, axis=[0, -1]), X.sum(axis=(0, 2))),
    Row("Sum", lambda: tf.reduce_sum(X, 1, keepdims=True), X.sum(axis=1, keepdims=True)),
    Row("Sum", lambda: tf.reduce_sum(X, reduction_indices=[2], keep_dims=True),
        X.sum(axis=2, keepdims=True)),
    Row("Sum", lambda: tf.reduce_sum(X, axis=[]), X),
    Row("Sum", lambda: tf.reduce_sum(_unknown(X)), X.sum()),
    Row("Sum", lambda: tf.reduce_sum(tf.constant([100, 100, 100], tf.int8)), np.int8(44)),
    Row("Sum", lambda: tf.reduce_sum(tf.constant([6e4, -6e4, 6e4], tf.float16)),
        np.float16(6e4)),
    Row("Sum", lambda: tf.reduce_sum(X, tf.constant([1], tf.int64)), X.sum(axis=1)),
    Row("Mean", lambda: tf.reduce_mean(X, 0), X.mean(axis=0)),
    Row("Mean", lambda: tf.reduce_mean(tf.constant([-3, -4])), np.int32(-3)),
    Row("Mean", lambda: tf.reduce_mean(tf.constant([100, 100, 100], tf.int8)), np.int8(100)),
    Row("Mean", lambda: tf.reduce_mean(tf.zeros([0])), np.float32(np.nan)),
    Row("Mean", lambda: tf.reduce_mean(tf.zeros([0], tf.int32)), np.int32(0)),
    Row("Max", lambda: tf.reduce_max(X, [1, 2]), X.max(axis=(1, 2))),
    Row("Max", lambda: tf.reduce_max(tf.zeros([0])), np.float32(-np.inf)),
    Row("Max", lambda: tf.reduce_max(tf.zeros([0], tf.int32)), np.int32(-2 ** 31)),
    Row("Max", lambda: tf.reduce_max(np.array([1.0, np.nan], np.float32)), np.float32(np.nan)),
    Row("Min", lambda: tf.reduce_min(M, 1), M.min(axis=1)),
    Row("Min", lambda: tf.reduce_min(tf.zeros([0])), np.float32(np.inf)),
    Row("Prod", lambda: tf.reduce_prod(M, 0), M.prod(axis=0).astype(np.int32)),
    Row("Prod", lambda: tf.reduce_prod(tf.constant([3, 4], tf.int8)), np.int8(12)),
    Row("Prod", lambda: tf.reduce_prod(tf.zeros([0])), np.float32(1)),
    Row("All", lambda: tf.reduce_all(BOOLS, 1), BOOLS.all(axis=1)),
    Row("All", lambda: tf.reduce_all(BOOLS), np.bool_(False)),
    Row("Any", lambda: tf.reduce_any(BOOLS, 0, keepdims=True), BOOLS.any(axis=0, keepdims=True)),
    Row("EuclideanNorm", lambda: tf.reduce_euclidean_norm(X, 1),
        np.sqrt((X.astype(np.float64) ** 2).sum(axis=1)).astype(np.float32)),
    Row("ArgMax", lambda: tf.argmax(M, 1), np.array([1, 2], np.int64)),
    Row("ArgMax", lambda: tf.argmax(M), np.array([1, 0, 1], np.int64)),
    Row("ArgMax", lambda: tf.argmax(M, -1, output_type=tf.int32), np.array([1, 2], np.int32)),
    Row("ArgMax", lambda: tf.argmax(np.array([1.0, np.nan, 3.0]), 0), np.int64(2)),
    Row("ArgMax", lambda: tf.argmax([False, True], 0), np.int64(1)),
    Row("ArgMin", lambda: tf.argmin(M, dimension=1), np.array([2, 1], np.int64)),
    Row("ArgMin", lambda: tf.argmin(np.array([1.0, np.nan, 3.0]), 0), np.int64(0)),
    Row("Cumsum", lambda: tf.cumsum([1, 2, 3]), np.array([1, 3, 6], np.int32)),
    Row("Cumsum", lambda: tf.cumsum([1, 2, 3], exclusive=True, reverse=True),
        np.array([5, 3, 0], np.int32)),
    Row("Cumsum", lambda: tf.cumsum(X, axis=-1, reverse=True),
        np.flip(np.cumsum(np.flip(X, -1), -1), -1)),
    Row("Cumprod", lambda: tf.cumprod([1.0, 2, 3], exclusive=True), np.float32([1, 1, 2])),
    Row("Cumprod", lambda: tf.cumprod(M, 1), np.cumprod(M, 1).astype(np.int32)),
    Row("SegmentSum", lambda: tf.segment_sum([1, 2, 3], [0, 0, 2]),
        np.array([3, 0, 3], np.int32)),
    Row("SegmentSum", lambda: tf.segment_sum(X[0], tf.constant([0, 1, 1], tf.int64)),
        np.stack([X[0, 0], X[0, 1] + X[0, 2]])),
    Row("SegmentMean", lambda: tf.segment_mean([1, 2, 3], [0, 0, 2]),
        np.array([1, 0, 3], np.int32)),
    Row("SegmentMean", lambda: tf.segment_mean([1.0, 2, 3], [0, 0, 2]), np.float32([1.5, 0, 3])),
    Row("SegmentMax", lambda: tf.segment_max([1.0, 2, 3], [0, 0, 2]), np.float32([2, 0, 3])),
    Row("SegmentMin", lambda: tf.segment_min([1, 2, 3], [0, 0, 2]), np.array([1, 0, 3],
                                                                            np.int32)),
    Row("SegmentProd", lambda: tf.segment_prod([2.0, 3, 4], [0, 0, 2]), np.float32([6, 1, 4])),
    Row("UnsortedSegmentSum", lambda: tf.unsorted_segment_sum([1, 2, 3], [2, -1, 0], 4),
        np.array([3, 0, 1, 0], np.int32)),
    Row("UnsortedSegmentSum", lambda: tf.unsorted_segment_sum(M, [[0, 1, 0], [1, 1, 2]], 3),
        np.array([-1, 9, 9], np.int32)),
    Row("UnsortedSegmentMax", lambda: tf.unsorted_segment_max([1.0, 2, 3], [0, 0, 2], 4),
        np.float32([2, np.finfo(np.float32).min, 3, np.finfo(np.float32).min])),
    Row("UnsortedSegmentMin", lambda: tf.unsorted_segment_min([1, 2, 3], [0, 0, 2], 4),
        np.array([1, 2 ** 31 - 1, 3, 2 ** 31 - 1], np.int32)),
    Row("UnsortedSegmentProd", lambda: tf.unsorted_segment_prod([1, 2, 3], [0, 0, 2], 4),
        np.array([2, 1, 3, 1], np.int32)),
]

COVERED_OPS = {row.op for row in ROWS}


@pytest.mark.parametrize("row", ROWS, ids=[f"{r.op}-{i}" for i, r in enumerate(ROWS)])
def test_row(row):
    with tf.Graph().as_default():
        check(row.build(), row.expected)


def test_static_shapes():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3, 4])
        assert tf.reduce_sum(x, 1).shape.as_list() == [None, 4]
        assert tf.reduce_sum(x, [0, -1], keepdims=True).shape.as_list() == [1, 3, 1]
        assert tf.reduce_sum(x).shape.as_list() == []
        assert tf.reduce_max(x, tf.placeholder(tf.int32), keepdims=True).shape.as_list() == \
            [None, None, None]
        assert tf.reduce_max(x, tf.placeholder(tf.int32)).shape.ndims is None
        assert tf.argmax(x, 2).shape.as_list() == [None, 3]
        assert tf.cumsum(x, 1).shape.as_list() == [None, 3, 4]
        assert tf.unsorted_segment_sum(tf.zeros([3, 4]), [0, 1, 0], 5).shape.as_list() == [5, 4]
        assert tf.segment_sum(tf.zeros([3, 4]), [0, 1, 1]).shape.as_list() == [None, 4]


def test_axis_errors():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="Sum.*Invalid reduction dimension 2"):
            tf.reduce_sum(tf.ones([2, 3]), [2])
        with pytest.raises(ValueError, match="both"):
            tf.reduce_sum(tf.ones([2]), axis=0, reduction_indices=0)
        with pytest.raises(ValueError, match="both"):
            tf.reduce_sum(tf.ones([2]), keepdims=True, keep_dims=True)
        axes = tf.placeholder(tf.int32)
        total = tf.reduce_sum(tf.ones([2, 3]), axes)
        with pytest.raises(errors.InvalidArgumentError, match="Invalid reduction dimension"):
            _fetch(total, {axes: [2]})
        with pytest.raises(errors.InvalidArgumentError, match="duplicate"):
            _fetch(total, {axes: [1, -1]})
        with pytest.raises(errors.InvalidArgumentError, match="empty"):
            _fetch(tf.argmax(tf.zeros([0, 3]), 0))
        with pytest.raises(TypeError):
            tf.reduce_sum(tf.constant([True]))
        with pytest.raises(ValueError, match="ArgMax"):
            tf.argmax(tf.ones([2, 3]), 2)


def test_segment_errors():
    with tf.Graph().as_default():
        ids = tf.placeholder(tf.int32)
        with pytest.raises(errors.InvalidArgumentError, match="not increasing"):
            _fetch(tf.segment_sum([1, 2, 3], ids), {ids: [0, 2, 1]})
        with pytest.raises(errors.InvalidArgumentError, match=r"Segment id -1 out of range"):
            _fetch(tf.segment_sum([1, 2, 3], ids), {ids: [-1, 0, 1]})
        with pytest.raises(errors.InvalidArgumentError, match=">= 0"):
            _fetch(tf.segment_sum([1, 2, 3], ids), {ids: [0, 0, -1]})
        with pytest.raises(errors.InvalidArgumentError, match="out of range"):
            _fetch(tf.unsorted_segment_sum([1, 2, 3], ids, 4), {ids: [0, 5, 2]})
        # As TF: a length mismatch is reported when the op runs.
        with pytest.raises(errors.InvalidArgumentError, match="same size as dimension 0"):
            _fetch(tf.segment_sum(tf.zeros([3]), [0, 1]), None)


def test_reduce_logsumexp():
    with tf.Graph().as_default():
        x = np.array([[1000.0, 1000.0], [-np.inf, -np.inf], [0.5, -1.0]])
        outs = [tf.reduce_logsumexp(x, 1), tf.reduce_logsumexp(x, 1, keepdims=True),
                tf.reduce_logsumexp(np.float32([1000, 1000]))]
        a, b, c = _fetch(outs)
    want = np.array([1000 + np.log(2), -np.inf, np.log(np.exp(0.5) + np.exp(-1.0))])
    np.testing.assert_allclose(a, want)
    np.testing.assert_allclose(b, want[:, None])
    assert c.dtype == np.float32 and np.isclose(c, 1000.6931)


def test_variance_and_std():
    x = np.array([[1.0, 2, 4], [3, 5, 9]])
    c = np.array([1 + 1j, -1 - 1j])
    with tf.Graph().as_default():
        outs = [tf.reduce_variance(x, 1), tf.reduce_std(x), tf.reduce_variance(x, 0, True),
                tf.reduce_variance(c)]
        values = _fetch(outs)
    np.testing.assert_allclose(values[0], x.var(1))
    np.testing.assert_allclose(values[1], x.std())
    np.testing.assert_allclose(values[2], x.var(0, keepdims=True))
    assert values[3].dtype == np.float64 and np.isclose(values[3], 2.0)


def test_count_nonzero():
    with tf.Graph().as_default():
        outs = [tf.count_nonzero([1.0, 0, 3]), tf.count_nonzero(["a", ""]),
                tf.count_nonzero(M, axis=1, dtype=tf.int32),
                tf.count_nonzero(np.array([[0, 1], [0, 0]]), keepdims=True)]
        values = _fetch(outs)
    assert values[0] == 2 and values[0].dtype == np.int64
    assert values[1] == 1
    np.testing.assert_array_equal(values[2], [3, 3])
    assert values[2].dtype == np.int32
    np.testing.assert_array_equal(values[3], [[1]])


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_reductions_match_numpy(data):
    x = data.draw(hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=4, max_side=3),
                             elements=st.floats(-5, 5)))
    axes = data.draw(st.lists(st.integers(-x.ndim, x.ndim - 1), unique_by=lambda a: a % x.ndim,
                              max_size=x.ndim))
    keep = data.draw(st.booleans())
    with tf.Graph().as_default():
        fed = tf.placeholder(tf.float64, [None] * x.ndim)
        outs = [tf.reduce_sum(fed, axes, keepdims=keep), tf.reduce_max(x, axes, keepdims=keep),
                tf.reduce_prod(x, axes, keepdims=keep), tf.reduce_mean(x, axes, keepdims=keep)]
        values = _fetch(outs, {fed: x})
        for tensor, value in zip(outs, values):
            assert tensor.shape.is_compatible_with(np.shape(value))
    axis = tuple(a % x.ndim for a in axes)
    np.testing.assert_allclose(values[0], x.sum(axis=axis, keepdims=keep))
    np.testing.assert_allclose(values[1], x.max(axis=axis, keepdims=keep))
    np.testing.assert_allclose(values[2], x.prod(axis=axis, keepdims=keep))
    np.testing.assert_allclose(values[3], x.mean(axis=axis, keepdims=keep))


# -- gradients ----------------------------------------------------------------------------------

def _case(fn, *shapes, low=-2.0, high=2.0, seed=3):
    def build(tf):
        rng = np.random.RandomState(seed)
        xs = [tf.placeholder(tf.float64, s) for s in shapes]
        return fn(tf, *xs), xs, [rng.uniform(low, high, size=s) for s in shapes]

    return build


def _distinct(fn, shape, seed=4):
    """Inputs with distinct values (max/min have no ties)."""

    def build(tf):
        n = int(np.prod(shape))
        value = np.random.RandomState(seed).permutation(n).reshape(shape) * 0.37 - 1.0
        x = tf.placeholder(tf.float64, shape)
        return fn(tf, x), [x], [value]

    return build


def _with_zero(fn, shape):
    def build(tf):
        value = np.random.RandomState(5).uniform(0.5, 1.5, size=shape)
        value.reshape(-1)[1] = 0.0
        x = tf.placeholder(tf.float64, shape)
        return fn(tf, x), [x], [value]

    return build


def _dynamic(tf, x):
    """x with an unknown static shape (differentiable: a Reshape to a fed-default shape)."""
    return tf.reshape(x, tf.placeholder_with_default(x.shape.as_list(), [None]))


GRADIENT_CASES = [
    ("Sum", _case(lambda tf, x: tf.reduce_sum(x, [0, 2]), [2, 3, 2])),
    ("Sum", _case(lambda tf, x: tf.reduce_sum(x, 1, keepdims=True), [2, 3])),
    ("Sum", _case(lambda tf, x: tf.reduce_sum(_dynamic(tf, x), -1), [2, 3])),
    ("Sum", _case(lambda tf, x: tf.reduce_sum(x, tf.placeholder_with_default([1], [None])),
                  [2, 3])),
    ("Mean", _case(lambda tf, x: tf.reduce_mean(x, 1), [2, 3])),
    ("Mean", _case(lambda tf, x: tf.reduce_mean(_dynamic(tf, x)), [2, 3])),
    ("Max", _distinct(lambda tf, x: tf.reduce_max(x, 1), [3, 4])),
    ("Min", _distinct(lambda tf, x: tf.reduce_min(x, [0, 1], keepdims=True), [3, 2])),
    ("Prod", _case(lambda tf, x: tf.reduce_prod(x, [0, 2]), [2, 3, 2], low=0.5)),
    ("Prod", _with_zero(lambda tf, x: tf.reduce_prod(x, 1), [2, 3])),
    ("Prod", _case(lambda tf, x: tf.reduce_prod(_dynamic(tf, x), 0), [3, 2], low=0.5)),
    ("EuclideanNorm", _case(lambda tf, x: tf.reduce_euclidean_norm(x, 1), [2, 3])),
    ("Cumsum", _case(lambda tf, x: tf.cumsum(x, 1, exclusive=True), [2, 3])),
    ("Cumsum", _case(lambda tf, x: tf.cumsum(x, 0, reverse=True), [3, 2])),
    ("Cumprod", _case(lambda tf, x: tf.cumprod(x, 1), [2, 3], low=0.5)),
    ("Cumprod", _case(lambda tf, x: tf.cumprod(x, 0, exclusive=True, reverse=True), [3, 2],
                      low=0.5)),
    ("SegmentSum", _case(lambda tf, x: tf.segment_sum(x, [0, 0, 2]), [3, 2])),
    ("SegmentMean", _case(lambda tf, x: tf.segment_mean(x, [0, 0, 1, 3]), [4, 2])),
    ("SegmentMax", _distinct(lambda tf, x: tf.segment_max(x, [0, 0, 1]), [3, 2])),
    ("SegmentMin", _distinct(lambda tf, x: tf.segment_min(x, [0, 1, 1]), [3, 2])),
    ("SegmentProd", _with_zero(lambda tf, x: tf.segment_prod(x, [0, 0, 1]), [3, 2])),
    ("UnsortedSegmentSum", _case(lambda tf, x: tf.unsorted_segment_sum(x, [2, -1, 0], 3),
                                 [3, 2])),
    ("UnsortedSegmentMax", _distinct(lambda tf, x: tf.unsorted_segment_max(x, [1, 0, 1], 2),
                                     [3, 2])),
    ("UnsortedSegmentMin", _distinct(lambda tf, x: tf.unsorted_segment_min(x, [1, -1, 0], 2),
                                     [3])),
    ("UnsortedSegmentProd", _with_zero(
        lambda tf, x: tf.unsorted_segment_prod(x, [[0, 1, 0], [1, 1, 0]], 2), [2, 3])),
]
