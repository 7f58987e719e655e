"""Queues: values, order, static checks, every blocking path, timeouts and exactly-once delivery."""

import logging
import threading
import time

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.ops.data_flow import hang_watch

COVERED_OPS = {"FIFOQueueV2", "PaddingFIFOQueueV2", "RandomShuffleQueueV2", "PriorityQueueV2",
               "QueueEnqueueV2", "QueueEnqueueManyV2", "QueueDequeueV2", "QueueDequeueManyV2",
               "QueueDequeueUpToV2", "QueueCloseV2", "QueueSizeV2", "QueueIsClosedV2"}
GRADIENT_CASES = []  # queue ops are not differentiable

TIMEOUT = tf.RunOptions(timeout_in_ms=150)


@pytest.fixture
def graph():
    g = tf.Graph()
    with g.as_default():
        yield g


def _start(target, *args):
    result = {}

    def run():
        try:
            result["value"] = target(*args)
        except Exception as err:  # noqa: BLE001 - inspected by the test
            result["error"] = err

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, result


def _wait_for(predicate, timeout=5.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.005)


# -- the op table: each row builds a queue op, runs it and checks the value ----------------------

def _fifo_rows():
    q = tf.FIFOQueue(10, [tf.int32, tf.float32, tf.string], shapes=[[], [2], []])
    return q, q.enqueue_many([[1, 2, 3], np.arange(6, dtype=np.float32).reshape(3, 2),
                              [b"a", b"bb", b"c"]])


def test_fifo_queue_values_order_shapes_and_dtypes(graph):
    q, fill = _fifo_rows()
    assert q.queue_ref.op.type == "FIFOQueueV2" and q.queue_ref.dtype == tf.resource
    one = q.dequeue()
    many = q.dequeue_many(2)
    assert [t.shape.as_list() for t in one] == [[], [2], []]
    assert [t.shape.as_list() for t in many] == [[2], [2, 2], [2]]
    assert [t.dtype for t in many] == [tf.int32, tf.float32, tf.string]
    assert one[0].op.type == "QueueDequeueV2" and many[0].op.type == "QueueDequeueManyV2"
    with tf.Session() as sess:
        sess.run(fill)
        assert sess.run(q.size()) == 3
        i, x, s = sess.run(one)
        assert (i, s) == (1, b"a") and x.dtype == np.float32 and list(x) == [0.0, 1.0]
        i, x, s = sess.run(many)
        np.testing.assert_array_equal(i, [2, 3])
        np.testing.assert_array_equal(x, [[2, 3], [4, 5]])
        assert list(s) == [b"bb", b"c"] and i.dtype == np.int32
        assert sess.run(q.size()) == 0 and not sess.run(q.is_closed())
        sess.run(q.close())
        assert sess.run(q.is_closed())


def test_op_names_and_types(graph):
    q = tf.FIFOQueue(3, [tf.int32], shapes=[[]])
    assert q.name == "fifo_queue"
    assert q.enqueue(1).name == "fifo_queue_enqueue"
    assert q.enqueue(2).name == "fifo_queue_enqueue_1"
    assert q.enqueue_many([[1]]).type == "QueueEnqueueManyV2"
    assert q.dequeue().name == "fifo_queue_Dequeue:0"
    assert q.dequeue_up_to(2).op.type == "QueueDequeueUpToV2"
    assert q.dequeue_up_to(2).shape.as_list() == [None]
    assert q.size().op.type == "QueueSizeV2" and q.size().dtype == tf.int32
    assert q.is_closed().op.type == "QueueIsClosedV2" and q.is_closed().dtype == tf.bool
    assert q.close(cancel_pending_enqueues=True).type == "QueueCloseV2"
    assert q.close().get_attr("cancel_pending_enqueues") is False


def test_queue_without_shapes_and_single_component_results(graph):
    q = tf.FIFOQueue(5, tf.float64)
    assert q.shapes[0].rank is None
    deq = q.dequeue()
    assert isinstance(deq, tf.Tensor) and deq.shape.rank is None
    with tf.Session() as sess:
        sess.run(q.enqueue([[1.0, 2.0]]))
        sess.run(q.enqueue([[[3.0]]]))
        np.testing.assert_array_equal(sess.run(deq), [1.0, 2.0])
        np.testing.assert_array_equal(sess.run(deq), [[3.0]])
        sess.run(q.enqueue([1.0]))
        with pytest.raises(tf.errors.InvalidArgumentError, match="specified shapes"):
            sess.run(q.dequeue_many(1))
        assert sess.run(q.size()) == 1  # the refused request took nothing


def test_named_queue_uses_dicts(graph):
    q = tf.FIFOQueue(4, [tf.int32, tf.float32], shapes=[[], []], names=["a", "b"])
    with pytest.raises(ValueError, match="dictionary"):
        q.enqueue([1, 2.0])
    with pytest.raises(ValueError, match="do not match names"):
        q.enqueue({"a": 1})
    enq = q.enqueue({"b": 2.5, "a": 7})
    out = q.dequeue()
    assert sorted(out) == ["a", "b"]
    with tf.Session() as sess:
        sess.run(enq)
        assert sess.run(out) == {"a": 7, "b": 2.5}


def test_graph_construction_errors_name_the_queue(graph):
    q = tf.FIFOQueue(3, [tf.int32, tf.float32], shapes=[[], [2]], name="myq")
    with pytest.raises(ValueError, match="myq.*component 1"):
        q.enqueue([1, [1.0, 2.0, 3.0]])
    with pytest.raises(TypeError, match="myq.*component 0"):
        q.enqueue(["a", [1.0, 2.0]])
    with pytest.raises(ValueError, match="myq.*2 components"):
        q.enqueue([1, [1.0, 2.0], 3])
    too_few = q.enqueue([1])  # as TF: the kernel refuses it when it runs
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError,
                                             match="Signature mismatch.*myq.*2 components"):
        sess.run(too_few)
    with pytest.raises(ValueError, match="rank at least 1"):
        q.enqueue_many([1, [[1.0, 2.0]]])
    with pytest.raises(ValueError, match="elements"):
        q.enqueue_many([[1, 2], [[1.0, 2.0]]])
    with pytest.raises(ValueError, match="must be >= 0"):
        q.dequeue_many(-1)
    with pytest.raises(ValueError, match="fully defined"):
        tf.FIFOQueue(3, [tf.int32], shapes=[[None]])
    with pytest.raises(ValueError, match="same length"):
        tf.FIFOQueue(3, [tf.int32, tf.int32], shapes=[[]])
    with pytest.raises(TypeError):
        tf.PaddingFIFOQueue(3, [tf.int32])  # shapes are required


def test_run_time_shape_and_type_checks(graph):
    q = tf.FIFOQueue(3, [tf.float32], shapes=[[2]], name="rq")
    p = tf.placeholder(tf.float32)
    enq = q.enqueue([p])
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="Shape mismatch in tuple component 0. Expected \\[2\\], "
                                 "got \\[3\\]"):
            sess.run(enq, {p: [1.0, 2.0, 3.0]})
        assert sess.run(q.size()) == 0


def test_closed_queue_errors_and_elements_stay(graph):
    q = tf.FIFOQueue(10, [tf.int32], shapes=[[]])
    with tf.Session() as sess:
        sess.run(q.enqueue_many([[1, 2]]))
        sess.run(q.close())
        with pytest.raises(tf.errors.CancelledError,
                           match="FIFOQueue '_\\d+_fifo_queue' is closed"):
            sess.run(q.enqueue(3))
        with pytest.raises(tf.errors.OutOfRangeError,
                           match="is closed and has insufficient elements \\(requested 3, "
                                 "current size 2\\)"):
            sess.run(q.dequeue_many(3))
        assert sess.run(q.size()) == 2
        np.testing.assert_array_equal(sess.run(q.dequeue_up_to(5)), [1, 2])
        with pytest.raises(tf.errors.OutOfRangeError, match="requested 1, current size 0"):
            sess.run(q.dequeue())
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(q.dequeue_up_to(2))
        assert sess.run(q.dequeue_many(0)).shape == (0,)


def test_padding_fifo_queue_pads_each_batch(graph):
    q = tf.PaddingFIFOQueue(10, [tf.int32, tf.string], shapes=[[None, 2], []])
    p = tf.placeholder(tf.int32, [None, 2])
    enq = q.enqueue([p, "s"])
    batch = q.dequeue_many(2)
    assert batch[0].shape.as_list() == [2, None, 2]
    with tf.Session() as sess:
        sess.run(enq, {p: [[1, 2], [3, 4], [5, 6]]})
        sess.run(enq, {p: [[7, 8]]})
        values, strings = sess.run(batch)
        np.testing.assert_array_equal(values, [[[1, 2], [3, 4], [5, 6]],
                                               [[7, 8], [0, 0], [0, 0]]])
        assert list(strings) == [b"s", b"s"]
        sess.run(enq, {p: np.zeros((0, 2), np.int32)})
        sess.run(q.close())
        assert sess.run(q.dequeue_up_to(3))[0].shape == (1, 0, 2)


def test_priority_queue_dequeues_smallest_priority_first(graph):
    q = tf.PriorityQueue(10, [tf.string], shapes=[[]])
    assert q.dtypes == [tf.int64, tf.string]
    assert q.queue_ref.op.get_attr("component_types") == [tf.string]
    with tf.Session() as sess:
        sess.run(q.enqueue_many([[5, 1, 3, 2], [b"e", b"a", b"c", b"b"]]))
        sess.run(q.enqueue([4, b"d"]))
        priorities, values = sess.run(q.dequeue_many(4))
        np.testing.assert_array_equal(priorities, [1, 2, 3, 4])
        assert list(values) == [b"a", b"b", b"c", b"d"]
        assert sess.run(q.dequeue()) == [5, b"e"]


def test_random_shuffle_queue_min_after_dequeue_and_permutation(graph):
    q = tf.RandomShuffleQueue(100, 10, [tf.int32], shapes=[[]], seed=7)
    assert q.queue_ref.op.get_attr("seed2") == 7
    deq = q.dequeue()
    with tf.Session() as sess:
        sess.run(q.enqueue_many([np.arange(30, dtype=np.int32)]))
        out = [sess.run(deq) for _ in range(20)]
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(deq, options=TIMEOUT)  # 10 left == min_after_dequeue
        assert sess.run(q.size()) == 10
        sess.run(q.close())
        out += list(sess.run(q.dequeue_up_to(100)))
    assert sorted(out) == list(range(30))
    assert out != sorted(out)


def test_random_shuffle_queue_seed_is_repeatable(graph):
    def order():
        with tf.Graph().as_default():
            q = tf.RandomShuffleQueue(50, 0, [tf.int32], shapes=[[]], seed=3)
            with tf.Session() as sess:
                sess.run(q.enqueue_many([np.arange(20, dtype=np.int32)]))
                return list(sess.run(q.dequeue_many(20)))

    assert order() == order()


def test_shared_name_shares_and_checks_attributes(graph):
    a = tf.FIFOQueue(5, [tf.int32], shapes=[[]], shared_name="sh")
    b = tf.FIFOQueue(5, [tf.int32], shapes=[[]], shared_name="sh")
    c = tf.FIFOQueue(6, [tf.int32], shapes=[[]], shared_name="sh")
    d = tf.FIFOQueue(5, [tf.float32], shapes=[[]], shared_name="sh")
    with tf.Session() as sess:
        sess.run(a.enqueue(4))
        assert sess.run(b.dequeue()) == 4
        with pytest.raises(tf.errors.InvalidArgumentError, match="capacity 5 but requested "
                                                                 "capacity was 6"):
            sess.run(c.size())
        with pytest.raises(tf.errors.InvalidArgumentError, match="component types int32"):
            sess.run(d.size())
    with tf.Session() as sess:  # another session has its own devices, so its own queue
        assert sess.run(a.size()) == 0


# -- blocking paths ----------------------------------------------------------------------------

def test_blocked_dequeue_is_woken_by_an_enqueue(graph):
    q = tf.FIFOQueue(2, [tf.int32], shapes=[[]])
    deq = q.dequeue_many(3)  # more than the capacity: progress by staging
    enq = q.enqueue_many([[1, 2, 3, 4]])
    with tf.Session() as sess:
        thread, result = _start(sess.run, enq)
        time.sleep(0.05)
        assert thread.is_alive()  # the queue is full
        np.testing.assert_array_equal(sess.run(deq), [1, 2, 3])
        thread.join(5)
        assert "error" not in result
        assert sess.run(q.dequeue()) == 4


def test_close_wakes_pending_dequeues_and_lets_pending_enqueues_finish(graph):
    q = tf.FIFOQueue(1, [tf.int32], shapes=[[]])
    with tf.Session() as sess:
        waiting, result = _start(sess.run, q.dequeue_many(2))
        sess.run(q.enqueue(1))
        time.sleep(0.05)
        sess.run(q.close())
        waiting.join(5)
        assert isinstance(result["error"], tf.errors.OutOfRangeError)
        assert sess.run(q.size()) == 1  # the staged element went back
        full, _ = _start(sess.run, q.enqueue(2))  # rejected: closed
        full.join(5)
    with tf.Graph().as_default():
        q = tf.FIFOQueue(1, [tf.int32], shapes=[[]])
        with tf.Session() as sess:
            sess.run(q.enqueue(1))
            pending, result = _start(sess.run, q.enqueue(2))
            time.sleep(0.05)
            sess.run(q.close())  # pending enqueues are not cancelled ...
            assert sess.run(q.dequeue()) == 1
            pending.join(5)
            assert "error" not in result and sess.run(q.dequeue()) == 2  # ... and finish


def test_close_with_cancel_pending_enqueues(graph):
    q = tf.FIFOQueue(1, [tf.int32], shapes=[[]])
    with tf.Session() as sess:
        sess.run(q.enqueue(1))
        pending, result = _start(sess.run, q.enqueue(2))
        time.sleep(0.05)
        sess.run(q.close(cancel_pending_enqueues=True))
        pending.join(5)
        assert isinstance(result["error"], tf.errors.CancelledError)
        assert "Enqueue operation was cancelled" in result["error"].message
        assert sess.run(q.size()) == 1


def test_timeouts_lose_and_duplicate_nothing(graph):
    q = tf.FIFOQueue(4, [tf.int32], shapes=[[]])
    with tf.Session() as sess:
        sess.run(q.enqueue_many([[1, 2]]))
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(q.dequeue_many(3), options=TIMEOUT)
        assert sess.run(q.size()) == 2
        sess.run(q.enqueue_many([[3, 4]]))
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(q.enqueue(5), options=TIMEOUT)  # full
        np.testing.assert_array_equal(sess.run(q.dequeue_many(4)), [1, 2, 3, 4])
        small = tf.FIFOQueue(2, [tf.int32], shapes=[[]])
        sess.run(small.enqueue_many([[7, 8]]))
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(small.dequeue_many(3), options=TIMEOUT)  # staged both, then gave them back
        np.testing.assert_array_equal(sess.run(small.dequeue_many(2)), [7, 8])
    config = tf.ConfigProto(operation_timeout_in_ms=100)
    with tf.Session(config=config) as sess:
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(q.dequeue())


def test_session_close_cancels_blocked_steps(graph):
    q = tf.FIFOQueue(1, [tf.int32], shapes=[[]])
    sess = tf.Session()
    blocked, result = _start(sess.run, q.dequeue())
    _wait_for(lambda: len(sess._backend._active) == 1)
    start = time.monotonic()
    sess.close()
    blocked.join(5)
    assert time.monotonic() - start < 2
    assert isinstance(result["error"], tf.errors.CancelledError)


def test_a_step_error_cancels_its_own_blocked_dequeue(graph):
    q = tf.FIFOQueue(2, [tf.float32], shapes=[[]])
    bad = tf.placeholder(tf.float32)
    check = tf.check_numerics(bad, "boom")
    with tf.Session() as sess:
        other, result = _start(sess.run, q.dequeue())  # another step, waiting all along
        with pytest.raises(tf.errors.InvalidArgumentError, match="boom"):
            sess.run([q.dequeue(), check], {bad: np.nan})
        sess.run(q.enqueue(1.0))
        other.join(5)
        assert result["value"] == 1.0  # the failed step took nothing
        sess.run(q.enqueue(2.0))
        assert sess.run(q.size()) == 1


def test_exactly_once_with_concurrent_producers_consumers_and_timeouts(graph):
    q = tf.FIFOQueue(8, [tf.int32], shapes=[[]])
    values = tf.placeholder(tf.int32, [None])
    enq = q.enqueue_many([values])
    many = q.dequeue_many(3)
    upto = q.dequeue_up_to(5)
    one = q.dequeue()
    got, lock = [], threading.Lock()
    with tf.Session() as sess:
        def produce(k):
            for start in range(k * 1000, k * 1000 + 120, 6):
                sess.run(enq, {values: np.arange(start, start + 6, dtype=np.int32)})

        def consume(fetch):
            timeout = tf.RunOptions(timeout_in_ms=20)
            while True:
                try:
                    out = sess.run(fetch, options=timeout)
                except tf.errors.DeadlineExceededError:
                    continue
                except tf.errors.OutOfRangeError:
                    return
                with lock:
                    got.extend(np.atleast_1d(out).tolist())

        producers = [threading.Thread(target=produce, args=(k,)) for k in range(3)]
        consumers = [threading.Thread(target=consume, args=(f,)) for f in (many, upto, one)]
        for t in producers + consumers:
            t.start()
        for t in producers:
            t.join(30)
        sess.run(q.close())
        for t in consumers:
            t.join(30)
        leftover = sess.run(q.size())
    # Every element exactly once: the dequeue and dequeue_up_to consumers drain the closed queue.
    assert leftover == 0
    assert sorted(got) == sorted(k * 1000 + i for k in range(3) for i in range(120))


# -- hang detection ----------------------------------------------------------------------------

@pytest.fixture
def short_hang_threshold():
    hang_watch.set_hang_warning_secs(0.1)
    yield
    hang_watch.set_hang_warning_secs(5.0)


def test_warns_when_nothing_can_enqueue(graph, caplog, short_hang_threshold):
    q = tf.FIFOQueue(2, [tf.int32], shapes=[[]], name="lonely")
    with tf.Session() as sess, caplog.at_level(logging.WARNING, logger="tensorflow"):
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(q.dequeue(), options=tf.RunOptions(timeout_in_ms=600))
    warnings = [r.getMessage() for r in caplog.records if "lonely" in r.getMessage()]
    assert warnings and "start_queue_runners" in warnings[0]


def test_no_warning_when_a_producer_is_registered_or_a_step_runs(graph, caplog,
                                                                  short_hang_threshold):
    q = tf.FIFOQueue(2, [tf.int32], shapes=[[]], name="fed")
    other = tf.FIFOQueue(1, [tf.int32], shapes=[[]], name="other")
    with tf.Session() as sess, caplog.at_level(logging.WARNING, logger="tensorflow"):
        hang_watch.add_producer(sess._backend, "fed")
        try:
            with pytest.raises(tf.errors.DeadlineExceededError):
                sess.run(q.dequeue(), options=tf.RunOptions(timeout_in_ms=400))
        finally:
            hang_watch.remove_producer(sess._backend, "fed")
        sess.run(other.enqueue(0))
        busy, _ = _start(sess.run, other.enqueue(1), None, tf.RunOptions(timeout_in_ms=800))
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(q.dequeue(), options=tf.RunOptions(timeout_in_ms=400))
        busy.join(5)
    assert not [r for r in caplog.records if "fed" in r.getMessage()]


# -- concurrency: the paper's Figure 1 on one session ------------------------------------------

def test_concurrent_steps_overlap_at_a_barrier(graph):
    n = 4
    arrive = tf.FIFOQueue(n, [tf.int32], shapes=[[]])
    go = tf.FIFOQueue(n, [tf.int32], shapes=[[]])
    with tf.control_dependencies([arrive.enqueue(1)]):
        step = go.dequeue()
    with tf.Session() as sess:
        threads = [_start(sess.run, step, None, tf.RunOptions(timeout_in_ms=10000))
                   for _ in range(n)]
        _wait_for(lambda: sess.run(arrive.size()) == n)  # n steps are in flight at once
        sess.run(go.enqueue_many([np.arange(n, dtype=np.int32)]))
        for thread, result in threads:
            thread.join(10)
            assert "error" not in result
        assert sorted(r["value"] for _, r in threads) == list(range(n))


def test_input_pipeline_hogwild_training_and_checkpoint_steps(graph, tmp_path):
    data = tf.FIFOQueue(64, [tf.float32], shapes=[[4]])
    rows = tf.placeholder(tf.float32, [None, 4])
    feed = data.enqueue_many([rows])
    w = tf.Variable(tf.zeros([4]), name="w")
    steps = tf.Variable(0, name="steps")
    batch = data.dequeue_many(8)
    with tf.control_dependencies([batch]):
        train = tf.group(tf.assign_add(w, tf.reduce_sum(batch, 0), use_locking=True),
                         tf.assign_add(steps, 1, use_locking=True))
    saver = tf.train.Saver([w, steps])
    chunks = [np.full((16, 4), k, np.float32) for k in range(1, 21)]  # 20 * 16 rows
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        stop = threading.Event()
        saved = []

        def input_thread(part):
            for chunk in part:
                sess.run(feed, {rows: chunk})

        def trainer():
            while True:
                try:
                    sess.run(train, options=tf.RunOptions(timeout_in_ms=5000))
                except tf.errors.OutOfRangeError:
                    return

        def checkpointer():
            while not stop.is_set():
                saved.append(saver.save(sess, str(tmp_path / "model"), write_meta_graph=False))
                time.sleep(0.02)

        inputs = [threading.Thread(target=input_thread, args=(chunks[i::2],)) for i in range(2)]
        trainers = [threading.Thread(target=trainer) for _ in range(3)]
        saving = threading.Thread(target=checkpointer)
        for t in inputs + trainers + [saving]:
            t.start()
        for t in inputs:
            t.join(30)
        sess.run(data.close())
        for t in trainers:
            t.join(30)
        stop.set()
        saving.join(30)
        final_w, final_steps = sess.run([w, steps])
    assert final_steps == 20 * 16 // 8
    np.testing.assert_allclose(final_w, np.full(4, 16 * sum(range(1, 21)), np.float32))
    assert saved


def test_run_time_shape_mismatch_prints_shapes_as_tf(graph):
    q = tf.FIFOQueue(4, [tf.int32, tf.int32], shapes=[[2], [2, 3]])
    a = tf.placeholder(tf.int32)
    b = tf.placeholder(tf.int32)
    one, many = q.enqueue([a, b]), q.enqueue_many([a, b])
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"component 1\. Expected \[2,3\], got \[3,2\]"):
            sess.run(one, {a: [1, 2], b: np.zeros((3, 2), np.int32)})
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"component 1\. Expected \[4,2,3\], got \[4,2,4\]"):
            sess.run(many, {a: np.zeros((4, 2), np.int32), b: np.zeros((4, 2, 4), np.int32)})
        assert sess.run(q.size()) == 0


def test_closing_the_session_names_the_blocked_queue_op(graph):
    empty = tf.FIFOQueue(2, [tf.int64], shapes=[[]])
    full = tf.FIFOQueue(1, [tf.int64], shapes=[[]])
    sess = tf.Session()
    sess.run(full.enqueue([7]))
    errors_seen = {}

    def blocked(key, fetch):
        try:
            sess.run(fetch)
        except tf.errors.OpError as err:
            errors_seen[key] = err

    threads = [threading.Thread(target=blocked, args=(k, f)) for k, f in
               (("dequeue", empty.dequeue()), ("enqueue", full.enqueue([8])))]
    for t in threads:
        t.start()
    time.sleep(0.2)
    sess.close()
    for t in threads:
        t.join(5)
    assert isinstance(errors_seen["dequeue"], tf.errors.CancelledError)
    assert "Dequeue operation was cancelled" in errors_seen["dequeue"].message
    assert isinstance(errors_seen["enqueue"], tf.errors.CancelledError)
    assert "Enqueue operation was cancelled" in errors_seen["enqueue"].message


def test_padding_queue_needs_a_list_of_shapes(graph):
    for bad in (None, [], (3, 2), [None]):
        with pytest.raises(ValueError, match="a list of shapes must be provided"):
            tf.PaddingFIFOQueue(4, tf.float32, shapes=bad)
    q = tf.PaddingFIFOQueue(4, [tf.float32], shapes=[(None, 2)])
    assert q.shapes[0].as_list() == [None, 2]


def test_unknown_dims_print_as_question_marks(graph):
    q = tf.PaddingFIFOQueue(4, [tf.int32], shapes=[(None, 3)])
    p = tf.placeholder(tf.int32)
    one, many = q.enqueue([p]), q.enqueue_many([p])
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"Expected \[\?,3\], got \[5,2\]"):
            sess.run(one, {p: np.zeros((5, 2), np.int32)})
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"Expected \[2,\?,3\], got \[2,1,4\]"):
            sess.run(many, {p: np.zeros((2, 1, 4), np.int32)})
