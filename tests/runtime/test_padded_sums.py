"""merge_padded_sums (runtime/padded_sums.py, rule 6 of rewrites): a sum of zero-padded pieces
tiling one axis becomes their concatenation plus zero, bit-identical to the unrewritten graph
(NaN, inf, -0.0 included); sums that do not tile one axis exactly are left alone."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorflux as tf
from tensorflux.protos.rewriter_config_pb2 import RewriterConfig
from tensorflux.runtime import rewrites, subgraph

L0 = tf.OptimizerOptions(opt_level=-1)  # remapper rules off: the reference graph
OFF = RewriterConfig(remapping=RewriterConfig.OFF)


@pytest.fixture(autouse=True)
def graph():
    with tf.Graph().as_default() as g:
        yield g


def _ops(fetches, feeds=()):
    nodes, points, _ = subgraph.build_step_graph(tf.get_default_graph(), list(feeds),
                                                 list(fetches), [])
    return sorted(node.op for node in rewrites.optimize(nodes, points))


def _run(fetches, feed=None, options=None, rewrite_options=None):
    graph_options = tf.GraphOptions(optimizer_options=options, rewrite_options=rewrite_options)
    with tf.Session(config=tf.ConfigProto(graph_options=graph_options)) as sess:
        return sess.run(fetches, feed)


def _bits(value):
    value = np.asarray(value)
    return value.reshape(-1).view(f"u{value.itemsize}")


def _specials(rng, shape, dtype):
    value = rng.standard_normal(shape).astype(dtype)
    flat = value.reshape(-1)
    for position, special in zip(rng.permutation(flat.size)[:4], [np.nan, -0.0, np.inf, -0.0]):
        flat[position] = special
    return value


@settings(max_examples=12, deadline=None)
@given(st.lists(st.integers(1, 3), min_size=2, max_size=4), st.integers(0, 1),
       st.sampled_from([np.float32, np.float64, np.float16]), st.integers(0, 2**31))
def test_tiling_pads_become_a_concat_with_equal_bits(lengths, axis, dtype, seed):
    rng = np.random.default_rng(seed)
    total = sum(lengths)
    other = 3
    values, pads, start = [], [], 0
    for length in lengths:
        shape = [length, other] if axis == 0 else [other, length]
        value = tf.placeholder(tf.as_dtype(dtype), shape)
        paddings = [[0, 0], [0, 0]]
        paddings[axis] = [start, total - start - length]
        values.append(value)
        pads.append(tf.pad(value, paddings))
        start += length
    order = rng.permutation(len(pads))  # the sum's inputs in any order
    summed = tf.add_n([pads[i] for i in order])
    feed = {v: _specials(rng, v.shape.as_list(), dtype) for v in values}
    ops = _ops([summed], values)
    assert "Pad" not in ops and "AddN" not in ops and ops.count("ConcatV2") == 1
    got = _run(summed, feed)
    for reference in (_run(summed, feed, L0), _run(summed, feed, rewrite_options=OFF)):
        assert got.dtype == reference.dtype and got.shape == reference.shape
        np.testing.assert_array_equal(_bits(got), _bits(reference))


@pytest.mark.parametrize("pieces", [
    (([3, 2], [[0, 1], [0, 0]]), ([2, 2], [[2, 0], [0, 0]])),  # overlap: row 2 twice
    (([1, 2], [[0, 3], [0, 0]]), ([2, 2], [[2, 0], [0, 0]])),  # gap: row 1 only zeros
    (([2, 2], [[0, 2], [0, 1]]), ([2, 2], [[2, 0], [1, 0]])),  # two padded axes
])
def test_sums_that_do_not_tile_stay(pieces):
    rng = np.random.default_rng(1)
    values = [tf.placeholder(tf.float32, shape) for shape, _ in pieces]
    summed = tf.add_n([tf.pad(v, p) for v, (_, p) in zip(values, pieces)])
    assert _ops([summed], values).count("Pad") == 2
    feed = {v: rng.standard_normal(shape) for v, (shape, _) in zip(values, pieces)}
    np.testing.assert_array_equal(_run(summed, feed), _run(summed, feed, L0))


def test_pad_read_elsewhere_or_unknown_shape_stays():
    x = tf.placeholder(tf.float32, [2, 3])
    y = tf.placeholder(tf.float32, [None, 3])
    first, second = tf.pad(x, [[0, 1], [0, 0]]), tf.pad(x[:1], [[2, 0], [0, 0]])
    shared = tf.add_n([first, second])
    assert "Pad" not in _ops([shared], [x])
    assert _ops([shared, first], [x]).count("Pad") == 2  # `first` is fetched too
    unknown = tf.add_n([tf.pad(y, [[0, 1], [0, 0]]), tf.pad(x[:1], [[2, 0], [0, 0]])])
    assert _ops([unknown], [x, y]).count("Pad") == 2


def test_nce_gradient_step_equals_the_unrewritten_graph():
    rng = np.random.default_rng(0)
    vocab, size, batch = 40, 6, 8
    inputs = tf.placeholder(tf.int32, [batch])
    labels = tf.placeholder(tf.int32, [batch, 1])
    tf.set_random_seed(1)
    embeddings = tf.Variable(rng.uniform(-1, 1, (vocab, size)).astype(np.float32))
    weights = tf.Variable(rng.standard_normal((vocab, size)).astype(np.float32))
    biases = tf.Variable(np.zeros(vocab, np.float32))
    loss = tf.reduce_mean(tf.nn.nce_loss(weights, biases, labels,
                                         tf.nn.embedding_lookup(embeddings, inputs), 5, vocab))
    train = tf.train.GradientDescentOptimizer(1.0).minimize(loss)
    feed = {inputs: rng.integers(0, vocab, batch), labels: rng.integers(0, vocab, (batch, 1))}
    results = []
    for rewrite_options in (None, OFF):
        graph_options = tf.GraphOptions(rewrite_options=rewrite_options)
        with tf.Session(config=tf.ConfigProto(graph_options=graph_options)) as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(3):
                sess.run(train, feed)
            results.append(sess.run([embeddings, weights, biases]))
    for got, want in zip(*results):
        np.testing.assert_array_equal(_bits(got), _bits(want))
