"""tf.get_variable and tf.variable_scope: naming, reuse rules, defaults and custom getters."""

import numpy as np
import pytest

import tensorflux as tf


@pytest.fixture
def graph():
    g = tf.Graph()
    with g.as_default():
        yield g


def test_names_follow_variable_scopes_not_name_scopes(graph):
    with tf.variable_scope("outer"):
        with tf.variable_scope("inner") as inner:
            x = tf.get_variable("x", [1])
        with tf.name_scope("ns"):
            y = tf.get_variable("y", [1])
            c = tf.constant(1, name="c")
    assert x.name == "outer/inner/x:0" and y.name == "outer/y:0" and c.name == "outer/ns/c:0"
    assert inner.name == "outer/inner" and inner.original_name_scope == "outer/inner/"
    assert tf.get_variable_scope().name == ""


def test_reopening_a_scope_gets_a_new_name_scope(graph):
    with tf.variable_scope("a"):
        v = tf.get_variable("v", [1])
        c1 = tf.constant(1.0, name="c")
    with tf.variable_scope("a", reuse=True):
        c2 = tf.constant(1.0, name="c")
        assert tf.get_variable("v", [1]) is v
    assert c1.name == "a/c:0" and c2.name == "a_1/c:0"


def test_reuse_errors(graph):
    with tf.variable_scope("a"):
        tf.get_variable("v", [1])
    with tf.variable_scope("a"):
        with pytest.raises(ValueError, match=r"Variable a/v already exists, disallowed. Did you "
                                             r"mean to set reuse=True"):
            tf.get_variable("v", [1])
    with tf.variable_scope("a", reuse=True):
        with pytest.raises(ValueError, match="Variable a/zz does not exist, or was not created "
                                             r"with tf.get_variable\(\)"):
            tf.get_variable("zz", [1])
        with pytest.raises(ValueError, match=r"specified shape \(2,\) and found shape \(1,\)"):
            tf.get_variable("v", [2])
        with pytest.raises(ValueError, match="specified dtype int32 and found dtype float32_ref"):
            tf.get_variable("v", [1], dtype=tf.int32)
    with pytest.raises(ValueError, match="reuse=True cannot be used without a name_or_scope"):
        with tf.variable_scope(None, default_name="d", reuse=True):
            pass
    with pytest.raises(TypeError, match="default_name is None"):
        tf.variable_scope(None)


def test_reuse_is_inherited_and_reuse_variables(graph):
    with tf.variable_scope("m") as scope:
        w = tf.get_variable("w", [2])
        with tf.variable_scope("sub"):
            s = tf.get_variable("s", [2])
        scope.reuse_variables()
        assert tf.get_variable("w") is w
        with tf.variable_scope("sub"):
            assert tf.get_variable_scope().reuse is True
            assert tf.get_variable("s") is s
    with tf.variable_scope("m", reuse=False):  # False means "inherit", as in TF1
        with pytest.raises(ValueError, match="already exists"):
            tf.get_variable("w", [2])


def test_auto_reuse(graph):
    with tf.variable_scope("auto", reuse=tf.AUTO_REUSE):
        q1 = tf.get_variable("q", [3], initializer=tf.ones_initializer())
    with tf.variable_scope("auto", reuse=tf.AUTO_REUSE):
        q2 = tf.get_variable("q", [3])
        fresh = tf.get_variable("fresh", [1])
    assert q1 is q2 and fresh.name == "auto/fresh:0"
    with pytest.raises(ValueError, match="reuse parameter must be"):
        tf.variable_scope("x", reuse="yes")


def test_scope_objects_and_default_names(graph):
    with tf.variable_scope("b") as b_scope:
        pass
    with tf.variable_scope("other"):
        with tf.variable_scope(b_scope):
            k = tf.get_variable("k", [2, 2])
            c = tf.constant(0, name="c")
    assert k.name == "b/k:0" and c.name == "other/b/c:0"
    with tf.variable_scope(None, default_name="dense"):
        d1 = tf.get_variable("w", [1])
    with tf.variable_scope(None, default_name="dense"):
        d2 = tf.get_variable("w", [1])
    assert (d1.name, d2.name) == ("dense/w:0", "dense_1/w:0")
    with tf.variable_scope("plain", auxiliary_name_scope=False):
        p = tf.get_variable("p", [1])
        pc = tf.constant(0, name="pc")
    assert p.name == "plain/p:0" and pc.name == "pc:0"


def test_default_initializers(graph):
    w = tf.get_variable("w", [30, 20])
    i = tf.get_variable("i", [3], dtype=tf.int32)
    b = tf.get_variable("b", [2], dtype=tf.bool)
    with pytest.raises(ValueError, match="An initializer for variable c of complex64"):
        tf.get_variable("c", [2], dtype=tf.complex64)
    assert w.initializer.inputs[1].op.name.startswith("w/Initializer/random_uniform")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        wv, iv, bv = sess.run([w, i, b])
    limit = np.sqrt(6.0 / 50)
    assert np.abs(wv).max() <= limit and np.abs(wv).max() > 0.8 * limit
    assert iv.tolist() == [0, 0, 0] and bv.tolist() == [False, False]


def test_initializer_values_tensors_and_errors(graph):
    t = tf.get_variable("t", initializer=tf.constant([[1.0, 2.0]]))
    n = tf.get_variable("n", initializer=np.arange(3.0))
    lst = tf.get_variable("lst", initializer=[1, 2])
    assert t.shape.as_list() == [1, 2] and n.dtype == tf.float64_ref
    assert lst.dtype == tf.int32_ref
    with pytest.raises(ValueError, match="If initializer is a constant, do not specify shape"):
        tf.get_variable("bad", [2], initializer=np.zeros(2))
    with pytest.raises(ValueError, match="don't match"):
        tf.get_variable("bad2", initializer=np.zeros(2), dtype=tf.float32)
    with pytest.raises(ValueError, match="must be fully defined"):
        tf.get_variable("bad3", [None, 2])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(n), [0.0, 1.0, 2.0])
        np.testing.assert_array_equal(sess.run(t), [[1.0, 2.0]])


def test_scope_initializer_dtype_and_regularizer_are_inherited(graph):
    def reg(v):
        return tf.reduce_sum(v) * 0.5

    with tf.variable_scope("s", initializer=tf.constant_initializer(3.0), dtype=tf.float64,
                           regularizer=reg):
        with tf.variable_scope("inner"):
            v = tf.get_variable("v", [2])
            u = tf.get_variable("u", [1], regularizer=tf.no_regularizer)
    assert v.dtype == tf.float64_ref and u.dtype == tf.float64_ref
    losses = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
    assert len(losses) == 1 and losses[0].op.name.startswith("s/inner/v/Regularizer/")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(v), [3.0, 3.0])
        assert sess.run(losses[0]) == 3.0


def test_custom_getters_chain(graph):
    calls = []

    def outer_getter(getter, name, *args, **kwargs):
        calls.append(("outer", name))
        return getter(name + "_o", *args, **kwargs)

    def inner_getter(getter, name, *args, **kwargs):
        calls.append(("inner", name))
        kwargs["trainable"] = False
        return getter(name, *args, **kwargs)

    with tf.variable_scope("cg", custom_getter=outer_getter):
        with tf.variable_scope("in", custom_getter=inner_getter):
            v = tf.get_variable("z", [1])
    assert calls == [("inner", "cg/in/z"), ("outer", "cg/in/z")]
    assert v.name == "cg/in/z_o:0" and v not in tf.trainable_variables()
    with pytest.raises(ValueError, match="not callable"):
        tf.get_variable("w", [1], custom_getter=3)


def test_get_local_variable_and_collections(graph):
    loc = tf.get_local_variable("loc", [2])
    glob = tf.get_variable("glob", [2], collections=["mine"], trainable=False)
    assert tf.local_variables() == [loc] and loc not in tf.trainable_variables()
    assert tf.get_collection("mine") == [glob] and tf.global_variables() == []


def test_scope_collections(graph):
    with tf.variable_scope("net") as scope:
        a = tf.get_variable("a", [1])
        b = tf.get_variable("b", [1], trainable=False)
    tf.get_variable("netz", [1])
    assert scope.global_variables() == [a, b] and scope.trainable_variables() == [a]


def test_partitioner_is_accepted(graph):
    def partitioner(shape, dtype):
        return [2, 1]

    v = tf.get_variable("p", [4, 3], partitioner=partitioner)
    assert v.shape.as_list() == [4, 3]
    with pytest.raises(ValueError, match="Partitioner must be callable"):
        tf.get_variable("q", [4, 3], partitioner=3)


def test_variable_stores_are_per_graph():
    with tf.Graph().as_default():
        a = tf.get_variable("w", [1])
    with tf.Graph().as_default():
        b = tf.get_variable("w", [1])
    assert a.graph is not b.graph and a.name == b.name == "w:0"


def test_global_step_helpers(graph):
    assert tf.train.get_global_step() is None
    step = tf.train.get_or_create_global_step()
    assert step.name == "global_step:0" and step.dtype == tf.int64_ref
    assert tf.train.get_global_step() is step and tf.train.get_or_create_global_step() is step
    assert step not in tf.trainable_variables()
    assert tf.get_collection(tf.GraphKeys.GLOBAL_STEP) == [step]
    with pytest.raises(ValueError, match="already exists"):
        tf.train.create_global_step()
    inc = tf.assign_add(step, 5)
    with tf.Session() as sess:
        sess.run(step.initializer)
        sess.run(inc)
        assert tf.train.global_step(sess, step) == 5


def test_global_step_found_by_name_and_checked():
    with tf.Graph().as_default():
        tf.Variable(np.int64(3), name="global_step")
        found = tf.train.get_global_step()
        assert isinstance(found, tf.Tensor) and found.name == "global_step:0"
    with tf.Graph().as_default():
        tf.Variable(1.5, name="global_step")
        with pytest.raises(TypeError, match="does not have integer type"):
            tf.train.get_global_step()
