"""The compiled max-pool gradient of overlapping windows (pooling_jit._max_pool_grad: picks
by selects, masked row adds, rows zeroed as the windows reach them) bit for bit against a
loop that adds each window's gradient to its first maximum in window order (TF's scan rule:
ties to the first, NaN only in first place, padding first takes and drops it)."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from special_values import floats

from tensorflux.lib.numerics import jit, pooling_jit
from tensorflux.lib.numerics import window as window_lib

pytestmark = [pytest.mark.jit_compile,
              pytest.mark.skipif(not jit.available(), reason="numba is not available")]


def scatter_in_window_order(x, g, geo):
    n, h, wd, c = x.shape
    kh, kw = geo.ksize
    sh, sw = geo.strides
    (oh, ow), (top, _, left, _) = geo.geometry(h, wd, kh, kw)
    dx = np.zeros(x.shape, g.dtype)
    for b in range(n):
        for i in range(oh):
            for j in range(ow):
                for ch in range(c):
                    where, best = None, -np.inf
                    for di in range(kh):
                        for dj in range(kw):
                            r, q = i * sh - top + di, j * sw - left + dj
                            inside = 0 <= r < h and 0 <= q < wd
                            v = x[b, r, q, ch] if inside else -np.inf
                            if (di, dj) == (0, 0) or v > best:
                                where, best = ((r, q) if inside else None), v
                    if where is not None:
                        dx[b, where[0], where[1], ch] += g[b, i, j, ch]
    return dx


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 4), st.integers(1, 4), st.integers(1, 3), st.integers(1, 3),
       st.sampled_from(["SAME", "VALID"]), st.integers(1, 2), st.integers(1, 9),
       st.integers(1, 9), st.integers(1, 20), st.booleans(),
       st.sampled_from([np.float32, np.float64]), st.integers(0, 2 ** 31 - 1))
def test_overlapping_max_pool_grad_is_the_window_order_scatter(kh, kw, sh, sw, padding, n, h,
                                                               wd, c, specials, dtype, seed):
    geo = window_lib.window("NHWC", [1, kh, kw, 1], [1, sh, sw, 1], (1, 1, 1, 1), padding, ())
    h, wd = max(h, kh), max(wd, kw)  # VALID needs the window inside the input
    rng = np.random.default_rng(seed)
    x = floats(rng, (n, h, wd, c), dtype, specials)
    x = np.round(x) if not specials else x  # ties
    (oh, ow), _ = geo.geometry(h, wd, kh, kw)
    g = floats(rng, (n, oh, ow, c), dtype, specials and seed % 2 == 0)
    got = pooling_jit.max_pool_grad(x, g, geo)
    want = scatter_in_window_order(x, g, geo)
    np.testing.assert_array_equal(got, want)
    assert np.array_equal(np.signbit(got), np.signbit(want))
