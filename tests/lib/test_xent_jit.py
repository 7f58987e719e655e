"""The compiled last pass of the sparse softmax cross-entropy (lib/numerics/xent_jit.py)
against the NumPy reference path (TFX_JIT=0) on the same inputs: the same bits (NaN where the
reference has NaN) on odd shapes, NaN/inf/signed zeros, with and without the fused scale.

The whole-row float32 kernel (`softmax_rows`, not bit-identical) is switched off here; its tests
are in test_xent_rows_jit.py."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from special_values import floats

import tensorflux as tf
from tensorflux.lib.numerics import jit, xent_jit
from tensorflux.ops.nn import core as nn_core

pytestmark = [pytest.mark.jit_compile,
              pytest.mark.skipif(not jit.available(), reason="numba is not available")]
SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[
    HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


@pytest.fixture(autouse=True)
def _last_pass_only(monkeypatch):
    monkeypatch.setattr(xent_jit, "FUSED_ROWS", False)


def _same(got, want):
    """Equal bits, except that any NaN matches any NaN (payloads are the hardware's)."""
    assert got.dtype == want.dtype and got.shape == want.shape
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)
    bits = f"u{got.itemsize}"
    np.testing.assert_array_equal(got[~nan].view(bits), want[~nan].view(bits))


def _both(monkeypatch, features, labels, scale):
    monkeypatch.setenv("TFX_JIT", "0")
    with np.errstate(all="ignore"):
        want = nn_core.sparse_softmax_xent(features, labels, scale)
    monkeypatch.setenv("TFX_JIT", "1")
    with np.errstate(all="ignore"):
        got = nn_core.sparse_softmax_xent(features, labels, scale)
    return got, want


@SETTINGS
@given(rows=st.integers(0, 7), classes=st.sampled_from([1, 3, 63, 64, 65, 130, 1000]),
       dtype=st.sampled_from([np.float32, np.float64]), specials=st.booleans(),
       scale_kind=st.sampled_from(["none", "scalar", "column", "specials"]),
       seed=st.integers(0, 2 ** 16))
def test_matches_numpy_reference(monkeypatch, rows, classes, dtype, specials, scale_kind, seed):
    rng = np.random.default_rng(seed)
    features = floats(rng, (rows, classes), dtype, specials, scale=30.0)
    labels = rng.integers(0, classes, rows)
    scale = {"none": None, "scalar": np.asarray(1 / 7, dtype),
             "column": rng.standard_normal((rows, 1)).astype(dtype),
             "specials": floats(rng, (rows, 1), dtype, True, every=2)}[scale_kind]
    (loss, backprop), (want_loss, want_backprop) = _both(monkeypatch, features, labels, scale)
    _same(loss, want_loss)
    _same(backprop, want_backprop)


def test_many_blocks_and_known_values(monkeypatch):
    # 640 x 10000 spans several row blocks (and the intra-op split when it is on).
    rng = np.random.default_rng(3)
    features = rng.standard_normal((640, 1000)).astype(np.float32)
    labels = rng.integers(0, 1000, 640)
    scale = np.asarray(1 / 640, np.float32)
    (loss, backprop), (want_loss, want_backprop) = _both(monkeypatch, features, labels, scale)
    _same(loss, want_loss)
    _same(backprop, want_backprop)
    x = features.astype(np.float64)
    p = np.exp(x - x.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    np.testing.assert_allclose(loss, -np.log(p[np.arange(640), labels]), rtol=1e-5)
    p[np.arange(640), labels] -= 1
    np.testing.assert_allclose(backprop, p / 640, rtol=1e-4, atol=1e-9)


def test_normalise_rows_checks_and_supports():
    exps = np.ones((2, 64), np.float32)
    with pytest.raises(ValueError, match="normalise_rows"):
        xent_jit.normalise_rows(exps, np.ones(3, np.float32), np.zeros(2, np.int64), None)
    xent_jit.normalise_rows(exps, np.full(2, 4, np.float32), np.array([0, 63]),
                            np.array([2, 1], np.float32))
    assert exps[0, 0] == 2 * (0.25 - 1) and exps[0, 1] == 0.5 and exps[1, 63] == -0.75
    assert not xent_jit.supports(np.ones((2, 63), np.float32))
    assert not xent_jit.supports(np.ones((2, 64), np.float16))
    assert not xent_jit.supports(np.ones((64, 2), np.float32).T)


@pytest.mark.parametrize("flag", ["1", "0"])
def test_op_and_gradient_with_jit_on_and_off(monkeypatch, flag):
    monkeypatch.setenv("TFX_JIT", flag)
    rng = np.random.default_rng(5)
    logits = rng.standard_normal((6, 100)).astype(np.float32)
    labels = rng.integers(0, 100, 6)
    with tf.Graph().as_default():
        x = tf.constant(logits)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=tf.constant(labels), logits=x))
        grad = tf.gradients(loss, x)[0]
        with tf.Session() as sess:
            got_loss, got_grad = sess.run([loss, grad])
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    np.testing.assert_allclose(got_loss, -np.log(p[np.arange(6), labels]).mean(), rtol=1e-5)
    p[np.arange(6), labels] -= 1
    np.testing.assert_allclose(got_grad, p / 6, rtol=1e-4, atol=1e-8)
