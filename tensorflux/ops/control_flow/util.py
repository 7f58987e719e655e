"""Helpers shared by the control-flow modules: context queries (nested structures are
`framework.nest`'s).

Context queries answer "where does this value live": every op created inside a `cond` branch
or a `while_loop` records its control-flow context; an `Exit`'s value lives in the context
that encloses its loop.
"""

from __future__ import annotations

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
