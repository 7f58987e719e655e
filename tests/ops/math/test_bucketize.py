"""Bucketize: the index of each value's bucket among sorted float boundaries, against NumPy."""

import numpy as np
import pytest
from op_helpers import graph, run  # noqa: F401

import tensorflux as tf
from tensorflux.ops.math.histogram import bucketize

COVERED_OPS = {"Bucketize"}
EDGES = [-2.5, 0.0, 0.0, 1.0, 7.25]


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64])
def test_bucket_index_matches_numpy_right_search(dtype):
    rng = np.random.RandomState(4)
    values = (rng.uniform(-6, 10, size=(3, 5, 2)) * 2).round().astype(dtype) / 2 \
        if dtype in (np.float32, np.float64) else rng.randint(-6, 10, size=(3, 5, 2)).astype(dtype)
    values.flat[:5] = np.array([-2.5, 0, 1, 7.25, 100]).astype(dtype)  # values on the edges
    out = bucketize(values, EDGES)
    got = run(out)
    expected = np.searchsorted(np.float32(EDGES), values, side="right").astype(np.int32)
    assert out.dtype == tf.int32 and out.shape.as_list() == [3, 5, 2]
    np.testing.assert_array_equal(got, expected)


def test_empty_input_and_no_boundaries():
    empty, no_edges = run([bucketize(np.zeros((0, 3), np.float32), [1.0]),
                           bucketize(np.array([-1, 5], np.int32), [])])
    assert empty.shape == (0, 3) and empty.dtype == np.int32
    np.testing.assert_array_equal(no_edges, [0, 0])


def test_unsorted_boundaries_fail_when_run():
    op = bucketize(np.array([1.0, 2.0], np.float32), [3.0, 1.0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Expected sorted boundaries"):
        run(op)


def test_boundaries_must_be_a_list():
    with pytest.raises(TypeError, match="Expected list for attr boundaries"):
        bucketize(np.array([1.0], np.float32), boundaries=2.0)


def test_string_input_is_rejected():
    with pytest.raises(TypeError):
        bucketize(np.array([b"a"], object), [1.0])
