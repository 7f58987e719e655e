"""`tf.estimator.{TrainSpec, EvalSpec, train_and_evaluate}` (TF 1.15 semantics).

Locally (no cluster in TF_CONFIG) training runs with a checkpoint listener that evaluates
each new checkpoint once `throttle_secs` have passed since the last evaluation, and evaluates
the final checkpoint at the end; exporters run after every evaluation.

In a cluster each process runs its task (between-graph replication):
  * ps: starts its `tf.train.Server` and joins it (the cluster manager ends it);
  * chief / worker: starts its server and trains with the session on it; variables live on
    the ps tasks through `replica_device_setter`; non-chief workers start after a delay and
    wait for the chief to initialize the model;
  * evaluator: no server; after `start_delay_secs` it evaluates every new checkpoint of
    model_dir (at most every `throttle_secs`) and exits after evaluating a checkpoint at or
    past `TrainSpec.max_steps` (without max_steps it runs until it is stopped).
"""

from __future__ import annotations

import collections
import os
import time

from tensorflux.distribute.collective_strategy import CollectiveAllReduceExtended
from tensorflux.distributed.server import Server
from tensorflux.estimator import estimator as estimator_lib
from tensorflux.estimator import exporter as exporter_lib
from tensorflux.estimator.run_config import TaskType
from tensorflux.framework.graph import GraphKeys
from tensorflux.platform import tf_logging as logging
from tensorflux.train import basic_session_run_hooks as basic_hooks
from tensorflux.train.session_run_hook import SecondOrStepTimer, SessionRunHook

__all__ = ["TrainSpec", "EvalSpec", "train_and_evaluate"]

_DELAY_SECS_PER_WORKER = 5
_MAX_DELAY_SECS = 60


def _check_hooks(hooks):
    hooks = tuple(hooks or ())
    for hook in hooks:
        if not isinstance(hook, SessionRunHook):
            raise TypeError(f"All hooks must be SessionRunHook instances, given: {hook}")
    return hooks


def _check_input_fn(input_fn):
    if not callable(input_fn):
        raise TypeError(f"`input_fn` must be callable, given: {input_fn}")


class TrainSpec(collections.namedtuple("TrainSpec", ["input_fn", "max_steps", "hooks"])):
    """The training half of train_and_evaluate: input_fn, max_steps (None: until the input
    ends) and hooks.

    Raises:
        TypeError: input_fn not callable, or a hook that is not a SessionRunHook.
        ValueError: max_steps <= 0.
    """

    def __new__(cls, input_fn, max_steps=None, hooks=None):
        _check_input_fn(input_fn)
        if max_steps is not None and max_steps <= 0:
            raise ValueError(f"Must specify max_steps > 0, given: {max_steps}")
        return super().__new__(cls, input_fn, max_steps, _check_hooks(hooks))


class EvalSpec(collections.namedtuple("EvalSpec", [
        "input_fn", "steps", "name", "hooks", "exporters", "start_delay_secs",
        "throttle_secs"])):
    """The evaluation half of train_and_evaluate.

    Args:
        input_fn: the evaluation input_fn.
        steps: batches per evaluation (None: until input_fn's data ends).
        name: the evaluation's name (events go to model_dir/eval_<name>).
        hooks: SessionRunHooks of the evaluations.
        exporters: an Exporter or a list of them (unique names), run after each evaluation.
        start_delay_secs: the evaluator task's wait before its first evaluation.
        throttle_secs: the least time between two evaluations.

    Raises:
        TypeError: input_fn not callable, a hook or exporter of the wrong type.
        ValueError: steps <= 0, negative delays, duplicate exporter names.
    """

    def __new__(cls, input_fn, steps=100, name=None, hooks=None, exporters=None,
                start_delay_secs=120, throttle_secs=600):
        _check_input_fn(input_fn)
        if steps is not None and steps <= 0:
            raise ValueError(f"Must specify steps > 0, given: {steps}")
        if name is not None and not isinstance(name, str):
            raise TypeError(f"`name` must be string, given: {name}")
        if start_delay_secs < 0:
            raise ValueError(f"Must specify start_delay_secs >= 0, given: {start_delay_secs}")
        if throttle_secs < 0:
            raise ValueError(f"Must specify throttle_secs >= 0, given: {throttle_secs}")
        if exporters is None:
            exporters = ()
        elif isinstance(exporters, exporter_lib.Exporter):
            exporters = (exporters,)
        exporters = tuple(exporters)
        names = set()
        for exporter in exporters:
            if not isinstance(exporter, exporter_lib.Exporter):
                raise TypeError(f"`exporters` must be an Exporter, an iterable of Exporter, or "
                                f"`None`, found {exporter}.")
            if not exporter.name or not exporter.name.strip():
                raise ValueError(f"An Exporter cannot have a name that is `None` or empty. "
                                 f"All exporter names: {[e.name for e in exporters]}")
            if exporter.name in names:
                raise ValueError(f"`exporters` must have unique names. Such a name cannot be "
                                 f"`None`. All exporter names: {[e.name for e in exporters]}")
            names.add(exporter.name)
        return super().__new__(cls, input_fn, steps, name, _check_hooks(hooks), exporters,
                               start_delay_secs, throttle_secs)


def train_and_evaluate(estimator, train_spec, eval_spec):
    """Trains and evaluates `estimator`, locally or as this process's task of a TF_CONFIG
    cluster.

    Returns:
        Locally, `(eval_result, export_results)` of the last evaluation; in a cluster, None.

    Raises:
        TypeError: arguments of the wrong types.
        ValueError: a task type this function does not run (e.g. an unknown job).
    """
    if not isinstance(estimator, estimator_lib.Estimator):
        raise TypeError(f"`estimator` must have type `tf.estimator.Estimator`, given "
                        f"{type(estimator)}")
    if not isinstance(train_spec, TrainSpec):
        raise TypeError(f"`train_spec` must have type `tf.estimator.TrainSpec`. Got: "
                        f"{type(train_spec)}")
    if not isinstance(eval_spec, EvalSpec):
        raise TypeError(f"`eval_spec` must have type `tf.estimator.EvalSpec`. Got: "
                        f"{type(eval_spec)}")
    return _TrainingExecutor(estimator, train_spec, eval_spec).run()


class _Evaluator:
    """Evaluates a checkpoint once and runs the exporters on the result."""

    def __init__(self, estimator, eval_spec, max_training_steps):
        self._estimator = estimator
        self._eval_spec = eval_spec
        self._max_training_steps = max_training_steps
        self._last_checkpoint = None

    def evaluate_and_export(self, checkpoint_path=None):
        """(metrics, export_results) of `checkpoint_path` (default latest), or (None, [])
        when there is no new checkpoint."""
        latest = checkpoint_path or self._estimator.latest_checkpoint()
        if not latest:
            logging.info("Estimator is not trained yet. Will start an evaluation when a "
                         "checkpoint is ready.")
            return None, []
        if latest == self._last_checkpoint:
            logging.info("No new checkpoint ready for evaluation. Skip the current evaluation "
                         "pass as evaluation results are expected to be same for the same "
                         "checkpoint.")
            return None, []
        spec = self._eval_spec
        metrics = self._estimator.evaluate(spec.input_fn, steps=spec.steps, hooks=spec.hooks,
                                           checkpoint_path=latest, name=spec.name)
        if not metrics:
            raise ValueError("Internal error: `Estimator.evaluate` should never return empty "
                             "metrics.")
        if GraphKeys.GLOBAL_STEP not in metrics:
            raise ValueError(f"Internal error: `Estimator.evaluate` result should have "
                             f"`global_step` in result. Given {metrics}")
        step = int(metrics[GraphKeys.GLOBAL_STEP])
        final = bool(self._max_training_steps and step >= self._max_training_steps)
        exports = []
        for exporter in spec.exporters:
            path = os.path.join(self._estimator.model_dir, "export", exporter.name)
            exports.append(exporter.export(self._estimator, path, latest, metrics, final))
        self._last_checkpoint = latest
        return metrics, exports


class _EvaluateOnSaveListener(basic_hooks.CheckpointSaverListener):
    """Evaluates after a checkpoint save once throttle_secs have passed, and at the end."""

    def __init__(self, evaluator, throttle_secs):
        self._evaluator = evaluator
        self._timer = SecondOrStepTimer(every_secs=throttle_secs)
        self._first = True
        self.eval_result = None
        self.export_results = []

    def after_save(self, session, global_step_value):
        if self._first:
            # The save at session creation: nothing was trained since it.
            self._first = False
            self._timer.update_last_triggered_step(global_step_value)
            return False
        if self._timer.should_trigger_for_step(global_step_value):
            self._timer.update_last_triggered_step(global_step_value)
            self._evaluate()
        return False

    def end(self, session, global_step_value):
        if self._evaluator._last_checkpoint != self._evaluator._estimator.latest_checkpoint():
            self._evaluate()

    def _evaluate(self):
        metrics, exports = self._evaluator.evaluate_and_export()
        if metrics is not None:
            self.eval_result, self.export_results = metrics, exports


class _TrainingExecutor:
    """Runs this process's part of train_and_evaluate (by its RunConfig's task type)."""

    def __init__(self, estimator, train_spec, eval_spec):
        self._estimator = estimator
        self._train_spec = train_spec
        self._eval_spec = eval_spec

    def run(self):
        config = self._estimator.config
        if not config.cluster_spec.jobs and config.task_type != TaskType.EVALUATOR:
            logging.info("Running training and evaluation locally (non-distributed).")
            return self.run_local()
        task_type = config.task_type
        runner = {TaskType.CHIEF: self.run_chief, TaskType.MASTER: self.run_master,
                  TaskType.WORKER: self.run_worker, TaskType.PS: self.run_ps,
                  TaskType.EVALUATOR: self.run_evaluator}.get(task_type)
        if runner is None:
            raise ValueError(f"Task type {task_type} is not supported. Supported task types "
                             f"are chief, master, worker, ps and evaluator.")
        logging.info(f"Running `train_and_evaluate` as task {task_type}:{config.task_id}.")
        runner()
        return None

    # -- local --------------------------------------------------------------------------------

    def run_local(self):
        evaluator = _Evaluator(self._estimator, self._eval_spec, self._train_spec.max_steps)
        listener = _EvaluateOnSaveListener(evaluator, self._eval_spec.throttle_secs)
        logging.info(f"Start train and evaluate loop. The evaluate will happen after every "
                     f"checkpoint. Checkpoint frequency is determined based on RunConfig "
                     f"arguments: save_checkpoints_steps "
                     f"{self._estimator.config.save_checkpoints_steps} or "
                     f"save_checkpoints_secs {self._estimator.config.save_checkpoints_secs}.")
        self._estimator.train(self._train_spec.input_fn, hooks=self._train_spec.hooks,
                              max_steps=self._train_spec.max_steps,
                              saving_listeners=[listener])
        if listener.eval_result is None:
            # Training was skipped (max_steps already reached): evaluate what is there.
            listener._evaluate()
        return listener.eval_result, listener.export_results

    # -- cluster tasks --------------------------------------------------------------------------

    def _start_server(self):
        config = self._estimator.config
        if config.environment == "google":
            # NOTE: TF's marker for "the environment already runs this task's server".
            return None
        server = Server(config.cluster_spec, job_name=config.task_type,
                        task_index=config.task_id, config=config.session_config,
                        protocol=config.protocol, start=False)
        server.start()
        return server

    def _train_distributed(self, delay_secs):
        server = self._start_server()
        if delay_secs:
            logging.info(f"Waiting {delay_secs} secs before starting training.")
            time.sleep(delay_secs)
        try:
            self._estimator.train(self._train_spec.input_fn, hooks=self._train_spec.hooks,
                                  max_steps=self._train_spec.max_steps)
        finally:
            if server is not None:
                server.stop()

    def run_chief(self):
        self._train_distributed(0)

    def run_master(self):
        self._train_distributed(0)

    def run_worker(self):
        config = self._estimator.config
        delay = min(_MAX_DELAY_SECS, (config.task_id + 1) * _DELAY_SECS_PER_WORKER)
        if config.experimental_max_worker_delay_secs is not None:
            delay = min(delay, config.experimental_max_worker_delay_secs)
        if isinstance(getattr(config.train_distribute, "extended", None),
                      CollectiveAllReduceExtended):
            delay = 0  # synchronous workers start together (they wait for each other)
        self._train_distributed(delay)

    def run_ps(self):
        server = self._start_server()
        if server is not None:
            server.join()

    def run_evaluator(self):
        spec = self._eval_spec
        evaluator = _Evaluator(self._estimator, spec, self._train_spec.max_steps)
        if spec.start_delay_secs:
            logging.info(f"Waiting {spec.start_delay_secs} secs before starting evaluation.")
            time.sleep(spec.start_delay_secs)
        while True:
            start = time.time()
            metrics, _ = evaluator.evaluate_and_export()
            if metrics is not None:
                step = int(metrics[GraphKeys.GLOBAL_STEP])
                max_steps = self._train_spec.max_steps
                if max_steps is not None and step >= max_steps:
                    logging.info(f"Exiting evaluation, global_step={step} >= "
                                 f"train max_steps={max_steps}")
                    return
            elapsed = time.time() - start
            delay = spec.throttle_secs - elapsed
            if delay > 0:
                logging.info(f"Waiting {delay:.1f} secs before starting next evaluation "
                             f"run.")
                time.sleep(delay)
            elif metrics is None:
                time.sleep(1.0)
