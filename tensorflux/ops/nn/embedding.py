"""`tf.nn.embedding_lookup_sparse` and `tf.nn.safe_embedding_lookup_sparse`: combine the
embeddings of each row of a SparseTensor of ids (optionally weighted) by sum, mean or sqrtn."""

from __future__ import annotations

from tensorflux.framework import dtypes
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.sparse_tensor import SparseTensor, SparseTensorValue
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.array import concat_split as concat_ops
from tensorflux.ops.array import gather_scatter as gather_ops
from tensorflux.ops.array import padding as pad_ops
from tensorflux.ops.array import partition as partition_ops
from tensorflux.ops.array import shapes as shape_ops
from tensorflux.ops.array import slicing as slicing_ops
from tensorflux.ops.math import casting as cast_ops
from tensorflux.ops.math import comparison as comparison_ops
from tensorflux.ops.math import reduction as reduction_ops
from tensorflux.ops.math import segment as segment_ops
from tensorflux.ops.math import select as select_ops
from tensorflux.ops.math import unary as unary_ops
from tensorflux.ops.nn.functions import embedding_lookup
from tensorflux.ops.sparse.composites import sparse_retain
from tensorflux.ops.sparse.segment import (
    sparse_segment_mean,
    sparse_segment_sqrt_n,
    sparse_segment_sum,
)
from tensorflux.ops.sparse.structure import sparse_fill_empty_rows, sparse_reshape

__all__ = ["embedding_lookup_sparse", "safe_embedding_lookup_sparse"]

_COMBINERS = ("mean", "sqrtn", "sum")
_SEGMENT_REDUCERS = {"sum": sparse_segment_sum, "mean": sparse_segment_mean,
                     "sqrtn": sparse_segment_sqrt_n}


def _sparse(value, what):
    if isinstance(value, SparseTensorValue):
        return SparseTensor.from_value(value)
    if not isinstance(value, SparseTensor):
        raise TypeError(f"{what} must be a SparseTensor, got {type(value).__name__}")
    return value


def _check_combiner(combiner):
    if combiner not in _COMBINERS:
        raise ValueError(f"combiner must be one of 'mean', 'sqrtn' or 'sum', got {combiner!r}")


def _weighted(embeddings, idx, weights, segment_ids, combiner, name):
    embeddings = gather_ops.gather(embeddings, idx)
    if weights.dtype.base_dtype != embeddings.dtype.base_dtype:
        weights = cast_ops.cast(weights, embeddings.dtype.base_dtype)
    extra = embeddings.shape.ndims
    ones = array_ops.fill(shape_ops.expand_dims(shape_ops.rank(embeddings) - 1, 0), 1)
    broadcast_shape = concat_ops.concat([shape_ops.shape(weights), ones], 0)
    static = weights.shape
    weights = shape_ops.reshape(weights, broadcast_shape)
    if extra is not None:
        weights.set_shape(static.concatenate(TensorShape([1] * (extra - 1))))
    total = segment_ops.segment_sum(math_ops.multiply(embeddings, weights), segment_ids,
                                    name=name if combiner == "sum" else None)
    if combiner == "sum":
        return total
    if combiner == "mean":
        return math_ops.div_no_nan(total, segment_ops.segment_sum(weights, segment_ids),
                                   name=name)
    squares = segment_ops.segment_sum(math_ops.multiply(weights, weights), segment_ids)
    return math_ops.div_no_nan(total, unary_ops.sqrt(squares), name=name)


def embedding_lookup_sparse(params, sp_ids, sp_weights, partition_strategy="mod", name=None,
                            combiner=None, max_norm=None):
    """Combined embeddings for each row of a SparseTensor of ids.

    Row `r` of the result combines `params[id]` for the ids stored in row `r` of `sp_ids`
    (rows must be in order), weighted by `sp_weights` when given. The result has
    `max_row + 1` rows (rows past the last stored one are not produced).

    Args:
        params: a tensor, variable, or list of shards (see `embedding_lookup`).
        sp_ids: SparseTensor [N, ...] of int32/int64 ids.
        sp_weights: SparseTensor of weights with `sp_ids`' indices, or None for weight 1.
        partition_strategy: "mod" or "div" for sharded params.
        combiner: "sum", "mean" (the default) or "sqrtn".
        max_norm: clip each embedding to this l2 norm before combining.

    Raises:
        TypeError: `sp_ids` / `sp_weights` are not SparseTensors.
        ValueError: an unknown combiner, or weights whose shape does not match the ids.
    """
    combiner = "mean" if combiner is None else combiner
    _check_combiner(combiner)
    if hasattr(params, "_get_variable_list"):
        params = list(params._get_variable_list())
    if not isinstance(params, (list, tuple)):
        params = [params]
    sp_ids = _sparse(sp_ids, "sp_ids")
    if sp_weights is not None:
        sp_weights = _sparse(sp_weights, "sp_weights")
        if not sp_weights.values.shape.is_compatible_with(sp_ids.values.shape):
            raise ValueError(f"sp_weights values {sp_weights.values.shape} do not match "
                             f"sp_ids values {sp_ids.values.shape}")
        if not sp_weights.indices.shape.is_compatible_with(sp_ids.indices.shape):
            raise ValueError(f"sp_weights indices {sp_weights.indices.shape} do not match "
                             f"sp_ids indices {sp_ids.indices.shape}")
    with graph_mod.get_default_graph().name_scope(name or "embedding_lookup_sparse"):
        segment_ids = cast_ops.cast(sp_ids.indices[:, 0], dtypes.int32)
        ids, idx = partition_ops.unique(sp_ids.values)
        embeddings = embedding_lookup(params, ids, partition_strategy=partition_strategy,
                                      max_norm=max_norm)
        original = embeddings.dtype.base_dtype
        if original in (dtypes.float16, dtypes.bfloat16):
            embeddings = cast_ops.cast(embeddings, dtypes.float32)
        if sp_weights is None:
            result = _SEGMENT_REDUCERS[combiner](embeddings, idx, segment_ids)
        else:
            result = _weighted(embeddings, idx, sp_weights.values, segment_ids, combiner, None)
        if result.dtype.base_dtype != original:
            result = cast_ops.cast(result, original)
        return result


def _prune(sparse_ids, sparse_weights, keep):
    sparse_ids = sparse_retain(sparse_ids, keep)
    if sparse_weights is not None:
        sparse_weights = sparse_retain(sparse_weights, keep)
    return sparse_ids, sparse_weights


def safe_embedding_lookup_sparse(embedding_weights, sparse_ids, sparse_weights=None,
                                 combiner="mean", default_id=None, name=None,
                                 partition_strategy="div", max_norm=None):
    """`embedding_lookup_sparse` that tolerates invalid ids and empty rows.

    Ids < 0 are dropped, as are weights <= 0 (unless `combiner` is "sum"). A row left empty
    gets the embedding of `default_id`, or zeros when `default_id` is None. `sparse_ids` may
    have rank > 2: the result has shape `dense_shape[:-1] + embedding_shape`.

    Raises:
        ValueError: `embedding_weights` is None or empty, or an unknown combiner.
    """
    if embedding_weights is None:
        raise ValueError(f"Missing embedding_weights {embedding_weights}.")
    if hasattr(embedding_weights, "_get_variable_list"):
        embedding_weights = list(embedding_weights._get_variable_list())
    if not isinstance(embedding_weights, (list, tuple)):
        embedding_weights = [embedding_weights]
    if not embedding_weights:
        raise ValueError(f"Missing embedding_weights {embedding_weights}.")
    _check_combiner(combiner)
    sparse_ids = _sparse(sparse_ids, "sparse_ids")
    if sparse_weights is not None:
        # TF1: every shard takes the weights' dtype (a shard of another dtype is an error).
        weights_dtype = _sparse(sparse_weights, "sparse_weights").dtype.base_dtype
        embedding_weights = [
            w if hasattr(w, "sparse_read") and w.dtype.base_dtype == weights_dtype
            else convert_to_tensor(w, dtype=weights_dtype)
            for w in embedding_weights]
    graph = graph_mod.get_default_graph()
    with graph.name_scope(name or "embedding_lookup"):
        original_shape = sparse_ids.dense_shape
        static_rank = original_shape.shape.with_rank(1)._dim_list[0]
        rank = shape_ops.size(original_shape) if static_rank is None else static_rank
        outer = slicing_ops.slice(original_shape, [0], shape_ops.reshape(rank - 1, [1]))
        flat_shape = concat_ops.stack([reduction_ops.reduce_prod(outer),
                                       gather_ops.gather(original_shape, rank - 1)])
        sparse_ids = sparse_reshape(sparse_ids, flat_shape)
        if sparse_weights is not None:
            sparse_weights = SparseTensor(sparse_ids.indices, _sparse(
                sparse_weights, "sparse_weights").values, sparse_ids.dense_shape)
        zero = array_ops.zeros([], sparse_ids.dtype.base_dtype)
        sparse_ids, sparse_weights = _prune(
            sparse_ids, sparse_weights, comparison_ops.greater_equal(sparse_ids.values, zero))
        if combiner != "sum" and sparse_weights is not None:
            positive = comparison_ops.greater(
                sparse_weights.values, array_ops.zeros([], sparse_weights.dtype.base_dtype))
            sparse_ids, sparse_weights = _prune(sparse_ids, sparse_weights, positive)
        sparse_ids, is_row_empty = sparse_fill_empty_rows(sparse_ids, default_id or 0)
        if sparse_weights is not None:
            sparse_weights, _ = sparse_fill_empty_rows(sparse_weights, 1.0)
        result = embedding_lookup_sparse(embedding_weights, sparse_ids, sparse_weights,
                                         combiner=combiner,
                                         partition_strategy=partition_strategy,
                                         max_norm=max_norm)
        if default_id is None:
            width = shape_ops.shape(result)[1:2]
            empty = pad_ops.tile(shape_ops.reshape(is_row_empty, [-1, 1]),
                                 concat_ops.concat([[1], width], 0))
            result = select_ops.where(empty, array_ops.zeros_like(result), result)
        outer32 = slicing_ops.slice(cast_ops.cast(original_shape, dtypes.int32), [0],
                                    shape_ops.reshape(rank - 1, [1]))
        target = concat_ops.concat([outer32, shape_ops.shape(result)[1:]], 0)
        final = shape_ops.reshape(result, target)
        outer_rank = None if static_rank is None else static_rank - 1
        final.set_shape(TensorShape(None if outer_rank is None else [None] * outer_rank)
                        .concatenate(result.shape[1:]))
        return final


def safe_embedding_lookup_sparse_v2(embedding_weights, sparse_ids, sparse_weights=None,
                                    combiner="mean", default_id=None, max_norm=None,
                                    name=None):
    """TF2's `safe_embedding_lookup_sparse` signature: always the "div" partition strategy
    (the TF1 default), no `partition_strategy` argument."""
    return safe_embedding_lookup_sparse(embedding_weights, sparse_ids, sparse_weights,
                                        combiner=combiner, default_id=default_id, name=name,
                                        partition_strategy="div", max_norm=max_norm)
