"""TF 1.x script_ops names and return conventions: eager_py_func, the registry's size,
empty-output py_funcs, and get_gradient_function for py_func ops."""

import gc

import numpy as np
import pytest
from op_helpers import graph  # noqa: F401

import tensorflux as tf
from tensorflux.ops.autodiff.gradients import get_gradient_function
from tensorflux.ops.script import py_func as script_ops


def test_eager_py_func_is_py_function():
    x = tf.constant([0.5, 2.0], tf.float64)
    y = script_ops.eager_py_func(lambda a: np.exp(a.numpy()), [x], tf.float64)
    assert y.op.type == "EagerPyFunc"
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(y), np.exp([0.5, 2.0]))


def test_stateless_py_func_without_outputs_gives_empty_list():
    seen = []
    out = script_ops.py_func(seen.append, [tf.constant(7, tf.int64)], [], stateful=False)
    assert out == []
    op = script_ops.py_func(seen.append, [tf.constant(8, tf.int64)], [], stateful=True)
    assert isinstance(op, tf.Operation) and op.type == "PyFunc"
    with tf.Session() as sess:
        assert sess.run(op) is None
    assert seen == [8]


def test_registry_entries_die_with_their_graph():
    gc.collect()
    before = script_ops._py_funcs.size()
    g = tf.Graph()
    with g.as_default():
        c = tf.constant([1.0], tf.float32)
        for _ in range(5):
            script_ops.py_func(lambda v: v * 3, [c], tf.float32)
    assert script_ops._py_funcs.size() == before + 5
    del g, c
    gc.collect()
    assert script_ops._py_funcs.size() == before


def test_get_gradient_function():
    a = tf.constant(2.0)
    x = script_ops.py_func(lambda v: v, [a], tf.float32)
    y = script_ops.py_func(lambda v: v, [a], tf.float32, stateful=False)
    assert get_gradient_function(x.op) is None
    assert get_gradient_function(y.op) is None
    assert get_gradient_function(a.op) is None  # no inputs
    s = tf.square(a)
    grad_fn = get_gradient_function(s.op)
    assert callable(grad_fn)
    result = grad_fn(s.op, tf.constant(1.0))
    g = result[0] if isinstance(result, (list, tuple)) else result
    with tf.Session() as sess:
        assert sess.run(g) == pytest.approx(4.0)


def test_get_gradient_function_follows_override_map():
    g = tf.get_default_graph()
    a = tf.constant(3.0)
    with g.gradient_override_map({"Square": "Identity"}):
        s = tf.square(a)
    assert get_gradient_function(s.op) is get_gradient_function(tf.identity(a).op)


def test_eager_py_func_running_tf_ops_computes_their_values():
    a = tf.constant([[1.0, 2.0], [3.0, 4.0]], tf.float64)
    b = tf.placeholder(tf.float64, [2, 1])
    out = script_ops.eager_py_func(lambda m, v: tf.matmul(m, v) + 1.0, [a, b], tf.float64)
    pair = script_ops.eager_py_func(lambda m, v: [tf.reduce_sum(m), v * 3.0], [a, b],
                                    [tf.float64, tf.float64])
    graph_ops = len(tf.get_default_graph().get_operations())
    with tf.Session() as sess:
        for col in ([[1.0], [-1.0]], [[0.5], [2.0]]):
            col = np.array(col)
            got = sess.run(out, {b: col})
            np.testing.assert_allclose(got, np.array([[1.0, 2.0], [3.0, 4.0]]) @ col + 1.0)
            total, tripled = sess.run(pair, {b: col})
            assert total == 10.0
            np.testing.assert_allclose(tripled, col * 3.0)
    # the function's ops never land in the graph being run
    assert len(tf.get_default_graph().get_operations()) == graph_ops


def test_stateless_py_func_folds_once_per_plan_and_failures_surface_at_run_time():
    calls = []

    def count():
        calls.append(1)
        return np.int64(len(calls))

    x = script_ops.py_func(count, [], tf.int64, stateful=False)
    bad = script_ops.py_func(lambda: int("nope"), [], tf.int64, stateful=False)
    with tf.Session() as sess:
        assert [sess.run(x) for _ in range(3)] == [1, 1, 1]
        with pytest.raises(tf.errors.InvalidArgumentError, match="invalid literal"):
            sess.run(bad)
    with tf.Session() as sess:
        assert sess.run(x) == 2  # a new session plans (and folds) again
