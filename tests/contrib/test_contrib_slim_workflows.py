"""Slim workflows: fine-tuning from a checkpoint without the logits, NCHW layers, is_training
tensors, and optimize_loss running the batch-norm updates."""

import numpy as np
import pytest

import tensorflux as tf

slim = tf.contrib.slim
RNG = np.random.RandomState(5)


def _net(images, num_classes, is_training=True):
    with slim.arg_scope([slim.conv2d], kernel_size=[3, 3], normalizer_fn=slim.batch_norm,
                        normalizer_params={"is_training": is_training}):
        net = slim.conv2d(images, 4, scope="conv1")
        net = slim.max_pool2d(net, [2, 2], scope="pool1")
        net = slim.flatten(net)
        return slim.fully_connected(net, num_classes, activation_fn=None, scope="logits")


def test_finetune_restores_all_but_logits(tmp_path):
    with tf.Graph().as_default():
        _net(tf.zeros([1, 4, 4, 1]), 10)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            saved = {v.op.name: sess.run(v) for v in tf.global_variables()}
            path = tf.train.Saver().save(sess, str(tmp_path / "pretrained.ckpt"))
    with tf.Graph().as_default():
        _net(tf.zeros([1, 4, 4, 1]), 3)  # a new head: logits shapes differ
        to_restore = slim.get_variables_to_restore(exclude=["logits"])
        assert [v.op.name for v in to_restore] == [
            "conv1/weights", "conv1/BatchNorm/beta", "conv1/BatchNorm/moving_mean",
            "conv1/BatchNorm/moving_variance"]
        init_fn = slim.assign_from_checkpoint_fn(path, to_restore)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            init_fn(sess)
            for v in to_restore:
                np.testing.assert_array_equal(sess.run(v), saved[v.op.name])
            assert sess.run(slim.get_unique_variable("logits/weights")).shape == (16, 3)


def test_train_with_init_fn_from_checkpoint(tmp_path):
    with tf.Graph().as_default():
        v = tf.Variable(7.0, name="v")
        with tf.Session() as sess:
            sess.run(v.initializer)
            path = tf.train.Saver().save(sess, str(tmp_path / "start.ckpt"))
    with tf.Graph().as_default():
        v = tf.Variable(0.0, name="v")
        loss = tf.square(v - 1.0)
        train_op = slim.learning.create_train_op(loss, tf.train.GradientDescentOptimizer(0.25))
        init_fn = slim.assign_from_checkpoint_fn(path, [v])
        final = slim.learning.train(train_op, str(tmp_path / "run"), number_of_steps=2,
                                    init_fn=init_fn, save_summaries_secs=1000,
                                    save_interval_secs=1000)
        # loss before each step: (7-1)^2 = 36, then v = 7 - 0.25*12 = 4 -> (4-1)^2 = 9
        assert final == pytest.approx(9.0)
        last = tf.train.latest_checkpoint(str(tmp_path / "run"))
        assert tf.train.load_variable(last, "v") == pytest.approx(2.5)


def test_nchw_conv_and_batch_norm_match_nhwc():
    with tf.Graph().as_default():
        xv = RNG.randn(2, 5, 5, 3).astype(np.float32)
        init = tf.constant_initializer(RNG.randn(3, 3, 3, 4).astype(np.float32))
        nhwc = slim.conv2d(tf.constant(xv), 4, 3, weights_initializer=init, scope="a",
                           normalizer_fn=slim.batch_norm)
        nchw = slim.conv2d(tf.constant(xv.transpose(0, 3, 1, 2)), 4, 3, data_format="NCHW",
                           weights_initializer=init, scope="b", normalizer_fn=slim.batch_norm,
                           normalizer_params={"data_format": "NCHW", "fused": False})
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            a, b = sess.run([nhwc, nchw])
        np.testing.assert_allclose(b.transpose(0, 2, 3, 1), a, rtol=1e-4, atol=1e-4)


def test_dropout_with_is_training_tensor():
    with tf.Graph().as_default():
        training = tf.placeholder(tf.bool, [])
        x = tf.ones([100, 10])
        y = slim.dropout(x, keep_prob=0.5, is_training=training)
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(y, {training: False}), np.ones((100, 10)))
            dropped = sess.run(y, {training: True})
        assert set(np.unique(dropped)) <= {0.0, 2.0} and 0.3 < (dropped == 0).mean() < 0.7


def test_optimize_loss_runs_batch_norm_updates():
    with tf.Graph().as_default():
        xv = RNG.randn(8, 3).astype(np.float32) + 2.0
        net = tf.contrib.layers.batch_norm(tf.constant(xv), decay=0.5)
        loss = tf.reduce_mean(tf.square(tf.contrib.layers.fully_connected(net, 1)))
        train = tf.contrib.layers.optimize_loss(loss, tf.train.get_or_create_global_step(),
                                                0.01, "Adam")
        moving_mean = slim.get_variables_by_name("moving_mean")[0]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train)
            np.testing.assert_allclose(sess.run(moving_mean), 0.5 * xv.mean(0), rtol=1e-5)
