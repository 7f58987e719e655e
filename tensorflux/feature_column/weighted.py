"""`tf.feature_column.weighted_categorical_column`: ids with a per-id weight feature (TF1).

The weights (`features[weight_feature_key]`, a SparseTensor with the ids' indices or a dense
tensor whose zeros are dropped) scale each id: `linear_model` and `embedding_column` combine
the ids' rows with these weights, `indicator_column` sums the weights per id.
"""

import collections

from tensorflux.feature_column.categorical import (
    _CategoricalColumn,
    _IdWeightPair,
    _to_sparse_input,
    _with_values,
)
from tensorflux.framework import dtypes
from tensorflux.framework.sparse_tensor import SparseTensor
from tensorflux.ops import math as math_ops
from tensorflux.ops.io import parsing as parsing_ops

__all__ = ["weighted_categorical_column"]


class WeightedCategoricalColumn(_CategoricalColumn, collections.namedtuple(
        "WeightedCategoricalColumn", ["categorical_column", "weight_feature_key", "dtype"])):
    """`categorical_column`'s ids, each weighted by `features[weight_feature_key]`."""

    @property
    def name(self):
        return f"{self.categorical_column.name}_weighted_by_{self.weight_feature_key}"

    @property
    def _num_buckets(self):
        return self.categorical_column._num_buckets

    @property
    def _parse_example_spec(self):
        config = dict(self.categorical_column._parse_example_spec)
        if self.weight_feature_key in config:
            raise ValueError(f"Parse config {config[self.weight_feature_key]} already exists "
                             f"for {self.weight_feature_key}.")
        config[self.weight_feature_key] = parsing_ops.VarLenFeature(self.dtype)
        return config

    def _transform_feature(self, builder):
        weights = builder.get(self.weight_feature_key)
        if weights.dtype.base_dtype != self.dtype:
            raise ValueError(f"Bad dtype, expected {self.dtype}, but got {weights.dtype}.")
        if not isinstance(weights, SparseTensor):
            weights = _to_sparse_input(weights, 0)
        if not weights.dtype.is_floating:
            weights = _with_values(weights, math_ops.cast(weights.values, dtypes.float32))
        ids = self.categorical_column._get_sparse_tensors(builder).id_tensor
        return ids, weights

    def _get_sparse_tensors(self, builder, weight_collections=None, trainable=None):
        ids, weights = builder.get(self)
        return _IdWeightPair(ids, weights)


def weighted_categorical_column(categorical_column, weight_feature_key, dtype=dtypes.float32):
    """Weights each id of `categorical_column` by the feature `weight_feature_key`.

    Example (term frequencies): ids from `categorical_column_with_vocabulary_list("terms",
    ...)`, weights from the feature `"frequencies"` with the same indices.

    Raises:
        ValueError: `dtype` is neither integer nor floating, or `categorical_column` is not a
            categorical column.
    """
    dtype = None if dtype is None else dtypes.as_dtype(dtype)
    if dtype is None or not (dtype.is_integer or dtype.is_floating):
        raise ValueError(f"dtype {dtype} is not convertible to float.")
    if not isinstance(categorical_column, _CategoricalColumn):
        raise ValueError(f"categorical_column must be a categorical column. "
                         f"Given: {categorical_column}")
    return WeightedCategoricalColumn(categorical_column, weight_feature_key, dtype)
