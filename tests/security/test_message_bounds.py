"""Bounded messages: a short TensorProto cannot make a server allocate gigabytes, streamed
RecvTensor bodies are checked against their header, gRPC messages are size-limited."""

import time

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.distributed.rpc.security import RpcSecurity
from tensorflux.distributed.rpc.tensor_codec import (
    assemble_frames,
    decode_tensor,
    tensor_frames,
)
from tensorflux.distributed.rpc.transport import GrpcWorkerClient
from tensorflux.distributed.server import Server
from tensorflux.framework import errors
from tensorflux.protos import tensor_pb2, worker_pb2

F32 = tf.float32.as_datatype_enum


def _short_huge_proto(size=2**31, dtype=F32):
    proto = tensor_pb2.TensorProto(dtype=dtype)
    proto.tensor_shape.dim.add(size=size)
    proto.float_val.append(1.0)
    return proto


def test_70_byte_proto_declaring_gigabytes_is_refused_before_allocating():
    proto = _short_huge_proto()
    assert proto.ByteSize() < 70
    start = time.perf_counter()
    with pytest.raises(errors.InvalidArgumentError, match="over the limit of 2147483647"):
        tf.make_ndarray(proto)
    with pytest.raises(errors.InvalidArgumentError, match="over the limit"):
        decode_tensor(proto)
    int8 = tensor_pb2.TensorProto(dtype=tf.int8.as_datatype_enum)
    int8.tensor_shape.dim.add(size=2**31)
    int8.int_val.append(1)
    with pytest.raises(errors.InvalidArgumentError, match="over the limit"):
        tf.make_ndarray(int8)
    assert time.perf_counter() - start < 0.5


def test_declared_size_limit_is_configurable_and_content_must_agree():
    proto = _short_huge_proto(size=1000)
    with pytest.raises(errors.InvalidArgumentError, match="over the limit of 100 bytes"):
        tf.make_ndarray(proto, max_bytes=100)
    np.testing.assert_array_equal(tf.make_ndarray(proto), np.ones(1000, np.float32))
    too_many = tensor_pb2.TensorProto(dtype=F32)
    too_many.tensor_shape.dim.add(size=2)
    too_many.float_val.extend([1.0, 2.0, 3.0])
    with pytest.raises(errors.InvalidArgumentError, match="3 values in float_val for 2"):
        tf.make_ndarray(too_many)
    content = tensor_pb2.TensorProto(dtype=F32, tensor_content=b"\0" * 12)
    content.tensor_shape.dim.add(size=4)
    with pytest.raises(errors.InvalidArgumentError, match="12 bytes"):
        tf.make_ndarray(content)
    with pytest.raises(errors.InvalidArgumentError, match="12 bytes"):
        decode_tensor(content)
    negative = tensor_pb2.TensorProto(dtype=F32)
    negative.tensor_shape.dim.add(size=-4)
    with pytest.raises(errors.InvalidArgumentError, match="negative dimension"):
        tf.make_ndarray(negative)
    with pytest.raises(errors.InvalidArgumentError, match="invalid dtype"):
        tf.make_ndarray(tensor_pb2.TensorProto(dtype=999))


def test_streamed_body_is_checked_against_its_header():
    value = np.arange(300_000, dtype=np.float32)
    frames = list(tensor_frames(value, False, 7))
    out, dead, incarnation = assemble_frames(iter(frames))
    np.testing.assert_array_equal(out, value)
    header = worker_pb2.RecvTensorResponse.FromString(frames[0])
    header.tensor.tensor_shape.dim[0].size = 2**40  # a header declaring 4 TB
    header.total_bytes = 2**42
    with pytest.raises(errors.InvalidArgumentError, match="over the limit"):
        assemble_frames(iter([header.SerializeToString()] + frames[1:]))
    header.tensor.tensor_shape.dim[0].size = 10
    with pytest.raises(errors.DataLossError, match="header declares"):
        assemble_frames(iter([header.SerializeToString()] + frames[1:]))
    with pytest.raises(errors.DataLossError):  # more frames than the header's size
        assemble_frames(iter([frames[0]] + frames[1:] + frames[1:]))
    with pytest.raises(errors.InvalidArgumentError, match="over the limit"):
        assemble_frames(iter(frames), max_bytes=1000)


def test_grpc_messages_over_the_configured_limit_are_refused():
    server = Server({"localhost": ["localhost:0"]},
                    security=RpcSecurity(max_message_bytes=1 << 20))
    address = server.target[len("grpc://"):]
    big = worker_pb2.RunGraphRequest(graph_handle="x")
    big.send.add(name="0").tensor.CopyFrom(tf.make_tensor_proto(np.zeros(1 << 19, np.float32)))
    client = GrpcWorkerClient("/job:localhost/replica:0/task:0", address, 5.0,
                              security=RpcSecurity())
    try:
        with pytest.raises(errors.ResourceExhaustedError):
            client.call("run_graph", big)
        assert client.call("get_status", worker_pb2.GetStatusRequest()).device_attributes
    finally:
        client.close()
        server.stop()
