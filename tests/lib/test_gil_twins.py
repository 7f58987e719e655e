"""Small-input twins that keep the GIL (jit.holds_gil): the same values as the `nogil` kernels
on the same inputs (both paths forced through HOLD_GIL_ELEMENTS), and compiled as they say."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from special_values import floats

from tensorflux.lib.numerics import activation_jit, epilogue_jit, jit, update_jit

pytestmark = [pytest.mark.jit_compile,
              pytest.mark.skipif(not jit.available(), reason="numba is not available")]
SETTINGS = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
CASES = st.tuples(st.sampled_from([(1,), (7, 3), (2, 5, 4, 6), (0, 3), (4096,)]),
                  st.sampled_from([np.float32, np.float64]), st.integers(0, 2 ** 31 - 1))


def _both(run):
    """`run()` with every kernel on its GIL-holding twin, then on the `nogil` kernel."""
    results = []
    for limit in (1 << 62, 0):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(jit, "HOLD_GIL_ELEMENTS", limit)
            results.append(run())
    return results


def _bits(a):
    return a.view(f"u{a.itemsize}")


@SETTINGS
@given(CASES)
def test_update_twins_equal_the_kernels(case):
    shape, dtype, seed = case
    rng = np.random.default_rng(seed)
    var, accum, m, v, grad = [floats(rng, shape, dtype, True) for _ in range(5)]
    v = np.abs(v)

    def run():
        bufs = [b.copy() for b in (var, accum, m, v)]
        with np.errstate(all="ignore"):
            update_jit.gradient_descent(bufs[0], 0.1, grad)
            update_jit.momentum(bufs[0], bufs[1], 0.01, grad, 0.9, seed % 2 == 0)
            update_jit.adam(bufs[0], bufs[2], bufs[3], 0.001, 0.9, 0.999, 1e-8, grad,
                            seed % 3 == 0)
        return bufs

    held, free = _both(run)
    for a, b in zip(held, free):
        np.testing.assert_array_equal(_bits(a), _bits(b))


@SETTINGS
@given(CASES)
def test_activation_grad_twins_equal_the_kernels(case):
    shape, dtype, seed = case
    rng = np.random.default_rng(seed)
    g, f = floats(rng, shape, dtype, True), floats(rng, shape, dtype, True)

    def run():
        with np.errstate(all="ignore"):
            return [activation_jit.relu_grad(g, f), activation_jit.sigmoid_grad(f, g),
                    activation_jit.tanh_grad(f, g)]

    held, free = _both(run)
    for a, b in zip(held, free):
        np.testing.assert_array_equal(_bits(a), _bits(b))
    want = g * (f > 0).astype(dtype)
    np.testing.assert_array_equal(held[0], want)


@SETTINGS
@given(CASES, st.sampled_from([None, "Relu", "Relu6"]))
def test_bias_activation_twin_equals_the_kernel(case, activation):
    shape, dtype, seed = case
    rng = np.random.default_rng(seed)
    y = floats(rng, shape, dtype, True)
    bias = floats(rng, shape[-1:], dtype, seed % 2 == 0)

    def run():
        out = y.copy()
        with np.errstate(all="ignore"):
            epilogue_jit.bias_activation(out, bias, activation)
        return out

    held, free = _both(run)
    np.testing.assert_array_equal(_bits(held), _bits(free))


def test_twins_keep_the_gil_and_kernels_release_it():
    x = np.ones(8, np.float32)
    activation_jit.relu_grad(x, x)  # compiles the module's kernels
    update_jit.gradient_descent(x.copy(), 0.5, x)
    epilogue_jit.bias_activation(x.reshape(2, 4).copy(), np.ones(4, np.float32))
    for module, name in ((activation_jit, "_relu_grad"), (update_jit, "_gradient_descent"),
                         (update_jit, "_momentum"), (update_jit, "_adam"),
                         (epilogue_jit, "_bias_activation")):
        assert getattr(module, name).targetoptions["nogil"] is True
        assert getattr(module, name + "_held").targetoptions["nogil"] is False
    assert jit.holds_gil(jit.HOLD_GIL_ELEMENTS - 1) and not jit.holds_gil(jit.HOLD_GIL_ELEMENTS)
