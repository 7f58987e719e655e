"""One optimizer object used in several graphs (an Estimator calls its model_fn in a fresh graph
on every train()): slots are per (graph, variable), so each graph gets its own, with TF1's
update values."""

import numpy as np
import pytest

import tensorflux as tf


def _one_step(opt, grad_rows):
    """Minimises sum(w * c) for a 2x2 variable w (dense) and an embedding lookup (sparse)."""
    graph = tf.Graph()
    with graph.as_default():
        w = tf.Variable([[1.0, 2.0], [3.0, 4.0]], name="w")
        emb = tf.Variable(np.ones((3, 2), np.float32), name="emb")
        loss = tf.reduce_sum(w * [[0.5, -1.0], [2.0, 0.25]]) + tf.reduce_sum(
            tf.nn.embedding_lookup(emb, grad_rows))
        train = opt.minimize(loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train)
            values = sess.run([w, emb])
        slots = {name: opt.get_slot(w, name) for name in opt.get_slot_names()}
    return graph, values, slots


@pytest.mark.parametrize("make", [
    lambda: tf.train.ProximalAdagradOptimizer(0.1, l1_regularization_strength=0.001),
    lambda: tf.train.AdagradOptimizer(0.1),
    lambda: tf.train.MomentumOptimizer(0.1, 0.9),
    lambda: tf.train.AdamOptimizer(0.1),
    lambda: tf.train.FtrlOptimizer(0.1, l2_regularization_strength=1.0),
])
def test_an_optimizer_reused_in_a_new_graph_gets_fresh_slots(make):
    opt = make()
    graph1, first, slots1 = _one_step(opt, [0, 2])
    graph2, second, slots2 = _one_step(opt, [0, 2])  # raised "must be from the same graph"
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)  # same start, same step, fresh slots
    assert slots1 and slots1.keys() == slots2.keys()
    for name in slots1:
        assert slots1[name].graph is graph1 and slots2[name].graph is graph2


def test_adagrad_step_in_the_second_graph_matches_numpy():
    opt = tf.train.AdagradOptimizer(0.1, initial_accumulator_value=0.1)
    _one_step(opt, [1])
    _, (w, emb), _ = _one_step(opt, [1])
    grad = np.array([[0.5, -1.0], [2.0, 0.25]])
    ref_w = np.array([[1.0, 2.0], [3.0, 4.0]]) - 0.1 * grad / np.sqrt(0.1 + grad ** 2)
    np.testing.assert_allclose(w, ref_w, rtol=1e-6)
    ref_emb = np.ones((3, 2))
    ref_emb[1] -= 0.1 * 1.0 / np.sqrt(0.1 + 1.0)
    np.testing.assert_allclose(emb, ref_emb, rtol=1e-6)
