"""tf.make_template: shared variables across calls, TF1 scope and op naming."""

import numpy as np
import pytest

import tensorflux as tf


@pytest.fixture(autouse=True)
def graph():
    with tf.Graph().as_default() as g:
        yield g


def _scale(x, factor=1.0):
    w = tf.get_variable("w", [2], initializer=tf.constant_initializer([1.0, 3.0]))
    return tf.multiply(x * w, factor, name="out")


def _names(variables):
    return [v.name for v in variables]


def test_first_call_creates_later_calls_reuse():
    t = tf.make_template("tmpl", _scale, factor=2.0)
    assert t.variable_scope is None and t.variable_scope_name is None and t.variables == []
    a = t(tf.constant([1.0, 2.0]))
    b = t(tf.constant([3.0, 4.0]))
    assert (a.name, b.name) == ("tmpl/out:0", "tmpl_1/out:0")
    assert _names(tf.global_variables()) == ["tmpl/w:0"]
    assert t.name == "tmpl" and t.variable_scope.name == "tmpl"
    assert t.variable_scope_name == "tmpl/"
    assert _names(t.variables) == _names(t.trainable_variables) == ["tmpl/w:0"]
    assert t.non_trainable_variables == [] and t.local_variables == []
    assert t.func.keywords == {"factor": 2.0}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        va, vb = sess.run([a, b])
    np.testing.assert_allclose(va, [2.0, 12.0])
    np.testing.assert_allclose(vb, [6.0, 24.0])


def test_two_templates_get_unique_scopes():
    t1 = tf.make_template("tmpl", _scale)
    t2 = tf.make_template("tmpl", _scale)
    t1(1.0)
    c = t2(1.0)
    assert c.name == "tmpl_1/out:0" and t2.variable_scope_name == "tmpl_1/"
    assert _names(tf.global_variables()) == ["tmpl/w:0", "tmpl_1/w:0"]
    assert _names(t2.variables) == ["tmpl_1/w:0"]


def test_create_scope_now_in_an_outer_scope():
    with tf.variable_scope("outer"):
        t = tf.make_template("tmpl", _scale, create_scope_now_=True)
    assert t.variable_scope_name == "outer/tmpl/"
    c = t(1.0)
    d = t(1.0)
    with tf.variable_scope("other"):
        e = t(1.0)
    assert (c.name, d.name, e.name) == ("tmpl/out:0", "tmpl_1/out:0", "other/tmpl/out:0")
    assert _names(tf.global_variables()) == ["outer/tmpl/w:0"]


def test_first_call_inside_a_scope_then_outside():
    with tf.variable_scope("o3"):
        t = tf.make_template("tm", _scale)
        assert t(1.0).name == "o3/tm/out:0"
    assert t(1.0).name == "tm/out:0"
    assert t.variable_scope_name == "o3/tm/"
    assert _names(tf.global_variables()) == ["o3/tm/w:0"]


def test_unique_name_is_used_as_given():
    t = tf.make_template("tmpl", _scale, unique_name_="custom")
    assert (t(1.0).name, t(1.0).name) == ("custom/out:0", "custom_1/out:0")
    assert _names(tf.global_variables()) == ["custom/w:0"]


def test_custom_getter_sees_every_get_variable():
    seen = []

    def getter(getter, name, *args, **kwargs):
        seen.append(name)
        return getter(name, *args, **kwargs) * 10.0

    t = tf.make_template("cg", _scale, custom_getter_=getter)
    y1 = t(tf.constant([1.0, 1.0]))
    y2 = t(tf.constant([2.0, 2.0]))
    assert seen == ["cg/w", "cg/w"]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_allclose(sess.run([y1, y2]), [[10.0, 30.0], [20.0, 60.0]])


def test_tf_variable_on_a_later_call_is_an_error():
    t = tf.make_template("bad", lambda x: x * tf.Variable(1.0))
    t(1.0)
    with pytest.raises(ValueError, match="Trainable variable created when calling a template "
                                         "after the first time"):
        t(1.0)
    with pytest.raises(ValueError, match="name cannot be None"):
        tf.make_template(None, _scale)


def test_training_updates_the_shared_variable_from_both_calls():
    t = tf.make_template("lin", _scale)
    loss = tf.reduce_sum(t(tf.constant([1.0, 0.0]))) + tf.reduce_sum(t(tf.constant([0.0, 2.0])))
    train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        np.testing.assert_allclose(sess.run(t.variables[0]), [1.0 - 0.5, 3.0 - 1.0])


def test_non_trainable_and_local_variables():
    def body(x):
        counter = tf.get_variable("count", [], trainable=False,
                                  initializer=tf.zeros_initializer())
        local = tf.get_local_variable("acc", [], initializer=tf.zeros_initializer())
        return x + counter + local

    t = tf.make_template("stats", body)
    t(1.0)
    t(2.0)
    assert _names(t.non_trainable_variables) == ["stats/count:0"]
    assert _names(t.local_variables) == ["stats/acc:0"]
    assert t.trainable_variables == []
