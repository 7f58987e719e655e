"""Shared check for the array-op test tables: values, dtypes and static shapes."""

import numpy as np

import tensorflux as tf


def _fetch(outputs, feed=None):
    with tf.Session() as sess:
        return sess.run(outputs, feed)


def check(outputs, expected, feed=None):
    """Runs `outputs` and checks values, dtypes and static shapes against `expected`."""
    single = not isinstance(outputs, (list, tuple))
    outs = [outputs] if single else list(outputs)
    exps = [expected] if single else list(expected)
    values = _fetch(outs, feed)
    assert len(values) == len(exps)
    for tensor, value, exp in zip(outs, values, exps):
        exp = np.asarray(exp)
        value = np.asarray(value)
        assert tensor.shape.is_compatible_with(value.shape), (tensor.shape, value.shape)
        assert value.dtype == tensor.dtype.base_dtype.as_numpy_dtype, (value.dtype, tensor.dtype)
        assert value.shape == exp.shape, (value.shape, exp.shape)
        np.testing.assert_array_equal(value, exp)
