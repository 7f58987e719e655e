"""slicing_ops and gather_ops: Slice, StridedSlice (and Tensor.__getitem__), gathers,
ScatterNd, Where and boolean_mask. Value rows against NumPy, static shapes, error cases."""

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
from tensorflux.ops.array import gather_scatter as gather_ops
from tensorflux.ops.array import slicing as slicing_ops

Row = collections.namedtuple("Row", "op build expected")
X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
M = np.arange(12, dtype=np.int64).reshape(3, 4)


def _dyn(value):
    return tf.placeholder_with_default(value, None)


def _strided_slice_grad():
    return slicing_ops.StridedSliceGrad([3, 4], [2, 0], [0, 4], [-1, 2], [[1.0, 2.0], [3.0, 4.0]])


ROWS = [
    Row("Slice", lambda: tf.slice(X, [0, 1, 1], [2, -1, 2]), X[:, 1:, 1:3]),
    Row("Slice", lambda: tf.slice(_dyn(M), tf.constant([1, 0], tf.int64), [0, -1]), M[1:1]),
    Row("StridedSlice", lambda: tf.constant(X)[1, ::-1, 1:], X[1, ::-1, 1:]),
    Row("StridedSlice", lambda: tf.constant(X)[..., tf.newaxis, -1], X[..., None, -1]),
    Row("StridedSlice", lambda: _dyn(M)[tf.constant(-1, tf.int64), 5:0:-2], M[-1, 5:0:-2]),
    Row("StridedSlice", lambda: tf.strided_slice(X, [0, 2], [2, -4], [1, -1]), X[0:2, 2:-4:-1]),
    Row("StridedSlice", lambda: tf.constant(M)[-100:100, 3:-100:-1], M[-100:100, 3:-100:-1]),
    Row("StridedSlice", lambda: tf.constant(5)[...], np.int32(5)),
    Row("StridedSliceGrad", _strided_slice_grad,
        np.array([[0, 0, 0, 0], [3, 0, 4, 0], [1, 0, 2, 0]], np.float32)),
    Row("GatherV2", lambda: tf.gather(X, [[1, 0], [1, 1]]), X[[[1, 0], [1, 1]]]),
    Row("GatherV2", lambda: tf.gather(X, tf.constant([3, 0], tf.int64), axis=-1), X[..., [3, 0]]),
    Row("GatherV2", lambda: tf.gather(M, np.zeros([0], np.int32), axis=1), M[:, []]),
    Row("GatherV2", lambda: tf.gather(X, [[2, 0], [1, 1]], axis=1, batch_dims=1),
        np.stack([X[0, [2, 0]], X[1, [1, 1]]])),
    Row("GatherV2", lambda: tf.gather(X, [[3, 0], [1, 2]], axis=2, batch_dims=1),
        np.stack([X[0][:, [3, 0]], X[1][:, [1, 2]]])),
    Row("GatherV2", lambda: tf.batch_gather(M, [[0], [3], [1]]), M[[0, 1, 2], [0, 3, 1]][:, None]),
    Row("Gather", lambda: gather_ops.Gather(M, [2, 2, 0]), M[[2, 2, 0]]),
    Row("GatherNd", lambda: tf.gather_nd(X, [[0, 1], [1, 2]]), X[[0, 1], [1, 2]]),
    Row("GatherNd", lambda: tf.gather_nd(M, tf.constant([[[2, 3]], [[0, 0]]], tf.int64)),
        np.array([[M[2, 3]], [M[0, 0]]])),
    Row("GatherNd", lambda: tf.gather_nd(M, np.zeros([2, 0], np.int32)), np.stack([M, M])),
    Row("ScatterNd", lambda: tf.scatter_nd([[1], [3], [1]], [1.0, 2.0, 4.0], [4]),
        np.array([0, 5, 0, 2], np.float32)),
    Row("ScatterNd", lambda: tf.scatter_nd(tf.constant([[0], [2]], tf.int64),
                                           [[1, 2], [3, 4]], tf.constant([3, 2], tf.int64)),
        np.array([[1, 2], [0, 0], [3, 4]], np.int32)),
    Row("Where", lambda: tf.where([[True, False], [False, True]]),
        np.array([[0, 0], [1, 1]], np.int64)),
    Row("Where", lambda: tf.where(tf.constant([0.0, 2.0, -1.0])), np.array([[1], [2]], np.int64)),
]

COVERED_OPS = {row.op for row in ROWS}


@pytest.mark.parametrize("row", ROWS, ids=[f"{r.op}-{i}" for i, r in enumerate(ROWS)])
def test_row(row):
    check(row.build(), row.expected)


# -- __getitem__ / StridedSlice ---------------------------------------------------------------

def test_getitem_static_shapes_follow_tf():
    q = tf.placeholder(tf.float32, [None, None])
    assert [t.shape.as_list() for t in (q[:, 1:3], q[-1], q[..., None])] == \
        [[None, None], [None], [None, None, 1]]
    p = tf.placeholder(tf.float32, [None, 3, 4])
    assert [t.shape.as_list() for t in (p[:, 1:3], p[:, -2:], p[:, 5:], p[::2, ::-2])] == \
        [[None, 2, 4], [None, 2, 4], [None, 0, 4], [None, 2, 4]]
    i = tf.placeholder(tf.int32, [])
    assert [t.shape.as_list() for t in (p[i], p[:, i:], p[..., i], p[i, None])] == \
        [[3, 4], [None, None, 4], [None, 3], [1, 3, 4]]


def test_getitem_graph_structure_and_names():
    out = tf.constant(M)[1:2]
    assert out.op.name == "strided_slice" and out.op.type == "StridedSlice"
    assert [t.op.name for t in out.op.inputs[1:]] == \
        ["strided_slice/stack", "strided_slice/stack_1", "strided_slice/stack_2"]
    assert out.op.get_attr("begin_mask") == 0 and out.op.get_attr("shrink_axis_mask") == 0
    masks = tf.constant(X)[..., None, :1, 2]
    assert (masks.op.get_attr("ellipsis_mask"), masks.op.get_attr("new_axis_mask"),
            masks.op.get_attr("begin_mask"), masks.op.get_attr("shrink_axis_mask")) == \
        (1, 2, 4, 8)


def test_getitem_tensor_indices_and_int64():
    i = tf.placeholder(tf.int32, [])
    j = tf.placeholder(tf.int64, [])
    x = tf.constant(X)
    check([x[i], x[:, i:], x[1, j], x[j:, :, -1], x[i:j]],
          [X[1], X[:, 1:], X[1, 2], X[2:, :, -1], X[1:2]], {i: 1, j: 2})
    assert x[j].op.inputs[1].dtype == tf.int64


def test_getitem_rejects_bad_indices():
    x = tf.constant(X)
    check(x[[0, 1]], X[0, 1])
    for bad in (1.5, "a", tf.constant([1, 2]), tf.constant(1.0), [[0]]):
        with pytest.raises(TypeError, match="valid indices"):
            x[bad]
    with pytest.raises(ValueError, match="slice index 5 of dimension 0 out of bounds"):
        tf.constant(M)[5]
    with pytest.raises(ValueError, match="slice index 7 of dimension 1 out of bounds"):
        tf.constant(M)[:, 7]
    with pytest.raises(ValueError, match="Index out of range"):
        tf.constant(M)[1, 2, 3]
    i = tf.placeholder(tf.int32, [])
    with pytest.raises(errors.InvalidArgumentError, match="out of bounds"):
        _fetch(tf.constant(M)[i], {i: 3})


def test_getitem_bool_mask_and_strided_slice_strides_default():
    x = tf.constant(M)
    check(x[np.array([True, False, True])], M[[0, 2]])
    check(tf.strided_slice(x, [1], [3]), M[1:3])
    with pytest.raises(ValueError, match="non-zero"):
        x[::0]


_INDEX_ITEMS = st.one_of(
    st.integers(-4, 3),
    st.builds(slice, st.none() | st.integers(-5, 5), st.none() | st.integers(-5, 5),
              st.none() | st.sampled_from([-3, -2, -1, 1, 2, 3])),
    st.just(Ellipsis), st.none())


@settings(max_examples=80, deadline=None)
@given(hnp.arrays(np.int32, hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4),
                  elements=st.integers(-50, 50)),
       st.lists(_INDEX_ITEMS, max_size=5), st.booleans())
def test_getitem_matches_numpy(value, spec, dynamic):
    spec = tuple(spec)
    if sum(item is Ellipsis for item in spec) > 1:
        return
    try:
        expected = value[spec]
    except IndexError:
        with tf.Graph().as_default():
            x = _dyn(value) if dynamic else tf.constant(value)
            with pytest.raises((ValueError, errors.InvalidArgumentError)):
                _fetch(x[spec])
        return
    with tf.Graph().as_default():
        x = tf.placeholder_with_default(value, [None] * value.ndim) if dynamic else \
            tf.constant(value)
        out = x[spec]
        if not dynamic:
            assert out.shape.as_list() == list(np.shape(expected))
        check(out, expected)


@settings(max_examples=30, deadline=None)
@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4)),
       st.lists(_INDEX_ITEMS, min_size=1, max_size=3))
def test_strided_slice_grad_matches_numpy(value, spec):
    spec = tuple(spec)
    if sum(item is Ellipsis for item in spec) > 1:
        return
    try:
        sliced = value[spec]
    except IndexError:
        return
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, value.shape)
        out = x[spec]
        dy = np.random.RandomState(0).uniform(size=np.shape(sliced))
        (dx,) = tf.gradients(out, x, grad_ys=tf.constant(dy))
        expected = np.zeros_like(value)
        expected[spec] = dy
        np.testing.assert_allclose(_fetch(dx, {x: value}), expected)


def test_slice_errors():
    with pytest.raises(errors.InvalidArgumentError, match=r"Expected size\[0\] in \[0, 2\]"):
        _fetch(tf.slice(M, [1, 0], [3, -1]))
    begin = tf.placeholder(tf.int32, [2])
    out = tf.slice(M, begin, [2, -1])
    assert out.shape.as_list() == [2, None]
    with pytest.raises(errors.InvalidArgumentError, match=r"Expected size\[0\]"):
        _fetch(out, {begin: [2, 0]})


# -- gather / scatter -------------------------------------------------------------------------

def test_gather_shapes_and_errors():
    assert tf.gather(M, [0, 1]).op.name == "GatherV2"
    p = tf.placeholder(tf.float32, [None, 5, 6])
    assert tf.gather(p, [[0, 1]], axis=1).shape.as_list() == [None, 1, 2, 6]
    assert tf.gather(p, tf.placeholder(tf.int32, [None])).shape.as_list() == [None, 5, 6]
    with pytest.raises(errors.InvalidArgumentError, match=r"indices\[1\] = 5 is not in \[0, 3\)"):
        _fetch(tf.gather(M, [0, 5]))
    with pytest.raises(errors.InvalidArgumentError, match=r"indices\[0,1\] = -1 is not in"):
        _fetch(tf.gather(M, [[0, -1]]))
    with pytest.raises(ValueError, match="batch_dims"):
        tf.gather(M, [[0]], axis=0, batch_dims=1)
    with pytest.raises(errors.InvalidArgumentError, match="does not index into param shape"):
        _fetch(tf.gather_nd(M, [[0, 9]]))
    with pytest.raises(errors.InvalidArgumentError, match="does not index into output shape"):
        _fetch(tf.scatter_nd([[5]], [1.0], [3]))
    with pytest.raises(ValueError, match="indices.shape"):
        tf.gather_nd(M, [[0, 0, 0]])
    # Empty params: no index can be valid; zero requested slices are still fine.
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"Requested more than 0 entries, but params is empty.*\[0,4\]"):
        _fetch(tf.gather_nd(np.zeros([0, 4], np.float32), np.zeros([3, 1], np.int32)))
    empty = _fetch(tf.gather_nd(np.zeros([0, 4], np.float32), np.zeros([0, 2], np.int32)))
    assert empty.shape == (0,)


def test_zero_d_integer_arrays_index_like_ints():
    # np.asarray(k) of int32/int64 is a valid index (TF1); other 0-d/1-d arrays are not.
    for dtype in (np.int32, np.int64):
        k = np.asarray(2, dtype)
        got = _fetch([tf.constant(M)[k], tf.constant(M)[k:k + 1, k]])
        np.testing.assert_array_equal(got[0], M[2])
        np.testing.assert_array_equal(got[1], M[2:3, 2])
    with pytest.raises(TypeError, match="valid indices"):
        tf.constant(M)[np.asarray([1])]
    with pytest.raises(TypeError, match="valid indices"):
        tf.constant(M)[np.asarray(1.0)]


def test_gather_batch_dims_none_means_zero():
    params = np.arange(12).reshape(3, 4)
    got = _fetch([tf.gather(params, [3, 0], axis=1, batch_dims=None),
                  tf.gather(params, [2, 2], batch_dims=None)])
    np.testing.assert_array_equal(got[0], params[:, [3, 0]])
    np.testing.assert_array_equal(got[1], params[[2, 2]])


def test_fed_tensor_with_too_few_dims_for_the_slice():
    p = tf.placeholder(tf.int32)
    with pytest.raises(errors.InvalidArgumentError,
                       match="Index out of range using input dim 1; input has only 1 dims"):
        _fetch(p[1:, 0:], {p: [4, 5, 6]})
    np.testing.assert_array_equal(_fetch(p[1:, 0:], {p: [[4, 5], [6, 7]]}), [[6, 7]])


def test_gather_gradient_is_indexed_slices_on_axis_0():
    params = tf.placeholder(tf.float64, [3, 2])
    (grad,) = tf.gradients(tf.gather(params, [[2, 0], [2, 2]]), params)
    assert isinstance(grad, tf.IndexedSlices)
    values, indices = _fetch([grad.values, grad.indices], {params: np.zeros([3, 2])})
    assert values.shape == (4, 2)
    np.testing.assert_array_equal(indices, [2, 0, 2, 2])
    (dense,) = tf.gradients(tf.gather(params, [1, 1], axis=1), params)
    assert isinstance(dense, tf.Tensor)
    np.testing.assert_array_equal(_fetch(dense, {params: np.zeros([3, 2])}),
                                  [[0, 2], [0, 2], [0, 2]])


@settings(max_examples=30, deadline=None)
@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4)),
       st.data())
def test_gather_matches_numpy(value, data):
    axis = data.draw(st.integers(-value.ndim, value.ndim - 1))
    size = value.shape[axis]
    indices = data.draw(hnp.arrays(np.int64, hnp.array_shapes(min_dims=0, max_dims=2,
                                                              min_side=0, max_side=3),
                                   elements=st.integers(0, size - 1)))
    with tf.Graph().as_default():
        check(tf.gather(value, indices, axis=axis), np.take(value, indices, axis=axis))


# -- boolean_mask and where ---------------------------------------------------------------------

def test_boolean_mask_static_dynamic_and_axis():
    mask = np.array([[True, False, True], [False, False, True]])
    check(tf.boolean_mask(X, mask), X[mask])
    check(tf.boolean_mask(X, [True, False, True, True], axis=2), X[:, :, [0, 2, 3]])
    p = tf.placeholder(tf.float32, [None, 3, 4])
    m = tf.placeholder(tf.bool, [None, 3])
    out = tf.boolean_mask(p, m)
    assert out.shape.as_list() == [None, 4]
    values = _fetch(out, {p: X, m: mask})
    np.testing.assert_array_equal(values, X[mask])
    with pytest.raises(ValueError, match="mask cannot be scalar"):
        tf.boolean_mask(X, True)
    with pytest.raises(ValueError, match="Number of mask dimensions"):
        tf.boolean_mask(X, tf.placeholder(tf.bool))
    with pytest.raises(ValueError):
        tf.boolean_mask(X, [True, False, True])


def test_where_static_shape():
    out = tf.where(tf.placeholder(tf.bool, [None, 2, 2]))
    assert out.shape.as_list() == [None, 3] and out.dtype == tf.int64


# -- gradients -----------------------------------------------------------------------------------


def _gather_batch(tf, x):
    return tf.gather(x, [[2, 0, 2], [1, 1, 0]], axis=2, batch_dims=1)


GRADIENT_CASES = [
    ("Slice", _case(lambda tf, x: tf.slice(x, [1, 0], [2, -1]), [3, 3])),
    ("StridedSlice", _case(lambda tf, x: x[1:, ::-2], [3, 4])),
    ("StridedSlice", _case(lambda tf, x: x[..., tf.newaxis, -1], [2, 3])),
    ("StridedSliceGrad", _case(lambda tf, dy: slicing_ops.StridedSliceGrad(
        [3, 4], [0, 3], [3, 0], [2, -1], dy), [2, 3])),
    ("GatherV2", _case(lambda tf, x: tf.gather(x, [[2, 0], [2, 2]]), [3, 2])),
    ("GatherV2", _case(lambda tf, x: tf.gather(x, [1, 1, 0], axis=1), [2, 3, 2])),
    ("GatherV2", _case(_gather_batch, [2, 2, 3])),
    ("GatherV2", _case(lambda tf, x: tf.gather(tf.placeholder_with_default(x, None), [2, 0]),
                       [3, 2])),
    ("Slice", _case(lambda tf, x: tf.slice(tf.placeholder_with_default(x, None), [0, 1],
                                           [-1, 1]), [2, 3])),
    ("Gather", _case(lambda tf, x: gather_ops.Gather(x, [1, 0, 1]), [2, 3])),
    ("GatherNd", _case(lambda tf, x: tf.gather_nd(x, [[1, 0], [1, 0], [0, 2]]), [2, 3])),
    ("ScatterNd", _case(lambda tf, u: tf.scatter_nd([[1], [0], [1]], u, [3, 2]), [3, 2])),
]
