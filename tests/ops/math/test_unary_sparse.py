"""Unary math on SparseTensor values (TF's zero-preserving set: abs, negative, sign, square,
sqrt, tanh, erf)."""

import math

import numpy as np
import pytest
from op_helpers import graph, run  # noqa: F401

import tensorflux as tf

_CASES = [("abs", np.abs), ("negative", np.negative), ("sign", np.sign),
          ("square", np.square), ("sqrt", lambda v: np.sqrt(np.abs(v))), ("tanh", np.tanh),
          ("erf", np.vectorize(math.erf))]


@pytest.mark.parametrize("name,ref", _CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_unary_on_sparse_values(name, ref, dtype):
    values = np.array([-1.5, 4.0, 0.25], dtype)
    if name == "sqrt":
        values = np.abs(values)
    sp = tf.SparseTensor([[0, 0], [1, 2], [2, 1]], values, [3, 3])
    out = getattr(tf, name)(sp)
    assert isinstance(out, tf.SparseTensor)
    got = run(out)
    np.testing.assert_array_equal(got.indices, [[0, 0], [1, 2], [2, 1]])
    np.testing.assert_array_equal(got.dense_shape, [3, 3])
    np.testing.assert_allclose(got.values, ref(values), rtol=1e-6)
    assert got.values.dtype == dtype


def test_abs_of_complex_sparse_is_real():
    values = np.array([3 + 4j, -1j], np.complex64)
    got = run(tf.abs(tf.SparseTensor([[0], [2]], values, [3])))
    np.testing.assert_allclose(got.values, [5.0, 1.0])
    assert got.values.dtype == np.float32


def test_non_zero_preserving_op_rejects_sparse():
    with pytest.raises(TypeError):
        tf.cos(tf.SparseTensor([[0]], [1.0], [2]))
