"""Compiled optimizer updates (lib/numerics/update_jit.py) against the NumPy kernels of
ops/state/training_ops.py on the same inputs: bit-identical, NaN/inf included."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from special_values import floats

from tensorflux.lib.numerics import jit, update_jit
from tensorflux.ops.state import training_ops

pytestmark = [pytest.mark.jit_compile,
              pytest.mark.skipif(not jit.available(), reason="numba is not available")]
SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


class _Ref:
    """What a kernel gets for a `Ref(T)` input: an object whose read() is the live buffer."""

    def __init__(self, buf):
        self.buf = buf

    def read(self):
        return self.buf


def _run_both(monkeypatch, kernel, n_refs, arrays, scalars, **attrs):
    """Runs `kernel` compiled and on the NumPy path; returns both sets of buffers."""
    results = []
    for compiled in (True, False):
        if not compiled:
            monkeypatch.setattr(update_jit, "supports", lambda *a: False)
        bufs = [a.copy() for a in arrays]
        refs = [_Ref(b) for b in bufs[:n_refs]]
        kernel(*refs, *scalars(bufs[n_refs:]), **attrs)
        results.append(bufs[:n_refs])
    monkeypatch.undo()
    return results


cases = st.tuples(st.sampled_from([(4096,), (64, 65), (3, 40, 41)]),
                  st.sampled_from([np.float32, np.float64]), st.booleans(),
                  st.integers(0, 2 ** 31 - 1))


@SETTINGS
@given(cases)
def test_gradient_descent_bit_identical(case):
    shape, dtype, specials, seed = case
    rng = np.random.default_rng(seed)
    var, delta = [floats(rng, shape, dtype, specials, scale=2.0, every=50) for _ in range(2)]
    with pytest.MonkeyPatch.context() as mp:
        compiled, reference = _run_both(
            mp, training_ops._apply_gradient_descent, 1, [var, delta],
            lambda rest: (np.asarray(0.1, dtype), rest[0]))
    np.testing.assert_array_equal(compiled[0], reference[0])
    assert not np.array_equal(compiled[0], var, equal_nan=True)


@SETTINGS
@given(cases, st.booleans())
def test_momentum_bit_identical(case, nesterov):
    shape, dtype, specials, seed = case
    rng = np.random.default_rng(seed)
    arrays = [floats(rng, shape, dtype, specials, scale=2.0, every=50) for _ in range(3)]
    with pytest.MonkeyPatch.context() as mp:
        compiled, reference = _run_both(
            mp, training_ops._apply_momentum, 2, arrays,
            lambda rest: (np.asarray(0.05, dtype), rest[0], np.asarray(0.9, dtype)),
            use_nesterov=nesterov)
    for got, want in zip(compiled, reference):
        np.testing.assert_array_equal(got, want)


@SETTINGS
@given(cases, st.booleans())
def test_adam_bit_identical(case, nesterov):
    shape, dtype, specials, seed = case
    rng = np.random.default_rng(seed)
    var = floats(rng, shape, dtype, specials, scale=2.0, every=50)
    m = floats(rng, shape, dtype, False, scale=2.0, every=50)
    v = np.abs(floats(rng, shape, dtype, False, scale=2.0, every=50))
    grad = floats(rng, shape, dtype, specials, scale=2.0, every=50)
    c = lambda x: np.asarray(x, dtype)  # noqa: E731
    with pytest.MonkeyPatch.context() as mp:
        compiled, reference = _run_both(
            mp, training_ops._apply_adam, 3, [var, m, v, grad],
            lambda rest: (c(0.9 ** 3), c(0.999 ** 3), c(0.001), c(0.9), c(0.999), c(1e-8),
                          rest[0]),
            use_nesterov=nesterov)
    for got, want in zip(compiled, reference):
        np.testing.assert_array_equal(got, want)


def test_small_or_strided_variables_stay_on_numpy():
    big = np.zeros((128, 64), np.float32)
    assert update_jit.supports(big, np.zeros_like(big))
    assert not update_jit.supports(np.zeros(10, np.float32))
    assert not update_jit.supports(big[:, ::2].copy().T, np.zeros((32, 128), np.float32))
    assert not update_jit.supports(big, np.zeros_like(big, dtype=np.float64))
    assert not update_jit.supports(big.astype(np.float16))


def test_training_matches_with_and_without_jit(monkeypatch):
    """A few Adam and momentum steps on a 100x100 kernel, compiled vs TFX_JIT=0: equal."""
    import tensorflux as tf

    def train(jit_on):
        monkeypatch.setenv("TFX_JIT", "1" if jit_on else "0")
        with tf.Graph().as_default(), tf.Session() as sess:
            rng = np.random.RandomState(0)
            x = tf.constant(rng.rand(8, 100).astype(np.float32))
            w = tf.Variable(rng.rand(100, 100).astype(np.float32))
            u = tf.Variable(rng.rand(100, 100).astype(np.float32))
            loss = tf.reduce_sum(tf.square(tf.matmul(tf.matmul(x, w), u)))
            ops = [tf.train.AdamOptimizer(0.01).minimize(loss, var_list=[w]),
                   tf.train.MomentumOptimizer(0.001, 0.9, use_nesterov=True).minimize(
                       loss, var_list=[u])]
            sess.run(tf.global_variables_initializer())
            for _ in range(3):
                sess.run(ops)
            return sess.run([w, u])

    for got, want in zip(train(True), train(False)):
        np.testing.assert_array_equal(got, want)
