"""concat_ops and pad_ops: concat/split/stack (and list autopacking), tile, pad, reverse,
one_hot. Value rows against NumPy, static shapes, and error cases."""

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
from tensorflux.ops.array import concat_split as concat_ops
from tensorflux.ops.array import padding as pad_ops

Row = collections.namedtuple("Row", "op build expected")
X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
Y = np.arange(6, dtype=np.int64).reshape(2, 3)




def _dyn(value):
    return tf.placeholder_with_default(value, None)


ROWS = [
    Row("ConcatV2", lambda: tf.concat([X, X[:, :1]], 1), np.concatenate([X, X[:, :1]], 1)),
    Row("ConcatV2", lambda: tf.concat([Y, Y, Y], -1), np.concatenate([Y, Y, Y], -1)),
    Row("ConcatV2", lambda: tf.concat([_dyn(Y), Y[:0]], tf.constant(0, tf.int64)),
        np.concatenate([Y, Y[:0]], 0)),
    Row("ConcatOffset", lambda: concat_ops.ConcatOffset(1, [[2, 3, 4], [2, 5, 4], [2, 1, 4]]),
        [np.array([0, 0, 0], np.int32), np.array([0, 3, 0], np.int32),
         np.array([0, 8, 0], np.int32)]),
    Row("Split", lambda: tf.split(X, 2, axis=2), np.split(X, 2, 2)),
    Row("Split", lambda: tf.split(_dyn(X), 3, axis=-2), np.split(X, 3, 1)),
    Row("SplitV", lambda: tf.split(X, [1, -1, 1], 2), np.split(X, [1, 3], 2)),
    Row("SplitV", lambda: tf.split(_dyn(Y), tf.constant([0, 2], tf.int64), 0), np.split(Y, [0], 0)),
    Row("Pack", lambda: tf.stack([Y, Y + 1], axis=1), np.stack([Y, Y + 1], 1)),
    Row("Pack", lambda: tf.stack([_dyn(Y), Y], axis=-1), np.stack([Y, Y], -1)),
    Row("Pack", lambda: tf.convert_to_tensor([[_dyn(1.5), 2.0], [3, 4]]),
        np.array([[1.5, 2.0], [3, 4]], np.float32)),
    Row("Unpack", lambda: tf.unstack(X, axis=1), [X[:, i] for i in range(3)]),
    Row("Unpack", lambda: tf.unstack(X, num=4, axis=-1), [X[..., i] for i in range(4)]),
    Row("Tile", lambda: tf.tile(Y, [2, 3]), np.tile(Y, [2, 3])),
    Row("Tile", lambda: tf.tile(X, tf.constant([1, 0, 2], tf.int64)), np.tile(X, [1, 0, 2])),
    Row("Pad", lambda: tf.pad(Y, [[1, 0], [2, 3]]), np.pad(Y, [[1, 0], [2, 3]])),
    Row("PadV2", lambda: tf.pad(Y, [[0, 1], [1, 1]], constant_values=7),
        np.pad(Y, [[0, 1], [1, 1]], constant_values=7)),
    Row("MirrorPad", lambda: tf.pad(Y, [[1, 1], [2, 2]], "REFLECT"),
        np.pad(Y, [[1, 1], [2, 2]], "reflect")),
    Row("MirrorPad", lambda: tf.pad(Y, [[2, 1], [3, 0]], mode="symmetric"),
        np.pad(Y, [[2, 1], [3, 0]], "symmetric")),
    Row("MirrorPadGrad", lambda: pad_ops.MirrorPadGrad(
        np.ones([4, 7], np.float32), [[1, 1], [2, 2]], mode="REFLECT"),
        np.array([[4, 6, 4], [4, 6, 4]], np.float32)),
    Row("ReverseV2", lambda: tf.reverse(X, [0, -1]), X[::-1, :, ::-1]),
    Row("ReverseV2", lambda: tf.reverse(Y, tf.constant([], tf.int64)), Y),
    Row("ReverseSequence", lambda: tf.reverse_sequence(X, [3, 1], seq_axis=1, batch_axis=0),
        np.stack([X[0, ::-1], X[1]])),
    Row("ReverseSequence", lambda: tf.reverse_sequence(
        X, tf.constant([0, 2, 4], tf.int32), seq_dim=2, batch_dim=1),
        np.stack([X[:, 0], X[:, 1][:, [1, 0, 2, 3]], X[:, 2, ::-1]], 1)),
    Row("OneHot", lambda: tf.one_hot([[0, 3], [1, -1]], 3),
        np.array([[[1, 0, 0], [0, 0, 0]], [[0, 1, 0], [0, 0, 0]]], np.float32)),
    Row("OneHot", lambda: tf.one_hot(tf.constant([2, 0], tf.int64), 3, on_value=5, off_value=-1,
                                     axis=0),
        np.array([[-1, 5], [-1, -1], [5, -1]], np.int32)),
    Row("OneHot", lambda: tf.one_hot([1], 2, dtype=tf.bool), np.array([[False, True]])),
]

COVERED_OPS = {row.op for row in ROWS}


@pytest.mark.parametrize("row", ROWS, ids=[f"{r.op}-{i}" for i, r in enumerate(ROWS)])
def test_row(row):
    check(row.build(), row.expected)


def test_mirror_pad_grad_matches_adjoint():
    rng = np.random.RandomState(0)
    for mode in ("REFLECT", "SYMMETRIC"):
        x = rng.uniform(size=(3, 4))
        pads = [[2, 1], [1, 3]] if mode == "SYMMETRIC" else [[2, 1], [1, 2]]
        g = rng.uniform(size=np.pad(x, pads).shape)
        (back,) = _fetch([pad_ops.MirrorPadGrad(g, pads, mode=mode)])
        forward = np.pad(x, pads, mode.lower())
        np.testing.assert_allclose(np.sum(forward * g), np.sum(back * x))


def test_single_output_list_ops():
    parts = tf.split(Y, 1, axis=1)
    sized = tf.split(Y, [3], axis=1)
    (row,) = tf.unstack(Y[:1])
    check([parts[0], sized[0], row], [Y, Y, Y[0]])


def test_concat_single_value_is_identity_and_names():
    out = tf.concat([X], 0)
    assert out.op.type == "Identity" and out.op.name == "concat/concat"
    assert tf.concat([X, X], 0).op.name == "concat_1"
    assert tf.stack([1, 2]).op.type == "Const"


def test_concat_static_shapes_and_errors():
    p = tf.placeholder(tf.float32, [None, 3])
    assert tf.concat([p, p], 0).shape.as_list() == [None, 3]
    assert tf.concat([p, tf.zeros([2, 3])], 1).shape.as_list() == [2, 6]
    axis = tf.placeholder(tf.int32, [])
    assert tf.concat([p, p], axis).shape.as_list() == [None, None]
    with pytest.raises(ValueError, match="in both shapes must be equal"):
        tf.concat([X, X[:, :2]], 2)
    with pytest.raises(ValueError, match="scalars"):
        tf.concat([tf.constant(1), tf.constant(2)], 0)
    q = tf.placeholder(tf.float32)
    with pytest.raises(errors.InvalidArgumentError, match="ConcatOp"):
        _fetch(tf.concat([p, q], 0), {p: np.zeros([1, 3]), q: np.zeros([1, 2])})


def test_split_shapes_and_errors():
    parts = tf.split(tf.placeholder(tf.float32, [None, 4]), [1, -1], 1)
    assert [t.shape.as_list() for t in parts] == [[None, 1], [None, 3]]
    with pytest.raises(ValueError, match="evenly divisible by 5"):
        tf.split(X, 5, 2)
    with pytest.raises(ValueError, match="can't split axis of size 4"):
        tf.split(X, [1, 2], 2)
    with pytest.raises(ValueError, match="Cannot infer num"):
        tf.split(X, tf.placeholder(tf.int32, [None]), 2)
    p = tf.placeholder(tf.float32, [None])
    with pytest.raises(errors.InvalidArgumentError, match="evenly divide"):
        _fetch(tf.split(p, 2), {p: np.zeros(3)})
    with pytest.raises(errors.InvalidArgumentError, match="split axis"):
        _fetch(tf.split(p, [2, 2]), {p: np.zeros(3)})


def test_split_scalar_tensor_sizes_and_bad_fed_axis():
    # A rank-0 tensor is neither a count nor a size list (TF1 split raises ValueError).
    with pytest.raises(ValueError, match="Rank-0 tensors are not supported"):
        tf.split(X, tf.constant(2), 0)
    with pytest.raises(ValueError, match="should evenly divide the split dimension"):
        tf.split([0, 1, 2, 3, 4], 2)
    # An unknown-shape size tensor: the number of outputs cannot be known.
    with pytest.raises(ValueError, match="Cannot infer num"):
        tf.split(X, tf.placeholder(tf.int32), 2)
    axis = tf.placeholder(tf.int32)
    value = np.arange(24.0).reshape(4, 6)
    parts = tf.split(value, tf.placeholder_with_default([1, 2, 3], [3]), axis=axis)
    got = _fetch(parts, {axis: 1})
    for piece, ref in zip(got, np.split(value, [1, 3], axis=1)):
        np.testing.assert_array_equal(piece, ref)
    with pytest.raises(errors.InvalidArgumentError, match="must have exactly one element"):
        _fetch(parts, {axis: np.zeros([0], np.int32)})
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"split_dim < input rank \(2\), but got 2"):
        _fetch(parts, {axis: 2})


def test_stack_unstack_shapes_and_errors():
    p = tf.placeholder(tf.float32, [None, 3])
    assert tf.stack([p, p], axis=1).shape.as_list() == [None, 2, 3]
    with pytest.raises(ValueError, match="must match"):
        tf.stack([X, X[:, :2]])
    with pytest.raises(ValueError, match="axis = 3 not in"):
        tf.stack([Y, Y], axis=3)
    with pytest.raises(ValueError, match="Dimension must be 3 but is 4"):
        tf.unstack(X, num=3, axis=2)
    with pytest.raises(ValueError, match="Cannot infer num"):
        tf.unstack(p)
    q = tf.placeholder(tf.float32, [None])
    with pytest.raises(errors.InvalidArgumentError, match="Shapes of all inputs must match"):
        _fetch(tf.stack([q, q[1:]]), {q: np.zeros(3)})


def test_autopacking_list_with_tensors():
    r = tf.placeholder(tf.float32, [])
    c = tf.convert_to_tensor([r, 3.0, r])
    assert c.op.type == "Pack" and c.op.name == "packed"
    assert c.shape.as_list() == [3]
    check(c, np.array([2, 3, 2], np.float32), {r: 2.0})
    nested = tf.convert_to_tensor([[r, 1.0], (2.0, r)])
    assert nested.shape.as_list() == [2, 2]
    i = tf.placeholder(tf.int64, [])
    assert tf.convert_to_tensor([i, 3]).dtype == tf.int64
    with pytest.raises((TypeError, ValueError)):
        tf.convert_to_tensor([r, tf.constant(1)])
    plain = tf.convert_to_tensor([1, 2])
    assert plain.op.type == "Const" and plain.dtype == tf.int32


def test_tile_pad_reverse_static_shapes_and_errors():
    p = tf.placeholder(tf.float32, [None, 3])
    assert tf.tile(p, [2, 2]).shape.as_list() == [None, 6]
    assert tf.pad(p, [[1, 1], [0, 2]]).shape.as_list() == [None, 5]
    with pytest.raises(ValueError, match="rank"):
        tf.tile(X, [2])
    with pytest.raises(ValueError, match="rank"):
        tf.pad(X, [[1, 1]])
    with pytest.raises(errors.InvalidArgumentError, match="paddings must be less than"):
        _fetch(tf.pad(Y, [[2, 0], [0, 0]], "REFLECT"))
    with pytest.raises(ValueError, match="specified more than once"):
        tf.reverse(X, [0, 0])
    with pytest.raises(ValueError, match="Unknown padding mode"):
        tf.pad(Y, [[0, 0], [0, 0]], "WRAP")
    pads = tf.placeholder(tf.int32, [2, 2])
    mirrored = tf.pad(p, pads, "SYMMETRIC")
    with pytest.raises(errors.InvalidArgumentError, match="paddings must be less than"):
        _fetch(mirrored, {p: np.zeros([2, 3]), pads: [[3, 0], [0, 0]]})
    with pytest.raises(errors.InvalidArgumentError, match="non-negative"):
        _fetch(tf.pad(p, pads), {p: np.zeros([2, 3]), pads: [[-1, 0], [0, 0]]})
    lengths = tf.placeholder(tf.int64, [2])
    with pytest.raises(errors.InvalidArgumentError, match="seq_lengths"):
        _fetch(tf.reverse_sequence(Y, lengths, 1), {lengths: [4, 1]})


def test_one_hot_dtypes_and_errors():
    assert tf.one_hot([1, 2], 3).op.name == "one_hot"
    assert tf.one_hot([1, 2], 3).dtype == tf.float32
    assert tf.one_hot([1, 2], 3, on_value=2).dtype == tf.int32
    assert tf.one_hot([1, 2], 3, off_value=0.5, dtype=tf.float64).dtype == tf.float64
    assert tf.one_hot(tf.placeholder(tf.int32, [None, 2]), 4, axis=1).shape.as_list() == \
        [None, 4, 2]
    with pytest.raises(TypeError, match="must be the same"):
        tf.one_hot([1], 2, on_value=1.0, off_value=0)
    with pytest.raises(ValueError, match="axis"):
        tf.one_hot([1], 2, axis=3)


@settings(max_examples=25, deadline=None)
@given(hnp.arrays(np.int32, hnp.array_shapes(min_dims=1, max_dims=3, max_side=4)), st.data())
def test_concat_split_stack_roundtrip_match_numpy(value, data):
    axis = data.draw(st.integers(-value.ndim, value.ndim - 1))
    cut = data.draw(st.integers(0, value.shape[axis]))
    sizes = [cut, value.shape[axis] - cut]
    with tf.Graph().as_default():
        parts = tf.split(value, sizes, axis)
        joined = tf.concat(parts + [value], axis)
        stacked = tf.stack([value, value], axis=axis)
        check(parts + [joined, stacked],
              np.split(value, [cut], axis) + [np.concatenate([value, value], axis),
                                              np.stack([value, value], axis)])


@settings(max_examples=25, deadline=None)
@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, min_side=2, max_side=4)),
       st.data())
def test_pad_and_tile_match_numpy(value, data):
    pads = [[data.draw(st.integers(0, d - 1)), data.draw(st.integers(0, d - 1))]
            for d in value.shape]
    multiples = [data.draw(st.integers(0, 2)) for _ in value.shape]
    with tf.Graph().as_default():
        check([tf.pad(value, pads), tf.pad(value, pads, "REFLECT"),
               tf.pad(value, pads, "SYMMETRIC"), tf.tile(value, multiples)],
              [np.pad(value, pads), np.pad(value, pads, "reflect"),
               np.pad(value, pads, "symmetric"), np.tile(value, multiples)])


# -- gradients -----------------------------------------------------------------------------------


def _concat_dynamic(tf, a, b):
    axis = tf.placeholder_with_default(1, [])
    return tf.concat([a, b], axis)


GRADIENT_CASES = [
    ("ConcatV2", _case(lambda tf, a, b: tf.concat([a, b], 1), [2, 1], [2, 3])),
    ("ConcatV2", _case(_concat_dynamic, [2, 2], [2, 1])),
    ("Split", _case(lambda tf, x: tf.split(x, 2, 1)[1] * 2.0 + tf.split(x, 2, 1)[0], [2, 4])),
    ("Split", _case(lambda tf, x: tf.split(x, 2, 1)[1], [3, 2])),
    ("SplitV", _case(lambda tf, x: tf.split(x, [1, -1], 0)[1], [3, 2])),
    ("Pack", _case(lambda tf, a, b: tf.stack([a, b], axis=1), [2, 3], [2, 3])),
    ("Unpack", _case(lambda tf, x: tf.unstack(x, axis=1)[2] * tf.unstack(x, axis=1)[0], [2, 3])),
    ("Tile", _case(lambda tf, x: tf.tile(x, [2, 3]), [2, 2])),
    ("Tile", _case(lambda tf, x: tf.tile(x, tf.placeholder_with_default([1, 2], [2])), [2, 1])),
    ("Tile", _case(lambda tf, x: tf.tile(tf.placeholder_with_default(x, None),
                                         tf.placeholder_with_default([2, 1], None)), [1, 2])),
    ("Pad", _case(lambda tf, x: tf.pad(tf.placeholder_with_default(x, None), [[0, 1], [1, 0]]),
                  [2, 2])),
    ("Pad", _case(lambda tf, x: tf.pad(x, [[1, 0], [2, 1]]), [2, 3])),
    ("PadV2", _case(lambda tf, x: tf.pad(x, [[1, 1], [0, 1]], constant_values=2.0), [2, 2])),
    ("MirrorPad", _case(lambda tf, x: tf.pad(x, [[1, 2], [2, 1]], "REFLECT"), [3, 3])),
    ("MirrorPad", _case(lambda tf, x: tf.pad(x, [[2, 1], [0, 2]], "SYMMETRIC"), [2, 3])),
    ("MirrorPadGrad", _case(lambda tf, g: pad_ops.MirrorPadGrad(
        g, [[1, 1], [1, 0]], mode="REFLECT"), [4, 4])),
    ("ReverseV2", _case(lambda tf, x: tf.reverse(x, [1]), [2, 3])),
    ("ReverseSequence", _case(lambda tf, x: tf.reverse_sequence(
        x, [2, 3], seq_axis=1, batch_axis=0), [2, 3])),
]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=0, max_size=3), st.data(),
       st.sampled_from([np.float32, np.float64, np.int32, np.uint8, np.bool_, np.complex64,
                        np.object_]))
def test_constant_pad_equals_np_pad(dims, data, dtype):
    # Pad/PadV2's kernel fills and copies instead of np.pad: same values, dtype, -0.0 and NaN.
    rng = np.random.default_rng(data.draw(st.integers(0, 2**31)))
    x = rng.standard_normal(dims)
    if dtype == np.object_:
        x = np.array([str(v).encode() for v in x.reshape(-1)], object).reshape(dims)
    else:
        x = x.astype(dtype)
    if x.dtype.kind == "f" and x.size:
        x.reshape(-1)[0] = data.draw(st.sampled_from([np.nan, -0.0, np.inf]))
    paddings = np.array(data.draw(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2)),
                                           min_size=len(dims), max_size=len(dims))),
                        np.int64).reshape(len(dims), 2)
    constant = np.asarray(b"" if dtype == np.object_ else 7, dtype=x.dtype)
    for value in ([0] if dtype == np.object_ else [0, constant]):
        got = pad_ops._constant_pad(x, paddings, value)
        if not dims:  # a scalar pads to itself (np.pad rejects the empty paddings)
            assert got.dtype == x.dtype and got.shape == ()
            np.testing.assert_array_equal(got, x)
            continue
        want = np.pad(x, paddings.tolist(), constant_values=value)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
        if got.dtype.kind == "f":
            np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


def test_autopacked_list_is_cast_to_the_requested_dtype():
    with tf.Graph().as_default():
        i = tf.placeholder(tf.int32, [])
        wide = tf.constant([[7, 8]], tf.int64)
        out = tf.concat([wide, [[i, 3]]], axis=0)
        assert out.dtype == tf.int64
        with tf.Session() as sess:
            got = sess.run(out, {i: 5})
        np.testing.assert_array_equal(got, [[7, 8], [5, 3]])
        assert got.dtype == np.int64
        # a list whose first tensor already has the requested dtype does not cast the others
        with pytest.raises(TypeError, match="Cannot convert a list containing a tensor"):
            tf.convert_to_tensor([tf.constant(1, tf.int64), i], dtype=tf.int64)
