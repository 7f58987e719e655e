"""Remapper rule 6 for unrolled RNNs: the input half of the gate products hoisted out of the
time steps (ops/internal/lstm_inputs.py), forward and backward.

Forward: the steps' `_FusedMatMul(ConcatV2([x_t, h_t], 1), K, bias)` (BiasAdd only; a
`BasicLSTMCell`/`LSTMCell` step after `fuse_products`) that share one kernel and one bias,
whose inputs `x_t` (of one static width) do not depend on any of them (a `static_rnn`'s
inputs), become one `_InputProducts(x_0..x_n, K, bias)` (`concat(x) @ K[:width] + bias`,
one tall product) and, per step, `_StateProduct(h_t, K, part_t)` (`h_t @ K[width:] +
part_t`), which keeps the former node's name, so its readers and fetches are unchanged.
The ConcatV2s stay when the kernel gradient reads them.

Backward: tf.gradients' `MatMul(g_t, K, transpose_b=True)` followed by `SplitV([width,
units], axis 1)` (the concat's gradient, directly or through the gradient `tuple`'s
Identity) becomes `_StateProductGrad(g_t, K)` (`g_t @ K[width:]^T`: the state gradient, the only
part the recurrence waits for; the node and its gates stay) and one
`_InputProductsGrad(g_0..g_n, K[:width])` for the input gradients of every step, on the copy
of `K[:width]` the forward step read (so a kernel update gated only on the products of the
original graph cannot change it). The SplitV becomes an Identity of the state gradient.

Then `_InputProductsGrad` reads, as `_InputProductsGradStacked`, the ConcatV2 that already
stacks the same gradients along rows (the kernel gradient's, after merge_product_sums), and a
second ConcatV2 of the same tensors (the bias gradient's) becomes that one: two fewer copies
of `[steps * batch, 4 * units]` per step.

Values differ from the unrewritten graph by summation order only (within float32
tolerance). Switched with the other remapper rules (RewriterConfig `remapping`, rewrites.py
rule 6) and by `HOIST_INPUT_PRODUCTS`. Not inside while loops (dynamic_rnn).
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes
from tensorflux.framework.op_def import OP_DEFS, get_op_def
from tensorflux.runtime import node_edges
from tensorflux.runtime.partition import CONTROL_FLOW_OPS

__all__ = ["hoist_input_products", "HOIST_INPUT_PRODUCTS"]

# The rule runs (a switch for the A/B benchmarks and the tests).
HOIST_INPUT_PRODUCTS = True
# The step gradients are stacked once (`_share_stacked_grads`; a switch for the A/B benchmarks).
SHARE_STACKED_GRADS = True

# The ops of ops/internal/lstm_inputs.py (found through the registry).
INPUT_PRODUCTS = "_InputProducts"
STATE_PRODUCT = "_StateProduct"
INPUT_PRODUCTS_GRAD = "_InputProductsGrad"
STATE_PRODUCT_GRAD = "_StateProductGrad"
INPUT_PRODUCTS_GRAD_STACKED = "_InputProductsGradStacked"

_TYPES = frozenset({dtypes.float32, dtypes.float64})


def _const_value(src):
    if src.op != "Const" or src.inputs or src.control_inputs:
        return None
    return np.asarray(src.attrs.get("value"))


def _last_axis(src) -> bool:
    value = _const_value(src)
    return value is not None and value.shape == () and int(value) in (1, -1)


def _static_cols(src, port: int):
    """The static column count of output `port` of `src` (from its graph op), or None."""
    try:
        dims = src.source_op.outputs[port].shape.as_list()
    except (AttributeError, IndexError, ValueError):
        return None
    return dims[1] if len(dims) == 2 and dims[1] is not None else None


def _step_product(node, protected):
    """(x_t, h_t) when `node` is a gate product `_FusedMatMul(ConcatV2([x, h], 1), K, bias)`."""
    dtype = node.attrs.get("T")
    if node.op != "_FusedMatMul" or dtype not in _TYPES or list(
            node.attrs.get("fused_ops", ())) != ["BiasAdd"] or node.attrs.get("transpose_a") \
            or node.attrs.get("transpose_b") or node.control_inputs or \
            node.attrs.get("_class") or len(node.inputs) != 3 or \
            any(d.is_ref_dtype for d in node.input_dtypes):
        return None
    concat, port = node.inputs[0]
    if port != 0 or concat.op != "ConcatV2" or concat.attrs.get("N") != 2 or \
            concat.attrs.get("T") != dtype or concat.device != node.device or \
            not _last_axis(concat.inputs[2][0]):
        return None
    return concat.inputs[0], concat.inputs[1]


def _downstream(starts, consumers) -> set:
    """ids of the nodes reachable from `starts` (themselves included) along any edge."""
    seen: set = set()
    stack = list(starts)
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.extend(reader for reader, _ in consumers.get(id(node), ()))
    return seen


def _forward_groups(nodes, consumers, protected):
    """[(products, [(x_t, h_t)])]: gate products sharing kernel and bias, inputs up front."""
    groups: dict = {}
    for node in nodes:
        found = _step_product(node, protected)
        if found is not None:
            (k, kp), (b, bp) = node.inputs[1], node.inputs[2]
            key = (id(k), kp, id(b), bp, node.device, node.attrs["T"])
            groups.setdefault(key, []).append((node, found))
    out = []
    for members in groups.values():
        if len(members) < 2:
            continue
        after = _downstream([p for p, _ in members], consumers)
        if any(id(x) in after for _, ((x, _), _) in members):
            continue  # an input depends on a gate product: not known up front
        out.append(([p for p, _ in members], [xh for _, xh in members]))
    return out


def _split_of(product, consumers, protected):
    """The SplitV of the concat's gradient reading `product` (directly or through one
    Identity), its sizes; else None."""
    readers = [(r, k) for r, k in consumers.get(id(product), ()) if k >= 0]
    if len(readers) != 1:
        return None
    reader = readers[0][0]
    if reader.op == "Identity":
        if id(reader) in protected or reader.attrs.get("_class"):
            return None
        readers = [(r, k) for r, k in consumers.get(id(reader), ()) if k >= 0]
        if len(readers) != 1:
            return None
        reader = readers[0][0]
    if reader.op != "SplitV" or reader.attrs.get("num_split") != 2 or readers[0][1] != 0 or \
            id(reader) in protected or reader.attrs.get("_class") or \
            reader.device != product.device or not _last_axis(reader.inputs[2][0]):
        return None
    sizes = _const_value(reader.inputs[1][0])
    if sizes is None or sizes.shape != (2,) or (sizes < 0).any():
        return None
    return reader, [int(s) for s in sizes]


def _backward_products(nodes, kernel, width, dtype, device, consumers, protected):
    """[(MatMul g_t K^T, its SplitV)] of the group's kernel whose split is [width, units]."""
    found = []
    for node in nodes:
        if node.op != "MatMul" or node.inputs[1] != kernel or node.attrs.get("T") != dtype or \
                node.attrs.get("transpose_a") or not node.attrs.get("transpose_b") or \
                id(node) in protected or node.device != device or node.attrs.get("_class"):
            continue
        split = _split_of(node, consumers, protected)
        if split is not None and split[1][0] == width:
            found.append((node, split[0]))
    return found


class _Maker:
    """New nodes of the rule, each placed before a given existing node."""

    def __init__(self, nodes):
        self.names = {n.name for n in nodes}
        self.before: dict = {}
        self.after: dict = {}

    def node(self, like, suffix, op, attrs, inputs, output_dtypes, input_dtypes, place=None,
             after=None):
        made = type(like)(
            node_edges.unique_name(like.name + suffix, self.names), op, attrs, inputs, [],
            device=like.device, output_dtypes=output_dtypes, input_dtypes=input_dtypes,
            location=like.location, source_op=like.source_op, op_def=get_op_def(op))
        if after is not None:
            self.after.setdefault(id(after), []).append(made)
        else:
            self.before.setdefault(id(place or like), []).append(made)
        return made

    def place(self, nodes) -> list:
        out = []
        for node in nodes:
            out.extend(self.before.get(id(node), ()))
            out.append(node)
            out.extend(self.after.get(id(node), ()))
        return out


def _hoist_forward(products, steps, maker):
    first = products[0]
    dtype = first.attrs["T"]
    kernel, bias = first.inputs[1], first.inputs[2]
    n = len(products)
    hoisted = maker.node(first, "/_input_products", INPUT_PRODUCTS, {"N": n, "T": dtype},
                         [x for x, _ in steps] + [kernel, bias], [dtype] * (n + 1),
                         [dtype] * (n + 2))
    for t, (product, (_, h)) in enumerate(zip(products, steps)):
        product.op, product.op_def = STATE_PRODUCT, get_op_def(STATE_PRODUCT)
        product.attrs = {"T": dtype}
        product.inputs = [h, kernel, (hoisted, 1 + t)]
        product.input_dtypes = [dtype] * 3
    return hoisted


def _hoist_backward(found, hoisted, width, consumers, maker) -> None:
    first = found[0][0]
    dtype = first.attrs["T"]
    inputs, input_readers = [], []
    for product, split in found:
        product.op, product.op_def = STATE_PRODUCT_GRAD, get_op_def(STATE_PRODUCT_GRAD)
        product.attrs = {"T": dtype, "width": width}
        readers = [(r, k) for r, k in consumers.get(id(split), ()) if k >= 0]
        state_readers = [(r, k) for r, k in readers if r.inputs[k][1] == 1]
        x_readers = [(r, k) for r, k in readers if r.inputs[k][1] == 0]
        for reader, k in state_readers:
            reader.inputs[k] = (split, 0)
        if x_readers:
            inputs.append(product.inputs[0])
            input_readers.append(x_readers)
        split.op, split.op_def, split.attrs = "Identity", get_op_def("Identity"), {"T": dtype}
        split.inputs, split.input_dtypes = [split.inputs[0]], [dtype]
        split.output_dtypes = [dtype]
    if not inputs:
        return
    n = len(inputs)
    last = found[-1][1]
    grads = maker.node(first, "/_input_products_grad", INPUT_PRODUCTS_GRAD, {"N": n, "T": dtype},
                       inputs + [(hoisted, 0)], [dtype] * n, [dtype] * (n + 1), after=last)
    for t, readers in enumerate(input_readers):
        for reader, k in readers:
            reader.inputs[k] = (grads, t)


def _backward_ok(found, consumers) -> bool:
    """No input gradient's reader leads back to a state gradient (else: a cycle)."""
    starts = [r for _, split in found for r, k in consumers.get(id(split), ())
              if k >= 0 and r.inputs[k][1] == 0]
    after = _downstream(starts, consumers)
    return not any(id(product) in after or id(product.inputs[0][0]) in after
                   for product, _ in found)


def hoist_input_products(nodes, protected: set) -> list:
    """The rule of the module docstring; returns the new node list."""
    if not HOIST_INPUT_PRODUCTS or INPUT_PRODUCTS not in OP_DEFS or \
            any(n.op in CONTROL_FLOW_OPS for n in nodes):
        return list(nodes)
    consumers = node_edges.consumers(nodes)
    groups = _forward_groups(nodes, consumers, protected)
    if not groups:
        return list(nodes)
    maker = _Maker(nodes)
    removed: set = set()  # concats only the hoisted products read
    for products, steps in groups:
        first = products[0]
        kernel, dtype = first.inputs[1], first.attrs["T"]
        widths = {_static_cols(x, port) for (x, port), _ in steps}
        width = widths.pop() if len(widths) == 1 else None
        if width is None:
            continue  # inputs of unknown or different widths: one product cannot take them
        found = _backward_products(nodes, kernel, width, dtype, first.device, consumers,
                                   protected)
        concats = [p.inputs[0][0] for p in products]
        hoisted = _hoist_forward(products, steps, maker)
        removed.update(id(c) for c, p in zip(concats, products)
                       if id(c) not in protected and consumers.get(id(c)) == [(p, 0)])
        if found and _backward_ok(found, consumers):
            _hoist_backward(found, hoisted, width, consumers, maker)
    return _share_stacked_grads(maker.place([n for n in nodes if id(n) not in removed]),
                                protected)


# -- one stacking of the step gradients ------------------------------------------------------

def _resolved(edges) -> tuple:
    """The edges followed back through Identity nodes, as (id(node), port)."""
    out = []
    for src, port in edges:
        while src.op == "Identity" and len(src.inputs) == 1 and port == 0:
            src, port = src.inputs[0]
        out.append((id(src), port))
    return tuple(out)


def _row_stack(node):
    """The stacked edges of `node` when it is a ConcatV2 along axis 0 of 2+ tensors."""
    if node.op != "ConcatV2" or len(node.inputs) < 3 or node.attrs.get("T") not in _TYPES:
        return None
    axis = _const_value(node.inputs[-1][0])
    if axis is None or axis.shape != () or int(axis) != 0:
        return None
    return node.inputs[:-1]


def _ancestors(node) -> set:
    seen: set = set()
    stack = [node]
    while stack:
        current = stack.pop()
        for src in [s for s, _ in current.inputs] + list(current.control_inputs):
            if id(src) not in seen:
                seen.add(id(src))
                stack.append(src)
    return seen


def _share_stacked_grads(nodes, protected: set) -> list:
    """`_InputProductsGrad(g_0..g_n, rows)` becomes `_InputProductsGradStacked(concat, rows)`
    when a ConcatV2 along rows stacks the same tensors in the same order (through Identities),
    and a ConcatV2 stacking the same tensors as an earlier one is replaced by it: never when
    the kept concat depends on a node that would now read it (a cycle)."""
    if not SHARE_STACKED_GRADS or INPUT_PRODUCTS_GRAD_STACKED not in OP_DEFS:
        return nodes
    stacks: dict = {}  # (resolved edges, dtype, device) -> the first ConcatV2
    replaced: dict = {}  # id(duplicate concat) -> the kept one
    consumers = None
    for node in nodes:
        edges = _row_stack(node)
        if edges is None:
            continue
        key = (_resolved(edges), node.attrs["T"], node.device)
        kept = stacks.setdefault(key, node)
        if kept is node or id(node) in protected or node.control_inputs:
            continue
        consumers = consumers or node_edges.consumers(nodes)
        before = _ancestors(kept)
        if any(id(r) in before for r, _ in consumers.get(id(node), ())):
            continue
        replaced[id(node)] = kept
    for node in nodes:
        if node.op != INPUT_PRODUCTS_GRAD or len(node.inputs) < 3:
            continue
        kept = stacks.get((_resolved(node.inputs[:-1]), node.attrs["T"], node.device))
        if kept is None or id(node) in _ancestors(kept):
            continue
        node.op, node.op_def = INPUT_PRODUCTS_GRAD_STACKED, get_op_def(
            INPUT_PRODUCTS_GRAD_STACKED)
        node.inputs = [(kept, 0), node.inputs[-1]]
        node.input_dtypes = node.input_dtypes[:1] + node.input_dtypes[-1:]
    if not replaced:
        return nodes
    out = [n for n in nodes if id(n) not in replaced]
    for node in out:
        node.inputs = [(replaced.get(id(src), src), port) for src, port in node.inputs]
        if any(id(src) in replaced for src in node.control_inputs):
            controls = []
            for src in node.control_inputs:
                src = replaced.get(id(src), src)
                if src not in controls and src is not node:
                    controls.append(src)
            node.control_inputs = controls
    return out
