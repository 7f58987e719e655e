"""`pooling_jit.max_pool_grad_relu` (the `_FusedMaxPoolGrad` kernel) against the unfused
NumPy references on the same inputs: ReluGrad (`g * (y > 0)`), then MaxPoolGrad
(`conv2d.max_pool_grad`), and the bias gradient as a float64 sum of the masked gradient."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from special_values import floats

from tensorflux.lib.numerics import conv2d, intra_op, jit, pooling_jit
from tensorflux.lib.numerics import window as window_lib

pytestmark = [pytest.mark.jit_compile,
              pytest.mark.skipif(not jit.available(), reason="numba is not available")]


def _reference(x, y, g, geo):
    masked = g * (y > 0).astype(g.dtype)  # ReluGrad's NumPy kernel
    dx = conv2d.max_pool_grad(x, masked, geo)
    return dx, masked.astype(np.float64).sum(axis=(0, 1, 2))


def _check(x, g, geo):
    y = conv2d.max_pool(x, geo)
    dx, bias = pooling_jit.max_pool_grad_relu(x, y, g, geo)
    want_dx, want_bias = _reference(x, y, g, geo)
    assert dx.dtype == bias.dtype == g.dtype and bias.shape == (x.shape[3],)
    np.testing.assert_array_equal(dx, want_dx)
    np.testing.assert_array_equal(np.signbit(dx), np.signbit(want_dx))
    tol = np.finfo(g.dtype).eps * 4
    scale = np.abs(np.where(np.isfinite(g), g, 0)).astype(np.float64).sum(axis=(0, 1, 2))
    np.testing.assert_allclose(bias, want_bias.astype(g.dtype), rtol=tol,
                               atol=float(tol * scale.max(initial=0.0)), equal_nan=True)
    return dx, bias


@st.composite
def tiled_cases(draw):
    k = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    padding = draw(st.sampled_from(["VALID", "SAME"]))
    shape = (draw(st.integers(0, 3)), draw(st.integers(k[0], 9)), draw(st.integers(k[1], 9)),
             draw(st.integers(1, 5)))
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    geo = window_lib.window("NHWC", [1, *k, 1], [1, *k, 1], (1, 1, 1, 1), padding, ())
    return shape, dtype, geo, draw(st.booleans()), draw(st.integers(0, 2 ** 31 - 1))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiled_cases())
def test_fused_pool_gradient_matches_the_unfused_kernels(case):
    shape, dtype, geo, specials, seed = case
    if not pooling_jit.tiles(shape, geo):  # SAME with padding before the first window
        return
    rng = np.random.default_rng(seed)
    x = floats(rng, shape, dtype, specials)
    x = np.round(x) if not specials else x  # ties: the first maximum takes the gradient
    g = floats(rng, conv2d.max_pool(x, geo).shape, dtype, specials and seed % 2 == 0)
    _check(x, g, geo)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fused_pool_gradient_known_values(dtype):
    """Relu mask from the pooled output (NaN and 0 count as not positive), ties to the first
    maximum, -0.0 gradients written as 0.0 as the reference's sum into zeros, rows past the
    last window zero, and the bias sum of the masked gradient."""
    geo = window_lib.window("NHWC", [1, 2, 2, 1], [1, 2, 2, 1], (1, 1, 1, 1), "VALID", ())
    x = np.array([[5, 5, 0, 0, 1],
                  [1, 5, 0, 0, 2],
                  [np.nan, 1, 3, 2, 3],
                  [2, 0, 1, 3, 4],
                  [9, 9, 9, 9, 9]], dtype).reshape(1, 5, 5, 1)
    g = np.array([[7, 11], [13, -0.0]], dtype).reshape(1, 2, 2, 1)
    dx, bias = _check(x, g, geo)
    np.testing.assert_array_equal(dx.reshape(5, 5), [[7, 0, 0, 0, 0],
                                                     [0, 0, 0, 0, 0],
                                                     [0, 0, 0, 0, 0],
                                                     [0, 0, 0, 0, 0],
                                                     [0, 0, 0, 0, 0]])
    assert not np.signbit(dx).any()
    np.testing.assert_array_equal(bias, [7.0])  # 11 masked (max 0), 13 masked (NaN max)


def test_fused_pool_gradient_split_equals_unsplit(monkeypatch):
    """Batch ranges on the intra-op helpers give the very values of one call (the bias sums
    are per image, then over the images in order)."""
    geo = window_lib.window("NHWC", [1, 2, 2, 1], [1, 2, 2, 1], (1, 1, 1, 1), "SAME", ())
    rng = np.random.default_rng(3)
    x = rng.standard_normal((12, 16, 16, 32)).astype(np.float32)
    y = conv2d.max_pool(x, geo)
    g = rng.standard_normal(y.shape).astype(np.float32)
    whole = pooling_jit.max_pool_grad_relu(x, y, g, geo)
    monkeypatch.setattr(pooling_jit, "SPLIT_MIN_BYTES", 0)
    intra_op.configure(2, lambda fn: False)  # the caller runs every part itself
    try:
        split = pooling_jit.max_pool_grad_relu(x, y, g, geo)
    finally:
        intra_op.configure(1)
    for a, b in zip(whole, split):
        np.testing.assert_array_equal(a, b)


def test_fused_pool_gradient_refuses_bad_shapes_and_overlapping_windows():
    geo = window_lib.window("NHWC", [1, 2, 2, 1], [1, 2, 2, 1], (1, 1, 1, 1), "VALID", ())
    x = np.ones((1, 4, 4, 2), np.float32)
    y = np.ones((1, 2, 2, 2), np.float32)
    with pytest.raises(ValueError, match="pooled shape"):
        pooling_jit.max_pool_grad_relu(x, y, np.ones((1, 2, 3, 2), np.float32), geo)
    with pytest.raises(ValueError, match="pooled output"):
        pooling_jit.max_pool_grad_relu(x, np.ones((1, 3, 2, 2), np.float32), y, geo)
    overlapping = window_lib.window("NHWC", [1, 3, 3, 1], [1, 1, 1, 1], (1, 1, 1, 1),
                                    "VALID", ())
    y = np.ones((1, 2, 2, 2), np.float32)
    with pytest.raises(ValueError, match="side by side"):
        pooling_jit.max_pool_grad_relu(x, y, y, overlapping)
