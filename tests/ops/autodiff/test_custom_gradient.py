"""tf.custom_gradient in graph mode: grad_fn is used by tf.gradients, structures, variables."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from op_helpers import graph  # noqa: F401 (graph: autouse fixture)

import tensorflux as tf


def _run(fetches, feed=None, init=False):
    with tf.Session() as sess:
        if init:
            sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feed)


@tf.custom_gradient
def _log1pexp(x):
    e = tf.exp(x)

    def grad(dy):
        return dy * (1 - 1 / (1 + e))

    return tf.log(1 + e), grad


def test_grad_fn_replaces_the_gradient_and_matches_tf_names():
    x = tf.constant([1.0, 100.0])
    y = _log1pexp(x)
    assert y.name == "IdentityN:0" and y.shape.as_list() == [2]
    ops = tf.get_default_graph().get_operations()
    assert [op.type for op in ops][-2:] == ["Identity", "IdentityN"]
    assert y.op.get_attr("_gradient_op_type").startswith(b"CustomGradient-")
    dx, = tf.gradients(y, x)
    value, grad = _run([y, dx])
    np.testing.assert_allclose(value[0], np.log1p(np.e), rtol=1e-6)
    # The naive gradient exp(x)/(1+exp(x)) is nan at x=100; grad_fn gives 1.
    np.testing.assert_allclose(grad, [np.e / (1 + np.e), 1.0], rtol=1e-6)


def test_custom_gradient_matches_finite_differences():
    x = tf.placeholder(tf.float64, [3])
    y = _log1pexp(x) * tf.constant([1.0, 2.0, 3.0], tf.float64)
    with tf.Session():
        err = tf.test.compute_gradient_error(x, [3], y, [3],
                                             x_init_value=np.array([-1.0, 0.3, 2.0]))
    assert err < 1e-7


def test_grad_fn_can_differ_from_the_true_gradient():
    @tf.custom_gradient
    def clip_grad(x):
        return tf.identity(x), lambda dy: tf.clip_by_value(dy, -1.0, 1.0)

    x = tf.constant([1.0, 2.0, 3.0])
    dx, = tf.gradients(tf.reduce_sum(clip_grad(x) * [0.5, -4.0, 9.0]), x)
    np.testing.assert_allclose(_run(dx), [0.5, -1.0, 1.0])


def test_several_inputs_and_outputs_keep_their_structure():
    @tf.custom_gradient
    def two(a, b):
        def grad(dy1, dy2):
            return dy1 * 3, dy2 * 4

        return (a * 1, b * 1), grad

    @tf.custom_gradient
    def as_list(a):
        return [a * 1, a * 2], lambda dy1, dy2: dy1 + 10 * dy2

    a, b = tf.constant(2.0), tf.constant(5.0)
    r = two(a, b)
    assert isinstance(r, tuple) and len(r) == 2
    lst = as_list(a)
    assert isinstance(lst, list) and len(lst) == 2
    grads = tf.gradients(r[0] + r[1], [a, b]) + tf.gradients(lst[0] + lst[1], a)
    np.testing.assert_allclose(_run(grads), [3.0, 4.0, 11.0])
    np.testing.assert_allclose(_run(list(r) + lst), [2.0, 5.0, 2.0, 4.0])


def test_none_gradient_and_python_inputs():
    @tf.custom_gradient
    def blocked(x):
        return x * 2, lambda dy: None

    a = tf.constant(1.5)
    assert tf.gradients(blocked(a), a) == [None]
    y = _log1pexp(0.0)
    assert y.dtype == tf.float32
    np.testing.assert_allclose(_run(y), np.log(2.0), rtol=1e-6)


def test_chain_rule_through_surrounding_ops():
    x = tf.placeholder(tf.float64, [])
    y = tf.square(_log1pexp(3.0 * x))
    dx, = tf.gradients(y, x)
    value = 0.7
    sig = 1 / (1 + np.exp(-3 * value))
    expected = 2 * np.log1p(np.exp(3 * value)) * sig * 3
    np.testing.assert_allclose(_run(dx, {x: value}), expected, rtol=1e-12)


def test_variables_get_gradients_from_grad_fn():
    v = tf.get_variable("v", [], initializer=tf.constant_initializer(3.0))
    seen = []

    @tf.custom_gradient
    def scale(x):
        def grad(dy, variables=None):
            seen.append(variables)
            return dy * v, [dy * x * 10]

        return x * v, grad

    a = tf.constant(2.0)
    gv = tf.gradients(scale(a), [a, v])
    assert [var.name for var in seen[0]] == ["v:0"]
    np.testing.assert_allclose(_run(gv, init=True), [3.0, 20.0])


def test_variable_created_inside_and_trained_by_an_optimizer():
    @tf.custom_gradient
    def linear(x):
        w = tf.get_variable("w", [], initializer=tf.constant_initializer(2.0))

        def grad(dy, variables=None):
            return dy * w, [tf.reduce_sum(dy * x) * 100.0]

        return x * w, grad

    x = tf.constant([1.0, 2.0])
    loss = tf.reduce_sum(linear(x))
    train = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
    w = [v for v in tf.global_variables() if v.op.name == "w"][0]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        np.testing.assert_allclose(sess.run(w), 2.0 - 0.01 * 300.0, rtol=1e-6)


def test_variable_passed_as_input_gets_the_input_gradient():
    v = tf.get_variable("u", [2], initializer=tf.constant_initializer(1.0))
    loss = tf.reduce_sum(_log1pexp(v))
    dv, = tf.gradients(loss, v)
    np.testing.assert_allclose(_run(dv, init=True), np.full(2, np.e / (1 + np.e)), rtol=1e-6)


def test_errors():
    v = tf.get_variable("v", [], initializer=tf.constant_initializer(3.0))

    @tf.custom_gradient
    def uses_var(x):
        return x * v, lambda dy: dy

    with pytest.raises(TypeError, match="must accept keyword argument 'variables'"):
        uses_var(tf.constant(1.0))

    @tf.custom_gradient
    def too_few(a, b):
        return a + b, lambda dy: dy

    a, b = tf.constant(1.0), tf.constant(2.0)
    with pytest.raises(ValueError, match="expected to return 2 gradients but returned 1"):
        tf.gradients(too_few(a, b), [a, b])

    @tf.custom_gradient
    def bad_var_grads(x):
        return x * v, lambda dy, variables=None: (dy, [])

    with pytest.raises(ValueError, match="gradient for each variable"):
        tf.gradients(bad_var_grads(a), [a])
    with pytest.raises(ValueError, match="keywords arguments"):
        _log1pexp(x=a)


def test_decorator_forms():
    assert tf.custom_gradient()(_log1pexp.__wrapped__).__name__ == "_log1pexp"

    def square(x):
        return x * x, lambda dy: dy * 2 * x

    fn = tf.custom_gradient(square)
    a = tf.constant(3.0)
    np.testing.assert_allclose(_run(tf.gradients(fn(a), a)), [6.0])


@settings(max_examples=10, deadline=None)
@given(st.lists(st.floats(-30, 30), min_size=1, max_size=5))
def test_log1pexp_gradient_is_the_sigmoid(values):
    with tf.Graph().as_default():
        x = tf.constant(np.asarray(values, np.float64))
        dx, = tf.gradients(_log1pexp(x), x)
        result = _run(dx)
    np.testing.assert_allclose(result, 1 / (1 + np.exp(-np.asarray(values))), rtol=1e-9,
                               atol=1e-14)


def test_inside_a_while_loop():
    @tf.custom_gradient
    def double(x):
        return x * 2.0, lambda dy: dy * 5.0

    x0 = tf.constant(1.0)
    _, r = tf.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, double(x)),
                         [tf.constant(0), x0])
    value, grad = _run([r, tf.gradients(r, x0)[0]])
    assert value == 8.0 and grad == 125.0


def test_decorating_a_method_binds_self():
    class Model:
        factor = 3.0

        @tf.custom_gradient
        def scale(self, x):
            return x * self.factor, lambda dy: dy * 7.0

    a = tf.constant(2.0)
    y = Model().scale(a)
    assert Model.scale.__name__ == "scale"
    np.testing.assert_allclose(_run([y, tf.gradients(y, a)[0]]), [6.0, 7.0])
