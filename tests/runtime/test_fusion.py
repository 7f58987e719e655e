"""Elementwise fusion (runtime/elementwise_fusion.py, rule 8 of rewrites): which clusters fuse,
which do not, values equal to the unfused graph, and the global_jit_level switch."""

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.framework import graph_io
from tensorflux.lib.numerics import jit
from tensorflux.ops.internal import fused_elementwise
from tensorflux.runtime import graph_ir, rewrites, subgraph

ON = tf.OptimizerOptions(global_jit_level=tf.OptimizerOptions.ON_1)
OFF = tf.OptimizerOptions(global_jit_level=tf.OptimizerOptions.OFF)
RNG = np.random.default_rng(5)


@pytest.fixture(autouse=True)
def graph():
    with tf.Graph().as_default() as g:
        yield g


def _step_nodes(fetches, feeds=(), options=ON):
    nodes, points, _ = subgraph.build_step_graph(tf.get_default_graph(), list(feeds),
                                                 list(fetches), [])
    return rewrites.optimize(nodes, points, options)


def _ops(fetches, feeds=(), options=ON):
    return sorted(n.op for n in _step_nodes(fetches, feeds, options))


def _run(fetches, feed=None, options=ON):
    config = tf.ConfigProto(graph_options=tf.GraphOptions(optimizer_options=options))
    with tf.Session(config=config) as sess:
        return sess.run(fetches, feed)


def test_a_chain_becomes_one_node_with_equal_values():
    x = tf.placeholder(tf.float32, [3, 4], name="x")
    y = tf.square(tf.nn.relu(x * 2.0 + 1.0) - x, name="y")
    assert _ops([y], [x]) == ["_Arg", "_FusedElementwise"]
    (node,) = [n for n in _step_nodes([y], [x]) if n.op == "_FusedElementwise"]
    assert node.name == "y" and node.attrs["N"] == 1
    assert list(node.attrs["constants"]) == [2.0, 1.0]
    feed = {x: (RNG.standard_normal((3, 4)) * 3).astype(np.float32)}
    np.testing.assert_array_equal(_run(y, feed), _run(y, feed, OFF))


def test_broadcasting_and_transcendentals_match_unfused():
    x = tf.placeholder(tf.float64, [5, 3])
    b = tf.placeholder(tf.float64, [3])
    y = tf.tanh(tf.sigmoid(x + b) * tf.exp(-tf.abs(x)))
    assert _ops([y], [x, b]).count("_FusedElementwise") == 1
    feed = {x: RNG.standard_normal((5, 3)), b: RNG.standard_normal(3)}
    np.testing.assert_allclose(_run(y, feed), _run(y, feed, OFF), rtol=1e-14)


def test_nan_and_inf_flow_as_unfused():
    x = tf.placeholder(tf.float32, [6])
    y = tf.maximum(tf.nn.relu6(x) / (x - 1.0), -x)
    assert "_FusedElementwise" in _ops([y], [x])
    feed = {x: np.array([np.nan, np.inf, -np.inf, 1.0, 0.0, -2.5], np.float32)}
    np.testing.assert_array_equal(_run(y, feed), _run(y, feed, OFF))


def test_shared_and_fetched_intermediates_stay():
    x = tf.placeholder(tf.float32, [4])
    shared = tf.add(x, 1.0, name="shared")
    out = tf.add(shared * 2.0, shared * 3.0, name="out")
    # `shared` has two readers: the two products and their sum fuse; `shared` (and the
    # Const it reads) stay.
    assert _ops([out], [x]) == ["AddV2", "Const", "_Arg", "_FusedElementwise"]
    t = tf.negative(x, name="t")
    u = tf.square(t, name="u")
    assert _ops([u, t], [x]) == ["Neg", "Square", "_Arg"]  # t is fetched
    feed = {x: np.arange(4, dtype=np.float32)}
    np.testing.assert_array_equal(_run(out, feed), (feed[x] + 1) * 5)


def test_stateful_control_dependencies_and_other_dtypes_do_not_fuse():
    x = tf.placeholder(tf.float32, [4])
    noise = tf.random_uniform([4])
    y = tf.abs(noise * 2.0 + x)  # RandomUniform is stateful: it stays, Mul/Add/Abs fuse
    assert _ops([y], [x]) == ["Const", "RandomUniform", "_Arg", "_FusedElementwise"]
    gate = tf.no_op()
    with tf.control_dependencies([gate]):
        m = x * 2.0
    z = m + 1.0  # m has a control input: not absorbed, and z alone is no cluster
    assert "_FusedElementwise" not in _ops([z], [x])
    i = tf.placeholder(tf.int32, [4])
    assert "_FusedElementwise" not in _ops([tf.abs(i * 2 + 1)], [i])
    w = tf.cast(tf.sqrt(x), tf.float64) + 1.0  # the Cast splits the chain
    assert "_FusedElementwise" not in _ops([w], [x])
    assert np.all(_run(y, {x: np.zeros(4, np.float32)}) < 2)


def test_control_flow_graphs_are_left_alone():
    x = tf.placeholder(tf.float32, [])
    y = tf.cond(x > 0, lambda: tf.exp(x * 2.0), lambda: x)
    assert "_FusedElementwise" not in _ops([y], [x])


def test_switch_off_and_default_keep_todays_kernels():
    x = tf.placeholder(tf.float32, [2])
    y = tf.exp(x) + 1.0
    assert "_FusedElementwise" not in _ops([y], [x], OFF)
    assert "_FusedElementwise" not in _ops([y], [x], tf.OptimizerOptions())
    assert "_FusedElementwise" not in _ops([y], [x], None)
    assert "_FusedElementwise" in _ops([y], [x], tf.OptimizerOptions(
        global_jit_level=tf.OptimizerOptions.ON_2))


def test_gradients_are_unchanged():
    x = tf.placeholder(tf.float64, [4, 3])
    w = tf.constant(RNG.standard_normal((3, 2)))
    loss = tf.reduce_sum(tf.sigmoid(tf.matmul(x, w)) * 3.0 - tf.square(tf.matmul(x, w)))
    (grad,) = tf.gradients(loss, [x])
    feed = {x: RNG.standard_normal((4, 3))}
    assert "_FusedElementwise" in _ops([grad], [x])
    np.testing.assert_allclose(_run(grad, feed), _run(grad, feed, OFF), rtol=1e-13)


def test_chain_of_scalar_adds_becomes_one_node():
    chain = tf.constant(np.float32(0.0))
    for _ in range(1000):
        chain = tf.add(chain, 1.0)
    options = tf.OptimizerOptions(opt_level=tf.OptimizerOptions.L0,
                                  global_jit_level=tf.OptimizerOptions.ON_1)
    nodes = _step_nodes([chain], options=options)
    assert [n.op for n in nodes] == ["_FusedElementwise"]  # the Consts became constants
    assert _run(chain, options=options) == np.float32(1000.0)


def test_fused_node_dump_is_deterministic():
    x = tf.placeholder(tf.float32, [2], name="x")
    y = tf.nn.relu(x - 1.0, name="y")
    first = graph_ir.dump(_step_nodes([y], [x]))
    assert first == graph_ir.dump(_step_nodes([y], [x]))
    assert "y = _FusedElementwise(_arg_x_0_0)" in first and "opcodes=[1, 18]" in first


def test_kernel_without_jit_runs_the_numpy_program(monkeypatch):
    monkeypatch.setenv("TFX_JIT", "0")
    assert not jit.available()
    kernel = fused_elementwise.FusedElementwise.kernels["CPU"].instantiate(
        {"T": tf.float32, "N": 1, "opcodes": [2, 18], "operands": [0, 1, 2, -1],
         "constants": np.array([-2.0], np.float32)}, "fused")
    x = np.array([1.0, -3.0, np.nan], np.float32)
    np.testing.assert_array_equal(kernel(x), np.maximum(x * np.float32(-2), 0))


def test_bad_programs_are_refused_at_graph_construction():
    x = tf.placeholder(tf.float32, [2])
    with pytest.raises(ValueError, match="unknown opcode"):
        fused_elementwise.FusedElementwise([x], N=1, opcodes=[77], operands=[0, -1],
                                           constants=np.zeros(0, np.float32))


def test_fused_node_round_trips_through_graph_def():
    """Workers receive partitions as GraphDefs: the program travels as plain attrs."""
    x = tf.placeholder(tf.float32, [3], name="x")
    y = tf.nn.relu(x * 2.0 + 1.0, name="y")
    nodes = _step_nodes([y], [x])
    back = graph_ir.nodes_from_graph_def(graph_io.nodes_to_graph_def(nodes))
    (fused,) = [n for n in back if n.op == "_FusedElementwise"]
    assert list(fused.attrs["opcodes"]) == [2, 0, 18]
    assert list(fused.attrs["operands"]) == [0, 1, 3, 2, 4, -1]
    np.testing.assert_array_equal(fused.attrs["constants"], np.float32([2, 1]))
