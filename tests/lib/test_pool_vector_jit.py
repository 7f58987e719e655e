"""float32 MaxPool and overlapping MaxPoolGrad on explicit 16-float vectors (pool_vector_jit,
taken by pooling_jit.max_pool / max_pool_grad) bit for bit against the scalar compiled kernels;
the forward against the scalar compiled kernel (pooling_jit._max_pool:
the first maximum wins ties, the last NaN wins) and equal to the NumPy reference, over odd
shapes, padding, overlapping and gapped windows, channel counts around the vector widths and
NaN/inf/signed zeros."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from special_values import floats

from tensorflux.lib.numerics import conv2d, jit, pooling_jit
from tensorflux.lib.numerics import window as window_lib

pytestmark = [pytest.mark.jit_compile,
              pytest.mark.skipif(not jit.available(), reason="numba is not available")]


@pytest.fixture(autouse=True)
def _vectors_for_small_inputs(monkeypatch):
    monkeypatch.setattr(pooling_jit, "VECTOR_MIN_BYTES", 0)


def scalar_kernel(x, geo):
    kh, kw, sh, sw, top, left, oh, ow = pooling_jit._window(x.shape, geo)
    out = np.empty((x.shape[0], oh, ow, x.shape[3]), dtype=x.dtype)
    pooling_jit._max_pool(np.ascontiguousarray(x), kh, kw, sh, sw, top, left, out)
    return out


def check(x, geo):
    got = pooling_jit.max_pool(x, geo)
    want = scalar_kernel(x, geo)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got.view(np.int32), want.view(np.int32))
    np.testing.assert_array_equal(got, conv2d.max_pool(x, geo))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 4), st.integers(1, 4), st.integers(1, 5), st.integers(1, 5),
       st.sampled_from(["SAME", "VALID"]), st.integers(1, 2), st.integers(1, 9),
       st.integers(1, 9), st.sampled_from([16, 17, 31, 32, 48, 64, 65, 80, 128, 143]),
       st.booleans(), st.booleans(), st.integers(0, 2 ** 31 - 1))
def test_vector_max_pool_is_the_scalar_fold(kh, kw, sh, sw, padding, n, h, wd, c, specials,
                                            ties, seed):
    geo = window_lib.window("NHWC", [1, kh, kw, 1], [1, sh, sw, 1], (1, 1, 1, 1), padding, ())
    h, wd = max(h, kh), max(wd, kw)  # VALID needs the window inside the input
    rng = np.random.default_rng(seed)
    x = floats(rng, (n, h, wd, c), np.float32, specials)
    if ties:
        x = np.round(x / 3)  # ties, and -0.0 next to 0.0
    check(x, geo)


def test_nan_payloads_and_signed_zeros_keep_the_scalar_bits():
    geo = window_lib.window("NHWC", [1, 3, 3, 1], [1, 2, 2, 1], (1, 1, 1, 1), "SAME", ())
    x = np.zeros((2, 7, 6, 33), np.float32)
    x[:, ::2] = -0.0
    bits = x.view(np.uint32)
    bits[0, 1, 1] = 0x7FC00001  # NaN payloads: the last NaN of a window wins
    bits[0, 2, 2] = 0x7FC00002
    bits[1, 3, 3, :17] = 0xFFC00003
    x[1, 4, 4, 5:] = np.inf
    check(x, geo)
    got = pooling_jit.max_pool(x, geo)
    assert got.view(np.uint32)[0, 1, 0, 0] == 0x7FC00002  # both NaNs in that window, row-major
    assert np.signbit(got[1, 0, 0, 0])  # -0.0 first in its window, 0.0 never greater


def test_strided_and_empty_inputs():
    geo = window_lib.window("NHWC", [1, 2, 2, 1], [1, 2, 2, 1], (1, 1, 1, 1), "VALID", ())
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 8, 8, 64)).astype(np.float32)[:, :, :, ::2]  # not contiguous
    check(x, geo)
    empty = np.zeros((0, 4, 4, 32), np.float32)
    assert pooling_jit.max_pool(empty, geo).shape == (0, 2, 2, 32)


def scalar_grad(x, g, geo):
    kh, kw, sh, sw, top, left, oh, ow = pooling_jit._window(x.shape, geo)
    n, h, wd, c = x.shape
    dx = np.empty((n, h * wd, c), dtype=g.dtype)
    pooling_jit._max_pool_grad(np.ascontiguousarray(x), np.ascontiguousarray(g), kh, kw, sh, sw,
                               top, left, dx)
    return dx.reshape(x.shape)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 4), st.integers(1, 4), st.integers(1, 4), st.integers(1, 4),
       st.sampled_from(["SAME", "VALID"]), st.integers(1, 2), st.integers(1, 9),
       st.integers(1, 9), st.sampled_from([16, 17, 32, 47, 64, 65, 96, 130]),
       st.booleans(), st.booleans(), st.integers(0, 2 ** 31 - 1))
def test_vector_max_pool_grad_is_the_scalar_scan(kh, kw, sh, sw, padding, n, h, wd, c,
                                                 specials, ties, seed):
    geo = window_lib.window("NHWC", [1, kh, kw, 1], [1, sh, sw, 1], (1, 1, 1, 1), padding, ())
    h, wd = max(h, kh), max(wd, kw)
    rng = np.random.default_rng(seed)
    x = floats(rng, (n, h, wd, c), np.float32, specials)
    if ties:
        x = np.round(x / 3)
    (oh, ow), _ = geo.geometry(h, wd, kh, kw)
    g = floats(rng, (n, oh, ow, c), np.float32, specials and seed % 2 == 0)
    got = pooling_jit.max_pool_grad(x, g, geo)
    want = scalar_grad(x, g, geo) if not pooling_jit.tiles(x.shape, geo) else \
        conv2d.max_pool_grad(x, g, geo)
    np.testing.assert_array_equal(got.view(np.int32), want.view(np.int32))


def test_grad_of_windows_starting_in_the_padding_drops_what_no_real_input_beats():
    # 4x4/1 SAME on 5x5: padding 1 above and left, so window (i, j) starts at (i - 1, j - 1).
    geo = window_lib.window("NHWC", [1, 4, 4, 1], [1, 1, 1, 1], (1, 1, 1, 1), "SAME", ())
    x = np.full((1, 5, 5, 16), -np.inf, np.float32)
    x[0, 2, 2] = np.nan  # never greater than -inf: windows starting in the padding drop
    g = np.arange(1, 26 * 16 + 1, dtype=np.float32)[:25 * 16].reshape(1, 5, 5, 16)
    got = pooling_jit.max_pool_grad(x, g, geo)
    np.testing.assert_array_equal(got.view(np.int32), scalar_grad(x, g, geo).view(np.int32))
    # A window starting at a real position keeps it (-inf; NaN is never greater); one
    # starting in the padding keeps the padding and its gradient is dropped.
    assert got[0, 0, 0, 0] == g[0, 1, 1, 0] and got[0, 2, 2, 0] == g[0, 3, 3, 0]
    assert got.sum() == g[0, 1:, 1:].sum()
