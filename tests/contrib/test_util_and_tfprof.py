"""tf.contrib.util (tensor protos, ops a GraphDef uses) and tf.contrib.tfprof (the TF 1.x
print_model_analysis API over tf.profiler)."""

import numpy as np
import pytest

import tensorflux as tf


def test_make_tensor_proto_round_trips_a_request_tensor():
    values = np.arange(6, dtype=np.float32).reshape(2, 3)
    proto = tf.contrib.util.make_tensor_proto(values, shape=[2, 3])
    assert [d.size for d in proto.tensor_shape.dim] == [2, 3]
    np.testing.assert_array_equal(tf.contrib.util.make_ndarray(proto), values)
    with tf.Graph().as_default():
        assert tf.contrib.util.constant_value(tf.constant([4, 5]) * 2).tolist() == [8, 10]


def test_ops_used_by_a_graph_and_their_stripped_op_list():
    graph = tf.Graph()
    with graph.as_default():
        weights = tf.Variable(tf.ones([3, 4]), name="w")
        tf.matmul(weights, tf.ones([4, 2]))
    used = tf.contrib.util.ops_used_by_graph_def(graph.as_graph_def())
    assert used == sorted({op.type for op in graph.get_operations()})
    assert "MatMul" in used and "VariableV2" in used
    op_list = tf.contrib.util.stripped_op_list_for_graph(graph.as_graph_def())
    assert [op.name for op in op_list.op] == used
    matmul = next(op for op in op_list.op if op.name == "MatMul")
    assert [arg.name for arg in matmul.input_arg] == ["a", "b"]
    bad = graph.as_graph_def()
    bad.node[0].op = "NoSuchOpType"
    with pytest.raises(ValueError, match="NoSuchOpType"):
        tf.contrib.util.stripped_op_list_for_graph(bad)


def test_print_model_analysis_counts_parameters_and_flops(capsys, tmp_path):
    analyzer = tf.contrib.tfprof.model_analyzer
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [2, 5])
        tf.layers.dense(x, 3, name="fc")
    stats = analyzer.print_model_analysis(
        graph, tfprof_options=analyzer.TRAINABLE_VARS_PARAMS_STAT_OPTIONS)
    assert stats.total_parameters == 5 * 3 + 3
    assert "fc/kernel (5x3, 15/15 params)" in capsys.readouterr().out
    report = tmp_path / "flops.txt"
    options = dict(analyzer.FLOAT_OPS_OPTIONS, dump_to_file=str(report))
    flops = analyzer.print_model_analysis(graph, tfprof_options=options)
    # MatMul, BiasAdd, and the kernel initializer's scale (mul), range (sub) and shift (add).
    assert flops.total_float_ops == 2 * 5 * 2 * 3 + 2 * 3 + 15 + 1 + 15
    assert "fc/MatMul (60/60 flops)" in report.read_text() and not capsys.readouterr().out
    assert tf.contrib.tfprof.tfprof_logger.TRAINABLE_VARIABLES == "_trainable_variables"
