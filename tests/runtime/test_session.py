"""Session.run: fetch structures, feeds, errors, caching, concurrency, lifecycle."""

import collections
import threading

import numpy as np
import pytest

import tensorflux as tf


@pytest.fixture
def graph():
    g = tf.Graph()
    with g.as_default():
        yield g


def test_nested_fetch_structures(graph):
    a = tf.constant([1.0, 2.0], name="a")
    b = a * 3.0
    pair = collections.namedtuple("pair", "x y")
    with tf.Session() as sess:
        out = sess.run({"a": a, "nested": [(b, a), pair(x=b, y=[a])], "op": tf.no_op()})
    np.testing.assert_array_equal(out["a"], [1.0, 2.0])
    assert isinstance(out["nested"][0], tuple) and isinstance(out["nested"][1], pair)
    np.testing.assert_array_equal(out["nested"][1].x, [3.0, 6.0])
    np.testing.assert_array_equal(out["nested"][1].y[0], [1.0, 2.0])
    assert out["op"] is None
    ordered = collections.OrderedDict([("z", a), ("y", b)])
    with tf.Session() as sess:
        result = sess.run(ordered)
    assert list(result) == ["z", "y"] and isinstance(result, collections.OrderedDict)


def test_fetch_by_name_and_same_tensor_twice(graph):
    a = tf.constant(5, name="five")
    with tf.Session() as sess:
        assert sess.run("five:0") == 5
        x, y = sess.run([a, a])
        assert x == y == 5
        assert sess.run("five") is None  # an op name fetches the op
        with pytest.raises(ValueError):
            sess.run("nothing:0")
        with pytest.raises(TypeError):
            sess.run(None)


def test_scalar_fetch_types(graph):
    with tf.Session() as sess:
        value = sess.run(tf.constant(2.5))
        assert isinstance(value, np.float32) and value == 2.5
        assert isinstance(sess.run(tf.constant(3)), np.int32)
        assert sess.run(tf.constant(b"hi")) == b"hi"


def test_feeds_convert_and_check(graph):
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    y = tf.matmul(x, tf.constant([[1.0], [2.0]]))
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(y, {x: [[1, 1]]}), [[3.0]])
        np.testing.assert_allclose(sess.run(y, {"x:0": np.ones((3, 2))}), [[3.0]] * 3)
        with pytest.raises(ValueError, match="Cannot feed value of shape"):
            sess.run(y, {x: np.ones((2, 3))})
        with pytest.raises(TypeError, match="cannot be a tf.Tensor"):
            sess.run(y, {x: tf.constant([[1.0, 1.0]])})
        with pytest.raises(tf.errors.InvalidArgumentError, match="'x'"):
            sess.run(y)
    i = tf.placeholder(tf.int32, [])
    with tf.Session() as sess:
        with pytest.raises(TypeError):
            sess.run(i, {i: 2**40})


def test_nested_tuple_feed_keys(graph):
    # Feeding an RNN state back: the key is a tuple of LSTMStateTuples, the value a run's result.
    cell = tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.LSTMCell(2) for _ in range(2)])
    state = cell.zero_state(1, tf.float32)
    total = tf.add_n([tf.reduce_sum(t) for t in tf.nest.flatten(state)])
    a = tf.placeholder(tf.float32, [])
    b = tf.placeholder(tf.float32, [2])
    with tf.Session() as sess:
        value = sess.run(state)
        value = tuple(tf.nn.rnn_cell.LSTMStateTuple(s.c + 1.0, s.h + 2.0) for s in value)
        assert sess.run(total, {state: value}) == pytest.approx(12.0)
        np.testing.assert_allclose(sess.run(a + b, {(a, (b,)): (1.0, ([2.0, 3.0],))}), [3, 4])
        with pytest.raises(ValueError, match="2 elements"):
            sess.run(a + b, {(a, b): (1.0,)})


def test_feeding_intermediate_prunes_producer(graph):
    never = tf.placeholder(tf.float32, [], name="never")
    middle = never * 2.0
    top = middle + 1.0
    with tf.Session() as sess:
        assert sess.run(top, {middle: 10.0}) == 11.0
        assert sess.run(middle, {middle: 4.0}) == 4.0


def test_kernel_error_names_op_and_line(graph):
    a = tf.constant(np.ones((2, 3), np.float32))
    p = tf.placeholder(tf.float32, None)
    bad = tf.matmul(a, p, name="bad_matmul")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(bad, {p: np.ones((2, 2), np.float32)})
    message = str(info.value)
    assert "bad_matmul" in message and __file__ in message
    assert info.value.op is bad.op
    assert info.value.error_code == tf.errors.INVALID_ARGUMENT


def test_graph_extended_after_run_and_cache(graph):
    a = tf.constant(1.0)
    with tf.Session() as sess:
        assert sess.run(a) == 1.0
        b = a + 41.0
        assert sess.run(b) == 42.0
        backend = sess._backend
        size = len(backend._cache)
        for _ in range(5):
            sess.run(b)
        assert len(backend._cache) == size


def test_make_callable(graph):
    x = tf.placeholder(tf.float32, [])
    y = x * x
    with tf.Session() as sess:
        square = sess.make_callable([y, tf.no_op()], feed_list=[x])
        assert square(3.0)[0] == 9.0
        assert square(4.0) == [16.0, None]
        with pytest.raises(TypeError):
            square()


def test_closed_session_refuses_runs(graph):
    sess = tf.Session()
    a = tf.constant(1.0)
    sess.close()
    with pytest.raises(RuntimeError):
        sess.run(a)


def test_default_session_eval_and_run(graph):
    a = tf.constant(7.0)
    with pytest.raises(ValueError):
        a.eval()
    with tf.Session():
        assert a.eval() == 7.0
        tf.no_op().run()
    sess = tf.InteractiveSession()
    try:
        assert a.eval() == 7.0
    finally:
        sess.close()


def test_fetched_values_do_not_alias_graph_constants(graph):
    a = tf.constant([1.0, 2.0])
    with tf.Session() as sess:
        first = sess.run(a)
        first[0] = 100.0
        np.testing.assert_array_equal(sess.run(a), [1.0, 2.0])


def test_concurrent_runs_from_threads(graph):
    x = tf.placeholder(tf.float64, [64, 64])
    y = tf.matmul(x, x)
    values = [np.random.RandomState(i).rand(64, 64) for i in range(8)]
    errors = []

    def work(v):
        try:
            for _ in range(20):
                np.testing.assert_allclose(sess.run(y, {x: v}), v @ v)
        except Exception as err:  # noqa: BLE001
            errors.append(err)

    with tf.Session() as sess:
        threads = [threading.Thread(target=work, args=(v,)) for v in values]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not errors


def test_config_and_options_objects(graph):
    config = tf.ConfigProto(inter_op_parallelism_threads=2, allow_soft_placement=True)
    options = tf.RunOptions(timeout_in_ms=1000)
    with tf.Session(config=config) as sess:
        assert sess.run(tf.constant(1), options=options) == 1
        assert len(sess.list_devices()) == 1
        assert sess.list_devices()[0].name.endswith("CPU:0")
    with pytest.raises(TypeError):
        tf.Session(config={"bad": 1})


def test_pruning_runs_only_what_fetches_need(graph):
    counter = tf.Variable(0, name="counter")
    bump = tf.assign_add(counter, 1)
    with tf.control_dependencies([bump]):
        counted = tf.identity(tf.constant(1.0))
    unrelated = tf.constant(2.0) * 3.0
    with tf.Session() as sess:
        sess.run(counter.initializer)
        for _ in range(3):
            assert sess.run(unrelated) == 6.0
        assert sess.run(counter) == 0
        sess.run(counted)
        sess.run([counted, unrelated])
        assert sess.run(counter) == 2
        fed = sess.run(counted, {counted: 5.0})
        assert fed == 5.0 and sess.run(counter) == 2


def test_inter_op_thread_pool_gives_the_serial_result(graph):
    x = tf.placeholder(tf.float64, [400, 400])
    branches = [tf.matmul(tf.matmul(x, x), x) for _ in range(4)]
    total = tf.add_n(branches)
    value = np.random.RandomState(0).rand(400, 400)
    with tf.Session(config=tf.ConfigProto(inter_op_parallelism_threads=4)) as sess:
        result = sess.run(total, {x: value})
    np.testing.assert_allclose(result, 4 * (value @ value @ value), rtol=1e-10)


def test_unsatisfiable_device_names_the_graph_op_type_even_when_folded():
    with tf.Graph().as_default():
        with tf.device("/gpu:0"):
            doubled = tf.multiply(tf.constant([1.0, 2.0]), 2.0, name="doubled")
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match=r"operation 'doubled' \(Mul\).*'/device:GPU:0'"):
                sess.run(doubled)
        soft = tf.ConfigProto(allow_soft_placement=True)
        with tf.Session(config=soft) as sess:
            np.testing.assert_array_equal(sess.run(doubled), [2.0, 4.0])
