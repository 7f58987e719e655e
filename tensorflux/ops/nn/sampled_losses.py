"""Sampled losses over large class sets: `tf.nn.nce_loss` and `tf.nn.sampled_softmax_loss`.

Both score each example's true classes and a shared sample of other classes
(`_compute_sampled_logits`): the rows of `weights` and entries of `biases` for all those ids
come from one `embedding_lookup` (so `weights` may be a list of shards, split by the `mod` or
`div` partition strategy), which keeps their gradients sparse: IndexedSlices touching only the
looked-up rows. Logits have log Q (the sampler's expected count) subtracted, and optionally
accidental hits (samples equal to a true class) pushed to -FLT_MAX.
"""

from __future__ import annotations

from tensorflux.framework import dtypes
from tensorflux.framework.scopes import op_name_scope as scope
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.nn import functions as nn_impl
from tensorflux.ops.nn.candidate_sampling import (
    compute_accidental_hits,
    log_uniform_candidate_sampler,
)

__all__: list = []


def _shards(weights) -> list:
    if isinstance(weights, (list, tuple)):
        return list(weights)
    if hasattr(weights, "_get_variable_list"):
        return list(weights._get_variable_list())
    return [weights]


def _compute_sampled_logits(weights, biases, labels, inputs, num_sampled, num_classes,
                            num_true=1, sampled_values=None, subtract_log_q=True,
                            remove_accidental_hits=False, partition_strategy="mod",
                            name=None, seed=None):
    """(logits [batch, num_true + num_sampled], labels of the same shape) for sampled losses.

    The first `num_true` columns score the true classes, the rest the sampled ones; labels
    are `1 / num_true` on the true columns and 0 elsewhere.
    """
    weights = _shards(weights)
    with scope(name, "compute_sampled_logits"):
        inputs = convert_to_tensor(inputs, name="inputs")
        labels = convert_to_tensor(labels, name="labels")
        if labels.dtype.base_dtype != dtypes.int64:
            labels = math_ops.cast(labels, dtypes.int64)
        labels_flat = array_ops.reshape(labels, [-1])
        if sampled_values is None:
            sampled_values = log_uniform_candidate_sampler(
                true_classes=labels, num_true=num_true, num_sampled=num_sampled, unique=True,
                range_max=num_classes, seed=seed)
        sampled, true_expected, sampled_expected = (array_ops.stop_gradient(v)
                                                    for v in sampled_values)
        sampled = math_ops.cast(sampled, dtypes.int64)
        num_labels = array_ops.shape(labels_flat)[0]
        all_ids = array_ops.concat([labels_flat, sampled], 0)

        all_w = nn_impl.embedding_lookup(weights, all_ids, partition_strategy=partition_strategy)
        if all_w.dtype.base_dtype != inputs.dtype.base_dtype:
            all_w = math_ops.cast(all_w, inputs.dtype.base_dtype)
        true_w = array_ops.slice(all_w, [0, 0], array_ops.stack([num_labels, -1]))
        sampled_w = array_ops.slice(all_w, array_ops.stack([num_labels, 0]), [-1, -1])
        sampled_logits = math_ops.matmul(inputs, sampled_w, transpose_b=True)

        all_b = nn_impl.embedding_lookup(biases, all_ids, partition_strategy=partition_strategy)
        if all_b.dtype.base_dtype != inputs.dtype.base_dtype:
            all_b = math_ops.cast(all_b, inputs.dtype.base_dtype)
        true_b = array_ops.reshape(array_ops.slice(all_b, [0], array_ops.stack([num_labels])),
                                   [-1, num_true])
        sampled_b = array_ops.slice(all_b, array_ops.stack([num_labels]), [-1])

        dim = array_ops.shape(true_w)[1:2]
        true_w = array_ops.reshape(true_w, array_ops.concat([[-1, num_true], dim], 0))
        true_logits = math_ops.reduce_sum(array_ops.expand_dims(inputs, 1) * true_w, axis=2)
        true_logits += true_b
        sampled_logits += sampled_b

        if remove_accidental_hits:
            rows, positions, lowest = compute_accidental_hits(labels, sampled,
                                                              num_true=num_true)
            where = array_ops.stack([rows, math_ops.cast(positions, dtypes.int32)], axis=1)
            logits_shape = array_ops.stack([array_ops.shape(labels)[0], num_sampled])
            mask = array_ops.scatter_nd(where, math_ops.cast(lowest, sampled_logits.dtype),
                                        logits_shape)
            sampled_logits += mask

        if subtract_log_q:
            dtype = true_logits.dtype.base_dtype
            true_logits -= math_ops.log(math_ops.cast(true_expected, dtype))
            sampled_logits -= math_ops.log(math_ops.cast(sampled_expected, dtype))

        logits = array_ops.concat([true_logits, sampled_logits], 1)
        targets = array_ops.concat([array_ops.ones_like(true_logits) / num_true,
                                    array_ops.zeros_like(sampled_logits)], 1)
        return logits, targets


def nce_loss(weights, biases, labels, inputs, num_sampled, num_classes, num_true=1,
             sampled_values=None, remove_accidental_hits=False, partition_strategy="mod",
             name="nce_loss"):
    """Noise-contrastive estimation loss per example (TF1 `tf.nn.nce_loss`).

    Each true class and each sampled class is a logistic regression (true vs. noise) on
    `inputs . weights[id] + biases[id] - log Q(id)`; the loss sums their cross entropies.

    Args:
        weights: `[num_classes, dim]` (a tensor, Variable, or list of shards).
        biases: `[num_classes]`.
        labels: `[batch_size, num_true]` int64 target classes.
        inputs: `[batch_size, dim]` activations.
        num_sampled: classes to sample per batch.
        num_classes: the number of classes.
        num_true: target classes per example.
        sampled_values: a `(sampled, true_expected_count, sampled_expected_count)` tuple from a
            candidate sampler; by default `log_uniform_candidate_sampler` with unique=True.
        remove_accidental_hits: drop samples that equal a true class.
        partition_strategy: "mod" or "div" when `weights` is sharded.
        name: name scope.

    Returns:
        `[batch_size]` losses.

    Example:
        >>> loss = tf.reduce_mean(tf.nn.nce_loss(nce_w, nce_b, labels, embed, 64, vocab_size))
    """
    logits, targets = _compute_sampled_logits(
        weights, biases, labels, inputs, num_sampled, num_classes, num_true=num_true,
        sampled_values=sampled_values, subtract_log_q=True,
        remove_accidental_hits=remove_accidental_hits, partition_strategy=partition_strategy,
        name=name)
    losses = nn_impl.sigmoid_cross_entropy_with_logits(labels=targets, logits=logits,
                                                       name="sampled_losses")
    return math_ops.reduce_sum(losses, axis=1)


def sampled_softmax_loss(weights, biases, labels, inputs, num_sampled, num_classes,
                         num_true=1, sampled_values=None, remove_accidental_hits=True,
                         partition_strategy="mod", name="sampled_softmax_loss", seed=None):
    """Softmax cross entropy over the true classes plus a sample of the others.

    Arguments as `nce_loss`, except that accidental hits are removed by default and `seed`
    seeds the default sampler.

    Returns:
        `[batch_size]` losses.
    """
    logits, targets = _compute_sampled_logits(
        weights, biases, labels, inputs, num_sampled, num_classes, num_true=num_true,
        sampled_values=sampled_values, subtract_log_q=True,
        remove_accidental_hits=remove_accidental_hits, partition_strategy=partition_strategy,
        name=name, seed=seed)
    targets = array_ops.stop_gradient(targets, name="labels_stop_gradient")
    return nn_impl.softmax_cross_entropy_with_logits_v2(labels=targets, logits=logits)
