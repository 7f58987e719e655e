"""The bucketized feature matrix boosted trees split on (TF 1.15: bucketized and indicator
columns only).

Columns are taken in name order. A bucketized column of a `[d]` numeric source gives `d`
features of `len(boundaries) + 1` buckets; an indicator column of `n` ids gives `n` binary
features (bucket 1 where the id is present).
"""

from __future__ import annotations

import collections

import numpy as np

from tensorflux.feature_column.categorical import BucketizedColumn, _LazyBuilder
from tensorflux.feature_column.dense import IndicatorColumn
from tensorflux.framework import dtypes
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops

__all__ = ["FeatureLayout", "check_columns", "bucketize"]

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
        if not isinstance(column, (BucketizedColumn, IndicatorColumn)):
            name = getattr(column, "name", column)
            raise ValueError(f"For now, only bucketized_column and indicator_column is "
                             f"supported but got: {name} ({type(column).__name__}).")
    return sorted(columns, key=lambda c: c.name)


def layout(columns) -> FeatureLayout:
    """The bucket count and column name of every feature of the matrix."""
    sizes, names = [], []
    for column in columns:
        if isinstance(column, BucketizedColumn):
            width = int(np.prod(column.source_column.shape))
            sizes += [len(column.boundaries) + 1] * width
        else:
            width = column.categorical_column._num_buckets
            sizes += [2] * width
        names += [column.name] * width
    return FeatureLayout(np.asarray(sizes, np.int32), names)


def bucketize(features, columns):
    """The int32 `[batch, num_features]` bucket ids of `features` for the sorted `columns`.

    Raises:
        ValueError: features is not a dict.
    """
    if not isinstance(features, dict):
        raise ValueError(f"features should be a dictionary of `Tensor`s. Given type: "
                         f"{type(features)}")
    builder = _LazyBuilder(features)
    blocks = []
    for column in columns:
        value = builder.get(column)
        if isinstance(column, BucketizedColumn):
            width = int(np.prod(column.source_column.shape))
            ids = array_ops.reshape(value, [-1, width])
        else:
            ids = math_ops.greater(value, 0.0)
        blocks.append(math_ops.cast(ids, dtypes.int32))
    return blocks[0] if len(blocks) == 1 else array_ops.concat(blocks, axis=1)
