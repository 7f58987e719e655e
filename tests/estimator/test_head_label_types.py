"""Label dtypes the classification head takes (TF 1.x: the binary head casts bool and float
labels in [0, 1] to float; the multi-class head wants integers) and the TRAIN-mode tensors
programs log by name (`head/truediv`: the mean loss, `head/weighted_loss/Sum`: the loss)."""

import numpy as np
import pytest

import tensorflux as tf

LOGITS = np.array([[1.5], [-0.25], [0.0], [3.0]], np.float32)


def sigmoid_xent(labels, logits):
    return np.maximum(logits, 0) - logits * labels + np.log1p(np.exp(-np.abs(logits)))


def _train_spec(head, labels):
    step = tf.train.get_or_create_global_step()
    logits = tf.constant(LOGITS)
    return head.create_estimator_spec({}, tf.estimator.ModeKeys.TRAIN, logits, labels,
                                      train_op_fn=lambda loss: tf.assign_add(step, 1))


@pytest.mark.parametrize("labels", [
    np.array([[True], [False], [True], [False]]),
    np.array([[1.0], [0.0], [1.0], [0.0]], np.float32),
    np.array([1.0, 0.25, 0.5, 0.0], np.float64),     # soft labels enter the loss as given
])
def test_binary_head_takes_bool_and_float_labels(labels):
    expected = sigmoid_xent(labels.reshape(-1, 1).astype(np.float64), LOGITS)
    with tf.Graph().as_default() as g:
        # The canned estimators' reduction (SUM); the head API's default averages instead.
        spec = _train_spec(tf.estimator.BinaryClassHead(loss_reduction=tf.losses.Reduction.SUM),
                           tf.constant(labels))
        mean = g.get_tensor_by_name("head/truediv:0")
        total = g.get_tensor_by_name("head/weighted_loss/Sum:0")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            loss, mean_v, total_v = sess.run([spec.loss, mean, total])
    np.testing.assert_allclose(loss, expected.sum(), rtol=1e-5)
    np.testing.assert_allclose(total_v, expected.sum(), rtol=1e-5)
    np.testing.assert_allclose(mean_v, expected.mean(), rtol=1e-5)


def test_binary_head_eval_metrics_with_bool_labels():
    labels = np.array([[True], [False], [False], [True]])
    with tf.Graph().as_default():
        tf.train.get_or_create_global_step()
        spec = tf.estimator.BinaryClassHead().create_estimator_spec(
            {}, tf.estimator.ModeKeys.EVAL, tf.constant(LOGITS), tf.constant(labels))
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            sess.run({k: v[1] for k, v in spec.eval_metric_ops.items()})
            acc = sess.run(spec.eval_metric_ops["accuracy"][0])
            label_mean = sess.run(spec.eval_metric_ops["label/mean"][0])
    predicted = (LOGITS[:, 0] > 0)
    np.testing.assert_allclose(acc, np.mean(predicted == labels[:, 0]))
    np.testing.assert_allclose(label_mean, 0.5)


def test_binary_head_rejects_float_labels_outside_unit_interval():
    with tf.Graph().as_default():
        labels = tf.placeholder(tf.float32, [None, 1])
        spec = _train_spec(tf.estimator.BinaryClassHead(), labels)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            with pytest.raises(tf.errors.InvalidArgumentError, match="Labels must <= n_classes"):
                sess.run(spec.loss, {labels: [[1.5], [0.0], [1.0], [0.0]]})
            with pytest.raises(tf.errors.InvalidArgumentError, match="Labels must >= 0"):
                sess.run(spec.loss, {labels: [[-0.5], [0.0], [1.0], [0.0]]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="Labels must <= n_classes"):
            _train_spec(tf.estimator.BinaryClassHead(), tf.constant([[2.0], [0.0], [1.0], [0.0]]))


def test_multiclass_head_still_wants_integer_labels():
    with tf.Graph().as_default():
        tf.train.get_or_create_global_step()
        with pytest.raises(ValueError, match="Labels dtype should be integer"):
            tf.estimator.MultiClassHead(3).create_estimator_spec(
                {}, tf.estimator.ModeKeys.EVAL, tf.zeros([2, 3]), tf.constant([[True], [False]]))


def test_mean_loss_only_for_sum_reduction():
    with tf.Graph().as_default() as g:
        _train_spec(tf.estimator.BinaryClassHead(
            loss_reduction=tf.losses.Reduction.SUM_OVER_BATCH_SIZE),
            tf.constant([[1], [0], [1], [0]]))
        with pytest.raises(KeyError):
            g.get_tensor_by_name("head/truediv:0")
