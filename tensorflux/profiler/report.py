"""The profiler's text report (TF1 tfprof's layout: the options, a doc of the selected
columns, one line per shown node with `self/total` values, indented by depth)."""

from __future__ import annotations

_OPTION_ORDER = ("max_depth", "min_bytes", "min_peak_bytes", "min_residual_bytes",
                 "min_output_bytes", "min_micros", "min_accelerator_micros",
                 "min_cpu_micros", "min_params", "min_float_ops", "min_occurrence", "step",
                 "order_by", "account_type_regexes", "start_name_regexes",
                 "trim_name_regexes", "show_name_regexes", "hide_name_regexes",
                 "account_displayed_op_only", "select", "output")

_VIEW_DOCS = {
    "scope": "scope: The nodes in the model graph are organized by their names, which is "
             "hierarchical like filesystem.",
    "graph": "graph: The nodes in the model graph are organized by their operation input "
             "and output.",
    "op": "op: The nodes are operation kernel type, such as MatMul, Conv2D. Graph nodes "
          "belonging to the same type are aggregated together.",
    "code": "code: The nodes are Python code locations where graph nodes are created.",
}
_SELECT_DOCS = {
    "params": ("# parameters", "param: Number of parameters (in the Variable)."),
    "float_ops": ("# float_ops", "flops: Number of float operations. Note: Please read "
                                 "the implementation for the math behind it."),
    "micros": ("total execution time", "total execution time: Sum of accelerator execution "
                                       "time and cpu execution time."),
    "bytes": ("requested bytes", "requested bytes: The memory requested by the operation, "
                                 "accumulatively."),
    "occurrence": ("occurrence", "occurrence: The number of times it occurs"),
    "device": ("assigned devices", "device: Which device is placed on."),
    "op_types": ("op types", "op_types: The types of the op."),
}


def format_count(value) -> str:
    value = int(value)
    for limit, suffix in ((1e9, "b"), (1e6, "m"), (1e3, "k")):
        if value >= limit:
            return f"{value / limit:.2f}{suffix}"
    return str(value)


def format_micros(value) -> str:
    if value >= 1e6:
        return f"{value / 1e6:.2f}sec"
    if value >= 1e3:
        return f"{value / 1e3:.2f}ms"
    return f"{int(value)}us"


def format_bytes(value) -> str:
    for limit, suffix in ((1e9, "GB"), (1e6, "MB"), (1e3, "KB")):
        if value >= limit:
            return f"{value / limit:.2f}{suffix}"
    return f"{int(value)}B"


def options_text(options) -> str:
    lines = ["=========================Options============================="]
    for key in _OPTION_ORDER:
        value = options.get(key)
        if isinstance(value, list):
            value = ",".join(value)
        elif isinstance(value, bool):
            value = str(value).lower()
        lines.append(f"-{key:<27}{value}")
    return "\n".join(lines)


def _shape_text(proto) -> str:
    if not proto.shapes:
        return ""
    dims = [str(d.size) for d in proto.shapes[0].dim]
    return "x".join(dims) if dims else ""


_COLUMNS = {"params": ("parameters", format_count, " params"),
            "float_ops": ("float_ops", format_count, " flops"),
            "micros": ("exec_micros", format_micros, ""),
            "bytes": ("requested_bytes", format_bytes, "")}


def _values(proto, select, has_op) -> list:
    parts = []
    for column in select:
        if column in _COLUMNS:
            field, formatter, unit = _COLUMNS[column]
            own = formatter(getattr(proto, field)) if has_op else "--"
            parts.append(f"{own}/{formatter(getattr(proto, 'total_' + field))}{unit}")
        elif column == "occurrence" and hasattr(proto, "run_count"):
            parts.append(f"{proto.run_count}/{proto.total_run_count} runs")
        elif column == "device" and getattr(proto, "devices", None):
            parts.append("|".join(proto.devices))
    return parts


def tree_text(root, cmd, options, op_names) -> str:
    """The report for a scope or graph view (`GraphNodeProto` tree); nodes not in
    `op_names` (name scopes) show "--" for their own values."""
    select = options["select"]
    lines = [_header(cmd, select)]

    def walk(proto, depth):
        has_op = proto.name in op_names
        values = _values(proto, select, has_op)
        shape = _shape_text(proto) if "params" in select and proto.parameters else ""
        inside = ", ".join(([shape] if shape else []) + values)
        lines.append(f"{'  ' * depth}{proto.name} ({inside})")
        for child in proto.children:
            walk(child, depth + 1)

    walk(root, 0)
    lines.append("\n======================End of Report==========================")
    return "\n".join(lines)


def grouped_text(root, cmd, options, op_names=()) -> str:
    """The report for an op or code view (`MultiGraphNodeProto`)."""
    select = options["select"]
    lines = [_header(cmd, select)]
    groups, level = [], list(root.children)
    while level:
        groups.extend(level)
        level = [child for group in level for child in group.children] if cmd == "op" else []
    field = {"params": "parameters", "float_ops": "float_ops", "micros": "exec_micros",
             "bytes": "requested_bytes"}.get(select[0] if select else "", "float_ops")
    grand = max(1, getattr(root, "total_" + field))
    width = max([len(g.name) for g in groups] + [0]) + 5
    for group in groups:
        own, total = getattr(group, field), getattr(group, "total_" + field)
        formatted = (format_micros(own) if field == "exec_micros" else
                     format_bytes(own) if field == "requested_bytes" else format_count(own))
        unit = {"parameters": " params", "float_ops": " float_ops"}.get(field, "")
        lines.append(f"{group.name:<{width}}{formatted:>5}{unit} "
                     f"({100.0 * total / grand:.2f}%, {100.0 * own / grand:.2f}%)")
    lines.append("\n======================End of Report==========================")
    return "\n".join(lines)


def _header(cmd, select) -> str:
    docs = [_VIEW_DOCS[cmd]] + [_SELECT_DOCS[c][1] for c in select if c in _SELECT_DOCS]
    columns = " | ".join(["node name"] + [_SELECT_DOCS[c][0] for c in select
                                          if c in _SELECT_DOCS])
    return ("==================Model Analysis Report======================\nDoc:\n"
            + "\n".join(docs) + "\n\nProfile:\n" + columns)
