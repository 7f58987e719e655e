"""`tf.estimator.experimental.InMemoryEvaluatorHook`: evaluate during training, in process.

The evaluation graph (input_fn and model_fn in EVAL mode, plus the metrics) is built once,
in its own graph, when training begins. Every `every_n_iter` training steps, and at the end,
the hook reads the training session's variable values, starts a fresh evaluation session
whose init_fn loads them into the evaluation graph's variables of the same names, evaluates
(`steps` batches or until input_fn's data ends) and writes the metrics into the estimator's
eval directory, as `Estimator.evaluate` does. No checkpoint is needed. Like TF's, it runs in
one process only (not with a TF_CONFIG cluster) and transfers variables only.
"""

from __future__ import annotations

from tensorflux.estimator import estimator as estimator_lib
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.graph import GraphKeys
from tensorflux.ops import array as array_ops
from tensorflux.ops.control_flow import primitives as control_flow_ops
from tensorflux.ops.state import variable_ops as state_ops
from tensorflux.ops.state import variables
from tensorflux.train.monitored_session import Scaffold
from tensorflux.train.session_run_hook import SecondOrStepTimer, SessionRunHook

__all__ = ["InMemoryEvaluatorHook"]


class InMemoryEvaluatorHook(SessionRunHook):
    """Evaluates `estimator` on `input_fn` every `every_n_iter` steps of training.

    Args:
        estimator: the Estimator being trained.
        input_fn: the evaluation input_fn (called once; its data are read again on each
            evaluation).
        steps: batches per evaluation (None: until the data end).
        hooks: SessionRunHooks of the evaluations.
        name: the evaluation name (events in model_dir/eval_<name>).
        every_n_iter: training steps between evaluations.

    Raises:
        TypeError: estimator is not an Estimator, or a hook is not a SessionRunHook.
        ValueError: every_n_iter <= 0, or the estimator runs in a cluster.
    """

    def __init__(self, estimator, input_fn, steps=None, hooks=None, name=None,
                 every_n_iter=100):
        if every_n_iter is None or every_n_iter <= 0:
            raise ValueError(f"invalid every_n_iter={every_n_iter}.")
        if not isinstance(estimator, estimator_lib.Estimator):
            raise TypeError(f"estimator must be a tf.estimator.Estimator; got {estimator}")
        if estimator.config.cluster_spec.jobs:
            raise ValueError("InMemoryEvaluator does not support a multi-node (TF_CONFIG "
                             "cluster) run; use train_and_evaluate with an evaluator task.")
        self._estimator = estimator
        self._input_fn = input_fn
        self._steps = steps
        self._hooks = estimator_lib._check_hooks(hooks)
        self._name = name
        self._every_n_iter = every_n_iter
        self._eval_dir = estimator.eval_dir(name)
        self._graph = None

    def begin(self):
        self._timer = SecondOrStepTimer(every_steps=self._every_n_iter)
        self._timer.update_last_triggered_step(0)
        self._iter_count = 0
        train_vars = {v.op.name: v for v in variables.global_variables()}
        self._graph = graph_mod.Graph()
        with self._graph.as_default():
            scaffold, self._update_ops, self._final_ops, self._all_hooks = \
                self._estimator._build_eval_graph(self._input_fn, self._hooks)
            eval_vars = {v.op.name: v for v in variables.global_variables()}
            missing = sorted(set(eval_vars) - set(train_vars))
            if missing:
                raise ValueError(f"InMemoryEvaluatorHook: variables of the evaluation graph "
                                 f"are not in the training graph: {missing}")
            self._placeholders = {name: array_ops.placeholder(var.dtype.base_dtype,
                                                              var.shape)
                                  for name, var in eval_vars.items()}
            feed_op = control_flow_ops.group(*[
                state_ops.assign(eval_vars[name], placeholder)
                for name, placeholder in self._placeholders.items()])

            def feed_variables(scaffold, session):
                session.run(feed_op, {self._placeholders[name]: value
                                      for name, value in self._values.items()})

            self._scaffold = Scaffold(init_fn=feed_variables, copy_from_scaffold=scaffold)
        self._train_vars = {name: train_vars[name] for name in eval_vars}
        self._values = {}

    def _evaluate(self, train_session):
        self._values = train_session.run(self._train_vars)
        with self._graph.as_default():
            results = self._estimator._evaluate_once(None, self._scaffold, self._update_ops,
                                                     self._final_ops, self._all_hooks,
                                                     self._steps)
        estimator_lib._write_dict_to_summary(self._eval_dir, results,
                                             results[GraphKeys.GLOBAL_STEP])
        return results

    def after_run(self, run_context, run_values):
        self._iter_count += 1
        if self._timer.should_trigger_for_step(self._iter_count):
            self._timer.update_last_triggered_step(self._iter_count)
            self._evaluate(run_context.session)

    def end(self, session):
        if self._timer.last_triggered_step() != self._iter_count:
            self._evaluate(session)
