"""SyncReplicasOptimizer: aggregated updates, stale (backup-worker) gradients dropped, tokens,
the chief's queue runner and the session hook. Replicas are threads sharing one session, so
the accumulators and the token queue are shared exactly as across a cluster's tasks."""

import threading
import time

import numpy as np
import pytest

import tensorflux as tf

LR = 0.5


def build(replicas, total, sparse=False, lr=LR):
    graph = tf.Graph()
    with graph.as_default():
        step = tf.train.get_or_create_global_step()
        w = tf.Variable([1.0, -2.0, 3.0], name="w")
        x = tf.placeholder(tf.float32, [3])
        if sparse:
            loss = tf.reduce_sum((tf.gather(w, [0, 2]) - tf.gather(x, [0, 2])) ** 2)
        else:
            loss = tf.reduce_sum((w - x) ** 2)  # gradient 2 (w - x)
        opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(lr),
                                             replicas_to_aggregate=replicas,
                                             total_num_replicas=total)
        train = opt.minimize(loss, global_step=step)
        init = [tf.global_variables_initializer(), tf.local_variables_initializer()]
    return graph, step, w, x, opt, train, init


def start(graph, opt, init, num_tokens=-1):
    with graph.as_default():
        tokens = opt.get_init_tokens_op(num_tokens)
    sess = tf.Session(graph=graph)
    sess.run(init)
    sess.run(opt.chief_init_op)
    sess.run(tokens)
    coord = tf.train.Coordinator()
    threads = opt.get_chief_queue_runner().create_threads(sess, coord=coord, daemon=True,
                                                          start=True)
    return sess, coord, threads


def run_workers(sess, train, x, feeds):
    errors = []

    def worker(value):
        try:
            sess.run(train, {x: value})
        except Exception as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(f,)) for f in feeds]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert not errors and not any(t.is_alive() for t in threads)


def wait_for_step(sess, step, value):
    deadline = time.time() + 10
    while sess.run(step) < value and time.time() < deadline:
        time.sleep(0.01)
    assert sess.run(step) == value


def stop(sess, coord, threads):
    coord.request_stop()
    sess.close()
    coord.join(threads, stop_grace_period_secs=5, ignore_live_threads=True)


def test_one_update_averages_the_replicas_gradients():
    graph, step, w, x, opt, train, init = build(replicas=2, total=2)
    sess, coord, threads = start(graph, opt, init)
    w0 = np.array([1.0, -2.0, 3.0], np.float32)
    a, b = np.array([0.0, 0.0, 0.0], np.float32), np.array([2.0, 2.0, 2.0], np.float32)
    run_workers(sess, train, x, [a, b])
    wait_for_step(sess, step, 1)
    expect = w0 - LR * (2 * (w0 - a) + 2 * (w0 - b)) / 2
    np.testing.assert_allclose(sess.run(w), expect, rtol=1e-6)
    stop(sess, coord, threads)


def test_backup_worker_gradient_is_dropped_as_stale():
    """Two of three replicas make an update; the third (slow) one's gradient, computed at
    local step 0, arrives after the update and is dropped; it still gets a token."""
    graph, step, w, x, opt, train, init = build(replicas=2, total=3)
    sess, coord, threads = start(graph, opt, init)
    w0 = np.array([1.0, -2.0, 3.0], np.float32)
    a, b, slow = (np.full(3, v, np.float32) for v in (0.0, 2.0, 100.0))
    run_workers(sess, train, x, [a, b])
    wait_for_step(sess, step, 1)
    w1 = w0 - LR * (2 * (w0 - a) + 2 * (w0 - b)) / 2
    np.testing.assert_allclose(sess.run(w), w1, rtol=1e-6)
    # The slow replica still runs with local_step 0 in its first step: stale, so dropped.
    run_workers(sess, train, x, [slow])
    np.testing.assert_allclose(sess.run(w), w1, rtol=1e-6)
    run_workers(sess, train, x, [a, b])  # now at local step 1: a fresh update
    wait_for_step(sess, step, 2)
    w2 = w1 - LR * (2 * (w1 - a) + 2 * (w1 - b)) / 2
    np.testing.assert_allclose(sess.run(w), w2, rtol=1e-5)
    stop(sess, coord, threads)


def test_sparse_gradients_aggregate_rows():
    graph, step, w, x, opt, train, init = build(replicas=2, total=2, sparse=True)
    sess, coord, threads = start(graph, opt, init)
    w0 = np.array([1.0, -2.0, 3.0], np.float32)
    a, b = np.zeros(3, np.float32), np.full(3, 4.0, np.float32)
    run_workers(sess, train, x, [a, b])
    wait_for_step(sess, step, 1)
    expect = w0.copy()
    for i in (0, 2):
        expect[i] -= LR * (2 * (w0[i] - a[i]) + 2 * (w0[i] - b[i])) / 2
    np.testing.assert_allclose(sess.run(w), expect, rtol=1e-6)
    stop(sess, coord, threads)


def test_session_hook_trains_in_a_monitored_session():
    """One replica, chief: the hook seeds one token and starts the chief's runner. The first
    token carries step 0, so the second step's gradient (still at local step 0) is stale:
    four steps make three updates, each w <- w - lr * 2 (w - 1)."""
    graph, step, w, x, opt, train, _ = build(replicas=1, total=1, lr=0.1)
    start_time = time.time()
    with graph.as_default():
        hook = opt.make_session_run_hook(is_chief=True)
        with tf.train.MonitoredTrainingSession(hooks=[hook]) as sess:
            for _ in range(4):
                sess.run(train, {x: np.ones(3, np.float32)})
            deadline = time.time() + 10
            while sess.run(step) < 3 and time.time() < deadline:
                time.sleep(0.01)
            assert sess.run(step) == 3
            expect = 1 + (np.array([1.0, -2.0, 3.0]) - 1) * 0.8 ** 3
            np.testing.assert_allclose(sess.run(w), expect, rtol=1e-5)
    # The chief's runner, blocked on the accumulator at exit, is cancelled, not waited for
    # for the 120 s grace period.
    assert time.time() - start_time < 30


def test_errors():
    graph, step, w, x, opt, train, _ = build(replicas=3, total=2)
    with graph.as_default():
        with pytest.raises(ValueError, match="Too few tokens"):
            opt.get_init_tokens_op(0)
        fresh = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1), 2)
        with pytest.raises(ValueError, match="after apply_gradients"):
            fresh.get_chief_queue_runner()
        with pytest.raises(ValueError, match="Global step is required"):
            fresh.apply_gradients([(tf.constant([1.0, 1.0, 1.0]), w)])
        with pytest.raises(ValueError, match="at least one variable"):
            fresh.apply_gradients([], global_step=step)
        with pytest.raises(ValueError, match="apply_gradient should be called"):
            fresh.make_session_run_hook(is_chief=True).begin()
