"""SparseTensorsMap: a named shared map reached from two add ops, TF's error words for a
missing handle and for mixed ranks, and the check on the op passed to take_many."""

import numpy as np
import pytest
from op_helpers import graph, run  # noqa: F401

import tensorflux as tf
from tensorflux.ops.sparse import core as sparse_core


def _value(shape, cells):
    cells = np.array(cells, np.int64).reshape(-1, len(shape))
    return tf.SparseTensorValue(cells, np.arange(1, len(cells) + 1, dtype=np.int32),
                                np.array(shape, np.int64))


def test_two_add_ops_share_a_named_map():
    first = sparse_core.add_sparse_to_tensors_map(_value([2, 3], [[0, 2], [1, 0]]),
                                                  shared_name="shared")
    second = sparse_core.add_sparse_to_tensors_map(_value([4, 1], [[3, 0]]),
                                                   shared_name="shared")
    taken = sparse_core.take_many_sparse_from_tensors_map(first.op, tf.stack([first, second]))
    with tf.Session() as sess:
        indices, values, shape = sess.run([taken.indices, taken.values, taken.dense_shape])
    np.testing.assert_array_equal(indices, [[0, 0, 2], [0, 1, 0], [1, 3, 0]])
    np.testing.assert_array_equal(values, [1, 2, 1])
    np.testing.assert_array_equal(shape, [2, 4, 3])  # the largest of each dimension


def test_missing_handle_and_mixed_ranks_are_reported():
    fed = tf.SparseTensor(tf.placeholder(tf.int64), tf.placeholder(tf.int32),
                          tf.placeholder(tf.int64))
    handle = sparse_core.add_sparse_to_tensors_map(fed)
    with tf.Session() as sess:
        h2 = sess.run(handle, {fed: _value([2, 2], [[1, 1]])})
        h3 = sess.run(handle, {fed: _value([2, 2, 2], [[0, 1, 1]])})
        mixed = sparse_core.take_many_sparse_from_tensors_map(handle.op, [h2, h3])
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"rank prior to SparseTensor\[1\] was: 3 but rank of "
                                 r"SparseTensor\[1\] is: 4"):
            sess.run(mixed.indices)
        h4 = sess.run(handle, {fed: _value([1], [[0]])})
        gone = sparse_core.take_many_sparse_from_tensors_map(handle.op, [h4, h4 + 50])
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=f"Unable to find SparseTensor: {h4 + 50}"):
            sess.run(gone.indices)


def test_take_many_needs_an_add_op():
    with pytest.raises(TypeError, match="AddSparseToTensorsMap"):
        sparse_core.take_many_sparse_from_tensors_map(tf.constant([1]).op, [1])
