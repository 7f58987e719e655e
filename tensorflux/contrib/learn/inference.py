"""`infer_real_valued_columns_from_input(_fn)`: real-valued feature columns sized by data."""

from __future__ import annotations

import numpy as np

from tensorflux.contrib.layers import feature_column as layers_fc
from tensorflux.framework import dtypes
from tensorflux.framework import graph as graph_mod

__all__ = ["infer_real_valued_columns_from_input", "infer_real_valued_columns_from_input_fn"]


def infer_real_valued_columns_from_input(x):
    """One `real_valued_column` per feature of `x`, of dimension `prod(shape[1:])`.

    Args:
        x: a NumPy array (gives the column "", as `fit(x=...)` feeds it) or a dict of arrays.

    Returns:
        A list of real-valued columns (float32 for floating input, int64 for integers).

    Raises:
        ValueError: a feature that is not numeric.
    """
    features = x if isinstance(x, dict) else {"": x}
    columns = []
    for key in sorted(features):
        value = np.asarray(features[key])
        if value.dtype.kind in "iu":
            dtype = dtypes.int64
        elif value.dtype.kind == "f":
            dtype = dtypes.float32
        else:
            raise ValueError(f"infer_real_valued_columns_from_input: feature {key!r} has "
                             f"dtype {value.dtype}, not a number.")
        width = int(np.prod(value.shape[1:])) if value.ndim > 1 else 1
        columns.append(layers_fc.real_valued_column(key, dimension=width, dtype=dtype))
    return columns


def infer_real_valued_columns_from_input_fn(input_fn):
    """The real-valued columns of the features `input_fn()` returns (built in a scratch
    graph).

    Raises:
        ValueError: a feature that is not numeric or of unknown shape.
    """
    with graph_mod.Graph().as_default():
        result = input_fn()
        features = result[0] if isinstance(result, tuple) else result
        return layers_fc.infer_real_valued_columns(features)
