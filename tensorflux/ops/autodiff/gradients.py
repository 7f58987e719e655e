"""`tf.gradients`: reverse-mode differentiation by adding gradient ops to the graph.

The backward graph is built from each op's registered gradient function (`@Op.gradient`,
`tf.RegisterGradient`), walking from `ys` to `xs` over the ops between them in reverse
topological order: an op's gradient function runs once the gradients of all its consumers on a
path to `ys` are known. Several gradients for one tensor are summed (`AddN`); IndexedSlices stay
sparse when all of them are sparse.

Control flow plugs in through `set_control_flow_hooks`: the hooks create a state object for the
ops between `ys` and `xs` that knows about while-loop exits (pending counts, unused exits,
entering/leaving the gradient loop context of an op, zeros for exits).
"""

from __future__ import annotations

import enum

from tensorflux.framework import dtypes
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.indexed_slices import IndexedSlices
from tensorflux.framework.op_def import GRADIENTS
from tensorflux.framework.registry import caller_location
from tensorflux.framework.tensor import Operation, Tensor
from tensorflux.framework.tensor_conversion import (
    convert_to_tensor,
    register_tensor_conversion_function,
)
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.control_flow import primitives as control_flow_ops

__all__ = ["gradients", "RegisterGradient", "NotDifferentiable", "no_gradient",
           "AggregationMethod", "stop_gradient_ops", "hessians", "get_gradient_function"]

_CONTROL_FLOW_HOOKS = [None]


def set_control_flow_hooks(hooks) -> None:
    """Installs `hooks.create_state(between_op_list, between_ops, colocate) -> state or None`.

    The state may implement (all optional): `pending_count_adjust(pending, between_ops)`,
    `process_unused_loop_exits(pending, to_ops) -> [Tensor]`, `enter_grad_context(op)`,
    `exit_grad_context(op)`, `zeros_like_for_exit(tensor)`, `is_loop_exit(op)`,
    `post_processing()`, and, to differentiate a group of ops (a while loop) as one node:
    `redirect` ({op: representative op} — pending counts of the group's ops go to the
    representative) and `backprop_group(op, grads) -> [Tensor] or None` (for a representative:
    adds the gradients of the group's inputs to `grads` and returns those inputs; None for an
    ordinary op). Control flow is in control_flow_state.py.
    """
    _CONTROL_FLOW_HOOKS[0] = hooks


class AggregationMethod:
    """How gradients of one tensor are combined (all are sums; kept for API compatibility)."""

    ADD_N = 0
    DEFAULT = ADD_N
    EXPERIMENTAL_TREE = 1
    EXPERIMENTAL_ACCUMULATE_N = 2


class RegisterGradient:
    """Decorator registering a gradient function for an op type (TF1 `tf.RegisterGradient`)."""

    def __init__(self, op_type: str):
        if not isinstance(op_type, str):
            raise TypeError("op_type must be a string")
        self._op_type = op_type

    def __call__(self, fn):
        GRADIENTS.register(self._op_type, fn, caller_location(2))
        return fn


def NotDifferentiable(op_type: str) -> None:  # noqa: N802 - TF1 name
    """Declares that ops of `op_type` have no gradient (their inputs get None)."""
    GRADIENTS.register(op_type, None, caller_location(2))


no_gradient = NotDifferentiable


def _gradient_function(op: Operation):
    override = op._attrs.get("_gradient_op_type")
    if override is not None and override in GRADIENTS:
        return GRADIENTS.lookup(override), True
    if op.type in GRADIENTS:
        return GRADIENTS.lookup(op.type), True
    return None, not op.op_def.differentiable


def get_gradient_function(op: Operation):
    """The gradient function `tf.gradients` would use for `op` (TF's `ops.get_gradient_function`).

    Honours `gradient_override_map`. Returns None for an op without inputs and for op types
    declared not differentiable.

    Raises:
        LookupError: no gradient is registered for the op's type.
    """
    if not op.inputs:
        return None
    fn, known = _gradient_function(op)
    if fn is None and not known:
        raise LookupError(f"No gradient defined for operation '{op.name}' (op type: {op.type})")
    return fn


def _gate(graph, grads) -> list:
    """TF's gate_gradients: none of an op's input gradients is available before all of them
    are computed. NOTE: this keeps an update fed by one of them (ApplyAdagrad on a weight) from
    overwriting, in place, a value that computing another one still reads (that weight)."""

    present = [g.values if isinstance(g, IndexedSlices) else g for g in grads if g is not None]
    with graph.name_scope("tuple"):
        gate = control_flow_ops.group(*present)
        gated = []
        with graph.control_dependencies([gate]):
            for g in grads:
                name = "control_dependency"
                if isinstance(g, IndexedSlices):
                    gated.append(IndexedSlices(array_ops.identity(g.values, name=name),
                                               g.indices, g.dense_shape))
                else:
                    gated.append(None if g is None else array_ops.identity(g, name=name))
    return gated


def _as_tensors(values):
    if isinstance(values, (Tensor, IndexedSlices)) or not isinstance(values, (list, tuple)):
        return [values]
    return list(values)


def _reachable_from(ops) -> set:
    """Ops reached forward from `ops` through backpropagatable (float, complex, resource,
    variant) tensors only: as in TF, an integer, bool or string tensor carries no gradient, so
    a path through one is cut (and an integer x gets None)."""
    reached = set()
    stack = list(ops)
    while stack:
        op = stack.pop()
        if op in reached:
            continue
        reached.add(op)
        for tensor in op._outputs:
            if _is_trainable(tensor):
                stack.extend(tensor._consumers)
    return reached


def _between(from_ops, to_ops, reached) -> list:
    """Ops on a path from `from_ops` to `to_ops`, in creation order."""
    between = set()
    stack = [op for op in to_ops if op in reached]
    while stack:
        op = stack.pop()
        if op in between:
            continue
        between.add(op)
        for tensor in op._inputs:
            if tensor.op in reached:
                stack.append(tensor.op)
    return sorted(between, key=lambda op: op._id)


def _is_trainable(tensor) -> bool:
    return tensor.dtype.base_dtype in (dtypes.float16, dtypes.float32, dtypes.float64,
                                       dtypes.complex64, dtypes.complex128, dtypes.bfloat16,
                                       dtypes.resource, dtypes.variant)


def gradients(ys, xs, grad_ys=None, name="gradients", colocate_gradients_with_ops=False,
              gate_gradients=False, aggregation_method=None, stop_gradients=None,
              unconnected_gradients="none"):
    """Symbolic derivatives of `sum(ys)` with respect to each of `xs`.

    Args:
        ys: a Tensor or list of Tensors to differentiate.
        xs: a Tensor (or Variable) or list of them.
        grad_ys: optional gradients of `ys` (default: ones of each y's shape).
        stop_gradients: Tensors treated as constants.
        unconnected_gradients: "none" (None for unconnected xs) or "zero".

    Returns:
        A list with one gradient per x: a Tensor, an IndexedSlices, or None.

    Raises:
        LookupError: an op on the path has no registered gradient.
        ValueError: `grad_ys` does not match `ys`.

    Example:
        >>> dx, = tf.gradients(tf.reduce_sum(x * x), [x])
    """

    unconnected_gradients = getattr(unconnected_gradients, "value", unconnected_gradients)
    if unconnected_gradients not in ("none", "zero"):
        raise ValueError(f"Unknown value for unconnected_gradients: "
                         f"{unconnected_gradients!r} (expected 'none' or 'zero')")
    graph = graph_mod.get_default_graph()
    ys = [convert_to_tensor(y) if not isinstance(y, (Tensor, IndexedSlices)) else y
          for y in _as_tensors(ys)]
    xs_in = _as_tensors(xs)
    xs = [x if isinstance(x, Tensor) else convert_to_tensor(x, as_ref=False)
          for x in (_handle_of(x) for x in xs_in)]
    grad_ys = [None] * len(ys) if grad_ys is None else _as_tensors(grad_ys)
    if len(grad_ys) != len(ys):
        raise ValueError(f"Passed {len(grad_ys)} grad_ys for {len(ys)} ys")
    stop = {t.op for t in _as_tensors(stop_gradients)} if stop_gradients is not None else set()

    with graph.name_scope(name):
        grads: dict = {}
        for i, (y, grad_y) in enumerate(zip(ys, grad_ys)):
            if grad_y is None:
                with graph.name_scope(f"grad_ys_{i}"):
                    grad_y = array_ops.fill(array_ops.shape(y),
                                            convert_to_tensor(1, dtype=y.dtype.base_dtype))
            elif not isinstance(grad_y, (Tensor, IndexedSlices)):
                grad_y = convert_to_tensor(grad_y, dtype=y.dtype.base_dtype)
            _add_grad(grads, y, grad_y)

        to_ops = [y.op for y in ys]
        from_ops = [x.op for x in xs]
        reached = _reachable_from(from_ops)
        between_list = _between(from_ops, to_ops, reached)
        between = set(between_list)
        state = None
        hooks = _CONTROL_FLOW_HOOKS[0]
        if hooks is not None:
            state = hooks.create_state(between_list, between, colocate_gradients_with_ops)

        pending: dict = {op: 0 for op in between_list}
        for op in between_list:
            for tensor in op._inputs:
                if tensor.op in between:
                    pending[tensor.op] += 1
        if state is not None and hasattr(state, "pending_count_adjust"):
            state.pending_count_adjust(pending, between)

        to_set = set(to_ops)
        ready = [op for op in to_set if pending.get(op, 0) == 0 and op in between]
        seen_ready = set(ready)
        if state is not None and hasattr(state, "process_unused_loop_exits"):
            for tensor in state.process_unused_loop_exits(pending, to_set):
                if tensor.op not in seen_ready:
                    ready.append(tensor.op)
                    seen_ready.add(tensor.op)
        ready.sort(key=lambda op: op._id)
        xs_ops = set(from_ops)
        redirect = getattr(state, "redirect", None) or {}
        group = getattr(state, "backprop_group", None)
        while ready:
            op = ready.pop()
            inputs = group(op, grads) if group is not None else None
            if inputs is None:
                _backprop_op(op, grads, state, stop, xs_ops, graph, colocate_gradients_with_ops,
                             gate_gradients)
                inputs = op._inputs
            for tensor in inputs:
                src = redirect.get(tensor.op, tensor.op)
                if src in pending:
                    pending[src] -= 1
                    if pending[src] == 0 and src not in seen_ready:
                        seen_ready.add(src)
                        ready.append(src)
        _check_loop_entries(graph, grads, between, xs_ops)
        if state is not None and hasattr(state, "post_processing"):
            state.post_processing()

        results = []
        for x in xs:
            grad = _aggregated(grads, x)
            if grad is None and unconnected_gradients == "zero":
                grad = array_ops.zeros_like(x)
            results.append(grad)
        return results


def _handle_of(x):
    if isinstance(x, Tensor):
        return x
    if getattr(x, "_is_resource_variable", False):
        return x.handle  # the gradients of all its reads meet at the handle
    element = getattr(x, "_as_graph_element", None)
    if element is not None and not isinstance(x, IndexedSlices):
        result = element()
        if isinstance(result, Tensor):
            return result
    return x


def _add_grad(grads: dict, tensor: Tensor, grad) -> None:
    grads.setdefault(tensor.op, [[] for _ in tensor.op._outputs])[tensor.value_index].append(grad)


def _aggregated(grads: dict, tensor: Tensor):
    per_op = grads.get(tensor.op)
    if per_op is None:
        return None
    items = per_op[tensor.value_index]
    result = aggregate(items)
    per_op[tensor.value_index] = [result] if result is not None else []
    return result


def aggregate(items):
    """Sums a list of gradients (Tensors and/or IndexedSlices); None when empty."""

    items = [g for g in items if g is not None]
    if not items:
        return None
    if len(items) == 1:
        return items[0]
    if all(isinstance(g, IndexedSlices) for g in items):
        values = array_ops.concat([g.values for g in items], 0)
        indices = array_ops.concat([g.indices for g in items], 0)
        return IndexedSlices(values, indices, items[0].dense_shape)
    dense = [convert_to_tensor(g) for g in items]
    return math_ops.add_n(dense)


def _backprop_op(op, grads, state, stop, xs_ops, graph, colocate, gate) -> None:
    out_grads = []
    for tensor in op._outputs:
        out_grads.append(_aggregated(grads, tensor) if op in grads else None)
    if op in stop or all(g is None for g in out_grads):
        return
    grad_fn, known = _gradient_function(op)
    if grad_fn is None:
        if known:
            return
        if op in xs_ops:
            return
        raise LookupError(f"No gradient defined for operation '{op.name}' (op type: {op.type})."
                          " Register one with tf.RegisterGradient or declare it with "
                          "tf.NotDifferentiable.")
    if state is not None and hasattr(state, "enter_grad_context"):
        state.enter_grad_context(op)
    try:
        # Control-flow ops (Switch) get None for outputs without a gradient: zeros must be
        # dead exactly when that output is, which only their gradient function can arrange.
        fill = not op.op_def.is_control_flow
        for i, tensor in enumerate(op._outputs):
            if fill and out_grads[i] is None and _is_trainable(tensor):
                if state is not None and hasattr(state, "zeros_like_for_exit") and \
                        getattr(state, "is_loop_exit", lambda o: False)(op):
                    out_grads[i] = state.zeros_like_for_exit(tensor)
                else:
                    out_grads[i] = array_ops.zeros_like(tensor)
        scope = f"{op.name}_grad"
        with graph.name_scope(scope) as grad_scope:
            if colocate:
                with graph.colocate_with(op):
                    in_grads = grad_fn(op, *out_grads)
            else:
                in_grads = grad_fn(op, *out_grads)
        in_grads = _as_tensors(in_grads) if in_grads is not None else [None] * len(op._inputs)
        if len(in_grads) != len(op._inputs):
            raise ValueError(f"Gradient function for op '{op.name}' ({op.type}) returned "
                             f"{len(in_grads)} gradients for {len(op._inputs)} inputs.")
        if gate and op._control_flow_context is None and \
                sum(g is not None for g in in_grads) > 1:
            with graph.name_scope(grad_scope):
                in_grads = _gate(graph, in_grads)
        for tensor, grad in zip(op._inputs, in_grads):
            if grad is None:
                continue
            if isinstance(grad, Tensor) and tensor.get_shape().is_fully_defined() and \
                    grad.get_shape().ndims is None:
                grad.set_shape(tensor.get_shape())
            _add_grad(grads, tensor, grad)
    finally:
        if state is not None and hasattr(state, "exit_grad_context"):
            state.exit_grad_context(op)


def _check_loop_entries(graph, grads: dict, between, xs_ops) -> None:
    """Inside a while-loop body, a gradient that reached the loop's own Switch would have to
    pass through a loop variable's initial value: ValueError, as TF1."""
    context = graph._control_flow_context
    if context is None or not getattr(context, "is_while_context", False):
        return
    for op, per_output in grads.items():
        if op.type in ("Switch", "RefSwitch") and op in between and \
                op._control_flow_context is context and \
                any(g is not None for items in per_output for g in items):
            _no_gradient_through_loop_entry(op, xs_ops)


def _no_gradient_through_loop_entry(switch_op, xs_ops) -> None:
    """Raises naming the nearest requested op behind `switch_op`."""
    target, queue, seen = None, [switch_op], set()
    while queue and target is None:
        op = queue.pop(0)
        if op in seen:
            continue
        seen.add(op)
        if op in xs_ops:
            target = op
        queue.extend(t.op for t in op._inputs)
    name = target.name if target is not None else switch_op.name
    raise ValueError(
        f"Cannot compute gradient inside while loop with respect to op '{name}'. We do not "
        "support taking the gradient wrt or through the initial value of a loop variable. "
        "Gradients can be computed through loop invariants or wrt the input parameters to the "
        "loop body.")


def stop_gradient_ops(tensors) -> set:
    return {t.op for t in _as_tensors(tensors)}


def hessians(ys, xs, name="hessians", colocate_gradients_with_ops=False, gate_gradients=False,
             aggregation_method=None):
    """Second derivatives of `sum(ys)` for each x (flattened x: a [n, n] Hessian, reshaped)."""

    results = []
    xs = _as_tensors(xs)
    for x, grad in zip(xs, gradients(ys, xs, name=name)):
        if grad is None:
            results.append(None)
            continue
        flat = array_ops.reshape(convert_to_tensor(grad), [-1])
        rows = [gradients(flat[i], x)[0] for i in range(flat.shape.num_elements())]
        rows = [array_ops.zeros_like(x) if r is None else convert_to_tensor(r) for r in rows]
        stacked = array_ops.stack(rows)
        results.append(array_ops.reshape(
            stacked, array_ops.concat([array_ops.shape(x), array_ops.shape(x)], 0)))
    return results


def _indexed_slices_to_tensor(value, dtype=None, name=None, as_ref=False):
    """Densifies an IndexedSlices (the sum of its rows) where an op needs a Tensor."""

    if dtype is not None and not dtype.is_compatible_with(value.dtype):
        raise ValueError(f"Tensor conversion requested dtype {dtype.name} for IndexedSlices "
                         f"with dtype {value.dtype.name}")
    if value.dense_shape is None:
        raise ValueError(f"Tensor conversion requested for IndexedSlices without dense_shape: "
                         f"{value!r}")

    return math_ops.unsorted_segment_sum(value.values, value.indices,
                                         array_ops.gather(value.dense_shape, 0), name=name)


register_tensor_conversion_function(IndexedSlices, _indexed_slices_to_tensor)


NoGradient = NotDifferentiable


class UnconnectedGradients(str, enum.Enum):
    """What `tf.gradients` returns for an x that no y depends on: None or zeros.

    NOTE: the members are also strings ("none", "zero"), so `tf.gradients` accepts either form.
    """

    NONE = "none"
    ZERO = "zero"
