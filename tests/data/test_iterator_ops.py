"""tf.data iterators: the resource ops, their life cycle in sessions, and TF1 training loops."""

import numpy as np
import pytest

import tensorflux as tf

# The iterator ops are stateful and not differentiable; their values are checked below.
COVERED_OPS = {"IteratorV2", "OneShotIterator", "MakeIterator", "IteratorGetNext",
               "IteratorToStringHandle", "IteratorFromStringHandleV2", "DatasetToSingleElement"}
GRADIENT_CASES = []


@pytest.fixture(autouse=True)
def _fresh_graph():
    with tf.Graph().as_default():
        yield


def _drain(sess, tensor):
    out = []
    while True:
        try:
            out.append(sess.run(tensor))
        except tf.errors.OutOfRangeError:
            return out


def test_one_shot_iterator_ops_shapes_and_end_of_data():
    ds = tf.data.Dataset.from_tensor_slices((np.arange(6.0).reshape(3, 2), [1, 2, 3])).batch(2)
    iterator = tf.data.make_one_shot_iterator(ds)
    x, y = iterator.get_next()
    assert x.op.type == "IteratorGetNext" and x.op.inputs[0].op.type == "OneShotIterator"
    assert x.shape.as_list() == [None, 2] and y.dtype == tf.int32
    assert iterator.output_shapes[0].as_list() == [None, 2]
    with tf.Session() as sess:
        first = sess.run({"x": x, "y": y})
        np.testing.assert_array_equal(first["x"], [[0.0, 1.0], [2.0, 3.0]])
        np.testing.assert_array_equal(sess.run(y), [3])
        for _ in range(2):  # the end is sticky
            with pytest.raises(tf.errors.OutOfRangeError):
                sess.run(x)
    with tf.Session() as sess:  # a new session starts over
        assert len(_drain(sess, y)) == 2


def test_one_shot_iterator_captures_constants_only():
    n = tf.constant(3, tf.int64)
    iterator = tf.compat.v1.data.make_one_shot_iterator(tf.data.Dataset.range(n))
    with tf.Session() as sess:
        assert [int(v) for v in _drain(sess, iterator.get_next())] == [0, 1, 2]
    with pytest.raises(ValueError, match="make_initializable_iterator"):
        tf.data.Dataset.range(tf.placeholder(tf.int64)).make_one_shot_iterator()
    with pytest.raises(ValueError, match="does not have an initializer"):
        iterator.initializer  # noqa: B018


def test_initializable_iterator_reinitializes_with_new_feeds():
    data = tf.placeholder(tf.float32, [None])
    scale = tf.placeholder(tf.float32, [])
    ds = tf.data.Dataset.from_tensor_slices(data).map(lambda v: v * 2.0).batch(2)
    iterator = tf.data.make_initializable_iterator(ds)
    assert iterator.initializer.type == "MakeIterator"
    batch = iterator.get_next() * scale
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError, match="not been initialized"):
            sess.run(batch, {scale: 1.0})
        sess.run(iterator.initializer, {data: [1.0, 2.0, 3.0]})
        np.testing.assert_allclose(sess.run(batch, {scale: 1.0}), [2.0, 4.0])
        sess.run(iterator.initializer, {data: [10.0]})  # restart mid-way with other values
        np.testing.assert_allclose(sess.run(batch, {scale: 0.5}), [10.0])
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(batch, {scale: 1.0})
        sess.run(iterator.initializer, {data: [4.0, 5.0]})
        np.testing.assert_allclose(sess.run(batch, {scale: 1.0}), [8.0, 10.0])


def test_initializer_requires_feeds_for_placeholders():
    data = tf.placeholder(tf.int64, [None])
    iterator = tf.data.Dataset.from_tensor_slices(data).make_initializable_iterator()
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="Placeholder"):
            sess.run(iterator.initializer)


def test_sessions_have_separate_iterator_state():
    iterator = tf.data.Dataset.range(3).make_initializable_iterator()
    element = iterator.get_next()
    with tf.Session() as first, tf.Session() as second:
        first.run(iterator.initializer)
        second.run(iterator.initializer)
        assert int(first.run(element)) == 0
        assert int(first.run(element)) == 1
        assert int(second.run(element)) == 0


def test_reinitializable_iterator_from_structure():
    train = tf.data.Dataset.range(10).batch(4)
    val = tf.data.Dataset.range(100, 103).batch(4)
    iterator = tf.data.Iterator.from_structure(train.output_types, train.output_shapes)
    element = iterator.get_next()
    assert element.shape.as_list() == [None] and iterator.output_classes == tf.Tensor
    train_init = iterator.make_initializer(train)
    val_init = iterator.make_initializer(val)
    with tf.Session() as sess:
        sess.run(train_init)
        assert [list(b) for b in _drain(sess, element)] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
        sess.run(val_init)
        assert [list(b) for b in _drain(sess, element)] == [[100, 101, 102]]
    with pytest.raises(TypeError, match="output types"):
        iterator.make_initializer(tf.data.Dataset.from_tensors(1.0))
    with pytest.raises(TypeError, match="output shapes"):
        iterator.make_initializer(tf.data.Dataset.from_tensors(np.zeros((2, 2), np.int64)))


def test_from_structure_nested_and_unknown_shapes():
    iterator = tf.data.Iterator.from_structure((tf.int64, {"s": tf.string}))
    number, extra = iterator.get_next()
    assert number.shape.ndims is None and extra["s"].dtype == tf.string
    ds = tf.data.Dataset.from_tensor_slices((np.array([1, 2]), {"s": ["a", "b"]}))
    init = iterator.make_initializer(ds)
    with tf.Session() as sess:
        sess.run(init)
        assert sess.run((number, extra)) == (1, {"s": b"a"})


def test_shared_name_shares_the_position():
    ds = tf.data.Dataset.range(5)
    first = tf.data.make_initializable_iterator(ds, shared_name="shared_it")
    second = tf.data.Iterator.from_structure(ds.output_types, ds.output_shapes,
                                             shared_name="shared_it")
    with tf.Session() as sess:
        sess.run(first.initializer)
        assert int(sess.run(first.get_next())) == 0
        assert int(sess.run(second.get_next())) == 1


def test_monitored_session_stops_at_end_of_data():
    ds = tf.data.Dataset.range(7).batch(3)
    element = ds.make_one_shot_iterator().get_next()
    seen = []
    with tf.train.MonitoredSession() as sess:
        while not sess.should_stop():
            seen.append(list(sess.run(element)))
    assert seen == [[0, 1, 2], [3, 4, 5], [6]]


def test_train_linear_model_from_dataset():
    rng = np.random.RandomState(0)
    features = rng.randn(64, 3).astype(np.float32)
    true_w = np.array([[1.5], [-2.0], [0.5]], np.float32)
    labels = features @ true_w + 0.25
    tf.set_random_seed(1)
    ds = tf.data.Dataset.from_tensor_slices((features, labels)).shuffle(64).repeat(30).batch(16)
    x, y = ds.make_one_shot_iterator().get_next()
    w = tf.Variable(tf.zeros([3, 1]))
    b = tf.Variable(0.0)
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    steps = 0
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        while True:
            try:
                sess.run(train_op)
            except tf.errors.OutOfRangeError:
                break
            steps += 1
        np.testing.assert_allclose(sess.run(w), true_w, atol=1e-3)
        np.testing.assert_allclose(sess.run(b), 0.25, atol=1e-3)
    assert steps == 64 * 30 // 16


def test_feedable_iterator_switches_by_string_handle():
    train = tf.data.Dataset.range(100).repeat()
    val = tf.data.Dataset.range(1000, 1003)
    handle = tf.placeholder(tf.string, shape=[])
    iterator = tf.data.Iterator.from_string_handle(handle, train.output_types,
                                                   train.output_shapes)
    element = iterator.get_next()
    assert element.dtype == tf.int64 and element.shape.as_list() == []
    train_it = train.make_one_shot_iterator()
    val_it = val.make_initializable_iterator()
    with tf.Session() as sess:
        train_handle, val_handle = sess.run([train_it.string_handle(), val_it.string_handle()])
        assert isinstance(train_handle, bytes)
        assert [int(sess.run(element, {handle: train_handle})) for _ in range(3)] == [0, 1, 2]
        sess.run(val_it.initializer)
        assert [int(v) for v in _drain_fed(sess, element, {handle: val_handle})] == [1000, 1001,
                                                                                    1002]
        assert int(sess.run(element, {handle: train_handle})) == 3
        with pytest.raises(tf.errors.NotFoundError):
            sess.run(element, {handle: b"localhost/no_such_iterator"})


def _drain_fed(sess, tensor, feed):
    out = []
    while True:
        try:
            out.append(sess.run(tensor, feed))
        except tf.errors.OutOfRangeError:
            return out


def _outcomes(dataset, limit=12):
    """Values, "E" for an InvalidArgumentError element, "END" at the end (TF1 loop)."""
    iterator = dataset.make_initializable_iterator()
    element = iterator.get_next()
    out = []
    with tf.Session() as sess:
        sess.run(iterator.initializer)
        for _ in range(limit):
            try:
                value = sess.run(element)
            except tf.errors.InvalidArgumentError:
                out.append("E")
                continue
            except tf.errors.OutOfRangeError:
                out.append("END")
                break
            out.append(value.tolist() if hasattr(value, "tolist") else value)
    return out


def test_failed_elements_raise_in_turn_and_iteration_continues():
    # the sequences TensorFlow 1.x produces for the same pipelines
    bad = tf.data.Dataset.from_tensor_slices([1.0, -1.0, 4.0, 9.0, -2.0, 16.0]).map(
        lambda x: tf.check_numerics(tf.sqrt(x), "bad"))
    assert _outcomes(bad) == [1.0, "E", 2.0, 3.0, "E", 4.0, "END"]
    assert _outcomes(bad.filter(lambda x: x > 1.5)) == ["E", 2.0, 3.0, "E", 4.0, "END"]
    assert _outcomes(bad.take(3)) == [1.0, "E", 2.0, 3.0, "END"]
    zipped = tf.data.Dataset.zip((bad, tf.data.Dataset.range(10)))
    assert _outcomes(zipped) == [(1.0, 0), "E", (2.0, 2), (3.0, 3), "E", (4.0, 5), "END"]
    inter = tf.data.Dataset.range(3).interleave(lambda i: bad.skip(i), cycle_length=2)
    assert _outcomes(inter, 8) == [1.0, "E", 2.0, "E", 2.0, 3.0, 3.0, "E"]
    shuffled = _outcomes(bad.shuffle(3, seed=1))
    assert [v for v in shuffled if v == "E"] == ["E", "E"] and shuffled[0] == "E"
    assert sorted(v for v in shuffled if v not in ("E", "END")) == [1.0, 2.0, 3.0, 4.0]
    assert _outcomes(bad.batch(2)) == ["E", [2.0, 3.0], "E", [4.0], "END"]
    kept = bad.apply(tf.data.experimental.ignore_errors())
    assert _outcomes(kept) == [1.0, 2.0, 3.0, 4.0, "END"]


def test_invalid_arguments_fail_when_the_initializer_runs():
    size = tf.placeholder(tf.int64, [])
    for dataset, feed in [(tf.data.Dataset.range(3).batch(size), {size: 0}),
                          (tf.data.Dataset.range(3).shard(2, size), {size: 5}),
                          (tf.data.Dataset.range(3).shuffle(size), {size: 0}),
                          (tf.data.Dataset.range(0, 5, size), {size: 0})]:
        iterator = dataset.make_initializable_iterator()
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match="MakeIterator"):
                sess.run(iterator.initializer, feed)
    iterator = tf.data.Dataset.range(3).batch(0).make_initializable_iterator()
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="greater than zero"):
            sess.run(iterator.initializer)


def test_get_single_element_runs_the_dataset_at_each_step():
    data = tf.placeholder(tf.float32, [None])
    total, count = tf.data.experimental.get_single_element(
        tf.data.Dataset.from_tensor_slices(data).batch(100).map(
            lambda b: (tf.reduce_sum(b), tf.size(b))))
    assert total.op.type == "DatasetToSingleElement" and total.shape.as_list() == []
    with tf.Session() as sess:
        assert sess.run((total, count), {data: [1.0, 2.0, 4.0]}) == (7.0, 3)
        assert sess.run(count, {data: np.zeros(50, np.float32)}) == 50
        with pytest.raises(tf.errors.InvalidArgumentError, match="more than one element"):
            sess.run(count, {data: np.zeros(150, np.float32)})
        with pytest.raises(tf.errors.InvalidArgumentError, match="empty"):
            sess.run(count, {data: np.zeros(0, np.float32)})


def test_prefetch_checks_buffer_size_at_initialization():
    size = tf.placeholder(tf.int64, [])
    iterator = tf.data.Dataset.range(4).map(lambda x: x * 3).prefetch(size) \
        .make_initializable_iterator()
    nxt = iterator.get_next()
    with tf.Session() as sess:
        for good in (-1, 0, 2):
            sess.run(iterator.initializer, {size: good})
            assert [sess.run(nxt) for _ in range(4)] == [0, 3, 6, 9]
        with pytest.raises(tf.errors.InvalidArgumentError, match="buffer_size"):
            sess.run(iterator.initializer, {size: -5})


def test_shuffle_seed_fed_at_initialization():
    seed = tf.placeholder(tf.int64, [])
    iterator = tf.data.Dataset.range(12).shuffle(12, seed=seed).make_initializable_iterator()
    nxt = iterator.get_next()
    fixed = tf.data.Dataset.range(12).shuffle(12, seed=5).make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        orders = {}
        for value in (5, 6, 5):
            sess.run(iterator.initializer, {seed: value})
            order = [int(sess.run(nxt)) for _ in range(12)]
            assert sorted(order) == list(range(12))
            orders.setdefault(value, order)
            assert orders[value] == order  # the same fed seed repeats its order
        assert orders[5] != orders[6]
        assert [int(sess.run(fixed)) for _ in range(12)] == orders[5]  # as a Python seed
