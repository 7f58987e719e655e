"""The bucketized feature matrix boosted trees split on (TF 1.15: bucketized, indicator and
numeric columns).

Columns are taken in name order. A bucketized column of a `[d]` numeric source gives `d`
features of `len(boundaries) + 1` buckets; an indicator column of `n` ids gives `n` binary
features (bucket 1 where the id is present); a numeric column of shape `[d]` gives `d`
features bucketized by boundaries learned from the data's quantiles (`num_quantiles + 2`
buckets at most; see `ops/boosted_trees/quantiles.py`).
"""

from __future__ import annotations

import collections

import numpy as np

from tensorflux.feature_column.categorical import BucketizedColumn, NumericColumn, _LazyBuilder
from tensorflux.feature_column.dense import IndicatorColumn
from tensorflux.framework import dtypes
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.boosted_trees import quantiles

__all__ = ["FeatureLayout", "check_columns", "bucketize", "numeric_width", "numeric_values"]

FeatureLayout = collections.namedtuple("FeatureLayout", ["bucket_sizes", "column_names"])


def check_columns(feature_columns):
    """The columns sorted by name.

    Raises:
        ValueError: no columns, or a column that is neither bucketized nor indicator (named).
    """
    columns = list(feature_columns or ())
    if not columns:
        raise ValueError("feature_columns must not be empty.")
    for column in columns:
        if not isinstance(column, (BucketizedColumn, IndicatorColumn, NumericColumn)):
            name = getattr(column, "name", column)
            raise ValueError(f"For now, only bucketized_column, indicator_column and "
                             f"numeric_column are supported but got: {name} "
                             f"({type(column).__name__}).")
    return sorted(columns, key=lambda c: c.name)


def _width(shape) -> int:
    return int(np.prod(shape)) if shape else 1


def numeric_width(columns) -> int:
    """The number of features the numeric columns give."""
    return sum(_width(c.shape) for c in columns if isinstance(c, NumericColumn))


def layout(columns, num_quantiles: int = 100) -> FeatureLayout:
    """The bucket count and column name of every feature of the matrix."""
    sizes, names = [], []
    for column in columns:
        if isinstance(column, BucketizedColumn):
            width = int(np.prod(column.source_column.shape))
            sizes += [len(column.boundaries) + 1] * width
        elif isinstance(column, NumericColumn):
            width = _width(column.shape)
            sizes += [num_quantiles + 2] * width
        else:
            width = column.categorical_column._num_buckets
            sizes += [2] * width
        names += [column.name] * width
    return FeatureLayout(np.asarray(sizes, np.int32), names)


def _checked_features(features):
    if not isinstance(features, dict):
        raise ValueError(f"features should be a dictionary of `Tensor`s. Given type: "
                         f"{type(features)}")
    return _LazyBuilder(features)


def numeric_values(features, columns):
    """The float32 `[batch, numeric features]` values of the numeric columns."""
    builder = _checked_features(features)
    blocks = [array_ops.reshape(math_ops.cast(builder.get(c), dtypes.float32),
                                [-1, _width(c.shape)])
              for c in columns if isinstance(c, NumericColumn)]
    return blocks[0] if len(blocks) == 1 else array_ops.concat(blocks, axis=1)


def bucketize(features, columns, boundaries=None):
    """The int32 `[batch, num_features]` bucket ids of `features` for the sorted `columns`
    (numeric columns by `boundaries`, `[numeric features, num_quantiles + 1]`).

    Raises:
        ValueError: features is not a dict.
    """
    builder = _checked_features(features)
    blocks = []
    offset = 0
    for column in columns:
        value = builder.get(column)
        if isinstance(column, NumericColumn):
            width = _width(column.shape)
            values = array_ops.reshape(math_ops.cast(value, dtypes.float32), [-1, width])
            ids = quantiles.TfxBoostedTreesBucketize(values,
                                                     boundaries[offset:offset + width])
            offset += width
        elif isinstance(column, BucketizedColumn):
            width = int(np.prod(column.source_column.shape))
            ids = array_ops.reshape(value, [-1, width])
        else:
            ids = math_ops.greater(value, 0.0)
        blocks.append(math_ops.cast(ids, dtypes.int32))
    return blocks[0] if len(blocks) == 1 else array_ops.concat(blocks, axis=1)
