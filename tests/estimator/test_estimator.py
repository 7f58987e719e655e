"""tf.estimator.Estimator with a custom model_fn: training recovers known weights, evaluate
and predict agree with NumPy over the same checkpoint, training resumes, SavedModels serve the
same predictions, and misuse raises TF's errors."""

import os

import numpy as np
import pytest

import tensorflux as tf

W = np.array([[1.0], [-2.0], [0.5]], np.float32)
B = 0.3
X = np.random.RandomState(0).rand(96, 3).astype(np.float32)
Y = X @ W + B


def linear_model_fn(features, labels, mode, params):
    w = tf.get_variable("w", [3, 1], initializer=tf.zeros_initializer())
    b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
    y = tf.matmul(features["x"], w) + b
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={"y": y, "double": 2 * y})
    loss = tf.reduce_mean(tf.square(y - labels))
    train_op = tf.train.GradientDescentOptimizer(params.get("lr", 0.5)).minimize(
        loss, tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(
        mode, loss=loss, train_op=train_op,
        eval_metric_ops={"mae": tf.metrics.mean_absolute_error(labels, y),
                         "mean_y": tf.metrics.mean(y)})


def train_input(batch_size=32, epochs=None):
    return tf.estimator.inputs.numpy_input_fn({"x": X}, Y, batch_size=batch_size,
                                              num_epochs=epochs, shuffle=True)


def eval_input(batch_size=32):
    return tf.estimator.inputs.numpy_input_fn({"x": X}, Y, batch_size=batch_size,
                                              num_epochs=1, shuffle=False)


def make(tmp_path, **params):
    return tf.estimator.Estimator(linear_model_fn, model_dir=str(tmp_path),
                                  params=params or {"lr": 0.5})


def test_training_recovers_weights_and_writes_checkpoints_and_events(tmp_path):
    est = make(tmp_path)
    assert est.train(train_input(), max_steps=300) is est
    np.testing.assert_allclose(est.get_variable_value("w"), W, atol=1e-3)
    np.testing.assert_allclose(est.get_variable_value("b"), [B], atol=1e-3)
    assert sorted(est.get_variable_names()) == ["b", "global_step", "w"]
    assert est.latest_checkpoint().endswith("model.ckpt-300")
    assert any("tfevents" in f for f in os.listdir(tmp_path))
    assert os.path.exists(os.path.join(tmp_path, "graph.pbtxt"))


def test_evaluate_equals_numpy_over_the_same_checkpoint(tmp_path):
    est = make(tmp_path, lr=0.1)
    est.train(train_input(), steps=20)
    w, b = est.get_variable_value("w"), est.get_variable_value("b")
    result = est.evaluate(eval_input(batch_size=32), name="holdout")
    pred = X @ w + b
    batch_losses = [np.mean((pred[i:i + 32] - Y[i:i + 32]) ** 2) for i in range(0, 96, 32)]
    assert result["global_step"] == 20
    np.testing.assert_allclose(result["loss"], np.mean(batch_losses), rtol=1e-5)
    np.testing.assert_allclose(result["mae"], np.mean(np.abs(pred - Y)), rtol=1e-5)
    np.testing.assert_allclose(result["mean_y"], pred.mean(), rtol=1e-5)
    # Events of evaluate(name="holdout") go to model_dir/eval_holdout, tagged by metric.
    directory = est.eval_dir("holdout")
    assert directory == os.path.join(str(tmp_path), "eval_holdout")
    (path,) = [os.path.join(directory, f) for f in os.listdir(directory)]
    values = {v.tag: v.simple_value for e in tf.train.summary_iterator(path)
              if e.HasField("summary") for v in e.summary.value}
    np.testing.assert_allclose(values["mae"], result["mae"], rtol=1e-6)
    assert "global_step" not in values
    # steps bounds the number of batches.
    two = est.evaluate(eval_input(batch_size=32), steps=2)
    np.testing.assert_allclose(two["loss"], np.mean(batch_losses[:2]), rtol=1e-5)


def test_predict_matches_manual_computation(tmp_path):
    est = make(tmp_path)
    est.train(train_input(), steps=15)
    w, b = est.get_variable_value("w"), est.get_variable_value("b")
    only_x = tf.estimator.inputs.numpy_input_fn({"x": X[:10]}, batch_size=4, shuffle=False)
    singles = list(est.predict(only_x))
    assert len(singles) == 10 and sorted(singles[0]) == ["double", "y"]
    np.testing.assert_allclose(np.stack([p["y"] for p in singles]), X[:10] @ w + b, rtol=1e-5)
    batches = list(est.predict(only_x, predict_keys=["double"], yield_single_examples=False))
    assert [sorted(batch) for batch in batches] == [["double"]] * 3
    assert [len(batch["double"]) for batch in batches] == [4, 4, 2]
    np.testing.assert_allclose(np.concatenate([p["double"] for p in batches]),
                               2 * (X[:10] @ w + b), rtol=1e-5)
    with pytest.raises(ValueError, match="at least one output"):
        next(est.predict(only_x, predict_keys=["nope"]))


def test_training_resumes_and_skips_when_max_steps_reached(tmp_path):
    est = make(tmp_path)
    est.train(train_input(), steps=30)
    w30 = est.get_variable_value("w")
    est.train(train_input(), steps=30)
    assert est.get_variable_value("global_step") == 60
    assert not np.allclose(est.get_variable_value("w"), w30)
    # A new Estimator on the same model_dir continues from the checkpoint...
    again = make(tmp_path)
    again.train(train_input(), max_steps=70)
    assert again.get_variable_value("global_step") == 70
    # ...and returns at once when max_steps is already reached (no new checkpoint).
    files = sorted(os.listdir(tmp_path))
    again.train(train_input(), max_steps=50)
    assert sorted(os.listdir(tmp_path)) == files


def test_input_fn_may_return_a_dataset_and_take_params_and_config(tmp_path):
    seen = {}

    def input_fn(params, config):
        seen["params"], seen["model_dir"] = params, config.model_dir
        dataset = tf.data.Dataset.from_tensor_slices(({"x": X}, Y))
        return dataset.repeat().batch(16)

    est = tf.estimator.Estimator(linear_model_fn, model_dir=str(tmp_path),
                                 params={"lr": 0.5})
    est.train(input_fn, steps=200)
    assert seen == {"params": {"lr": 0.5}, "model_dir": str(tmp_path)}
    np.testing.assert_allclose(est.get_variable_value("w"), W, atol=0.05)


def test_model_fn_signature_is_inspected(tmp_path):
    calls = []

    def features_only(features):
        calls.append("features_only")
        w = tf.get_variable("w", [3, 1])
        return tf.estimator.EstimatorSpec("infer", predictions=tf.matmul(features, w))

    est = tf.estimator.Estimator(features_only, model_dir=str(tmp_path))
    preds = list(est.predict(tf.estimator.inputs.numpy_input_fn(X[:3], shuffle=False)))
    assert calls == ["features_only"] and len(preds) == 3 and preds[0].shape == (1,)
    with pytest.raises(ValueError, match="does not take labels"):
        est.train(train_input(), steps=1)
    with pytest.raises(ValueError, match="must include features"):
        tf.estimator.Estimator(lambda x, labels: None)
    with pytest.raises(ValueError, match="does not include params"):
        tf.estimator.Estimator(features_only, params={"a": 1})
    with pytest.raises(ValueError, match="EstimatorSpec"):
        tf.estimator.Estimator(lambda features, labels: "spec",
                               model_dir=str(tmp_path / "x")).train(train_input(), steps=1)


def test_train_argument_errors(tmp_path):
    est = make(tmp_path)
    with pytest.raises(ValueError, match="both steps and max_steps"):
        est.train(train_input(), steps=1, max_steps=2)
    with pytest.raises(ValueError, match="steps > 0"):
        est.train(train_input(), steps=0)
    with pytest.raises(ValueError, match="max_steps > 0"):
        est.train(train_input(), max_steps=-1)
    with pytest.raises(TypeError, match="SessionRunHook"):
        est.train(train_input(), steps=1, hooks=["not a hook"])
    with pytest.raises(ValueError, match="Could not find trained model"):
        est.get_variable_value("w")
    with pytest.raises(ValueError, match="Couldn't find trained model"):
        est.export_saved_model(str(tmp_path / "export"), lambda: None)


def test_temporary_model_dir_and_config_conflicts(tmp_path):
    est = tf.estimator.Estimator(linear_model_fn, params={})
    assert os.path.isdir(est.model_dir) and est.config.model_dir == est.model_dir
    config = tf.estimator.RunConfig(model_dir=str(tmp_path / "a"))
    assert tf.estimator.Estimator(linear_model_fn, config=config, params={}).model_dir == \
        str(tmp_path / "a")
    with pytest.raises(ValueError, match="different values"):
        tf.estimator.Estimator(linear_model_fn, model_dir=str(tmp_path / "b"), config=config,
                               params={})
    with pytest.raises(ValueError, match="RunConfig"):
        tf.estimator.Estimator(linear_model_fn, config={"model_dir": "x"}, params={})


def test_hooks_and_saving_listeners_run(tmp_path):
    class Counting(tf.estimator.SessionRunHook):
        runs = 0

        def after_run(self, run_context, run_values):
            Counting.runs += 1

    class Listener(tf.estimator.CheckpointSaverListener):
        steps = []

        def after_save(self, session, global_step_value):
            Listener.steps.append(global_step_value)

    config = tf.estimator.RunConfig(save_checkpoints_steps=10)
    est = tf.estimator.Estimator(linear_model_fn, model_dir=str(tmp_path), config=config,
                                 params={})
    est.train(train_input(), steps=25, hooks=[Counting()], saving_listeners=[Listener()])
    assert Counting.runs == 25
    assert Listener.steps == [0, 10, 20, 25]
    no_ckpt = tf.estimator.Estimator(
        linear_model_fn, model_dir=str(tmp_path / "n"), params={},
        config=tf.estimator.RunConfig(save_checkpoints_secs=None))
    with pytest.raises(ValueError, match="CheckpointSaverHook"):
        no_ckpt.train(train_input(), steps=1, saving_listeners=[Listener()])


def test_export_load_serves_the_same_predictions(tmp_path):
    est = make(tmp_path)
    est.train(train_input(), steps=10)
    expected = np.stack([p["y"] for p in est.predict(
        tf.estimator.inputs.numpy_input_fn({"x": X[:6]}, shuffle=False))])
    receiver = tf.estimator.export.build_raw_serving_input_receiver_fn(
        {"x": tf.placeholder(tf.float32, [None, 3])})
    export_dir = est.export_saved_model(str(tmp_path / "export"), receiver)
    assert isinstance(export_dir, bytes)
    assert os.path.basename(export_dir).isdigit()
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, [tf.saved_model.tag_constants.SERVING],
                                          export_dir.decode())
        signature = meta.signature_def["serving_default"]
        assert sorted(signature.outputs) == ["double", "y"]
        served = sess.run(signature.outputs["y"].name, {signature.inputs["x"].name: X[:6]})
    np.testing.assert_allclose(served, expected, rtol=1e-6)
    # export_savedmodel is the older name; a second export gets a new timestamp directory.
    second = est.export_savedmodel(str(tmp_path / "export"), receiver)
    assert second != export_dir and len(os.listdir(tmp_path / "export")) == 2


def test_warm_start_from_a_checkpoint(tmp_path):
    source = make(tmp_path / "src")
    source.train(train_input(), steps=40)
    target = tf.estimator.Estimator(linear_model_fn, model_dir=str(tmp_path / "dst"),
                                    params={"lr": 1e-9},
                                    warm_start_from=str(tmp_path / "src"))
    target.train(train_input(), steps=1)
    np.testing.assert_allclose(target.get_variable_value("w"), source.get_variable_value("w"),
                               atol=1e-6)
    assert target.get_variable_value("global_step") == 1


def test_evaluate_announces_the_restored_checkpoint_once(tmp_path, caplog):
    # TF1 logs "Restoring parameters from <ckpt>" once per evaluation (the Saver's line).
    import logging

    logger = logging.getLogger("tensorflow")
    old = logger.level
    tf.logging.set_verbosity(tf.logging.INFO)
    caplog.set_level(logging.INFO, logger="tensorflow")
    try:
        est = make(tmp_path, lr=0.1)
        est.train(train_input(), max_steps=3)
        caplog.clear()
        metrics = est.evaluate(eval_input())
    finally:
        logger.setLevel(old)
    restores = [r.getMessage() for r in caplog.records
                if r.getMessage().startswith("Restoring parameters from")]
    assert restores == [f"Restoring parameters from {est.latest_checkpoint()}"]
    assert metrics["global_step"] == 3
