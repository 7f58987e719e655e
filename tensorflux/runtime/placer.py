"""Placement: every node of a step graph gets one device of the session.

Hard rules first, the same for every policy:

1. **Colocation groups** share a device: `_class` attrs ("loc:@name", from `colocate_with`),
   and a variable with every op that takes it by reference (Assign, ApplyGradientDescent, ...)
   or as a resource handle. As in TF, groups and their constraints are computed on the whole
   client graph (once per graph version), not just on the step: a variable that some
   `assign_add` under `/cpu:1` updates lives on `/cpu:1` in every step.
2. **Explicit constraints**: a group's (possibly partial) device specs are merged; the group
   may only go to matching devices. No match is an InvalidArgumentError naming the op, the
   requested device and the devices that exist, unless `allow_soft_placement`, which relaxes
   the spec to its job/replica/task and then to the default device. Incompatible constraints
   inside one group are an error too (with soft placement the later one is dropped).
3. **Stateful ops keep their device across steps**: a session passes a `memo` dict, and a
   group holding a stateful node placed by an earlier signature goes back to that device.
4. **Sources** (nodes with no inputs at all: constants, variables, feeds) that are not
   constrained float: they go to the device of their first consumer (TF's "generator"
   heuristic), so a constant never costs a transfer.

The remaining choice - unconstrained groups, or constraints that several devices match - is
the **policy's**:

- `GreedyPolicy` (the default; the whitepaper's §3.2.1): simulate the step in topological
  order. Each device is a single timeline. For a node whose group is still free, try every
  feasible device: the node can start when the device is free and its inputs have arrived
  (an input from another device adds the cost model's transfer time), and finishes after its
  compute time; take the device where it finishes soonest, counting one more transfer
  latency for leaving the node's preferred device (its first placed input's, else the
  default), since its result will have to come back (ties: the device holding more of its
  inputs, then the session's device order). So cheap work stays together and only work
  that gains more than a transfer moves. Unconstrained candidates are the devices of
  the default device's task, so a distributed client never spills work onto other tasks.
  A while loop is placed as a unit: its first Enter is placed greedily, its other Enters go
  to the same device and the nodes inside its frame follow their inputs (a loop split over
  devices pays a transfer per iteration, which one simulated visit cannot see).
  Deterministic: same graph, devices and costs give the same placement.
- `SimplePolicy`: a free group goes where its first placed input is, else to the default
  device; a constrained group takes its first matching device (TF's simple placer).

Select with `DirectSession(..., placement_policy=placer.SIMPLE)` (or assign the session
backend's `placement_policy` before its first run). Each DirectSession defaults to its own
`GreedyPolicy()`, whose `cost_model.record(run_metadata.step_stats)` turns estimates into
measurements for later signatures; `place()` without a policy uses the module's `GREEDY`.
"""

from __future__ import annotations

import functools
import sys

from tensorflux.framework import dtypes, errors
from tensorflux.framework.device_spec import DeviceSpec
from tensorflux.platform import tf_logging
from tensorflux.runtime.cost_model import CostModel
from tensorflux.runtime.partition import ENTER_OPS, FrameInfo, topological_order

_DEVICE_FIELDS = ("job", "replica", "task", "device_type", "device_index")


class _Groups:
    """Union-find over nodes (by id); the representative is the earliest node seen."""

    def __init__(self, nodes):
        self.parent = {id(n): id(n) for n in nodes}
        self.rank = {id(n): i for i, n in enumerate(nodes)}

    def find(self, key):
        root = key
        while self.parent[root] != root:
            root = self.parent[root]
        while self.parent[key] != root:
            self.parent[key], key = root, self.parent[key]
        return root

    def union(self, a, b) -> None:
        ra, rb = self.find(id(a)), self.find(id(b))
        if ra != rb:
            if self.rank[rb] < self.rank[ra]:
                ra, rb = rb, ra
            self.parent[rb] = ra


class _Group:
    """A colocation group and what the hard rules allow for it."""

    __slots__ = ("root", "members", "candidates", "constrained", "device", "source")

    def __init__(self, root, members):
        self.root = root
        self.members = members
        self.candidates: list = []
        self.constrained = False
        self.device = None
        self.source = all(not n.inputs and not n.control_inputs for n in members)


class SimplePolicy:
    """Follow inputs, else the default device (see the module docstring)."""

    name = "simple"

    def assign(self, order, groups, group_of, default, frames) -> None:
        for node in order:
            group = group_of[id(node)]
            if group.device is not None or group.source:
                continue
            if group.constrained:
                group.device = group.candidates[0]
                continue
            group.device = _first_input_device(node, group_of) or default

    def __repr__(self) -> str:
        return "SimplePolicy()"


class GreedyPolicy:
    """Whitepaper greedy placement over a simulated execution (see the module docstring).

    Args:
        cost_model: a `CostModel` (estimates, and measurements when recorded); a fresh one
            with default constants when None.
    """

    name = "greedy"

    def __init__(self, cost_model: CostModel | None = None):
        self.cost_model = cost_model or CostModel()

    def assign(self, order, groups, group_of, default, frames) -> None:
        cost = self.cost_model
        free: dict = {}
        finish: dict = {}
        loops: dict = {}  # frame name -> device of its first Enter
        for node in order:
            group = group_of[id(node)]
            if group.device is None and group.source:
                finish[id(node)] = 0.0
                continue
            compute = cost.compute_micros(node)
            if group.device is None:
                frame = node.attrs.get("frame_name") if node.op in ENTER_OPS else None
                if not group.constrained and frames.frame(node):
                    group.device = _first_input_device(node, group_of) or default
                elif not group.constrained and frame in loops:
                    group.device = loops[frame]
                else:
                    group.device = self._best(node, group, group_of, finish, free, compute,
                                              default)
                if frame is not None:
                    loops.setdefault(frame, group.device)
            device = group.device
            start = max(free.get(device.name, 0.0), self._ready(node, device, group_of, finish))
            finish[id(node)] = start + compute
            free[device.name] = start + compute

    def _ready(self, node, device, group_of, finish) -> float:
        ready = 0.0
        cost = self.cost_model
        for src, idx in node.inputs:
            at = finish.get(id(src), 0.0)
            where = group_of[id(src)].device
            if where is not None and where is not device:
                at += cost.transfer_micros(src, idx)
            ready = max(ready, at)
        for src in node.control_inputs:
            at = finish.get(id(src), 0.0)
            where = group_of[id(src)].device
            if where is not None and where is not device:
                at += cost.control_transfer_micros()
            ready = max(ready, at)
        return ready

    def _best(self, node, group, group_of, finish, free, compute, default):
        preferred = _first_input_device(node, group_of) or default
        latency = self.cost_model.control_transfer_micros()
        best = None
        for position, device in enumerate(group.candidates):
            start = max(free.get(device.name, 0.0), self._ready(node, device, group_of, finish))
            local = sum(1 for src, _ in node.inputs if group_of[id(src)].device is device)
            # Leaving the preferred device must also pay for the transfer that will bring
            # the result back where the rest of the work is.
            penalty = 0.0 if device is preferred else latency
            key = (start + compute + penalty, -local, position)
            if best is None or key < best[0]:
                best = (key, device)
        return best[1]

    def __repr__(self) -> str:
        return f"GreedyPolicy({self.cost_model!r})"


SIMPLE = SimplePolicy()
GREEDY = GreedyPolicy()


def place(nodes, devices, allow_soft_placement: bool = False,
          log_device_placement: bool = False, default_device=None, policy=None,
          memo: dict | None = None) -> dict:
    """Assigns `node.assigned_device` for every node (see the module docstring).

    Args:
        nodes: the step's runtime Nodes.
        devices: the session's Devices, in priority order.
        allow_soft_placement: relax constraints that match no device instead of failing.
        log_device_placement: print "name: (op): device" per node to stderr.
        default_device: where free nodes go by default (the first device when None).
        policy: `GREEDY` (default) or `SIMPLE`, or any object with the same `assign`.
        memo: {stateful node name: device name}, kept by the session across signatures.

    Returns:
        {node name: device name}.

    Raises:
        InvalidArgumentError: an unsatisfiable or conflicting device constraint, or a
            malformed device string; the message names the op and the devices.

    Example:
        >>> place(nodes, local_devices(cpu_count=2), policy=SIMPLE)
        {'a': '/job:localhost/replica:0/task:0/device:CPU:0', ...}
    """
    nodes = list(nodes)
    devices = list(devices)
    default = default_device or devices[0]
    policy = policy or GREEDY
    by_name = {d.name: d for d in devices}
    whole = _graph_groups(nodes, memo)
    groups, group_of = _colocation_groups(nodes, whole)
    local = [d for d in devices if _same_task(d.spec, default.spec)] or devices
    for group in groups:
        _constrain(group, devices, local, default, allow_soft_placement, memo, by_name, whole)
        if group.constrained and len(group.candidates) == 1:
            group.device = group.candidates[0]
    order = topological_order(nodes)
    frames = FrameInfo(order)
    policy.assign(order, groups, group_of, default, frames)
    for group in groups:
        if group.device is None:
            group.device = _first_consumer_device(group, order, group_of) or (
                group.candidates[0] if group.constrained else default)
    placement = {}
    for node in nodes:
        device = group_of[id(node)].device
        node.assigned_device = device.name
        placement[node.name] = device.name
        if memo is not None and node.op_def.is_stateful:
            memo[node.name] = device.name
    if log_device_placement:
        for node in nodes:
            print(f"{node.name}: ({node.op}): {node.assigned_device}", file=sys.stderr)
    return placement


def _graph_groups(nodes, memo) -> dict:
    """{op name: (group root, [(op, DeviceSpec)] of the group's constrained ops)} over the
    whole client graph, cached in `memo` per graph version."""
    graph = next((n.source_op._graph for n in nodes if n.source_op is not None), None)
    if graph is None:
        return {}
    key = ("__graph_groups__", id(graph))
    version = (graph._version, graph._mutation_version)
    if memo is not None:
        cached = memo.get(key)
        if cached is not None and cached[0] == version:
            return cached[1]
    ops = graph.get_operations()
    parent = {op._name: op._name for op in ops}

    def find(name):
        while parent[name] != name:
            parent[name] = parent[parent[name]]
            name = parent[name]
        return name

    def union(a, b):
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[rb] = ra

    for op in ops:
        for entry in op._attrs.get("_class", ()) or ():
            entry = entry.decode() if isinstance(entry, bytes) else entry
            if entry.startswith("loc:@") and entry[5:] in parent:
                union(entry[5:], op._name)
        for k, tensor in enumerate(op._inputs):
            dtype = tensor._dtype
            if (dtype.is_ref_dtype and _takes_ref(op, k, op._op_def.inputs)) or \
                    dtype.base_dtype == dtypes.resource:
                union(tensor._op._name, op._name)
    constrained: dict = {}
    for op in ops:
        if op._device:
            constrained.setdefault(find(op._name), []).append(op)
    result = {op._name: (find(op._name), constrained.get(find(op._name), ())) for op in ops}
    if memo is not None:
        memo[key] = (version, result)
    return result


def _colocation_groups(nodes, whole):
    by_name = {n.name: n for n in nodes}
    union = _Groups(nodes)
    first_of_root: dict = {}
    for node in nodes:
        info = whole.get(node.name) if node.source_op is not None else None
        if info is not None:
            other = first_of_root.setdefault(info[0], node)
            if other is not node:
                union.union(other, node)
        for entry in node.attrs.get("_class", ()) or ():
            entry = entry.decode() if isinstance(entry, bytes) else entry
            target = by_name.get(entry[5:]) if entry.startswith("loc:@") else None
            if target is not None:
                union.union(target, node)
        args = node.op_def.inputs
        for k, (src, idx) in enumerate(node.inputs):
            dtype = src.output_dtypes[idx] if idx < len(src.output_dtypes) else None
            if dtype is None:
                continue
            by_ref = dtype.is_ref_dtype and _takes_ref(node, k, args)
            if by_ref or dtype.base_dtype == dtypes.resource:
                union.union(src, node)
    members: dict = {}
    for node in nodes:
        members.setdefault(union.find(id(node)), []).append(node)
    groups = []
    group_of = {}
    for root, group_nodes in members.items():
        group = _Group(root, group_nodes)
        groups.append(group)
        for node in group_nodes:
            group_of[id(node)] = group
    return groups, group_of


def _takes_ref(node, k: int, args) -> bool:
    if getattr(node, "op", None) is None or not isinstance(node.op, str):
        op_type = node._type
    else:
        op_type = node.op
    if op_type.startswith("Ref"):
        return True
    position = 0
    for arg in args:
        if arg.is_list:
            return any(a.is_ref for a in args)
        if position == k:
            return arg.is_ref
        position += 1
    return False


class _Constraint:
    """A device request of a node or of a colocated op elsewhere in the graph."""

    __slots__ = ("name", "device", "source_op", "location", "op")

    def __init__(self, name, device, source_op, location, op):
        self.name = name
        self.device = device
        self.source_op = source_op
        self.location = location
        self.op = op

    def where(self) -> str:
        return self.location


@functools.lru_cache(maxsize=1024)
def _parse_string(device: str) -> DeviceSpec:
    return DeviceSpec.from_string(device)  # NOTE: shared; callers never mutate it


def _parse(node) -> DeviceSpec:
    try:
        return _parse_string(node.device)
    except ValueError as err:
        raise errors.InvalidArgumentError(
            None, node.source_op, f"Malformed device specification '{node.device}' in node "
            f"'{node.name}' ({node.op}): {err}") from None


def _constraints(group, whole) -> list:
    """(name, device, source op, where) of every constraint on the group, step nodes first,
    then ops of the whole graph colocated with them."""
    found = [(n.name, n.device, n.source_op, n.where(), n.op) for n in group.members
             if n.device]
    seen = {n.name for n in group.members}
    roots = []
    for node in group.members:
        info = whole.get(node.name) if node.source_op is not None else None
        if info is not None and info[0] not in roots:
            roots.append(info[0])
            for op in info[1]:
                if op._name not in seen:
                    seen.add(op._name)
                    found.append((op._name, op._device, op, op.location, op._type))
    return found


def _ref_consumers(group) -> set:
    """Names of the group's members that read a reference or resource of another member."""
    members = {id(n) for n in group.members}
    found = set()
    for node in group.members:
        args = node.op_def.inputs
        for k, (src, idx) in enumerate(node.inputs):
            if id(src) not in members or src is node or idx >= len(src.output_dtypes):
                continue
            dtype = src.output_dtypes[idx]
            if (dtype.is_ref_dtype and _takes_ref(node, k, args)) or \
                    dtype.base_dtype == dtypes.resource:
                found.add(node.name)
    return found


def _reads_a_reference(op) -> bool:
    """True for a graph Operation (from the whole graph) with a reference or resource input."""
    if op is None or not hasattr(op, "_inputs"):
        return False
    return any((t._dtype.is_ref_dtype and _takes_ref(op, k, op._op_def.inputs)) or
               t._dtype.base_dtype == dtypes.resource for k, t in enumerate(op._inputs))


def _constrain(group, devices, local, default, soft, memo, by_name, whole) -> None:
    constraint = DeviceSpec()
    constrained_by = None
    readers = _ref_consumers(group)
    found = _constraints(group, whole)
    readers.update(name for name, _, op, _, _ in found
                   if name not in readers and _reads_a_reference(op))
    # The owners' requests first: a reader's request that conflicts is then ignored, as TF
    # does ("... is a reference connection and already has a device field set").
    ordered = sorted(found, key=lambda c: c[0] in readers)
    for name, device, source_op, where, op_type in ordered:
        node = _Constraint(name, device, source_op, where, op_type)
        spec = _parse(node)
        conflict = _conflict(constraint, spec)
        if conflict is not None:
            if soft:
                continue
            if name in readers:
                tf_logging.vlog(1, "Ignoring device specification %s for node '%s' because "
                                "its input is a reference connection to a node already on "
                                "%s", device, name, constrained_by.device)
                continue
            raise errors.InvalidArgumentError(
                None, node.source_op,
                f"Cannot colocate nodes '{constrained_by.name}' and '{node.name}': Cannot "
                f"merge devices with incompatible {conflict}s: '{constrained_by.device}' and "
                f"'{node.device}' (colocated by _class attrs or reference inputs).\n\t [[node "
                f"{node.name} (defined at {node.where()})]]")
        constraint = constraint.make_merged_spec(spec)
        constrained_by = node
    if memo is not None:
        for node in group.members:
            remembered = by_name.get(memo.get(node.name, ""))
            if remembered is not None and node.op_def.is_stateful and \
                    constraint.matches(remembered.spec):
                group.candidates = [remembered]
                group.constrained = True
                return
    if constrained_by is None:
        group.candidates = local
        return
    group.constrained = True
    candidates = [d for d in devices if constraint.matches(d.spec)]
    if not candidates and soft:
        relaxed = DeviceSpec(job=constraint.job, replica=constraint.replica,
                             task=constraint.task)
        candidates = [d for d in devices if relaxed.matches(d.spec)] or [default]
    if not candidates:
        node = constrained_by
        # the graph's op type: a rewrite (constant folding) may have replaced the node's
        op_type = node.source_op.type if node.source_op is not None else node.op
        raise errors.InvalidArgumentError(
            None, node.source_op,
            f"Cannot assign a device for operation '{node.name}' ({op_type}): Could not "
            f"satisfy explicit device specification '{node.device}' because no devices "
            f"matching that specification are registered in this process; available "
            f"devices: {', '.join(d.name for d in devices)}. (Set allow_soft_placement=True "
            f"to place it elsewhere.)\n\t [[node {node.name} (defined at {node.where()})]]")
    group.candidates = candidates


def _conflict(a: DeviceSpec, b: DeviceSpec):
    for key in _DEVICE_FIELDS:
        va, vb = getattr(a, key), getattr(b, key)
        if va is not None and vb is not None and va != vb:
            return key.replace("device_", "device ")
    return None


def _same_task(spec: DeviceSpec, default: DeviceSpec) -> bool:
    return (spec.job, spec.replica, spec.task) == (default.job, default.replica, default.task)


def _first_input_device(node, group_of):
    for src in [s for s, _ in node.inputs] + list(node.control_inputs):
        device = group_of[id(src)].device
        if device is not None:
            return device
    return None


def _first_consumer_device(group, order, group_of):
    members = {id(n) for n in group.members}
    for node in order:
        if id(node) in members:
            continue
        for src in [s for s, _ in node.inputs] + list(node.control_inputs):
            if id(src) in members:
                device = group_of[id(node)].device
                if device is not None and device in group.candidates:
                    return device
                break
    return None


__all__ = ["place", "GreedyPolicy", "SimplePolicy", "GREEDY", "SIMPLE"]
