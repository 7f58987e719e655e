"""Placement: every node gets one device of the session.

Rules, in order: nodes in one colocation group (`_class` "loc:@name", and ref consumers of a
variable) share a device; an explicit (possibly partial) device constraint picks the first
matching device; an unconstrained group follows its inputs' devices, else the default device.
Without a match the placement fails with InvalidArgumentError naming the op, the requested
device and the devices that exist, unless `allow_soft_placement` drops the constraint.
"""

from __future__ import annotations

from tensorflux.framework import errors
from tensorflux.framework.device_spec import DeviceSpec


class _Groups:
    """Union-find over node names."""

    def __init__(self):
        self.parent: dict = {}

    def find(self, name):
        parent = self.parent.setdefault(name, name)
        if parent != name:
            parent = self.find(parent)
            self.parent[name] = parent
        return parent

    def union(self, a, b):
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[rb] = ra


def _matching(spec: DeviceSpec, devices, local_task: DeviceSpec | None):
    return [d for d in devices if spec.matches(d.spec)]


def place(nodes, devices, allow_soft_placement: bool = False, log_device_placement: bool = False,
          default_device=None) -> dict:
    """Assigns `node.assigned_device` for every node; returns {node name: device name}."""
    by_name = {n.name: n for n in nodes}
    groups = _Groups()
    for node in nodes:
        groups.find(node.name)
        for group in node.attrs.get("_class", ()):
            if group.startswith("loc:@"):
                target = group[5:]
                if target in by_name:
                    groups.union(target, node.name)
        for k, (src, _) in enumerate(node.inputs):
            if src.output_dtypes and src.output_dtypes[0].is_ref_dtype and k < len(
                    node.op_def.inputs) and node.op_def.inputs[k].is_ref:
                groups.union(src.name, node.name)
    members: dict = {}
    for node in nodes:
        members.setdefault(groups.find(node.name), []).append(node)
    default = default_device or devices[0]
    chosen: dict = {}
    for root, group in members.items():
        constraint = DeviceSpec()
        constrained_by = None
        for node in group:
            if not node.device:
                continue
            spec = DeviceSpec.from_string(node.device)
            merged = _merge_constraint(constraint, spec)
            if merged is None:
                if allow_soft_placement:
                    continue
                raise errors.InvalidArgumentError(
                    None, node.source_op,
                    f"Cannot colocate nodes '{node.name}' and '{constrained_by.name}': "
                    f"'{node.name}' asks for {node.device} and '{constrained_by.name}' for "
                    f"{constrained_by.device}.")
            constraint = merged
            constrained_by = node
        if constrained_by is None:
            chosen[root] = None
            continue
        candidates = [d for d in devices if constraint.matches(d.spec)]
        if not candidates:
            if allow_soft_placement:
                relaxed = DeviceSpec(job=constraint.job, replica=constraint.replica,
                                     task=constraint.task)
                candidates = [d for d in devices if relaxed.matches(d.spec)] or [default]
            else:
                node = constrained_by
                raise errors.InvalidArgumentError(
                    None, node.source_op,
                    f"Cannot assign a device for operation '{node.name}' ({node.op}): "
                    f"could not satisfy explicit device specification '{node.device}' because "
                    f"no devices matching that specification are registered in this process; "
                    f"available devices: {', '.join(d.name for d in devices)}. "
                    f"(Set allow_soft_placement=True to place it elsewhere.)\n\t [[node "
                    f"{node.name} (defined at {node.where()})]]")
        chosen[root] = candidates[0]
    placement = {}
    for root, group in members.items():
        device = chosen[root]
        if device is None:
            device = _follow_inputs(group, chosen, groups) or default
            chosen[root] = device
        for node in group:
            node.assigned_device = device.name
            placement[node.name] = device.name
    if log_device_placement:
        import sys

        for node in nodes:
            print(f"{node.name}: ({node.op}): {node.assigned_device}", file=sys.stderr)
    return placement


def _follow_inputs(group, chosen, groups):
    for node in group:
        for src, _ in node.inputs:
            device = chosen.get(groups.find(src.name))
            if device is not None:
                return device
    return None


def _merge_constraint(a: DeviceSpec, b: DeviceSpec):
    fields = {}
    for key in ("job", "replica", "task", "device_type", "device_index"):
        va, vb = getattr(a, key), getattr(b, key)
        if va is not None and vb is not None and va != vb:
            return None
        fields[key] = va if va is not None else vb
    return DeviceSpec(**fields)
