"""tf.estimator.BoostedTreesClassifier / BoostedTreesRegressor: known results (bucket means,
separable data learned exactly), tree counts and depths, checkpoints, explanations, errors."""

import numpy as np
import pytest

import tensorflux as tf

fc = tf.feature_column
X = np.array([0.5, 1.5, 2.5, 3.5, 0.2, 1.2, 2.2, 3.8, 0.7, 3.1], np.float32)
Y = np.array([1.0, 2.0, 5.0, 9.0, 1.5, 3.0, 6.0, 10.0, 2.0, 8.0], np.float32)
BOUNDS = [1.0, 2.0, 3.0]
X_COL = fc.bucketized_column(fc.numeric_column("x"), BOUNDS)


def _data(x, y):
    return lambda: tf.data.Dataset.from_tensors(({"x": x}, y)).repeat()


def _features(x):
    return lambda: tf.data.Dataset.from_tensors({"x": x})


def _bucket_means(x, y):
    buckets = np.digitize(x, BOUNDS)
    return np.array([y[buckets == b].mean() for b in buckets], np.float32)


def _predictions(est, x, key="predictions"):
    return np.array([p[key] for p in est.predict(_features(x))])


def test_regression_without_l2_learns_bucket_means(tmp_path):
    est = tf.estimator.BoostedTreesRegressor(
        [X_COL], n_batches_per_layer=1, n_trees=1, max_depth=2, learning_rate=1.0,
        model_dir=str(tmp_path))
    est.train(_data(X, Y), steps=50)  # stops by itself after the one tree's two layers
    assert est.get_variable_value("global_step") == 2
    np.testing.assert_allclose(_predictions(est, X)[:, 0], _bucket_means(X, Y), rtol=1e-5)
    metrics = est.evaluate(_data(X, Y), steps=1)
    expected_mse = np.mean((_bucket_means(X, Y) - Y) ** 2)
    np.testing.assert_allclose(metrics["average_loss"], expected_mse, rtol=1e-5)


def test_l2_shrinks_the_leaf_values(tmp_path):
    # One split (depth 1) at the best threshold; leaf = sum(y) / (n + l2 * N / 2) for the
    # squared loss (gradient 2(f - y), hessian 2, statistics averaged over the N examples).
    l2 = 0.3
    est = tf.estimator.BoostedTreesRegressor(
        [X_COL], n_batches_per_layer=1, n_trees=1, max_depth=1, learning_rate=1.0,
        l2_regularization=l2, model_dir=str(tmp_path))
    est.train(_data(X, Y), steps=10)
    threshold = int(est.get_variable_value("boosted_trees/tree_split_threshold")[0, 0])
    left = np.digitize(X, BOUNDS) <= threshold
    n = len(X)
    want = np.where(left, Y[left].sum() / (left.sum() + l2 * n / 2),
                    Y[~left].sum() / ((~left).sum() + l2 * n / 2))
    np.testing.assert_allclose(_predictions(est, X)[:, 0], want, rtol=1e-5)
    assert threshold == 1  # the split with the largest gain: {0, 1} | {2, 3}


def test_separable_classification_is_learned_exactly(tmp_path):
    labels = (X > 2.0).astype(np.int64)
    est = tf.estimator.BoostedTreesClassifier(
        [X_COL], n_batches_per_layer=1, n_trees=2, max_depth=2, model_dir=str(tmp_path))
    est.train(_data(X, labels), steps=100)
    metrics = est.evaluate(_data(X, labels), steps=1)
    assert metrics["accuracy"] == 1.0
    assert metrics["auc"] > 0.99
    classes = _predictions(est, X, "class_ids")[:, 0]
    np.testing.assert_array_equal(classes, labels)


def test_tree_count_and_depth_follow_the_arguments(tmp_path):
    x = np.linspace(0.05, 3.95, 40).astype(np.float32)
    y = np.sin(3 * x).astype(np.float32) + x
    col = fc.bucketized_column(fc.numeric_column("x"), [0.5 * i for i in range(1, 8)])
    est = tf.estimator.BoostedTreesRegressor(
        [col], n_batches_per_layer=1, n_trees=3, max_depth=2, model_dir=str(tmp_path))
    est.train(_data(x, y), steps=1000)
    split = est.get_variable_value("boosted_trees/tree_split_feature")
    assert split.shape == (3, 7)
    assert est.get_variable_value("global_step") == 3 * 2
    assert (split[:, 0] >= 0).all()  # every tree has a root split
    assert (split[:, 3:] == -1).all()  # nothing below depth 2
    assert (split[:, 1:3] >= 0).any()
    assert est.get_variable_value("boosted_trees/state")[0] == 3
    est.train(_data(x, y), steps=5)  # finished: no more steps
    assert est.get_variable_value("global_step") == 6


def test_center_bias_fits_the_mean_first(tmp_path):
    est = tf.estimator.BoostedTreesRegressor(
        [X_COL], n_batches_per_layer=1, n_trees=1, max_depth=1, center_bias=True,
        model_dir=str(tmp_path))
    est.train(_data(X, Y), max_steps=1)
    np.testing.assert_allclose(est.get_variable_value("boosted_trees/bias"), [Y.mean()],
                               rtol=1e-5)
    est.train(_data(X, Y), steps=10)
    # two centering steps (the second moves the bias by ~0), then the one layer
    assert est.get_variable_value("global_step") == 3
    assert est.get_variable_value("boosted_trees/state")[3] == 1


def test_resuming_from_checkpoints_equals_one_run(tmp_path):
    def make(name):
        return tf.estimator.BoostedTreesRegressor(
            [X_COL], n_batches_per_layer=1, n_trees=3, max_depth=2, learning_rate=0.5,
            model_dir=str(tmp_path / name))
    whole = make("whole")
    whole.train(_data(X, Y), steps=100)
    parts = make("parts")
    parts.train(_data(X, Y), max_steps=3)  # stops in the middle of the second tree
    parts.train(_data(X, Y), steps=100)
    assert parts.get_variable_value("global_step") == whole.get_variable_value("global_step")
    np.testing.assert_allclose(_predictions(parts, X), _predictions(whole, X), rtol=1e-6)


def test_n_batches_per_layer_averages_the_batches(tmp_path):
    half = len(X) // 2

    def two_batches():
        return tf.data.Dataset.from_tensor_slices(
            ({"x": X.reshape(2, half)}, Y.reshape(2, half))).repeat()

    split = tf.estimator.BoostedTreesRegressor(
        [X_COL], n_batches_per_layer=2, n_trees=2, max_depth=2, learning_rate=0.5,
        model_dir=str(tmp_path / "split"))
    split.train(two_batches, steps=100)
    assert split.get_variable_value("global_step") == 2 * 2 * 2
    whole = tf.estimator.BoostedTreesRegressor(
        [X_COL], n_batches_per_layer=1, n_trees=2, max_depth=2, learning_rate=0.5,
        model_dir=str(tmp_path / "whole"))
    whole.train(_data(X, Y), steps=100)
    np.testing.assert_allclose(_predictions(split, X), _predictions(whole, X), rtol=1e-5)


def test_indicator_columns_and_multi_class(tmp_path):
    colors = np.array([b"red", b"green", b"blue", b"red", b"green", b"blue"])
    labels = np.array([0, 1, 2, 0, 1, 2], np.int64)
    col = fc.indicator_column(fc.categorical_column_with_vocabulary_list(
        "color", ["red", "green", "blue"]))
    est = tf.estimator.BoostedTreesClassifier(
        [col], n_batches_per_layer=1, n_classes=3, n_trees=3, max_depth=2,
        learning_rate=0.5, model_dir=str(tmp_path))
    est.train(lambda: tf.data.Dataset.from_tensors(({"color": colors}, labels)).repeat(),
              steps=100)
    preds = list(est.predict(lambda: tf.data.Dataset.from_tensors({"color": colors})))
    np.testing.assert_array_equal([p["class_ids"][0] for p in preds], labels)
    assert est.get_variable_value("boosted_trees/tree_node_value").shape[-1] == 3


def test_explanations_sum_to_the_prediction(tmp_path):
    labels = (X > 1.0).astype(np.int64)  # 7 of 10
    z = (X * 7 % 3).astype(np.float32)  # an unrelated second feature
    cols = [X_COL, fc.bucketized_column(fc.numeric_column("z"), [1.0, 2.0])]
    est = tf.estimator.BoostedTreesClassifier(
        cols, n_batches_per_layer=1, n_trees=4, max_depth=2, center_bias=True,
        model_dir=str(tmp_path))
    est.train(lambda: tf.data.Dataset.from_tensors(({"x": X, "z": z}, labels)).repeat(),
              steps=100)
    inputs = lambda: tf.data.Dataset.from_tensors({"x": X, "z": z})  # noqa: E731
    for example in est.experimental_predict_with_explanations(inputs):
        assert list(example["dfc"]) == sorted(example["dfc"],
                                              key=lambda k: -abs(example["dfc"][k]))
        total = example["bias"] + sum(example["dfc"].values())
        np.testing.assert_allclose(total, example["probabilities"][1], atol=1e-5)
    # the centered bias: Newton steps on the logit until a step is < 0.01 -> the base rate
    np.testing.assert_allclose(example["bias"], labels.mean(), atol=0.005)
    bias_logit = est.get_variable_value("boosted_trees/bias")[0]
    np.testing.assert_allclose(bias_logit, np.log(0.7 / 0.3), atol=0.02)
    importances = est.experimental_feature_importances(normalize=True)
    assert list(importances)[0] == "x_bucketized"
    np.testing.assert_allclose(sum(importances.values()), 1.0, rtol=1e-6)


def test_pruning(tmp_path):
    def fit(name, **kwargs):
        est = tf.estimator.BoostedTreesRegressor(
            [X_COL], n_batches_per_layer=1, n_trees=1, max_depth=2, learning_rate=1.0,
            model_dir=str(tmp_path / name), **kwargs)
        est.train(_data(X, Y), steps=10)
        return est
    for mode in ("pre", "post"):
        none_left = fit(mode + "_all", pruning_mode=mode, tree_complexity=1e6)
        assert (none_left.get_variable_value("boosted_trees/tree_split_feature") == -1).all()
        np.testing.assert_allclose(_predictions(none_left, X), 0.0)
        kept = fit(mode + "_kept", pruning_mode=mode, tree_complexity=1e-3)
        np.testing.assert_allclose(_predictions(kept, X)[:, 0], _bucket_means(X, Y),
                                   rtol=1e-5)


def test_export_serves_the_same_predictions(tmp_path):
    est = tf.estimator.BoostedTreesRegressor(
        [X_COL], n_batches_per_layer=1, n_trees=2, max_depth=2, model_dir=str(tmp_path / "m"))
    est.train(_data(X, Y), steps=100)
    serving = tf.estimator.export.build_raw_serving_input_receiver_fn(
        {"x": tf.placeholder(tf.float32, [None])})
    path = est.export_saved_model(str(tmp_path / "export"), serving)
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], path)
        sig = meta.signature_def["predict"]
        out = sess.run(sig.outputs["predictions"].name, {sig.inputs["x"].name: X})
    np.testing.assert_allclose(out, _predictions(est, X), rtol=1e-6)


def test_errors(tmp_path):
    with pytest.raises(ValueError, match="only bucketized_column, indicator_column and "
                                         "numeric_column are supported.*ids"):
        tf.estimator.BoostedTreesClassifier([fc.categorical_column_with_identity("ids", 3)],
                                            n_batches_per_layer=1)
    emb = fc.embedding_column(fc.categorical_column_with_identity("c", 3), 2)
    with pytest.raises(ValueError, match="c_embedding"):
        tf.estimator.BoostedTreesRegressor([X_COL, emb], n_batches_per_layer=1)
    with pytest.raises(ValueError, match="Tree complexity have to be positive"):
        tf.estimator.BoostedTreesRegressor([X_COL], 1, pruning_mode="pre")
    with pytest.raises(ValueError, match="pruning_mode"):
        tf.estimator.BoostedTreesRegressor([X_COL], 1, pruning_mode="some")
    with pytest.raises(ValueError, match="n_batches_per_layer"):
        tf.estimator.BoostedTreesRegressor([X_COL], 0)
    with pytest.raises(ValueError, match="l2_regularization"):
        tf.estimator.BoostedTreesRegressor([X_COL], 1, l2_regularization=-1.0)
    multi = tf.estimator.BoostedTreesClassifier([X_COL], 1, n_classes=3,
                                                model_dir=str(tmp_path))
    with pytest.raises(ValueError, match="multi-class"):
        next(multi.experimental_predict_with_explanations(_features(X)))


def test_train_in_memory_uses_the_one_element_every_step(tmp_path):
    once = lambda: tf.data.Dataset.from_tensors(({"x": X}, Y))  # noqa: E731  one epoch
    est = tf.contrib.estimator.boosted_trees_regressor_train_in_memory(
        once, [X_COL], model_dir=str(tmp_path / "mem"), n_trees=2, max_depth=2,
        learning_rate=0.5)
    assert isinstance(est, tf.estimator.BoostedTreesRegressor)
    assert est.get_variable_value("boosted_trees/state")[0] == 2
    ref = tf.estimator.BoostedTreesRegressor(
        [X_COL], 1, n_trees=2, max_depth=2, learning_rate=0.5, model_dir=str(tmp_path / "r"))
    ref.train(_data(X, Y), steps=100)
    np.testing.assert_allclose(_predictions(est, X), _predictions(ref, X), rtol=1e-6)
    with pytest.raises(ValueError, match="train_in_memory requires n_batches_per_layer"):
        tf.estimator.BoostedTreesRegressor([X_COL], 2, train_in_memory=True)


def test_example_weights_count_like_duplicated_examples(tmp_path):
    w = np.array([1, 2, 1, 3, 1, 1, 2, 1, 1, 1], np.float32)
    weighted = tf.estimator.BoostedTreesRegressor(
        [X_COL], 1, weight_column="w", n_trees=2, max_depth=2, learning_rate=0.5,
        l2_regularization=0.1, model_dir=str(tmp_path / "w"))
    weighted.train(lambda: tf.data.Dataset.from_tensors(({"x": X, "w": w}, Y)).repeat(),
                   steps=100)
    reps = w.astype(int)
    duplicated = tf.estimator.BoostedTreesRegressor(
        [X_COL], 1, n_trees=2, max_depth=2, learning_rate=0.5, model_dir=str(tmp_path / "d"),
        l2_regularization=0.1 * len(X) / reps.sum())  # statistics are per-example means
    duplicated.train(_data(np.repeat(X, reps), np.repeat(Y, reps)), steps=100)
    np.testing.assert_allclose(
        np.array([p["predictions"] for p in weighted.predict(
            lambda: tf.data.Dataset.from_tensors({"x": X, "w": w}))]),
        _predictions(duplicated, X), rtol=1e-5)
