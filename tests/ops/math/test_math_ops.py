"""Elementwise binary math, comparisons, logical ops, AddN, BroadcastGradientArgs and the Tensor
operators. Each op has a row (value vs NumPy, dtype, static shape); hypothesis checks
broadcasting and integer floor/trunc division against Python semantics."""

import collections

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from op_helpers import check_outputs

import tensorflux as tf
from tensorflux.framework import errors
from tensorflux.ops.math import binary
from tensorflux.ops.math import broadcast_gradient as math_grad_util
from tensorflux.ops.math import comparison as comparison_ops

Row = collections.namedtuple("Row", "op build expected")
A = np.array([[1.5, -2.0, 3.0], [0.5, 4.0, -1.0]], np.float32)
B = np.array([2.0, -0.5, 1.5], np.float32)
I = np.array([-7, 7, -7, 7], np.int32)
J = np.array([2, 2, -2, -2], np.int32)
BOOL_A = np.array([True, True, False, False])
BOOL_B = np.array([True, False, True, False])


def _fetch(outputs, feed=None):
    with tf.Session() as sess:
        return sess.run(outputs, feed)


def check(outputs, expected, feed=None, rtol=1e-6):
    """Runs `outputs` and checks values, dtypes and static shapes against `expected`."""
    check_outputs(outputs, expected, feed, rtol)


def _f32(x):
    return np.asarray(x, np.float32)


ROWS = [
    Row("AddV2", lambda: tf.add(A, B), A + B),
    Row("AddV2", lambda: tf.add(tf.constant([1, 2], tf.int8), 10), np.array([11, 12], np.int8)),
    Row("AddV2", lambda: tf.add(tf.constant([250], tf.uint8), tf.constant([10], tf.uint8)),
        np.array([4], np.uint8)),
    Row("AddV2", lambda: tf.add(tf.constant([1 + 2j], tf.complex64), 1j),
        np.array([1 + 3j], np.complex64)),
    Row("Add", lambda: tf.add(["a", "b"], "c"), np.array([b"ac", b"bc"], object)),
    Row("Add", lambda: binary.Add(A, B), A + B),
    Row("Sub", lambda: tf.subtract(A, B), A - B),
    Row("Mul", lambda: tf.multiply(A, B), A * B),
    Row("Mul", lambda: tf.multiply(tf.constant([3], tf.int16), tf.constant([4], tf.int16)),
        np.array([12], np.int16)),
    Row("Div", lambda: binary.Div(I, J), np.array([-3, 3, 3, -3], np.int32)),
    Row("Div", lambda: binary.Div(A, B), A / B),
    Row("RealDiv", lambda: tf.realdiv(A, B), A / B),
    Row("RealDiv", lambda: tf.div(A, B), A / B),
    Row("RealDiv", lambda: tf.realdiv(I, J), np.array([-3, 3, 3, -3], np.int32)),
    Row("RealDiv", lambda: tf.truediv(I, J), I / J),
    Row("RealDiv", lambda: tf.truediv(tf.constant([-7], tf.int8), tf.constant([2], tf.int8)),
        _f32([-3.5])),
    Row("RealDiv", lambda: tf.divide(tf.constant([7], tf.uint16), tf.constant([2], tf.uint16)),
        _f32([3.5])),
    Row("RealDiv", lambda: tf.truediv(tf.constant([7], tf.int64), tf.constant([2], tf.int64)),
        np.array([3.5])),
    Row("TruncateDiv", lambda: tf.truncatediv(I, J), np.array([-3, 3, 3, -3], np.int32)),
    Row("TruncateDiv", lambda: tf.truncatediv(_f32([-7.5, 7.5]), _f32([2, 2])),
        _f32([-3, 3])),
    Row("FloorDiv", lambda: tf.floordiv(I, J), np.array([-4, 3, 3, -4], np.int32)),
    Row("FloorDiv", lambda: tf.div(I, J), np.array([-4, 3, 3, -4], np.int32)),
    Row("FloorDiv", lambda: tf.floor_div(_f32([-7.5, 7.5, -7.5, 0]), _f32([2, -2, 0, 0])),
        _f32([-4, -4, -np.inf, np.nan])),
    Row("FloorMod", lambda: tf.mod(I, np.array([3, 3, -3, -3], np.int32)),
        np.array([2, 1, -1, -2], np.int32)),
    Row("FloorMod", lambda: tf.floormod(_f32([-7.5, 7.5]), _f32([2, -2])), _f32([0.5, -0.5])),
    Row("TruncateMod", lambda: tf.truncatemod(I, np.array([3, 3, -3, -3], np.int32)),
        np.array([-1, 1, -1, 1], np.int32)),
    Row("TruncateMod", lambda: tf.truncatemod(_f32([-7.5]), _f32([2])), _f32([-1.5])),
    Row("Mod", lambda: binary.Mod(I, np.array([3, 3, -3, -3], np.int32)),
        np.array([-1, 1, -1, 1], np.int32)),
    Row("Pow", lambda: tf.pow(A, 2.0), A ** 2),
    Row("Pow", lambda: tf.pow(tf.constant([2, 3]), tf.constant([3, 2])),
        np.array([8, 9], np.int32)),
    Row("Maximum", lambda: tf.maximum(_f32([1, np.nan, 3]), 2.0), _f32([2, np.nan, 3])),
    Row("Maximum", lambda: tf.maximum(I, J), np.maximum(I, J)),
    Row("Minimum", lambda: tf.minimum(_f32([1, np.nan, 3]), 2.0), _f32([1, np.nan, 2])),
    Row("SquaredDifference", lambda: tf.squared_difference(A, B), (A - B) ** 2),
    Row("SquaredDifference", lambda: tf.squared_difference(tf.constant([1 + 1j]),
                                                           tf.constant([0j])),
        np.array([2 + 0j])),
    Row("Atan2", lambda: tf.atan2(A, B), np.arctan2(A, B)),
    Row("DivNoNan", lambda: tf.div_no_nan(_f32([1, 2]), _f32([0, 2])), _f32([0, 1])),
    Row("DivNoNan", lambda: tf.div_no_nan(tf.constant([1, 2]), tf.constant([0, 2])),
        np.array([0.0, 1.0])),
    Row("AddN", lambda: tf.add_n([A, A, A]), 3 * A),
    Row("AddN", lambda: tf.accumulate_n([tf.constant([1, 2]), tf.constant([3, 4])]),
        np.array([4, 6], np.int32)),
    Row("Less", lambda: tf.less(A, B), A < B),
    Row("LessEqual", lambda: tf.less_equal(I, J), I <= J),
    Row("Greater", lambda: tf.greater(A, 1.5), A > 1.5),
    Row("GreaterEqual", lambda: tf.greater_equal(A, 1.5), A >= 1.5),
    Row("Equal", lambda: tf.equal(["a", "b"], "a"), np.array([True, False])),
    Row("Equal", lambda: tf.equal(BOOL_A, BOOL_B), BOOL_A == BOOL_B),
    Row("Equal", lambda: comparison_ops.Equal(np.ones(2), np.ones(3),
                                               incompatible_shape_error=False), np.bool_(False)),
    Row("NotEqual", lambda: tf.not_equal(A, B), A != B),
    Row("NotEqual", lambda: comparison_ops.NotEqual(np.ones(2), np.ones(3),
                                                     incompatible_shape_error=False),
        np.bool_(True)),
    Row("LogicalAnd", lambda: tf.logical_and(BOOL_A, BOOL_B), BOOL_A & BOOL_B),
    Row("LogicalOr", lambda: tf.logical_or(BOOL_A, BOOL_B), BOOL_A | BOOL_B),
    Row("LogicalNot", lambda: tf.logical_not(BOOL_A), ~BOOL_A),
    Row("LogicalAnd", lambda: tf.logical_xor(BOOL_A, BOOL_B), BOOL_A ^ BOOL_B),
    Row("BroadcastGradientArgs",
        lambda: list(math_grad_util.broadcast_gradient_args([2, 1, 3], [1, 1, 3])),
        [np.array([1], np.int32), np.array([0, 1], np.int32)]),
    Row("BroadcastGradientArgs",
        lambda: list(math_grad_util.broadcast_gradient_args(
            tf.constant([5, 4], tf.int64), tf.constant([4], tf.int64))),
        [np.zeros([0], np.int64), np.array([0], np.int64)]),
]

COVERED_OPS = {row.op for row in ROWS}


@pytest.mark.parametrize("row", ROWS, ids=[f"{r.op}-{i}" for i, r in enumerate(ROWS)])
def test_row(row):
    with tf.Graph().as_default():
        check(row.build(), row.expected)


def test_rows_name_real_ops():
    with tf.Graph().as_default():
        for row in ROWS:
            out = row.build()
            out = out[-1] if isinstance(out, list) else out
            assert out.op.type == row.op or row.op == "LogicalAnd", (row.op, out.op.type)


@pytest.mark.parametrize("build", [
    lambda: tf.floordiv(tf.constant([-7]), tf.constant([0])),
    lambda: tf.mod(tf.constant([-7]), tf.constant([0])),
    lambda: tf.truncatediv(tf.constant([1, 2]), tf.constant([1, 0])),
    lambda: tf.truncatemod(tf.constant([-7]), tf.constant([0])),
    lambda: tf.div(tf.constant([7]), tf.constant([0])),
    lambda: tf.realdiv(tf.constant([7]), tf.constant([0])),
])
def test_integer_division_by_zero(build):
    with tf.Graph().as_default():
        with pytest.raises(errors.InvalidArgumentError, match="Integer division by zero"):
            _fetch(build())


def test_integer_negative_power_fails():
    with tf.Graph().as_default():
        with pytest.raises(errors.InvalidArgumentError, match="negative integer powers"):
            _fetch(tf.pow(tf.constant([2]), tf.constant([-1])))


def test_shape_errors_name_the_op():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="Mul 'bad'.*Dimensions must be equal"):
            tf.multiply(tf.ones([2, 3]), tf.ones([4, 3]), name="bad")
        with pytest.raises(ValueError, match="Equal"):
            tf.equal(tf.ones([2]), tf.ones([3]))
        with pytest.raises(TypeError, match="Sub"):
            tf.subtract(tf.constant([1]), tf.constant([1.0]))


def test_runtime_broadcast_error():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32)
        with pytest.raises(errors.InvalidArgumentError):
            _fetch(x + tf.ones([3]), {x: np.ones(2, np.float32)})


def test_truediv_errors():
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="bool"):
            tf.truediv(tf.constant([True]), tf.constant([False]))
        with pytest.raises(TypeError, match="same dtype"):
            tf.truediv(tf.constant([1]), tf.constant([1.0]))
        with pytest.raises(TypeError, match="FloorDiv"):
            tf.floordiv(tf.constant([1]), tf.constant([1.0]))


def test_scalar_mul_scales_indexed_slices():
    with tf.Graph().as_default():
        slices = tf.IndexedSlices(tf.constant([[1.0, 2.0]]), tf.constant([3]), tf.constant([5, 2]))
        scaled = tf.scalar_mul(2.0, slices)
        assert isinstance(scaled, tf.IndexedSlices) and scaled.indices is slices.indices
        np.testing.assert_array_equal(_fetch(scaled.values), [[2.0, 4.0]])
        with pytest.raises(ValueError, match="scalar"):
            tf.scalar_mul([1.0, 2.0], tf.constant([1.0, 2.0]))


def test_add_n_edge_cases():
    with tf.Graph().as_default():
        x = tf.constant([1.0])
        assert tf.add_n([x]) is x
        with pytest.raises(ValueError):
            tf.add_n([])
        with pytest.raises(ValueError, match="AddN"):
            tf.add_n([tf.ones([2]), tf.ones([3])])


def test_names_follow_tensorflow():
    with tf.Graph().as_default():
        a = tf.constant([1.0, 2.0])
        i = tf.constant([1, 2])
        b = tf.constant([True, False])
        assert tf.add(a, a).op.name == "Add"
        assert tf.add(a, a).op.type == "AddV2"
        assert tf.div(i, i).op.name == "div"
        assert tf.divide(a, a).op.name == "truediv"
        assert tf.divide(a, a, name="foo").op.name == "foo"
        assert tf.floordiv(a, a).op.name == "floordiv"
        assert tf.mod(a, a).op.name == "FloorMod"
        assert tf.pow(a, a).op.name == "Pow"
        assert tf.div_no_nan(a, a).op.name == "div_no_nan"
        assert tf.logical_xor(b, b).op.name == "LogicalXor"
        assert tf.scalar_mul(2.0, a).op.type == "Mul"
        truediv = tf.truediv(i, i)
        assert truediv.dtype == tf.float64
        assert [t.op.type for t in truediv.op.inputs] == ["Cast", "Cast"]


def test_operators():
    with tf.Graph().as_default():
        a = tf.constant([1.0, 2.0])
        i = tf.constant([-7, 7])
        b = tf.constant([True, False])
        m = tf.ones([2, 2])
        cases = [
            (a + 1, "add", "AddV2", [2.0, 3.0]), (1 + a, "add_1", "AddV2", [2.0, 3.0]),
            (a - 1, "sub", "Sub", [0.0, 1.0]), (3 - a, "sub_1", "Sub", [2.0, 1.0]),
            (a * 2, "mul", "Mul", [2.0, 4.0]), (2 * a, "mul_1", "Mul", [2.0, 4.0]),
            (a / 2, "truediv", "RealDiv", [0.5, 1.0]), (2 / a, "truediv_1", "RealDiv", [2, 1]),
            (i // 2, "floordiv", "FloorDiv", [-4, 3]), (i % 3, "mod", "FloorMod", [2, 1]),
            (a ** 2, "pow", "Pow", [1.0, 4.0]), (2 ** a, "pow_1", "Pow", [2.0, 4.0]),
            (-a, "Neg", "Neg", [-1.0, -2.0]), (abs(i), "Abs", "Abs", [7, 7]),
            (m @ m, "matmul", "MatMul", [[2, 2], [2, 2]]),
            (a < 2, "Less", "Less", [True, False]), (a <= 1, "LessEqual", "LessEqual",
                                                     [True, False]),
            (a > 1, "Greater", "Greater", [False, True]),
            (a >= 2, "GreaterEqual", "GreaterEqual", [False, True]),
            (b & True, "and", "LogicalAnd", [True, False]),
            (b | True, "or", "LogicalOr", [True, True]),
            (b ^ True, "xor", "LogicalAnd", [False, True]),
            (~b, "LogicalNot", "LogicalNot", [False, True]),
            (i / 2, "truediv_2", "RealDiv", [-3.5, 3.5]),
        ]
        values = _fetch([c[0] for c in cases])
        for (tensor, name, op_type, expected), value in zip(cases, values):
            assert tensor.op.name == name, (tensor.op.name, name)
            assert tensor.op.type == op_type
            np.testing.assert_allclose(value, expected)
        assert (i / 2).dtype == tf.float64
        assert (a == a) is True and (a != a) is False
        with pytest.raises(TypeError):
            i + 2.5
        with pytest.raises((TypeError, ValueError)):
            _ = a & b


def test_python_scalars_keep_tensor_dtype():
    with tf.Graph().as_default():
        h = tf.constant([1.0, 2.0], tf.float16)
        i8 = tf.constant([1, 2], tf.int8)
        outs = [h * 3.0, 2.0 - h, i8 + 1, 3 * i8, h / 2]
        for t in outs:
            assert t.dtype in (tf.float16, tf.int8)
        values = _fetch(outs)
        assert values[0].dtype == np.float16 and values[2].dtype == np.int8
        np.testing.assert_array_equal(values[3], np.array([3, 6], np.int8))


def test_add_kernel_is_the_bare_operator():
    import operator

    from tensorflux.framework.op_def import get_op_def

    assert get_op_def("AddV2").kernels["CPU"].fn is operator.add


# -- hypothesis ---------------------------------------------------------------------------------

_BINARY = {
    "add": (tf.add, np.add), "sub": (tf.subtract, np.subtract),
    "mul": (tf.multiply, np.multiply), "max": (tf.maximum, np.maximum),
    "min": (tf.minimum, np.minimum), "sqdiff": (tf.squared_difference,
                                                lambda x, y: np.square(x - y)),
    "less": (tf.less, np.less), "equal": (tf.equal, np.equal),
}


@settings(max_examples=25, deadline=None)
@given(data=st.data(), op=st.sampled_from(sorted(_BINARY)))
def test_broadcasting_matches_numpy(data, op):
    shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=4, max_side=3))
    x = data.draw(hnp.arrays(np.float64, shapes.input_shapes[0],
                             elements=st.floats(-10, 10)))
    y = data.draw(hnp.arrays(np.float64, shapes.input_shapes[1],
                             elements=st.floats(-10, 10)))
    tf_fn, np_fn = _BINARY[op]
    with tf.Graph().as_default():
        px = tf.placeholder(tf.float64, [None] * x.ndim)
        py = tf.placeholder(tf.float64)
        static = tf_fn(tf.constant(x), tf.constant(y))
        dynamic = tf_fn(px, py)
        assert static.shape.as_list() == list(shapes.result_shape)
        got_static, got_dynamic = _fetch([static, dynamic], {px: x, py: y})
    want = np_fn(x, y)
    np.testing.assert_allclose(got_static, want)
    np.testing.assert_allclose(got_dynamic, want)
    assert got_static.shape == want.shape


@settings(max_examples=25, deadline=None)
@given(xs=st.lists(st.integers(-1000, 1000), min_size=1, max_size=20),
       ys=st.lists(st.integers(-50, 50).filter(bool), min_size=1, max_size=20),
       dtype=st.sampled_from([tf.int32, tf.int64]))
def test_integer_division_semantics(xs, ys, dtype):
    n = min(len(xs), len(ys))
    xs, ys = xs[:n], ys[:n]
    with tf.Graph().as_default():
        x = tf.constant(xs, dtype)
        y = tf.constant(ys, dtype)
        fd, fm, td, tm = _fetch([tf.floordiv(x, y), tf.floormod(x, y), tf.truncatediv(x, y),
                                 tf.truncatemod(x, y)])
    assert fd.tolist() == [a // b for a, b in zip(xs, ys)]
    assert fm.tolist() == [a % b for a, b in zip(xs, ys)]
    assert td.tolist() == [int(a / b) for a, b in zip(xs, ys)]
    assert tm.tolist() == [int(np.fmod(a, b)) for a, b in zip(xs, ys)]
    assert fd.dtype == dtype.as_numpy_dtype


# -- unbroadcast ----------------------------------------------------------------------------------

@pytest.mark.parametrize("x_static,g_static,x_shape,g_shape", [
    ([2, 3], [2, 3], [2, 3], [2, 3]), ([3], [2, 3], [3], [2, 3]),
    ([1, 3], [4, 2, 3], [1, 3], [4, 2, 3]), ([], [2, 3], [], [2, 3]),
    ([2, 1], [2, 5], [2, 1], [2, 5]), ([None, 1], [None, 4], [3, 1], [3, 4]),
    (None, None, [3, 1], [2, 3, 4]), ([None], [2, None], [1], [2, 5]),
    ([None, 2], [3, None, 2], [1, 2], [3, 4, 2]),
])
def test_unbroadcast(x_static, g_static, x_shape, g_shape):
    rng = np.random.RandomState(0)
    x_value = np.asarray(rng.rand(*x_shape))
    g_value = rng.rand(*g_shape)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, x_static)
        g = tf.placeholder(tf.float64, g_static)
        reduced = math_grad_util.unbroadcast(g, x)
        value = _fetch(reduced, {x: x_value, g: g_value})
    want = g_value.sum(axis=tuple(range(g_value.ndim - x_value.ndim)))
    axes = tuple(i for i, d in enumerate(x_value.shape) if d == 1)
    want = want.sum(axis=axes, keepdims=True)
    np.testing.assert_allclose(value, want)
    assert value.shape == x_value.shape


def test_unbroadcast_static_needs_no_shape_ops():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [4, 1])
        g = tf.placeholder(tf.float64, [5, None, 3])
        out = math_grad_util.unbroadcast(g, x)
        assert out.shape.as_list() == [4, 1]
        types = {op.type for op in tf.get_default_graph().get_operations()}
        assert "BroadcastGradientArgs" not in types and "Shape" not in types
        assert math_grad_util.unbroadcast(None, x) is None


# -- gradients ----------------------------------------------------------------------------------

def _case(fn, *shapes, low=-2.0, high=2.0, seed=0, positive=False):
    def build(tf):
        rng = np.random.RandomState(seed)
        xs, values = [], []
        for shape in shapes:
            xs.append(tf.placeholder(tf.float64, shape))
            lo = 0.5 if positive else low
            values.append(rng.uniform(lo, high, size=shape))
        return fn(tf, *xs), xs, values

    return build


def _away_from_ties(tf, x, y, fn):
    return fn(x, y + 0.1)


GRADIENT_CASES = [
    ("AddV2", _case(lambda tf, x, y: tf.add(x, y), [2, 3], [3])),
    ("Add", _case(lambda tf, x, y: binary.Add(x, y), [2, 1], [1, 3])),
    ("Sub", _case(lambda tf, x, y: x - y, [3], [2, 3])),
    ("Mul", _case(lambda tf, x, y: x * y, [2, 3], [2, 1])),
    ("Div", _case(lambda tf, x, y: binary.Div(x, y), [2, 3], [3], positive=True)),
    ("RealDiv", _case(lambda tf, x, y: x / y, [2, 3], [], positive=True)),
    ("FloorMod", _case(lambda tf, x, y: tf.floormod(x, y), [4], [4], low=0.6, high=0.9)),
    ("TruncateMod", _case(lambda tf, x, y: tf.truncatemod(x * 3, y), [4], [4], low=0.6,
                          high=0.9)),
    ("Mod", _case(lambda tf, x, y: binary.Mod(x * 3, y), [4], [4], low=0.6,
                  high=0.9)),
    ("Pow", _case(lambda tf, x, y: tf.pow(x, y), [2, 3], [3], positive=True)),
    ("Maximum", _case(lambda tf, x, y: _away_from_ties(tf, x, y, tf.maximum), [2, 3], [3])),
    ("Minimum", _case(lambda tf, x, y: _away_from_ties(tf, x, y, tf.minimum), [2, 3], [1])),
    ("SquaredDifference", _case(lambda tf, x, y: tf.squared_difference(x, y), [2, 3], [3])),
    ("DivNoNan", _case(lambda tf, x, y: tf.div_no_nan(x, y), [2, 3], [3], positive=True)),
    ("Atan2", _case(lambda tf, y, x: tf.atan2(y, x), [2, 3], [3], positive=True)),
    ("AddN", _case(lambda tf, x, y: tf.add_n([x, y, x]), [2, 2], [2, 2])),
]
