"""Fuzz of the RPC handlers: the gRPC servicers' methods called directly with mutated request
protos. Every call answers (a response whose status is typed, or an abort with a typed gRPC
code); nothing escapes as an untyped exception; the server then runs a valid step."""

import threading

import numpy as np
import pytest
from graph_mutations import BASES, _random_tensor, mutate
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tensorflux as tf
from tensorflux.distributed.rpc.grpc_server import _master_servicer, _worker_servicer
from tensorflux.framework import errors
from tensorflux.protos import master_pb2, worker_pb2

UNTYPED = {errors.UNKNOWN, errors.INTERNAL}
COUNTS = {"calls": 0, "ok": 0, "refused": 0}


class Aborted(Exception):
    def __init__(self, code, details):
        super().__init__(details)
        self.code = code


class FakeContext:
    def __init__(self):
        self.callbacks = []

    def abort(self, code, details):
        raise Aborted(code, details)

    def add_callback(self, callback):
        self.callbacks.append(callback)
        return True

    def time_remaining(self):
        return None

    def is_active(self):
        return True


@pytest.fixture(scope="module")
def services():
    server = tf.train.Server.create_local_server()
    worker, master = _worker_servicer(server.worker), _master_servicer(server.master)
    device = server.worker.devices[0].name
    graph_def = tf.GraphDef()
    arg = graph_def.node.add(name="arg", op="_Arg", device=device)
    arg.attr["T"].type = tf.float32.as_datatype_enum
    arg.attr["index"].i = 0
    ret = graph_def.node.add(name="ret", op="_Retval", input=["arg"], device=device)
    ret.attr["T"].type = tf.float32.as_datatype_enum
    ret.attr["index"].i = 0
    handle = worker.RegisterGraph(worker_pb2.RegisterGraphRequest(graph_def=graph_def),
                                  FakeContext()).graph_handle
    session = master.CreateSession(master_pb2.CreateSessionRequest(graph_def=BASES[1]),
                                   FakeContext()).session_handle
    assert handle and session
    yield server, worker, master, graph_def, handle, session
    server.stop()


def _code(call):
    """The status code of a handler call: its response's status, or its abort's code."""
    COUNTS["calls"] += 1
    try:
        response = call()
    except Aborted as aborted:
        COUNTS["refused"] += 1
        return aborted.code.value[0]
    code = response.status.code if response.HasField("status") else 0
    COUNTS["ok" if code == 0 else "refused"] += 1
    return code


FUZZ = settings(max_examples=400, deadline=None, derandomize=True,
                suppress_health_check=list(HealthCheck))


@FUZZ
@given(st.data())
def test_mutated_requests_get_typed_answers(services, data):
    server, worker, master, partition, handle, session = services
    rpc = data.draw(st.sampled_from(["RegisterGraph", "RunGraph", "CreateSession",
                                     "ExtendSession", "RunStep", "RecvTensor",
                                     "RecvTensors"]))
    context = FakeContext()
    if rpc == "RegisterGraph":
        base = data.draw(st.sampled_from([partition] + BASES))
        request = worker_pb2.RegisterGraphRequest(session_handle="fuzz",
                                                  graph_def=mutate(data, base))
        code = _code(lambda: worker.RegisterGraph(request, context))
    elif rpc == "RunGraph":
        request = worker_pb2.RunGraphRequest(
            graph_handle=data.draw(st.sampled_from([handle, "", "x/y/g9"])),
            step_id=data.draw(st.integers(-2**63, 2**63 - 1)))
        for _ in range(data.draw(st.integers(0, 2))):
            item = request.send.add(name=data.draw(st.sampled_from(["0", "1", "-1", "x", ""])))
            item.tensor.CopyFrom(_random_tensor(data))
        code = _code(lambda: worker.RunGraph(request, context))
    elif rpc in ("CreateSession", "ExtendSession"):
        graph_def = mutate(data, data.draw(st.sampled_from(BASES)))
        if rpc == "CreateSession":
            request = master_pb2.CreateSessionRequest(graph_def=graph_def)
            code = _code(lambda: master.CreateSession(request, context))
        else:
            request = master_pb2.ExtendSessionRequest(
                session_handle=data.draw(st.sampled_from([session, "nope"])),
                graph_def=graph_def)
            code = _code(lambda: master.ExtendSession(request, context))
    elif rpc == "RunStep":
        request = master_pb2.RunStepRequest(session_handle=session)
        for _ in range(data.draw(st.integers(0, 2))):
            feed = request.feed.add(name=data.draw(st.sampled_from(["x:0", "x", "w:0", "q:9"])))
            feed.tensor.CopyFrom(_random_tensor(data))
        request.fetch.extend(data.draw(st.lists(
            st.sampled_from(["cat:0", "flat:0", "s:0", "x:0", "nope:0", "cat:7", ":", "w"]),
            max_size=2)))
        code = _code(lambda: master.RunStep(request, context))
    else:
        keys = st.sampled_from(["", ";", "a;b;c;d;e", "\x00" * 9])
        step_id = data.draw(st.integers(-2**63, 2**63 - 1))
        if rpc == "RecvTensor":
            request = worker_pb2.RecvTensorRequest(step_id=step_id,
                                                   rendezvous_key=data.draw(keys))
            serve = worker.RecvTensor
        else:
            request = worker_pb2.RecvTensorsRequest(
                step_id=step_id, rendezvous_key=data.draw(st.lists(keys, max_size=3)))
            serve = worker.RecvTensors
        frames = []
        thread = threading.Thread(target=lambda: frames.extend(
            _drain(serve(request, context))), daemon=True)
        thread.start()
        thread.join(0.05)
        for callback in context.callbacks:  # the receiver goes away: the handler returns
            callback()
        thread.join(2.0)
        assert not thread.is_alive()
        code = 0
    assert code not in UNTYPED, (rpc, code)


def _drain(stream):
    try:
        return list(stream)
    except Aborted:
        return []


def test_server_serves_after_the_fuzz(services):
    server = services[0]
    config = tf.ConfigProto()
    config.rpc_options.use_rpc_for_inprocess_master = True
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [3])
        with tf.Session(server.target, config=config) as sess:
            np.testing.assert_allclose(sess.run(x * 2.0, {x: [1, 2, 3]}), [2, 4, 6])
    if COUNTS["calls"]:
        print(f"\nRPC handler fuzz: {COUNTS}")
