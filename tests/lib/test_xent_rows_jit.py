"""The whole-row compiled sparse softmax cross-entropy (lib/numerics/xent_jit.py
`softmax_rows`) against the NumPy reference path (TFX_JIT=0) on the same inputs: its own
exponential and a float64 row sum make it equal to float32 tolerance, with NaN and infinities
where the reference has them (odd shapes, NaN/inf/signed-zero logits and scales, the fused
scale and the folded bias gradient)."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from special_values import floats

from tensorflux.framework import errors
from tensorflux.lib.numerics import jit, xent_jit
from tensorflux.ops.nn import core as nn_core

pytestmark = [pytest.mark.jit_compile,
              pytest.mark.skipif(not jit.available(), reason="numba is not available")]
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[
    HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
TINY = np.finfo(np.float32).tiny


def _both(monkeypatch, features, labels, scale, bias_grad=False):
    monkeypatch.setenv("TFX_JIT", "0")
    with np.errstate(all="ignore"):
        want = nn_core.sparse_softmax_xent(features, labels, scale, bias_grad=bias_grad)
        unscaled = nn_core.sparse_softmax_xent(features, labels)[1]
    monkeypatch.setenv("TFX_JIT", "1")
    with np.errstate(all="ignore"):
        got = nn_core.sparse_softmax_xent(features, labels, scale, bias_grad=bias_grad)
    return got, want, unscaled


def _close(got, want, rtol, atol, skip=None):
    """NaN and infinities where `want` has them, finite values within `rtol`/`atol`."""
    assert got.dtype == want.dtype and got.shape == want.shape
    keep = np.ones(want.shape, bool) if skip is None else ~skip
    got, want = got[keep], want[keep]
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    finite = np.isfinite(want)
    np.testing.assert_array_equal(got[~finite & ~np.isnan(want)],
                                  want[~finite & ~np.isnan(want)])
    atol = np.broadcast_to(atol, keep.shape)[keep][finite]
    error = np.abs(got[finite].astype(np.float64) - want[finite])
    bound = atol + rtol * np.abs(want[finite].astype(np.float64))
    assert (error <= bound).all(), (error - bound).max()


@SETTINGS
@given(rows=st.integers(0, 7), classes=st.sampled_from([64, 65, 71, 130, 1000]),
       specials=st.booleans(), scale_kind=st.sampled_from(["none", "scalar", "column",
                                                            "specials"]),
       spread=st.sampled_from([1.0, 30.0, 300.0]), seed=st.integers(0, 2 ** 16))
def test_matches_numpy_reference(monkeypatch, rows, classes, specials, scale_kind, spread, seed):
    rng = np.random.default_rng(seed)
    features = floats(rng, (rows, classes), np.float32, specials, scale=spread)
    labels = rng.integers(0, classes, rows)
    scale = {"none": None, "scalar": np.asarray(1 / 7, np.float32),
             "column": rng.standard_normal((rows, 1)).astype(np.float32),
             "specials": floats(rng, (rows, 1), np.float32, True, every=2)}[scale_kind]
    assert rows == 0 or xent_jit.supports_rows(features, np.empty_like(features))
    (loss, backprop), (want_loss, want_backprop), unscaled = _both(
        monkeypatch, features, labels, scale)
    _close(loss, want_loss, rtol=2e-6, atol=2e-6)
    factor = np.ones((rows, 1), np.float32) if scale is None else \
        np.abs(np.broadcast_to(scale, (rows, 1)))
    # Exponentials below float32's smallest normal number are 0 here (subnormal in NumPy): only
    # an infinite scale makes that visible (inf * 0 is NaN, inf * subnormal is inf).
    subnormal = (np.abs(unscaled) < TINY) & (unscaled != 0) & np.isinf(factor)
    with np.errstate(invalid="ignore"):
        atol = np.where(np.isfinite(factor), factor * 3e-7, 0).astype(np.float32)
    _close(backprop, want_backprop, rtol=2e-6, atol=atol + TINY, skip=subnormal)


@SETTINGS
@given(rows=st.integers(1, 40), classes=st.sampled_from([64, 100, 999]),
       specials=st.booleans(), seed=st.integers(0, 2 ** 16))
def test_folded_bias_grad_matches_reference(monkeypatch, rows, classes, specials, seed):
    rng = np.random.default_rng(seed)
    features = floats(rng, (rows, classes), np.float32, specials, scale=10.0)
    labels = rng.integers(0, classes, rows)
    scale = np.asarray(1 / rows, np.float32)
    (loss, backprop, bias), (want_loss, want_backprop, want_bias), _ = _both(
        monkeypatch, features, labels, scale, bias_grad=True)
    _close(loss, want_loss, rtol=2e-6, atol=2e-6)
    _close(backprop, want_backprop, rtol=2e-6, atol=3e-7 / rows + TINY)
    _close(bias, want_bias, rtol=1e-5, atol=1e-6)
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(np.isnan(bias), np.isnan(backprop).any(axis=0))


def test_lm_sized_logits_span_blocks_and_match_float64(monkeypatch):
    rng = np.random.default_rng(3)
    features = (rng.standard_normal((640, 1000)) * 4).astype(np.float32)
    labels = rng.integers(0, 1000, 640)
    scale = np.asarray(1 / 640, np.float32)
    (loss, backprop, bias), (want_loss, want_backprop, want_bias), _ = _both(
        monkeypatch, features, labels, scale, bias_grad=True)
    x = features.astype(np.float64)
    p = np.exp(x - x.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    np.testing.assert_allclose(loss, -np.log(p[np.arange(640), labels]), rtol=1e-6, atol=1e-6)
    p[np.arange(640), labels] -= 1
    np.testing.assert_allclose(backprop, p / 640, rtol=2e-6, atol=1e-10)
    np.testing.assert_allclose(bias, p.sum(0) / 640, rtol=1e-4, atol=1e-9)
    _close(backprop, want_backprop, rtol=2e-6, atol=1e-10)


def test_extreme_rows():
    # A NaN or infinite maximum makes the row NaN (as the reference); -inf logits and logits
    # far below the maximum give probability 0; a row of equal logits is uniform.
    features = np.zeros((5, 64), np.float32)
    features[0, 3] = np.nan
    features[1, 5] = np.inf
    features[2, :] = -np.inf
    features[3, 1:] = -np.inf
    features[3, 2] = -200.0
    labels = np.array([0, 5, 1, 1, 63])
    backprop = np.empty_like(features)
    loss = np.empty(5, np.float32)
    sums = np.empty(64, np.float32)
    xent_jit.softmax_rows(features, labels, backprop, loss, None, sums)
    assert np.isnan(backprop[:3]).all() and np.isnan(loss[:3]).all()
    assert loss[3] == np.inf and backprop[3, 0] == 1.0 and (backprop[3, 2:] == 0).all()
    assert backprop[3, 1] == -1.0
    np.testing.assert_allclose(backprop[4, :63], 1 / 64, rtol=1e-7)
    assert backprop[4, 63] == np.float32(1 / 64) - 1
    np.testing.assert_allclose(loss[4], np.log(64), rtol=1e-7)
    assert np.isnan(sums).all()


def test_checks_and_supports():
    features = np.ones((2, 64), np.float32)
    with pytest.raises(ValueError, match="softmax_rows"):
        xent_jit.softmax_rows(features, np.zeros(3, np.int64), np.empty_like(features),
                              np.empty(2, np.float32), None)
    with pytest.raises(ValueError, match="column_sums"):
        xent_jit.softmax_rows(features, np.zeros(2, np.int64), np.empty_like(features),
                              np.empty(2, np.float32), None, np.empty(63, np.float32))
    assert xent_jit.supports_rows(features, np.empty_like(features))
    assert not xent_jit.supports_rows(features.astype(np.float64), np.empty((2, 64)))
    assert not xent_jit.supports_rows(np.ones((64, 64), np.float32)[:, ::2],
                                      np.empty((64, 32), np.float32))


def test_label_out_of_range_still_raises(monkeypatch):
    monkeypatch.setenv("TFX_JIT", "1")
    with pytest.raises(errors.InvalidArgumentError, match="outside the valid range"):
        nn_core.sparse_softmax_xent(np.zeros((2, 100), np.float32), np.array([0, 100]))


def _dense_both(monkeypatch, features, labels):
    monkeypatch.setenv("TFX_JIT", "0")
    with np.errstate(all="ignore"):
        want = nn_core._softmax_xent_kernel(features, labels)
    monkeypatch.setenv("TFX_JIT", "1")
    with np.errstate(all="ignore"):
        got = nn_core._softmax_xent_kernel(features, labels)
    return got, want


@SETTINGS
@given(rows=st.integers(0, 7), classes=st.sampled_from([64, 65, 130, 1000]),
       specials=st.booleans(), label_kind=st.sampled_from(["onehot", "soft", "specials"]),
       spread=st.sampled_from([1.0, 30.0]), seed=st.integers(0, 2 ** 16))
def test_dense_matches_numpy_reference(monkeypatch, rows, classes, specials, label_kind,
                                       spread, seed):
    rng = np.random.default_rng(seed)
    features = floats(rng, (rows, classes), np.float32, specials, scale=spread)
    if label_kind == "onehot":
        labels = np.eye(classes, dtype=np.float32)[rng.integers(0, classes, rows)]
    else:
        labels = rng.random((rows, classes)).astype(np.float32)
        labels /= np.maximum(labels.sum(1, keepdims=True), 1e-30)
        if label_kind == "specials":
            labels = np.where(rng.random(labels.shape) < 0.1, -labels, labels)
            if labels.size:
                labels.reshape(-1)[rng.integers(0, labels.size)] = rng.choice(
                    [np.nan, np.inf, -np.inf])
    assert rows == 0 or xent_jit.supports_dense(features, labels)
    (loss, backprop), (want_loss, want_backprop) = _dense_both(monkeypatch, features, labels)
    # The loss sums labels * log-probabilities: its tolerance scales with the terms' size.
    with np.errstate(all="ignore"):
        shifted = features - features.max(1, keepdims=True) if rows else features
        terms = np.nansum(np.abs(labels * np.where(np.isfinite(shifted), shifted, 0)), axis=1)
    _close(loss, want_loss, rtol=2e-6, atol=2e-6 + 2e-6 * terms)
    _close(backprop, want_backprop, rtol=2e-6, atol=2e-7 + TINY)


def test_dense_falls_back_for_other_dtypes_and_broadcasts(monkeypatch):
    monkeypatch.setenv("TFX_JIT", "1")
    rng = np.random.default_rng(1)
    features = rng.standard_normal((3, 100))
    labels = np.eye(100)[[0, 5, 99]]
    assert not xent_jit.supports_dense(features, labels)
    assert not xent_jit.supports_dense(features.astype(np.float32),
                                       labels[:1].astype(np.float32))
    loss, backprop = nn_core._softmax_xent_kernel(features, labels)
    p = np.exp(features - features.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    np.testing.assert_allclose(loss, -np.log(p[[0, 1, 2], [0, 5, 99]]), rtol=1e-12)
    np.testing.assert_allclose(backprop, p - labels, rtol=1e-12, atol=1e-15)
    x32 = features.astype(np.float32)
    loss32, backprop32 = nn_core._softmax_xent_kernel(x32, labels.astype(np.float32))
    np.testing.assert_allclose(loss32, loss, rtol=1e-5)
    np.testing.assert_allclose(backprop32, backprop, rtol=1e-5, atol=1e-7)
