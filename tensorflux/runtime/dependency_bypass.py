"""Rule 5b of runtime/rewrites.py: Identity and NoOp nodes that only carry ordering are bypassed,
as TF's dependency optimizer does.

`tf.gradients` (gate_gradients, `tf.tuple`) wraps each gradient in
`Identity(g, ^group_deps)` with `group_deps = NoOp(^g_1, ..., ^g_n)`: half of an unrolled LSTM
step's runtime nodes (267 Identities and 186 NoOps of 877 in bench/training.py's LSTM) compute
nothing, and each still costs the executor a scheduling round.

- An Identity with control inputs (not fetched, not a variable read colocated by `_class`, no
  reference edges, its source neither a control-flow op nor a `_Recv`, same device) is
  removed: a data reader reads its source and gains its control inputs; a control reader waits
  for its source and its control inputs instead.
- A NoOp (not fetched; read by control edges, so not the step's target) whose control fan-in
  `k` and fan-out `m` give `k * m <= k + m + MAX_EXTRA_EDGES` is removed: each reader waits
  for the NoOp's control inputs directly.

Every node still starts after everything it started after before (the happens-before order
is kept edge for edge), so values and the order of stateful ops are unchanged. Graphs with
control-flow ops (frames, dead tensors) or nodes asking for different devices (control edges
would cross partitions) are left alone.
"""

from __future__ import annotations

from tensorflux.runtime.partition import CONTROL_FLOW_OPS, topological_order

__all__ = ["bypass_dependencies", "MAX_EXTRA_EDGES"]

# A NoOp goes when bypassing it adds at most this many edges beyond the k + m it removes.
MAX_EXTRA_EDGES = 8


def _bypassable_identity(node, protected) -> bool:
    if node.op != "Identity" or not node.control_inputs or id(node) in protected or \
            node.attrs.get("_class") or len(node.inputs) != 1:
        return False
    if any(dtype.is_ref_dtype for dtype in list(node.input_dtypes) + list(node.output_dtypes)):
        return False
    src = node.inputs[0][0]
    if src.op in CONTROL_FLOW_OPS or src.op == "_Recv":
        return False
    return not node.device or node.device == src.device


def _rewire(node, replaced: dict) -> None:
    """Points `node`'s edges from bypassed nodes to what those nodes waited for."""
    if not any(id(src) in replaced for src, _ in node.inputs) and \
            not any(id(src) in replaced for src in node.control_inputs):
        return
    inputs, extra = [], []
    for src, idx in node.inputs:
        found = replaced.get(id(src))
        if found is None:
            inputs.append((src, idx))
        else:
            inputs.append(found[0])
            extra.extend(found[1])
    waits = []
    for src in node.control_inputs:
        found = replaced.get(id(src))
        if found is None:
            waits.append(src)
        else:
            if found[0] is not None:
                waits.append(found[0][0])
            waits.extend(found[1])
    controls: list = []
    seen: set = set()
    for src in waits + extra:
        if id(src) not in seen and src is not node:
            seen.add(id(src))
            controls.append(src)
    node.inputs = inputs
    node.control_inputs = controls


def bypass_dependencies(nodes, protected: set) -> list:
    """Removes ordering-only Identity and NoOp nodes (see the module docstring)."""
    if any(n.op in CONTROL_FLOW_OPS for n in nodes) or len({n.device for n in nodes}) > 1:
        return list(nodes)
    readers: dict = {}
    for node in nodes:
        for src in node.control_inputs:
            readers[id(src)] = readers.get(id(src), 0) + 1
        for src, _ in node.inputs:
            readers[id(src)] = readers.get(id(src), -10 ** 9)  # a data reader: keep NoOps
    # id(node) -> ((source, output) or None, [control inputs to wait for instead])
    replaced: dict = {}
    for node in topological_order(nodes):
        _rewire(node, replaced)
        if _bypassable_identity(node, protected):
            replaced[id(node)] = (node.inputs[0], list(node.control_inputs))
        elif node.op == "NoOp" and id(node) not in protected and not node.inputs:
            fan_in, fan_out = len(node.control_inputs), readers.get(id(node), 0)
            if fan_out >= 1 and fan_in * fan_out <= fan_in + fan_out + MAX_EXTRA_EDGES:
                replaced[id(node)] = (None, list(node.control_inputs))
    if not replaced:
        return list(nodes)
    for node in nodes:
        _rewire(node, replaced)
    return [n for n in nodes if id(n) not in replaced]
