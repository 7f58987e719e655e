"""Turning a traced step into `RunMetadata`: StepStats per device and partition graphs."""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes, graph_io


def fill_run_metadata(run_metadata, plan, trace, options) -> None:
    """Fills `run_metadata.step_stats` (when traced) and `partition_graphs` (when asked).

    As in TF, the message is replaced, not appended to, by each run.
    """
    run_metadata.Clear()
    if trace is not None:
        step_stats = run_metadata.step_stats
        labels = {node.name: _timeline_label(node) for part in plan.partitions
                  for node in part.nodes}
        for part in plan.partitions:
            dev = step_stats.dev_stats.add(device=part.device.name)
            for name, op, start, end, thread, shapes, types, sizes in sorted(
                    trace.records.get(part.device.name, []), key=lambda r: r[2]):
                stats = dev.node_stats.add(
                    node_name=name, all_start_micros=start // 1000,
                    op_start_rel_micros=0, op_end_rel_micros=(end - start) // 1000,
                    all_end_rel_micros=(end - start) // 1000,
                    all_start_nanos=start, op_start_rel_nanos=0,
                    op_end_rel_nanos=end - start, all_end_rel_nanos=end - start,
                    thread_id=thread & 0xFFFFFFFF,
                    timeline_label=labels.get(name) or f"{name} = {op}()")
                for slot, (shape, dtype, size) in enumerate(zip(shapes, types, sizes)):
                    out = stats.output.add(slot=slot)
                    desc = out.tensor_description
                    if dtype is not None:
                        try:
                            desc.dtype = dtypes.as_dtype(np.dtype(dtype)).as_datatype_enum
                        except TypeError:
                            pass
                    if shape is not None:
                        for d in shape:
                            desc.shape.dim.add(size=int(d))
                    desc.allocation_description.requested_bytes = int(size or 0)
                    desc.allocation_description.allocated_bytes = int(size or 0)
    if options is not None and options.output_partition_graphs:
        for part in plan.partitions:
            run_metadata.partition_graphs.add().CopyFrom(
                graph_io.nodes_to_graph_def(part.nodes, use_assigned_device=True))


def _timeline_label(node) -> str:
    """TF's label: "name = Op(inputs)"; transfers name their tensor and the other device."""
    if node.op in ("_Send", "_Recv"):
        other = node.attrs["recv_device"] if node.op == "_Send" else node.attrs["send_device"]
        return f"{node.name} = {node.op}({node.attrs['tensor_name']} @{other})"
    inputs = [src.name if idx == 0 else f"{src.name}:{idx}" for src, idx in node.inputs]
    inputs += [f"^{src.name}" for src in node.control_inputs]
    return f"{node.name} = {node.op}({', '.join(inputs)})"
