"""NumPy values given an explicit dtype are cast as NumPy casts them (TF's make_tensor_proto
does `values.astype(dtype)`), while Python lists and scalars are still checked."""

import numpy as np
import pytest

import tensorflux as tf


def _run(t):
    with tf.Session() as sess:
        return sess.run(t)


def test_numpy_floats_to_integers_truncate_and_wrap():
    with tf.Graph().as_default():
        values = np.array([1.5, 300.0, -2.0, 254.9])
        got = _run(tf.constant(values, tf.uint8))
        assert got.dtype == np.uint8
        np.testing.assert_array_equal(got, values.astype(np.uint8))
        assert _run(tf.constant(np.float64(-7.75), tf.int32)) == -7
        np.testing.assert_array_equal(_run(tf.constant(np.array([0.0, 0.5]), tf.bool)),
                                      [False, True])


def test_numpy_complex_to_real_keeps_the_real_part():
    with tf.Graph().as_default():
        np.testing.assert_allclose(_run(tf.constant(np.array([1.25 - 2j]), tf.float64)), [1.25])


def test_numpy_operands_of_ops_are_cast_python_lists_are_checked():
    with tf.Graph().as_default():
        np.testing.assert_array_equal(
            _run(tf.add(tf.constant([1, 2]), np.array([1.5, 2.5]))), [2, 4])
        with pytest.raises(TypeError, match="int32"):
            tf.add(tf.constant([1, 2]), [1.5, 2.5])
        with pytest.raises(TypeError):
            tf.constant([1.5], tf.uint8)


@pytest.mark.parametrize("dtype", [None, tf.float32, tf.float64])
def test_converted_array_is_owned_by_the_graph(dtype):
    # Changing the caller's array after conversion leaves the constant's value as it was.
    with tf.Graph().as_default():
        values = np.arange(6, dtype=np.float32).reshape(2, 3)
        before = values.copy()
        converted = [tf.convert_to_tensor(values, dtype=dtype),
                     tf.add(values, np.float32(0)) if dtype is None else tf.identity(
                         tf.convert_to_tensor(values, dtype=dtype))]
        values += 100
        for got in _run(converted):
            np.testing.assert_array_equal(got, before.astype(got.dtype))


def test_numpy_string_scalars_become_bytes_scalars():
    with tf.Graph().as_default():
        fetched = _run([tf.constant(np.bytes_(b"ab\x00c")), tf.constant(np.str_("hé"))])
    assert fetched == [b"ab\x00c", "hé".encode()]
    assert all(type(v) is bytes for v in fetched)


def test_lists_of_numpy_scalars_prefer_int32_and_float32_as_tf1_graphs_do():
    # TF 1.x (make_tensor_proto on np.array(list)): float64 -> float32, int64 -> int32 when
    # lossless; NumPy arrays and lone NumPy scalars keep their dtype. The k-means example
    # builds tf.convert_to_tensor([np.argmax(c) for c in counts]) and compares it with int32.
    import numpy as np

    import tensorflux as tf

    with tf.Graph().as_default():
        cases = [([np.int64(3), np.int64(1)], tf.int32), ([np.float64(1.5)], tf.float32),
                 ([np.int64(2 ** 40)], tf.int64), ([[np.int64(1)], [np.int64(2)]], tf.int32),
                 ([1, np.int64(2)], tf.int32), ([np.int64(1), 2.5], tf.float32),
                 ([np.float16(1)], tf.float16), ([np.uint8(3)], tf.uint8),
                 ([np.int16(2)], tf.int16), ([np.uint64(5)], tf.uint64),
                 (np.array([1, 2]), tf.int64), (np.int64(5), tf.int64),
                 (np.array([1.5]), tf.float64), (np.float64(1.5), tf.float64)]
        for value, want in cases:
            t = tf.convert_to_tensor(value)
            assert t.dtype == want, (value, t.dtype)
            np.testing.assert_array_equal(tf.Session().run(t), np.asarray(value))
        assert tf.constant([np.int64(-5), np.int64(7)]).dtype == tf.int32
        assert tf.constant([np.int64(1)], dtype=tf.int64).dtype == tf.int64
