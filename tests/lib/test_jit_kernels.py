"""Compiled kernels (lib/numerics: pooling_jit, elementwise_program) against their NumPy
references on the same inputs, including NaN/inf and odd shapes; and the TFX_JIT=0 gate.

The compiled functions are cached by numba (`cache=True`): the first run on a cold cache
compiles them (seconds), later runs load them. Shapes stay small so examples are fast.
"""

import importlib.util
import os
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from special_values import floats

from tensorflux.lib.numerics import conv2d, elementwise_program, epilogue_jit, jit, pooling_jit
from tensorflux.lib.numerics import window as window_lib

pytestmark = [pytest.mark.jit_compile,
              pytest.mark.skipif(not jit.available(), reason="numba is not available")]
SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


@st.composite
def pool_cases(draw):
    k = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    s = (draw(st.integers(1, 4)), draw(st.integers(1, 4)))  # strides may exceed the window
    padding = draw(st.sampled_from(["VALID", "SAME"]))
    shape = (draw(st.integers(1, 3)), draw(st.integers(k[0], 7)), draw(st.integers(k[1], 7)),
             draw(st.integers(1, 4)))
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    geo = window_lib.window("NHWC", [1, *k, 1], [1, *s, 1], (1, 1, 1, 1), padding, ())
    return shape, dtype, geo, draw(st.booleans()), draw(st.integers(0, 2 ** 31 - 1))


@SETTINGS
@given(pool_cases())
def test_max_pool_matches_reference(case):
    shape, dtype, geo, specials, seed = case
    x = floats(np.random.default_rng(seed), shape, dtype, specials)
    np.testing.assert_array_equal(pooling_jit.max_pool(x, geo), conv2d.max_pool(x, geo))


@SETTINGS
@given(pool_cases())
def test_max_pool_grad_matches_reference(case):
    shape, dtype, geo, specials, seed = case
    rng = np.random.default_rng(seed)
    x = floats(rng, shape, dtype, specials)
    # Ties too: rounded values repeat inside windows (the first maximum takes the gradient).
    x = np.round(x) if not specials else x
    y = conv2d.max_pool(x, geo)
    g = floats(rng, y.shape, dtype, specials and seed % 2 == 0)
    got = pooling_jit.max_pool_grad(x, g, geo)
    want = conv2d.max_pool_grad(x, g, geo)
    if all(s >= k for s, k in zip(geo.strides, geo.ksize)):
        np.testing.assert_array_equal(got, want)  # each input in at most one window
    else:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, equal_nan=True)


@SETTINGS
@given(pool_cases())
def test_avg_pool_and_grad_match_reference(case):
    shape, dtype, geo, specials, seed = case
    rng = np.random.default_rng(seed)
    x = floats(rng, shape, dtype, specials)
    np.testing.assert_array_equal(pooling_jit.avg_pool(x, geo), conv2d.avg_pool(x, geo))
    g = floats(rng, conv2d.avg_pool(x, geo).shape, dtype, specials)
    got = pooling_jit.avg_pool_grad(shape, g, geo)
    np.testing.assert_allclose(got, conv2d.avg_pool_grad(shape, g, geo), rtol=1e-5, atol=1e-6,
                               equal_nan=True)


def test_max_pool_grad_known_routing():
    """Ties go to the first maximum; a NaN takes the gradient only in first place."""
    geo = window_lib.window("NHWC", [1, 2, 2, 1], [1, 2, 2, 1], (1, 1, 1, 1), "VALID", ())
    x = np.array([[5, 5], [1, 5]], np.float32).reshape(1, 2, 2, 1)
    g = np.array([7], np.float32).reshape(1, 1, 1, 1)
    dx = pooling_jit.max_pool_grad(x, g, geo).reshape(2, 2)
    np.testing.assert_array_equal(dx, [[7, 0], [0, 0]])
    x = np.array([[1, np.nan], [3, 2]], np.float32).reshape(1, 2, 2, 1)
    np.testing.assert_array_equal(pooling_jit.max_pool_grad(x, g, geo).reshape(2, 2),
                                  [[0, 0], [7, 0]])
    x = np.array([[np.nan, 9], [3, 2]], np.float32).reshape(1, 2, 2, 1)
    np.testing.assert_array_equal(pooling_jit.max_pool_grad(x, g, geo).reshape(2, 2),
                                  [[7, 0], [0, 0]])
    assert np.isnan(pooling_jit.max_pool(x, geo)).all()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_max_pool_grad_tiled_windows(dtype):
    """Windows side by side (stride = window, VALID, a remainder row and column no window
    reaches): the one-write kernel equals the reference bit for bit, NaN/inf/-0.0 included."""
    geo = window_lib.window("NHWC", [1, 2, 3, 1], [1, 2, 3, 1], (1, 1, 1, 1), "VALID", ())
    rng = np.random.default_rng(5)
    x = np.round(floats(rng, (2, 7, 10, 5), dtype, True))  # ties too
    g = floats(rng, (2, 3, 3, 5), dtype, True)
    g[0, 0, 0] = -0.0
    got = pooling_jit.max_pool_grad(x, g, geo)
    want = conv2d.max_pool_grad(x, g, geo)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    assert not got[:, 6:].any() and not got[:, :, 9:].any()


# -- elementwise programs ----------------------------------------------------------------------

_EXACT = ["Add", "Sub", "Mul", "RealDiv", "Maximum", "Minimum", "SquaredDifference", "ReluGrad",
          "Neg", "Abs", "Square", "Sqrt", "Reciprocal", "Relu", "Relu6", "Floor", "Ceil"]
_LIBM = ["Exp", "Log", "Tanh", "Sigmoid", "Elu", "Log1p", "Expm1", "Rsqrt"]


@st.composite
def programs(draw, names):
    n_inputs = draw(st.integers(1, 3))
    n_constants = draw(st.integers(0, 2))
    codes, operands = [], []
    for i in range(draw(st.integers(1, 6))):
        code, arity = elementwise_program.OPCODES[draw(st.sampled_from(names))]
        limit = n_inputs + n_constants + i
        first = limit - 1 if i else draw(st.integers(0, limit - 1))  # a chain, mostly
        second = draw(st.integers(0, limit - 1)) if arity == 2 else -1
        codes.append(code)
        operands += [first, second]
    shape = draw(st.sampled_from([(), (1,), (5,), (2, 3), (3, 1, 4), (1000,)]))
    scalars = [draw(st.booleans()) for _ in range(n_inputs)]
    return codes, operands, n_inputs, n_constants, shape, scalars, draw(st.booleans()), \
        draw(st.sampled_from([np.float32, np.float64])), draw(st.integers(0, 2 ** 31 - 1))


def _program_values(case):
    codes, operands, n_inputs, n_constants, shape, scalars, specials, dtype, seed = case
    rng = np.random.default_rng(seed)
    inputs = [floats(rng, () if scalar else shape, dtype, specials)
              for scalar in scalars]
    constants = floats(rng, (n_constants,), dtype, False)
    program = elementwise_program.RegisterProgram(codes, operands, n_inputs, n_constants)
    want = elementwise_program.run_numpy(codes, operands, constants, inputs, dtype)
    shape = elementwise_program.compiled_shape(inputs)
    got = elementwise_program.run_compiled(program, constants, inputs, dtype, shape)
    # A drawn program may leave an input unused (the rewrite never does): its shape still
    # shapes the compiled result.
    want = np.broadcast_to(want, shape)
    assert got.dtype == dtype and got.shape == want.shape
    return got, want


@SETTINGS
@given(programs(_EXACT))
def test_compiled_program_is_bit_identical_on_arithmetic(case):
    got, want = _program_values(case)
    np.testing.assert_array_equal(got, want)


def _intermediate_scale(case, shape):
    """Per element, the largest finite magnitude among the program's intermediate values: libm
    results may differ by an ulp, and a later cancellation turns that into an absolute error
    of the intermediates' size. An exponential multiplies its argument's relative error by the
    argument (d exp(y) = exp(y) dy), so each Exp/Expm1 of a chain scales the bound by
    max(1, |y|)."""
    codes, operands, n_inputs, n_constants, _, scalars, specials, dtype, seed = case
    rng = np.random.default_rng(seed)
    inputs = [floats(rng, () if scalar else case[4], dtype, specials)
              for scalar in scalars]
    constants = floats(rng, (n_constants,), dtype, False)
    names = {code: name for name, (code, _) in elementwise_program.OPCODES.items()}
    scale = np.ones(shape, np.float64)
    conditioning = np.ones(shape, np.float64)
    values = [np.broadcast_to(np.asarray(v, np.float64), shape)
              for v in list(inputs) + list(constants)]
    with np.errstate(all="ignore"):
        for k in range(1, len(codes) + 1):
            value = np.broadcast_to(np.asarray(elementwise_program.run_numpy(
                codes[:k], operands[:2 * k], constants, inputs, dtype), np.float64), shape)
            if names.get(codes[k - 1]) in ("Exp", "Expm1"):
                argument = np.abs(values[operands[2 * (k - 1)]])
                conditioning *= np.where(np.isfinite(argument), np.maximum(argument, 1.0), 1.0)
            values.append(value)
            scale = np.maximum(scale, np.where(np.isfinite(value), np.abs(value), 0.0))
    return scale * np.minimum(conditioning, 1e6)


@SETTINGS
@given(programs(_EXACT + _LIBM))
def test_compiled_program_matches_on_transcendentals(case):
    got, want = _program_values(case)
    both_nan = np.isnan(got) & np.isnan(want)
    same = (got == want) | both_nan
    eps = np.finfo(case[7]).eps
    # exp's condition number is |x|: a last-bit difference in an argument near float32's
    # overflow (|x| ~ 88) becomes ~88 eps of relative error in the result, twice in a chain.
    bound = 256 * eps * _intermediate_scale(case, want.shape)
    with np.errstate(all="ignore"):
        close = np.abs(got.astype(np.float64) - want.astype(np.float64)) <= bound
    assert np.all(same | close), (got[~(same | close)], want[~(same | close)])


def test_program_chain_of_scalar_adds():
    n = 300
    operands = [0, 1] + [x for i in range(1, n) for x in (n + 1 + i - 1, i + 1)]
    constants = np.arange(n + 1, dtype=np.float32)
    program = elementwise_program.RegisterProgram([0] * n, operands, 0, n + 1)
    got = elementwise_program.run_compiled(program, constants, [], np.float32, ())
    assert got.shape == () and got == np.float32(constants.sum())
    assert elementwise_program.run_numpy([0] * n, operands, constants, [], np.float32) == got


def test_check_program_rejects_bad_programs():
    with pytest.raises(ValueError, match="unknown opcode"):
        elementwise_program.check_program([99], [0, -1], 1, 0)
    with pytest.raises(ValueError, match="must refer"):
        elementwise_program.check_program([0], [0, 1], 1, 0)  # no value 1 yet
    with pytest.raises(ValueError, match="must refer"):
        elementwise_program.check_program([8], [0, 0], 1, 0)  # unary with a second operand
    with pytest.raises(ValueError, match="2 entries"):
        elementwise_program.check_program([0], [0], 1, 0)


def test_compiled_shape_refuses_other_broadcasting():
    a, b = np.ones((2, 3)), np.ones(3)
    assert elementwise_program.compiled_shape([a, b]) is None
    assert elementwise_program.compiled_shape([a, np.ones(())]) == (2, 3)
    assert elementwise_program.compiled_shape([np.ones(1), np.ones((1, 1))]) == (1, 1)


def test_tfx_jit_zero_disables_compiled_kernels(monkeypatch):
    monkeypatch.setenv("TFX_JIT", "0")
    assert not jit.available()
    assert not pooling_jit.supports(np.ones(2, np.float32))
    monkeypatch.setenv("TFX_JIT", "1")
    assert jit.available() and pooling_jit.supports(np.ones(2, np.float32))
    assert not pooling_jit.supports(np.ones(2, np.int32))
    assert 1 <= jit.intra_op_threads()


# -- fused-product epilogues --------------------------------------------------------------------

@SETTINGS
@given(st.sampled_from([None, "Relu", "Relu6"]), st.sampled_from([np.float32, np.float64]),
       st.sampled_from([(1, 1), (7, 3), (2, 5, 4, 6), (0, 3)]), st.integers(0, 2 ** 31 - 1))
def test_bias_activation_is_bit_identical(activation, dtype, shape, seed):
    rng = np.random.default_rng(seed)
    y = floats(rng, shape, dtype, True)
    bias = floats(rng, shape[-1:], dtype, seed % 3 == 0)
    want = y + bias
    if activation == "Relu":
        want = np.maximum(want, np.zeros((), dtype))
    elif activation == "Relu6":
        want = np.clip(want, np.zeros((), dtype), np.asarray(6, dtype))
    with np.errstate(all="ignore"):
        epilogue_jit.bias_activation(y, bias, activation)
    np.testing.assert_array_equal(y, want)


def test_shape_mismatches_raise_instead_of_writing_out_of_bounds():
    geo = window_lib.window("NHWC", [1, 2, 2, 1], [1, 2, 2, 1], (1, 1, 1, 1), "VALID", ())
    x = np.ones((1, 4, 4, 2), np.float32)
    with pytest.raises(ValueError, match="pooled shape"):
        pooling_jit.max_pool_grad(x, np.ones((1, 3, 2, 2), np.float32), geo)
    with pytest.raises(ValueError, match="pooled shape"):
        pooling_jit.avg_pool_grad((1, 4, 4, 2), np.ones((1, 2, 2, 3), np.float32), geo)
    with pytest.raises(ValueError, match="4-D"):
        pooling_jit.max_pool(np.ones((4, 4, 2), np.float32), geo)
    with pytest.raises(ValueError, match="bias"):
        epilogue_jit.bias_activation(np.ones((2, 3), np.float32), np.ones(2, np.float32))


def test_marked_functions_compile_together_at_the_first_call(tmp_path, monkeypatch):
    """`@jit` defers numba (and its import) to a module's first compiled call, then swaps all
    of that module's marked functions for dispatchers so they can call one another."""
    import importlib.util

    source = tmp_path / "tfx_jit_probe.py"
    source.write_text("from tensorflux.lib.numerics.jit import jit\n\n\n"
                      "@jit\ndef twice(x):\n    return 2 * x\n\n\n"
                      "@jit\ndef outer(x):\n    return twice(x) + 1\n")
    spec = importlib.util.spec_from_file_location("tfx_jit_probe", source)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "tfx_jit_probe", module)
    spec.loader.exec_module(module)
    assert isinstance(module.outer, jit._Deferred) and isinstance(module.twice, jit._Deferred)
    assert module.outer(3.0) == 7.0
    assert not isinstance(module.twice, jit._Deferred)
    assert module.twice.__name__ == "twice" and module.twice(1.5) == 3.0


def test_compiled_relu_of_negative_zero_is_positive_zero_as_the_kernel():
    # Found by the program hypothesis test: Relu(-0.0) then Reciprocal gave -inf compiled and
    # +inf from NumPy (np.maximum(-0.0, 0) is +0.0).
    codes, operands = [8, 18, 13], [0, -1, 1, -1, 2, -1]
    inputs = [np.zeros((), np.float32)]
    constants = np.zeros(0, np.float32)
    want = elementwise_program.run_numpy(codes, operands, constants, inputs, np.float32)
    program = elementwise_program.RegisterProgram(codes, operands, 1, 0)
    got = elementwise_program.run_compiled(program, constants, inputs, np.float32, ())
    assert want == np.inf and got == want


@pytest.mark.parametrize("value, want", [("0", False), ("1", True), ("", True), (None, True)])
def test_available_follows_tfx_jit_as_set_at_any_time(monkeypatch, value, want):
    installed = importlib.util.find_spec("numba") is not None
    if value is None:
        monkeypatch.delenv("TFX_JIT", raising=False)
    else:
        monkeypatch.setenv("TFX_JIT", value)
    assert jit.available() is (want and installed)
    monkeypatch.setitem(os.environ, "TFX_JIT", "0")  # any os.environ assignment counts
    assert jit.available() is False


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", ["Maximum", "Minimum"])
def test_compiled_max_min_of_equal_values_return_the_second_as_numpy(name, dtype):
    """np.maximum/np.minimum of equal values (0.0 and -0.0) return the second operand; the
    compiled program must too (1 / max(0.0, -0.0) is -inf), scalar and vector paths alike."""
    code, _ = elementwise_program.OPCODES[name]
    program = elementwise_program.RegisterProgram([code], [0, 1], 2, 0)
    for shape in [(), (1000,)]:
        a = np.full(shape, 0.0, dtype)
        b = np.full(shape, -0.0, dtype)
        for x, y in [(a, b), (b, a)]:
            want = elementwise_program.run_numpy([code], [0, 1], np.zeros(0, dtype), [x, y],
                                                 dtype)
            got = elementwise_program.run_compiled(program, np.zeros(0, dtype), [x, y], dtype,
                                                   elementwise_program.compiled_shape([x, y]))
            np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
            np.testing.assert_array_equal(np.signbit(got), np.signbit(y))
