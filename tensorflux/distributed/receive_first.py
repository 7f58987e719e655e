"""Receive-first partitions: run what needs no remote input, receive everything, run the rest.

A worker partition usually waits for tensors of other tasks (a PS's variables) and sends
what it computes from them (the gradients); a PS partition sends its variables, then waits
for the gradients to apply. Run by the dataflow executor, each arrival is a hand-off: a pool
thread reads the RecvTensors stream and wakes the step's driver. Instead, the step's own
thread runs the partition in three phases: the *head* (every node that depends on no remote
receive: the PS's variable reads and their sends, the worker's feeds), then it reads
the step's transfers itself until every remote input is here, then the *body* (the rest),
each phase a straight-line fast path; values crossing from head to body, and the received
tensors, are the body's feeds. A head that fails ends the step before anything is waited for.

Waiting for every receive before the body can hold back a body node that the executor would
have run (and seen fail) as soon as some of its inputs arrived, while another receive waits
for something that never comes (a dequeue on an empty queue). So the wait is bounded:
past `FALLBACK_SECS` a watchdog runs the body's executor form on `submit`'s thread instead,
which takes the values as they arrive and fails as the executor always does.

Contract: `plan_receive_first(nodes, task, device, fetches, kernel_cache)` returns a
`ReceiveFirst` or None when the partition does not qualify. It qualifies when:

- every `_Recv` is from another task and not client-terminal, there is at least one, and
  the partition has no control flow (its receives happen exactly once per step, frame 0:0);
- every `_Send` of the body depends on every `_Recv` (data or control, transitively), so no
  schedule of the partition could have sent it before all the receives completed: waiting
  for all of them cannot hold back a value another task waits for (no new deadlock); the
  head depends on no receive, so it runs to its end on its own;
- the head, and the body with its `_Recv`s turned into `_Arg`s, are fast-path eligible (no
  other asynchronous kernel, such as a queue op that may block), and no op keeps per-step
  state (a TensorArray must outlive the head).

A step in which a received value is dead runs the body's executor form (with its `_Recv`s,
which find the values in the rendezvous). A key the master pushes
(`RemoteRendezvous.expect_pushes`) makes the worker use the executor form for that step.
"""

from __future__ import annotations

import copy
import threading
import time

from tensorflux.distributed.rendezvous_mgr import task_of
from tensorflux.runtime.executor import Executor
from tensorflux.runtime.fastpath import FastPath, eligible
from tensorflux.runtime.graph_ir import Node
from tensorflux.runtime.partition import CONTROL_FLOW_OPS
from tensorflux.runtime.plan import Plan
from tensorflux.runtime.rendezvous import create_key

# Feed indices of received values and of head values the body uses: above any feed index a
# master assigns.
RECEIVED_BASE = 1 << 30
CUT_BASE = 3 << 29
# How long the step's thread waits for every receive before the executor form takes over.
FALLBACK_SECS = 0.25
_SENDS = frozenset({"_Send", "_HostSend"})


class ReceiveFirst:
    """A partition run as head, receive, body (see the module docstring)."""

    __slots__ = ("head", "runner", "fallback", "keys", "indices", "cuts", "order")

    def __init__(self, head, runner, fallback, keys, indices, cuts, order):
        self.head = head  # FastPath of the head (its fetches, then the cut values), or None
        self.runner = runner  # FastPath of the body, receives as feeds `indices`
        self.fallback = fallback  # Executor of the body with its _Recvs
        self.keys = keys  # the rendezvous keys of the remote receives
        self.indices = indices
        self.cuts = cuts  # feed indices of the head values the body uses
        self.order = order  # per fetch: (True for the head, position in its results)

    def run(self, ctx, feeds, readers, rendezvous, deadline=None, submit=None):
        """Runs one step; `readers` read the step's transfers (`RemoteRendezvous.prefetch`);
        `submit` runs the executor form past FALLBACK_SECS. Returns the fetched values."""
        head = self.head.run(ctx, feeds) if self.head is not None else ()
        feeds = dict(feeds)
        if self.cuts:
            feeds.update(zip(self.cuts, head[len(head) - len(self.cuts):]))
        switch = _Switch(self.fallback, ctx, feeds, deadline, submit)
        WATCHDOG.watch(switch)
        try:
            for read in readers:
                read()
        finally:
            WATCHDOG.unwatch(switch)
        if switch.take_over():
            received = rendezvous.take_received(self.keys)
            if received is not None:
                feeds.update(zip(self.indices, received))
                body = self.runner.run(ctx, feeds)
            else:
                body = self.fallback.run(ctx, feeds, deadline)
        else:
            body = switch.result()
        return [head[position] if in_head else body[position]
                for in_head, position in self.order]


class _Switch:
    """Decides once who runs a step's body: the step's thread (after its receives) or, past
    FALLBACK_SECS, the executor form on another thread."""

    __slots__ = ("_lock", "_owner", "_executor", "_ctx", "_feeds", "_deadline", "_submit",
                 "_done", "_outcome", "due")

    def __init__(self, executor, ctx, feeds, deadline, submit):
        self._lock = threading.Lock()
        self._owner = None
        self._executor, self._ctx, self._feeds = executor, ctx, feeds
        self._deadline, self._submit = deadline, submit
        self._done = threading.Event()
        self._outcome = None
        self.due = time.monotonic() + FALLBACK_SECS

    def take_over(self) -> bool:
        """Whether the step's thread runs the body (the executor form has not started)."""
        with self._lock:
            if self._owner is None:
                self._owner = "step"
        return self._owner == "step"

    def expire(self) -> None:
        """The watchdog: the receives take long; the executor form runs the body."""
        with self._lock:
            if self._owner is not None or self._submit is None:
                return
            self._owner = "executor"
        self._submit(self._run)

    def _run(self) -> None:
        try:
            self._outcome = (self._executor.run(self._ctx, self._feeds, self._deadline), None)
        except BaseException as err:  # noqa: BLE001 - re-raised in the step's thread
            self._outcome = (None, err)
        self._done.set()

    def result(self):
        self._done.wait()
        values, error = self._outcome
        if error is not None:
            raise error
        return values


class _Watchdog:
    """One daemon thread per process expiring the `_Switch`es that are due; it sleeps
    FALLBACK_SECS / 2 between checks while any is watched, and waits otherwise."""

    def __init__(self):
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._watched: dict = {}
        self._thread = None

    def watch(self, switch) -> None:
        with self._lock:
            self._watched[id(switch)] = switch
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, daemon=True,
                                                name="tfx-receive-watchdog")
                self._thread.start()
            elif len(self._watched) == 1:
                self._wake.notify()

    def unwatch(self, switch) -> None:
        with self._lock:
            self._watched.pop(id(switch), None)

    def _loop(self) -> None:
        while True:
            with self._lock:
                while not self._watched:
                    self._wake.wait()
                now = time.monotonic()
                due = [s for s in self._watched.values() if s.due <= now]
                for switch in due:
                    del self._watched[id(switch)]
            for switch in due:
                switch.expire()
            time.sleep(FALLBACK_SECS / 2)


WATCHDOG = _Watchdog()


def _recv_masks(nodes, recvs) -> dict:
    """id(node) -> bit mask of the `recvs` it depends on (itself included for a receive)."""
    bit = {id(node): 1 << i for i, node in enumerate(recvs)}
    masks: dict = {}
    for start in nodes:
        if id(start) in masks:
            continue
        stack = [(start, False)]
        while stack:
            node, expanded = stack.pop()
            if id(node) in masks:
                continue
            sources = [src for src, _ in node.inputs] + list(node.control_inputs)
            if not expanded:
                stack.append((node, True))
                stack.extend((src, False) for src in sources if id(src) not in masks)
                continue
            mask = bit.get(id(node), 0)
            for src in sources:
                mask |= masks.get(id(src), 0)
            masks[id(node)] = mask
    return masks


def _arg(name, dtype, index, template):
    arg = Node(name, "_Arg", {"T": dtype.base_dtype, "index": index}, [], [], template.device,
               output_dtypes=[dtype])
    arg.assigned_device = template.assigned_device
    return arg


def _body(body, in_head, with_receives: bool):
    """Copies of the body's nodes: receives as `_Arg`s (unless `with_receives`), head values
    as `_Arg`s (Consts copied), control edges from the head dropped (it ran already).
    Returns (copies by id of the original, cut sources [(node, idx)], keys, indices)."""
    copies: dict = {}
    cut: dict = {}
    cut_sources, keys, indices = [], [], []
    for node in body:
        if node.op == "_Recv":
            keys.append(create_key(node.attrs["send_device"],
                                   int(node.attrs["send_device_incarnation"]),
                                   node.attrs["recv_device"], node.attrs["tensor_name"]))
            indices.append(RECEIVED_BASE + len(indices))
            if not with_receives:
                arg = _arg(node.name, node.output_dtypes[0], indices[-1], node)
                arg.control_inputs = list(node.control_inputs)
                copies[id(node)] = arg
                continue
        copies[id(node)] = copy.copy(node)
    for twin in list(copies.values()):
        inputs = []
        for src, idx in twin.inputs:
            if id(src) not in in_head:
                inputs.append((copies[id(src)], idx))
            elif src.op == "Const" and not src.inputs and not src.control_inputs:
                if id(src) not in copies:
                    copies[id(src)] = copy.copy(src)
                inputs.append((copies[id(src)], idx))
            else:
                if (id(src), idx) not in cut:
                    cut[(id(src), idx)] = _arg(f"{src.name}/_head_{idx}", src.output_dtypes[idx],
                                               CUT_BASE + len(cut_sources), src)
                    cut_sources.append((src, idx))
                inputs.append((cut[(id(src), idx)], 0))
        twin.inputs = inputs
        twin.control_inputs = [copies[id(src)] for src in twin.control_inputs
                               if id(src) not in in_head]
    copies.update((("cut", key), arg) for key, arg in cut.items())
    return copies, cut_sources, tuple(keys), tuple(indices)


def plan_receive_first(nodes, task: str, device, fetches, kernel_cache, with_head=True):
    """The `ReceiveFirst` form of a partition, or None (see the module docstring).

    Args:
        nodes: the partition's nodes (graph_ir), without `_Retval`s.
        task: this task's name.
        device: the partition's device.
        fetches: [(node, output index)] the partition returns, in order.
        kernel_cache: the session's kernel cache (stateful kernels are shared with the
            executor form of the same partition).
        with_head: whether a partition that sends before it receives qualifies.
    """
    recvs = []
    for node in nodes:
        # Per-step state (TensorArrays, stacks) is dropped at the end of each fast path.
        if node.op in CONTROL_FLOW_OPS or node.op_def.step_scoped:
            return None
        if node.op == "_Recv":
            if node.attrs.get("client_terminal") or \
                    task_of(node.attrs["send_device"]) == task:
                return None
            recvs.append(node)
    if not recvs:
        return None
    masks = _recv_masks(nodes, recvs)
    everything = (1 << len(recvs)) - 1
    head = [node for node in nodes if not masks[id(node)]]
    body = [node for node in nodes if masks[id(node)]]
    if head and not with_head:
        return None
    if any(node.op in _SENDS and masks[id(node)] != everything for node in body):
        return None
    in_head = {id(node) for node in head}
    copies, cut_sources, keys, indices = _body(body, in_head, False)
    body_fetches = [(copies[id(n)], idx) for n, idx in fetches if id(n) not in in_head]
    body_plan = Plan([n for k, n in copies.items()], device, body_fetches, kernel_cache)
    if not eligible(body_plan):
        return None
    head_runner = None
    order, positions = [], [0, 0]
    for node, _ in fetches:
        in_head_fetch = id(node) in in_head
        order.append((in_head_fetch, positions[0] if in_head_fetch else positions[1]))
        positions[0 if in_head_fetch else 1] += 1
    if head:
        head_fetches = [(n, idx) for n, idx in fetches if id(n) in in_head] + cut_sources
        head_plan = Plan(head, device, head_fetches, kernel_cache)
        if not eligible(head_plan):
            return None
        head_runner = FastPath(head_plan)
    twins, _, _, _ = _body(body, in_head, True)
    fallback = Executor(Plan(list(twins.values()), device,
                             [(twins[id(n)], idx) for n, idx in fetches
                              if id(n) not in in_head], kernel_cache))
    cuts = tuple(CUT_BASE + i for i in range(len(cut_sources)))
    return ReceiveFirst(head_runner, FastPath(body_plan), fallback, keys, indices, cuts, order)
