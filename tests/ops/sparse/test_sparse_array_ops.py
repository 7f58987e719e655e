"""SparseTensor helpers built from other ops: retain, transpose, merge, to_indicator, mask,
from_dense, eye, expand_dims, and the `tf.sparse` namespace."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from op_helpers import graph, run  # noqa: F401 (graph: autouse fixture)
from sparse_helpers import dense_value

import tensorflux as tf

IDX = np.array([[0, 0], [0, 2], [2, 1]], np.int64)
VAL = np.array([-1.0, -3.0, 2.0], np.float32)
SHAPE = np.array([3, 4], np.int64)


def _sp():
    return tf.SparseTensor(IDX, VAL, SHAPE)


def test_sparse_retain():
    value = run(tf.sparse_retain(_sp(), [True, False, True]))
    np.testing.assert_array_equal(value.indices, [[0, 0], [2, 1]])
    np.testing.assert_array_equal(value.values, [-1.0, 2.0])
    np.testing.assert_array_equal(value.dense_shape, SHAPE)
    with pytest.raises(ValueError, match="to_retain"):
        tf.sparse.retain(_sp(), [True, False])


def test_sparse_transpose():
    value = run(tf.sparse_transpose(_sp()))
    np.testing.assert_array_equal(value.indices, [[0, 0], [1, 2], [2, 0]])
    np.testing.assert_array_equal(dense_value(value), dense_value(run(_sp())).T)
    dense = np.arange(24).reshape(2, 3, 4) % 5
    sp = tf.sparse.from_dense(dense)
    value = run(tf.sparse.transpose(sp, [1, 2, 0]))
    np.testing.assert_array_equal(dense_value(value), dense.transpose(1, 2, 0))


def test_sparse_merge_and_to_indicator():
    ids = tf.SparseTensor([[0, 0], [0, 1], [2, 0]], tf.constant([3, 1, 0], tf.int64), [3, 2])
    weights = tf.SparseTensor([[0, 0], [0, 1], [2, 0]], [0.5, 0.6, 0.7], [3, 2])
    value = run(tf.sparse_merge(ids, weights, 5))
    np.testing.assert_array_equal(value.indices, [[0, 1], [0, 3], [2, 0]])
    np.testing.assert_allclose(value.values, [0.6, 0.5, 0.7])
    np.testing.assert_array_equal(value.dense_shape, [3, 5])
    indicator = run(tf.sparse_to_indicator(ids, 5))
    assert indicator.dtype == np.bool_
    expected = np.zeros([3, 5], bool)
    expected[[0, 0, 2], [3, 1, 0]] = True
    np.testing.assert_array_equal(indicator, expected)
    with pytest.raises(TypeError, match="int32 or int64"):
        tf.sparse.merge(weights, weights, 5)


def test_sparse_mask():
    a = tf.IndexedSlices(tf.constant([[1.0], [2.0], [3.0], [4.0]]),
                         tf.constant([12, 26, 37, 45]), tf.constant([50, 1]))
    masked = tf.sparse_mask(a, [12, 45])
    values, indices = run([masked.values, masked.indices])
    np.testing.assert_array_equal(indices, [26, 37])
    np.testing.assert_array_equal(values, [[2.0], [3.0]])
    assert isinstance(masked, tf.IndexedSlices)


@settings(max_examples=15, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=3), st.integers(0, 2 ** 31 - 1))
def test_from_dense_round_trip(shape, seed):
    rng = np.random.RandomState(seed)
    dense = np.where(rng.rand(*shape) < 0.5, rng.randint(-3, 4, shape), 0).astype(np.int32)
    with tf.Graph().as_default():
        sp = tf.sparse.from_dense(dense)
        value, back = run([sp, tf.sparse.to_dense(sp)])
    np.testing.assert_array_equal(back, dense)
    np.testing.assert_array_equal(value.indices, np.argwhere(dense != 0))


def test_eye_and_expand_dims():
    value = run(tf.sparse.eye(2, 3, dtype=tf.int32))
    np.testing.assert_array_equal(dense_value(value), np.eye(2, 3, dtype=np.int32))
    assert value.values.dtype == np.int32
    np.testing.assert_array_equal(run(tf.sparse.to_dense(tf.sparse.eye(3))), np.eye(3))
    dense = dense_value(run(_sp()))
    for axis in (0, 1, -1, 2, -3):
        value = run(tf.sparse.expand_dims(_sp(), axis))
        np.testing.assert_array_equal(dense_value(value), np.expand_dims(dense, axis))
    with pytest.raises(ValueError, match="axis"):
        tf.sparse.expand_dims(_sp())


def test_sparse_reset_shape():
    sp = tf.SparseTensor(IDX, VAL, [5, 6])
    np.testing.assert_array_equal(run(tf.sparse.reset_shape(sp)).dense_shape, [3, 3])
    assert tf.sparse_reset_shape(sp, [7, 7]).shape.as_list() == [7, 7]
    with pytest.raises(ValueError, match="new_shape"):
        tf.sparse.reset_shape(sp, [2, 7])
    p = tf.placeholder(tf.int64, [2])
    grown = tf.sparse.reset_shape(sp, p)
    np.testing.assert_array_equal(run(grown.dense_shape, {p: [8, 7]}), [8, 7])
    with pytest.raises(tf.errors.InvalidArgumentError, match="x <= y"):
        run(grown.dense_shape, {p: [2, 7]})


def test_namespace():
    names = ["add", "concat", "expand_dims", "eye", "fill_empty_rows", "from_dense", "mask",
             "matmul", "maximum", "merge", "minimum", "placeholder", "reduce_max",
             "reduce_max_sparse", "reduce_sum", "reduce_sum_sparse", "reorder", "reset_shape",
             "reshape",
             "retain", "segment_mean", "segment_sqrt_n", "segment_sum", "slice", "softmax",
             "sparse_dense_matmul", "split", "to_dense", "to_indicator", "transpose",
             "SparseTensor"]
    assert [n for n in names if not hasattr(tf.sparse, n)] == []
    roots = ["sparse_tensor_dense_matmul", "sparse_reduce_sum", "sparse_reduce_sum_sparse",
             "sparse_reduce_max", "sparse_reduce_max_sparse", "sparse_add", "sparse_concat",
             "sparse_reshape", "sparse_reorder", "sparse_retain", "sparse_fill_empty_rows",
             "sparse_slice", "sparse_split", "sparse_transpose", "sparse_to_indicator",
             "sparse_merge", "sparse_softmax", "sparse_maximum", "sparse_minimum",
             "sparse_mask", "sparse_segment_sum", "sparse_segment_mean",
             "sparse_segment_sqrt_n", "sparse_reset_shape", "serialize_sparse",
             "serialize_many_sparse", "deserialize_many_sparse", "sparse_matmul",
             "convert_to_tensor_or_sparse_tensor"]
    assert [n for n in roots if not hasattr(tf, n)] == []
    assert tf.nn.embedding_lookup_sparse and tf.nn.safe_embedding_lookup_sparse


def test_sparse_to_dense_static_shape_from_output_shape():
    indices = tf.placeholder(tf.int64)
    known = tf.sparse_to_dense(indices, [4, 5, 6], 1, 0)
    assert known.shape.as_list() == [4, 5, 6]
    fed_shape = tf.placeholder(tf.int64, shape=[3])
    partial = tf.sparse_to_dense(indices, fed_shape, 1, 0)
    assert partial.shape.as_list() == [None, None, None]
    got = run(partial, {indices: [[0, 1, 2], [1, 0, 0]], fed_shape: [2, 2, 3]})
    expected = np.zeros([2, 2, 3], np.int32)
    expected[0, 1, 2] = expected[1, 0, 0] = 1
    np.testing.assert_array_equal(got, expected)
