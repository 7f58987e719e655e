"""Remapper rule 6 for recurrent cells: a `BasicLSTMCell` step's `Split` of the gates and its
eleven elementwise nodes (outside while loops) become one `_LSTMCellPointwise` node whose ten
outputs are their values (ops/internal/lstm_pointwise.py, bit-identical; compiled with numba
in lib/numerics/lstm_jit.py): in the 20-step LSTM of bench/training.py, 220 fewer nodes to
schedule and four passes per step instead of about twenty. A fetched value keeps its node, as
an Identity of the fused output. Switched with the other remapper rules (RewriterConfig
`remapping`, rewrites.py rule 6).

Backward (`FUSE_CELL_GRADIENTS`): each fused cell's gradient nodes from tf.gradients (two Muls
per product, three SigmoidGrads, two TanhGrads, the cell-state AddN, the gates' ConcatV2 and
the gradient tuples' Identities/NoOps) become one `_LSTMCellPointwiseGrad` node named after the
ConcatV2, outputs: the gate gradients and the previous cell state's gradient (bit-identical;
one compiled pass in lib/numerics/lstm_jit.py). LSTM LM b32, one thread, 20 interleaved
rounds: 118.5 -> 116.9 ms CPU median per step.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes
from tensorflux.framework.op_def import OP_DEFS, get_op_def
from tensorflux.runtime import node_edges
from tensorflux.runtime.partition import CONTROL_FLOW_OPS

__all__ = ["fuse_lstm_pointwise", "FUSE_CELL_GRADIENTS"]

# The backward cells fuse too (a switch for the A/B benchmarks and the tests).
FUSE_CELL_GRADIENTS = True

_FUSED_TYPES = frozenset({dtypes.float32, dtypes.float64})

_LSTM_POINTWISE = "_LSTMCellPointwise"
_LSTM_POINTWISE_GRAD = "_LSTMCellPointwiseGrad"


def _reader_with_inputs(node, consumers, op: str, inputs: list):
    """A data reader of `node` with op `op` whose inputs are exactly `inputs`; else None."""
    for reader, k in consumers.get(id(node), ()):
        if k >= 0 and reader.op == op and reader.inputs == inputs:
            return reader
    return None


def _lstm_cell(split, consumers, protected):
    """The BasicLSTMCell nodes after `split` (see ops/internal/lstm_pointwise.py), in the
    op's output order, with the cell state and the forget bias; None when the nodes differ."""
    dtype = split.attrs.get("T")
    if split.op != "Split" or split.attrs.get("num_split") != 4 or dtype not in _FUSED_TYPES \
            or len(split.inputs) != 2:
        return None
    axis = split.inputs[0][0]
    if axis.op != "Const" or np.shape(axis.attrs.get("value")) != () or \
            int(axis.attrs["value"]) not in (1, -1):
        return None
    readers = consumers.get(id(split), ())
    by_port: dict = {}
    for reader, k in readers:
        if k < 0:
            return None
        by_port.setdefault(reader.inputs[k][1], []).append((reader, k))
    if sorted(by_port) != [0, 1, 2, 3] or any(len(v) != 1 for v in by_port.values()):
        return None
    (sig_i, ki), (tanh_j, kj), (add_f, kf), (sig_o, ko) = (by_port[p][0] for p in range(4))
    if (sig_i.op, tanh_j.op, add_f.op, sig_o.op) != ("Sigmoid", "Tanh", "AddV2", "Sigmoid") \
            or kf != 0:
        return None
    bias = add_f.inputs[1][0]
    if bias.op != "Const" or bias.inputs or bias.control_inputs or \
            bias.attrs.get("dtype") != dtype or np.shape(bias.attrs.get("value")) != ():
        return None
    sig_f = next((r for r, k in consumers.get(id(add_f), ())
                  if k == 0 and r.op == "Sigmoid"), None)
    if sig_f is None:
        return None
    kept = next((r for r, k in consumers.get(id(sig_f), ())
                 if k == 1 and r.op == "Mul" and r.inputs[1] == (sig_f, 0)), None)
    new_input = _reader_with_inputs(sig_i, consumers, "Mul", [(sig_i, 0), (tanh_j, 0)])
    if kept is None or new_input is None:
        return None
    new_c = _reader_with_inputs(kept, consumers, "AddV2", [(kept, 0), (new_input, 0)])
    tanh_c = None if new_c is None else next(
        (r for r, k in consumers.get(id(new_c), ()) if k == 0 and r.op == "Tanh"), None)
    new_h = None if tanh_c is None else _reader_with_inputs(
        tanh_c, consumers, "Mul", [(tanh_c, 0), (sig_o, 0)])
    if new_h is None:
        return None
    members = [add_f, sig_f, kept, sig_i, tanh_j, new_input, new_c, tanh_c, sig_o, new_h]
    if id(split) in protected:
        return None
    for node in members + [split]:
        if node.control_inputs or node.attrs.get("_class") or node.device != split.device or \
                node.attrs.get("T") != dtype:
            return None
    return members, kept.inputs[0], (bias, 0)


def fuse_lstm_pointwise(nodes, protected: set) -> list:
    """Turns BasicLSTMCell's `Split` of the gates and its eleven elementwise nodes into one
    `_LSTMCellPointwise` node (bit-identical; see ops/internal/lstm_pointwise.py); readers of
    each former node read the matching output."""
    # NOTE: cells inside while loops (dynamic_rnn) stay unfused: frames and dead tensors.
    if _LSTM_POINTWISE not in OP_DEFS or any(n.op in CONTROL_FLOW_OPS for n in nodes):
        return list(nodes)
    consumers = node_edges.consumers(nodes)
    names = {n.name for n in nodes}
    op_def = get_op_def(_LSTM_POINTWISE)
    moved: dict = {}  # id(former node) -> (fused node, its output)
    gone: set = set()  # the Splits and former nodes
    placed: dict = {}  # id(new_h) -> the fused node, placed where new_h was
    out_first: list = []  # fused nodes whose new_h stays (fetched)
    identity = get_op_def("Identity")
    for split in nodes:
        found = _lstm_cell(split, consumers, protected)
        if found is None or any(id(n) in gone for n in found[0]):
            continue
        members, state, bias = found
        dtype = split.attrs["T"]
        fused = type(split)(
            node_edges.unique_name(members[-1].name + "/_lstm_pointwise", names),
            _LSTM_POINTWISE, {"T": dtype}, [split.inputs[1], state, bias], [],
            device=split.device, output_dtypes=[dtype] * len(members),
            input_dtypes=[dtype] * 3, location=members[-1].location,
            source_op=members[-1].source_op, op_def=op_def)
        moved.update((id(member), (fused, port)) for port, member in enumerate(members))
        gone.update(id(n) for n in members if id(n) not in protected)
        gone.add(id(split))
        for port, member in enumerate(members):
            if id(member) in protected:  # a fetched value keeps its node: an Identity of it
                member.op, member.op_def, member.attrs = "Identity", identity, {"T": dtype}
                member.inputs, member.input_dtypes = [(fused, port)], [dtype]
        if id(members[-1]) in protected:
            out_first.append(fused)
        else:
            placed[id(members[-1])] = fused
    if not gone:
        return list(nodes)
    out = out_first  # NOTE: the plan orders nodes by their edges, not by this list
    for node in nodes:
        if id(node) in placed:
            out.append(placed[id(node)])
        elif id(node) not in gone:
            out.append(node)
    for node in out:
        if node.op == "Identity" and node.inputs[0][0].op == _LSTM_POINTWISE:
            continue  # a fetched former node, already reading its output
        # Every data edge from a former node (each reads output 0 of it) now reads the fused
        # node's output; a control edge waits for the fused node.
        node.inputs = [moved.get(id(src), (src, port)) if port == 0 else (src, port)
                       for src, port in node.inputs]
        if any(id(src) in moved for src in node.control_inputs):
            controls = []
            for src in node.control_inputs:
                src = moved[id(src)][0] if id(src) in moved else src
                if src not in controls and src is not node:
                    controls.append(src)
            node.control_inputs = controls
    return _fuse_cell_gradients(out, protected) if FUSE_CELL_GRADIENTS else out


# -- the backward ----------------------------------------------------------------------------

def _source(edge):
    """`edge` (node, port) followed back through Identity nodes."""
    while edge[0].op == "Identity" and len(edge[0].inputs) == 1:
        edge = edge[0].inputs[0]
    return edge


def _reads(node, op: str, edges) -> bool:
    """`node` is `op` of two inputs that are, through Identities, the edges `edges` (any order:
    the products commute exactly)."""
    if node.op != op or len(node.inputs) != 2:
        return False
    got = [_source(e) for e in node.inputs]
    return got == list(edges) or got == list(edges)[::-1]


def _grad_of(node, op: str, cell, port):
    """The `op` gradient node `node` (through Identities) of the cell output `port`, and the
    node computing its incoming gradient; None when it is not one."""
    if node.op != op or len(node.inputs) != 2 or _source(node.inputs[0]) != (cell, port):
        return None
    return _source(node.inputs[1])[0]


def _cell_gradient(concat):
    """The unfused gradient nodes of one `_LSTMCellPointwise` ending in `concat` (the Split's
    gradient; see ops/internal/lstm_pointwise.py), as (core nodes, fused inputs, with_dc,
    d_c node or None); None when the nodes differ."""
    dtype = concat.attrs.get("T")
    if concat.op != "ConcatV2" or concat.attrs.get("N") != 4 or dtype not in _FUSED_TYPES or \
            len(concat.inputs) != 5:
        return None
    axis = concat.inputs[4][0]
    if axis.op != "Const" or np.shape(axis.attrs.get("value")) != () or \
            int(axis.attrs["value"]) not in (1, -1):
        return None
    d_i, d_j, d_f, d_o = (_source(e)[0] for e in concat.inputs[:4])
    cell = _source(d_i.inputs[0])[0] if d_i.op == "SigmoidGrad" and d_i.inputs else None
    if cell is None or cell.op != _LSTM_POINTWISE:
        return None
    g_i = _grad_of(d_i, "SigmoidGrad", cell, 3)
    g_j = _grad_of(d_j, "TanhGrad", cell, 4)
    g_f = _grad_of(d_f, "SigmoidGrad", cell, 1)
    g_o = _grad_of(d_o, "SigmoidGrad", cell, 8)
    if None in (g_i, g_j, g_f, g_o) or g_i.op != "Mul" or len(g_i.inputs) != 2:
        return None
    sources = [_source(e) for e in g_i.inputs]
    if (cell, 4) not in sources:
        return None
    d_new_c = sources[1] if sources[0] == (cell, 4) else sources[0]
    c = _source(cell.inputs[1])
    if not (_reads(g_j, "Mul", [(cell, 3), d_new_c]) and _reads(g_f, "Mul", [c, d_new_c])) \
            or g_o.op != "Mul" or d_new_c[1] != 0:
        return None
    sources = [_source(e) for e in g_o.inputs]
    if (cell, 7) not in sources or len(sources) != 2:
        return None
    dh = sources[1] if sources[0] == (cell, 7) else sources[0]
    sum_node, extra = d_new_c[0], None
    tanh_grad = sum_node
    if sum_node.op == "AddN":
        if sum_node.attrs.get("N") != 2:
            return None
        first, second = (_source(e) for e in sum_node.inputs)
        tanh_grad, extra = (first[0], second) if first[0].op == "TanhGrad" else \
            (second[0], first)
        extra = next(e for e in sum_node.inputs if _source(e) == extra)
    g_tc = _grad_of(tanh_grad, "TanhGrad", cell, 7)
    if g_tc is None or not _reads(g_tc, "Mul", [dh, (cell, 8)]):
        return None
    core = [concat, d_i, d_j, d_f, d_o, g_i, g_j, g_f, g_o, tanh_grad, g_tc] + (
        [sum_node] if extra is not None else [])
    if len({id(n) for n in core}) != len(core):
        return None
    for node in core:
        if node.attrs.get("T") != dtype or node.device != concat.device or \
                node.attrs.get("_class") or (node is not concat and node.control_inputs):
            return None
    dh_edge = next(e for e in g_o.inputs if _source(e) == dh)
    c_edge = next(e for e in g_f.inputs if _source(e) == c)
    inputs = [dh_edge, extra if extra is not None else dh_edge, c_edge] + [
        (cell, port) for port in (1, 3, 4, 7, 8)]
    return core, inputs, extra is not None, sum_node


def _unread_sum(node, consumers) -> bool:
    """A Sum or Reshape whose value no node reads (a constant bias's gradient: only its
    gradient tuple waits for it)."""
    return node.op in ("Sum", "Reshape") and all(k < 0 for _, k in consumers.get(id(node), ()))


def _removable(core: set, consumers, protected, keep: set):
    """The Identity/NoOp nodes (and unread Sums) reachable from `core` whose every reader is
    in `core` or among them (the gradient tuples' plumbing), or None when a core node other
    than those in `keep` has a data reader elsewhere."""
    found: dict = {}
    stack = [n for nid in core for n, _ in consumers.get(nid, ())]
    while stack:
        node = stack.pop()
        if id(node) in found or id(node) in core or id(node) in protected or not (
                node.op in ("Identity", "NoOp") or _unread_sum(node, consumers)):
            continue
        found[id(node)] = node
        stack.extend(n for n, _ in consumers.get(id(node), ()))
    changed = True
    while changed:
        changed = False
        for nid in list(found):
            if any(id(r) not in core and id(r) not in found for r, _ in consumers.get(nid, ())):
                del found[nid]
                changed = True
    for nid in core - keep:
        for reader, k in consumers.get(nid, ()):
            if k >= 0 and id(reader) not in core and id(reader) not in found:
                return None
    return found


def _fuse_cell_gradients(nodes, protected: set) -> list:
    """Each fused cell's gradient nodes (see `_cell_gradient`) become one
    `_LSTMCellPointwiseGrad` node (bit-identical) named after the gate gradients' ConcatV2:
    readers of the concat read its output 0, readers of the previous cell state's gradient
    (a Mul, when there is one) its output 1."""
    if _LSTM_POINTWISE_GRAD not in OP_DEFS or not any(n.op == _LSTM_POINTWISE for n in nodes):
        return nodes
    consumers = node_edges.consumers(nodes)
    op_def = get_op_def(_LSTM_POINTWISE_GRAD)
    gone: set = set()
    moved: dict = {}  # id(former node) -> (fused node, port)
    for concat in nodes:
        found = _cell_gradient(concat)
        if found is None:
            continue
        core_nodes, inputs, with_dc, d_new_c = found
        d_c = next((r for r, k in consumers.get(id(d_new_c), ())
                    if k >= 0 and _reads(r, "Mul", [(d_new_c, 0), inputs[3]])), None)
        d_c = d_c or next((r for ident, k in consumers.get(id(d_new_c), ()) if
                           ident.op == "Identity" for r, _ in consumers.get(id(ident), ())
                           if _reads(r, "Mul", [(d_new_c, 0), inputs[3]])), None)
        if d_c is not None and (d_c.control_inputs or d_c.attrs.get("T") != concat.attrs["T"]):
            continue
        core_nodes = core_nodes + ([d_c] if d_c is not None else [])
        core = {id(n) for n in core_nodes}
        if core & gone or core & protected:
            continue
        keep = {id(concat)} | ({id(d_c)} if d_c is not None else set())
        plumbing = _removable(core, consumers, protected, keep)
        if plumbing is None:
            continue
        dtype = concat.attrs["T"]
        fused = type(concat)(
            concat.name, _LSTM_POINTWISE_GRAD, {"T": dtype, "with_dc": with_dc}, inputs,
            list(concat.control_inputs), device=concat.device, output_dtypes=[dtype] * 2,
            input_dtypes=[dtype] * 8, location=concat.location, source_op=concat.source_op,
            op_def=op_def)
        moved[id(concat)] = (fused, 0)
        if d_c is not None:
            moved[id(d_c)] = (fused, 1)
        gone |= (core - {id(concat)}) | set(plumbing)
    if not moved:
        return nodes
    out = []
    for node in nodes:
        if id(node) in moved and moved[id(node)][1] == 0:
            out.append(moved[id(node)][0])
        elif id(node) not in gone:
            out.append(node)
    for node in out:
        node.inputs = [moved.get(id(src), (src, port)) if port == 0 else (src, port)
                       for src, port in node.inputs]
        if any(id(src) in moved or id(src) in gone for src in node.control_inputs):
            controls = []
            for src in node.control_inputs:
                if id(src) in gone and id(src) not in moved:
                    continue  # former plumbing: the fused node's inputs order it
                src = moved[id(src)][0] if id(src) in moved else src
                if src not in controls and src is not node:
                    controls.append(src)
            node.control_inputs = controls
    return out
