"""The master service: sessions over a cluster's devices, planned once, run per step.

A `MasterSession` holds the client's graph (shipped as GraphDef, extended incrementally). On a
new signature it prunes, places over every device of every task, partitions with `_Send` /
`_Recv`, and registers each task's partitions on its worker once; every step is then one
`RunGraph` per task with a fresh step id. While a step runs the master checks its tasks'
health (GetStatus); a dead or restarted task aborts the step everywhere, and the client gets
UnavailableError or AbortedError naming the task. The cache is dropped then, so the session
works again once the task is back.
"""

from __future__ import annotations

import itertools
import random
import threading
import time

from tensorflux.distributed import status as status_mod
from tensorflux.distributed.rendezvous_mgr import task_of
from tensorflux.framework import errors
from tensorflux.framework.device_spec import DeviceSpec
from tensorflux.framework.graph import Graph
from tensorflux.protos import master_pb2, worker_pb2
from tensorflux.runtime import placer, subgraph

_FANOUT_LOCK = threading.Lock()
_FANOUT = []


def fanout_pool():
    """Threads that wait on RunGraph calls (kept apart from the executors' pool)."""
    from concurrent.futures import ThreadPoolExecutor

    with _FANOUT_LOCK:
        if not _FANOUT:
            _FANOUT.append(ThreadPoolExecutor(max_workers=64, thread_name_prefix="tfx-master"))
        return _FANOUT[0]

HEARTBEAT_SECS = 1.0


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
    __slots__ = ("task", "client", "handle", "feed_indices", "fetch_indices", "graph_def")

    def __init__(self, task, client, handle, feed_indices, fetch_indices, graph_def=None):
        self.task = task
        self.client = client
        self.handle = handle
        self.feed_indices = feed_indices
        self.fetch_indices = fetch_indices
        self.graph_def = graph_def


class MasterSession:
    """One client session on the cluster (see the module docstring)."""

    def __init__(self, master, handle: str, graph_def, config):
        from tensorflux.framework.graph_import import import_graph_def

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
        self._devices = master.cluster_devices(self._timeout())

    def _timeout(self) -> float:
        ms = self.config.operation_timeout_in_ms if self.config is not None else 0
        return ms / 1000.0 if ms > 0 else self.master.default_timeout

    def extend(self, graph_def) -> None:
        """Adds new nodes, which may read (or depend on) nodes shipped before."""
        from tensorflux.framework.graph_import import import_graph_def

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
        from tensorflux.framework.graph_io import nodes_to_graph_def
        from tensorflux.framework.op_def import get_op_def
        from tensorflux.runtime.graph_ir import Node

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
            from tensorflux.runtime import partition as partition_mod

            groups = partition_mod.partition(nodes, by_name, self.config)
        else:
            groups = {used.pop() if used else default.name: nodes}
        retval_def = get_op_def("_Retval")
        per_task: dict = {}
        for device_name, part_nodes in groups.items():
            per_task.setdefault(task_of(device_name), []).extend(part_nodes)
        plans = []
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
            feed_indices = sorted(int(n.attrs["index"]) for n in task_nodes if n.op == "_Arg")
            graph_def = nodes_to_graph_def(task_nodes + extra, use_assigned_device=True)
            client = self.master.client_for(task)
            request = worker_pb2.RegisterGraphRequest(session_handle=self.handle,
                                                      graph_def=graph_def)
            response = client.call("register_graph", request, timeout=self._timeout())
            status_mod.raise_if_error(response.status, f"registering on {task}")
            plans.append(_TaskPlan(task, client, response.graph_handle, feed_indices,
                                   fetch_indices, graph_def))
        return plans

    def invalidate(self) -> None:
        with self._lock:
            self._cache.clear()
        try:
            self._devices = self.master.cluster_devices(self._timeout())
        except errors.OpError:
            pass

    # -- steps -------------------------------------------------------------------------------

    def run(self, request, response) -> None:
        feed_names = tuple(t.name for t in request.feed)
        fetches = tuple(request.fetch)
        targets = tuple(request.target)
        plans = self._plan(feed_names, fetches, targets)
        feed_tensors = [t.tensor for t in request.feed]
        step_id = random.getrandbits(62) + 1
        timeout = request.options.timeout_in_ms / 1000.0 if request.options.timeout_in_ms \
            else None
        results = self._run_tasks(plans, feed_tensors, step_id, timeout)
        for index, name in enumerate(fetches):
            response.tensor.add(name=name).tensor.CopyFrom(results[index])
        if request.options.output_partition_graphs:
            for plan in plans:  # one GraphDef per task, each node with its device
                response.metadata.partition_graphs.add().CopyFrom(plan.graph_def)

    def _run_tasks(self, plans, feed_tensors, step_id, timeout):
        pool = fanout_pool()
        outcome = {}
        failure = []
        done = threading.Event()
        remaining = [len(plans)]
        lock = threading.Lock()

        def run_task(plan):
            request = worker_pb2.RunGraphRequest(session_handle=self.handle,
                                                 graph_handle=plan.handle, step_id=step_id)
            for index in plan.feed_indices:
                request.send.add(name=str(index)).tensor.CopyFrom(feed_tensors[index])
            try:
                response = plan.client.call("run_graph", request, timeout=timeout)
                status_mod.raise_if_error(response.status)
                for item in response.recv:
                    outcome[int(item.name)] = item.tensor
            except errors.OpError as err:
                with lock:
                    failure.append((plan.task, err))
            finally:
                with lock:
                    remaining[0] -= 1
                    if remaining[0] == 0 or failure:
                        done.set()

        for plan in plans:
            pool.submit(run_task, plan)
        health = self._health_checker(plans, failure, lock, done)
        while not done.wait(HEARTBEAT_SECS):
            health()
        if failure:
            task, error = self._root_failure(failure)
            self._abort(plans, step_id, error)
            with lock:
                pending = remaining[0]
            deadline = time.monotonic() + 5.0
            while pending and time.monotonic() < deadline:
                time.sleep(0.01)
                with lock:
                    pending = remaining[0]
            if isinstance(error, (errors.UnavailableError, errors.AbortedError)):
                self.invalidate()
            raise error
        return outcome

    @staticmethod
    def _root_failure(failures):
        for task, error in failures:
            if not isinstance(error, errors.CancelledError):
                return task, error
        return failures[0]

    def _health_checker(self, plans, failure, lock, done):
        incarnations: dict = {}
        for device in self._devices:
            incarnations.setdefault(device.task, {})[device.name] = device.incarnation

        def check():
            for plan in plans:
                try:
                    status = plan.client.call("get_status", worker_pb2.GetStatusRequest(),
                                              timeout=max(2.0, HEARTBEAT_SECS * 2))
                except errors.OpError as err:
                    error = errors.UnavailableError(
                        None, None, f"Task {plan.task} failed during the step: {err.message}")
                    error._tfx_task = plan.task
                    with lock:
                        failure.append((plan.task, error))
                    done.set()
                    return
                known = incarnations.get(plan.task, {})
                for attrs in status.device_attributes:
                    if attrs.name in known and known[attrs.name] != attrs.incarnation:
                        error = errors.AbortedError(
                            None, None, f"Task {plan.task} restarted during the step (new "
                            f"incarnation); the step was aborted.")
                        error._tfx_task = plan.task
                        with lock:
                            failure.append((plan.task, error))
                        done.set()
                        return

        return check

    def _abort(self, plans, step_id, error) -> None:
        request = worker_pb2.AbortRequest(step_id=step_id)
        status_mod.to_status(request.status, error)
        for plan in plans:
            try:
                plan.client.call("abort", request, timeout=2.0)
            except errors.OpError:
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

    def client_for(self, task):
        return self._server.client_for(task)

    def cluster_devices(self, timeout: float) -> list:
        """Every device of every task; UnavailableError naming an unreachable task."""
        devices = []
        for task in self._server.cluster_tasks():
            client = self.client_for(task)
            deadline = time.monotonic() + timeout
            while True:
                try:
                    status = client.call("get_status", worker_pb2.GetStatusRequest(),
                                         timeout=max(0.5, min(2.0, deadline - time.monotonic())))
                    break
                except errors.OpError as err:
                    if time.monotonic() >= deadline:
                        error = errors.UnavailableError(
                            None, None, f"Task {task} at {client.address} is unreachable "
                            f"after {timeout:.1f}s: {err.message}")
                        error._tfx_task = task
                        raise error from None
                    time.sleep(0.1)
            devices.extend(RemoteDevice(a) for a in status.device_attributes)
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

    def run_step(self, request):
        response = master_pb2.RunStepResponse()
        try:
            self._session(request.session_handle).run(request, response)
        except Exception as err:  # noqa: BLE001
            del response.tensor[:]
            status_mod.to_status(response.status, _op_error(err), self.task)
        return response

    def partial_run_setup(self, request):
        response = master_pb2.PartialRunSetupResponse()
        status_mod.to_status(response.status, errors.UnimplementedError(
            None, None, "Partial runs are not supported by tensorflux's distributed master."))
        return response

    def close_session(self, request):
        with self._lock:
            self._sessions.pop(request.session_handle, None)
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


def _op_error(err):
    if isinstance(err, errors.OpError):
        return err
    if isinstance(err, (ValueError, TypeError, KeyError)):
        return errors.InvalidArgumentError(None, None, f"{type(err).__name__}: {err}")
    return errors.InternalError(None, None, f"{type(err).__name__}: {err}")

