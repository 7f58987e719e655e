"""sparse error table: TF's error class, the phase it is raised in (graph construction or run
time) and the facts its message carries (recorded from TensorFlow in graph mode).

Each row: (id, builder -> (fetch, feed), phase "build" | "run", error class, regex)."""

import numpy as np
import pytest
from op_helpers import check_error_row, graph, run  # noqa: F401

import tensorflux as tf

BAD = tf.errors.InvalidArgumentError


def _st(indices, values, shape):
    return tf.SparseTensor(indices, values, shape)


def _const(fn):
    return lambda: (fn(), None)


def _fed(fn, value, dtype=tf.int64):
    p = tf.placeholder(dtype)
    return fn(p), {p: value}


S23 = ([[0, 1]], [1.0], [2, 3])

ERROR_TABLE = [
    ("indices of rank 1", _const(lambda: _st([0, 1], [1.0, 2.0], [3])),
     "build", ValueError, r"Shape \(2,\) must have rank 2"),
    ("dense_shape of rank 2", _const(lambda: _st([[0], [1]], [1.0, 2.0], [[3]])),
     "build", ValueError, r"Shape \(1, 1\) must have rank 1"),
    ("values count", _const(lambda: _st([[0], [1]], [1.0], [3])),
     "build", ValueError, "indices has 2 rows but values has 1"),
    ("indices and dense_shape ranks", _const(lambda: _st([[0, 0], [1, 0]], [1.0, 2.0], [3])),
     "build", ValueError, "2 coordinates but dense_shape has 1"),
    ("sparse_to_dense out of range",
     _const(lambda: tf.sparse_to_dense([[0], [5]], [3], [1.0, 2.0])),
     "run", BAD, r"indices\[1\] = \[5\] is out of bounds: need 0 <= index < \[3\]"),
    ("sparse_to_dense unordered",
     _const(lambda: tf.sparse_to_dense([[2], [0]], [3], [1.0, 2.0])),
     "run", BAD, r"indices\[1\] = \[0\] is out of order"),
    ("sparse_to_dense repeated",
     _const(lambda: tf.sparse_to_dense([[1], [1]], [3], [1.0, 2.0])),
     "run", BAD, r"indices\[1\] = \[1\] is repeated"),
    ("sparse_to_dense values count",
     _const(lambda: tf.sparse_to_dense([[0], [1]], [3], [1.0, 2.0, 3.0])),
     "run", BAD, r"sparse_values has incorrect shape \[3\], should be \[\] or \[2\]"),
    ("sparse_to_dense values of rank 2",
     _const(lambda: tf.sparse_to_dense([1, 3], [5], [[5], [3]])),
     "run", BAD, r"sparse_values has incorrect shape \[2,1\], should be \[\] or \[2\]"),
    ("sparse_to_dense output_shape of rank 2",
     _const(lambda: tf.sparse_to_dense([1, 3], [[5], [3]], 1, -1)),
     "build", ValueError, "Shape must be rank 1 but is rank 2"),
    ("to_dense out of range", _const(lambda: tf.sparse.to_dense(_st([[0], [5]], [1.0, 2.0],
                                                                    [3]))),
     "run", BAD, r"indices\[1\] = \[5\] is out of bounds"),
    ("reshape with two -1", _const(lambda: tf.sparse.reshape(_st(*S23), [-1, -1])),
     "build", ValueError, r"At most one dimension can be inferred \(-1\). Found: \[-1, -1\]"),
    ("reshape to another size", _const(lambda: tf.sparse.reshape(_st(*S23), [4, 2])),
     "build", ValueError, r"Cannot reshape a tensor with 6 elements to shape \[4, 2\] "
                          r"\(8 elements\)"),
    ("reshape to another size fed", lambda: _fed(lambda p: tf.sparse.reshape(_st(*S23), p),
                                                 [4, 2]),
     "run", BAD, "6 dense values, but the requested shape has 8"),
    ("reshape -1 not dividing", _const(lambda: tf.sparse.reshape(_st(*S23), [-1, 4])),
     "build", ValueError, r"Cannot reshape a tensor with 6 elements to shape \[None, 4\]"),
    ("dense_matmul inner mismatch",
     _const(lambda: tf.sparse.sparse_dense_matmul(_st(*S23), np.ones([4, 2], np.float32))),
     "build", ValueError, "inner dimension does not match|3.*4"),
    ("dense_matmul inner mismatch fed",
     lambda: _fed(lambda p: tf.sparse.sparse_dense_matmul(_st(*S23), p),
                  np.ones([4, 2], np.float32), tf.float32),
     "run", BAD, "inner dimension does not match: 3 vs. 4"),
    ("dense_matmul rank 3",
     _const(lambda: tf.sparse.sparse_dense_matmul(_st([[0, 1, 0]], [1.0], [2, 3, 1]),
                                                  np.ones([3, 2], np.float32))),
     "build", ValueError, "length-2 vector"),
    ("dense_matmul index out of range",
     _const(lambda: tf.sparse.sparse_dense_matmul(_st([[0, 7]], [1.0], [2, 3]),
                                                  np.ones([3, 2], np.float32))),
     "run", BAD, r"k \(7\) from index\[0,1\] out of bounds \(>=3\)"),
    ("concat rank mismatch",
     _const(lambda: tf.sparse.concat(0, [_st([[0]], [1.0], [2]),
                                         _st([[0, 0]], [1.0], [2, 2])]).values),
     "build", ValueError, "same rank, got 1 and 2"),
    ("concat other dims differ",
     _const(lambda: tf.sparse.concat(0, [_st([[0, 0]], [1.0], [2, 3]),
                                         _st([[0, 0]], [1.0], [2, 2])]).values),
     "run", BAD, "Input shapes must match: expected 3 for dimension 1 but got 2 at position 1"),
    ("add shapes differ",
     _const(lambda: tf.sparse.add(_st([[0, 0]], [1.0], [2, 3]), _st([[0, 0]], [1.0], [2, 2]))),
     "build", ValueError, r"\(2, 3\) and \(2, 2\)"),
    ("slice start length",
     _const(lambda: tf.sparse.slice(_st([[0, 0]], [1.0], [2, 3]), [0], [1, 1]).values),
     "run", BAD, r"start \[0\] and size \[1, 1\]"),
]


@pytest.mark.parametrize("build,phase,error,words", [r[1:] for r in ERROR_TABLE],
                         ids=[r[0] for r in ERROR_TABLE])
def test_sparse_error_table(build, phase, error, words):
    check_error_row(build, phase, error, words)


def test_valid_reshape_and_unvalidated_order_still_work():
    reshaped = tf.sparse.reshape(_st(*S23), [-1, 2])
    assert reshaped.dense_shape is not None
    got = run([tf.sparse.to_dense(reshaped),
               tf.sparse_to_dense([[2], [0]], [3], [1.0, 2.0], validate_indices=False)])
    expected = np.zeros([2, 3], np.float32)
    expected[0, 1] = 1.0
    np.testing.assert_array_equal(got[0], expected.reshape(3, 2))
    np.testing.assert_array_equal(got[1], [2.0, 0.0, 1.0])
