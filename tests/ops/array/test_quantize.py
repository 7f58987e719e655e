"""QuantizeV2 / Dequantize / QuantizedConcat: modes, rounding, ranges (values worked out by
hand from the definitions; they agree with TensorFlow 2.21 on these inputs)."""

import numpy as np
import pytest
from op_helpers import graph, run  # noqa: F401 - autouse fixture

import tensorflux as tf

COVERED_OPS = {"QuantizeV2", "Dequantize", "QuantizedConcat"}

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
