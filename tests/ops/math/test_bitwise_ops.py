"""tf.bitwise: BitwiseAnd/Or/Xor, Invert, LeftShift, RightShift."""

import collections

import numpy as np
import pytest
from array_checks import check
from hypothesis import given, settings
from hypothesis import strategies as st
from op_helpers import graph  # noqa: F401 - the autouse fixture

import tensorflux as tf

Row = collections.namedtuple("Row", "op build expected")
X8 = np.array([-8, 5, 127, -128], np.int8)
Y8 = np.array([-1, 0, 7, 8], np.int8)
U8 = np.array([200, 5, 255, 1], np.uint8)

# Shift expectations were checked against TensorFlow: amounts are clamped to [0, bits - 1].
ROWS = [
    Row("BitwiseAnd", lambda: tf.bitwise.bitwise_and([12, 10], [10, 6]),
        np.array([8, 2], np.int32)),
    Row("BitwiseAnd", lambda: tf.bitwise.bitwise_and(np.array([[1, 2]], np.int64),
                                                     np.array([[3], [7]], np.int64)),
        np.array([[1, 2], [1, 2]], np.int64)),
    Row("BitwiseOr", lambda: tf.bitwise.bitwise_or(U8, np.uint8(2)), U8 | 2),
    Row("BitwiseXor", lambda: tf.bitwise.bitwise_xor(X8, Y8), X8 ^ Y8),
    Row("Invert", lambda: tf.bitwise.invert(U8), np.array([55, 250, 0, 254], np.uint8)),
    Row("Invert", lambda: tf.bitwise.invert(X8), np.array([7, -6, -128, 127], np.int8)),
    Row("LeftShift", lambda: tf.bitwise.left_shift(X8, Y8), np.array([-8, 5, -128, 0], np.int8)),
    Row("LeftShift", lambda: tf.bitwise.left_shift(U8, Y8.astype(np.uint8)),
        np.array([0, 5, 128, 128], np.uint8)),
    Row("RightShift", lambda: tf.bitwise.right_shift(X8, Y8), np.array([-8, 5, 0, -1], np.int8)),
    Row("RightShift", lambda: tf.bitwise.right_shift(U8, Y8.astype(np.uint8)),
        np.array([1, 5, 1, 0], np.uint8)),
]

COVERED_OPS = {row.op for row in ROWS}


@pytest.mark.parametrize("row", ROWS, ids=[f"{r.op}-{i}" for i, r in enumerate(ROWS)])
def test_row(row):
    check(row.build(), row.expected)


def test_names_types_and_shapes():
    assert tf.bitwise.bitwise_and(1, 2).op.type == "BitwiseAnd"
    assert tf.bitwise.invert(1).op.name == "Invert"
    with pytest.raises(TypeError, match="parameter .x. has DataType float32 not in list"):
        tf.bitwise.bitwise_or(1.0, 2.0)
    with pytest.raises(ValueError, match="Dimensions must be equal"):
        tf.bitwise.bitwise_xor([1, 2], [1, 2, 3])
    p = tf.placeholder(tf.int32, [None, 3])
    assert tf.bitwise.left_shift(p, [1, 2, 3]).shape.as_list() == [None, 3]
    assert tf.gradients(tf.cast(tf.bitwise.invert(p), tf.float32), p) == [None]


@settings(max_examples=30, deadline=None)
@given(st.sampled_from([np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
                        np.uint64]),
       st.integers(0, 2**31 - 1))
def test_matches_numpy(dtype, seed):
    rng = np.random.RandomState(seed)
    info = np.iinfo(dtype)
    x = rng.randint(max(info.min, -2**62), min(info.max, 2**62), 6, dtype=np.int64).astype(dtype)
    y = rng.randint(max(info.min, -2**62), min(info.max, 2**62), 6, dtype=np.int64).astype(dtype)
    shift = np.clip(y, 0, info.bits - 1).astype(dtype)
    with tf.Graph().as_default():
        check([tf.bitwise.bitwise_and(x, y), tf.bitwise.bitwise_or(x, y),
               tf.bitwise.bitwise_xor(x, y), tf.bitwise.invert(x),
               tf.bitwise.left_shift(x, y), tf.bitwise.right_shift(x, y)],
              [x & y, x | y, x ^ y, ~x, np.left_shift(x, shift), np.right_shift(x, shift)])
