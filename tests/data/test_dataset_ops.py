"""tf.data transformations: produced values against Python/NumPy references."""

import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorflux as tf


def _values(dataset, feed=None):
    """Every element of `dataset` (one pass), as fetched by a TF1 loop."""
    iterator = dataset.make_initializable_iterator()
    next_element = iterator.get_next()
    out = []
    with tf.Session() as sess:
        sess.run(iterator.initializer, feed_dict=feed)
        while True:
            try:
                out.append(sess.run(next_element))
            except tf.errors.OutOfRangeError:
                return out


def _ints(values):
    return [int(v) for v in values]


@pytest.fixture(autouse=True)
def _fresh_graph():
    with tf.Graph().as_default():
        yield


def test_from_tensor_slices_tuple_and_dict():
    x = np.arange(12, dtype=np.float32).reshape(6, 2)
    y = np.arange(6, dtype=np.int32)
    ds = tf.data.Dataset.from_tensor_slices((x, {"label": y, "name": ["a"] * 6}))
    assert ds.output_types == (tf.float32, {"label": tf.int32, "name": tf.string})
    assert ds.output_shapes[0].as_list() == [2]
    got = _values(ds)
    assert len(got) == 6
    for i, (feature, extra) in enumerate(got):
        np.testing.assert_array_equal(feature, x[i])
        assert extra["label"] == y[i] and extra["name"] == b"a"


def test_from_tensor_slices_python_lists_infer_tf_dtypes():
    ds = tf.data.Dataset.from_tensor_slices(([1.5, 2.5], [1, 2]))
    assert ds.output_types == (tf.float32, tf.int32)


def test_from_tensors_and_range():
    ds = tf.data.Dataset.from_tensors(np.ones((2, 3)))
    assert ds.output_shapes.as_list() == [2, 3]
    (value,) = _values(ds)
    np.testing.assert_array_equal(value, np.ones((2, 3)))
    assert _ints(_values(tf.data.Dataset.range(5))) == list(range(5))
    assert _ints(_values(tf.data.Dataset.range(2, 11, 3))) == list(range(2, 11, 3))
    assert _ints(_values(tf.data.Dataset.range(5, 0, -2))) == [5, 3, 1]
    assert tf.data.Dataset.range(3).output_types == tf.int64


def test_placeholder_sources_are_fed_at_initialization():
    p = tf.placeholder(tf.float32, [None, 2])
    n = tf.placeholder(tf.int64, [])
    ds = tf.data.Dataset.from_tensor_slices(p).take(n)
    assert ds.output_shapes.as_list() == [2]
    data = np.arange(8, dtype=np.float32).reshape(4, 2)
    got = _values(ds, {p: data, n: 3})
    np.testing.assert_array_equal(np.stack(got), data[:3])


def test_zip_and_concatenate():
    a = tf.data.Dataset.range(4)
    b = tf.data.Dataset.from_tensor_slices(np.array([10.0, 20.0, 30.0]))
    got = _values(tf.data.Dataset.zip({"a": a, "b": b}))
    assert [(int(e["a"]), float(e["b"])) for e in got] == [(0, 10.0), (1, 20.0), (2, 30.0)]
    cat = a.concatenate(tf.data.Dataset.range(7, 9))
    assert _ints(_values(cat)) == [0, 1, 2, 3, 7, 8]
    with pytest.raises(TypeError, match="different types"):
        a.concatenate(b)


def test_concatenate_relaxes_shapes():
    a = tf.data.Dataset.from_tensors(np.zeros(2))
    b = tf.data.Dataset.from_tensors(np.zeros(3))
    assert a.concatenate(b).output_shapes.as_list() == [None]


def test_map_unpacks_tuples_and_keeps_nesting():
    ds = tf.data.Dataset.from_tensor_slices((np.arange(4), np.arange(4) * 10))
    ds = ds.map(lambda a, b: {"sum": a + b, "pair": (a, b * 2)}, num_parallel_calls=2)
    got = _values(ds)
    assert [int(e["sum"]) for e in got] == [0, 11, 22, 33]
    assert [int(e["pair"][1]) for e in got] == [0, 20, 40, 60]


def test_map_returning_list_gives_tuple_and_python_values():
    ds = tf.data.Dataset.range(3).map(lambda x: [x, 7])
    assert ds.output_types == (tf.int64, tf.int32)
    assert [(int(a), int(b)) for a, b in _values(ds)] == [(0, 7), (1, 7), (2, 7)]


def test_map_copies_captured_constants():
    table = tf.constant([5.0, 6.0, 7.0])
    ds = tf.data.Dataset.range(3).map(lambda i: tf.gather(table, i) * 2.0)
    assert [float(v) for v in _values(ds)] == [10.0, 12.0, 14.0]


def test_map_captures_placeholders_and_variables_for_initializable_iterators():
    # TF 1.x: a function may use a placeholder or variable of the outer graph; the value is
    # taken when the iterator is initialized, and a one-shot iterator refuses it.
    p = tf.placeholder(tf.float32, [])
    shifted = tf.data.Dataset.range(3).map(lambda x: tf.cast(x, tf.float32) + p)
    with pytest.raises(ValueError, match="Placeholder.*one-shot"):
        shifted.make_one_shot_iterator()
    v = tf.Variable(2.0, name="weights")
    scaled = shifted.filter(lambda y: y * v > 2.5)
    iterator = scaled.make_initializable_iterator()
    nxt = iterator.get_next()
    with tf.Session() as sess:
        sess.run(v.initializer)
        sess.run(iterator.initializer, {p: 0.5})
        assert [sess.run(nxt) for _ in range(2)] == [1.5, 2.5]  # 0.5 * 2 is filtered out
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(nxt)
        sess.run(v.assign(10.0))
        sess.run(iterator.initializer, {p: -0.25})
        assert [sess.run(nxt) for _ in range(2)] == [0.75, 1.75]


def test_nested_function_captures_a_placeholder_of_the_outermost_graph():
    repeat = tf.placeholder(tf.int64, [])
    ds = tf.data.Dataset.range(1, 3).flat_map(
        lambda x: tf.data.Dataset.from_tensors(x).repeat(repeat).map(lambda y: y * repeat))
    iterator = ds.make_initializable_iterator()
    nxt = iterator.get_next()
    with tf.Session() as sess:
        sess.run(iterator.initializer, {repeat: 2})
        assert [sess.run(nxt) for _ in range(4)] == [2, 2, 4, 4]


def test_map_may_return_a_sparse_tensor_value_of_tensors():
    ds = tf.data.Dataset.range(3).map(lambda i: tf.SparseTensorValue(
        indices=[[0, 1], [2, 0]], values=i * tf.constant([3, -1], tf.int64),
        dense_shape=[3, 2]))
    iterator = ds.make_one_shot_iterator()
    nxt = iterator.get_next()
    assert isinstance(nxt, tf.SparseTensor)
    with tf.Session() as sess:
        for i in range(3):
            value = sess.run(nxt)
            assert isinstance(value, tf.SparseTensorValue)
            np.testing.assert_array_equal(value.indices, [[0, 1], [2, 0]])
            np.testing.assert_array_equal(value.values, [3 * i, -i])
            np.testing.assert_array_equal(value.dense_shape, [3, 2])


def test_map_looks_up_a_captured_table():
    # The TF1 text pipeline: tokens -> ids through a lookup table of the outer graph.
    table = tf.lookup.StaticHashTable(
        tf.lookup.KeyValueTensorInitializer(["a", "b", "c"], tf.constant([1, 2, 3], tf.int64)),
        default_value=-1)
    source = tf.placeholder(tf.string, [None])
    ds = tf.data.Dataset.from_tensor_slices(source).map(
        lambda s: table.lookup(tf.string_split([s]).values)).padded_batch(2, [None])
    iterator = ds.make_initializable_iterator()
    batch = iterator.get_next()
    with tf.Session() as sess:
        sess.run(tf.tables_initializer())
        sess.run(iterator.initializer, {source: ["a b", "c x a", "b"]})
        np.testing.assert_array_equal(sess.run(batch), [[1, 2, 0], [3, -1, 1]])
        np.testing.assert_array_equal(sess.run(batch), [[2]])
    with pytest.raises(ValueError, match="hash_table.*one-shot"):
        tf.data.make_one_shot_iterator(
            tf.data.Dataset.from_tensor_slices(["a"]).map(lambda w: table.lookup(w)))


def test_map_identity_and_pass_through_components():
    ds = tf.data.Dataset.from_tensor_slices((np.arange(3), np.arange(3) + 5))
    got = _values(ds.map(lambda a, b: (b, a * 3)))
    assert [(int(a), int(b)) for a, b in got] == [(5, 0), (6, 3), (7, 6)]
    assert _ints(_values(tf.data.Dataset.range(3).map(lambda x: x))) == [0, 1, 2]


def test_map_random_ops_are_seeded_and_advance():
    def sample():
        with tf.Graph().as_default():
            tf.set_random_seed(7)
            ds = tf.data.Dataset.range(4).map(lambda _: tf.random_uniform([3]))
            return np.stack(_values(ds))

    first, second = sample(), sample()
    np.testing.assert_array_equal(first, second)
    assert len({tuple(row) for row in first}) == 4
    assert first.min() >= 0.0 and first.max() < 1.0


def test_map_error_names_the_function_and_op():
    ds = tf.data.Dataset.from_tensor_slices(np.array([1.0, -1.0]))
    ds = ds.map(lambda x: tf.check_numerics(tf.sqrt(x), "bad sqrt"))
    iterator = ds.make_one_shot_iterator()
    next_element = iterator.get_next()
    with tf.Session() as sess:
        assert sess.run(next_element) == 1.0
        with pytest.raises(tf.errors.InvalidArgumentError, match="CheckNumerics") as info:
            sess.run(next_element)
    assert "Dataset.map()" in str(info.value) and "IteratorGetNext" in str(info.value)


def test_filter():
    ds = tf.data.Dataset.range(10).filter(lambda x: tf.equal(x % 3, 0))
    assert _ints(_values(ds)) == [0, 3, 6, 9]
    pairs = tf.data.Dataset.from_tensor_slices((np.arange(5), np.arange(5) * 2.0))
    got = _values(pairs.filter(lambda a, b: b > 4.0))
    assert [int(a) for a, _ in got] == [3, 4]
    with pytest.raises(ValueError, match="scalar boolean"):
        tf.data.Dataset.range(3).filter(lambda x: x)


@settings(max_examples=12, deadline=None)
@given(n=st.integers(0, 11), size=st.integers(1, 5), drop=st.booleans())
def test_batch_matches_numpy(n, size, drop):
    with tf.Graph().as_default():
        data = np.arange(n * 2, dtype=np.float64).reshape(n, 2)
        ds = tf.data.Dataset.from_tensor_slices(data).batch(size, drop_remainder=drop)
        assert ds.output_shapes.as_list() == [size if drop else None, 2]
        got = _values(ds)
        stop = n - n % size if drop else n
        want = [data[i:min(i + size, stop)] for i in range(0, stop, size)]
        assert len(got) == len(want)
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)


def test_batch_with_tensor_size_and_mismatched_shapes():
    size = tf.placeholder(tf.int64, [])
    ds = tf.data.Dataset.range(5).batch(size)
    got = _values(ds, {size: 2})
    assert [list(b) for b in got] == [[0, 1], [2, 3], [4]]
    ragged = tf.data.Dataset.range(1, 3).map(lambda x: tf.fill([x], x)).batch(2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="different shapes"):
        _values(ragged)


def test_padded_batch():
    ds = tf.data.Dataset.range(5).map(lambda x: (x, tf.fill([x], x)))
    batched = ds.padded_batch(2, padded_shapes=([], [None]))
    assert [s.as_list() for s in batched.output_shapes] == [[None], [None, None]]
    got = _values(batched)
    np.testing.assert_array_equal(got[1][1], [[2, 2, 0], [3, 3, 3]])
    fixed = ds.padded_batch(2, padded_shapes=([], [5]),
                            padding_values=(0, tf.constant(-1, tf.int64)), drop_remainder=True)
    assert [s.as_list() for s in fixed.output_shapes] == [[2], [2, 5]]
    got = _values(fixed)
    assert len(got) == 2
    np.testing.assert_array_equal(got[0][1], [[-1] * 5, [1, -1, -1, -1, -1]])
    too_small = ds.padded_batch(2, padded_shapes=([], [2]))
    with pytest.raises(tf.errors.DataLossError, match="smaller size"):
        _values(too_small)


def test_padded_batch_strings():
    ds = tf.data.Dataset.from_tensor_slices(["a b", "c"]).map(
        lambda s: tf.string_split([s]).values)
    (batch,) = _values(ds.padded_batch(2, padded_shapes=[None]))
    assert batch.tolist() == [[b"a", b"b"], [b"c", b""]]


def test_repeat_take_skip_shard():
    base = tf.data.Dataset.range(4)
    assert _ints(_values(base.repeat(2))) == [0, 1, 2, 3] * 2
    assert _ints(_values(base.repeat().take(10))) == ([0, 1, 2, 3] * 3)[:10]
    assert _ints(_values(base.skip(2))) == [2, 3]
    assert _ints(_values(base.skip(-1))) == []
    assert _ints(_values(base.take(-1))) == [0, 1, 2, 3]
    assert _ints(_values(tf.data.Dataset.range(10).shard(3, 1))) == [1, 4, 7]
    assert _ints(_values(base.take(0).repeat())) == []
    assert _ints(_values(base.prefetch(2).cache().repeat(2))) == [0, 1, 2, 3] * 2


def test_shuffle_is_a_permutation_and_seeded():
    def order(seed, epochs=1, reshuffle=None):
        with tf.Graph().as_default():
            ds = tf.data.Dataset.range(20).shuffle(5, seed=seed, reshuffle_each_iteration=reshuffle)
            return _ints(_values(ds.repeat(epochs)))

    first = order(3)
    assert sorted(first) == list(range(20)) and first != list(range(20))
    assert order(3) == first
    assert order(4) != first
    two = order(3, epochs=2)
    assert two[:20] == first and sorted(two[20:]) == list(range(20)) and two[20:] != first
    same = order(3, epochs=2, reshuffle=False)
    assert same[:20] == same[20:]


def test_shuffle_buffer_bounds_displacement():
    with tf.Graph().as_default():
        got = _ints(_values(tf.data.Dataset.range(50).shuffle(4, seed=1)))
    # an element can only leave the buffer after it entered: at output k, at most k+4 were read
    assert all(value < k + 4 for k, value in enumerate(got))


def test_shuffle_graph_seed_and_reinitialization():
    tf.set_random_seed(11)
    ds = tf.data.Dataset.range(10).shuffle(10)
    iterator = ds.make_initializable_iterator()
    next_element = iterator.get_next()
    with tf.Session() as sess:
        runs = []
        for _ in range(2):
            sess.run(iterator.initializer)
            runs.append([int(sess.run(next_element)) for _ in range(10)])
    assert runs[0] == runs[1] and sorted(runs[0]) == list(range(10))


def test_flat_map_and_interleave_order():
    ds = tf.data.Dataset.range(1, 4).flat_map(lambda x: tf.data.Dataset.range(x))
    assert _ints(_values(ds)) == [0, 0, 1, 0, 1, 2]
    slices = tf.data.Dataset.from_tensor_slices(np.arange(6).reshape(3, 2)).flat_map(
        lambda row: tf.data.Dataset.from_tensor_slices(row * 10))
    assert _ints(_values(slices)) == [0, 10, 20, 30, 40, 50]
    # orders produced by TensorFlow 1.x for the same pipelines
    inter = tf.data.Dataset.range(1, 6).interleave(
        lambda x: tf.data.Dataset.from_tensors(x).repeat(x), cycle_length=2, block_length=2)
    assert _ints(_values(inter)) == [1, 2, 2, 3, 3, 3, 4, 4, 5, 5, 4, 4, 5, 5, 5]
    inter = tf.data.Dataset.range(1, 8).interleave(
        lambda x: tf.data.Dataset.from_tensors(x).repeat(x % 3 + 1), cycle_length=3)
    assert _ints(_values(inter)) == [1, 2, 3, 1, 2, 2, 4, 5, 4, 5, 6, 5, 7, 7]


def test_flat_map_must_return_dataset():
    with pytest.raises(TypeError, match="must return a Dataset"):
        tf.data.Dataset.range(3).flat_map(lambda x: x)


def test_apply_experimental_transformations():
    ds = tf.data.Dataset.range(6).apply(tf.data.experimental.map_and_batch(lambda x: x * 2, 4))
    assert [list(b) for b in _values(ds)] == [[0, 2, 4, 6], [8, 10]]
    ds = tf.data.Dataset.range(5).apply(tf.data.experimental.shuffle_and_repeat(5, 2, seed=1))
    got = _ints(_values(ds))
    assert sorted(got[:5]) == list(range(5)) and sorted(got[5:]) == list(range(5))
    ds = tf.data.Dataset.range(4).batch(3).apply(tf.data.experimental.unbatch())
    assert _ints(_values(ds)) == [0, 1, 2, 3]
    with pytest.raises(TypeError, match="must return a Dataset"):
        tf.data.Dataset.range(3).apply(lambda ds: 3)


def test_from_generator():
    def gen():
        for i in range(3):
            yield i, [float(i)] * i

    ds = tf.data.Dataset.from_generator(gen, (tf.int64, tf.float32), ([], [None]))
    assert ds.output_shapes[1].as_list() == [None]
    got = _values(ds.repeat(2))
    assert [int(a) for a, _ in got] == [0, 1, 2] * 2
    np.testing.assert_array_equal(got[2][1], np.array([2.0, 2.0], np.float32))
    bad = tf.data.Dataset.from_generator(lambda: iter([[1, 2]]), tf.int64, [])
    with pytest.raises(tf.errors.InvalidArgumentError, match="shape"):
        _values(bad)


def test_output_properties_and_iteration_errors():
    ds = tf.data.Dataset.from_tensor_slices({"x": np.zeros((3, 2), np.float32)})
    assert ds.output_classes == {"x": tf.Tensor}
    assert tf.data.get_output_types(ds) == {"x": tf.float32}
    assert tf.data.get_output_shapes(ds)["x"].as_list() == [2]
    with pytest.raises(RuntimeError, match="eager"):
        iter(ds)
    with pytest.raises(ValueError, match="rank >= 1"):
        tf.data.Dataset.from_tensor_slices(np.float32(1.0))
    with pytest.raises(ValueError, match="dimension 0"):
        tf.data.Dataset.from_tensor_slices((np.zeros(2), np.zeros(3)))


def test_enumerate_unbatch_and_counter():
    ds = tf.data.Dataset.from_tensor_slices(np.array([5.0, 6.0])).enumerate(start=3)
    assert ds.output_types == (tf.int64, tf.float64)
    assert [(int(i), float(v)) for i, v in _values(ds)] == [(3, 5.0), (4, 6.0)]
    ds = tf.data.Dataset.from_tensor_slices(np.arange(6).reshape(3, 2)).unbatch()
    assert ds.output_shapes.as_list() == []
    assert _ints(_values(ds)) == list(range(6))
    counter = tf.data.experimental.Counter(10, 5).take(3)
    assert _ints(_values(counter)) == [10, 15, 20]
    ds = tf.data.Dataset.range(2).apply(tf.data.experimental.enumerate_dataset())
    assert [(int(i), int(v)) for i, v in _values(ds)] == [(0, 0), (1, 1)]


def test_choose_and_sample_from_datasets():
    # choose_from_datasets skips an exhausted dataset's turns, as TensorFlow does
    choices = tf.data.Dataset.from_tensor_slices(np.array([0, 0, 0, 1, 0, 1], np.int64))
    ds = tf.data.experimental.choose_from_datasets(
        [tf.data.Dataset.range(2), tf.data.Dataset.range(10, 13)], choices)
    assert _ints(_values(ds)) == [0, 1, 10, 11]
    bad = tf.data.experimental.choose_from_datasets(
        [tf.data.Dataset.range(2)], tf.data.Dataset.from_tensor_slices(np.array([0, 3])))
    with pytest.raises(tf.errors.InvalidArgumentError, match="out of range"):
        _values(bad)
    with pytest.raises(TypeError, match="int64"):
        tf.data.experimental.choose_from_datasets([tf.data.Dataset.range(2)],
                                                  tf.data.Dataset.range(2).map(lambda x: 1.0))
    sources = [tf.data.Dataset.range(3), tf.data.Dataset.range(10, 12)]
    mixed = tf.data.experimental.sample_from_datasets(sources, seed=1)
    first = _ints(_values(mixed))
    assert sorted(first) == [0, 1, 2, 10, 11] and _ints(_values(mixed)) == first
    assert [v for v in first if v < 10] == [0, 1, 2]
    only = tf.data.experimental.sample_from_datasets(sources, weights=[1.0, 0.0], seed=1)
    assert _ints(_values(only)) == [0, 1, 2]


def test_seeded_map_restarts_its_random_sequence_at_each_initialization():
    tf.set_random_seed(3)
    ds = tf.data.Dataset.range(3).map(lambda x: tf.random_uniform([]))
    iterator = ds.make_initializable_iterator()
    element = iterator.get_next()
    runs = []
    for _ in range(2):
        with tf.Session() as sess:
            for _ in range(2):
                sess.run(iterator.initializer)
                runs.append([float(sess.run(element)) for _ in range(3)])
    assert all(run == runs[0] for run in runs) and len(set(runs[0])) == 3
    nested = tf.data.Dataset.range(2).flat_map(
        lambda x: tf.data.Dataset.range(2).map(lambda y: tf.random_uniform([])))
    values = _values(nested)
    assert len(set(float(v) for v in values)) == 4 and values == _values(nested)


def test_group_by_window_matches_tensorflow_order():
    ds = tf.data.Dataset.from_tensor_slices(np.array([5, 2, 7, 4, 1, 8, 3, 6, 9], np.int64))
    grouped = ds.apply(tf.data.experimental.group_by_window(
        lambda x: x % 3, lambda key, window: window.batch(2), window_size=2))
    assert grouped.output_shapes.as_list() == [None]
    assert [b.tolist() for b in _values(grouped)] == [[5, 2], [7, 4], [3, 6], [9], [1], [8]]
    keyed = ds.apply(tf.data.experimental.group_by_window(
        lambda x: x % 3, lambda key, window: window.batch(5).map(lambda b: b * 0 + key),
        window_size_func=lambda key: key + 1))
    assert [b.tolist() for b in _values(keyed)] == [[1, 1], [2, 2, 2], [0], [0], [0], [1]]
    with pytest.raises(ValueError, match="int64"):
        ds.apply(tf.data.experimental.group_by_window(
            lambda x: tf.cast(x, tf.int32), lambda k, w: w, window_size=2))


def test_bucket_by_sequence_length_matches_tensorflow():
    seqs = tf.data.Dataset.range(1, 9).map(lambda n: tf.fill([n], n))
    bucketed = seqs.apply(tf.data.experimental.bucket_by_sequence_length(
        lambda s: tf.shape(s)[0], [3, 6], [2, 2, 3]))
    assert [b.tolist() for b in _values(bucketed)] == [
        [[1, 0], [2, 2]], [[3, 3, 3, 0], [4, 4, 4, 4]],
        [[6, 6, 6, 6, 6, 6, 0, 0], [7, 7, 7, 7, 7, 7, 7, 0], [8] * 8], [[5] * 5]]
    to_edge = seqs.apply(tf.data.experimental.bucket_by_sequence_length(
        lambda s: tf.shape(s)[0], [3, 9], [2, 2, 3], pad_to_bucket_boundary=True))
    got = [b.tolist() for b in _values(to_edge)]
    assert got[1] == [[3, 3, 3, 0, 0, 0, 0, 0], [4, 4, 4, 4, 0, 0, 0, 0]]
    assert [len(b[0]) for b in got] == [2, 8, 8, 8]
    too_long = seqs.apply(tf.data.experimental.bucket_by_sequence_length(
        lambda s: tf.shape(s)[0], [3], [1, 1], pad_to_bucket_boundary=True))
    with pytest.raises(tf.errors.InvalidArgumentError, match="pad_to_bucket_boundary"):
        _values(too_long)


def test_nested_functions_capture_the_enclosing_function_tensors():
    ds = tf.data.Dataset.range(1, 4).flat_map(
        lambda x: tf.data.Dataset.range(2).map(lambda y: y + 10 * x).filter(lambda y: y < 30))
    assert _ints(_values(ds)) == [10, 11, 20, 21]
    ds = tf.data.Dataset.range(3).interleave(
        lambda x: tf.data.Dataset.from_tensors(x * 2).map(lambda y: (y, x)), cycle_length=2)
    assert [(int(a), int(b)) for a, b in _values(ds)] == [(0, 0), (2, 1), (4, 2)]


def test_file_cache_is_written_once_and_shared(tmp_path):
    calls = []

    def gen():
        calls.append(1)
        yield from ((i, f"s{i}", np.full((2,), i / 2.0)) for i in range(3))

    prefix = str(tmp_path / "cache")
    source = tf.data.Dataset.from_generator(gen, (tf.int64, tf.string, tf.float64),
                                            ([], [], [2]))
    partial = source.cache(prefix).take(1)
    assert len(_values(partial)) == 1
    assert not os.path.exists(prefix + ".tfxcache") and os.listdir(tmp_path) == []
    first = _values(source.cache(prefix))
    assert len(calls) == 2 and os.path.exists(prefix + ".tfxcache")
    with tf.Graph().as_default():
        again = tf.data.Dataset.from_generator(gen, (tf.int64, tf.string, tf.float64),
                                               ([], [], [2]))
        second = _values(again.cache(prefix).repeat(2))
    assert len(calls) == 2
    assert [(int(a), b) for a, b, _ in second] == [(i, f"s{i}".encode()) for i in range(3)] * 2
    np.testing.assert_array_equal(second[2][2], first[2][2])


def test_file_cache_name_fed_at_initialization_and_one_writer_at_a_time(tmp_path):
    name = tf.placeholder(tf.string, [])
    count = tf.placeholder_with_default(tf.constant(2, tf.int64), [])
    source = tf.data.Dataset.from_tensor_slices([7, 8, 9]).repeat(count)
    writer = source.cache(name).make_initializable_iterator()
    rival = source.cache(name).make_initializable_iterator()
    first, second = writer.get_next(), rival.get_next()
    prefix = str(tmp_path / "feed")
    with tf.Session() as sess:
        sess.run(writer.initializer, {name: prefix})
        assert sess.run(first) == 7  # mid-pass: the lock file is held
        sess.run(rival.initializer, {name: prefix})
        with pytest.raises(tf.errors.AlreadyExistsError, match="lock file"):
            sess.run(second)
        assert [sess.run(first) for _ in range(5)] == [8, 9, 7, 8, 9]
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(first)
        assert sorted(os.listdir(tmp_path)) == ["feed.tfxcache"]
        # an empty upstream replays the file; another name has nothing cached
        sess.run(writer.initializer, {name: prefix, count: 0})
        assert [sess.run(first) for _ in range(6)] == [7, 8, 9] * 2
        sess.run(writer.initializer, {name: prefix + "-other", count: 0})
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(first)
        # an empty fed name caches in memory
        sess.run(writer.initializer, {name: "", count: 1})
        assert [sess.run(first) for _ in range(3)] == [7, 8, 9]


@settings(max_examples=15, deadline=None)
@given(n=st.integers(0, 8), repeat=st.integers(0, 3), skip=st.integers(-1, 5),
       take=st.integers(-1, 9), shards=st.integers(1, 3), data=st.data())
def test_order_transformations_match_python(n, repeat, skip, take, shards, data):
    index = data.draw(st.integers(0, shards - 1))
    with tf.Graph().as_default():
        ds = tf.data.Dataset.range(n).repeat(repeat).skip(skip).take(take).shard(shards, index)
        got = _ints(_values(ds))
    want = list(range(n)) * repeat
    want = [] if skip < 0 else want[skip:]
    want = want if take < 0 else want[:take]
    assert got == want[index::shards]


@settings(max_examples=10, deadline=None)
@given(lengths=st.lists(st.integers(0, 4), min_size=1, max_size=7), size=st.integers(1, 3))
def test_padded_batch_matches_numpy(lengths, size):
    with tf.Graph().as_default():
        data = tf.data.Dataset.from_tensor_slices(np.array(lengths, np.int64))
        ds = data.map(lambda k: tf.fill([k], k + 1)).padded_batch(size, padded_shapes=[None])
        got = _values(ds)
    for start, batch in zip(range(0, len(lengths), size), got):
        group = lengths[start:start + size]
        want = np.zeros((len(group), max(group)), np.int64)
        for row, k in enumerate(group):
            want[row, :k] = k + 1
        np.testing.assert_array_equal(batch, want)


def test_padded_batch_of_scalar_strings_holds_bytes_not_arrays():
    # A scalar string component batched with padded_shapes [] (a SequenceExample's context
    # name): each batch element is the bytes value, as batch() gives and TF prints.
    names = tf.data.Dataset.from_tensor_slices(tf.constant(["p0", "p1", "p2"]))
    lengths = tf.data.Dataset.from_tensor_slices(tf.constant([1, 3, 2]))
    ds = tf.data.Dataset.zip((names, lengths)).map(lambda s, n: (s, tf.fill([n], s)))
    got = _values(ds.padded_batch(2, padded_shapes=([], [None])))
    assert [type(v) for v in got[0][0]] == [bytes, bytes]
    assert got[0][0].tolist() == [b"p0", b"p1"]
    assert got[0][1].tolist() == [[b"p0", b"", b""], [b"p1", b"p1", b"p1"]]
    assert got[1][0].tolist() == [b"p2"]
    assert got[1][1].tolist() == [[b"p2", b"p2"]]
    plain = _values(names.batch(2))
    assert [v.tolist() for v in plain] == [w[0].tolist() for w in got]


def _drain(element):
    out = []
    with tf.Session() as sess:
        while True:
            try:
                out.append(sess.run(element))
            except tf.errors.OutOfRangeError:
                return out


def test_window_shift_stride_and_remainder():
    base = tf.data.Dataset.range(10).map(lambda i: (i, -2 * i))
    windows = base.window(4, shift=3, stride=2).flat_map(
        lambda a, b: tf.data.Dataset.zip((a.batch(4), b.batch(4))))
    got = _drain(windows.make_one_shot_iterator().get_next())
    starts = [0, 3, 6, 9]
    assert [list(a) for a, _ in got] == [list(range(s, 10, 2))[:4] for s in starts]
    assert all(list(b) == [-2 * v for v in a] for a, b in got)
    full = base.window(4, shift=3, stride=2, drop_remainder=True).flat_map(
        lambda a, b: a.batch(4))
    assert [list(w) for w in _drain(full.make_one_shot_iterator().get_next())] == [
        [0, 2, 4, 6], [3, 5, 7, 9]]


def test_window_arguments_fed_and_checked_at_initialization():
    size = tf.placeholder(tf.int64, [])
    drop = tf.placeholder(tf.bool, [])
    ds = tf.data.Dataset.range(5).repeat().take(7).window(size, drop_remainder=drop) \
        .flat_map(lambda x: x.batch(size))
    iterator = ds.make_initializable_iterator()
    nxt = iterator.get_next()
    with tf.Session() as sess:
        sess.run(iterator.initializer, {size: 3, drop: False})
        assert [list(sess.run(nxt)) for _ in range(3)] == [[0, 1, 2], [3, 4, 0], [1]]
        sess.run(iterator.initializer, {size: 3, drop: True})
        assert [list(sess.run(nxt)) for _ in range(2)] == [[0, 1, 2], [3, 4, 0]]
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(nxt)
        with pytest.raises(tf.errors.InvalidArgumentError, match="size must be greater"):
            sess.run(iterator.initializer, {size: 0, drop: True})


def test_window_over_infinite_input_and_skipped_failures():
    endless = tf.data.Dataset.range(1000000).repeat().window(2, shift=5).flat_map(
        lambda x: x.batch(2))
    nxt = endless.make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        assert [list(sess.run(nxt)) for _ in range(3)] == [[0, 1], [5, 6], [10, 11]]
    values = np.array([4.0, np.inf, 5.0, np.inf, 6.0], np.float32)
    checked = tf.data.Dataset.from_tensor_slices(values).map(
        lambda v: tf.check_numerics(v, "bad"))
    # stride 2 never reads the failing elements; a window holding one fails alone
    skipping = checked.window(2, shift=2, stride=2, drop_remainder=True).flat_map(
        lambda x: x.batch(2))
    assert [list(w) for w in _drain(skipping.make_one_shot_iterator().get_next())] == [
        [4.0, 5.0], [5.0, 6.0]]
    holding = checked.window(2, shift=2).flat_map(lambda x: x.batch(2))
    nxt = holding.make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="bad"):
            sess.run(nxt)
        with pytest.raises(tf.errors.InvalidArgumentError, match="bad"):
            sess.run(nxt)
        assert list(sess.run(nxt)) == [6.0]
