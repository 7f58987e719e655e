"""train_and_evaluate run locally (evaluation per checkpoint, exporters), the specs' checks,
and the numpy/pandas input_fns."""

import os

import numpy as np
import pytest

import tensorflux as tf

X = np.random.RandomState(1).rand(64, 2).astype(np.float32)
Y = X @ np.array([[2.0], [-1.0]], np.float32) + 0.5


def model_fn(features, labels, mode):
    w = tf.get_variable("w", [2, 1], initializer=tf.zeros_initializer())
    b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
    y = tf.matmul(features["x"], w) + b
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={"y": y})
    loss = tf.reduce_mean(tf.square(y - labels))
    train_op = tf.train.GradientDescentOptimizer(0.5).minimize(loss,
                                                               tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def specs(exporters=(), max_steps=60, throttle_secs=0):
    train = tf.estimator.TrainSpec(tf.estimator.inputs.numpy_input_fn(
        {"x": X}, Y, batch_size=16, num_epochs=None, shuffle=True), max_steps=max_steps)
    evaluate = tf.estimator.EvalSpec(tf.estimator.inputs.numpy_input_fn(
        {"x": X}, Y, batch_size=32, shuffle=False), steps=None, exporters=list(exporters),
        throttle_secs=throttle_secs, start_delay_secs=0)
    return train, evaluate


RECEIVER = tf.estimator.export.build_raw_serving_input_receiver_fn(
    {"x": tf.placeholder(tf.float32, [None, 2], name="x")})


def eval_steps(model_dir):
    directory = os.path.join(model_dir, "eval")
    return sorted(e.step for f in os.listdir(directory)
                  for e in tf.train.summary_iterator(os.path.join(directory, f))
                  if e.HasField("summary"))


def test_local_train_and_evaluate_evaluates_each_checkpoint_and_exports(tmp_path):
    config = tf.estimator.RunConfig(model_dir=str(tmp_path), save_checkpoints_steps=20)
    est = tf.estimator.Estimator(model_fn, config=config)
    exporters = [tf.estimator.LatestExporter("latest", RECEIVER, exports_to_keep=1),
                 tf.estimator.FinalExporter("final", RECEIVER)]
    metrics, exports = tf.estimator.train_and_evaluate(est, *specs(exporters))
    # throttle_secs=0: every checkpoint after the first (step 0) is evaluated.
    assert eval_steps(str(tmp_path)) == [20, 40, 60]
    assert metrics["global_step"] == 60 and metrics["loss"] < 1e-3
    latest, final = exports
    assert os.path.dirname(latest) == os.path.join(str(tmp_path), "export", "latest").encode()
    assert len(os.listdir(tmp_path / "export" / "latest")) == 1  # exports_to_keep=1
    assert len(os.listdir(tmp_path / "export" / "final")) == 1  # only the final evaluation
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], final.decode())
        sig = meta.signature_def["serving_default"]
        served = sess.run(sig.outputs["y"].name, {sig.inputs["x"].name: X[:3]})
    np.testing.assert_allclose(served, Y[:3], atol=0.05)
    # Run again: max_steps already reached, training is skipped and the last checkpoint is
    # evaluated once more.
    metrics, _ = tf.estimator.train_and_evaluate(est, *specs())
    assert metrics["global_step"] == 60


def test_throttle_limits_local_evaluations(tmp_path):
    config = tf.estimator.RunConfig(model_dir=str(tmp_path), save_checkpoints_steps=10)
    est = tf.estimator.Estimator(model_fn, config=config)
    tf.estimator.train_and_evaluate(est, *specs(max_steps=40, throttle_secs=3600))
    assert eval_steps(str(tmp_path)) == [40]  # only the final checkpoint


def test_best_exporter_exports_only_improvements(tmp_path):
    est = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path))
    exporter = tf.estimator.BestExporter(serving_input_receiver_fn=RECEIVER,
                                         event_file_pattern=None)
    path = str(tmp_path / "best")
    assert exporter.name == "best_exporter"
    est.train(specs()[0].input_fn, steps=5)
    ckpt = est.latest_checkpoint()
    assert exporter.export(est, path, ckpt, {"loss": 2.0}, False) is not None
    assert exporter.export(est, path, ckpt, {"loss": 3.0}, False) is None
    # A better loss exports again (into a new timestamp directory, after a second).
    assert exporter.export(est, path, ckpt, {"loss": 1.0}, False) is not None
    assert len(os.listdir(path)) == 2
    with pytest.raises(ValueError, match="loss"):
        exporter.export(est, path, ckpt, {"accuracy": 1.0}, False)


def test_spec_validation():
    fn = specs()[0].input_fn
    with pytest.raises(TypeError, match="callable"):
        tf.estimator.TrainSpec("not a function")
    with pytest.raises(ValueError, match="max_steps > 0"):
        tf.estimator.TrainSpec(fn, max_steps=0)
    with pytest.raises(TypeError, match="SessionRunHook"):
        tf.estimator.TrainSpec(fn, hooks=[1])
    with pytest.raises(ValueError, match="steps > 0"):
        tf.estimator.EvalSpec(fn, steps=0)
    with pytest.raises(ValueError, match="throttle_secs >= 0"):
        tf.estimator.EvalSpec(fn, throttle_secs=-1)
    with pytest.raises(ValueError, match="start_delay_secs >= 0"):
        tf.estimator.EvalSpec(fn, start_delay_secs=-1)
    with pytest.raises(TypeError, match="Exporter"):
        tf.estimator.EvalSpec(fn, exporters=["x"])
    with pytest.raises(ValueError, match="unique names"):
        tf.estimator.EvalSpec(fn, exporters=[tf.estimator.LatestExporter("a", RECEIVER)] * 2)
    with pytest.raises(ValueError, match="exports_to_keep"):
        tf.estimator.LatestExporter("a", RECEIVER, exports_to_keep=0)
    spec = tf.estimator.EvalSpec(fn, exporters=tf.estimator.FinalExporter("f", RECEIVER))
    assert (spec.steps, spec.start_delay_secs, spec.throttle_secs, len(spec.exporters)) == \
        (100, 120, 600, 1)
    with pytest.raises(TypeError, match="tf.estimator.Estimator"):
        tf.estimator.train_and_evaluate("est", specs()[0], spec)
    with pytest.raises(TypeError, match="TrainSpec"):
        tf.estimator.train_and_evaluate(tf.estimator.Estimator(model_fn), spec, spec)


def run_input_fn(input_fn):
    out = []
    with tf.Graph().as_default():
        batch = input_fn()
        with tf.train.MonitoredSession() as sess:
            while not sess.should_stop():
                out.append(sess.run(batch))
    return out


def test_numpy_input_fn_batches_epochs_and_shuffle():
    x = {"a": np.arange(10, dtype=np.float32), "b": np.arange(10, 20)}
    y = np.arange(10) * 2
    batches = run_input_fn(tf.estimator.inputs.numpy_input_fn(x, y, batch_size=4,
                                                                num_epochs=2, shuffle=False))
    assert [len(labels) for _, labels in batches] == [4, 4, 4, 4, 4]
    features = np.concatenate([f["a"] for f, _ in batches])
    np.testing.assert_array_equal(features, np.tile(np.arange(10), 2))
    np.testing.assert_array_equal(np.concatenate([f["b"] for f, _ in batches]),
                                  features + 10)
    np.testing.assert_array_equal(np.concatenate([lab for _, lab in batches]), features * 2)
    shuffled = run_input_fn(tf.estimator.inputs.numpy_input_fn(x, y, batch_size=10,
                                                                num_epochs=1, shuffle=True))
    (features, labels), = shuffled
    assert sorted(features["a"]) == list(range(10)) and np.all(labels == 2 * features["a"])
    only_x = run_input_fn(tf.estimator.inputs.numpy_input_fn(np.ones((3, 2)), batch_size=2,
                                                              shuffle=False))
    assert [b.shape for b in only_x] == [(2, 2), (1, 2)]


@pytest.mark.parametrize("kwargs,error,message", [
    (dict(x={"a": np.ones(3)}, y=np.ones(3)), ValueError, "shuffle must be provided"),
    (dict(x={"a": np.ones(3)}, y=np.ones(4), shuffle=False), ValueError, "mismatched"),
    (dict(x={"a": np.ones(3)}, y={"a": np.ones(3)}, shuffle=False), ValueError, "duplicate"),
    (dict(x={}, shuffle=False), ValueError, "empty dict"),
    (dict(x="abc", shuffle=False), TypeError, "x must be"),
])
def test_numpy_input_fn_errors(kwargs, error, message):
    with pytest.raises(error, match=message):
        tf.estimator.inputs.numpy_input_fn(**kwargs)


def test_pandas_input_fn_without_pandas_names_it():
    try:
        import pandas  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="needs pandas"):
            tf.estimator.inputs.pandas_input_fn(None, shuffle=False)
    else:
        frame = pandas.DataFrame({"a": [1.0, 2.0, 3.0]})
        (features, labels), = run_input_fn(tf.estimator.inputs.pandas_input_fn(
            frame, pandas.Series([4, 5, 6]), shuffle=False))
        assert list(features["a"]) == [1.0, 2.0, 3.0] and list(labels) == [4, 5, 6]


def test_evaluator_task_evaluates_until_the_final_checkpoint(tmp_path, monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    trainer = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path))
    trainer.train(specs()[0].input_fn, max_steps=30)
    monkeypatch.setenv("TF_CONFIG", '{"cluster": {"chief": ["localhost:1"], "ps": '
                       '["localhost:2"]}, "task": {"type": "evaluator", "index": 0}}')
    evaluator = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path))
    exporter = tf.estimator.LatestExporter("latest", RECEIVER)
    train, evaluate = specs(exporters=[exporter], max_steps=30)
    assert tf.estimator.train_and_evaluate(evaluator, train, evaluate) is None
    assert eval_steps(str(tmp_path)) == [30]
    assert len(os.listdir(tmp_path / "export" / "latest")) == 1


def test_unknown_task_type_is_rejected(tmp_path, monkeypatch):
    monkeypatch.setenv("TF_CONFIG", '{"cluster": {"chief": ["localhost:1"], "sidecar": '
                       '["localhost:2"]}, "task": {"type": "sidecar", "index": 0}}')
    est = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path))
    with pytest.raises(ValueError, match="Task type sidecar is not supported"):
        tf.estimator.train_and_evaluate(est, *specs())


def test_early_stopping_hook_stops_training_from_eval_results(tmp_path):
    config = tf.estimator.RunConfig(model_dir=str(tmp_path), save_checkpoints_steps=10)
    est = tf.estimator.Estimator(model_fn, config=config)
    hook = tf.estimator.experimental.stop_if_lower_hook(est, "loss", 0.01,
                                                        run_every_secs=None,
                                                        run_every_steps=10)
    train, evaluate = specs(max_steps=1000)
    train = tf.estimator.TrainSpec(train.input_fn, max_steps=1000, hooks=[hook])
    metrics, _ = tf.estimator.train_and_evaluate(est, train, evaluate)
    steps = eval_steps(str(tmp_path))
    assert metrics["global_step"] < 1000 and metrics["loss"] < 0.01
    from tensorflux.estimator.early_stopping import read_eval_metrics
    history = read_eval_metrics(est.eval_dir())
    # Training stopped at the first check after an evaluation below the threshold.
    below = [step for step, m in history.items() if m["loss"] < 0.01]
    assert below and steps[-1] <= below[0] + 10


def test_no_decrease_rule_reads_eval_history(tmp_path):
    est = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path))
    writer = tf.summary.FileWriter(est.eval_dir())
    for step, loss in [(10, 1.0), (20, 0.5), (30, 0.6), (40, 0.7)]:
        writer.add_summary(tf.Summary(value=[tf.Summary.Value(tag="loss",
                                                              simple_value=loss)]), step)
    writer.close()
    stop = tf.estimator.experimental.stop_if_no_decrease_hook
    assert stop(est, "loss", 20)._should_stop_fn() is True
    assert stop(est, "loss", 30)._should_stop_fn() is False
    assert stop(est, "loss", 10, min_steps=30)._should_stop_fn() is True
    higher = tf.estimator.experimental.stop_if_higher_hook
    assert higher(est, "loss", 0.9)._should_stop_fn() is True
    assert higher(est, "loss", 0.9, min_steps=20)._should_stop_fn() is False
    with pytest.raises(ValueError, match="not found"):
        higher(est, "auc", 0.9)._should_stop_fn()


def test_in_memory_evaluator_hook_evaluates_the_training_variables(tmp_path):
    est = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path))
    eval_fn = tf.estimator.inputs.numpy_input_fn({"x": X}, Y, batch_size=64, shuffle=False)
    hook = tf.estimator.experimental.InMemoryEvaluatorHook(est, eval_fn, every_n_iter=10,
                                                           name="mem")
    est.train(specs()[0].input_fn, steps=25, hooks=[hook])
    # Checkpoints exist only for steps 0 and 25 (every 600 s by default): the hook
    # evaluated the live variables at steps 10 and 20, and at the end.
    from tensorflux.estimator.early_stopping import read_eval_metrics
    history = read_eval_metrics(est.eval_dir("mem"))
    assert sorted(history) == [10, 20, 25]
    assert history[10]["loss"] > history[20]["loss"] > history[25]["loss"]
    assert est.latest_checkpoint().endswith("-25")
    final = est.evaluate(eval_fn)
    np.testing.assert_allclose(history[25]["loss"], final["loss"], rtol=1e-6)
    with pytest.raises(ValueError, match="every_n_iter"):
        tf.estimator.experimental.InMemoryEvaluatorHook(est, eval_fn, every_n_iter=0)
