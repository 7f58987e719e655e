"""scatter_nd edge cases: string updates, empty outputs, the non-aliasing add and variable
scatters whose indices are deeper than the variable (checked at run time, as TF does)."""

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.ops.array import tensor_scatter


@pytest.fixture
def sess():
    with tf.Graph().as_default(), tf.Session() as session:
        yield session


def test_string_scatter_fills_empty_and_concatenates_duplicates(sess):
    out = sess.run(tf.scatter_nd([[2], [0], [2]], tf.constant(["x", "yy", "z"]), [4]))
    assert out[0] == b"yy" and out[1] == b"" and out[3] == b""
    assert out[2] in (b"xz", b"zx")


def test_empty_output_with_nothing_to_scatter_is_empty(sess):
    out = sess.run(tf.scatter_nd(tf.zeros([0], tf.int32), tf.zeros([0], tf.int32), [0]))
    assert out.shape == (0,) and out.dtype == np.int32
    out = sess.run(tf.scatter_nd(tf.zeros([0, 1], tf.int32), tf.zeros([0, 3]), [0, 3]))
    assert out.shape == (0, 3)


def test_empty_output_with_updates_fails_at_run_time(sess):
    indices = tf.placeholder(tf.int32)
    updates = tf.placeholder(tf.float32)
    for scatter in (tf.scatter_nd(indices, updates, [0, 2]),
                    tensor_scatter.scatter_nd_non_aliasing_add(tf.zeros([0, 2]), indices,
                                                               updates)):
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="Indices and updates specified for empty output"):
            sess.run(scatter, {indices: np.zeros([1, 1], np.int32),
                               updates: np.ones([1, 2], np.float32)})


def test_non_aliasing_add_matches_numpy_and_keeps_its_input(sess):
    base = np.arange(12, dtype=np.float64).reshape(3, 4)
    indices = np.array([[2], [0], [2]])
    updates = np.array([[1.0, 2, 3, 4], [5, 6, 7, 8], [0.5, 0.5, 0.5, 0.5]])
    source = tf.constant(base)
    result, after = sess.run([tensor_scatter.scatter_nd_non_aliasing_add(source, indices,
                                                                         updates), source])
    expected = base.copy()
    np.add.at(expected, indices[:, 0], updates)
    np.testing.assert_array_equal(result, expected)
    np.testing.assert_array_equal(after, base)
    flags = tensor_scatter.scatter_nd_non_aliasing_add(
        tf.constant([False, True, False]), [[0], [0]], tf.constant([True, True]))
    assert sess.run(flags).tolist() == [True, True, False]


def test_non_aliasing_add_gradient_passes_input_and_gathers_updates(sess):
    source = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    updates = tf.constant([10.0, 20.0])
    out = tensor_scatter.scatter_nd_non_aliasing_add(source, [[1, 0], [0, 1]], updates)
    weights = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    d_source, d_updates = tf.gradients(tf.reduce_sum(out * weights), [source, updates])
    d_source, d_updates = sess.run([d_source, d_updates])
    np.testing.assert_array_equal(d_source, [[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(d_updates, [3.0, 2.0])


def test_scatter_nd_update_into_a_scalar_variable_fails_at_run_time(sess):
    scalar = tf.Variable(1.5)
    update = tf.scatter_nd_update(scalar, [[0]], [0.25])  # built: TF checks at run time
    assert update.shape.as_list() == []
    sess.run(scalar.initializer)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Output must be at least 1-D"):
        sess.run(update)
    assert sess.run(scalar) == 1.5
    vector = tf.Variable([1.0, 2.0])
    deep = tf.scatter_nd_add(vector, [[0, 0]], [1.0])
    sess.run(vector.initializer)
    with pytest.raises(tf.errors.InvalidArgumentError, match="indices"):
        sess.run(deep)
