"""`tf.while_loop`: a loop built from Enter, Merge, LoopCond, Switch, NextIteration and Exit.

For each loop variable the graph holds

    Enter(x) -> Merge(Enter, NextIteration) -> Switch(., LoopCond(cond(merges)))
        output_false -> Exit                 (the loop's result, in the enclosing frame)
        output_true  -> Identity -> body -> NextIteration -> back into the Merge

and the executor runs each iteration as a tag of the loop's frame, so independent work of
several iterations overlaps (up to `parallel_iterations`). Values the loop reads from outside
enter once as loop invariants (`Enter(is_constant=True)`), routed by the `WhileContext`.
"""

from __future__ import annotations

from tensorflux.framework import dtypes, nest
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.indexed_slices import IndexedSlices
from tensorflux.framework.sparse_tensor import SparseTensor
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape, as_shape
from tensorflux.ops import math as math_ops
from tensorflux.ops.array import constants as constant_ops
from tensorflux.ops.array import forwarding
from tensorflux.ops.control_flow import util
from tensorflux.ops.control_flow.context import (
    ControlFlowContext,
    bare_scope,
    from_flows,
    is_tensor_array,
    to_flow,
)
from tensorflux.ops.control_flow.primitives import (
    enter,
    exit,
    loop_cond,
    merge,
    next_iteration,
    switch,
)

__all__ = ["while_loop"]


def shape_less_than_or_equal(shape: TensorShape, bound: TensorShape) -> bool:
    """True when every shape `shape` allows is allowed by `bound` (bound is less specific)."""
    if bound.ndims is None:
        return True
    if shape.ndims != bound.ndims:
        return False
    return all(b is None or a == b for a, b in zip(shape.as_list(), bound.as_list()))


class WhileContext(ControlFlowContext):
    """The context of one while loop (one executor frame, named `name`).

    Attributes:
        name: the frame name, unique in the graph.
        loop_enters, merges, switches, body_inputs, next_iterations, loop_exits: the loop's
            machinery, one per flat loop variable (TensorArrays count by their flow).
        pivot: the LoopCond output. Ops of the predicate with no input hang off
            `pivot_for_pred` (the first Merge), ops of the body off `pivot_for_body` (the first
            body Identity).
    """

    is_while_context = True

    def __init__(self, parallel_iterations: int = 10, back_prop: bool = True,
                 swap_memory: bool = False, name: str = "while_context"):
        super().__init__()
        self.name = self.graph.unique_name(name)
        self.parallel_iterations = parallel_iterations
        self.back_prop = back_prop
        self.swap_memory = swap_memory
        self.pivot = None
        self.pivot_for_pred = None
        self.pivot_for_body = None
        self.loop_enters: list = []
        self.merges: list = []
        self.switches: list = []
        self.body_inputs: list = []
        self.next_iterations: list = []
        self.loop_exits: list = []
        self.forward_state = None  # gradient bookkeeping (control_flow_state.py)

    def get_control_pivot(self):
        return self.pivot_for_body if self.pivot_for_body is not None else self.pivot_for_pred

    @property
    def invariants(self) -> dict:
        """External tensor -> its loop-invariant Enter output, for every value routed in."""
        return dict(self._external)

    def make_enter(self, value, is_constant: bool):
        with bare_scope(self.graph):
            result = enter(value, self.name, is_constant=is_constant,
                           parallel_iterations=self.parallel_iterations)
        result.op._control_flow_context = self
        self.graph.prevent_feeding(result)
        return result

    def add_value(self, tensor):
        if self.contains(tensor):
            return tensor
        found = self._external.get(tensor)
        if found is not None:
            return found
        result = self.make_enter(self._outer_value(tensor), is_constant=True)
        self._external[tensor] = result
        return result

    def add_op(self, op) -> None:
        self.graph.prevent_fetching(op)
        for output in op._outputs:
            self.graph.prevent_feeding(output)
        if not op._inputs:
            if not any(self.contains_op(c) for c in op._control_inputs):
                op._add_control_input(self.get_control_pivot().op)
        else:
            self._route_inputs(op)
            if all(util.is_loop_constant_enter(t.op) for t in op._inputs) and \
                    not any(self.contains_op(c) for c in op._control_inputs):
                # Only invariants: without the pivot it would also run when the loop exits.
                op._add_control_input(self.get_control_pivot().op)
        self._route_control_inputs(op)

    def _outer_pivot(self):
        ctx = self.outer_context
        while ctx is not None:
            pivot = ctx.get_control_pivot()
            if pivot is not None:
                return pivot
            ctx = ctx.outer_context
        return None

    # -- building --------------------------------------------------------------------------

    def build_loop(self, cond, body, loop_vars, shape_invariants, return_same_structure):
        """Adds the loop to the graph; returns the exits packed like the body's result."""
        flat_orig = nest.flatten(loop_vars)
        flat_vars = [to_flow(v) for v in flat_orig]
        if shape_invariants is not None:
            try:
                nest.assert_same_structure(loop_vars, shape_invariants, check_types=False)
            except ValueError as err:
                raise ValueError(f"shape_invariants must have the structure of loop_vars: "
                                 f"{err}") from None
            flat_shapes = [TensorShape([]) if is_tensor_array(v) else as_shape(s)
                           for v, s in zip(flat_orig, nest.flatten(shape_invariants))]
        else:
            flat_shapes = [v.shape for v in flat_vars]
        with self.entered():
            result, exits = self._build(cond, body, loop_vars, flat_orig, flat_vars, flat_shapes)
        packed = nest.pack_sequence_as(result, from_flows(nest.flatten(result), exits))
        if return_same_structure:
            return packed
        return packed[0] if len(exits) == 1 else packed

    def _build(self, cond, body, loop_vars, flat_orig, flat_vars, flat_shapes):
        graph = self.graph
        real_vars = [self._outer_value(v) for v in flat_vars]
        outer_pivot = self._outer_pivot()
        for real, shape in zip(real_vars, flat_shapes):
            if not shape_less_than_or_equal(real.shape, shape):
                raise ValueError(
                    f"The shape invariant specified for {real.name} is not compatible with the "
                    f"initial shape of the loop variable. It enters the loop with shape "
                    f"{real.shape}, but the specified shape invariant is {shape}.")
            entered = self.make_enter(real, is_constant=False)
            entered._shape = shape
            if outer_pivot is not None and util.is_loop_constant_enter(real.op):
                entered.op._add_control_input(outer_pivot.op)
            self.loop_enters.append(entered)
        with bare_scope(graph):
            self.merges = [merge([e, e])[0] for e in self.loop_enters]
        for m in self.merges:
            m.op._control_flow_context = self
        self.pivot_for_pred = self.merges[0]

        packed = nest.pack_sequence_as(loop_vars, from_flows(flat_orig, self.merges))
        pred = convert_to_tensor(cond(*packed))
        if pred.dtype.base_dtype != dtypes.bool_:
            raise TypeError(f"The loop condition must return a bool tensor, got "
                            f"{pred.dtype.base_dtype.name} ({pred.name}).")
        with bare_scope(graph):
            self.pivot = loop_cond(pred)
            self.switches = [switch(m, self.pivot) for m in self.merges]
            # a ref loop variable stays a ref in the body (RefIdentity), as TF's _Identity
            self.body_inputs = [forwarding.RefIdentity(s[1], name="Identity")
                                if s[1].dtype.is_ref_dtype
                                else constant_ops.identity(s[1], name="Identity")
                                for s in self.switches]
        for op in [self.pivot.op] + [s[0].op for s in self.switches] + \
                [t.op for t in self.body_inputs]:
            op._control_flow_context = self
        self.pivot_for_body = self.body_inputs[0]

        packed = nest.pack_sequence_as(loop_vars, from_flows(flat_orig, self.body_inputs))
        result = body(*packed)
        if not nest.is_nested(result):
            result = [result]
        try:
            nest.assert_same_structure(list(packed), list(result), check_types=False)
        except ValueError as err:
            raise ValueError(f"The body of the while loop must return the structure of its "
                             f"loop_vars: {err}") from None
        flat_result = [to_flow(v) for v in nest.flatten(result)]
        flat_result = [v if isinstance(v, Tensor) else convert_to_tensor(v) for v in flat_result]
        for i, (m, v) in enumerate(zip(self.merges, flat_result)):
            self._check_next(flat_vars[i], m, v)
            nxt = next_iteration(v)
            self.next_iterations.append(nxt)
            m.op._update_input(1, nxt)
        with bare_scope(graph):
            self.loop_exits = [exit(s[0]) for s in self.switches]
        for e in self.loop_exits:
            e.op._control_flow_context = self
        machinery = self.loop_enters + self.merges + [self.pivot] + \
            [s[0] for s in self.switches] + self.body_inputs + self.next_iterations
        if self.outer_context is not None:
            machinery += self.loop_exits
        for tensor in machinery:
            graph.prevent_fetching(tensor.op)
            for output in tensor.op._outputs:
                graph.prevent_feeding(output)
        return result, self.loop_exits

    def _check_next(self, var, merged, value) -> None:
        if value.dtype.base_dtype != merged.dtype.base_dtype:
            raise TypeError(
                f"Loop variable '{var.name}' enters the loop as {merged.dtype.base_dtype.name} "
                f"but the body returns {value.dtype.base_dtype.name} ({value.name}).")
        if not shape_less_than_or_equal(value.shape, merged.shape):
            raise ValueError(
                f"Input tensor '{var.name}' enters the loop with shape {merged.shape}, but has "
                f"shape {value.shape} after one iteration. To allow the shape to vary across "
                "iterations, use the `shape_invariants` argument of tf.while_loop to specify a "
                "less-specific shape.")


def while_loop(cond, body, loop_vars, shape_invariants=None, parallel_iterations=10,
               back_prop=True, swap_memory=False, name=None, maximum_iterations=None,
               return_same_structure=False):
    """Repeats `body` while `cond` is true (TF1 `tf.while_loop`).

    Args:
        cond: callable taking the loop variables, returning a scalar bool tensor.
        body: callable taking the loop variables, returning new values in the same structure
            (a single variable may be returned bare).
        loop_vars: a list or tuple of (nested structures of) tensors, Python values or
            TensorArrays.
        shape_invariants: TensorShapes in the structure of loop_vars; a variable whose shape
            changes between iterations needs a less specific invariant.
        parallel_iterations: how many iterations may run at once.
        back_prop: whether tf.gradients may differentiate through the loop.
        swap_memory: accepted for compatibility (host memory is the only memory).
        name: name scope (default "while").
        maximum_iterations: optional int scalar bounding the number of iterations.
        return_same_structure: if False, a single loop variable is returned bare.

    Returns:
        The final values of the loop variables.

    Raises:
        TypeError: cond or body is not callable, loop_vars is not a sequence, or a body output
            has the wrong dtype.
        ValueError: no loop variables, a changed structure, or a shape that changes without an
            invariant.

    Example:
        >>> i, total = tf.while_loop(lambda i, s: i < 10, lambda i, s: (i + 1, s + i), [0, 0])
    """
    if not callable(cond):
        raise TypeError("'cond' must be callable.")
    if not callable(body):
        raise TypeError("'body' must be callable.")
    if not isinstance(loop_vars, (list, tuple)):
        raise TypeError(f"'loop_vars' must be a list or tuple, got {type(loop_vars).__name__}.")
    if not loop_vars:
        raise ValueError("'loop_vars' must be provided.")
    if isinstance(parallel_iterations, bool) or not isinstance(parallel_iterations, int) or \
            parallel_iterations <= 0:
        raise ValueError(f"'parallel_iterations' must be a positive integer, got "
                         f"{parallel_iterations!r}.")
    if any(isinstance(v, _COMPOSITES) for v in nest.flatten(loop_vars)):
        return _composite_while_loop(cond, body, loop_vars, shape_invariants,
                                     parallel_iterations, back_prop, swap_memory, name,
                                     maximum_iterations, return_same_structure)
    graph = graph_mod.get_default_graph()
    with graph.name_scope(name or "while"):
        loop_vars = nest.map_structure(_convert_loop_var, loop_vars)
        try_to_pack = len(loop_vars) == 1 and not return_same_structure
        if maximum_iterations is not None:
            cond, body, loop_vars, shape_invariants = _with_maximum_iterations(
                cond, body, loop_vars, shape_invariants, maximum_iterations, try_to_pack)
        context = WhileContext(parallel_iterations, back_prop, swap_memory)
        result = context.build_loop(cond, body, loop_vars, shape_invariants,
                                    return_same_structure)
        if maximum_iterations is not None:
            return result[1]
        return result


_COMPOSITES = (SparseTensor, IndexedSlices)


def _composite_parts(value):
    """The component tensors a composite loop variable travels through the loop as."""
    if isinstance(value, SparseTensor):
        return (value.indices, value.values, value.dense_shape)
    if isinstance(value, IndexedSlices):
        if value.dense_shape is None:
            return (value.values, value.indices)
        return (value.values, value.indices, value.dense_shape)
    return value


def _part_invariants(value, invariant):
    """Shape invariants of a loop variable's parts; `invariant` is the user's (or None)."""
    if isinstance(value, SparseTensor):
        if invariant is None:  # the number of non-zeros may change between iterations
            rank = value.indices.shape[1] if value.indices.shape.ndims == 2 else None
            return (TensorShape([None, rank]), TensorShape([None]), value.dense_shape.shape)
        # As TF1: a SparseTensor's invariant is the shape of its dense_shape vector, so
        # TensorShape([None]) lets the rank change and TensorShape([r]) fixes it to r.
        invariant = as_shape(invariant)
        if not invariant.is_compatible_with(value.dense_shape.shape):
            raise ValueError(
                f"The shape invariant specified for {value.dense_shape.name} is not compatible "
                f"with the initial shape of the loop variable. It enters the loop with shape "
                f"{value.dense_shape.shape}, but the specified shape invariant is {invariant}.")
        rank = invariant[0] if invariant.ndims == 1 else None
        return (TensorShape([None, rank]), TensorShape([None]), TensorShape([rank]))
    if isinstance(value, IndexedSlices):
        if invariant is None:
            shapes = (value.values.shape, value.indices.shape)
        else:
            invariant = as_shape(invariant)
            first = invariant[0] if invariant.ndims else None
            shapes = (invariant, TensorShape([first]))
        if value.dense_shape is None:
            return shapes
        rank = None if invariant is None else as_shape(invariant).ndims
        dense = value.dense_shape.shape if rank is None else TensorShape([rank])
        return shapes + (dense,)
    if invariant is not None:
        return invariant
    return value.shape if isinstance(value, Tensor) else TensorShape(None)


def _rebuild(templates, flat_parts):
    """Inverse of `_composite_parts` over the flattened loop variables."""
    leaves, pos = [], 0
    for template in templates:
        if isinstance(template, SparseTensor):
            leaves.append(SparseTensor(*flat_parts[pos:pos + 3]))
            pos += 3
        elif isinstance(template, IndexedSlices):
            width = 2 if template.dense_shape is None else 3
            leaves.append(IndexedSlices(*flat_parts[pos:pos + width]))
            pos += width
        else:
            leaves.append(flat_parts[pos])
            pos += 1
    return leaves


def _composite_while_loop(cond, body, loop_vars, shape_invariants, parallel_iterations,
                          back_prop, swap_memory, name, maximum_iterations,
                          return_same_structure):
    """`while_loop` over SparseTensor / IndexedSlices loop variables: each one travels
    through the loop as its component tensors and is rebuilt around `cond` and `body`."""
    loop_vars = type(loop_vars)(loop_vars)
    templates = nest.flatten(loop_vars)
    if shape_invariants is None:
        flat_inv = [None] * len(templates)
    else:
        try:
            nest.assert_same_structure(loop_vars, shape_invariants, check_types=False)
        except ValueError as err:
            raise ValueError(f"shape_invariants must have the structure of loop_vars: "
                             f"{err}") from None
        flat_inv = nest.flatten(shape_invariants)
    expanded = nest.pack_sequence_as(loop_vars, [_composite_parts(v) for v in templates])
    invariants = nest.pack_sequence_as(
        loop_vars, [_part_invariants(v, s) for v, s in zip(templates, flat_inv)])

    def rebuild(args):
        return nest.pack_sequence_as(loop_vars, _rebuild(templates, nest.flatten(list(args))))

    def split(result):
        if len(loop_vars) == 1 and not nest.is_nested(result) or \
                len(loop_vars) == 1 and isinstance(result, _COMPOSITES):
            result = [result]
        flat = nest.flatten(result)
        if len(flat) != len(templates):
            raise ValueError(f"The body of the while loop must return the structure of its "
                             f"loop_vars: {len(templates)} values expected, got {len(flat)}.")
        parts = []
        for template, value in zip(templates, flat):
            if isinstance(template, _COMPOSITES) and not isinstance(value, type(template)):
                raise TypeError(f"Loop variable {template} must stay a "
                                f"{type(template).__name__}; the body returned {value!r}.")
            parts.append(_composite_parts(value))
        return nest.pack_sequence_as(loop_vars, parts)

    result = while_loop(lambda *args: cond(*rebuild(args)),
                        lambda *args: split(body(*rebuild(args))),
                        expanded, shape_invariants=invariants,
                        parallel_iterations=parallel_iterations, back_prop=back_prop,
                        swap_memory=swap_memory, name=name,
                        maximum_iterations=maximum_iterations, return_same_structure=True)
    packed = rebuild(result)
    if len(loop_vars) == 1 and not return_same_structure:
        return packed[0]
    return packed


def _convert_loop_var(value):
    if is_tensor_array(value) or isinstance(value, Tensor):
        return value
    return convert_to_tensor(value)


def _with_maximum_iterations(cond, body, loop_vars, shape_invariants, maximum_iterations,
                             try_to_pack):
    limit = convert_to_tensor(maximum_iterations, name="maximum_iterations")
    if limit.shape.ndims is not None and limit.shape.ndims != 0:
        raise ValueError(f"'maximum_iterations' must be a scalar. Received shape: "
                         f"{limit.shape}")
    if not limit.dtype.is_integer:
        raise TypeError(f"'maximum_iterations' must be an integer, got {limit.dtype.name}")
    counter = convert_to_tensor(0, dtype=limit.dtype.base_dtype, name="iteration_counter")
    orig_cond, orig_body = cond, body
    if try_to_pack:
        loop_vars = (counter, loop_vars[0])
        if shape_invariants is not None:
            shape_invariants = (TensorShape([]), shape_invariants[0])

        def cond(i, value):
            return math_ops.logical_and(i < limit, orig_cond(value))

        def body(i, value):
            return i + 1, orig_body(value)
    else:
        loop_vars = (counter, loop_vars)
        if shape_invariants is not None:
            shape_invariants = (TensorShape([]), shape_invariants)

        def cond(i, values):
            return math_ops.logical_and(i < limit, orig_cond(*values))

        def body(i, values):
            return i + 1, orig_body(*values)
    return cond, body, loop_vars, shape_invariants
