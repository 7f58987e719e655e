"""Supervised input receivers and the TRAIN / EVAL export outputs (TF 1.15).

A TRAIN or EVAL meta graph of a SavedModel is fed features AND labels: its receiver fn
returns a `SupervisedInputReceiver` (`build_raw_supervised_input_receiver_fn` makes one with a
placeholder per feature and label; `build_supervised_input_receiver_fn_from_input_fn` makes the
placeholders match what a training input_fn returns). `TrainOutput` / `EvalOutput` turn the
spec's loss, predictions and metrics into the signature TF defines for those modes: outputs
"loss", "predictions[/key]", "metrics/<name>/value" and "metrics/<name>/update_op".
"""

from __future__ import annotations

import collections

from tensorflux.estimator.export_output import ExportOutput
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.graph import Operation, Tensor
from tensorflux.framework.sparse_tensor import SparseTensor
from tensorflux.ops.array import constants as constant_ops
from tensorflux.saved_model import signature_constants, signature_def_utils
from tensorflux.saved_model.utils import build_tensor_info

__all__ = ["SupervisedInputReceiver", "build_raw_supervised_input_receiver_fn",
           "build_supervised_input_receiver_fn_from_input_fn", "TrainOutput", "EvalOutput"]

SINGLE_FEATURE_KEY = "feature"
SINGLE_RECEIVER_KEY = "input"
SINGLE_LABEL_KEY = "label"


def _check_tensors(value, what):
    if value is None:
        raise ValueError(f"{what}s must be defined.")
    named = value if isinstance(value, dict) else {what: value}
    for key, tensor in named.items():
        if not isinstance(key, str):
            raise ValueError(f"{what} keys must be strings: {key}.")
        if not isinstance(tensor, (Tensor, SparseTensor)):
            raise ValueError(f"{what} {key!r} must be a Tensor or SparseTensor: {tensor}.")


class SupervisedInputReceiver(collections.namedtuple(
        "SupervisedInputReceiver", ["features", "labels", "receiver_tensors"])):
    """The features and labels of a TRAIN / EVAL export and the placeholders feeding them.

    `features` and `labels` are each a Tensor, SparseTensor or a dict of them and are given to
    the model_fn as they are; `receiver_tensors` ({name: Tensor}, a single Tensor being named
    "input") are the signature's inputs.

    Raises:
        ValueError: features, labels or receiver_tensors missing or of the wrong type.
    """

    def __new__(cls, features, labels, receiver_tensors):
        _check_tensors(features, "feature")
        _check_tensors(labels, "label")
        if receiver_tensors is None:
            raise ValueError("receiver_tensors must be defined.")
        if isinstance(receiver_tensors, (Tensor, SparseTensor)):
            receiver_tensors = {SINGLE_RECEIVER_KEY: receiver_tensors}
        _check_tensors(receiver_tensors, "receiver_tensor")
        return super().__new__(cls, features, labels, dict(receiver_tensors))


def _placeholder_like(tensor, default_batch_size, name):
    shape = tensor.shape.as_list() if tensor.shape.ndims is not None else None
    if shape:
        shape = [default_batch_size] + shape[1:]
    return constant_ops.placeholder(tensor.dtype, shape=shape, name=name)


def _placeholders(value, default_batch_size, single_name):
    if isinstance(value, dict):
        return {key: _placeholder_like(t, default_batch_size, key) for key, t in value.items()}
    return _placeholder_like(value, default_batch_size, single_name)


def build_raw_supervised_input_receiver_fn(features, labels, default_batch_size=None):
    """A receiver fn with one placeholder per feature and label (TRAIN / EVAL exports).

    Args:
        features: a Tensor or {key: Tensor} giving each feature placeholder's dtype and shape.
        labels: the same for the labels.
        default_batch_size: the static batch size of the placeholders (None: any).

    Returns:
        A function returning a SupervisedInputReceiver whose receiver_tensors are the
        feature placeholders (a single one named "input") and the label placeholders (a
        single one named "label").

    Raises:
        ValueError: features and labels share a key.
    """
    feature_keys = set(features) if isinstance(features, dict) else {SINGLE_RECEIVER_KEY}
    label_keys = set(labels) if isinstance(labels, dict) else {SINGLE_LABEL_KEY}
    overlap = feature_keys & label_keys
    if overlap:
        raise ValueError(f"Features and labels must have distinct keys. Found overlapping "
                         f"keys: {sorted(overlap)}")

    def supervised_input_receiver_fn():
        input_features = _placeholders(features, default_batch_size, SINGLE_RECEIVER_KEY)
        input_labels = _placeholders(labels, default_batch_size, SINGLE_LABEL_KEY)
        receivers = {}
        for value, single in ((input_features, SINGLE_RECEIVER_KEY),
                              (input_labels, SINGLE_LABEL_KEY)):
            if isinstance(value, dict):
                receivers.update(value)
            else:
                receivers[single] = value
        return SupervisedInputReceiver(input_features, input_labels, receivers)

    return supervised_input_receiver_fn


def build_supervised_input_receiver_fn_from_input_fn(input_fn, **input_fn_args):
    """A supervised receiver fn whose placeholders match what `input_fn(**input_fn_args)`
    returns ((features, labels), or a Dataset of them).

    Raises:
        ValueError: input_fn does not return (features, labels).
    """
    # cycle: estimator.py imports this module for its export methods.
    from tensorflux.estimator import estimator as estimator_lib

    with graph_mod.Graph().as_default():
        features, labels, _ = estimator_lib._parse_input_fn_result(input_fn(**input_fn_args))
    if labels is None:
        raise ValueError("input_fn must return (features, labels) to build a supervised "
                         "input receiver fn; it returned no labels.")
    return build_raw_supervised_input_receiver_fn(features, labels)


# -- TRAIN / EVAL signatures ------------------------------------------------------------------

_SEPARATOR = "/"


def _output_key(key, what):
    if isinstance(key, tuple):
        key = _SEPARATOR.join(str(part) for part in key)
    if not isinstance(key, str):
        raise ValueError(f"{what} output key must be a string; got {key}.")
    return key


def _named_outputs(value, prefix):
    if value is None:
        return {}
    if isinstance(value, dict):
        named = {}
        for key, tensor in value.items():
            key = _output_key(key, prefix)
            if not isinstance(tensor, Tensor):
                raise ValueError(f"{prefix} output value must be a Tensor; got {tensor}.")
            named[prefix + _SEPARATOR + key] = tensor
        return named
    if not isinstance(value, Tensor):
        raise ValueError(f"{prefix} output value must be a Tensor; got {value}.")
    return {prefix: value}


def _metric_outputs(metrics):
    named = {}
    for key, pair in (metrics or {}).items():
        key = _output_key(key, "metrics")
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise ValueError(f"metrics[{key!r}] must be a (value, update_op) pair; got {pair}.")
        value, update = pair
        if not isinstance(value, Tensor):
            raise ValueError(f"metrics/{key} output value must be a Tensor; got {value}.")
        if isinstance(update, Operation):
            # A SignatureDef holds tensors only: an update Operation is wrapped in a tensor
            # that runs it.
            with graph_mod.get_default_graph().control_dependencies([update]):
                update = constant_ops.constant([], name="metric_op_wrapper")
        if not isinstance(update, Tensor):
            raise ValueError(f"metrics/{key} update_op must be a Tensor or Operation; got "
                             f"{update}.")
        named[f"metrics/{key}/value"] = value
        named[f"metrics/{key}/update_op"] = update
    return named


class _SupervisedOutput(ExportOutput):
    """Loss, predictions and metrics of a TRAIN or EVAL graph, as one signature."""

    LOSS_NAME = "loss"
    PREDICTIONS_NAME = "predictions"
    METRICS_NAME = "metrics"
    METRIC_VALUE_SUFFIX = "value"
    METRIC_UPDATE_SUFFIX = "update_op"
    _METHOD_NAME = None

    def __init__(self, loss=None, predictions=None, metrics=None):
        self._loss = _named_outputs(loss, self.LOSS_NAME)
        self._predictions = _named_outputs(predictions, self.PREDICTIONS_NAME)
        self._metrics = _metric_outputs(metrics)

    @property
    def loss(self):
        return self._loss

    @property
    def predictions(self):
        return self._predictions

    @property
    def metrics(self):
        return self._metrics

    def as_signature_def(self, receiver_tensors):
        if isinstance(receiver_tensors, (Tensor, SparseTensor)):
            receiver_tensors = {SINGLE_RECEIVER_KEY: receiver_tensors}
        if not receiver_tensors:
            raise ValueError("Training and eval signatures need inputs; receiver_tensors "
                             "cannot be None or empty.")
        outputs = {**self._loss, **self._predictions, **self._metrics}
        if not outputs:
            raise ValueError("Training and eval signatures need at least one of loss, "
                             "predictions and metrics.")
        return signature_def_utils.build_signature_def(
            {k: build_tensor_info(t) for k, t in receiver_tensors.items()},
            {k: build_tensor_info(t) for k, t in outputs.items()}, self._METHOD_NAME)


class TrainOutput(_SupervisedOutput):
    """The signature of a TRAIN meta graph (method "tensorflow/supervised/training")."""

    _METHOD_NAME = signature_constants.SUPERVISED_TRAIN_METHOD_NAME


class EvalOutput(_SupervisedOutput):
    """The signature of an EVAL meta graph (method "tensorflow/supervised/eval")."""

    _METHOD_NAME = signature_constants.SUPERVISED_EVAL_METHOD_NAME
