"""Gradients of while loops: the backward loop, and the forward values it needs on stacks.

`tf.gradients` (gradients_impl.py) walks the ops between `ys` and `xs`. Through the control-flow
hooks installed here, every while loop on that path (the outermost loops inside the current
scope) becomes one node of the walk, represented by one of its exits:
- its pending count is the number of consumers of all its exits, so it is differentiated once
  every exit's gradient is known;
- differentiating it (`backprop_group`) builds a *backward loop* that runs as many iterations
  as the forward loop did, in reverse. Its loop variables are an iteration counter, the
  gradient of each float loop variable, and an accumulator for the gradient of each
  loop-invariant input. Its body is `tf.gradients` of the forward body (recursively, so
  nested loops become nested backward loops), built inside a `GradWhileContext`;
- the walk then continues from the loop's inputs with the gradients at the backward loop's
  exits.

Forward values in the backward body: when an op created in a `GradWhileContext` reads a tensor
computed inside the forward loop, the context replaces it by a `StackPopV2`, and adds a
`StackPushV2` of that tensor to the forward loop (the paper's "forward values saved on stacks
and popped in reverse"). Order is guaranteed, with overlapping iterations too, by a counter
added to the forward loop (`ForwardLoopState`): the pushes of iteration k wait for the counter
of iteration k, whose increment waits (through a `ControlTrigger`) for all pushes of iteration
k-1; the backward loop's pops are chained the same way. A value inside a `cond` is pushed only
when its branch runs, and popped through a `Switch` of the stack handle on the (popped)
predicate, so pushes and pops stay paired. A stack of a nested loop is created once per outer
iteration, and its handle is itself saved on the outer loop's stack.
"""

from __future__ import annotations

from tensorflux.framework import graph as graph_mod
from tensorflux.framework.indexed_slices import IndexedSlices
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape, as_shape
from tensorflux.ops import array as array_ops
from tensorflux.ops.autodiff import gradients as gradients_impl
from tensorflux.ops.control_flow import util
from tensorflux.ops.control_flow.context import CondContext, bare_scope
from tensorflux.ops.control_flow.primitives import (
    control_trigger,
    exit,
    merge,
    next_iteration,
    switch,
)
from tensorflux.ops.control_flow.while_loop import WhileContext
from tensorflux.ops.data_flow import stack as stack_ops

_BLOCKED = 1 << 40  # pending count of ops the walk must never reach


def _trainable(dtype) -> bool:
    return dtype.base_dtype.is_floating or dtype.base_dtype.is_complex


def _resource_variable(tensor):
    """The VarHandleOp of a float resource variable of known shape behind the handle
    `tensor` (the gradient of a loop-invariant handle accumulates like the variable's value,
    as in TF's AddBackpropAccumulator), else None."""
    op = tensor.op
    for _ in range(100):
        if op.type == "VarHandleOp":
            shape = as_shape(op.get_attr("shape"))
            ok = _trainable(op.get_attr("dtype")) and shape.is_fully_defined()
            return op if ok else None
        if op.type not in ("Enter", "Identity", "Switch", "Merge") or not op.inputs:
            return None
        op = op.inputs[0].op
    return None


def _invariant_trainable(enter) -> bool:
    tensor = enter.outputs[0]
    if tensor.dtype.base_dtype.name == "resource":
        return _resource_variable(enter.inputs[0]) is not None
    return _trainable(tensor.dtype)


def _invariant_zeros(enter):

    handle = _resource_variable(enter.inputs[0]) if \
        enter.outputs[0].dtype.base_dtype.name == "resource" else None
    if handle is not None:
        return array_ops.zeros(as_shape(handle.get_attr("shape")).as_list(),
                               handle.get_attr("dtype"))
    return array_ops.zeros_like(enter.inputs[0])


class ForwardLoopState:
    """A counter added to a forward loop, with the sync point its stack pushes order against.

    Attributes:
        count: the Exit of the counter: the number of body iterations (outside the loop).
        index: the counter's value in the body (pushes are control-dependent on it).
        sync: a ControlTrigger collecting the iteration's pushes; the increment waits on it.
    """

    def __init__(self, loop: WhileContext):
        graph = loop.graph
        with bare_scope(graph), graph.name_scope(f"{loop.name}/f_count/"):
            outer = loop.outer_context
            if outer is not None:
                outer.enter()
            try:
                zero = array_ops.constant(0, name="zero")
            finally:
                if outer is not None:
                    outer.exit()
            entered = loop.make_enter(zero, is_constant=False)
            merged = merge([entered, entered])[0]
            pair = switch(merged, loop.pivot)
            self.index = array_ops.identity(pair[1], name="index")
            self.sync = control_trigger(name="f_sync")
            for tensor in (merged, pair[0], self.index):
                tensor.op._control_flow_context = loop
            self.sync._control_flow_context = loop
            self.sync._add_control_input(self.index.op)
            with loop.entered():
                increment = self.index + 1
            increment.op._add_control_input(self.sync)
            nxt = next_iteration(increment)
            nxt.op._control_flow_context = loop
            merged.op._update_input(1, nxt)
            self.count = exit(pair[0], name="count")
            self.count.op._control_flow_context = loop
        for tensor in (entered, merged, pair[0], self.index, increment, nxt):
            graph.prevent_fetching(tensor.op)


def forward_state(loop: WhileContext) -> ForwardLoopState:
    if loop.forward_state is None:
        loop.forward_state = ForwardLoopState(loop)
    return loop.forward_state


def _gates(tensor, loop) -> list:
    """(pred, branch) pairs, outermost first, under which `tensor` is live inside `loop`."""
    gates = []
    loop_switches = {s[0].op for s in loop.switches}
    if tensor.op.type in util.SWITCH_OPS and tensor.op not in loop_switches:
        gates.append((tensor.op.inputs[1], tensor.value_index))
        ctx = util.value_context(tensor.op.inputs[0])
    else:
        ctx = util.value_context(tensor)
    while ctx is not None and ctx is not loop:
        if isinstance(ctx, CondContext):
            gates.append((ctx.pred, ctx.branch))
        ctx = ctx.outer_context
    gates.reverse()
    return gates


def _join(a, b):
    """The most specific shape both `a` and `b` fit (differing dimensions become unknown)."""

    if a.ndims is None or b.ndims is None or a.ndims != b.ndims:
        return TensorShape(None)
    return TensorShape([x if x == y else None for x, y in zip(a.as_list(), b.as_list())])


class GradWhileContext(WhileContext):
    """The backward loop of `forward`: forward values it reads come from stacks.

    Contract: `add_value(x)` for a tensor computed inside the forward loop returns a pop, in
    this loop, of a stack onto which the forward loop pushes x every iteration x is live; a
    loop invariant of the forward loop is routed in as an invariant of this loop instead.
    """

    def __init__(self, forward: WhileContext):
        super().__init__(forward.parallel_iterations, True, forward.swap_memory,
                         name=f"{forward.name}_grad")
        self.forward_context = forward
        self.sync = None
        self._stacks: dict = {}

    def _check_next(self, var, merged, value) -> None:
        # Gradients may have less static shape than their invariant; only dtypes must match.
        if value.dtype.base_dtype != merged.dtype.base_dtype:
            raise TypeError(f"Backward loop {self.name}: gradient of dtype "
                            f"{value.dtype.base_dtype.name} for a {merged.dtype.base_dtype.name}"
                            " loop variable.")

    def add_value(self, tensor):
        if self.contains(tensor):
            return tensor
        found = self._external.get(tensor)
        if found is not None:
            return found
        forward = self.forward_context
        if util.is_ancestor(forward, util.value_context(tensor)):
            if util.is_loop_constant_enter(tensor.op) and \
                    tensor.op._control_flow_context is forward:
                result = self.add_value(tensor.op.inputs[0])
            else:
                result = self._pop(tensor)
        else:
            result = self.make_enter(self._outer_value(tensor), is_constant=True)
        self._external[tensor] = result
        return result

    def _stack_for(self, tensor):
        """The handle (outside the forward loop) of the stack `tensor` is pushed onto."""

        handle = self._stacks.get(tensor)
        if handle is not None:
            return handle
        forward = self.forward_context
        state = forward_state(forward)
        graph = self.graph
        # As TF: the stack, its pushes and pops live with the value they save.
        with bare_scope(graph), graph.name_scope(f"{forward.name}/stack/"), \
                graph.colocate_with(tensor.op, ignore_existing=True):
            outer = forward.outer_context
            if outer is not None:
                outer.enter()
            try:
                handle = stack_ops.stack(tensor.dtype.base_dtype, stack_name=tensor.op.name)
            finally:
                if outer is not None:
                    outer.exit()
            inner = forward.add_value(handle)
            push = stack_ops.stack_push(inner, tensor, swap_memory=forward.swap_memory)
        push.op._control_flow_context = forward
        push.op._add_control_input(state.index.op)
        state.sync._add_control_input(push.op)
        graph.prevent_fetching(push.op)
        self._stacks[tensor] = handle
        return handle

    def _pop(self, tensor):
        handle = self._stack_for(tensor)
        graph = self.graph
        inner = WhileContext.add_value(self, handle) if not self.contains(handle) else handle
        gates = [(self.add_value(pred), branch)
                 for pred, branch in _gates(tensor, self.forward_context)]
        with bare_scope(graph), graph.name_scope(f"{self.name}/pop/"), \
                graph.colocate_with(tensor.op, ignore_existing=True):
            for pred, branch in gates:
                pair = switch(inner, pred)
                pair[0].op._control_flow_context = self
                inner = pair[branch]
            value = stack_ops.stack_pop(inner, tensor.dtype.base_dtype)
        value.op._control_flow_context = self
        value.op._add_control_input(self.pivot_for_body.op)
        self.sync._add_control_input(value.op)
        value._shape = tensor.shape
        return value


# -- the walk's hooks -------------------------------------------------------------------------

def _scope_of(graph):
    """The forward loop whose body the current tf.gradients call differentiates (or None)."""
    ctx = graph._control_flow_context
    while ctx is not None:
        if isinstance(ctx, GradWhileContext):
            return ctx.forward_context
        if ctx.is_while_context:
            return ctx
        ctx = ctx.outer_context
    return None


def _group_loop(op, scope):
    """The outermost while loop strictly inside `scope` that holds `op` (None if none)."""
    found = None
    ctx = op._control_flow_context
    while ctx is not None and ctx is not scope:
        if ctx.is_while_context:
            found = ctx
        ctx = ctx.outer_context
    if ctx is not scope:
        return None
    return found


class _LoopGroup:
    def __init__(self, loop):
        self.loop = loop
        self.ops: list = []
        self.exits: list = []
        self.enters: list = []
        self.rep = None


class ControlFlowState:
    """Per-`tf.gradients`-call view of the loops on the path (see the module docstring)."""

    def __init__(self, between_list, between, colocate: bool = False):
        graph = graph_mod.get_default_graph()
        self.colocate = colocate
        self.scope = _scope_of(graph)
        self.between = between
        self.groups: dict = {}
        self.redirect: dict = {}
        self.blocked: set = set()
        for op in between_list:
            loop = _group_loop(op, self.scope)
            if loop is None:
                continue
            group = self.groups.get(loop)
            if group is None:
                group = self.groups[loop] = _LoopGroup(loop)
            group.ops.append(op)
            if op._control_flow_context is loop:
                if op.type in util.EXIT_OPS:
                    group.exits.append(op)
                elif op.type in util.ENTER_OPS:
                    group.enters.append(op)
        for group in self.groups.values():
            if not group.exits:
                raise ValueError(
                    f"tf.gradients: the tensors to differentiate depend on "
                    f"'{group.ops[-1].name}', which is inside while loop "
                    f"'{group.loop.name}', and do not leave the loop through its exits. "
                    "Differentiate inside the loop body, or the loop's results.")
            group.rep = group.exits[0]
            for op in group.exits:
                self.redirect[op] = group.rep
        self.by_rep = {g.rep: g for g in self.groups.values() if g.rep is not None}
        if self.scope is not None:
            loop = self.scope
            self.blocked = {t.op for t in loop.merges + [s[0] for s in loop.switches] +
                            loop.next_iterations + loop.loop_enters}

    def pending_count_adjust(self, pending: dict, between) -> None:
        """Recounts pending consumers with each loop collapsed onto its representative exit."""
        counts = dict.fromkeys(pending, 0)
        for op in between:
            if op in self.blocked:
                continue  # never differentiated, so its inputs do not wait for it
            loop = _group_loop(op, self.scope)
            if loop is not None and not (op._control_flow_context is loop
                                         and op.type in util.ENTER_OPS):
                continue  # inside a loop, only the loop's own Enters read outside values
            for tensor in op._inputs:
                src = tensor.op
                if src in between:
                    key = self.redirect.get(src, src)
                    counts[key] = counts.get(key, 0) + 1
        for op in counts:
            loop = _group_loop(op, self.scope)
            if op in self.blocked or (loop is not None and op not in self.by_rep):
                counts[op] = _BLOCKED
        pending.update(counts)

    def process_unused_loop_exits(self, pending: dict, to_ops) -> list:
        return [rep.outputs[0] for rep in self.by_rep if pending.get(rep) == 0]

    def backprop_group(self, op, grads):
        """Differentiates the loop `op` represents; returns its inputs (None: not a loop)."""
        group = self.by_rep.get(op)
        if group is None:
            return None

        inputs = [e.inputs[0] for e in group.enters]
        loop = group.loop
        if not loop.back_prop:
            return inputs
        exit_grads = {e.outputs[0]: gradients_impl._aggregated(grads, e.outputs[0])
                      for e in group.exits}
        graph = op.graph
        with graph.name_scope(f"{loop.name.split('/')[0]}_grad"):
            results = build_backward_loop(loop, exit_grads, group.enters, self.colocate)
            # As TF: every trainable loop invariant of a differentiated loop gets a gradient,
            # zeros when no output that is differentiated depends on it.
            done = {id(tensor) for tensor, _ in results}
            for e in group.enters:
                if util.is_loop_constant_enter(e) and _invariant_trainable(e) and \
                        id(e.inputs[0]) not in done:
                    done.add(id(e.inputs[0]))
                    results.append((e.inputs[0], _invariant_zeros(e)))
        for tensor, grad in results:
            if tensor.shape.is_fully_defined() and not grad.shape.is_fully_defined():
                grad.set_shape(tensor.shape)
            gradients_impl._add_grad(grads, tensor, grad)
        return inputs


def _dense(grad):
    return convert_to_tensor(grad) if isinstance(grad, IndexedSlices) else grad


def _zeros_for(tensor):
    if tensor.shape.is_fully_defined():
        return array_ops.zeros(tensor.shape.as_list(), tensor.dtype.base_dtype)
    return array_ops.zeros_like(tensor)


def build_backward_loop(loop: WhileContext, exit_grads: dict, enters: list,
                        colocate: bool = False) -> list:
    """Builds the backward loop of `loop`; returns [(input tensor of an Enter, gradient)].
    With `colocate`, each gradient op is placed with the forward op it differentiates."""

    var_ids = [i for i, m in enumerate(loop.merges) if _trainable(m.dtype)]
    invariants = [e for e in enters if util.is_loop_constant_enter(e) and _invariant_trainable(e)]
    var_ids, invariants = _live(loop, var_ids, invariants, exit_grads)
    if not var_ids and not invariants:
        return []
    state = forward_state(loop)
    init_grads = []
    for i in var_ids:
        grad = exit_grads.get(loop.loop_exits[i])
        init_grads.append(_dense(grad) if grad is not None else
                          array_ops.zeros_like(loop.loop_exits[i]))
    init_accs = [_invariant_zeros(e) for e in invariants]
    body_outputs = [loop.next_iterations[i].op.inputs[0] for i in var_ids]
    body_inputs = [loop.body_inputs[i] for i in var_ids]
    xs = body_inputs + [e.outputs[0] for e in invariants]
    grad_ctx = GradWhileContext(loop)
    n_vars = len(var_ids)

    def cond(count, *_):
        return count > 0

    def body(count, *values):
        grad_ctx.sync = control_trigger(name="b_sync")
        grads, accs = list(values[:n_vars]), list(values[n_vars:])
        found = gradients_impl.gradients(body_outputs, xs, grad_ys=grads, stop_gradients=xs,
                                         name="body", colocate_gradients_with_ops=colocate)
        new_grads = [_dense(g) if g is not None else _zeros_for(x)
                     for x, g in zip(body_inputs, found[:n_vars])]
        new_accs = [acc + _dense(g) if g is not None else acc
                    for acc, g in zip(accs, found[n_vars:])]
        with grad_ctx.graph.control_dependencies([grad_ctx.sync]):
            count = count - 1
        return [count] + new_grads + new_accs

    shapes = [TensorShape([])]
    shapes += [_join(loop.merges[i].shape, g.shape) for i, g in zip(var_ids, init_grads)]
    shapes += [a.shape for a in init_accs]
    exits = grad_ctx.build_loop(cond, body, [state.count] + init_grads + init_accs, shapes, True)
    results = [(loop.loop_enters[i].op.inputs[0], g)
               for i, g in zip(var_ids, exits[1:1 + n_vars])]
    results += [(e.inputs[0], g) for e, g in zip(invariants, exits[1 + n_vars:])]
    return results


def _live(loop, var_ids, invariants, exit_grads):
    """The loop variables and invariants a nonzero gradient can reach.

    A variable is live if its exit has a gradient or a live variable's body output depends on
    it; an invariant is live if a live variable's body output depends on it.
    """
    sources = {loop.body_inputs[i].op: ("var", i) for i in var_ids}
    sources.update({e: ("invariant", e) for e in invariants})
    merges = {m.op for m in loop.merges}
    depends = {i: _reaching(loop.next_iterations[i].op.inputs[0], sources, merges, loop)
               for i in var_ids}
    live = {i for i in var_ids if exit_grads.get(loop.loop_exits[i]) is not None}
    frontier = list(live)
    while frontier:
        for kind, key in depends[frontier.pop()]:
            if kind == "var" and key not in live:
                live.add(key)
                frontier.append(key)
    live_invariants = {key for i in live for kind, key in depends[i] if kind == "invariant"}
    return [i for i in var_ids if i in live], [e for e in invariants if e in live_invariants]


def _reaching(tensor, sources: dict, merges: set, loop) -> set:
    """The sources (body inputs, invariant Enters) `tensor` depends on inside `loop`."""
    found = set()
    seen = set()
    stack = [tensor.op]
    while stack:
        op = stack.pop()
        if op in seen:
            continue
        seen.add(op)
        source = sources.get(op)
        if source is not None:
            found.add(source)
            continue
        if op in merges or not util.is_ancestor(loop, op._control_flow_context) or \
                op.type in util.ENTER_OPS and op._control_flow_context is loop:
            continue
        stack.extend(t.op for t in op._inputs)
    return found


class _Hooks:
    """Installed into gradients_impl: creates a ControlFlowState when loops are on the path."""

    @staticmethod
    def create_state(between_list, between, colocate=False):
        state = ControlFlowState(between_list, between, colocate)
        if not state.groups and not state.blocked:
            return None
        return state


def install() -> None:
    gradients_impl.set_control_flow_hooks(_Hooks())


install()
