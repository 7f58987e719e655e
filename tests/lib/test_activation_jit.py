"""The compiled ReluGrad (lib/numerics/activation_jit.py) against the NumPy reference kernel of
ops/nn/activations.py: bit-identical on odd shapes with NaN, inf and signed zeros; and the op's
choice of kernel (TFX_JIT=0 falls back, integer types always take the reference)."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tensorflux as tf
from tensorflux.lib.numerics import activation_jit, jit
from tensorflux.ops.nn import activations

pytestmark = [pytest.mark.jit_compile,
              pytest.mark.skipif(not jit.available(), reason="numba is not available")]


@st.composite
def grad_cases(draw):
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=5))
    values = st.floats(width=32 if dtype == np.float32 else 64, allow_nan=True,
                       allow_infinity=True)
    return (draw(hnp.arrays(dtype, shape, elements=values)),
            draw(hnp.arrays(dtype, shape, elements=values)))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(grad_cases())
def test_relu_grad_is_bit_identical_to_reference(case):
    g, f = case
    with np.errstate(all="ignore"):
        want = activations._relu_grad_kernel(g, f)
    got = activation_jit.relu_grad(g, f)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got.view(f"u{g.itemsize}"), want.view(f"u{g.itemsize}"))


def test_relu_grad_known_values():
    g = np.array([1.5, -2.0, np.inf, np.nan, -3.0, 4.0], np.float32)
    f = np.array([0.1, 0.0, -1.0, 2.0, -0.0, np.nan], np.float32)
    got = activation_jit.relu_grad(g, f)
    np.testing.assert_array_equal(got, [1.5, -0.0, np.nan, np.nan, -0.0, 0.0])
    assert np.signbit(got[1]) and np.signbit(got[4]) and not np.signbit(got[5])


def test_relu_grad_of_non_contiguous_views():
    rng = np.random.default_rng(0)
    g = rng.standard_normal((6, 8))[:, ::2]
    f = rng.standard_normal((8, 6)).T[:, 1::2]
    np.testing.assert_array_equal(activation_jit.relu_grad(g, f), g * (f > 0))


def test_shapes_must_agree():
    with pytest.raises(ValueError, match="ReluGrad"):
        activation_jit.relu_grad(np.ones(3), np.ones(4))
    assert not activation_jit.supports(np.ones(3), np.ones((1, 3)))
    assert not activation_jit.supports(np.ones(3, np.int32), np.ones(3, np.int32))


@pytest.mark.parametrize("flag", ["1", "0"])
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_op_gradient_of_relu(monkeypatch, flag, dtype):
    monkeypatch.setenv("TFX_JIT", flag)
    x = np.array([[-2, 3, 0], [5, -1, 7]], dtype)
    dy = np.array([[1, 2, 3], [4, 5, 6]], dtype)
    with tf.Graph().as_default():
        grad = activations.ReluGrad(tf.constant(dy), tf.constant(x))
        with tf.Session() as sess:
            value = sess.run(grad)
    assert value.dtype == dtype
    np.testing.assert_array_equal(value, [[0, 2, 0], [4, 0, 6]])
