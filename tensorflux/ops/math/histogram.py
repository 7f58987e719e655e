"""Counting ops: Bincount, Bucketize and HistogramFixedWidth (kernels), and the composites
bincount, histogram_fixed_width(_bins), confusion_matrix and zero_fraction. None is
differentiable.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework.op_def import define_op
from tensorflux.framework.scopes import control_dependencies
from tensorflux.framework.scopes import op_name_scope as _scope
from tensorflux.framework.tensor_conversion import constant_value, convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.debug import checks as check_ops
from tensorflux.ops.math import comparison as comparison_ops
from tensorflux.ops.math import reduction as reduction_ops
from tensorflux.ops.math import segment as segment_ops
from tensorflux.ops.math import unary as unary_ops

__all__ = ["bincount", "histogram_fixed_width", "histogram_fixed_width_bins",
           "confusion_matrix", "remove_squeezable_dimensions"]
MATH_ONLY = ["zero_fraction"]

_COUNT_TYPES = "{int32, int64, float32, float64}"



# -- Bincount ---------------------------------------------------------------------------------

Bincount = define_op("Bincount", inputs=["arr: int32", "size: int32", "weights: T"],
                     outputs=["bins: T"], attrs=[f"T: {_COUNT_TYPES}"], differentiable=False)


@Bincount.shape_fn(value_inputs=("size",))
def _bincount_shape(arr, size, weights):
    if size is None:
        return TensorShape([None])
    size = int(np.reshape(size, []))
    if size < 0:
        raise ValueError(f"size ({size}) must be non-negative")
    return TensorShape([size])


@Bincount.kernel
def _bincount_kernel(arr, size, weights):
    size = int(size)
    if size < 0:
        raise errors.InvalidArgumentError(None, None, f"size ({size}) must be non-negative")
    if arr.size and arr.min() < 0:
        raise errors.InvalidArgumentError(
            None, None, f"Input arr must be non-negative, got minimum {arr.min()}")
    if weights.size and weights.shape != arr.shape:
        raise errors.InvalidArgumentError(
            None, None, f"weights must be empty or have the shape of arr "
                        f"{list(arr.shape)}, got {list(weights.shape)}")
    flat = arr.reshape(-1)
    keep = flat < size
    w = weights.reshape(-1)[keep].astype(np.float64) if weights.size else None
    counts = np.bincount(flat[keep], weights=w, minlength=size)[:size]
    return counts.astype(weights.dtype, copy=False)


def bincount(arr, weights=None, minlength=None, maxlength=None, dtype=dtypes.int32):
    """Counts the occurrences of each value in the non-negative int32 array `arr`.

    Args:
        arr: int32 tensor of non-negative values.
        weights: optional tensor like `arr`; each occurrence adds its weight instead of 1.
        minlength: the output has at least this many bins.
        maxlength: the output has at most this many bins (larger values are dropped).
        dtype: the output dtype when `weights` is None.

    Returns:
        A 1-D tensor of `max(arr) + 1` bins (0 for an empty `arr`), adjusted by
        `minlength`/`maxlength`, of `weights`' dtype or `dtype`.

    Example:
        >>> tf.bincount([1, 1, 3])   # -> [0, 2, 0, 1]
    """
    with _scope(None, "bincount"):
        arr = convert_to_tensor(arr, name="arr", dtype=dtypes.int32)
        flat = array_ops.reshape(arr, [-1])
        padded = array_ops.concat([flat, np.array([-1], np.int32)], 0)
        size = math_ops.add(reduction_ops.reduce_max(padded), np.int32(1))
        if minlength is not None:
            minlength = convert_to_tensor(minlength, name="minlength", dtype=dtypes.int32)
            size = math_ops.maximum(minlength, size)
        if maxlength is not None:
            maxlength = convert_to_tensor(maxlength, name="maxlength", dtype=dtypes.int32)
            size = math_ops.minimum(maxlength, size)
        if weights is None:
            weights = np.zeros([0], dtypes.as_dtype(dtype).as_numpy_dtype)
        weights = convert_to_tensor(weights, name="weights")
        return Bincount(arr, size, weights)


# -- Bucketize -------------------------------------------------------------------------------

Bucketize = define_op(
    "Bucketize", inputs=["input: T"], outputs=["output: int32"],
    attrs=["T: {int32, int64, float32, float64}", "boundaries: list(float)"],
    differentiable=False)


@Bucketize.shape_fn
def _bucketize_shape(input):  # noqa: A002 - TF's input name
    return input


@Bucketize.kernel(factory=True)
def _bucketize_kernel(boundaries):
    # The attr holds 32-bit floats; like TF, a value is compared with them in float32 unless
    # it is a float64 (then the boundaries are widened).
    edges = np.asarray(boundaries, dtype=np.float32)
    if np.any(edges[1:] < edges[:-1]):
        raise errors.InvalidArgumentError(
            None, None, f"Expected sorted boundaries, got {edges.tolist()}")

    def bucketize(values):
        common = np.float64 if values.dtype == np.float64 else np.float32
        index = np.searchsorted(edges.astype(common), values.astype(common), side="right")
        return index.astype(np.int32)

    return bucketize


def bucketize(input, boundaries, name=None):  # noqa: A002 - TF's argument name
    """The index of the bucket each element falls in (TF-private `math_ops._bucketize`).

    Bucket i holds values v with boundaries[i-1] <= v < boundaries[i]; values below the first
    boundary go to 0, values at or above the last to len(boundaries).

    Args:
        input: an int32, int64, float32 or float64 tensor.
        boundaries: a sorted list of floats.
        name: op name.

    Returns:
        An int32 tensor of input's shape.

    Raises:
        TypeError: boundaries is not a list.
        InvalidArgumentError (when run): boundaries are not sorted.
    """
    return Bucketize(input, boundaries=boundaries, name=name)


# -- HistogramFixedWidth ----------------------------------------------------------------------

HistogramFixedWidth = define_op(
    "HistogramFixedWidth", inputs=["values: T", "value_range: T", "nbins: int32"],
    outputs=["out: dtype"], attrs=[f"T: {_COUNT_TYPES}", "dtype: {int32, int64} = int32"],
    differentiable=False)


@HistogramFixedWidth.shape_fn(value_inputs=("nbins",))
def _histogram_fixed_width_shape(values, value_range, nbins):
    value_range.with_rank(1)
    if value_range._dim_list is not None and value_range._dim_list[0] not in (None, 2):
        raise ValueError(f"Dimension must be 2 but is {value_range._dim_list[0]} (value_range)")
    if nbins is not None and np.ndim(nbins) != 0:
        raise ValueError(f"Shape must be rank 0 but is rank {np.ndim(nbins)} (nbins)")
    if nbins is None:
        return TensorShape([None])
    nbins = int(np.reshape(nbins, []))
    if nbins <= 0:
        raise ValueError(f"Requires nbins > 0: {nbins}")
    return TensorShape([nbins])


def _bin_indices(values, lo, hi, nbins):
    scaled = (values.astype(np.float64) - lo) / (hi - lo) * nbins
    return np.clip(np.floor(scaled), 0, nbins - 1).astype(np.int64)


def _check_range(value_range, nbins):
    if value_range.shape != (2,) or not value_range[0] < value_range[1]:
        raise errors.InvalidArgumentError(
            None, None, f"value_range should satisfy value_range[0] < value_range[1], got "
                        f"{value_range.tolist()}")
    if nbins <= 0:
        raise errors.InvalidArgumentError(None, None, f"nbins should be positive, got {nbins}")


@HistogramFixedWidth.kernel
def _histogram_fixed_width_kernel(values, value_range, nbins, *, dtype):
    nbins = int(nbins)
    _check_range(value_range, nbins)
    lo, hi = float(value_range[0]), float(value_range[1])
    index = _bin_indices(values.reshape(-1), lo, hi, nbins)
    return np.bincount(index, minlength=nbins).astype(dtype.as_numpy_dtype)


def histogram_fixed_width(values, value_range, nbins=100, dtype=dtypes.int32, name=None):
    """Counts `values` in `nbins` equal bins spanning `value_range`; values outside the range go
    to the first or last bin.

    Example:
        >>> tf.histogram_fixed_width([-1.0, 0.0, 1.5, 2.0, 5.0, 15.0], [0.0, 5.0], nbins=5)
        ...   # -> [2, 1, 1, 0, 2]
    """
    with _scope(name, "histogram_fixed_width") as scope:
        values = convert_to_tensor(values, name="values")
        value_range = convert_to_tensor(value_range, name="value_range",
                                        dtype=values.dtype.base_dtype)
        return HistogramFixedWidth(values, value_range, np.int32(nbins) if isinstance(
            nbins, int) else nbins, dtype=dtypes.as_dtype(dtype), name=scope)


def histogram_fixed_width_bins(values, value_range, nbins=100, dtype=dtypes.int32, name=None):
    """The int32 bin index of each of `values` for `histogram_fixed_width` (same shape as
    `values`). As in TF, `dtype` is accepted but the indices are always int32.

    Raises:
        ValueError: a constant `nbins` that is not positive.
        InvalidArgumentError: (at run time) a fed `nbins` that is not positive.
    """
    del dtype  # TF's own implementation ignores it too
    with _scope(name, "histogram_fixed_width_bins"):
        values = convert_to_tensor(values, name="values")
        value_range = convert_to_tensor(value_range, name="value_range",
                                        dtype=values.dtype.base_dtype)
        nbins = convert_to_tensor(nbins, name="nbins")
        known = constant_value(nbins)
        if known is not None and int(np.reshape(known, -1)[0]) <= 0:
            raise ValueError(f"nbins {int(np.reshape(known, -1)[0])} must > 0")
        if known is None:
            with control_dependencies([check_ops.assert_positive(
                    nbins, message="nbins must > 0")]):
                nbins = array_ops.identity(nbins)
        x = math_ops.cast(values, dtypes.float64)
        bounds = math_ops.cast(value_range, dtypes.float64)
        lo, hi = bounds[0], bounds[1]
        nbins_f = math_ops.cast(nbins, dtypes.float64)
        scaled = math_ops.multiply(math_ops.truediv(math_ops.subtract(x, lo),
                                                    math_ops.subtract(hi, lo)), nbins_f)
        top = math_ops.subtract(nbins_f, np.float64(1))
        index = math_ops.minimum(math_ops.maximum(unary_ops.floor(scaled), np.float64(0)), top)
        return math_ops.cast(index, dtypes.int32)


# -- confusion_matrix, zero_fraction --------------------------------------------------------

def confusion_matrix(labels, predictions, num_classes=None, dtype=dtypes.int32, name=None,
                     weights=None):
    """The `[num_classes, num_classes]` matrix counting (label, prediction) pairs.

    Args:
        labels: 1-D int tensor of true classes.
        predictions: 1-D int tensor of predicted classes, same length.
        num_classes: the number of classes (default: max label or prediction + 1).
        dtype: the output dtype.
        name: optional name.
        weights: optional 1-D tensor: each pair adds its weight instead of 1.

    Returns:
        A matrix whose entry `[i, j]` sums the pairs with label i and prediction j.

    Raises:
        InvalidArgumentError: (at run time) a label or prediction is negative or
            >= num_classes.

    Example:
        >>> tf.confusion_matrix([0, 1, 2, 1], [0, 2, 2, 1])
        ...   # -> [[1, 0, 0], [0, 1, 1], [0, 0, 1]]
    """
    dtype = dtypes.as_dtype(dtype)
    with _scope(name, "confusion_matrix"):
        labels, predictions = remove_squeezable_dimensions(
            convert_to_tensor(labels, name="labels"),
            convert_to_tensor(predictions, name="predictions"))
        labels = math_ops.cast(labels, dtypes.int64)
        predictions = math_ops.cast(predictions, dtypes.int64)
        checks = [check_ops.assert_non_negative(labels, message="`labels` contains negative "
                                                "values"),
                  check_ops.assert_non_negative(predictions, message="`predictions` contains "
                                                "negative values")]
        if num_classes is None:
            num_classes = math_ops.add(math_ops.maximum(reduction_ops.reduce_max(labels),
                                                        reduction_ops.reduce_max(predictions)),
                                       np.int64(1))
        else:
            num_classes = math_ops.cast(convert_to_tensor(num_classes, name="num_classes"),
                                        dtypes.int64)
            checks += [check_ops.assert_less(labels, num_classes,
                                             message="`labels` out of bound"),
                       check_ops.assert_less(predictions, num_classes,
                                             message="`predictions` out of bound")]
        if weights is None:
            values = array_ops.ones_like(predictions, dtype=dtype)
        else:
            values = math_ops.cast(convert_to_tensor(weights, name="weights"), dtype)
        with control_dependencies(checks):
            ids = math_ops.add(math_ops.multiply(labels, num_classes), predictions)
        cells = segment_ops.unsorted_segment_sum(values, ids,
                                                 math_ops.multiply(num_classes, num_classes))
        n = constant_value(num_classes)
        shape = [int(n), int(n)] if n is not None else array_ops.stack([num_classes] * 2)
        return array_ops.reshape(cells, shape)


def _drop_last_if(x, drop):
    """`x` without its last dimension where the scalar bool tensor `drop` holds, else `x`."""
    keep = math_ops.subtract(array_ops.rank(x), math_ops.cast(drop, dtypes.int32))
    return array_ops.reshape(x, array_ops.slice(array_ops.shape(x), [0],
                                                array_ops.reshape(keep, [1])))


def remove_squeezable_dimensions(labels, predictions, expected_rank_diff=0, name=None):
    """Drops a trailing size-1 dimension so that `rank(predictions) - rank(labels)` becomes
    `expected_rank_diff` (TF1 `confusion_matrix.remove_squeezable_dimensions`).

    Only a rank difference of exactly `expected_rank_diff + 1` (squeeze `predictions`) or
    `expected_rank_diff - 1` (squeeze `labels`) is corrected; other pairs pass unchanged.
    With static ranks the decision is made now (`squeeze`); otherwise at run time.

    Args:
        labels: label tensor (or value convertible to one).
        predictions: prediction tensor.
        expected_rank_diff: the wanted `rank(predictions) - rank(labels)`.
        name: optional name scope.

    Returns:
        `(labels, predictions)`, possibly with one of them squeezed.
    """
    with _scope(name, "remove_squeezable_dimensions"):
        predictions = convert_to_tensor(predictions, name="predictions")
        labels = convert_to_tensor(labels, name="labels")
        p_shape, l_shape = predictions.shape, labels.shape
        p_rank, l_rank = p_shape.ndims, l_shape.ndims
        if p_rank is not None and l_rank is not None:
            diff = p_rank - l_rank
            if diff == expected_rank_diff + 1 and p_shape.as_list()[-1] in (1, None):
                predictions = array_ops.squeeze(predictions, [-1])
            elif diff == expected_rank_diff - 1 and l_shape.as_list()[-1] in (1, None):
                labels = array_ops.squeeze(labels, [-1])
            return labels, predictions
        diff = math_ops.subtract(array_ops.rank(predictions), array_ops.rank(labels))
        if p_rank is None or p_shape.as_list()[-1] in (1, None):
            predictions = _drop_last_if(predictions, comparison_ops.equal(
                diff, np.int32(expected_rank_diff + 1)))
        if l_rank is None or l_shape.as_list()[-1] in (1, None):
            labels = _drop_last_if(labels, comparison_ops.equal(
                diff, np.int32(expected_rank_diff - 1)))
        return labels, predictions


def zero_fraction(value, name=None):
    """The fraction of entries of `value` equal to zero, as a float32 scalar (NaN when empty).

    Example:
        >>> tf.math.zero_fraction([0, 1, 0, 3])   # -> 0.5
    """
    with _scope(name, "zero_fraction"):
        value = convert_to_tensor(value, name="value")
        zero = np.zeros([], value.dtype.base_dtype.as_numpy_dtype)
        is_zero = math_ops.cast(comparison_ops.equal(value, zero), dtypes.float32)
        return reduction_ops.reduce_mean(is_zero)
