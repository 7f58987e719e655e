"""Errors from a remote task name the client's op and where the user created it: a kernel
error on the PS, and a step deadline that cancelled a blocked op on the PS (before: op None,
"defined at <unknown>", and a deadline that named no op)."""

import os

import numpy as np
import pytest
from fault_helpers import TaskProcess, make_cluster

import tensorflux as tf

HERE = os.path.basename(__file__)
PS0 = "/job:ps/replica:0/task:0"


@pytest.fixture(scope="module")
def chief():
    spec = make_cluster(ps=1, workers=1)
    ps = TaskProcess(spec, "ps", 0)
    server = None
    try:
        ps.wait_ready()
        server = tf.train.Server(spec, "worker", 0)
        yield server
    finally:
        if server is not None:
            server.stop()
        ps.kill()


def test_a_remote_kernel_error_names_the_client_op_and_its_site(chief):
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            checked = tf.check_numerics(tf.constant([1.0, np.nan]), "remote nan",
                                        name="remote_check")
            a = tf.placeholder(tf.float32, [None, None])
            product = tf.matmul(a, a, name="remote_mm")
        with tf.Session(chief.target) as sess:
            with pytest.raises(tf.errors.InvalidArgumentError) as info:
                sess.run(checked)
            assert info.value.op is checked.op
            assert "remote nan" in str(info.value) and PS0 in str(info.value)
            assert f"remote_check (CheckNumerics) defined at {checked.op.location}" in \
                str(info.value) and HERE in checked.op.location
            with pytest.raises(tf.errors.InvalidArgumentError, match="size-incompatible") as info:
                sess.run(product, {a: np.ones((2, 3))})
            assert info.value.op is product.op and HERE in str(info.value)
            assert sess.run(product, {a: np.eye(2)}).tolist() == [[1.0, 0.0], [0.0, 1.0]]


def test_a_remote_step_deadline_names_the_op_it_cancelled(chief):
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            q = tf.FIFOQueue(2, tf.float32, shapes=[], name="remote_q")
            value = q.dequeue(name="remote_deq")
        with tf.Session(chief.target) as sess:
            with pytest.raises(tf.errors.DeadlineExceededError) as info:
                sess.run(value, options=tf.RunOptions(timeout_in_ms=300))
            assert info.value.op is value.op
            assert "remote_deq (QueueDequeueV2)" in str(info.value) and PS0 in str(info.value)
            assert HERE in str(info.value)
            sess.run(q.enqueue(4.0))
            assert sess.run(value) == 4.0  # the cancelled dequeue took nothing
