"""The in-process master and workers: plans cached per signature, partitions run concurrently.

`DirectSession.run_step` is the life of a step from DESIGN.md for one process: look the
signature up; on a miss prune, place, partition and build one executor per partition; then run
every partition with one rendezvous and one cancellation manager, and collect the fetches.
"""

from __future__ import annotations

import itertools
import threading
import time

import numpy as np

from tensorflux.framework import errors
from tensorflux.runtime import partition as partition_mod
from tensorflux.runtime import placer, process_config, rewrites, subgraph, thread_budget
from tensorflux.runtime.cancellation import CancellationManager
from tensorflux.runtime.device import local_devices
from tensorflux.runtime.executor import Executor, shared_pool
from tensorflux.runtime.fastpath import FastPath, eligible
from tensorflux.runtime.host_memory import keep_freed_memory
from tensorflux.runtime.plan import Plan
from tensorflux.runtime.rendezvous import LocalRendezvous
from tensorflux.runtime.session_state import SessionTensorStore
from tensorflux.runtime.step import DEAD, StepContext

_STEP_IDS = itertools.count(1)

# Ops whose output may be the very buffer of their input (so a fetched value may alias state).
_FORWARDING = frozenset({
    "Identity", "RefIdentity", "Snapshot", "StopGradient", "PreventGradient", "Switch",
    "RefSwitch", "Merge", "RefMerge", "Enter", "RefEnter", "Exit", "RefExit", "NextIteration",
    "RefNextIteration", "_Recv", "Print", "CheckNumerics", "EnsureShape", "IdentityN",
    "PlaceholderWithDefault", "_Arg",
})


def next_step_id() -> int:
    return next(_STEP_IDS)


def _may_alias_state(node, idx) -> bool:
    seen = 0
    while seen < 1000:
        if node.output_dtypes and node.output_dtypes[idx].is_ref_dtype:
            return True
        if node.op not in _FORWARDING or not node.inputs:
            return node.op in ("VariableV2", "Variable", "ReadVariableOp")
        node, idx = node.inputs[0 if node.op not in ("Merge", "RefMerge") else 0]
        seen += 1
    return True


class _Partition:
    __slots__ = ("device", "nodes", "plan", "runner", "fast")

    def __init__(self, device, nodes, plan, runner, fast):
        self.device = device
        self.nodes = nodes
        self.plan = plan
        self.runner = runner
        self.fast = fast


class RunPlan:
    """Everything a signature needs per step, built once."""

    def __init__(self, partitions, fetch_map, copy_flags, node_count):
        self.partitions = partitions
        self.fetch_map = fetch_map  # per fetch: (partition index, position in its results)
        self.copy_flags = copy_flags
        self.node_count = node_count


class StepTrace:
    """Collects per-node timings of a traced step, per device."""

    def __init__(self):
        self.lock = threading.Lock()
        self.records: dict = {}

    def for_device(self, device_name):
        return _DeviceTrace(self, device_name)


class _DeviceTrace:
    def __init__(self, trace, device):
        self.trace = trace
        self.device = device

    def record(self, node, start_ns, end_ns, outputs):
        entry = (node.name, node.op, start_ns, end_ns, threading.get_ident(),
                 [np.shape(o) if o is not DEAD else None for o in outputs],
                 [getattr(o, "dtype", None) for o in outputs],
                 [getattr(o, "nbytes", 0) for o in outputs])
        with self.trace.lock:
            self.trace.records.setdefault(self.device, []).append(entry)


class DirectSession:
    """Runs steps of one graph on this process's devices."""

    def __init__(self, graph, config, devices=None, placement_policy=None):
        self.graph = graph
        self.config = config
        keep_freed_memory()
        cpus = process_config.defaults.logical_cpus
        if config is not None and "CPU" in config.device_count:
            cpus = max(1, int(config.device_count["CPU"]))
        self.devices = devices or local_devices(cpu_count=cpus)
        self._by_name = {d.name: d for d in self.devices}
        self._cache: dict = {}
        self._cache_lock = threading.Lock()
        self._kernel_cache: dict = {}
        self._active: set = set()
        self._active_lock = threading.Lock()
        self._closed = False
        self.threads = thread_budget.SessionThreads(config)
        self.soft = (bool(config.allow_soft_placement) if config else False) \
            or process_config.defaults.soft_device_placement
        self.log_placement = bool(config.log_device_placement) if config else False
        self.default_timeout_ms = int(config.operation_timeout_in_ms) if config else 0
        self.optimizer_options = process_config.optimizer_options_for(config)
        self.rewrite_options = process_config.rewrite_options_for(config)
        self.placement_policy = placement_policy or placer.GreedyPolicy()
        self.tensor_store = SessionTensorStore()  # tf.get_session_handle's kept tensors
        self._placement_memo: dict = {}

    # -- plans -----------------------------------------------------------------------------

    def get_plan(self, feeds: tuple, fetches: tuple, targets: tuple, traced: bool) -> RunPlan:
        key = (feeds, fetches, targets, self.graph._mutation_version, traced)
        found = self._cache.get(key)
        if found is not None:
            return found
        with self._cache_lock:
            found = self._cache.get(key)
            if found is None:
                found = self._build_plan(feeds, fetches, targets, traced)
                self._cache[key] = found
            return found

    def _build_plan(self, feeds, fetches, targets, traced) -> RunPlan:
        nodes, fetch_points, _ = subgraph.build_step_graph(self.graph, list(feeds),
                                                           list(fetches), list(targets))
        nodes = self._rewrite(nodes, fetch_points)
        placer.place(nodes, self.devices, self.soft, self.log_placement,
                     policy=self.placement_policy, memo=self._placement_memo)
        used = {n.assigned_device for n in nodes}
        if len(used) <= 1:
            device = self._by_name[used.pop()] if used else self.devices[0]
            groups = {device.name: nodes}
        else:
            groups = partition_mod.partition(nodes, self._by_name, self.config)
        partitions = []
        fetch_map = [None] * len(fetch_points)
        for device_name, part_nodes in groups.items():
            device = self._by_name[device_name]
            member = {id(n) for n in part_nodes}
            local_fetches = []
            for position, (node, idx) in enumerate(fetch_points):
                if id(node) in member:
                    fetch_map[position] = (len(partitions), len(local_fetches))
                    local_fetches.append((node, idx))
            plan = Plan(part_nodes, device, local_fetches, self._kernel_cache)
            fast = eligible(plan) and not traced
            runner = FastPath(plan) if fast else Executor(plan)
            partitions.append(_Partition(device, part_nodes, plan, runner, fast))
        copy_flags = [_may_alias_state(node, idx) for node, idx in fetch_points]
        return RunPlan(partitions, fetch_map, copy_flags, len(nodes))

    def _rewrite(self, nodes, fetch_points):
        return rewrites.optimize(nodes, fetch_points, self.optimizer_options,
                                 self.rewrite_options)

    # -- steps -----------------------------------------------------------------------------

    def run_step(self, plan: RunPlan, feed_values: list, options=None, trace=None) -> list:
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        timeout_ms = 0
        if options is not None and options.timeout_in_ms:
            timeout_ms = options.timeout_in_ms
        elif self.default_timeout_ms:
            timeout_ms = self.default_timeout_ms
        deadline = time.monotonic() + timeout_ms / 1000.0 if timeout_ms > 0 else None
        threads = self.threads
        threads.before_step()
        pool = threads.default_pool if options is None else threads.pool_for(options)
        step_id = next(_STEP_IDS)
        cancellation = CancellationManager()
        partitions = plan.partitions
        with self._active_lock:
            self._active.add(cancellation)
        try:
            if len(partitions) == 1 and partitions[0].fast and deadline is None:
                part = partitions[0]
                ctx = StepContext(step_id, part.device, None, cancellation, self, options)
                results = [part.runner.run(ctx, feed_values, pool)]
                if cancellation.is_cancelled:  # e.g. closed while a kernel blocked
                    raise cancellation.error
            else:
                results = self._run_partitions(partitions, feed_values, step_id, cancellation,
                                               deadline, options, trace, pool)
        finally:
            with self._active_lock:
                self._active.discard(cancellation)
        return [results[p][i] for p, i in plan.fetch_map]

    def _run_partitions(self, partitions, feed_values, step_id, cancellation, deadline,
                        options, trace, pool):
        rendezvous = LocalRendezvous()
        results = [None] * len(partitions)
        failures = []

        def run_one(index):
            part = partitions[index]
            ctx = StepContext(step_id, part.device, rendezvous, cancellation, self, options)
            try:
                if part.fast:
                    results[index] = part.runner.run(ctx, feed_values, pool)
                    if deadline is not None and time.monotonic() > deadline:
                        raise late_step_error(part.device.name, deadline)
                else:
                    device_trace = trace.for_device(part.device.name) if trace else None
                    results[index] = part.runner.run(ctx, feed_values, deadline, device_trace,
                                                     pool)
            except BaseException as err:  # noqa: BLE001 - re-raised in the caller below
                failures.append(err)
                cancellation.start_cancel(err)
                rendezvous.abort(err)

        if len(partitions) == 1:
            run_one(0)
        else:
            drivers = shared_pool()
            futures = [drivers.submit(run_one, i) for i in range(1, len(partitions))]
            run_one(0)
            for future in futures:
                future.result()
        if failures:
            raise _first_cause(failures)
        return results

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        error = errors.CancelledError(None, None, "Session has been closed.")
        with self._active_lock:
            active = list(self._active)
        for cancellation in active:
            cancellation.start_cancel(error)
        for device in self.devices:
            device.resource_mgr.clear()
        self.tensor_store.clear()
        self.threads.close()


def late_step_error(device_name: str, deadline: float):
    """A straight-line partition cannot be interrupted; when one of its kernels blocked (a
    tf.data element, a generator) past the step's deadline the step fails all the same (TF)."""
    late = time.monotonic() - deadline
    return errors.DeadlineExceededError(
        None, None, "Timed out waiting for the step to finish (RunOptions.timeout_in_ms / "
        f"ConfigProto.operation_timeout_in_ms): a kernel on {device_name} blocked "
        f"{late:.2f}s past the deadline; its results were dropped.")


def _first_cause(failures):
    """Prefers the root failure over the cancellations it caused elsewhere."""
    for err in failures:
        if not isinstance(err, errors.CancelledError):
            return err
    return failures[0]
