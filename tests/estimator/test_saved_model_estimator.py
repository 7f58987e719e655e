"""tf.contrib.estimator.SavedModelEstimator: train / evaluate / predict from a multi-mode
SavedModel, values checked against the original Estimator."""

import numpy as np
import pytest

import tensorflux as tf
from tests.estimator.test_export_modes import X, Y, _receivers, input_fn, model_fn


def predict_input_fn():
    return tf.data.Dataset.from_tensors({"x": X})


@pytest.fixture
def exported(tmp_path):
    est = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path / "model"))
    est.train(input_fn, steps=3)
    supervised, serving = _receivers()
    modes = tf.estimator.ModeKeys
    path = est.experimental_export_all_saved_models(
        str(tmp_path / "export"), {modes.TRAIN: supervised, modes.EVAL: supervised,
                                   modes.PREDICT: serving})
    return est, path


def test_predict_and_evaluate_match_original(exported, tmp_path):
    est, path = exported
    sme = tf.contrib.estimator.SavedModelEstimator(path, model_dir=str(tmp_path / "sme"))
    expected = [p["y"] for p in est.predict(predict_input_fn)]
    got = [p["y"] for p in sme.predict(predict_input_fn)]
    np.testing.assert_allclose(np.array(got), np.array(expected), rtol=1e-6)
    eval_input = lambda: tf.data.Dataset.from_tensors(({"x": X}, Y))  # noqa: E731
    want = est.evaluate(eval_input)
    have = sme.evaluate(eval_input)
    assert have["global_step"] == want["global_step"] == 3
    np.testing.assert_allclose(have["mse"], want["mse"], rtol=1e-6)
    np.testing.assert_allclose(have["loss"], want["loss"], rtol=1e-6)


def test_train_continues_from_saved_model_values(exported, tmp_path):
    est, path = exported
    sme = tf.contrib.estimator.SavedModelEstimator(path, model_dir=str(tmp_path / "sme"))
    sme.train(input_fn, steps=2)
    est.train(input_fn, steps=2)  # the original, two more steps from the same values
    assert sme.get_variable_value("global_step") == 5
    np.testing.assert_allclose(sme.get_variable_value("w"), est.get_variable_value("w"),
                               rtol=1e-5)
    np.testing.assert_allclose(sme.get_variable_value("b"), est.get_variable_value("b"),
                               rtol=1e-5)
    sme.train(input_fn, steps=1)  # resumes from its own checkpoint now
    assert sme.get_variable_value("global_step") == 6


def test_errors(exported, tmp_path):
    est, _ = exported
    _, serving = _receivers()
    path = est.export_saved_model(str(tmp_path / "serve_only"), serving)
    sme = tf.contrib.estimator.SavedModelEstimator(path)
    with pytest.raises(RuntimeError, match="no meta graph for mode 'train'"):
        sme.train(input_fn, steps=1)
    with pytest.raises(ValueError, match="takes input 'x'"):
        list(sme.predict(lambda: tf.data.Dataset.from_tensors({"z": X})))
    with pytest.raises(OSError):
        tf.contrib.estimator.SavedModelEstimator(str(tmp_path / "nothing"))


def test_boosted_trees_export_keeps_growing_in_saved_model_estimator(tmp_path):
    # The ensemble's variables and its train-step op travel in the TRAIN meta graph: the
    # SavedModelEstimator finishes the trees exactly as the original estimator does.
    fc = tf.feature_column
    x = X[:, 0]
    y = Y[:, 0]
    col = fc.bucketized_column(fc.numeric_column("x"), [0.0, 1.0, 2.0])
    data = lambda: tf.data.Dataset.from_tensors(({"x": x}, y)).repeat()  # noqa: E731
    est = tf.estimator.BoostedTreesRegressor([col], 1, n_trees=2, max_depth=2,
                                             learning_rate=0.5, model_dir=str(tmp_path / "bt"))
    est.train(data, max_steps=1)
    supervised = tf.estimator.experimental.build_raw_supervised_input_receiver_fn(
        {"x": tf.placeholder(tf.float32, [None])}, tf.placeholder(tf.float32, [None]))
    path = est.experimental_export_all_saved_models(
        str(tmp_path / "export"), {tf.estimator.ModeKeys.TRAIN: supervised,
                                   tf.estimator.ModeKeys.EVAL: supervised})
    sme = tf.contrib.estimator.SavedModelEstimator(path, model_dir=str(tmp_path / "sme"))
    sme.train(data, steps=5)  # 3 more layers finish the ensemble; the rest are no-ops
    est.train(data, steps=5)
    assert sme.get_variable_value("boosted_trees/state")[0] == 2
    np.testing.assert_array_equal(sme.get_variable_value("boosted_trees/tree_split_feature"),
                                  est.get_variable_value("boosted_trees/tree_split_feature"))
    eval_data = lambda: tf.data.Dataset.from_tensors(({"x": x}, y))  # noqa: E731
    np.testing.assert_allclose(sme.evaluate(eval_data)["average_loss"],
                               est.evaluate(eval_data)["average_loss"], rtol=1e-6)
