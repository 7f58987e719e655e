"""The worker service of one task: registered partitions run per step with a step id.

Contract: `register_graph` builds the executors of the task's partitions once and returns a
handle; `run_graph` runs every partition of that handle concurrently for one step, feeding
`_Arg` nodes from the request and returning the inputs of `_Retval` nodes (and, over RPC, the
step's sends named in `recv_key`: `_push_sends`); `recv_tensor`
serves another task's `_Recv` from this task's step rendezvous. A partition that qualifies
(`receive_first`) runs in the RunGraph's own thread: what needs no remote input, then its
transfers read by that thread, then the rest, with no executor hand-offs. Resources
(variables, queues) live in the task's devices and are shared by every session until their
container is reset.
Methods take and return protobuf messages, so the gRPC and in-process transports share them.
"""

from __future__ import annotations

import itertools
import os
import random
import threading
import time

import numpy as np

from tensorflux.distributed import status as status_mod
from tensorflux.distributed.receive_first import plan_receive_first
from tensorflux.distributed.rendezvous_mgr import RendezvousMgr, task_of
from tensorflux.distributed.rpc.tensor_codec import RECEIVE_BUFFERS, decode_tensor, encode_tensor
from tensorflux.framework import errors
from tensorflux.protos import device_attributes_pb2, worker_pb2
from tensorflux.runtime.cancellation import CancellationManager
from tensorflux.runtime.direct_session import _may_alias_state, late_step_error
from tensorflux.runtime.executor import Executor, shared_pool
from tensorflux.runtime.fastpath import FastPath, eligible
from tensorflux.runtime.graph_ir import nodes_from_graph_def
from tensorflux.runtime.partition import CONTROL_FLOW_OPS
from tensorflux.runtime.plan import Plan
from tensorflux.runtime.rendezvous import create_key
from tensorflux.runtime.step import DEAD, StepContext
from tensorflux.runtime.thread_budget import refresh as refresh_thread_budget

# Fetched values larger than this go back to a remote master as a RecvTensor byte stream.
PULL_BYTES = 1 << 20
ABORTED_MEMORY_SECS = 120.0
# Receives from other tasks are asked for at once, per source task (RemoteRendezvous.prefetch).
PREFETCH = True
# A partition whose sends that need remote inputs need all of them runs in the step's thread
# as head, receives, body (`receive_first`); TFX_RECEIVE_FIRST=0 turns it off, =nohead keeps
# it to partitions in which every node depends on some remote input (no head).
RECEIVE_FIRST = os.environ.get("TFX_RECEIVE_FIRST", "1") != "0"
RECEIVE_FIRST_HEAD = os.environ.get("TFX_RECEIVE_FIRST", "1") != "nohead"


class _Registered:
    """The executors of one registered graph."""

    def __init__(self, partitions, fetch_map, copy_flags, prefetch=(), receive_first=None):
        self.partitions = partitions  # [(device, runner, fast)]
        # The step's fetch index -> (partition, position); a task holds some of the fetches.
        self.fetch_map = fetch_map
        self.copy_flags = copy_flags  # fetch index -> may alias state (copy before returning)
        # [(source task, keys)]: what each step receives from other tasks, asked for at once.
        self.prefetch = prefetch
        # The single partition's ReceiveFirst form, or None.
        self.receive_first = receive_first


def _prefetch_keys(nodes, task: str) -> list:
    """[(source task, rendezvous keys)] of the `_Recv`s of `nodes` from other tasks, each
    received once per step at frame "0:0": none when the graph has control flow (whose
    receives repeat per iteration, or may never run)."""
    if any(node.op in CONTROL_FLOW_OPS for node in nodes):
        return []
    found: dict = {}
    for node in nodes:
        if node.op != "_Recv" or node.attrs.get("client_terminal"):
            continue
        source = task_of(node.attrs["send_device"])
        if source != task:
            found.setdefault(source, []).append(create_key(
                node.attrs["send_device"], int(node.attrs["send_device_incarnation"]),
                node.attrs["recv_device"], node.attrs["tensor_name"]))
    return sorted((source, tuple(keys)) for source, keys in found.items())


def device_attributes(device):
    return device_attributes_pb2.DeviceAttributes(
        name=device.name, device_type=device.device_type, memory_limit=device.memory_limit,
        incarnation=device.incarnation)


class Worker:
    """The worker service logic of one task (see the module docstring)."""

    def __init__(self, task: str, devices, worker_clients, shutdown=None):
        self.task = task
        self.devices = list(devices)
        self._by_name = {d.name: d for d in self.devices}
        self._graphs: dict = {}
        self._handles = itertools.count(1)
        self._token = f"{random.getrandbits(32):08x}"
        self._lock = threading.Lock()
        self._kernel_cache: dict = {}
        self._pool = shared_pool()
        self.rendezvous = RendezvousMgr(task, worker_clients, self._pool)
        self._active: dict = {}
        self._aborted: dict = {}
        self._shutdown = shutdown

    # -- status and sessions -----------------------------------------------------------------

    def get_status(self, request):
        response = worker_pb2.GetStatusResponse()
        response.device_attributes.extend(device_attributes(d) for d in self.devices)
        return response

    def create_worker_session(self, request):
        return worker_pb2.CreateWorkerSessionResponse()

    def delete_worker_session(self, request):
        with self._lock:
            self._kernel_cache.pop(request.session_handle, None)
        return worker_pb2.DeleteWorkerSessionResponse()

    # -- graphs ------------------------------------------------------------------------------

    def register_graph(self, request):
        response = worker_pb2.RegisterGraphResponse()
        try:
            registered = self._build(request.graph_def, request.session_handle)
        except Exception as err:  # noqa: BLE001 - reported to the master as a status
            status_mod.to_status(response.status, _as_op_error(err), self.task)
            return response
        with self._lock:
            # The token keeps a restarted task from mistaking an old plan's handle for a new
            # graph of the same number.
            handle = f"{request.session_handle}/{self._token}/g{next(self._handles)}"
            self._graphs[handle] = registered
        response.graph_handle = handle
        return response

    def _build(self, graph_def, session_handle: str) -> _Registered:
        nodes = nodes_from_graph_def(graph_def)
        retvals = [n for n in nodes if n.op == "_Retval"]
        nodes = [n for n in nodes if n.op != "_Retval"]
        groups: dict = {}
        for node in nodes:
            device = node.assigned_device or self.devices[0].name
            if device not in self._by_name:
                raise errors.InvalidArgumentError(
                    None, None, f"Node '{node.name}' is assigned to {device}, which is not a "
                    f"device of task {self.task} ({', '.join(self._by_name)}).")
            groups.setdefault(device, []).append(node)
        fetch_points = {int(r.attrs["index"]): r.inputs[0] for r in retvals}
        partitions = []
        fetch_map = {}
        receive_first = None
        cache = self._kernel_cache.setdefault(session_handle, {})
        for device_name, part_nodes in sorted(groups.items()):
            device = self._by_name[device_name]
            member = {id(n) for n in part_nodes}
            local = []
            for index, (node, idx) in sorted(fetch_points.items()):
                if id(node) in member:
                    fetch_map[index] = (len(partitions), len(local))
                    local.append((node, idx))
            plan = Plan(part_nodes, device, local, cache)
            fast = eligible(plan)
            partitions.append((device, FastPath(plan) if fast else Executor(plan), fast))
            if len(groups) == 1 and not fast and PREFETCH and RECEIVE_FIRST:
                receive_first = plan_receive_first(part_nodes, self.task, device, local, cache,
                                                   RECEIVE_FIRST_HEAD)
        copy_flags = {i: _may_alias_state(*point) for i, point in fetch_points.items()}
        prefetch = _prefetch_keys(nodes, self.task) if PREFETCH else []
        return _Registered(partitions, fetch_map, copy_flags, prefetch, receive_first)

    def deregister_graph(self, request):
        with self._lock:
            self._graphs.pop(request.graph_handle, None)
        return worker_pb2.DeregisterGraphResponse()

    # -- steps -------------------------------------------------------------------------------

    def run_graph_local(self, request, feeds=None, deadline=None):
        """Runs a step for a caller in this process: (response with the status, {fetch index:
        ndarray}). `feeds` ({feed index: ndarray}) replaces the request's `send` tensors;
        past `deadline` (time.monotonic()) the step is cancelled (DeadlineExceededError)."""
        values = {}

        def emit(index, value, copy, rendezvous):
            values[index] = _snapshot(value) if copy else value

        response = self._execute(request, feeds, emit, worker_pb2.RunGraphResponse(),
                                 deadline)
        return response, values

    def run_graph(self, request, call=None):
        """Runs a step for a remote master. A fetched value over PULL_BYTES is not put in the
        response: it stays in the step's rendezvous under a key the response names
        (`"<index>;<key>"`), and the master pulls it over RecvTensor as a byte stream.

        `call` (the gRPC context, or None) bounds the step by the call's deadline, and a call
        that ends first (the master cancelled it or went away) cancels the step."""
        response = worker_pb2.RunGraphResponse()
        deadline = None
        if call is not None:
            remaining = call.time_remaining()
            if remaining is not None and remaining < 1e8:
                deadline = time.monotonic() + remaining

        def emit(index, value, copy, rendezvous):
            if value.nbytes > PULL_BYTES and value.dtype != object:
                device = self.devices[0]
                key = create_key(device.name, device.incarnation, self.task, f"_fetch_{index}")
                if copy:  # a snapshot of the variable, in a buffer reused step after step
                    value = _snapshot(value)
                rendezvous.send(key, value, False)
                response.recv.add(name=f"{index};{key}")
            else:
                encode_tensor(value, response.recv.add(name=str(index)).tensor)

        return self._execute(request, None, emit, response, deadline, call, push=True)

    def _execute(self, request, feeds, emit, response, deadline=None, call=None, push=False):
        registered = self._graphs.get(request.graph_handle)
        step_id = request.step_id
        if registered is None or step_id in self._aborted:
            what = f"Step {step_id} was aborted" if registered is not None else \
                f"Graph handle {request.graph_handle} is not registered on {self.task} (the " \
                "task restarted?)"
            status_mod.to_status(response.status, errors.AbortedError(None, None, what),
                                 self.task)
            return response
        if feeds is None:
            feeds = {int(t.name): decode_tensor(t.tensor) for t in request.send}
        refresh_thread_budget()
        rendezvous = self.rendezvous.find_or_create(step_id)
        first = registered.receive_first
        readers = None
        if first is not None and not rendezvous.expects_any(first.keys):
            readers = []  # read by this thread (`_receive_then_run`), not on a pool thread
        timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
        for source, keys in registered.prefetch:
            rendezvous.prefetch(source, keys, readers, timeout)
        cancellation = CancellationManager()
        with self._lock:
            self._active[step_id] = (cancellation, rendezvous)
        ended = []
        if call is not None:
            def call_ended():
                if not ended:
                    self._abort_step(step_id, errors.CancelledError(
                        None, None, f"Step {step_id} on {self.task} was cancelled: its "
                        "RunGraph call ended first (the master cancelled it or went away)."))

            if not call.add_callback(call_ended):
                call_ended()
        try:
            if readers is not None:
                results = self._receive_then_run(registered, readers, feeds, step_id,
                                                 rendezvous, cancellation, deadline)
            else:
                results = self._run_partitions(registered, feeds, step_id, rendezvous,
                                               cancellation, deadline)
            for index, (partition, position) in registered.fetch_map.items():
                value = results[partition][position]
                if value is DEAD:
                    raise errors.InvalidArgumentError(
                        None, None, f"Retval[{index}] does not have value (untaken branch)")
                copy = registered.copy_flags[index]
                if hasattr(value, "read") and not isinstance(value, np.ndarray):
                    value = value.read()
                    copy = True
                emit(index, np.asarray(value), copy, rendezvous)
            if push and request.recv_key:
                _push_sends(request.recv_key, rendezvous, response)
        except Exception as err:  # noqa: BLE001 - every failure goes back as a status
            del response.recv[:]
            status_mod.to_status(response.status, _as_op_error(err), self.task)
        finally:
            ended.append(True)
            with self._lock:
                self._active.pop(step_id, None)
            self.rendezvous.step_finished(step_id)
        return response

    def _receive_then_run(self, registered, readers, feeds, step_id, rendezvous,
                          cancellation, deadline):
        """Runs a receive-first partition in this thread: its head, its transfers read here,
        then its body (`receive_first`)."""
        ctx = StepContext(step_id, registered.partitions[0][0], rendezvous, cancellation, None,
                          None)
        try:
            values = registered.receive_first.run(ctx, feeds, readers, rendezvous, deadline,
                                                  self._pool.submit)
        except BaseException as err:
            cancellation.start_cancel(err)
            rendezvous.abort(err)
            raise
        return [values]

    def _run_partitions(self, registered, feeds, step_id, rendezvous, cancellation, deadline):
        partitions = registered.partitions
        results = [None] * len(partitions)
        failures = []

        def run_one(index):
            device, runner, fast = partitions[index]
            ctx = StepContext(step_id, device, rendezvous, cancellation, None, None)
            try:
                results[index] = runner.run(ctx, feeds) if fast else \
                    runner.run(ctx, feeds, deadline)
                if fast and deadline is not None and time.monotonic() > deadline:
                    raise late_step_error(device.name, deadline)  # blocked past it
            except BaseException as err:  # noqa: BLE001 - re-raised below
                failures.append(err)
                cancellation.start_cancel(err)
                rendezvous.abort(err)

        futures = [self._pool.submit(run_one, i) for i in range(1, len(partitions))]
        if partitions:
            run_one(0)
        for future in futures:
            future.result()
        if failures:
            for err in failures:
                if not isinstance(err, errors.CancelledError):
                    raise err
            raise failures[0]
        return results

    def abort(self, request):
        """Aborts a step (another task failed): its blocked ops are cancelled, and a RunGraph
        or RecvTensor of it that arrives later is refused."""
        error = status_mod.from_status(request.status) or errors.AbortedError(
            None, None, f"Step {request.step_id} aborted")
        self._abort_step(request.step_id, error)
        return worker_pb2.AbortResponse()

    def _abort_step(self, step_id: int, error) -> None:
        now = time.monotonic()
        with self._lock:
            active = self._active.get(step_id)
            self._aborted[step_id] = now
            if len(self._aborted) > 1000:
                self._aborted = {s: t for s, t in self._aborted.items()
                                 if now - t < ABORTED_MEMORY_SECS}
        if active is not None:
            cancellation, rendezvous = active
            cancellation.start_cancel(error)
            rendezvous.abort(error)
        else:
            self.rendezvous.cleanup(step_id, error)

    def cleanup_graph(self, request):
        self.rendezvous.cleanup(request.step_id)
        return worker_pb2.CleanupGraphResponse()

    def cleanup_all(self, request):
        containers = list(request.container)
        for device in self.devices:
            if containers:
                for container in containers:
                    device.resource_mgr.cleanup(container)
            else:
                device.resource_mgr.clear()
        with self._lock:
            self._kernel_cache.clear()
            self._graphs.clear()
        return worker_pb2.CleanupAllResponse()

    # -- transfers ---------------------------------------------------------------------------

    def recv_tensor(self, request, respond) -> None:
        """Calls `respond(error, value, is_dead, incarnation)` once the tensor is here."""
        if request.step_id in self._aborted:
            respond(errors.AbortedError(None, None, f"Step {request.step_id} was aborted on "
                                        f"{self.task}"), None, False, 0)
            return
        rendezvous = self.rendezvous.find_or_create(request.step_id)
        incarnation = 0
        device_name = request.rendezvous_key.split(";", 1)[0]
        device = self._by_name.get(device_name)
        if device is not None:
            incarnation = device.incarnation

        def done(error, value, is_dead):
            respond(error, value, is_dead, incarnation)

        rendezvous.recv_local_async(request.rendezvous_key, done)

    def logging(self, request):
        return worker_pb2.LoggingResponse()

    def tracing(self, request):
        return worker_pb2.TracingResponse()

    def shutdown(self, request):
        if self._shutdown is not None:
            threading.Thread(target=self._shutdown, args=(request.grace_secs or 0.5,),
                             daemon=True).start()
        return worker_pb2.ShutdownResponse()

    def close(self) -> None:
        self.rendezvous.abort_all(errors.CancelledError(None, None,
                                                        f"Worker {self.task} is shutting down"))


def _push_sends(keys, rendezvous, response) -> None:
    """Answers `RunGraphRequest.recv_key`: the step's sends under those keys go back in the
    response (`push_plan`), each as one `recv` entry named `=<key>` (the value), `!<key>` (a
    dead value) or `?<key>` (not sent, or over PULL_BYTES: the receiver pulls it)."""
    for key in keys:
        item = rendezvous.take_small(key, PULL_BYTES)
        entry = response.recv.add()
        if item is None:
            entry.name = f"?{key}"
        elif item[1]:
            entry.name = f"!{key}"
        else:
            entry.name = f"={key}"
            encode_tensor(item[0], entry.tensor)


def _snapshot(value: np.ndarray) -> np.ndarray:
    """A copy of `value` (large ones in a reusable buffer)."""
    if value.nbytes < RECEIVE_BUFFERS.min_bytes or value.dtype == object:
        return value.copy()
    out = RECEIVE_BUFFERS.empty(value.shape, value.dtype)
    np.copyto(out, value)
    return out


def _as_op_error(err):
    if isinstance(err, errors.OpError):
        return err
    return errors.InternalError(None, None, f"{type(err).__name__}: {err}")


def wait_until(predicate, timeout: float, interval: float = 0.01) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return predicate()
