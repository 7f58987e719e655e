"""`tf.estimator.experimental` early stopping: stop training from evaluation results.

`make_early_stopping_hook(estimator, should_stop_fn)` calls `should_stop_fn()` on the chief
every `run_every_secs` seconds (or `run_every_steps` steps); once it returns True the chief
sets the variable `signal_early_stopping` (on the ps tasks in a cluster) and stops, and every
worker stops at its next step when it reads it. The `stop_if_*` helpers build
`should_stop_fn` from the evaluation summaries in the estimator's eval directory, as
`train_and_evaluate` writes them.
"""

from __future__ import annotations

import operator
import os

from tensorflux.framework import dtypes
from tensorflux.framework.graph import GraphKeys
from tensorflux.ops.state import initializers as init_ops
from tensorflux.ops.state import variable_ops as state_ops
from tensorflux.ops.state import variable_scope
from tensorflux.platform import tf_logging as logging
from tensorflux.summary import writer as summary_writer
from tensorflux.train import training_util
from tensorflux.train.session_run_hook import SecondOrStepTimer, SessionRunArgs, SessionRunHook

__all__ = ["make_early_stopping_hook", "stop_if_higher_hook", "stop_if_lower_hook",
           "stop_if_no_increase_hook", "stop_if_no_decrease_hook", "read_eval_metrics"]

_STOP_VAR = "signal_early_stopping"


class _EarlyStoppingHook(SessionRunHook):
    """The chief checks the predicate and raises the shared flag; everyone obeys the flag."""

    def __init__(self, should_stop_fn, is_chief, run_every_secs, run_every_steps):
        if not callable(should_stop_fn):
            raise TypeError(f"`should_stop_fn` must be callable; got {should_stop_fn}")
        self._should_stop_fn = should_stop_fn
        self._is_chief = is_chief
        self._timer = SecondOrStepTimer(every_secs=run_every_secs, every_steps=run_every_steps)

    def begin(self):
        with variable_scope.variable_scope(variable_scope.get_variable_scope(),
                                           reuse=variable_scope.AUTO_REUSE):
            self._flag = variable_scope.get_variable(
                _STOP_VAR, shape=[], dtype=dtypes.bool_, trainable=False,
                initializer=init_ops.constant_initializer(False),
                collections=[GraphKeys.GLOBAL_VARIABLES])
        self._raise_flag = state_ops.assign(self._flag, True)
        self._global_step = training_util.get_global_step()

    def before_run(self, run_context):
        return SessionRunArgs([self._flag, self._global_step])

    def after_run(self, run_context, run_values):
        stop, step = run_values.results
        if stop:
            logging.info("Early stopping: the stop flag is set.")
            run_context.request_stop()
            return
        if not self._is_chief or not self._timer.should_trigger_for_step(int(step)):
            return
        self._timer.update_last_triggered_step(int(step))
        if self._should_stop_fn():
            logging.info("Requesting early stopping at global step %d", int(step))
            run_context.session.run(self._raise_flag)
            run_context.request_stop()


def make_early_stopping_hook(estimator, should_stop_fn, run_every_secs=60,
                             run_every_steps=None):
    """A training hook stopping when `should_stop_fn()` returns True (checked on the chief).

    Raises:
        ValueError: both run_every_secs and run_every_steps given.
        TypeError: should_stop_fn is not callable.
    """
    if run_every_secs is not None and run_every_steps is not None:
        raise ValueError("Only one of run_every_secs and run_every_steps can be passed.")
    return _EarlyStoppingHook(should_stop_fn, estimator.config.is_chief, run_every_secs,
                              run_every_steps)


def read_eval_metrics(eval_dir) -> dict:
    """{global_step: {metric: value}} of the evaluation summaries in `eval_dir`, in step
    order (an empty dict when there are none yet)."""
    results: dict = {}
    if not os.path.isdir(eval_dir):
        return results
    for name in sorted(os.listdir(eval_dir)):
        if "tfevents" not in name:
            continue
        for event in summary_writer.summary_iterator(os.path.join(eval_dir, name)):
            if event.HasField("summary"):
                metrics = results.setdefault(int(event.step), {})
                for value in event.summary.value:
                    if value.HasField("simple_value"):
                        metrics[value.tag] = value.simple_value
    return dict(sorted(results.items()))


def _metric_history(estimator, metric_name, eval_dir, min_steps):
    eval_dir = eval_dir or estimator.eval_dir()
    history = []
    for step, metrics in read_eval_metrics(eval_dir).items():
        if step < min_steps:
            continue
        if metric_name not in metrics:
            raise ValueError(f"metric_name {metric_name} not found in eval metrics at step "
                             f"{step}: {sorted(metrics)}")
        history.append((step, metrics[metric_name]))
    return history


def _threshold_hook(estimator, metric_name, threshold, compare, eval_dir, min_steps,
                    run_every_secs, run_every_steps):
    def should_stop():
        return any(compare(value, threshold) for _, value in
                   _metric_history(estimator, metric_name, eval_dir, min_steps))

    return make_early_stopping_hook(estimator, should_stop, run_every_secs, run_every_steps)


def _no_progress_hook(estimator, metric_name, max_steps_without, better, eval_dir, min_steps,
                      run_every_secs, run_every_steps):
    def should_stop():
        history = _metric_history(estimator, metric_name, eval_dir, min_steps)
        if not history:
            return False
        best_step, best = history[0]
        for step, value in history[1:]:
            if better(value, best):
                best_step, best = step, value
        return history[-1][0] - best_step >= max_steps_without

    return make_early_stopping_hook(estimator, should_stop, run_every_secs, run_every_steps)


def stop_if_higher_hook(estimator, metric_name, threshold, eval_dir=None, min_steps=0,
                        run_every_secs=60, run_every_steps=None):
    """Stops once an evaluation (at step >= min_steps) had `metric_name` > threshold."""
    return _threshold_hook(estimator, metric_name, threshold, operator.gt, eval_dir,
                           min_steps, run_every_secs, run_every_steps)


def stop_if_lower_hook(estimator, metric_name, threshold, eval_dir=None, min_steps=0,
                       run_every_secs=60, run_every_steps=None):
    """Stops once an evaluation (at step >= min_steps) had `metric_name` < threshold."""
    return _threshold_hook(estimator, metric_name, threshold, operator.lt, eval_dir,
                           min_steps, run_every_secs, run_every_steps)


def stop_if_no_increase_hook(estimator, metric_name, max_steps_without_increase,
                             eval_dir=None, min_steps=0, run_every_secs=60,
                             run_every_steps=None):
    """Stops once `metric_name` has not increased for `max_steps_without_increase` steps."""
    return _no_progress_hook(estimator, metric_name, max_steps_without_increase, operator.gt,
                             eval_dir, min_steps, run_every_secs, run_every_steps)


def stop_if_no_decrease_hook(estimator, metric_name, max_steps_without_decrease,
                             eval_dir=None, min_steps=0, run_every_secs=60,
                             run_every_steps=None):
    """Stops once `metric_name` has not decreased for `max_steps_without_decrease` steps."""
    return _no_progress_hook(estimator, metric_name, max_steps_without_decrease, operator.lt,
                             eval_dir, min_steps, run_every_secs, run_every_steps)
