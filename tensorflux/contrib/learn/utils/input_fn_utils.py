"""`tf.contrib.learn.utils.input_fn_utils`: contrib's serving input functions.

A serving input_fn returns `InputFnOps(features, labels, default_inputs)`;
`BaseEstimator.export_savedmodel` turns it into the core ServingInputReceiver (a single
features Tensor reaches the model as it is, so the column "" still reads it).
"""

from __future__ import annotations

import collections

from tensorflux.estimator import export as core_export
from tensorflux.framework import dtypes
from tensorflux.framework.graph import Tensor
from tensorflux.framework.sparse_tensor import SparseTensor
from tensorflux.ops.array import constants
from tensorflux.ops.io import parsing as parsing_ops

__all__ = ["InputFnOps", "build_parsing_serving_input_fn", "build_default_serving_input_fn",
           "as_serving_input_receiver"]


class InputFnOps(collections.namedtuple("InputFnOps",
                                        ["features", "labels", "default_inputs"])):
    """What a contrib serving input_fn returns: the model's features, (unused) labels, and
    the tensors a request feeds (`default_inputs`, a dict)."""


def build_parsing_serving_input_fn(feature_spec, default_batch_size=None):
    """A serving input_fn parsing serialized `tf.Example`s fed to "examples".

    Returns:
        A function returning InputFnOps.
    """
    def input_fn():
        examples = constants.placeholder(dtypes.string, shape=[default_batch_size],
                                         name="input_example_tensor")
        features = parsing_ops.parse_example(examples, feature_spec)
        return InputFnOps(features, None, {"examples": examples})

    return input_fn


def build_default_serving_input_fn(features, default_batch_size=None):
    """A serving input_fn with one placeholder per feature (dtype and shape from `features`,
    a dict of Tensors; the batch dimension becomes `default_batch_size`).

    Returns:
        A function returning InputFnOps.
    """
    def input_fn():
        placeholders = {}
        for key, tensor in features.items():
            shape = tensor.shape.as_list() if tensor.shape.ndims is not None else None
            if shape:
                shape = [default_batch_size] + shape[1:]
            placeholders[key] = constants.placeholder(tensor.dtype, shape=shape, name=key)
        return InputFnOps(placeholders, None, dict(placeholders))

    return input_fn


def as_serving_input_receiver(result):
    """The core ServingInputReceiver of a serving input_fn's result (InputFnOps, a receiver,
    or a `(features, default_inputs)` pair).

    Raises:
        ValueError: a result of another kind.
    """
    if isinstance(result, (core_export.ServingInputReceiver,
                           core_export.TensorServingInputReceiver)):
        return result
    if isinstance(result, InputFnOps):
        features, inputs = result.features, result.default_inputs
    elif isinstance(result, tuple) and len(result) == 2:
        features, inputs = result
    else:
        raise ValueError(f"serving_input_fn must return InputFnOps or a "
                         f"ServingInputReceiver; got {type(result).__name__}")
    if isinstance(features, (Tensor, SparseTensor)):
        return core_export.TensorServingInputReceiver(features, inputs)
    return core_export.ServingInputReceiver(features, inputs)
