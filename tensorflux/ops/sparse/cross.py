"""SparseCross (`tf.sparse.cross`, `tf.sparse.cross_hashed`): per-row crosses of features.

Columns are the sparse inputs (2-D, rows = batch) then the dense ones, in order. Each output
row holds the cartesian product of that row's features in every column, the first column
varying slowest. Plain crosses join the features' text with "_X_"; hashed crosses fold
`FingerprintCat64` over the features from `hash_key` (strings contribute their FarmHash
Fingerprint64, int64 values themselves), modulo `num_buckets` (or 2**63 - 1 when it is 0).
"""

from __future__ import annotations

import itertools

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework.op_def import define_op
from tensorflux.framework.scopes import op_name_scope as _scope
from tensorflux.framework.sparse_tensor import SparseTensor
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.lib.numerics.farmhash import fingerprint64, fingerprint_cat64
from tensorflux.ops import math as math_ops

__all__: list = []

_DEFAULT_HASH_KEY = 0xDECAFCAFFE
_MASK = (1 << 64) - 1
_INT64_MAX = (1 << 63) - 1

SparseCross = define_op(
    "SparseCross",
    inputs=["indices: N * int64", "values: sparse_types", "shapes: N * int64",
            "dense_inputs: dense_types"],
    outputs=["output_indices: int64", "output_values: out_type", "output_shape: int64"],
    attrs=["N: int >= 0", "hashed_output: bool", "num_buckets: int >= 0", "hash_key: int",
           "sparse_types: list(type)", "dense_types: list(type)",
           "out_type: {int64, string}", "internal_type: {int64, string}"],
    differentiable=False)


@SparseCross.shape_fn
def _sparse_cross_shape(indices, values, shapes, dense_inputs, *, out_type):
    return [TensorShape([None, 2]), TensorShape([None]), TensorShape([2])]


def _text(value) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "surrogateescape")
    return str(int(value))


def _hash(value) -> int:
    if isinstance(value, bytes):
        return fingerprint64(value)
    return int(value) & _MASK


def _columns(n, args, batch):
    indices, values, shapes, dense = args[:n], args[n:2 * n], args[2 * n:3 * n], args[3 * n:]
    columns = []
    for idx, vals, shape in zip(indices, values, shapes):
        if idx.ndim != 2 or idx.shape[1] != 2 or np.size(shape) != 2:
            raise errors.InvalidArgumentError(
                None, None, f"SparseCross: sparse inputs must be 2-D [batch, features], got "
                f"indices of shape {list(idx.shape)} and dense shape {np.ravel(shape).tolist()}")
        if int(shape[0]) != batch:
            raise errors.InvalidArgumentError(
                None, None, f"SparseCross: batch sizes differ: {int(shape[0])} vs {batch}")
        rows: list = [[] for _ in range(batch)]
        for (row, _), value in zip(idx.tolist(), vals.tolist()):
            rows[row].append(value)
        columns.append(rows)
    for values in dense:
        if values.ndim != 2 or values.shape[0] != batch:
            raise errors.InvalidArgumentError(
                None, None, f"SparseCross: dense inputs must be [batch={batch}, features], got "
                f"shape {list(values.shape)}")
        columns.append(values.tolist())
    return columns


@SparseCross.kernel(factory=True)
def _sparse_cross_kernel(N, hashed_output, num_buckets, hash_key, sparse_types,  # noqa: N803
                         dense_types, out_type, internal_type):
    def kernel(*args):
        sizes = [int(s[0]) for s in args[2 * N:3 * N]] + [d.shape[0] for d in args[3 * N:]]
        if not sizes:
            raise errors.InvalidArgumentError(None, None, "SparseCross needs at least one input")
        batch = sizes[0]
        columns = _columns(N, args, batch)
        out_indices, out_values = [], []
        width = 0
        for row in range(batch):
            crosses = itertools.product(*(column[row] for column in columns))
            count = 0
            for features in crosses:
                if hashed_output:
                    value = hash_key
                    for feature in features:
                        value = fingerprint_cat64(value, _hash(feature))
                    out_values.append(value % num_buckets if num_buckets > 0
                                      else value % _INT64_MAX)
                else:
                    out_values.append("_X_".join(_text(f) for f in features).encode(
                        "utf-8", "surrogateescape"))
                out_indices.append((row, count))
                count += 1
            width = max(width, count)
        indices = np.asarray(out_indices, np.int64).reshape(-1, 2)
        if hashed_output:
            values = np.asarray(out_values, np.int64)
        else:
            values = np.empty(len(out_values), dtype=object)
            values[:] = out_values
        return indices, values, np.array([batch, width], np.int64)

    return kernel


def _cross(inputs, hashed_output, num_buckets, hash_key, name, default_name):
    if not isinstance(inputs, (list, tuple)):
        raise TypeError("Inputs must be a list")
    sparse, dense = [], []
    for item in inputs:
        if not isinstance(item, SparseTensor):
            item = convert_to_tensor(item)
        if item.dtype.base_dtype == dtypes.int32:
            item = (SparseTensor(item.indices, math_ops.cast(item.values, dtypes.int64),
                                 item.dense_shape) if isinstance(item, SparseTensor)
                    else math_ops.cast(item, dtypes.int64))
        if item.dtype.base_dtype not in (dtypes.int64, dtypes.string):
            raise TypeError(f"All inputs must be int64 or string tensors, got {item.dtype.name} "
                            f"for {item}")
        (sparse if isinstance(item, SparseTensor) else dense).append(item)
    kinds = [t.dtype.base_dtype for t in sparse + dense]
    internal = dtypes.string if dtypes.string in kinds else dtypes.int64
    with _scope(name, default_name):
        out = SparseCross(
            [s.indices for s in sparse], [s.values for s in sparse],
            [s.dense_shape for s in sparse], dense, hashed_output=hashed_output,
            num_buckets=num_buckets, hash_key=hash_key,
            out_type=dtypes.int64 if hashed_output else dtypes.string, internal_type=internal)
        return SparseTensor(out[0], out[1], out[2])


def sparse_cross(inputs, name=None):
    """The crosses of 2-D string/int64 SparseTensors and Tensors, as "a_X_b_X_c" strings.

    Args:
        inputs: a list of SparseTensors and Tensors ([batch, features], int64 or string).
        name: optional name.

    Returns:
        A string SparseTensor [batch, max crosses per row].

    Raises:
        TypeError: `inputs` is not a list, or an input is not int64/string.
    """
    return _cross(inputs, False, 0, 0, name, "SparseCross")


def sparse_cross_hashed(inputs, num_buckets=0, hash_key=None, name=None):
    """The crosses of `inputs` as int64 fingerprints (see the module docstring).

    Args:
        inputs: a list of SparseTensors and Tensors ([batch, features], int64 or string).
        num_buckets: hash modulo this when > 0.
        hash_key: the FingerprintCat64 seed (default 0xDECAFCAFFE, TensorFlow's).
        name: optional name.

    Returns:
        An int64 SparseTensor [batch, max crosses per row].
    """
    return _cross(inputs, True, num_buckets,
                  _DEFAULT_HASH_KEY if hash_key is None else hash_key, name, "SparseCross")
