"""tf.variable_creator_scope: creators see every constructor argument, nest innermost-first,
apply to tf.Variable and get_variable, and end with their block."""

import numpy as np
import pytest

import tensorflux as tf


def test_creators_nest_and_change_arguments():
    calls = []

    def not_trainable(next_creator, **kwargs):
        calls.append(("outer", kwargs["name"]))
        kwargs["trainable"] = False
        return next_creator(**kwargs)

    def renamed(next_creator, **kwargs):
        calls.append(("inner", kwargs["name"], kwargs["validate_shape"]))
        kwargs["name"] = (kwargs["name"] or "anon") + "_r"
        return next_creator(**kwargs)

    with tf.Graph().as_default():
        with tf.variable_creator_scope(not_trainable):
            with tf.variable_creator_scope(renamed):
                a = tf.Variable([1.0, 2.0], name="a")
                b = tf.get_variable("b", [3], initializer=tf.ones_initializer())
                c = tf.Variable(5.0)
            d = tf.Variable(7.0, True, name="d")  # positional trainable, then the creator's
        e = tf.Variable(9.0, name="e")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            values = sess.run([a, b, c, d, e])
        trainable = [v.name for v in tf.trainable_variables()]
    assert calls == [("inner", "a", True), ("outer", "a_r"), ("inner", "b", True),
                     ("outer", "b_r"), ("inner", None, True), ("outer", "anon_r"),
                     ("outer", "d")]
    assert [a.name, b.name, c.name, d.name] == ["a_r:0", "b_r:0", "anon_r:0", "d:0"]
    assert trainable == ["e:0"]
    np.testing.assert_array_equal(values[1], np.ones(3, np.float32))
    assert values[4] == 9.0


def test_a_creator_may_return_its_own_variable_and_errors_pass_through():
    with tf.Graph().as_default():
        shared = tf.Variable(3.0, name="shared")

        def reuse(next_creator, **kwargs):
            return shared

        with tf.variable_creator_scope(reuse):
            assert tf.Variable(1.0) is shared

        def refuse(next_creator, **kwargs):
            raise ValueError("no variables here")

        with tf.variable_creator_scope(refuse):
            with pytest.raises(ValueError, match="no variables here"):
                tf.Variable(1.0)
        assert tf.Variable(2.0).name == "Variable:0"


def test_creator_scopes_must_exit_in_order_and_the_graph_keeps_them_per_thread():
    import threading

    def creator(next_creator, **kwargs):
        return next_creator(**kwargs)

    graph = tf.get_default_graph()
    outer = tf.variable_creator_scope(creator)
    outer.__enter__()
    assert graph._variable_creator_stack == [creator]
    seen = []
    thread = threading.Thread(target=lambda: seen.append(list(graph._variable_creator_stack)))
    thread.start()
    thread.join()
    assert seen == [[]]
    with tf.variable_creator_scope(creator):
        with pytest.raises(RuntimeError, match="without proper nesting"):
            outer.__exit__(None, None, None)
    graph._variable_creator_stack = []
