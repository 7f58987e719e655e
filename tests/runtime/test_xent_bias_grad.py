"""fold_xent_bias_grad (runtime/remapper.py, after fuse_xent_scale): the output layer's bias
gradient (a BiasAddGrad of the scaled cross-entropy's backprop) is summed inside the op while
each block of rows is in cache; the loss and backprop stay bit-identical, the bias gradient is
the unfused one within float rounding (another summation order), and the compiled pass sums as
the NumPy path does."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tensorflux as tf
from tensorflux.lib.numerics import jit, xent_jit
from tensorflux.ops.internal import fused
from tensorflux.runtime import remapper, rewrites, subgraph

FOLDED = "_SparseSoftmaxCrossEntropyWithLogitsScaledBiasGrad"
SETTINGS = settings(max_examples=6, deadline=None, suppress_health_check=[
    HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def _ops(fetches, feeds):
    nodes, points, _ = subgraph.build_step_graph(tf.get_default_graph(), list(feeds),
                                                 list(fetches), [])
    return [node.op for node in rewrites.optimize(nodes, points)]


def _dense_loss(dtype, batch, inputs, classes):
    x = tf.placeholder(dtype, [batch, inputs])
    labels = tf.placeholder(tf.int32, [batch])
    logits = tf.layers.dense(x, classes)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=labels, logits=logits))
    return x, labels, loss, tf.gradients(loss, [x] + tf.trainable_variables())


def _close(got, want, dtype):
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@settings(SETTINGS, max_examples=4)
@given(dtype=st.sampled_from([np.float32, np.float64]), batch=st.integers(2, 40),
       classes=st.sampled_from([3, 64, 100, 20000]), seed=st.integers(0, 2 ** 16))
def test_bias_gradient_is_folded_and_matches(monkeypatch, dtype, batch, classes, seed):
    # (batch >= 2: a mean over one row has the scale 1, folded away with its Mul)
    with tf.Graph().as_default():
        tf.set_random_seed(seed % 89)
        x, labels, loss, grads = _dense_loss(tf.as_dtype(dtype), batch, 5, classes)
        ops = _ops([loss] + grads, [x, labels])
        assert FOLDED in ops and "BiasAddGrad" not in ops  # fetched: an Identity of it
        rng = np.random.default_rng(seed)
        feed = {x: (rng.standard_normal((batch, 5)) * 3).astype(dtype),
                labels: rng.integers(0, classes, batch)}
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got = sess.run([loss] + grads, feed)
            with monkeypatch.context() as patch, tf.Session() as reference:
                patch.setattr(remapper, "FOLD_XENT_BIAS_GRAD", False)
                for var in tf.global_variables():
                    reference.run(var.assign(sess.run(var)))
                assert FOLDED not in _ops([loss] + grads, [x, labels])
                want = reference.run([loss] + grads, feed)
    bias = len(got) - 1
    for k, (g, w) in enumerate(zip(got, want)):
        if k == bias:
            _close(g, w, dtype)
        else:  # the loss and the other gradients do not change
            np.testing.assert_array_equal(g, w)


def test_a_training_step_and_unscaled_losses():
    with tf.Graph().as_default():
        x, labels, loss, _ = _dense_loss(tf.float32, 4, 3, 7)
        train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
        nodes, points, _ = subgraph.build_step_graph(tf.get_default_graph(), [x, labels],
                                                     [loss], [train])
        ops = [node.op for node in rewrites.optimize(nodes, points)]
        assert FOLDED in ops and "BiasAddGrad" not in ops
        feed = {x: np.linspace(-3, 3, 12, dtype=np.float32).reshape(4, 3),
                labels: np.array([0, 6, 2, 2])}
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            start = sess.run(tf.trainable_variables())
            sess.run(train, feed)
            bias = sess.run(tf.trainable_variables()[1])
            logits = feed[x] @ start[0] + start[1]
            probs = np.exp(logits - logits.max(1, keepdims=True))
            probs /= probs.sum(1, keepdims=True)
            probs[np.arange(4), feed[labels]] -= 1
            np.testing.assert_allclose(bias, start[1] - 0.5 * probs.mean(0), rtol=1e-5,
                                       atol=1e-6)
        total = tf.reduce_sum(tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=labels, logits=tf.layers.dense(x, 7)))
        assert FOLDED not in _ops(tf.gradients(total, [x]), [x, labels])  # no scale, no bias


@pytest.mark.jit_compile
@pytest.mark.skipif(not jit.available(), reason="numba is not available")
@SETTINGS
@given(dtype=st.sampled_from([np.float32, np.float64]), batch=st.integers(0, 50),
       classes=st.sampled_from([1, 63, 64, 300, 20000]), specials=st.booleans(),
       seed=st.integers(0, 2 ** 16))
def test_compiled_column_sums_match_the_numpy_path(monkeypatch, dtype, batch, classes,
                                                   specials, seed):
    rng = np.random.default_rng(seed)
    features = (rng.standard_normal((batch, classes)) * 5).astype(dtype)
    if specials and features.size:
        features.reshape(-1)[rng.integers(0, features.size)] = rng.choice(
            [np.nan, np.inf, -np.inf, -0.0])
    labels = rng.integers(0, classes, batch).astype(np.int32)
    scale = np.full((batch, 1), 1 / max(batch, 1), dtype)
    kernel = fused._xent_bias_grad_kernel
    # The compiled last pass (bit-identical); the whole-row kernel is test_xent_rows_jit.py's.
    monkeypatch.setattr(xent_jit, "FUSED_ROWS", False)
    monkeypatch.setenv("TFX_JIT", "0")
    want = kernel(features, labels, scale)
    monkeypatch.setenv("TFX_JIT", "1")
    got = kernel(features, labels, scale)
    for g, w in zip(got[:2], want[:2]):
        np.testing.assert_array_equal(g, w)
    assert got[2].shape == (classes,) and got[2].dtype == dtype
    np.testing.assert_array_equal(np.isnan(got[2]), np.isnan(want[2]))
    finite = ~np.isnan(want[2])
    _close(got[2][finite], want[2][finite], dtype)
    # and the sums are the backprop's columns, as BiasAddGrad takes them
    np.testing.assert_array_equal(np.isnan(got[2]), np.isnan(got[1].sum(axis=0)))
    _close(got[2][finite], got[1].sum(axis=0, dtype=np.float64)[finite], dtype)
