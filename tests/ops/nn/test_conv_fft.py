"""Stride-1 convolutions in the frequency domain (conv_fft.py) against loop references, the
dispatch rule in conv_kernels, and float32 accuracy on a shape that takes the path."""

import numpy as np
import pytest
from conv_refs import geometry, ref_backprop_filter, ref_backprop_input, ref_conv
from hypothesis import given, settings
from hypothesis import strategies as st

from tensorflux.lib.numerics import conv2d as conv_kernels
from tensorflux.lib.numerics import conv_fft


@pytest.fixture
def always_fft(monkeypatch):
    monkeypatch.setattr(conv_kernels, "_FFT_MIN_FLOPS", 0)
    monkeypatch.setattr(conv_kernels, "_FFT_MAX_RATIO", float("inf"))


@settings(max_examples=60, deadline=None)
@given(k=st.tuples(st.integers(1, 5), st.integers(1, 5)),
       d=st.tuples(st.integers(1, 2), st.integers(1, 2)),
       hw=st.tuples(st.integers(1, 9), st.integers(1, 9)),
       depths=st.tuples(st.integers(1, 4), st.integers(1, 4)),
       padding=st.sampled_from(["SAME", "VALID", "EXPLICIT"]),
       explicit=st.tuples(*[st.integers(0, 3)] * 4), batch=st.integers(1, 3),
       seed=st.integers(0, 2 ** 31 - 1))
def test_all_three_ops_match_loop_reference(k, d, hw, depths, padding, explicit, batch, seed):
    pads = ((explicit[0], explicit[1]), (explicit[2], explicit[3]))
    geo = geometry(None, (1, 1), d, pads if padding == "EXPLICIT" else padding)
    reach = [(k[i] - 1) * d[i] + 1 for i in range(2)]
    padded = [hw[i] + (sum(pads[i]) if padding == "EXPLICIT" else 0) for i in range(2)]
    if padding != "SAME" and (padded[0] < reach[0] or padded[1] < reach[1]):
        return  # no output pixel: rejected before any kernel runs
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, *hw, depths[0]))
    f = rng.standard_normal((*k, *depths))
    out_hw, p = geo.geometry(*hw, *k)
    plan = conv_fft.Plan(hw, out_hw, k, d, (p[0], p[2]))
    y = conv_fft.conv2d(x, f, plan)
    np.testing.assert_allclose(y, ref_conv(x, f, geo), rtol=1e-9, atol=1e-9)
    g = rng.standard_normal(y.shape)
    np.testing.assert_allclose(conv_fft.conv2d_backprop_input(g, f, plan),
                               ref_backprop_input(x.shape, f, g, geo), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(conv_fft.conv2d_backprop_filter(x, f.shape, g, plan),
                               ref_backprop_filter(x, f.shape, g, geo), rtol=1e-9, atol=1e-9)


def test_dispatch_through_conv_kernels(always_fft, monkeypatch):
    """With the thresholds lifted every stride-1 float op goes through conv_fft, including
    NCHW input gradients, fused epilogues and batch chunks."""
    monkeypatch.setattr(conv_fft, "_SPECTRUM_BYTES", 1)  # one batch item per chunk
    rng = np.random.default_rng(3)
    geo = geometry(None, (1, 1), (1, 1), "SAME")
    x = rng.standard_normal((3, 6, 7, 4))
    f = rng.standard_normal((3, 3, 4, 5))
    g = rng.standard_normal((3, 6, 7, 5))
    assert conv_kernels.fft_plan(x.shape, f.shape, geo, x.dtype) is not None
    relu = []
    y = conv_kernels.conv2d(x, f, geo, epilogue=lambda chunk: (relu.append(len(chunk)),
                                                              np.maximum(chunk, 0, out=chunk)))
    assert relu == [1, 1, 1]
    np.testing.assert_allclose(y, np.maximum(ref_conv(x, f, geo), 0), rtol=1e-9, atol=1e-9)
    dx = conv_kernels.conv2d_backprop_input(x.shape, f, g, geo, channels_first_out=True)
    assert dx.flags.c_contiguous
    np.testing.assert_allclose(dx, ref_backprop_input(x.shape, f, g, geo).transpose(0, 3, 1, 2),
                               rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(conv_kernels.conv2d_backprop_filter(x, f.shape, g, geo),
                               ref_backprop_filter(x, f.shape, g, geo), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("strides,dtype,shape,expect", [
    ((1, 1), np.float32, (64, 16, 16, 32), True),   # 5x5 filter, 32 -> 64: a third of the flops
    ((1, 1), np.float64, (64, 16, 16, 32), True),
    ((2, 2), np.float32, (64, 16, 16, 32), False),  # strided: im2col
    ((1, 1), np.float16, (64, 16, 16, 32), False),  # half: im2col (exact float32 sums)
    ((1, 1), np.int32, (64, 16, 16, 32), False),
    ((1, 1), np.float32, (1, 8, 8, 32), False),     # too small to matter: exact im2col
    ((1, 1), np.float32, (8, 128, 128, 32), False),  # long transforms cost more than they save
])
def test_dispatch_rule(strides, dtype, shape, expect):
    geo = geometry(None, strides, (1, 1), "SAME")
    plan = conv_kernels.fft_plan(shape, (5, 5, shape[3], 64), geo, np.dtype(dtype))
    assert (plan is not None) == expect


def test_float32_accuracy_on_a_real_layer():
    """The CNN benchmark's second layer: float32 results within float32 rounding of the
    float64 reference (and no worse than im2col's)."""
    rng = np.random.default_rng(0)
    geo = geometry(None, (1, 1), (1, 1), "SAME")
    x = rng.standard_normal((8, 16, 16, 32)).astype(np.float32)
    f = rng.standard_normal((5, 5, 32, 64)).astype(np.float32)
    g = rng.standard_normal((8, 16, 16, 64)).astype(np.float32)
    plan = conv_fft.Plan((16, 16), (16, 16), (5, 5), (1, 1), (2, 2))
    x64, f64, g64 = (v.astype(np.float64) for v in (x, f, g))
    cases = [(conv_fft.conv2d(x, f, plan), conv_kernels.conv2d(x64, f64, geo)),
             (conv_fft.conv2d_backprop_input(g, f, plan),
              conv_kernels.conv2d_backprop_input(x.shape, f64, g64, geo)),
             (conv_fft.conv2d_backprop_filter(x, f.shape, g, plan),
              conv_kernels.conv2d_backprop_filter(x64, f.shape, g64, geo))]
    for got, want in cases:
        assert got.dtype == np.float32
        scale = np.abs(want).max()
        assert np.abs(got - want).max() <= 2e-6 * scale
