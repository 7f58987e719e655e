"""SparseTensor structure ops: reshape, reorder, concat, slice, split, fill_empty_rows --
values against dense NumPy references (and TF1 results), static shapes, errors."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from op_helpers import graph, run  # noqa: F401 (graph: autouse fixture)
from sparse_helpers import dense_value

import tensorflux as tf
from tensorflux.framework import errors

COVERED_OPS = {"SparseReshape", "SparseReorder", "SparseConcat", "SparseSlice",
               "SparseSliceGrad", "SparseSplit", "SparseFillEmptyRows",
               "SparseFillEmptyRowsGrad"}

IDX = np.array([[0, 0], [0, 2], [2, 1]], np.int64)
VAL = np.array([-1.0, -3.0, 2.0], np.float32)
SHAPE = np.array([3, 3], np.int64)


def _sp(indices=IDX, values=VAL, shape=SHAPE):
    return tf.SparseTensor(indices, values, shape)


def _ordered(value):
    flat = np.ravel_multi_index(tuple(value.indices.T), tuple(value.dense_shape))
    return np.all(np.diff(flat) > 0)


# -- reshape, reorder -----------------------------------------------------------------------

def test_sparse_reshape():
    out = tf.sparse_reshape(_sp(), [-1, 9])
    assert out.indices.shape.as_list() == [3, 2]
    value = run(out)
    np.testing.assert_array_equal(value.dense_shape, [1, 9])
    np.testing.assert_array_equal(dense_value(value), dense_value(run(_sp())).reshape(1, 9))
    value = run(tf.sparse.reshape(_sp(), [9]))
    np.testing.assert_array_equal(value.indices, [[0], [2], [7]])
    # Constant shapes are checked at construction, as TF does; fed ones when the kernel runs.
    with pytest.raises(ValueError, match=r"9 elements to shape \[2, 5\] \(10 elements\)"):
        tf.sparse_reshape(_sp(), [2, 5])
    with pytest.raises(ValueError, match="At most one dimension can be inferred"):
        tf.sparse_reshape(_sp(), [-1, -1])
    shape = tf.placeholder(tf.int64, [2])
    with pytest.raises(errors.InvalidArgumentError, match="dense values"):
        run(tf.sparse_reshape(_sp(), shape), {shape: [2, 5]})
    with pytest.raises(errors.InvalidArgumentError, match="only one"):
        run(tf.sparse_reshape(_sp(), shape), {shape: [-1, -1]})


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 2 ** 31 - 1))
def test_sparse_reshape_random(seed):
    rng = np.random.RandomState(seed)
    dense = np.where(rng.rand(2, 3, 4) < 0.4, rng.randint(1, 9, [2, 3, 4]), 0)
    new = [[4, 6], [24], [3, -1, 2], [2, 2, 2, 3]][rng.randint(4)]
    with tf.Graph().as_default():
        sp = tf.SparseTensor(np.argwhere(dense), dense[dense != 0], dense.shape)
        value = run(tf.sparse_reshape(sp, new))
    np.testing.assert_array_equal(dense_value(value), dense.reshape(new))


def test_sparse_reorder():
    sp = _sp(IDX[::-1].copy(), VAL[::-1].copy())
    value = run(tf.sparse_reorder(sp))
    np.testing.assert_array_equal(value.indices, IDX)
    np.testing.assert_array_equal(value.values, VAL)
    assert tf.sparse.reorder is tf.sparse_reorder
    # as TF, indices outside dense_shape are not checked: rows are ordered all the same
    outside = run(tf.sparse_reorder(tf.SparseTensor([[5, 0], [0, 9], [2, 1]], [1.0, 2.0, 3.0],
                                                    [2, 3])))
    np.testing.assert_array_equal(outside.indices, [[0, 9], [2, 1], [5, 0]])
    np.testing.assert_array_equal(outside.values, [2.0, 3.0, 1.0])


# -- concat ---------------------------------------------------------------------------------

def test_sparse_concat_orders_output():
    other = _sp(np.array([[0, 1], [0, 2], [1, 1]]), np.array([5.0, -4.0, -2.0], np.float32))
    for axis in (0, 1, -1):
        value = run(tf.sparse_concat(axis, [_sp(), other]))
        expected = np.concatenate([dense_value(run(_sp())), dense_value(run(other))], axis=axis)
        np.testing.assert_array_equal(dense_value(value), expected)
        assert _ordered(value)


def test_sparse_concat_expand_nonconcat_dim():
    small = _sp(np.array([[0, 4]]), np.array([1.0], np.float32), [1, 5])
    value = run(tf.sparse.concat(0, [_sp(), small], expand_nonconcat_dim=True))
    np.testing.assert_array_equal(value.dense_shape, [4, 5])
    np.testing.assert_array_equal(value.indices, [[0, 0], [0, 2], [2, 1], [3, 4]])
    with pytest.raises(errors.InvalidArgumentError, match="expected 3 for dimension 1 but got 5"):
        run(tf.sparse_concat(0, [_sp(), small]))
    with pytest.raises(ValueError, match="same rank"):
        tf.sparse_concat(0, [_sp(), tf.SparseTensor([[0]], [1.0], [4])])


# -- slice, split ---------------------------------------------------------------------------

def test_sparse_slice():
    value = run(tf.sparse_slice(_sp(), [0, 1], [5, 5]))
    np.testing.assert_array_equal(value.indices, [[0, 1], [2, 0]])
    np.testing.assert_array_equal(value.values, [-3.0, 2.0])
    np.testing.assert_array_equal(value.dense_shape, [3, 2])
    value = run(tf.sparse.slice(_sp(), [1, 0], [1, 3]))
    assert value.indices.shape == (0, 2) and value.values.shape == (0,)
    np.testing.assert_array_equal(value.dense_shape, [1, 3])
    with pytest.raises(errors.InvalidArgumentError, match="start and size"):
        run(tf.sparse_slice(_sp(), [0], [1]))


def test_sparse_split_uneven():
    sp = tf.SparseTensor([[0, 0], [0, 4], [1, 6], [2, 2]], [1, 2, 3, 4], [3, 7])
    parts = run(tf.sparse_split(sp_input=sp, num_split=3, axis=1))
    assert [p.dense_shape.tolist() for p in parts] == [[3, 3], [3, 2], [3, 2]]
    assert [p.indices.tolist() for p in parts] == [[[0, 0], [2, 2]], [[0, 1]], [[1, 1]]]
    assert [p.values.tolist() for p in parts] == [[1, 4], [2], [3]]
    parts = run(tf.sparse.split(sp_input=sp, num_split=3, split_dim=0))
    assert [p.values.tolist() for p in parts] == [[1, 2], [3], [4]]
    with pytest.raises(ValueError, match="Keyword"):
        tf.sparse_split(sp, 2, 1)
    with pytest.raises(errors.InvalidArgumentError, match="num_split"):
        run(tf.sparse_split(sp_input=sp, num_split=4, axis=0))


# -- fill_empty_rows ------------------------------------------------------------------------

def test_sparse_fill_empty_rows():
    out, empty = tf.sparse_fill_empty_rows(_sp(), -7.0)
    value, empty_value = run([out, empty])
    np.testing.assert_array_equal(value.indices, [[0, 0], [0, 2], [1, 0], [2, 1]])
    np.testing.assert_array_equal(value.values, [-1.0, -3.0, -7.0, 2.0])
    np.testing.assert_array_equal(empty_value, [False, True, False])
    assert empty.dtype == tf.bool
    from tensorflux.ops.sparse.structure import SparseFillEmptyRows, SparseFillEmptyRowsGrad

    raw = SparseFillEmptyRows(IDX[::-1].copy(), VAL[::-1].copy(), SHAPE, np.float32(0))
    # Rows are grouped in order; within a row the input order is kept (as in TF).
    np.testing.assert_array_equal(run(raw.output_indices), [[0, 2], [0, 0], [1, 0], [2, 1]])
    np.testing.assert_array_equal(run(raw.reverse_index_map), [3, 0, 1])
    d_values, d_default = run(SparseFillEmptyRowsGrad([3, 1, 0], np.arange(4.0)))
    np.testing.assert_array_equal(d_values, [3.0, 1.0, 0.0])
    assert d_default == 2.0


def test_slice_grad_op():
    from tensorflux.ops.sparse.structure import SparseSliceGrad

    grad = SparseSliceGrad(np.array([10.0, 20.0]), IDX, np.array([0, 1], np.int64),
                           np.array([[0, 1], [2, 0]], np.int64))
    np.testing.assert_array_equal(run(grad), [0.0, 10.0, 20.0])


# -- gradients ------------------------------------------------------------------------------

def _values_case(fn, indices=IDX):
    def build(tf):
        values = tf.placeholder(tf.float64, [len(indices)])
        y = fn(tf, tf.SparseTensor(indices, values, SHAPE))
        weights = np.arange(1.0, 1.0 + y.shape.as_list()[0]) if y.shape.is_fully_defined() \
            else 1.0
        return y * weights, [values], [np.random.RandomState(3).randn(len(indices))]

    return build


def _fill_case(tf):
    values = tf.placeholder(tf.float64, [3])
    default = tf.placeholder(tf.float64, [])
    out, _ = tf.sparse_fill_empty_rows(tf.SparseTensor(IDX[::-1].copy(), values, SHAPE),
                                       default)
    return out.values * [1.0, 2, 3, 4], [values, default], [np.arange(3.0), np.array(0.5)]


GRADIENT_CASES = [
    ("SparseReorder", _values_case(lambda tf, sp: tf.sparse_reorder(sp).values,
                                   IDX[::-1].copy())),
    ("SparseSlice", _values_case(lambda tf, sp: tf.sparse_slice(sp, [0, 1], [3, 2]).values)),
    ("SparseFillEmptyRows", _fill_case),
]


def test_ops_on_sparse_placeholders_of_unknown_shape():
    sp = tf.sparse_placeholder(tf.float32)
    feed = {sp: tf.SparseTensorValue(IDX, VAL, SHAPE)}
    outs = [tf.sparse_concat(1, [sp, sp], expand_nonconcat_dim=True).dense_shape,
            tf.sparse_concat(-1, [sp, sp], expand_nonconcat_dim=True).dense_shape,
            tf.sparse_reshape(sp, [-1]).indices,
            tf.sparse_fill_empty_rows(sp, 9.0)[0].values,
            tf.sparse_split(sp_input=sp, num_split=2, axis=1)[1].values]
    values = run(outs, feed)
    assert values[0].tolist() == [3, 6] and values[1].tolist() == [3, 6]
    assert values[2].tolist() == [[0], [2], [7]]
    assert values[3].tolist() == [-1.0, -3.0, 9.0, 2.0]
    assert values[4].tolist() == [-3.0]
