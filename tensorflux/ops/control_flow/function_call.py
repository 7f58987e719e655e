"""Function calls: `PartitionedCall`, `StatefulPartitionedCall`, and gradients of functions.

A call op's kernel runs the body of its `f` attr (a `DefinedFunction`, see
framework/function.py) with `ctx.run_function`; captured tensors are extra inputs after the
arguments, ref arguments are passed by reference (`passes_refs`). The gradient of a call is a
call of the function's gradient function: the forward body rebuilt in a new function graph
(traced again from Python, so tf.cond / tf.while_loop contexts exist; or, for a function
imported from a FunctionDef, copied) and differentiated there with `tf.gradients`. The forward
body is recomputed: stateful ops off the path to the outputs do not run again, but stateful
ops on it (random ops) do.
"""

from __future__ import annotations

from tensorflux.framework import dtypes, function
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.graph_import import import_graph_def
from tensorflux.framework.indexed_slices import IndexedSlices
from tensorflux.framework.op_def import define_op, get_op_def
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape

__all__: list = []

_CALL_ATTRS = ["Tin: list(type) >= 0", "Tout: list(type) >= 0", "f: func",
               "config: string = ''", "config_proto: string = ''", "executor_type: string = ''"]

PartitionedCall = define_op("PartitionedCall", inputs=["args: Tin"], outputs=["output: Tout"],
                            attrs=_CALL_ATTRS)
StatefulPartitionedCall = define_op("StatefulPartitionedCall", inputs=["args: Tin"],
                                    outputs=["output: Tout"], attrs=_CALL_ATTRS, stateful=True)
for _op in (PartitionedCall, StatefulPartitionedCall):
    _op.passes_refs = True  # captured variables reach the body by reference


def output_shapes(fn, count: int) -> list:
    """The static output shapes of a func attr value (unknown for a bare name)."""
    if isinstance(fn, function.DefinedFunction):
        return list(fn.output_shapes)
    return [TensorShape(None)] * count


@PartitionedCall.shape_fn
@StatefulPartitionedCall.shape_fn
def _call_shape(args, *, f, Tout):
    return [output_shapes(f, len(Tout))]


def as_outputs(values: list):
    """Kernel results: one output as a value, several as a tuple."""
    return values[0] if len(values) == 1 else tuple(values)


@PartitionedCall.kernel(ctx=True)
@StatefulPartitionedCall.kernel(ctx=True)
def _call_kernel(ctx, *args, f):
    return as_outputs(ctx.run_function(f, args))


def call_function(fn, args, name=None):
    """Adds a call of `fn` (a DefinedFunction) on `args` + its captured inputs.

    Returns:
        The list of output tensors, or the call Operation when `fn` has no outputs.
    """
    graph = graph_mod.get_default_graph()
    function.add_function(graph, fn)
    op_def = StatefulPartitionedCall if fn.stateful else PartitionedCall
    args = list(args) + list(fn.captured_inputs)
    result = op_def(args, Tin=[t.base_dtype for t in fn.input_types], Tout=fn.output_types,
                    f=fn, name=name or op_def.name)
    if not fn.output_types:
        op = graph.get_operations()[-1]  # an empty list output: the op is the one just added
        assert op.type == op_def.name
        return op
    return list(result) if isinstance(result, (list, tuple)) else [result]


# -- gradients ----------------------------------------------------------------------------------


def differentiable(dtype) -> bool:
    base = dtypes.as_dtype(dtype).base_dtype
    return (base.is_floating or base.is_complex) and not dtypes.as_dtype(dtype).is_ref_dtype


def gradient_function(fn, graph=None):
    """The gradient function of `fn`, built once.

    It takes `fn`'s inputs followed by the gradients of its differentiable outputs
    (`float_outputs` positions) and returns the gradients of its differentiable inputs
    (`float_inputs` positions; zeros where an input does not reach an output).
    """
    if fn.gradient is not None:
        return fn.gradient
    # cycle: a module-level import breaks `import tensorflux` (partly initialized module)
    from tensorflux.ops.array import zeros_like
    from tensorflux.ops.autodiff.gradients import gradients

    outer = graph or fn.graph.outer_graph or graph_mod.get_default_graph()
    name = function.unique_name(f"backward_{fn.name}")
    body = function.FuncGraph(name, outer)
    placeholder = get_op_def("Placeholder")
    float_inputs = [i for i, t in enumerate(fn.inputs) if differentiable(t.dtype)]
    float_outputs = [i for i, t in enumerate(fn.outputs) if differentiable(t.dtype)]
    with body.as_default():
        xs = [placeholder(dtype=t.dtype, shape=t.shape, name=f"x{i}")
              for i, t in enumerate(fn.inputs)]
        dys = [placeholder(dtype=fn.outputs[i].dtype.base_dtype, shape=fn.outputs[i].shape,
                           name=f"dy{i}") for i in float_outputs]
        body.inputs.extend(xs + dys)
        ys = [ys_all[i] for i in float_outputs] if (ys_all := _forward(fn, body, xs)) else []
        targets = [xs[i] for i in float_inputs]
        grads = gradients(ys, targets, grad_ys=dys) if ys and targets else [None] * len(targets)
        for x, g in zip(targets, grads):
            if isinstance(g, IndexedSlices):

                g = convert_to_tensor(g)
            body.outputs.append(zeros_like(x) if g is None else g)
    grad = function.DefinedFunction(body, name, control_outputs=[])
    grad.float_inputs = float_inputs
    grad.float_outputs = float_outputs
    function.add_function(outer, grad)
    fn.gradient = grad
    return grad


def _forward(fn, body, xs) -> list:
    """The forward outputs rebuilt in `body` on `xs`: traced again from Python when `fn` was
    traced (keeping tf.cond / tf.while_loop contexts), else copied from its GraphDef."""

    n_args = len(fn.inputs) - len(fn.captured_inputs)
    if fn.retrace is not None:
        for outer, x in zip(fn.captured_inputs, xs[n_args:]):
            body.captures[outer] = x
        return fn.retrace(body, xs[:n_args])
    graph_def = fn.graph.as_graph_def()
    graph_def.ClearField("library")
    consumed = {t for op in fn.graph.get_operations() for t in op._inputs}
    input_map = {t.name: x for t, x in zip(fn.inputs, xs) if t in consumed}
    imported = import_graph_def(graph_def, input_map=input_map, name="forward",
                                return_elements=[t.name for t in fn.outputs])
    return [xs[fn.inputs.index(t)] if t in fn.inputs else y
            for t, y in zip(fn.outputs, imported)]


def output_gradients(op, grads, positions) -> list:
    """The incoming gradients of `op`'s outputs at `positions` (zeros for None), dense."""
    # cycle: a module-level import breaks `import tensorflux` (partly initialized module)
    from tensorflux.ops.array import zeros_like

    result = []
    for i in positions:
        g = grads[i]
        if g is None:
            g = zeros_like(op.outputs[i])
        elif isinstance(g, IndexedSlices):
            g = convert_to_tensor(g)
        result.append(g)
    return result


def _call_grad(op, *grads):
    fn = function.resolve(op.graph, op.get_attr("f"))
    grad = gradient_function(fn, op.graph)
    result = [None] * len(op.inputs)
    if not grad.outputs:
        return result
    values = call_function(grad, list(op.inputs) + output_gradients(op, grads,
                                                                     grad.float_outputs))
    for position, value in zip(grad.float_inputs, values):
        result[position] = value
    return result


PartitionedCall.gradient(_call_grad)
StatefulPartitionedCall.gradient(_call_grad)
