"""Switch/Merge/cond/while over every dtype family TF allows, including uint64 and quantized
types; fetching the live Switch output and feeding a Switch output."""

import numpy as np
import pytest
from op_helpers import graph, run  # noqa: F401

import tensorflux as tf
from tensorflux.ops.control_flow import primitives

DTYPES = [(tf.uint64, np.uint64), (tf.uint32, np.uint32), (tf.uint16, np.uint16),
          (tf.qint8, np.int8), (tf.quint8, np.uint8), (tf.qint16, np.int16),
          (tf.quint16, np.uint16), (tf.qint32, np.int32), (tf.string, object),
          (tf.bool, np.bool_), (tf.complex128, np.complex128), (tf.float16, np.float16)]


def _value(np_type):
    if np_type is object:
        return np.array([b"a", b"bc"], dtype=object)
    return np.array([1, 0], dtype=np_type)


@pytest.mark.parametrize("dtype,np_type", DTYPES, ids=[d.name for d, _ in DTYPES])
@pytest.mark.parametrize("taken", [True, False])
def test_switch_merge_cond_while(dtype, np_type, taken):
    value = _value(np_type)
    x = tf.constant(value, dtype=dtype)
    p = tf.placeholder(tf.bool, [])
    f, t = primitives.switch(x, p)
    merged, index = primitives.merge([f, t])
    picked = tf.cond(p, lambda: tf.identity(x), lambda: tf.identity(x))
    looped = tf.while_loop(lambda i, a: i < 2, lambda i, a: (i + 1, tf.identity(a)), [0, x])[1]
    live = t if taken else f
    got = run([live, merged, index, picked, looped], {p: taken})
    for item in (got[0], got[1], got[3], got[4]):
        np.testing.assert_array_equal(item, value)
    assert got[2] == (1 if taken else 0)


def test_fetching_the_dead_switch_output_is_invalid_argument():
    p = tf.placeholder(tf.bool, [])
    _, t = primitives.switch(tf.constant(1.0), p)
    with pytest.raises(tf.errors.InvalidArgumentError, match="untaken branch"):
        run(t, {p: False})


def test_feeding_a_switch_output():
    p = tf.placeholder(tf.bool, [])
    _, t = primitives.switch(tf.constant(1.0), p)
    assert run(t * 2.0, {t: 5.0, p: False}) == 10.0


def test_uint8_wraps_and_variant_constant():
    a = tf.constant(np.uint8(250)) + tf.constant(np.uint8(10))
    b = tf.constant(np.uint8(1)) - tf.constant(np.uint8(2))
    assert run([a, b]) == [np.uint8(4), np.uint8(255)]


def test_int32_lengths_are_accepted():
    mask = tf.sequence_mask(tf.constant([1, 3], tf.int32), tf.constant(3, tf.int32))
    rev = tf.reverse_sequence(tf.constant([[1, 2, 3], [4, 5, 6]]), tf.constant([2, 3], tf.int32),
                              seq_axis=1, batch_axis=0)
    got_mask, got_rev = run([mask, rev])
    np.testing.assert_array_equal(got_mask, [[True, False, False], [True, True, True]])
    np.testing.assert_array_equal(got_rev, [[2, 1, 3], [6, 5, 4]])
