"""`tf.contrib.learn.Experiment` (TF 1.x): an estimator with its train and eval input_fns.

Run locally (in-process): `train` fits `train_steps` steps, `evaluate` runs `eval_steps`
batches of the eval input, `train_and_evaluate` (and `continuous_train_and_eval`) trains
(evaluating every `min_eval_frequency` steps through a ValidationMonitor when it is set) and
then evaluates once more, `test` trains and evaluates one step each. Distributed schedules
(`run_std_server`, `continuous_eval`) are not provided.
"""

from __future__ import annotations

from tensorflux.contrib.learn.monitors import ValidationMonitor

__all__ = ["Experiment"]


class Experiment:
    """What `learn_runner.run` runs: an estimator, its input_fns, steps and metrics.

    Raises:
        ValueError: train_input_fn or eval_input_fn not callable.
    """

    def __init__(self, estimator, train_input_fn, eval_input_fn, eval_metrics=None,
                 train_steps=None, eval_steps=100, train_monitors=None, eval_hooks=None,
                 local_eval_frequency=None, eval_delay_secs=120,
                 continuous_eval_throttle_secs=60, min_eval_frequency=None,
                 delay_workers_by_global_step=False, export_strategies=None,
                 train_steps_per_iteration=None):
        del (local_eval_frequency, eval_delay_secs, continuous_eval_throttle_secs,
             delay_workers_by_global_step, train_steps_per_iteration)
        if not callable(train_input_fn) or not callable(eval_input_fn):
            raise ValueError("train_input_fn and eval_input_fn must be callables.")
        if export_strategies:
            raise ValueError("Experiment: export_strategies are not supported by tensorflux; "
                             "call estimator.export_savedmodel after training.")
        self._estimator = estimator
        self._train_input_fn = train_input_fn
        self._eval_input_fn = eval_input_fn
        self._eval_metrics = eval_metrics
        self._train_steps = train_steps
        self._eval_steps = eval_steps
        self._train_monitors = list(train_monitors or [])
        self._eval_hooks = list(eval_hooks or [])
        self._min_eval_frequency = min_eval_frequency

    @property
    def estimator(self):
        return self._estimator

    @property
    def eval_metrics(self):
        return self._eval_metrics

    @property
    def train_steps(self):
        return self._train_steps

    @property
    def eval_steps(self):
        return self._eval_steps

    def extend_train_hooks(self, additional_hooks):
        """Adds hooks (monitors) to the training ones."""
        self._train_monitors.extend(additional_hooks)

    def _fit(self, steps, monitors):
        fit = getattr(self._estimator, "fit", None)
        if fit is not None:
            return fit(input_fn=self._train_input_fn, steps=steps, monitors=monitors)
        return self._estimator.train(self._train_input_fn, hooks=monitors, steps=steps)

    def _evaluate(self, steps, name):
        if hasattr(self._estimator, "fit"):
            return self._estimator.evaluate(input_fn=self._eval_input_fn, steps=steps,
                                             metrics=self._eval_metrics, name=name,
                                             hooks=self._eval_hooks)
        return self._estimator.evaluate(self._eval_input_fn, steps=steps, name=name,
                                        hooks=self._eval_hooks)

    def train(self, delay_secs=None):
        """Fits `train_steps` steps (or until the train input ends); returns the estimator."""
        del delay_secs
        return self._fit(self._train_steps, self._train_monitors)

    def evaluate(self, delay_secs=None, name=None):
        """Evaluates `eval_steps` batches of the eval input; returns the metrics dict."""
        del delay_secs
        return self._evaluate(self._eval_steps, name)

    def train_and_evaluate(self):
        """Trains (with periodic evaluation every `min_eval_frequency` steps when set), then
        evaluates; returns `(eval_result, export_results)` (no exports: `[]`)."""
        monitors = list(self._train_monitors)
        if self._min_eval_frequency and hasattr(self._estimator, "fit"):
            monitors.append(ValidationMonitor(
                input_fn=self._eval_input_fn, eval_steps=self._eval_steps,
                metrics=self._eval_metrics, every_n_steps=self._min_eval_frequency,
                name="one_pass"))
        self._fit(self._train_steps, monitors)
        return self._evaluate(self._eval_steps, "one_pass"), []

    def continuous_train_and_eval(self, continuous_eval_predicate_fn=None):
        """Run locally: `train_and_evaluate` (one training run, then the evaluation), since
        the whole training happens in this process; returns `(eval_result, [])`."""
        del continuous_eval_predicate_fn
        return self.train_and_evaluate()

    def local_run(self):
        """`train_and_evaluate`'s eval result."""
        return self.train_and_evaluate()[0]

    def test(self):
        """One training step and one evaluation step (a smoke test)."""
        self._fit(1, self._train_monitors)
        return self._evaluate(1, "one_pass")

    def run_std_server(self):
        """Not provided (run `tf.train.Server` directly).

        Raises:
            NotImplementedError: always.
        """
        raise NotImplementedError("Experiment.run_std_server is not provided by tensorflux; "
                                  "start a tf.train.Server, or use "
                                  "tf.estimator.train_and_evaluate with TF_CONFIG.")
