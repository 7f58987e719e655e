"""tf.nn functions built from other ops: losses with logits, moments and batch normalization,
l2_normalize, dropout, dense-layer helpers, embedding_lookup and log_poisson_loss.
"""

from __future__ import annotations

import numbers

import numpy as np

from tensorflux.framework import dtypes
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.scopes import op_name_scope as _scope
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.math.clip import clip_by_norm
from tensorflux.ops.nn import activations as activation_ops
from tensorflux.ops.nn import core as nn_ops
from tensorflux.ops.nn import normalization as nn_norm_ops
from tensorflux.ops.random import stateful as random_ops

__all__: list = []



def _pick(new, new_name: str, old, old_name: str):
    if new is not None and old is not None:
        raise ValueError(f"Cannot specify both '{new_name}' and '{old_name}'.")
    return new if new is not None else old


def _no_sentinel(sentinel, fn: str) -> None:
    if sentinel is not None:
        raise ValueError(f"Only call `{fn}` with named arguments (labels=..., logits=..., ...)")


# -- losses with logits ---------------------------------------------------------------------


def sigmoid_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, name=None):
    """Elementwise logistic loss `max(x, 0) - x * z + log(1 + exp(-|x|))`, stable for any x.

    Raises:
        ValueError: `labels` and `logits` have different static shapes.
    """
    _no_sentinel(_sentinel, "sigmoid_cross_entropy_with_logits")
    with _scope(name, "logistic_loss") as scope:
        logits = convert_to_tensor(logits, name="logits")
        labels = convert_to_tensor(labels, dtype=logits.dtype.base_dtype, name="labels")
        if not logits.shape.is_compatible_with(labels.shape):
            raise ValueError(f"`logits` and `labels` must have the same shape, received "
                             f"({logits.shape} vs {labels.shape}).")
        zeros = array_ops.zeros_like(logits)
        positive = math_ops.greater_equal(logits, zeros)
        relu_logits = math_ops.where(positive, logits, zeros)
        neg_abs_logits = math_ops.where(positive, -logits, logits)
        return math_ops.add(relu_logits - logits * labels,
                            math_ops.log1p(math_ops.exp(neg_abs_logits)), name=scope)


def weighted_cross_entropy_with_logits(labels=None, logits=None, pos_weight=None, name=None,
                                       targets=None):
    """Logistic loss with positive examples weighted by `pos_weight`:
    `(1 - z) * x + (1 + (q - 1) * z) * (log(1 + exp(-|x|)) + max(-x, 0))`.
    """
    labels = _pick(labels, "labels", targets, "targets")
    with _scope(name, "logistic_loss") as scope:
        logits = convert_to_tensor(logits, name="logits")
        labels = convert_to_tensor(labels, dtype=logits.dtype.base_dtype, name="labels")
        if not logits.shape.is_compatible_with(labels.shape):
            raise ValueError(f"`logits` and `labels` must have the same shape, received "
                             f"({logits.shape} vs {labels.shape}).")
        log_weight = 1 + (pos_weight - 1) * labels
        softplus_neg = (math_ops.log1p(math_ops.exp(-math_ops.abs(logits)))
                        + activation_ops.relu(-logits))
        return math_ops.add((1 - labels) * logits, log_weight * softplus_neg, name=scope)


def _move_axis_last(tensor, axis: int, rank: int):
    perm = [i for i in range(rank) if i != axis] + [axis]
    return array_ops.transpose(tensor, perm)


def _flat_2d(logits):
    """logits as [rows, classes], plus the shape (list or tensor) of the rows."""
    shape = logits.shape
    if shape.ndims == 2:
        return logits, None
    classes = shape._dim_list[-1] if shape.ndims is not None else None
    if shape.ndims is not None and all(d is not None for d in shape._dim_list[:-1]):
        rows_shape = list(shape._dim_list[:-1])
    else:
        rows_shape = array_ops.shape(logits)[:-1]
    flat = array_ops.reshape(logits, [-1, classes if classes is not None else
                                      array_ops.shape(logits)[-1]])
    return flat, rows_shape


def softmax_cross_entropy_with_logits_v2(labels, logits, axis=None, name=None, dim=None):
    """Softmax cross entropy between `logits` and a distribution `labels` along `axis`.

    Gradients flow into both `logits` and `labels`.

    Returns:
        The loss, with `logits`' shape minus `axis`.
    """
    axis = _pick(axis, "axis", dim, "dim")
    axis = -1 if axis is None else int(axis)
    with _scope(name, "softmax_cross_entropy_with_logits") as scope:
        logits = convert_to_tensor(logits, name="logits")
        labels = convert_to_tensor(labels, name="labels")
        if labels.dtype.base_dtype != logits.dtype.base_dtype:
            # TF casts the labels to the logits' dtype (float64 labels with float32 logits).
            labels = math_ops.cast(labels, logits.dtype.base_dtype)
        rank = logits.shape.ndims
        if rank is not None and axis not in (-1, rank - 1):
            axis = axis % rank
            logits = _move_axis_last(logits, axis, rank)
            labels = _move_axis_last(labels, axis, rank)
        elif rank is None and axis != -1:
            raise ValueError("softmax_cross_entropy_with_logits along an axis other than the "
                             "last needs logits of known rank")
        flat_logits, rows_shape = _flat_2d(logits)
        # As TF, labels are always flattened to the logits' [rows, classes] ([1, N, C] labels
        # with [N, C] logits are fine).
        flat_labels = labels if rows_shape is None and labels.shape.ndims == 2 else \
            array_ops.reshape(labels, array_ops.shape(flat_logits))
        loss, _ = nn_ops.SoftmaxCrossEntropyWithLogits(flat_logits, flat_labels)
        if rows_shape is None:
            return array_ops.identity(loss, name=scope)
        return array_ops.reshape(loss, rows_shape, name=scope)


def softmax_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, dim=-1,
                                      name=None, axis=None):
    """TF1's softmax cross entropy: like the v2 function, but no gradient flows into labels."""
    _no_sentinel(_sentinel, "softmax_cross_entropy_with_logits")
    axis = _pick(axis, "axis", None if dim == -1 else dim, "dim")
    with _scope(name, "softmax_cross_entropy_with_logits_sg") as scope:
        labels = array_ops.stop_gradient(labels, name="labels_stop_gradient")
        return softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits, axis=axis,
                                                    name=scope)


def sparse_softmax_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None,
                                             name=None):
    """Softmax cross entropy against integer class `labels` (rank of logits minus one).

    Raises:
        ValueError: the ranks of `labels` and `logits` do not match.
        InvalidArgumentError (at run time): a label is outside [0, num_classes).
    """
    _no_sentinel(_sentinel, "sparse_softmax_cross_entropy_with_logits")
    with _scope(name, "SparseSoftmaxCrossEntropyWithLogits") as scope:
        labels = convert_to_tensor(labels, name="labels")
        logits = convert_to_tensor(logits, name="logits")
        l_rank, x_rank = labels.shape.ndims, logits.shape.ndims
        if l_rank is not None and x_rank is not None and l_rank != x_rank - 1:
            raise ValueError(f"`labels.shape.rank` must equal `logits.shape.rank - 1`. "
                             f"Received: labels.shape={labels.shape} of rank {l_rank} and "
                             f"logits.shape={logits.shape} of rank {x_rank}")
        if x_rank == 2:
            loss, _ = nn_ops.SparseSoftmaxCrossEntropyWithLogits(logits, labels, name=scope)
            return loss
        flat_logits, rows_shape = _flat_2d(logits)
        loss, _ = nn_ops.SparseSoftmaxCrossEntropyWithLogits(
            flat_logits, array_ops.reshape(labels, [-1]))
        return array_ops.reshape(loss, rows_shape if rows_shape is not None
                                 else array_ops.shape(labels), name=scope)


def log_poisson_loss(targets, log_input, compute_full_loss=False, name=None):
    """Poisson negative log likelihood `exp(c) - z * c` (plus Stirling's term if full)."""
    with _scope(name, "log_poisson_loss") as scope:
        log_input = convert_to_tensor(log_input, name="log_input")
        targets = convert_to_tensor(targets, dtype=log_input.dtype.base_dtype, name="targets")
        if not log_input.shape.is_compatible_with(targets.shape):
            raise ValueError(f"log_input and targets must have the same shape "
                             f"({log_input.shape} vs {targets.shape})")
        if not compute_full_loss:
            return math_ops.subtract(math_ops.exp(log_input), log_input * targets, name=scope)
        result = math_ops.exp(log_input) - log_input * targets
        stirling = (targets * math_ops.log(targets) - targets
                    + 0.5 * math_ops.log(2 * np.pi * targets))
        ones = array_ops.ones_like(targets)
        use = math_ops.logical_and(math_ops.greater_equal(targets, array_ops.zeros_like(targets)),
                                   math_ops.less_equal(targets, ones))
        return math_ops.add(result, math_ops.where(use, array_ops.zeros_like(targets),
                                                   stirling), name=scope)


# -- normalization --------------------------------------------------------------------------


def l2_normalize(x, axis=None, epsilon=1e-12, name=None, dim=None):
    """x / sqrt(max(sum(x ** 2, axis), epsilon))."""
    axis = _pick(axis, "axis", dim, "dim")
    with _scope(name, "l2_normalize") as scope:
        x = convert_to_tensor(x, name="x")
        square_sum = math_ops.reduce_sum(math_ops.square(x), axis, keepdims=True)
        inv = math_ops.rsqrt(math_ops.maximum(square_sum, epsilon))
        return math_ops.multiply(x, inv, name=scope)


def moments(x, axes, shift=None, name=None, keep_dims=None, keepdims=None):
    """Mean and variance of `x` over `axes` (half-precision inputs accumulate in float32).

    Returns:
        `(mean, variance)`.

    Example: `mean, var = tf.nn.moments(images, axes=[0, 1, 2])`.
    """
    del shift
    keepdims = bool(_pick(keepdims, "keepdims", keep_dims, "keep_dims"))
    with _scope(name, "moments"):
        x = convert_to_tensor(x, name="x")
        y = math_ops.cast(x, dtypes.float32) if x.dtype.base_dtype == dtypes.float16 else x
        axes = list(axes)
        mean = math_ops.reduce_mean(y, axes, keepdims=True, name="mean")
        variance = math_ops.reduce_mean(
            math_ops.squared_difference(y, array_ops.stop_gradient(mean)), axes,
            keepdims=True, name="variance")
        if not keepdims:
            mean = array_ops.squeeze(mean, axes)
            variance = array_ops.squeeze(variance, axes)
        if x.dtype.base_dtype == dtypes.float16:
            return math_ops.cast(mean, dtypes.float16), math_ops.cast(variance, dtypes.float16)
        return mean, variance


def sufficient_statistics(x, axes, shift=None, keep_dims=None, name=None, keepdims=None):
    """(count, sum of x - shift, sum of (x - shift) ** 2, shift) over `axes`."""
    keepdims = bool(_pick(keepdims, "keepdims", keep_dims, "keep_dims"))
    with _scope(name, "sufficient_statistics"):
        x = convert_to_tensor(x, name="x")
        axes = list(axes)
        dims = x.shape._dim_list if x.shape.ndims is not None else None
        if dims is not None and all(dims[a] is not None for a in axes):
            counts = array_ops.constant(float(np.prod([dims[a] for a in axes])),
                                        dtype=x.dtype.base_dtype, name="count")
        else:
            sizes = array_ops.gather(math_ops.cast(array_ops.shape(x), x.dtype.base_dtype), axes)
            counts = math_ops.reduce_prod(sizes, name="count")
        if shift is not None:
            shift = convert_to_tensor(shift, dtype=x.dtype.base_dtype, name="shift")
            m_ss, v_ss = x - shift, math_ops.squared_difference(x, shift)
        else:
            m_ss, v_ss = x, math_ops.square(x)
        m_ss = math_ops.reduce_sum(m_ss, axes, keepdims=keepdims, name="mean_ss")
        v_ss = math_ops.reduce_sum(v_ss, axes, keepdims=keepdims, name="var_ss")
        return counts, m_ss, v_ss, shift


def normalize_moments(counts, mean_ss, variance_ss, shift, name=None):
    """(mean, variance) from `sufficient_statistics` outputs."""
    with _scope(name, "normalize"):
        divisor = math_ops.reciprocal(counts, name="divisor")
        if shift is not None:
            shifted_mean = math_ops.multiply(mean_ss, divisor, name="shifted_mean")
            mean = math_ops.add(shifted_mean, shift, name="mean")
        else:
            shifted_mean = math_ops.multiply(mean_ss, divisor, name="mean")
            mean = shifted_mean
        variance = math_ops.subtract(variance_ss * divisor, math_ops.square(shifted_mean),
                                     name="variance")
        return mean, variance


def weighted_moments(x, axes, frequency_weights, name=None, keep_dims=None, keepdims=None):
    """Frequency-weighted mean and variance of `x` over `axes` (0 where weights sum to 0)."""
    keepdims = bool(_pick(keepdims, "keepdims", keep_dims, "keep_dims"))
    with _scope(name, "weighted_moments"):
        x = convert_to_tensor(x, name="x")
        half = x.dtype.base_dtype == dtypes.float16
        if half:
            x = math_ops.cast(x, dtypes.float32)
        weights = math_ops.cast(convert_to_tensor(frequency_weights, name="frequency_weights"),
                                x.dtype.base_dtype)
        axes = list(axes)
        total = math_ops.reduce_sum(weights * x, axes, keepdims=True)
        weight_sum = math_ops.reduce_sum(weights + array_ops.zeros_like(x), axes, keepdims=True)
        mean = math_ops.div_no_nan(total, weight_sum)
        spread = math_ops.reduce_sum(weights * math_ops.squared_difference(x, mean), axes,
                                     keepdims=True)
        variance = math_ops.div_no_nan(spread, weight_sum)
        if not keepdims:
            mean = array_ops.squeeze(mean, axes)
            variance = array_ops.squeeze(variance, axes)
        if half:
            return math_ops.cast(mean, dtypes.float16), math_ops.cast(variance, dtypes.float16)
        return mean, variance


def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None):
    """`scale * (x - mean) / sqrt(variance + variance_epsilon) + offset` (offset/scale optional)."""
    with _scope(name, "batchnorm") as scope:
        x = convert_to_tensor(x, name="x")
        inv = math_ops.rsqrt(variance + variance_epsilon)
        if scale is not None:
            inv = inv * scale
        shift = offset - mean * inv if offset is not None else -mean * inv
        return math_ops.add(x * math_ops.cast(inv, x.dtype.base_dtype),
                            math_ops.cast(shift, x.dtype.base_dtype), name=scope)


def fused_batch_norm(x, scale, offset, mean=None, variance=None, epsilon=0.001,
                     data_format="NHWC", is_training=True, name=None,
                     exponential_avg_factor=1.0):
    """Batch normalization of a 4-D tensor in one op (FusedBatchNormV3).

    Returns:
        `(y, batch_mean, batch_variance)`; in training mode `batch_variance` is the unbiased
        batch variance (blended with `variance` when `exponential_avg_factor` != 1).
    """
    x = convert_to_tensor(x, name="input")
    scale = convert_to_tensor(scale, name="scale")
    offset = convert_to_tensor(offset, name="offset")
    stat = scale.dtype.base_dtype
    if mean is None:
        mean = array_ops.constant([], dtype=stat)
    if variance is None:
        variance = array_ops.constant([], dtype=stat)
    # NOTE: TF raises epsilon to cuDNN's minimum 1.001e-5 on every device; so do we.
    epsilon = max(float(epsilon), 1.001e-5)
    outs = nn_norm_ops.FusedBatchNormV3(
        x, scale, offset, mean, variance, epsilon=epsilon,
        exponential_avg_factor=float(exponential_avg_factor), data_format=data_format,
        is_training=is_training, name=name)
    return outs.y, outs.batch_mean, outs.batch_variance


def lrn(input, depth_radius=5, bias=1.0, alpha=1.0, beta=0.5, name=None):
    """Local response normalization over the depth of a 4-D NHWC tensor:
    `input / (bias + alpha * sum(input ** 2 over depth window)) ** beta`.
    """
    return nn_norm_ops.LRN(input, depth_radius=depth_radius, bias=bias, alpha=alpha,
                           beta=beta, name=name)


local_response_normalization = lrn


# -- dropout and dense helpers --------------------------------------------------------------


def dropout(x, keep_prob=None, noise_shape=None, seed=None, name=None, rate=None):
    """Zeroes elements with probability `rate` (= 1 - keep_prob), scales the rest by 1/(1-rate).

    Raises:
        ValueError: both or neither of `keep_prob` and `rate`, a rate outside [0, 1), or a
            non-float `x`.
    """

    if keep_prob is not None:
        if rate is not None:
            raise ValueError("Cannot specify both 'keep_prob' and 'rate'.")
        rate = 1 - keep_prob
    if rate is None:
        raise ValueError(f"`rate` must be provided. Received: rate={rate}")
    with _scope(name, "dropout") as scope:
        x = convert_to_tensor(x, name="x")
        if not x.dtype.is_floating:
            raise ValueError(f"`x.dtype` must be a floating point tensor as `x` will be scaled. "
                             f"Received: x_dtype={x.dtype}")
        if isinstance(rate, numbers.Real):
            if not 0 <= rate < 1:
                raise ValueError(f"`rate` must be a scalar tensor or a float in the range "
                                 f"[0, 1). Received: rate={rate}")
            if rate == 0:
                return x
            scale = 1 / (1 - rate)
        else:
            rate = convert_to_tensor(rate, dtype=x.dtype.base_dtype, name="rate")
            scale = 1 / (1 - rate)
        shape = array_ops.shape(x) if noise_shape is None else noise_shape
        noise = random_ops.random_uniform(shape, seed=seed, dtype=x.dtype.base_dtype)
        keep = math_ops.cast(math_ops.greater_equal(noise, rate), x.dtype.base_dtype)
        return math_ops.multiply(x * scale, keep, name=scope)


def swish(features, beta=1.0, name=None):
    """features * sigmoid(beta * features) (also known as SiLU)."""
    with _scope(name, "swish") as scope:
        features = convert_to_tensor(features, name="features")
        return math_ops.multiply(features, math_ops.sigmoid(beta * features), name=scope)


silu = swish


def crelu(features, name=None, axis=-1):
    """Concatenated ReLU: `concat([relu(x), relu(-x)], axis)`, doubling that dimension."""
    with _scope(name, "CRelu") as scope:
        features = convert_to_tensor(features, name="features")
        both = array_ops.concat([features, -features], axis)
        return activation_ops.relu(both, name=scope)


def xw_plus_b(x, weights, biases, name=None):
    """matmul(x, weights) + biases."""
    with _scope(name, "xw_plus_b") as scope:
        return nn_ops.bias_add(math_ops.matmul(x, weights), biases, name=scope)


def relu_layer(x, weights, biases, name=None):
    """relu(matmul(x, weights) + biases)."""
    with _scope(name, "relu_layer") as scope:
        return activation_ops.relu(nn_ops.bias_add(math_ops.matmul(x, weights), biases), name=scope)


# -- embedding_lookup -----------------------------------------------------------------------


def _clip(rows, ids, max_norm):
    if max_norm is None:
        return rows

    ids_rank, rows_rank = ids.shape.ndims, rows.shape.ndims
    if ids_rank is None or rows_rank is None:
        raise ValueError("embedding_lookup with max_norm needs ids and params of known rank")
    return clip_by_norm(rows, max_norm, axes=list(range(ids_rank, rows_rank)))


def _partition(flat_ids, params, strategy: str):
    """(partition of each id, id within its partition) for `mod` or `div` sharding."""
    n = len(params)
    if strategy == "mod":
        return flat_ids % n, flat_ids // n
    sizes = [p.shape._dim_list[0] if p.shape.ndims else None for p in params]
    if all(s is not None for s in sizes):
        total = array_ops.constant(sum(sizes), dtype=flat_ids.dtype.base_dtype)
    else:
        graph = graph_mod.get_default_graph()
        counts = []
        for p in params:
            with graph.colocate_with(p):  # a shard's size is read where the shard lives
                counts.append(array_ops.shape(p)[0])
        total = math_ops.add_n([math_ops.cast(c, flat_ids.dtype.base_dtype) for c in counts])
    per = total // n
    extras = total % n
    assign = math_ops.maximum(flat_ids // (per + 1), (flat_ids - extras) // per)
    in_extras = math_ops.cast(math_ops.less(assign, extras), flat_ids.dtype.base_dtype)
    new_ids = (in_extras * (flat_ids % (per + 1))
               + (1 - in_extras) * ((flat_ids - extras) % per))
    return assign, new_ids


def embedding_lookup(params, ids, partition_strategy="mod", name=None, validate_indices=True,
                     max_norm=None):
    """Rows of `params` (a tensor, Variable, or list of shards) at `ids`.

    With several shards, id `i` lives in shard `i % n` at row `i // n` ("mod"), or in
    contiguous blocks ("div"), as in TensorFlow. Each shard's Gather is colocated with the
    shard, so on a cluster only the requested rows leave the parameter servers; the gradient
    is one IndexedSlices per shard.

    Raises:
        ValueError: no params, or an unknown `partition_strategy`.
    """
    del validate_indices
    return _embedding_lookup_and_transform(params, ids, partition_strategy, name=name,
                                           max_norm=max_norm)


def _embedding_lookup_and_transform(params, ids, partition_strategy="mod", name=None,
                                    max_norm=None, transform_fn=None):
    """`embedding_lookup` that applies `transform_fn` to each shard's gathered rows (after
    `max_norm` clipping) before they are stitched together (TF1's private helper).

    `transform_fn` maps a [k, ...] tensor of rows to [k, ...'] rows; the result then has
    shape `ids.shape + rows'.shape[1:]`.
    """
    if isinstance(params, (list, tuple)):
        params = list(params)
    elif hasattr(params, "_get_variable_list"):
        params = list(params._get_variable_list())
    else:
        params = [params]
    if not params:
        raise ValueError("Need at least one param")
    if partition_strategy not in ("mod", "div"):
        raise ValueError(f"Unrecognized partition strategy: {partition_strategy}")

    def rows_of(p, g):
        rows = _clip(array_ops.gather(p, g), g, max_norm)
        return rows if transform_fn is None else transform_fn(rows)

    graph = graph_mod.get_default_graph()
    with _scope(name, "embedding_lookup") as scope:
        params = [convert_to_tensor(p, name="params") for p in params]
        ids = convert_to_tensor(ids, name="ids")
        if len(params) == 1 and (transform_fn is None or ids.shape.ndims == 1):
            with graph.colocate_with(params[0]):
                rows = rows_of(params[0], ids)
            return array_ops.identity(rows, name=scope)
        # Several shards, or a transform that must see [k, ...] rows: flatten the ids.
        flat_ids = array_ops.reshape(ids, [-1])
        original = math_ops.range(array_ops.size(flat_ids))
        assign, new_ids = _partition(flat_ids, params, partition_strategy)
        assign = math_ops.cast(assign, dtypes.int32)
        gather_ids = array_ops.dynamic_partition(new_ids, assign, len(params))
        positions = array_ops.dynamic_partition(original, assign, len(params))
        parts = []
        for p, g in zip(params, gather_ids):
            with graph.colocate_with(p):
                parts.append(rows_of(p, g))
        merged = array_ops.dynamic_stitch(positions, parts)
        element = TensorShape(None)
        sources = params if transform_fn is None else parts
        for p in sources:
            element = element.merge_with(p.shape[1:]) if p.shape.ndims is not None else element
        if element.is_fully_defined() and isinstance(ids, Tensor):
            target = array_ops.concat([array_ops.shape(ids),
                                       array_ops.constant(element.as_list(), dtypes.int32)], 0)
        else:
            target = array_ops.concat([array_ops.shape(ids), array_ops.shape(merged)[1:]], 0)
        result = array_ops.reshape(merged, target, name=scope)
        result.set_shape(ids.shape.concatenate(element))
        return result
