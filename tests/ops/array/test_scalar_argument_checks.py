"""Run-time checks of arguments that must be scalars or vectors, reached through placeholders
of unknown shape (so shape inference cannot catch them): TF's messages, and the values when
the arguments are right."""

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.framework import errors
from tensorflux.ops.io import checkpoint


def _feed_run(fn, *args):
    """Builds fn on shapeless placeholders holding `args`; runs it."""
    with tf.Graph().as_default():
        holders = [tf.placeholder(np.asarray(a).dtype if not isinstance(a, str) else tf.string)
                   for a in args]
        out = fn(*holders)
        with tf.Session() as sess:
            return sess.run(out, dict(zip(holders, args)))


CASES = [
    ("concat scalars", lambda a, b, axis: tf.concat([a, b], axis),
     (np.array([2], np.int32), np.int32(3), np.int32(0)),
     r"Can't concatenate scalars \(use tf.stack instead\)"),
    ("pad rows", tf.pad, (np.int32(7), [[1, 2]]),
     "The first dimension of paddings must be the rank of inputs"),
    ("tile multiples", tf.tile, ([7], np.int32(2)), "Expected multiples to be 1-D"),
    ("sparse_to_dense shape", tf.sparse_to_dense, (np.int32(1), np.int32(4), np.int32(7)),
     r"output_shape must be rank 1, got shape \[\]"),
    ("segment count", tf.unsorted_segment_sum, (np.int32(7), np.int32(1), [4]),
     r"num_segments should be a scalar, not shape \[1\]"),
    ("filename shards", checkpoint.sharded_filename,
     ("foo", np.int32(4), np.array([100], np.int32)),
     r"ShardedFilename: num_shards must be a scalar, got shape \[1\]"),
    ("filespec shards", checkpoint.sharded_filespec, ("foo", np.array([100], np.int32)),
     r"ShardedFilespec: num_shards must be a scalar, got shape \[1\]"),
]


@pytest.mark.parametrize("fn, args, words", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_wrong_rank_argument(fn, args, words):
    with pytest.raises(errors.InvalidArgumentError, match=words):
        _feed_run(fn, *args)


def test_right_ranks_still_work():
    np.testing.assert_array_equal(_feed_run(lambda a, b: tf.concat([a, b], 0), [2], [3, 7]),
                                  [2, 3, 7])
    np.testing.assert_array_equal(_feed_run(tf.pad, [7], [[1, 2]]), [0, 7, 0, 0])
    np.testing.assert_array_equal(_feed_run(tf.tile, [7], [2]), [7, 7])
    np.testing.assert_array_equal(_feed_run(tf.sparse_to_dense, [1], [4], np.int32(7)),
                                  [0, 7, 0, 0])
    np.testing.assert_array_equal(
        _feed_run(tf.unsorted_segment_sum, [7], [1], np.int32(4)), [0, 7, 0, 0])
    assert _feed_run(checkpoint.sharded_filename, "foo", np.int32(4),
                     np.int32(100)) == b"foo-00004-of-00100"


def test_zeros_and_ones_take_a_scalar_size_of_any_magnitude():
    # TF reshapes a scalar shape to a vector; sizes >= 1000 used to reach Fill's shape check.
    with tf.Graph().as_default():
        n = tf.placeholder(tf.int32, [])
        big = tf.ones(1000)
        fed = tf.zeros(n, tf.int64)
        from_tensor = tf.ones(tf.constant(1200), tf.int32)
        assert big.shape.as_list() == [1000] and from_tensor.shape.as_list() == [1200]
        with tf.Session() as sess:
            a, b, c = sess.run([big, fed, from_tensor], {n: 3})
    np.testing.assert_array_equal(a, np.ones(1000, np.float32))
    np.testing.assert_array_equal(b, np.zeros(3, np.int64))
    np.testing.assert_array_equal(c, np.ones(1200, np.int32))
