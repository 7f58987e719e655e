"""Elementwise unary math, special functions, complex helpers and the fused gradient ops.
Each op has a row (value vs NumPy or known values, dtype, static shape)."""

import collections
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from op_helpers import check_outputs

import tensorflux as tf
from tensorflux.framework import errors
from tensorflux.lib.numerics import erf_gamma as special_math
from tensorflux.ops.math import unary as unary_ops

Row = collections.namedtuple("Row", "op build expected")
X = np.array([[0.25, -1.5, 2.0], [-0.75, 0.5, 3.5]], np.float32)
U = np.array([0.1, -0.4, 0.7], np.float64)  # inside (-1, 1)
P = np.array([0.5, 1.5, 4.0], np.float32)  # positive
C = np.array([3 + 4j, -1 - 1j, 0j], np.complex64)
I = np.array([-3, 0, 2], np.int32)


def _fetch(outputs, feed=None):
    with tf.Session() as sess:
        return sess.run(outputs, feed)


def check(outputs, expected, rtol=1e-6):
    check_outputs(outputs, expected, rtol=rtol, atol=1e-7)


def _f32(x):
    return np.asarray(x, np.float32)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


_ERF = np.vectorize(math.erf)  # reference values only (tests may use Python's math)
_LGAMMA = np.vectorize(math.lgamma)

ROWS = [
    Row("Neg", lambda: tf.negative(X), -X),
    Row("Neg", lambda: tf.negative(C), -C),
    Row("Abs", lambda: tf.abs(I), np.abs(I)),
    Row("Abs", lambda: tf.abs(tf.constant([-2 ** 31], tf.int32)),
        np.array([-2 ** 31], np.int32)),
    Row("ComplexAbs", lambda: tf.abs(C), np.abs(C).astype(np.float32)),
    Row("Sign", lambda: tf.sign(_f32([-2, 0, 3, np.nan])), _f32([-1, 0, 1, np.nan])),
    Row("Sign", lambda: tf.sign(I), np.sign(I)),
    Row("Sign", lambda: tf.sign(C), np.array([0.6 + 0.8j, (-1 - 1j) / np.sqrt(2), 0],
                                             np.complex64)),
    Row("Square", lambda: tf.square(X), X * X),
    Row("Square", lambda: tf.square(tf.constant([3], tf.uint8)), np.array([9], np.uint8)),
    Row("Sqrt", lambda: tf.sqrt(_f32([4, -1])), _f32([2, np.nan])),
    Row("Rsqrt", lambda: tf.rsqrt(_f32([4, 0])), _f32([0.5, np.inf])),
    Row("Reciprocal", lambda: tf.reciprocal(P), 1 / P),
    Row("Reciprocal", lambda: tf.reciprocal(tf.constant([1, -1, 2, -5])),
        np.array([1, -1, 0, 0], np.int32)),
    Row("Inv", lambda: unary_ops.Inv(P), 1 / P),
    Row("Exp", lambda: tf.exp(X), np.exp(X)),
    Row("Exp", lambda: tf.exp(tf.constant([1.0, 20.0], tf.float16)),
        np.array([np.exp(1.0), np.inf], np.float16)),
    Row("Expm1", lambda: tf.expm1(_f32([1e-10, 1])), np.expm1(_f32([1e-10, 1]))),
    Row("Log", lambda: tf.log(_f32([1, 0, -1])), _f32([0, -np.inf, np.nan])),
    Row("Log1p", lambda: tf.log1p(_f32([1e-10, 1])), np.log1p(_f32([1e-10, 1]))),
    Row("Sin", lambda: tf.sin(X), np.sin(X)),
    Row("Cos", lambda: tf.cos(X), np.cos(X)),
    Row("Tan", lambda: tf.tan(X), np.tan(X)),
    Row("Asin", lambda: tf.asin(U), np.arcsin(U)),
    Row("Acos", lambda: tf.acos(U), np.arccos(U)),
    Row("Atan", lambda: tf.atan(X), np.arctan(X)),
    Row("Sinh", lambda: tf.sinh(X), np.sinh(X)),
    Row("Cosh", lambda: tf.cosh(X), np.cosh(X)),
    Row("Tanh", lambda: tf.tanh(X), np.tanh(X)),
    Row("Asinh", lambda: tf.asinh(X), np.arcsinh(X)),
    Row("Acosh", lambda: tf.acosh(_f32([1, 2.5, 0.5])), _f32([0, np.arccosh(2.5), np.nan])),
    Row("Atanh", lambda: tf.atanh(U), np.arctanh(U)),
    Row("Sigmoid", lambda: tf.sigmoid(_f32([-100, -1, 0, 1, 100])),
        _sigmoid(np.array([-100, -1, 0, 1, 100], np.float64)).astype(np.float32)),
    Row("Sigmoid", lambda: tf.sigmoid(tf.constant([1.0], tf.float16)),
        np.array([0.731], np.float16)),
    Row("Erf", lambda: tf.erf(X), _ERF(X).astype(np.float32)),
    Row("Erfc", lambda: tf.erfc(np.array([0.5, 10.0, -3.0])),
        np.array([0.4795001221869535, 2.088487583762545e-45, 1.9999779095030015])),
    Row("Lgamma", lambda: tf.lgamma(np.array([0.5, -0.5, 0.0, -1.0, 100.0, 1e-8])),
        np.array([0.5723649429247001, 1.2655121234846454, np.inf, np.inf, 359.1342053695754,
                  18.420680738180209])),
    Row("Digamma", lambda: tf.digamma(np.array([0.5, 1.0, -0.5, 0.0, -1.0, 100.0])),
        np.array([-1.9635100260214235, -0.5772156649015329, 0.03648997397857652, np.nan,
                  np.nan, 4.600161852738087])),
    Row("Round", lambda: tf.round(_f32([0.5, 1.5, 2.5, -0.5, -1.5, 2.7])),
        _f32([0, 2, 2, -0.0, -2, 3])),
    Row("Floor", lambda: tf.floor(X), np.floor(X)),
    Row("Ceil", lambda: tf.ceil(X), np.ceil(X)),
    Row("Rint", lambda: tf.rint(_f32([0.5, 1.5, 2.5, -0.5, -1.5])), _f32([0, 2, 2, -0.0, -2])),
    Row("IsNan", lambda: tf.is_nan(_f32([np.nan, 1, np.inf])), np.array([True, False, False])),
    Row("IsInf", lambda: tf.is_inf(_f32([np.nan, 1, -np.inf])), np.array([False, False, True])),
    Row("IsFinite", lambda: tf.is_finite(_f32([np.nan, 1, np.inf])),
        np.array([False, True, False])),
    Row("Conj", lambda: tf.conj(C), np.conj(C)),
    Row("Real", lambda: tf.real(C), C.real),
    Row("Imag", lambda: tf.imag(C.astype(np.complex128)), C.imag.astype(np.float64)),
    Row("Angle", lambda: tf.angle(C), np.angle(C).astype(np.float32)),
    Row("Complex", lambda: tf.complex(_f32([1, 2]), _f32([3, 4])),
        np.array([1 + 3j, 2 + 4j], np.complex64)),
    Row("Complex", lambda: tf.complex(np.array([1.0]), np.array([[1.0], [2.0]])),
        np.array([[1 + 1j], [1 + 2j]])),
    Row("SqrtGrad", lambda: unary_ops.SqrtGrad(P, X[0]), 0.5 * X[0] / P),
    Row("RsqrtGrad", lambda: unary_ops.RsqrtGrad(P, X[0]), -0.5 * X[0] * P ** 3),
    Row("ReciprocalGrad", lambda: unary_ops.ReciprocalGrad(P, X[0]), -X[0] * P * P),
    Row("InvGrad", lambda: unary_ops.InvGrad(P, X[0]), -X[0] * P * P),
    Row("TanhGrad", lambda: unary_ops.TanhGrad(P, X[0]), X[0] * (1 - P * P)),
    Row("SigmoidGrad", lambda: unary_ops.SigmoidGrad(P, X[0]), X[0] * P * (1 - P)),
]

COVERED_OPS = {row.op for row in ROWS}


@pytest.mark.parametrize("row", ROWS, ids=[f"{r.op}-{i}" for i, r in enumerate(ROWS)])
def test_row(row):
    with tf.Graph().as_default():
        half = np.asarray(row.expected).dtype == np.float16
        check(row.build(), row.expected, rtol=1e-3 if half else 1e-6)


def test_wrappers_pass_through_where_tensorflow_does():
    with tf.Graph().as_default():
        f = tf.constant([1.5])
        i = tf.constant([2])
        assert tf.conj(f) is f
        assert tf.real(f) is f
        assert tf.round(i) is i
        assert tf.abs(tf.constant([1j])).op.type == "ComplexAbs"
        np.testing.assert_array_equal(_fetch(tf.imag(f)), [0.0])
        np.testing.assert_allclose(_fetch(tf.angle(tf.constant([-2.0, 3.0]))), [np.pi, 0.0])


def test_log_sigmoid_is_stable():
    with tf.Graph().as_default():
        value = _fetch(tf.log_sigmoid(np.array([-800.0, 0.0, 40.0])))
    np.testing.assert_allclose(value, [-800.0, -np.log(2.0), -np.exp(-40.0)], rtol=1e-12)


def test_dtype_errors_at_construction():
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="has DataType int32 not in list of allowed values"):
            tf.sqrt(tf.constant([4]))
        with pytest.raises(TypeError, match="has DataType int32 not in list of allowed values"):
            tf.is_nan(tf.constant([4]))
        with pytest.raises(TypeError, match="has DataType uint8 not in list of allowed values"):
            tf.negative(tf.constant([4], tf.uint8))


def test_integer_reciprocal_of_zero_fails():
    with tf.Graph().as_default():
        with pytest.raises(errors.InvalidArgumentError, match="division by zero"):
            _fetch(tf.reciprocal(tf.constant([0])))


def test_float16_results_stay_float16():
    with tf.Graph().as_default():
        h = tf.constant([0.5, 1.0], tf.float16)
        outs = [tf.erf(h), tf.lgamma(h), tf.sigmoid(h), tf.sqrt(h), tf.tanh(h), tf.exp(h)]
        for tensor, value in zip(outs, _fetch(outs)):
            assert value.dtype == np.float16 and tensor.dtype == tf.float16


@settings(max_examples=30, deadline=None)
@given(hnp.arrays(np.float64, st.integers(1, 30), elements=st.floats(-8, 8)))
def test_erf_matches_math(values):
    np.testing.assert_allclose(special_math.erf(values), _ERF(values), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(special_math.erfc(values), 1 - _ERF(values), rtol=1e-9,
                               atol=1e-15)


@settings(max_examples=30, deadline=None)
@given(hnp.arrays(np.float64, st.integers(1, 30),
                  elements=st.floats(-30, 60).filter(lambda v: v > 0 or v != round(v))))
def test_lgamma_matches_math(values):
    np.testing.assert_allclose(special_math.lgamma(values), _LGAMMA(values), rtol=1e-10,
                               atol=1e-10)


def test_digamma_is_the_derivative_of_lgamma():
    x = np.linspace(-4.3, 40, 301)
    x = x[np.abs(x - np.round(x)) > 0.05]
    h = 1e-5
    numeric = (_LGAMMA(x + h) - _LGAMMA(x - h)) / (2 * h)
    np.testing.assert_allclose(special_math.digamma(x), numeric, rtol=1e-6, atol=1e-6)


def test_erfc_keeps_relative_accuracy_in_the_tail():
    x = np.array([5.0, 10.0, 20.0, 26.0])
    want = np.array([1.5374597944280349e-12, 2.088487583762545e-45, 5.395865611607901e-176,
                     5.663192408856143e-296])
    np.testing.assert_allclose(special_math.erfc(x), want, rtol=1e-12)


# -- gradients ----------------------------------------------------------------------------------

def _case(fn, shape, low=-2.0, high=2.0, seed=1):
    def build(tf):
        x = tf.placeholder(tf.float64, shape)
        value = np.random.RandomState(seed).uniform(low, high, size=shape)
        return fn(tf, x), [x], [value]

    return build


def _complex_case(fn):
    """y = fn(complex(a, b)) mapped back to reals; checks gradients through complex ops."""

    def build(tf):
        a = tf.placeholder(tf.float64, [3])
        b = tf.placeholder(tf.float64, [3])
        rng = np.random.RandomState(2)
        values = [rng.uniform(0.5, 2.0, 3), rng.uniform(-2.0, -0.5, 3)]
        return fn(tf, tf.complex(a, b)), [a, b], values

    return build


def _fused(op):
    def fn(tf, x):
        return op(tf.sigmoid(x), tf.sin(x))

    return fn


GRADIENT_CASES = [
    ("Neg", _case(lambda tf, x: -x, [2, 3])),
    ("Abs", _case(lambda tf, x: tf.abs(x), [2, 3], low=0.2)),
    ("Abs", _case(lambda tf, x: tf.abs(x), [2, 3], low=-2, high=-0.2)),
    ("Sign", _case(lambda tf, x: tf.sign(x) * x, [4], low=0.3)),
    ("Square", _case(lambda tf, x: tf.square(x), [2, 3])),
    ("Sqrt", _case(lambda tf, x: tf.sqrt(x), [3], low=0.5)),
    ("Rsqrt", _case(lambda tf, x: tf.rsqrt(x), [3], low=0.5)),
    ("Reciprocal", _case(lambda tf, x: tf.reciprocal(x), [3], low=0.5)),
    ("Inv", _case(lambda tf, x: unary_ops.Inv(x), [3], low=0.5)),
    ("Exp", _case(lambda tf, x: tf.exp(x), [2, 2])),
    ("Expm1", _case(lambda tf, x: tf.expm1(x), [2, 2])),
    ("Log", _case(lambda tf, x: tf.log(x), [3], low=0.5)),
    ("Log1p", _case(lambda tf, x: tf.log1p(x), [3], low=-0.5)),
    ("Sin", _case(lambda tf, x: tf.sin(x), [3])),
    ("Cos", _case(lambda tf, x: tf.cos(x), [3])),
    ("Tan", _case(lambda tf, x: tf.tan(x), [3], low=-1.0, high=1.0)),
    ("Asin", _case(lambda tf, x: tf.asin(x), [3], low=-0.8, high=0.8)),
    ("Acos", _case(lambda tf, x: tf.acos(x), [3], low=-0.8, high=0.8)),
    ("Atan", _case(lambda tf, x: tf.atan(x), [3])),
    ("Sinh", _case(lambda tf, x: tf.sinh(x), [3])),
    ("Cosh", _case(lambda tf, x: tf.cosh(x), [3])),
    ("Tanh", _case(lambda tf, x: tf.tanh(x), [3])),
    ("Asinh", _case(lambda tf, x: tf.asinh(x), [3])),
    ("Acosh", _case(lambda tf, x: tf.acosh(x), [3], low=1.2, high=3.0)),
    ("Atanh", _case(lambda tf, x: tf.atanh(x), [3], low=-0.8, high=0.8)),
    ("Sigmoid", _case(lambda tf, x: tf.sigmoid(x), [3])),
    ("Erf", _case(lambda tf, x: tf.erf(x), [3])),
    ("Erfc", _case(lambda tf, x: tf.erfc(x), [3])),
    ("Lgamma", _case(lambda tf, x: tf.lgamma(x), [4], low=0.3, high=5.0)),
    ("SqrtGrad", _case(_fused(unary_ops.SqrtGrad), [3])),
    ("RsqrtGrad", _case(_fused(unary_ops.RsqrtGrad), [3])),
    ("ReciprocalGrad", _case(_fused(unary_ops.ReciprocalGrad), [3])),
    ("InvGrad", _case(_fused(unary_ops.InvGrad), [3])),
    ("TanhGrad", _case(_fused(unary_ops.TanhGrad), [3])),
    ("SigmoidGrad", _case(_fused(unary_ops.SigmoidGrad), [3])),
    ("Complex", _complex_case(lambda tf, z: tf.real(z * z) + tf.imag(z))),
    ("Real", _complex_case(lambda tf, z: tf.real(z * z * z))),
    ("Imag", _complex_case(lambda tf, z: tf.imag(tf.exp(z)))),
    ("Conj", _complex_case(lambda tf, z: tf.real(tf.conj(z) * tf.sin(z)))),
    ("ComplexAbs", _complex_case(lambda tf, z: tf.abs(z * z))),
    ("Angle", _complex_case(lambda tf, z: tf.angle(z * z))),
]
