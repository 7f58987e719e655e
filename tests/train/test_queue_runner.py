"""QueueRunner and Coordinator: threads that fill queues, stop together and report errors."""

import threading
import time

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.ops.data_flow import hang_watch


@pytest.fixture
def graph():
    g = tf.Graph()
    with g.as_default():
        yield g


# -- Coordinator -------------------------------------------------------------------------------

def test_request_stop_and_wait():
    coord = tf.train.Coordinator()
    assert not coord.should_stop() and not coord.wait_for_stop(0.01)
    threading.Timer(0.05, coord.request_stop).start()
    assert coord.wait_for_stop(5) and coord.should_stop()
    coord.join([])  # nothing to raise
    coord.clear_stop()
    assert not coord.should_stop()


def test_join_reraises_the_first_exception_in_the_main_thread():
    coord = tf.train.Coordinator()

    def failing():
        with coord.stop_on_exception():
            raise ValueError("first")

    def second():
        coord.wait_for_stop()
        coord.request_stop(RuntimeError("second"))

    threads = [threading.Thread(target=failing), threading.Thread(target=second)]
    for t in threads:
        t.start()
    with pytest.raises(ValueError, match="first"):
        coord.join(threads)
    assert coord.joined


def test_clean_stop_exceptions_are_not_raised():
    coord = tf.train.Coordinator()
    coord.request_stop(tf.errors.OutOfRangeError(None, None, "done"))
    coord.join()
    custom = tf.train.Coordinator(clean_stop_exception_types=(KeyError,))
    custom.request_stop(KeyError("fine"))
    custom.join()
    with pytest.raises(ValueError, match="exception"):
        tf.train.Coordinator().request_stop("not an exception")


def test_grace_period_and_live_threads():
    coord = tf.train.Coordinator()
    release = threading.Event()
    stuck = threading.Thread(target=release.wait, daemon=True)
    stuck.start()
    coord.register_thread(stuck)
    coord.request_stop()
    with pytest.raises(RuntimeError, match="threads still running"):
        coord.join(stop_grace_period_secs=0.05)
    coord.clear_stop()
    coord.request_stop()
    coord.join([stuck], stop_grace_period_secs=0.05, ignore_live_threads=True)
    release.set()


def test_raise_requested_exception_and_looper_thread():
    coord = tf.train.Coordinator()
    calls = []
    looper = tf.train.LooperThread.loop(coord, 0.01, target=calls.append, args=(1,))
    time.sleep(0.08)
    coord.request_stop()
    coord.join([looper])
    assert len(calls) >= 2
    failing = tf.train.Coordinator()
    tf.train.LooperThread.loop(failing, None, target=lambda: 1 / 0)
    failing.wait_for_stop(5)
    with pytest.raises(ZeroDivisionError):
        failing.raise_requested_exception()


# -- QueueRunner ---------------------------------------------------------------------------------

def test_runner_fills_the_queue_and_closes_it_at_the_end_of_input(graph):
    counter = tf.Variable(0, name="counter")
    source = tf.FIFOQueue(100, [tf.int32], shapes=[[]])
    sink = tf.FIFOQueue(4, [tf.int32], shapes=[[]])
    runner = tf.train.QueueRunner(sink, [sink.enqueue(source.dequeue())] * 2)
    tf.train.add_queue_runner(runner)
    assert tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS) == [runner]
    assert runner.name == "fifo_queue_1" and runner.queue is sink
    del counter
    with tf.Session() as sess:
        sess.run(source.enqueue_many([np.arange(10, dtype=np.int32)]))
        sess.run(source.close())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess=sess, coord=coord)
        assert len(threads) == 3  # two enqueuers and the close-on-stop thread
        assert runner.create_threads(sess) == []  # already running for this session
        got = []
        with pytest.raises(tf.errors.OutOfRangeError):
            while True:
                got.append(sess.run(sink.dequeue()))
        assert sorted(got) == list(range(10))
        coord.request_stop()
        coord.join(threads)


def test_coordinator_propagates_a_runner_exception(graph):
    bad = tf.constant(np.nan, tf.float32)
    queue = tf.FIFOQueue(4, [tf.float32], shapes=[[]])
    tf.train.add_queue_runner(tf.train.QueueRunner(queue, [queue.enqueue(
        tf.check_numerics(bad, "bad input"))]))
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess=sess, coord=coord)
        assert coord.wait_for_stop(5)
        with pytest.raises(tf.errors.InvalidArgumentError, match="bad input"):
            coord.join(threads)


def test_stop_request_cancels_enqueues_blocked_on_a_full_queue(graph):
    queue = tf.FIFOQueue(2, [tf.int32], shapes=[[]])
    tf.train.add_queue_runner(tf.train.QueueRunner(queue, [queue.enqueue(1)] * 3))
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        deadline = time.monotonic() + 5
        while sess.run(queue.size()) < 2:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        assert hang_watch.producer_count(sess._backend, queue.name) == 3
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=5)
        assert not any(t.is_alive() for t in threads)
        assert sess.run(queue.is_closed())
        assert hang_watch.producer_count(sess._backend, queue.name) == 0


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_runner_without_coordinator_keeps_its_exceptions(graph):
    # As in TF, the error is logged, kept, and re-raised in the runner's own thread.
    queue = tf.FIFOQueue(2, [tf.float32], shapes=[[]])
    p = tf.placeholder(tf.float32)  # never fed: every run fails
    runner = tf.train.QueueRunner(queue, [queue.enqueue(p)])
    with tf.Session() as sess:
        threads = runner.create_threads(sess, start=True, daemon=True)
        for t in threads:
            t.join(5)
        assert len(runner.exceptions_raised) == 1
        assert isinstance(runner.exceptions_raised[0], tf.errors.InvalidArgumentError)


def test_custom_closed_exception_types_and_arguments(graph):
    queue = tf.FIFOQueue(2, [tf.float32], shapes=[[]])
    with pytest.raises(ValueError, match="queue and enqueue_ops"):
        tf.train.QueueRunner(queue, [])
    with pytest.raises(TypeError, match="tuple of tf.error types"):
        tf.train.QueueRunner(queue, [queue.enqueue(1.0)], queue_closed_exception_types=[KeyError])
    p = tf.placeholder(tf.float32)
    runner = tf.train.QueueRunner(queue, [queue.enqueue(p)],
                                  queue_closed_exception_types=(tf.errors.InvalidArgumentError,))
    with tf.Session() as sess:
        for t in runner.create_threads(sess, start=True):
            t.join(5)
        assert runner.exceptions_raised == []
        assert sess.run(queue.is_closed())  # the "closed" error ended the input cleanly


def test_start_queue_runners_needs_a_session(graph):
    with pytest.raises(ValueError, match="No default session"):
        tf.train.start_queue_runners()
    with pytest.raises(TypeError, match="tf.Session"):
        tf.train.start_queue_runners(sess=object())
    queue = tf.FIFOQueue(2, [tf.int32], shapes=[[]])
    tf.train.add_queue_runner(tf.train.QueueRunner(queue, [queue.enqueue(3)]))
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(coord=coord)  # the default session
        assert sess.run(queue.dequeue()) == 3
        coord.request_stop()
        coord.join(threads)
