"""The master service: sessions over a cluster's devices, planned once, run per step.

A `MasterSession` holds the client's graph (shipped as GraphDef, extended incrementally). On a
new signature it prunes, places over every device of every task, partitions with `_Send` /
`_Recv`, and registers each task's partitions on its worker once; every step is then one
`RunGraph` per task with a fresh step id (`step_runner`). A remote task whose partition ends
on its own returns its small sends to this task with its RunGraph answer (`push_plan`). A
step without a deadline whose remote partitions each read (head) and then only apply what
this task sends them (body) runs split instead: two RunGraphs per remote task that carry
every transfer, and none served by this task (`split_step`).
While a step runs the master checks its tasks' health (GetStatus, `task_health`); a dead or
restarted task aborts the step everywhere, and the client gets UnavailableError or
AbortedError naming the task. The plans
and the cluster's devices are refreshed then, so the session works again once the task is
back (under its new incarnation: transfers keyed with the old one are refused). A restart that
no step reported (the task came back between two steps) fails the next new plan once with
AbortedError naming it, so a MonitoredSession recreates the session and restores its
checkpoint instead of running on the task's fresh state. A task known dead (it stopped
answering heartbeats) fails the steps that need it at once, until it answers.

Deadlines: a step has none unless `RunOptions.timeout_in_ms` (else the session's
`ConfigProto.operation_timeout_in_ms`) sets one, and then it holds for every partition. A
RunStep call that ends before its step (the client went away, was interrupted, or gave up)
cancels the step on every task, so no part of it runs on as an orphan.

A client in the master's process (`run_step_local`) exchanges ndarrays with it, and the
master with the workers of its own process: nothing is serialized on that path.
"""

from __future__ import annotations

import itertools
import os
import random
import threading
import time

from tensorflux.distributed import push_plan, split_step, step_runner, task_health
from tensorflux.distributed import status as status_mod
from tensorflux.distributed.rendezvous_mgr import task_of
from tensorflux.distributed.rpc.tensor_codec import decode_tensor, encode_tensor
from tensorflux.framework import errors, function
from tensorflux.framework.device_spec import DeviceSpec
from tensorflux.framework.graph import Graph
from tensorflux.framework.graph_import import import_graph_def
from tensorflux.framework.graph_io import nodes_to_graph_def
from tensorflux.framework.op_def import get_op_def
from tensorflux.platform import tf_logging as logging
from tensorflux.protos import config_pb2, master_pb2, worker_pb2
from tensorflux.runtime import partition as partition_mod
from tensorflux.runtime import placer, subgraph
from tensorflux.runtime.graph_ir import Node

fanout_pool = step_runner.fanout_pool
ABORT_RPC_SECS = 2.0
# Steps without a deadline whose remote partitions qualify run split (`split_step`);
# TFX_SPLIT_STEPS=0 runs them as one RunGraph per task.
SPLIT_STEPS = os.environ.get("TFX_SPLIT_STEPS", "1") != "0"



WAITING_LOG_SECS = 10.0  # how often a session waiting for a task says so (as TF)

def _check_answered_as(task: str, address: str, devices) -> None:
    """InvalidArgumentError when the server at `task`'s address is another task's (two tasks
    of the cluster spec share an address; without this, ops placed on `task` would find no
    device and the message would not say why)."""
    others = sorted({device.task for device in devices} - {task})
    if others:
        raise errors.InvalidArgumentError(
            None, None, f"Task {task} at {address} answered as {', '.join(others)}: two tasks "
            "of the cluster spec have the same address (or the address reaches a server of "
            "another cluster); give each task its own host:port.")


class RemoteDevice:
    """The master's view of a device of some task."""

    def __init__(self, attributes):
        self.name = attributes.name
        self.spec = DeviceSpec.from_string(attributes.name)
        self.device_type = attributes.device_type
        self.incarnation = attributes.incarnation
        self.memory_limit = attributes.memory_limit
        self.task = task_of(attributes.name)
        self.attributes = attributes


class _TaskPlan:
    __slots__ = ("task", "client", "handle", "feed_indices", "fetch_indices", "graph_def",
                 "push_keys", "receives")

    def __init__(self, task, client, handle, feed_indices, fetch_indices, graph_def=None,
                 push_keys=(), receives=True):
        self.task = task
        self.client = client
        self.handle = handle
        self.feed_indices = feed_indices
        self.fetch_indices = fetch_indices
        self.graph_def = graph_def
        # Sends to the master's task that come back with this task's RunGraph (push_plan).
        self.push_keys = push_keys
        self.receives = receives  # whether its partition waits for another task's sends


class MasterSession:
    """One client session on the cluster (see the module docstring)."""

    def __init__(self, master, handle: str, graph_def, config):
        self.master = master
        self.handle = handle
        self.config = config
        self.graph = Graph()
        with self.graph.as_default():
            import_graph_def(graph_def, name="")
        self.version = len(graph_def.node)
        self._cache: dict = {}
        self._placement_memo: dict = {}
        self._lock = threading.Lock()
        self._running: dict = {}  # step id -> its task plans, while the step runs
        self._closed = False
        # Tasks whose failure a step reported to the client ("*": a failure naming none); a
        # restart of any other task is reported once before a plan runs on its new state.
        self._reported: set = set()
        self._set_devices(master.cluster_devices(self._timeout(),
                                                 filters=config.device_filters))

    def _set_devices(self, devices) -> None:
        self._devices = devices
        self._devices_stale = False
        incarnations: dict = {}
        for device in devices:
            incarnations.setdefault(device.task, {})[device.name] = device.incarnation
        self._incarnations = incarnations

    def _timeout(self) -> float:
        ms = self.config.operation_timeout_in_ms if self.config is not None else 0
        return ms / 1000.0 if ms > 0 else self.master.default_timeout

    def extend(self, graph_def) -> None:
        """Adds new nodes, which may read (or depend on) nodes shipped before."""

        graph = self.graph
        new_names = {node.name for node in graph_def.node}
        trimmed = type(graph_def)()
        trimmed.CopyFrom(graph_def)
        input_map = {}
        late_controls = []
        for node in trimmed.node:
            kept = []
            for text in node.input:
                name = text.lstrip("^").split(":")[0]
                if name in new_names:
                    kept.append(text)
                elif text.startswith("^"):
                    late_controls.append((node.name, name))
                else:
                    tensor = text if ":" in text else f"{text}:0"
                    input_map[tensor] = graph.get_tensor_by_name(tensor)
                    kept.append(text)
            del node.input[:]
            node.input.extend(kept)
        with graph.as_default():
            import_graph_def(trimmed, input_map=input_map, name="")
        for node_name, control in late_controls:
            graph.get_operation_by_name(node_name)._add_control_input(
                graph.get_operation_by_name(control))
        self.version += len(graph_def.node)

    # -- planning ----------------------------------------------------------------------------

    def _plan(self, feeds, fetches, targets):
        key = (feeds, fetches, targets)
        with self._lock:
            found = self._cache.get(key)
            if found is None:
                found = self._build(feeds, fetches, targets)
                self._cache[key] = found
            return found

    def _build(self, feed_names, fetch_names, target_names):
        stale = self._devices_stale
        if stale:  # a task failed: place on the devices it has now
            before = self._incarnations
            self._set_devices(self.master.cluster_devices(self._timeout(), self._devices,
                                                          self.config.device_filters))
            for task, known in before.items():
                self._report_restart(task, known, self._incarnations.get(task, {}))
        graph = self.graph
        feeds = [graph.as_graph_element(n, allow_operation=False) for n in feed_names]
        fetches = [graph.as_graph_element(n, allow_operation=False) for n in fetch_names]
        targets = [graph.as_graph_element(n, allow_tensor=False) for n in target_names]
        nodes, fetch_points, _ = subgraph.build_step_graph(graph, feeds, fetches, targets)
        soft = bool(self.config.allow_soft_placement) if self.config else False
        local = [d for d in self._devices if d.task == self.master.task]
        default = local[0] if local else self._devices[0]
        placer.place(nodes, self._devices, soft, False, default_device=default,
                     memo=self._placement_memo)
        by_name = {d.name: d for d in self._devices}
        used = {n.assigned_device for n in nodes}
        if len(used) > 1:
            groups = partition_mod.partition(nodes, by_name, self.config)
        else:
            groups = {used.pop() if used else default.name: nodes}
        retval_def = get_op_def("_Retval")
        per_task: dict = {}
        for device_name, part_nodes in groups.items():
            per_task.setdefault(task_of(device_name), []).extend(part_nodes)
        remote = [t for t in per_task if self.master.client_for(t).needs_health_checks]
        fetched = {id(node) for node, _ in fetch_points}
        push_plan.copy_constants(per_task, remote, fetched)
        push_plan.move_control_relays(per_task, remote)
        push_plan.forward_feeds(per_task, self.master.task, remote, fetched)
        pushes = push_plan.push_keys(per_task, self.master.task, remote, bool(graph._functions))
        if not stale:
            for task in remote:
                self._check_incarnation(task)
        plans = []
        with_retvals = {}
        for task, task_nodes in sorted(per_task.items()):
            member = {id(n) for n in task_nodes}
            extra = []
            fetch_indices = []
            for index, (node, idx) in enumerate(fetch_points):
                if id(node) in member:
                    retval = Node(f"_retval_{index}", "_Retval",
                                  {"T": node.output_dtypes[idx].base_dtype, "index": index},
                                  [(node, idx)], [], node.assigned_device, [], op_def=retval_def)
                    retval.assigned_device = node.assigned_device
                    extra.append(retval)
                    fetch_indices.append(index)
            with_retvals[task] = task_nodes + extra
            plans.append(self._register(task, task_nodes + extra, fetch_indices,
                                        pushes.get(task, ()),
                                        any(n.op == "_Recv" for n in task_nodes)))
        split = None
        found = split_step.split_partitions(with_retvals, self.master.task, remote,
                                            bool(graph._functions)) if SPLIT_STEPS else None
        if found is not None:
            heads, local, bodies, slots = found
            split = split_step.Split(
                [self._register(t, heads[t], (), (), False) for t in sorted(heads)],
                self._register(self.master.task, local, (), (), False),
                [self._register(t, bodies[t], (), (), False) for t in sorted(bodies)], slots)
        return plans, split

    def _register(self, task, nodes, fetch_indices, push_keys, receives) -> _TaskPlan:
        """Registers `nodes` (with their `_Retval`s) on `task`'s worker: its plan."""
        graph = self.graph
        feed_indices = sorted(int(n.attrs["index"]) for n in nodes if n.op == "_Arg")
        graph_def = nodes_to_graph_def(nodes, use_assigned_device=True)
        if graph._functions:  # the bodies of the partition's function calls
            graph_def.library.CopyFrom(function.library_proto(graph))
        client = self.master.client_for(task)
        self.master.health.require(task, client)
        request = worker_pb2.RegisterGraphRequest(session_handle=self.handle,
                                                  graph_def=graph_def)
        response = client.call("register_graph", request, timeout=self._timeout(),
                               wait_for_ready=True)
        status_mod.raise_if_error(response.status, f"registering on {task}")
        return _TaskPlan(task, client, response.graph_handle, feed_indices, fetch_indices,
                         graph_def, push_keys, receives)

    def _check_incarnation(self, task: str) -> None:
        """AbortedError when `task` restarted since the session last saw it and no step has
        reported it yet (a restart between two steps, before a new plan is registered there):
        its variables, queues and tables are gone, so the session must be made again (TF1's
        MonitoredSession does, restoring the last checkpoint) rather than run on fresh state.
        """
        known = self._incarnations.get(task)
        if not known:
            return
        client = self.master.client_for(task)
        self.master.health.require(task, client)  # a task known dead fails at once
        status = client.call(
            "get_status", worker_pb2.GetStatusRequest(), timeout=self._timeout(),
            wait_for_ready=True)
        self._report_restart(task, known, {a.name: a.incarnation
                                           for a in status.device_attributes})

    def _report_restart(self, task: str, known: dict, now: dict) -> None:
        """AbortedError naming `task` if its devices have new incarnations (`known` -> `now`)
        and no step told the client that it failed: once told, plans run on its new state
        (its variables must be initialized or restored again, FailedPreconditionError
        otherwise)."""
        changed = [name for name, incarnation in known.items()
                   if now.get(name, incarnation) != incarnation]
        if not changed:
            return
        if task in self._reported or "*" in self._reported:
            self._reported.discard(task)
            return
        self._devices_stale = True
        error = errors.AbortedError(
            None, None, f"Task {task} restarted since the session last ran a step there "
            f"(new incarnation of {changed[0]}): the state it held (variables, queues) is "
            "gone; recreate the session (MonitoredSession does, restoring the latest "
            "checkpoint), or initialize its variables again.")
        error._tfx_task = task
        raise error

    def invalidate(self) -> None:
        """Drops the plans; the next step refreshes the devices (and their incarnations)."""
        with self._lock:
            self._cache.clear()
            self._devices_stale = True

    # -- steps -------------------------------------------------------------------------------

    def run(self, request, response, call=None) -> None:
        """RunStep with TensorProtos in and out (a client in another process); `call` (the
        gRPC context) cancels the step when the client's call ends first."""
        feed_values = [decode_tensor(t.tensor) for t in request.feed]
        values = self.run_arrays(tuple(t.name for t in request.feed), feed_values,
                                 tuple(request.fetch), tuple(request.target), request.options,
                                 response.metadata, call)
        for name, value in zip(request.fetch, values):
            encode_tensor(value, response.tensor.add(name=name).tensor)

    def _step_timeout(self, options):
        """The step's deadline in seconds (None: no deadline)."""
        if options is not None and options.timeout_in_ms > 0:
            return options.timeout_in_ms / 1000.0
        ms = self.config.operation_timeout_in_ms if self.config is not None else 0
        return ms / 1000.0 if ms > 0 else None

    def run_arrays(self, feed_names, feed_values, fetches, targets, options=None,
                   metadata=None, call=None) -> list:
        """One step: the fetched ndarrays, in the order of `fetches`."""
        step_id = random.getrandbits(62) + 1
        timeout = self._step_timeout(options)
        try:
            plans, split = self._plan(tuple(feed_names), tuple(fetches), tuple(targets))
            if timeout is not None:
                split = None  # a deadline bounds every partition at once: the usual step
            ran = plans if split is None else [*split.heads, split.local, *split.bodies]
            step = step_runner.StepRun(
                ran, step_id, self._incarnations,
                lambda error: self._abort(ran, step_id, error), self.master.local_rendezvous)
            with self._lock:
                if self._closed:
                    raise errors.CancelledError(None, None, "Session has been closed.")
                self._running[step_id] = step
            if call is not None and not call.add_callback(lambda: self._call_ended(step)):
                self._call_ended(step)
            try:
                if split is None:
                    values = step_runner.run_step(step, self.handle, feed_values, timeout,
                                                  self.master.health)
                else:
                    values = step_runner.run_split_step(step, split, self.handle,
                                                        feed_values, self.master.health)
            finally:
                with self._lock:
                    self._running.pop(step_id, None)
        except (errors.UnavailableError, errors.AbortedError) as err:
            with self._lock:
                self._reported.add(getattr(err, "_tfx_task", None) or "*")
            self.invalidate()
            raise
        if metadata is not None and options is not None and options.output_partition_graphs:
            for plan in plans:  # one GraphDef per task, each node with its device
                metadata.partition_graphs.add().CopyFrom(plan.graph_def)
        return [values[index] for index in range(len(fetches))]

    def close(self) -> None:
        """Cancels the steps still running (a queue runner blocked on a queue or an
        accumulator nobody feeds any more ends with CancelledError, as in TF)."""
        with self._lock:
            self._closed = True
            running = list(self._running.values())
        for step in running:
            step.fail("", errors.CancelledError(
                None, None, "The step was cancelled because its session was closed."))

    def _call_ended(self, step) -> None:
        """The client's RunStep call is over: a step still running has nobody to return to."""
        with self._lock:
            running = self._running.get(step.step_id) is step
        if running:
            step.fail("", errors.CancelledError(
                None, None, "The step was cancelled: its RunStep call ended (the client went "
                "away, was interrupted or stopped waiting)."))

    def _abort(self, plans, step_id, error) -> None:
        """Tells every task of the step to abort it, all at once, waiting for none."""
        request = worker_pb2.AbortRequest(step_id=step_id)
        status_mod.to_status(request.status, error)
        for plan in plans:
            try:
                plan.client.call_async("abort", request, ABORT_RPC_SECS,
                                       lambda error, response: None)
            except Exception:  # noqa: BLE001 - a task that cannot be told is failing anyway
                pass


class Master:
    """The master service logic of one server."""

    def __init__(self, server, default_timeout: float = 10.0):
        self._server = server
        self.task = server.task_name
        self.default_timeout = default_timeout
        self._sessions: dict = {}
        self._handles = itertools.count(1)
        self._lock = threading.Lock()
        self.health = task_health.TaskHealth()

    def close(self) -> None:
        self.health.close()

    def client_for(self, task):
        return self._server.client_for(task)

    def local_rendezvous(self, step_id: int):
        """The rendezvous of a step on this task's own worker (pushed sends land there)."""
        return self._server.worker.rendezvous.find_or_create(step_id)

    def cluster_devices(self, timeout: float, previous=None, filters=()) -> list:
        """Every device of every task; UnavailableError naming a task unreachable for
        `timeout` seconds (one bound for the whole cluster). `filters`
        (`ConfigProto.device_filters`, e.g. "/job:worker/task:0"): only the tasks they match
        are asked (TF: a session sees no other device).

        With `previous` (a refresh after a failure), a task that does not answer at once keeps
        its previous devices: steps that do not need it go on, and those that do fail naming
        it when their graph is registered there.
        """
        known: dict = {}
        for device in previous or ():
            known.setdefault(device.task, []).append(device)
        devices = []
        deadline = time.monotonic() + timeout
        next_log = time.monotonic() + WAITING_LOG_SECS
        for task in self._server.cluster_tasks():
            if filters and not any(_task_matches(task, f) for f in filters):
                continue
            client = self.client_for(task)
            if task in known and self.health.is_dead(task):
                devices.extend(known[task])  # steps that need it fail fast (TaskHealth)
                continue
            while True:
                # wait_for_ready: a task that is (re)starting is waited for, not failed at once.
                wait = min(2.0, timeout) if task in known else \
                    min(deadline - time.monotonic(), WAITING_LOG_SECS)
                try:
                    status = client.call("get_status", worker_pb2.GetStatusRequest(),
                                         timeout=max(0.05, wait), wait_for_ready=True)
                    break
                except errors.OpError as err:
                    if task in known:
                        status = None
                        break
                    if time.monotonic() >= deadline:
                        error = errors.UnavailableError(
                            None, None, f"Task {task} at {client.address} is unreachable "
                            f"after {timeout:.1f}s: {err.message}")
                        error._tfx_task = task
                        raise error from None
                    if time.monotonic() >= next_log:  # as TF's master, never silently
                        next_log = time.monotonic() + WAITING_LOG_SECS
                        logging.warning(
                            f"CreateSession still waiting for response from worker: {task} "
                            f"at {client.address} ({err.message}); giving up in "
                            f"{deadline - time.monotonic():.0f}s "
                            "(ConfigProto.operation_timeout_in_ms).")
                    time.sleep(0.05)
            if status is None:
                devices.extend(known[task])
            else:
                found = [RemoteDevice(a) for a in status.device_attributes]
                _check_answered_as(task, client.address, found)
                devices.extend(found)
        return devices

    def _session(self, handle) -> MasterSession:
        session = self._sessions.get(handle)
        if session is None:
            raise errors.AbortedError(None, None, f"Session {handle} is not found (the master "
                                      f"restarted or the session was closed).")
        return session

    def create_session(self, request):
        response = master_pb2.CreateSessionResponse()
        try:
            handle = f"{self.task}/s{next(self._handles)}-{random.getrandbits(32):08x}"
            session = MasterSession(self, handle, request.graph_def, request.config)
            with self._lock:
                self._sessions[handle] = session
            response.session_handle = handle
            response.graph_version = session.version
        except Exception as err:  # noqa: BLE001 - returned as a status
            status_mod.to_status(response.status, _op_error(err), self.task)
        return response

    def extend_session(self, request):
        response = master_pb2.ExtendSessionResponse()
        try:
            session = self._session(request.session_handle)
            session.extend(request.graph_def)
            response.new_graph_version = session.version
        except Exception as err:  # noqa: BLE001
            status_mod.to_status(response.status, _op_error(err), self.task)
        return response

    def run_step(self, request, call=None):
        """RunStep; `call` (the gRPC context) cancels the step if the call ends first."""
        response = master_pb2.RunStepResponse()
        try:
            self._session(request.session_handle).run(request, response, call)
        except Exception as err:  # noqa: BLE001
            del response.tensor[:]
            status_mod.to_status(response.status, _op_error(err), self.task)
        return response

    def run_step_local(self, handle, feed_names, feed_values, fetches, targets, options=None):
        """RunStep for a client in this process: ndarrays in, (ndarrays, RunMetadata or None)
        out; errors are raised as they would arrive over RPC."""

        metadata = config_pb2.RunMetadata() if options is not None else None
        try:
            values = self._session(handle).run_arrays(feed_names, feed_values, fetches,
                                                      targets, options, metadata)
        except Exception as err:  # noqa: BLE001 - re-raised with the task, as over RPC
            status = master_pb2.RunStepResponse().status
            status_mod.to_status(status, _op_error(err), self.task)
            error = status_mod.from_status(status)
        else:
            return values, metadata
        raise error

    def partial_run_setup(self, request):
        response = master_pb2.PartialRunSetupResponse()
        status_mod.to_status(response.status, errors.UnimplementedError(
            None, None, "Partial runs are not supported by tensorflux's distributed master."))
        return response

    def close_session(self, request):
        with self._lock:
            session = self._sessions.pop(request.session_handle, None)
        if session is not None:
            session.close()
        return master_pb2.CloseSessionResponse()

    def list_devices(self, request):
        response = master_pb2.ListDevicesResponse()
        try:
            for device in self.cluster_devices(self.default_timeout):
                target = response.local_device if device.task == self.task else \
                    response.remote_device
                target.add().CopyFrom(device.attributes)
        except Exception as err:  # noqa: BLE001
            status_mod.to_status(response.status, _op_error(err), self.task)
        return response

    def reset(self, request):
        """Clears the named containers (all when none) on every task of the cluster."""
        response = master_pb2.ResetResponse()
        cleanup = worker_pb2.CleanupAllRequest(container=list(request.container))
        try:
            for task in self._server.cluster_tasks():
                self.client_for(task).call("cleanup_all", cleanup, timeout=self.default_timeout)
            with self._lock:
                for session in self._sessions.values():
                    session.invalidate()
        except Exception as err:  # noqa: BLE001
            status_mod.to_status(response.status, _op_error(err), self.task)
        return response


def _task_matches(task: str, device_filter: str) -> bool:
    """Whether a device filter ('/job:worker/task:1', '/job:ps') admits `task`."""
    want = DeviceSpec.from_string(device_filter)
    have = DeviceSpec.from_string(task)
    return all(w is None or w == h for w, h in ((want.job, have.job),
                                                 (want.replica, have.replica),
                                                 (want.task, have.task)))


def _op_error(err):
    if isinstance(err, errors.OpError):
        return err
    if isinstance(err, (ValueError, TypeError, KeyError)):
        return errors.InvalidArgumentError(None, None, f"{type(err).__name__}: {err}")
    return errors.InternalError(None, None, f"{type(err).__name__}: {err}")

