"""Cast (and the TF1 to_* helpers, saturate_cast), Select/SelectV2/where, ClipByValue and
clip_by_value, Range and LinSpace: rows against NumPy, dtype inference, errors, gradients."""

import collections

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorflux as tf
from tensorflux.framework import errors
from tensorflux.ops.math import select as select_ops

Row = collections.namedtuple("Row", "op build expected")
F = np.array([-1.7, 1.7, 2.5, -0.0], np.float32)
COND = np.array([True, False, True])
T = np.arange(6, dtype=np.float32).reshape(3, 2)
E = -T


def _fetch(outputs, feed=None):
    with tf.Session() as sess:
        return sess.run(outputs, feed)


def check(output, expected):
    value = np.asarray(_fetch(output))
    expected = np.asarray(expected)
    assert output.shape.is_compatible_with(value.shape), (output.shape, value.shape)
    assert value.dtype == output.dtype.base_dtype.as_numpy_dtype == expected.dtype, \
        (value.dtype, output.dtype, expected.dtype)
    assert value.shape == expected.shape
    if expected.dtype.kind in "fc":
        np.testing.assert_allclose(value, expected, rtol=1e-6)
    else:
        np.testing.assert_array_equal(value, expected)


ROWS = [
    Row("Cast", lambda: tf.cast(F, tf.int32), np.array([-1, 1, 2, 0], np.int32)),
    Row("Cast", lambda: tf.cast(F, tf.bool), np.array([True, True, True, False])),
    Row("Cast", lambda: tf.cast([True, False], tf.float64), np.array([1.0, 0.0])),
    Row("Cast", lambda: tf.cast([-1, 256, 300], tf.uint8), np.array([255, 0, 44], np.uint8)),
    Row("Cast", lambda: tf.cast(np.array([1 + 2j], np.complex64), tf.float32),
        np.array([1.0], np.float32)),
    Row("Cast", lambda: tf.cast(F, tf.complex128), F.astype(np.complex128)),
    Row("Cast", lambda: tf.cast(np.float64([1e6, 60000.0]), tf.float16),
        np.array([np.inf, 60000.0], np.float16)),
    Row("Cast", lambda: tf.to_float([1, 2]), np.float32([1, 2])),
    Row("Cast", lambda: tf.to_double([1, 2]), np.float64([1, 2])),
    Row("Cast", lambda: tf.to_int32(F), np.array([-1, 1, 2, 0], np.int32)),
    Row("Cast", lambda: tf.to_int64(F), np.array([-1, 1, 2, 0], np.int64)),
    Row("Cast", lambda: tf.saturate_cast(np.float32([-5, 300, 7.9]), tf.uint8),
        np.array([0, 255, 7], np.uint8)),
    Row("Cast", lambda: tf.saturate_cast(np.float32([-1e10, 1e10]), tf.int32),
        np.array([-2 ** 31, 2 ** 31 - 128], np.int32)),
    Row("Select", lambda: tf.where(COND, T, E), np.where(COND[:, None], T, E)),
    Row("Select", lambda: tf.where(T > 2, T, E), np.where(T > 2, T, E)),
    Row("Select", lambda: tf.where(True, T, E), T),
    Row("SelectV2", lambda: tf.where_v2([True, False], T, 0.0), np.where([True, False], T, 0)),
    Row("SelectV2", lambda: tf.where_v2(COND[:, None], 1, [[5, 6]]),
        np.where(COND[:, None], 1, [[5, 6]]).astype(np.int32)),
    Row("Where", lambda: tf.where([[True, False], [False, True]]),
        np.array([[0, 0], [1, 1]], np.int64)),
    Row("Where", lambda: tf.where_v2(np.array([0, 3, 0, 1])), np.array([[1], [3]], np.int64)),
    Row("ClipByValue", lambda: select_ops.ClipByValue(T, 1.0, 4.0), np.clip(T, 1, 4)),
    Row("ClipByValue", lambda: select_ops.ClipByValue([1, 5, 9], [2, 2, 2], 6),
        np.array([2, 5, 6], np.int32)),
    Row("Minimum", lambda: tf.clip_by_value(T, 1.0, 4.0), np.clip(T, 1, 4)),
    Row("Range", lambda: tf.range(5), np.arange(5, dtype=np.int32)),
    Row("Range", lambda: tf.range(1, 5, 1.5), np.float32([1, 2.5, 4])),
    Row("Range", lambda: tf.range(5, 1, -2), np.array([5, 3], np.int32)),
    Row("Range", lambda: tf.range(tf.constant(3, tf.int64)), np.arange(3, dtype=np.int64)),
    Row("Range", lambda: tf.range(3, dtype=tf.float64), np.arange(3, dtype=np.float64)),
    Row("Range", lambda: tf.range(0, 1, 0.1), np.arange(10, dtype=np.float64).astype(
        np.float32) * np.float32(0.1)),
    Row("Range", lambda: tf.range(2, 2), np.zeros([0], np.int32)),
    Row("LinSpace", lambda: tf.linspace(0.0, 1.0, 5), np.float32([0, 0.25, 0.5, 0.75, 1])),
    Row("LinSpace", lambda: tf.lin_space(2.0, 1.0, 1), np.float32([2])),
    Row("LinSpace", lambda: tf.linspace(np.float64(-1), np.float64(1), 3), np.float64([-1, 0,
                                                                                       1])),
]

COVERED_OPS = {row.op for row in ROWS}


@pytest.mark.parametrize("row", ROWS, ids=[f"{r.op}-{i}" for i, r in enumerate(ROWS)])
def test_row(row):
    with tf.Graph().as_default():
        out = row.build()
        assert out.op.type == row.op or row.op == "Minimum"
        check(out, row.expected)


def test_cast_returns_same_dtype_tensor_unchanged_and_names():
    with tf.Graph().as_default():
        x = tf.constant([1.0])
        assert tf.cast(x, tf.float32) is x
        assert tf.cast(x, tf.int32).op.name == "Cast"
        assert tf.to_float(tf.constant([1])).op.name == "ToFloat"
        assert tf.range(3).op.name == "range"
        assert tf.clip_by_value(x, 0.0, 1.0).op.name == "clip_by_value"
        assert tf.saturate_cast(x, tf.uint8).op.name == "saturate_cast"


def test_cast_gradient_only_between_floats():
    with tf.Graph().as_default():
        x = tf.constant([1.5, 2.5], tf.float64)
        (g_int,) = tf.gradients(tf.reduce_sum(tf.cast(tf.cast(x, tf.int32), tf.float32)), [x])
        (g_flt,) = tf.gradients(tf.reduce_sum(tf.cast(x, tf.float32)), [x])
        assert g_int is None
        assert g_flt.dtype == tf.float64
        np.testing.assert_array_equal(_fetch(g_flt), [1.0, 1.0])


def test_cast_string_is_unimplemented():
    with tf.Graph().as_default():
        with pytest.raises(errors.UnimplementedError):
            _fetch(tf.cast(tf.constant(["1"]), tf.int32))


def test_select_errors():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="Select.*Dimension 0"):
            tf.where([True, False], T, E)
        with pytest.raises(ValueError, match="both"):
            tf.where(COND, T)
        c = tf.placeholder(tf.bool)
        with pytest.raises(errors.InvalidArgumentError, match="condition"):
            _fetch(tf.where(c, T, E), {c: [True, False]})


def test_clip_by_value_errors():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="clip_value_max"):
            tf.clip_by_value(tf.ones([2]), 0.0, tf.ones([3, 2]))


def test_range_dtype_inference_and_errors():
    with tf.Graph().as_default():
        assert tf.range(3).dtype == tf.int32
        assert tf.range(3.0).dtype == tf.float32
        assert tf.range(tf.constant(1, tf.int64), 5).dtype == tf.int64
        assert tf.range(tf.constant(1, tf.int64), 5.0).dtype == tf.float32
        assert tf.range(tf.constant(1.0, tf.float64), 5).dtype == tf.float64
        assert tf.range(5).shape.as_list() == [5]
        assert tf.range(1, 5, 1.5).shape.as_list() == [3]
        with pytest.raises(ValueError, match="start <= limit"):
            tf.range(5, 1)
        with pytest.raises(ValueError, match="delta != 0"):
            tf.range(1, 5, 0)
        limit = tf.placeholder(tf.int32, [])
        out = tf.range(0, limit, -1)
        assert out.shape.as_list() == [None]
        with pytest.raises(errors.InvalidArgumentError, match="start >= limit"):
            _fetch(out, {limit: 3})
        with pytest.raises(ValueError, match="num > 0"):
            tf.linspace(0.0, 1.0, 0)


@settings(max_examples=30, deadline=None)
@given(start=st.integers(-20, 20), span=st.integers(0, 40), delta=st.integers(1, 7),
       negative=st.booleans())
def test_range_matches_python(start, span, delta, negative):
    limit = start + span
    if negative:
        start, limit, delta = limit, start, -delta
    with tf.Graph().as_default():
        out = tf.range(start, limit, delta)
        value = _fetch(out)
        assert out.shape.as_list() == [len(range(start, limit, delta))]
    assert value.tolist() == list(range(start, limit, delta))


# -- gradients ----------------------------------------------------------------------------------

def _case(fn, *shapes, seed=9):
    def build(tf):
        rng = np.random.RandomState(seed)
        xs = [tf.placeholder(tf.float64, s) for s in shapes]
        return fn(tf, *xs), xs, [rng.uniform(-2, 2, size=s) for s in shapes]

    return build


GRADIENT_CASES = [
    ("Cast", _case(lambda tf, x: tf.real(tf.square(tf.cast(x, tf.complex128))), [3])),
    ("Select", _case(lambda tf, x, y: tf.where([True, False], x, y), [2, 3], [2, 3])),
    ("Select", _case(lambda tf, x, y: tf.where(x > y, x, y), [2, 3], [2, 3])),
    ("SelectV2", _case(lambda tf, x, y: tf.where_v2([[True], [False]], x, y), [2, 3], [3])),
    ("ClipByValue", _case(lambda tf, x, lo, hi: select_ops.ClipByValue(x, lo * 0.2 - 1,
                                                                       hi * 0.2 + 1),
                          [6], [], [6])),
]


@settings(max_examples=60, deadline=None)
@given(st.sampled_from([np.float32, np.float64, np.float16, np.int8, np.int32, np.int64,
                        np.uint16, np.bool_]),
       st.sampled_from([(1023,), (1024,), (40, 33), (3, 20, 30)]),
       st.booleans(), st.integers(0, 2**31))
def test_select_bit_picking_equals_np_where(dtype, shape, strided, seed):
    # Large Select/SelectV2 inputs pick bits instead of np.where: same values bit for bit,
    # NaN payloads, -0.0 and non-contiguous inputs included.
    rng = np.random.default_rng(seed)
    raw = rng.integers(0, 256, size=shape + (2,) + (np.dtype(dtype).itemsize,), dtype=np.uint8)
    pair = raw.view(dtype).reshape(shape + (2,)) if dtype != np.bool_ else raw[..., 0] % 2 == 1
    t, e = (pair[..., 0], pair[..., 1]) if strided else (pair[..., 0].copy(), pair[..., 1].copy())
    if np.dtype(dtype).kind == "f":
        t.reshape(-1)[:4] = [np.nan, -0.0, np.inf, 0.0]
        e.reshape(-1)[:4] = [-0.0, np.nan, 0.0, -np.inf]
    condition = rng.random(shape) < 0.5
    for kernel in (select_ops._select_kernel, select_ops._select_v2_kernel):
        got = kernel(condition, t, e)
        want = np.where(condition, t, e)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


@pytest.mark.parametrize("src", [np.int8, np.uint8, np.int32, np.int64, np.uint64, np.bool_])
@pytest.mark.parametrize("dst", [tf.float32, tf.float64, tf.complex64, tf.int8, tf.uint16,
                                 tf.int64])
def test_integer_casts_wrap_or_round_as_numpy_and_warn_nothing(src, dst):
    # These casts run without np.errstate: no floating-point flag can arise from them.
    info = np.iinfo(src) if src is not np.bool_ else None
    values = np.array([0, 1, True] if info is None else [info.min, info.max, 0, 1, 7], src)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.as_dtype(src), [None])
        with tf.Session() as sess, np.errstate(all="raise"):
            got = sess.run(tf.cast(x, dst), {x: values})
    np.testing.assert_array_equal(got, values.astype(dst.as_numpy_dtype))
    assert got.dtype == dst.as_numpy_dtype
