"""NthElement: the n-th order statistic along the last axis (values vs np.sort, gradient shared
by ties, checked by finite differences) and its build-time and run-time argument checks."""

import numpy as np
import pytest
from op_helpers import graph, run  # noqa: F401

import tensorflux as tf
from tensorflux.ops.nn.order_statistics import nth_element

COVERED_OPS = {"NthElement"}


def _separated_case(n, reverse):
    """Rows of distinct values at least 0.1 apart, so finite differences keep the order."""

    def build(tf):
        value = np.random.RandomState(n).permutation(15).reshape(3, 5) / 10.0
        x = tf.placeholder(tf.float64, [3, 5])
        return nth_element(x, n, reverse=reverse), [x], [value]

    return build


GRADIENT_CASES = [("NthElement", _separated_case(0, False)),
                  ("NthElement", _separated_case(3, True))]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.uint8])
@pytest.mark.parametrize("shape", [(7,), (3, 6), (2, 3, 4)])
def test_every_order_statistic_matches_sorting(dtype, shape):
    rng = np.random.RandomState(sum(shape))
    x = rng.randint(0, 50, size=shape).astype(dtype)
    ordered = np.sort(x, axis=-1)
    outs = [nth_element(x, n) for n in range(shape[-1])]
    outs += [nth_element(x, n, reverse=True) for n in range(shape[-1])]
    got = run(outs)
    for n in range(shape[-1]):
        np.testing.assert_array_equal(got[n], ordered[..., n])
        np.testing.assert_array_equal(got[shape[-1] + n], ordered[..., shape[-1] - 1 - n])
    assert outs[0].shape.as_list() == list(shape[:-1]) and outs[0].dtype == tf.as_dtype(dtype)


def test_fed_n_and_unknown_shapes():
    x = tf.placeholder(tf.float32)
    n = tf.placeholder(tf.int32)
    out = nth_element(x, n, reverse=True)
    assert out.shape.ndims is None
    values = np.array([[3.0, -1.0, 8.0], [0.5, 0.25, 2.0]], np.float32)
    np.testing.assert_array_equal(run(out, {x: values, n: 1}), [3.0, 0.5])


def test_gradient_matches_finite_differences_without_ties():
    rng = np.random.RandomState(1)
    value = rng.permutation(24).reshape(4, 6).astype(np.float64) / 7.0
    x = tf.constant(value)
    y = nth_element(x, 2)
    with tf.Session():
        err = tf.test.compute_gradient_error(x, [4, 6], y, [4], x_init_value=value)
    assert err < 1e-8


def test_gradient_is_shared_equally_by_tied_entries():
    x = tf.placeholder(tf.float64, [2, 4])
    y = nth_element(x, 1)
    upstream = np.array([6.0, -3.0])
    (grad,) = tf.gradients(y, x, grad_ys=upstream)
    value = np.array([[1.0, 5.0, 5.0, 5.0], [2.0, 2.0, 9.0, 0.0]])
    got = run(grad, {x: value})
    np.testing.assert_allclose(got, [[0, 2, 2, 2], [-1.5, -1.5, 0, 0]])


def test_static_argument_errors():
    with pytest.raises(ValueError, match="at least 1"):
        nth_element(3.0, 0)
    with pytest.raises(ValueError, match="non-negative but is -2"):
        nth_element([1.0, 2.0], -2)
    with pytest.raises(ValueError, match="scalar but has rank 1"):
        nth_element([1.0, 2.0], [0])
    with pytest.raises(ValueError, match="last dimension > n = 3"):
        nth_element(np.zeros((2, 3), np.float32), 3)


def test_run_time_argument_errors():
    x = tf.placeholder(tf.float32)
    n = tf.placeholder(tf.int32)
    out = nth_element(x, n)
    cases = [(5.0, 0, "Input must be >= 1-D"), ([1.0, 2.0], -1, "Need n >= 0, got -1"),
             ([[1.0, 2.0]], 2, r"at least n\+1 columns")]
    for value, index, words in cases:
        with pytest.raises(tf.errors.InvalidArgumentError, match=words):
            run(out, {x: value, n: index})


def test_contrib_name_is_the_op_wrapper():
    assert tf.contrib.nn.nth_element is nth_element
