"""The grouped im2col (conv_grouped.py: G neighbouring outputs of a row per product row, for
few input channels) against the plain im2col (`MAX_COLS = 0`) and a float64 loop
reference: odd shapes, strides, padding, NaN/inf inputs (the forward product falls back to
the plain one; the filter gradient drops the entries an inf or NaN would spoil)."""

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from special_values import floats

from tensorflux.lib.numerics import conv2d, conv_direct, conv_grouped

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ops"))
from conv_refs import geometry, ref_backprop_filter, ref_conv  # noqa: E402

SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(autouse=True)
def _no_direct_kernels(monkeypatch):
    """The grouped im2col, never the direct kernels of conv_direct (tested on their own)."""
    monkeypatch.setattr(conv_direct, "MAX_CHANNELS", 0)


@st.composite
def cases(draw):
    k = (draw(st.integers(1, 5)), draw(st.integers(1, 5)))
    strides = (draw(st.integers(1, 2)), draw(st.sampled_from([1, 1, 1, 2])))
    dilations = (draw(st.integers(1, 2)), draw(st.sampled_from([1, 1, 1, 2])))
    padding = draw(st.sampled_from(["SAME", "VALID", ((1, 0), (2, 1))]))
    reach = (k[0] - 1) * dilations[0] + 1, (k[1] - 1) * dilations[1] + 1
    shape = (draw(st.integers(1, 3)), draw(st.integers(reach[0], 9)),
             draw(st.integers(reach[1], 12)), draw(st.integers(1, 4)))
    depth = draw(st.integers(1, 40))
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    return (geometry(None, strides, dilations, padding), shape, k, depth, dtype,
            draw(st.booleans()), draw(st.integers(0, 2 ** 31 - 1)))


def _both(monkeypatch, fn):
    """fn() with the grouped im2col allowed, then with it off."""
    grouped = fn()
    with monkeypatch.context() as patch:
        patch.setattr(conv_grouped, "MAX_COLS", 0)
        plain = fn()
    return grouped, plain


@SETTINGS
@given(cases())
def test_grouped_matches_plain_and_reference(case):
    geo, shape, k, depth, dtype, specials, seed = case
    rng = np.random.default_rng(seed)
    x = floats(rng, shape, dtype, specials)
    f = floats(rng, (*k, shape[3], depth), dtype, False)
    with pytest.MonkeyPatch.context() as monkeypatch:
        y, y_plain = _both(monkeypatch, lambda: conv2d.conv2d(x, f, geo))
        g = floats(rng, y.shape, dtype, specials and seed % 2 == 0)
        df, df_plain = _both(monkeypatch,
                             lambda: conv2d.conv2d_backprop_filter(x, f.shape, g, geo))
    tol = 1e-4 if dtype == np.float32 else 1e-10
    assert y.dtype == df.dtype == dtype and y.flags.c_contiguous
    np.testing.assert_allclose(y, y_plain, rtol=tol, atol=tol, equal_nan=True)
    np.testing.assert_allclose(df, df_plain, rtol=tol, atol=tol * 10, equal_nan=True)
    if not specials:
        x64, f64, g64 = (v.astype(np.float64) for v in (x, f, g))
        np.testing.assert_allclose(y, ref_conv(x64, f64, geo), rtol=tol, atol=tol)
        np.testing.assert_allclose(df, ref_backprop_filter(x64, f.shape, g64, geo),
                                   rtol=tol, atol=tol * 10)


@pytest.mark.parametrize("special", [np.nan, np.inf, -np.inf])
def test_nonfinite_input_stays_in_its_windows(special):
    """An inf/NaN input reaches only the outputs whose windows hold it (no 0 * inf from the
    grouped filter's zeros), and only the filter-gradient entries its products reach."""
    geo = geometry(None, (1, 1), (1, 1), "VALID")
    x = np.ones((1, 5, 12, 2), np.float32)
    x[0, 2, 0, 0] = special  # column 0: only output column 0 reads it
    f = np.ones((5, 5, 2, 8), np.float32)
    assert conv_grouped.width_group(2, (5, 5), 8, geo, 8, filter_gradient=True) == 4
    y = conv2d.conv2d(x, f, geo)
    assert not np.isfinite(y[0, 0, 0]).any() and np.isfinite(y[0, 0, 1:]).all()
    g = np.ones(y.shape, np.float32)
    df = conv2d.conv2d_backprop_filter(x, f.shape, g, geo)
    bad = ~np.isfinite(df)
    assert bad[2, 0, 0].all() and bad.sum() == 8  # offset (2, 0), channel 0 only


def test_grouped_filter_and_fold_are_adjoint():
    """<grouped_filter(w), v> == <w, fold(v)> for random w, v (exact in float64)."""
    rng = np.random.default_rng(3)
    for group in (2, 4):
        w = rng.standard_normal((3, 5, 2, 6))
        wide = conv_grouped.wide_filter(w, group)
        assert wide.shape == (3 * (5 + group - 1) * 2, group * 6)
        v = rng.standard_normal(wide.shape)
        folded = conv_grouped.fold_filter(v, (3, 5), 2, 6, group)
        np.testing.assert_allclose((wide * v).sum(), (w * folded).sum(), rtol=1e-12)


def test_group_choice():
    geo = geometry(None, (1, 1), (1, 1), "SAME")
    assert conv_grouped.width_group(3, (5, 5), 32, geo, 32) == 4  # the CNN benchmark's conv1
    assert conv_grouped.width_group(3, (5, 5), 64, geo, 24) == 2  # the CIFAR-10 tutorial's conv1
    assert conv_grouped.width_group(3, (5, 5), 64, geo, 23) == 1  # odd width
    assert conv_grouped.width_group(32, (5, 5), 64, geo, 16) == 1  # many channels
    strided = geometry(None, (1, 2), (1, 1), "SAME")
    assert conv_grouped.width_group(3, (5, 5), 32, strided, 32) == 1
    assert conv_grouped.width_group(3, (5, 5), 32, geo, 32, np.float16) == 1  # no BLAS
    assert conv_grouped.width_group(3, (3, 3), 32, geo, 32) == 2  # G = 4: 2x the flops
    assert conv_grouped.width_group(3, (3, 3), 32, geo, 32, filter_gradient=True) == 1
    assert conv_grouped.width_group(3, (5, 5), 32, geo, 32, filter_gradient=True) == 4
    assert conv_grouped.width_group(8, (3, 3), 32, geo, 32) == 1  # long window rows


def test_strided_inputs():
    """Non-contiguous inputs (an NCHW transpose, a channel slice) give the reference values;
    `patches` refuses rows whose pixels are not contiguous."""
    geo = geometry(None, (1, 1), (1, 1), "VALID")
    rng = np.random.default_rng(11)
    x = rng.standard_normal((2, 3, 6, 9)).transpose(0, 2, 3, 1)  # NCHW memory
    f = rng.standard_normal((3, 3, 3, 5))
    np.testing.assert_allclose(conv2d.conv2d(x, f, geo), ref_conv(x, f, geo), atol=1e-10)
    g = rng.standard_normal((2, 4, 7, 5))
    np.testing.assert_allclose(conv2d.conv2d_backprop_filter(x, f.shape, g, geo),
                               ref_backprop_filter(x, f.shape, g, geo), atol=1e-10)
    one = rng.standard_normal((2, 6, 9, 4))[..., 1:2]
    np.testing.assert_allclose(conv2d.conv2d(one, f[:, :, :1], geo),
                               ref_conv(one, f[:, :, :1], geo), atol=1e-10)
    with pytest.raises(ValueError, match="contiguous"):
        conv_grouped.patches(x, (3, 3), (4, 6), geo, 2)
