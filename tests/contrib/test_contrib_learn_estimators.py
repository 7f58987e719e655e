"""contrib.learn estimators over tf.estimator: fit/evaluate/predict with NumPy x/y, contrib's
metric names and mean loss (checked against NumPy from the predictions and the checkpoint),
custom model_fns returning ModelFnOps or tuples, MetricSpec, SKCompat, gradient clipping."""

import numpy as np
import pytest

import tensorflux as tf

learn = tf.contrib.learn
layers = tf.contrib.layers


def _blobs(n=60, seed=0):
    rng = np.random.RandomState(seed)
    y = rng.randint(0, 3, n)
    centers = np.array([[0.0, 0.0], [4.0, 0.0], [0.0, 4.0]])
    return centers[y] + 0.3 * rng.randn(n, 2), y


def test_dnn_classifier_fit_evaluate_predict_iris_style(tmp_path):
    x, y = _blobs()
    clf = learn.DNNClassifier(hidden_units=[8], n_classes=3, model_dir=str(tmp_path),
                              feature_columns=[layers.real_valued_column("", dimension=2)],
                              optimizer=tf.train.AdamOptimizer(0.1),
                              config=learn.RunConfig(tf_random_seed=1))
    clf.fit(x=x, y=y, steps=30)
    results = clf.evaluate(x=x, y=y)
    assert set(results) == {"loss", "accuracy", "global_step"}
    assert results["global_step"] == 30
    proba = clf.predict_proba(x, as_iterable=False)
    classes = list(clf.predict(x, as_iterable=True))
    np.testing.assert_array_equal(classes, np.argmax(proba, axis=1))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-5)
    # contrib's loss is the mean cross entropy (one batch: all of x).
    expected_loss = -np.mean(np.log(proba[np.arange(len(y)), y]))
    np.testing.assert_allclose(results["loss"], expected_loss, rtol=1e-4)
    np.testing.assert_allclose(results["accuracy"], np.mean(np.asarray(classes) == y),
                               rtol=1e-6)
    assert results["accuracy"] > 0.9
    both = list(clf.predict(x[:2], outputs=["classes", "probabilities"]))
    assert set(both[0]) == {"classes", "probabilities"}
    assert both[1]["classes"] == classes[1]


def test_linear_regressor_scores_match_checkpoint_weights(tmp_path):
    rng = np.random.RandomState(0)
    x = rng.randn(40, 3)
    y = x @ np.array([1.0, -2.0, 0.5]) + 0.3
    reg = learn.LinearRegressor(feature_columns=learn.infer_real_valued_columns_from_input(x),
                                model_dir=str(tmp_path),
                                optimizer=tf.train.GradientDescentOptimizer(0.1))
    reg.fit(x=x, y=y, steps=40, batch_size=8)
    scores = reg.predict(x, as_iterable=False)
    w = reg.get_variable_value("linear/linear_model/real_valued/weights")
    b = reg.get_variable_value("linear/linear_model/bias_weights")
    np.testing.assert_allclose(scores, (x.astype(np.float32) @ w + b)[:, 0], rtol=1e-4,
                               atol=1e-5)
    results = reg.evaluate(x=x, y=y)
    assert set(results) == {"loss", "global_step"}
    np.testing.assert_allclose(results["loss"], np.mean((scores - y) ** 2), rtol=1e-4)
    assert results["loss"] < 0.1


def test_binary_linear_classifier_has_contrib_metric_names(tmp_path):
    x, y = _blobs(40, seed=1)
    y = (y == 0).astype(np.int64)
    clf = learn.LinearClassifier(feature_columns=[layers.real_valued_column("", 2)],
                                 model_dir=str(tmp_path))
    clf.fit(x=x, y=y, steps=5)
    results = clf.evaluate(x=x, y=y)
    assert {"auc", "accuracy/baseline_label_mean", "labels/actual_label_mean",
            "labels/prediction_mean", "precision/positive_threshold_0.500000_mean",
            "recall/positive_threshold_0.500000_mean"} <= set(results)
    np.testing.assert_allclose(results["labels/actual_label_mean"], y.mean(), rtol=1e-6)
    proba = clf.predict_proba(x, as_iterable=False)
    assert proba.shape == (40, 2)
    np.testing.assert_allclose(results["labels/prediction_mean"], proba[:, 1].mean(),
                               rtol=1e-4)


def test_wide_and_deep_with_old_columns_and_input_fn(tmp_path):
    rng = np.random.RandomState(0)
    n = 32
    words = np.array(["red", "green", "blue"])[rng.randint(0, 3, n)]
    age = rng.uniform(20, 60, n).astype(np.float32)
    label = (words == "red").astype(np.int64)

    def input_fn():
        return {"color": tf.constant(words), "age": tf.constant(age)}, tf.constant(label)

    color = layers.sparse_column_with_hash_bucket("color", 20)
    age_b = layers.bucketized_column(layers.real_valued_column("age"), [30.0, 40.0, 50.0])
    clf = learn.DNNLinearCombinedClassifier(
        model_dir=str(tmp_path), linear_feature_columns=[color, age_b,
                                                         layers.crossed_column([color, age_b],
                                                                               30)],
        dnn_feature_columns=[layers.embedding_column(color, 2), layers.one_hot_column(age_b)],
        dnn_hidden_units=[4], gradient_clip_norm=5.0)
    clf.fit(input_fn=input_fn, steps=20)
    results = clf.evaluate(input_fn=input_fn, steps=1)
    assert results["global_step"] == 20 and results["accuracy"] > 0.9
    classes = clf.predict(x={"color": words, "age": age}, batch_size=10, as_iterable=False)
    np.testing.assert_array_equal(classes, label)


def _linear_model_fn(features, targets, mode, params):
    w = tf.get_variable("w", [2, 1], initializer=tf.zeros_initializer())
    pred = tf.squeeze(tf.matmul(tf.cast(features, tf.float32), w), 1)
    loss = None if mode == learn.ModeKeys.INFER else \
        tf.reduce_mean(tf.square(pred - tf.cast(targets, tf.float32)))
    train_op = None
    if mode == learn.ModeKeys.TRAIN:
        train_op = tf.train.GradientDescentOptimizer(params["lr"]).minimize(
            loss, global_step=tf.train.get_global_step())
    return learn.ModelFnOps(mode, predictions={"value": pred}, loss=loss, train_op=train_op)


def test_custom_estimator_model_fn_ops_metric_spec_and_skcompat(tmp_path):
    rng = np.random.RandomState(0)
    x = rng.randn(50, 2)
    y = x @ np.array([2.0, -1.0])
    est = learn.Estimator(model_fn=_linear_model_fn, model_dir=str(tmp_path),
                          params={"lr": 0.2})
    est.fit(x=x, y=y, steps=5, batch_size=10)
    mae = learn.MetricSpec(tf.metrics.mean_absolute_error, prediction_key="value")
    results = est.evaluate(x=x, y=y, metrics={"mae": mae})
    values = est.predict(x=x, as_iterable=False)["value"]
    np.testing.assert_allclose(results["mae"], np.mean(np.abs(values - y)), rtol=1e-4)
    np.testing.assert_allclose(results["loss"], np.mean((values - y) ** 2), rtol=1e-4)
    w = est.get_variable_value("w")
    np.testing.assert_allclose(values, (x.astype(np.float32) @ w)[:, 0], rtol=1e-5)
    assert results["loss"] < 0.5 * np.mean(y ** 2)  # from w = 0
    sk = learn.SKCompat(est)
    sk.fit(x, y, steps=5)
    assert sk.score(x, y)["global_step"] == 10
    np.testing.assert_allclose(sk.predict(x)["value"], est.predict(x, as_iterable=False)
                               ["value"], rtol=1e-6)


def test_tuple_model_fn_and_plain_metric_function(tmp_path):
    def model_fn(features, targets):
        b = tf.get_variable("b", [], initializer=tf.zeros_initializer())
        pred = tf.zeros_like(tf.cast(features[:, 0], tf.float32)) + b
        if targets is None:  # INFER
            return pred, None, None
        loss = tf.reduce_mean(tf.square(pred - tf.cast(targets, tf.float32)))
        train_op = tf.train.GradientDescentOptimizer(0.25).minimize(
            loss, global_step=tf.train.get_global_step())
        return pred, loss, train_op

    x, y = np.zeros((8, 1)), np.full(8, 3.0)
    est = learn.Estimator(model_fn=model_fn, model_dir=str(tmp_path))
    est.fit(x=x, y=y, steps=1)
    # One SGD step from b = 0 on mean (b - 3)^2: b = 0.25 * 6 = 1.5.
    np.testing.assert_allclose(est.get_variable_value("b"), 1.5, rtol=1e-6)
    results = est.evaluate(x=x, y=y, metrics={"mse": tf.metrics.mean_squared_error})
    np.testing.assert_allclose(results["mse"], 2.25, rtol=1e-6)
    np.testing.assert_allclose(list(est.predict(x=x[:2])), [1.5, 1.5])


def test_gradient_clip_norm_clips_global_norm():
    from tensorflux.contrib.learn.canned import _GlobalNormClipping

    with tf.Graph().as_default():
        a = tf.Variable([1.0, 1.0])
        b = tf.Variable(2.0)
        loss = tf.reduce_sum(30.0 * a) + 40.0 * b
        opt = _GlobalNormClipping(tf.train.GradientDescentOptimizer(1.0), clip_norm=5.0)
        grads = [g for g, _ in opt.compute_gradients(loss)]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got = sess.run(grads)
    norm = np.sqrt(30.0 ** 2 * 2 + 40.0 ** 2)
    np.testing.assert_allclose(got[0], [30.0 * 5 / norm] * 2, rtol=1e-5)
    np.testing.assert_allclose(got[1], 40.0 * 5 / norm, rtol=1e-5)


def test_errors(tmp_path):
    est = learn.Estimator(model_fn=_linear_model_fn, model_dir=str(tmp_path),
                          params={"lr": 0.1})
    x, y = np.zeros((4, 2)), np.zeros(4)
    with pytest.raises(ValueError, match="not both"):
        est.fit(x=x, y=y, input_fn=lambda: (x, y), steps=1)
    with pytest.raises(ValueError, match="x or input_fn"):
        est.fit(steps=1)
    with pytest.raises(ValueError, match="generators"):
        est.fit(x=(row for row in x), y=y, steps=1)
    with pytest.raises(TypeError, match="SessionRunHook"):
        est.fit(x=x, y=y, steps=1, monitors=[object()])
    with pytest.raises(ValueError, match="should be None or dict"):
        est.evaluate(x=x, y=y, metrics=[tf.metrics.accuracy])
    with pytest.raises(ValueError, match="params"):
        learn.Estimator(model_fn=lambda features, targets: None, params={"a": 1})
    bad = learn.Estimator(model_fn=lambda features, targets, mode: 3, model_dir=str(tmp_path))
    with pytest.raises(ValueError, match="ModelFnOps"):
        bad.fit(x=x, y=y, steps=1)
    with pytest.raises(ValueError, match="embedding_lr_multipliers"):
        learn.DNNClassifier([2], [layers.real_valued_column("")],
                            embedding_lr_multipliers={"a": 0.1})
    with pytest.raises(ValueError, match="Missing loss"):
        learn.ModelFnOps(learn.ModeKeys.TRAIN, predictions={})


def test_metric_spec_prediction_key_classes_and_constant_input_fn_predicts_once(tmp_path):
    x, y = _blobs(30, seed=2)
    clf = learn.DNNClassifier([4], [layers.real_valued_column("", 2)], n_classes=3,
                              model_dir=str(tmp_path))
    clf.fit(x=x, y=y, steps=3)
    spec = learn.MetricSpec(tf.contrib.metrics.streaming_accuracy,
                            prediction_key=learn.PredictionKey.CLASSES)
    results = clf.evaluate(x=x, y=y, metrics={"my_accuracy": spec,
                                              "plain": tf.contrib.metrics.streaming_accuracy})
    classes = clf.predict(x, as_iterable=False)
    np.testing.assert_allclose(results["my_accuracy"], np.mean(classes == y), rtol=1e-6)
    np.testing.assert_allclose(results["plain"], results["accuracy"], rtol=1e-6)

    def constant_input():
        return tf.constant(x[:3].astype(np.float32))

    # A constant input_fn is predicted once (contrib's single pass), not forever.
    np.testing.assert_array_equal(list(clf.predict_classes(input_fn=constant_input)),
                                  classes[:3])


def test_infer_mode_gets_placeholder_labels_of_the_training_signature(tmp_path):
    seen = {}

    def model_fn(features, targets, mode):
        onehot = tf.one_hot(targets, 2)  # unconditional, as TF 1.0's iris_custom_model
        seen[mode] = (targets.dtype, targets.shape.as_list())
        w = tf.get_variable("w", [1, 2], initializer=tf.zeros_initializer())
        logits = tf.matmul(tf.cast(features, tf.float32), w)
        loss = tf.reduce_mean(tf.square(logits - onehot))
        train_op = tf.train.GradientDescentOptimizer(0.1).minimize(
            loss, global_step=tf.train.get_global_step())
        return {"logits": logits}, loss, train_op

    est = learn.Estimator(model_fn=model_fn, model_dir=str(tmp_path))
    x, y = np.ones((4, 1)), np.array([0, 1, 1, 0])
    est.fit(x, y, steps=2)
    logits = est.predict(x, as_iterable=False)["logits"]
    w = est.get_variable_value("w")
    np.testing.assert_allclose(logits, x.astype(np.float32) @ w, rtol=1e-6)
    assert seen[learn.ModeKeys.INFER] == (tf.int64, [None])


def test_export_savedmodel_with_input_fn_ops_matches_predict(tmp_path):
    x, y = _blobs(30, seed=3)
    clf = learn.DNNClassifier([4], [layers.real_valued_column("", 2)], n_classes=3,
                              model_dir=str(tmp_path / "model"))
    clf.fit(x=x, y=y, steps=3)
    serving_fn = learn.utils.input_fn_utils.build_default_serving_input_fn(
        {"x": tf.zeros([1, 2])})

    def single_tensor_serving_fn():
        ops = serving_fn()
        return learn.utils.input_fn_utils.InputFnOps(ops.features["x"], None,
                                                      ops.default_inputs)

    export_dir = clf.export_savedmodel(str(tmp_path / "export"), single_tensor_serving_fn)
    predictor = tf.contrib.predictor.from_saved_model(export_dir, signature_def_key="predict")
    got = predictor({"x": x.astype(np.float32)})["probabilities"]
    np.testing.assert_allclose(got, clf.predict_proba(x, as_iterable=False), rtol=1e-5)
    with pytest.raises(ValueError, match="InputFnOps"):
        learn.utils.input_fn_utils.as_serving_input_receiver(3)


def test_label_keys_and_feature_engineering_fn(tmp_path):
    x, y = _blobs(30, seed=4)
    names = np.array(["a", "b", "c"])

    def engineer(features, labels):
        return {"scaled": features[""] * 0.5 if isinstance(features, dict) else
                features * 0.5}, labels

    clf = learn.LinearClassifier([layers.real_valued_column("scaled", 2)], n_classes=3,
                                 label_keys=["a", "b", "c"], model_dir=str(tmp_path),
                                 feature_engineering_fn=engineer,
                                 optimizer=tf.train.GradientDescentOptimizer(0.5))
    clf.fit(x=x, y=names[y], steps=20)
    classes = list(clf.predict(x))
    proba = clf.predict_proba(x, as_iterable=False)
    assert classes == list(names[np.argmax(proba, axis=1)])
    w = clf.get_variable_value("linear/linear_model/scaled/weights")
    b = clf.get_variable_value("linear/linear_model/bias_weights")
    logits = (x.astype(np.float32) * 0.5) @ w + b  # the engineered feature, not x
    np.testing.assert_allclose(proba, np.exp(logits) / np.exp(logits).sum(1, keepdims=True),
                               rtol=1e-4)
    assert clf.evaluate(x=x, y=names[y])["accuracy"] > 0.8
