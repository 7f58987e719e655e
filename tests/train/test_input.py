"""Input producers and batchers: epochs, shuffling, padding, final batches, exactly-once."""

import numpy as np
import pytest

import tensorflux as tf


@pytest.fixture
def graph():
    g = tf.Graph()
    with g.as_default():
        yield g


def _drain(fetch, extra_init=()):
    """Runs `fetch` with the queue runners until OutOfRangeError; returns the values."""
    out = []
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        for op in extra_init:
            sess.run(op)
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess=sess, coord=coord)
        try:
            while not coord.should_stop():
                out.append(sess.run(fetch))
        except tf.errors.OutOfRangeError:
            pass
        finally:
            coord.request_stop()
        coord.join(threads)
    return out


def test_string_input_producer_epochs_in_order(graph):
    queue = tf.train.string_input_producer(["a", "b", "c"], num_epochs=2, shuffle=False)
    assert queue.name == "input_producer" and queue.dtypes == [tf.string]
    epochs = tf.local_variables()
    assert [v.name for v in epochs] == ["input_producer/limit_epochs/epochs:0"]
    assert tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)[0].queue is queue
    assert _drain(queue.dequeue()) == [b"a", b"b", b"c"] * 2


def test_string_input_producer_shuffles_each_epoch_repeatably(graph):
    names = [str(i).encode() for i in range(20)]

    def run(seed):
        with tf.Graph().as_default():
            queue = tf.train.string_input_producer(names, num_epochs=3, seed=seed)
            return _drain(queue.dequeue())

    first = run(5)
    assert len(first) == 60
    for epoch in range(3):
        assert sorted(first[epoch * 20:(epoch + 1) * 20]) == sorted(names)
    assert first[:20] != names
    assert run(5) == first


def test_string_input_producer_checks_for_input(graph):
    with pytest.raises(ValueError, match="non-null input tensor"):
        tf.train.string_input_producer([])
    empty = tf.placeholder_with_default(tf.constant([""])[:0], [None])
    queue = tf.train.string_input_producer(empty, num_epochs=1)
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess=sess, coord=coord)
        with pytest.raises(tf.errors.InvalidArgumentError, match="non-null input tensor"):
            coord.join(threads)
    del queue


def test_queue_fullness_summaries(graph):
    queue = tf.train.string_input_producer(["a", "b"], capacity=4, shuffle=False)
    batched = tf.train.shuffle_batch([queue.dequeue()], batch_size=2, capacity=10,
                                     min_after_dequeue=2)
    del batched
    summaries = tf.get_collection(tf.GraphKeys.SUMMARIES)
    assert len(summaries) == 2
    with tf.Session() as sess:
        sess.run(queue.enqueue_many([["x", "y"]]))
        proto = tf.summary.Summary.FromString(sess.run(summaries[0]))
    assert proto.value[0].tag == "input_producer/fraction_of_4_full"
    assert proto.value[0].simple_value == 0.5
    assert "fraction_over_2_of_8_full" in summaries[1].name


def test_range_and_slice_input_producers(graph):
    queue = tf.train.range_input_producer(5, num_epochs=2, shuffle=False)
    assert _drain(queue.dequeue()) == [0, 1, 2, 3, 4] * 2
    with tf.Graph().as_default():
        x = np.arange(12, dtype=np.float32).reshape(6, 2)
        y = np.arange(6, dtype=np.int64) * 10
        xs, ys = tf.train.slice_input_producer([x, y], num_epochs=1, seed=3)
        assert xs.shape.as_list() == [2] and ys.shape.as_list() == []
        rows = _drain([xs, ys])
        assert sorted(int(r[1]) for r in rows) == list(range(0, 60, 10))
        for row_x, row_y in rows:
            np.testing.assert_array_equal(row_x, x[row_y // 10])
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="first dimension"):
            tf.train.slice_input_producer([np.zeros((3, 1)), np.zeros(4)])


def test_limit_epochs_and_match_filenames_once(graph, tmp_path):
    limited = tf.train.limit_epochs(tf.constant([1, 2]), num_epochs=2)
    with pytest.raises(ValueError, match="num_epochs must be > 0"):
        tf.train.limit_epochs(tf.constant(1), num_epochs=0)
    (tmp_path / "f1.txt").write_text("x")
    (tmp_path / "f0.txt").write_text("y")
    files = tf.train.match_filenames_once(str(tmp_path / "f*.txt"))
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        assert sess.run(limited).tolist() == [1, 2]
        assert sess.run(limited).tolist() == [1, 2]
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(limited)
        assert sess.run(files).tolist() == [str(tmp_path / f"f{i}.txt").encode()
                                            for i in range(2)]


def test_batch_shapes_order_and_smaller_final_batch(graph):
    value = tf.train.range_input_producer(10, num_epochs=1, shuffle=False).dequeue()
    batched = tf.train.batch([value, value * 2], batch_size=4, allow_smaller_final_batch=True)
    assert batched[0].shape.as_list() == [None] and batched[0].op.type == "QueueDequeueUpToV2"
    out = _drain(batched)
    assert [b[0].tolist() for b in out] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert [b[1].tolist() for b in out] == [[0, 2, 4, 6], [8, 10, 12, 14], [16, 18]]
    with tf.Graph().as_default():
        value = tf.train.range_input_producer(10, num_epochs=1, shuffle=False).dequeue()
        single = tf.train.batch([value], batch_size=4)
        assert isinstance(single, tf.Tensor) and single.shape.as_list() == [4]
        assert [b.tolist() for b in _drain(single)] == [[0, 1, 2, 3], [4, 5, 6, 7]]


def test_batch_dict_enqueue_many_and_dynamic_pad(graph):
    rows = tf.train.range_input_producer(6, num_epochs=1, shuffle=False).dequeue()
    out = tf.train.batch({"x": tf.fill(tf.expand_dims(rows, 0), rows), "n": rows},
                         batch_size=3, dynamic_pad=True)
    assert out["x"].shape.as_list() == [3, None]
    batches = _drain(out)
    np.testing.assert_array_equal(batches[0]["x"], [[0, 0], [1, 0], [2, 2]])
    np.testing.assert_array_equal(batches[1]["x"], [[3, 3, 3, 0, 0], [4, 4, 4, 4, 0],
                                                    [5, 5, 5, 5, 5]])
    with tf.Graph().as_default():
        chunk = tf.train.range_input_producer(3, num_epochs=1, shuffle=False).dequeue()
        many = tf.train.batch([tf.stack([chunk, chunk + 10])], batch_size=3, enqueue_many=True,
                              num_threads=1)
        assert sorted(v for b in _drain(many) for v in b.tolist()) == [0, 1, 2, 10, 11, 12]


def test_shuffle_batch_exactly_once_across_epochs_with_threads(graph):
    value = tf.train.range_input_producer(50, num_epochs=3, shuffle=True, seed=1).dequeue()
    batched = tf.train.shuffle_batch([value], batch_size=8, capacity=40, min_after_dequeue=10,
                                     num_threads=3, seed=2, allow_smaller_final_batch=True)
    seen = [v for b in _drain(batched) for v in b.tolist()]
    assert sorted(seen) == sorted(list(range(50)) * 3)
    assert seen != sorted(seen)


def test_batch_join_and_shuffle_batch_join(graph):
    a = tf.train.range_input_producer(5, num_epochs=1, shuffle=False).dequeue()
    b = tf.train.range_input_producer(5, num_epochs=1, shuffle=False).dequeue() + 100
    joined = tf.train.batch_join([[a], [b]], batch_size=2, allow_smaller_final_batch=True)
    assert len(tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)[-1].enqueue_ops) == 2
    got = sorted(v for batch in _drain(joined) for v in batch.tolist())
    assert got == [0, 1, 2, 3, 4, 100, 101, 102, 103, 104]
    with tf.Graph().as_default():
        a = tf.train.range_input_producer(5, num_epochs=2).dequeue()
        b = tf.train.range_input_producer(5, num_epochs=2).dequeue() + 100
        shuffled = tf.train.shuffle_batch_join([{"v": a}, {"v": b}], batch_size=4, capacity=20,
                                               min_after_dequeue=5,
                                               allow_smaller_final_batch=True)
        got = sorted(v for batch in _drain(shuffled) for v in batch["v"].tolist())
        assert got == sorted([0, 1, 2, 3, 4, 100, 101, 102, 103, 104] * 2)


def test_maybe_batch_filters_elements(graph):
    value = tf.train.range_input_producer(10, num_epochs=1, shuffle=False).dequeue()
    evens = tf.train.maybe_batch([value], keep_input=tf.equal(value % 2, 0), batch_size=5)
    assert [b.tolist() for b in _drain(evens)] == [[0, 2, 4, 6, 8]]
    with tf.Graph().as_default():
        chunk = tf.train.range_input_producer(4, num_epochs=1, shuffle=False).dequeue()
        pair = tf.stack([chunk, chunk + 10])
        kept = tf.train.maybe_shuffle_batch([pair], batch_size=2, capacity=8,
                                            min_after_dequeue=0, keep_input=[True, False],
                                            enqueue_many=True, allow_smaller_final_batch=True)
        assert sorted(v for b in _drain(kept) for v in b.tolist()) == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="cannot be a vector"):
        tf.train.maybe_batch([tf.constant(1)], keep_input=[True], batch_size=1)


def test_batch_carries_sparse_tensors(graph):
    records = [tf.train.Example(features=tf.train.Features(feature={
        "ids": tf.train.Feature(int64_list=tf.train.Int64List(value=list(range(i)))),
        "n": tf.train.Feature(int64_list=tf.train.Int64List(value=[i]))})).SerializeToString()
        for i in range(5)]
    record = tf.train.input_producer(tf.constant(records), num_epochs=1, shuffle=False).dequeue()
    parsed = tf.parse_single_example(record, {"ids": tf.VarLenFeature(tf.int64),
                                              "n": tf.FixedLenFeature([], tf.int64)})
    batched = tf.train.batch(parsed, batch_size=3, allow_smaller_final_batch=True)
    assert isinstance(batched["ids"], tf.SparseTensor)
    assert batched["ids"].indices.shape.as_list() == [None, 2]
    out = _drain(batched)
    assert [b["n"].tolist() for b in out] == [[0, 1, 2], [3, 4]]
    np.testing.assert_array_equal(out[0]["ids"].indices, [[1, 0], [2, 0], [2, 1]])
    np.testing.assert_array_equal(out[0]["ids"].values, [0, 0, 1])
    np.testing.assert_array_equal(out[0]["ids"].dense_shape, [3, 2])
    np.testing.assert_array_equal(out[1]["ids"].dense_shape, [2, 4])
    with tf.Graph().as_default():
        sparse = tf.SparseTensor([[0, 0], [1, 1]], tf.constant([1.0, 2.0]), [2, 3])
        a = tf.train.range_input_producer(2, num_epochs=1, shuffle=False).dequeue()
        joined = tf.train.batch_join([[sparse, a], [sparse, a + 10]], batch_size=2,
                                     enqueue_many=False, allow_smaller_final_batch=True)
        got = _drain(joined)
        values = [v for b in got for v in b[1].tolist()]  # one shared producer: 2 elements
        assert sorted(v % 10 for v in values) == [0, 1]
        assert all(b[0].dense_shape.tolist() == [2, 2, 3] for b in got)


def test_batch_rejects_what_it_cannot_queue(graph):
    with pytest.raises(ValueError, match="at least one tensor"):
        tf.train.batch([], batch_size=2)
    with pytest.raises(ValueError, match="fully defined"):
        tf.train.batch([tf.placeholder(tf.float32, [None])], batch_size=2)


def test_reader_parse_shuffle_batch_pipeline(graph, tmp_path):
    paths = []
    for shard in range(2):
        path = str(tmp_path / f"data-{shard}.tfrecord")
        with tf.python_io.TFRecordWriter(path) as writer:
            for i in range(20):
                example = tf.train.Example(features=tf.train.Features(feature={
                    "id": tf.train.Feature(int64_list=tf.train.Int64List(
                        value=[shard * 20 + i]))}))
                writer.write(example.SerializeToString())
        paths.append(path)
    filenames = tf.train.string_input_producer(paths, num_epochs=2, seed=4)
    _, record = tf.TFRecordReader().read(filenames)
    ids = tf.parse_single_example(record, {"id": tf.FixedLenFeature([], tf.int64)})["id"]
    batched = tf.train.shuffle_batch([ids], batch_size=6, capacity=30, min_after_dequeue=8,
                                     num_threads=2, seed=5, allow_smaller_final_batch=True)
    seen = [v for b in _drain(batched) for v in b.tolist()]
    assert sorted(seen) == sorted(list(range(40)) * 2)
