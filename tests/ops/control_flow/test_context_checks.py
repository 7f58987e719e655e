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
