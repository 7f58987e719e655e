"""`EditDistance` and `tf.edit_distance`: Levenshtein distances between the sequences of two
SparseTensors, grouped by all index coordinates but the last."""

from __future__ import annotations

import numpy as np

from tensorflux.framework import errors
from tensorflux.framework.op_def import define_op
from tensorflux.framework.sparse_tensor import SparseTensor, SparseTensorValue
from tensorflux.framework.tensor_shape import TensorShape

__all__ = ["edit_distance"]

EditDistance = define_op(
    "EditDistance",
    inputs=["hypothesis_indices: int64", "hypothesis_values: T", "hypothesis_shape: int64",
            "truth_indices: int64", "truth_values: T", "truth_shape: int64"],
    outputs=["output: float"],
    attrs=["normalize: bool = True", "T: type"],
    differentiable=False)


@EditDistance.shape_fn(value_inputs=("hypothesis_shape", "truth_shape"))
def _edit_distance_shape(hypothesis_indices, hypothesis_values, hypothesis_shape, truth_indices,
                         truth_values, truth_shape):
    for name, dims in (("hypothesis", hypothesis_shape), ("truth", truth_shape)):
        _check_rank(name, None if dims is None else len(dims), ValueError)
    if hypothesis_shape is not None and truth_shape is not None:
        if len(hypothesis_shape) != len(truth_shape):
            raise ValueError(f"hypothesis_shape {list(hypothesis_shape)} and truth_shape "
                             f"{list(truth_shape)} have different ranks")
        return TensorShape([int(d) for d in np.maximum(hypothesis_shape[:-1],
                                                        truth_shape[:-1])])
    return TensorShape(None)


def _check_rank(name, rank, error):
    """Sequences need a rank of at least 2: batch coordinates plus the position within one."""
    if rank is not None and rank < 2:
        message = (f"Input {name.capitalize()} SparseTensors must have rank at least 2, but "
                   f"{name}_shape rank is: {rank}")
        raise error(message) if error is ValueError else error(None, None, message)


def _sequences(indices, values, out_shape, name):
    """Group id (flat output position), and the values in order, of one side's sequences."""
    if indices.shape[0] != values.shape[0]:
        raise errors.InvalidArgumentError(
            None, None, f"{name}_indices has {indices.shape[0]} rows but {name}_values has "
            f"{values.shape[0]} values")
    if len(out_shape) == 0:
        return np.zeros(indices.shape[0], np.int64)
    dims = np.asarray(out_shape, np.int64)
    outer = indices[:, :-1]
    bad = np.nonzero(((outer < 0) | (outer >= dims)).any(axis=1))[0]
    if bad.size:
        i = int(bad[0])
        strides = [int(np.prod(dims[k + 1:])) for k in range(dims.size)]
        inner = sum(int(c) * s for c, s in zip(outer[i], strides))
        where = ("which would require writing to outside of the buffer for the output tensor"
                 if not 0 <= inner < int(np.prod(dims)) else "which is out of bounds")
        raise errors.InvalidArgumentError(
            None, None, f"{name}_indices[{i}] = {indices[i].tolist()} gives inner product "
            f"{inner} {where} of shape {dims.tolist()}")
    return np.ravel_multi_index(tuple(outer.T), out_shape)


def _padded(groups, values, rows, n_rows):
    """[n_rows, max_len] values laid out by sequence (in the SparseTensor's order), lengths."""
    order = np.argsort(groups, kind="stable")
    row = rows[order]
    lengths = np.bincount(row, minlength=n_rows)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    position = np.arange(row.size) - starts[row]
    padded = np.zeros((n_rows, max(int(lengths.max(initial=0)), 1)), values.dtype)
    padded[row, position] = values[order]
    return padded, lengths


@EditDistance.kernel
def _edit_distance_kernel(hypothesis_indices, hypothesis_values, hypothesis_shape, truth_indices,
                          truth_values, truth_shape, *, normalize):
    _check_rank("hypothesis", hypothesis_shape.size, errors.InvalidArgumentError)
    _check_rank("truth", truth_shape.size, errors.InvalidArgumentError)
    if hypothesis_shape.size != truth_shape.size:
        raise errors.InvalidArgumentError(
            None, None, f"hypothesis_shape {hypothesis_shape.tolist()} and truth_shape "
            f"{truth_shape.tolist()} have different ranks")
    if hypothesis_indices.shape[1:] != (hypothesis_shape.size,) or \
            truth_indices.shape[1:] != (truth_shape.size,):
        raise errors.InvalidArgumentError(
            None, None, "indices must be [N, rank] matrices matching their shapes' rank, got "
            f"{hypothesis_indices.shape} and {truth_indices.shape} for rank "
            f"{hypothesis_shape.size}")
    out_shape = tuple(int(d) for d in np.maximum(hypothesis_shape[:-1], truth_shape[:-1]))
    hyp_groups = _sequences(hypothesis_indices, hypothesis_values, out_shape, "hypothesis")
    truth_groups = _sequences(truth_indices, truth_values, out_shape, "truth")
    groups, inverse = np.unique(np.concatenate([hyp_groups, truth_groups]), return_inverse=True)
    n = groups.size
    hyp, hyp_len = _padded(hyp_groups, hypothesis_values, inverse[:hyp_groups.size], n)
    truth, truth_len = _padded(truth_groups, truth_values, inverse[hyp_groups.size:], n)
    # One DP row per hypothesis position, all sequences at once; the row's left-to-right
    # insertion chain is a running minimum of (candidate - column) plus the column.
    columns = np.arange(truth.shape[1] + 1)
    dist = np.broadcast_to(columns, (n, columns.size)).copy()
    for i in range(1, int(hyp_len.max(initial=0)) + 1):
        cost = (hyp[:, i - 1:i] != truth).astype(np.int64)
        cand = np.empty_like(dist)
        cand[:, 0] = i
        cand[:, 1:] = np.minimum(dist[:, 1:] + 1, dist[:, :-1] + cost)
        row = np.minimum.accumulate(cand - columns, axis=1) + columns
        dist = np.where((i <= hyp_len)[:, None], row, dist)
    result = dist[np.arange(n), truth_len].astype(np.float32)
    if normalize:
        with np.errstate(divide="ignore", invalid="ignore"):
            result = result / truth_len.astype(np.float32)
    output = np.zeros(out_shape, np.float32)
    output.reshape(-1)[groups] = result
    return output


def edit_distance(hypothesis, truth, normalize=True, name="edit_distance"):
    """Levenshtein distance between the sequences of two SparseTensors.

    Args:
        hypothesis, truth: SparseTensors of the same rank and value dtype; all index coordinates
            but the last name a sequence, the last orders its elements.
        normalize: divide each distance by the truth sequence's length (inf for an empty
            truth with a non-empty hypothesis).
        name: op name.

    Returns:
        A float32 tensor of the two dense shapes' elementwise maximum, without the last
        dimension; positions with no sequence on either side are 0.

    Raises:
        TypeError: an argument is not a SparseTensor or SparseTensorValue.
        ValueError: a dense shape known at graph construction has rank below 2.
    """
    for arg, value in (("hypothesis", hypothesis), ("truth", truth)):
        if not isinstance(value, (SparseTensor, SparseTensorValue)):
            raise TypeError(f"{arg} must be a SparseTensor, got {type(value).__name__}")
    if isinstance(hypothesis, SparseTensorValue):
        hypothesis = SparseTensor.from_value(hypothesis)
    if isinstance(truth, SparseTensorValue):
        truth = SparseTensor.from_value(truth)
    return EditDistance(hypothesis.indices, hypothesis.values, hypothesis.dense_shape,
                        truth.indices, truth.values, truth.dense_shape, normalize=normalize,
                        name=name)
