"""Segment-op error table (TF 1.15 classes and facts): sizes and ordering are run-time
InvalidArgumentErrors, as TF's kernels report them."""

import numpy as np
import pytest
from op_helpers import graph, run  # noqa: F401

import tensorflux as tf

DATA = np.array([1.0, 2.0, 3.0], np.float32)
ROWS = np.arange(12, dtype=np.float32).reshape(4, 3)


def _seg(ids, num_segments=None, fed=True):
    p = tf.placeholder(tf.int32) if fed else tf.constant(ids)
    if num_segments is None:
        out = tf.segment_sum(DATA, p)
    else:
        out = tf.unsorted_segment_sum(DATA, p, num_segments)
    return out, ({p: ids} if fed else None)


ERROR_TABLE = [
    ("sorted size fed", lambda: _seg([0, 0]), "segment_ids should be the same size as "
                                              "dimension 0 of input"),
    ("sorted size static", lambda: _seg([0, 0], fed=False),
     "segment_ids should be the same size as dimension 0 of input"),
    ("sorted order", lambda: _seg([1, 0, 1]), "segment ids are not increasing"),
    ("sorted negative first", lambda: _seg([-1, 0, 0]),
     r"Segment id -1 out of range \[0, 1\), possibly because 'segment_ids' input is not "
     "sorted"),
    ("sorted negative last", lambda: _seg([0, 0, -1]), "segment ids must be >= 0"),
    ("sorted id beyond the last", lambda: _seg([1, 2, 0]),
     r"Segment id 1 out of range \[0, 1\)"),
    ("sorted order before range", lambda: _seg([0, 5, 1]), "segment ids are not increasing"),
    ("unsorted out of range", lambda: _seg([0, 5, 0], 2),
     r"segment_ids\[1\] = 5 is out of range \[0, 2\)"),
    ("unsorted prefix", lambda: _seg([0, 1], 2),
     r"data.shape = \[3\] does not start with segment_ids.shape = \[2\]"),
]


@pytest.mark.parametrize("build,words", [r[1:] for r in ERROR_TABLE],
                         ids=[r[0] for r in ERROR_TABLE])
def test_segment_error_table(build, words):
    fetch, feed = build()
    with pytest.raises(tf.errors.InvalidArgumentError, match=words):
        run(fetch, feed)


def test_valid_segments_still_sum():
    np.testing.assert_array_equal(run(_seg([0, 0, 1], fed=False)[0]), [3.0, 3.0])
    np.testing.assert_array_equal(run(_seg([1, 1, -1], 3, fed=False)[0]), [0.0, 3.0, 0.0])


def _sparse(ids, indices=(0, 1, 2, 3), num_segments=None):
    return tf.sparse.segment_sum(ROWS, list(indices), ids, num_segments=num_segments)


@pytest.mark.parametrize("ids,words", [
    ([0, 1, 0, 1], "segment ids are not increasing"),
    ([0, 1, 2, 0], r"Segment id 1 out of range \[0, 1\)"),
    ([-1, 0, 1, 1], r"Segment id -1 out of range \[0, 2\)"),
    ([0, 0, 0, -2], "segment ids must be >= 0")])
def test_sparse_segment_ids_checked_in_tf_order(ids, words):
    with pytest.raises(tf.errors.InvalidArgumentError, match=words):
        run(_sparse(ids))


def test_sparse_segment_with_num_segments_names():
    from tensorflux.ops.sparse import segment as sparse_segment

    got = run(sparse_segment.sparse_segment_sum_with_num_segments(ROWS, [3, 0], [0, 2], 4))
    np.testing.assert_array_equal(got, [ROWS[3], np.zeros(3), ROWS[0], np.zeros(3)])
    with pytest.raises(ValueError, match="negative value for num_segments"):
        sparse_segment.sparse_segment_mean_with_num_segments(ROWS, [0], [0], -2)


@pytest.mark.parametrize("grad_rows,indices,ids,words", [
    (3, [8, 3, 0, 10], [0, 1, 2, 2], r"Index 10 out of range \[0, 10\)"),
    (3, [8, 3, -1, 9], [0, 1, 2, 2], r"Index -1 out of range \[0, 10\)"),
    (3, [8, 3, 0, 9], [0, 1, 1, 4], "Invalid number of segments"),
    (1, [8, 3, 0, 9], [0, 1, 2, 0], r"Segment id 1 out of range \[0, 1\)"),
    (2, [8, 3, 0, 9], [-1, 0, 1, 1], r"Segment id -1 out of range \[0, 2\)")])
def test_sparse_segment_grad_checks(grad_rows, indices, ids, words):
    from tensorflux.ops.sparse import segment as sparse_segment

    grad = np.ones([grad_rows, 4], np.float32)
    for op in (sparse_segment.SparseSegmentMeanGrad, sparse_segment.SparseSegmentSqrtNGrad):
        with pytest.raises(tf.errors.InvalidArgumentError, match=words):
            run(op(grad, indices, ids, 10))
