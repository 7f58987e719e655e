"""Batched receives (RecvTensors): a step asks each source task for every tensor it receives
from it in one streaming call (`RemoteRendezvous.prefetch`), over real gRPC between servers of
one process on 127.0.0.1; the frames of several tensors in one stream (`read_tensors`); and
the failure paths (a failing sender, a stale incarnation, a cancelled step)."""

import collections
import threading
import time

import numpy as np
import pytest
from cluster_helpers import free_port

import tensorflux as tf
from tensorflux.distributed import worker as worker_mod
from tensorflux.distributed.rendezvous_mgr import RemoteRendezvous
from tensorflux.distributed.rpc import server_pools, tensor_codec
from tensorflux.framework import errors
from tensorflux.protos import worker_pb2
from tensorflux.runtime.graph_ir import Node
from tensorflux.runtime.rendezvous import create_key

PS = "/job:ps/task:0"
WORKER = "/job:worker/task:0"


# -- several tensors in one stream ------------------------------------------------------------


def stream_of(values, order):
    frames = []
    for index in order:
        value = values[index]
        frames.extend(tensor_codec.tensor_frames(value, value is None, 0x5EED, index))
    return frames


def test_read_tensors_delivers_each_tensor_by_its_key_index():
    rng = np.random.RandomState(3)
    values = [np.float32(2.5), rng.standard_normal((7, 3)).astype(np.float32),  # inline
              rng.standard_normal((300, 100)).astype(np.float32),  # one chunk frame
              np.arange(tensor_codec.CHUNK_BYTES // 4 + 9, dtype=np.int32),  # two chunks
              None,  # dead
              np.array([b"ab", b"", b"xyz"], dtype=object),
              np.zeros((0, 4), np.float64)]
    order = [3, 0, 6, 2, 5, 4, 1]
    got = list(tensor_codec.read_tensors(stream_of(values, order), len(values)))
    assert [g[0] for g in got] == order
    for index, value, is_dead, incarnation in got:
        assert incarnation == 0x5EED
        expected = values[index]
        if expected is None:
            assert is_dead and value is None
            continue
        assert not is_dead and value.dtype == expected.dtype and value.shape == expected.shape
        np.testing.assert_array_equal(value, expected)


def test_bundled_messages_are_recv_tensors_responses_of_frames():
    values = [np.arange(70000, dtype=np.float32), np.float64(1.5), None]
    frames = stream_of(values, [1, 0, 2])
    messages = [tensor_codec.bundle_frames(frames[:1]), tensor_codec.bundle_frames(frames[1:])]
    parsed = [bytes(f) for m in messages
              for f in worker_pb2.RecvTensorsResponse.FromString(m).frame]
    assert parsed == frames  # any protobuf reader sees the frames
    assert [bytes(f) for f in tensor_codec.unbundle_frames(messages)] == frames
    got = list(tensor_codec.read_tensors(tensor_codec.unbundle_frames(messages), 3))
    assert [g[0] for g in got] == [1, 0, 2]
    np.testing.assert_array_equal(got[1][1], values[0])
    assert not got[1][1].flags.writeable  # a view of the received message, not a copy
    with pytest.raises(errors.DataLossError):
        list(tensor_codec.unbundle_frames([messages[1][:-3]]))
    with pytest.raises(errors.DataLossError):
        list(tensor_codec.unbundle_frames([b"\x12\x01x"]))


def test_read_tensors_refuses_short_repeated_and_out_of_range_streams():
    values = [np.arange(5, dtype=np.float32), np.arange(70000, dtype=np.float32)]
    frames = stream_of(values, [0, 1])
    with pytest.raises(errors.UnavailableError):  # the second tensor never came
        list(tensor_codec.read_tensors(frames[:1], 2))
    with pytest.raises(errors.DataLossError):  # its header came, its bytes did not
        list(tensor_codec.read_tensors(frames[:2], 2))
    with pytest.raises(errors.DataLossError):
        list(tensor_codec.read_tensors(stream_of(values, [0, 0]), 2))
    with pytest.raises(errors.DataLossError):
        list(tensor_codec.read_tensors(stream_of(values + values, [0, 3]), 2))


# -- which keys a partition asks for at once ----------------------------------------------------


def recv_node(name, send_device, **attrs):
    node = Node(name, "_Recv", dict({"tensor_type": tf.float32, "tensor_name": name,
                                     "send_device": send_device, "send_device_incarnation": 7,
                                     "recv_device": f"{WORKER}/device:CPU:0"}, **attrs),
                [], [], f"{WORKER}/device:CPU:0", [tf.float32], [])
    return node


def test_prefetch_keys_group_remote_receives_by_source_task():
    nodes = [recv_node("a", f"{PS}/device:CPU:0"), recv_node("b", f"{PS}/device:CPU:0"),
             recv_node("c", "/job:ps/replica:0/task:1/device:CPU:0"),
             recv_node("local", f"{WORKER}/device:CPU:1"),
             recv_node("fed", f"{PS}/device:CPU:0", client_terminal=True)]
    found = dict(worker_mod._prefetch_keys(nodes, WORKER))
    assert found == {
        PS: (create_key(f"{PS}/device:CPU:0", 7, f"{WORKER}/device:CPU:0", "a"),
             create_key(f"{PS}/device:CPU:0", 7, f"{WORKER}/device:CPU:0", "b")),
        "/job:ps/replica:0/task:1": (create_key(
            "/job:ps/replica:0/task:1/device:CPU:0", 7, f"{WORKER}/device:CPU:0", "c"),)}
    loop = Node("enter", "Enter", {}, [], [], WORKER, [tf.float32], [])
    assert worker_mod._prefetch_keys(nodes + [loop], WORKER) == []  # per-iteration keys


# -- the rendezvous side, with a scripted source task -------------------------------------------


class ScriptedClient:
    """Answers `recv_tensors_async` from a script: [(index, value, incarnation)] or an error."""

    def __init__(self, script):
        self.script = script
        self.asked = []
        self.cancelled = threading.Event()

    def recv_tensors_async(self, step_id, keys, arrived, failed):
        self.asked.append((step_id, tuple(keys)))
        client = self

        class Handle:
            def cancel(self):
                client.cancelled.set()

        if isinstance(self.script, Exception):
            failed(self.script)
        else:
            for index, value, incarnation in self.script:
                arrived(index, value, False, incarnation)
        return Handle()


def key(name, incarnation=0x11):
    return create_key(f"{PS}/device:CPU:0", incarnation, f"{WORKER}/device:CPU:0", name)


def test_prefetched_values_wait_locally_for_their_receives():
    keys = (key("w"), key("b"))
    client = ScriptedClient([(1, np.float32(3.0), 0x11), (0, np.ones(3, np.float32), 0x11)])
    rendezvous = RemoteRendezvous(5, WORKER, lambda task: client, None)
    rendezvous.expect_pushes([key("pushed")])
    rendezvous.prefetch(PS, keys + (key("pushed"),))
    assert client.asked == [(5, keys)]  # the master's pushed key is not asked for again
    np.testing.assert_array_equal(rendezvous.recv(keys[0], timeout=1)[0], np.ones(3))
    assert rendezvous.recv(keys[1], timeout=1)[0] == 3.0


def test_a_stale_sender_incarnation_aborts_the_step():
    client = ScriptedClient([(0, np.float32(1.0), 0x99)])
    rendezvous = RemoteRendezvous(5, WORKER, lambda task: client, None)
    rendezvous.prefetch(PS, (key("w"),))
    with pytest.raises(errors.AbortedError, match="restarted"):
        rendezvous.recv(key("w"), timeout=1)


def test_a_failed_stream_fails_every_receive_and_is_cancelled_on_abort():
    client = ScriptedClient(errors.UnavailableError(None, None, "ps went away"))
    rendezvous = RemoteRendezvous(5, WORKER, lambda task: client, None)
    rendezvous.prefetch(PS, (key("w"), key("b")))
    for name in ("w", "b"):
        with pytest.raises(errors.UnavailableError, match="ps went away"):
            rendezvous.recv(key(name), timeout=1)
    pending = ScriptedClient([])  # never answers
    rendezvous = RemoteRendezvous(6, WORKER, lambda task: pending, None)
    rendezvous.prefetch(PS, (key("w"),))
    rendezvous.abort(errors.CancelledError(None, None, "step cancelled"))
    assert pending.cancelled.is_set()


# -- over gRPC --------------------------------------------------------------------------------


def rpc_config():
    config = tf.ConfigProto(operation_timeout_in_ms=10000)
    config.rpc_options.use_rpc_for_inprocess_master = True
    return config


SERVED: collections.Counter = collections.Counter()


@pytest.fixture(scope="module")
def servers():
    """A PS and a worker server whose worker services count the RPCs they answer."""
    lane_for = server_pools.lane_for

    def counting(name, behaviour):
        def counted(request, context):
            SERVED[name] += 1
            return behaviour(request, context)

        return lane_for(name, counted)

    spec = tf.train.ClusterSpec({"ps": [f"localhost:{free_port()}"],
                                 "worker": [f"localhost:{free_port()}"]})
    server_pools.lane_for = counting
    try:
        found = [tf.train.Server(spec, job, 0, config=rpc_config()) for job in ("ps", "worker")]
    finally:
        server_pools.lane_for = lane_for
    yield found
    for server in found:
        server.stop()


def mlp_step(x, y):
    h = tf.layers.dense(x, 5, activation=tf.nn.relu,
                        kernel_initializer=tf.constant_initializer(0.1))
    logits = tf.layers.dense(h, 3, kernel_initializer=tf.constant_initializer(-0.2))
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y,
                                                                         logits=logits))
    return loss, tf.train.GradientDescentOptimizer(0.5).minimize(loss)


def test_a_training_step_is_one_stream_each_way(servers):
    """The mnist_replica shape in small: the worker gets 4 variables of the PS, the PS 4
    gradients of the worker; each way is one RecvTensors call, no RecvTensor; the values
    are those of the same steps in one process."""
    rng = np.random.RandomState(0)
    x_value = rng.rand(8, 6).astype(np.float32)
    y_value = rng.randint(0, 3, 8)
    results = []
    for target in (servers[1].target, ""):
        placement = tf.train.replica_device_setter(
            worker_device=WORKER, cluster=servers[0].cluster_spec) if target else None
        with tf.Graph().as_default():
            with tf.device(placement):  # no placement: the same steps in one process
                x = tf.placeholder(tf.float32, [8, 6])
                y = tf.placeholder(tf.int64, [8])
                loss, train = mlp_step(x, y)
            variables = tf.trainable_variables()
            config = rpc_config() if target else None
            with tf.Session(target, config=config) as sess:
                sess.run(tf.variables_initializer(variables))
                sess.run(train, {x: x_value, y: y_value})  # registers the step's graphs
                SERVED.clear()
                losses = [sess.run([loss, train], {x: x_value, y: y_value})[0]
                          for _ in range(3)]
                served = dict(SERVED)
                results.append((losses, sess.run(variables), served))
    (losses, got, served), (ref_losses, expected, _) = results
    assert served.get("RecvTensor", 0) == 0 and served["RecvTensors"] == 2 * 3
    assert losses[0] > losses[1] > losses[2]
    np.testing.assert_allclose(losses, ref_losses, rtol=1e-6)
    for value, reference in zip(got, expected):
        np.testing.assert_allclose(value, reference, rtol=1e-6, atol=1e-7)


def test_a_failing_sender_fails_the_step_in_bounded_time(servers):
    with tf.Graph().as_default():
        with tf.device(PS):
            v = tf.Variable(np.ones(4, np.float32), name="batched_checked")
            bad = tf.debugging.check_numerics(v / tf.constant(0.0), "ps side division")
        with tf.device(WORKER):
            out = tf.identity(bad) + 1.0
            fine = tf.identity(v.value()) * 2.0
        with tf.Session(servers[1].target, config=rpc_config()) as sess:
            sess.run(v.initializer)
            np.testing.assert_array_equal(sess.run(fine), np.full(4, 2.0))
            start = time.monotonic()
            with pytest.raises(errors.InvalidArgumentError, match="ps side division"):
                sess.run(out)
            assert time.monotonic() - start < 5.0
            np.testing.assert_array_equal(sess.run(fine), np.full(4, 2.0))  # still works
