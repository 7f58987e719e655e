"""sort/argsort, searchsorted (LowerBound/UpperBound), Roll, repeat, ListDiff, UnravelIndex."""

import collections

import numpy as np
import pytest
from array_checks import _fetch, check
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from op_helpers import gradient_case as _case
from op_helpers import graph  # noqa: F401 (graph: autouse fixture)

import tensorflux as tf
from tensorflux.framework import errors

Row = collections.namedtuple("Row", "op build expected")
X = np.array([[3, 1, 2, 1], [0, 5, 5, -1]], np.float32)
SORTED = np.array([[1, 3, 3, 5], [0, 0, 1, 2]], np.int32)
QUERY = np.array([[3, 0, 6], [0, 1, 3]], np.int32)
I32 = np.array([3, -2**31, 2**31 - 1, 1], np.int32)
U8 = np.array([3, 0, 255, 7], np.uint8)


def _rows_search(side):
    return np.stack([np.searchsorted(s, q, side=side) for s, q in zip(SORTED, QUERY)])


ROWS = [
    Row("TopKV2", lambda: tf.sort(X), np.sort(X, axis=-1)),
    Row("TopKV2", lambda: tf.sort(X, direction="DESCENDING"), -np.sort(-X, axis=-1)),
    Row("TopKV2", lambda: tf.sort(X, axis=0), np.sort(X, axis=0)),
    Row("TopKV2", lambda: tf.sort(I32), np.sort(I32)),
    Row("TopKV2", lambda: tf.sort(U8), np.sort(U8)),
    Row("TopKV2", lambda: tf.argsort(X), np.argsort(X, axis=-1, kind="stable").astype(np.int32)),
    Row("TopKV2", lambda: tf.argsort(X, direction="DESCENDING"),
        np.array([[0, 2, 1, 3], [1, 2, 0, 3]], np.int32)),
    Row("LowerBound", lambda: tf.searchsorted(SORTED, QUERY), _rows_search("left")),
    Row("UpperBound", lambda: tf.searchsorted(SORTED, QUERY, side="right", out_type=tf.int64),
        _rows_search("right").astype(np.int64)),
    Row("LowerBound", lambda: tf.searchsorted([0.5, 1.5], [[0.0, 2.0]][0]),
        np.array([0, 2], np.int32)),
    Row("Roll", lambda: tf.roll(np.arange(5), 2, 0), np.roll(np.arange(5), 2)),
    Row("Roll", lambda: tf.roll(np.arange(10.0).reshape(2, 5), [1, -2, 1], [0, 1, 0]),
        np.roll(np.arange(10.0).reshape(2, 5), -2, 1)),
    Row("Roll", lambda: tf.roll(X, tf.constant(1, tf.int64), -1), np.roll(X, 1, -1)),
    Row("GatherV2", lambda: tf.repeat([[1, 2], [3, 4]], [2, 1], axis=0),
        np.array([[1, 2], [1, 2], [3, 4]], np.int32)),
    Row("GatherV2", lambda: tf.repeat([[1, 2], [3, 4]], 2),
        np.repeat(np.array([[1, 2], [3, 4]], np.int32), 2)),
    Row("GatherV2", lambda: tf.repeat(X, [0, 3, 1, 0], axis=-1), np.repeat(X, [0, 3, 1, 0], -1)),
    Row("GatherV2", lambda: tf.repeat([1, 2], [-1, 2]), np.int32([2, 2])),
    Row("GatherV2", lambda: tf.repeat([1, 2], [3]), np.int32([1, 1, 1, 2, 2, 2])),
    Row("ListDiff", lambda: list(tf.setdiff1d([1, 2, 3, 4, 5, 6], [1, 3, 5])),
        [np.array([2, 4, 6], np.int32), np.array([1, 3, 5], np.int32)]),
    Row("ListDiff", lambda: list(tf.setdiff1d([b"a", b"b"], [b"b"], index_dtype=tf.int64)),
        [np.array([b"a"]), np.array([0], np.int64)]),
    Row("UnravelIndex", lambda: tf.unravel_index([2, 5, 7], [3, 3]),
        np.array([[0, 1, 2], [2, 2, 1]], np.int32)),
    Row("UnravelIndex", lambda: tf.unravel_index(np.int64(7), np.array([2, 4], np.int64)),
        np.array([1, 3], np.int64)),
]

COVERED_OPS = {row.op for row in ROWS}


@pytest.mark.parametrize("row", ROWS, ids=[f"{r.op}-{i}" for i, r in enumerate(ROWS)])
def test_row(row):
    check(row.build(), row.expected)


def test_static_shapes():
    p = tf.placeholder(tf.float32, [None, 4])
    assert tf.sort(p).shape.as_list() == [None, 4]
    assert tf.argsort(tf.placeholder(tf.float32, [3, None]), axis=0).shape.as_list() == [3, None]
    assert tf.argsort(p).dtype == tf.int32
    assert tf.searchsorted(p, tf.placeholder(tf.float32, [2, 7])).shape.as_list() == [2, 7]
    assert tf.roll(p, 1, 1).shape.as_list() == [None, 4]
    assert tf.repeat(tf.zeros([2, 3]), [1, 2, 3], axis=1).shape.as_list() == [2, 6]
    n = tf.placeholder(tf.int32, [None])
    assert tf.unravel_index(n, [2, 3]).shape.as_list() == [2, None]
    assert [t.shape.as_list() for t in tf.setdiff1d(n, n)] == [[None], [None]]


def test_dynamic_length_sort_and_repeat():
    p = tf.placeholder(tf.float32, [None])
    r = tf.placeholder(tf.int32, [None])
    values = np.float32([2.0, -1.0, 7.0])
    with tf.Session() as sess:
        s, rep = sess.run([tf.sort(p, direction="DESCENDING"), tf.repeat(p, r)],
                          {p: values, r: [1, 0, 2]})
    np.testing.assert_array_equal(s, [7.0, 2.0, -1.0])
    np.testing.assert_array_equal(rep, np.repeat(values, [1, 0, 2]))


def test_errors():
    with pytest.raises(ValueError, match="direction"):
        tf.sort([1, 2], direction="UP")
    with pytest.raises(TypeError, match="real number"):
        tf.sort(tf.constant(["a"]))
    with pytest.raises(ValueError, match="side"):
        tf.searchsorted([1], [1], side="middle")
    with pytest.raises(ValueError, match="same size"):
        tf.roll([1, 2, 3], [1, 2], [0])
    with pytest.raises(ValueError, match="out of range"):
        tf.repeat(tf.zeros([2]), 2, axis=3)
    with pytest.raises(ValueError, match="3 and 2"):
        tf.repeat([1, 2], [1, 2, 3])
    with pytest.raises(errors.InvalidArgumentError, match="broadcast"):
        _fetch(tf.repeat([1, 2], tf.placeholder_with_default([1, 2, 3], [None])))
    with pytest.raises(errors.InvalidArgumentError, match="out of range"):
        _fetch(tf.roll([1, 2, 3], 1, tf.placeholder_with_default(3, [])))
    with pytest.raises(errors.InvalidArgumentError, match="out of bounds"):
        _fetch(tf.unravel_index(tf.placeholder_with_default([9], [None]), [3, 3]))
    with pytest.raises(errors.InvalidArgumentError, match="dims must be positive"):
        _fetch(tf.unravel_index(tf.placeholder_with_default([1], [None]), [0, 3]))
    with pytest.raises(ValueError, match="rank 1"):
        tf.setdiff1d([[1]], [1])


@settings(max_examples=20, deadline=None)
@given(hnp.arrays(np.int32, st.tuples(st.integers(1, 3), st.integers(0, 6)),
                  elements=st.integers(-5, 5)),
       st.integers(0, 5), st.sampled_from(["left", "right"]))
def test_searchsorted_matches_numpy(table, m, side):
    table = np.sort(table, axis=-1)
    values = np.random.RandomState(m).randint(-6, 7, size=(table.shape[0], m)).astype(np.int32)
    expected = np.stack([np.searchsorted(s, v, side=side) for s, v in zip(table, values)])
    with tf.Graph().as_default():
        check(tf.searchsorted(table, values, side=side), expected.astype(np.int32))


@settings(max_examples=20, deadline=None)
@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=4),
                  elements=st.floats(-10, 10)), st.data())
def test_sort_and_argsort_match_numpy(values, data):
    axis = data.draw(st.integers(-values.ndim, values.ndim - 1))
    with tf.Graph().as_default():
        check([tf.sort(values, axis=axis), tf.argsort(values, axis=axis)],
              [np.sort(values, axis=axis),
               np.argsort(values, axis=axis, kind="stable").astype(np.int32)])


# -- gradients -----------------------------------------------------------------------------------

GRADIENT_CASES = [
    ("Roll", _case(lambda tf, x: tf.roll(x, [1, -1], [0, 1]), [3, 4])),
    ("TopKV2", _case(lambda tf, x: tf.sort(x, axis=0), [3, 2])),
    ("TopKV2", _case(lambda tf, x: tf.sort(x, direction="DESCENDING"), [2, 3])),
    ("GatherV2", _case(lambda tf, x: tf.repeat(x, [2, 0, 1], axis=1), [2, 3])),
    ("GatherV2", _case(lambda tf, x: tf.repeat(x, 2), [2, 2])),
]
