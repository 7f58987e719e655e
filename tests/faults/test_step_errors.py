"""Single-process failures name their cause: a step's deadline names the op it cancelled,
Session.close() cancels a blocked run naming its op, a py_func keeps the Python exception's type
and message, and a QueueRunner's failure reaches coord.join with the op and its creation site."""

import os
import signal
import threading
import time

import numpy as np
import pytest

import tensorflux as tf

HERE = os.path.basename(__file__)


def test_a_step_deadline_names_the_blocked_op():
    with tf.Graph().as_default():
        q = tf.FIFOQueue(2, tf.float32, shapes=[])
        value = q.dequeue(name="starved_dequeue")
        with tf.Session() as sess:
            start = time.monotonic()
            with pytest.raises(tf.errors.DeadlineExceededError) as info:
                sess.run(value, options=tf.RunOptions(timeout_in_ms=200))
            assert time.monotonic() - start < 1.5
            assert info.value.op is not None and info.value.op.name == "starved_dequeue"
            assert "starved_dequeue (QueueDequeueV2)" in str(info.value)
            assert HERE in str(info.value)  # the creation site
            sess.run(q.enqueue(3.0))  # the cancelled dequeue took nothing
            assert sess.run(value) == 3.0
    config = tf.ConfigProto(operation_timeout_in_ms=200)
    with tf.Graph().as_default():
        q = tf.FIFOQueue(2, tf.float32, shapes=[])
        value = q.dequeue(name="config_dequeue")
        with tf.Session(config=config) as sess:
            with pytest.raises(tf.errors.DeadlineExceededError) as info:
                sess.run(value)
            assert info.value.op.name == "config_dequeue"


def test_closing_the_session_cancels_a_blocked_run_naming_its_op():
    with tf.Graph().as_default():
        value = tf.FIFOQueue(2, tf.float32, shapes=[]).dequeue(name="closed_dequeue")
        sess = tf.Session()
        box = []

        def blocked():
            try:
                box.append(sess.run(value))
            except tf.errors.OpError as err:
                box.append(err)

        thread = threading.Thread(target=blocked, daemon=True)
        thread.start()
        time.sleep(0.2)
        sess.close()
        thread.join(timeout=3)
        assert len(box) == 1 and isinstance(box[0], tf.errors.CancelledError), box
        assert box[0].op.name == "closed_dequeue"


@pytest.mark.parametrize("raised, status", [
    (ValueError("bad value 42"), tf.errors.InvalidArgumentError),
    (KeyError("missing_key"), tf.errors.UnknownError),
    (StopIteration(), tf.errors.OutOfRangeError),
])
def test_a_py_func_failure_keeps_the_python_type_and_message(raised, status):
    def fail(x):
        raise raised

    with tf.Graph().as_default():
        y = tf.py_func(fail, [tf.constant(1.0)], tf.float32, name="user_fn")
        with tf.Session() as sess:
            with pytest.raises(status) as info:
                sess.run(y)
    assert info.value.op.name == "user_fn"
    assert f"{type(raised).__name__}: {raised}" in str(info.value)


def test_a_queue_runner_failure_reaches_coord_join_with_op_and_site():
    with tf.Graph().as_default():
        q = tf.FIFOQueue(4, tf.float32, shapes=[2])
        checked = tf.check_numerics(tf.constant([1.0, np.nan]), "bad input", name="nan_check")
        runner = tf.train.QueueRunner(q, [q.enqueue(checked)])
        with tf.Session() as sess:
            coord = tf.train.Coordinator()
            threads = runner.create_threads(sess, coord=coord, start=True)
            with pytest.raises(tf.errors.InvalidArgumentError) as info:
                deadline = time.monotonic() + 3
                while not coord.should_stop() and time.monotonic() < deadline:
                    time.sleep(0.01)
                coord.join(threads, stop_grace_period_secs=2)
    error = info.value
    assert error.op.name == "nan_check" and "bad input" in str(error)
    assert error.op.traceback and error.op.traceback[-1][0].endswith(HERE)


def test_bad_feeds_raise_tf1_error_classes_naming_the_tensor():
    with tf.Graph().as_default():
        a = tf.placeholder(tf.float32, [None, 3], name="a")
        doubled = a * 2.0
        with tf.Session() as sess:
            with pytest.raises(ValueError, match="a:0.*could not convert string to float"):
                sess.run(doubled, {a: [["x", "y", "z"]]})
            with pytest.raises(TypeError, match="a:0"):
                sess.run(doubled, {a: [[None, {}, 1.0]]})
            with pytest.raises(ValueError, match=r"shape \(2, 4\) for Tensor 'a:0'"):
                sess.run(doubled, {a: np.ones((2, 4))})
            assert sess.run(doubled, {a: [[1, 2, 3]]}).tolist() == [[2.0, 4.0, 6.0]]


def test_an_uninitialized_variable_and_a_huge_allocation_name_their_op():
    with tf.Graph().as_default():
        var = tf.Variable(tf.zeros([3]), name="never_initialized")
        used = var + 1.0
        huge = tf.zeros(tf.constant([1 << 20, 1 << 20, 1 << 10], tf.int64), name="huge_zeros")
        with tf.Session() as sess:
            with pytest.raises(tf.errors.FailedPreconditionError,
                               match="uninitialized value never_initialized") as info:
                sess.run(used)
            assert info.value.op.name.startswith("never_initialized")
            with pytest.raises(tf.errors.ResourceExhaustedError) as info:
                sess.run(huge)
            assert info.value.op.name == "huge_zeros" and HERE in str(info.value)
            assert sess.run(tf.constant(2) + 3) == 5  # the process goes on


def test_ctrl_c_during_a_blocked_run_with_queue_runners_interrupts_and_joins_promptly():
    with tf.Graph().as_default():
        fed = tf.FIFOQueue(4, tf.float32, shapes=[])
        runner = tf.train.QueueRunner(fed, [fed.enqueue(tf.random_uniform([]))] * 2)
        starved = tf.FIFOQueue(2, tf.float32, shapes=[]).dequeue()
        with tf.Session() as sess:
            coord = tf.train.Coordinator()
            threads = runner.create_threads(sess, coord=coord, start=True)
            timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
            start = time.monotonic()
            timer.start()
            with pytest.raises(KeyboardInterrupt):
                sess.run(starved)
            assert time.monotonic() - start < 1.5
            coord.request_stop()
            joined = time.monotonic()
            coord.join(threads, stop_grace_period_secs=2)
            assert time.monotonic() - joined < 1.0
            assert not any(t.is_alive() for t in threads)
            assert 0 < sess.run(fed.size()) <= 4  # the runners fed the queue, then stopped
