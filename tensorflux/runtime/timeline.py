"""Step statistics as a Chrome trace (chrome://tracing, Perfetto): TF1's `timeline` module.

`Timeline(run_metadata.step_stats).generate_chrome_trace_format()` gives the JSON of a
trace-event file:

- one process row per device (`process_name` "<device> Compute"), ordered as in the stats;
- one complete event ("X") per node execution: the name is the op type, `args` hold the
  node name, op and inputs; an asynchronous op (a `_Recv` waiting for its value) overlaps
  the ops that ran meanwhile, so each device's events are spread over lanes (threads) in
  which they do not overlap;
- with `show_dataflow`, flow arrows ("s"/"t", category DataFlow) from each `_Send` to the
  `_Recv` with the same rendezvous tensor name, and from a producer to a consumer in
  another lane;
- with `show_memory`, a counter ("C") per device of the bytes held by node outputs: a
  tensor is counted from the end of its producer to the end of its last consumer on the
  same device (to the end of the step when it has none there).

Node inputs come from the timeline labels ("name = Op(a, b:1, ^c)"; `_Send`/`_Recv`:
"name = _Send(tensor_name @device)"), or, for stats without them, from `graph`: a Graph, a
GraphDef, or a list of GraphDefs such as `run_metadata.partition_graphs`.
"""

from __future__ import annotations

import collections
import json
import re

__all__ = ["Timeline", "StepStatsAnalysis", "AllocationMaximum"]

_LABEL = re.compile(r"^(?P<name>.*?) = (?P<op>[^\s(]+)\((?P<args>.*)\)$")

StepStatsAnalysis = collections.namedtuple("StepStatsAnalysis",
                                           ["chrome_trace", "allocator_maximums"])
AllocationMaximum = collections.namedtuple("AllocationMaximum",
                                           ["timestamp", "num_bytes", "tensors"])


class _Record:
    __slots__ = ("device", "pid", "tid", "name", "op", "inputs", "start", "end", "bytes",
                 "transfer", "index")

    def __init__(self, device, pid, name, op, inputs, start, end, size, transfer, index):
        self.device = device
        self.pid = pid
        self.tid = 0
        self.name = name
        self.op = op
        self.inputs = inputs
        self.start = start
        self.end = end
        self.bytes = size
        self.transfer = transfer
        self.index = index


def _graph_nodes(graph) -> dict:
    """{node name: (op, [inputs])} from a Graph, a GraphDef or an iterable of GraphDefs."""
    if graph is None:
        return {}
    if hasattr(graph, "as_graph_def"):
        graph = graph.as_graph_def()
    defs = [graph] if hasattr(graph, "node") else list(graph)
    found = {}
    for graph_def in defs:
        for node in graph_def.node:
            transfer = None
            if node.op in ("_Send", "_Recv"):
                transfer = node.attr["tensor_name"].s.decode()
            found[node.name] = (node.op, list(node.input), transfer)
    return found


def _parse_label(label: str, node_name: str, known):
    match = _LABEL.match(label or "")
    if match is None:
        op, inputs, transfer = known.get(node_name, (node_name, [], None))
        return op, inputs, transfer
    op = match.group("op")
    args = match.group("args")
    if op in ("_Send", "_Recv", "_HostSend", "_HostRecv"):
        return op, [], args.split(" @", 1)[0]
    inputs = [a for a in args.split(", ") if a] if args else []
    if not inputs and node_name in known:
        inputs = known[node_name][1]
    return op, inputs, None


def _input_node(text: str) -> str:
    text = text[1:] if text.startswith("^") else text
    name, sep, index = text.rpartition(":")
    return name if sep and index.isdigit() else text


class Timeline:
    """Turns `StepStats` into a Chrome trace (see the module docstring).

    Example:
        >>> options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
        >>> meta = tf.RunMetadata()
        >>> sess.run(y, options=options, run_metadata=meta)
        >>> trace = Timeline(meta.step_stats).generate_chrome_trace_format()
        >>> open("timeline.json", "w").write(trace)
    """

    def __init__(self, step_stats, graph=None):
        self._step_stats = step_stats
        self._graph = graph
        known = _graph_nodes(graph)
        self._devices = []
        self._records: list = []
        for pid, dev_stats in enumerate(step_stats.dev_stats):
            self._devices.append(dev_stats.device)
            for stats in dev_stats.node_stats:
                op, inputs, transfer = _parse_label(stats.timeline_label, stats.node_name,
                                                    known)
                if stats.all_start_nanos:
                    start = stats.all_start_nanos / 1000.0
                    end = start + stats.all_end_rel_nanos / 1000.0
                else:
                    start = float(stats.all_start_micros)
                    end = start + float(stats.all_end_rel_micros)
                size = sum(out.tensor_description.allocation_description.allocated_bytes
                           for out in stats.output)
                self._records.append(_Record(dev_stats.device, pid, stats.node_name, op,
                                             inputs, start, end, size, transfer,
                                             len(self._records)))
        self._assign_lanes()

    def _assign_lanes(self) -> None:
        by_device: dict = {}
        for record in self._records:
            by_device.setdefault(record.pid, []).append(record)
        self._lanes = {}
        for pid, records in by_device.items():
            ends: list = []
            for record in sorted(records, key=lambda r: (r.start, r.index)):
                for lane, end in enumerate(ends):
                    if end <= record.start:
                        record.tid = lane
                        ends[lane] = record.end
                        break
                else:
                    record.tid = len(ends)
                    ends.append(record.end)
            self._lanes[pid] = len(ends)

    # -- events ----------------------------------------------------------------------------

    def _metadata(self) -> list:
        events = []
        for pid, device in enumerate(self._devices):
            events.append({"name": "process_name", "ph": "M", "pid": pid,
                           "args": {"name": f"{device} Compute"}})
            events.append({"name": "process_sort_index", "ph": "M", "pid": pid,
                           "args": {"sort_index": pid}})
            for lane in range(self._lanes.get(pid, 0)):
                events.append({"name": "thread_name", "ph": "M", "pid": pid, "tid": lane,
                               "args": {"name": f"lane {lane}"}})
        return events

    def _ops(self) -> list:
        events = []
        for record in self._records:
            args = {"name": record.name, "op": record.op}
            for k, text in enumerate(record.inputs):
                args[f"input{k}"] = text
            if record.transfer is not None:
                args["tensor_name"] = record.transfer
            events.append({"name": record.op, "cat": "Op", "ph": "X", "pid": record.pid,
                           "tid": record.tid, "ts": record.start,
                           "dur": max(record.end - record.start, 0.001), "args": args})
        return events

    def _flows(self) -> list:
        events = []
        flow_id = 0
        sends = {r.transfer: r for r in self._records if r.op in ("_Send", "_HostSend")}
        for record in self._records:
            if record.op not in ("_Recv", "_HostRecv"):
                continue
            send = sends.get(record.transfer)
            if send is None:
                continue
            flow_id += 1
            events.extend(_flow(record.transfer, send, send.start, record, record.start,
                                flow_id))
        producers: dict = {}
        for record in self._records:
            producers.setdefault((record.pid, record.name), record)
        for record in self._records:
            for text in record.inputs:
                source = producers.get((record.pid, _input_node(text)))
                if source is None or source.tid == record.tid:
                    continue
                flow_id += 1
                events.extend(_flow(text, source, source.end, record, record.start, flow_id))
        return events

    def _memory(self):
        events = []
        maximums = {}
        step_end = max((r.end for r in self._records), default=0.0)
        for pid, device in enumerate(self._devices):
            records = [r for r in self._records if r.pid == pid]
            last_use: dict = {}
            for record in records:
                for text in record.inputs:
                    name = _input_node(text)
                    last_use[name] = max(last_use.get(name, 0.0), record.end)
            changes = []
            for record in records:
                if record.bytes:
                    changes.append((record.end, record.bytes, record.name))
                    changes.append((max(last_use.get(record.name, step_end), record.end),
                                    -record.bytes, record.name))
            held = 0
            live: set = set()
            best = AllocationMaximum(0.0, 0, [])
            for ts, delta, name in sorted(changes, key=lambda c: (c[0], c[1] < 0)):
                held += delta
                if delta > 0:
                    live.add(name)
                else:
                    live.discard(name)
                if held > best.num_bytes:
                    best = AllocationMaximum(ts, held, sorted(live))
                events.append({"name": "Memory", "ph": "C", "pid": pid, "ts": ts,
                               "args": {"bytes": held}})
            maximums[device] = best
        return events, maximums

    # -- public ----------------------------------------------------------------------------

    def analyze_step_stats(self, show_dataflow: bool = True, show_memory: bool = True):
        """Returns StepStatsAnalysis(chrome_trace dict, {device: AllocationMaximum})."""
        events = self._metadata() + self._ops()
        if show_dataflow:
            events += self._flows()
        maximums = {}
        if show_memory:
            memory, maximums = self._memory()
            events += memory
        return StepStatsAnalysis({"traceEvents": events, "displayTimeUnit": "ns"}, maximums)

    def generate_chrome_trace_format(self, show_dataflow: bool = True,
                                     show_memory: bool = False, op_time: str = "schedule"):
        """The trace-event JSON string (see the module docstring); `op_time` is accepted for
        TF compatibility (every device here is a CPU, so all choices agree)."""
        del op_time
        trace = self.analyze_step_stats(show_dataflow, show_memory).chrome_trace
        return json.dumps(trace, separators=(",", ":"))


def _flow(name, source, source_ts, target, target_ts, flow_id) -> list:
    start = {"name": name, "cat": "DataFlow", "ph": "s", "id": flow_id, "pid": source.pid,
             "tid": source.tid, "ts": source_ts}
    end = {"name": name, "cat": "DataFlow", "ph": "t", "id": flow_id, "pid": target.pid,
           "tid": target.tid, "ts": max(target_ts, source_ts), "bp": "e"}
    return [start, end]
