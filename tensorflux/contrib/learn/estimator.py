"""`tf.contrib.learn.Estimator` (TF 1.0-1.4) on top of `tf.estimator.Estimator`.

A contrib.learn estimator keeps one core Estimator (same model_dir, config, checkpoints) and
translates its calling conventions:

- `fit(x, y, input_fn, steps, batch_size, monitors, max_steps)`: NumPy `x`/`y` become an
  input_fn of `batch_size` examples (default: all of x), reshuffled and repeated forever, as
  contrib's data feeder did; monitors are session hooks (see `monitors`).
- `evaluate(x, y, input_fn, steps, batch_size, metrics, name, ...)`: NumPy input is read once
  in order; `metrics` adds `{name or (name, prediction_key): metric_fn or MetricSpec}`.
- `predict(x, input_fn, batch_size, outputs, as_iterable)`: one pass in order; yields one
  example at a time (or returns the stacked arrays when `as_iterable=False`).
- A model_fn `model_fn(features, labels[, mode][, params][, config])` (labels by position)
  returns `ModelFnOps` or the old `(predictions, loss, train_op)` tuple.

Float64 arrays are fed as float32 and other integers as int64, as contrib's data feeder did.
"""

from __future__ import annotations

import collections

import numpy as np

from tensorflux.contrib.learn.utils import input_fn_utils
from tensorflux.estimator import estimator as core_estimator
from tensorflux.estimator import inputs as core_inputs
from tensorflux.estimator import run_config as core_run_config
from tensorflux.estimator.model_fn import EstimatorSpec, fn_args
from tensorflux.estimator.model_fn import ModeKeys as CoreModeKeys
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.graph import Tensor
from tensorflux.ops.array import constants
from tensorflux.protos import config_pb2
from tensorflux.train.session_run_hook import SessionRunHook

__all__ = ["PredictionKey", "ModeKeys", "ModelFnOps", "MetricSpec", "RunConfig",
           "BaseEstimator", "Estimator", "SKCompat"]


class PredictionKey:
    """The prediction keys of contrib.learn's canned estimators."""

    CLASSES = "classes"
    PROBABILITIES = "probabilities"
    LOGITS = "logits"
    LOGISTIC = "logistic"
    SCORES = "scores"


class ModeKeys:
    """contrib.learn's modes (`INFER` is core's `PREDICT`, the same string)."""

    TRAIN = CoreModeKeys.TRAIN
    EVAL = CoreModeKeys.EVAL
    INFER = CoreModeKeys.PREDICT


class ModelFnOps(collections.namedtuple("ModelFnOps", [
        "predictions", "loss", "train_op", "eval_metric_ops", "output_alternatives",
        "training_chief_hooks", "training_hooks", "scaffold", "mode"])):
    """What a contrib.learn model_fn returns; validated as the core EstimatorSpec of `mode`.

    Raises:
        ValueError: TRAIN without loss or train_op, EVAL without loss, INFER without
            predictions (the core EstimatorSpec's rules).
    """

    def __new__(cls, mode, predictions=None, loss=None, train_op=None, eval_metric_ops=None,
                output_alternatives=None, training_chief_hooks=None, training_hooks=None,
                scaffold=None):
        self = super().__new__(cls, predictions, loss, train_op, eval_metric_ops or {},
                               output_alternatives, list(training_chief_hooks or []),
                               list(training_hooks or []), scaffold, mode)
        self.estimator_spec()
        return self

    def estimator_spec(self, default_serving_output_alternative_key=None):
        """The core `EstimatorSpec` of these ops."""
        del default_serving_output_alternative_key
        return EstimatorSpec(self.mode, predictions=self.predictions, loss=self.loss,
                             train_op=self.train_op, eval_metric_ops=self.eval_metric_ops,
                             training_chief_hooks=self.training_chief_hooks,
                             training_hooks=self.training_hooks, scaffold=self.scaffold)


class MetricSpec:
    """A metric function with the keys of its prediction, label and weight inputs.

    `metric_fn` takes `predictions`, `labels` and optionally `weights` by those names (TF
    metrics and contrib's streaming metrics), or `(predictions, labels)` by position.
    `prediction_key` picks an entry of dict predictions, `label_key` of dict labels,
    `weight_key` a feature used as weights.
    """

    def __init__(self, metric_fn, prediction_key=None, label_key=None, weight_key=None):
        if not callable(metric_fn):
            raise TypeError(f"metric_fn must be callable; got {metric_fn!r}")
        self.metric_fn = metric_fn
        self.prediction_key = prediction_key
        self.label_key = label_key
        self.weight_key = weight_key

    def create_metric_ops(self, inputs, labels, predictions):
        """`(value_op, update_op)` of the metric on these tensors.

        Raises:
            ValueError: a key given for a non-dict value, or missing from it; dict
                predictions or labels without a key.
        """
        predictions = _pick(predictions, self.prediction_key, "predictions")
        labels = _pick(labels, self.label_key, "labels")
        kwargs = {}
        if self.weight_key is not None:
            kwargs["weights"] = _pick(inputs, self.weight_key, "features")
        args = fn_args(self.metric_fn)
        if "predictions" in args and "labels" in args:
            return self.metric_fn(predictions=predictions, labels=labels, **kwargs)
        return self.metric_fn(predictions, labels, **kwargs)


def _pick(values, key, what):
    if key is None:
        if isinstance(values, dict):
            if len(values) == 1:
                return next(iter(values.values()))
            raise ValueError(f"MetricSpec: {what} is a dict {sorted(values)}; give its key.")
        return values
    if not isinstance(values, dict) or key not in values:
        raise ValueError(f"MetricSpec: key {key!r} is not in {what} "
                         f"({sorted(values) if isinstance(values, dict) else values}).")
    return values[key]


class RunConfig(core_run_config.RunConfig):
    """contrib.learn's RunConfig: the core RunConfig plus `master`, `num_cores`,
    `log_device_placement`, `gpu_memory_fraction` and `evaluation_master`.

    Without `session_config`, one is made from `num_cores` (intra- and inter-op threads)
    and `log_device_placement`; `gpu_memory_fraction` is kept but unused (no GPUs).
    """

    def __init__(self, master=None, num_cores=0, log_device_placement=False,
                 gpu_memory_fraction=1, tf_random_seed=None, save_summary_steps=100,
                 save_checkpoints_secs=core_run_config._USE_DEFAULT,
                 save_checkpoints_steps=None, keep_checkpoint_max=5,
                 keep_checkpoint_every_n_hours=10000, log_step_count_steps=100,
                 evaluation_master="", model_dir=None, session_config=None):
        if session_config is None and (num_cores or log_device_placement):
            session_config = config_pb2.ConfigProto(
                intra_op_parallelism_threads=num_cores, inter_op_parallelism_threads=num_cores,
                log_device_placement=log_device_placement)
        if save_checkpoints_steps is None:
            save_checkpoints_steps = core_run_config._USE_DEFAULT
        super().__init__(model_dir=model_dir, tf_random_seed=tf_random_seed,
                         save_summary_steps=save_summary_steps,
                         save_checkpoints_steps=save_checkpoints_steps,
                         save_checkpoints_secs=save_checkpoints_secs,
                         session_config=session_config,
                         keep_checkpoint_max=keep_checkpoint_max,
                         keep_checkpoint_every_n_hours=keep_checkpoint_every_n_hours,
                         log_step_count_steps=log_step_count_steps)
        if master:
            self._master = master
        if evaluation_master:
            self._evaluation_master = evaluation_master
        self.num_cores = num_cores
        self.log_device_placement = log_device_placement
        self.gpu_memory_fraction = gpu_memory_fraction


# -- NumPy input ------------------------------------------------------------------------------

def _feed_array(value):
    if not hasattr(value, "__len__"):
        raise ValueError(f"x and y must be arrays (or dicts of arrays); iterators and "
                         f"generators ({type(value).__name__}) are not supported: wrap them "
                         f"in an input_fn (e.g. tf.data.Dataset.from_generator).")
    value = np.asarray(value)
    if value.ndim == 0:
        raise ValueError(f"x and y must have a batch dimension; got a scalar {value!r}")
    if value.dtype == np.float64:
        return value.astype(np.float32)
    if value.dtype.kind in "iu" and value.dtype != np.int64:
        return value.astype(np.int64)
    return value


def _feed_struct(value):
    if value is None:
        return None
    if isinstance(value, dict):
        return {key: _feed_array(v) for key, v in value.items()}
    return _feed_array(value)


def _num_examples(x):
    first = next(iter(x.values())) if isinstance(x, dict) else x
    return int(first.shape[0])


def numpy_input_fn_for(x, y, batch_size, shuffle, num_epochs):
    """contrib's data feeder as an input_fn: batches of `batch_size` (default all of x)."""
    x, y = _feed_struct(x), _feed_struct(y)
    count = _num_examples(x)
    if count == 0:
        raise ValueError("x has no examples.")
    batch_size = count if batch_size is None else int(batch_size)
    return core_inputs.numpy_input_fn(x, y, batch_size=batch_size, num_epochs=num_epochs,
                                      shuffle=shuffle, queue_capacity=max(count, 1))


def _resolve_input(x, y, input_fn, batch_size, shuffle, num_epochs, what):
    if input_fn is not None:
        if x is not None or y is not None or batch_size is not None:
            raise ValueError(f"{what}: either x (and y) or input_fn must be given, not both "
                             f"(batch_size goes with x).")
        return input_fn
    if x is None:
        raise ValueError(f"{what}: either x or input_fn must be provided.")
    if isinstance(x, Tensor) or isinstance(y, Tensor):
        raise ValueError(f"{what}: x and y must be NumPy arrays; wrap Tensors in an input_fn.")
    return numpy_input_fn_for(x, y, batch_size, shuffle, num_epochs)


# -- estimators ---------------------------------------------------------------------------------

def _check_hooks(monitors):
    hooks = list(monitors or [])
    for hook in hooks:
        if not isinstance(hook, SessionRunHook):
            raise TypeError(f"monitors must be SessionRunHooks (contrib.learn.monitors are); "
                            f"got {type(hook).__name__}")
    return hooks


def _metric_ops(metrics, features, labels, predictions, default_key=None):
    ops = {}
    for key, metric in metrics.items():
        name, prediction_key = (key if isinstance(key, tuple) else (key, None))
        if isinstance(metric, MetricSpec) and metric.prediction_key is None and \
                default_key is not None:
            metric = MetricSpec(metric.metric_fn, default_key, metric.label_key,
                                metric.weight_key)
        prediction_key = prediction_key or default_key
        if isinstance(metric, MetricSpec):
            ops[name] = metric.create_metric_ops(features, labels, predictions)
        else:
            ops[name] = MetricSpec(metric, prediction_key).create_metric_ops(
                features, labels, predictions)
    return ops


class BaseEstimator:
    """A contrib.learn estimator around one core Estimator; subclasses give `_core_spec`
    (features, labels, core mode, config) -> EstimatorSpec and may rename results.

    Raises:
        ValueError: (fit/evaluate/predict) both x and input_fn or neither, `metrics` not a
            dict, steps and max_steps both given.
        TypeError: a monitor that is not a SessionRunHook.
    """

    def __init__(self, model_dir=None, config=None, params=None):
        if config is not None and not isinstance(config, core_run_config.RunConfig):
            raise ValueError(f"config must be a RunConfig; got {type(config).__name__}")
        self._metrics = None
        self._estimator = core_estimator.Estimator(model_fn=self._model_fn_for_core,
                                                   model_dir=model_dir, config=config)
        self.params = params

    def _model_fn_for_core(self, features, labels, mode, config):
        spec = self._core_spec(features, labels, mode, config)
        if mode == CoreModeKeys.EVAL and self._metrics:
            metric_ops = dict(spec.eval_metric_ops)
            metric_ops.update(_metric_ops(self._metrics, features, labels,
                                          self._metric_predictions(spec.predictions),
                                          self._default_prediction_key))
            spec = spec._replace(eval_metric_ops=metric_ops)
        return spec

    _default_prediction_key = None

    def _core_spec(self, features, labels, mode, config):
        """The EstimatorSpec of the model (each concrete estimator defines it)."""
        raise NotImplementedError(f"{type(self).__name__} defines no model: subclasses of "
                                  f"BaseEstimator implement _core_spec")

    def _metric_predictions(self, predictions):
        """The predictions `evaluate(metrics=...)` sees (canned models: contrib's keys)."""
        return predictions

    @property
    def model_dir(self):
        return self._estimator.model_dir

    @property
    def config(self):
        return self._estimator.config

    def get_variable_names(self):
        """The variable names in the latest checkpoint."""
        return self._estimator.get_variable_names()

    def get_variable_value(self, name):
        """The value of variable `name` in the latest checkpoint."""
        return self._estimator.get_variable_value(name)

    def fit(self, x=None, y=None, input_fn=None, steps=None, batch_size=None, monitors=None,
            max_steps=None):
        """Trains `steps` more steps (or up to `max_steps`); returns self."""
        input_fn = _resolve_input(x, y, input_fn, batch_size, True, None, "fit")
        hooks = _check_hooks(monitors)
        for hook in hooks:
            if hasattr(hook, "set_estimator"):
                hook.set_estimator(self)
        self._estimator.train(input_fn, hooks=hooks, steps=steps, max_steps=max_steps)
        return self

    def partial_fit(self, x=None, y=None, input_fn=None, steps=1, batch_size=None,
                    monitors=None):
        """`fit` for `steps` steps (default one)."""
        return self.fit(x, y, input_fn, steps=steps, batch_size=batch_size, monitors=monitors)

    def evaluate(self, x=None, y=None, input_fn=None, feed_fn=None, batch_size=None,
                 steps=None, metrics=None, name=None, checkpoint_path=None, hooks=None,
                 log_progress=True):
        """The metrics of the latest (or given) checkpoint: a dict with "loss",
        "global_step" and the model's and `metrics`' values."""
        del log_progress
        if feed_fn is not None:
            raise ValueError("evaluate: feed_fn is not supported by tensorflux; use input_fn.")
        if metrics is not None and not isinstance(metrics, dict):
            raise ValueError(f"Metrics argument should be None or dict. Got {metrics}.")
        input_fn = _resolve_input(x, y, input_fn, batch_size, False, 1, "evaluate")
        self._metrics = metrics
        try:
            results = self._estimator.evaluate(input_fn, steps=steps, hooks=hooks,
                                               checkpoint_path=checkpoint_path, name=name)
        finally:
            self._metrics = None
        return self._rename_results(results, set(metrics or ()))

    def _rename_results(self, results, user_keys):
        del user_keys
        return results

    def _predict_iter(self, x, input_fn, batch_size, predict_keys):
        hooks = []
        if input_fn is not None:
            hook = _SinglePassHook()
            input_fn, hooks = _single_pass_if_static(input_fn, hook), [hook]
        input_fn = _resolve_input(x, None, input_fn, batch_size, False, 1, "predict")
        return self._estimator.predict(input_fn, predict_keys=predict_keys, hooks=hooks)

    def predict(self, x=None, input_fn=None, batch_size=None, outputs=None, as_iterable=True):
        """The model_fn's predictions: one example at a time (`as_iterable`), else the whole
        arrays; `outputs` selects keys of dict predictions."""
        results = self._predict_iter(x, input_fn, batch_size, outputs)
        return results if as_iterable else _stack(results)

    def export_savedmodel(self, export_dir_base, serving_input_fn,
                          default_output_alternative_key=None, assets_extra=None,
                          as_text=False, checkpoint_path=None, graph_rewrite_specs=None,
                          strip_default_attrs=False):
        """Exports the latest (or given) checkpoint as a SavedModel under a new timestamped
        directory of `export_dir_base`; returns its path.

        `serving_input_fn` returns contrib's `InputFnOps` (see `utils.input_fn_utils`) or a
        core ServingInputReceiver.
        """
        del default_output_alternative_key, graph_rewrite_specs, strip_default_attrs

        def receiver_fn():
            return input_fn_utils.as_serving_input_receiver(serving_input_fn())

        return self._estimator.export_savedmodel(export_dir_base, receiver_fn,
                                                 assets_extra=assets_extra, as_text=as_text,
                                                 checkpoint_path=checkpoint_path)


_STREAMING_OP_MARKERS = ("Dequeue", "IteratorGetNext", "ReaderRead", "Placeholder")


class _SinglePassHook(SessionRunHook):
    """Stops prediction after one batch when the input has no queue, iterator, reader or
    placeholder (an input_fn of constants: contrib.learn predicted it once)."""

    def __init__(self):
        self.static_input = False

    def after_run(self, run_context, run_values):
        if self.static_input:
            run_context.request_stop()


def _single_pass_if_static(input_fn, hook):
    def wrapped():
        result = input_fn()
        graph = graph_mod.get_default_graph()
        hook.static_input = not any(marker in op.type for op in graph.get_operations()
                                    for marker in _STREAMING_OP_MARKERS)
        return result

    return wrapped


def _stack(results):
    items = list(results)
    if not items:
        return np.zeros([0])
    if isinstance(items[0], dict):
        return {key: np.stack([item[key] for item in items]) for key in items[0]}
    return np.stack(items)


def _as_spec(result, mode):
    if isinstance(result, ModelFnOps):
        return result.estimator_spec()
    if isinstance(result, EstimatorSpec):
        return result
    if isinstance(result, (tuple, list)) and len(result) == 3:
        predictions, loss, train_op = result
        if mode != CoreModeKeys.TRAIN:
            train_op = None
        if mode == CoreModeKeys.PREDICT:
            loss = None
        return EstimatorSpec(mode, predictions=predictions, loss=loss, train_op=train_op)
    raise ValueError(f"model_fn must return ModelFnOps or a (predictions, loss, train_op) "
                     f"tuple; got {type(result).__name__}")


class Estimator(BaseEstimator):
    """A contrib.learn Estimator of a `model_fn(features, labels[, mode][, params][,
    config])` returning ModelFnOps or `(predictions, loss, train_op)`.

    Example:
        >>> def model_fn(features, targets, mode):
        ...     ...
        ...     return tf.contrib.learn.ModelFnOps(mode, predictions, loss, train_op)
        >>> est = tf.contrib.learn.Estimator(model_fn=model_fn, model_dir=path)
        >>> est.fit(input_fn=train_input_fn, steps=100)

    Raises:
        ValueError: model_fn takes fewer than two arguments, or params given to a model_fn
            without `params`.
    """

    def __init__(self, model_fn=None, model_dir=None, config=None, params=None,
                 feature_engineering_fn=None):
        if not callable(model_fn):
            raise ValueError(f"model_fn must be callable; got {model_fn!r}")
        args = fn_args(model_fn)
        if len(args) < 2 and not {"features", "labels"} <= set(args):
            raise ValueError(f"model_fn ({model_fn}) must take features and labels.")
        if params is not None and "params" not in args:
            raise ValueError(f"Estimator's model_fn ({model_fn}) does not have a params "
                             f"argument, but params ({params}) were passed to the Estimator's "
                             f"constructor.")
        self._user_model_fn = model_fn
        self._user_args = args
        self._feature_engineering_fn = feature_engineering_fn
        self._labels_info = None
        super().__init__(model_dir=model_dir, config=config, params=params)

    def _core_spec(self, features, labels, mode, config):
        # As contrib.learn: the labels' signature seen in training gives INFER-mode model_fns
        # (unfed) placeholders, so a model_fn that transforms its labels unconditionally works.
        if mode == CoreModeKeys.TRAIN and labels is not None:
            self._labels_info = _signature(labels)
        elif mode == CoreModeKeys.PREDICT and labels is None and self._labels_info is not None:
            labels = _placeholders(self._labels_info)
        if self._feature_engineering_fn is not None:
            features, labels = self._feature_engineering_fn(features, labels)
        kwargs = {}
        if "mode" in self._user_args:
            kwargs["mode"] = mode
        if "params" in self._user_args:
            kwargs["params"] = self.params
        if "config" in self._user_args:
            kwargs["config"] = config
        return _as_spec(self._user_model_fn(features, labels, **kwargs), mode)


def _signature(labels):
    if isinstance(labels, dict):
        return {key: _signature(value) for key, value in labels.items()}
    shape = labels.shape.as_list() if labels.shape.ndims is not None else None
    return labels.dtype.base_dtype, (None, *shape[1:]) if shape else shape


def _placeholders(info):
    if isinstance(info, dict):
        return {key: _placeholders(value) for key, value in info.items()}
    dtype, shape = info
    return constants.placeholder(dtype, shape=shape, name="labels")


class SKCompat:
    """The scikit-learn style face of a contrib.learn estimator: fit(x, y), score(x, y),
    predict(x) with NumPy arrays (batch size 128 by default)."""

    def __init__(self, estimator):
        self._estimator = estimator

    def fit(self, x, y, batch_size=128, steps=None, max_steps=None, monitors=None):
        """Trains on x, y; returns self."""
        self._estimator.fit(x=x, y=y, batch_size=batch_size, steps=steps,
                            max_steps=max_steps, monitors=monitors)
        return self

    def score(self, x, y, batch_size=128, steps=None, metrics=None, name=None):
        """The evaluation metrics on x, y (one pass)."""
        return self._estimator.evaluate(x=x, y=y, batch_size=batch_size, steps=steps,
                                        metrics=metrics, name=name)

    def predict(self, x, batch_size=128, outputs=None):
        """The predictions of x as arrays (a dict of arrays for dict predictions)."""
        return BaseEstimator.predict(self._estimator, x=x, batch_size=batch_size,
                                     outputs=outputs, as_iterable=False)

    def __getattr__(self, name):
        return getattr(self._estimator, name)
