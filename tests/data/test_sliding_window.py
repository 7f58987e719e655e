"""tf.contrib.data.sliding_window_batch: windows against a NumPy slicing reference, errors."""

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.framework import errors


@pytest.fixture(autouse=True)
def graph():
    with tf.Graph().as_default() as g:
        yield g


def _drain(dataset):
    nxt = dataset.make_one_shot_iterator().get_next()
    out = []
    with tf.Session() as sess:
        while True:
            try:
                out.append(sess.run(nxt))
            except errors.OutOfRangeError:
                return out


def _reference(values, size, shift, stride):
    span = (size - 1) * stride + 1
    return [values[s:s + span:stride] for s in range(0, len(values) - span + 1, shift)]


@pytest.mark.parametrize("n,size,shift,stride", [
    (7, 3, 1, 1), (7, 3, 2, 1), (10, 2, 3, 2), (5, 5, 1, 1), (4, 5, 1, 1), (9, 1, 4, 1),
    (12, 3, 2, 3)])
def test_windows_match_numpy_slicing(n, size, shift, stride):
    values = np.arange(n, dtype=np.int64) * 10
    ds = tf.data.Dataset.from_tensor_slices(values).apply(
        tf.contrib.data.sliding_window_batch(size, window_shift=shift, window_stride=stride))
    got = _drain(ds)
    ref = _reference(values, size, shift, stride)
    assert len(got) == len(ref)
    for g, r in zip(got, ref):
        np.testing.assert_array_equal(g, r)


def test_structure_is_kept_and_window_dimension_is_unknown():
    feats = np.arange(12, dtype=np.float32).reshape(6, 2)
    ds = tf.data.Dataset.from_tensor_slices({"x": feats, "y": np.arange(6)}).apply(
        tf.contrib.data.sliding_window_batch(window_size=4, stride=2))
    assert ds.output_shapes["x"].as_list() == [None, 2]
    got = _drain(ds)
    assert len(got) == 2
    np.testing.assert_array_equal(got[1]["x"], feats[2:6])
    np.testing.assert_array_equal(got[1]["y"], np.arange(2, 6))


def test_nested_in_flat_map_as_programs_use_it():
    seqs = np.arange(8, dtype=np.int32).reshape(2, 4)
    ds = tf.data.Dataset.from_tensor_slices(seqs).flat_map(
        lambda x: tf.data.Dataset.from_tensor_slices(x).apply(
            tf.contrib.data.sliding_window_batch(window_size=3, stride=1)))
    got = np.stack(_drain(ds))
    np.testing.assert_array_equal(got, [[0, 1, 2], [1, 2, 3], [4, 5, 6], [5, 6, 7]])


def test_bad_arguments():
    with pytest.raises(ValueError, match="both"):
        tf.contrib.data.sliding_window_batch(2, stride=1, window_shift=1)
    ds = tf.data.Dataset.range(4).apply(tf.contrib.data.sliding_window_batch(0))
    with pytest.raises(errors.InvalidArgumentError, match="Window size"):
        _drain(ds)
