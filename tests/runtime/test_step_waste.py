"""Work a step does not need: results only used as control dependencies are not computed
(rule 5 of rewrites.py), and freed step memory stays in the process (host_memory.py)."""

import resource

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.runtime import host_memory, rewrites, subgraph


@pytest.fixture
def graph():
    with tf.Graph().as_default() as g:
        yield g


def _optimized(fetches, feeds=(), targets=(), options=None):
    nodes, fetch_points, _ = subgraph.build_step_graph(tf.get_default_graph(), list(feeds),
                                                       list(fetches), list(targets))
    return {n.name: n for n in rewrites.optimize(nodes, fetch_points, options)}


def _traced_ops(fetches, feed):
    with tf.Session() as sess:
        meta = tf.RunMetadata()
        value = sess.run(fetches, feed, options=tf.RunOptions(
            trace_level=tf.RunOptions.FULL_TRACE), run_metadata=meta)
    ops = {}
    for dev in meta.step_stats.dev_stats:
        for stats in dev.node_stats:
            ops[stats.node_name] = stats.timeline_label.split(" = ")[1].split("(")[0]
    return value, ops


def test_control_only_result_becomes_noop_keeping_order(graph):
    x = tf.placeholder(tf.float32, [3], name="x")
    unused = tf.multiply(x, 2.0, name="unused")
    with tf.control_dependencies([unused]):
        out = tf.identity(x + 1.0, name="out")
    nodes = _optimized([out], [x])
    node = nodes["unused"]
    assert node.op == "NoOp" and not node.inputs and not node.output_dtypes
    assert {"unused/y", "_arg_x_0_0"} <= {c.name for c in node.control_inputs}  # still first
    value, ops = _traced_ops(out, {x: [1.0, 2.0, 3.0]})
    np.testing.assert_allclose(value, [2.0, 3.0, 4.0])
    assert ops.get("unused", "NoOp") == "NoOp"


def test_fetched_targeted_stateful_and_data_used_nodes_are_kept(graph):
    x = tf.placeholder(tf.float32, [2], name="x")
    used = tf.multiply(x, 3.0, name="used")
    fetched = tf.multiply(x, 4.0, name="fetched")
    target = tf.multiply(x, 5.0, name="target")
    rand = tf.random_uniform([2], seed=3, name="rand")
    with tf.control_dependencies([used, fetched, rand]):
        out = tf.identity(used, name="out")
    nodes = _optimized([out, fetched], [x], targets=[target.op])
    assert nodes["used"].op == "Mul" and nodes["fetched"].op == "Mul"
    assert nodes["target"].op == "Mul"
    assert any(node.op == "RandomUniform" for node in nodes.values())


def test_level_zero_keeps_control_only_results(graph):
    x = tf.placeholder(tf.float32, [2], name="x")
    unused = tf.multiply(x, 2.0, name="unused")
    with tf.control_dependencies([unused]):
        out = tf.identity(x, name="out")
    off = tf.OptimizerOptions(opt_level=-1)
    assert _optimized([out], [x], options=off)["unused"].op == "Mul"
    cse = tf.OptimizerOptions(opt_level=-1, do_common_subexpression_elimination=True)
    assert _optimized([out], [x], options=cse)["unused"].op == "NoOp"


def test_gated_gradient_of_an_input_is_not_computed(graph):
    x = tf.placeholder(tf.float32, [2, 6, 6, 3], name="images")
    w = tf.Variable(np.ones((3, 3, 3, 4), np.float32), name="w")
    loss = tf.reduce_sum(tf.nn.conv2d(x, w, 1, "SAME"))
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        meta = tf.RunMetadata()
        sess.run(train, {x: np.ones((2, 6, 6, 3), np.float32)},
                 options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                 run_metadata=meta)
        ran = [s.timeline_label for d in meta.step_stats.dev_stats for s in d.node_stats]
        assert not any("= Conv2DBackpropInput(" in label for label in ran)
        assert any("= Conv2DBackpropFilter(" in label for label in ran)
        assert sess.run(w)[0, 0, 0, 0] < 1.0


def test_steps_stop_page_faulting_after_the_first():
    applied = host_memory.keep_freed_memory()
    assert host_memory.keep_freed_memory() is applied  # once per process
    if not applied:
        pytest.skip("not glibc, or the user set MALLOC_* thresholds")
    big = 4 << 20  # above glibc's default mmap threshold, below ours

    def step():
        arrays = [np.ones(big // 8) for _ in range(4)]
        return sum(a[0] for a in arrays)

    step()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(5):
        step()
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
    assert faults < 5 * 4 * (big // 4096) // 4  # untuned: every page of every step
