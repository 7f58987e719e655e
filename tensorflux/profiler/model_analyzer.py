"""`tf.profiler.profile`, `tf.profiler.advise`, `tf.profiler.Profiler` and
`tf.profiler.write_op_log`: parameters, float operations, time and memory of a graph's ops,
by name scope, by input graph, by op type or by creation site."""

from __future__ import annotations

import os
import sys

from tensorflux.client import timeline
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.errors import InvalidArgumentError, UnimplementedError
from tensorflux.platform import gfile
from tensorflux.profiler import node_stats, report, views
from tensorflux.profiler.option_builder import TRAINABLE_VARIABLES, ProfileOptionBuilder
from tensorflux.protos import tfprof_log_pb2, tfprof_output_pb2

_DEFAULT_PROFILE_OPTIONS = 0
_DEFAULT_ADVISE_OPTIONS = 0
ALL_ADVICE = {"ExpensiveOperationChecker": {}, "AcceleratorUtilizationChecker": {},
              "JobChecker": {}, "OperationChecker": {}}

__all__ = ["profile", "advise", "Profiler", "write_op_log", "ALL_ADVICE"]


def _view(nodes, cmd, options):
    if cmd == "scope":
        return views.scope_view(nodes, options)
    if cmd == "graph":
        return views.graph_view(nodes, options)
    if cmd in ("op", "code"):
        return views.grouped_view(nodes, options, cmd)
    raise InvalidArgumentError(None, None, f"unknown cmd: {cmd}\n")


def _emit(result, cmd, options, missing_shapes, run_metas, op_names) -> None:
    if missing_shapes and not run_metas:
        sys.stderr.write(f"{missing_shapes} ops no flops stats due to incomplete shapes.\n")
    output = options.get("output", "stdout")
    kind, _, arg = output.partition(":")
    if kind == "none":
        return
    render = report.tree_text if cmd in ("scope", "graph") else report.grouped_text
    text = render(result, cmd, options, op_names)
    if kind == "stdout":
        sys.stdout.write(report.options_text(options) + ":\n" + text + "\n")
        return
    path = arg.partition("=")[2] if arg.startswith("outfile=") else ""
    if not path:
        raise InvalidArgumentError(None, None, f"output {output!r} needs outfile=<path>.")
    if kind == "file":
        with gfile.GFile(path, "w") as handle:
            handle.write(text + "\n")
    elif kind == "timeline":
        if not run_metas:
            raise InvalidArgumentError(None, None, "timeline output needs run_meta.")
        trace = timeline.Timeline(run_metas[-1].step_stats)
        with gfile.GFile(path, "w") as handle:
            handle.write(trace.generate_chrome_trace_format())
    else:
        raise UnimplementedError(None, None, f"profiler output {kind!r} is not supported "
                                 "(use stdout, file, timeline or none).")


def _check_options(options) -> dict:
    if not isinstance(options, dict):
        raise TypeError(f"options must be a dict from ProfileOptionBuilder, got "
                        f"{type(options).__name__}.")
    full = ProfileOptionBuilder().build()
    unknown = set(options) - set(full)
    if unknown:
        raise InvalidArgumentError(None, None, f"Unknown profiler options: {sorted(unknown)}.")
    full.update(options)
    return full


def profile(graph=None, run_meta=None, op_log=None, cmd="scope",
            options=_DEFAULT_PROFILE_OPTIONS):
    """Profiles `graph` and prints (or writes) a report.

    Args:
        graph: the graph (default: the default graph).
        run_meta: `RunMetadata` of a traced step (`RunOptions.FULL_TRACE`): times, bytes.
        op_log: an `OpLogProto` with extra types / float operations per op.
        cmd: "scope", "graph", "op" or "code".
        options: a dict from `ProfileOptionBuilder` (default: trainable parameters).

    Returns:
        A `GraphNodeProto` (scope, graph) or `MultiGraphNodeProto` (op, code).

    Raises:
        InvalidArgumentError: an unknown `cmd`, option or `order_by`.
    """
    if graph is None:
        graph = graph_mod.get_default_graph()
    if options is _DEFAULT_PROFILE_OPTIONS or options == _DEFAULT_PROFILE_OPTIONS:
        options = ProfileOptionBuilder.trainable_variables_parameter()
    options = _check_options(options)
    run_metas = [run_meta] if run_meta is not None else []
    nodes, missing = node_stats.collect(graph, run_metas, op_log)
    result = _view(nodes, cmd, options)
    _emit(result, cmd, options, missing, run_metas, nodes.keys())
    return result


def _expensive_operations(nodes, run_metas) -> list:
    if not run_metas:
        return ["Missing run_meta for ExpensiveOperationChecker."]
    by_type = {}
    for node in nodes.values():
        entry = by_type.setdefault(node.op_type, [0, 0])
        entry[0] += node.stats["exec_micros"]
        entry[1] += node.stats["run_count"]
    total = max(1, sum(micros for micros, _ in by_type.values()))
    ranked = sorted(by_type.items(), key=lambda item: (-item[1][0], item[0]))[:3]
    return [f"top {rank} operation type: {op_type}, cpu: {report.format_micros(micros)}, "
            f"accelerator: 0us, total: {report.format_micros(micros)} "
            f"({100.0 * micros / total:.2f}%)"
            for rank, (op_type, (micros, _)) in enumerate(ranked, 1)]


def _operation_checks(nodes) -> list:
    reports = []
    unfused = [n for n in nodes.values() if n.op_type == "Rsqrt" and "batch" in n.name.lower()
               and "norm" in n.name.lower()]
    if unfused:
        reports.append(f"Found {len(unfused)} batch normalization(s) built from separate ops; "
                       "fused=True (FusedBatchNorm) runs them as one kernel.")
    return reports


def _advise(nodes, run_metas, options) -> tfprof_output_pb2.AdviceProto:
    advice = tfprof_output_pb2.AdviceProto()
    for checker in options:
        if checker not in ALL_ADVICE:
            raise InvalidArgumentError(None, None, f"Unknown checker {checker!r}; one of "
                                       f"{sorted(ALL_ADVICE)}.")
        if checker == "ExpensiveOperationChecker":
            reports = _expensive_operations(nodes, run_metas)
        elif checker == "AcceleratorUtilizationChecker":
            reports = ["No accelerator device: nothing to check."]
        elif checker == "OperationChecker":
            reports = _operation_checks(nodes)
        else:
            reports = []  # JobChecker: TF runs it only inside Google
        advice.checkers[checker].reports.extend(reports)
    return advice


def advise(graph=None, run_meta=None, options=_DEFAULT_ADVISE_OPTIONS):
    """Advice on `graph` from its traced step `run_meta`.

    Args:
        options: checker name -> its options (default: `ALL_ADVICE`).

    Returns:
        An `AdviceProto` (checker name -> reports).
    """
    if graph is None:
        graph = graph_mod.get_default_graph()
    if options is _DEFAULT_ADVISE_OPTIONS or options == _DEFAULT_ADVISE_OPTIONS:
        options = ALL_ADVICE
    run_metas = [run_meta] if run_meta is not None else []
    nodes, _ = node_stats.collect(graph, run_metas)
    return _advise(nodes, run_metas, options)


class Profiler:
    """Profiles a graph over several traced steps (`add_step`), in any view."""

    def __init__(self, graph=None, op_log=None):
        self._graph = graph if graph is not None else graph_mod.get_default_graph()
        self._op_log = op_log
        self._steps = {}

    def add_step(self, step, run_meta) -> None:
        """Adds the statistics of traced step `step` (`RunMetadata`)."""
        self._steps.setdefault(int(step), []).append(run_meta)

    def _run_metas(self, options):
        step = options.get("step", -1)
        if step is None or step < 0:
            return [meta for metas in self._steps.values() for meta in metas]
        if step not in self._steps:
            raise InvalidArgumentError(None, None, f"No step {step} was added; added: "
                                       f"{sorted(self._steps)}.")
        return self._steps[step]

    def _profile(self, cmd, options):
        options = _check_options(options)
        run_metas = self._run_metas(options)
        nodes, missing = node_stats.collect(self._graph, run_metas, self._op_log)
        result = _view(nodes, cmd, options)
        _emit(result, cmd, options, missing, run_metas, nodes.keys())
        return result

    def profile_name_scope(self, options):
        """The scope view (`GraphNodeProto`)."""
        return self._profile("scope", options)

    def profile_graph(self, options):
        """The graph view (`GraphNodeProto`)."""
        return self._profile("graph", options)

    def profile_operations(self, options):
        """The op-type view (`MultiGraphNodeProto`)."""
        return self._profile("op", options)

    def profile_python(self, options):
        """The creation-site view (`MultiGraphNodeProto`)."""
        return self._profile("code", options)

    def advise(self, options=None):
        """An `AdviceProto` over the added steps."""
        run_metas = self._run_metas({})
        nodes, _ = node_stats.collect(self._graph, run_metas, self._op_log)
        return _advise(nodes, run_metas, ALL_ADVICE if options is None else options)


def write_op_log(graph, log_dir, op_log=None, run_meta=None, add_trace=True):
    """Writes `log_dir/tfprof_log`: an `OpLogProto` with every op's types (trainable
    variables marked "_trainable_variables") and float operations, merged with `op_log`."""
    del add_trace  # creation sites are kept in the graph, not in the log
    nodes, _ = node_stats.collect(graph, [run_meta] if run_meta is not None else [], op_log)
    log = tfprof_log_pb2.OpLogProto()
    for name in sorted(nodes):
        node = nodes[name]
        entry = log.log_entries.add(name=name, float_ops=node.stats["float_ops"])
        entry.types.extend(sorted(t for t in node.types if t == TRAINABLE_VARIABLES
                                  or t != node.op_type))
    gfile.MakeDirs(log_dir)
    with gfile.GFile(os.path.join(log_dir, "tfprof_log"), "wb") as handle:
        handle.write(log.SerializeToString())
