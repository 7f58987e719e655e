"""Receive-first partitions (`distributed/receive_first.py`): which partitions qualify, the
values of steps run that way (against the executor form and one process), and the failure
paths (a failing sender, a deadline, a cancelled transfer), over gRPC on 127.0.0.1."""

import threading
import time

import numpy as np
import pytest
from cluster_helpers import free_port

import tensorflux as tf
from tensorflux.distributed import receive_first
from tensorflux.distributed import worker as worker_mod
from tensorflux.distributed.rendezvous_mgr import RemoteRendezvous
from tensorflux.distributed.rpc.transfers import Streams
from tensorflux.distributed.rpc.transport import InProcessWorkerClient
from tensorflux.framework import errors
from tensorflux.runtime.cancellation import CancellationManager
from tensorflux.runtime.device import local_devices
from tensorflux.runtime.graph_ir import Node
from tensorflux.runtime.rendezvous import LocalRendezvous, create_key
from tensorflux.runtime.step import DEAD, StepContext

PS = "/job:ps/replica:0/task:0"
WORKER = "/job:worker/replica:0/task:0"
CPU = f"{WORKER}/device:CPU:0"


# -- which partitions qualify -----------------------------------------------------------------


def recv(name, source=PS, **attrs):
    return Node(name, "_Recv", dict({
        "tensor_type": tf.float32, "tensor_name": name, "send_device": f"{source}/device:CPU:0",
        "send_device_incarnation": 7, "recv_device": CPU}, **attrs), [], [], CPU, [tf.float32])


def op(name, kind, inputs, controls=()):
    return Node(name, kind, {"T": tf.float32}, [(n, 0) for n in inputs], list(controls), CPU,
                [tf.float32])


def send(name, source, controls=()):
    return Node(name, "_Send", {"T": tf.float32, "tensor_name": name, "send_device": CPU,
                                "send_device_incarnation": 1,
                                "recv_device": f"{PS}/device:CPU:0"},
                [(source, 0)], list(controls), CPU, [])


@pytest.fixture(scope="module")
def device():
    return local_devices("worker", 0, 1)[0]


def plan(nodes, device, fetches=()):
    for node in nodes:
        node.assigned_device = CPU
    return receive_first.plan_receive_first(nodes, WORKER, device, list(fetches), {})


def test_a_partition_sending_only_what_follows_every_receive_qualifies(device):
    a, b = recv("a"), recv("b")
    product = op("product", "Mul", [a, b])
    total = op("total", "AddV2", [product, a])
    found = plan([a, b, product, total, send("out", total)], device, [(total, 0)])
    assert found is not None
    assert found.keys == (create_key(f"{PS}/device:CPU:0", 7, CPU, "a"),
                          create_key(f"{PS}/device:CPU:0", 7, CPU, "b"))
    rendezvous = LocalRendezvous()
    ctx = StepContext(1, device, rendezvous, None, None, None)
    feeds = dict(zip(found.indices, (np.float32([2, 3]), np.float32([5, 7]))))
    (value,) = found.runner.run(ctx, feeds)
    np.testing.assert_array_equal(value, [12, 24])  # a * b + a
    sent, _ = rendezvous.recv(create_key(CPU, 1, f"{PS}/device:CPU:0", "out"), timeout=1)
    np.testing.assert_array_equal(sent, [12, 24])
    # A control dependency counts as following a receive.
    c = recv("c")
    gate = op("gate", "Identity", [a], controls=[c])
    assert plan([a, c, gate, send("gated", gate)], device) is not None


def test_a_send_that_may_go_before_some_receive_disqualifies(device):
    a, b = recv("a"), recv("b")
    only_a = op("only_a", "Identity", [a])
    assert plan([a, b, only_a, send("early", only_a)], device) is None


def test_the_head_runs_before_the_receives_and_feeds_the_body(device):
    """What depends on no receive (a PS's variable reads and their sends) runs first; the
    body gets the head's values it uses as feeds."""
    fed = Node("x", "_Arg", {"T": tf.float32, "index": 0}, [], [], CPU, [tf.float32])
    doubled = op("doubled", "AddV2", [fed, fed])
    a = recv("a")
    total = op("total", "Mul", [doubled, a])
    found = plan([a, fed, doubled, total, send("independent", doubled), send("out", total)],
                 device, [(total, 0), (doubled, 0)])
    assert found is not None and found.head is not None and len(found.cuts) == 1
    rendezvous = RemoteRendezvous(3, WORKER, None, None)
    rendezvous.expect_pushes(found.keys)
    ctx = StepContext(3, device, rendezvous, None, None, None)
    out_key = create_key(CPU, 1, f"{PS}/device:CPU:0", "out")
    early_key = create_key(CPU, 1, f"{PS}/device:CPU:0", "independent")

    def read():  # the head has sent already when the transfers are read
        np.testing.assert_array_equal(rendezvous.recv(early_key, timeout=1)[0], [2, 4])
        rendezvous.send(found.keys[0], np.float32([10, 100]))

    values = found.run(ctx, {0: np.float32([1, 2])}, [read], rendezvous)
    np.testing.assert_array_equal(values[0], [20, 400])
    np.testing.assert_array_equal(values[1], [2, 4])
    np.testing.assert_array_equal(rendezvous.recv(out_key, timeout=1)[0], [20, 400])
    # A dead received value: the body's executor form runs, with its receives.
    rendezvous = RemoteRendezvous(4, WORKER, None, None)
    rendezvous.expect_pushes(found.keys)
    ctx = StepContext(4, device, rendezvous, CancellationManager(), None, None)
    values = found.run(ctx, {0: np.float32([1, 2])},
                       [lambda: rendezvous.send(found.keys[0], None, True)], rendezvous)
    assert values[0] is DEAD
    assert rendezvous.recv(out_key, timeout=1)[1]  # the send went out dead


def test_local_client_terminal_and_loop_receives_disqualify(device):
    assert plan([recv("same_task", source=WORKER)], device) is None
    assert plan([recv("fed", client_terminal=True)], device) is None
    a = recv("a")
    enter = Node("enter", "Enter", {"T": tf.float32, "frame_name": "f"}, [(a, 0)], [], CPU,
                 [tf.float32])
    assert plan([a, enter], device) is None
    assert plan([op("no_receives", "Identity", [Node(
        "x", "_Arg", {"T": tf.float32, "index": 0}, [], [], CPU, [tf.float32])])], device) is None


# -- the rendezvous and transfer pieces ---------------------------------------------------------


def key(name):
    return create_key(f"{PS}/device:CPU:0", 0x11, CPU, name)


def test_take_received_returns_values_or_none_for_a_dead_one_or_the_steps_error():
    rendezvous = RemoteRendezvous(5, WORKER, None, None)
    rendezvous.expect_pushes([key("w"), key("b")])  # as `prefetch` marks what it receives
    rendezvous.send(key("w"), np.float32(2.0))
    rendezvous.send(key("b"), None, True)
    assert rendezvous.take_received([key("w"), key("b")]) is None  # dead: the executor runs
    assert rendezvous.recv(key("w"), timeout=1)[0] == 2.0  # and finds the values there
    rendezvous.send(key("v"), np.float32(3.0))
    assert rendezvous.take_received([key("v")]) == [3.0]
    with pytest.raises(errors.InternalError, match="not received"):
        rendezvous.take_received([key("v")])
    rendezvous.abort(errors.UnavailableError(None, None, "ps went away"))
    with pytest.raises(errors.UnavailableError, match="ps went away"):
        rendezvous.take_received([key("w")])


def test_an_inline_reader_waits_for_in_process_sends_and_honours_its_timeout():
    sender = worker_mod.Worker(PS, local_devices("ps", 0, 1), lambda task: None)
    client = InProcessWorkerClient(sender, PS)
    rendezvous = RemoteRendezvous(9, WORKER, lambda task: client, None)
    readers = []
    incarnation = sender.devices[0].incarnation  # the sender's, checked on arrival
    keys = tuple(create_key(f"{PS}/device:CPU:0", incarnation, CPU, n) for n in ("w", "b"))
    rendezvous.prefetch(PS, keys, readers, timeout=5.0)
    assert len(readers) == 1
    source = sender.rendezvous.find_or_create(9)
    threading.Timer(0.05, lambda: [source.send(k, np.float32(i)) for i, k in
                                   enumerate(keys)]).start()
    readers[0]()
    assert rendezvous.take_received(keys) == [0.0, 1.0]
    stalled = RemoteRendezvous(10, WORKER, lambda task: client, None)
    readers = []
    stalled.prefetch(PS, (key("never"),), readers, timeout=0.2)
    start = time.monotonic()
    readers[0]()
    assert time.monotonic() - start < 2.0
    with pytest.raises(errors.DeadlineExceededError):
        stalled.take_received((key("never"),))
    stream = Streams(1, lambda *a: None, lambda error: None)
    wait = stream.waiter(None)
    stream.fail(errors.CancelledError(None, None, "cancelled"))
    wait()  # a failed transfer ends the wait


# -- steps over gRPC ---------------------------------------------------------------------------


def rpc_config(timeout_ms=10000):
    config = tf.ConfigProto(operation_timeout_in_ms=timeout_ms)
    config.rpc_options.use_rpc_for_inprocess_master = True
    return config


@pytest.fixture(scope="module")
def servers():
    spec = tf.train.ClusterSpec({"ps": [f"localhost:{free_port()}"],
                                 "worker": [f"localhost:{free_port()}"]})
    found = [tf.train.Server(spec, job, 0, config=rpc_config()) for job in ("ps", "worker")]
    yield found
    for server in found:
        server.stop()


def train_steps(target, cluster, steps=2):
    rng = np.random.RandomState(0)
    x_value = rng.rand(8, 6).astype(np.float32)
    y_value = rng.randint(0, 3, 8)
    placement = tf.train.replica_device_setter(worker_device=WORKER, cluster=cluster) \
        if target else None
    with tf.Graph().as_default():
        with tf.device(placement):
            x = tf.placeholder(tf.float32, [8, 6])
            y = tf.placeholder(tf.int64, [8])
            h = tf.layers.dense(x, 5, activation=tf.nn.relu,
                                kernel_initializer=tf.constant_initializer(0.1))
            logits = tf.layers.dense(h, 3, kernel_initializer=tf.constant_initializer(-0.2))
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
                labels=y, logits=logits))
            train = tf.train.MomentumOptimizer(0.1, 0.9).minimize(loss)
        variables = tf.global_variables()
        with tf.Session(target, config=rpc_config() if target else None) as sess:
            sess.run(tf.variables_initializer(variables))
            losses = [sess.run([loss, train], {x: x_value, y: y_value})[0]
                      for _ in range(steps)]
            return losses, sess.run(tf.trainable_variables())


def test_training_steps_receive_first_equal_the_executor_form_and_one_process(servers,
                                                                              monkeypatch):
    runs = []
    original = worker_mod.Worker._receive_then_run

    def counted(self, *args):
        runs.append(self.task)
        return original(self, *args)

    monkeypatch.setattr(worker_mod.Worker, "_receive_then_run", counted)
    target, cluster = servers[1].target, servers[0].cluster_spec
    fast_losses, fast_values = train_steps(target, cluster)
    assert runs.count(WORKER) == 2  # the worker's partition received first, every step
    monkeypatch.setattr(worker_mod, "RECEIVE_FIRST", False)
    runs.clear()
    slow_losses, slow_values = train_steps(target, cluster)
    assert runs == []
    ref_losses, ref_values = train_steps("", None)
    assert fast_losses[0] > fast_losses[-1]
    np.testing.assert_array_equal(fast_losses, slow_losses)
    np.testing.assert_allclose(fast_losses, ref_losses, rtol=1e-6)
    for fast, slow, ref in zip(fast_values, slow_values, ref_values):
        np.testing.assert_array_equal(fast, slow)
        np.testing.assert_allclose(fast, ref, rtol=1e-5, atol=1e-6)


def test_a_failing_sender_ends_a_receive_first_step_in_bounded_time(servers):
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(np.ones(4, np.float32), name="rf_checked")
            bad = tf.debugging.check_numerics(v / tf.constant(0.0), "ps side failure")
        with tf.device("/job:worker/task:0"):
            out = tf.identity(bad) * 3.0
        with tf.Session(servers[1].target, config=rpc_config()) as sess:
            sess.run(v.initializer)
            start = time.monotonic()
            with pytest.raises(errors.InvalidArgumentError, match="ps side failure"):
                sess.run(out)
            assert time.monotonic() - start < 5.0


def test_a_receive_first_step_waiting_past_its_deadline_fails_in_bounded_time(servers):
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            queue = tf.FIFOQueue(2, tf.float32, shapes=[()], name="rf_never_fed")
            value = queue.dequeue()
        with tf.device("/job:worker/task:0"):
            out = value * 2.0
        with tf.Session(servers[1].target, config=rpc_config(timeout_ms=500)) as sess:
            start = time.monotonic()
            with pytest.raises(errors.DeadlineExceededError):
                sess.run(out)
            assert time.monotonic() - start < 5.0
            sess.run(queue.enqueue(4.0))
            assert sess.run(out) == 8.0  # the session still works


def test_a_whole_recv_tensors_answers_in_one_message(servers, monkeypatch):
    """A receiver that waits for every tensor anyway asks for them in one message (unless
    some come more than WHOLE_WAIT_SECS after the first); otherwise each goes as soon as it
    is sent."""
    from tensorflux.distributed.rpc import grpc_server, tensor_codec
    from tensorflux.distributed.rpc.transport import GrpcWorkerClient
    from tensorflux.protos import worker_pb2

    ps = servers[0]
    incarnation = ps.worker.devices[0].incarnation
    client = GrpcWorkerClient(PS, ps.target[len("grpc://"):])
    try:
        for step_id, whole, wait, expected in ((77, True, 5.0, 1), (78, False, 5.0, 2),
                                               (79, True, 0.01, 2)):
            monkeypatch.setattr(grpc_server, "WHOLE_WAIT_SECS", wait)
            keys = [create_key(f"{PS}/device:CPU:0", incarnation, CPU, n) for n in "ab"]
            source = ps.worker.rendezvous.find_or_create(step_id)
            call = client._recv_many(worker_pb2.RecvTensorsRequest(
                step_id=step_id, rendezvous_key=keys, whole=whole), timeout=5.0)
            threading.Timer(0.05, source.send, (keys[1], np.float32(2.0))).start()
            threading.Timer(0.3, source.send, (keys[0], np.arange(3, dtype=np.float32))).start()
            messages = list(call)
            assert len(messages) == expected
            got = list(tensor_codec.read_tensors(tensor_codec.unbundle_frames(messages), 2))
            assert [g[0] for g in got] == [1, 0]
            np.testing.assert_array_equal(got[1][1], [0, 1, 2])
            assert got[0][1] == 2.0 and got[0][3] == incarnation
    finally:
        client.close()


def test_a_failure_waiting_on_a_receive_that_never_comes_is_not_held_back(servers):
    """The worker's partition receives `a` and `b`; `b` waits in an empty queue on the PS and
    a node using only `a` fails: past FALLBACK_SECS the executor form runs that node, and the
    step fails at once, as the executor alone would, cancelling the PS's dequeue."""
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            a = tf.Variable(np.ones(3, np.float32), name="rf_a")
            queue = tf.FIFOQueue(2, tf.float32, shapes=[()], name="rf_blocked")
            b = queue.dequeue()
        with tf.device("/job:worker/task:0"):
            bad = tf.debugging.check_numerics(tf.identity(a.value()) / 0.0, "worker side")
            out = b + 1.0
        with tf.Session(servers[1].target, config=rpc_config()) as sess:
            sess.run(a.initializer)
            start = time.monotonic()
            with pytest.raises(errors.InvalidArgumentError, match="worker side"):
                sess.run([bad, out])
            assert time.monotonic() - start < receive_first.FALLBACK_SECS + 2.0
            assert sess.run(queue.size()) == 0  # the dequeue was cancelled, took nothing
