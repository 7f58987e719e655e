"""QuantizeV2 / Dequantize / QuantizedConcat: modes, rounding, ranges (values worked out by
hand from the definitions; they agree with TensorFlow 2.21 on these inputs)."""

import numpy as np
import pytest
from op_helpers import gradient_case, graph, run  # noqa: F401 - autouse fixture

import tensorflux as tf

COVERED_OPS = {"QuantizeV2", "Dequantize", "QuantizedConcat", "QuantizeAndDequantizeV2"}

# With 60 bits over the data's own range the float64 grid is finer than float64 itself, so the
# op is the identity and finite differences see the straight-through gradient of 1.
GRADIENT_CASES = [
    ("QuantizeAndDequantizeV2", gradient_case(
        lambda tf, x: tf.quantization.quantize_and_dequantize(x, 0.0, 0.0, num_bits=60),
        (2, 3))),
]

X = np.array([-2.0, -1.0, -0.5, 0.0, 0.3, 0.5, 1.0, 2.0, 5.0], np.float32)


def _quantize(x, lo, hi, dtype, mode, round_mode="HALF_AWAY_FROM_ZERO"):
    q = tf.quantization.quantize(x, lo, hi, dtype, mode=mode, round_mode=round_mode)
    back = tf.quantization.dequantize(q.output, q.output_min, q.output_max, mode=mode)
    return run([q.output, q.output_min, q.output_max, back])


def test_min_combined():
    # quint8 over [-1, 3]: q = round((x + 1) * 255 / 4), clamped.
    q, lo, hi, back = _quantize(X, -1.0, 3.0, tf.quint8, "MIN_COMBINED")
    want = np.clip(np.floor((np.clip(X, -1, 3) + 1) * 63.75 + 0.5), 0, 255)
    np.testing.assert_array_equal(q, want)
    assert q.dtype == np.uint8 and (lo, hi) == (-1.0, 3.0)
    np.testing.assert_allclose(back, want * 4 / 255 - 1, rtol=1e-6, atol=1e-6)
    # qint8 subtracts 128 before rounding: x = 1 gives 127.5 - 128 = -0.5 -> -1.
    q8 = _quantize(X, -1.0, 3.0, tf.qint8, "MIN_COMBINED")[0]
    assert q8.tolist() == [-128, -128, -96, -64, -45, -32, -1, 63, 127]


def test_min_first_keeps_zero_exact():
    q, lo, hi, back = _quantize(X, -1.0, 3.0, tf.quint8, "MIN_FIRST")
    # round(x * 63.75) - round(-63.75) = round(x * 63.75) + 64.
    assert q.tolist() == [0, 0, 32, 64, 83, 96, 128, 192, 255]
    assert back[3] == 0.0
    np.testing.assert_allclose(back[[2, 6]], [-0.5019608, 1.0039216], rtol=1e-6)


def test_scaled_is_symmetric_and_reports_its_range():
    q, lo, hi, back = _quantize(X, -1.0, 3.0, tf.qint8, "SCALED")
    # s = min(-128 / -1, 127 / 3) = 127 / 3; values clamp to [-128 / s, 127 / s].
    s = 127 / 3
    np.testing.assert_allclose([lo, hi], [-128 / s, 3.0], rtol=1e-6)
    want = np.clip(np.sign(X) * np.floor(np.abs(X) * s + 0.5), -128, 127)
    np.testing.assert_array_equal(q, want)
    np.testing.assert_allclose(back, want / s, rtol=1e-6)
    # unsigned SCALED: s = 255 / 3 = 85, so 0.5 -> 42.5: away from zero 43, to even 42.
    away = _quantize(np.float32([0.5]), -1.0, 3.0, tf.quint8, "SCALED")[0]
    even = _quantize(np.float32([0.5]), -1.0, 3.0, tf.quint8, "SCALED", "HALF_TO_EVEN")[0]
    assert away.tolist() == [43] and even.tolist() == [42]


def test_range_is_widened_to_zero_and_a_minimum_span():
    _, lo, hi, _ = _quantize(X, 0.5, 1.0, tf.quint8, "MIN_COMBINED")
    assert (lo, hi) == (0.0, 1.0)
    _, lo, hi, _ = _quantize(X, 0.0, 0.0, tf.quint8, "MIN_FIRST")
    np.testing.assert_allclose([lo, hi], [0.0, 0.01], rtol=1e-6)


def test_errors():
    with pytest.raises(tf.errors.InvalidArgumentError, match="HALF_TO_EVEN"):
        _quantize(X, -1.0, 1.0, tf.quint8, "MIN_COMBINED", "HALF_TO_EVEN")
    with pytest.raises(tf.errors.InvalidArgumentError, match="must not exceed"):
        _quantize(X, 1.0, -1.0, tf.quint8, "MIN_FIRST")
    with pytest.raises((TypeError, ValueError)):
        tf.quantization.quantize(X, -1.0, 1.0, tf.float32)
    with pytest.raises((TypeError, ValueError)):
        tf.quantization.quantize(X, -1.0, 1.0, tf.quint8, mode="LINEAR")


def test_quantized_concat_requantizes_into_the_union_range():
    a = tf.constant(np.array([[0, 10, 255]], np.uint8), tf.quint8)
    b = tf.constant(np.array([[3, 128, 200]], np.uint8), tf.quint8)
    out = tf.quantization.quantized_concat(1, [a, b], [-1.0, 0.0], [1.0, 4.0])
    assert out.output.get_shape().as_list() == [1, 6]
    values, lo, hi = run(out)
    assert (lo, hi) == (-1.0, 4.0)
    # Neither range is the union, so both parts are requantized through floats.
    floats = tf.quantization.dequantize(out.output, lo, hi, mode="MIN_FIRST")
    want = np.concatenate([np.array([0, 10, 255]) * 2 / 255 - 1,
                           np.array([3, 128, 200]) * 4 / 255])
    np.testing.assert_allclose(run(floats)[0], want, atol=5 / 255)
    assert values.tolist() == [[0, 4, 102, 53, 153, 211]]
    same = tf.quantization.quantized_concat(0, [a, b], [0.0, 0.0], [4.0, 4.0])
    np.testing.assert_array_equal(run(same.output), [[0, 10, 255], [3, 128, 200]])
    with pytest.raises(ValueError):
        tf.quantization.quantized_concat(2, [a, b], [0.0, 0.0], [1.0, 1.0])


def _qdq_reference(x, lo, hi, signed, bits, half_to_even, narrow):
    q_min = (-(2 ** (bits - 1)) + narrow) if signed else 0
    q_max = 2 ** (bits - 1) - 1 if signed else 2 ** bits - 1
    big = np.inf
    from_min = q_min / lo if q_min * lo > 0 else big
    from_max = q_max / hi if q_max * hi > 0 else big
    if from_min < from_max:
        scale, inverse = from_min, lo / q_min
        hi = q_max * inverse
    else:
        scale, inverse = from_max, hi / q_max
        lo = q_min * inverse
    scaled = np.clip(x, lo, hi) * scale
    return (np.rint(scaled) if half_to_even else np.floor(scaled + 0.5)) * inverse


@pytest.mark.parametrize("signed,bits,narrow", [(True, 8, False), (True, 4, True),
                                                (False, 3, False)])
@pytest.mark.parametrize("round_mode", ["HALF_TO_EVEN", "HALF_UP"])
def test_quantize_and_dequantize(signed, bits, narrow, round_mode):
    x = np.random.RandomState(1).uniform(-3, 3, 50)
    x = x if signed else np.abs(x)
    given = tf.quantization.quantize_and_dequantize(
        x, -1.0, 2.0, signed_input=signed, num_bits=bits, range_given=True,
        round_mode=round_mode, narrow_range=narrow)
    own = tf.quantization.quantize_and_dequantize(
        x, 0.0, 0.0, signed_input=signed, num_bits=bits, round_mode=round_mode,
        narrow_range=narrow)
    g, o = run([given, own])
    even = round_mode == "HALF_TO_EVEN"
    np.testing.assert_allclose(g, _qdq_reference(x, -1.0, 2.0, signed, bits, even, narrow),
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(o, _qdq_reference(x, x.min(), x.max(), signed, bits, even,
                                                 narrow), rtol=1e-12, atol=1e-12)
    grad = run(tf.gradients(tf.reduce_sum(given * 3.0), given.op.inputs[0])[0])
    np.testing.assert_array_equal(grad, np.full(50, 3.0))


def test_quantize_and_dequantize_errors():
    with pytest.raises(tf.errors.InvalidArgumentError, match="range"):
        run(tf.quantization.quantize_and_dequantize([1.0], 2.0, 1.0, range_given=True))
    with pytest.raises(tf.errors.InvalidArgumentError, match="num_bits"):
        run(tf.quantization.quantize_and_dequantize([1.0], 0.0, 1.0, num_bits=0))
