"""`tf.nn.compute_average_loss` and `tf.nn.scale_regularization_loss`: losses scaled for a
global batch split over replicas.

tensorflux has no distribution strategies, so every program runs one replica in sync: the
average is over the (global) batch, and regularization losses are divided by one.
"""

from __future__ import annotations

from tensorflux.framework import dtypes
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops

_NUM_REPLICAS_IN_SYNC = 1


def _scale_by_sample_weight(losses, sample_weight):
    weight = math_ops.cast(sample_weight, losses.dtype)
    loss_rank, weight_rank = losses.get_shape().ndims, weight.get_shape().ndims
    if loss_rank is not None and weight_rank is not None:
        if weight_rank == loss_rank + 1 and weight.get_shape()[-1] == 1:
            weight = array_ops.squeeze(weight, [-1])
        elif weight_rank == loss_rank - 1:
            weight = array_ops.expand_dims(weight, -1)
    return math_ops.multiply(losses, weight)


def compute_average_loss(per_example_loss, sample_weight=None, global_batch_size=None):
    """The sum of (weighted) per-example losses divided by the global batch size.

    Args:
        per_example_loss: a tensor of rank >= 1, one loss per example.
        sample_weight: optional weights, broadcast against the losses.
        global_batch_size: the global batch size; default: the first dimension of
            `per_example_loss` times the number of replicas (1 here).

    Returns:
        A scalar of `per_example_loss`'s dtype.

    Raises:
        ValueError: `per_example_loss` is a scalar.
    """
    per_example_loss = convert_to_tensor(per_example_loss)
    input_dtype = per_example_loss.dtype.base_dtype
    if per_example_loss.get_shape().ndims == 0:
        raise ValueError(f"Invalid value passed for `per_example_loss`: expected a tensor of "
                         f"rank >= 1, got a scalar {per_example_loss}.")
    if sample_weight is not None:
        per_example_loss = _scale_by_sample_weight(per_example_loss, sample_weight)
    per_example_loss = math_ops.cast(per_example_loss, input_dtype)
    if global_batch_size is None:
        batch = array_ops.shape(per_example_loss, out_type=dtypes.int32)[0]
        global_batch_size = math_ops.cast(batch * _NUM_REPLICAS_IN_SYNC, input_dtype)
    return math_ops.reduce_sum(per_example_loss) / global_batch_size


def scale_regularization_loss(regularization_loss):
    """The summed regularization loss divided by the number of replicas in sync (1 here)."""
    return math_ops.reduce_sum(regularization_loss) / _NUM_REPLICAS_IN_SYNC
