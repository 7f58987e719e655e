"""Helpers shared by the op tests: a fresh default graph per test (autouse where imported), a
one-shot session run, and the gradient-case builder of the `GRADIENT_CASES` tables."""

import numpy as np
import pytest

import tensorflux as tf


@pytest.fixture(autouse=True)
def graph():
    with tf.Graph().as_default() as g:
        yield g


def run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


def gradient_case(fn, *shapes, seed=0):
    """A `GRADIENT_CASES` builder: `fn(tf, *xs)` on float64 placeholders of `shapes`, fed
    uniform values in [-1, 1) drawn with `seed`."""

    def build(tf):
        rng = np.random.RandomState(seed)
        xs = [tf.placeholder(tf.float64, s) for s in shapes]
        values = [rng.uniform(-1, 1, s) for s in shapes]
        return fn(tf, *xs), xs, values

    return build


def check_error_row(build, phase, error, words, run_fetch=None):
    """One row of a family's error table: `build()` raises `error` matching `words` at graph
    construction (`phase == "build"`), or returns (fetch, feed) whose run raises it."""
    if phase == "build":
        with pytest.raises(error, match=words):
            build()
        return
    fetch, feed = build()
    with pytest.raises(error, match=words):
        (run_fetch or run)(fetch, feed)


def check_outputs(outputs, expected, feed=None, rtol=1e-6, atol=0.0):
    """Runs `outputs` (a tensor or a list) and checks each value's dtype and shape, its static
    shape, and its values against `expected` (floats within rtol/atol, NaN equal to NaN)."""
    single = not isinstance(outputs, (list, tuple))
    outs = [outputs] if single else list(outputs)
    exps = [expected] if single else list(expected)
    for tensor, value, exp in zip(outs, run(outs, feed), exps):
        exp = np.asarray(exp)
        value = np.asarray(value)
        assert tensor.shape.is_compatible_with(value.shape), (tensor.shape, value.shape)
        assert value.dtype == tensor.dtype.base_dtype.as_numpy_dtype, (value.dtype, tensor.dtype)
        assert value.dtype == exp.dtype, (value.dtype, exp.dtype)
        assert value.shape == exp.shape, (value.shape, exp.shape)
        if exp.dtype.kind in "fc":
            np.testing.assert_allclose(value, exp, rtol=rtol, atol=atol, equal_nan=True)
        else:
            np.testing.assert_array_equal(value, exp)
