"""MatMul's kernel with a transposed right operand and few rows on the left runs as
`(b @ a.T).T` (ops/math/matrix_product.product): the same values as the plain product, on odd
shapes, NaN/inf, empty dimensions, views and both float types; other cases take the plain path."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorflux as tf
from tensorflux.ops.math import matrix_product


def floats(rng, shape, dtype, specials):
    x = (rng.standard_normal(shape) * 3).astype(dtype)
    if specials and x.size:
        flat = x.reshape(-1)
        picks = rng.integers(0, flat.size, size=max(1, flat.size // 50))
        flat[picks] = rng.choice([np.nan, np.inf, -np.inf, 0.0, -0.0], size=picks.size)
    return x


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 140), st.integers(0, 300), st.integers(1, 80),
       st.sampled_from([np.float32, np.float64]), st.booleans(), st.integers(0, 2 ** 31 - 1))
def test_product_with_transposed_right_operand_equals_numpy(m, n, k, dtype, specials, seed):
    rng = np.random.default_rng(seed)
    a = floats(rng, (m, k), dtype, specials)
    b = floats(rng, (n, k), dtype, specials)
    got = matrix_product.product(a, b, transpose_b=True)
    with np.errstate(all="ignore"):
        want = a @ b.T
    assert got.shape == (m, n) and got.dtype == dtype and got.flags.c_contiguous
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * max(1, k))


def test_lstm_cell_backprop_shape_takes_the_swapped_path_with_equal_values(monkeypatch):
    rng = np.random.default_rng(0)
    g = rng.standard_normal((32, 1024)).astype(np.float32)
    kernel = rng.standard_normal((512, 1024)).astype(np.float32)
    calls = []
    real = matrix_product.intra_op.matmul
    monkeypatch.setattr(matrix_product.intra_op, "matmul",
                        lambda x, y, out=None: calls.append(x.shape) or real(x, y, out))
    got = matrix_product.product(g, kernel, transpose_b=True)
    assert calls == [(512, 1024)]  # the kernel is the left operand
    np.testing.assert_allclose(got, g @ kernel.T, rtol=1e-5, atol=1e-4)
    calls.clear()
    matrix_product.product(g[:, :8], kernel[:, :8].copy(), transpose_b=True)  # inner 8
    matrix_product.product(g[:, :512], kernel[::2, :512], transpose_b=True)  # b a view
    matrix_product.product(g[:, :16].T.copy(), g[:, :16].T.copy(), transpose_b=True)  # n < 2m
    assert calls == [(32, 8), (32, 512), (16, 32)]


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64, tf.int32])
def test_matmul_op_with_transpose_b(dtype):
    rng = np.random.default_rng(1)
    a = (rng.standard_normal((4, 40)) * 5).astype(dtype.as_numpy_dtype)
    b = (rng.standard_normal((9, 40)) * 5).astype(dtype.as_numpy_dtype)
    with tf.Graph().as_default(), tf.Session() as sess:
        got = sess.run(tf.matmul(tf.constant(a), tf.constant(b), transpose_b=True))
    assert got.dtype == dtype.as_numpy_dtype
    np.testing.assert_allclose(got, a @ b.T, rtol=1e-5, atol=1e-3)
