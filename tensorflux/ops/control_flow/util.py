"""Helpers shared by the control-flow modules: context queries (nested structures are
`framework.nest`'s).

Context queries answer "where does this value live": every op created inside a `cond` branch
or a `while_loop` records its control-flow context; an `Exit`'s value lives in the context
that encloses its loop.
"""

from __future__ import annotations

from tensorflux.framework import graph as _graph

# TF's control_flow_util flag: tensorflux builds TF1 (v1) control flow only.
ENABLE_CONTROL_FLOW_V2 = False

EXIT_OPS = frozenset({"Exit", "RefExit"})
ENTER_OPS = frozenset({"Enter", "RefEnter"})
SWITCH_OPS = frozenset({"Switch", "RefSwitch"})
MERGE_OPS = frozenset({"Merge", "RefMerge"})
NEXT_OPS = frozenset({"NextIteration", "RefNextIteration"})


def op_context(op):
    return op._control_flow_context


def value_context(tensor):
    """The context a tensor's value lives in (an Exit's value is outside its loop)."""
    ctx = tensor.op._control_flow_context
    if ctx is not None and tensor.op.type in EXIT_OPS:
        return ctx.outer_context
    return ctx


def is_ancestor(ancestor, ctx) -> bool:
    """True when `ctx` is `ancestor` or nested (at any depth) inside it."""
    while ctx is not None:
        if ctx is ancestor:
            return True
        ctx = ctx.outer_context
    return ancestor is None


def while_context_of(ctx):
    """The innermost while-loop context at or around `ctx` (None outside loops)."""
    while ctx is not None and not ctx.is_while_context:
        ctx = ctx.outer_context
    return ctx


def is_loop_constant_enter(op) -> bool:
    return op.type in ENTER_OPS and bool(op._attrs.get("is_constant", False))


def is_loop_exit(op) -> bool:
    return op.type in EXIT_OPS


def _reads_forward_loop(ctx, loop) -> bool:
    """True when `ctx` is inside a backward loop of `loop` (or of a loop around it)."""
    while ctx is not None:
        forward = getattr(ctx, "forward_context", None)
        if forward is not None and is_ancestor(forward, loop):
            return True
        ctx = ctx.outer_context
    return False


def check_input_contexts(op) -> None:
    """Raises ValueError (as TF) when `op` reads a value computed inside a while loop that
    `op` is not in: outside any loop, or in another loop. Values leave a loop through its
    Exits; the loop machinery itself (built while routing) and backward loops, whose reads of
    forward values become stack pops, are exempt."""
    if getattr(op.graph, "_tfx_routing", False) or op.type in _MACHINERY:
        return
    op_ctx = op._control_flow_context if op._control_flow_context is not None \
        else op.graph._control_flow_context
    for tensor in op._inputs:
        loop = while_context_of(value_context(tensor))
        if loop is None or is_ancestor(loop, op_ctx) or _reads_forward_loop(op_ctx, loop):
            continue
        source = tensor.op.name
        if while_context_of(op_ctx) is None:
            raise ValueError(f"Cannot use '{source}' as input to '{op.name}' because "
                             f"'{source}' is in a while loop. See info log for more details.")
        raise ValueError(f"Cannot use '{source}' as input to '{op.name}' because they are in "
                         f"different while loops. See info log for more details.")


_MACHINERY = EXIT_OPS | ENTER_OPS | SWITCH_OPS | MERGE_OPS | {"LoopCond"}

_graph.input_context_check = check_input_contexts
