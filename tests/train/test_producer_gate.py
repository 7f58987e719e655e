"""Input producers (queue runners) yield to a running foreground step, unless a consumer is
blocked on a queue; the produced values and their order are unchanged."""

import threading
import time

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.ops.data_flow.barrier import Barrier
from tensorflux.platform import producer_gate


@pytest.fixture(autouse=True)
def own_counts():
    """Each test starts from zero counts: blocked takes abandoned by earlier tests in this
    process (a session closed under a pending dequeue) leave the process-wide count above 0,
    which only keeps the gate open."""
    with producer_gate._cond:
        saved = list(producer_gate._state)
        producer_gate._state[:] = [0, 0]
    yield
    with producer_gate._cond:
        producer_gate._state[:] = saved


@pytest.fixture
def gate_on():
    old = producer_gate.set_enabled(True)
    yield
    producer_gate.set_enabled(old)


def test_no_foreground_means_no_wait(gate_on):
    assert producer_gate._state == [0, 0]
    assert producer_gate.wait_turn() == 0.0


def test_waits_while_a_foreground_run_is_active_until_it_ends(gate_on):
    assert producer_gate.foreground_enter()
    threading.Timer(0.05, producer_gate.foreground_exit).start()
    waited = []
    t = threading.Thread(target=lambda: waited.append(producer_gate.wait_turn()))
    t.start()
    t.join(5)
    assert 0.03 < waited[0] < producer_gate.MAX_WAIT_SECS
    assert producer_gate._state == [0, 0]


def test_a_blocked_consumer_releases_waiting_producers(gate_on):
    assert producer_gate.foreground_enter()
    try:
        waited = []
        t = threading.Thread(target=lambda: waited.append(producer_gate.wait_turn()))
        t.start()
        time.sleep(0.02)
        producer_gate.consumer_blocked()
        t.join(5)
        assert waited and waited[0] < producer_gate.MAX_WAIT_SECS
        assert producer_gate.wait_turn() == 0.0  # still blocked: no wait at all
        producer_gate.consumer_unblocked()
    finally:
        producer_gate.foreground_exit()
    assert producer_gate._state == [0, 0]


def test_wait_is_capped(gate_on, monkeypatch):
    monkeypatch.setattr(producer_gate, "MAX_WAIT_SECS", 0.03)
    assert producer_gate.foreground_enter()
    try:
        t0 = time.monotonic()
        waited = producer_gate.wait_turn()
        assert 0.025 <= waited < 1.0 and time.monotonic() - t0 < 1.0
    finally:
        producer_gate.foreground_exit()


def test_producer_threads_are_not_foreground(gate_on):
    out = []

    def body():
        producer_gate.mark_producer()
        out.append((producer_gate.is_producer(), producer_gate.foreground_enter()))

    t = threading.Thread(target=body)
    t.start()
    t.join()
    assert out == [(True, False)] and not producer_gate.is_producer()
    assert producer_gate._state == [0, 0]


def test_unblocking_calls_unblocked_once():
    calls = []
    producer_gate.consumer_blocked()
    wrapped = producer_gate.unblocking(lambda *a, **k: calls.append((a, k)))
    wrapped(1)
    wrapped(error=2)
    assert calls == [((1,), {}), ((), {"error": 2})]
    assert producer_gate._state[1] == 0


def _counting_pipeline(enabled):
    """A queue runner enqueues 1, 2, 3, ... into a small FIFO queue; the main thread dequeues
    batches (blocking on an empty queue) while its own steps are foreground."""
    old = producer_gate.set_enabled(enabled)
    try:
        with tf.Graph().as_default():
            counter = tf.Variable(0, dtype=tf.int64)
            q = tf.FIFOQueue(8, [tf.int64], shapes=[[]])
            qr = tf.train.QueueRunner(q, [q.enqueue([tf.assign_add(counter, 1)])])
            batch = q.dequeue_many(5)
            square = tf.square(tf.cast(batch, tf.float64))
            with tf.Session() as sess:
                sess.run(counter.initializer)
                coord = tf.train.Coordinator()
                threads = qr.create_threads(sess, coord=coord, start=True)
                got = [sess.run([batch, square]) for _ in range(6)]
                assert producer_gate._state[0] == 0
                coord.request_stop()
                sess.run(q.close(cancel_pending_enqueues=True))
                coord.join(threads, stop_grace_period_secs=5)
        return got
    finally:
        producer_gate.set_enabled(old)


def test_pipeline_values_and_order_are_unchanged_and_nothing_hangs():
    t0 = time.monotonic()
    on = _counting_pipeline(True)
    off = _counting_pipeline(False)
    assert time.monotonic() - t0 < 5
    want = np.arange(1, 31).reshape(6, 5)
    for got in (on, off):
        np.testing.assert_array_equal(np.stack([b for b, _ in got]), want)
        np.testing.assert_array_equal(np.stack([s for _, s in got]), want.astype(float) ** 2)
    assert producer_gate._state == [0, 0]


def test_cancelled_blocked_dequeue_unblocks(gate_on):
    with tf.Graph().as_default():
        q = tf.FIFOQueue(4, [tf.float32], shapes=[[]])
        deq = q.dequeue()
        close = q.close(cancel_pending_enqueues=True)
        with tf.Session() as sess:
            threading.Timer(0.05, lambda: sess.run(close)).start()
            with pytest.raises(tf.errors.OutOfRangeError):
                sess.run(deq)
    assert producer_gate._state == [0, 0]


def test_blocked_barrier_and_accumulator_takes_count_as_blocked_consumers(gate_on):
    with tf.Graph().as_default():
        b = Barrier([tf.float32], shapes=[[]])
        ins = b.insert_many(0, [b"k1", b"k2"], [1.0, 2.0])
        take = b.take_many(2)
        acc = tf.ConditionalAccumulator(tf.float32, shape=[])
        apply = acc.apply_grad(3.0, local_step=0)
        avg = acc.take_grad(1)
        with tf.Session() as sess:
            seen = []

            def later(op):
                deadline = time.monotonic() + 5
                while producer_gate._state[1] == 0 and time.monotonic() < deadline:
                    time.sleep(0.005)
                seen.append(producer_gate._state[1])
                sess.run(op)

            for fill, get in ((ins, take), (apply, avg)):
                t = threading.Thread(target=later, args=(fill,))
                t.start()
                got = sess.run(get, options=tf.RunOptions(timeout_in_ms=5000))
                t.join(5)
                if get is take:
                    np.testing.assert_array_equal(sorted(got[2][0]), [1.0, 2.0])
                else:
                    assert got == 3.0
    assert seen == [1, 1] and producer_gate._state == [0, 0]
