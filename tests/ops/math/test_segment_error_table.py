"""Segment-op error table (TF 1.15 classes and facts): sizes and ordering are run-time
InvalidArgumentErrors, as TF's kernels report them."""

import numpy as np
import pytest
from op_helpers import graph, run  # noqa: F401

import tensorflux as tf

DATA = np.array([1.0, 2.0, 3.0], np.float32)


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
    ("sorted negative first", lambda: _seg([-1, 0, 0]), "segment ids must be >= 0"),
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
