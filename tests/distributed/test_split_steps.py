"""Split steps (distributed/split_step.py) over real gRPC between two servers of one process
on 127.0.0.1: a PS partition that reads variables and applies the worker's gradients runs as
a head and a body RunGraph; values equal the unsplit step's, the worker's task serves no
transfer, failures in either stage end the step at once, and graphs that do not qualify (a
queue on the PS, a deadline) run as before."""

import time

import numpy as np
import pytest
from cluster_helpers import free_port

import tensorflux as tf
from tensorflux.distributed import master as master_mod
from tensorflux.distributed import split_step
from tensorflux.distributed.master import RemoteDevice
from tensorflux.protos import device_attributes_pb2
from tensorflux.runtime import partition, placer, subgraph

PS = "/job:ps/task:0"
WORKER = "/job:worker/task:0"


@pytest.fixture(scope="module")
def servers():
    spec = tf.train.ClusterSpec({"ps": [f"localhost:{free_port()}"],
                                 "worker": [f"localhost:{free_port()}"]})
    config = tf.ConfigProto()
    config.rpc_options.use_rpc_for_inprocess_master = True
    found = [tf.train.Server(spec, job, 0, config=config) for job in ("ps", "worker")]
    yield found
    for server in found:
        server.stop()


@pytest.fixture
def pulls(servers):
    """The rendezvous keys each task serves over RecvTensor(s) while the test runs."""
    seen = {"ps": [], "worker": []}
    originals = [server.worker.recv_tensor for server in servers]
    for name, server, serve in zip(("ps", "worker"), servers, originals):
        def recording(request, respond, serve=serve, name=name):
            seen[name].append(request.rendezvous_key)
            serve(request, respond)

        server.worker.recv_tensor = recording
    yield seen
    for server, serve in zip(servers, originals):
        server.worker.recv_tensor = serve


def _training(container):
    graph = tf.Graph()
    with graph.as_default(), tf.container(container):
        with tf.device(PS):
            w = tf.get_variable("w", initializer=np.arange(12, dtype=np.float32).reshape(4, 3)
                                / 10)
            b = tf.get_variable("b", initializer=np.ones(3, np.float32))
            step = tf.train.get_or_create_global_step()
        with tf.device(WORKER):
            x = tf.placeholder(tf.float32, [5, 4])
            loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b))
            # the updates are colocated with their variables on the PS
            train = tf.train.AdamOptimizer(0.1).minimize(loss, global_step=step)
        init = tf.global_variables_initializer()
    return graph, x, loss, train, init, (w, b)


def _run(server, container, steps=4):
    """(losses, final variables, whether the training step ran split)."""
    graph, x, loss, train, init, variables = _training(container)
    feed = {x: np.linspace(-1, 1, 20, dtype=np.float32).reshape(5, 4)}
    with tf.Session(server.target, graph=graph) as sess:
        sess.run(init)
        losses = [sess.run([train, loss], feed)[1] for _ in range(steps)]
        return losses, sess.run(variables), any(
            split is not None for split in _session_splits(server))


def _session_splits(server) -> list:
    return [split for session in server.master._sessions.values()
            for _, split in session._cache.values()]


def test_a_split_step_gives_the_unsplit_values_and_the_worker_serves_nothing(
        servers, pulls, monkeypatch):
    losses, values, split = _run(servers[1], "split_a")
    assert split
    assert pulls["worker"] == [] and pulls["ps"] == []  # every value rides a RunGraph
    monkeypatch.setattr(master_mod, "SPLIT_STEPS", False)
    expected, expected_values, split = _run(servers[1], "split_b")
    assert not split
    assert pulls["worker"]  # the unsplit step: the PS pulls the gradients
    np.testing.assert_array_equal(losses, expected)
    for got, want in zip(values, expected_values):
        np.testing.assert_array_equal(got, want)
    # and the first loss is the NumPy one
    x = np.linspace(-1, 1, 20, dtype=np.float32).reshape(5, 4)
    w = np.arange(12, dtype=np.float32).reshape(4, 3) / 10
    np.testing.assert_allclose(losses[0], np.mean(np.square(x @ w + 1)), rtol=1e-6)


def test_a_failure_in_the_head_ends_the_step_at_once(servers):
    graph, x, loss, train, _, _ = _training("split_c")
    with tf.Session(servers[1].target, graph=graph) as sess:
        start = time.monotonic()
        with pytest.raises(tf.errors.FailedPreconditionError):  # uninitialized on the PS
            sess.run(train, {x: np.zeros((5, 4), np.float32)})
        assert time.monotonic() - start < 2.0  # the body, never started, is not waited for
        assert any(split is not None for split in _session_splits(servers[1]))
        sess.run(tf.global_variables_initializer())  # then it trains
        before = sess.run(loss, {x: np.ones((5, 4), np.float32)})
        sess.run(train, {x: np.ones((5, 4), np.float32)})
        assert sess.run(loss, {x: np.ones((5, 4), np.float32)}) < before


def test_a_failure_in_the_body_names_its_op(servers):
    graph = tf.Graph()
    with graph.as_default(), tf.container("split_d"):
        with tf.device(PS):
            v = tf.get_variable("v", initializer=np.ones(3, np.float32))
        with tf.device(WORKER):
            x = tf.placeholder(tf.float32, [3])
            grad = v * x
        with tf.device(PS):
            checked = tf.debugging.check_numerics(grad, "bad gradient")
            update = tf.assign_sub(v, checked)
    with tf.Session(servers[1].target, graph=graph) as sess:
        sess.run(v.initializer)
        sess.run(update, {x: np.full(3, 0.5, np.float32)})
        np.testing.assert_array_equal(sess.run(v), np.full(3, 0.5, np.float32))
        start = time.monotonic()
        with pytest.raises(tf.errors.InvalidArgumentError, match="bad gradient"):
            sess.run(update, {x: np.array([1.0, np.nan, 1.0], np.float32)})
        assert time.monotonic() - start < 2.0
        assert any(split is not None for split in _session_splits(servers[1]))
        np.testing.assert_array_equal(sess.run(v), np.full(3, 0.5, np.float32))


def test_a_queue_on_the_ps_or_a_deadline_runs_the_step_unsplit(servers, pulls):
    graph = tf.Graph()
    with graph.as_default(), tf.container("split_e"):
        with tf.device(PS):
            v = tf.get_variable("v", initializer=np.ones(2, np.float32))
            queue = tf.FIFOQueue(4, tf.float32, shapes=[[2]])
        with tf.device(WORKER):
            doubled = v * 2
        with tf.device(PS):
            enqueue = queue.enqueue(doubled)
            size = queue.size()
        with tf.device(WORKER):
            step = v * 3
        with tf.device(PS):
            update = tf.assign_add(v, step)
    with tf.Session(servers[1].target, graph=graph) as sess:
        sess.run(v.initializer)
        sess.run(enqueue)
        assert sess.run(size) == 1
        assert all(split is None for split in _session_splits_of(sess, servers[1], "enqueue"))
        options = tf.RunOptions(timeout_in_ms=5000)
        np.testing.assert_array_equal(sess.run(update, options=options), [4.0, 4.0])
        assert pulls["worker"]  # with a deadline: the unsplit step
        np.testing.assert_array_equal(sess.run(update), [16.0, 16.0])


def _session_splits_of(sess, server, name):
    del sess
    return [split for session in server.master._sessions.values()
            for key, (_, split) in session._cache.items()
            if any(name in target for target in key[2])]


def test_split_partitions_leave_a_partition_that_sends_after_receiving_unsplit():
    graph = tf.Graph()
    with graph.as_default():
        with tf.device(PS):
            v = tf.get_variable("v", initializer=np.ones(2, np.float32))
        with tf.device(WORKER):
            w = v * 2
        with tf.device(PS):
            back = w + 1  # received, then sent back to the worker
        with tf.device(WORKER):
            out = back * 3
    devices = [RemoteDevice(device_attributes_pb2.DeviceAttributes(
        name=f"/job:{job}/replica:0/task:0/device:CPU:0", device_type="CPU", incarnation=1))
        for job in ("ps", "worker")]
    nodes, _, _ = subgraph.build_step_graph(graph, [], [out], [])
    placer.place(nodes, devices, False, False, default_device=devices[1])
    groups = partition.partition(nodes, {d.name: d for d in devices}, None)
    per_task = {}
    for device, part in groups.items():
        per_task.setdefault(device.rsplit("/device:", 1)[0], []).extend(part)
    ps_task, worker_task = "/job:ps/replica:0/task:0", "/job:worker/replica:0/task:0"
    assert set(per_task) == {ps_task, worker_task}
    assert split_step.split_partitions(per_task, worker_task, [ps_task], False) is None


def test_a_value_of_unknown_size_keeps_the_step_unsplit(servers, pulls):
    graph = tf.Graph()
    with graph.as_default(), tf.container("split_f"):
        with tf.device(PS):
            v = tf.get_variable("v", initializer=np.ones(3, np.float32))
        with tf.device(WORKER):
            x = tf.placeholder(tf.float32, [None])
            y = x + tf.reduce_sum(v)  # [None]: its size is known only when it runs
        with tf.device(PS):
            update = tf.assign_add(v, y)
    with tf.Session(servers[1].target, graph=graph) as sess:
        sess.run(v.initializer)
        got = sess.run(update, {x: np.array([1.0, 2.0, 3.0], np.float32)})
        np.testing.assert_array_equal(got, [5.0, 6.0, 7.0])
        assert all(split is None for split in _session_splits(servers[1]))
        assert pulls["worker"]  # the PS pulled y over RecvTensor
