"""`tf.io` codecs: SerializeTensor / ParseTensor (TensorProto bytes, as TensorFlow writes
them), DecodeCompressed (ZLIB / GZIP) and DecodeJSONExample (JSON to serialized Example)."""

from __future__ import annotations

import zlib

import numpy as np
from google.protobuf import json_format
from google.protobuf.message import DecodeError

from tensorflux.framework import dtypes, errors
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.framework.tensor_util import make_ndarray, make_tensor_proto
from tensorflux.ops.strings.conversion import map_bytes, scalar_bytes
from tensorflux.protos.example_pb2 import Example
from tensorflux.protos.tensor_pb2 import TensorProto

__all__ = ["serialize_tensor", "parse_tensor", "decode_compressed", "decode_json_example"]

SerializeTensor = define_op("SerializeTensor", inputs=["tensor: T"],
                            outputs=["serialized: string"], attrs=["T: type"],
                            differentiable=False)
ParseTensor = define_op("ParseTensor", inputs=["serialized: string"],
                        outputs=["output: out_type"], attrs=["out_type: type"],
                        differentiable=False)
DecodeCompressed = define_op("DecodeCompressed", inputs=["bytes: string"],
                             outputs=["output: string"],
                             attrs=["compression_type: string = ''"], differentiable=False)
DecodeJSONExample = define_op("DecodeJSONExample", inputs=["json_examples: string"],
                              outputs=["binary_examples: string"], differentiable=False)


# -- SerializeTensor, ParseTensor ---------------------------------------------------------------

@SerializeTensor.shape_fn
def _serialize_tensor_shape(tensor):
    return TensorShape([])


@SerializeTensor.kernel
def _serialize_tensor_kernel(tensor, *, T):
    return scalar_bytes(make_tensor_proto(np.asarray(tensor), dtype=T).SerializeToString())


@ParseTensor.shape_fn
def _parse_tensor_shape(serialized):
    serialized.with_rank(0)
    return TensorShape(None)


def _tensor_proto_class():
    return TensorProto


@ParseTensor.kernel
def _parse_tensor_kernel(serialized, *, out_type):
    if np.ndim(serialized) != 0:
        raise errors.InvalidArgumentError(
            None, None, f"Expected `serialized` to be a scalar, got shape: "
                        f"[{','.join(map(str, np.shape(serialized)))}]")
    proto = _tensor_proto_class()()
    try:
        proto.ParseFromString(bytes(np.asarray(serialized, dtype=object).item()))
    except DecodeError:
        raise errors.InvalidArgumentError(
            None, None, "Could not parse `serialized` as TensorProto") from None
    parsed = dtypes.as_dtype(proto.dtype) if proto.dtype else None
    if parsed is None or parsed.base_dtype != out_type.base_dtype:
        name = parsed.name if parsed is not None else "invalid"
        raise errors.InvalidArgumentError(
            None, None, f"Type mismatch between parsed tensor ({name}) and dtype "
                        f"({out_type.name})")
    return make_ndarray(proto)


def serialize_tensor(tensor, name=None):
    """The tensor as a serialized TensorProto (a string scalar; the bytes TF writes).

    Example:
        >>> tf.io.parse_tensor(tf.io.serialize_tensor([1.0, 2.0]), tf.float32)
    """
    return SerializeTensor(convert_to_tensor(tensor, name="tensor"), name=name)


def parse_tensor(serialized, out_type, name=None):
    """Parses a serialized TensorProto (string scalar) into a tensor of `out_type`.

    Raises (at run time):
        InvalidArgumentError: the bytes are not a TensorProto, or its dtype is not `out_type`.
    """
    return ParseTensor(convert_to_tensor(serialized, dtype=dtypes.string),
                       out_type=dtypes.as_dtype(out_type), name=name)


# -- DecodeCompressed ---------------------------------------------------------------------------

_WBITS = {"ZLIB": zlib.MAX_WBITS, "GZIP": 16 + zlib.MAX_WBITS}


@DecodeCompressed.shape_fn
def _decode_compressed_shape(bytes, *, compression_type):
    if compression_type not in ("", *_WBITS):
        raise ValueError(f"Unsupported compression_type {compression_type!r}: expected '', "
                         f"'ZLIB' or 'GZIP'")
    return bytes


@DecodeCompressed.kernel
def _decode_compressed_kernel(bytes, *, compression_type):
    if not compression_type:
        return np.asarray(bytes, dtype=object).copy()
    wbits = _WBITS[compression_type]

    def inflate(data):
        try:
            return zlib.decompress(data, wbits)
        except zlib.error as e:
            raise errors.DataLossError(None, None, f"{compression_type} data is corrupt: "
                                                   f"{e}") from None

    return map_bytes(inflate, bytes)


def decode_compressed(bytes, compression_type="", name=None):
    """Decompresses each string of `bytes` ("" leaves them as they are, "ZLIB" or "GZIP").

    Raises:
        ValueError: an unknown `compression_type`.
        DataLossError (at run time): corrupt compressed data.
    """
    return DecodeCompressed(convert_to_tensor(bytes, dtype=dtypes.string),
                            compression_type=compression_type, name=name)


# -- DecodeJSONExample --------------------------------------------------------------------------

DecodeJSONExample.shape_fn(lambda json_examples: json_examples)


@DecodeJSONExample.kernel
def _decode_json_example_kernel(json_examples):
    def to_binary(text):
        try:
            return json_format.Parse(text, Example()).SerializeToString()
        except json_format.ParseError as e:
            raise errors.InvalidArgumentError(None, None, f"Error while parsing JSON: {e}") \
                from None

    return map_bytes(to_binary, json_examples)


def decode_json_example(json_examples, name=None):
    """Converts JSON-encoded Example protos (string tensor) to binary serialized Examples.

    Example:
        >>> tf.io.decode_json_example('{"features": {"feature": {"a": {"int64List": '
        ...                           '{"value": [1]}}}}}')
    """
    return DecodeJSONExample(convert_to_tensor(json_examples, dtype=dtypes.string), name=name)
