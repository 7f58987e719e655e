"""`SparseCross`: feature crosses of sparse and dense columns (`tf.sparse.cross[_hashed]`).

For each row b, the cross holds one entry per combination of one value of every input in that
row (the cartesian product, the last input varying fastest). Unhashed, an entry is the values'
strings joined by `_X_`. Hashed, it is `FingerprintCat64` folded over the inputs from `hash_key`:
a string value contributes its FarmHash `Fingerprint64`, an int64 value its own bits. The
result is taken modulo `num_buckets` (or modulo 2**63 - 1 when `num_buckets` is 0), so bucket
ids equal TensorFlow's. Rows are processed by a Python loop (each cross is a product of
row-local lists); the hash combination is vectorised over all crosses at once.
"""

from __future__ import annotations

import itertools

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.op_def import define_op
from tensorflux.framework.sparse_tensor import SparseTensor
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.lib.hashing.farmhash import fingerprint64_array
from tensorflux.ops.math.casting import cast

__all__ = ["sparse_cross", "sparse_cross_hashed"]

DEFAULT_HASH_KEY = 0xDECAFCAFFE

SparseCross = define_op(
    "SparseCross",
    inputs=["indices: N * int64", "values: sparse_types", "shapes: N * int64",
            "dense_inputs: dense_types"],
    outputs=["output_indices: int64", "output_values: out_type", "output_shape: int64"],
    attrs=["N: int >= 0", "hashed_output: bool", "num_buckets: int >= 0", "hash_key: int",
           "sparse_types: list(type) >= 0", "dense_types: list(type) >= 0",
           "out_type: {int64, string}", "internal_type: {int64, string}"],
    differentiable=False)


@SparseCross.shape_fn
def _sparse_cross_shape(*args, **_):
    return [TensorShape([None, 2]), TensorShape([None]), TensorShape([2])]


_MUL = np.uint64(0xC6A4A7935BD1E995)
_S47 = np.uint64(47)


def _cat64(fp1: np.ndarray, fp2: np.ndarray) -> np.ndarray:
    """`FingerprintCat64` over uint64 arrays (wrap-around multiplication)."""
    with np.errstate(over="ignore"):
        mixed = fp2 * _MUL
        mixed = (mixed ^ (mixed >> _S47)) * _MUL
        result = (fp1 ^ _MUL) ^ mixed
        result = result * _MUL
        result = (result ^ (result >> _S47)) * _MUL
        return result ^ (result >> _S47)


def _feature_hashes(values: np.ndarray) -> np.ndarray:
    if values.dtype == object:
        return fingerprint64_array(values)
    return values.astype(np.int64).view(np.uint64)


def _feature_strings(values: np.ndarray) -> list:
    if values.dtype == object:
        return [bytes(v) for v in values]
    return [str(int(v)).encode() for v in values]


def _rows_of(indices, shape, batch: int, i: int) -> list:
    """Per row, the positions into `values` of the row's entries (in index order)."""
    if indices.ndim != 2 or indices.shape[1] != 2 or len(shape) != 2:
        raise errors.InvalidArgumentError(
            None, None, f"SparseCross: input {i} must be a rank 2 SparseTensor, got indices "
            f"of shape {list(indices.shape)} and dense shape {list(shape)}")
    if int(shape[0]) != batch:
        raise errors.InvalidArgumentError(
            None, None, f"SparseCross: expected batch size {batch}, got {int(shape[0])} for "
            f"input {i}")
    rows = [[] for _ in range(batch)]
    order = np.lexsort((indices[:, 1], indices[:, 0]))
    for position in order:
        rows[int(indices[position, 0])].append(int(position))
    return rows


def _sparse_cross_factory(N, hashed_output, num_buckets, hash_key,  # noqa: N803 - TF attr
                          sparse_types, dense_types, out_type, internal_type):
    def sparse_cross(*args):
        indices, values, shapes = args[:N], args[N:2 * N], args[2 * N:3 * N]
        dense = [np.asarray(d) for d in args[3 * N:]]
        if N:
            batch = int(shapes[0][0])
        elif dense:
            batch = dense[0].shape[0]
        else:
            raise errors.InvalidArgumentError(None, None, "SparseCross: no inputs to cross")
        columns = []  # per input: (flat values, per-row positions)
        for i in range(N):
            columns.append((np.asarray(values[i]).reshape(-1),
                            _rows_of(np.asarray(indices[i]), np.asarray(shapes[i]), batch, i)))
        for j, d in enumerate(dense):
            if d.ndim != 2 or d.shape[0] != batch:
                raise errors.InvalidArgumentError(
                    None, None, f"SparseCross: dense input {j} must be rank 2 with batch size "
                    f"{batch}, got shape {list(d.shape)}")
            width = d.shape[1]
            columns.append((d.reshape(-1), [list(range(r * width, (r + 1) * width))
                                            for r in range(batch)]))
        picks = [[] for _ in columns]
        counts = np.zeros(batch, np.int64)
        for row in range(batch):
            product = list(itertools.product(*(rows[row] for _, rows in columns)))
            counts[row] = len(product)
            for k, pick in enumerate(zip(*product)) if product else ():
                picks[k].extend(pick)
        total = int(counts.sum())
        out_rows = np.repeat(np.arange(batch, dtype=np.int64), counts)
        starts = np.repeat(np.cumsum(counts) - counts, counts)
        out_indices = np.stack([out_rows, np.arange(total, dtype=np.int64) - starts], axis=1)
        out_shape = np.array([batch, int(counts.max()) if batch else 0], np.int64)
        if hashed_output:
            result = np.full(total, hash_key & (2**64 - 1), np.uint64)
            for (flat, _), pick in zip(columns, picks):
                result = _cat64(result, _feature_hashes(flat)[np.asarray(pick, np.int64)])
            modulus = np.uint64(num_buckets if num_buckets > 0 else 2**63 - 1)
            out_values = (result % modulus).astype(np.int64)
        else:
            parts = [_feature_strings(flat) for flat, _ in columns]
            joined = [b"_X_".join(p[k] for p, k in zip(parts, combo))
                      for combo in zip(*picks)] if total else []
            out_values = np.array(joined, dtype=object).reshape(total)
        return out_indices.reshape(total, 2), out_values, out_shape

    return sparse_cross


SparseCross.kernel(factory=True)(_sparse_cross_factory)


def _cross(inputs, hashed_output, num_buckets, hash_key, name):
    if not isinstance(inputs, (list, tuple)):
        raise TypeError("Inputs must be a list")
    if not all(isinstance(i, SparseTensor) or hasattr(i, "dtype") or np.ndim(i) for i in inputs):
        raise TypeError("All inputs must be SparseTensors or Tensors")
    with graph_mod.get_default_graph().name_scope(name or "SparseCross"):
        sparse = [i for i in inputs if isinstance(i, SparseTensor)]
        dense = [convert_to_tensor(i) for i in inputs if not isinstance(i, SparseTensor)]
        values = [sp.values for sp in sparse]
        internal = dtypes.string
        for group in (values, dense):
            for k, tensor in enumerate(group):
                if tensor.dtype.base_dtype != dtypes.string:
                    if not tensor.dtype.is_integer:
                        raise TypeError(f"sparse_cross: inputs must be int or string, got "
                                        f"{tensor.dtype.name}")
                    group[k] = cast(tensor, dtypes.int64)
                    internal = dtypes.int64
        out = SparseCross([sp.indices for sp in sparse], values,
                          [sp.dense_shape for sp in sparse], dense,
                          hashed_output=hashed_output, num_buckets=num_buckets,
                          hash_key=hash_key, out_type=dtypes.int64 if hashed_output
                          else dtypes.string, internal_type=internal)
    return SparseTensor(out.output_indices, out.output_values, out.output_shape)


def sparse_cross(inputs, name=None):
    """The string cross of `inputs` (rank-2 SparseTensors or dense Tensors, int or string).

    Each row of the result holds, for every combination of one value per input in that row,
    the values joined by `"_X_"` (`tf.sparse.cross`, TF1 `tf.sparse_cross`).

    Raises:
        TypeError: inputs not a list, or an input neither integer nor string.
    """
    return _cross(inputs, False, 0, 0, name)


def sparse_cross_hashed(inputs, num_buckets=0, hash_key=None, name=None):
    """The hashed cross of `inputs`: int64 ids in `[0, num_buckets)` equal to TensorFlow's.

    Args:
        inputs: rank-2 SparseTensors or dense Tensors of int or string values.
        num_buckets: the modulus (0: 2**63 - 1).
        hash_key: the seed of the fingerprint fold (default `0xDECAFCAFFE`, TF's).
        name: optional name.
    """
    return _cross(inputs, True, int(num_buckets),
                  DEFAULT_HASH_KEY if hash_key is None else int(hash_key), name)
