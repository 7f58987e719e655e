"""The fast paths of the convolution and pooling kernels (conv_kernels.py) against loop
references: per-offset input gradients (many channels), chunked im2col, and max-pool gradient
routing with ties, NaN and infinities."""

import itertools

import numpy as np
import pytest
from conv_refs import geometry, ref_backprop_filter, ref_backprop_input, ref_conv
from hypothesis import given, settings
from hypothesis import strategies as st

from tensorflux.lib.numerics import conv2d as conv_kernels

RNG = np.random.default_rng(7)


CONV_GEOMETRIES = [  # stride 1 within the window's reach: input gradient as a convolution
    ((5, 5), (1, 1), (1, 1), "SAME"),
    ((3, 2), (1, 1), (2, 3), "SAME"),
    ((3, 3), (1, 1), (1, 1), "VALID"),
    ((2, 3), (1, 1), (1, 1), ((1, 0), (2, 1))),
    # padded beyond the window, or strided: one matmul per kernel offset
    ((2, 2), (1, 1), (1, 1), ((3, 0), (0, 2))),
    ((3, 2), (2, 1), (1, 1), "SAME"),
    ((3, 3), (1, 2), (2, 1), "VALID"),
    ((2, 3), (2, 2), (1, 1), "VALID"),
]


@pytest.mark.parametrize("k,strides,dilations,padding", CONV_GEOMETRIES)
@pytest.mark.parametrize("channels", [2, 9])
def test_conv_kernels_match_loop_reference(k, strides, dilations, padding, channels):
    geo = geometry(None, strides, dilations, padding)
    x = RNG.standard_normal((3, 7, 8, channels))
    f = RNG.standard_normal((*k, channels, 4))
    y = conv_kernels.conv2d(x, f, geo)
    np.testing.assert_allclose(y, ref_conv(x, f, geo), rtol=1e-10, atol=1e-10)
    g = RNG.standard_normal(y.shape)
    dx = conv_kernels.conv2d_backprop_input(x.shape, f, g, geo)
    assert dx.flags.c_contiguous and dx.dtype == np.float64
    np.testing.assert_allclose(dx, ref_backprop_input(x.shape, f, g, geo), rtol=1e-10,
                               atol=1e-10)
    dxc = conv_kernels.conv2d_backprop_input(x.shape, f, g, geo, channels_first_out=True)
    np.testing.assert_array_equal(dxc, dx.transpose(0, 3, 1, 2))
    df = conv_kernels.conv2d_backprop_filter(x, f.shape, g, geo)
    np.testing.assert_allclose(df, ref_backprop_filter(x, f.shape, g, geo), rtol=1e-10,
                               atol=1e-10)


@pytest.mark.parametrize("patch_bytes,offset_bytes", [(1, 1), (3000, 500), (1 << 30, 1 << 30)])
@pytest.mark.parametrize("depth", [8, 1])  # window rows longer / shorter than output rows
def test_chunk_sizes_do_not_change_results(monkeypatch, patch_bytes, offset_bytes, depth):
    monkeypatch.setattr(conv_kernels, "_PATCH_BYTES", patch_bytes)
    monkeypatch.setattr(conv_kernels, "_OFFSET_BYTES", offset_bytes)
    geo = geometry(None, (1, 1), (1, 1), "SAME")
    x = RNG.standard_normal((5, 6, 5, depth)).astype(np.float32)
    f = RNG.standard_normal((3, 3, depth, 3)).astype(np.float32)
    g = RNG.standard_normal((5, 6, 5, 3)).astype(np.float32)
    x64, f64, g64 = (v.astype(np.float64) for v in (x, f, g))
    y = conv_kernels.conv2d(x, f, geo)
    dx = conv_kernels.conv2d_backprop_input(x.shape, f, g, geo)
    df = conv_kernels.conv2d_backprop_filter(x, f.shape, g, geo)
    assert y.dtype == dx.dtype == df.dtype == np.float32
    np.testing.assert_allclose(y, ref_conv(x64, f64, geo), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(dx, ref_backprop_input(x.shape, f64, g64, geo), rtol=1e-4,
                               atol=1e-4)
    np.testing.assert_allclose(df, ref_backprop_filter(x64, f.shape, g64, geo), rtol=1e-4,
                               atol=1e-4)


def test_empty_batch():
    geo = geometry(None, (1, 1), (1, 1), "SAME")
    f = np.ones((3, 3, 8, 2))
    assert conv_kernels.conv2d(np.zeros((0, 4, 4, 8)), f, geo).shape == (0, 4, 4, 2)
    assert conv_kernels.conv2d_backprop_input((0, 4, 4, 8), f, np.zeros((0, 4, 4, 2)),
                                              geo).shape == (0, 4, 4, 8)
    df = conv_kernels.conv2d_backprop_filter(np.zeros((0, 4, 4, 8)), f.shape,
                                             np.zeros((0, 4, 4, 2)), geo)
    np.testing.assert_array_equal(df, np.zeros(f.shape))


# -- max pooling ----------------------------------------------------------------------------


def ref_max_pool_grad(x, g, geo):
    """TF's CPU scan: per window, a later element wins only when strictly greater."""
    n, h, w, c = x.shape
    kh, kw = geo.ksize
    (oh, ow), (top, _, left, _) = geo.geometry(h, w, kh, kw)
    lowest = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    dx = np.zeros(x.shape, g.dtype)
    for b, a, q, ch in itertools.product(range(n), range(oh), range(ow), range(c)):
        best, where = None, None
        for i, j in itertools.product(range(kh), range(kw)):
            r = a * geo.strides[0] + i - top
            col = q * geo.strides[1] + j - left
            inside = 0 <= r < h and 0 <= col < w
            value = x[b, r, col, ch] if inside else lowest
            if best is None or value > best:
                best, where = value, ((r, col) if inside else None)
        if where is not None:
            dx[b, where[0], where[1], ch] += g[b, a, q, ch]
    return dx


@settings(max_examples=40, deadline=None)
@given(k=st.tuples(st.integers(1, 3), st.integers(1, 3)),
       s=st.tuples(st.integers(1, 3), st.integers(1, 3)),
       padding=st.sampled_from(["SAME", "VALID"]), kind=st.sampled_from(["f4", "f8", "i4"]),
       special=st.booleans(), seed=st.integers(0, 2 ** 31 - 1))
def test_max_pool_grad_routing(k, s, padding, kind, special, seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(-2, 3, (2, 5, 6, 2)).astype(kind)  # small range: many ties
    if special and kind != "i4":
        x[rng.random(x.shape) < 0.2] = np.nan
        x[rng.random(x.shape) < 0.1] = -np.inf
    geo = geometry(k, s, (1, 1), padding)
    out_hw, _ = geo.geometry(5, 6, *k)
    g = rng.integers(-4, 5, (2, *out_hw, 2)).astype(kind)
    if special and kind != "i4":
        g[rng.random(g.shape) < 0.2] = np.inf
    expect = ref_max_pool_grad(x, g, geo)
    dx = conv_kernels.max_pool_grad(x, g, geo)
    assert dx.dtype == g.dtype and dx.shape == x.shape
    np.testing.assert_array_equal(dx, expect)
    assert not np.signbit(dx[dx == 0]).any()
    # MaxPoolGradGrad picks, per output, the input-shaped gradient at the same position.
    gg = rng.standard_normal(x.shape).astype(g.dtype) if kind != "i4" else x * 3
    picked = conv_kernels.max_pool_grad_grad(x, gg, geo)
    ones = np.ones(g.shape, g.dtype)
    routes = [conv_kernels.max_pool_grad(x, np.where(np.arange(ones.size).reshape(ones.shape)
                                                     == m, ones, 0 * ones), geo)
              for m in range(ones.size)]
    expect_pick = np.array([np.sum(np.where(r > 0, gg, 0)) for r in routes]).reshape(g.shape)
    np.testing.assert_allclose(picked, expect_pick.astype(g.dtype), rtol=1e-6)


@pytest.mark.parametrize("chunk_bytes", [1, 500])
def test_max_pool_gradients_in_batch_chunks_match_whole_batch(monkeypatch, chunk_bytes):
    rng = np.random.default_rng(5)
    x = rng.integers(-2, 3, (5, 6, 6, 3)).astype(np.float32)  # ties across chunk borders
    geo = geometry((2, 2), (2, 2), (1, 1), "SAME")
    g = rng.standard_normal((5, 3, 3, 3)).astype(np.float32)
    gg = rng.standard_normal(x.shape).astype(np.float32)
    whole = conv_kernels.max_pool_grad(x, g, geo), conv_kernels.max_pool_grad_grad(x, gg, geo)
    monkeypatch.setattr(conv_kernels, "_POOL_CHUNK_BYTES", chunk_bytes)
    np.testing.assert_array_equal(conv_kernels.max_pool_grad(x, g, geo), whole[0])
    np.testing.assert_array_equal(conv_kernels.max_pool_grad_grad(x, gg, geo), whole[1])
    np.testing.assert_array_equal(whole[0], ref_max_pool_grad(x, g, geo))
