"""Per-step resources: state that lives for one step only (TensorArrays, gradient stacks).

Contract: a step-scoped resource is created by a kernel in its device's resource manager under
the container `per_step_container(ctx.step_id)`, and the executor drops that container when the
step's partition ends (`runtime.executor.end_step`), whether the step succeeded or failed. Op
definitions whose kernels create or use such resources pass `define_op(..., step_scoped=True)`,
which tells the plan to call the hook. The tensor flowing between ops is a `StepResourceHandle`
in a 0-d object array (dtype `resource`).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from tensorflux.framework import errors

_IDS = itertools.count(1)


def per_step_container(step_id: int) -> str:
    """The container the runtime drops at step end (same format as runtime/executor.py)."""
    return f"__per_step_{step_id}"


@dataclass(frozen=True)
class StepResourceHandle:
    """Names a step-scoped resource: (container, name) on the device that created it."""

    container: str
    name: str
    kind: str

    def __repr__(self) -> str:
        return f"<{self.kind} {self.container}/{self.name}>"


def create(ctx, kind: str, base_name: str, resource):
    """Registers `resource` for this step; returns its handle as a 0-d object array."""
    container = per_step_container(ctx.step_id)
    name = f"{base_name}_{next(_IDS)}"
    ctx.resource_mgr.create(container, name, resource)
    handle = np.empty((), dtype=object)
    handle[()] = StepResourceHandle(container, name, kind)
    return handle


def lookup(ctx, handle, kind: str):
    """The resource a handle names; NotFoundError if it is gone (closed or another step)."""
    ref = handle[()] if isinstance(handle, np.ndarray) else handle
    if not isinstance(ref, StepResourceHandle) or ref.kind != kind:
        raise errors.InvalidArgumentError(None, None, f"Expected a {kind} handle, got {ref!r}.")
    found = ctx.resource_mgr.get(ref.container, ref.name)
    if found is None:
        raise errors.NotFoundError(
            None, None, f"{kind} {ref.name} does not exist in this step (it was closed, or the "
            "handle comes from another step).")
    return found


def delete(ctx, handle) -> None:
    ref = handle[()] if isinstance(handle, np.ndarray) else handle
    if ctx.resource_mgr.get(ref.container, ref.name) is not None:
        ctx.resource_mgr.delete(ref.container, ref.name)
