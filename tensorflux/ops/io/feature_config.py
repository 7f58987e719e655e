"""Feature configurations of `tf.parse_example` (TF 1.x): `FixedLenFeature`,
`VarLenFeature`, `FixedLenSequenceFeature` and `SparseFeature`.

A `SparseFeature` is parsed through plain VarLen features (its index keys as int64, its value
key as its dtype) merged into one SparseTensor of dense shape `[batch, size...]`, as TF does;
the raw index and value keys appear in the result only if they were asked for themselves.
"""

from __future__ import annotations

import collections

from tensorflux.framework import dtypes
from tensorflux.ops.sparse import composites as sparse_composites

__all__ = ["FixedLenFeature", "VarLenFeature", "FixedLenSequenceFeature", "SparseFeature",
           "expand_sparse_features", "combine_sparse_features"]


class FixedLenFeature(collections.namedtuple("FixedLenFeature",
                                             ["shape", "dtype", "default_value"])):
    """A dense feature of fixed `shape`; `default_value` (reshaped to `shape`) when missing."""

    def __new__(cls, shape, dtype, default_value=None):
        return super().__new__(cls, shape, dtype, default_value)


class VarLenFeature(collections.namedtuple("VarLenFeature", ["dtype"])):
    """A variable-length feature, parsed into a SparseTensor."""


class FixedLenSequenceFeature(collections.namedtuple(
        "FixedLenSequenceFeature", ["shape", "dtype", "allow_missing", "default_value"])):
    """A dense feature made of any number of `shape` blocks, padded with `default_value`."""

    def __new__(cls, shape, dtype, allow_missing=False, default_value=None):
        return super().__new__(cls, shape, dtype, allow_missing, default_value)


class SparseFeature(collections.namedtuple(
        "SparseFeature", ["index_key", "value_key", "dtype", "size", "already_sorted"])):
    """A sparse feature stored as index feature(s) and a value feature of each Example:
    `index_key` (a key, or a list of keys for several dimensions), `value_key`, the values'
    `dtype`, the dense `size` (an int, or a list matching `index_key`)."""

    def __new__(cls, index_key, value_key, dtype, size, already_sorted=False):
        return super().__new__(cls, index_key, value_key, dtype, size, already_sorted)


def _index_keys(feature: SparseFeature) -> list:
    return [feature.index_key] if isinstance(feature.index_key, str) else \
        list(feature.index_key)


def _add_raw(raw: dict, key: str, wanted: VarLenFeature, owner: str) -> None:
    present = raw.get(key)
    if present is None:
        raw[key] = wanted
        return
    if not isinstance(present, VarLenFeature) or \
            dtypes.as_dtype(present.dtype) != dtypes.as_dtype(wanted.dtype):
        raise ValueError(f"Conflicting type {present!r} vs {wanted!r} for feature {key} "
                         f"(used by SparseFeature {owner}).")


def expand_sparse_features(features: dict) -> dict:
    """`features` with each SparseFeature replaced by the VarLen features it is read from.

    Raises:
        ValueError: an index or value key already configured with another type; a `size`
            that does not match the index keys; missing keys.
    """
    if not isinstance(features, dict) or not any(
            isinstance(f, SparseFeature) for f in features.values()):
        return features
    raw = {k: f for k, f in features.items() if not isinstance(f, SparseFeature)}
    for key in sorted(features):
        feature = features[key]
        if not isinstance(feature, SparseFeature):
            continue
        if not feature.index_key:
            raise ValueError(f"Missing index_key for SparseFeature {feature}.")
        if not feature.value_key:
            raise ValueError(f"Missing value_key for SparseFeature {feature}.")
        if not feature.dtype:
            raise ValueError(f"Missing type for feature {key}.")
        sizes = feature.size if isinstance(feature.size, (list, tuple)) else [feature.size]
        if len(sizes) != len(_index_keys(feature)):
            raise ValueError(f"SparseFeature {key}: {len(_index_keys(feature))} index key(s) "
                             f"but size {feature.size}.")
        for index_key in _index_keys(feature):
            _add_raw(raw, index_key, VarLenFeature(dtypes.int64), key)
        _add_raw(raw, feature.value_key, VarLenFeature(feature.dtype), key)
    return raw


def combine_sparse_features(features: dict, parsed: dict) -> dict:
    """The parse result for the requested `features`: each SparseFeature merged from its raw
    index and value SparseTensors; raw keys nobody asked for removed."""
    if not isinstance(features, dict) or not any(
            isinstance(f, SparseFeature) for f in features.values()):
        return parsed
    result = dict(parsed)
    for key in sorted(features):
        feature = features[key]
        if not isinstance(feature, SparseFeature):
            continue
        keys = _index_keys(feature)
        ids = parsed[keys[0]] if isinstance(feature.index_key, str) else \
            [parsed[k] for k in keys]
        result[key] = sparse_composites.sparse_merge(
            ids, parsed[feature.value_key], vocab_size=feature.size,
            already_sorted=feature.already_sorted)
    for key in set(result) - set(features):
        del result[key]
    return result
