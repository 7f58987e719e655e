"""Tensors larger than gRPC's 4 MB default cross tasks whole, and a tensor over the configured
message limit fails with ResourceExhaustedError naming the tensor, its sender and the setting
(no hang, no truncation). The PS runs in its own process, so every transfer crosses gRPC."""

import numpy as np
import pytest
from fault_helpers import TaskProcess, make_cluster

import tensorflux as tf
from tensorflux.distributed.rpc.security import RpcSecurity

PS0 = "/job:ps/replica:0/task:0"


@pytest.fixture(scope="module")
def cluster():
    spec = make_cluster(ps=1, workers=1)
    ps = TaskProcess(spec, "ps", 0)
    try:
        ps.wait_ready()
        yield spec
    finally:
        ps.kill()


def _worker(spec, limit=None):
    security = RpcSecurity() if limit is None else RpcSecurity(max_message_bytes=limit)
    return tf.train.Server(spec, "worker", 0, security=security)


def test_a_40mb_variable_crosses_tasks_whole(cluster):
    worker = _worker(cluster)
    try:
        with tf.Graph().as_default():
            with tf.device("/job:ps/task:0"):
                v = tf.Variable(tf.range(10 << 20, dtype=tf.float32), name="big")  # 40 MB
                fed = tf.placeholder(tf.float32, [None])
                fed_sum = tf.reduce_sum(fed[::1024])
            with tf.device("/job:worker/task:0"):
                strided = tf.reduce_sum(v[::1024])
            with tf.Session(worker.target) as sess:
                sess.run(v.initializer)
                value = sess.run(v)
                np.testing.assert_array_equal(value, np.arange(10 << 20, dtype=np.float32))
                expected = np.arange(0, 10 << 20, 1024, dtype=np.float64).sum()
                assert sess.run(strided) == expected
                assert sess.run(fed_sum, {fed: value}) == expected  # a 40 MB feed to the PS
    finally:
        worker.stop()


def test_a_tensor_over_the_message_limit_names_itself_and_its_sender(cluster):
    worker = _worker(cluster, limit=1 << 20)  # the receiver's limit: 1 MiB
    try:
        with tf.Graph().as_default():
            with tf.device("/job:ps/task:0"):
                v = tf.Variable(tf.zeros([1 << 19]), name="embedding")  # 2 MiB
                small = tf.constant([1.0, 2.0])
            with tf.device("/job:worker/task:0"):
                total = tf.reduce_sum(v)
            with tf.Session(worker.target) as sess:
                sess.run(v.initializer)
                with pytest.raises(tf.errors.ResourceExhaustedError) as info:
                    sess.run(total)
                message = str(info.value)
                assert "embedding/read'" in message and PS0 in message, message
                assert "2097152 bytes, over the limit of 1048576" in message
                assert "TFX_MAX_MESSAGE_BYTES" in message
                with pytest.raises(tf.errors.ResourceExhaustedError, match=PS0):
                    sess.run(v)  # a fetch
                np.testing.assert_array_equal(sess.run(small), [1.0, 2.0])  # still serving
    finally:
        worker.stop()


def test_a_feed_over_the_message_limit_names_the_task_and_the_setting(cluster):
    worker = _worker(cluster, limit=1 << 20)  # the sender's limit: 1 MiB
    try:
        with tf.Graph().as_default():
            with tf.device("/job:ps/task:0"):
                fed = tf.placeholder(tf.float32, [None])
                total = tf.reduce_sum(fed)
            with tf.Session(worker.target) as sess:
                with pytest.raises(tf.errors.ResourceExhaustedError) as info:
                    sess.run(total, {fed: np.ones(1 << 19, np.float32)})  # 2 MiB
                message = str(info.value)
                assert PS0 in message and "larger than max" in message, message
                assert "TFX_MAX_MESSAGE_BYTES" in message
                assert sess.run(total, {fed: np.ones(1000, np.float32)}) == 1000.0
    finally:
        worker.stop()
