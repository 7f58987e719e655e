"""The quantile ops of boosted trees: weighted summaries, boundaries, bucketizing."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorflux as tf
from tensorflux.framework import errors
from tensorflux.ops.boosted_trees import quantiles

COVERED_OPS = {"TfxBoostedTreesBucketize", "TfxBoostedTreesQuantileStep"}


def _summary(size):
    return np.zeros((size, 2), np.float32)


def test_small_data_gives_exact_quantiles():
    values = np.arange(1, 11, dtype=np.float32)
    summary = quantiles.merge(_summary(64), values, np.ones(10, np.float32))
    bounds = quantiles.boundaries_of(summary, 4)
    np.testing.assert_allclose(bounds, [1, 3, 5, 8, 10])
    assert summary[:, 1].sum() == 10


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(-1e3, 1e3, width=32), min_size=50, max_size=400),
       st.integers(1, 4))
def test_pruned_summaries_keep_ranks_close(data, chunks):
    values = np.asarray(data, np.float32)
    summary = _summary(40)
    for part in np.array_split(values, chunks):
        summary = quantiles.merge(summary, part, np.ones(part.size, np.float32))
    assert summary[:, 1].sum() == pytest.approx(values.size)
    bounds = quantiles.boundaries_of(summary, 10)
    finite = bounds[np.isfinite(bounds)]
    assert finite[0] == values.min() and finite[-1] == values.max()
    assert np.all(np.diff(finite) > 0)
    ranks = np.searchsorted(np.sort(values), finite, side="right") / values.size
    # Each boundary's rank is within a few summary widths of a multiple of 1/10.
    nearest = np.round(ranks * 10) / 10
    assert np.max(np.abs(ranks - nearest)) <= 0.1 * chunks + 1e-6


def test_weights_move_the_quantiles():
    values = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    summary = quantiles.merge(_summary(16), values, np.array([1, 1, 1, 9], np.float32))
    # Cumulative weights 1, 2, 3, 12: the median rank (6) falls on the heavy value.
    assert quantiles.boundaries_of(summary, 2).tolist() == [1.0, 4.0, np.inf]


def test_bucketize_is_a_lower_bound_search():
    with tf.Graph().as_default(), tf.Session() as sess:
        bounds = np.array([[1.0, 2.0, np.inf], [0.0, 5.0, 9.0]], np.float32)
        values = np.array([[0.5, 5.0], [1.0, 9.5], [3.0, -1.0]], np.float32)
        got = sess.run(quantiles.TfxBoostedTreesBucketize(values, bounds))
    want = np.stack([np.searchsorted(bounds[j], values[:, j], side="left")
                     for j in range(2)], 1)
    np.testing.assert_array_equal(got, want)


def test_quantile_step_accumulates_then_publishes_boundaries():
    with tf.Graph().as_default(), tf.Session() as sess:
        summary = tf.Variable(np.zeros((2, 32, 2), np.float32))
        bounds = tf.Variable(np.full((2, 5), np.inf, np.float32))
        state = tf.Variable(np.zeros(2, np.int64))
        values = tf.placeholder(tf.float32, [None, 2])
        weights = tf.placeholder(tf.float32, [None])
        step = quantiles.TfxBoostedTreesQuantileStep(
            summary._ref(), bounds._ref(), state._ref(), values, weights,
            n_batches_per_layer=2, num_quantiles=4)
        sess.run(tf.global_variables_initializer())
        first = np.stack([np.arange(1, 6), np.arange(10, 60, 10)], 1).astype(np.float32)
        second = np.stack([np.arange(6, 11), np.arange(60, 110, 10)], 1).astype(np.float32)
        assert not sess.run(step, {values: first, weights: np.ones(5)})
        assert np.isinf(sess.run(bounds)).all()
        assert sess.run(step, {values: second, weights: np.ones(5)})
        np.testing.assert_allclose(sess.run(bounds), [[1, 3, 5, 8, 10], [10, 30, 50, 80, 100]])
        assert sess.run(state).tolist() == [2, 1]
        # Once ready, further batches change nothing.
        assert sess.run(step, {values: first * 100, weights: np.ones(5)})
        np.testing.assert_allclose(sess.run(bounds)[0], [1, 3, 5, 8, 10])
        fresh = [tf.Variable(np.zeros((2, 8, 2), np.float32)),
                 tf.Variable(np.zeros(2, np.int64))]
        sess.run(tf.variables_initializer(fresh))
        bad = quantiles.TfxBoostedTreesQuantileStep(
            fresh[0]._ref(), bounds._ref(), fresh[1]._ref(), values, weights,
            n_batches_per_layer=1, num_quantiles=4)
        with pytest.raises(errors.InvalidArgumentError, match="weights must be"):
            sess.run(bad, {values: first, weights: np.ones(3)})
