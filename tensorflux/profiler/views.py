"""The profiler's views of the op table (`node_stats.collect`), as TF1's tfprof shows them:

- scope: nodes arranged by name ("a/b/c" under "a/b"; scopes without an op of their own
  appear as nodes without statistics);
- graph: each node's children are its inputs (each node once, from the ops nothing consumes);
- op: one group per op type, chained in display order, each total covering the rest;
- code: one group per creation site.

A node is accounted when one of its types fully matches `account_type_regexes`. It is shown
when its own statistics reach every `min_*` threshold, its depth is below `max_depth` (the
root's children are at depth 1), its
name passes the start/show/hide regexes, and it or a node below it is accounted. The
shown descendants of a hidden node move up to its nearest shown ancestor. Totals add up the
node (when accounted) and its shown children, or every accounted descendant when
`account_displayed_op_only` is False.
"""

from __future__ import annotations

import re

from tensorflux.framework.errors import InvalidArgumentError
from tensorflux.profiler.node_stats import STAT_FIELDS
from tensorflux.protos import tfprof_output_pb2

ROOT = "_TFProfRoot"

_THRESHOLDS = (("min_bytes", "requested_bytes"), ("min_peak_bytes", "peak_bytes"),
               ("min_residual_bytes", "residual_bytes"), ("min_output_bytes", "output_bytes"),
               ("min_micros", "exec_micros"), ("min_accelerator_micros",
                                               "accelerator_exec_micros"),
               ("min_cpu_micros", "cpu_exec_micros"), ("min_params", "parameters"),
               ("min_float_ops", "float_ops"), ("min_occurrence", "run_count"))

_ORDER_FIELDS = {"micros": "exec_micros", "accelerator_micros": "accelerator_exec_micros",
                 "cpu_micros": "cpu_exec_micros", "bytes": "requested_bytes",
                 "peak_bytes": "peak_bytes", "residual_bytes": "residual_bytes",
                 "output_bytes": "output_bytes", "params": "parameters",
                 "float_ops": "float_ops", "occurrence": "run_count"}

_ZERO = dict.fromkeys(STAT_FIELDS, 0)


class _TreeNode:
    def __init__(self, name, op=None):
        self.name, self.op, self.children = name, op, []

    @property
    def stats(self):
        return self.op.stats if self.op is not None else _ZERO


class _Filter:
    def __init__(self, options):
        self.options = options
        self.account = [re.compile(r) for r in options["account_type_regexes"]]
        self.start = [re.compile(r) for r in options["start_name_regexes"]]
        self.show = [re.compile(r) for r in options["show_name_regexes"]]
        self.hide = [re.compile(r) for r in options["hide_name_regexes"]]
        self.trim = [re.compile(r) for r in options["trim_name_regexes"]]
        self.all_start = options["start_name_regexes"] == [".*"]
        order = options["order_by"]
        if order not in _ORDER_FIELDS and order != "name":
            raise InvalidArgumentError(None, None, f"Unknown order_by: {order!r}; one of "
                                       f"{sorted(_ORDER_FIELDS) + ['name']}.")
        self.order_field = _ORDER_FIELDS.get(order)

    def accounted(self, node) -> bool:
        return node.op is not None and any(
            regex.fullmatch(op_type) for op_type in node.op.types for regex in self.account)

    def passes(self, node, depth, started) -> bool:
        if depth >= self.options["max_depth"] or not started:
            return False
        stats = node.stats
        if any(stats[field] < self.options[key] for key, field in _THRESHOLDS):
            return False
        if not any(regex.fullmatch(node.name) for regex in self.show):
            return False
        return not any(regex.fullmatch(node.name) for regex in self.hide)

    def starts(self, node) -> bool:
        return self.all_start or any(regex.fullmatch(node.name) for regex in self.start)

    def trimmed(self, node) -> bool:
        return any(regex.fullmatch(node.name) for regex in self.trim)

    def sort(self, protos) -> list:
        if self.order_field is None:
            return sorted(protos, key=lambda p: p.name)
        field = "total_" + self.order_field
        return sorted(protos, key=lambda p: (-getattr(p, field), p.name))


def _fill_self(proto, node, accounted) -> None:
    if node.op is None:
        return
    stats = node.op.stats
    for field in STAT_FIELDS:
        setattr(proto, field, stats[field])
    proto.devices.extend(node.op.devices)
    for shape in node.op.shapes:
        proto.shapes.add().CopyFrom(shape.as_proto())
    for index, shape in enumerate(node.op.input_shapes):
        proto.input_shapes[index].CopyFrom(shape.as_proto())
    proto.total_definition_count = 1 if accounted else 0


def _add_totals(proto, stats) -> None:
    for field in STAT_FIELDS:
        name = "total_" + field
        setattr(proto, name, getattr(proto, name) + stats[field])


def _add_child_totals(proto, child) -> None:
    for field in STAT_FIELDS + ("definition_count",):
        name = "total_" + field
        setattr(proto, name, getattr(proto, name) + getattr(child, name))


def _all_accounted(node, keep, seen) -> dict:
    """Sums of the accounted nodes at and below `node` (each op once)."""
    total = dict.fromkeys(STAT_FIELDS, 0)
    stack = [node]
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if keep.accounted(current):
            for field in STAT_FIELDS:
                total[field] += current.stats[field]
        stack.extend(current.children)
    return total


def _has_accounted(node, keep, memo) -> bool:
    """Whether `node` or a node below it is accounted."""
    key = id(node)
    if key not in memo:
        memo[key] = False  # a graph view's cycle guard
        memo[key] = keep.accounted(node) or any(
            _has_accounted(child, keep, memo) for child in node.children)
    return memo[key]


def _show_tree(node, keep, depth, started, visited, memo) -> list:
    """The GraphNodeProtos shown for `node`'s subtree (itself, or its lifted descendants)."""
    started = started or keep.starts(node)
    tentative = keep.passes(node, depth, started)
    accounted = keep.accounted(node)
    shown_children = []
    if not keep.trimmed(node):
        child_depth = depth + 1 if tentative else depth
        for child in node.children:
            if id(child) in visited:
                continue
            visited.add(id(child))
            shown_children.extend(_show_tree(child, keep, child_depth, started, visited,
                                             memo))
    if not tentative or not _has_accounted(node, keep, memo):
        return shown_children
    proto = tfprof_output_pb2.GraphNodeProto(name=node.name)
    _fill_self(proto, node, accounted)
    if keep.options["account_displayed_op_only"]:
        if accounted:
            _add_totals(proto, node.stats)
        for child in shown_children:
            _add_child_totals(proto, child)
    else:
        _add_totals(proto, _all_accounted(node, keep, set()))
    proto.children.extend(keep.sort(shown_children))
    return [proto]


def _root_proto(children, keep, every_node) -> tfprof_output_pb2.GraphNodeProto:
    root = tfprof_output_pb2.GraphNodeProto(name=ROOT)
    if keep.options["account_displayed_op_only"]:
        for child in children:
            _add_child_totals(root, child)
    else:
        fake_root = _TreeNode(ROOT)
        fake_root.children = every_node
        _add_totals(root, _all_accounted(fake_root, keep, set()))
    root.children.extend(keep.sort(children))
    return root


def scope_view(nodes, options) -> tfprof_output_pb2.GraphNodeProto:
    """The scope view of the op table `nodes`."""
    keep = _Filter(options)
    tree = {}
    root = _TreeNode(ROOT)

    def tree_node(name):
        if name not in tree:
            tree[name] = _TreeNode(name, nodes.get(name))
            parent = tree_node(name.rsplit("/", 1)[0]) if "/" in name else root
            parent.children.append(tree[name])
        return tree[name]

    for name in sorted(nodes):
        tree_node(name)
    shown = []
    visited = set()
    for child in root.children:
        shown.extend(_show_tree(child, keep, 1, False, visited, {}))
    return _root_proto(shown, keep, list(tree.values()))


def graph_view(nodes, options) -> tfprof_output_pb2.GraphNodeProto:
    """The graph view: children are inputs; the tops are the ops no op consumes."""
    keep = _Filter(options)
    tree = {name: _TreeNode(name, op) for name, op in nodes.items()}
    consumed = set()
    for name, op in nodes.items():
        for source in op.inputs:
            if source in tree:
                tree[name].children.append(tree[source])
                consumed.add(source)
    tops = [tree[name] for name in sorted(tree) if name not in consumed]
    shown, visited = [], {id(top) for top in tops}
    for top in tops:
        shown.extend(_show_tree(top, keep, 1, False, visited, {}))
    return _root_proto(shown, keep, list(tree.values()))


def grouped_view(nodes, options, cmd) -> tfprof_output_pb2.MultiGraphNodeProto:
    """The op view (groups by op type, chained) or the code view (groups by creation site)."""
    keep = _Filter(options)
    groups = {}
    for name in sorted(nodes):
        node = _TreeNode(name, nodes[name])
        if keep.accounted(node):
            key = node.op.op_type if cmd == "op" else node.op.location
            groups.setdefault(key, []).append(node)
    shown = []
    for key, members in groups.items():
        group = tfprof_output_pb2.MultiGraphNodeProto(name=key)
        for member in members:
            for field in STAT_FIELDS:
                if field != "run_count":
                    setattr(group, field, getattr(group, field) + member.stats[field])
            graph_node = group.graph_nodes.add(name=member.name)
            _fill_self(graph_node, member, True)
            _add_totals(graph_node, member.stats)
        probe = _TreeNode(key)
        probe.op = _GroupStats(group, sum(m.stats["run_count"] for m in members))
        if keep.passes(probe, 1, keep.all_start or keep.starts(probe)):
            for field in STAT_FIELDS:
                if field != "run_count":
                    setattr(group, "total_" + field, getattr(group, field))
            shown.append(group)
    ordered = keep.sort(shown)
    root = tfprof_output_pb2.MultiGraphNodeProto(name=ROOT)
    if cmd == "op":
        # Each type's totals cover it and every type listed after it.
        for later, earlier in zip(reversed(ordered[1:]), reversed(ordered[:-1])):
            for field in STAT_FIELDS:
                if field != "run_count":
                    name = "total_" + field
                    setattr(earlier, name, getattr(earlier, name) + getattr(later, name))
        # protobuf copies on append: chain from the end so each copy holds its tail.
        for index in range(len(ordered) - 1, 0, -1):
            ordered[index - 1].children.append(ordered[index])
        chain = ordered[:1]
    else:
        chain = ordered
    root.children.extend(chain)
    for child in ordered:
        for field in STAT_FIELDS:
            if field != "run_count":
                setattr(root, "total_" + field,
                        getattr(root, "total_" + field) + getattr(child, field))
    return root


class _GroupStats:
    """A group's own sums in the shape `_Filter.passes` reads."""

    def __init__(self, group, run_count):
        self.stats = {field: getattr(group, field, 0) for field in STAT_FIELDS}
        self.stats["run_count"] = run_count
        self.types = set()
