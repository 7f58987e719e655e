"""Array-family error table (TF 1.15's classes and facts) and static shapes TF infers.

Each row: builder (graph, feed) -> (error class, words the message must carry). Static
problems raise at construction (ValueError/TypeError), run-time ones InvalidArgumentError."""

import numpy as np
import pytest
from op_helpers import graph, run  # noqa: F401

import tensorflux as tf
from tensorflux.framework.op_def import get_op_def


def _fed(build, value, dtype=tf.int32):
    p = tf.placeholder(dtype)
    return build(p), {p: value}


def _concat_offset(dim, shapes):
    return get_op_def("ConcatOffset")(tf.constant(dim), [tf.constant(s) for s in shapes]), None


X = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], np.float32)

ERROR_TABLE = [
    # (id, builder, class, key words)
    ("reverse static range", lambda: (tf.reverse(tf.constant([1, 2]), [1]), None),
     ValueError, r"'axis'\[0\] = 1 is out of valid range \[0, 0\]"),
    ("reverse static repeat", lambda: (tf.reverse(tf.constant(X), [0, -2]), None),
     ValueError, "axis 0 specified more than once"),
    ("reverse run-time range", lambda: _fed(lambda a: tf.reverse(X, a), [-30]),
     tf.errors.InvalidArgumentError, r"'axis'\[0\] = -30 is out of valid range"),
    ("reverse run-time repeat", lambda: _fed(lambda a: tf.reverse(X, a), [0, -2]),
     tf.errors.InvalidArgumentError, "axis 0 specified more than once"),
    ("reverse float axis", lambda: (tf.reverse(X, [0.5]), None), TypeError,
     "parameter .axis. has DataType float32 not in list of allowed values: int32, int64"),
    ("concat static dims", lambda: (tf.concat([tf.zeros([2, 3]), tf.zeros([2, 4])], 0), None),
     ValueError, "Dimension 1 in both shapes must be equal"),
    ("concat static axis", lambda: (tf.concat([X, X], 2), None), ValueError, "out of range"),
    ("concat run-time dims",
     lambda: _fed(lambda p: tf.concat([tf.zeros([2, 3]), p], 0), np.zeros([2, 4]), tf.float32),
     tf.errors.InvalidArgumentError,
     r"Dimensions of inputs should match: shape\[0\] = \[2, 3\] vs. shape\[1\] = \[2, 4\]"),
    ("concat run-time ranks",
     lambda: _fed(lambda p: tf.concat([tf.zeros([2, 3]), p], 0), np.zeros([2]), tf.float32),
     tf.errors.InvalidArgumentError, "Ranks of all input tensors should match"),
    ("concat offset mismatch", lambda: _concat_offset(0, [[1, 2], [1, 3]]),
     tf.errors.InvalidArgumentError, "All dimensions except 0 must match. Input 1"),
    ("concat offset lengths", lambda: _concat_offset(0, [[2, 3], [2, 3, 4]]),
     tf.errors.InvalidArgumentError, "input 1 should contain 2 elements, but got 3"),
    ("concat offset matrix", lambda: _concat_offset(0, [[[2, 3]], [[2, 3]]]),
     tf.errors.InvalidArgumentError, r"input 0 should be a vector, but got shape \[1, 2\]"),
    ("concat offset shapes text", lambda: _concat_offset(1, [[4, 1], [5, 2]]),
     tf.errors.InvalidArgumentError, r"Input 1 has shape \[5 2\] and doesn't match input 0 "
     r"with shape \[4 1\]"),
    ("concat offset dim", lambda: _concat_offset(2, [[2, 3], [2, 3]]),
     tf.errors.InvalidArgumentError, "Concat dim is out of range: 2 vs. 2"),
    ("roll shift/axis sizes", lambda: (tf.roll(tf.constant(X), [1, 2], [0]), None), ValueError,
     "same size"),
    ("roll run-time axis",
     lambda: _fed(lambda a: tf.roll(tf.constant(X), 1, a), 2),
     tf.errors.InvalidArgumentError, "axis 2 is out of range"),
    ("roll run-time sizes",
     lambda: _fed(lambda s: tf.roll(tf.constant(X), s, tf.constant([0])), [1, 2]),
     tf.errors.InvalidArgumentError, "shift and axis must have the same size"),
    ("constant too many", lambda: (tf.constant([1, 2, 3], shape=[2]), None), ValueError,
     "Too many elements provided. Needed at most 2, but received 3"),
    ("constant ragged", lambda: (tf.constant([[1, 2], [3]]), None), ValueError,
     "Argument must be a dense tensor"),
    ("clip_by_norm bad clip shape",
     lambda: (tf.clip_by_norm(tf.constant(X), tf.ones([3, 1, 1])), None), ValueError,
     "not compatible"),
]


@pytest.mark.parametrize("build,error,words", [r[1:] for r in ERROR_TABLE],
                         ids=[r[0] for r in ERROR_TABLE])
def test_error_table(build, error, words):
    with pytest.raises(error, match=words):
        fetch, feed = build()
        run(fetch, feed)


def test_concat_offset_valid_values():
    offsets = run(_concat_offset(1, [[2, 3, 4], [2, 5, 4], [2, 1, 4]])[0])
    np.testing.assert_array_equal(offsets, [[0, 0, 0], [0, 3, 0], [0, 8, 0]])


def test_tile_partially_known_multiples():
    m = tf.placeholder(tf.int32, [])
    y = tf.tile(tf.placeholder(tf.float32, [4, 3]), tf.stack([2, m]))
    assert y.shape.as_list() == [8, None]
    z = tf.tile(tf.placeholder(tf.float32, [4, None]), [2, 1])
    assert z.shape.as_list() == [8, None]
    got = run(y, {m: 3, y.op.inputs[0]: np.ones([4, 3])})
    assert got.shape == (8, 9)


def test_dynamic_stitch_static_shapes():
    a = tf.dynamic_stitch([tf.constant([0, 5]), tf.constant([1])],
                          [tf.placeholder(tf.float32, [2]), tf.placeholder(tf.float32, [1])])
    assert a.shape.as_list() == [6]
    b = tf.dynamic_stitch([tf.placeholder(tf.int32, [None]), tf.constant([[1, 3]])],
                          [tf.placeholder(tf.float32, [None, 5]),
                           tf.placeholder(tf.float32, [1, 2, None])])
    assert b.shape.as_list() == [None, 5]


def test_pad_and_space_to_batch_static_shapes():
    assert tf.pad(tf.placeholder(tf.float32, [None, 3]), [[1, 1], [2, 2]]).shape.as_list() == \
        [None, 7]
    s2b = tf.space_to_batch_nd(tf.placeholder(tf.float32, [None, 4, None, 1]), [2, 2],
                               [[0, 0], [0, 0]])
    assert s2b.shape.as_list() == [None, 2, None, 1]
    loop = tf.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x * 2.0),
                         [0, tf.placeholder(tf.float32, [2, 3])])
    assert loop[1].shape.as_list() == [2, 3]
