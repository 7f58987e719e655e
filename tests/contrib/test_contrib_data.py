"""tf.contrib.data as TF 1.15 has it: the experimental transformations under contrib names and
the contrib-only helpers, checked against NumPy; pre-1.4 dataset classes name tf.data."""

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.framework import errors


@pytest.fixture(autouse=True)
def graph():
    with tf.Graph().as_default() as g:
        yield g


def _all(dataset):
    nxt = dataset.make_one_shot_iterator().get_next()
    out = []
    with tf.Session() as sess:
        while True:
            try:
                out.append(sess.run(nxt))
            except tf.errors.OutOfRangeError:
                return out


def test_batch_and_drop_remainder_keeps_full_batches_only():
    ds = tf.data.Dataset.range(10).apply(tf.contrib.data.batch_and_drop_remainder(4))
    assert ds.output_shapes.as_list() == [4]
    got = _all(ds)
    np.testing.assert_array_equal(np.stack(got), np.arange(8).reshape(2, 4))


def test_padded_batch_and_drop_remainder_pads_to_the_longest():
    lengths = [1, 3, 2, 4, 1]
    ds = tf.data.Dataset.from_tensor_slices(np.array(lengths, np.int64)).map(
        lambda n: tf.fill([n], n))
    ds = ds.apply(tf.contrib.data.padded_batch_and_drop_remainder(2, [None]))
    got = _all(ds)
    assert len(got) == 2
    for batch, pair in zip(got, ([1, 3], [2, 4])):
        expected = np.zeros((2, max(pair)), np.int64)
        for row, n in enumerate(pair):
            expected[row, :n] = n
        np.testing.assert_array_equal(batch, expected)


def test_contrib_names_are_the_experimental_transformations():
    ds = tf.data.Dataset.range(7).apply(
        tf.contrib.data.map_and_batch(lambda x: x * 3, batch_size=3))
    got = _all(ds)
    np.testing.assert_array_equal(np.concatenate(got), np.arange(7) * 3)
    assert tf.contrib.data.shuffle_and_repeat is tf.data.experimental.shuffle_and_repeat
    ds = tf.data.Dataset.range(3).apply(tf.contrib.data.sloppy_interleave(
        lambda x: tf.data.Dataset.from_tensors(x).repeat(2), cycle_length=2))
    assert sorted(_all(ds)) == [0, 0, 1, 1, 2, 2]


def test_reduce_dataset_folds_every_element():
    reducer = tf.contrib.data.Reducer(
        init_func=lambda _: (np.int64(0), np.int64(0)),
        reduce_func=lambda state, x: (state[0] + x, state[1] + 1),
        finalize_func=lambda total, count: tf.cast(total, tf.float64) / tf.cast(count,
                                                                               tf.float64))
    mean = tf.contrib.data.reduce_dataset(tf.data.Dataset.range(2, 9), reducer)
    with tf.Session() as sess:
        assert sess.run(mean) == np.mean(np.arange(2, 9))


def test_assert_element_shape_sets_static_shape_and_checks_at_run_time():
    ds = tf.data.Dataset.from_generator(lambda: iter([[1.0, 2.0], [3.0, 4.0]]), tf.float32,
                                        tf.TensorShape([None]))
    checked = ds.apply(tf.contrib.data.assert_element_shape([2]))
    assert checked.output_shapes.as_list() == [2]
    np.testing.assert_array_equal(np.stack(_all(checked)), [[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(ValueError, match="not compatible"):
        ds.apply(tf.contrib.data.assert_element_shape([2, 2]))
    wrong = ds.apply(tf.contrib.data.assert_element_shape([3]))
    with pytest.raises(errors.InvalidArgumentError):
        _all(wrong)


def test_pre_1_4_classes_name_their_replacement():
    with pytest.raises(tf.contrib.ContribNotProvidedError, match="tf.data.Dataset"):
        _ = tf.contrib.data.Dataset


def test_assert_element_shape_follows_a_tuple_structure():
    ds = tf.data.Dataset.from_tensor_slices((np.zeros((4, 3), np.float32),
                                             np.arange(4, dtype=np.int64)))
    checked = ds.apply(tf.contrib.data.assert_element_shape(([3], [])))
    assert [s.as_list() for s in checked.output_shapes] == [[3], []]
    assert [int(v[1]) for v in _all(checked)] == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="not compatible"):
        ds.apply(tf.contrib.data.assert_element_shape(([2], [])))
