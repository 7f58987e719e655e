"""Functional control flow: `If`, `StatelessIf`, `Case`, `While`, `StatelessWhile`, `For`.

Unlike `tf.cond` / `tf.while_loop` (Switch/Merge dataflow), these ops hold their branches and
bodies as functions (func attrs) and their kernels call them with `ctx.run_function`; TF 1.15+
writes them into GraphDefs. The Python wrappers (`if_`, `case_`, `while_`, `for_`) take
`DefinedFunction`s, `tf.function` traces or Python callables (traced on the inputs'
signature); tensors the callables capture become extra inputs shared by every branch (and
loop variables passed through unchanged, for loops). Gradients: `If`/`StatelessIf`/`Case`
are differentiated branch by branch (an `If`/`Case` of the branches' gradient functions);
`While`, `StatelessWhile` and `For` by `_FunctionalLoopGrad`, which reruns the loop keeping each
iteration's variables and applies the body's gradient function backwards (first order only).
"""

from __future__ import annotations

import time

import numpy as np

from tensorflux.framework import dtypes, errors, function
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops.control_flow import function_call
from tensorflux.ops.control_flow.function_call import as_outputs, output_shapes

__all__: list = []

_IF_ATTRS = ["Tcond: type", "Tin: list(type) >= 0", "Tout: list(type) >= 0",
             "then_branch: func", "else_branch: func", "output_shapes: list(shape) = []"]
If = define_op("If", inputs=["cond: Tcond", "input: Tin"], outputs=["output: Tout"],
               attrs=_IF_ATTRS, stateful=True)
StatelessIf = define_op("StatelessIf", inputs=["cond: Tcond", "input: Tin"],
                        outputs=["output: Tout"], attrs=_IF_ATTRS)
Case = define_op("Case", inputs=["branch_index: int32", "input: Tin"], outputs=["output: Tout"],
                 attrs=["Tin: list(type) >= 0", "Tout: list(type) >= 0",
                        "branches: list(func) >= 1", "output_shapes: list(shape) = []"],
                 stateful=True)
_WHILE_ATTRS = ["T: list(type) >= 0", "cond: func", "body: func",
                "output_shapes: list(shape) = []", "parallel_iterations: int = 10"]
While = define_op("While", inputs=["input: T"], outputs=["output: T"], attrs=_WHILE_ATTRS,
                  stateful=True)
StatelessWhile = define_op("StatelessWhile", inputs=["input: T"], outputs=["output: T"],
                           attrs=_WHILE_ATTRS)
For = define_op("For", inputs=["start: int32", "limit: int32", "delta: int32", "input: T"],
                outputs=["output: T"], attrs=["T: list(type) >= 0", "body: func"],
                stateful=True)
for _op in (If, StatelessIf, Case, While, StatelessWhile, For):
    _op.passes_refs = True


# -- shapes ---------------------------------------------------------------------------------


def _merged(functions, count, declared) -> list:
    if declared:
        return [list(declared)]
    shapes = None
    for fn in functions:
        these = output_shapes(fn, count)
        shapes = these if shapes is None else [
            a if a == b else _most_specific(a, b) for a, b in zip(shapes, these)]
    return [shapes]


def _most_specific(a: TensorShape, b: TensorShape) -> TensorShape:
    if a.ndims is None or b.ndims is None or a.ndims != b.ndims:
        return TensorShape(None)
    return TensorShape([x if x == y else None for x, y in zip(a.as_list(), b.as_list())])


@If.shape_fn
@StatelessIf.shape_fn
def _if_shape(cond, inputs, *, then_branch, else_branch, Tout, output_shapes):
    return _merged([then_branch, else_branch], len(Tout), output_shapes)


@Case.shape_fn
def _case_shape(branch_index, inputs, *, branches, Tout, output_shapes):
    if branch_index.ndims not in (None, 0):
        raise ValueError(f"branch_index must be a scalar, got shape {branch_index}")
    return _merged(list(branches), len(Tout), output_shapes)


@While.shape_fn
@StatelessWhile.shape_fn
def _while_shape(inputs, *, body, T, output_shapes):
    if output_shapes:
        return [list(output_shapes)]
    body_shapes = function_call.output_shapes(body, len(T))
    return [[_most_specific(a, b) for a, b in zip(inputs, body_shapes)]]


@For.shape_fn
def _for_shape(start, limit, delta, inputs, *, body, T):
    body_shapes = output_shapes(body, len(T))
    return [[_most_specific(a, b) for a, b in zip(inputs, body_shapes)]]


# -- kernels --------------------------------------------------------------------------------


def _truthy(value) -> bool:
    """TF's If/While predicate: a scalar's truth (non-empty for strings), else non-empty."""
    array = np.asarray(value)
    if array.ndim == 0:
        item = array.item()
        return len(item) > 0 if isinstance(item, (bytes, str)) else bool(item)
    return array.size > 0


def _deadline(ctx):
    """When the step's timeout (RunOptions.timeout_in_ms, else the session's
    operation_timeout_in_ms) ends, counted from now; None without one."""
    options = ctx.options
    timeout_ms = getattr(options, "timeout_in_ms", 0) if options is not None else 0
    if not timeout_ms:
        timeout_ms = getattr(ctx.session, "default_timeout_ms", 0) or 0
    return time.monotonic() + timeout_ms / 1000.0 if timeout_ms > 0 else None


def _check_cancelled(ctx, deadline=None) -> None:
    # NOTE: a loop kernel holds its executor's thread, which therefore cannot notice the
    # step's deadline: the loop checks it itself.
    if ctx.cancellation is not None and ctx.cancellation.is_cancelled:
        raise ctx.cancellation.error
    if deadline is not None and time.monotonic() > deadline:
        raise errors.DeadlineExceededError(
            None, None, "Timed out in a functional loop (RunOptions.timeout_in_ms / "
            "ConfigProto.operation_timeout_in_ms).")


@If.kernel(ctx=True)
@StatelessIf.kernel(ctx=True)
def _if_kernel(ctx, cond, *inputs, then_branch, else_branch):
    branch = then_branch if _truthy(cond) else else_branch
    return as_outputs(ctx.run_function(branch, inputs))


@Case.kernel(ctx=True)
def _case_kernel(ctx, branch_index, *inputs, branches):
    index = int(branch_index)
    if index < 0 or index >= len(branches):
        index = len(branches) - 1  # TF: an out-of-range index runs the last (default) branch
    return as_outputs(ctx.run_function(branches[index], inputs))


def _loop_values(values, inputs, loop: str = "While"):
    if len(values) != len(inputs):
        raise errors.InvalidArgumentError(
            None, None, f"{loop} loop body returned {len(values)} arguments. Expected: "
            f"{len(inputs)}.")
    # A ref loop variable (a captured variable) is passed through: it stays the variable.
    return [old if hasattr(old, "read") else new for old, new in zip(inputs, values)]


def _cond_value(results):
    if len(results) != 1:
        raise errors.InvalidArgumentError(
            None, None, "Expected a single scalar return value from the While loop's cond, got "
            f"{len(results)} tensors.")
    return results[0]


@While.kernel(ctx=True)
@StatelessWhile.kernel(ctx=True)
def _while_kernel(ctx, *inputs, cond, body):
    values = list(inputs)
    deadline = _deadline(ctx)
    while _truthy(_cond_value(ctx.run_function(cond, values))):
        _check_cancelled(ctx, deadline)
        values = _loop_values(ctx.run_function(body, values), inputs)
    return as_outputs(values)


@For.kernel(ctx=True)
def _for_kernel(ctx, start, limit, delta, *inputs, body):
    for arg, value in (("start", start), ("limit", limit), ("delta", delta)):
        if np.ndim(value) != 0:
            raise errors.InvalidArgumentError(
                None, None, f"For: {arg} must be a scalar, got shape {list(np.shape(value))}.")
    start, limit, delta = int(start), int(limit), int(delta)
    if delta == 0 or (start < limit and delta < 0) or (start > limit and delta > 0):
        if delta == 0 or start != limit:
            raise errors.InvalidArgumentError(
                None, None, f"Invalid start/limit/delta: {start} {limit} {delta} (For: not a "
                "finite range; delta must move start towards limit).")
    values = list(inputs)
    deadline = _deadline(ctx)
    for i in range(start, limit, delta):
        _check_cancelled(ctx, deadline)
        values = _loop_values(ctx.run_function(body, [np.int32(i)] + values), inputs, "For")
    return as_outputs(values)


# -- gradients ------------------------------------------------------------------------------


def _branch_grad(op, grads, branches, make):
    graph = op.graph
    resolved = [function.resolve(graph, b) for b in branches]
    grad_fns = [function_call.gradient_function(fn, graph) for fn in resolved]
    inputs = list(op.inputs)[1:]
    result = [None] * len(op.inputs)
    first = grad_fns[0]
    if not first.outputs:
        return result
    dys = function_call.output_gradients(op, grads, first.float_outputs)
    values = make(op.inputs[0], inputs + dys, grad_fns)
    for position, value in zip(first.float_inputs, values):
        result[1 + position] = value
    return result


@If.gradient
def _if_grad(op, *grads):
    return _branch_grad(op, grads, [op.get_attr("then_branch"), op.get_attr("else_branch")],
                        lambda c, ins, g: _if_op(If, c, ins, g[0], g[1]))


@StatelessIf.gradient
def _stateless_if_grad(op, *grads):
    return _branch_grad(op, grads, [op.get_attr("then_branch"), op.get_attr("else_branch")],
                        lambda c, ins, g: _if_op(StatelessIf, c, ins, g[0], g[1]))


@Case.gradient
def _case_grad(op, *grads):
    return _branch_grad(op, grads, list(op.get_attr("branches")),
                        lambda c, ins, g: _case_op(c, ins, g))


# The gradient of a functional loop reruns the loop forward, keeping every iteration's loop
# variables, then applies the body's gradient function from the last iteration back.
_FunctionalLoopGrad = define_op(
    "_FunctionalLoopGrad", inputs=["input: T", "dy: Tgrad"], outputs=["dx: Tgrad"],
    attrs=["T: list(type) >= 0", "Tgrad: list(type) >= 0", "cond: func", "body: func",
           "body_grad: func", "loop: {'while', 'for'} = 'while'"],
    stateful=True)  # no gradient registered: a second derivative raises LookupError
_FunctionalLoopGrad.passes_refs = True


@_FunctionalLoopGrad.shape_fn
def _loop_grad_shape(inputs, dys, *, Tgrad):
    return [list(dys)]


@_FunctionalLoopGrad.kernel(ctx=True)
def _loop_grad_kernel(ctx, *args, T, cond, body, body_grad, loop):
    inputs, grads = list(args[:len(T)]), list(args[len(T):])
    history = []
    deadline = _deadline(ctx)
    if loop == "while":
        values = inputs
        while _truthy(ctx.run_function(cond, values)[0]):
            _check_cancelled(ctx, deadline)
            history.append(values)
            values = _loop_values(ctx.run_function(body, values), inputs)
    else:
        start, limit, delta = (int(v) for v in inputs[:3])
        values = inputs[3:]
        for i in range(start, limit, delta):
            _check_cancelled(ctx, deadline)
            history.append([np.int32(i)] + values)
            values = _loop_values(ctx.run_function(body, history[-1]), inputs[3:])
    for entry in reversed(history):
        _check_cancelled(ctx, deadline)
        grads = ctx.run_function(body_grad, entry + grads)
    return as_outputs(grads)


def _loop_grad(op, grads, loop: str):
    graph = op.graph
    body = function.resolve(graph, op.get_attr("body"))
    body_grad = function_call.gradient_function(body, graph)
    offset = 3 if loop == "for" else 0
    result = [None] * len(op.inputs)
    if not body_grad.outputs:
        return result
    dys = function_call.output_gradients(op, grads, body_grad.float_outputs)
    cond = function.resolve(graph, op.get_attr("cond")) if loop == "while" else body
    values = _FunctionalLoopGrad(list(op.inputs), dys, Tgrad=[d.dtype.base_dtype for d in dys],
                                 cond=cond, body=body, body_grad=body_grad, loop=loop,
                                 name=f"{op.name.split('/')[-1]}_grad")
    values = values if isinstance(values, (list, tuple)) else [values]
    for position, value in zip(body_grad.float_outputs, values):
        result[offset + position] = value
    return result


@While.gradient
def _while_grad(op, *grads):
    return _loop_grad(op, grads, "while")


@StatelessWhile.gradient
def _stateless_while_grad(op, *grads):
    return _loop_grad(op, grads, "while")


@For.gradient
def _for_grad(op, *grads):
    return _loop_grad(op, grads, "for")


# -- Python wrappers --------------------------------------------------------------------------


def _op_outputs(result, n):
    if n == 0:  # an empty list output: the op is the one just added
        return graph_mod.get_default_graph().get_operations()[-1]
    return list(result) if isinstance(result, (list, tuple)) else [result]


def _register(functions):
    graph = graph_mod.get_default_graph()
    for fn in functions:
        function.add_function(graph, fn)


def _if_op(op_def, cond, inputs, then_fn, else_fn, name=None):
    _register([then_fn, else_fn])
    return _op_outputs(op_def(cond, list(inputs), Tout=then_fn.output_types,
                              then_branch=then_fn, else_branch=else_fn,
                              name=name or op_def.name), len(then_fn.output_types))


def _case_op(branch_index, inputs, branch_fns, name=None):
    _register(branch_fns)
    return _op_outputs(Case(branch_index, list(inputs), Tout=branch_fns[0].output_types,
                            branches=tuple(branch_fns), name=name or "Case"),
                       len(branch_fns[0].output_types))


def _trace_all(fns, inputs, prefix_specs=(), passthrough=()) -> tuple:
    """DefinedFunctions for `fns` on `inputs` sharing one list of captured tensors; functions
    marked in `passthrough` also return the captures (loop bodies)."""
    specs = list(prefix_specs) + [(t.dtype.base_dtype, t.shape) for t in inputs]
    traced = []
    captures: list = []
    for attempt in range(2):
        traced = []
        for k, fn in enumerate(fns):
            defined = _defined(fn)
            if defined is None:
                defined = _trace(fn, specs, captures, k in passthrough)
            traced.append(defined)
        found = []
        for defined in traced:
            for t in defined.captured_inputs:
                if t not in found:
                    found.append(t)
        if found == captures or attempt == 1:
            break
        captures = found
    for defined in traced:
        if list(defined.captured_inputs) != captures:
            raise ValueError(f"Function '{defined.name}' captures {defined.captured_inputs} "
                             f"but its siblings capture {captures}; pass Python callables (or "
                             "functions without captures) so the captures can be shared.")
    return traced, captures


def _defined(fn):
    if isinstance(fn, function.DefinedFunction):
        return fn
    return getattr(fn, "function_def_object", None)


def _trace(fn, specs, captures, passthrough):
    tensors = [object() for _ in specs]
    spec_of = {id(t): s for t, s in zip(tensors, specs)}
    n_args = len(specs)

    def body(*args):
        result = fn(*args)
        if passthrough:
            result = list(result) if isinstance(result, (list, tuple)) else [result]
            graph = graph_mod.get_default_graph()
            result += graph.inputs[n_args:n_args + len(captures)]
        return result

    defined, _ = function.trace(body, tuple(tensors), {}, lambda leaf: spec_of.get(id(leaf)),
                                function.unique_name(getattr(fn, "__name__", "branch")),
                                captures=captures)
    return defined


def if_(cond, inputs, then_branch, else_branch, name=None):
    """Adds an `If` op (`StatelessIf` when both branches are stateless):
    `then_branch(*inputs)` when `cond` is true, else `else_branch(*inputs)`.

    Returns:
        The list of output tensors (the Operation when the branches return nothing).
    """
    inputs = [convert_to_tensor(t) for t in inputs]
    (then_fn, else_fn), captures = _trace_all([then_branch, else_branch], inputs)
    if then_fn.output_types != else_fn.output_types:
        raise TypeError(f"If: then_branch returns {then_fn.output_types} but else_branch "
                        f"returns {else_fn.output_types}.")
    op_def = If if then_fn.stateful or else_fn.stateful else StatelessIf
    return _if_op(op_def, convert_to_tensor(cond), inputs + captures, then_fn, else_fn, name)


def case_(branch_index, inputs, branches, name=None):
    """Adds a `Case` op running `branches[branch_index](*inputs)` (the last branch when the
    index is out of range)."""
    inputs = [convert_to_tensor(t) for t in inputs]
    if not branches:
        raise ValueError("Case: branches must not be empty.")
    fns, captures = _trace_all(list(branches), inputs)
    for fn in fns[1:]:
        if fn.output_types != fns[0].output_types:
            raise TypeError(f"Case: branches return different types: {fns[0].output_types} vs "
                            f"{fn.output_types}.")
    return _case_op(convert_to_tensor(branch_index), inputs + captures, fns, name)


def while_(inputs, cond, body, parallel_iterations=10, name=None):
    """Adds a `While` op (`StatelessWhile` when `cond` and `body` are stateless):
    `inputs = body(*inputs)` while `cond(*inputs)`; returns the final
    loop variables (captured tensors of the callables are loop variables passed through)."""
    inputs = [convert_to_tensor(t) for t in inputs]
    (cond_fn, body_fn), captures = _trace_all([cond, body], inputs, passthrough=(1,))
    types = [t.dtype.base_dtype for t in inputs + captures]
    # As in TF, a body returning another number of values fails when the loop runs.
    if len(body_fn.output_types) == len(types) and body_fn.output_types != types:
        raise TypeError(f"While: the body returns {body_fn.output_types} for loop variables "
                        f"of types {types}.")
    _register([cond_fn, body_fn])
    op_def = While if cond_fn.stateful or body_fn.stateful else StatelessWhile
    result = _op_outputs(op_def(inputs + captures, cond=cond_fn, body=body_fn,
                                parallel_iterations=parallel_iterations,
                                name=name or op_def.name), len(types))
    return result[:len(inputs)]


def for_(start, limit, delta, inputs, body, name=None):
    """Adds a `For` op: `inputs = body(i, *inputs)` for i in range(start, limit, delta)."""
    inputs = [convert_to_tensor(t) for t in inputs]
    (body_fn,), captures = _trace_all([body], inputs,
                                      prefix_specs=[(dtypes.int32, TensorShape([]))],
                                      passthrough=(0,))
    _register([body_fn])
    result = _op_outputs(For(start, limit, delta, inputs + captures, body=body_fn,
                             name=name or "For"), len(inputs) + len(captures))
    return result[:len(inputs)]

