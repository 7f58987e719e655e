"""accumulate_n: the TF1 argument checks (empty list, mixed dtypes, shapes, tensor_dtype)
and sums against NumPy."""

import numpy as np
import pytest
from op_helpers import graph  # noqa: F401 (graph: autouse fixture)

import tensorflux as tf


def _run(t, feed=None):
    with tf.Session() as sess:
        return sess.run(t, feed_dict=feed)


def test_sums_match_numpy():
    rng = np.random.RandomState(5)
    parts = [rng.randn(3, 2) for _ in range(4)]
    np.testing.assert_allclose(_run(tf.accumulate_n(parts)), np.sum(parts, axis=0), rtol=1e-12)
    ints = [np.int64([1, -2, 3]), np.int64([4, 5, -6])]
    np.testing.assert_array_equal(_run(tf.accumulate_n(ints, tensor_dtype=tf.int64)),
                                  [5, 3, -3])


def test_fed_unknown_length_with_declared_shape():
    x = tf.placeholder(tf.float32, [None])
    total = tf.accumulate_n([x, x, x], shape=[None])
    assert total.shape.as_list() == [None]
    np.testing.assert_allclose(_run(total, {x: [0.5, 2.0]}), [1.5, 6.0])


def test_gradient_is_one_per_input():
    xs = [tf.constant(float(i)) for i in range(3)]
    grads = tf.gradients(tf.accumulate_n(xs), xs)
    assert _run(grads) == [1.0, 1.0, 1.0]


@pytest.mark.parametrize("inputs", [[], (), None])
def test_empty_or_not_a_list(inputs):
    with pytest.raises(ValueError, match="at least one"):
        tf.accumulate_n(inputs)


def test_mixed_dtypes():
    with pytest.raises(ValueError, match="same dtype"):
        tf.accumulate_n([tf.constant(1.0), tf.constant(1.0, tf.float64)])


def test_declared_shape_or_inputs_incompatible():
    with pytest.raises(ValueError):
        tf.accumulate_n([tf.constant(0.5), tf.constant(1.5)], shape=[2, 2])
    with pytest.raises(ValueError):
        tf.accumulate_n([tf.constant([1.0, 2.0]), tf.constant([[1.0], [2.0]])])


@pytest.mark.parametrize("count", [1, 2])
def test_tensor_dtype_mismatch_is_type_error(count):
    v = tf.Variable(0.5, dtype=tf.float32)
    with pytest.raises(TypeError, match="tensor_dtype is int32, but input is of type float32"):
        tf.accumulate_n([v] * count, tensor_dtype=tf.int32)
