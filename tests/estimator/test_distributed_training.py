"""Estimator with RunConfig(train_distribute=...) and Keras compiled in a strategy scope:
the same trained values as without a strategy on the equivalent batches."""

import numpy as np
import pytest

import tensorflux as tf

rng = np.random.RandomState(0)
X = rng.randn(64, 4).astype(np.float32)
Y = (X @ np.array([[1.0], [-2.0], [0.5], [3.0]], np.float32) + 0.1).astype(np.float32)
TWO_CPUS = tf.ConfigProto(device_count={"CPU": 2})


def _input_fn(batch):
    def input_fn(input_context=None):
        if input_context is not None:
            assert input_context.num_input_pipelines == 1
        return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).repeat().batch(batch)

    return input_fn


def _model_fn(features, labels, mode):
    prediction = tf.layers.dense(features["x"], 1, kernel_initializer=tf.zeros_initializer())
    loss = tf.losses.mean_squared_error(labels, prediction)
    train_op = tf.train.MomentumOptimizer(0.05, 0.9).minimize(
        loss, global_step=tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(
        mode, loss=loss, train_op=train_op, predictions=prediction,
        eval_metric_ops={"mae": tf.metrics.mean_absolute_error(labels, prediction)})


def _trained(tmp_path, name, strategy, batch, steps=12):
    config = tf.estimator.RunConfig(train_distribute=strategy, eval_distribute=None,
                                    session_config=TWO_CPUS, tf_random_seed=3)
    estimator = tf.estimator.Estimator(_model_fn, model_dir=str(tmp_path / name),
                                       config=config)
    estimator.train(_input_fn(batch), steps=steps)
    return estimator


def test_two_replicas_of_per_replica_batches_equal_one_device_of_both(tmp_path):
    plain = _trained(tmp_path, "plain", None, batch=32)
    mirrored = _trained(tmp_path, "mirrored",
                        tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"]), batch=16)
    for name in ("dense/kernel", "dense/bias"):
        np.testing.assert_allclose(mirrored.get_variable_value(name),
                                   plain.get_variable_value(name), rtol=2e-5, atol=1e-6)
    assert mirrored.get_variable_value("global_step") == 12
    assert sorted(mirrored.get_variable_names()) == sorted(plain.get_variable_names())
    # Evaluating the distributed model's checkpoint without a strategy gives plain's metrics.
    got = mirrored.evaluate(_input_fn(32), steps=2)
    want = plain.evaluate(_input_fn(32), steps=2)
    np.testing.assert_allclose(got["loss"], want["loss"], rtol=1e-4)


@pytest.mark.parametrize("make", [tf.distribute.MirroredStrategy,
                                  lambda: tf.distribute.OneDeviceStrategy("/cpu:0")])
def test_one_replica_strategies_train_and_evaluate_as_no_strategy(tmp_path, make):
    plain = _trained(tmp_path, "plain", None, batch=16, steps=5)
    config = tf.estimator.RunConfig(train_distribute=make(), eval_distribute=make(),
                                    tf_random_seed=3)
    distributed = tf.estimator.Estimator(_model_fn, model_dir=str(tmp_path / "d"),
                                         config=config)
    distributed.train(_input_fn(16), steps=5)
    np.testing.assert_allclose(distributed.get_variable_value("dense/kernel"),
                               plain.get_variable_value("dense/kernel"), rtol=1e-6)
    got = distributed.evaluate(_input_fn(16), steps=2)
    want = plain.evaluate(_input_fn(16), steps=2)
    assert got["global_step"] == want["global_step"] == 5
    np.testing.assert_allclose(got["mae"], want["mae"], rtol=1e-6)


def test_input_fn_must_return_a_dataset_under_a_strategy(tmp_path):
    config = tf.estimator.RunConfig(train_distribute=tf.distribute.MirroredStrategy())
    estimator = tf.estimator.Estimator(_model_fn, model_dir=str(tmp_path), config=config)
    with pytest.raises(ValueError, match="must return a tf.data.Dataset"):
        estimator.train(lambda: ({"x": tf.constant(X)}, tf.constant(Y)), steps=1)


def test_keras_compiled_in_a_one_replica_scope_trains_as_without(tmp_path):
    data_x = rng.randn(32, 4).astype(np.float32)
    data_y = (data_x.sum(1, keepdims=True) > 0).astype(np.float32)
    histories = []
    for strategy in (None, tf.distribute.MirroredStrategy()):
        tf.keras.backend.clear_session()
        tf.set_random_seed(0)
        scope = strategy.scope() if strategy else tf.name_scope(None)
        with scope:
            model = tf.keras.Sequential([
                tf.keras.layers.Dense(8, activation="relu", input_shape=(4,)),
                tf.keras.layers.Dense(1, activation="sigmoid")])
            model.compile(tf.train.GradientDescentOptimizer(0.1), "binary_crossentropy")
        histories.append(model.fit(data_x, data_y, batch_size=8, epochs=2, verbose=0,
                                   shuffle=False).history["loss"])
    np.testing.assert_allclose(histories[0], histories[1], rtol=1e-6)
    tf.keras.backend.clear_session()
    try:
        with tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"]).scope():
            model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(4,))])
            with pytest.raises(NotImplementedError, match="2 replicas"):
                model.compile("sgd", "mse")
    finally:
        tf.keras.backend.clear_session()


def _eval_model_fn(features, labels, mode):
    prediction = tf.layers.dense(features["x"], 1, kernel_initializer=tf.ones_initializer())
    loss = tf.losses.mean_squared_error(labels, prediction)
    probability = tf.sigmoid(prediction)
    positive = tf.cast(labels > 0.0, tf.int64)
    predicted = tf.cast(prediction > 0.0, tf.int64)
    label_mean, label_mean_update = tf.metrics.mean(positive)
    # As canned heads' accuracy_baseline: built per replica from a value built across them.
    baseline = tf.maximum(label_mean, 1.0 - label_mean)
    return tf.estimator.EstimatorSpec(
        mode, loss=loss, predictions=prediction, eval_metric_ops={
            "baseline": (baseline, label_mean_update),
            "mae": tf.metrics.mean_absolute_error(labels, prediction),
            "rmse": tf.metrics.root_mean_squared_error(labels, prediction),
            "accuracy": tf.metrics.accuracy(positive, predicted),
            "precision": tf.metrics.precision(positive, predicted),
            "recall": tf.metrics.recall(positive, predicted),
            "auc": tf.metrics.auc(positive, probability, num_thresholds=50),
            "mean_iou": tf.metrics.mean_iou(positive, predicted, 2)})


def test_two_replica_evaluation_equals_one_device_on_the_same_rows(tmp_path):
    results = []
    for strategy, batch in ((None, 32), (tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"]),
                                         16)):
        config = tf.estimator.RunConfig(eval_distribute=strategy, session_config=TWO_CPUS,
                                        tf_random_seed=3)
        estimator = tf.estimator.Estimator(_eval_model_fn, model_dir=str(tmp_path / str(batch)),
                                           config=config)
        results.append(estimator.evaluate(_input_fn(batch), steps=2))
    plain, mirrored = results
    assert sorted(plain) == sorted(mirrored)
    # NumPy reference over the 64 rows both evaluations saw.
    prediction = X.sum(1, keepdims=True)
    np.testing.assert_allclose(plain["mae"], np.abs(Y - prediction).mean(), rtol=1e-5)
    np.testing.assert_allclose(plain["accuracy"], ((Y > 0) == (prediction > 0)).mean(),
                               rtol=1e-6)
    np.testing.assert_allclose(plain["baseline"], max((Y > 0).mean(), (Y <= 0).mean()),
                               rtol=1e-6)
    for key in plain:
        np.testing.assert_allclose(mirrored[key], plain[key], rtol=1e-5, err_msg=key)
    assert 0.0 < plain["precision"] < 1.0 and 0.0 < plain["auc"] < 1.0


def test_a_per_replica_metric_value_is_refused_under_two_replicas(tmp_path):
    def model_fn(features, labels, mode):
        prediction = tf.layers.dense(features["x"], 1)
        loss = tf.losses.mean_squared_error(labels, prediction)
        value = tf.reduce_mean(prediction)
        return tf.estimator.EstimatorSpec(mode, loss=loss,
                                          eval_metric_ops={"raw": (value, tf.no_op())})

    config = tf.estimator.RunConfig(
        eval_distribute=tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"]),
        session_config=TWO_CPUS)
    estimator = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path), config=config)
    with pytest.raises(ValueError, match=r"eval_metric_ops\['raw'\].*differs per replica"):
        estimator.evaluate(_input_fn(16), steps=1)


def test_canned_classifier_evaluates_over_two_replicas_as_on_one_device(tmp_path):
    labels = (X.sum(1, keepdims=True) > 0).astype(np.int64)

    def input_fn(batch):
        return lambda: tf.data.Dataset.from_tensor_slices(({"x": X}, labels)).repeat().batch(
            batch)

    columns = [tf.feature_column.numeric_column("x", shape=(4,))]
    results = []
    for strategy, batch in ((None, 32), (tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"]),
                                         16)):
        config = tf.estimator.RunConfig(eval_distribute=strategy, session_config=TWO_CPUS,
                                        tf_random_seed=1)
        estimator = tf.estimator.LinearClassifier(columns, model_dir=str(tmp_path),
                                                  config=config)
        if strategy is None:  # both evaluate this checkpoint
            estimator.train(input_fn(8), steps=3)
        results.append(estimator.evaluate(input_fn(batch), steps=2))
    plain, mirrored = results
    assert sorted(plain) == sorted(mirrored)
    np.testing.assert_allclose(plain["label/mean"], labels.mean(), rtol=1e-6)
    assert plain["global_step"] == 3 and 0.5 < plain["auc"] < 1.0
    for key in plain:
        if key != "loss":
            np.testing.assert_allclose(mirrored[key], plain[key], rtol=1e-5, err_msg=key)
    # The head's loss sums its batch; the replicas' losses are averaged (as TF 1.15 reports
    # them), so each step reports the sum over one replica's half of the rows.
    np.testing.assert_allclose(mirrored["loss"], plain["loss"] / 2, rtol=1e-5)
