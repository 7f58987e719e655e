"""`tf.contrib.learn.monitors` (TF 1.x) as session hooks.

contrib.learn's monitors were replaced by `tf.train.SessionRunHook`s; here each monitor is a
hook, so `fit(monitors=[...])` and `tf.estimator`'s `train(hooks=[...])` both take them.
`ValidationMonitor` evaluates the estimator on validation data every `every_n_steps` steps
(when a newer checkpoint exists, as contrib did: save often, e.g. `RunConfig(
save_checkpoints_secs=1)`), and stops training after `early_stopping_rounds` steps without
improvement of `early_stopping_metric`.
"""

from __future__ import annotations

from tensorflux.platform import tf_logging as logging
from tensorflux.train import basic_session_run_hooks as basic_hooks
from tensorflux.train import training_util
from tensorflux.train.session_run_hook import SessionRunArgs, SessionRunHook

__all__ = ["ValidationMonitor", "StopAtStep", "PrintTensor", "LoggingTrainable",
           "NanLoss", "replace_monitors_with_hooks"]

StopAtStep = basic_hooks.StopAtStepHook


def PrintTensor(tensor_names, every_n=100, first_n=1):  # noqa: N802 - TF's class name
    """Logs the tensors `tensor_names` (a list, or a dict tag -> name) every `every_n`
    steps (`tf.train.LoggingTensorHook`)."""
    del first_n
    return basic_hooks.LoggingTensorHook(tensor_names, every_n_iter=every_n)


def LoggingTrainable(scope=None, every_n=100, first_n=1):  # noqa: N802 - TF's class name
    """Not provided: log trainable variables with `tf.train.LoggingTensorHook`.

    Raises:
        NotImplementedError: always.
    """
    raise NotImplementedError("contrib.learn.monitors.LoggingTrainable is not provided by "
                              "tensorflux; use tf.train.LoggingTensorHook on the variables.")


def NanLoss(loss_tensor, every_n_steps=100, fail_on_nan_loss=True):  # noqa: N802
    """Stops (or fails) when `loss_tensor` is NaN (`tf.train.NanTensorHook`)."""
    del every_n_steps
    return basic_hooks.NanTensorHook(loss_tensor, fail_on_nan_loss=fail_on_nan_loss)


def replace_monitors_with_hooks(monitors_or_hooks, estimator):
    """The monitors as hooks: here they already are; estimator-aware ones get `estimator`."""
    hooks = list(monitors_or_hooks or [])
    for hook in hooks:
        if hasattr(hook, "set_estimator"):
            hook.set_estimator(estimator)
    return hooks


class ValidationMonitor(SessionRunHook):
    """Evaluates on validation data every `every_n_steps` steps; stops early.

    Contract: an evaluation runs after a step whose global step is at least `every_n_steps`
    past the previous evaluation (or past 0 for the first one, as contrib's EveryN), and only
    on a checkpoint not evaluated before. With
    `early_stopping_rounds`, training stops once `early_stopping_metric` has not improved
    (decreased, or increased when `early_stopping_metric_minimize` is False) for that many
    steps since its best evaluation.

    Raises:
        ValueError: neither x nor input_fn, or both; every_n_steps < 1; (at evaluation) a
            metric not in the results.
    """

    def __init__(self, x=None, y=None, input_fn=None, batch_size=None, eval_steps=None,
                 every_n_steps=100, metrics=None, hooks=None, early_stopping_rounds=None,
                 early_stopping_metric="loss", early_stopping_metric_minimize=True, name=None):
        if (x is None) == (input_fn is None):
            raise ValueError("ValidationMonitor: exactly one of x and input_fn must be given.")
        if every_n_steps is None or every_n_steps < 1:
            raise ValueError(f"every_n_steps must be >= 1; got {every_n_steps}")
        self.x, self.y, self.input_fn, self.batch_size = x, y, input_fn, batch_size
        self.eval_steps, self.metrics, self.hooks, self.name = eval_steps, metrics, hooks, name
        self._every_n_steps = every_n_steps
        self.early_stopping_rounds = early_stopping_rounds
        self.early_stopping_metric = early_stopping_metric
        self.early_stopping_metric_minimize = early_stopping_metric_minimize
        self._estimator = None
        self._last_eval_step = 0
        self._last_checkpoint = None
        self._best_value = None
        self._best_step = None
        self._best_metrics = None
        self._early_stopped = False
        self._global_step = None

    def set_estimator(self, estimator):
        """The estimator to evaluate (set by `fit`)."""
        self._estimator = estimator

    @property
    def early_stopped(self):
        return self._early_stopped

    @property
    def best_step(self):
        return self._best_step

    @property
    def best_value(self):
        return self._best_value

    @property
    def best_metrics(self):
        return self._best_metrics

    def begin(self):
        if self._estimator is None:
            raise ValueError("ValidationMonitor needs an estimator: pass it to "
                             "contrib.learn fit(monitors=[...]) or call set_estimator.")
        self._global_step = training_util.get_global_step()

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step)

    def after_run(self, run_context, run_values):
        step = int(run_values.results)
        if step < self._last_eval_step + self._every_n_steps:
            return
        checkpoint = self._estimator._estimator.latest_checkpoint()
        if checkpoint is None or checkpoint == self._last_checkpoint:
            return
        self._last_eval_step = step
        self._last_checkpoint = checkpoint
        results = self._estimator.evaluate(x=self.x, y=self.y, input_fn=self.input_fn,
                                           batch_size=self.batch_size, steps=self.eval_steps,
                                           metrics=self.metrics, hooks=self.hooks,
                                           name=self.name, checkpoint_path=checkpoint)
        if self.early_stopping_rounds is None:
            return
        if self.early_stopping_metric not in results:
            raise ValueError(f"Metric {self.early_stopping_metric} missing from outputs "
                             f"{sorted(results)}.")
        value = float(results[self.early_stopping_metric])
        better = (self._best_value is None or
                  (value < self._best_value if self.early_stopping_metric_minimize
                   else value > self._best_value))
        if better:
            self._best_value, self._best_metrics = value, results
            self._best_step = int(results.get("global_step", step))
        elif step - self._best_step >= self.early_stopping_rounds:
            logging.info(f"Stopping. Best step: {self._best_step} with "
                         f"{self.early_stopping_metric} = {self._best_value}.")
            self._early_stopped = True
            run_context.request_stop()
