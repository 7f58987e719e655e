"""`tf.estimator.ModeKeys` and `tf.estimator.EstimatorSpec`: what a model_fn returns.

An EstimatorSpec is an immutable record, checked when built: TRAIN needs `loss` and
`train_op`, EVAL needs `loss`, PREDICT needs `predictions`; every value has the type TF 1.15
requires (a scalar loss Tensor, `(value, update_op)` metric pairs, `ExportOutput`s, hooks).
"""

from __future__ import annotations

import collections
import functools
import inspect

from tensorflux.estimator import export_output as export_output_lib
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.graph import Operation, Tensor
from tensorflux.ops.array import shapes as shape_ops
from tensorflux.saved_model import signature_constants
from tensorflux.train.monitored_session import Scaffold
from tensorflux.train.session_run_hook import SessionRunHook

__all__ = ["ModeKeys", "EstimatorSpec"]


class ModeKeys:
    """The three modes a model_fn is called in (TF's string values)."""

    TRAIN = "train"
    EVAL = "eval"
    PREDICT = "infer"


_MODES = (ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT)


def _check_loss(loss):
    if loss is None:
        return None
    if not isinstance(loss, Tensor):
        raise TypeError(f"loss must be Tensor, given: {loss}")
    if loss.shape.ndims not in (None, 0):
        if loss.shape.num_elements() != 1:
            raise ValueError(f"Loss must be scalar, given: {loss}")
        loss = _reshape_scalar(loss)
    return loss


def _reshape_scalar(loss):

    return shape_ops.reshape(loss, [])


def _check_predictions(predictions):
    if predictions is None:
        return {}
    if isinstance(predictions, dict):
        for key, value in predictions.items():
            if not isinstance(value, Tensor):
                raise TypeError(f"predictions[{key}] must be Tensor, given: {value}")
        return dict(predictions)
    if not isinstance(predictions, Tensor):
        raise TypeError(f"predictions must be Tensor or dict of Tensor, given: {predictions}")
    return predictions


def _check_metrics(eval_metric_ops):
    result = {}
    for key, value in (eval_metric_ops or {}).items():
        if not isinstance(value, tuple) or len(value) != 2:
            raise TypeError(f"Values of eval_metric_ops must be (metric_value, update_op) "
                            f"tuples, given: {value} for key: {key}")
        metric, update = value
        if not isinstance(metric, Tensor) or not isinstance(update, (Tensor, Operation)):
            raise TypeError(f"Values of eval_metric_ops must be (metric_value, update_op) "
                            f"tuples of Tensors/Operations, given: {value} for key: {key}")
        result[key] = value
    return result


def _check_hooks(hooks, what):
    hooks = tuple(hooks or ())
    for hook in hooks:
        if not isinstance(hook, SessionRunHook):
            raise TypeError(f"All hooks must be SessionRunHook instances, given: {hook} "
                            f"(in {what})")
    return hooks


def _check_export_outputs(export_outputs, predictions, mode):
    if export_outputs is None:
        if mode != ModeKeys.PREDICT:
            return None
        return {signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY:
                export_output_lib.PredictOutput(predictions)}
    if not isinstance(export_outputs, dict):
        raise TypeError(f"export_outputs must be dict, given: {export_outputs}")
    for key, value in export_outputs.items():
        if not isinstance(value, export_output_lib.ExportOutput):
            raise TypeError(f"Values in export_outputs must be ExportOutput objects. "
                            f"Given: {export_outputs}")
        del key
    return dict(export_outputs)


def _check_graph(spec):
    """Every tensor of the spec comes from the default graph (TF raises ValueError)."""
    graph = graph_mod.get_default_graph()
    items = [("loss", spec.loss), ("train_op", spec.train_op)]
    if isinstance(spec.predictions, dict):
        items += [(f"predictions[{k}]", v) for k, v in spec.predictions.items()]
    elif spec.predictions is not None:
        items.append(("predictions", spec.predictions))
    for key, (metric, update) in spec.eval_metric_ops.items():
        items += [(f"eval_metric_ops[{key}]", metric), (f"eval_metric_ops[{key}]", update)]
    for what, value in items:
        if value is not None and value.graph is not graph:
            raise ValueError(f"{what} must be from the default graph. Given: {value}")


class EstimatorSpec(collections.namedtuple("EstimatorSpec", [
        "mode", "predictions", "loss", "train_op", "eval_metric_ops", "export_outputs",
        "training_chief_hooks", "training_hooks", "scaffold", "evaluation_hooks",
        "prediction_hooks"])):
    """The ops and objects a model_fn returns, validated for its `mode` (TF 1.15 rules).

    Raises:
        ValueError: unknown mode; TRAIN without loss or train_op; EVAL without loss; PREDICT
            without predictions; a non-scalar loss; a tensor from another graph.
        TypeError: a value of the wrong type (loss not a Tensor, metric not a pair, hook not a
            SessionRunHook, scaffold not a Scaffold, export output not an ExportOutput).
    """

    def __new__(cls, mode, predictions=None, loss=None, train_op=None, eval_metric_ops=None,
                export_outputs=None, training_chief_hooks=None, training_hooks=None,
                scaffold=None, evaluation_hooks=None, prediction_hooks=None):
        if mode not in _MODES:
            raise ValueError(f"mode={mode} unrecognized. Valid modes: {list(_MODES)}")
        if mode == ModeKeys.TRAIN and loss is None:
            raise ValueError("Missing loss.")
        if mode == ModeKeys.TRAIN and train_op is None:
            raise ValueError("Missing train_op.")
        if mode == ModeKeys.EVAL and loss is None:
            raise ValueError("Missing loss.")
        if mode == ModeKeys.PREDICT and predictions is None:
            raise ValueError("Missing predictions.")
        loss = _check_loss(loss)
        if train_op is not None:
            if not isinstance(train_op, (Tensor, Operation)):
                raise TypeError(f"train_op must be Operation or Tensor, given: {train_op}")
        predictions = _check_predictions(predictions)
        eval_metric_ops = _check_metrics(eval_metric_ops)
        export_outputs = _check_export_outputs(export_outputs, predictions, mode)
        if scaffold is not None and not isinstance(scaffold, Scaffold):
            raise TypeError(f"scaffold must be tf.train.Scaffold. Given: {scaffold}")
        spec = super().__new__(
            cls, mode, predictions, loss, train_op, eval_metric_ops, export_outputs,
            _check_hooks(training_chief_hooks, "training_chief_hooks"),
            _check_hooks(training_hooks, "training_hooks"), scaffold or Scaffold(),
            _check_hooks(evaluation_hooks, "evaluation_hooks"),
            _check_hooks(prediction_hooks, "prediction_hooks"))
        _check_graph(spec)
        return spec

    def _replace(self, **kwargs):
        fields = self._asdict()
        fields.update(kwargs)
        return EstimatorSpec(**fields)


def fn_args(fn) -> tuple:
    """The argument names of `fn` (a function, bound method, partial or callable object)."""
    if isinstance(fn, functools.partial):
        names = fn_args(fn.func)
        return tuple(n for n in names[len(fn.args):] if n not in (fn.keywords or {}))
    params = inspect.signature(fn).parameters
    return tuple(name for name, p in params.items()
                 if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))
