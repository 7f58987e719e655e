"""Control-flow contexts: where an op sits in the conditionals and loops of a graph.

Contract: while a context is active (`graph._control_flow_context`), every op created gets it
recorded and is passed to `context.add_op(op)` (framework/graph.py `new_operation`), which
rewires the op so the executor's frame and dead-value rules hold:
- an input produced outside the context is replaced by its value *inside* (`add_value`): a
  `Switch` on the predicate for a cond branch, a loop-invariant `Enter` for a while loop,
  recursively through the enclosing contexts;
- an op with no input is anchored to the context's pivot by a control edge, so it runs only
  when the branch is taken (or once per loop iteration);
- a control input from outside the op's loop frame is replaced by one inside it.

`CondContext` is defined here; `WhileContext` in while_loop.py.
"""

from __future__ import annotations

import contextlib

from tensorflux.framework import graph as graph_mod
from tensorflux.framework import nest
from tensorflux.framework.tensor import Operation, Tensor
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.ops.array import constants as constant_ops
from tensorflux.ops.control_flow import util
from tensorflux.ops.control_flow.primitives import switch, with_dependencies


@contextlib.contextmanager
def bare_scope(graph):
    """Creates ops with no control-flow context and no control dependencies (for routing)."""
    saved_ctx = graph._control_flow_context
    saved_deps = graph._control_dependencies_stack
    saved_routing = getattr(graph, "_tfx_routing", False)
    graph._control_flow_context = None
    graph._control_dependencies_stack = []
    graph._tfx_routing = True  # the loop machinery may cross frames (util.check_input_contexts)
    try:
        yield
    finally:
        graph._control_flow_context = saved_ctx
        graph._control_dependencies_stack = saved_deps
        graph._tfx_routing = saved_routing


def frame_context(op):
    """The context whose frame `op`'s outputs and control edges live in."""
    ctx = op._control_flow_context
    if ctx is not None and op.type in util.EXIT_OPS:
        return ctx.outer_context
    return ctx


def remove_control_input(op, control_op) -> None:
    op._control_inputs.remove(control_op)
    control_op._control_outputs.remove(op)
    op._graph._mutation_version += 1


class ControlFlowContext:
    """Base of CondContext and WhileContext (see the module docstring)."""

    is_while_context = False

    def __init__(self):
        self.graph = graph_mod.get_default_graph()
        self.outer_context = self.graph._control_flow_context
        self._external: dict = {}
        self._saved: list = []
        self._tokens: dict = {}

    @property
    def grad_state(self):
        return None

    def enter(self) -> None:
        """Makes this the graph's current context (ops created now are added to it)."""
        self._saved.append(self.graph._control_flow_context)
        self.graph._control_flow_context = self

    def exit(self) -> None:
        self.graph._control_flow_context = self._saved.pop()

    @contextlib.contextmanager
    def entered(self):
        self.enter()
        try:
            yield self
        finally:
            self.exit()

    def contains(self, tensor) -> bool:
        """True when `tensor`'s value lives in this context (or one nested in it)."""
        return util.is_ancestor(self, util.value_context(tensor))

    def contains_op(self, op) -> bool:
        return util.is_ancestor(self, frame_context(op))

    def get_control_pivot(self):
        return None

    def get_while_context(self):
        return util.while_context_of(self)

    def add_value(self, tensor):
        raise TypeError(f"{type(self).__name__} cannot route values")

    def _outer_value(self, tensor):
        if self.outer_context is None:
            return tensor
        return self.outer_context.add_value(tensor)

    def _route_inputs(self, op) -> None:
        for index, tensor in enumerate(list(op._inputs)):
            real = self.add_value(tensor)
            if real is not tensor:
                op._update_input(index, real)

    def _route_control_inputs(self, op) -> None:
        """Replaces control inputs from outside op's loop frame by tokens inside it."""
        loop = util.while_context_of(self)
        if loop is None:
            return
        for control in list(op._control_inputs):
            if util.is_ancestor(loop, frame_context(control)):
                continue
            remove_control_input(op, control)
            op._add_control_input(loop.control_token(control))

    def control_token(self, control_op: Operation) -> Operation:
        """An op in this loop's frame that runs (each iteration) after `control_op`."""
        token = self._tokens.get(control_op)
        if token is None:
            if control_op._outputs:
                source = control_op._outputs[0]
            else:
                with bare_scope(self.graph), self.graph.control_dependencies([control_op]):
                    source = constant_ops.constant(True, name="control_token")
                source.op._control_flow_context = control_op._control_flow_context
            token = self.add_value(source).op
            self._tokens[control_op] = token
        return token


def is_tensor_array(value) -> bool:
    return getattr(value, "_tfx_is_tensor_array", False)


def to_flow(value):
    """A TensorArray's flow tensor (other values unchanged)."""
    return value.flow if is_tensor_array(value) else value


def from_flows(templates, flows) -> list:
    """Rebuilds the TensorArrays of `templates` (a flat list) around new `flows`."""
    return [t._with_flow(f) if is_tensor_array(t) else f for t, f in zip(templates, flows)]


class CondContext(ControlFlowContext):
    """One branch of a `tf.cond`: values from outside come through `Switch(x, pred)[branch]`.

    Attributes:
        pred: the predicate, a bool scalar in the enclosing context.
        pivot: the branch's anchor tensor (live only when the branch is taken).
        branch: 1 for the true branch, 0 for the false branch.
    """

    def __init__(self, pred, pivot, branch: int):
        super().__init__()
        self.pred = pred
        self.pivot = pivot
        self.branch = branch
        pivot.op._control_flow_context = self

    def get_control_pivot(self):
        return self.pivot

    def add_value(self, tensor):
        if self.contains(tensor):
            return tensor
        found = self._external.get(tensor)
        if found is not None:
            return found

        real = self._outer_value(tensor)
        with bare_scope(self.graph):
            pair = switch(real, self.pred)
        pair[0].op._control_flow_context = self
        self.graph.prevent_fetching(pair[0].op)  # one side is dead: only the branch reads it
        result = pair[self.branch]
        self._external[tensor] = result
        return result

    def add_op(self, op) -> None:
        if not op._inputs:
            if not any(self.contains_op(c) for c in op._control_inputs):
                op._add_control_input(self.pivot.op)
        else:
            self._route_inputs(op)
        self._route_control_inputs(op)
        if self.outer_context is not None or not util.is_loop_exit(op):
            # As TF1: a value computed on one branch is read through the cond's Merge.
            self.graph.prevent_fetching(op)

    def build_branch(self, fn, fn_name: str):
        """Calls `fn` inside this context; returns (its result, the flat branch outputs)."""
        with self.entered():
            original = fn()
            if original is None:
                raise ValueError(f"'{fn_name}' must have a return value.")
            flat = [self._branch_output(v) for v in nest.flatten(original)]
        return original, flat

    def _branch_output(self, value):
        if isinstance(value, Operation):
            return with_dependencies([value], self.pivot)
        value = to_flow(value)
        if not isinstance(value, Tensor):
            value = convert_to_tensor(value)
        return self.add_value(value)

    def restore_tensor_arrays(self, original, merged: list) -> list:
        return from_flows(nest.flatten(original), merged)
