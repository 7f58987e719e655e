"""The compiled LRN and LRNGrad (lib/numerics/lrn_jit.py) against the NumPy reference kernels of
ops/nn/normalization.py on the same inputs (odd shapes, radii wider than the depth, NaN/inf),
the gradient against finite differences, and the op's choice of kernel (TFX_JIT=0 falls back).

The window sums are computed as in the reference, so only the power `norm ** -beta` may differ
(NumPy's routine against libm's, or float64 square roots): the tolerances are a few ulps of the
terms that hold it.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from special_values import floats

import tensorflux as tf
from tensorflux.lib.numerics import jit, lrn_jit
from tensorflux.ops.nn import normalization

pytestmark = [pytest.mark.jit_compile,
              pytest.mark.skipif(not jit.available(), reason="numba is not available")]
SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


@st.composite
def lrn_cases(draw):
    shape = (draw(st.integers(1, 3)), draw(st.integers(1, 4)), draw(st.integers(1, 4)),
             draw(st.integers(1, 20)))
    attrs = {"depth_radius": draw(st.integers(0, 24)),
             "bias": draw(st.sampled_from([1.0, 2.5, 0.0, -0.0, 1e-3, -1.0])),
             "alpha": draw(st.sampled_from([0.001 / 9.0, 1e-4, 0.3, 1.0, 0.0])),
             "beta": draw(st.sampled_from([0.75, 0.5, 1.0, 0.3, 2.0]))}
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    return shape, attrs, dtype, draw(st.booleans()), draw(st.integers(0, 2 ** 31 - 1))


def _power_term(x, factor, attrs):
    """|factor * norm ** -beta| from the reference's norm: the term the power's rounding moves."""
    with np.errstate(all="ignore"):
        norm = normalization._lrn_norm(x, attrs["depth_radius"], attrs["bias"], attrs["alpha"])
        return np.abs(factor.astype(np.float64) * np.power(norm.astype(np.float64),
                                                           -attrs["beta"]))


def _assert_close(got, want, term):
    eps = np.finfo(want.dtype).eps
    bad = ~np.isclose(got, want, rtol=2 * eps, atol=0, equal_nan=True)
    with np.errstate(all="ignore"):
        bad &= ~(np.abs(got.astype(np.float64) - want) <= 4 * eps * term)
    assert not bad.any(), (got[bad][:5], want[bad][:5])


@SETTINGS
@given(lrn_cases())
def test_lrn_matches_reference(case):
    shape, attrs, dtype, specials, seed = case
    x = floats(np.random.default_rng(seed), shape, dtype, specials, every=7)
    got = lrn_jit.lrn(x, **attrs)
    with np.errstate(all="ignore"):
        want = normalization._lrn_kernel(x, **attrs)
    assert got.dtype == want.dtype and got.shape == want.shape
    _assert_close(got, want, _power_term(x, x, attrs))


@SETTINGS
@given(lrn_cases())
def test_lrn_grad_matches_reference(case):
    shape, attrs, dtype, specials, seed = case
    rng = np.random.default_rng(seed)
    x = floats(rng, shape, dtype, specials, every=7)
    dy = floats(rng, shape, dtype, specials and seed % 2 == 0, every=7)
    with np.errstate(all="ignore"):
        y = normalization._lrn_kernel(x, **attrs)
        want = normalization._lrn_grad_kernel(dy, x, y, **attrs)
    got = lrn_jit.lrn_grad(dy, x, y, **attrs)
    assert got.dtype == want.dtype and got.shape == want.shape
    _assert_close(got, want, _power_term(x, dy, attrs))


def test_tutorial_shape_values_are_close_to_float64():
    """float32 with the tutorial's attrs: within a few ulps of the same LRN in float64."""
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((4, 3, 3, 64)) * 10).astype(np.float32)
    attrs = {"depth_radius": 4, "bias": 1.0, "alpha": 0.001 / 9.0, "beta": 0.75}
    exact = normalization._lrn_kernel(x.astype(np.float64), **attrs)
    np.testing.assert_allclose(lrn_jit.lrn(x, **attrs), exact, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("radius", [0, 1, 3, 9])
@pytest.mark.parametrize("beta", [0.75, 0.4])
def test_lrn_grad_matches_finite_differences(radius, beta):
    rng = np.random.default_rng(radius)
    x = rng.standard_normal((2, 2, 1, 7))
    dy = rng.standard_normal(x.shape)
    attrs = {"depth_radius": radius, "bias": 0.8, "alpha": 0.6, "beta": beta}
    got = lrn_jit.lrn_grad(dy, x, lrn_jit.lrn(x, **attrs), **attrs)
    numeric = np.zeros_like(x)
    step = 1e-6
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += step
        down[i] -= step
        numeric[i] = np.sum(dy * (lrn_jit.lrn(up, **attrs) - lrn_jit.lrn(down, **attrs)))
    np.testing.assert_allclose(got, numeric / (2 * step), rtol=1e-6, atol=1e-8)


def test_grad_shapes_must_agree():
    x = np.ones((1, 1, 2, 3), np.float32)
    with pytest.raises(ValueError, match="LRNGrad"):
        lrn_jit.lrn_grad(np.ones((1, 1, 1, 3), np.float32), x, x, 1, 1.0, 1.0, 0.5)


def test_supports_float32_and_float64_of_one_dtype():
    f32, f64 = np.ones(2, np.float32), np.ones(2)
    assert lrn_jit.supports(f32) and lrn_jit.supports(f64, f64)
    assert not lrn_jit.supports(f32, f64)
    assert not lrn_jit.supports(np.ones(2, np.float16))


@pytest.mark.parametrize("flag", ["1", "0"])
def test_op_runs_compiled_or_reference_by_tfx_jit(monkeypatch, flag):
    monkeypatch.setenv("TFX_JIT", flag)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 3, 10)).astype(np.float32)
    attrs = {"depth_radius": 2, "bias": 1.0, "alpha": 0.2, "beta": 0.75}
    with tf.Graph().as_default():
        xt = tf.constant(x)
        y = tf.nn.lrn(xt, **attrs)
        (dx,) = tf.gradients(y, [xt], grad_ys=tf.constant(x[::-1].copy()))
        with tf.Session() as sess:
            yv, dxv = sess.run([y, dx])
    dy = x[::-1]
    if flag == "0":
        want_y = normalization._lrn_kernel(x, **attrs)
        want_dx = normalization._lrn_grad_kernel(dy, x, want_y, **attrs)
    else:
        want_y = lrn_jit.lrn(x, **attrs)
        want_dx = lrn_jit.lrn_grad(dy, x, want_y, **attrs)
    np.testing.assert_array_equal(yv, want_y)
    np.testing.assert_array_equal(dxv, want_dx)


@pytest.mark.parametrize("mode", ["loaded", "quiet"])
@pytest.mark.parametrize("rows", [1, 7, 5003])
def test_split_over_intra_op_threads_equals_one_call(monkeypatch, mode, rows):
    """Row ranges on helper threads (`run_parts` under load, `run_elementwise` quiet) give the
    values of one call, bit for bit, NaN and inf included."""
    from tensorflux.lib.numerics import intra_op
    from tensorflux.runtime import thread_budget as tb
    monkeypatch.setattr(lrn_jit, "SPLIT_ELEMENTS", 1)
    rng = np.random.default_rng(rows)
    x = floats(rng, (rows, 1, 1, 13), np.float32, True, every=5)
    dy = floats(rng, x.shape, np.float32, True, every=9)
    attrs = {"depth_radius": 4, "bias": 1.0, "alpha": 0.001 / 9.0, "beta": 0.75}
    with np.errstate(all="ignore"):
        want_y = lrn_jit.lrn(x, **attrs)
        want_dx = lrn_jit.lrn_grad(dy, x, want_y, **attrs)
    pool = tb.KernelPool(1, "test-lrn-split", counted=False)
    used = []

    def submit(fn):
        used.append(pool.try_run(fn))
        return used[-1]

    if mode == "loaded":
        intra_op.configure(2, submit)
    else:
        intra_op.configure(1, submit, elementwise=2)
    try:
        with np.errstate(all="ignore"):
            y = lrn_jit.lrn(x, **attrs)
            dx = lrn_jit.lrn_grad(dy, x, y, **attrs)
    finally:
        intra_op.configure(1)
        pool.close()
    np.testing.assert_array_equal(y, want_y)
    np.testing.assert_array_equal(dx, want_dx)
    # One submit per split call (the helper may still be busy with the forward's part when the
    # gradient asks: then the caller runs every part itself).
    assert len(used) == (0 if rows == 1 else 2) and (rows == 1 or used[0])
