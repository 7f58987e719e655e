"""tf.norm(ord=2) over a matrix pair of axes: complex inputs and tensors of unknown rank,
against np.linalg.norm."""

import numpy as np
import pytest
from op_helpers import graph, run  # noqa: F401

import tensorflux as tf

RNG = np.random.RandomState(2)
X = RNG.randn(2, 3, 4, 5) + 1j * RNG.randn(2, 3, 4, 5)


@pytest.mark.parametrize("axis", [(-2, -1), (-1, -2), (0, 2), (3, 1)])
@pytest.mark.parametrize("dtype", [np.complex128, np.float64])
@pytest.mark.parametrize("known_rank", [True, False])
def test_matrix_two_norm(axis, dtype, known_rank):
    x = X.astype(dtype) if dtype == np.complex128 else X.real.copy()
    fed = tf.placeholder(tf.as_dtype(dtype), x.shape if known_rank else None)
    out = tf.norm(fed, ord=2, axis=axis, keepdims=True)
    got = run(out, {fed: x})
    expected = np.linalg.norm(x, 2, axis=axis, keepdims=True)
    assert got.shape == expected.shape
    np.testing.assert_allclose(np.real(got), expected, rtol=1e-10)
