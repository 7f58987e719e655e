"""bypass_dependencies (runtime/dependency_bypass.py, rule 5 of rewrites): Identity and NoOp
nodes that only carry ordering go; values, and the order of stateful ops, stay."""

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.runtime import dependency_bypass, rewrites, subgraph


@pytest.fixture(autouse=True)
def graph():
    with tf.Graph().as_default() as g:
        yield g


def _optimized(fetches, feeds=(), targets=()):
    nodes, points, _ = subgraph.build_step_graph(tf.get_default_graph(), list(feeds),
                                                 list(fetches), list(targets))
    return rewrites.optimize(nodes, points)


def _without_bypass(monkeypatch):
    monkeypatch.setattr(rewrites, "bypass_dependencies", lambda nodes, protected: list(nodes))


def test_gradient_tuples_go_and_values_stay(monkeypatch):
    x = tf.placeholder(tf.float32, [4, 3])
    w = tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2) / 7)
    b = tf.Variable(np.ones(2, np.float32))
    loss = tf.reduce_sum(tf.nn.relu(tf.matmul(x, w) + b) ** 2)
    grads = tf.gradients(loss, [x, w, b])  # gate_gradients tuples: Identity(g, ^group_deps)
    fetches = [loss] + grads
    ops = [n.op for n in _optimized(fetches, [x])]
    assert "NoOp" not in ops
    assert all(n.control_inputs == [] or n.op != "Identity" for n in _optimized(fetches, [x]))
    feed = {x: np.linspace(-3, 3, 12, dtype=np.float32).reshape(4, 3)}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got = sess.run(fetches, feed)
        with monkeypatch.context() as patch:
            _without_bypass(patch)
            with tf.Session() as reference:
                reference.run(tf.global_variables_initializer())
                want = reference.run(fetches, feed)
    for g, w_ in zip(got, want):
        np.testing.assert_array_equal(g, w_)


def test_ordering_of_stateful_ops_is_kept():
    # read -> (Identity with a control input) -> assign: the assign must still wait for the
    # increment the bypassed nodes waited for, and the read after both sees their effects.
    v = tf.Variable(1.0)
    inc = tf.assign_add(v, 10.0)
    with tf.control_dependencies([inc]):
        gate = tf.no_op()
    with tf.control_dependencies([gate]):
        seen = tf.identity(v.read_value() * 2)  # an Identity waiting on a NoOp
    with tf.control_dependencies([seen]):
        doubled = tf.assign(v, seen)
    nodes = _optimized([doubled])
    assert not any(n.op == "NoOp" for n in nodes)
    with tf.Session() as sess:
        sess.run(v.initializer)
        assert sess.run(doubled) == 22.0
        assert sess.run(doubled) == 64.0  # (22 + 10) * 2


def test_fetched_targets_control_flow_and_devices_are_left_alone():
    x = tf.placeholder(tf.float32, [])
    with tf.control_dependencies([tf.identity(x)]):
        y = tf.identity(x * 3)
    fetched = _optimized([y], [x])
    assert any(n.name == y.op.name and n.op == "Identity" for n in fetched)  # fetched stays
    group = tf.group(y, x * 2)
    assert any(n.name == group.name for n in _optimized([], [x], [group]))  # the target stays
    with tf.device("/cpu:0"):
        z = tf.identity(x + 1)
    with tf.control_dependencies([z]):
        w = tf.identity(x * 5)
    nodes, points, _ = subgraph.build_step_graph(tf.get_default_graph(), [x], [w * 1], [])
    for node in nodes:
        if node.name == z.op.name:
            node.device = "/device:CPU:0"
    before = len(nodes)
    assert len(dependency_bypass.bypass_dependencies(nodes, set())) == before
    r = tf.while_loop(lambda i: i < 3, lambda i: i + 1, [tf.constant(0)])
    nodes, points, _ = subgraph.build_step_graph(tf.get_default_graph(), [], [r], [])
    assert len(dependency_bypass.bypass_dependencies(nodes, set())) == len(nodes)
    with tf.Session() as sess:
        assert sess.run(r) == 3
        assert sess.run(y, {x: 2.0}) == 6.0
