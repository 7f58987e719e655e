"""The boosted-trees ops against plain-Python references: tree walks, contributions, split
search (brute force), pruning, and the train step on known data."""

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.framework import errors
from tensorflux.ops.boosted_trees import growing, prediction

COVERED_OPS = {"TfxBoostedTreesPredict", "TfxBoostedTreesContributions",
               "TfxBoostedTreesTrainStep"}


def _random_ensemble(rng, trees, depth, features, buckets, dim):
    nodes = 2 ** (depth + 1) - 1
    split = np.full((trees, nodes), -1, np.int32)
    threshold = np.zeros((trees, nodes), np.int32)
    value = rng.normal(size=(trees, nodes, dim)).astype(np.float32)
    for t in range(trees):
        frontier = [0]
        while frontier:
            node = frontier.pop()
            if 2 * node + 2 < nodes and rng.random() < 0.7:
                split[t, node] = rng.integers(features)
                threshold[t, node] = rng.integers(buckets - 1)
                frontier += [2 * node + 1, 2 * node + 2]
    value[:, 0] = 0.0
    return split, threshold, value


def _reference_walk(row, split, threshold, t):
    node, path = 0, []
    while split[t, node] >= 0:
        child = 2 * node + 1 if row[split[t, node]] <= threshold[t, node] else 2 * node + 2
        path.append((node, child))
        node = child
    return node, path


@pytest.mark.parametrize("dim", [1, 3])
def test_predict_and_contributions_match_reference(dim):
    rng = np.random.default_rng(dim)
    split, threshold, value = _random_ensemble(rng, 4, 3, 5, 6, dim)
    bias = rng.normal(size=dim).astype(np.float32)
    x = rng.integers(0, 6, size=(9, 5)).astype(np.int32)
    ops = [prediction.TfxBoostedTreesPredict(x, split, threshold, value, bias),
           prediction.TfxBoostedTreesContributions(x, split, threshold, value, bias)]
    if dim == 1:
        ops.append(prediction.TfxBoostedTreesContributions(x, split, threshold, value, bias,
                                                           link="sigmoid"))
    with tf.Session() as sess:
        out = sess.run(ops)
    logits, (bias_out, contrib) = out[0], out[1]
    want = np.tile(bias, (9, 1)).astype(np.float64)
    want_contrib = np.zeros((9, 5, dim))
    for i, row in enumerate(x):
        for t in range(4):
            leaf, path = _reference_walk(row, split, threshold, t)
            want[i] += value[t, leaf]
            for parent, child in path:
                want_contrib[i, split[t, parent]] += value[t, child] - value[t, parent]
    np.testing.assert_allclose(logits, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(contrib, want_contrib, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(bias_out + contrib.sum(axis=1), logits, rtol=1e-5, atol=1e-5)
    if dim == 1:
        sig_bias, sig_contrib = out[2]
        probs = 1 / (1 + np.exp(-logits))
        np.testing.assert_allclose(sig_bias, 1 / (1 + np.exp(-bias)) * np.ones((9, 1)),
                                   rtol=1e-6)
        np.testing.assert_allclose(sig_bias + sig_contrib.sum(axis=1), probs, atol=1e-5)


def test_predict_rejects_a_feature_the_input_lacks():
    split = np.array([[3, -1, -1]], np.int32)
    op = prediction.TfxBoostedTreesPredict(
        np.zeros((2, 2), np.int32), split, np.zeros_like(split),
        np.zeros((1, 3, 1), np.float32), np.zeros(1, np.float32))
    with tf.Session() as sess, pytest.raises(errors.InvalidArgumentError, match="feature 3"):
        sess.run(op)


def test_best_split_matches_brute_force():
    rng = np.random.default_rng(0)
    features, buckets, dim, l1, l2 = 3, 5, 2, 0.05, 0.3
    grad = rng.normal(size=(features, buckets, dim))
    hess = rng.uniform(0.1, 1.0, size=(features, buckets, dim))
    count = rng.integers(0, 3, size=(features, buckets)).astype(float)
    # every feature partitions the same examples: equal totals
    grad[1:] = grad[0].sum(0) / buckets
    hess[1:] = hess[0].sum(0) / buckets
    count[1:] = count[0].sum() / buckets
    sizes = np.array([5, 4, 2], np.int32)

    def shrunk_score(g, h):
        s = np.sign(g) * np.maximum(np.abs(g) - l1, 0)
        return float((s * s / (h + l2)).sum())

    best = None
    for f in range(features):
        for t in range(sizes[f] - 1):
            gl, hl, cl = grad[f, :t + 1].sum(0), hess[f, :t + 1].sum(0), count[f, :t + 1].sum()
            gr, hr = grad[f].sum(0) - gl, hess[f].sum(0) - hl
            cr = count[f].sum() - cl
            if cl <= 0 or cr <= 0 or hl.sum() < 0.2 or hr.sum() < 0.2:
                continue
            gain = shrunk_score(gl, hl) + shrunk_score(gr, hr) - \
                shrunk_score(grad[f].sum(0), hess[f].sum(0))
            if best is None or gain > best[0]:
                best = (gain, f, t)
    found = growing.best_split(grad, hess, count, sizes, l1, l2, 0.2)
    assert found[1:3] == best[1:3]
    np.testing.assert_allclose(found[0], best[0], rtol=1e-10)


def test_best_split_none_when_no_side_can_be_empty_free():
    grad = np.zeros((1, 3, 1))
    count = np.array([[0.0, 4.0, 0.0]])
    assert growing.best_split(grad, np.ones((1, 3, 1)), count, np.array([3]), 0, 0, 0) is None


def test_prune_removes_negative_gain_splits_bottom_up():
    split = np.array([0, 1, -1, -1, -1, -1, -1], np.int32)
    gains = np.array([5.0, -1.0, 0, 0, 0, 0, 0], np.float32)
    value = np.arange(7, dtype=np.float32)[:, None]
    growing.prune(split, value, gains)
    np.testing.assert_array_equal(split, [0, -1, -1, -1, -1, -1, -1])
    gains[0] = -2.0
    growing.prune(split, value, gains)
    assert (split == -1).all()


def _train_graph(max_depth, n_trees, features, buckets, dim, **attrs):
    nodes = 2 ** (max_depth + 1) - 1
    layer = 2 ** (max_depth - 1)

    def var(name, shape, dtype, value):
        return tf.Variable(np.full(shape, value, dtype), name=name)
    state = [var("sf", (n_trees, nodes), np.int32, -1), var("th", (n_trees, nodes), np.int32, 0),
             var("nv", (n_trees, nodes, dim), np.float32, 0),
             var("g", (n_trees, nodes), np.float32, 0), var("b", (dim,), np.float32, 0),
             var("s", (4,), np.int64, 0),
             var("ga", (layer, features, buckets, dim), np.float32, 0),
             var("ha", (layer, features, buckets, dim), np.float32, 0),
             var("ca", (layer, features, buckets), np.float32, 0),
             var("ba", (3, dim), np.float32, 0)]
    x = tf.placeholder(tf.int32, [None, features])
    g = tf.placeholder(tf.float32, [None, dim])
    h = tf.placeholder(tf.float32, [None, dim])
    step = growing.TfxBoostedTreesTrainStep(
        *[v._ref() for v in state], x, g, h, np.full(features, buckets, np.int32),
        max_depth=max_depth, n_trees=n_trees, **attrs)
    return state, (x, g, h), step


def test_train_step_grows_layers_and_finishes():
    # Squared loss, learning rate 1, no regularization: each layer moves the examples of a
    # node to their mean. Targets 1, 2, 4, 8 in buckets 0..3: the root splits {0,1,2} | {3}
    # (gain 49/3 + 64 beats 4.5 + 72 and 1 + 196/3), the left child {0,1} | {2}, so tree 0
    # predicts 1.5, 1.5, 4, 8; tree 1's two layers ({0} | {1,2,3}, then {1} | {2,3}) fit
    # the residuals -0.5, 0.5, 0, 0 exactly.
    with tf.Graph().as_default(), tf.Session() as sess:
        state, (x, g, h), step = _train_graph(2, 2, 1, 4, 1, n_batches_per_layer=1,
                                              learning_rate=1.0)
        logits = prediction.TfxBoostedTreesPredict(x, *[v.value() for v in state[:3]],
                                                   state[4].value())
        sess.run(tf.global_variables_initializer())
        xs = np.array([[0], [1], [2], [3]], np.int32)
        ys = np.array([[1.0], [2.0], [4.0], [8.0]], np.float32)

        def train_once(batch=xs):
            f = sess.run(logits, {x: xs})
            return sess.run(step, {x: batch, g: 2 * (f - ys), h: np.full_like(ys, 2.0)})

        assert [bool(train_once().finished) for _ in range(2)] == [False, False]
        split, st = sess.run([state[0], state[5]])
        assert st[0] == 1 and split[0, 0] == 0 and list(split[0, 1:3]) == [0, -1]
        np.testing.assert_allclose(sess.run(logits, {x: xs})[:, 0], [1.5, 1.5, 4, 8])
        out = train_once()
        assert not out.finished and out.trained
        out = train_once()  # tree 1 reaches max_depth: the ensemble is done
        assert out.finished and out.trained
        np.testing.assert_allclose(sess.run(logits, {x: xs})[:, 0], [1, 2, 4, 8], rtol=1e-6)
        assert sess.run(state[5])[0] == 2
        out = train_once()
        assert out.finished and not out.trained
        sess.run(state[5].assign([0, 0, 0, 0]))
        with pytest.raises(errors.InvalidArgumentError, match="bucket id"):
            train_once(xs + 1)


def test_train_step_rejects_unknown_pruning_mode():
    with tf.Graph().as_default(), tf.Session() as sess:
        _, (x, g, h), step = _train_graph(1, 1, 1, 2, 1, n_batches_per_layer=1,
                                          learning_rate=1.0, pruning_mode="later")
        sess.run(tf.global_variables_initializer())
        with pytest.raises(errors.InvalidArgumentError, match="pruning_mode"):
            sess.run(step, {x: [[0]], g: [[1.0]], h: [[1.0]]})


def test_leaf_weight_and_score_with_l1_l2():
    g = np.array([[0.5, -0.05, -2.0]])
    h = np.array([[1.0, 1.0, 0.0]])
    # shrink by l1 = 0.1: 0.4, 0 (|g| <= l1), -1.9; denominators h + l2 = 1.5, 1.5, 0.5
    np.testing.assert_allclose(growing.leaf_weight(g, h, 0.1, 0.5), [[-0.4 / 1.5, 0, 3.8]])
    np.testing.assert_allclose(growing.score(g, h, 0.1, 0.5),
                               [0.16 / 1.5 + 0 + 3.61 / 0.5])
    # no regularization and no hessian: no step, no score (not a division by zero)
    np.testing.assert_allclose(growing.leaf_weight(g, h, 0.0, 0.0), [[-0.5, 0.05, 0.0]])
