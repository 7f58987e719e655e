"""tf.nn.compute_average_loss / scale_regularization_loss against NumPy (one replica)."""

import numpy as np
import pytest

import tensorflux as tf


@pytest.fixture(autouse=True)
def graph():
    with tf.Graph().as_default() as g:
        yield g


def test_compute_average_loss_values():
    losses = np.array([[1.0, 2.0], [3.0, 4.0], [0.5, 1.5]], np.float64)
    weights = np.array([1.0, 0.0, 2.0])
    per_example = tf.placeholder(tf.float64, [None, 2])
    plain = tf.nn.compute_average_loss(per_example)
    weighted = tf.nn.compute_average_loss(per_example, sample_weight=weights)
    weighted_col = tf.nn.compute_average_loss(per_example, sample_weight=weights[:, None])
    fixed = tf.nn.compute_average_loss(per_example, global_batch_size=10)
    with tf.Session() as sess:
        got = sess.run([plain, weighted, weighted_col, fixed], {per_example: losses})
    assert plain.dtype == tf.float64 and plain.get_shape().as_list() == []
    np.testing.assert_allclose(got[0], losses.sum() / 3)
    np.testing.assert_allclose(got[1], (losses * weights[:, None]).sum() / 3)
    np.testing.assert_allclose(got[2], (losses * weights[:, None]).sum() / 3)
    np.testing.assert_allclose(got[3], losses.sum() / 10)


def test_compute_average_loss_rejects_scalars_and_scales_regularization():
    with pytest.raises(ValueError, match="rank"):
        tf.nn.compute_average_loss(tf.constant(1.0))
    reg = tf.nn.scale_regularization_loss([0.25, 0.5, 1.0])
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(reg), 1.75)
