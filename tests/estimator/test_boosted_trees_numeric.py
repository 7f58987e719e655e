"""Boosted trees over numeric columns: bucket boundaries learned from weighted quantiles of
the first batches, then trees grown on the bucketized values."""

import numpy as np
import pytest

import tensorflux as tf


def _threshold_data(n=400, seed=0):
    rng = np.random.RandomState(seed)
    x = rng.randint(0, 20, n).astype(np.float32)  # few distinct values: exact boundaries
    noise = rng.uniform(0, 1, n).astype(np.float32)
    return x, noise, (x > 12).astype(np.int32)


def test_classifier_learns_a_threshold_of_a_numeric_column(tmp_path):
    x, noise, y = _threshold_data()

    def input_fn():
        data = tf.data.Dataset.from_tensor_slices(({"x": x, "noise": noise}, y))
        return data.repeat().batch(200)

    columns = [tf.feature_column.numeric_column("x"), tf.feature_column.numeric_column("noise")]
    estimator = tf.estimator.BoostedTreesClassifier(
        columns, n_batches_per_layer=2, n_trees=3, max_depth=2, learning_rate=0.5,
        model_dir=str(tmp_path))
    estimator.train(input_fn, max_steps=100)
    # Two batches learn the boundaries, then 3 trees x 2 layers x 2 batches.
    assert estimator.get_variable_value("global_step") == 2 + 3 * 2 * 2
    metrics = estimator.evaluate(lambda: tf.data.Dataset.from_tensor_slices(
        ({"x": x, "noise": noise}, y)).batch(400), steps=1)
    assert metrics["accuracy"] == 1.0
    bounds = estimator.get_variable_value("boosted_trees/quantile_boundaries")
    assert bounds.shape == (2, 101)
    importances = estimator.experimental_feature_importances()
    assert list(importances)[0] == "x"


def test_numeric_regression_with_l2_zero_fits_bucket_means(tmp_path):
    x = np.repeat(np.arange(4, dtype=np.float32), 25)
    y = np.array([1.0, 5.0, -2.0, 3.0], np.float32)[x.astype(int)]

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(100)

    estimator = tf.estimator.BoostedTreesRegressor(
        [tf.feature_column.numeric_column("x")], n_batches_per_layer=1, n_trees=1,
        max_depth=2, learning_rate=1.0, model_dir=str(tmp_path))
    estimator.train(input_fn, max_steps=10)
    predictions = [p["predictions"][0] for p in estimator.predict(
        lambda: tf.data.Dataset.from_tensor_slices({"x": np.arange(4, dtype=np.float32)})
        .batch(4))]
    np.testing.assert_allclose(predictions, [1.0, 5.0, -2.0, 3.0], rtol=1e-5, atol=1e-5)


def test_bad_columns_and_epsilon_are_named():
    embedded = tf.feature_column.embedding_column(
        tf.feature_column.categorical_column_with_identity("c", 3), 2)
    with pytest.raises(ValueError, match="numeric_column are supported but got: c_embedding"):
        tf.estimator.BoostedTreesClassifier([embedded], n_batches_per_layer=1)
    with pytest.raises(ValueError, match="quantile_sketch_epsilon"):
        tf.estimator.BoostedTreesRegressor([tf.feature_column.numeric_column("x")],
                                           n_batches_per_layer=1, quantile_sketch_epsilon=2.0)
