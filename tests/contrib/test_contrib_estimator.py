"""tf.contrib.estimator: heads (losses against NumPy), head-taking estimators, extenders,
clip_gradients_by_norm, replicate_model_fn and the early-stopping aliases."""

import itertools

import numpy as np
import pytest

import tensorflux as tf

ce = tf.contrib.estimator
RNG = np.random.RandomState(0)
X = RNG.randn(120, 2).astype(np.float32)
# Three labels per row: x0 > 0, x1 > 0, x0 + x1 > 0.
Y_MULTI = np.stack([X[:, 0] > 0, X[:, 1] > 0, X.sum(1) > 0], axis=1).astype(np.int64)
COLUMNS = [tf.feature_column.numeric_column("x", shape=(2,))]
LOGITS = np.array([[1.0, -2.0, 0.5], [-0.3, 0.8, 2.0]], np.float32)


def inputs(x, y=None, batch_size=40, epochs=None, shuffle=True):
    return tf.estimator.inputs.numpy_input_fn(x, y, batch_size=batch_size, num_epochs=epochs,
                                              shuffle=shuffle)


def _eval_loss(head, logits, labels, features=None):
    spec = head.create_estimator_spec(features or {"x": tf.zeros([2, 2])},
                                      tf.estimator.ModeKeys.EVAL, tf.constant(logits),
                                      labels=labels)
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        return sess.run(spec.loss), spec


def _sigmoid_ce(z, y):
    return np.maximum(z, 0) - z * y + np.log1p(np.exp(-np.abs(z)))


def test_multi_label_head_loss_predictions_and_labels_forms():
    labels = np.array([[1, 0, 1], [0, 0, 1]], np.int64)
    expected = np.mean(np.mean(_sigmoid_ce(LOGITS, labels), axis=1))
    head = ce.multi_label_head(3, thresholds=[0.5], classes_for_class_based_metrics=[2])
    assert head.logits_dimension == 3
    loss, spec = _eval_loss(head, LOGITS, tf.constant(labels))
    assert loss == pytest.approx(expected, rel=1e-6)
    assert sorted(spec.eval_metric_ops) == [
        "accuracy/positive_threshold_0.5", "auc", "auc/class2", "auc_precision_recall",
        "auc_precision_recall/class2", "average_loss", "precision/positive_threshold_0.5",
        "probability_mean/class2", "recall/positive_threshold_0.5"]
    with tf.Graph().as_default():
        sparse = tf.SparseTensor([[0, 0], [0, 1], [1, 0]], np.array([0, 2, 2], np.int64), [2, 2])
        loss_sparse, _ = _eval_loss(head, LOGITS, sparse)
    assert loss_sparse == pytest.approx(expected, rel=1e-6)
    with tf.Graph().as_default():
        vocab_head = ce.multi_label_head(3, label_vocabulary=["a", "b", "c"])
        sparse = tf.SparseTensor([[0, 0], [0, 1], [1, 0]], ["a", "c", "c"], [2, 2])
        loss_vocab, _ = _eval_loss(vocab_head, LOGITS, sparse)
    assert loss_vocab == pytest.approx(expected, rel=1e-6)
    with tf.Graph().as_default():
        spec = head.create_estimator_spec({}, tf.estimator.ModeKeys.PREDICT, tf.constant(LOGITS))
        with tf.Session() as sess:
            probs, classes = sess.run([spec.predictions["probabilities"],
                                       spec.export_outputs["serving_default"].classes])
    np.testing.assert_allclose(probs, 1 / (1 + np.exp(-LOGITS)), rtol=1e-6)
    assert classes.tolist() == [[b"0", b"1", b"2"]] * 2


def test_multi_label_head_weights_and_bad_labels():
    labels = np.array([[1, 0, 1], [0, 0, 1]], np.int64)
    w = np.array([2.0, 0.5], np.float32)
    head = ce.multi_label_head(3, weight_column="w")
    loss, _ = _eval_loss(head, LOGITS, tf.constant(labels), {"w": tf.constant(w)})
    per_example = np.mean(_sigmoid_ce(LOGITS, labels), axis=1)
    assert loss == pytest.approx(np.sum(per_example * w) / 2, rel=1e-6)
    with tf.Graph().as_default():
        with pytest.raises(tf.errors.InvalidArgumentError, match="0 or 1"):
            _eval_loss(head, LOGITS, tf.constant([[2, 0, 1], [0, 0, 1]], tf.int64),
                       {"w": tf.constant(w)})
    with pytest.raises(ValueError, match="n_classes"):
        ce.multi_label_head(1)
    with pytest.raises(ValueError, match="thresholds"):
        ce.multi_label_head(3, thresholds=[1.5])
    with pytest.raises(ValueError, match="label_vocabulary"):
        ce.multi_label_head(3, label_vocabulary=["a"])
    with pytest.raises(ValueError, match="classes_for_class_based_metrics"):
        ce.multi_label_head(3, classes_for_class_based_metrics=[3])


def test_regression_heads_losses():
    logits = np.array([[0.5], [-1.0], [2.0]], np.float32)
    labels = np.array([[1.0], [0.0], [3.0]], np.float32)
    loss, _ = _eval_loss(ce.regression_head(), logits, tf.constant(labels))
    assert loss == pytest.approx(np.mean((logits - labels) ** 2), rel=1e-6)
    stirling = np.where(labels > 1, labels * np.log(np.maximum(labels, 1)) - labels
                        + 0.5 * np.log(2 * np.pi * np.maximum(labels, 1)), 0)
    poisson = np.exp(logits) - labels * logits + stirling
    with tf.Graph().as_default():
        loss, spec = _eval_loss(ce.poisson_regression_head(), logits, tf.constant(labels))
        with tf.Session() as sess:
            preds = sess.run(spec.predictions["predictions"])
    assert loss == pytest.approx(np.mean(poisson), rel=1e-5)
    np.testing.assert_allclose(preds, np.exp(logits), rtol=1e-6)
    targets = np.array([[0.2], [1.0], [0.0]], np.float32)
    with tf.Graph().as_default():
        loss, _ = _eval_loss(ce.logistic_regression_head(), logits, tf.constant(targets))
    assert loss == pytest.approx(np.mean(_sigmoid_ce(logits, targets)), rel=1e-6)
    with tf.Graph().as_default():
        with pytest.raises(tf.errors.InvalidArgumentError, match="range"):
            _eval_loss(ce.logistic_regression_head(), logits, tf.constant(targets + 1))
    assert isinstance(ce.binary_classification_head(), tf.estimator.BinaryClassHead)
    assert ce.multi_class_head(4).logits_dimension == 4
    with pytest.raises(ValueError, match="n_classes"):
        ce.multi_class_head(2)


def test_dnn_estimator_with_multi_label_head_trains(tmp_path):
    est = ce.DNNEstimator(ce.multi_label_head(3), hidden_units=[8], feature_columns=COLUMNS,
                          model_dir=str(tmp_path), optimizer=tf.train.AdamOptimizer(0.05),
                          config=tf.estimator.RunConfig(tf_random_seed=1))
    first = est.evaluate(inputs({"x": X}, Y_MULTI, epochs=1, shuffle=False), steps=1)
    est.train(inputs({"x": X}, Y_MULTI), steps=150)
    result = est.evaluate(inputs({"x": X}, Y_MULTI, epochs=1, shuffle=False))
    assert result["loss"] < 0.5 * first["loss"]
    assert result["auc"] > 0.95
    probs = np.stack([p["probabilities"] for p in est.predict(
        inputs({"x": X[:20]}, epochs=1, shuffle=False))])
    assert ((probs > 0.5) == Y_MULTI[:20]).mean() > 0.9


def test_linear_estimator_is_core(tmp_path):
    assert ce.LinearEstimator is tf.estimator.LinearEstimator
    assert ce.DNNLinearCombinedEstimator is tf.estimator.DNNLinearCombinedEstimator
    assert ce.stop_if_no_decrease_hook is tf.estimator.experimental.stop_if_no_decrease_hook
    assert ce.make_early_stopping_hook is tf.estimator.experimental.make_early_stopping_hook


def _model_fn(features, labels, mode):
    w = tf.get_variable("w", [2, 1], initializer=tf.zeros_initializer())
    pred = tf.matmul(features["x"], w)
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={"y": pred}, export_outputs={
            "serving_default": tf.estimator.export.PredictOutput({"y": pred})})
    loss = tf.losses.mean_squared_error(labels, pred)
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                      predictions={"y": pred})


def test_add_metrics_and_forward_features(tmp_path):
    y = X @ np.array([[1.0], [-1.0]], np.float32)
    base = tf.estimator.Estimator(_model_fn, model_dir=str(tmp_path))
    base.train(inputs({"x": X}, y), steps=5)

    def metric_fn(labels, predictions, features):
        return {"label_mean": tf.metrics.mean(labels),
                "abs_err": tf.metrics.mean(tf.abs(labels - predictions["y"])),
                "x0": tf.metrics.mean(features["x"][:, 0])}

    est = ce.add_metrics(base, metric_fn)
    assert est.model_dir == base.model_dir
    result = est.evaluate(inputs({"x": X}, y, batch_size=120, epochs=1, shuffle=False))
    w = base.get_variable_value("w")
    assert result["label_mean"] == pytest.approx(y.mean(), rel=1e-5)
    assert result["abs_err"] == pytest.approx(np.abs(y - X @ w).mean(), rel=1e-5)
    assert result["x0"] == pytest.approx(X[:, 0].mean(), rel=1e-4, abs=1e-6)
    with pytest.raises(ValueError, match="not expected args"):
        ce.add_metrics(base, lambda labels, extra: {})

    ids = np.arange(6, dtype=np.int64)
    fwd = ce.forward_features(base, "id")
    preds = list(fwd.predict(inputs({"x": X[:6], "id": ids}, epochs=1, batch_size=3,
                                    shuffle=False)))
    assert [p["id"] for p in preds] == list(ids)
    np.testing.assert_allclose([p["y"][0] for p in preds], (X[:6] @ w)[:, 0], rtol=1e-6)
    with pytest.raises(TypeError, match="keys"):
        ce.forward_features(base, 3)
    with pytest.raises(ValueError, match="should be in features"):
        list(ce.forward_features(base, "nope").predict(inputs({"x": X[:3]}, epochs=1)))


def test_clip_gradients_by_norm():
    v = tf.Variable([0.0, 0.0])
    loss = tf.reduce_sum(v * tf.constant([3.0, 4.0]))  # gradient [3, 4], norm 5
    opt = ce.clip_gradients_by_norm(tf.train.GradientDescentOptimizer(1.0), 1.0)
    train = opt.minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        np.testing.assert_allclose(sess.run(v), [-0.6, -0.8], rtol=1e-6)
    with pytest.raises(TypeError, match="Optimizer"):
        ce.clip_gradients_by_norm("sgd", 1.0)


def test_replicate_model_fn_one_tower(tmp_path):
    y = X @ np.array([[1.0], [-1.0]], np.float32)

    def model_fn(features, labels, mode, params):
        w = tf.get_variable("w", [2, 1], initializer=tf.zeros_initializer())
        pred = tf.matmul(features["x"], w)
        loss = tf.losses.mean_squared_error(labels, pred)
        opt = ce.TowerOptimizer(tf.train.GradientDescentOptimizer(params["lr"]))
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=opt.minimize(
            loss, global_step=tf.train.get_global_step()))

    est = tf.estimator.Estimator(ce.replicate_model_fn(model_fn), model_dir=str(tmp_path),
                                 params={"lr": 0.2})
    est.train(inputs({"x": X}, y), steps=100)
    np.testing.assert_allclose(est.get_variable_value("w").ravel(), [1.0, -1.0], atol=1e-2)
    with pytest.raises(ValueError, match="one tower"):
        ce.replicate_model_fn(model_fn, devices=["/cpu:0", "/cpu:1"])
    with pytest.raises(ValueError, match="reduced"):
        ce.replicate_model_fn(model_fn, loss_reduction=tf.losses.Reduction.NONE)
    with pytest.raises(tf.contrib.ContribNotProvidedError, match="tf.estimator"):
        _ = ce.dnn_logit_fn_builder
    assert callable(ce.boosted_trees_classifier_train_in_memory)


def test_multi_head_loss_metrics_predictions_and_exports():
    h1 = ce.multi_class_head(3, name="topic")
    h2 = ce.regression_head(name="score")
    head = ce.multi_head([h1, h2], head_weights=[1.0, 0.5])
    assert head.logits_dimension == 4 and head.name == "topic_score"
    logits = np.array([[1.0, 0.0, -1.0, 0.5], [0.2, 0.3, 0.1, -2.0]], np.float32)
    topic = np.array([[0], [2]], np.int64)
    score = np.array([[1.0], [-1.0]], np.float32)
    spec = head.create_estimator_spec({"x": tf.zeros([2, 1])}, tf.estimator.ModeKeys.EVAL,
                                      tf.constant(logits),
                                      {"topic": tf.constant(topic), "score": tf.constant(score)})
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        loss = sess.run(spec.loss)
        sess.run([u for _, u in spec.eval_metric_ops.values()])
        metrics = sess.run({k: v for k, (v, _) in spec.eval_metric_ops.items()})
    log_softmax = logits[:, :3] - np.log(np.exp(logits[:, :3]).sum(1, keepdims=True))
    ce_loss = -np.mean(log_softmax[[0, 1], topic[:, 0]])
    mse = np.mean((logits[:, 3:] - score) ** 2)
    assert loss == pytest.approx(ce_loss + 0.5 * mse, rel=1e-5)
    assert metrics["loss/topic"] == pytest.approx(ce_loss, rel=1e-5)
    assert metrics["loss/score"] == pytest.approx(mse, rel=1e-5)
    assert metrics["accuracy/topic"] == pytest.approx(0.5)
    assert "average_loss/score" in metrics
    with tf.Graph().as_default():
        spec = head.create_estimator_spec({}, tf.estimator.ModeKeys.PREDICT,
                                          {"topic": tf.constant(logits[:, :3]),
                                           "score": tf.constant(logits[:, 3:])})
        assert ("topic", "probabilities") in spec.predictions
        assert ("score", "predictions") in spec.predictions
        outputs = spec.export_outputs
        assert {"serving_default", "predict", "topic", "topic/classification", "topic/predict",
                "score", "score/regression", "score/predict"} <= set(outputs)
        assert outputs["serving_default"] is outputs["topic"]
        assert "score/predictions" in outputs["predict"].outputs
    with pytest.raises(ValueError, match="name"):
        ce.multi_head([ce.regression_head(), h1])
    with pytest.raises(ValueError, match="head_weights"):
        ce.multi_head([h1, h2], head_weights=[1.0])


def test_dnn_estimator_with_multi_head_trains(tmp_path):
    y_topic = (X[:, :1] > 0).astype(np.int64) + (X[:, 1:] > 0.5).astype(np.int64)
    y_score = (X[:, :1] - X[:, 1:]).astype(np.float32)
    head = ce.multi_head([ce.multi_class_head(3, name="topic"), ce.regression_head(name="score")])
    est = ce.DNNEstimator(head, hidden_units=[8], feature_columns=COLUMNS,
                          model_dir=str(tmp_path), optimizer=tf.train.AdamOptimizer(0.05),
                          config=tf.estimator.RunConfig(tf_random_seed=2))
    labels = {"topic": y_topic, "score": y_score}
    before = est.evaluate(inputs({"x": X}, labels, epochs=1, shuffle=False), steps=1)
    est.train(inputs({"x": X}, labels), steps=120)
    after = est.evaluate(inputs({"x": X}, labels, epochs=1, shuffle=False))
    assert after["loss"] < 0.5 * before["loss"]
    assert after["accuracy/topic"] > 0.85
    first = next(iter(est.predict(inputs({"x": X[:2]}, epochs=1, shuffle=False))))
    assert first[("score", "predictions")].shape == (1,)
    assert first[("topic", "probabilities")].shape == (3,)


def _sequence_data(n=64, steps=6, seed=0):
    """Token sequences of ids 0..4 with random lengths; label 1 when token 4 occurs."""
    rng = np.random.RandomState(seed)
    lengths = rng.randint(2, steps + 1, size=n)
    tokens = rng.randint(0, 4, size=(n, steps))
    has = rng.rand(n) < 0.5
    for i in np.where(has)[0]:
        tokens[i, rng.randint(0, lengths[i])] = 4
    indices = [[i, t] for i in range(n) for t in range(lengths[i])]
    values = [tokens[i, t] for i, t in indices]
    return np.array(indices, np.int64), np.array(values, np.int64), (n, steps), \
        has.astype(np.int64)[:, None]


def test_rnn_classifier_learns_a_sequence_rule(tmp_path):
    indices, values, shape, labels = _sequence_data()

    def input_fn():
        return {"tokens": tf.SparseTensor(indices, values, shape)}, tf.constant(labels)

    column = tf.feature_column.embedding_column(
        tf.contrib.feature_column.sequence_categorical_column_with_identity("tokens", 5), 4)
    est = ce.RNNClassifier([column], num_units=[8], cell_type="gru", model_dir=str(tmp_path),
                           optimizer=tf.train.AdamOptimizer(0.05),
                           config=tf.estimator.RunConfig(tf_random_seed=4))
    est.train(input_fn, steps=60)
    result = est.evaluate(input_fn, steps=1)
    assert result["accuracy"] > 0.9
    names = est.get_variable_names()
    assert "rnn/logits/dense/kernel" in names
    assert any(n.startswith("rnn/rnn/gru_cell/") for n in names)
    # A constant input_fn never ends: take one batch of predictions.
    probs = np.stack([p["probabilities"] for p in itertools.islice(est.predict(
        lambda: {"tokens": tf.SparseTensor(indices, values, shape)}), len(labels))])
    assert ((probs[:, 1] > 0.5) == labels[:, 0].astype(bool)).mean() > 0.9
    with pytest.raises(ValueError, match="rnn_cell_fn"):
        ce.RNNClassifier([column], num_units=[4], rnn_cell_fn=lambda mode: None)
    with pytest.raises(ValueError, match="cell_type"):
        ce.RNNClassifier([column], num_units=[4], cell_type="tree")
    with pytest.raises(ValueError, match="num_units"):
        ce.RNNClassifier([column])


def test_rnn_estimator_with_return_sequences_and_context(tmp_path):
    indices, values, shape, _ = _sequence_data(n=8, steps=4, seed=1)
    column = tf.feature_column.embedding_column(
        tf.contrib.feature_column.sequence_categorical_column_with_identity("tokens", 5), 3)
    context = [tf.feature_column.numeric_column("c")]
    est = ce.RNNEstimator(ce.regression_head(), [column], context_feature_columns=context,
                          num_units=[4, 3], cell_type="lstm", return_sequences=True,
                          model_dir=str(tmp_path))
    features = lambda: {"tokens": tf.SparseTensor(indices, values, shape),  # noqa: E731
                        "c": tf.ones([8, 1])}
    est.train(lambda: (features(), tf.zeros([8, 4])), steps=2)
    # Per-step logits [8, 4, 1]: the head scores each step (8 * 4 rows of one prediction).
    preds = list(itertools.islice(est.predict(features), 32))
    assert len(preds) == 32 and preds[0]["predictions"].shape == (1,)
    assert "rnn/rnn/multi_rnn_cell/cell_1/basic_lstm_cell/kernel" in est.get_variable_names()
