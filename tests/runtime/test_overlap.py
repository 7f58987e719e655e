"""Inter-op overlap in the fast path (runtime/overlap.py): heavy kernels off the critical path
run in the background on the inter-op pool; values, errors and the thread budget are those of
the plain sequential step."""

import threading

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.lib.numerics import intra_op
from tensorflux.runtime import overlap
from tensorflux.runtime import thread_budget as tb
from tensorflux.runtime.fastpath import FastPath

ON = dict(use_per_session_threads=True, inter_op_parallelism_threads=2)
OFF = dict(use_per_session_threads=True, inter_op_parallelism_threads=1)


@pytest.fixture
def graph():
    with tf.Graph().as_default() as g:
        yield g


@pytest.fixture(autouse=True)
def quiet(monkeypatch):
    """Overlap switched on (`TFX_OVERLAP=1`; it is off by default). Background kernels start
    only while BLAS may use two threads (free cores): the tests see a quiet machine whatever
    the load."""
    monkeypatch.setenv("TFX_OVERLAP", "1")
    monkeypatch.setattr(tb, "intra_op_threads", lambda: 2)


@pytest.fixture
def counted(monkeypatch):
    """Counts the kernels started in the background (and keeps the budget's count right)."""
    calls = []
    started = tb.concurrent_kernel_started

    def count():
        calls.append(threading.get_ident())
        started()

    monkeypatch.setattr(tb, "concurrent_kernel_started", count)
    return calls


def _fast_paths(sess):
    return [part.runner for plan in sess._backend._cache.values() for part in plan.partitions
            if isinstance(part.runner, FastPath)]


def _mlp(batch=128, width=384, seed=0):
    """A two-layer MLP trained by gradient descent (pairs dW || dx, updates of 0.5M floats)."""
    rng = np.random.RandomState(seed)
    x = tf.placeholder(tf.float32, [batch, 300])
    y = tf.placeholder(tf.int64, [batch])
    h = tf.layers.dense(x, width, activation=tf.nn.relu)
    h = tf.layers.dense(h, width, activation=tf.nn.relu)
    logits = tf.layers.dense(h, 10)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y,
                                                                         logits=logits))
    train = tf.train.GradientDescentOptimizer(0.05).minimize(loss)
    feed = {x: rng.standard_normal((batch, 300)).astype(np.float32),
            y: rng.randint(0, 10, batch)}
    return train, loss, feed


def _train(config, steps=2):
    with tf.Graph().as_default():
        tf.set_random_seed(7)
        train, loss, feed = _mlp()
        with tf.Session(config=tf.ConfigProto(**config)) as sess:
            sess.run(tf.global_variables_initializer())
            losses = [sess.run([train, loss], feed)[1] for _ in range(steps)]
            runners = _fast_paths(sess)
            return losses, sess.run(tf.trainable_variables()), runners


def test_values_equal_with_overlap_on_and_off(counted):
    losses_on, vars_on, runners = _train(ON)
    assert any(r.overlapped for r in runners)
    assert counted, "no kernel ran in the background"
    spawned = len(counted)
    losses_off, vars_off, _ = _train(OFF)
    assert len(counted) == spawned  # inter_op_parallelism_threads=1: nothing in the background
    assert losses_on == losses_off
    for a, b in zip(vars_on, vars_off):
        np.testing.assert_array_equal(a, b)


def test_values_equal_with_the_unscheduled_plan(monkeypatch):
    losses_on, vars_on, _ = _train(ON)
    monkeypatch.setenv("TFX_OVERLAP", "0")
    losses_plain, vars_plain, runners = _train(ON)
    assert not any(r.overlapped for r in runners)
    assert losses_on == losses_plain
    for a, b in zip(vars_on, vars_plain):
        np.testing.assert_array_equal(a, b)


def test_run_options_caller_thread_runs_everything_inline(graph, counted):
    train, _, feed = _mlp()
    with tf.Session(config=tf.ConfigProto(**ON)) as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train, feed, options=tf.RunOptions(inter_op_thread_pool=-1))
        assert counted == []
        sess.run(train, feed)
        assert counted


def _pair(graph):
    """Two independent large products of fed operands and their sum."""
    a1, b1 = tf.placeholder(tf.float32, name="a1"), tf.placeholder(tf.float32, name="b1")
    a2, b2 = tf.placeholder(tf.float32, name="a2"), tf.placeholder(tf.float32, name="b2")
    p1 = tf.matmul(a1, b1, name="first")
    p2 = tf.matmul(a2, b2, name="second")
    return (a1, b1, a2, b2), tf.add(p1, p2, name="total")


def _operands(bad=()):
    rng = np.random.RandomState(3)
    shapes = {"a1": (256, 300), "b1": (300, 256), "a2": (256, 300), "b2": (300, 256)}
    for name in bad:
        shapes[name] = (299, 256)
    return {name: rng.standard_normal(shape).astype(np.float32)
            for name, shape in shapes.items()}


def _run_pair(graph, config, values):
    names, total = _pair(graph)
    with tf.Session(config=tf.ConfigProto(**config)) as sess:
        feed = dict(zip(names, (values[k] for k in ("a1", "b1", "a2", "b2"))))
        try:
            return sess.run(total, feed), None, _fast_paths(sess)
        except tf.errors.OpError as err:
            return None, err, _fast_paths(sess)


@pytest.mark.parametrize("bad", [("b1",), ("b2",), ("b1", "b2")])
def test_an_error_in_one_of_a_pair_is_raised_with_its_op(bad, counted):
    values = _operands(bad)
    with tf.Graph().as_default() as g:
        _, on, runners = _run_pair(g, ON, values)
    assert runners and runners[0].overlapped
    assert counted  # the pair really ran in the background
    with tf.Graph().as_default() as g:
        _, off, _ = _run_pair(g, OFF, values)
    assert isinstance(on, tf.errors.InvalidArgumentError)
    assert type(on) is type(off)
    assert on.op is not None and on.op.name == off.op.name  # the first in program order
    if len(bad) == 1:
        assert on.op.name == {"b1": "first", "b2": "second"}[bad[0]]


def test_a_pair_gives_the_sequential_values(graph):
    values = _operands()
    got, err, runners = _run_pair(graph, ON, values)
    assert err is None and runners[0].overlapped
    expected = values["a1"] @ values["b1"] + values["a2"] @ values["b2"]
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("size", [16, 512])
def test_small_and_large_products_stay_inline(graph, counted, size):
    """Small products are not worth a hand-off; large ones scale on BLAS's threads."""
    names, total = _pair(graph)
    rng = np.random.RandomState(0)
    feed = {t: rng.standard_normal((size, size)).astype(np.float32) for t in names}
    with tf.Session(config=tf.ConfigProto(**ON)) as sess:
        got = sess.run(total, feed)
    a1, b1, a2, b2 = (feed[t] for t in names)
    np.testing.assert_array_equal(got, a1 @ b1 + a2 @ b2)
    assert counted == []
    assert not overlap.worth_spawning("MatMul", 2 * size ** 3)


def test_update_waits_for_readers_of_its_variable(graph):
    """A large update in the background never moves before a read it was ordered after."""
    rng = np.random.RandomState(1)
    w = tf.Variable(rng.standard_normal((1024, 1024)).astype(np.float32))
    x = tf.placeholder(tf.float32, [128, 1024])
    grad = tf.matmul(x, x, transpose_a=True)
    update = tf.train.GradientDescentOptimizer(0.5).apply_gradients([(grad, w)])
    with tf.control_dependencies([update]):
        after = tf.reduce_sum(w.read_value())
    feed = {x: rng.standard_normal((128, 1024)).astype(np.float32)}
    results = []
    for config in (ON, OFF):
        with tf.Session(config=tf.ConfigProto(**config)) as sess:
            sess.run(w.initializer)
            results.append(sess.run(after, feed))
    assert results[0] == results[1]


def test_update_keeps_its_order_with_readers_of_views(graph):
    """Readers of a view of the variable (a reshape, a transpose) are ordered with its
    update as direct readers are: the values of both steps equal the sequential ones."""
    rng = np.random.RandomState(5)
    w = tf.Variable(rng.standard_normal((1024, 1024)).astype(np.float32))
    x = tf.placeholder(tf.float32, [64, 1024])
    view = tf.transpose(tf.reshape(w, [1024, 1024]))
    reader = tf.reduce_sum(tf.matmul(x, view))
    grad = tf.matmul(x, x, transpose_a=True)
    update = tf.train.GradientDescentOptimizer(0.5).apply_gradients([(grad, w)])
    feed = {x: rng.standard_normal((64, 1024)).astype(np.float32)}
    results = []
    for config in (ON, OFF):
        with tf.Session(config=tf.ConfigProto(**config)) as sess:
            sess.run(w.initializer)
            results.append([sess.run([reader, update], feed)[0] for _ in range(2)])
    assert results[0] == results[1]


def test_loaded_machine_runs_background_kernels_inline(monkeypatch, counted):
    monkeypatch.setattr(tb, "intra_op_threads", lambda: 1)  # BLAS on one thread: load
    losses, _, runners = _train(ON, steps=1)
    assert any(r.overlapped for r in runners) and counted == []


class _LatePool:
    """A pool whose worker starts only when told (one waiting for a time slice)."""

    def __init__(self):
        self.works = []

    def try_run(self, fn, counted=True):
        self.works.append(fn)
        return True


def test_joiner_runs_a_kernel_no_worker_has_started():
    pool = _LatePool()
    step = overlap.StepOverlap(pool)
    a = np.random.RandomState(0).standard_normal((256, 256)).astype(np.float32)
    job = step.spawn(np.matmul, lambda args: True, None, a, a)
    assert pool.works and step.jobs == [job]
    np.testing.assert_array_equal(step.join(job), a @ a)
    pool.works[0]()  # the worker starting late finds it done and does nothing
    assert step.jobs == [] and job.args is None

    def fail(x):
        raise ValueError("bad operand")

    job = step.spawn(fail, lambda args: True, None, a)
    with pytest.raises(ValueError, match="bad operand"):
        step.join(job)


# -- the schedule -----------------------------------------------------------------------------

def test_product_flops():
    assert overlap.product_flops("MatMul", {}, [(2, 3), (3, 4)]) == 48
    assert overlap.product_flops("MatMul", {"transpose_a": True, "transpose_b": True},
                                 [(3, 2), (4, 3)]) == 48
    assert overlap.product_flops("BatchMatMulV2", {}, [(5, 2, 3), (3, 4)]) == 240
    assert overlap.product_flops("Conv2D", {"strides": [1, 2, 2, 1]},
                                 [(1, 8, 8, 3), (3, 3, 3, 4)]) == 2 * 64 * 108 // 4
    assert overlap.product_flops("ApplyGradientDescent", {}, [None, (), (10, 10)]) == \
        100 * overlap._UPDATE_FLOPS_PER_ELEMENT
    assert overlap.product_flops("MatMul", {}, [None, (3, 4)]) is None
    assert overlap.worth_spawning("MatMul", 2 * 32 * 512 * 1024)  # an RNN cell's product
    assert not overlap.worth_spawning("MatMul", 2 * 640 * 256 * 10000)  # scales on BLAS
    assert overlap.worth_spawning("ApplyGradientDescent", 16 * 2_560_000)


def test_large_product_runs_beside_a_long_chain(graph, counted):
    """A product too large to pair goes to the background beside a chain of small kernels
    (an RNN's backward pass beside the output layer's weight gradient), not beside an equal
    partner."""
    rng = np.random.RandomState(4)
    big_a = tf.Variable(rng.standard_normal((256, 512)).astype(np.float32))
    big_b = tf.Variable(rng.standard_normal((512, 768)).astype(np.float32))
    big = tf.matmul(big_a, big_b)  # 201 MFLOP, static shapes
    h = h0 = tf.placeholder(tf.float32, [8, 64])
    w = tf.constant(rng.standard_normal((64, 64)).astype(np.float32) * 0.1)
    for _ in range(120):
        h = tf.tanh(tf.matmul(h, w)) * 0.5 + h * 0.5
    total = tf.reduce_sum(big) + tf.reduce_sum(h)
    feed = {h0: rng.standard_normal((8, 64)).astype(np.float32)}
    values = []
    for config in (ON, OFF):
        with tf.Session(config=tf.ConfigProto(**config)) as sess:
            sess.run(tf.global_variables_initializer())
            values.append(sess.run(total, feed))
            if config is ON:
                assert any(r.overlapped for r in _fast_paths(sess)) and counted
    assert values[0] == values[1]


def test_chain_without_independent_work_is_not_scheduled(graph):
    x = tf.placeholder(tf.float32, [256, 256])
    y = tf.matmul(tf.matmul(x, x), x)
    with tf.Session(config=tf.ConfigProto(**ON)) as sess:
        value = np.eye(256, dtype=np.float32)
        np.testing.assert_array_equal(sess.run(y, {x: value}), value)
        assert not any(r.overlapped for r in _fast_paths(sess))


# -- intra_op chunks offered to the joiner -----------------------------------------------------

class _Offers:
    def __init__(self):
        self.works = []

    def offer(self, work):
        self.works.append(work)
        return True


@pytest.mark.parametrize("shape", [(640, 256, 1000), (256, 640, 1000), (33, 517, 771),
                                   (1024, 128, 1024)])
def test_background_chunks_equal_the_whole_product(shape):
    m, k, n = shape
    rng = np.random.RandomState(m + k + n)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    a[0, 0], b[1, 1] = np.nan, np.inf
    job, result = _Offers(), []
    # Background chunking applies where the process does not split products itself; an
    # earlier session may have left splitting on (the budget is process-wide).
    saved = list(intra_op._STATE)
    intra_op.configure(1)

    def background():
        intra_op.set_background(job)
        try:
            result.append(intra_op.matmul(a, b))
        finally:
            intra_op.set_background(None)

    thread = threading.Thread(target=background)
    thread.start()
    while thread.is_alive():
        for work in list(job.works):
            work()  # the joiner claims chunks too
    thread.join()
    intra_op._STATE[:] = saved
    assert job.works, "the product was not chunked"
    np.testing.assert_array_equal(result[0], np.matmul(a, b))
