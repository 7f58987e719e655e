"""Stacks: StackV2, StackPushV2, StackPopV2, StackCloseV2 (step-scoped LIFO resources), and
TF1's legacy Stack, StackPush, StackPop, StackClose (a Ref(string) handle, unbounded).

Gradients of while loops save forward values on stacks: the forward loop pushes a value each
iteration and the backward loop pops them in reverse order (control_flow_state.py). A stack
lives for one step (step_resources.py).
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops.data_flow import step_resources

StackV2 = define_op("StackV2", inputs=["max_size: int32"], outputs=["handle: resource"],
                    attrs=["elem_type: type", "stack_name: string = ''"], stateful=True,
                    differentiable=False, step_scoped=True)
StackPushV2 = define_op("StackPushV2", inputs=["handle: resource", "elem: T"],
                        outputs=["output: T"], attrs=["T: type", "swap_memory: bool = False"],
                        stateful=True, differentiable=False, step_scoped=True)
StackPopV2 = define_op("StackPopV2", inputs=["handle: resource"], outputs=["elem: elem_type"],
                       attrs=["elem_type: type"], stateful=True, differentiable=False,
                       step_scoped=True)
StackCloseV2 = define_op("StackCloseV2", inputs=["handle: resource"], stateful=True,
                         differentiable=False, step_scoped=True)

_KIND = "Stack"


class Stack:
    """A LIFO of arrays with an optional bound (`max_size` < 0: unbounded)."""

    def __init__(self, name: str, elem_type, max_size: int):
        self.name = name
        self.elem_type = elem_type
        self.max_size = max_size
        self.items: list = []

    def push(self, value) -> None:
        if 0 <= self.max_size <= len(self.items):
            raise errors.InvalidArgumentError(
                None, None, f"Stack[{self.name}] overflowed its max_size ({self.max_size})")
        self.items.append(value)

    def pop(self):
        if not self.items:
            raise errors.InvalidArgumentError(
                None, None, f"Stack[{self.name}] is empty: popped more values than were pushed.")
        return self.items.pop()


@StackV2.shape_fn
def _stack_shape(max_size):
    return TensorShape([])


@StackV2.kernel(ctx=True, factory=True)
def _stack_kernel(elem_type, stack_name, node_name):
    base = stack_name or node_name

    def stack(ctx, max_size):
        return step_resources.create(ctx, _KIND, base, Stack(base, elem_type, int(max_size)))

    return stack


@StackPushV2.shape_fn
def _stack_push_shape(handle, elem):
    return elem


@StackPushV2.kernel(ctx=True)
def _stack_push_kernel(ctx, handle, elem):
    step_resources.lookup(ctx, handle, _KIND).push(elem)
    return elem


@StackPopV2.shape_fn
def _stack_pop_shape(handle):
    return TensorShape(None)


@StackPopV2.kernel(ctx=True)
def _stack_pop_kernel(ctx, handle):
    return step_resources.lookup(ctx, handle, _KIND).pop()


@StackCloseV2.shape_fn
def _stack_close_shape(handle):
    return []


@StackCloseV2.kernel(ctx=True)
def _stack_close_kernel(ctx, handle):
    step_resources.delete(ctx, handle)


# -- TF1's legacy ops: a Ref(string) handle, an unbounded stack --------------------------------

StackOp = define_op("Stack", outputs=["handle: Ref(string)"],
                    attrs=["elem_type: type", "stack_name: string = ''"], stateful=True,
                    differentiable=False, step_scoped=True)
StackPush = define_op("StackPush", inputs=["handle: Ref(string)", "elem: T"],
                      outputs=["output: T"], attrs=["T: type", "swap_memory: bool = False"],
                      stateful=True, differentiable=False, step_scoped=True)
StackPop = define_op("StackPop", inputs=["handle: Ref(string)"], outputs=["elem: elem_type"],
                     attrs=["elem_type: type"], stateful=True, differentiable=False,
                     step_scoped=True)
StackClose = define_op("StackClose", inputs=["handle: Ref(string)"], stateful=True,
                       differentiable=False, step_scoped=True)
StackOp.shape_fn(lambda: TensorShape([2]))
StackPush.shape_fn(_stack_push_shape)
StackPop.shape_fn(_stack_pop_shape)
StackClose.shape_fn(_stack_close_shape)

# As in TF, a legacy handle is a string vector [container, name]; the kernels below turn it
# back into the step resource it names.


def _legacy_ref(handle):
    container, name = (v.decode() if isinstance(v, bytes) else str(v)
                       for v in np.asarray(handle, dtype=object).reshape(-1)[:2])
    return step_resources.StepResourceHandle(container, name, _KIND)


@StackOp.kernel(ctx=True, factory=True)
def _legacy_stack_kernel(elem_type, stack_name, node_name):
    base = stack_name or node_name

    def legacy_stack(ctx):
        ref = step_resources.create(ctx, _KIND, base, Stack(base, elem_type, -1))[()]
        return np.array([ref.container.encode(), ref.name.encode()], dtype=object)

    return legacy_stack


@StackPush.kernel(ctx=True)
def _legacy_push_kernel(ctx, handle, elem):
    return _stack_push_kernel(ctx, _legacy_ref(handle), elem)


@StackPop.kernel(ctx=True)
def _legacy_pop_kernel(ctx, handle):
    return _stack_pop_kernel(ctx, _legacy_ref(handle))


@StackClose.kernel(ctx=True)
def _legacy_close_kernel(ctx, handle):
    step_resources.delete(ctx, _legacy_ref(handle))


def stack(elem_type, max_size=-1, stack_name="", name=None):
    """A new step-scoped stack of `elem_type` values; returns its handle."""
    return StackV2(max_size, elem_type=dtypes.as_dtype(elem_type).base_dtype,
                   stack_name=stack_name, name=name or "Stack")


def stack_push(handle, elem, swap_memory=False, name=None):
    """Pushes `elem`; returns it (so consumers can depend on the push)."""
    return StackPushV2(handle, elem, swap_memory=swap_memory, name=name or "StackPush")


def stack_pop(handle, elem_type, name=None):
    """Pops the most recently pushed value."""
    return StackPopV2(handle, elem_type=dtypes.as_dtype(elem_type).base_dtype,
                      name=name or "StackPop")


def stack_close(handle, name=None):
    return StackCloseV2(handle, name=name or "StackClose")
