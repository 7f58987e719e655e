"""sparse_split's argument and index checks, and edit_distance on SparseTensorValues, dense
shapes of rank below 2 and sequence coordinates outside the output (typed errors naming the
input, never a NumPy error leaking out of the kernel)."""

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.framework import errors
from tensorflux.ops.sparse import structure


@pytest.fixture(autouse=True)
def graph():
    g = tf.Graph()
    with g.as_default():
        yield g


def _run(fetch):
    with tf.Session() as sess:
        return sess.run(fetch)


def _grid():
    # rows 0..4 of a [5, 4] matrix, one entry per row at column row % 4
    idx = np.array([[r, r % 4] for r in range(5)], np.int64)
    return tf.SparseTensor(idx, np.arange(10.0, 15.0, dtype=np.float32), [5, 4])


def test_split_pieces_match_numpy_slices():
    sp = _grid()
    dense = np.zeros([5, 4], np.float32)
    dense[np.arange(5), np.arange(5) % 4] = np.arange(10.0, 15.0)
    for axis, bounds in ((0, [0, 3, 5]), (-1, [0, 2, 4])):
        pieces = _run([tf.sparse_tensor_to_dense(p)
                       for p in tf.sparse_split(sp_input=sp, num_split=2, axis=axis)])
        want = [np.take(dense, range(bounds[i], bounds[i + 1]), axis=axis) for i in range(2)]
        for got, ref in zip(pieces, want):
            np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("kwargs, missing", [({}, "sp_input"), ({"sp_input": 1}, "num_split"),
                                             ({"sp_input": 1, "num_split": 2}, "axis")])
def test_split_names_the_missing_argument(kwargs, missing):
    with pytest.raises(ValueError, match=f"^{missing} is required$"):
        tf.sparse_split(**kwargs)
    with pytest.raises(ValueError, match="Keyword arguments are required"):
        tf.sparse_split(_grid(), 2, 0)


def test_split_axis_must_be_an_in_range_scalar():
    with pytest.raises(errors.InvalidArgumentError, match=r"axis should be in range \[-2, 2\), "
                                                          r"got 2"):
        _run(tf.sparse_split(sp_input=_grid(), num_split=2, axis=2)[0].values)
    with pytest.raises(errors.InvalidArgumentError, match=r"axis should be a scalar, got "
                                                          r"shape \[2\]"):
        _run(tf.sparse_split(sp_input=_grid(), num_split=2, axis=[0, 1])[0].values)


def test_split_rejects_indices_outside_the_dense_shape():
    out = structure.SparseSplit(tf.constant(1, tf.int64), tf.constant([[0, 1], [2, 7]], tf.int64),
                                tf.constant([1.0, 2.0]), tf.constant([3, 4], tf.int64),
                                num_split=2)
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"invalid index: indices\[1\] = \[2, 7\] is out of bounds: "
                             r"need 0 <= index < \[3, 4\]"):
        _run(out.output_values[0])


def _levenshtein(a, b):
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, y in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (x != y))
    return row[-1]


def test_edit_distance_accepts_sparse_tensor_values():
    hyp_seqs, truth_seqs = [[3, 1, 4], [1]], [[3, 4], [5, 9, 2]]

    def value(seqs):
        idx = [[b, i] for b, s in enumerate(seqs) for i in range(len(s))]
        return tf.SparseTensorValue(np.array(idx, np.int64),
                                    np.array([v for s in seqs for v in s], np.int64),
                                    np.array([len(seqs), 3], np.int64))

    out = _run(tf.edit_distance(value(hyp_seqs), value(truth_seqs), normalize=False))
    np.testing.assert_allclose(out, [_levenshtein(h, t) for h, t in zip(hyp_seqs, truth_seqs)])
    with pytest.raises(TypeError, match="hypothesis must be a SparseTensor"):
        tf.edit_distance(np.zeros([2, 2]), value(truth_seqs))


def test_edit_distance_needs_rank_two():
    flat = tf.SparseTensor(np.zeros([1, 1], np.int64), [1], [3])
    with pytest.raises(ValueError, match="Hypothesis SparseTensors must have rank at least 2, "
                                         "but hypothesis_shape rank is: 1"):
        tf.edit_distance(flat, flat)
    shape = tf.placeholder_with_default(np.array([3], np.int64), [None])
    late = tf.SparseTensor(np.zeros([1, 1], np.int64), tf.constant([1]), shape)
    with pytest.raises(errors.InvalidArgumentError, match="truth_shape rank is: 1"):
        _run(tf.edit_distance(tf.SparseTensor(np.zeros([1, 2], np.int64), [1], [1, 1]), late))


def test_edit_distance_sequence_coordinates_outside_output():
    hyp = tf.SparseTensor(np.array([[-4, 0]], np.int64), [1], [2, 1])
    truth = tf.SparseTensor(np.array([[0, 0]], np.int64), [1], [2, 1])
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"hypothesis_indices\[0\] = \[-4, 0\] gives inner product -4 which "
                             r"would require writing to outside of the buffer"):
        _run(tf.edit_distance(hyp, truth))
    hyp = tf.SparseTensor(np.array([[0, 0], [0, 5]], np.int64), [1, 2], [1, 6])
    truth = tf.SparseTensor(np.array([[0, 0], [1, 0]], np.int64), [1, 2], [1, 1])
    with pytest.raises(errors.InvalidArgumentError, match=r"truth_indices\[1\] = \[1, 0\]"):
        _run(tf.edit_distance(hyp, truth))


def test_concat_static_entry_count_and_shape_mismatch_message():
    a = tf.SparseTensor([[0, 2], [1, 0]], [1.0, 2.0], [3, 3])
    b = tf.SparseTensor([[1, 1], [2, 4], [0, 0]], [3.0, 4.0, 5.0], [3, 5])
    out = tf.sparse_concat(1, [a, b])
    assert out.indices.get_shape().as_list() == [5, 2]
    assert out.values.get_shape().as_list() == [5]
    dynamic = tf.SparseTensor(tf.placeholder_with_default(np.zeros([0, 2], np.int64), [None, 2]),
                              tf.placeholder_with_default(np.zeros([0], np.float32), [None]),
                              [3, 3])
    assert tf.sparse_concat(1, [a, dynamic]).indices.get_shape().as_list() == [None, 2]
    got = _run(out)
    np.testing.assert_array_equal(got.indices, [[0, 2], [0, 3], [1, 0], [1, 4], [2, 7]])
    np.testing.assert_allclose(got.values, [1.0, 5.0, 2.0, 3.0, 4.0])
    c = tf.SparseTensor([[0, 0]], [6.0], [2, 3])
    with pytest.raises(errors.InvalidArgumentError,
                       match="Input shapes must match: expected 3 for dimension 0 but got 2 "
                             "at position 2"):
        _run(tf.sparse_concat(1, [a, b, c]).values)


def test_broadcast_to_error_names_the_requested_shape():
    with pytest.raises(ValueError, match=r"input\[1\] = \[4,2\]"):
        tf.broadcast_to(tf.constant([1, 2, 3]), [4, 2])


def test_sparse_dense_matmul_names_the_out_of_range_coordinate():
    b = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    sp = tf.SparseTensor(np.array([[0, 1], [2, 0], [1, 7]], np.int64), [1.0, 2.0, 3.0], [3, 2])
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"k \(7\) from index\[2,1\] out of bounds \(>=2\)"):
        _run(tf.sparse_tensor_dense_matmul(sp, b))
    sp = tf.SparseTensor(np.array([[0, 1], [5, 0]], np.int64), [1.0, 2.0], [2, 3])
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"m \(5\) from index\[1,0\] out of bounds \(>=2\)"):
        _run(tf.sparse_tensor_dense_matmul(sp, b.T))
    ok = tf.SparseTensor(np.array([[0, 1], [2, 0]], np.int64), [1.5, -2.0], [3, 2])
    dense = np.zeros([3, 2], np.float32)
    dense[0, 1], dense[2, 0] = 1.5, -2.0
    np.testing.assert_allclose(_run(tf.sparse_tensor_dense_matmul(ok, b)), dense @ b)
    np.testing.assert_allclose(_run(tf.sparse_tensor_dense_matmul(ok, b.T, adjoint_b=True)),
                               dense @ b)
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 2 and 3"):
        tf.sparse_tensor_dense_matmul(ok, b.T)
