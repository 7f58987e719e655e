"""contrib.learn.models (logistic/linear regression) and ops.categorical_variable vs NumPy."""

import numpy as np
import pytest

import tensorflux as tf

learn = tf.contrib.learn


def test_logistic_regression_probabilities_and_loss():
    x = np.array([[1.0, 2.0], [0.5, -1.0], [3.0, 0.0]], np.float32)
    y = np.eye(3, dtype=np.float32)[[0, 2, 1]]
    with tf.Graph().as_default():
        proba, loss = learn.models.logistic_regression(tf.constant(x), tf.constant(y),
                                                       init_mean=0.0, init_stddev=0.5)
        w, b = tf.global_variables()
        assert w.name == "logistic_regression/weights:0" and w.shape.as_list() == [2, 3]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got_p, got_loss, wv, bv = sess.run([proba, loss, w, b])
    logits = x @ wv + bv
    e = np.exp(logits - logits.max(1, keepdims=True))
    p = e / e.sum(1, keepdims=True)
    np.testing.assert_allclose(got_p, p, rtol=1e-5)
    np.testing.assert_allclose(got_loss, -np.mean(np.log((p * y).sum(1))), rtol=1e-5)


def test_linear_regression_predictions_and_mse():
    x = np.array([[1.0, 2.0], [0.5, -1.0]], np.float32)
    y = np.array([1.0, -2.0], np.float32)
    with tf.Graph().as_default():
        pred, loss = learn.models.linear_regression(tf.constant(x), tf.constant(y))
        w, b = tf.global_variables()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got_pred, got_loss, wv, bv = sess.run([pred, loss, w, b])
    expected = (x @ wv + bv)[:, 0]
    np.testing.assert_allclose(got_pred, expected, rtol=1e-5)
    np.testing.assert_allclose(got_loss, np.mean((expected - y) ** 2), rtol=1e-5)


def test_categorical_variable_rows():
    ids = np.array([[0, 3], [2, 2]], np.int64)
    with tf.Graph().as_default():
        out = learn.ops.categorical_variable(tf.constant(ids), n_classes=4, embedding_size=2,
                                             name="words")
        (table,) = tf.global_variables()
        assert table.name == "words/words_embeddings:0"
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got, tv = sess.run([out, table])
    np.testing.assert_array_equal(got, tv[ids])
    with pytest.raises(ValueError, match="n_classes"):
        learn.ops.categorical_variable(tf.constant(ids), 0, 2, "bad")


def test_internal_module_paths_alias_the_public_names():
    from tensorflux.contrib.learn.python.learn import learn_runner, metric_spec
    from tensorflux.contrib.learn.python.learn.datasets import mnist
    from tensorflux.contrib.learn.python.learn.estimators import model_fn, run_config

    assert model_fn.ModelFnOps is learn.ModelFnOps and model_fn.ModeKeys is learn.ModeKeys
    assert run_config.RunConfig is learn.RunConfig
    assert metric_spec.MetricSpec is learn.MetricSpec
    assert learn_runner.run is learn.learn_runner.run
    assert mnist is learn.datasets.mnist
    assert learn.python.learn.DNNClassifier is learn.DNNClassifier
