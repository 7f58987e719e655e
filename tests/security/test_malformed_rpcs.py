"""Malformed requests to a real server over gRPC (loopback): each gets a typed status, nothing
is executed from a graph's values, and the server serves a valid step afterwards."""

import os
import re
import time

import grpc
import numpy as np
import pytest

import tensorflux as tf
from tensorflux.distributed.rpc.transport import GrpcWorkerClient
from tensorflux.framework import errors
from tensorflux.protos import (
    master_pb2,
    master_service_pb2_grpc,
    worker_pb2,
    worker_service_pb2_grpc,
)
from tensorflux.runtime.device import local_devices
from tensorflux.runtime.fastpath import FastPath
from tensorflux.runtime.graph_ir import Node
from tensorflux.runtime.plan import Plan

F32 = tf.float32.as_datatype_enum
INVALID = errors.INVALID_ARGUMENT


@pytest.fixture(scope="module")
def server():
    server = tf.train.Server.create_local_server()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def stubs(server):
    channel = grpc.insecure_channel(server.target[len("grpc://"):])
    yield (worker_service_pb2_grpc.WorkerServiceStub(channel),
           master_service_pb2_grpc.MasterServiceStub(channel))
    channel.close()


def _arg_retval_graph(index_attr, device):
    graph_def = tf.GraphDef()
    arg = graph_def.node.add(name="arg", op="_Arg", device=device)
    arg.attr["T"].type = F32
    arg.attr["index"].CopyFrom(index_attr)
    ret = graph_def.node.add(name="ret", op="_Retval", input=["arg"], device=device)
    ret.attr["T"].type = F32
    ret.attr["index"].i = 0
    return graph_def


def _register(stub, graph_def):
    return stub.RegisterGraph(worker_pb2.RegisterGraphRequest(session_handle="fuzz",
                                                              graph_def=graph_def), timeout=5)


def _valid_step_still_works(server):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2])
        y = x * 3.0 + 1.0
        config = tf.ConfigProto()
        config.rpc_options.use_rpc_for_inprocess_master = True
        with tf.Session(server.target, config=config) as sess:
            np.testing.assert_allclose(sess.run(y, {x: [1.0, 2.0]}), [4.0, 7.0])


def test_string_arg_index_is_refused_and_never_executed(server, stubs, tmp_path):
    marker = tmp_path / "pwned"
    payload = f"0] if __import__('pathlib').Path({str(marker)!r}).write_text('x') else feeds[0"
    attr = tf.AttrValue(s=payload.encode())
    device = server.worker.devices[0].name
    response = _register(stubs[0], _arg_retval_graph(attr, device))
    assert response.status.code == INVALID
    assert "attr 'index'" in response.status.message
    assert not response.graph_handle
    assert not marker.exists()
    _valid_step_still_works(server)


def test_fast_path_never_puts_graph_values_in_source(tmp_path):
    """Defense in depth: even a Node that skipped validation cannot inject source."""
    marker = tmp_path / "pwned"
    device = local_devices("localhost", 0, 1)[0]
    payload = f"0] if __import__('pathlib').Path({str(marker)!r}).write_text('x') else feeds[0"
    arg = Node("arg", "_Arg", {"T": tf.float32, "index": payload}, [], [],
               output_dtypes=[tf.float32])
    ident = Node("y", "Identity", {"T": tf.float32}, [(arg, 0)], [],
                 output_dtypes=[tf.float32])
    with pytest.raises(errors.InvalidArgumentError, match="'index' must be a non-negative int"):
        FastPath(Plan([arg, ident], device, [(ident, 0)]))
    assert not marker.exists()
    good = Node("arg", "_Arg", {"T": tf.float32, "index": 1}, [], [], output_dtypes=[tf.float32])
    ident = Node("y", "Identity", {"T": tf.float32}, [(good, 0)], [],
                 output_dtypes=[tf.float32])
    path = FastPath(Plan([good, ident], device, [(ident, 0)]))
    words = set(re.findall(r"[A-Za-z_]\w*", path.source))
    fixed = {"def", "_step", "ctx", "feeds", "return", "read", "_", "ov", "spawn", "join"}
    assert words <= fixed | {w for w in words if re.fullmatch(r"[vkaj]\d+", w)}, path.source
    assert path.run(None, {1: np.float32(5.0)})[0] == 5.0


@pytest.mark.parametrize("case", ["unknown_op", "attr_kind", "huge_tensor", "cycle",
                                  "bad_input_index", "arity", "negative_index"])
def test_malformed_register_graph_gets_a_typed_status(server, stubs, case):
    device = server.worker.devices[0].name
    graph_def = _arg_retval_graph(tf.AttrValue(i=0), device)
    expected = INVALID
    if case == "unknown_op":
        graph_def.node[0].op = "NoSuchOp"
        expected = errors.NOT_FOUND
    elif case == "attr_kind":
        graph_def.node[0].attr["T"].CopyFrom(tf.AttrValue(s=b"float"))
    elif case == "huge_tensor":
        const = graph_def.node.add(name="c", op="Const", device=device)
        const.attr["dtype"].type = F32
        const.attr["value"].tensor.dtype = F32
        const.attr["value"].tensor.tensor_shape.dim.add(size=2**40)
        const.attr["value"].tensor.float_val.append(1.0)
    elif case == "cycle":
        for name, other in (("a", "b"), ("b", "a")):
            node = graph_def.node.add(name=name, op="Identity", input=[other], device=device)
            node.attr["T"].type = F32
    elif case == "bad_input_index":
        graph_def.node[1].input[0] = "arg:5"
    elif case == "arity":
        graph_def.node[1].input.append("arg")
    elif case == "negative_index":
        graph_def.node[0].attr["index"].i = -3
    response = _register(stubs[0], graph_def)
    assert response.status.code == expected, response.status.message
    assert not response.graph_handle
    _valid_step_still_works(server)


def _run_graph_status(worker, request):
    """(code, mentions the size limit): a status in the response or the RPC's own status."""
    try:
        status = worker.RunGraph(request, timeout=5).status
        return status.code, "over the limit" in status.message
    except grpc.RpcError as err:
        return err.code().value[0], "over the limit" in err.details()


def test_malformed_run_graph_and_recv_tensor(server, stubs):
    worker = stubs[0]
    device = server.worker.devices[0].name
    handle = _register(worker, _arg_retval_graph(tf.AttrValue(i=0), device)).graph_handle
    assert handle
    huge = worker_pb2.RunGraphRequest(graph_handle=handle, step_id=11)
    tensor = huge.send.add(name="0").tensor
    tensor.dtype = F32
    tensor.tensor_shape.dim.add(size=2**31)
    tensor.float_val.append(1.0)
    assert _run_graph_status(worker, huge) == (INVALID, True)
    short = worker_pb2.RunGraphRequest(graph_handle=handle, step_id=12)
    tensor = short.send.add(name="0").tensor
    tensor.dtype = F32
    tensor.tensor_shape.dim.add(size=4)
    tensor.tensor_content = b"\0" * 3
    assert _run_graph_status(worker, short)[0] == INVALID
    bad_name = worker_pb2.RunGraphRequest(graph_handle=handle, step_id=13)
    bad_name.send.add(name="zero").tensor.dtype = F32
    assert _run_graph_status(worker, bad_name)[0] == INVALID
    unknown = worker_pb2.RunGraphRequest(graph_handle="nope", step_id=14)
    assert worker.RunGraph(unknown, timeout=5).status.code == errors.ABORTED
    good = worker_pb2.RunGraphRequest(graph_handle=handle, step_id=15)
    good.send.add(name="0").tensor.CopyFrom(tf.make_tensor_proto(np.float32([1.5, 2.5])))
    response = worker.RunGraph(good, timeout=5)
    assert response.status.code == 0
    np.testing.assert_allclose(tf.make_ndarray(response.recv[0].tensor), [1.5, 2.5])
    client = GrpcWorkerClient("/job:localhost/replica:0/task:0",
                              server.target[len("grpc://"):], 5.0)
    outcome = []
    for key in ["", ";;;", "garbage;" * 50, device + ";0;x;y;0:0"]:
        done = []
        handle = client.recv_tensor_async(99, key, lambda *out, done=done: done.append(out))
        for _ in range(50):
            if done:
                break
            time.sleep(0.01)
        if not done:
            handle.cancel()  # nobody sends that key: the client gives up, the server frees it
        outcome.append(done[0][0] if done else "cancelled")
    client.close()
    assert all(o == "cancelled" or isinstance(o, errors.OpError) for o in outcome), outcome
    _valid_step_still_works(server)


@pytest.mark.parametrize("rpc", ["CreateSession", "ExtendSession"])
def test_malformed_session_graphs_get_a_typed_status(server, stubs, rpc):
    master = stubs[1]
    graph_def = tf.GraphDef()
    node = graph_def.node.add(name="c", op="Const")
    node.attr["dtype"].type = F32
    node.attr["value"].CopyFrom(tf.AttrValue(i=3))  # a tensor attr given as an int
    if rpc == "CreateSession":
        response = master.CreateSession(master_pb2.CreateSessionRequest(graph_def=graph_def),
                                        timeout=5)
    else:
        created = master.CreateSession(master_pb2.CreateSessionRequest(), timeout=5)
        response = master.ExtendSession(master_pb2.ExtendSessionRequest(
            session_handle=created.session_handle, graph_def=graph_def,
            current_graph_version=created.graph_version), timeout=5)
    assert response.status.code == INVALID
    assert "attr 'value'" in response.status.message
    _valid_step_still_works(server)


def test_marker_directory_untouched(tmp_path):
    assert os.listdir(tmp_path) == []
