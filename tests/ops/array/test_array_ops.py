"""array_ops and shape_ops: constants, placeholders, identity family, shapes,
reshape/transpose, fill, zeros/ones, broadcast_to. Each op has a row (value, dtype, static
shape) plus error cases."""

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
from tensorflux.ops.array import constants
from tensorflux.ops.array import shapes as shape_ops

Row = collections.namedtuple("Row", "op build expected")
X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
C = (np.arange(6) + 1j * np.arange(6)[::-1]).reshape(2, 3).astype(np.complex64)


ROWS = [
    Row("Const", lambda: tf.constant([[1, 2], [3, 4]], dtype=tf.int64), [[1, 2], [3, 4]]),
    Row("Const", lambda: tf.constant(2.5, shape=[2, 2]), np.full([2, 2], 2.5, np.float32)),
    Row("PlaceholderWithDefault", lambda: tf.placeholder_with_default([1.0, 2.0], [None]),
        np.array([1.0, 2.0], np.float32)),
    Row("Identity", lambda: tf.identity(X), X),
    Row("IdentityN", lambda: tf.identity_n([X, tf.constant(3)]), [X, 3]),
    Row("StopGradient", lambda: tf.stop_gradient(X), X),
    Row("PreventGradient", lambda: tf.prevent_gradient(X, message="no"), X),
    Row("EnsureShape", lambda: tf.ensure_shape(tf.placeholder_with_default(X, None),
                                               [2, None, 4]), X),
    Row("Shape", lambda: tf.shape(tf.placeholder_with_default(X, [None, 3, None])),
        np.array([2, 3, 4], np.int32)),
    Row("Shape", lambda: tf.shape(tf.placeholder_with_default(X, None), out_type=tf.int64),
        np.array([2, 3, 4], np.int64)),
    Row("ShapeN", lambda: tf.shape_n([X, tf.constant(1.0)]), [np.array([2, 3, 4], np.int32),
                                                           np.zeros([0], np.int32)]),
    Row("Size", lambda: tf.size(tf.placeholder_with_default(X, None)), np.int32(24)),
    Row("Size", lambda: tf.size(tf.placeholder_with_default(X, None), out_type=tf.int64),
        np.int64(24)),
    Row("Rank", lambda: tf.rank(tf.placeholder_with_default(X, None)), np.int32(3)),
    Row("Reshape", lambda: tf.reshape(X, [4, -1]), X.reshape(4, -1)),
    Row("Reshape", lambda: tf.reshape(X, tf.constant([-1], tf.int64)), X.reshape(-1)),
    Row("Reshape", lambda: tf.reshape(tf.constant([7]), []), np.int32(7)),
    Row("Reshape", lambda: tf.reshape(tf.zeros([0, 3]), [-1, 3]), np.zeros([0, 3], np.float32)),
    Row("ExpandDims", lambda: tf.expand_dims(X, -1), X[..., None]),
    Row("ExpandDims", lambda: tf.expand_dims(X, 1), X[:, None]),
    Row("Squeeze", lambda: tf.squeeze(tf.zeros([1, 2, 1, 3])), np.zeros([2, 3], np.float32)),
    Row("Squeeze", lambda: tf.squeeze(tf.zeros([1, 2, 1]), axis=[-1]),
        np.zeros([1, 2], np.float32)),
    Row("Transpose", lambda: tf.transpose(X), X.T),
    Row("Transpose", lambda: tf.transpose(X, [1, 0, 2]), X.transpose(1, 0, 2)),
    Row("Transpose", lambda: tf.matrix_transpose(X), X.transpose(0, 2, 1)),
    Row("ConjugateTranspose", lambda: tf.transpose(C, conjugate=True), np.conj(C.T)),
    Row("InvertPermutation", lambda: tf.invert_permutation([2, 0, 3, 1]),
        np.array([1, 3, 0, 2], np.int32)),
    Row("Fill", lambda: tf.fill([2, 3], 9), np.full([2, 3], 9, np.int32)),
    Row("Fill", lambda: tf.fill(tf.constant([0, 2], tf.int64), 1.5), np.zeros([0, 2], np.float32)),
    Row("Fill", lambda: tf.zeros(tf.constant([2, 1]), tf.int64), np.zeros([2, 1], np.int64)),
    Row("Fill", lambda: tf.ones_like(tf.placeholder_with_default(X, None), dtype=tf.bool),
        np.ones(X.shape, bool)),
    Row("ZerosLike", lambda: tf.zeros_like(tf.placeholder_with_default(X, None)),
        np.zeros_like(X)),
    Row("ZerosLike", lambda: tf.zeros_like(tf.placeholder_with_default([b"a"], None)),
        np.array([b""], object)),
    Row("OnesLike", lambda: constants.OnesLike(tf.constant([[1, 2]], tf.int8)),
        np.ones([1, 2], np.int8)),
    Row("BroadcastTo", lambda: tf.broadcast_to([[1.0], [2.0]], [2, 3]),
        np.array([[1, 1, 1], [2, 2, 2]], np.float32)),
    Row("BroadcastTo", lambda: tf.broadcast_to(5, []), np.int32(5)),
    Row("BroadcastArgs", lambda: tf.broadcast_dynamic_shape([2, 1, 3], [4, 1]),
        np.array([2, 4, 3], np.int32)),
]

COVERED_OPS = {row.op for row in ROWS} | {"Placeholder"}


@pytest.mark.parametrize("row", ROWS, ids=[f"{r.op}-{i}" for i, r in enumerate(ROWS)])
def test_row(row):
    check(row.build(), row.expected)


# -- static shapes -------------------------------------------------------------------------------

def test_placeholder_requires_feed_and_checks_shape():
    p = tf.placeholder(tf.float32, [None, 2], name="p")
    assert p.shape.as_list() == [None, 2]
    with pytest.raises(errors.InvalidArgumentError, match="must feed"):
        _fetch(p)
    check(p * 1.0, np.ones([3, 2], np.float32), {p: np.ones([3, 2])})


def test_reshape_static_shapes_follow_tf():
    p = tf.placeholder(tf.float32, [None, 3, 4])
    assert tf.reshape(p, [-1, 12]).shape.as_list() == [None, 12]
    assert tf.reshape(p, [2, -1]).shape.as_list() == [2, None]
    assert tf.reshape(X, [-1, 6]).shape.as_list() == [4, 6]
    assert tf.reshape(p, [tf.shape(p)[0], 12]).shape.as_list() == [None, 12]
    assert tf.reshape(p, tf.concat([tf.shape(p)[:1], [12]], 0)).shape.as_list() == [None, 12]
    n = tf.placeholder(tf.int32, [])
    assert tf.reshape(X, [n, 12]).shape.as_list() == [2, 12]
    assert tf.reshape(p, tf.placeholder(tf.int32, [2])).shape.as_list() == [None, None]


def test_reshape_errors():
    with pytest.raises(ValueError, match="Cannot reshape a tensor with 24 elements"):
        tf.reshape(X, [5, 5])
    with pytest.raises(ValueError, match="divisible"):
        tf.reshape(X, [5, -1])
    with pytest.raises(ValueError, match="multiple unknown"):
        tf.reshape(X, [-1, -1])
    with pytest.raises(ValueError, match="evenly divisible by 12"):
        tf.reshape(tf.placeholder(tf.float32, [None, 3, 4]), [5, 5])
    shape = tf.placeholder(tf.int32, [2])
    out = tf.reshape(X, shape)
    with pytest.raises(errors.InvalidArgumentError, match="24 values, but the requested shape"):
        _fetch(out, {shape: [5, 5]})
    with pytest.raises(errors.InvalidArgumentError, match="multiple of 5"):
        _fetch(out, {shape: [5, -1]})
    check(out, X.reshape(6, 4), {shape: [6, -1]})


def test_shape_size_rank_are_constants_when_static():
    assert tf.shape(X).op.type == "Const"
    assert tf.size(X).op.type == "Const"
    assert tf.rank(X).op.type == "Const"
    assert tf.shape(tf.placeholder(tf.float32, [None])).op.type == "Shape"
    assert tf.rank(tf.placeholder(tf.float32)).op.type == "Rank"


def test_expand_dims_and_squeeze_errors():
    with pytest.raises(ValueError, match="dim 5 not in the interval"):
        tf.expand_dims(X, 5)
    with pytest.raises(ValueError, match=r"Can not squeeze dim\[0\]"):
        tf.squeeze(X, [0])
    p = tf.placeholder(tf.float32, [None, 3])
    out = tf.squeeze(p, [0])
    assert out.shape.as_list() == [3]
    with pytest.raises(errors.InvalidArgumentError, match="squeeze"):
        _fetch(out, {p: np.zeros([2, 3])})
    assert tf.squeeze(p).shape.ndims is None
    with pytest.raises(ValueError, match="Must specify an axis"):
        tf.expand_dims(X)


def test_transpose_shapes_and_errors():
    p = tf.placeholder(tf.float32, [None, 3, 4])
    reversed_p = tf.transpose(p)
    assert reversed_p.shape.as_list() == [4, 3, None]
    assert reversed_p.op.name == "transpose" and reversed_p.op.inputs[1].op.name == "transpose/perm"
    assert tf.transpose(p, [0, 2, 1]).shape.as_list() == [None, 4, 3]
    # Out-of-range entries fail at build time; a repeated entry only when run (as TF).
    with pytest.raises(ValueError, match="perm dim 3 is out of range of input rank 3"):
        tf.transpose(X, [0, 3, 1])
    repeated = tf.transpose(X, [0, 0, 1])
    with pytest.raises(errors.InvalidArgumentError, match=r"2 is missing from \{0,0,1\}"):
        _fetch(repeated)
    perm = tf.placeholder(tf.int32, [3])
    out = tf.transpose(X, perm)
    assert out.shape.as_list() == [None, None, None]
    with pytest.raises(errors.InvalidArgumentError, match=r"1 is missing from \{2,0,2\}"):
        _fetch(out, {perm: [2, 0, 2]})
    with pytest.raises(errors.InvalidArgumentError, match="not a valid permutation"):
        _fetch(tf.invert_permutation([0, 0, 1]))


def test_fill_and_zeros_static_shapes():
    n = tf.placeholder(tf.int32, [])
    assert tf.fill(tf.stack([n, 3]), 0.0).shape.as_list() == [None, 3]
    assert tf.zeros([n, 2]).shape.as_list() == [None, 2]
    with pytest.raises(ValueError, match="Fill dimensions must be >= 0"):
        tf.fill([-1, 2], 1.0)
    dims = tf.placeholder(tf.int32, [2])
    with pytest.raises(errors.InvalidArgumentError, match="non-negative"):
        _fetch(tf.fill(dims, 1.0), {dims: [-1, 2]})
    z = tf.zeros([2, 3], tf.int32)
    assert z.op.type == "Const" and z.op.name == "zeros_1"
    big = tf.ones([100, 100])
    assert big.op.type == "Fill"
    check(big, np.ones([100, 100], np.float32))


def test_zeros_like_ones_like_forms():
    p = tf.placeholder(tf.float32, [None, 3])
    assert tf.zeros_like(X).op.type == "Const"
    assert tf.zeros_like(p).op.type == "ZerosLike"
    cast = tf.zeros_like(p, dtype=tf.int32)
    assert cast.dtype == tf.int32 and cast.op.type == "Fill"
    ones = tf.ones_like(p)
    assert ones.op.type == "Fill" and ones.op.name == "ones_like"
    check([cast, ones], [np.zeros([2, 3], np.int32), np.ones([2, 3], np.float32)],
          {p: np.zeros([2, 3])})


def test_broadcast_to_and_static_shape():
    with pytest.raises(ValueError, match="broadcast"):
        tf.broadcast_to(tf.zeros([3, 4]), [2, 4])
    s = tf.placeholder(tf.int32, [2])
    out = tf.broadcast_to([1, 2], s)
    assert out.shape.as_list() == [None, None]
    with pytest.raises(errors.InvalidArgumentError, match="Unable to broadcast"):
        _fetch(out, {s: [2, 3]})
    assert tf.broadcast_static_shape(tf.TensorShape([None, 1, 3]),
                                     tf.TensorShape([4, 3])).as_list() == [None, 4, 3]
    with pytest.raises(ValueError, match="Incompatible"):
        tf.broadcast_static_shape(tf.TensorShape([2]), tf.TensorShape([3]))
    with pytest.raises(errors.InvalidArgumentError, match="Incompatible shapes"):
        _fetch(tf.broadcast_dynamic_shape([2], [3]))


def test_ensure_shape_fails_at_run_time():
    p = tf.placeholder(tf.float32)
    out = tf.ensure_shape(p, [None, 2])
    assert out.shape.as_list() == [None, 2]
    with pytest.raises(errors.InvalidArgumentError, match="not compatible"):
        _fetch(out, {p: np.zeros([2, 3])})
    with pytest.raises(ValueError, match="incompatible"):
        tf.ensure_shape(X, [2, 3])
    # The message names the input edge and prints both shapes as TF does.
    ratio = tf.div(tf.placeholder_with_default(np.ones([2, 1], np.float32), None), 2.0,
                   name="MyDivide")
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"Shape of tensor MyDivide \[2,1\] is not compatible with "
                             r"expected shape \[\?,\?,3\]\."):
        _fetch(tf.ensure_shape(ratio, [None, None, 3]))


def test_prevent_gradient_raises_lookup_error():
    x = tf.placeholder(tf.float32, [2])
    y = tf.prevent_gradient(x, message="custom reason")
    with pytest.raises(LookupError, match="custom reason"):
        tf.gradients(y, x)


def test_stop_gradient_blocks():
    x = tf.placeholder(tf.float32, [2])
    assert tf.gradients(tf.stop_gradient(x), x) == [None]


def test_single_output_list_ops():
    (a,) = tf.identity_n([X])
    (s,) = tf.shape_n([X])
    check([a, s], [X, np.array([2, 3, 4], np.int32)])


def test_newaxis_and_identity_n():
    assert tf.newaxis is None
    a, b = tf.identity_n([X, tf.constant([1, 2])])
    assert a.shape.as_list() == [2, 3, 4] and b.dtype == tf.int32


@settings(max_examples=25, deadline=None)
@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=0, max_dims=4, max_side=3)),
       st.data())
def test_reshape_transpose_match_numpy(value, data):
    with tf.Graph().as_default():
        perm = data.draw(st.permutations(list(range(value.ndim))))
        shape = list(value.shape)[::-1]
        if shape:
            shape[data.draw(st.integers(0, len(shape) - 1))] = -1
        check([tf.reshape(value, shape), tf.transpose(value, perm)],
              [value.reshape(shape), value.transpose(perm)])


# -- gradients -----------------------------------------------------------------------------------


def _conjugate_transpose(tf, x):
    return shape_ops.ConjugateTranspose(x, [1, 0])


GRADIENT_CASES = [
    ("Identity", _case(lambda tf, x: tf.identity(x), [2, 3])),
    ("PlaceholderWithDefault", _case(lambda tf, x: tf.placeholder_with_default(x, None), [3])),
    ("IdentityN", _case(lambda tf, x, y: tf.identity_n([x, y])[0] * tf.identity_n([x, y])[1],
                        [2], [2])),
    ("EnsureShape", _case(lambda tf, x: tf.ensure_shape(x, [2, None]), [2, 3])),
    ("Reshape", _case(lambda tf, x: tf.reshape(x, [3, -1]), [2, 3])),
    ("ExpandDims", _case(lambda tf, x: tf.expand_dims(x, 1), [2, 3])),
    ("Squeeze", _case(lambda tf, x: tf.squeeze(x, [1]), [2, 1, 3])),
    ("Transpose", _case(lambda tf, x: tf.transpose(x, [2, 0, 1]), [2, 3, 2])),
    ("ConjugateTranspose", _case(_conjugate_transpose, [2, 3])),
    ("Fill", _case(lambda tf, v: tf.fill([2, 3], v), [])),
    ("BroadcastTo", _case(lambda tf, x: tf.broadcast_to(x, [2, 3, 2]), [3, 1])),
]
