"""Variants of tf.nn ops from `tf.contrib.nn` (TF 1.15), built from core ops."""

from __future__ import annotations

import numbers

from tensorflux.framework import dtypes
from tensorflux.framework.scopes import name_scope
from tensorflux.framework.tensor_conversion import constant_value, convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.nn import activations
from tensorflux.ops.nn import functions as nn_impl
from tensorflux.ops.nn.order_statistics import nth_element  # noqa: F401 - tf.contrib.nn name
from tensorflux.ops.nn.sampled_losses import _compute_sampled_logits
from tensorflux.ops.random import stateful as random_ops

__all__ = ["alpha_dropout", "scaled_softplus", "sampled_sparse_softmax_loss", "nth_element",
           "deprecated_flipped_softmax_cross_entropy_with_logits",
           "deprecated_flipped_sparse_softmax_cross_entropy_with_logits",
           "deprecated_flipped_sigmoid_cross_entropy_with_logits"]

# -scale * alpha of SELU: the value dropped units take (Klambauer et al. 2017).
_SELU_NEGATIVE_SATURATION = -1.7580993408473766


def alpha_dropout(x, keep_prob, noise_shape=None, seed=None, name=None):
    """Dropout that keeps a SELU network's zero mean and unit variance.

    Dropped units are set to -1.7581 (SELU's negative saturation), then an affine map
    `a * x + b` restores mean 0 and variance 1 for standardized inputs.

    Args:
        x: a float tensor.
        keep_prob: the probability of keeping each unit (a scalar in (0, 1]).
        noise_shape: the shape of the keep/drop mask (default: x's shape).
        seed: a Python integer seeding the mask.
        name: op name.

    Returns:
        A tensor shaped like x.

    Raises:
        ValueError: keep_prob is a number outside (0, 1], or not a scalar.
    """
    with name_scope(name, "alpha_dropout", [x]):
        x = convert_to_tensor(x, name="x")
        if isinstance(keep_prob, numbers.Real) and not 0 < keep_prob <= 1.0:
            raise ValueError(f"keep_prob must be a scalar tensor or a float in the range (0, 1], "
                             f"got {keep_prob:g}")
        keep_prob = convert_to_tensor(keep_prob, dtype=x.dtype.base_dtype, name="keep_prob")
        if not keep_prob.shape.is_compatible_with(TensorShape([])):
            raise ValueError(f"keep_prob must be a scalar, got shape {keep_prob.shape}")
        if constant_value(keep_prob) == 1:
            return x
        alpha = _SELU_NEGATIVE_SATURATION
        noise_shape = noise_shape if noise_shape is not None else array_ops.shape(x)
        random_tensor = random_ops.random_uniform(noise_shape, seed=seed,
                                                  dtype=x.dtype.base_dtype)
        kept = math_ops.cast(math_ops.greater_equal(random_tensor, 1 - keep_prob),
                             x.dtype.base_dtype)
        x = x * kept + alpha * (1 - kept)
        a = (keep_prob + keep_prob * (1 - keep_prob) * alpha ** 2) ** -0.5
        b = -a * alpha * (1 - keep_prob)
        return a * x + b


def scaled_softplus(x, alpha, clip=None, name=None):
    """`alpha * log(1 + exp(x / alpha))`, capped at `clip` when given.

    Args:
        x: a float tensor.
        alpha: the smoothness (> 0), broadcastable to x.
        clip: optional upper bound of the result.
        name: op name.

    Returns:
        A tensor shaped like x (broadcast with alpha).
    """
    with name_scope(name, "scaled_softplus", [x, alpha]):
        x = convert_to_tensor(x, name="x")
        dtype = x.dtype.base_dtype
        alpha = convert_to_tensor(alpha, dtype=dtype, name="alpha")
        y = alpha * activations.softplus(x / alpha)
        if clip is not None:
            y = math_ops.minimum(y, convert_to_tensor(clip, dtype=dtype, name="clip"))
        return y


def sampled_sparse_softmax_loss(weights, biases, labels, inputs, num_sampled, num_classes,
                                sampled_values=None, remove_accidental_hits=True,
                                partition_strategy="mod", name="sampled_sparse_softmax_loss"):
    """Sampled softmax loss for one true class per example, with a sparse cross entropy.

    Args:
        weights, biases: the class embeddings [num_classes, dim] (or a partitioned list) and
            biases [num_classes].
        labels: [batch_size, 1] int64 true classes.
        inputs: [batch_size, dim] activations.
        num_sampled: the number of classes sampled per batch.
        num_classes: the number of classes.
        sampled_values: (sampled, true_expected_count, sampled_expected_count) from a
            candidate sampler (default: log-uniform).
        remove_accidental_hits: drop sampled classes equal to the true one.
        partition_strategy: "mod" or "div" for partitioned weights.
        name: op name.

    Returns:
        [batch_size] losses.

    Raises:
        ValueError: labels is not [batch_size, 1].
    """
    labels = convert_to_tensor(labels, name="labels")
    if labels.shape.ndims is not None and (labels.shape.ndims != 2 or labels.shape._dim_list[1]
                                           not in (None, 1)):
        raise ValueError(f"labels must be [batch_size, 1] (one true class), got shape "
                         f"{labels.shape}")
    logits, _ = _compute_sampled_logits(
        weights, biases, labels, inputs, num_sampled, num_classes, num_true=1,
        sampled_values=sampled_values, subtract_log_q=True,
        remove_accidental_hits=remove_accidental_hits, partition_strategy=partition_strategy,
        name=name)
    # The true class's logit is column 0.
    targets = array_ops.zeros(array_ops.shape(logits)[:1], dtype=dtypes.int64)
    return nn_impl.sparse_softmax_cross_entropy_with_logits(labels=targets, logits=logits)


def deprecated_flipped_softmax_cross_entropy_with_logits(logits, labels, dim=-1, name=None):
    """`tf.nn.softmax_cross_entropy_with_logits` with TF 0.x's (logits, labels) order."""
    return nn_impl.softmax_cross_entropy_with_logits(labels=labels, logits=logits, dim=dim,
                                                     name=name)


def deprecated_flipped_sparse_softmax_cross_entropy_with_logits(logits, labels, name=None):
    """`tf.nn.sparse_softmax_cross_entropy_with_logits` with TF 0.x's (logits, labels) order."""
    return nn_impl.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits,
                                                            name=name)


def deprecated_flipped_sigmoid_cross_entropy_with_logits(logits, targets, name=None):
    """`tf.nn.sigmoid_cross_entropy_with_logits` with TF 0.x's (logits, targets) order."""
    return nn_impl.sigmoid_cross_entropy_with_logits(labels=targets, logits=logits, name=name)
