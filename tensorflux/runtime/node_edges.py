"""Edges of a step's runtime Nodes, for the rewrites: who reads a node, rewiring control
edges, fresh node names."""

from __future__ import annotations

__all__ = ["consumers", "replace_control", "unique_name"]


def consumers(nodes) -> dict:
    """{id(node): [(consumer, input position or -1 for a control edge)]}."""
    found: dict = {id(n): [] for n in nodes}
    for node in nodes:
        for k, (src, _) in enumerate(node.inputs):
            found.setdefault(id(src), []).append((node, k))
        for src in node.control_inputs:
            found.setdefault(id(src), []).append((node, -1))
    return found


def replace_control(node, old, new_sources) -> None:
    controls = []
    for src in node.control_inputs:
        for item in ([src] if src is not old else new_sources):
            if item not in controls and item is not node:
                controls.append(item)
    node.control_inputs = controls


def unique_name(base: str, names: set) -> str:
    name = base
    suffix = 1
    while name in names:
        name = f"{base}_{suffix}"
        suffix += 1
    names.add(name)
    return name
