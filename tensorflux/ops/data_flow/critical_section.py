"""`tf.CriticalSection`: a mutex resource whose `execute(fn)` serialises fn across steps.

Ops (TensorFlow's signatures): `MutexV2` outputs the mutex resource (shared by
container/shared_name, like queues); `MutexLock` is an asynchronous kernel that completes once
the mutex is held, outputting the lock (a per-step resource, in a variant); `ConsumeMutexLock`
releases it. A lock never consumed (a failed step) is released when its step ends, as TF
releases it when the lock tensor is destroyed. Waiting steps hold no executor thread and are
woken in arrival order; a cancelled step leaves the queue.
"""

from __future__ import annotations

import collections
import threading
from dataclasses import dataclass

from tensorflux.framework import dtypes, errors, nest, scopes
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor import Operation, Tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops.array import constants as array_constants
from tensorflux.ops.control_flow import primitives as control_flow_primitives
from tensorflux.ops.data_flow import step_resources

__all__ = ["CriticalSection"]

CRITICAL_SECTIONS = "critical_sections"
CRITICAL_SECTION_EXECUTIONS = "critical_section_executions"
_FEED_OPS = ("Placeholder", "PlaceholderV2", "PlaceholderWithDefault")


class _Waiter:
    __slots__ = ("ctx", "done", "token", "finished")

    def __init__(self, ctx, done):
        self.ctx = ctx
        self.done = done
        self.token = None
        self.finished = False


class MutexResource:
    """A mutex resource: at most one lock exists at a time; waiters are served FIFO."""

    def __init__(self, name: str):
        self.name = name
        self._lock = threading.Lock()
        self._held = False
        self._waiters: collections.deque = collections.deque()

    def __repr__(self) -> str:
        return f"<Mutex {self.name}>"

    def acquire(self, ctx, done) -> None:
        """Calls `done(lock_handle)` once the mutex is held by this step (maybe at once)."""
        waiter = _Waiter(ctx, done)
        with self._lock:
            if not self._held:
                self._held = True
                waiter.finished = True
            else:
                self._waiters.append(waiter)
        if waiter.finished:
            self._grant(waiter)
            return
        token = ctx.cancellation.register(lambda error: self._cancel(waiter, error))
        if token is None:
            self._cancel(waiter, ctx.cancellation.error)
        else:
            waiter.token = token

    def _cancel(self, waiter, error) -> None:
        with self._lock:
            if waiter.finished:
                return
            waiter.finished = True
            self._waiters.remove(waiter)
        text = f"MutexLock on {self.name} was cancelled while waiting"
        if error is not None and getattr(error, "message", ""):
            text += f" ({type(error).__name__}: {error.message.splitlines()[0]})"
        waiter.done(error=errors.CancelledError(None, None, text))

    def _grant(self, waiter) -> None:
        handle = step_resources.create(waiter.ctx, "MutexLock", self.name, _LockHeld(self))
        waiter.done(handle)

    def release(self) -> None:
        """Hands the mutex to the next waiter, or frees it."""
        with self._lock:
            waiter = self._waiters.popleft() if self._waiters else None
            if waiter is None:
                self._held = False
                return
            waiter.finished = True
        if waiter.token is not None:
            waiter.ctx.cancellation.deregister(waiter.token)
        waiter.ctx.submit_blocking(lambda: self._grant(waiter))


class _LockHeld:
    """The lock one step holds; released once, by ConsumeMutexLock or at step end."""

    def __init__(self, mutex: MutexResource):
        self._mutex = mutex
        self._released = False
        self._guard = threading.Lock()

    def release(self) -> None:
        with self._guard:
            if self._released:
                return
            self._released = True
        self._mutex.release()

    close_resource = release  # the step-end hook of per-step resources


MutexV2 = define_op(
    "MutexV2", outputs=["resource: resource"],
    attrs=["container: string = ''", "shared_name: string = ''"], stateful=True,
    differentiable=False)


@MutexV2.shape_fn
def _mutex_shape(*, container, shared_name):
    return TensorShape([])


@MutexV2.kernel(ctx=True, factory=True)
def _mutex_kernel(container, shared_name, node_name):
    name = shared_name or node_name

    def kernel(ctx):
        mutex = ctx.resource_mgr.lookup_or_create(container, name, lambda: MutexResource(name))
        if not isinstance(mutex, MutexResource):
            raise errors.InvalidArgumentError(
                None, None, f"Resource {container or 'localhost'}/{name} is {mutex!r}, not a "
                "mutex")
        return mutex

    return kernel


MutexLock = define_op(
    "MutexLock", inputs=["mutex: resource"], outputs=["mutex_lock: variant"], stateful=True,
    differentiable=False, step_scoped=True)


@MutexLock.shape_fn
def _mutex_lock_shape(mutex):
    return TensorShape([])


@MutexLock.kernel(asynchronous=True)
def _mutex_lock_kernel(ctx, mutex, done):
    if not isinstance(mutex, MutexResource):
        raise errors.InvalidArgumentError(None, None, f"Expected a mutex, got {mutex!r}")
    mutex.acquire(ctx, done)


ConsumeMutexLock = define_op(
    "ConsumeMutexLock", inputs=["mutex_lock: variant"], outputs=[], stateful=True,
    differentiable=False, step_scoped=True)


@ConsumeMutexLock.shape_fn
def _consume_mutex_lock_shape(mutex_lock):
    return []


@ConsumeMutexLock.kernel(ctx=True)
def _consume_mutex_lock_kernel(ctx, mutex_lock):
    held = step_resources.lookup(ctx, mutex_lock, "MutexLock")
    held.release()
    step_resources.delete(ctx, mutex_lock)


@dataclass(frozen=True)
class _ExecutionSignature:
    """One `execute` call: its lock op, its section's handle, the resources fn touched."""

    op: Operation
    handle: Tensor
    resources: tuple
    exclusive_resource_access: bool


def _identity(value):
    if isinstance(value, Operation):
        return control_flow_primitives.group(value)
    if hasattr(value, "_as_graph_element") and not isinstance(value, Tensor):
        value = value._as_graph_element()
    return array_constants.identity(value)


class CriticalSection:
    """A critical section: `execute(fn)` runs fn's ops while holding the section's mutex.

    Concurrent steps (or several `execute` calls of one step) run their functions one at a
    time. Sections created with the same `shared_name` share one mutex.

    Example:
        >>> cs = tf.CriticalSection()
        >>> incremented = cs.execute(lambda: v.assign_add(1))
    """

    def __init__(self, name=None, shared_name=None, critical_section_def=None,
                 import_scope=None):
        if critical_section_def is not None:
            self._init_from_def(critical_section_def, import_scope)
            return
        with scopes.name_scope(name, "CriticalSection", []) as scope:
            with scopes.init_scope():
                graph = graph_mod.get_default_graph()
                container = graph._container or ""
                if shared_name is None:
                    shared_name = scope
                self._handle = MutexV2(shared_name=shared_name, container=container, name=scope)
        graph_mod.get_default_graph().add_to_collections([CRITICAL_SECTIONS], self)

    def _init_from_def(self, critical_section_def, import_scope) -> None:
        """Wraps the mutex an imported graph already holds (a CriticalSectionDef's
        `mutex_name`, under `import_scope`), as TF's `_init_from_proto` does."""
        name = critical_section_def.mutex_name
        if isinstance(name, bytes):
            name = name.decode()
        if import_scope:
            name = f"{import_scope.rstrip('/')}/{name}"
        graph = graph_mod.get_default_graph()
        handle = graph.as_graph_element(name if ":" in name else f"{name}:0")
        if handle.op.type != "MutexV2":
            raise ValueError(f"critical_section_def names {handle.op.name}, a "
                             f"{handle.op.type} op, not a MutexV2")
        self._handle = handle

    @property
    def name(self) -> str:
        return self._handle.op.name

    def _is_self_handle(self, tensor) -> bool:
        if tensor is self._handle:
            return True
        op = tensor.op
        mine = self._handle.op
        return (op.type == "MutexV2" and op.get_attr("shared_name") == mine.get_attr("shared_name")
                and op.get_attr("container") == mine.get_attr("container"))

    def execute(self, fn, exclusive_resource_access=True, name=None):
        """Runs `fn()`'s ops inside the critical section; returns its (identity) results.

        Args:
            fn: a function of no arguments building ops; returns a nested structure of
                tensors (or operations).
            exclusive_resource_access: refuse to build when a resource fn uses is also used
                inside another critical section (when either asks for exclusive access).
            name: optional name scope.

        Returns:
            fn's results, each produced only after the section is released.

        Raises:
            ValueError: fn uses this section's own mutex (a deadlock), or shares a resource
                with another section's execution while exclusive access was asked for.
        """
        graph = graph_mod.get_default_graph()
        with scopes.name_scope(name, "critical_section_execute", []):
            lock = MutexLock(self._handle)
            first_new = len(graph.get_operations())
            with graph.control_dependencies([lock]):
                result = fn()
            created = graph.get_operations()[first_new:]
            self._lock_after_inputs(created, lock.op)
            resources = []
            for op in created:
                for tensor in op.inputs:
                    if tensor.dtype == dtypes.resource and tensor not in resources:
                        resources.append(tensor)
            if any(self._is_self_handle(t) for t in resources):
                raise ValueError(f"CriticalSection {self.name}: fn uses the section's own "
                                 "mutex, which would deadlock.")
            self._check_exclusive(graph, resources, exclusive_resource_access)
            flat = [_identity(x) for x in nest.flatten(result)]
            with graph.control_dependencies(flat):
                with scopes.colocate_with(self._handle):
                    released = ConsumeMutexLock(lock)
            # The results wait for the release, so fetching them runs it.
            with graph.control_dependencies([released]):
                outputs = nest.pack_sequence_as(result, [_identity(x) for x in flat])
        graph.add_to_collections([CRITICAL_SECTION_EXECUTIONS], _ExecutionSignature(
            lock.op, self._handle, tuple(resources), bool(exclusive_resource_access)))
        return outputs

    @staticmethod
    def _lock_after_inputs(created, lock_op) -> None:
        """Makes the lock wait for fn's outside inputs, so it is never held while they are
        still being computed."""
        inside = {id(op) for op in created} | {id(lock_op)}
        inside |= {id(op) for op in lock_op.control_inputs}
        inside |= {id(t.op) for t in lock_op.inputs}
        outside: dict = {}
        for op in created:
            for dep in [t.op for t in op.inputs] + list(op.control_inputs):
                # NOTE: placeholders are left out: a fed one has no producer to wait for, and
                # a control edge to it would demand that it run.
                if id(dep) not in inside and dep.type not in _FEED_OPS:
                    outside[id(dep)] = dep
        if outside:
            lock_op._add_control_input(control_flow_primitives.group(*outside.values()))

    def _check_exclusive(self, graph, resources, exclusive) -> None:
        for previous in graph.get_collection(CRITICAL_SECTION_EXECUTIONS):
            if self._is_self_handle(previous.handle):
                continue
            if not (exclusive or previous.exclusive_resource_access):
                continue
            shared = [t for t in resources if any(t is r for r in previous.resources)]
            if shared:
                raise ValueError(
                    f"CriticalSection {self.name}: this execution uses resources "
                    f"{[t.name for t in shared]} that an execution of CriticalSection "
                    f"{previous.handle.op.name} also uses, and exclusive resource access was "
                    "requested by one of them. Pass exclusive_resource_access=False to both "
                    "to allow it.")
