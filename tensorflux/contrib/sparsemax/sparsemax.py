"""Sparsemax and its loss, built from core ops (their gradients come from top_k, cumsum and
gather_nd): sparsemax(z) = max(0, z - tau(z)), the Euclidean projection of z onto the
probability simplex."""

from __future__ import annotations

from tensorflux.framework import dtypes
from tensorflux.framework.scopes import name_scope
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.nn import core as nn_core

__all__ = ["sparsemax", "sparsemax_loss"]


def _check_logits(logits, what: str):
    if logits.shape.ndims is not None and logits.shape.ndims != 2:
        raise ValueError(f"{what} must be a [batch_size, num_classes] matrix, got shape "
                         f"{logits.shape}")
    if not logits.dtype.is_floating:
        raise TypeError(f"{what} must be float16, float32 or float64, got {logits.dtype.name}")


def sparsemax(logits, name=None):
    """Sparsemax activations: the probabilities closest to `logits` in Euclidean distance.

    Args:
        logits: [batch_size, num_classes] float logits.
        name: op name.

    Returns:
        [batch_size, num_classes] probabilities (rows sum to 1, many exactly 0); NaN rows for
        rows with NaN or +inf logits, or all -inf.

    Raises:
        ValueError: logits are not a matrix. TypeError: not floating point.
    """
    with name_scope(name, "sparsemax", [logits]):
        logits = convert_to_tensor(logits, name="logits")
        _check_logits(logits, "logits")
        dtype = logits.dtype.base_dtype
        shape = array_ops.shape(logits)
        obs, dims = shape[0], shape[1]
        z = logits
        z_sorted, _ = nn_core.top_k(z, k=dims)
        z_cumsum = math_ops.cumsum(z_sorted, axis=1)
        k = math_ops.range(1, math_ops.cast(dims, dtype) + 1, dtype=dtype)
        z_check = 1 + k * z_sorted > z_cumsum
        # the support is a prefix of the sorted logits: its size is the count of checks
        k_z = math_ops.reduce_sum(math_ops.cast(z_check, dtypes.int32), axis=1)
        # NOTE: k_z is 0 for rows with +inf or all -inf; gather at 1 and return NaN below.
        k_z_safe = math_ops.maximum(k_z, 1)
        indices = array_ops.stack([math_ops.range(0, obs), k_z_safe - 1], axis=1)
        tau_sum = array_ops.gather_nd(z_cumsum, indices)
        tau_z = (tau_sum - 1) / math_ops.cast(k_z, dtype)
        p = math_ops.maximum(math_ops.cast(0, dtype), z - tau_z[:, None])
        invalid = math_ops.logical_or(math_ops.equal(k_z, 0),
                                      math_ops.is_nan(z_cumsum[:, -1]))
        nan = array_ops.fill(array_ops.stack([obs, dims]), math_ops.cast(float("nan"), dtype))
        return array_ops.where(invalid, nan, p)


def sparsemax_loss(logits, sparsemax, labels, name=None):  # noqa: F811 - TF1 argument name
    """The sparsemax loss of each example (the sparse analogue of softmax cross entropy).

    loss(z, q) = sum_{j in S(z)} s_j (z_j - s_j / 2) + |q|^2 / 2 - q . z, with s =
    sparsemax(z) and S its support; its gradient w.r.t. the logits is s - q.

    Args:
        logits: [batch_size, num_classes] logits z.
        sparsemax: sparsemax(logits), same shape.
        labels: [batch_size, num_classes] target distributions q.
        name: op name.

    Returns:
        [batch_size] losses.

    Raises:
        ValueError: arguments are not matrices. TypeError: not floating point.
    """
    with name_scope(name, "sparsemax_loss", [logits, sparsemax, labels]):
        logits = convert_to_tensor(logits, name="logits")
        sparsemax = convert_to_tensor(sparsemax, name="sparsemax")
        labels = convert_to_tensor(labels, dtype=logits.dtype.base_dtype, name="labels")
        for value, what in ((logits, "logits"), (sparsemax, "sparsemax"), (labels, "labels")):
            _check_logits(value, what)
        z = logits
        # where, not a product: z = -inf outside the support must contribute 0, not NaN
        sum_s = array_ops.where(
            math_ops.logical_or(sparsemax > 0, math_ops.is_nan(sparsemax)),
            sparsemax * (z - 0.5 * sparsemax), array_ops.zeros_like(sparsemax))
        q_part = labels * (0.5 * labels - z)
        q_part_safe = array_ops.where(
            math_ops.logical_and(math_ops.equal(labels, 0), math_ops.is_inf(z)),
            array_ops.zeros_like(z), q_part)
        return math_ops.reduce_sum(sum_s + q_part_safe, axis=1)
