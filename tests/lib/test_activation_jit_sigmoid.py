"""The compiled Sigmoid, SigmoidGrad and TanhGrad (lib/numerics/activation_jit.py) against the
NumPy reference kernels of ops/math/unary.py: bit-identical on odd shapes with NaN, inf and
signed zeros, on views, and through the ops with TFX_JIT on and off."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tensorflux as tf
from tensorflux.lib.numerics import activation_jit, jit
from tensorflux.ops.math import unary

pytestmark = [pytest.mark.jit_compile,
              pytest.mark.skipif(not jit.available(), reason="numba is not available")]
SETTINGS = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def arrays(draw, count):
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=5))
    values = st.floats(width=32 if dtype == np.float32 else 64, allow_nan=True,
                       allow_infinity=True)
    return [draw(hnp.arrays(dtype, shape, elements=values)) for _ in range(count)]


def _same_bits(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got.view(f"u{got.itemsize}"), want.view(f"u{want.itemsize}"))


@SETTINGS
@given(arrays(1))
def test_sigmoid_is_bit_identical_to_reference(case):
    (x,) = case
    with np.errstate(all="ignore"):
        want = unary.sigmoid_reference(x)
    _same_bits(activation_jit.sigmoid(x), want)


@SETTINGS
@given(arrays(2))
def test_sigmoid_and_tanh_gradients_are_bit_identical_to_reference(case):
    y, dy = case
    with np.errstate(all="ignore"):
        sigmoid_want = dy * y * (1 - y)
        tanh_want = dy * (1 - y * y)
    _same_bits(activation_jit.sigmoid_grad(y, dy), sigmoid_want)
    _same_bits(activation_jit.tanh_grad(y, dy), tanh_want)


def test_sigmoid_known_values_and_range_ends():
    x = np.array([0.0, -0.0, 1.0, -1.0, 80.0, -80.0, np.inf, -np.inf, np.nan], np.float32)
    got = activation_jit.sigmoid(x)
    want = 1 / (1 + np.exp(-x.astype(np.float64)))
    np.testing.assert_allclose(got[:8], want[:8], rtol=1e-6)
    assert got[6] == 1.0 and got[7] == 0.0 and np.isnan(got[8])


def test_views_and_shape_checks():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((8, 6)).astype(np.float32).T[:, ::2]
    _same_bits(activation_jit.sigmoid(x), unary.sigmoid_reference(x))
    y = rng.uniform(-1, 1, (6, 8))[:, 1::2]
    dy = rng.standard_normal((8, 6)).T[:, ::2]
    _same_bits(activation_jit.tanh_grad(y, dy), dy * (1 - y * y))
    with pytest.raises(ValueError, match="SigmoidGrad"):
        activation_jit.sigmoid_grad(np.ones(3), np.ones(4))
    assert not activation_jit.supports_float(np.ones(3, np.float16))


@pytest.mark.parametrize("flag", ["1", "0"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_ops_with_jit_on_and_off(monkeypatch, flag, dtype):
    monkeypatch.setenv("TFX_JIT", flag)
    x = np.array([[-2.0, 3.0, 0.0], [5.0, -1.0, np.inf]], dtype)
    dy = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype)
    with tf.Graph().as_default():
        t = tf.constant(x)
        y = tf.sigmoid(t)
        grads = tf.gradients([y, tf.tanh(t)], t, [tf.constant(dy), tf.constant(dy)])[0]
        with tf.Session() as sess:
            got, grad = sess.run([y, grads])
    assert got.dtype == dtype and grad.dtype == dtype
    with np.errstate(all="ignore"):
        s = unary.sigmoid_reference(x)
        th = np.tanh(x)
        want = dy * s * (1 - s) + dy * (1 - th * th)
    np.testing.assert_array_equal(got, s)
    np.testing.assert_allclose(grad, want, rtol=1e-3 if dtype == np.float16 else 1e-6)
