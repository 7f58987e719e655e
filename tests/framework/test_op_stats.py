"""Op statistics: the registry (RegisterStatistics / get_stats_for_node_def), OpStats
arithmetic, and the flops of MatMul and element-wise ops from static shapes."""

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.framework import op_stats


def _flops(graph, op):
    return op_stats.get_stats_for_node_def(graph, op.node_def, "flops").value


@pytest.mark.parametrize("m,k,n,ta,tb", [(25, 16, 9, False, False), (7, 3, 5, True, False),
                                          (4, 6, 2, False, True), (1, 1, 1, True, True)])
def test_matmul_flops_are_two_k_per_output(m, k, n, ta, tb):
    g = tf.Graph()
    with g.as_default():
        a = tf.zeros([k, m] if ta else [m, k])
        b = tf.zeros([n, k] if tb else [k, n])
        product = tf.matmul(a, b, transpose_a=ta, transpose_b=tb)
    assert _flops(g, product.op) == 2 * m * k * n


def test_elementwise_flops_and_unknown_cases():
    g = tf.Graph()
    with g.as_default():
        x = tf.ones([3, 4])
        total = tf.add(x, tf.ones([4]))
        scaled = tf.multiply(total, 2.0)
        fed = tf.placeholder(tf.float32, [None, 4])
        partial = tf.matmul(fed, tf.ones([4, 2]))
        product = tf.subtract(fed, 1.0)
    assert _flops(g, total.op) == 12 and _flops(g, scaled.op) == 12
    assert _flops(g, partial.op) is None and _flops(g, product.op) is None
    # An op type without a registered function: a statistic of unknown value.
    none = op_stats.get_stats_for_node_def(g, x.op.node_def, "flops")
    assert none.statistic_type == "flops" and none.value is None


def test_register_and_sum_stats():
    @op_stats.RegisterStatistics("TfxStatsProbe", "weight_parameters")
    def _probe(graph, node):
        return op_stats.OpStats("weight_parameters", len(node.name))

    class Node:
        op, name = "TfxStatsProbe", "probe"

    got = op_stats.get_stats_for_node_def(None, Node(), "weight_parameters")
    assert got.value == 5
    total = op_stats.OpStats("weight_parameters") + got
    total += op_stats.OpStats("weight_parameters", 7)
    assert total.value == 12 and got.value == 5
    with pytest.raises(ValueError, match="type flops"):
        total += op_stats.OpStats("flops", 1)
    with pytest.raises(KeyError, match="already registered"):
        op_stats.RegisterStatistics("TfxStatsProbe", "weight_parameters")(_probe)
    with pytest.raises(TypeError):
        op_stats.RegisterStatistics(3, "flops")


def test_matmul_flops_match_a_counted_product():
    # Count multiply-adds of a small product directly.
    a, b = np.ones([3, 5]), np.ones([5, 2])
    counted = sum(2 for _ in range(a.shape[0]) for _ in range(b.shape[1])
                  for _ in range(a.shape[1]))
    g = tf.Graph()
    with g.as_default():
        product = tf.matmul(a, b)
    assert _flops(g, product.op) == counted
