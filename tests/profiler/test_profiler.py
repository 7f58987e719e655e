"""tf.profiler: parameters and float operations by scope / op type / creation site, run
statistics from traced steps, options, outputs and errors; flops of the standard ops."""

import math
import os

import numpy as np
import pytest

import tensorflux as tf
from tensorflux.framework import op_stats

Builder = tf.profiler.ProfileOptionBuilder


def _quiet(options):
    return Builder(options).with_empty_output().build()


def _conv_net():
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [4, 8, 8, 3], name="x")
        with tf.variable_scope("net"):
            conv = tf.layers.conv2d(x, 5, 3, padding="same", name="conv")
            pooled = tf.layers.max_pooling2d(conv, 2, 2)
            logits = tf.layers.dense(tf.reshape(pooled, [4, -1]), 6, name="fc")
        loss = tf.reduce_mean(tf.nn.softmax(logits)) + 0.5 * tf.nn.l2_loss(logits)
        tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    return graph


def _flops_of(graph, name):
    node_def = next(n for n in graph.as_graph_def().node if n.name == name)
    return op_stats.get_stats_for_node_def(graph, node_def, "flops").value


def test_parameters_by_scope_are_the_trainable_variable_sizes():
    graph = _conv_net()
    result = tf.profiler.profile(graph, options=_quiet(Builder.trainable_variables_parameter()))
    assert result.name == "_TFProfRoot"
    sizes = {v.op.name: int(np.prod(v.shape.as_list()))
             for v in graph.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES)}
    assert result.total_parameters == sum(sizes.values()) == 3 * 3 * 3 * 5 + 5 + 80 * 6 + 6
    (net,) = result.children
    assert net.name == "net" and [c.name for c in net.children] == ["net/conv", "net/fc"]
    kernel = net.children[0].children[1]
    assert kernel.name == "net/conv/kernel" and kernel.parameters == 135
    assert [d.size for d in kernel.shapes[0].dim] == [3, 3, 3, 5]


def test_float_operations_follow_the_registered_formulas():
    graph = _conv_net()
    out_elements = 4 * 8 * 8 * 5
    expected = {
        "net/conv/Conv2D": 2 * out_elements * 3 * 3 * 3,
        "net/conv/BiasAdd": out_elements,
        "net/max_pooling2d/MaxPool": 4 * (out_elements // 4),
        "net/fc/MatMul": 2 * 80 * 4 * 6,
        "L2Loss": 3 * 24 - 1,
        "Softmax": 5 * 24,
        "Mean": 24,
        "gradients/net/conv/BiasAdd_grad/BiasAddGrad": out_elements - 5,
        "gradients/net/max_pooling2d/MaxPool_grad/MaxPoolGrad": 5 * (out_elements // 4),
        "gradients/net/conv/Conv2D_grad/Conv2DBackpropFilter": 2 * out_elements * 27,
        "gradients/net/conv/Conv2D_grad/Conv2DBackpropInput": 2 * out_elements * 27,
    }
    for name, flops in expected.items():
        assert _flops_of(graph, name) == flops, name
    result = tf.profiler.profile(graph, options=_quiet(Builder.float_operation()))
    every = sum(v for v in (_flops_of(graph, n.name) for n in graph.as_graph_def().node)
                if v)
    assert result.total_float_ops == every
    # Ordered by total flops, ties by name; ops without flops hidden, lifted to the root.
    totals = [(-c.total_float_ops, c.name) for c in result.children]
    assert totals == sorted(totals) and result.children[0].name.endswith("Conv2D") or \
        result.children[0].total_float_ops == expected["net/conv/Conv2D"]
    assert all(c.float_ops >= 1 for c in result.children)


def test_op_view_chains_types_with_running_totals():
    graph = _conv_net()
    result = tf.profiler.profile(graph, cmd="op", options=_quiet(Builder.float_operation()))
    chain, node = [], result.children[0]
    while True:
        chain.append(node)
        if not node.children:
            break
        node = node.children[0]
    assert result.total_float_ops == chain[0].total_float_ops == sum(n.float_ops for n in chain)
    for earlier, later in zip(chain, chain[1:]):
        assert earlier.total_float_ops == earlier.float_ops + later.total_float_ops
        assert earlier.float_ops >= later.float_ops
    matmul = next(n for n in chain if n.name == "MatMul")
    assert len(matmul.graph_nodes) == 3  # forward and both gradient products


def test_run_statistics_come_from_traced_steps(tmp_path):
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None, 16], name="x")
        with tf.variable_scope("layer"):
            y = tf.matmul(x, tf.get_variable("w", [16, 8]), name="MatMul")
        train = tf.train.AdamOptimizer().minimize(tf.reduce_sum(y * y))
        profiler = tf.profiler.Profiler(graph)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for step in range(2):
                meta = tf.RunMetadata()
                sess.run(train, {x: np.ones((5, 16))}, run_metadata=meta,
                         options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE))
                profiler.add_step(step, meta)
    options = Builder(Builder.time_and_memory(min_micros=0, min_bytes=0)).with_empty_output()
    scope = profiler.profile_name_scope(options.build())
    matmul = next(n for n in _walk(scope) if n.name == "layer/MatMul")
    assert matmul.run_count == 1 and matmul.output_bytes == 5 * 8 * 4
    assert matmul.devices and "CPU" in matmul.devices[0]
    ops = profiler.profile_operations(options.with_step(1).build())
    assert ops.total_exec_micros >= 0 and ops.children
    with pytest.raises(tf.errors.InvalidArgumentError, match="No step 7"):
        profiler.profile_operations(options.with_step(7).build())
    advice = profiler.advise()
    reports = advice.checkers["ExpensiveOperationChecker"].reports
    assert len(reports) == 3 and reports[0].startswith("top 1 operation type: ")
    timeline_file = tmp_path / "timeline.json"
    tf.profiler.profile(graph, run_meta=meta, options=Builder(
        Builder.time_and_memory()).with_timeline_output(str(timeline_file)).build())
    assert '"traceEvents"' in timeline_file.read_text()


def _walk(node):
    for child in node.children:
        yield child
        yield from _walk(child)


def test_stdout_report_and_file_output(capsys, tmp_path):
    graph = _conv_net()
    tf.profiler.profile(graph, options=Builder.trainable_variables_parameter())
    out = capsys.readouterr().out
    assert "-account_type_regexes       _trainable_variables" in out
    assert "_TFProfRoot (--/626 params)" in out
    assert "    net/conv/kernel (3x3x3x5, 135/135 params)" in out
    path = tmp_path / "report.txt"
    tf.profiler.profile(graph, cmd="op", options=Builder(Builder.float_operation())
                        .with_file_output(str(path)).build())
    text = path.read_text()
    assert "node name | # float_ops" in text and "Conv2D" in text
    assert capsys.readouterr().out == ""


def test_filters_depth_and_names():
    graph = _conv_net()
    # The root's children are at depth 1, shown while depth < max_depth; with the default
    # accounting only shown nodes count.
    builder = Builder(Builder.trainable_variables_parameter())
    nothing = tf.profiler.profile(graph, options=_quiet(builder.with_max_depth(1).build()))
    assert not nothing.children and nothing.total_parameters == 0
    shallow = tf.profiler.profile(graph, options=_quiet(builder.with_max_depth(2).build()))
    assert [(c.name, len(c.children)) for c in shallow.children] == [("net", 0)]
    every = tf.profiler.profile(graph, options=_quiet(
        builder.account_displayed_op_only(False).build()))
    assert shallow.total_parameters == 0
    assert every.total_parameters == every.children[0].total_parameters == 626
    hidden = tf.profiler.profile(graph, options=_quiet(
        Builder(Builder.trainable_variables_parameter())
        .with_node_names(hide_name_regexes=[".*bias"]).build()))
    names = [n.name for n in _walk(hidden)]
    assert "net/conv/bias" not in names and hidden.total_parameters == 135 + 480
    large = tf.profiler.profile(graph, options=_quiet(
        Builder(Builder.trainable_variables_parameter()).with_min_parameters(200).build()))
    assert [n.name for n in _walk(large) if n.parameters] == ["net/fc/kernel"]


def test_bad_arguments_are_refused_by_name():
    graph = _conv_net()
    with pytest.raises(tf.errors.InvalidArgumentError, match="unknown cmd: nope"):
        tf.profiler.profile(graph, cmd="nope", options=_quiet(Builder.float_operation()))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Unknown order_by"):
        tf.profiler.profile(graph, options=_quiet(
            Builder(Builder.float_operation()).order_by("speed").build()))
    with pytest.raises(tf.errors.InvalidArgumentError, match="max_dpeth"):
        tf.profiler.profile(graph, options={"max_dpeth": 3})
    with pytest.raises(tf.errors.InvalidArgumentError, match="Unknown checker"):
        tf.profiler.advise(graph, options={"SpeedChecker": {}})


def test_unknown_shapes_are_reported_not_counted(capsys):
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None, 3])
        tf.matmul(x, tf.ones([3, 2]), name="product")
        tf.add(tf.ones([2, 2]), 1.0, name="known")
    result = tf.profiler.profile(graph, options=_quiet(Builder.float_operation()))
    assert result.total_float_ops == 4
    assert "1 ops no flops stats due to incomplete shapes." in capsys.readouterr().err


def test_write_op_log_marks_trainable_variables(tmp_path):
    graph = _conv_net()
    tf.profiler.write_op_log(graph, str(tmp_path / "logs"))
    log = tf.profiler.OpLogProto()
    log.ParseFromString((tmp_path / "logs" / "tfprof_log").read_bytes())
    marked = sorted(e.name for e in log.log_entries if "_trainable_variables" in e.types)
    assert marked == ["net/conv/bias", "net/conv/kernel", "net/fc/bias", "net/fc/kernel"]
    entry = next(e for e in log.log_entries if e.name == "net/fc/MatMul")
    assert entry.float_ops == 2 * 80 * 4 * 6
    # A log adds types and float operations for ops the statistics cannot count.
    extra = tf.profiler.OpLogProto()
    extra.log_entries.add(name="x", float_ops=1000, types=["_trainable_variables"])
    params = tf.profiler.profile(graph, op_log=extra,
                                 options=_quiet(Builder.trainable_variables_parameter()))
    assert params.total_parameters == 626
    flops = tf.profiler.profile(graph, op_log=extra, options=_quiet(Builder.float_operation()))
    assert any(c.name == "x" and c.float_ops == 1000 for c in flops.children)


@pytest.mark.parametrize("strides", [1, 2])
def test_conv_backprop_flops_formula(strides):
    graph = tf.Graph()
    with graph.as_default():
        image = tf.ones([2, 6, 6, 3])
        kernel = tf.ones([3, 3, 3, 4])
        out = tf.nn.conv2d(image, kernel, [1, strides, strides, 1], "SAME")
        tf.gradients(tf.reduce_sum(out), [image, kernel])
    conv_in = next(n.name for n in graph.as_graph_def().node if n.op == "Conv2DBackpropInput")
    conv_filter = next(n.name for n in graph.as_graph_def().node
                       if n.op == "Conv2DBackpropFilter")
    expected = 2 * (2 * 6 * 6 * 3) * (3 * 3 * 3 * 4) / (3 * strides * strides)
    assert _flops_of(graph, conv_in) == _flops_of(graph, conv_filter) == int(expected)
    assert _flops_of(graph, out.op.name) == 2 * math.prod(out.shape.as_list()) * 27


def test_nchw_flops_are_refused():
    graph = tf.Graph()
    with graph.as_default():
        pooled = tf.nn.max_pool(tf.ones([1, 2, 4, 4]), [1, 1, 2, 2], [1, 1, 2, 2], "VALID",
                                data_format="NCHW")
    with pytest.raises(ValueError, match="Only NHWC"):
        _flops_of(graph, pooled.op.name)


def test_report_number_formats():
    from tensorflux.profiler import report

    assert [report.format_count(v) for v in (999, 2682, 1491559, 3 * 10**9)] == [
        "999", "2.68k", "1.49m", "3.00b"]
    assert [report.format_micros(v) for v in (12, 2500, 3_400_000)] == [
        "12us", "2.50ms", "3.40sec"]
    assert report.format_bytes(2048) == "2.05KB" and os.sep
