"""SparseTensor components in tf.data (TF 1.x semantics), checked against hand-computed values."""

import tempfile

import numpy as np
import pytest

import tensorflux as tf


def _example(values, label):
    return tf.train.Example(features=tf.train.Features(feature={
        "v": tf.train.Feature(int64_list=tf.train.Int64List(value=values)),
        "y": tf.train.Feature(float_list=tf.train.FloatList(value=[label]))})).SerializeToString()


ROWS = [[1, 2], [3], [], [0, 4, 2]]
LABELS = [1.0, 0.0, 1.0, 0.0]
SPEC = {"v": tf.VarLenFeature(tf.int64), "y": tf.FixedLenFeature([], tf.float32)}


def _parsed():
    records = [_example(r, y) for r, y in zip(ROWS, LABELS)]
    return tf.data.Dataset.from_tensor_slices(records).map(
        lambda s: tf.parse_single_example(s, SPEC))


def _all(dataset, initializable=False):
    if initializable:
        iterator = dataset.make_initializable_iterator()
    else:
        iterator = dataset.make_one_shot_iterator()
    element = iterator.get_next()
    out = []
    with tf.Session() as sess:
        if initializable:
            sess.run(iterator.initializer)
        while True:
            try:
                out.append(sess.run(element))
            except tf.errors.OutOfRangeError:
                return out


def _dense(value):
    """A SparseTensorValue -> its dense ndarray (NumPy reference)."""
    dense = np.zeros(value.dense_shape, dtype=value.values.dtype)
    for index, item in zip(value.indices, value.values):
        dense[tuple(index)] = item
    return dense


def _check_sparse(value, indices, values, dense_shape):
    assert isinstance(value, tf.SparseTensorValue)
    assert value.indices.dtype == np.int64 and value.dense_shape.dtype == np.int64
    rank = len(dense_shape)
    np.testing.assert_array_equal(value.indices, np.reshape(indices, (len(values), rank)))
    np.testing.assert_array_equal(value.values, values)
    np.testing.assert_array_equal(value.dense_shape, dense_shape)


def test_parse_example_map_gives_sparse_component_and_tf1_structure():
    with tf.Graph().as_default():
        ds = _parsed()
        assert ds.output_classes == {"v": tf.SparseTensor, "y": tf.Tensor}
        assert ds.output_types == {"v": tf.int64, "y": tf.float32}
        assert ds.output_shapes["v"].as_list() == [None]
        assert ds.output_shapes["y"].as_list() == []
        it = ds.make_one_shot_iterator()
        assert isinstance(it.get_next()["v"], tf.SparseTensor)
        got = _all(ds)
    assert len(got) == 4
    for element, row, label in zip(got, ROWS, LABELS):
        _check_sparse(element["v"], [[i] for i in range(len(row))], row, [len(row)])
        assert element["y"] == label


def test_transformations_pass_sparse_components_through():
    with tf.Graph().as_default():
        ds = _parsed()
        piped = (ds.filter(lambda d: tf.equal(d["y"], 1.0)).repeat(2).skip(1).take(2)
                 .prefetch(1).cache())
        got = _all(piped)
        assert [list(e["v"].values) for e in got] == [[], [1, 2]]
        shuffled = _all(ds.shuffle(10, seed=3))
        assert sorted(tuple(e["v"].values) for e in shuffled) == sorted(tuple(r) for r in ROWS)
        zipped = tf.data.Dataset.zip((ds, tf.data.Dataset.range(4)))
        assert zipped.output_classes == ({"v": tf.SparseTensor, "y": tf.Tensor}, tf.Tensor)
        for k, ((element, index), row) in enumerate(zip(_all(zipped), ROWS)):
            assert index == k
            np.testing.assert_array_equal(element["v"].values, row)
        both = ds.take(1).concatenate(ds.skip(3))
        assert [list(e["v"].values) for e in _all(both)] == [[1, 2], [0, 4, 2]]


def test_map_takes_and_returns_sparse_tensors():
    with tf.Graph().as_default():
        ds = _parsed().map(lambda d: tf.SparseTensor(d["v"].indices, d["v"].values * 10 + 1,
                                                     d["v"].dense_shape))
        assert ds.output_classes is tf.SparseTensor
        assert ds.output_types == tf.int64
        dense = ds.map(lambda sp: tf.sparse_tensor_to_dense(sp, default_value=-1))
        assert dense.output_classes is tf.Tensor
        got = _all(ds)
        dense_got = _all(dense)
    for value, dense_value, row in zip(got, dense_got, ROWS):
        expected = np.array(row, dtype=np.int64) * 10 + 1
        _check_sparse(value, [[i] for i in range(len(row))], expected, [len(row)])
        np.testing.assert_array_equal(dense_value, expected)


def test_map_returning_sparse_tensor_value():
    with tf.Graph().as_default():
        value = tf.SparseTensorValue([[0, 1]], np.array([7.5], np.float32), [2, 3])
        ds = tf.data.Dataset.range(2).map(lambda _: value)
        assert ds.output_classes is tf.SparseTensor
        assert ds.output_shapes.as_list() == [2, 3]
        got = _all(ds)
    for item in got:
        _check_sparse(item, [[0, 1]], [7.5], [2, 3])


def test_batch_prepends_batch_index_and_takes_max_dense_shape():
    with tf.Graph().as_default():
        batched = _parsed().batch(3)
        assert batched.output_classes["v"] is tf.SparseTensor
        assert batched.output_shapes["v"].as_list() == [None, None]
        got = _all(batched)
        fixed = _parsed().batch(2, drop_remainder=True)
        assert fixed.output_shapes["v"].as_list() == [2, None]
    assert len(got) == 2
    # NumPy reference: the dense batch of rows padded to the longest row.
    for batch, rows in zip(got, [ROWS[:3], ROWS[3:]]):
        width = max(len(r) for r in rows)
        reference = np.zeros((len(rows), width), np.int64)
        for k, row in enumerate(rows):
            reference[k, :len(row)] = row
        np.testing.assert_array_equal(batch["v"].dense_shape, [len(rows), width])
        np.testing.assert_array_equal(_dense(batch["v"]), reference)
        expected = [[k, i] for k, row in enumerate(rows) for i in range(len(row))]
        np.testing.assert_array_equal(batch["v"].indices, expected)
        np.testing.assert_array_equal(batch["y"], LABELS[:3] if len(rows) == 3 else LABELS[3:])


def test_unbatch_inverts_batch():
    with tf.Graph().as_default():
        ds = _parsed().batch(3).apply(tf.data.experimental.unbatch())
        assert ds.output_shapes["v"].as_list() == [None]
        assert ds.output_classes["v"] is tf.SparseTensor
        got = _all(ds)
    widths = [2, 2, 2, 3]  # each row keeps its batch's dense width, as TF
    for element, row, width in zip(got, ROWS, widths):
        _check_sparse(element["v"], [[i] for i in range(len(row))], row, [width])


def test_padded_batch_of_sparse_raises_type_error():
    with tf.Graph().as_default():
        # TF 1.x's wording (PaddedBatchDataset raises a TypeError).
        with pytest.raises(TypeError, match="Batching of padded sparse tensors is not "
                                            "currently supported"):
            _parsed().padded_batch(2)


def test_batch_of_sparse_components_of_different_ranks_fails():
    with tf.Graph().as_default():
        a = tf.data.Dataset.from_tensors(tf.SparseTensorValue([[0]], [1], [3]))
        b = tf.data.Dataset.from_tensors(tf.SparseTensorValue([[0, 0]], [1], [3, 3]))
        ds = a.concatenate(b).batch(2)
        assert ds.output_shapes.ndims is None
        with pytest.raises(tf.errors.InvalidArgumentError, match="different ranks"):
            _all(ds)


def test_from_tensors_and_from_tensor_slices_of_sparse():
    with tf.Graph().as_default():
        sp = tf.SparseTensor(indices=[[0, 0], [1, 2], [2, 1], [2, 3]], values=[1., 2., 3., 4.],
                             dense_shape=[3, 4])
        whole = tf.data.Dataset.from_tensors(sp)
        assert whole.output_classes is tf.SparseTensor
        assert whole.output_types == tf.float32
        assert whole.output_shapes.as_list() == [3, 4]
        (value,) = _all(whole)
        sliced = tf.data.Dataset.from_tensor_slices((sp, np.arange(3)))
        assert sliced.output_classes == (tf.SparseTensor, tf.Tensor)
        assert sliced.output_shapes[0].as_list() == [4]
        rows = _all(sliced)
    _check_sparse(value, [[0, 0], [1, 2], [2, 1], [2, 3]], [1., 2., 3., 4.], [3, 4])
    reference = np.zeros((3, 4), np.float32)
    reference[0, 0], reference[1, 2], reference[2, 1], reference[2, 3] = 1, 2, 3, 4
    assert len(rows) == 3
    for k, (row, index) in enumerate(rows):
        assert index == k
        np.testing.assert_array_equal(row.dense_shape, [4])
        np.testing.assert_array_equal(_dense(row), reference[k])


def test_from_tensor_slices_of_sparse_value_checks_order_bounds_and_rows():
    with tf.Graph().as_default():
        value = tf.SparseTensorValue(np.array([[0, 1], [1, 0]]), np.array([5, 6]),
                                     np.array([2, 2]))
        rows = _all(tf.data.Dataset.from_tensor_slices(value))
        # As TF: slicing needs row-major sorted, in-bounds, unrepeated indices.
        for indices, message in [([[1, 0], [0, 1]], r"indices\[1\] = \[0, 1\] is out of order"),
                                 ([[0, 1], [0, 1]], r"indices\[1\] = \[0, 1\] is repeated"),
                                 ([[0, 1], [1, 2]], r"indices\[1\] = \[1, 2\] is out of bounds")]:
            bad = tf.SparseTensorValue(np.array(indices), np.array([5, 6]), np.array([2, 2]))
            with pytest.raises(tf.errors.InvalidArgumentError, match=message):
                _all(tf.data.Dataset.from_tensor_slices(bad))
        with pytest.raises(ValueError, match="dimension 0"):
            tf.data.Dataset.from_tensor_slices((value, np.arange(3)))
    _check_sparse(rows[0], [[1]], [5], [2])
    _check_sparse(rows[1], [[0]], [6], [2])


def test_initializable_iterator_and_from_structure_with_sparse_classes():
    with tf.Graph().as_default():
        ds = _parsed().batch(2)
        got = _all(ds, initializable=True)
        it = tf.data.Iterator.from_structure(ds.output_types, ds.output_shapes,
                                             output_classes=ds.output_classes)
        assert it.output_classes == ds.output_classes
        element = it.get_next()
        assert isinstance(element["v"], tf.SparseTensor)
        init = it.make_initializer(ds)
        with tf.Session() as sess:
            sess.run(init)
            first = sess.run(element)
    _check_sparse(got[0]["v"], [[0, 0], [0, 1], [1, 0]], [1, 2, 3], [2, 2])
    _check_sparse(got[1]["v"], [[1, 0], [1, 1], [1, 2]], [0, 4, 2], [2, 3])
    _check_sparse(first["v"], [[0, 0], [0, 1], [1, 0]], [1, 2, 3], [2, 2])


def test_bad_sparse_tensor_value_is_rejected():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="SparseTensorValue"):
            tf.data.Dataset.from_tensors(tf.SparseTensorValue([[0, 0]], [1, 2], [2, 2]))


def test_estimator_trains_on_sparse_features_with_identity_column():
    records = [_example(r, y) for r, y in zip(ROWS, LABELS)]

    def input_fn():
        ds = tf.data.Dataset.from_tensor_slices(records).map(
            lambda s: tf.parse_single_example(s, SPEC))
        return ds.map(lambda d: ({"v": d["v"]}, d["y"])).repeat().batch(4)

    column = tf.feature_column.categorical_column_with_identity("v", num_buckets=5)
    estimator = tf.estimator.LinearRegressor([column], model_dir=tempfile.mkdtemp())
    estimator.train(input_fn, steps=1)
    before = estimator.evaluate(input_fn, steps=1)["average_loss"]
    estimator.train(input_fn, steps=30)
    after = estimator.evaluate(input_fn, steps=1)
    assert after["global_step"] == 31
    # Labels are exactly fittable by per-id weights (sum of ids' weights + bias); the loss falls.
    assert after["average_loss"] < before
    assert np.isfinite(after["average_loss"])


def test_make_batched_features_dataset_with_var_len_feature(tmp_path):
    path = str(tmp_path / "examples.tfrecord")
    with tf.python_io.TFRecordWriter(path) as writer:
        for row, label in zip(ROWS, LABELS):
            writer.write(_example(row, label))
    with tf.Graph().as_default():
        ds = tf.data.experimental.make_batched_features_dataset(
            path, 2, SPEC, label_key="y", num_epochs=1, shuffle=False)
        assert ds.output_classes == ({"v": tf.SparseTensor}, tf.Tensor)
        assert ds.output_shapes[0]["v"].as_list() == [None, None]
        got = _all(ds)
    assert len(got) == 2
    _check_sparse(got[0][0]["v"], [[0, 0], [0, 1], [1, 0]], [1, 2, 3], [2, 2])
    _check_sparse(got[1][0]["v"], [[1, 0], [1, 1], [1, 2]], [0, 4, 2], [2, 3])
    np.testing.assert_array_equal(got[1][1], [1.0, 0.0])


def test_string_handle_iterator_file_cache_and_optional_carry_sparse(tmp_path):
    with tf.Graph().as_default():
        ds = _parsed().batch(2).cache(str(tmp_path / "cache"))
        source = ds.make_one_shot_iterator()
        handle = tf.placeholder(tf.string, [])
        it = tf.data.Iterator.from_string_handle(handle, ds.output_types, ds.output_shapes,
                                                 output_classes=ds.output_classes)
        element = it.get_next()
        optional = tf.data.experimental.get_next_as_optional(
            _parsed().skip(3).make_one_shot_iterator())
        with tf.Session() as sess:
            name = sess.run(source.string_handle())
            first = sess.run(element, {handle: name})
            second = sess.run(element, {handle: name})
            last = sess.run(optional.get_value())
        _all(ds)  # a complete pass writes the cache file ...
        assert list(tmp_path.iterdir())
        cached = _all(ds)  # ... which the next pass reads
    _check_sparse(first["v"], [[0, 0], [0, 1], [1, 0]], [1, 2, 3], [2, 2])
    _check_sparse(second["v"], [[1, 0], [1, 1], [1, 2]], [0, 4, 2], [2, 3])
    _check_sparse(last["v"], [[0], [1], [2]], [0, 4, 2], [3])
    _check_sparse(cached[1]["v"], [[1, 0], [1, 1], [1, 2]], [0, 4, 2], [2, 3])


def test_string_var_len_feature_batches_and_feeds_vocabulary_column():
    records = [tf.train.Example(features=tf.train.Features(feature={
        "w": tf.train.Feature(bytes_list=tf.train.BytesList(value=words))})).SerializeToString()
        for words in [[b"a", b"c"], [], [b"b"]]]
    with tf.Graph().as_default():
        ds = tf.data.Dataset.from_tensor_slices(records).map(
            lambda s: tf.parse_single_example(s, {"w": tf.VarLenFeature(tf.string)})).batch(3)
        assert ds.output_types == {"w": tf.string}
        features = ds.make_one_shot_iterator().get_next()
        column = tf.feature_column.indicator_column(
            tf.feature_column.categorical_column_with_vocabulary_list("w", ["a", "b", "c"]))
        dense = tf.feature_column.input_layer(features, [column])
        with tf.Session() as sess:
            sess.run(tf.tables_initializer())
            multi_hot = sess.run(dense)
        got = _all(ds)
    _check_sparse(got[0]["w"], [[0, 0], [0, 1], [2, 0]], [b"a", b"c", b"b"], [3, 2])
    np.testing.assert_array_equal(multi_hot, [[1, 0, 1], [0, 0, 0], [0, 1, 0]])


def test_dense_to_sparse_batch_matches_tf_documented_example():
    rows = [[b"a", b"b", b"c"], [b"a", b"b"], [b"a", b"b", b"c", b"d"]]
    with tf.Graph().as_default():
        ds = tf.data.Dataset.from_generator(lambda: iter(rows), tf.string, [None])
        batched = ds.apply(tf.data.experimental.dense_to_sparse_batch(2, [6]))
        assert batched.output_classes is tf.SparseTensor
        assert batched.output_types == tf.string
        assert batched.output_shapes.as_list() == [None, 6]
        got = _all(batched)
        unknown = _all(ds.apply(tf.data.experimental.dense_to_sparse_batch(3, [-1])))
        with pytest.raises(tf.errors.InvalidArgumentError, match="incompatible with the row"):
            _all(ds.apply(tf.data.experimental.dense_to_sparse_batch(2, [3])))
        with pytest.raises(TypeError, match="single component"):
            tf.data.Dataset.zip((ds, ds)).apply(tf.data.experimental.dense_to_sparse_batch(2, [6]))
    _check_sparse(got[0], [[0, 0], [0, 1], [0, 2], [1, 0], [1, 1]],
                  [b"a", b"b", b"c", b"a", b"b"], [2, 6])
    _check_sparse(got[1], [[0, 0], [0, 1], [0, 2], [0, 3]], [b"a", b"b", b"c", b"d"], [1, 6])
    np.testing.assert_array_equal(unknown[0].dense_shape, [3, 4])
    assert len(unknown[0].values) == 9
