"""contrib.learn monitors (ValidationMonitor's schedule and early stopping), Experiment,
learn_runner.run and io.numpy_input_fn."""

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.train.session_run_hook import SessionRunContext, SessionRunValues

learn = tf.contrib.learn


class _FakeEstimator:
    """Evaluates to the next of `losses`; each call to latest_checkpoint gives a new path."""

    def __init__(self, losses):
        self._losses = list(losses)
        self.evaluated = []
        self._estimator = self
        self._count = 0

    def latest_checkpoint(self):
        self._count += 1
        return f"ckpt-{self._count}"

    def evaluate(self, **kwargs):
        self.evaluated.append(kwargs["checkpoint_path"])
        return {"loss": self._losses.pop(0)}


def _step(hook, step):
    context = SessionRunContext(original_args=None, session=None)
    hook.after_run(context, SessionRunValues(results=step, options=None, run_metadata=None))
    return context.stop_requested


def test_validation_monitor_schedule_and_early_stopping():
    est = _FakeEstimator([3.0, 2.0, 2.5, 2.4, 2.6])
    monitor = learn.monitors.ValidationMonitor(x=np.zeros((2, 1)), y=np.zeros(2),
                                               every_n_steps=10, early_stopping_rounds=20)
    monitor.set_estimator(est)
    stops = [_step(monitor, s) for s in (1, 5, 11, 15, 21, 31, 41, 51)]
    # Evaluations at steps 11, 21, 31, 41, 51 (not 1, 5: fewer than 10 steps past 0; not 15:
    # fewer than 10 past 11).
    assert len(est.evaluated) == 5
    # Best loss 2.0 at step 21; no improvement by step 41 (20 steps later): stop from there.
    assert stops == [False, False, False, False, False, False, True, True]
    assert monitor.early_stopped and monitor.best_value == 2.0
    with pytest.raises(ValueError, match="exactly one of x and input_fn"):
        learn.monitors.ValidationMonitor()


def _input_fns():
    rng = np.random.RandomState(0)
    x = rng.randn(32, 2).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.int64)
    return (learn.io.numpy_input_fn({"x": x}, y, batch_size=8, num_epochs=None),
            learn.io.numpy_input_fn({"x": x}, y, batch_size=32, shuffle=False), y)


def test_experiment_train_and_evaluate_through_learn_runner(tmp_path):
    train_fn, eval_fn, y = _input_fns()

    def experiment_fn(output_dir):
        clf = learn.LinearClassifier([tf.contrib.layers.real_valued_column("x", 2)],
                                     model_dir=output_dir)
        return learn.Experiment(clf, train_fn, eval_fn, train_steps=7, eval_steps=1)

    result, exports = learn.learn_runner.run(experiment_fn, output_dir=str(tmp_path))
    assert exports == [] and result["global_step"] == 7
    assert "accuracy" in result and 0.0 <= result["accuracy"] <= 1.0
    again, _ = learn.learn_runner.run(experiment_fn, output_dir=str(tmp_path),
                                      schedule="continuous_train_and_eval")
    assert again["global_step"] == 14  # 7 more steps from the checkpoint
    with pytest.raises(ValueError, match="non-existent task"):
        learn.learn_runner.run(experiment_fn, output_dir=str(tmp_path), schedule="nope")
    with pytest.raises(ValueError, match="exactly one"):
        learn.learn_runner.run(experiment_fn)


def test_io_numpy_input_fn_shuffles_by_default():
    x = np.arange(64, dtype=np.float32)
    with tf.Graph().as_default():
        features = learn.io.numpy_input_fn({"x": x}, batch_size=64)()
        with tf.Session() as sess:
            got = sess.run(features["x"])
    assert sorted(got.tolist()) == x.tolist() and not np.array_equal(got, x)


def test_run_config_maps_contrib_arguments():
    config = learn.RunConfig(num_cores=2, log_device_placement=True, save_checkpoints_secs=None,
                             save_checkpoints_steps=10, tf_random_seed=3, model_dir="/tmp/m")
    assert config.session_config.intra_op_parallelism_threads == 2
    assert config.session_config.log_device_placement
    assert (config.save_checkpoints_steps, config.save_checkpoints_secs) == (10, None)
    assert config.tf_random_seed == 3 and config.model_dir == "/tmp/m"
    default = learn.RunConfig()
    assert (default.save_checkpoints_steps, default.save_checkpoints_secs) == (None, 600)
    assert default.session_config is None
    assert isinstance(default.replace(model_dir="/tmp/x"), learn.RunConfig)


def test_infer_real_valued_columns_from_input_fn():
    def input_fn():
        return {"a": tf.zeros([4, 3]), "b": tf.zeros([4], tf.int32)}, tf.zeros([4])

    cols = learn.infer_real_valued_columns_from_input_fn(input_fn)
    assert [(c.key, c.shape, c.dtype) for c in cols] == [("a", (3,), tf.float32),
                                                         ("b", (1,), tf.int32)]
