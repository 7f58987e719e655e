"""`tf.estimator.tpu.TPUEstimator` and `TPUEstimatorSpec` (TF 1.15), on the CPU.

With `use_tpu=False` TF 1.15 runs a TPUEstimator as a plain Estimator: `params['batch_size']`
is the global batch size of the mode (`train_batch_size`, `eval_batch_size`,
`predict_batch_size`) for both the input_fn and the model_fn, `params['use_tpu']` is False,
and a returned `TPUEstimatorSpec` becomes an `EstimatorSpec`: `scaffold_fn()` gives the
scaffold, `eval_metrics = (metric_fn, tensors)` gives `eval_metric_ops = metric_fn(*tensors)`
(or `**tensors`), and `host_call = (fn, tensors)` runs `fn` on every training step (a hook).
tensorflux has no TPUs, so `use_tpu=True` is refused with a message saying so.
"""

from __future__ import annotations

import collections

from tensorflux.estimator import estimator as estimator_lib
from tensorflux.estimator import model_fn as model_fn_lib
from tensorflux.estimator.tpu import tpu_config
from tensorflux.train.session_run_hook import SessionRunArgs, SessionRunHook

__all__ = ["TPUEstimator", "TPUEstimatorSpec"]

_RESERVED_PARAMS = ("batch_size", "context")


def _check_host_call(name, host_call):
    if host_call is None:
        return
    if not isinstance(host_call, (tuple, list)) or len(host_call) != 2:
        raise ValueError(f"{name} should be tuple of length 2. Got {host_call}")
    if not callable(host_call[0]):
        raise TypeError(f"{name}[0] should be a function.")
    if not isinstance(host_call[1], (tuple, list, dict)):
        raise ValueError(f"{name}[1] should be tuple or list, or dict.")


def _call_host_fn(host_call):
    fn, tensors = host_call
    return fn(**tensors) if isinstance(tensors, dict) else fn(*tensors)


class _HostCallHook(SessionRunHook):
    """Runs the host_call's ops with every training step."""

    def __init__(self, fetches):
        self._fetches = fetches

    def before_run(self, run_context):
        return SessionRunArgs(self._fetches)


class TPUEstimatorSpec(collections.namedtuple("TPUEstimatorSpec", [
        "mode", "predictions", "loss", "train_op", "eval_metrics", "export_outputs",
        "scaffold_fn", "host_call", "training_hooks", "evaluation_hooks",
        "prediction_hooks"])):
    """What a TPUEstimator model_fn returns (see the module docstring for the CPU meaning).

    Raises:
        ValueError / TypeError: a malformed `eval_metrics` or `host_call`, or a hook that is
            not a SessionRunHook.
    """

    def __new__(cls, mode, predictions=None, loss=None, train_op=None, eval_metrics=None,
                export_outputs=None, scaffold_fn=None, host_call=None, training_hooks=None,
                evaluation_hooks=None, prediction_hooks=None):
        _check_host_call("eval_metrics", eval_metrics)
        _check_host_call("host_call", host_call)
        hooks = [list(h or []) for h in (training_hooks, evaluation_hooks, prediction_hooks)]
        for hook in (h for group in hooks for h in group):
            if not isinstance(hook, SessionRunHook):
                raise TypeError(f"All hooks must be SessionRunHook instances, given: {hook}")
        return super().__new__(cls, mode, predictions, loss, train_op, eval_metrics,
                               export_outputs, scaffold_fn, host_call, *hooks)

    def as_estimator_spec(self):
        """The EstimatorSpec this spec means on the CPU."""
        eval_metric_ops = _call_host_fn(self.eval_metrics) if self.eval_metrics else None
        training_hooks = list(self.training_hooks)
        if self.host_call is not None:
            fetches = _call_host_fn(self.host_call)
            if fetches is not None:
                training_hooks.append(_HostCallHook(fetches))
        scaffold = self.scaffold_fn() if self.scaffold_fn is not None else None
        return model_fn_lib.EstimatorSpec(
            mode=self.mode, predictions=self.predictions, loss=self.loss,
            train_op=self.train_op, eval_metric_ops=eval_metric_ops,
            export_outputs=self.export_outputs, scaffold=scaffold,
            training_hooks=training_hooks, evaluation_hooks=self.evaluation_hooks,
            prediction_hooks=self.prediction_hooks)


def _check_batch_size(value, name):
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                              or value <= 0):
        raise ValueError(f"{name} must be positive integer; got {value}")


class TPUEstimator(estimator_lib.Estimator):
    """An Estimator for TPU programs, run on the CPU (`use_tpu=False`).

    Args:
        model_fn: returns an EstimatorSpec or a TPUEstimatorSpec; reads
            `params['batch_size']`.
        config: a `tf.estimator.tpu.RunConfig` (required).
        params: hyper-parameters; 'batch_size' and 'context' are reserved.
        use_tpu: must be False (there are no TPUs).
        train_batch_size, eval_batch_size, predict_batch_size: global batch sizes.
        Other arguments are accepted for compatibility and have no effect on the CPU.

    Raises:
        ValueError: no or a non-TPU `config`, reserved params keys, bad batch sizes, or
            `use_tpu=True`.
    """

    def __init__(self, model_fn=None, model_dir=None, config=None, params=None, use_tpu=True,
                 train_batch_size=None, eval_batch_size=None, predict_batch_size=None,
                 batch_axis=None, eval_on_tpu=True, export_to_tpu=True, export_to_cpu=True,
                 warm_start_from=None, experimental_export_device_assignment=False,
                 embedding_config_spec=None, export_saved_model_api_version=None):
        if config is None or not isinstance(config, tpu_config.RunConfig):
            raise ValueError("`config` must be provided with type `tpu_config.RunConfig`")
        if params is not None and any(k in params for k in _RESERVED_PARAMS):
            raise ValueError(f"{list(_RESERVED_PARAMS)} are reserved keys but existed in "
                             f"params {params}.")
        if use_tpu:
            raise ValueError("TPUEstimator(use_tpu=True) needs a TPU, and tensorflux has "
                             "none: pass use_tpu=False to run the same model_fn on the CPU.")
        for value, name in ((train_batch_size, "train_batch_size"),
                            (eval_batch_size, "eval_batch_size"),
                            (predict_batch_size, "predict_batch_size")):
            _check_batch_size(value, name)
        self._use_tpu = False
        self._batch_sizes = {model_fn_lib.ModeKeys.TRAIN: train_batch_size,
                             model_fn_lib.ModeKeys.EVAL: eval_batch_size,
                             model_fn_lib.ModeKeys.PREDICT: predict_batch_size}
        self._user_model_fn = model_fn
        self._mode = None
        super().__init__(model_fn=self._cpu_model_fn, model_dir=model_dir, config=config,
                         params=params, warm_start_from=warm_start_from)

    def _mode_params(self, mode):
        params = dict(self._params)
        batch_size = self._batch_sizes.get(mode)
        if batch_size is not None:
            params["batch_size"] = batch_size
        params["use_tpu"] = self._use_tpu
        return params

    def _cpu_model_fn(self, features, labels, mode, config, params):
        del params
        args = estimator_lib.fn_args(self._user_model_fn)
        kwargs = {}
        if "labels" in args:
            kwargs["labels"] = labels
        if "mode" in args:
            kwargs["mode"] = mode
        if "params" in args:
            kwargs["params"] = self._mode_params(mode)
        if "config" in args:
            kwargs["config"] = config
        spec = self._user_model_fn(features=features, **kwargs)
        if isinstance(spec, TPUEstimatorSpec):
            return spec.as_estimator_spec()
        return spec

    def _call_input_fn(self, input_fn, mode, input_context=None):
        args = estimator_lib.fn_args(input_fn)
        kwargs = {}
        if "mode" in args:
            kwargs["mode"] = mode
        if "input_context" in args:
            kwargs["input_context"] = input_context
        if "params" in args:
            kwargs["params"] = self._mode_params(mode)
        if "config" in args:
            kwargs["config"] = self.config
        return input_fn(**kwargs)
