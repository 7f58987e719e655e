"""DynamicPartition, DynamicStitch, ParallelDynamicStitch, Unique(WithCounts), sequence_mask."""

import collections

import numpy as np
import pytest
from array_checks import _fetch, check  # noqa: F401 - shared table helpers
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from op_helpers import gradient_case as _case
from op_helpers import graph  # noqa: F401 - the autouse fixture

import tensorflux as tf
from tensorflux.framework import errors

Row = collections.namedtuple("Row", "op build expected")
D = np.arange(12, dtype=np.float32).reshape(4, 3)


ROWS = [
    Row("DynamicPartition", lambda: tf.dynamic_partition(D, [1, 0, 1, 2], 4),
        [D[[1]], D[[0, 2]], D[[3]], D[:0]]),
    Row("DynamicPartition", lambda: tf.dynamic_partition(D, [[0, 1, 1], [1, 0, 0], [1, 1, 1],
                                                             [0, 0, 0]], 2),
        [D.reshape(-1)[[0, 4, 5, 9, 10, 11]], D.reshape(-1)[[1, 2, 3, 6, 7, 8]]]),
    Row("DynamicStitch", lambda: tf.dynamic_stitch([[0, 4], [[1], [3]], 2],
                                                   [[[1, 1], [5, 5]], [[[2, 2]], [[4, 4]]],
                                                    [3, 3]]),
        np.array([[1, 1], [2, 2], [3, 3], [4, 4], [5, 5]], np.int32)),
    Row("DynamicStitch", lambda: tf.dynamic_stitch([[0, 1], [1, 3]], [[1.0, 2.0], [7.0, 4.0]]),
        np.array([1, 7, 0, 4], np.float32)),
    Row("ParallelDynamicStitch", lambda: tf.parallel_dynamic_stitch(
        [[2, 0], [1]], [[b"c", b"a"], [b"b"]]), np.array([b"a", b"b", b"c"], object)),
    Row("Unique", lambda: tf.unique([4, 1, 4, 3, 1]),
        [np.array([4, 1, 3], np.int32), np.array([0, 1, 0, 2, 1], np.int32)]),
    Row("Unique", lambda: tf.unique(tf.constant([b"x", b"y", b"x"]), out_idx=tf.int64),
        [np.array([b"x", b"y"], object), np.array([0, 1, 0], np.int64)]),
    Row("Unique", lambda: tf.unique(tf.zeros([0])), [np.zeros([0], np.float32),
                                                     np.zeros([0], np.int32)]),
    Row("UniqueWithCounts", lambda: tf.unique_with_counts([2.5, 1.0, 2.5, 2.5]),
        [np.array([2.5, 1.0], np.float32), np.array([0, 1, 0, 0], np.int32),
         np.array([3, 1], np.int32)]),
]

COVERED_OPS = {row.op for row in ROWS}


@pytest.mark.parametrize("row", ROWS, ids=[f"{r.op}-{i}" for i, r in enumerate(ROWS)])
def test_row(row):
    check(row.build(), row.expected)


def test_partition_and_stitch_shapes_and_errors():
    data = tf.placeholder(tf.float32, [None, 5])
    parts = tf.dynamic_partition(data, tf.placeholder(tf.int32, [None]), 3)
    assert [p.shape.as_list() for p in parts] == [[None, 5]] * 3
    stitched = tf.dynamic_stitch([tf.placeholder(tf.int32, [None])] * 2, parts[:2])
    assert stitched.shape.as_list() == [None, 5]
    with pytest.raises(ValueError, match="prefix"):
        tf.dynamic_partition(D, [0, 1], 2)
    with pytest.raises(errors.InvalidArgumentError, match=r"partitions\[1\] = 5 is not in"):
        _fetch(tf.dynamic_partition(D[:3], [0, 5, 1], 2))
    idx = tf.placeholder(tf.int32, [None])
    with pytest.raises(errors.InvalidArgumentError, match="non-negative"):
        _fetch(tf.dynamic_stitch([idx], [[1.0]]), {idx: [-1]})
    with pytest.raises(errors.InvalidArgumentError, match="1D"):
        _fetch(tf.unique(tf.placeholder_with_default([[1]], None)))


def test_sharded_lookup_roundtrip():
    ids = np.array([5, 0, 3, 7, 3, 2])
    params = np.arange(16, dtype=np.float32).reshape(8, 2)
    shards = [params[i::2] for i in range(2)]
    with tf.Graph().as_default():
        p_index = ids % 2
        positions = tf.dynamic_partition(np.arange(ids.size, dtype=np.int32), p_index, 2)
        local = tf.dynamic_partition(ids // 2, p_index, 2)
        rows = [tf.gather(shards[i], local[i]) for i in range(2)]
        merged = tf.dynamic_stitch(positions, rows)
        np.testing.assert_array_equal(_fetch(merged), params[ids])


def test_sequence_mask():
    assert tf.sequence_mask(tf.constant([1, 2], tf.int64), 3).op.name == "SequenceMask/Less"
    check(tf.sequence_mask([1, 3, 0], 4),
          np.array([[1, 0, 0, 0], [1, 1, 1, 0], [0, 0, 0, 0]], bool))
    check(tf.sequence_mask([[2], [1]], dtype=tf.float32),
          np.array([[[1, 1]], [[1, 0]]], np.float32))
    with pytest.raises(ValueError, match="maxlen must be scalar"):
        tf.sequence_mask([1], [2, 3])


@settings(max_examples=30, deadline=None)
@given(hnp.arrays(np.int64, st.integers(0, 12), elements=st.integers(-3, 3)))
def test_unique_matches_numpy(values):
    with tf.Graph().as_default():
        y, idx, count = _fetch(tf.unique_with_counts(values, out_idx=tf.int64))
    np.testing.assert_array_equal(y[idx], values)
    order = sorted(set(values.tolist()), key=values.tolist().index)
    np.testing.assert_array_equal(y, np.array(order, np.int64))
    np.testing.assert_array_equal(count, [values.tolist().count(v) for v in order])


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 4), st.data())
def test_partition_stitch_inverse(num, data):
    partitions = data.draw(hnp.arrays(np.int32, st.integers(0, 10),
                                      elements=st.integers(0, num - 1)))
    values = np.arange(partitions.size * 2, dtype=np.float64).reshape(-1, 2)
    with tf.Graph().as_default():
        parts = tf.dynamic_partition(values, partitions, num)
        positions = tf.dynamic_partition(np.arange(partitions.size, dtype=np.int32),
                                         partitions, num)
        out = _fetch(parts + [tf.dynamic_stitch(positions, parts)] if partitions.size else parts)
    for i in range(num):
        np.testing.assert_array_equal(out[i], values[partitions == i])
    if partitions.size:
        np.testing.assert_array_equal(out[-1], values)


# -- gradients -----------------------------------------------------------------------------------


def _partition(tf, x):
    a, b = tf.dynamic_partition(x, [[1, 0], [0, 1], [1, 1]], 2)
    return tf.concat([a * 2.0, b * 3.0], 0)


GRADIENT_CASES = [
    ("DynamicPartition", _case(_partition, [3, 2, 2])),
    ("DynamicStitch", _case(lambda tf, a, b: tf.dynamic_stitch([[0, 2], [1]], [a, b]),
                            [2, 3], [1, 3])),
    ("ParallelDynamicStitch", _case(lambda tf, a, b: tf.parallel_dynamic_stitch(
        [[3, 1], [0, 2]], [a, b]), [2], [2])),
]


def test_scalar_partition_out_of_range_names_no_index():
    data = tf.constant([4.0, -1.0, 2.5])
    parts = tf.dynamic_partition(data, 9, num_partitions=3)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"partitions = 9 is not in \[0, 3\)"):
            sess.run(parts)
    ok = tf.dynamic_partition(data, 1, num_partitions=3)
    with tf.Session() as sess:
        got = sess.run(ok)
    assert [g.shape for g in got] == [(0, 3), (1, 3), (0, 3)]
    np.testing.assert_array_equal(got[1], [[4.0, -1.0, 2.5]])
