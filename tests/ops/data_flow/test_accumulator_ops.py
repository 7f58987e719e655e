"""Conditional accumulators: mean/sum of gradients, staleness by global step, blocking takes."""

import threading
import time

import numpy as np
import pytest

import tensorflux as tf

COVERED_OPS = {"ResourceConditionalAccumulator", "ResourceAccumulatorApplyGradient",
               "ResourceAccumulatorNumAccumulated", "ResourceAccumulatorSetGlobalStep",
               "ResourceAccumulatorTakeGradient", "SparseConditionalAccumulator",
               "SparseAccumulatorApplyGradient", "SparseAccumulatorTakeGradient",
               "AccumulatorNumAccumulated", "AccumulatorSetGlobalStep"}
GRADIENT_CASES = []  # accumulator ops are not differentiable


@pytest.fixture
def graph():
    g = tf.Graph()
    with g.as_default():
        yield g


def test_dense_mean_sum_and_staleness(graph):
    acc = tf.ConditionalAccumulator(tf.float32, shape=[2])
    assert acc.accumulator_ref.op.type == "ResourceConditionalAccumulator"
    assert acc.name == "conditional_accumulator"
    grad = tf.placeholder(tf.float32, [2])
    step = tf.placeholder(tf.int64, [])
    apply = acc.apply_grad(grad, local_step=step)
    take = acc.take_grad(2)
    assert take.shape.as_list() == [2] and take.dtype == tf.float32
    total = tf.ConditionalAccumulator(tf.float64, shape=[2], reduction_type="SUM")
    with tf.Session() as sess:
        sess.run(apply, {grad: [1.0, 2.0], step: 0})
        sess.run(apply, {grad: [3.0, 5.0], step: 0})
        assert sess.run(acc.num_accumulated()) == 2
        np.testing.assert_allclose(sess.run(take), [2.0, 3.5])
        assert sess.run(acc.num_accumulated()) == 0
        # The take advanced the global step to 1: a gradient computed at step 0 is stale.
        sess.run(apply, {grad: [9.0, 9.0], step: 0})
        assert sess.run(acc.num_accumulated()) == 0
        sess.run(acc.set_global_step(5))
        sess.run(apply, {grad: [9.0, 9.0], step: 4})
        sess.run(apply, {grad: [1.0, 1.0], step: 5})
        sess.run(apply, {grad: [3.0, 3.0], step: 7})
        np.testing.assert_allclose(sess.run(take), [2.0, 2.0])
        sess.run(total.apply_grad([1.0, 2.0]))
        sess.run(total.apply_grad([1.0, 2.0]))
        out = sess.run(total.take_grad(1))
        np.testing.assert_allclose(out, [2.0, 4.0])
        assert out.dtype == np.float64


def test_take_blocks_until_enough_gradients_and_times_out_cleanly(graph):
    acc = tf.ConditionalAccumulator(tf.float32, shape=[])
    take = acc.take_grad(2)
    with tf.Session() as sess:
        sess.run(acc.apply_grad(4.0))
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(take, options=tf.RunOptions(timeout_in_ms=100))
        assert sess.run(acc.num_accumulated()) == 1  # nothing lost
        result = {}
        waiter = threading.Thread(target=lambda: result.update(v=sess.run(take)))
        waiter.start()
        time.sleep(0.05)
        assert waiter.is_alive()
        sess.run(acc.apply_grad(8.0))
        waiter.join(5)
        assert result["v"] == 6.0


def test_errors(graph):
    acc = tf.ConditionalAccumulator(tf.float32, shape=[2])
    with pytest.raises(ValueError, match="incompatible"):
        acc.apply_grad([1.0, 2.0, 3.0])
    free = tf.ConditionalAccumulator(tf.float32)
    p = tf.placeholder(tf.float32)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="must be positive"):
            sess.run(acc.take_grad(0))
        sess.run(free.apply_grad(p), {p: [1.0, 2.0]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="shape mismatch"):
            sess.run(free.apply_grad(p), {p: [1.0]})


def test_sparse_accumulator_averages_rows(graph):
    acc = tf.SparseConditionalAccumulator(tf.float32, shape=[4, 2])
    assert acc.accumulator_ref.op.type == "SparseConditionalAccumulator"
    assert acc.accumulator_ref.dtype == tf.string._as_ref
    with tf.Session() as sess:
        sess.run(acc.apply_grad([0, 2], [[1.0, 1.0], [2.0, 2.0]], local_step=0))
        sess.run(acc.apply_indexed_slices_grad(
            tf.IndexedSlices(tf.constant([[4.0, 4.0], [1.0, 3.0]]),
                             tf.constant([2, 3], tf.int64), tf.constant([4, 2], tf.int64))))
        assert sess.run(acc.num_accumulated()) == 2
        value = sess.run(acc.take_indexed_slices_grad(2))
        np.testing.assert_array_equal(value.indices, [0, 2, 3])
        np.testing.assert_allclose(value.values, [[1.0, 1.0], [3.0, 3.0], [1.0, 3.0]])
        np.testing.assert_array_equal(value.dense_shape, [4, 2])
        sess.run(acc.apply_grad([3, 1], [[1.0, 1.0], [2.0, 2.0]], local_step=1))
        indices, values, shape = sess.run(acc.take_grad(1))
        np.testing.assert_array_equal(indices, [1, 3])
        np.testing.assert_allclose(values, [[2.0, 2.0], [1.0, 1.0]])
        sess.run(acc.apply_grad([1], [[5.0, 5.0]], local_step=0))  # stale: global step is 2
        assert sess.run(acc.num_accumulated()) == 0
        sess.run(acc.set_global_step(0))
        with pytest.raises(tf.errors.InvalidArgumentError, match="do not match"):
            sess.run(acc.apply_grad([1], [[5.0, 5.0]], grad_shape=[4, 3]))


def test_sparse_sum_and_unknown_shape(graph):
    acc = tf.SparseConditionalAccumulator(tf.float64, reduction_type="SUM")
    with tf.Session() as sess:
        sess.run(acc.apply_grad([1, 1], [[1.0], [2.0]], grad_shape=[3, 1]))
        indices, values, shape = sess.run(acc.take_grad(1))
        np.testing.assert_array_equal(indices, [1])
        np.testing.assert_allclose(values, [[3.0]])
        np.testing.assert_array_equal(shape, [3, 1])
