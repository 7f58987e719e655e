"""`tf.estimator.export`: serving input receivers and their builders.

A serving_input_receiver_fn takes no arguments and returns a `ServingInputReceiver`: the
placeholders a served request feeds (`receiver_tensors`) and the `features` the model_fn
reads from them. `build_parsing_serving_input_receiver_fn` feeds serialized `tf.Example`
strings; `build_raw_serving_input_receiver_fn` feeds each feature tensor directly.
"""

from __future__ import annotations

import collections

from tensorflux.estimator.export_output import (
    ClassificationOutput,
    ExportOutput,
    PredictOutput,
    RegressionOutput,
)
from tensorflux.estimator.supervised_receiver import (
    EvalOutput,
    SupervisedInputReceiver,
    TrainOutput,
    build_raw_supervised_input_receiver_fn,
    build_supervised_input_receiver_fn_from_input_fn,
)
from tensorflux.framework import dtypes
from tensorflux.framework.graph import Tensor
from tensorflux.framework.sparse_tensor import SparseTensor
from tensorflux.ops import array as array_ops
from tensorflux.ops.io import parsing as parsing_ops
from tensorflux.platform import tf_logging as logging
from tensorflux.saved_model import signature_constants

__all__ = ["ServingInputReceiver", "TensorServingInputReceiver",
           "build_parsing_serving_input_receiver_fn", "build_raw_serving_input_receiver_fn",
           "ExportOutput", "ClassificationOutput", "RegressionOutput", "PredictOutput",
           "EvalOutput", "TrainOutput", "SupervisedInputReceiver",
           "build_raw_supervised_input_receiver_fn",
           "build_supervised_input_receiver_fn_from_input_fn"]

_SINGLE_FEATURE_KEY = "feature"
_SINGLE_RECEIVER_KEY = "input"


def _as_named(value, default_key, what):
    if isinstance(value, (Tensor, SparseTensor)):
        value = {default_key: value}
    if not isinstance(value, dict):
        raise ValueError(f"{what} must be a Tensor, SparseTensor or dict of them; got {value}")
    for key, tensor in value.items():
        if not isinstance(key, str):
            raise ValueError(f"{what} keys must be strings: {key}.")
        if not isinstance(tensor, (Tensor, SparseTensor)):
            raise ValueError(f"{what} {key!r} must be a Tensor or SparseTensor: {tensor}.")
    return dict(value)


class ServingInputReceiver(collections.namedtuple(
        "ServingInputReceiver", ["features", "receiver_tensors",
                                 "receiver_tensors_alternatives"])):
    """The placeholders a request feeds and the features the model reads from them.

    A single feature Tensor becomes `{"feature": t}`; a single receiver Tensor
    `{"input": t}`.

    Raises:
        ValueError: features or receiver_tensors missing or of the wrong type.
    """

    def __new__(cls, features, receiver_tensors, receiver_tensors_alternatives=None):
        if features is None:
            raise ValueError("features must be defined.")
        if receiver_tensors is None:
            raise ValueError("receiver_tensors must be defined.")
        features = _as_named(features, _SINGLE_FEATURE_KEY, "feature")
        receiver_tensors = _as_named(receiver_tensors, _SINGLE_RECEIVER_KEY, "receiver_tensor")
        alternatives = {}
        for name, tensors in (receiver_tensors_alternatives or {}).items():
            alternatives[name] = _as_named(tensors, _SINGLE_RECEIVER_KEY, "receiver_tensor")
        return super().__new__(cls, features, receiver_tensors, alternatives or None)


class TensorServingInputReceiver(collections.namedtuple(
        "TensorServingInputReceiver", ["features", "receiver_tensors",
                                       "receiver_tensors_alternatives"])):
    """Like ServingInputReceiver, but a single `features` Tensor is passed to the model_fn
    as it is (not wrapped in a dict).

    Raises:
        ValueError: `features` is not a single Tensor.
    """

    def __new__(cls, features, receiver_tensors, receiver_tensors_alternatives=None):
        if not isinstance(features, (Tensor, SparseTensor)):
            raise ValueError(f"features must be a single Tensor; got {features}")
        receiver = ServingInputReceiver(features, receiver_tensors,
                                        receiver_tensors_alternatives)
        return super().__new__(cls, features, receiver.receiver_tensors,
                               receiver.receiver_tensors_alternatives)


def build_parsing_serving_input_receiver_fn(feature_spec, default_batch_size=None):
    """A receiver fn that parses serialized `tf.Example`s fed to "examples".

    Args:
        feature_spec: {key: FixedLenFeature/VarLenFeature} (e.g. from
            `tf.feature_column.make_parse_example_spec`).
        default_batch_size: the static batch size of the placeholder (None: any).

    Returns:
        A function returning a ServingInputReceiver.
    """
    def serving_input_receiver_fn():
        serialized = array_ops.placeholder(dtypes.string, shape=[default_batch_size],
                                           name="input_example_tensor")
        features = parsing_ops.parse_example(serialized, feature_spec)
        return ServingInputReceiver(features, {"examples": serialized})

    return serving_input_receiver_fn


def build_raw_serving_input_receiver_fn(features, default_batch_size=None):
    """A receiver fn with one placeholder per feature, fed directly.

    Args:
        features: {key: Tensor} (or one Tensor) giving each placeholder's dtype and shape; the
            batch dimension becomes `default_batch_size`.
        default_batch_size: the static batch size (None: any).

    Returns:
        A function returning a ServingInputReceiver.
    """
    def serving_input_receiver_fn():
        named = _as_named(features, _SINGLE_FEATURE_KEY, "feature")
        receivers = {}
        for key, tensor in named.items():
            shape = tensor.shape.as_list() if tensor.shape.ndims is not None else None
            if shape:
                shape = [default_batch_size] + shape[1:]
            receivers[key] = array_ops.placeholder(tensor.dtype, shape=shape, name=key)
        single = isinstance(features, (Tensor, SparseTensor))
        return ServingInputReceiver(
            receivers[_SINGLE_FEATURE_KEY] if single else dict(receivers),
            dict(receivers))

    return serving_input_receiver_fn


def build_all_signature_defs(receiver_tensors, export_outputs, receiver_alternatives=None):
    """The SignatureDefs of every export output; those invalid for these inputs are skipped
    (logged), as TF does.

    Raises:
        ValueError: `export_outputs` is not a dict of ExportOutput.
    """
    if not isinstance(export_outputs, dict):
        raise ValueError(f"export_outputs must be a dict and not {type(export_outputs)}")
    signatures = {}
    inputs = [(None, receiver_tensors)] + sorted((receiver_alternatives or {}).items())
    for alt_name, tensors in inputs:
        for key, output in export_outputs.items():
            if not isinstance(output, ExportOutput):
                raise ValueError(f"export_outputs[{key!r}] is not an ExportOutput: {output}")
            name = key if alt_name is None else f"{alt_name}:{key}"
            try:
                signatures[name] = output.as_signature_def(tensors)
            except ValueError as err:
                logging.warning(f"Export: signature {name!r} is skipped for these inputs: "
                                f"{err}")
    if signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY not in signatures:
        logging.warning("Export includes no default signature!")
    return signatures
