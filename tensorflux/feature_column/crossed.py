"""`tf.feature_column.crossed_column`: hashed crosses of categorical features (TF1 semantics).

A cross of keys (raw feature names) and categorical columns gives, per example, one id for each
combination of one value of every key: `FingerprintCat64` folded over the values from
`hash_key`, modulo `hash_bucket_size` (the `SparseCross` op), so ids equal TensorFlow's. A raw
key's dense feature is crossed whole (empty strings included, as TF does), a SparseTensor by its
entries; a categorical column contributes its ids.
"""

import collections

from tensorflux.feature_column.categorical import (
    HashedCategoricalColumn,
    _CategoricalColumn,
    _IdWeightPair,
)
from tensorflux.framework import dtypes
from tensorflux.framework.sparse_tensor import SparseTensor
from tensorflux.ops import array as array_ops
from tensorflux.ops.io import parsing as parsing_ops
from tensorflux.ops.sparse.cross import DEFAULT_HASH_KEY, sparse_cross_hashed

__all__ = ["crossed_column"]


def _leaf_keys(column):
    """The keys of `column` with nested crosses flattened (TF's `_collect_leaf_level_keys`)."""
    leaves = []
    for key in column.keys:
        leaves.extend(_leaf_keys(key) if isinstance(key, CrossedColumn) else [key])
    return leaves


class CrossedColumn(_CategoricalColumn, collections.namedtuple(
        "CrossedColumn", ["keys", "hash_bucket_size", "hash_key"])):
    """Ids of the hashed cross of `keys` in `[0, hash_bucket_size)`."""

    @property
    def name(self):
        names = [key if isinstance(key, str) else key.name for key in _leaf_keys(self)]
        return "_X_".join(sorted(names))

    @property
    def _num_buckets(self):
        return self.hash_bucket_size

    @property
    def _parse_example_spec(self):
        config = {}
        for key in self.keys:
            if isinstance(key, str):
                config[key] = parsing_ops.VarLenFeature(dtypes.string)
            else:
                config.update(key._parse_example_spec)
        return config

    def _transform_feature(self, builder):
        inputs = []
        for key in _leaf_keys(self):
            if isinstance(key, str):
                value = builder.get(key)
                if not isinstance(value, SparseTensor) and value.shape.ndims == 1:
                    value = array_ops.expand_dims(value, -1)
                inputs.append(value)
                continue
            pair = key._get_sparse_tensors(builder)
            if pair.weight_tensor is not None:
                raise ValueError(f"crossed_column does not support weight_tensor, but the given "
                                 f"column populates weight_tensor. Given column: {key.name}")
            inputs.append(pair.id_tensor)
        return sparse_cross_hashed(inputs, num_buckets=self.hash_bucket_size,
                                   hash_key=DEFAULT_HASH_KEY if self.hash_key is None
                                   else self.hash_key)

    def _get_sparse_tensors(self, builder, weight_collections=None, trainable=None):
        return _IdWeightPair(builder.get(self), None)


def crossed_column(keys, hash_bucket_size, hash_key=None):
    """The hashed cross of `keys` (feature names and/or categorical columns).

    Use it in `linear_model` (or a LinearClassifier's columns), or wrapped in an
    `indicator_column`/`embedding_column` for `input_layer`. Its name is the sorted leaf names
    joined by `_X_` (e.g. `education_X_occupation`).

    Args:
        keys: at least two items, each a string feature key or a categorical column (not a
            `categorical_column_with_hash_bucket`: hash the raw key instead); nested crosses
            are flattened.
        hash_bucket_size: the number of buckets (> 0).
        hash_key: the seed of the fingerprint fold (default TF's `0xDECAFCAFFE`).

    Raises:
        ValueError: hash_bucket_size < 1, fewer than two keys, or an unsupported key.
    """
    if not hash_bucket_size or hash_bucket_size < 1:
        raise ValueError(f"hash_bucket_size must be > 1. hash_bucket_size: {hash_bucket_size}")
    if not keys or len(keys) < 2:
        raise ValueError(f"keys must be a list with length > 1. Given: {keys}")
    for key in keys:
        if not isinstance(key, (str, _CategoricalColumn)):
            raise ValueError(f"Unsupported key type. All keys must be either string, or "
                             f"categorical column except HashedCategoricalColumn. Given: {key}")
        if isinstance(key, HashedCategoricalColumn):
            raise ValueError(f"categorical_column_with_hash_bucket is not supported for "
                             f"crossing. Hashing before crossing will increase probability of "
                             f"collision. Instead, use the feature name as a string. Given: "
                             f"{key}")
    return CrossedColumn(tuple(keys), int(hash_bucket_size), hash_key)
