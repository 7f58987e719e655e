"""Decoding serialized `tf.train.Example` protos into batched NumPy arrays.

The pure core of the ParseExample / ParseSingleExample kernels: `parse_examples(records, spec)`
decodes each record once with the protobuf runtime (its C implementation when installed) and
assembles every feature's batch with vectorised NumPy (row copies into a preallocated array for
dense features, one concatenate plus computed indices for sparse ones).

Errors follow TensorFlow's wording: a missing required feature, a wrong number of values, a
wrong value type and an unparsable record are InvalidArgumentErrors naming the feature and the
example.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from google.protobuf.message import DecodeError

from tensorflux.framework import dtypes, errors
from tensorflux.protos import example_pb2

_KIND = {dtypes.float32: "float_list", dtypes.int64: "int64_list", dtypes.string: "bytes_list"}
_TYPE_NAME = {"float_list": "float", "int64_list": "int64", "bytes_list": "string"}
_NP = {dtypes.float32: np.float32, dtypes.int64: np.int64, dtypes.string: np.object_}


@dataclass(frozen=True)
class ParseSpec:
    """What to extract: sparse (VarLen) keys and types; dense keys, types, shapes (a first dim
    of None marks a variable-length FixedLenSequenceFeature)."""

    sparse_keys: tuple
    sparse_types: tuple
    dense_keys: tuple
    dense_types: tuple
    dense_shapes: tuple


def check_type(dtype, what: str) -> None:
    if dtype.base_dtype not in _KIND:
        raise ValueError(f"{what}: unsupported dtype {dtype.name}; features must be float32, "
                         "int64 or string")


def feature_values(feature, dtype, key: str, name: str, index: int):
    """The values of one Feature proto as an ndarray of `dtype` (checked)."""
    kind = feature.WhichOneof("kind")
    expected = _KIND[dtype]
    if kind is None:
        return np.empty(0, _NP[dtype])
    if kind != expected:
        raise errors.InvalidArgumentError(
            None, None, f"Name: {name}, Key: {key}, Index: {index}.  Data types don't match. "
            f"Data type: {_TYPE_NAME[kind]} but expected type: {_TYPE_NAME[expected]}")
    values = getattr(feature, kind).value
    if dtype == dtypes.string:
        out = np.empty(len(values), np.object_)
        out[:] = list(values)
        return out
    return np.asarray(values, dtype=_NP[dtype])


def _decode(record, name: str):
    try:
        return example_pb2.Example.FromString(record).features.feature
    except (DecodeError, TypeError, ValueError) as err:
        shown = record[:64] if isinstance(record, (bytes, bytearray)) else record
        raise errors.InvalidArgumentError(
            None, None, f"Could not parse example input, value: {shown!r} ({name}): {err}"
        ) from None


def _shape_text(shape) -> str:
    return "[" + ",".join("?" if d is None else str(d) for d in shape) + "]"


def parse_examples(records, names, spec: ParseSpec, dense_defaults):
    """Parses a batch of serialized Examples.

    Args:
        records: sequence of bytes, one serialized Example each.
        names: sequence of example names for messages (may be empty).
        spec: the ParseSpec.
        dense_defaults: one ndarray per dense key: empty when the feature is required, else the
            default value (fixed shape) or the padding scalar (variable length).

    Returns:
        (sparse_indices, sparse_values, sparse_shapes, dense_values): lists of ndarrays; sparse
        indices are [N, 2] (example, position) and shapes [batch, max length].

    Raises:
        InvalidArgumentError: a malformed record, a missing required feature, a type or size
            mismatch.
    """
    label = [names[i].decode(errors="replace") if isinstance(names[i], bytes) else str(names[i])
             for i in range(len(names))] if len(names) else None
    features = [_decode(records[i], label[i] if label else "<unknown>")
                for i in range(len(records))]
    return parse_features(features, label or (), spec, dense_defaults)


def parse_features(features, label, spec: ParseSpec, dense_defaults):
    """`parse_examples` on already decoded feature maps (`Features.feature` of each)."""
    batch = len(features)

    def who(i):
        return label[i] if len(label) else "<unknown>"

    sparse_indices, sparse_values, sparse_shapes = [], [], []
    for key, dtype in zip(spec.sparse_keys, spec.sparse_types):
        parts = []
        for i, fmap in enumerate(features):
            parts.append(feature_values(fmap[key], dtype, key, who(i), i) if key in fmap
                         else np.empty(0, _NP[dtype]))
        lengths = np.fromiter((len(p) for p in parts), np.int64, batch)
        values = np.concatenate(parts) if parts else np.empty(0, _NP[dtype])
        if dtype == dtypes.string and values.dtype != np.object_:
            values = values.astype(np.object_)
        total = int(lengths.sum())
        starts = np.cumsum(lengths) - lengths
        rows = np.repeat(np.arange(batch, dtype=np.int64), lengths)
        cols = np.arange(total, dtype=np.int64) - np.repeat(starts, lengths)
        sparse_indices.append(np.stack([rows, cols], axis=1))
        sparse_values.append(values)
        sparse_shapes.append(np.array([batch, int(lengths.max()) if batch else 0], np.int64))

    dense_values = []
    for key, dtype, shape, default in zip(spec.dense_keys, spec.dense_types, spec.dense_shapes,
                                          dense_defaults):
        if shape and shape[0] is None:
            dense_values.append(_variable_dense(features, key, dtype, shape, default, who))
        else:
            dense_values.append(_fixed_dense(features, key, dtype, shape, default, who))
    return sparse_indices, sparse_values, sparse_shapes, dense_values


def _fixed_dense(features, key, dtype, shape, default, who):
    shape = tuple(int(d) for d in shape)
    size = int(np.prod(shape, dtype=np.int64))
    out = np.empty((len(features),) + shape, _NP[dtype])
    flat = out.reshape(len(features), size)
    default = np.asarray(default)
    for i, fmap in enumerate(features):
        if key not in fmap:
            if default.size == 0:
                raise errors.InvalidArgumentError(
                    None, None, f"Name: {who(i)}, Feature: {key} (data type: "
                    f"{_TYPE_NAME[_KIND[dtype]]}) is required but could not be found.")
            flat[i] = default.reshape(-1)
            continue
        values = feature_values(fmap[key], dtype, key, who(i), i)
        if len(values) != size:
            raise errors.InvalidArgumentError(
                None, None, f"Name: {who(i)}, Key: {key}, Index: {i}.  Number of "
                f"{_TYPE_NAME[_KIND[dtype]]} values != expected.  Values size: {len(values)} "
                f"but output shape: {_shape_text(shape)}")
        flat[i] = values
    return out


def _variable_dense(features, key, dtype, shape, default, who):
    inner = tuple(int(d) for d in shape[1:])
    stride = int(np.prod(inner, dtype=np.int64))
    blocks = []
    for i, fmap in enumerate(features):
        if key not in fmap:
            blocks.append(np.empty((0,) + inner, _NP[dtype]))
            continue
        values = feature_values(fmap[key], dtype, key, who(i), i)
        if stride == 0 or len(values) % stride:
            raise errors.InvalidArgumentError(
                None, None, f"Name: {who(i)}, Key: {key}, Index: {i}.  Number of "
                f"{_TYPE_NAME[_KIND[dtype]]} values is not a multiple of stride length. Saw "
                f"{len(values)} values but output shape is: {_shape_text(shape)}")
        blocks.append(values.reshape((-1,) + inner))
    longest = max((len(b) for b in blocks), default=0)
    default = np.asarray(default)
    pad = default.reshape(-1)[0] if default.size else (b"" if dtype == dtypes.string else 0)
    out = np.full((len(features), longest) + inner, pad, _NP[dtype])
    for i, block in enumerate(blocks):
        out[i, :len(block)] = block
    return out
