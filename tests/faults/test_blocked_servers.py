"""Blocked calls do not starve a server (issue 13): 200 consumers blocked on a PS queue, each
holding a RunGraph on the PS, while heartbeats (GetStatus) are still answered at once; then
200 enqueued elements reach the 200 consumers, one each."""

import threading
import time

import numpy as np
import pytest
from fault_helpers import TaskProcess, make_cluster

import tensorflux as tf
from tensorflux.distributed.rpc.transport import GrpcWorkerClient
from tensorflux.protos import worker_pb2

CONSUMERS = 200


@pytest.fixture
def ps_and_chief():
    spec = make_cluster(ps=1, workers=1)
    ps = TaskProcess(spec, "ps", 0)
    chief = None
    try:
        ps.wait_ready()
        chief = tf.train.Server(spec, "worker", 0)
        yield spec, chief
    finally:
        if chief is not None:
            chief.stop()
        ps.kill()


def test_two_hundred_blocked_consumers_leave_heartbeats_answered(ps_and_chief):
    spec, chief = ps_and_chief
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            q = tf.FIFOQueue(CONSUMERS, tf.int32, shapes=[], name="shared_queue")
            value = q.dequeue()
            fill = q.enqueue_many([tf.range(CONSUMERS)])
        with tf.Session(chief.target) as sess:
            sess.run(q.size())  # planned and registered once, before the crowd
            got, failures = [], []

            def consume():
                try:
                    got.append(int(sess.run(value)))
                except tf.errors.OpError as err:
                    failures.append(err)

            threads = [threading.Thread(target=consume, daemon=True) for _ in range(CONSUMERS)]
            for thread in threads:
                thread.start()
            time.sleep(2.0)  # every consumer is now blocked in a RunGraph on the PS
            assert not got and not failures
            client = GrpcWorkerClient("/job:ps/replica:0/task:0", spec.task_address("ps", 0))
            latencies = []
            try:
                for _ in range(20):
                    start = time.monotonic()
                    status = client.call("get_status", worker_pb2.GetStatusRequest(),
                                         timeout=1.0)
                    latencies.append(time.monotonic() - start)
                    assert status.device_attributes
                    time.sleep(0.02)
            finally:
                client.close()
            print(f"GetStatus with {CONSUMERS} blocked consumers: median "
                  f"{1000 * np.median(latencies):.1f} ms, max {1000 * max(latencies):.1f} ms")
            assert max(latencies) < 0.5, latencies
            sess.run(fill)  # itself a RunGraph on the PS: served too
            for thread in threads:
                thread.join(timeout=20)
            assert not failures, failures[:3]
            assert sorted(got) == list(range(CONSUMERS))
            assert sess.run(q.size()) == 0


def test_idle_recv_tensor_streams_do_not_starve_a_trainer(ps_and_chief):
    spec, chief = ps_and_chief
    client = GrpcWorkerClient("/job:ps/replica:0/task:0", spec.task_address("ps", 0))
    # Anyone reaching the port can open streams that wait for tensors never sent.
    ended = []
    handles = [client.recv_tensor_async(12345, f"/job:ps/replica:0/task:0/device:CPU:0;1;"
                                        f"/job:worker/replica:0/task:0/device:CPU:0;t{i};0:0",
                                        lambda *outcome: ended.append(outcome))
               for i in range(CONSUMERS)]
    try:
        time.sleep(1.0)
        assert not ended  # all still waiting on the PS
        with tf.Graph().as_default():
            with tf.device("/job:ps/task:0"):
                w = tf.Variable(np.zeros(3, np.float32), name="w_trainer")
            with tf.device("/job:worker/task:0"):
                step = w.assign_add(np.ones(3, np.float32))
            with tf.Session(chief.target) as sess:
                sess.run(w.initializer)
                start = time.monotonic()
                for _ in range(5):
                    sess.run(step)
                elapsed = time.monotonic() - start
                np.testing.assert_array_equal(sess.run(w), np.full(3, 5.0))
        assert elapsed < 2.0, elapsed
    finally:
        for handle in handles:
            handle.cancel()
        client.close()
