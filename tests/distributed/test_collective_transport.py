"""Collective ops across the tasks of a loopback cluster (`distributed/collective_transport`):
servers in this process reached over gRPC, and a task in another process that dies."""

import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.distributed.collective_transport import collective_step_id, group_members
from tensorflux.ops.collective import collective_ops as co
from tests.distributed.cluster_helpers import free_port

RPC = tf.ConfigProto()
RPC.rpc_options.use_rpc_for_inprocess_master = True


def _cluster(n, job="worker"):
    return tf.train.ClusterSpec({job: [f"localhost:{free_port()}" for _ in range(n)]})


def _run_tasks(servers, build_and_run, timeout=8.0):
    """Runs build_and_run(i, session) for every task in its own thread and graph."""
    results, failures = {}, []

    def work(i):
        try:
            with tf.Graph().as_default(), tf.Session(servers[i].target, config=RPC) as sess:
                with tf.device(f"{servers[i].task_name}/device:CPU:0"):
                    results[i] = build_and_run(i, sess)
        except Exception as err:  # noqa: BLE001 - re-raised in the test's thread
            failures.append(err)

    threads = [threading.Thread(target=work, args=(i,), daemon=True)
               for i in range(len(servers))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout)
    assert not any(t.is_alive() for t in threads), "a task hung"
    if failures:
        raise failures[0]
    return results


@pytest.fixture
def three_servers():
    cluster = _cluster(3)
    servers = [tf.train.Server(cluster, "worker", i, config=RPC) for i in range(3)]
    yield servers
    for server in servers:
        server.stop()


def test_reduce_gather_broadcast_across_three_tasks_over_grpc(three_servers):
    vals = [np.random.RandomState(i).randn(4, 3).astype(np.float32) for i in range(3)]

    def run(i, sess):
        x = tf.placeholder(tf.float32, [4, 3])
        total = co.all_reduce(x, 3, 1, 1, "Add", "Id")
        mean = co.all_reduce(x, 3, 1, 2, "Add", "Div")
        gathered = co.all_gather(x, 3, 1, 3)
        bcast = co.broadcast_send(x, [4, 3], tf.float32, 3, 1, 4) if i == 1 else \
            co.broadcast_recv([4, 3], tf.float32, 3, 1, 4)
        return [sess.run([total, mean, gathered, bcast], {x: vals[i] * (k + 1)})
                for k in range(3)]

    results = _run_tasks(three_servers, run)
    for k in range(3):
        scaled = [v * (k + 1) for v in vals]
        total = (scaled[0] + scaled[1]) + scaled[2]
        for i in range(3):
            got_total, got_mean, got_gathered, got_bcast = results[i][k]
            np.testing.assert_array_equal(got_total, total)
            np.testing.assert_array_equal(got_mean, total / np.float32(3))
            np.testing.assert_array_equal(got_gathered, np.concatenate(scaled))
            np.testing.assert_array_equal(got_bcast, scaled[1])


def test_an_error_at_the_leader_fails_every_member(three_servers):
    def run(i, sess):
        x = tf.placeholder_with_default(np.zeros(i + 1, np.float32), [None])
        out = co.all_reduce(x, 3, 2, 1, "Add", "Id")
        # The leader raises the error; the others get it with the transfer that failed, or
        # (when their pull came after the failure) a refusal naming the aborted leader.
        kind = tf.errors.InvalidArgumentError if i == 0 else tf.errors.AbortedError
        match = "differ in shape" if i == 0 else "differ in shape|aborted on /job:worker/"
        with pytest.raises(kind, match=match):
            sess.run(out)
        return True

    assert _run_tasks(three_servers, run) == {0: True, 1: True, 2: True}


def test_group_resolution_from_the_cluster_spec():
    cluster = tf.train.ClusterSpec({"chief": ["a:1"], "worker": ["b:1", "c:1"],
                                    "ps": ["d:1"]})
    assert group_members(cluster, "/job:worker/replica:0/task:1/device:CPU:0", 3) == [
        "/job:chief/replica:0/task:0/device:CPU:0", "/job:worker/replica:0/task:0/device:CPU:0",
        "/job:worker/replica:0/task:1/device:CPU:0"]
    with pytest.raises(tf.errors.InvalidArgumentError, match="cannot be spread"):
        group_members(cluster, "/job:worker/replica:0/task:1/device:CPU:0", 4)
    with pytest.raises(tf.errors.InvalidArgumentError, match="not a member"):
        group_members(cluster, "/job:ps/replica:0/task:0/device:CPU:0", 3)
    ids = {collective_step_id(g, i, s) for g in range(3) for i in range(3) for s in range(3)}
    assert len(ids) == 27 and min(ids) > 2 ** 62 and max(ids) < 2 ** 63


_PEER = """
import sys, time
import tensorflux as tf
cluster = tf.train.ClusterSpec({"worker": sys.argv[1].split(",")})
server = tf.train.Server(cluster, "worker", int(sys.argv[2]))
print("up", flush=True)
time.sleep(60)
"""


@pytest.mark.parametrize("peer_dies_after,mine", [(None, 0), (0.3, 0), (0.3, 1)])
def test_a_dead_task_fails_the_collective_naming_it(peer_dies_after, mine):
    """The peer never started, or dies while this task's collective waits for it (this task
    leading the group, or a member waiting for the leader's result)."""
    cluster = _cluster(2)
    addresses = ",".join(cluster.job_tasks("worker"))
    theirs = 1 - mine
    # A peer never reached is waited for up to the operation timeout (it may be starting).
    server = tf.train.Server(cluster, "worker", mine,
                             config=tf.ConfigProto(operation_timeout_in_ms=1500))
    peer = None
    try:
        if peer_dies_after is not None:
            peer = subprocess.Popen([sys.executable, "-c", _PEER, addresses, str(theirs)],
                                    stdout=subprocess.PIPE)
            assert peer.stdout.readline().strip() == b"up"
            threading.Timer(peer_dies_after, peer.kill).start()
        config = tf.ConfigProto(device_filters=[server.task_name])  # do not wait for the peer
        with tf.Graph().as_default(), tf.Session(server.target, config=config) as sess:
            with tf.device(f"{server.task_name}/device:CPU:0"):
                out = co.all_reduce(tf.ones([3]), 2, 1, 1, "Add", "Id")
            start = time.monotonic()
            with pytest.raises(tf.errors.UnavailableError, match=f"task:{theirs}") as info:
                sess.run(out)
            took = time.monotonic() - start
        assert took < 6.0, took
        assert "worker" in str(info.value)
    finally:
        server.stop()
        if peer is not None:
            peer.kill()
            peer.wait()


def test_a_peer_that_starts_late_is_waited_for():
    cluster = _cluster(2)
    servers = [tf.train.Server(cluster, "worker", 0, config=RPC),
               tf.train.Server(cluster, "worker", 1, config=RPC, start=False)]
    threading.Timer(0.5, servers[1].start).start()
    try:
        def run(i, sess):
            return sess.run(co.all_reduce(tf.fill([2], float(i + 1)), 2, 3, 1, "Add", "Id"))

        filtered = [tf.ConfigProto(device_filters=[s.task_name]) for s in servers]
        results = {}

        def work(i):
            if i == 1:
                time.sleep(0.6)
            with tf.Graph().as_default(), \
                    tf.Session(servers[i].target, config=filtered[i]) as sess, \
                    tf.device(f"{servers[i].task_name}/device:CPU:0"):
                results[i] = run(i, sess)

        threads = [threading.Thread(target=work, args=(i,), daemon=True) for i in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(8.0)
        assert not any(t.is_alive() for t in threads)
        for i in range(2):
            np.testing.assert_array_equal(results[i], [3.0, 3.0])
    finally:
        for server in servers:
            server.stop()
