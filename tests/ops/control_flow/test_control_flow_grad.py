"""Gradients through control flow, checked against finite differences in float64: loops with
several variables and invariants, nested loops, conds inside loops and loops inside conds,
overlapping iterations, sparse gradients, TensorArrays and map_fn inside loops."""

import numpy as np
import pytest

import tensorflux as tf


@pytest.fixture(autouse=True)
def graph():
    g = tf.Graph()
    with g.as_default():
        yield g


def _check(y, xs, values, feed=None, rtol=1e-6, atol=1e-8):
    """Compares tf.gradients of sum(y) with central differences for every element of xs."""
    loss = tf.reduce_sum(y)
    grads = tf.gradients(loss, xs)
    feed = dict(feed or {})
    feed.update(zip(xs, values))
    with tf.Session() as sess:
        analytic = sess.run([g if g is not None else tf.zeros_like(x)
                             for g, x in zip(grads, xs)], feed)
        for k, (x, value) in enumerate(zip(xs, values)):
            value = np.array(value, np.float64)
            numeric = np.zeros(value.shape)
            for index in np.ndindex(value.shape):
                up, down = value.copy(), value.copy()
                up[index] += 1e-6
                down[index] -= 1e-6
                numeric[index] = (sess.run(loss, {**feed, x: up}) -
                                  sess.run(loss, {**feed, x: down})) / 2e-6
            np.testing.assert_allclose(analytic[k], numeric, rtol=rtol, atol=atol,
                                       err_msg=f"gradient of input {k}")
    return analytic


def test_several_loop_variables_and_invariants():
    x = tf.placeholder(tf.float64, [2])
    y = tf.placeholder(tf.float64, [2])
    w = tf.placeholder(tf.float64, [2, 2])

    def body(i, a, b, c):
        a2 = tf.tanh(tf.reshape(tf.matmul(tf.reshape(a, [1, 2]), w), [2]) + b)
        return i + 1, a2, b * 0.9 + tf.sin(a), c + a2 * b

    _, a, b, c = tf.while_loop(lambda i, a, b, c: i < 5, body,
                               [0, x, y, tf.zeros([2], tf.float64)])
    _check(a * 2.0 + b + c * c, [x, y, w],
           [np.array([0.2, -0.5]), np.array([0.3, 0.1]), np.array([[0.5, -0.2], [0.4, 0.9]])])


def test_data_dependent_iteration_count_and_unconnected_variables():
    x = tf.placeholder(tf.float64, [])
    i, v, unused = tf.while_loop(lambda i, v, u: v < 50.0,
                                 lambda i, v, u: (i + 1, v * x, u + 1.0),
                                 [0, tf.constant(1.0, tf.float64), tf.constant(0.0, tf.float64)])
    grads = _check(v, [x], [np.array(1.7)])
    assert grads[0] > 0
    assert tf.gradients(unused, x)[0] is None


def test_nested_loops_gradient():
    x = tf.placeholder(tf.float64, [2])

    def inner(v, j_limit):
        return tf.while_loop(lambda j, u: j < j_limit, lambda j, u: (j + 1, tf.sin(u) * x + u),
                             [0, v])[1]

    def outer_body(i, v):
        return i + 1, inner(v, i + 1) * 0.5

    _, y = tf.while_loop(lambda i, v: i < 3, outer_body, [0, x])
    _check(y, [x], [np.array([0.4, -0.7])])


def test_three_deep_nested_loops_gradient():
    x = tf.placeholder(tf.float64, [])

    def level(depth, v):
        if depth == 0:
            return v * x + 0.1
        return tf.while_loop(lambda k, u: k < 2, lambda k, u: (k + 1, level(depth - 1, u)),
                             [0, v])[1]

    _check(level(3, x), [x], [np.array(0.9)])


def test_cond_inside_while_gradient():
    x = tf.placeholder(tf.float64, [3])

    def body(i, v):
        even = tf.equal(i % 2, 0)
        v = tf.cond(even, lambda: v * v * 0.5 + x, lambda: tf.sin(v) * x)
        return i + 1, v

    _, y = tf.while_loop(lambda i, v: i < 5, body, [0, x])
    _check(y, [x], [np.array([0.3, -0.6, 1.1])])


def test_cond_only_one_branch_uses_the_loop_variable():
    x = tf.placeholder(tf.float64, [])

    def body(i, v):
        return i + 1, tf.cond(i < 2, lambda: v * 3.0, lambda: tf.constant(1.0, tf.float64)) + v

    _, y = tf.while_loop(lambda i, v: i < 4, body, [0, x])
    grads = _check(y, [x], [np.array(0.5)])
    np.testing.assert_allclose(grads[0], 16.0)


def test_while_inside_cond_gradient_taken_and_not_taken():
    x = tf.placeholder(tf.float64, [2])
    p = tf.placeholder(tf.bool, [])
    y = tf.cond(p, lambda: tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * x),
                                         [0, x])[1],
                lambda: x * 2.0)
    _check(y, [x], [np.array([0.5, -1.5])], feed={p: True})
    grads = _check(y, [x], [np.array([0.5, -1.5])], feed={p: False})
    np.testing.assert_allclose(grads[0], [2.0, 2.0])


@pytest.mark.parametrize("parallel_iterations", [1, 10])
def test_overlapping_iterations_pop_values_in_order(parallel_iterations):
    x = tf.placeholder(tf.float64, [4])

    def body(i, acc, v):
        # `step` depends only on the counter and an invariant, so later iterations can compute
        # (and push) it before earlier ones have finished; the stacks must stay ordered.
        step = tf.sin(tf.cast(i, tf.float64) * x)
        deep = v
        for _ in range(6):
            deep = tf.tanh(deep * 0.9 + 0.1)
        return i + 1, acc + step * step * deep, deep

    _, acc, v = tf.while_loop(lambda i, a, v: i < 6, body,
                              [0, tf.zeros([4], tf.float64), x],
                              parallel_iterations=parallel_iterations)
    _check(acc + v, [x], [np.array([0.3, -0.2, 0.8, 1.2])])


def test_back_prop_false_and_maximum_iterations():
    x = tf.placeholder(tf.float64, [])
    frozen = tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * x), [0, x],
                           back_prop=False)[1]
    assert tf.gradients(frozen, x)[0] is None
    capped = tf.while_loop(lambda v: v < 1e9, lambda v: v * x, [x], maximum_iterations=4)
    grads = _check(capped, [x], [np.array(1.3)])
    np.testing.assert_allclose(grads[0], 5 * 1.3 ** 4)


def test_two_gradient_calls_on_one_loop():
    x = tf.placeholder(tf.float64, [])
    y = tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * v), [0, x])[1]
    first = tf.gradients(y, x)[0]
    second = tf.gradients(y * 2.0, x)[0]
    with tf.Session() as sess:
        a, b, c = sess.run([first, second, first], {x: 1.1})
    np.testing.assert_allclose([a, b], [8 * 1.1 ** 7, 16 * 1.1 ** 7])


def test_sparse_gradient_of_an_invariant_inside_a_loop():
    table = tf.placeholder(tf.float64, [4, 2])
    ids = tf.constant([0, 2])

    def body(i, acc):
        return i + 1, acc + tf.gather(table, ids) * tf.cast(i + 1, tf.float64)

    _, acc = tf.while_loop(lambda i, a: i < 3, body, [0, tf.zeros([2, 2], tf.float64)])
    grads = _check(acc * acc, [table], [np.arange(8.0).reshape(4, 2) / 4])
    assert np.all(grads[0][[1, 3]] == 0)


def test_map_fn_and_tensor_arrays_inside_a_loop():
    x = tf.placeholder(tf.float64, [3])

    def body(i, v):
        return i + 1, tf.map_fn(lambda t: t * tf.cos(t), v) + x

    _, y = tf.while_loop(lambda i, v: i < 2, body, [0, x])
    _check(y, [x], [np.array([0.2, -0.4, 0.9])])


def test_dynamic_rnn_gradient_with_tensor_array_inputs():
    x = tf.placeholder(tf.float64, [2, 3, 2])
    w = tf.placeholder(tf.float64, [4, 2])

    class Cell:
        state_size = 2
        output_size = 2

        def zero_state(self, batch, dtype):
            return tf.zeros([2, 2], dtype)

        def __call__(self, inputs, state):
            new = tf.tanh(tf.matmul(tf.concat([inputs, state], 1), w))
            return new, new

    out, state = tf.nn.dynamic_rnn(Cell(), x, sequence_length=[3, 1], dtype=tf.float64)
    _check(tf.reduce_sum(out, 1) + state, [x, w],
           [np.linspace(-1, 1, 12).reshape(2, 3, 2), np.linspace(-0.5, 0.7, 8).reshape(4, 2)])


def test_gradients_computed_inside_a_loop_body():
    def body(i, v):
        return i + 1, v - 0.1 * tf.gradients(v * v, v)[0]

    _, v = tf.while_loop(lambda i, v: i < 3, body, [0, tf.constant(1.0, tf.float64)])
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(v), 0.8 ** 3)


def test_gradient_inside_a_loop_body_with_respect_to_an_outer_tensor():
    w = tf.constant(3.0, tf.float64)

    def body(i, acc):
        local = tf.gradients(w * w * tf.cast(i, tf.float64), w)[0]  # 2 w i, per iteration
        return i + 1, acc + local

    _, acc = tf.while_loop(lambda i, a: i < 4, body, [0, tf.constant(0.0, tf.float64)])
    with tf.Session() as sess:
        assert sess.run(acc) == 2 * 3.0 * (0 + 1 + 2 + 3)


def test_gradient_of_a_value_inside_a_loop_from_outside_is_an_error():
    x = tf.placeholder(tf.float64, [])
    inside = []

    def body(i, v):
        inside.append(v * x)
        return i + 1, inside[-1]

    tf.while_loop(lambda i, v: i < 3, body, [0, x])
    with pytest.raises(ValueError, match="inside while loop"):
        tf.gradients(inside[0], x)


def test_unused_loop_invariant_gets_a_zero_gradient():
    # TF differentiates a loop as a whole: a trainable invariant whose outputs are cut off by
    # stop_gradient still gets a gradient (zeros), so it can be fetched with the others.
    a = tf.Variable(1.5, name="a")
    b = tf.Variable(-2.0, name="b")
    first, second = tf.scan(lambda acc, e: (acc[0] + a * e, b * e), tf.constant([1.0, 2.0, 4.0]),
                            initializer=(0.0, 0.0))
    loss = tf.reduce_sum(first) + tf.reduce_sum(tf.stop_gradient(second))
    ga, gb = tf.gradients(loss, [a, b])
    assert gb is not None
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got_a, got_b = sess.run([ga, gb])
    # sum over t of cumsum(a * e)[t] = a * (1*3 + 2*2 + 4*1)
    assert got_a == pytest.approx(3 + 4 + 4)
    assert got_b == 0.0


def test_colocated_loop_gradients_sit_with_their_forward_ops_and_stacks_with_their_values():
    graph = tf.Graph()
    with graph.as_default():
        v = tf.constant(2.0, name="v")

        def body(x):
            with tf.device("/device:CPU:1"):
                return tf.square(x)

        out = tf.while_loop(lambda x: x < 100.0, body, [v], parallel_iterations=1)
        grad = tf.gradients(out, v, colocate_gradients_with_ops=True)[0]
    for op in graph.get_operations():
        on_cpu1 = op.device == "/device:CPU:1"
        assert on_cpu1 == ("Square" in op.name), (op.name, op.device)
    config = tf.ConfigProto(device_count={"CPU": 2})
    with tf.Session(graph=graph, config=config) as sess:
        # 2 -> 4 -> 16 -> 256: d/dv v^8 = 8 v^7
        assert sess.run([out, grad]) == [256.0, 8 * 2.0 ** 7]
