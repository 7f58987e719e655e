"""SparseTensors as strings: SerializeSparse, SerializeManySparse, DeserializeSparse and
DeserializeManySparse.

A serialized SparseTensor is a string vector of three serialized `TensorProto`s (indices,
values, dense_shape), byte-compatible with TensorFlow, so values written by one system are read
by the other. Parsing goes through protobuf only (no pickle).
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework.op_def import define_op
from tensorflux.framework.sparse_tensor import SparseTensor
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.framework.tensor_util import make_ndarray, make_tensor_proto
from tensorflux.ops.sparse.util import as_sparse, dims_of, index_matrix
from tensorflux.protos import tensor_pb2

__all__ = ["serialize_sparse", "serialize_many_sparse", "deserialize_many_sparse"]

SerializeSparse = define_op(
    "SerializeSparse", inputs=["sparse_indices: int64", "sparse_values: T", "sparse_shape: int64"],
    outputs=["serialized_sparse: out_type"], attrs=["T: type", "out_type: {string} = string"],
    differentiable=False)
SerializeManySparse = define_op(
    "SerializeManySparse",
    inputs=["sparse_indices: int64", "sparse_values: T", "sparse_shape: int64"],
    outputs=["serialized_sparse: out_type"], attrs=["T: type", "out_type: {string} = string"],
    differentiable=False)
DeserializeSparse = define_op(
    "DeserializeSparse", inputs=["serialized_sparse: Tserialized"],
    outputs=["sparse_indices: int64", "sparse_values: dtype", "sparse_shape: int64"],
    attrs=["dtype: type", "Tserialized: {string} = string"], differentiable=False)
DeserializeManySparse = define_op(
    "DeserializeManySparse", inputs=["serialized_sparse: string"],
    outputs=["sparse_indices: int64", "sparse_values: dtype", "sparse_shape: int64"],
    attrs=["dtype: type"], differentiable=False)


def _serialize(indices, values, shape, value_dtype) -> np.ndarray:
    out = np.empty(3, dtype=object)
    out[0] = make_tensor_proto(np.asarray(indices, np.int64)).SerializeToString()
    if value_dtype.base_dtype == dtypes.string:
        out[1] = _string_proto(np.asarray(values, dtype=object)).SerializeToString()
    else:
        out[1] = make_tensor_proto(np.asarray(values), dtype=value_dtype).SerializeToString()
    out[2] = make_tensor_proto(np.asarray(shape, np.int64)).SerializeToString()
    return out


def _varint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _string_proto(values: np.ndarray):
    """A string TensorProto packed as TensorFlow packs it: varint lengths, then the bytes."""
    items = [v if isinstance(v, bytes) else str(v).encode() for v in values.reshape(-1)]
    proto = make_tensor_proto(np.zeros(values.shape, np.uint8))
    proto.dtype = dtypes.string.as_datatype_enum
    proto.tensor_content = b"".join(_varint(len(v)) for v in items) + b"".join(items)
    return proto


def _parse(blob) -> np.ndarray:
    proto = tensor_pb2.TensorProto()
    try:
        proto.ParseFromString(bytes(blob))
    except Exception as err:  # noqa: BLE001 - protobuf raises its own DecodeError
        raise errors.InvalidArgumentError(
            None, None, f"Could not parse a serialized SparseTensor component: {err}") from None
    if proto.dtype == dtypes.string.as_datatype_enum and proto.tensor_content:
        return _strings_from_content(proto)
    return make_ndarray(proto)


def _strings_from_content(proto) -> np.ndarray:
    """TensorFlow packs string tensors as varint lengths followed by the bytes."""
    data = proto.tensor_content
    count = int(np.prod([d.size for d in proto.tensor_shape.dim]))
    lengths, pos = [], 0
    for _ in range(count):
        shift = length = 0
        while True:
            byte = data[pos]
            pos += 1
            length |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                break
        lengths.append(length)
    out = np.empty(count, dtype=object)
    for i, length in enumerate(lengths):
        out[i] = bytes(data[pos:pos + length])
        pos += length
    return out.reshape([d.size for d in proto.tensor_shape.dim])


@SerializeSparse.shape_fn
def _serialize_shape(sparse_indices, sparse_values, sparse_shape):
    return TensorShape([3])


@SerializeSparse.kernel(factory=True)
def _serialize_factory(T, out_type):  # noqa: N803 - TF attr name
    def serialize(sparse_indices, sparse_values, sparse_shape):
        dims = dims_of(sparse_shape)
        index_matrix(sparse_indices, len(dims), "sparse_indices")
        return _serialize(sparse_indices, sparse_values, dims, T)

    return serialize


@SerializeManySparse.shape_fn
def _serialize_many_shape(sparse_indices, sparse_values, sparse_shape):
    return TensorShape([None, 3])


@SerializeManySparse.kernel(factory=True)
def _serialize_many_factory(T, out_type):  # noqa: N803 - TF attr name
    def serialize_many(sparse_indices, sparse_values, sparse_shape):
        dims = dims_of(sparse_shape)
        if len(dims) < 2:
            raise errors.InvalidArgumentError(
                None, None, f"SerializeManySparse needs a SparseTensor of rank >= 2 (a batch), "
                f"got rank {len(dims)}")
        indices = index_matrix(sparse_indices, len(dims), "sparse_indices")
        values = np.asarray(sparse_values)
        order = np.argsort(indices[:, 0], kind="stable")
        indices, values = indices[order], values[order]
        bounds = np.searchsorted(indices[:, 0], np.arange(int(dims[0]) + 1))
        out = np.empty((int(dims[0]), 3), dtype=object)
        for row, (lo, hi) in enumerate(zip(bounds[:-1], bounds[1:])):
            out[row] = _serialize(indices[lo:hi, 1:], values[lo:hi], dims[1:], T)
        return out

    return serialize_many


def _deserialize(serialized, dtype, what):
    """Parses [..., 3] strings into one SparseTensor with the leading dims prepended."""
    serialized = np.asarray(serialized, dtype=object)
    if serialized.ndim < 1 or serialized.shape[-1] != 3:
        raise errors.InvalidArgumentError(
            None, None, f"{what}: serialized_sparse must have 3 as its last dimension, got "
            f"shape {list(serialized.shape)}")
    lead = serialized.shape[:-1]
    parts = [tuple(_parse(blob) for blob in triple) for triple in serialized.reshape(-1, 3)]
    want = np.dtype(dtype.as_numpy_dtype)
    ranks = {len(shape) for _, _, shape in parts}
    if len(ranks) > 1:
        raise errors.InvalidArgumentError(
            None, None, f"{what}: inconsistent ranks {sorted(ranks)} among the SparseTensors")
    for i, (_, values, _) in enumerate(parts):
        if values.dtype != want and not (want.kind == "O" and values.dtype.kind in "OSU"):
            raise errors.InvalidArgumentError(
                None, None, f"{what}: requested SparseTensor of type {dtype.name} but "
                f"SparseTensor[{i}].values.dtype() == {dtypes.as_dtype(values.dtype).name}")
    rank = ranks.pop() if ranks else 0
    counts = np.array([len(v) for _, v, _ in parts], np.int64)
    flat_batch = np.repeat(np.arange(len(parts), dtype=np.int64), counts)
    outer = np.stack(np.unravel_index(flat_batch, lead), axis=1) if lead else \
        np.zeros((len(flat_batch), 0), np.int64)
    inner = np.concatenate([i.reshape(-1, rank) for i, _, _ in parts]) if parts else \
        np.zeros((0, rank), np.int64)
    values = np.concatenate([v.reshape(-1) for _, v, _ in parts]) if parts else \
        np.zeros(0, want)
    dims = np.max([s for _, _, s in parts], axis=0) if parts else np.zeros(rank, np.int64)
    indices = np.concatenate([outer.astype(np.int64), inner.astype(np.int64)], axis=1)
    shape = np.concatenate([np.asarray(lead, np.int64), np.asarray(dims, np.int64)])
    return indices, values.astype(want, copy=False), shape


def _deserialize_shape(serialized_sparse):
    return [TensorShape([None, None]), TensorShape([None]), TensorShape([None])]


DeserializeSparse.shape_fn(_deserialize_shape)
DeserializeManySparse.shape_fn(_deserialize_shape)


@DeserializeSparse.kernel(factory=True)
def _deserialize_factory(dtype, Tserialized):  # noqa: N803 - TF attr name
    def deserialize(serialized_sparse):
        return _deserialize(serialized_sparse, dtype, "DeserializeSparse")

    return deserialize


@DeserializeManySparse.kernel(factory=True)
def _deserialize_many_factory(dtype):
    def deserialize_many(serialized_sparse):
        if np.ndim(serialized_sparse) != 2:
            raise errors.InvalidArgumentError(
                None, None, f"DeserializeManySparse: serialized_sparse must be an [N, 3] "
                f"matrix, got shape {list(np.shape(serialized_sparse))}")
        return _deserialize(serialized_sparse, dtype, "DeserializeManySparse")

    return deserialize_many


def serialize_sparse(sp_input, name=None, out_type=dtypes.string):
    """A string [3] vector holding `sp_input` (serialized TensorProtos, as in TensorFlow)."""
    sp_input = as_sparse(sp_input)
    return SerializeSparse(sp_input.indices, sp_input.values, sp_input.dense_shape,
                           out_type=out_type, name=name)


def serialize_many_sparse(sp_input, name=None, out_type=dtypes.string):
    """A string [N, 3] matrix: row `i` serializes the minibatch entry `sp_input[i]`."""
    sp_input = as_sparse(sp_input)
    return SerializeManySparse(sp_input.indices, sp_input.values, sp_input.dense_shape,
                               out_type=out_type, name=name)


def deserialize_many_sparse(serialized_sparse, dtype, rank=None, name=None):
    """The SparseTensor batch (rank + 1 dims) of an [N, 3] matrix of serialized SparseTensors.

    The batch's dense shape is `[N]` followed by the largest of each inner dimension.

    Example:
        >>> batch = tf.deserialize_many_sparse(tf.serialize_many_sparse(sp), tf.float32)
    """
    serialized_sparse = convert_to_tensor(serialized_sparse, dtype=dtypes.string,
                                          name="serialized_sparse")
    out = DeserializeManySparse(serialized_sparse, dtype=dtype, name=name)
    if rank is not None:
        out.sparse_indices.set_shape([None, rank])
        out.sparse_shape.set_shape([rank])
    return SparseTensor(out.sparse_indices, out.sparse_values, out.sparse_shape)
