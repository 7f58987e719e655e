"""`reuse=True` on a layer with no name enters its un-uniquified base scope (TF1 layers)."""

import numpy as np

import tensorflux as tf


def test_dense_with_reuse_and_no_name_shares_dense_kernel():
    with tf.Graph().as_default():
        x = tf.constant(np.arange(6, dtype=np.float32).reshape(2, 3))
        first = tf.layers.dense(x, 2)
        again = tf.layers.dense(x, 2, reuse=True)
        assert [v.op.name for v in tf.global_variables()] == ["dense/kernel", "dense/bias"]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            a, b = sess.run([first, again])
        np.testing.assert_allclose(a, b)
        assert np.abs(a).sum() > 0


def test_dense_with_reuse_and_no_variables_is_a_value_error():
    with tf.Graph().as_default():
        x = tf.zeros([1, 3])
        try:
            tf.layers.dense(x, 2, reuse=True)
        except ValueError as err:
            assert "dense/kernel" in str(err)
        else:
            raise AssertionError("reusing a missing variable must fail")


def test_basic_lstm_cell_with_reuse_shares_rnn_variables():
    with tf.Graph().as_default():
        x = tf.constant(np.random.RandomState(0).rand(2, 3).astype(np.float32))
        out1, _ = tf.nn.static_rnn(tf.nn.rnn_cell.BasicLSTMCell(4), [x, x], dtype=tf.float32)
        cell = tf.nn.rnn_cell.BasicLSTMCell(4, reuse=True)
        out2, _ = tf.nn.static_rnn(cell, [x, x], dtype=tf.float32)
        names = sorted(v.op.name for v in tf.global_variables())
        assert names == ["rnn/basic_lstm_cell/bias", "rnn/basic_lstm_cell/kernel"]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            a, b = sess.run([out1[-1], out2[-1]])
        np.testing.assert_allclose(a, b)


def test_conv_and_batch_norm_with_reuse_and_no_name_share_their_variables():
    with tf.Graph().as_default():
        x = tf.constant(np.random.RandomState(1).rand(2, 5, 5, 3).astype(np.float32))
        pairs = [(tf.layers.conv2d(x, 4, 3), tf.layers.conv2d(x, 4, 3, reuse=True)),
                 (tf.layers.batch_normalization(x),
                  tf.layers.batch_normalization(x, reuse=True))]
        assert sorted(v.op.name for v in tf.global_variables()) == [
            "batch_normalization/beta", "batch_normalization/gamma",
            "batch_normalization/moving_mean", "batch_normalization/moving_variance",
            "conv2d/bias", "conv2d/kernel"]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for first, again in sess.run(pairs):
                np.testing.assert_allclose(first, again)
