"""The canned estimators: known weights recovered, accuracy reached, evaluation metrics and
predictions equal NumPy computations over the same checkpoint, TF 1.15's keys."""

import numpy as np
import pytest

import tensorflux as tf

RNG = np.random.RandomState(0)
X = RNG.randn(200, 2).astype(np.float32)
Y_BINARY = (X[:, 0] + 2 * X[:, 1] > 0).astype(np.int64)
COLUMNS = [tf.feature_column.numeric_column("x", shape=(2,))]


# A graph seed makes the shuffled input order and the initial weights of a test repeatable.
SEEDED = tf.estimator.RunConfig(tf_random_seed=3)


def inputs(x, y=None, batch_size=50, epochs=None, shuffle=True):
    return tf.estimator.inputs.numpy_input_fn(x, y, batch_size=batch_size, num_epochs=epochs,
                                              shuffle=shuffle)


def sigmoid(z):
    return 1 / (1 + np.exp(-z))


def test_linear_regressor_recovers_known_weights(tmp_path):
    y = X @ np.array([1.5, -0.5], np.float32) + 0.25
    est = tf.estimator.LinearRegressor(COLUMNS, model_dir=str(tmp_path),
                                       optimizer=tf.train.GradientDescentOptimizer(0.004))
    est.train(inputs({"x": X}, y), steps=250)
    assert sorted(est.get_variable_names()) == [
        "global_step", "linear/linear_model/bias_weights", "linear/linear_model/x/weights"]
    np.testing.assert_allclose(est.get_variable_value("linear/linear_model/x/weights").ravel(),
                               [1.5, -0.5], atol=1e-3)
    np.testing.assert_allclose(est.get_variable_value("linear/linear_model/bias_weights"),
                               [0.25], atol=1e-3)
    result = est.evaluate(inputs({"x": X}, y, batch_size=100, epochs=1, shuffle=False))
    assert sorted(result) == ["average_loss", "global_step", "label/mean", "loss",
                              "prediction/mean"]
    np.testing.assert_allclose(result["label/mean"], y.mean(), rtol=1e-5)
    assert result["average_loss"] < 1e-5
    preds = list(est.predict(inputs({"x": X[:3]}, epochs=1, shuffle=False)))
    assert sorted(preds[0]) == ["predictions"]
    np.testing.assert_allclose([p["predictions"][0] for p in preds], y[:3], atol=1e-3)


def test_dnn_classifier_separates_and_predicts_with_tf_keys(tmp_path):
    est = tf.estimator.DNNClassifier(hidden_units=[8, 4], feature_columns=COLUMNS,
                                     model_dir=str(tmp_path), optimizer="Adam", config=SEEDED)
    est.train(inputs({"x": X}, Y_BINARY), steps=80)
    names = est.get_variable_names()
    assert "dnn/hiddenlayer_0/kernel" in names and "dnn/logits/bias" in names
    result = est.evaluate(inputs({"x": X}, Y_BINARY, batch_size=200, epochs=1, shuffle=False))
    assert result["accuracy"] > 0.95 and result["auc"] > 0.98
    assert set(result) == {"accuracy", "accuracy_baseline", "auc", "auc_precision_recall",
                           "average_loss", "label/mean", "loss", "precision",
                           "prediction/mean", "recall", "global_step"}
    pred = next(est.predict(inputs({"x": X[:1]}, epochs=1, shuffle=False)))
    assert set(pred) == {"logits", "logistic", "probabilities", "class_ids", "classes",
                         "all_class_ids", "all_classes"}
    np.testing.assert_allclose(pred["probabilities"],
                               [sigmoid(-pred["logits"][0]), sigmoid(pred["logits"][0])],
                               rtol=1e-5, atol=1e-7)
    assert pred["classes"][0] == str(pred["class_ids"][0]).encode()
    assert list(pred["all_classes"]) == [b"0", b"1"]


def test_linear_classifier_metrics_equal_numpy_over_the_checkpoint(tmp_path):
    est = tf.estimator.LinearClassifier(COLUMNS, model_dir=str(tmp_path))
    est.train(inputs({"x": X}, Y_BINARY), steps=20)
    w = est.get_variable_value("linear/linear_model/x/weights")
    b = est.get_variable_value("linear/linear_model/bias_weights")
    result = est.evaluate(inputs({"x": X}, Y_BINARY, batch_size=50, epochs=1, shuffle=False))
    logits = (X @ w + b).ravel()
    p = sigmoid(logits)
    per_example = np.maximum(logits, 0) - logits * Y_BINARY + np.log1p(np.exp(-abs(logits)))
    classes = (logits > 0).astype(np.int64)
    np.testing.assert_allclose(result["average_loss"], per_example.mean(), rtol=1e-4)
    # "loss" is the mean over batches of the training loss, a SUM over each batch (TF1).
    np.testing.assert_allclose(result["loss"], per_example.reshape(4, 50).sum(1).mean(),
                               rtol=1e-4)
    np.testing.assert_allclose(result["accuracy"], (classes == Y_BINARY).mean())
    np.testing.assert_allclose(result["prediction/mean"], p.mean(), rtol=1e-5)
    np.testing.assert_allclose(result["label/mean"], Y_BINARY.mean())
    np.testing.assert_allclose(result["accuracy_baseline"],
                               max(Y_BINARY.mean(), 1 - Y_BINARY.mean()))
    tp = np.sum((classes == 1) & (Y_BINARY == 1))
    np.testing.assert_allclose(result["precision"], tp / classes.sum(), rtol=1e-6)
    np.testing.assert_allclose(result["recall"], tp / Y_BINARY.sum(), rtol=1e-6)
    order = np.argsort(-p)
    ranks = np.empty(len(p))
    ranks[np.argsort(p)] = np.arange(1, len(p) + 1)
    exact_auc = (ranks[Y_BINARY == 1].sum() - Y_BINARY.sum() * (Y_BINARY.sum() + 1) / 2) / (
        Y_BINARY.sum() * (len(p) - Y_BINARY.sum()))
    assert abs(result["auc"] - exact_auc) < 0.01 and order.size == 200


def test_multiclass_vocabulary_and_weights(tmp_path):
    labels = np.array(["cat", "dog", "owl"])[(X[:, 0] > 0.5).astype(int) + (X[:, 0] > -0.5)]
    weights = np.where(labels == "owl", 2.0, 1.0).astype(np.float32)
    est = tf.estimator.LinearClassifier(
        [tf.feature_column.numeric_column("x", shape=(2,))], model_dir=str(tmp_path),
        n_classes=3, label_vocabulary=["cat", "dog", "owl"], weight_column="w",
        optimizer="Adagrad")
    est.train(inputs({"x": X, "w": weights}, labels.reshape(-1, 1)), steps=5)
    w = est.get_variable_value("linear/linear_model/x/weights")
    b = est.get_variable_value("linear/linear_model/bias_weights")
    logits = X @ w + b
    probs = np.exp(logits - logits.max(1, keepdims=True))
    probs /= probs.sum(1, keepdims=True)
    ids = np.searchsorted(["cat", "dog", "owl"], labels)
    xent = -np.log(probs[np.arange(200), ids])
    result = est.evaluate(inputs({"x": X, "w": weights}, labels.reshape(-1, 1), batch_size=200,
                                 epochs=1, shuffle=False))
    np.testing.assert_allclose(result["average_loss"], np.sum(xent * weights) / weights.sum(),
                               rtol=1e-4)
    np.testing.assert_allclose(result["accuracy"], np.sum(
        (probs.argmax(1) == ids) * weights) / weights.sum(), rtol=1e-6)
    np.testing.assert_allclose(result["loss"], np.sum(xent * weights), rtol=1e-4)
    pred = next(est.predict(inputs({"x": X[:1]}, epochs=1, shuffle=False)))
    assert pred["classes"][0] == [b"cat", b"dog", b"owl"][probs[0].argmax()]
    np.testing.assert_allclose(pred["probabilities"], probs[0], rtol=1e-5)
    with pytest.raises(tf.errors.InvalidArgumentError, match="label_vocabulary"):
        est.train(inputs({"x": X[:2], "w": weights[:2]}, np.array([["cow"], ["cat"]])),
                  steps=1)


def test_wide_and_deep_trains_both_parts_with_one_step_each(tmp_path):
    bucket = tf.feature_column.bucketized_column(
        tf.feature_column.numeric_column("a"), boundaries=[-0.5, 0.0, 0.5])
    features = {"a": X[:, 0], "x": X}
    est = tf.estimator.DNNLinearCombinedClassifier(
        model_dir=str(tmp_path), linear_feature_columns=[bucket], dnn_feature_columns=COLUMNS,
        dnn_hidden_units=[6], config=SEEDED)
    est.train(inputs(features, Y_BINARY), steps=60)
    assert est.get_variable_value("global_step") == 60
    linear_w = est.get_variable_value("linear/linear_model/a_bucketized/weights")
    assert linear_w.shape == (4, 1) and np.any(linear_w != 0)
    result = est.evaluate(inputs(features, Y_BINARY, batch_size=200, epochs=1, shuffle=False))
    assert result["accuracy"] > 0.9
    with pytest.raises(ValueError, match="Either linear_feature_columns"):
        tf.estimator.DNNLinearCombinedRegressor()
    with pytest.raises(ValueError, match="dnn_hidden_units must be defined"):
        tf.estimator.DNNLinearCombinedRegressor(dnn_feature_columns=COLUMNS)


def test_baseline_classifier_learns_the_prior(tmp_path):
    labels = (RNG.rand(200) < 0.25).astype(np.int64)
    est = tf.estimator.BaselineClassifier(model_dir=str(tmp_path),
                                          optimizer=tf.train.GradientDescentOptimizer(0.01))
    est.train(inputs({"x": X}, labels, batch_size=200), steps=50)
    pred = next(est.predict(inputs({"x": X[:1]}, epochs=1, shuffle=False)))
    np.testing.assert_allclose(pred["logistic"], [labels.mean()], atol=1e-4)
    reg = tf.estimator.BaselineRegressor(model_dir=str(tmp_path / "r"),
                                         optimizer=tf.train.GradientDescentOptimizer(0.002))
    reg.train(inputs({"x": X}, 3.0 + X[:, :1], batch_size=200), steps=30)
    np.testing.assert_allclose(reg.get_variable_value("baseline/bias"),
                               [3.0 + X[:, 0].mean()], atol=1e-4)


def test_canned_argument_errors():
    with pytest.raises(ValueError, match="n_classes"):
        tf.estimator.LinearClassifier(COLUMNS, n_classes=1)
    with pytest.raises(ValueError, match="feature_columns must not be empty"):
        tf.estimator.LinearRegressor([])
    with pytest.raises(ValueError, match="hidden_units"):
        tf.estimator.DNNRegressor([], COLUMNS)
    with pytest.raises(ValueError, match="label_vocabulary"):
        tf.estimator.DNNClassifier([2], COLUMNS, n_classes=3, label_vocabulary=["a", "b"])
    from tensorflux.estimator.canned.optimizers import get_optimizer_instance
    with pytest.raises(ValueError, match="Unsupported optimizer name"):
        get_optimizer_instance("Adamax", 0.1)
    with pytest.raises(ValueError, match="not an Optimizer"):
        get_optimizer_instance(object(), 0.1)
    assert isinstance(get_optimizer_instance("Ftrl", 0.1), tf.train.FtrlOptimizer)
    assert isinstance(get_optimizer_instance(lambda: tf.train.AdamOptimizer(0.1)),
                      tf.train.AdamOptimizer)


def test_canned_export_serves_examples(tmp_path):
    est = tf.estimator.LinearClassifier(COLUMNS, model_dir=str(tmp_path))
    est.train(inputs({"x": X}, Y_BINARY), steps=10)
    expected = [p["probabilities"] for p in est.predict(
        inputs({"x": X[:4]}, epochs=1, shuffle=False))]
    spec = tf.feature_column.make_parse_example_spec(COLUMNS)
    export_dir = est.export_saved_model(
        str(tmp_path / "export"),
        tf.estimator.export.build_parsing_serving_input_receiver_fn(spec)).decode()
    serialized = [tf.train.Example(features=tf.train.Features(feature={
        "x": tf.train.Feature(float_list=tf.train.FloatList(value=row))})).SerializeToString()
        for row in X[:4]]
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], export_dir)
        # a binary head also exports TF1's "regression" signature: the logistic output
        assert sorted(meta.signature_def) == ["classification", "predict", "regression",
                                              "serving_default"]
        classify = meta.signature_def["serving_default"]
        assert classify.method_name == "tensorflow/serving/classify"
        regress = meta.signature_def["regression"]
        assert regress.method_name == "tensorflow/serving/regress"
        assert sorted(regress.inputs) == ["inputs"] and sorted(regress.outputs) == ["outputs"]
        scores, classes, logistic = sess.run(
            [classify.outputs["scores"].name, classify.outputs["classes"].name,
             regress.outputs["outputs"].name], {classify.inputs["inputs"].name: serialized})
    np.testing.assert_allclose(scores, np.stack(expected), rtol=1e-5)
    np.testing.assert_allclose(logistic.reshape(-1), np.stack(expected)[:, 1], rtol=1e-5)
    assert classes.tolist() == [[b"0", b"1"]] * 4
