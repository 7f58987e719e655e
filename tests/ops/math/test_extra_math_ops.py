"""Xlogy, Xdivy, MulNoNan, Erfinv, Ndtri, CumulativeLogsumexp, Bincount, HistogramFixedWidth,
and the composites (reciprocal_no_nan, lbeta, polyval, monotonic checks, segment means,
confusion_matrix, zero_fraction, histogram_fixed_width_bins)."""

import collections
import math

import numpy as np
import pytest
from array_checks import _fetch
from hypothesis import given, settings
from hypothesis import strategies as st
from op_helpers import graph  # noqa: F401 (graph: autouse fixture)

import tensorflux as tf
from tensorflux.framework import errors

Row = collections.namedtuple("Row", "op build expected")
NAN, INF = np.nan, np.inf


def _clse(x, axis=0, exclusive=False, reverse=False):
    x = np.flip(x, axis) if reverse else x
    with np.errstate(divide="ignore"):
        out = np.log(np.cumsum(np.exp(x.astype(np.float64)), axis=axis))
    if exclusive:
        out = np.roll(out, 1, axis)
        np.moveaxis(out, axis, 0)[0] = -INF
    out = np.flip(out, axis) if reverse else out
    return out.astype(x.dtype)


X3 = np.array([[0.5, -1.0, 2.0], [3.0, 0.0, -2.0]], np.float32)

ROWS = [
    Row("Xlogy", lambda: tf.math.xlogy([0.0, 0.0, 1.0, 2.0], [0.0, NAN, 0.0, 3.0]),
        np.float32([0, 0, -INF, 2 * np.log(3)])),
    Row("Xlogy", lambda: tf.math.xlogy(np.float64([[1.0], [0.0]]), np.float64([2.0, 4.0])),
        np.log([[2.0, 4.0], [1.0, 1.0]]) * [[1], [0]]),
    Row("Xdivy", lambda: tf.math.xdivy([0.0, 0.0, 1.0, 3.0], [0.0, NAN, 0.0, 2.0]),
        np.float32([0, 0, INF, 1.5])),
    Row("MulNoNan", lambda: tf.math.multiply_no_nan([INF, NAN, 2.0], [0.0, 0.0, 3.0]),
        np.float32([0, 0, 6])),
    Row("MulNoNan", lambda: tf.math.multiply_no_nan(np.float64([[1.0, 2.0]]), 0.5),
        np.float64([[0.5, 1.0]])),
    Row("DivNoNan", lambda: tf.math.reciprocal_no_nan([0.0, 2.0, -4.0]),
        np.float32([0, 0.5, -0.25])),
    Row("Erfinv", lambda: tf.math.erfinv([-1.0, -0.5, 0.0, 0.5, 1.0, 1.5]),
        np.float32([-INF, -0.4769362762044699, 0, 0.4769362762044699, INF, NAN])),
    Row("Erfinv", lambda: tf.math.erfinv(np.float64([1e-10, 0.999999, -0.9])),
        np.float64([8.862269254527580e-11, 3.458910737279500, -1.163087153676674])),
    Row("Ndtri", lambda: tf.math.ndtri([0.0, 0.025, 0.5, 0.975, 1.0, -0.1]),
        np.float32([-INF, -1.959963984540054, 0, 1.959963984540054, INF, NAN])),
    Row("Ndtri", lambda: tf.math.ndtri(np.float64([1e-300, 0.9])),
        np.float64([-37.04710099343999, 1.2815515655446004])),
    Row("CumulativeLogsumexp", lambda: tf.math.cumulative_logsumexp([1.0, 2.0, 3.0]),
        _clse(np.float32([1, 2, 3]))),
    Row("CumulativeLogsumexp",
        lambda: tf.math.cumulative_logsumexp(X3, axis=1, exclusive=True, reverse=True),
        _clse(X3, 1, True, True)),
    Row("CumulativeLogsumexp",
        lambda: tf.math.cumulative_logsumexp(np.float64(X3), exclusive=True),
        _clse(np.float64(X3), 0, True)),
    Row("Bincount", lambda: tf.bincount([1, 1, 3]), np.int32([0, 2, 0, 1])),
    Row("Bincount", lambda: tf.bincount([1, 1, 3], minlength=6, maxlength=2), np.int32([0, 2])),
    Row("Bincount", lambda: tf.bincount(tf.constant([], tf.int32)), np.int32([])),
    Row("Bincount", lambda: tf.math.bincount([1, 1, 3], weights=[0.5, 1.0, 2.0]),
        np.float32([0, 1.5, 0, 2])),
    Row("Bincount", lambda: tf.bincount([[1, 1], [3, 0]], minlength=5, dtype=tf.float64),
        np.float64([1, 2, 0, 1, 0])),
    Row("HistogramFixedWidth",
        lambda: tf.histogram_fixed_width([-1.0, 0.0, 0.5, 1.0, 5.0, 10.0], [0.0, 5.0], nbins=5),
        np.int32([3, 1, 0, 0, 2])),
    Row("HistogramFixedWidth",
        lambda: tf.histogram_fixed_width([1, 2, 3], [0, 4], nbins=2, dtype=tf.int64),
        np.int64([1, 2])),
    Row("Lgamma", lambda: tf.lbeta([[1.0, 2.0], [3.0, 4.0]]),
        np.float32([-np.log(2), math.lgamma(3) + math.lgamma(4) - math.lgamma(7)])),
    Row("Mul", lambda: tf.math.polyval([1.0, 2.0, 3.0], [2.0, -1.0]), np.float32([11, 2])),
    Row("Mul", lambda: tf.math.polyval([1, 2], 3), np.int32(5)),
    Row("ZerosLike", lambda: tf.math.polyval([], 2.0), np.float32(0)),
    Row("All", lambda: [tf.is_non_decreasing([1, 1, 2]), tf.is_strictly_increasing([1, 1, 2]),
                        tf.math.is_strictly_increasing([[1], [2]]),
                        tf.is_non_decreasing(tf.zeros([0]))],
        [True, False, True, True]),
    Row("UnsortedSegmentSum",
        lambda: tf.unsorted_segment_mean([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], [0, 0, 2], 4),
        np.float32([[2, 3], [0, 0], [5, 6], [0, 0]])),
    Row("UnsortedSegmentSum",
        lambda: tf.math.unsorted_segment_sqrt_n([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]],
                                                [0, 0, 2], 4),
        np.float32([[4 / np.sqrt(2), 6 / np.sqrt(2)], [0, 0], [5, 6], [0, 0]])),
    Row("UnsortedSegmentSum", lambda: tf.unsorted_segment_mean([1, 2, 4], [0, 0, 2], 3),
        np.float64([1.5, 0, 4])),
    Row("UnsortedSegmentSum", lambda: tf.confusion_matrix([0, 1, 2, 1], [0, 2, 2, 1]),
        np.int32([[1, 0, 0], [0, 1, 1], [0, 0, 1]])),
    Row("UnsortedSegmentSum",
        lambda: tf.math.confusion_matrix([0, 1, 2, 1], [0, 2, 2, 1], num_classes=4,
                                         weights=[1.0, 2.0, 3.0, 4.0], dtype=tf.float32),
        np.float32([[1, 0, 0, 0], [0, 4, 2, 0], [0, 0, 3, 0], [0, 0, 0, 0]])),
    Row("Mean", lambda: [tf.math.zero_fraction([0, 1, 0, 3]), tf.nn.zero_fraction([[0.0]])],
        [np.float32(0.5), np.float32(1.0)]),
    Row("Cast", lambda: tf.histogram_fixed_width_bins([-1.0, 0.0, 0.5, 1.0, 5.0, 10.0],
                                                      [0.0, 5.0], nbins=5),
        np.int32([0, 0, 0, 1, 4, 4])),
]

COVERED_OPS = {"Xlogy", "Xdivy", "MulNoNan", "Erfinv", "Ndtri", "CumulativeLogsumexp",
               "Bincount", "HistogramFixedWidth"}


def _check(outputs, expected):
    single = not isinstance(outputs, list)
    outs = [outputs] if single else outputs
    exps = [expected] if single else expected
    for tensor, value, exp in zip(outs, _fetch(outs), exps):
        exp, value = np.asarray(exp), np.asarray(value)
        assert tensor.shape.is_compatible_with(value.shape), (tensor.shape, value.shape)
        assert value.dtype == tensor.dtype.base_dtype.as_numpy_dtype, (value.dtype, tensor.dtype)
        assert value.shape == exp.shape, (value.shape, exp.shape)
        if value.dtype.kind == "f":
            np.testing.assert_allclose(value, exp.astype(value.dtype), rtol=2e-6, atol=0)
        else:
            np.testing.assert_array_equal(value, exp)


@pytest.mark.parametrize("row", ROWS, ids=[f"{r.op}-{i}" for i, r in enumerate(ROWS)])
def test_row(row):
    _check(row.build(), row.expected)


def test_static_shapes_and_namespaces():
    p = tf.placeholder(tf.float32, [None, 3])
    assert tf.math.xlogy(p, tf.placeholder(tf.float32, [3])).shape.as_list() == [None, 3]
    assert tf.math.cumulative_logsumexp(p, axis=1).shape.as_list() == [None, 3]
    assert tf.bincount([1, 2], minlength=5).shape.as_list() == [5]
    assert tf.bincount(tf.placeholder(tf.int32, [None])).shape.as_list() == [None]
    assert tf.histogram_fixed_width(p, [0.0, 1.0], nbins=7).shape.as_list() == [7]
    assert tf.confusion_matrix([0, 1], [1, 1], num_classes=3).shape.as_list() == [3, 3]
    assert tf.unsorted_segment_mean(tf.zeros([4, 3]), [0, 1, 1, 0], 2).shape.as_list() == [2, 3]
    assert tf.lbeta(p).shape.as_list() == [None]
    for name in ["lbeta", "bincount", "confusion_matrix", "unsorted_segment_mean",
                 "unsorted_segment_sqrt_n", "is_non_decreasing", "is_strictly_increasing",
                 "histogram_fixed_width", "histogram_fixed_width_bins"]:
        assert hasattr(tf, name), name
    for name in ["xlogy", "xdivy", "multiply_no_nan", "reciprocal_no_nan", "erfinv", "ndtri",
                 "polyval", "zero_fraction", "cumulative_logsumexp", "invert_permutation",
                 "bincount", "confusion_matrix", "lbeta", "is_non_decreasing"]:
        assert hasattr(tf.math, name), name


def test_errors():
    with pytest.raises(errors.InvalidArgumentError, match="must be non-negative"):
        _fetch(tf.bincount(tf.placeholder_with_default([1, -1, 3], [None])))
    with pytest.raises(errors.InvalidArgumentError, match="value_range"):
        _fetch(tf.histogram_fixed_width([1.0, 2.0], [4.0, 0.0], nbins=2))
    with pytest.raises(ValueError, match="Requires nbins > 0"):
        tf.histogram_fixed_width([1.0, 2.0], [0.0, 4.0], nbins=0)
    with pytest.raises(errors.InvalidArgumentError, match="`predictions` out of bound"):
        labels = tf.placeholder_with_default([0, 1], [None])
        _fetch(tf.confusion_matrix(labels, tf.placeholder_with_default([0, 5], [None]),
                                   num_classes=4))
    with pytest.raises(TypeError, match="allowed|not in"):
        tf.math.cumulative_logsumexp([1, 2])
    with pytest.raises(ValueError, match="list"):
        tf.math.polyval(tf.constant([1.0]), 2.0)
    with pytest.raises(ValueError, match="reduction dimension"):
        tf.lbeta(3.0)
    with pytest.raises(TypeError, match="numeric"):
        tf.is_non_decreasing(["a", "b"])
    with pytest.raises(TypeError, match="float"):
        tf.unsorted_segment_sqrt_n([1, 2], [0, 0], 1)
    with pytest.raises(errors.InvalidArgumentError, match="out of range"):
        x = tf.placeholder_with_default(np.float32([1.0, 2.0]), [None])
        _fetch(tf.math.cumulative_logsumexp(x, axis=tf.placeholder_with_default(3, [])))


@settings(max_examples=30, deadline=None)
@given(st.floats(-0.9999999, 0.9999999))
def test_erfinv_inverts_erf(y):
    with tf.Graph().as_default():
        x = _fetch(tf.math.erfinv(np.float64(y)))
    assert math.isclose(math.erf(x), y, rel_tol=1e-12, abs_tol=1e-300)


@settings(max_examples=30, deadline=None)
@given(st.floats(1e-300, 1 - 1e-16))
def test_ndtri_inverts_the_normal_cdf(p):
    with tf.Graph().as_default():
        x = _fetch(tf.math.ndtri(np.float64(p)))
    cdf = 0.5 * math.erfc(-x / math.sqrt(2))
    assert math.isclose(cdf, p, rel_tol=1e-10)


@settings(max_examples=20, deadline=None)
@given(st.lists(st.integers(0, 9), max_size=12), st.integers(0, 12))
def test_bincount_matches_numpy(values, minlength):
    arr = np.int32(values)
    with tf.Graph().as_default():
        _check(tf.bincount(arr, minlength=minlength),
               np.bincount(arr, minlength=minlength).astype(np.int32))


# -- gradients -----------------------------------------------------------------------------------

def _case(fn, *ranges, seed=0):
    def build(tf):
        rng = np.random.RandomState(seed)
        xs = [tf.placeholder(tf.float64, shape) for shape, _ in ranges]
        values = [rng.uniform(lo, hi, shape) for shape, (lo, hi) in ranges]
        return fn(tf, *xs), xs, values

    return build


GRADIENT_CASES = [
    ("Xlogy", _case(lambda tf, x, y: tf.math.xlogy(x, y), ([2, 3], (-1, 1)), ([3], (0.5, 2)))),
    ("Xdivy", _case(lambda tf, x, y: tf.math.xdivy(x, y), ([3], (-1, 1)), ([2, 3], (0.5, 2)))),
    ("MulNoNan", _case(lambda tf, x, y: tf.math.multiply_no_nan(x, y), ([2, 1], (-1, 1)),
                       ([2, 3], (-1, 1)))),
    ("Erfinv", _case(lambda tf, x: tf.math.erfinv(x), ([4], (-0.9, 0.9)))),
    ("Ndtri", _case(lambda tf, x: tf.math.ndtri(x), ([4], (0.05, 0.95)))),
    ("CumulativeLogsumexp", _case(lambda tf, x: tf.math.cumulative_logsumexp(x, axis=1),
                                  ([2, 3], (-1, 1)))),
    ("CumulativeLogsumexp",
     _case(lambda tf, x: tf.math.cumulative_logsumexp(x, exclusive=True, reverse=True)[:3]
           * [1.0, -2.0, 0.5], ([4], (-1, 1)))),
    ("UnsortedSegmentSum", _case(lambda tf, x: tf.unsorted_segment_mean(x, [1, 0, 1], 3),
                                 ([3, 2], (-1, 1)))),
    ("UnsortedSegmentSum", _case(lambda tf, x: tf.unsorted_segment_sqrt_n(x, [1, 0, 1], 2),
                                 ([3], (-1, 1)))),
    ("Lgamma", _case(lambda tf, x: tf.lbeta(x), ([2, 3], (0.5, 2)))),
    ("Mul", _case(lambda tf, x: tf.math.polyval([1.0, -2.0, 0.5], x), ([3], (-1, 1)))),
]
