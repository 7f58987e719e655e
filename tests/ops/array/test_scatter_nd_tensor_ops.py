"""TensorScatterUpdate/Add/Sub/Max/Min and batch_scatter_update."""

import collections

import numpy as np
import pytest
from array_checks import _fetch, check
from hypothesis import given, settings
from hypothesis import strategies as st
from op_helpers import gradient_case as _case
from op_helpers import graph  # noqa: F401 - the autouse fixture

import tensorflux as tf
from tensorflux.framework import errors

Row = collections.namedtuple("Row", "op build expected")
T = np.arange(12, dtype=np.float32).reshape(4, 3)
IDX = np.array([[1], [3], [1]], dtype=np.int32)
UPD = -np.arange(9, dtype=np.float32).reshape(3, 3)


def _ref(ufunc, tensor, indices, updates):
    out = tensor.copy()
    coords = tuple(np.moveaxis(indices, -1, 0))
    if ufunc is None:
        out[coords] = updates
    else:
        ufunc.at(out, coords, updates)
    return out


ROWS = [
    Row("TensorScatterUpdate", lambda: tf.tensor_scatter_nd_update([1, 2, 3, 4], [[1], [3]],
                                                                   [9, 10]),
        np.array([1, 9, 3, 10], np.int32)),
    Row("TensorScatterUpdate", lambda: tf.tensor_scatter_update(T, [[0, 2], [3, 0]], [7., 8.]),
        _ref(None, T, np.array([[0, 2], [3, 0]]), np.array([7., 8.], np.float32))),
    Row("TensorScatterAdd", lambda: tf.tensor_scatter_nd_add(T, IDX, UPD),
        _ref(np.add, T, IDX, UPD)),
    Row("TensorScatterAdd", lambda: tf.tensor_scatter_add(np.ones((2, 2)),
                                                          np.zeros((3, 0), np.int32),
                                                          np.ones((3, 2, 2))),
        np.full((2, 2), 4.0)),
    Row("TensorScatterSub", lambda: tf.tensor_scatter_nd_sub(T, tf.constant(IDX, tf.int64), UPD),
        _ref(np.subtract, T, IDX, UPD)),
    Row("TensorScatterSub", lambda: tf.tensor_scatter_sub([5, 5], [[0]], [2]),
        np.array([3, 5], np.int32)),
    Row("TensorScatterMax", lambda: tf.tensor_scatter_nd_max([1, 5, 3], [[0], [1], [0]],
                                                             [4, 4, 2]),
        np.array([4, 5, 3], np.int32)),
    Row("TensorScatterMin", lambda: tf.tensor_scatter_nd_min(T, IDX, UPD + 6),
        _ref(np.minimum, T, IDX, UPD + 6)),
]

COVERED_OPS = {row.op for row in ROWS}


@pytest.mark.parametrize("row", ROWS, ids=[f"{r.op}-{i}" for i, r in enumerate(ROWS)])
def test_row(row):
    check(row.build(), row.expected)


def test_static_shape_and_errors():
    p = tf.placeholder(tf.float32, [None, 3])
    out = tf.tensor_scatter_nd_add(p, tf.placeholder(tf.int32, [None, 1]),
                                   tf.placeholder(tf.float32, [None, 3]))
    assert out.shape.as_list() == [None, 3]
    assert tf.tensor_scatter_nd_update(T, IDX, UPD).op.type == "TensorScatterUpdate"
    with pytest.raises(ValueError, match="updates shape"):
        tf.tensor_scatter_nd_update(T, IDX, np.zeros((3, 2), np.float32))
    with pytest.raises(ValueError, match="must be <= rank"):
        tf.tensor_scatter_nd_update(T, [[0, 0, 0]], [1.0])
    with pytest.raises(errors.InvalidArgumentError, match=r"indices\[1\] = \[4\] does not index"):
        _fetch(tf.tensor_scatter_nd_update(T, [[0], [4]], np.zeros((2, 3), np.float32)))
    i = tf.placeholder(tf.int32)
    with pytest.raises(errors.InvalidArgumentError, match="updates shape"):
        _fetch(tf.tensor_scatter_nd_add(T, i, np.zeros((2, 3), np.float32)), {i: [[0]]})


def test_batch_scatter_update():
    v = tf.Variable(np.zeros((2, 2, 3), np.float32))
    idx = np.array([[[2], [0]], [[1], [1]]], np.int32)
    upd = np.arange(1, 5, dtype=np.float32).reshape(2, 2, 1)
    out = tf.batch_scatter_update(v, idx, upd)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got = sess.run(out)
        expected = np.zeros((2, 2, 3), np.float32)
        expected[0, 0, 2], expected[0, 1, 0], expected[1, 0, 1], expected[1, 1, 1] = 1, 2, 3, 4
        np.testing.assert_array_equal(got, expected)
        np.testing.assert_array_equal(sess.run(v), expected)
    flat = tf.Variable([1.0, 2.0, 3.0])
    with tf.Session() as sess:
        sess.run(flat.initializer)
        np.testing.assert_array_equal(sess.run(tf.batch_scatter_update(flat, [2], [9.0])),
                                      [1.0, 2.0, 9.0])
    with pytest.raises(ValueError, match="known rank"):
        tf.batch_scatter_update(flat, tf.placeholder(tf.int32), [1.0])


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 5), st.integers(1, 6), st.integers(0, 2**16),
       st.sampled_from(["update", "add", "sub", "max", "min"]))
def test_matches_numpy(rows, count, seed, kind):
    rng = np.random.RandomState(seed)
    tensor = rng.randint(-9, 9, (rows, 2)).astype(np.int64)
    indices = rng.randint(0, rows, (count, 1)).astype(np.int32)
    if kind == "update":
        indices = np.unique(indices)[:, None]  # duplicate updates have no defined winner
    updates = rng.randint(-9, 9, (len(indices), 2)).astype(np.int64)
    fn = getattr(tf, f"tensor_scatter_nd_{kind}")
    ufunc = {"update": None, "add": np.add, "sub": np.subtract, "max": np.maximum,
             "min": np.minimum}[kind]
    with tf.Graph().as_default():
        check(fn(tensor, indices, updates), _ref(ufunc, tensor, indices, updates))


# -- gradients -----------------------------------------------------------------------------------


_I = [[2], [0]]
GRADIENT_CASES = [
    ("TensorScatterUpdate", _case(lambda tf, t, u: tf.tensor_scatter_nd_update(t, _I, u),
                                  [3, 2], [2, 2])),
    ("TensorScatterAdd", _case(lambda tf, t, u: tf.tensor_scatter_nd_add(t, [[1], [1]], u),
                               [3, 2], [2, 2])),
    ("TensorScatterSub", _case(lambda tf, t, u: tf.tensor_scatter_nd_sub(t, _I, u),
                               [3, 2], [2, 2])),
    ("TensorScatterMax", _case(lambda tf, t, u: tf.tensor_scatter_nd_max(t, [[0, 1], [2, 0]], u),
                               [3, 2], [2])),
    ("TensorScatterMin", _case(lambda tf, t, u: tf.tensor_scatter_nd_min(t, _I, u),
                               [3, 2], [2, 2])),
]


def test_extremum_gradient_splits_ties():
    t = tf.constant([1.0, 3.0])
    u = tf.constant([3.0, 3.0])
    out = tf.tensor_scatter_nd_max(t, [[1], [1]], u)
    gt, gu = tf.gradients(out, [t, u])
    np.testing.assert_allclose(_fetch([gt, gu]), [[1.0, 1 / 3], [1 / 3, 1 / 3]])
