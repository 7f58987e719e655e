"""What the profiler knows of each op of a graph: its types (op type, "_trainable_variables",
op-log types), parameters, float operations, shapes, and the run statistics of traced steps
(`RunMetadata.step_stats`), averaged over the steps asked for."""

from __future__ import annotations

import math

from tensorflux.framework import dtypes
from tensorflux.framework.graph import GraphKeys
from tensorflux.framework.op_stats import get_stats_for_node_def, has_statistic
from tensorflux.profiler.option_builder import TRAINABLE_VARIABLES

STAT_FIELDS = ("run_count", "exec_micros", "accelerator_exec_micros", "cpu_exec_micros",
               "requested_bytes", "peak_bytes", "residual_bytes", "output_bytes",
               "parameters", "float_ops")


class OpNode:
    """One op's profile: name, op type, types it is accounted under, devices, shapes, the
    creation site and the `STAT_FIELDS` values."""

    def __init__(self, op):
        self.name = op.name
        self.op_type = op.type
        self.types = {op.type}
        self.devices = [op.device] if op.device else []
        self.shapes = [out.get_shape() for out in op.outputs]
        self.input_shapes = [tensor.get_shape() for tensor in op.inputs]
        self.inputs = [tensor.op.name for tensor in op.inputs] + [
            control.name for control in op.control_inputs]
        self.location = op.location
        self.stats = dict.fromkeys(STAT_FIELDS, 0)


def collect(graph, run_metas=(), op_log=None) -> tuple:
    """The `OpNode`s of `graph` by name, and how many ops lack flops for unknown shapes.

    Args:
        graph: the graph profiled.
        run_metas: `RunMetadata` of traced steps; times and bytes are their average.
        op_log: an optional `OpLogProto` adding types and float operations per op.
    """
    nodes = {op.name: OpNode(op) for op in graph.get_operations()}
    missing_shapes = 0
    for node_def in graph.as_graph_def().node:
        node = nodes.get(node_def.name)
        if node is None:
            continue
        flops = get_stats_for_node_def(graph, node_def, "flops")
        if flops.value is not None:
            node.stats["float_ops"] = int(flops.value)
        elif has_statistic(node_def.op, "flops"):
            missing_shapes += 1
    for variable in graph.get_collection(GraphKeys.TRAINABLE_VARIABLES):
        node = nodes.get(variable.op.name)
        if node is None:
            continue
        node.types.add(TRAINABLE_VARIABLES)
        shape = variable.get_shape()
        if shape.is_fully_defined():
            node.stats["parameters"] = math.prod(shape.as_list())
    if op_log is not None:
        for entry in op_log.log_entries:
            node = nodes.get(entry.name)
            if node is None:
                continue
            node.types.update(entry.types)
            if entry.float_ops:
                node.stats["float_ops"] = entry.float_ops
    _add_run_stats(nodes, list(run_metas))
    return nodes, missing_shapes


def _add_run_stats(nodes, run_metas) -> None:
    if not run_metas:
        return
    sums = {}
    for run_meta in run_metas:
        for device_stats in run_meta.step_stats.dev_stats:
            for stats in device_stats.node_stats:
                node = nodes.get(stats.node_name.split(":")[0])
                if node is None:
                    continue
                if device_stats.device and device_stats.device not in node.devices:
                    node.devices.append(device_stats.device)
                micros = stats.op_end_rel_micros or stats.all_end_rel_micros
                output_bytes = sum(_tensor_bytes(out.tensor_description)
                                   for out in stats.output)
                total = sums.setdefault(node.name, dict.fromkeys(STAT_FIELDS[:8], 0))
                total["run_count"] += 1
                total["exec_micros"] += micros
                total["cpu_exec_micros"] += micros
                total["requested_bytes"] += output_bytes
                total["peak_bytes"] = max(total["peak_bytes"], output_bytes)
                total["output_bytes"] += output_bytes
    steps = len(run_metas)
    for name, total in sums.items():
        stats = nodes[name].stats
        for field, value in total.items():
            stats[field] = value if field == "peak_bytes" else value // steps
        stats["run_count"] = max(1, total["run_count"] // steps)


def _tensor_bytes(description) -> int:
    if description.allocation_description.requested_bytes:
        return description.allocation_description.requested_bytes
    dims = [dim.size for dim in description.shape.dim]
    if any(size < 0 for size in dims):
        return 0
    try:
        itemsize = dtypes.as_dtype(description.dtype).size if description.dtype else 0
    except (TypeError, ValueError):
        itemsize = 0
    return math.prod(dims) * itemsize
