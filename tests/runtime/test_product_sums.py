"""merge_product_sums (runtime/remapper.py, rule 6 of rewrites): sums of products become one
product over concatenated operands; values equal the unmerged graph up to rounding."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorflux as tf
from tensorflux.runtime import rewrites, subgraph

L0 = tf.OptimizerOptions(opt_level=-1)  # rule 6 off: the reference graph


@pytest.fixture(autouse=True)
def graph():
    with tf.Graph().as_default() as g:
        yield g


def _optimized(fetches, feeds=()):
    nodes, points, _ = subgraph.build_step_graph(tf.get_default_graph(), list(feeds),
                                                 list(fetches), [])
    return rewrites.optimize(nodes, points)


def _ops(fetches, feeds=()):
    return sorted(node.op for node in _optimized(fetches, feeds))


def _run(fetches, feed=None, options=None):
    config = tf.ConfigProto(graph_options=tf.GraphOptions(optimizer_options=options)) \
        if options is not None else None
    with tf.Session(config=config) as sess:
        return sess.run(fetches, feed)


def _close(a, b):
    np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-5 * max(1.0, float(np.abs(b).max())))


@settings(max_examples=8, deadline=None)
@given(st.integers(2, 5), st.integers(1, 4), st.integers(1, 5), st.integers(1, 5),
       st.booleans(), st.booleans())
def test_sum_of_products_is_one_product_with_equal_values(n, k, m, cols, ta, tb):
    rng = np.random.default_rng(n * 100 + k * 10 + m)
    with tf.Graph().as_default():
        aval = [rng.standard_normal((k + i, m) if ta else (m, k + i)).astype(np.float32)
                for i in range(n)]
        bval = [rng.standard_normal((cols, k + i) if tb else (k + i, cols)).astype(np.float32)
                for i in range(n)]
        a = [tf.placeholder(tf.float32, v.shape) for v in aval]
        b = [tf.placeholder(tf.float32, v.shape) for v in bval]
        total = tf.add_n([tf.matmul(x, y, transpose_a=ta, transpose_b=tb)
                          for x, y in zip(a, b)])
        feed = dict(zip(a + b, aval + bval))
        ops = _ops([total], a + b)
        assert ops.count("MatMul") == 1 and "AddN" not in ops and ops.count("ConcatV2") == 2
        want = sum((x.T if ta else x) @ (y.T if tb else y) for x, y in zip(aval, bval))
        merged, plain = _run(total, feed), _run(total, feed, L0)
        _close(merged, want)
        _close(merged, plain)


def test_lstm_kernel_and_bias_gradients_merge_and_match():
    rng = np.random.default_rng(3)
    words = tf.placeholder(tf.float32, [2, 3, 2])
    cell = tf.nn.rnn_cell.BasicLSTMCell(4)
    outputs, _ = tf.nn.static_rnn(cell, tf.unstack(words, axis=1), dtype=tf.float32)
    loss = tf.reduce_sum(tf.square(tf.concat(outputs, 1)))
    grads = tf.gradients(loss, cell.trainable_variables)
    ops = {node.name: node.op for node in _optimized(grads, [words])}
    # the kernel's and the bias's 3-term sums: one product, one bias gradient
    assert [ops[g.op.name] for g in grads] == ["MatMul", "BiasAddGrad"]
    feed = {words: rng.standard_normal((2, 3, 2)).astype(np.float32)}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        merged = sess.run(grads, feed)
        values = sess.run(cell.trainable_variables)
    config = tf.ConfigProto(graph_options=tf.GraphOptions(optimizer_options=L0))
    with tf.Session(config=config) as sess:
        for var, value in zip(cell.trainable_variables, values):
            var.load(value, sess)
        plain = sess.run(grads, feed)
    for got, want in zip(merged, plain):
        _close(got, want)


def test_nan_and_inf_products_propagate():
    a = tf.constant([[1.0, np.nan]], tf.float32)
    b = tf.constant([[np.inf], [1.0]], tf.float32)
    c = tf.placeholder(tf.float32, [1, 1])
    total = tf.add_n([tf.matmul(a, b), tf.matmul(c, c)])
    assert np.isnan(_run(total, {c: [[2.0]]})[0, 0])
    assert np.isnan(_run(total, {c: [[2.0]]}, L0)[0, 0])


def test_shared_fetched_or_mixed_sums_stay():
    x = tf.placeholder(tf.float32, [2, 2])
    p, q = tf.matmul(x, x), tf.matmul(x, x, transpose_a=True)
    mixed = tf.add_n([p, q])  # different transpose flags
    assert "AddN" in _ops([mixed], [x])
    r = tf.matmul(x, x, transpose_b=True)
    s = tf.matmul(x, tf.ones([2, 2]), transpose_b=True)
    shared = tf.add_n([r, s])
    assert "AddN" in _ops([shared, r], [x])  # r is fetched too
    plain = tf.add_n([x, tf.matmul(x, x)])
    assert "AddN" in _ops([plain], [x])
    feed = {x: np.arange(4, dtype=np.float32).reshape(2, 2)}
    got = _run([mixed, shared, plain], feed)
    v = feed[x]
    _close(got[0], v @ v + v.T @ v)
    _close(got[1], v @ v.T + v @ np.ones((2, 2)).T)
    _close(got[2], v + v @ v)


def test_control_dependencies_of_the_products_are_kept():
    x = tf.placeholder(tf.float32, [2, 2])
    v = tf.Variable(np.zeros((2, 2), np.float32))
    bump = tf.assign_add(v, tf.ones([2, 2]))
    with tf.control_dependencies([bump]):
        p = tf.matmul(x, x)
    total = tf.add_n([p, tf.matmul(x, x)])
    with tf.control_dependencies([total]):
        read = tf.identity(v.read_value())
    with tf.Session() as sess:
        sess.run(v.initializer)
        got, after = sess.run([total, read], {x: np.eye(2, dtype=np.float32)})
    _close(got, 2 * np.eye(2))
    _close(after, np.ones((2, 2)))


def test_float64_and_integer_sums():
    x = tf.placeholder(tf.float64, [3, 2])
    y = tf.placeholder(tf.float64, [1, 2])
    total = tf.add_n([tf.matmul(x, x, transpose_a=True), tf.matmul(y, y, transpose_a=True)])
    assert "AddN" not in _ops([total], [x, y])
    value, row = np.arange(6.0).reshape(3, 2), np.array([[1e-3, 7.0]])
    _close(_run(total, {x: value, y: row}), value.T @ value + row.T @ row)
    assert _run(total, {x: value, y: row}).dtype == np.float64
    i = tf.placeholder(tf.int32, [2, 2])
    ints = tf.add_n([tf.matmul(i, i), tf.matmul(i, i, transpose_b=True)])
    assert "AddN" in _ops([ints], [i])  # integer sums are left alone
    np.testing.assert_array_equal(_run(ints, {i: np.eye(2, dtype=np.int32)}),
                                  2 * np.eye(2, dtype=np.int32))
    ints = tf.add_n([tf.matmul(i, i), tf.matmul(i, i + 1)])
    assert "AddN" in _ops([ints], [i])
