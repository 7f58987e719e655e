"""The TF 1.15 head API (BinaryClassHead, MultiClassHead, RegressionHead) and the canned
estimators that take a head (LinearEstimator, DNNEstimator, BaselineEstimator, ...)."""

import numpy as np
import pytest

import tensorflux as tf

RNG = np.random.RandomState(3)
X = RNG.randn(120, 2).astype(np.float32)
COLUMNS = [tf.feature_column.numeric_column("x", shape=(2,))]


def inputs(y, batch_size=40, epochs=None, shuffle=True, x=X):
    return tf.estimator.inputs.numpy_input_fn({"x": x}, y, batch_size=batch_size,
                                              num_epochs=epochs, shuffle=shuffle)


def softmax(z):
    e = np.exp(z - z.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


def test_linear_estimator_with_multiclass_head_averages_the_loss(tmp_path):
    y = np.digitize(X[:, 0], [-0.5, 0.5]).astype(np.int64)
    est = tf.estimator.LinearEstimator(tf.estimator.MultiClassHead(3), COLUMNS,
                                       model_dir=str(tmp_path))
    est.train(inputs(y), steps=10)
    w = est.get_variable_value("linear/linear_model/x/weights")
    b = est.get_variable_value("linear/linear_model/bias_weights")
    probs = softmax(X @ w + b)
    xent = -np.log(probs[np.arange(120), y])
    result = est.evaluate(inputs(y, epochs=1, shuffle=False))
    # SUM_OVER_BATCH_SIZE: the loss of a batch is its mean, so loss == average_loss here.
    np.testing.assert_allclose(result["loss"], xent.mean(), rtol=1e-5)
    np.testing.assert_allclose(result["average_loss"], xent.mean(), rtol=1e-5)
    np.testing.assert_allclose(result["accuracy"], np.mean(probs.argmax(1) == y))
    with pytest.raises(ValueError, match="n_classes must be > 2"):
        tf.estimator.MultiClassHead(2)


def test_binary_head_thresholds_and_custom_loss(tmp_path):
    y = (X[:, 1] > 0).astype(np.int64)

    def loss_fn(labels, logits):
        return tf.square(tf.sigmoid(logits) - labels)   # a Brier score per example

    head = tf.estimator.BinaryClassHead(thresholds=[0.3, 0.7], loss_fn=loss_fn)
    est = tf.estimator.BaselineEstimator(head, model_dir=str(tmp_path),
                                         optimizer=tf.train.GradientDescentOptimizer(0.5))
    est.train(inputs(y), steps=5)
    p = 1 / (1 + np.exp(-est.get_variable_value("baseline/bias")[0]))
    result = est.evaluate(inputs(y, batch_size=120, epochs=1, shuffle=False))
    np.testing.assert_allclose(result["average_loss"], np.mean((p - y) ** 2), rtol=1e-5)
    for t in (0.3, 0.7):
        predicted = int(p >= t)
        np.testing.assert_allclose(result[f"accuracy/positive_threshold_{t:g}"],
                                   np.mean(y == predicted))
        np.testing.assert_allclose(result[f"recall/positive_threshold_{t:g}"], predicted)
    with pytest.raises(ValueError, match="labels and logits"):
        tf.estimator.BinaryClassHead(loss_fn=lambda y, z: y)
    with pytest.raises(ValueError, match="thresholds"):
        tf.estimator.BinaryClassHead(thresholds=[1.5])


def test_dnn_estimator_with_regression_head_inverse_link(tmp_path):
    y = np.exp(0.5 * X[:, :1]).astype(np.float32)
    head = tf.estimator.RegressionHead(inverse_link_fn=tf.exp)
    est = tf.estimator.DNNEstimator(head, [4], COLUMNS, model_dir=str(tmp_path))
    est.train(inputs(y), steps=3)
    pred = next(est.predict(inputs(None, epochs=1, shuffle=False, x=X[:1])))
    assert sorted(pred) == ["logits", "predictions"]
    np.testing.assert_allclose(pred["predictions"], np.exp(pred["logits"]), rtol=1e-6)


def test_create_estimator_spec_with_an_optimizer():
    head = tf.estimator.RegressionHead(label_dimension=2)
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        w = tf.Variable([[1.0, 2.0]])
        logits = tf.ones([3, 1]) * w
        labels = tf.zeros([3, 2])
        spec = head.create_estimator_spec({}, "train", logits, labels,
                                          optimizer=tf.train.GradientDescentOptimizer(0.1))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            loss, _ = sess.run([spec.loss, spec.train_op])
            np.testing.assert_allclose(loss, np.mean([1.0, 4.0]))
            np.testing.assert_allclose(sess.run(w), [[1.0 - 0.1 * 1.0, 2.0 - 0.1 * 2.0]],
                                       rtol=1e-6)
            assert sess.run(step) == 1
        with pytest.raises(ValueError, match="Exactly one of optimizer and train_op_fn"):
            head.create_estimator_spec({}, "train", logits, labels)
