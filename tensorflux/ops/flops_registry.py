"""The "flops" statistic of the standard ops, as TF1's profiler counts them (`tf.profiler`
sums these; `ops.get_stats_for_node_def(graph, node_def, "flops")` reads one).

Counts come from static shapes only; a shape not fully known gives an unknown value (None),
which the profiler reports as an op without flops statistics. Element-wise ops count their
elements (times the work per element: Rsqrt 2, Softmax 5, SquaredDifference 2, RsqrtGrad
4); reductions `in + out * (finalize - 1)`; products `2 * K` per output; convolutions
`2 * window * in_depth` per output; pooling the window per output; conv and pool formulas
hold for NHWC (other layouts are refused with ValueError, as TF does).
"""

from __future__ import annotations

import math

from tensorflux.framework.op_stats import OpStats, RegisterStatistics, static_shape

__all__: list = []


def _elements(graph, tensor_name):
    shape = static_shape(graph, tensor_name)
    if not shape.is_fully_defined():
        return None
    return math.prod(shape.as_list())


def _flops(count):
    return OpStats("flops", None if count is None else int(count))


def _per_input_element(work):
    def statistic(graph, node):
        count = _elements(graph, node.input[0])
        return _flops(None if count is None else count * work)
    return statistic


def _per_output_element(work):
    def statistic(graph, node):
        count = _elements(graph, node.name)
        return _flops(None if count is None else count * work)
    return statistic


def _reduction(finalize):
    def statistic(graph, node):
        inputs, outputs = _elements(graph, node.input[0]), _elements(graph, node.name)
        if inputs is None or outputs is None:
            return _flops(None)
        return _flops(inputs + outputs * (finalize - 1))
    return statistic


def _register(op_types, statistic):
    for op_type in op_types:
        RegisterStatistics(op_type, "flops")(statistic)


_register(("Reciprocal", "Square", "Log", "Neg", "AssignSub", "AssignAdd"),
          _per_input_element(1))
_register(("Rsqrt",), _per_input_element(2))
_register(("Softmax",), _per_input_element(5))
_register(("Add", "AddV2", "Sub", "Mul", "RealDiv", "Maximum", "Minimum", "Pow",
           "GreaterEqual", "Greater", "LessEqual", "Less", "Equal", "NotEqual", "BiasAdd"),
          _per_output_element(1))
_register(("SquaredDifference",), _per_output_element(2))
_register(("RsqrtGrad",), _per_output_element(4))
_register(("Mean",), _reduction(finalize=1))
_register(("Sum", "ArgMax", "ArgMin", "BiasAddGrad"), _reduction(finalize=0))


@RegisterStatistics("L2Loss", "flops")
def _l2_loss(graph, node):
    """3N - 1: square, sum and halve as TF's kernel does."""
    count = _elements(graph, node.input[0])
    return _flops(None if count is None else 3 * count - 1)


@RegisterStatistics("AddN", "flops")
def _add_n(graph, node):
    inputs = [name for name in node.input if not name.startswith("^")]
    if not inputs:
        return _flops(0)
    count = _elements(graph, inputs[0])
    return _flops(None if count is None else count * (len(inputs) - 1))


def _products(k_axis_plain, k_axis_transposed):
    def statistic(graph, node):
        a_shape = static_shape(graph, node.input[0])
        outputs = _elements(graph, node.name)
        if not a_shape.is_fully_defined() or outputs is None or a_shape.ndims < 2:
            return _flops(None)
        transposed = node.attr["adj_x"].b if "adj_x" in node.attr else node.attr[
            "transpose_a"].b
        k = a_shape.as_list()[k_axis_transposed if transposed else k_axis_plain]
        return _flops(2 * k * outputs)
    return statistic


RegisterStatistics("MatMul", "flops")(_products(1, 0))
_register(("BatchMatMul", "BatchMatMulV2"), _products(-1, -2))


def _nhwc(node):
    if "data_format" in node.attr and node.attr["data_format"].s not in (b"NHWC", b""):
        raise ValueError(f"Only NHWC format is supported in flops computations (op "
                         f"'{node.name}' is {node.attr['data_format'].s.decode()}).")


def _window(node):
    return math.prod(node.attr["ksize"].list.i)


def _pool(graph, node):
    _nhwc(node)
    outputs = _elements(graph, node.name)
    return _flops(None if outputs is None else _window(node) * outputs)


_register(("AvgPool", "MaxPool"), _pool)


@RegisterStatistics("AvgPoolGrad", "flops")
def _avg_pool_grad(graph, node):
    _nhwc(node)
    count = _elements(graph, node.input[1])
    return _flops(None if count is None else 2 * _window(node) * count)


@RegisterStatistics("MaxPoolGrad", "flops")
def _max_pool_grad(graph, node):
    """The pooling again, then one flop per pooled element."""
    _nhwc(node)
    count = _elements(graph, node.input[1])
    return _flops(None if count is None else (_window(node) + 1) * count)


def _filter_window(graph, name):
    shape = static_shape(graph, name)
    return shape.as_list() if shape.is_fully_defined() else None


@RegisterStatistics("Conv2D", "flops")
def _conv2d(graph, node):
    _nhwc(node)
    outputs, kernel = _elements(graph, node.name), _filter_window(graph, node.input[1])
    if outputs is None or kernel is None:
        return _flops(None)
    return _flops(2 * outputs * kernel[0] * kernel[1] * kernel[2])


def _window_conv(check_layout):
    """2 * filter height * width per output (one multiply-add per window element)."""
    def statistic(graph, node):
        if check_layout:
            _nhwc(node)
        outputs, kernel = _elements(graph, node.name), _filter_window(graph, node.input[1])
        if outputs is None or kernel is None:
            return _flops(None)
        return _flops(2 * outputs * kernel[0] * kernel[1])
    return statistic


RegisterStatistics("DepthwiseConv2dNative", "flops")(_window_conv(check_layout=True))
RegisterStatistics("Dilation2D", "flops")(_window_conv(check_layout=False))


def _conv_backprop(image_name, kernel_name):
    """2 * image elements * kernel elements / (image depth * spatial strides)."""
    def statistic(graph, node):
        _nhwc(node)
        image, kernel = static_shape(graph, image_name(node)), _elements(
            graph, kernel_name(node))
        if not image.is_fully_defined() or kernel is None:
            return _flops(None)
        strides = node.attr["strides"].list.i
        dims = image.as_list()
        return _flops(2 * math.prod(dims) * kernel / (dims[-1] * strides[1] * strides[2]))
    return statistic


RegisterStatistics("Conv2DBackpropInput", "flops")(
    _conv_backprop(lambda node: node.name, lambda node: node.input[1]))
RegisterStatistics("Conv2DBackpropFilter", "flops")(
    _conv_backprop(lambda node: node.input[0], lambda node: node.name))
