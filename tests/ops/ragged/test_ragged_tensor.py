"""tf.RaggedTensor basics: factories, parts, to_tensor, fetching as RaggedTensorValue,
tf.ragged.constant / tf.ragged.range against Python/NumPy references, validation errors."""

import numpy as np
import pytest

import tensorflux as tf

RT = tf.RaggedTensor


@pytest.fixture(autouse=True)
def graph():
    with tf.Graph().as_default() as g:
        yield g


def _run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


def _dense_ref(rows, default=0):
    width = max([len(r) for r in rows] + [0])
    return np.array([list(r) + [default] * (width - len(r)) for r in rows])


def test_factories_agree_and_fetch_as_ragged_tensor_value():
    values = [3.0, 1.0, 4.0, 1.0, 5.0, 9.0]
    rows = [[3.0, 1.0], [], [4.0, 1.0, 5.0], [9.0]]
    by_splits = RT.from_row_splits(values, [0, 2, 2, 5, 6])
    by_lengths = RT.from_row_lengths(values, [2, 0, 3, 1])
    by_rowids = RT.from_value_rowids(values, [0, 0, 2, 2, 2, 3])
    padded = RT.from_value_rowids(values, [0, 0, 2, 2, 2, 3], nrows=6)
    got = _run([by_splits, by_lengths, by_rowids, padded])
    for value in got[:3]:
        assert isinstance(value, tf.ragged.RaggedTensorValue)
        assert value.to_list() == rows
        assert value.row_splits.tolist() == [0, 2, 2, 5, 6] and value.nrows() == 4
    assert got[3].to_list() == rows + [[], []]
    assert by_splits.dtype == tf.float32 and by_splits.ragged_rank == 1
    assert by_splits.shape.as_list() == [4, None]


def test_parts_and_to_tensor_match_references():
    rows = [[1, 2], [], [3, 4, 5], [6]]
    rt = RT.from_row_lengths(tf.constant([1, 2, 3, 4, 5, 6]), [2, 0, 3, 1])
    nrows, lengths, rowids, dense, filled = _run(
        [rt.nrows(), rt.row_lengths(), rt.value_rowids(), rt.to_tensor(), rt.to_tensor(-7)])
    assert nrows == 4 and lengths.tolist() == [2, 0, 3, 1]
    assert rowids.tolist() == [0, 0, 2, 2, 2, 3]
    np.testing.assert_array_equal(dense, _dense_ref(rows))
    np.testing.assert_array_equal(filled, _dense_ref(rows, -7))
    assert dense.dtype == np.int32


def test_inner_dense_dimensions_and_placeholders():
    values = tf.placeholder(tf.float64, [None, 2])
    splits = tf.placeholder(tf.int64, [None])
    rt = RT.from_row_splits(values, splits)
    v = np.arange(10.0).reshape(5, 2)
    dense = _run(rt.to_tensor(), {values: v, splits: [0, 3, 3, 5]})
    ref = np.zeros((3, 3, 2))
    ref[0, :3] = v[:3]
    ref[2, :2] = v[3:]
    np.testing.assert_array_equal(dense, ref)


def test_ragged_constant_nested_and_dtypes():
    nested = [[[1, 2], [3]], [], [[4, 5, 6]]]
    rt = tf.ragged.constant(nested)
    assert rt.ragged_rank == 2 and rt.dtype == tf.int32
    value = _run(rt)
    assert value.to_list() == nested and value.ragged_rank == 2
    dense = _run(rt.to_tensor())
    ref = np.zeros((3, 2, 3), np.int32)
    ref[0, 0, :2] = [1, 2]
    ref[0, 1, 0] = 3
    ref[2, 0] = [4, 5, 6]
    np.testing.assert_array_equal(dense, ref)
    floats = tf.ragged.constant([[1.5], [], [2.5, 3.5]], dtype=tf.float64)
    assert floats.dtype == tf.float64 and _run(floats).to_list() == [[1.5], [], [2.5, 3.5]]
    uniform_inner = tf.ragged.constant([[[1, 2]], [[3, 4], [5, 6]]], ragged_rank=1)
    assert uniform_inner.ragged_rank == 1
    assert _run(uniform_inner).flat_values.shape == (3, 2)
    assert _run(tf.ragged.constant([[], []])).to_list() == [[], []]


def test_ragged_range_matches_python_ranges():
    starts, limits, deltas = [0, 5, 2, 10], [3, 5, 8, 0], [1, 1, 3, -4]
    got = _run(tf.ragged.range(starts, limits, deltas)).to_list()
    assert got == [list(range(s, l, d)) for s, l, d in zip(starts, limits, deltas)]
    assert _run(tf.ragged.range([3, 0, 2])).to_list() == [[0, 1, 2], [], [0, 1]]
    floats = _run(tf.ragged.range(0.0, [1.0, 2.5], 0.5)).to_list()
    assert floats == [[0.0, 0.5], [0.0, 0.5, 1.0, 1.5, 2.0]]


def test_validation_errors():
    with pytest.raises(ValueError, match="start with 0"):
        RT.from_row_splits([1, 2], [1, 2])
    with pytest.raises(ValueError, match="ascending"):
        RT.from_row_splits([1, 2, 3], [0, 2, 1, 3])
    with pytest.raises(ValueError, match="number of values"):
        RT.from_row_splits([1, 2, 3], [0, 2])
    with pytest.raises(ValueError, match="non-negative"):
        RT.from_row_lengths([1, 2], [3, -1])
    with pytest.raises(ValueError, match="sorted"):
        RT.from_value_rowids([1, 2], [1, 0])
    with pytest.raises(ValueError, match="private"):
        RT(tf.constant([1]), tf.constant([0, 1]))
    with pytest.raises(ValueError, match="same nesting depth"):
        tf.ragged.constant([[1, [2]]])
    with pytest.raises(ValueError, match="rank >= 1"):
        RT.from_row_splits(3.0, [0, 1])
