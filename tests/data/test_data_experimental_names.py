"""tf.data.Options and the tf.data.experimental names of TF 1.15 added for issue 15: values
against Python/NumPy references."""

import numpy as np
import pytest

import tensorflux as tf

COVERED_OPS = {"DatasetToTFRecord", "IteratorGetNextAsOptional"}

exp = tf.data.experimental


def _values(dataset, feed=None):
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


def _run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


@pytest.fixture(autouse=True)
def _fresh_graph():
    with tf.Graph().as_default():
        yield


# -- options ---------------------------------------------------------------------------------

def test_options_merge_with_options_and_errors():
    options = tf.data.Options()
    options.experimental_optimization.map_fusion = True
    options.experimental_threading.private_threadpool_size = 4
    ds = tf.data.Dataset.range(3).with_options(options)
    other = tf.data.Options()
    other.experimental_deterministic = False
    ds = ds.map(lambda x: x * 2).with_options(other)
    merged = ds.options()
    assert merged.experimental_optimization.map_fusion is True
    assert merged.experimental_threading.private_threadpool_size == 4
    assert merged.experimental_deterministic is False
    assert merged.experimental_optimization.map_parallelization is None
    assert [int(v) for v in _values(ds)] == [0, 2, 4]
    assert tf.data.Dataset.range(2).options() == tf.data.Options()
    conflict = tf.data.Options()
    conflict.experimental_optimization.map_fusion = False
    with pytest.raises(ValueError, match="map_fusion"):
        ds.with_options(conflict)
    with pytest.raises(AttributeError, match="Cannot set the property"):
        options.no_such_option = 1
    with pytest.raises(TypeError, match="bool"):
        options.experimental_deterministic = "yes"
    with pytest.raises(TypeError, match="Options"):
        ds.with_options({"experimental_deterministic": True})
    assert isinstance(options.experimental_optimization, exp.OptimizationOptions)


# -- scan, group_by_reducer ---------------------------------------------------------------------

def test_scan_running_sum_and_structured_state():
    ds = tf.data.Dataset.range(6).apply(
        exp.scan(tf.constant(0, tf.int64), lambda total, x: (total + x, total + x)))
    assert [int(v) for v in _values(ds)] == np.cumsum(np.arange(6)).tolist()

    def fib(state, _):
        a, b = state
        return (b, a + b), a

    ds = tf.data.Dataset.range(8).apply(exp.scan((tf.constant(0, tf.int64),
                                                  tf.constant(1, tf.int64)), fib))
    assert [int(v) for v in _values(ds)] == [0, 1, 1, 2, 3, 5, 8, 13]
    # a state whose shape grows: traced again on the relaxed shape, as TF does
    grow = tf.data.Dataset.range(3).apply(exp.scan(
        tf.zeros([0], tf.int64), lambda s, x: (tf.concat([s, [x]], 0), tf.size(s))))
    assert [int(v) for v in _values(grow)] == [0, 1, 2]
    with pytest.raises(TypeError, match="new state"):
        tf.data.Dataset.range(3).apply(exp.scan(tf.constant(0, tf.int64),
                                                lambda s, x: (tf.cast(s, tf.float32), x)))


def test_group_by_reducer_sums_per_key_in_first_seen_order():
    values = np.array([5, 2, 8, 3, 6, 1, 9], np.int64)
    reducer = exp.Reducer(init_func=lambda key: tf.constant(0, tf.int64),
                          reduce_func=lambda state, x: state + x,
                          finalize_func=lambda state: state)
    ds = tf.data.Dataset.from_tensor_slices(values).apply(
        exp.group_by_reducer(lambda x: x % 3, reducer))
    sums = {}
    for v in values:
        sums[int(v) % 3] = sums.get(int(v) % 3, 0) + int(v)
    assert [int(v) for v in _values(ds)] == list(sums.values())  # keys 2, 0, 1
    with pytest.raises(TypeError, match="Reducer"):
        exp.group_by_reducer(lambda x: x, lambda s: s)


# -- unique, take_while, cardinality ------------------------------------------------------------

def test_unique_and_take_while():
    ds = tf.data.Dataset.from_tensor_slices([1, 37, 2, 37, 2, 1]).apply(exp.unique())
    assert [int(v) for v in _values(ds)] == [1, 37, 2]
    words = tf.data.Dataset.from_tensor_slices(["a", "b", "a", "c"]).apply(exp.unique())
    assert _values(words) == [b"a", b"b", b"c"]
    with pytest.raises(TypeError, match="single tf.int32, tf.int64 or tf.string"):
        tf.data.Dataset.from_tensor_slices([1.0]).apply(exp.unique())
    ds = tf.data.Dataset.range(10).apply(exp.take_while(lambda x: x < 4))
    assert [int(v) for v in _values(ds)] == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="scalar boolean"):
        tf.data.Dataset.range(3).apply(exp.take_while(lambda x: x))


def test_cardinality_known_infinite_unknown():
    r = tf.data.Dataset.range(10)
    cases = [(r, 10), (r.batch(3), 4), (r.batch(3, drop_remainder=True), 3), (r.repeat(), -1),
             (r.repeat(3), 30), (r.take(4), 4), (r.skip(7), 3), (r.filter(lambda x: x > 2), -2),
             (tf.data.Dataset.zip((r, r.take(3))), 3), (r.concatenate(r), 20),
             (r.map(lambda x: x + 1).shuffle(4), 10),
             (tf.data.Dataset.from_tensor_slices(np.zeros((7, 2))), 7),
             (tf.data.Dataset.from_tensors([1, 2]), 1), (r.repeat().take(5), 5)]
    got = _run([exp.cardinality(ds) for ds, _ in cases])
    assert [int(g) for g in got] == [want for _, want in cases]
    assert (tf.data.INFINITE_CARDINALITY, tf.data.UNKNOWN_CARDINALITY) == (-1, -2)
    assert exp.cardinality(r).dtype == tf.int64


# -- TFRecordWriter, get_next_as_optional ------------------------------------------------------

@pytest.mark.parametrize("compression", [None, "GZIP"])
def test_tfrecord_writer_round_trip(tmp_path, compression):
    path = str(tmp_path / "out.tfrecord")
    records = tf.placeholder(tf.string, [None])
    writer = exp.TFRecordWriter(path, compression)
    write = writer.write(tf.data.Dataset.from_tensor_slices(records))
    with tf.Session() as sess:
        sess.run(write, {records: [b"alpha", b"", b"gamma"]})
    assert list(tf.python_io.tf_record_iterator(path, compression or "")) == [b"alpha", b"",
                                                                              b"gamma"]
    back = tf.data.TFRecordDataset(path, compression_type=compression or "")
    assert _values(back) == [b"alpha", b"", b"gamma"]
    with pytest.raises(TypeError, match="DT_STRING"):
        writer.write(tf.data.Dataset.range(3))


def test_get_next_as_optional():
    ds = tf.data.Dataset.from_tensor_slices((np.array([1, 2], np.int64), ["a", "b"]))
    iterator = ds.make_initializable_iterator()
    optional = exp.get_next_as_optional(iterator)
    has, value = optional.has_value(), optional.get_value()
    assert optional.output_types == (tf.int64, tf.string)
    with tf.Session() as sess:
        sess.run(iterator.initializer)
        assert sess.run([has, value]) == [True, (1, b"a")]
        assert sess.run([has, value]) == [True, (2, b"b")]
        assert not sess.run(has)
        with pytest.raises(tf.errors.InvalidArgumentError, match="does not have a value"):
            sess.run(value)
    present = exp.Optional.from_value({"x": tf.constant([1.0, 2.0])})
    assert _run(present.get_value())["x"].tolist() == [1.0, 2.0]
    empty = exp.Optional.none_from_structure(tf.int32, tf.TensorShape([]))
    assert not _run(empty.has_value())


# -- make_csv_dataset, make_batched_features_dataset ------------------------------------------

def test_make_csv_dataset_infers_names_and_types(tmp_path):
    path = tmp_path / "census.csv"
    path.write_text("age,hours,name,income\n25,40.5,ann,1\n38,50,bob,0\n61,20,cy,1\n")
    ds = exp.make_csv_dataset(str(path), batch_size=2, label_name="income", num_epochs=1,
                              shuffle=False)
    batches = _values(ds)
    features, label = batches[0]
    assert sorted(features) == ["age", "hours", "name"]
    assert features["age"].dtype == np.int32 and features["hours"].dtype == np.float32
    assert features["age"].tolist() == [25, 38] and features["name"].tolist() == [b"ann", b"bob"]
    assert label.tolist() == [1, 0]
    assert batches[1][0]["age"].tolist() == [61]  # the partial batch is kept with num_epochs
    chosen = exp.make_csv_dataset(str(path), 3, select_columns=["age", "income"],
                                  column_defaults=[[0.0], [0]], num_epochs=1, shuffle=False)
    only = _values(chosen)[0]
    assert sorted(only) == ["age", "income"] and only["age"].dtype == np.float32
    forever = exp.make_csv_dataset(str(path), 2, shuffle=True, shuffle_seed=3)
    assert len(_values(forever.take(5))) == 5  # repeats; full batches only
    with pytest.raises(ValueError, match="No files match"):
        exp.make_csv_dataset(str(tmp_path / "none*.csv"), 2)
    with pytest.raises(ValueError, match="label_name"):
        exp.make_csv_dataset(str(path), 2, label_name="missing")


def test_make_batched_features_dataset(tmp_path):
    path = str(tmp_path / "examples.tfrecord")
    with tf.python_io.TFRecordWriter(path) as writer:
        for i in range(5):
            example = tf.train.Example(features=tf.train.Features(feature={
                "x": tf.train.Feature(float_list=tf.train.FloatList(value=[i, 2.0 * i])),
                "y": tf.train.Feature(int64_list=tf.train.Int64List(value=[i % 2]))}))
            writer.write(example.SerializeToString())
    spec = {"x": tf.FixedLenFeature([2], tf.float32), "y": tf.FixedLenFeature([], tf.int64)}
    ds = exp.make_batched_features_dataset(path, 2, spec, label_key="y", num_epochs=1,
                                           shuffle=False)
    batches = _values(ds)
    assert [len(b[1]) for b in batches] == [2, 2, 1]
    np.testing.assert_array_equal(batches[1][0]["x"], [[2, 4], [3, 6]])
    assert batches[2][1].tolist() == [0]
    with pytest.raises(ValueError, match="label_key"):
        exp.make_batched_features_dataset(path, 2, spec, label_key="z")


# -- rejection_resample -----------------------------------------------------------------------

@pytest.mark.parametrize("initial", [[0.8, 0.2], None])
def test_rejection_resample_reaches_target_distribution(initial):
    labels = np.array([0] * 800 + [1] * 200, np.int64)
    np.random.RandomState(0).shuffle(labels)
    ds = tf.data.Dataset.from_tensor_slices(labels).apply(exp.rejection_resample(
        lambda x: x, target_dist=[0.5, 0.5], initial_dist=initial, seed=7))
    out = _values(ds.take(300))
    classes = np.array([c for c, _ in out])
    np.testing.assert_array_equal(classes, [v for _, v in out])  # (class, element) pairs
    assert abs(classes.mean() - 0.5) < 0.1  # 300 draws: sd ~0.03
    with pytest.raises(ValueError, match="probability vector"):
        tf.data.Dataset.range(3).apply(exp.rejection_resample(lambda x: x, [0.5, 0.6]))
