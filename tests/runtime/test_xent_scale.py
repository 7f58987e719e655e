"""fuse_xent_scale (runtime/remapper.py, rule 6 of rewrites): the constant per-row Mul of the
sparse softmax cross-entropy's gradient runs inside the op, bit-identically."""

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.framework import errors
from tensorflux.ops.internal import fused
from tensorflux.runtime import rewrites, subgraph

L0 = tf.OptimizerOptions(opt_level=-1)  # rule 6 off: the reference graph
SCALED = "_SparseSoftmaxCrossEntropyWithLogitsScaled"


@pytest.fixture(autouse=True)
def graph():
    with tf.Graph().as_default() as g:
        yield g


def _ops(fetches, feeds=()):
    nodes, points, _ = subgraph.build_step_graph(tf.get_default_graph(), list(feeds),
                                                 list(fetches), [])
    return sorted(node.op for node in rewrites.optimize(nodes, points))


def _run(fetches, feed, options=None):
    config = tf.ConfigProto(graph_options=tf.GraphOptions(optimizer_options=options)) \
        if options is not None else None
    with tf.Session(config=config) as sess:
        return sess.run(fetches, feed)


def _same_bits(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got.view(f"u{got.itemsize}"), want.view(f"u{want.itemsize}"))


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64])
@pytest.mark.parametrize("reduce", ["mean", "sum", "scaled_sum"])
def test_mean_loss_gradient_is_fused_and_bit_identical(dtype, reduce):
    rng = np.random.default_rng(0)
    logits = tf.placeholder(dtype, [7, 11])
    labels = tf.placeholder(tf.int64, [7])
    losses = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    loss = {"mean": tf.reduce_mean(losses), "sum": tf.reduce_sum(losses),
            "scaled_sum": tf.reduce_sum(losses * tf.constant(0.3, dtype))}[reduce]
    grad = tf.identity(tf.gradients(loss, logits)[0])  # a fetched Mul itself stays
    ops = _ops([loss, grad], [logits, labels])
    if reduce == "sum":  # the scale is a constant 1: the Mul is folded away instead
        assert "Mul" not in ops and SCALED not in ops
    else:
        assert SCALED in ops and "SparseSoftmaxCrossEntropyWithLogits" not in ops
    values = rng.standard_normal((7, 11)) * 30
    values[2, 3], values[4, :] = np.nan, np.inf
    feed = {logits: values.astype(dtype.as_numpy_dtype), labels: rng.integers(0, 11, 7)}
    got = _run([loss, grad], feed)
    want = _run([loss, grad], feed, L0)
    for g, w in zip(got, want):
        _same_bits(np.asarray(g), np.asarray(w))


def test_fetched_backprop_column_scales_and_fed_scales_are_not_fused():
    logits = tf.placeholder(tf.float32, [3, 4])
    labels = tf.constant([0, 1, 3], tf.int64)
    loss, backprop = tf.raw_ops.SparseSoftmaxCrossEntropyWithLogits(features=logits,
                                                                    labels=labels)
    per_column = backprop * tf.constant([1.0, 2.0, 3.0, 4.0])  # scales columns, not rows
    assert SCALED not in _ops([per_column], [logits])
    fed = tf.placeholder(tf.float32, [3, 1])
    assert SCALED not in _ops([backprop * fed], [logits, fed])
    per_row = tf.identity(tf.constant([[1.0], [2.0], [3.0]]) * backprop)
    assert SCALED in _ops([per_row], [logits])
    assert SCALED not in _ops([per_row, backprop], [logits])  # backprop fetched too
    assert SCALED not in _ops([per_row, loss], [logits])  # the op itself fetched
    value = np.arange(12, dtype=np.float32).reshape(3, 4) / 5
    got = _run([per_column, per_row], {logits: value})
    want = _run([per_column, per_row], {logits: value}, L0)
    for g, w in zip(got, want):
        _same_bits(g, w)


def test_scaled_kernel_checks_the_scale_shape():
    features = np.zeros((3, 4), np.float32)
    labels = np.array([0, 1, 2])
    with pytest.raises(errors.InvalidArgumentError, match="Incompatible shapes"):
        fused._scaled_xent_kernel(features, labels, np.ones((2, 1), np.float32))
    loss, backprop = fused._scaled_xent_kernel(features, labels, np.float32(2.0))
    np.testing.assert_allclose(loss, np.log(4.0), rtol=1e-6)
    np.testing.assert_allclose(backprop[0], [2 * (0.25 - 1), 0.5, 0.5, 0.5], rtol=1e-6)
    with pytest.raises(errors.InvalidArgumentError, match="label value of 4"):
        fused._scaled_xent_kernel(features, np.array([0, 4, 1]), np.float32(1.0))
