"""tf.compare_and_bitpack: input > threshold packed 8 to a uint8 along the last axis."""

import numpy as np
import pytest

import tensorflux as tf

COVERED_OPS = {"CompareAndBitpack"}


def _reference(x, threshold):
    bits = x if x.dtype == np.bool_ else x > threshold
    out = np.zeros(x.shape[:-1] + (x.shape[-1] // 8,), np.uint8)
    for k in range(8):  # element 8j+k goes to bit 7-k of byte j
        out |= (bits[..., k::8].astype(np.uint8) << (7 - k)).astype(np.uint8)
    return out


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int8, np.int32,
                                   np.int64, np.bool_])
def test_matches_a_bit_by_bit_reference(dtype):
    rng = np.random.RandomState(5)
    x = rng.randn(2, 3, 24) * 4
    x = x > 0 if dtype == np.bool_ else x.astype(dtype)
    threshold = dtype(1) if dtype != np.bool_ else np.bool_(True)
    with tf.Session() as sess:
        got = sess.run(tf.compare_and_bitpack(x, threshold))
    assert got.dtype == np.uint8 and got.shape == (2, 3, 3)
    np.testing.assert_array_equal(got, _reference(x, threshold))


def test_threshold_is_strict_and_shapes_infer():
    x = np.array([[1, 2, 3, 4, 5, 6, 7, 8]], np.int32)
    with tf.Session() as sess:
        assert sess.run(tf.compare_and_bitpack(x, 4))[0, 0] == 0b00001111
    ph = tf.placeholder(tf.float32, [None, 5, 16])
    assert tf.compare_and_bitpack(ph, 0.0).shape.as_list() == [None, 5, 2]


def test_bad_shapes():
    with pytest.raises(ValueError, match="divisible by 8"):
        tf.compare_and_bitpack(tf.zeros([2, 7]), 0.0)
    with pytest.raises(ValueError, match="rank 0"):
        tf.compare_and_bitpack(tf.zeros([8]), [0.0])
    ph = tf.placeholder(tf.float32, [None])
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError,
                                             match="divisible by 8"):
        sess.run(tf.compare_and_bitpack(ph, 0.0), {ph: np.zeros(6)})
