"""cond and tf.tuple carry SparseTensor and IndexedSlices results."""

import numpy as np
import pytest
from op_helpers import graph, run  # noqa: F401

import tensorflux as tf


@pytest.mark.parametrize("taken", [True, False])
def test_cond_returns_sparse_tensor(taken):
    p = tf.placeholder(tf.bool, [])
    a = tf.SparseTensor([[0, 0], [1, 2]], [1.0, 2.0], [2, 3])
    b = tf.SparseTensor([[1, 1]], [5.0], [2, 3])
    out = tf.cond(p, lambda: a, lambda: b)
    assert isinstance(out, tf.SparseTensor)
    got = run(out, {p: taken})
    want = ([[0, 0], [1, 2]], [1.0, 2.0]) if taken else ([[1, 1]], [5.0])
    np.testing.assert_array_equal(got.indices, want[0])
    np.testing.assert_array_equal(got.values, want[1])
    np.testing.assert_array_equal(got.dense_shape, [2, 3])


@pytest.mark.parametrize("taken", [True, False])
def test_cond_returns_indexed_slices_in_structure(taken):
    p = tf.placeholder(tf.bool, [])
    x = tf.constant(3.0)

    def branch(rows, idx):
        return {"s": tf.IndexedSlices(tf.constant(rows), tf.constant(idx)), "x": x * len(idx)}

    out = tf.cond(p, lambda: branch([[1.0, 2.0]], [0]),
                  lambda: branch([[3.0, 4.0], [5.0, 6.0]], [1, 2]))
    assert isinstance(out["s"], tf.IndexedSlices) and out["s"].dense_shape is None
    values, indices, xv = run([out["s"].values, out["s"].indices, out["x"]], {p: taken})
    if taken:
        np.testing.assert_array_equal(values, [[1.0, 2.0]])
        np.testing.assert_array_equal(indices, [0])
        assert xv == 3.0
    else:
        np.testing.assert_array_equal(values, [[3.0, 4.0], [5.0, 6.0]])
        np.testing.assert_array_equal(indices, [1, 2])
        assert xv == 6.0


def test_cond_sparse_against_dense_is_structure_error():
    p = tf.placeholder(tf.bool, [])
    with pytest.raises((TypeError, ValueError)):
        tf.cond(p, lambda: tf.SparseTensor([[0]], [1.0], [2]), lambda: tf.constant([1.0, 0.0]))


def test_tuple_gates_composites():
    sp = tf.SparseTensor([[0, 1]], [7], [2, 2])
    sl = tf.IndexedSlices(tf.ones([1, 2]), tf.constant([1]))
    dense = tf.constant(4)
    out_sp, out_sl, none, out_d = tf.tuple([sp, sl, None, dense])
    assert isinstance(out_sp, tf.SparseTensor) and isinstance(out_sl, tf.IndexedSlices)
    assert none is None
    got_sp, sl_values, sl_indices, got_d = run([out_sp, out_sl.values, out_sl.indices, out_d])
    np.testing.assert_array_equal(got_sp.indices, [[0, 1]])
    np.testing.assert_array_equal(got_sp.values, [7])
    np.testing.assert_array_equal(sl_values, np.ones([1, 2]))
    np.testing.assert_array_equal(sl_indices, [1])
    assert got_d == 4
