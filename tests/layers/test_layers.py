"""tf.layers, tf.losses and tf.metrics against NumPy references."""

import numpy as np
import pytest

import tensorflux as tf

RNG = np.random.RandomState(0)


def _run(fetches, feed=None, init_local=False):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        if init_local:
            sess.run(tf.local_variables_initializer())
        return sess.run(fetches, feed)


def test_dense_matches_numpy_and_names_variables():
    x = RNG.rand(4, 3).astype(np.float32)
    with tf.Graph().as_default():
        y = tf.layers.dense(tf.constant(x), 5, activation=tf.nn.relu,
                            bias_initializer=tf.constant_initializer(0.5))
        y2 = tf.layers.dense(tf.constant(x), 2, name="head")
        names = [v.op.name for v in tf.trainable_variables()]
        assert names == ["dense/kernel", "dense/bias", "head/kernel", "head/bias"]
        kernel = tf.trainable_variables()[0]
        got, k = _run([y, kernel])
        assert y.shape.as_list() == [4, 5] and y2.shape.as_list() == [4, 2]
        np.testing.assert_allclose(got, np.maximum(x @ k + 0.5, 0), rtol=1e-5)


def test_dense_reuse_and_rank3_inputs():
    with tf.Graph().as_default():
        a = tf.placeholder(tf.float32, [None, 7, 3])
        out = tf.layers.dense(a, 4, name="shared")
        again = tf.layers.dense(a, 4, name="shared", reuse=True)
        assert len(tf.trainable_variables()) == 2
        assert out.shape.as_list() == [None, 7, 4]
        value = RNG.rand(2, 7, 3)
        first, second = _run([out, again], {a: value})
        np.testing.assert_allclose(first, second)
        with pytest.raises(ValueError):
            tf.layers.dense(a, 4, name="shared")


def test_conv_pool_flatten_shapes_and_values():
    x = RNG.rand(2, 6, 6, 3).astype(np.float32)
    with tf.Graph().as_default():
        conv = tf.layers.conv2d(tf.constant(x), 4, 3, padding="valid", use_bias=False)
        pooled = tf.layers.max_pooling2d(conv, 2, 2)
        avg = tf.layers.average_pooling2d(conv, 2, 2)
        flat = tf.layers.flatten(pooled)
        assert conv.shape.as_list() == [2, 4, 4, 4]
        assert pooled.shape.as_list() == [2, 2, 2, 4] and flat.shape.as_list() == [2, 16]
        kernel = tf.trainable_variables()[0]
        c, p, a, f, k = _run([conv, pooled, avg, flat, kernel])
    ref = np.zeros((2, 4, 4, 4), np.float32)
    for i in range(4):
        for j in range(4):
            ref[:, i, j, :] = np.tensordot(x[:, i:i + 3, j:j + 3, :], k, axes=3)
    np.testing.assert_allclose(c, ref, rtol=1e-4, atol=1e-5)
    # Pooling is checked against the conv output it pooled, so the conv's summation order
    # (which differs between BLAS builds) does not enter the pooling tolerance.
    windows = c.reshape(2, 2, 2, 2, 2, 4)
    np.testing.assert_array_equal(p, windows.max(axis=(2, 4)))
    np.testing.assert_allclose(a, windows.mean(axis=(2, 4)), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(f, p.reshape(2, -1))


def test_dropout_training_flag():
    with tf.Graph().as_default():
        x = tf.ones([1000])
        training = tf.placeholder(tf.bool, [])
        y = tf.layers.dropout(x, rate=0.5, training=training, seed=1)
        static = tf.layers.dropout(x, rate=0.5, training=False)
        with tf.Session() as sess:
            off = sess.run(y, {training: False})
            on = sess.run(y, {training: True})
            np.testing.assert_array_equal(off, 1.0)
            np.testing.assert_array_equal(sess.run(static), 1.0)
            assert set(np.unique(on)) <= {0.0, 2.0} and 350 < np.sum(on == 0) < 650


def test_batch_normalization_training_and_inference():
    x = RNG.rand(8, 3).astype(np.float32) * 4 + 1
    with tf.Graph().as_default():
        inputs = tf.constant(x)
        training = tf.placeholder(tf.bool, [])
        y = tf.layers.batch_normalization(inputs, momentum=0.5, training=training)
        updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
        assert len(updates) == 2
        mean_var = [v for v in tf.global_variables() if "moving_mean" in v.name][0]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            out, _ = sess.run([y, updates], {training: True})
            ref = (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-3)
            np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4)
            np.testing.assert_allclose(sess.run(mean_var), 0.5 * x.mean(0), rtol=1e-5)
            inference = sess.run(y, {training: False})
            moving_var = 0.5 * 1.0 + 0.5 * x.var(0)
            ref = (x - 0.5 * x.mean(0)) / np.sqrt(moving_var + 1e-3)
            np.testing.assert_allclose(inference, ref, rtol=1e-4, atol=1e-4)


def test_losses_match_numpy():
    logits = RNG.randn(5, 4).astype(np.float32)
    labels = np.array([0, 3, 1, 1, 2])
    onehot = np.eye(4, dtype=np.float32)[labels]
    weights = np.array([1.0, 0.0, 2.0, 1.0, 0.0], np.float32)
    pred = RNG.rand(5, 4).astype(np.float32)
    target = RNG.rand(5, 4).astype(np.float32)
    log_softmax = logits - np.log(np.exp(logits).sum(1, keepdims=True))
    xent = -log_softmax[np.arange(5), labels]
    with tf.Graph().as_default():
        sparse = tf.losses.sparse_softmax_cross_entropy(labels, logits, weights=weights)
        dense = tf.losses.softmax_cross_entropy(onehot, logits)
        mse = tf.losses.mean_squared_error(target, pred)
        huber = tf.losses.huber_loss(target * 3, pred, delta=0.5)
        sigmoid = tf.losses.sigmoid_cross_entropy(onehot, logits)
        absdiff = tf.losses.absolute_difference(target, pred, reduction=tf.losses.Reduction.SUM)
        total = tf.losses.get_total_loss()
        got = _run([sparse, dense, mse, huber, sigmoid, absdiff, total])
    np.testing.assert_allclose(got[0], (xent * weights).sum() / 3, rtol=1e-5)
    np.testing.assert_allclose(got[1], xent.mean(), rtol=1e-5)
    np.testing.assert_allclose(got[2], ((pred - target) ** 2).mean(), rtol=1e-5)
    err = np.abs(pred - target * 3)
    ref_huber = np.where(err <= 0.5, 0.5 * err ** 2, 0.5 * 0.25 + 0.5 * (err - 0.5))
    np.testing.assert_allclose(got[3], ref_huber.mean(), rtol=1e-5)
    ref_sig = np.maximum(logits, 0) - logits * onehot + np.log1p(np.exp(-np.abs(logits)))
    np.testing.assert_allclose(got[4], ref_sig.mean(), rtol=1e-5)
    np.testing.assert_allclose(got[5], np.abs(pred - target).sum(), rtol=1e-5)
    np.testing.assert_allclose(got[6], sum(got[:6]), rtol=1e-5)


def test_regularization_losses_are_collected():
    with tf.Graph().as_default():
        x = tf.ones([2, 3])
        tf.layers.dense(x, 4, kernel_regularizer=lambda w: 0.5 * tf.reduce_sum(w * w))
        reg = tf.losses.get_regularization_losses()
        assert len(reg) == 1
        kernel = tf.trainable_variables()[0]
        value, k = _run([tf.losses.get_regularization_loss(), kernel])
        np.testing.assert_allclose(value, 0.5 * (k * k).sum(), rtol=1e-5)


def test_metrics_stream_over_batches():
    labels = [np.array([1, 0, 1, 1]), np.array([0, 0, 1, 0])]
    preds = [np.array([1, 1, 1, 0]), np.array([0, 0, 1, 1])]
    with tf.Graph().as_default():
        y = tf.placeholder(tf.int64, [None])
        p = tf.placeholder(tf.int64, [None])
        acc, acc_update = tf.metrics.accuracy(y, p)
        prec, prec_update = tf.metrics.precision(y, p)
        rec, rec_update = tf.metrics.recall(y, p)
        mean, mean_update = tf.metrics.mean(tf.cast(p, tf.float32))
        assert all("accuracy" in v.op.name or "precision" in v.op.name or
                   "recall" in v.op.name or "mean" in v.op.name for v in tf.local_variables())
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            for yv, pv in zip(labels, preds):
                sess.run([acc_update, prec_update, rec_update, mean_update], {y: yv, p: pv})
            got = sess.run([acc, prec, rec, mean])
    all_y, all_p = np.concatenate(labels), np.concatenate(preds)
    tp = np.sum((all_y == 1) & (all_p == 1))
    np.testing.assert_allclose(got[0], np.mean(all_y == all_p))
    np.testing.assert_allclose(got[1], tp / np.sum(all_p == 1))
    np.testing.assert_allclose(got[2], tp / np.sum(all_y == 1))
    np.testing.assert_allclose(got[3], all_p.mean())


def test_auc_of_separable_scores():
    with tf.Graph().as_default():
        labels = tf.constant([0, 0, 1, 1])
        scores = tf.constant([0.1, 0.4, 0.35, 0.8])
        auc, update = tf.metrics.auc(labels, scores, num_thresholds=1000)
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            sess.run(update)
            assert abs(sess.run(auc) - 0.75) < 0.01
