"""histogram_fixed_width(_bins) argument checks in TF's words, and the bins' int32 dtype."""

import numpy as np
import pytest
from op_helpers import graph, run  # noqa: F401

import tensorflux as tf


def test_bins_are_int32_whatever_dtype_is_asked():
    values = np.array([-3.0, 0.2, 2.5, 4.99, 9.0])
    bins = tf.histogram_fixed_width_bins(values, [0.0, 5.0], nbins=5, dtype=tf.int64)
    assert bins.dtype == tf.int32
    expected = np.clip(np.floor(values / 5.0 * 5), 0, 4).astype(np.int32)
    np.testing.assert_array_equal(run(bins), expected)


def test_non_positive_nbins():
    with pytest.raises(ValueError, match="nbins -2 must > 0"):
        tf.histogram_fixed_width_bins([1.0], [0.0, 1.0], nbins=-2)
    fed = tf.placeholder(tf.int32)
    bins = tf.histogram_fixed_width_bins([1.0], [0.0, 1.0], nbins=fed)
    with pytest.raises(tf.errors.InvalidArgumentError, match="nbins must > 0"):
        run(bins, {fed: 0})
    np.testing.assert_array_equal(run(bins, {fed: 4}), [3])


def test_histogram_shape_checks():
    with pytest.raises(ValueError, match="Shape must be rank 1 but is rank 0"):
        tf.histogram_fixed_width([1.0], 1.0)
    with pytest.raises(ValueError, match="Dimension must be 2 but is 3"):
        tf.histogram_fixed_width([1.0], [0.0, 1.0, 2.0])
    with pytest.raises(ValueError, match="Shape must be rank 0 but is rank 1"):
        tf.histogram_fixed_width([1.0], [0.0, 1.0], nbins=[2, 3])
