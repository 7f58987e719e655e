"""Reading a value from inside a while loop is only valid from that loop (or loops and conds
nested in it); elsewhere graph construction raises ValueError naming both ops, as TF does.
Values leave a loop through its results; backward loops may read forward values."""

import numpy as np
import pytest

import tensorflux as tf


@pytest.fixture(autouse=True)
def graph():
    g = tf.Graph()
    with g.as_default():
        yield g


def _leak_from_loop():
    leaked = []

    def body(i):
        if not leaked:
            leaked.append(tf.constant(3, name="inner"))
        return i + leaked[0]

    result = tf.while_loop(lambda i: i < 7, body, [0])
    return result, leaked[0]


def test_outside_any_loop():
    _, inner = _leak_from_loop()
    with pytest.raises(ValueError, match=r"Cannot use 'while/inner' as input to 'Mul' because "
                                         r"'while/inner' is in a while loop"):
        tf.multiply(inner, 2)


def test_in_a_cond_outside_the_loop():
    _, inner = _leak_from_loop()
    with pytest.raises(ValueError, match="is in a while loop"):
        tf.cond(tf.constant(True), lambda: inner + 1, lambda: tf.constant(0))


def test_in_another_loop_and_as_its_result():
    _, inner = _leak_from_loop()
    with pytest.raises(ValueError, match="because they are in different while loops"):
        tf.while_loop(lambda i: i < 5, lambda i: i + inner, [0])
    with pytest.raises(ValueError, match="NextIteration' because they are in different"):
        tf.while_loop(lambda i: i < 5, lambda i: inner, [0])


def test_valid_uses_still_build_and_run():
    result, _ = _leak_from_loop()
    doubled = result * 2  # a loop's result lives outside it

    def outer(j, acc):
        c = tf.constant(2)
        inner = tf.while_loop(lambda k: k < 3, lambda k: k + c, [0])  # nested: reads c
        value = tf.cond(j > 0, lambda: inner + c, lambda: inner)
        return j + 1, acc + value

    _, acc = tf.while_loop(lambda j, _: j < 3, outer, [0, 0])
    x = tf.constant(1.5)
    y = tf.while_loop(lambda v: v < 20.0, lambda v: v * x, [x])
    grad = tf.gradients(y, x)[0]  # the backward loop reads forward values
    with tf.Session() as sess:
        got = sess.run([doubled, acc, grad])
    assert got[0] == 18
    assert got[1] == 4 + 6 + 6
    # y = x**n with x**n >= 20 first at n = 8 (1.5**8 = 25.6): dy/dx = 8 * x**7
    np.testing.assert_allclose(got[2], 8 * 1.5 ** 7, rtol=1e-5)


def test_values_on_one_cond_branch_are_not_fetchable_and_the_result_is():
    x = tf.placeholder(tf.float32)
    out = tf.cond(tf.constant(True), lambda: x * 3.0, lambda: x - 1.0)
    graph = tf.get_default_graph()
    inside = [op for op in graph.get_operations() if op.type in ("Mul", "Sub", "Switch")]
    assert inside and not any(graph.is_fetchable(op) for op in inside)
    with tf.Session() as sess:
        assert sess.run(out, {x: 2.0}) == 6.0
        for op in inside:
            with pytest.raises(ValueError, match="has been marked as not fetchable"):
                sess.run(op.outputs[0], {x: 2.0})


def test_values_inside_a_while_loop_may_not_be_fed_but_its_inputs_may():
    c = tf.constant(2)
    i0 = tf.constant(0)
    out = tf.while_loop(lambda i: i < 10, lambda i: tf.square(c) + i, [i0])
    graph = tf.get_default_graph()
    loop_values = [t for op in graph.get_operations() if op.name.startswith("while/")
                   and op.type != "Exit" for t in op.outputs if t.dtype == tf.int32]
    assert loop_values and not any(graph.is_feedable(t) for t in loop_values)
    with tf.Session() as sess:
        assert sess.run(out, {i0: 3}) == 11  # 3, 7, 11
        assert sess.run(out, {c: 1}) == 10
        for tensor in loop_values:
            with pytest.raises(ValueError, match="may not be fed"):
                sess.run(out, {tensor: 3})


def test_a_gradient_inside_a_loop_through_a_loop_variables_initial_value_is_refused():
    x = tf.placeholder(tf.float32, shape=(), name="start")
    seed = x * 3.0

    def body(i, v):
        return i + 1, tf.gradients(v * 2.0, x)[0]

    with pytest.raises(ValueError, match="with respect to op 'start'.*initial value"):
        tf.while_loop(lambda i, v: i < 3, body, [0, seed])


def test_a_gradient_inside_a_loop_with_respect_to_the_body_input_is_computed():
    def body(i, v):
        return i + 1, v + tf.gradients(v * v, v)[0]  # v + 2 v

    out = tf.while_loop(lambda i, v: i < 3, body, [0, tf.constant(1.0)])
    with tf.Session() as sess:
        assert sess.run(out[1]) == 27.0
