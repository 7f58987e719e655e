"""Weight gradients applied inside the product's register tiles (lib/numerics/gemm_update_jit.py,
the `_FusedMatMulApplyGradientDescent` kernel) against NumPy's `var - alpha * (a.T @ b)` on the
same inputs: within float32 tolerance (the sums run in example order), NaN/inf where NumPy has
them; column ranges and thread splits change no bits."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tensorflux as tf
from tensorflux.lib.numerics import gemm_update_jit, intra_op, jit

pytestmark = [pytest.mark.jit_compile,
              pytest.mark.skipif(not (jit.available() and gemm_update_jit.conv_direct
                                      .wide_vectors()), reason="numba or AVX-512 missing")]
SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _values(rng, shape, specials):
    x = rng.standard_normal(shape).astype(np.float32)
    if specials and x.size:
        flat = x.reshape(-1)
        picks = rng.integers(0, flat.size, size=max(1, flat.size // 200))
        flat[picks] = rng.choice([np.nan, np.inf, -np.inf, 0.0, -0.0], size=picks.size)
    return x


def _reference(var, alpha, a, b):
    with np.errstate(all="ignore"):
        return var - np.float32(alpha) * (a.T @ b)


def _check(got, want, a, b, alpha):
    # |error| of a float32 sum over k terms: ~k ulps of the sum of |terms|.
    scale = np.float32(abs(alpha)) * (np.abs(a).T @ np.abs(b))
    with np.errstate(all="ignore"):
        bound = 1e-6 * (1 + np.abs(want)) + 4e-7 * a.shape[0] * np.nan_to_num(scale)
        close = (np.abs(got - want) <= bound) | (got == want)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    assert close[~np.isnan(want)].all()


@SETTINGS
@given(st.integers(1, gemm_update_jit.MAX_K), st.integers(1, 150), st.integers(1, 20),
       st.floats(-2, 2, width=32), st.booleans(), st.integers(0, 2 ** 31 - 1))
def test_update_panels_matches_numpy(k, m, vectors, alpha, specials, seed):
    rng = np.random.default_rng(seed)
    n = 16 * vectors
    a, b = _values(rng, (k, m), specials), _values(rng, (k, n), specials)
    var = _values(rng, (m, n), False)
    want = _reference(var, alpha, a, b)
    got = var.copy()
    gemm_update_jit.update_panels(got, alpha, a, b, 0, n)
    _check(got, want, a, b, alpha)


def test_column_ranges_update_only_their_columns_with_the_same_bits():
    rng = np.random.default_rng(1)
    a, b = _values(rng, (128, 70), False), _values(rng, (128, 208), False)
    var = _values(rng, (70, 208), False)
    whole = var.copy()
    gemm_update_jit.update_panels(whole, 0.01, a, b, 0, 208)
    parts = var.copy()
    for lo, hi in ((128, 208), (0, 64), (64, 128)):
        gemm_update_jit.update_panels(parts, 0.01, a, b, lo, hi)
    np.testing.assert_array_equal(parts, whole)
    left = var.copy()
    gemm_update_jit.update_panels(left, 0.01, a, b, 0, 64)
    np.testing.assert_array_equal(left[:, 64:], var[:, 64:])
    np.testing.assert_array_equal(left[:, :64], whole[:, :64])


def test_supports_only_float32_contiguous_short_reductions_of_16_column_multiples(monkeypatch):
    rng = np.random.default_rng(2)
    a, b = _values(rng, (128, 784), False), _values(rng, (128, 1024), False)
    var = np.zeros((784, 1024), np.float32)
    assert gemm_update_jit.supports(var, 0.01, a, b)
    long_a, long_b = np.zeros((129, 784), np.float32), np.zeros((129, 1024), np.float32)
    assert not gemm_update_jit.supports(var, 0.01, long_a, long_b)  # k > MAX_K
    assert not gemm_update_jit.supports(var[:, :1000].copy(), 0.01, a, b[:, :1000].copy())
    assert not gemm_update_jit.supports(var.astype(np.float64), 0.01, a.astype(np.float64),
                                        b.astype(np.float64))
    assert not gemm_update_jit.supports(var, 0.01, a, b[:, ::-1])  # a view
    assert not gemm_update_jit.supports(var, np.ones(2, np.float32), a, b)
    assert not gemm_update_jit.supports(var[:8, :16].copy(), 0.01, a[:, :8].copy(),
                                        b[:, :16].copy())  # small: BLAS
    square = np.zeros((128, 1024), np.float32)  # var [128, 1024] -= a^T @ b
    in_var = square.reshape(1024, 128)[:128]  # a [128, 128] inside var's memory
    assert in_var.flags.c_contiguous and gemm_update_jit.supports(square, 0.01, in_var.copy(), b)
    assert not gemm_update_jit.supports(square, 0.01, in_var, b)
    assert not gemm_update_jit.supports(square, 0.01, a[:, :128].copy(), square)  # b is var
    monkeypatch.setenv("TFX_JIT", "0")
    assert not gemm_update_jit.supports(var, 0.01, a, b)


def _mlp(batch=128):
    rng = np.random.RandomState(4)
    x = tf.placeholder(tf.float32, [batch, 100])
    y = tf.placeholder(tf.int64, [batch])
    h = tf.layers.dense(x, 1024, activation=tf.nn.relu)
    logits = tf.layers.dense(h, 10)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y,
                                                                         logits=logits))
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    feed = {x: rng.randn(batch, 100).astype(np.float32), y: rng.randint(0, 10, batch)}
    return train, feed


def _train(monkeypatch, fused, splits):
    from tensorflux.runtime import remapper

    monkeypatch.setattr(remapper, "FUSE_GRADIENT_UPDATES", fused)
    # The thread budget's split, its parts inline (intra_op's threads are tested there).
    monkeypatch.setattr(intra_op, "splits", lambda: splits)
    monkeypatch.setattr(intra_op, "elementwise_splits", lambda: 1)
    monkeypatch.setattr(intra_op, "run_parts", lambda fn, parts: [fn(i) for i in range(parts)])
    with tf.Graph().as_default():
        tf.set_random_seed(0)
        train, feed = _mlp()
        variables = tf.trainable_variables()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(3):
                sess.run(train, feed)
            return sess.run(variables)


def test_training_steps_match_the_blas_path_and_splits_change_no_bits(monkeypatch):
    calls = []
    real = gemm_update_jit.update_panels
    monkeypatch.setattr(gemm_update_jit, "update_panels",
                        lambda var, *args: calls.append(args[-2:]) or real(var, *args))
    one = _train(monkeypatch, True, 1)
    assert calls == [(0, 1024)] * 3  # the [100, 1024] kernel, once a step
    calls.clear()
    two = _train(monkeypatch, True, 2)
    assert sorted(set(calls)) == [(0, 256), (256, 512), (512, 768), (768, 1024)]
    assert len(calls) == 3 * 4  # 2 threads x 2 column ranges, each step
    calls.clear()
    blas = _train(monkeypatch, False, 1)
    assert not calls
    for a, b, c in zip(one, two, blas):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_allclose(a, c, rtol=1e-4, atol=1e-5)
