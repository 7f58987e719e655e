"""tf.sets: SetSize and the Dense/Sparse set operations (expected values checked against
TensorFlow)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from op_helpers import graph  # noqa: F401 - the autouse fixture

import tensorflux as tf
from tensorflux.framework import errors

COVERED_OPS = {"SetSize", "DenseToDenseSetOperation", "DenseToSparseSetOperation",
               "SparseToSparseSetOperation"}

A = np.array([[1, 2, 2, 5], [3, 3, 3, 3]], np.int32)
B = np.array([[2, 5, 7, 1], [4, 4, 4, 4]], np.int32)
SA = ([[0, 0, 0], [0, 0, 1], [0, 1, 0], [1, 0, 0], [1, 1, 0], [1, 1, 1]], [1, 2, 3, 4, 5, 6],
      [2, 2, 2])


def _run(x, feed=None):
    with tf.Session() as sess:
        return sess.run(x, feed)


def _check_sparse(result, indices, values, shape, op_type):
    assert isinstance(result, tf.SparseTensor)
    assert result.values.op.type == op_type
    value = _run(result)
    np.testing.assert_array_equal(value.indices, np.asarray(indices, np.int64).reshape(
        -1, len(shape)))
    np.testing.assert_array_equal(value.values, values)
    assert value.values.dtype == result.values.dtype.as_numpy_dtype
    np.testing.assert_array_equal(value.dense_shape, shape)
    assert result.indices.shape.is_compatible_with(value.indices.shape)


def test_dense_to_dense():
    _check_sparse(tf.sets.set_intersection(A, B), [[0, 0], [0, 1], [0, 2]], [1, 2, 5], [2, 3],
                  "DenseToDenseSetOperation")
    _check_sparse(tf.sets.union(A, B), [[0, 0], [0, 1], [0, 2], [0, 3], [1, 0], [1, 1]],
                  [1, 2, 5, 7, 3, 4], [2, 4], "DenseToDenseSetOperation")
    _check_sparse(tf.sets.set_difference(A, B), [[1, 0]], [3], [2, 1],
                  "DenseToDenseSetOperation")
    _check_sparse(tf.sets.difference(A, B, aminusb=False), [[0, 0], [1, 0]], [7, 4], [2, 1],
                  "DenseToDenseSetOperation")
    _check_sparse(tf.sets.intersection([[1]], [[2]]), np.zeros((0, 2)), np.zeros(0, np.int32),
                  [1, 0], "DenseToDenseSetOperation")
    _check_sparse(tf.sets.set_union([["a", "b"]], [["c", "a"]]), [[0, 0], [0, 1], [0, 2]],
                  [b"a", b"b", b"c"], [1, 3], "DenseToDenseSetOperation")


def test_sparse_forms():
    sa = tf.SparseTensor(*SA)
    dense = np.array([[[1], [2]], [[9], [5]]], np.int32)
    diff = tf.sets.set_difference(sa, dense)
    assert diff.values.op.get_attr("set_operation") == b"b-a"  # swapped: dense first
    _check_sparse(diff, [[0, 0, 0], [0, 1, 0], [1, 0, 0], [1, 1, 0]], [2, 3, 4, 6], [2, 2, 1],
                  "DenseToSparseSetOperation")
    _check_sparse(tf.sets.set_union(dense, sa),
                  [[0, 0, 0], [0, 0, 1], [0, 1, 0], [0, 1, 1], [1, 0, 0], [1, 0, 1], [1, 1, 0],
                   [1, 1, 1]], [1, 2, 2, 3, 4, 9, 5, 6], [2, 2, 2], "DenseToSparseSetOperation")
    sb = tf.SparseTensor([[0, 0, 0], [1, 1, 0]], [1, 6], [2, 2, 2])
    _check_sparse(tf.sets.set_intersection(sa, sb), [[0, 0, 0], [1, 1, 0]], [1, 6], [2, 2, 1],
                  "SparseToSparseSetOperation")


def test_set_size():
    np.testing.assert_array_equal(_run(tf.sets.set_size(tf.SparseTensor(*SA))), [[2, 1], [1, 2]])
    size = tf.sets.size(tf.SparseTensor([[0, 0], [0, 1]], [1, 1], [1, 3]))
    assert size.dtype is tf.int32
    np.testing.assert_array_equal(_run(size), [1])
    empty = tf.SparseTensor(np.zeros((0, 2), np.int64), np.zeros(0, np.int32), [3, 4])
    np.testing.assert_array_equal(_run(tf.sets.set_size(empty)), [0, 0, 0])
    unsorted = tf.SparseTensor([[1, 0], [0, 0]], [1, 2], [2, 2])
    with pytest.raises(errors.InvalidArgumentError, match=r"indices\[1\] = \[0, 0\] is out of"):
        _run(tf.sets.set_size(unsorted))
    np.testing.assert_array_equal(_run(tf.sets.set_size(unsorted, validate_indices=False)),
                                  [1, 1])
    with pytest.raises(errors.InvalidArgumentError, match="out of bounds"):
        _run(tf.sets.set_size(tf.SparseTensor([[0, 5]], [1], [2, 2])))


def test_errors():
    with pytest.raises(TypeError, match="Expected `SparseTensor`"):
        tf.sets.set_size(A)
    with pytest.raises(TypeError, match="Types don't match"):
        tf.sets.set_union(A, [[1.0]])
    with pytest.raises(TypeError, match="invalid dtype"):
        tf.sets.set_union([[1.0]], [[1.0]])
    with pytest.raises(ValueError, match="rank"):
        tf.sets.set_union([1], [1])
    with pytest.raises(ValueError):
        tf.sets.set_union([[1], [2]], [[1]])
    p = tf.placeholder(tf.int32, [None, None])
    with pytest.raises(errors.InvalidArgumentError, match="Mismatched shapes"):
        _run(tf.sets.set_union(p, [[1]]), {p: [[1], [2]]})


def _reference(a_rows, b_rows, how):
    out = []
    for x, y in zip(a_rows, b_rows):
        x, y = set(x), set(y)
        out.append(sorted({"intersection": x & y, "union": x | y, "a-b": x - y,
                           "b-a": y - x}[how]))
    return out


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 4), st.integers(1, 5), st.integers(0, 2**31 - 1),
       st.sampled_from(["intersection", "union", "a-b", "b-a"]), st.booleans())
def test_matches_python_sets(rows, width, seed, how, sparse_b):
    rng = np.random.RandomState(seed)
    a = rng.randint(0, 6, (rows, width)).astype(np.int64)
    b = rng.randint(0, 6, (rows, width + 1)).astype(np.int64)
    keep = rng.rand(rows, width + 1) < 0.6
    b_rows = [list(b[i][keep[i]]) for i in range(rows)] if sparse_b else list(b)
    expected = _reference(list(a), b_rows, how)
    with tf.Graph().as_default():
        b_arg = tf.SparseTensor(np.argwhere(keep), b[keep], [rows, width + 1]) if sparse_b else b
        if how in ("a-b", "b-a"):
            result = tf.sets.set_difference(a, b_arg, aminusb=how == "a-b")
        else:
            result = getattr(tf.sets, f"set_{how}")(a, b_arg)
        value = _run(result)
    dense_width = max(len(r) for r in expected)
    assert value.dense_shape.tolist() == [rows, dense_width]
    got = [[] for _ in range(rows)]
    for (row, col), v in zip(value.indices, value.values):
        assert col == len(got[row])
        got[row].append(v)
    assert got == expected
