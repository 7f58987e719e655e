"""Fault probes, round four (input pipelines and sessions): Session.close() never waits for a
tf.data element that is still being produced (the blocked run ends with CancelledError once the
element arrives, and the pipeline is released then)."""

import threading
import time

import tensorflux as tf


def _blocked_get_next(build):
    """Starts `sess.run(get_next)` on a pipeline whose map fn blocks until released."""
    release = threading.Event()
    entered = threading.Event()

    def slow(x):
        entered.set()
        release.wait(5)
        return x

    graph = tf.Graph()
    with graph.as_default():
        ds = build(tf.data.Dataset.range(10), lambda x: tf.py_func(slow, [x], tf.int64))
        element = ds.make_one_shot_iterator().get_next()
    sess = tf.Session(graph=graph)
    outcome = {}

    def run():
        try:
            outcome["value"] = sess.run(element)
        except tf.errors.OpError as err:
            outcome["error"] = err

    worker = threading.Thread(target=run)
    worker.start()
    assert entered.wait(5)
    return sess, worker, release, outcome


def test_close_does_not_wait_for_a_blocked_get_next_and_the_run_is_cancelled():
    builds = [lambda ds, f: ds.map(f),
              lambda ds, f: ds.map(f, num_parallel_calls=2).prefetch(2)]
    for build in builds:
        sess, worker, release, outcome = _blocked_get_next(build)
        start = time.monotonic()
        sess.close()
        assert time.monotonic() - start < 0.5  # before: close waited for the element
        assert worker.is_alive()
        release.set()
        worker.join(5)
        assert not worker.is_alive()
        assert "value" not in outcome  # before: the closed session's run returned it
        assert isinstance(outcome["error"], tf.errors.CancelledError)
        assert "Session has been closed" in str(outcome["error"])


def test_an_iterator_closed_mid_get_next_is_released_and_refuses_more_elements():
    from tensorflux.data import iterator_ops

    closed = []
    graph = tf.Graph()
    with graph.as_default():
        gate = threading.Event()

        def gen():
            try:
                yield 1
                gate.wait(5)
                yield 2
                yield 3
            finally:
                closed.append(True)

        ds = tf.data.Dataset.from_generator(gen, tf.int64)
    resource = iterator_ops.IteratorResource("it", [tf.int64], [tf.TensorShape([])])
    resource.initialize(ds, {})
    assert resource.get_next() == 1
    got = {}
    worker = threading.Thread(target=lambda: got.setdefault("v", resource.get_next()))
    worker.start()
    time.sleep(0.1)
    resource.close_resource()  # returns at once although get_next is inside the generator
    assert worker.is_alive() and not closed
    gate.set()
    worker.join(5)
    assert got["v"] == 2  # the element in flight is delivered to its caller ...
    assert closed == [True]  # ... and the generator is closed right after
    try:
        resource.get_next()
        raise AssertionError("get_next after close returned")
    except tf.errors.CancelledError as err:
        assert "'it' was closed" in str(err)
