"""Remapper rule 6 for recurrent cells: a `BasicLSTMCell` step's `Split` of the gates and its
eleven elementwise nodes (outside while loops) become one `_LSTMCellPointwise` node whose ten
outputs are their values (ops/internal/lstm_pointwise.py, bit-identical; compiled with numba
in lib/numerics/lstm_jit.py): in the 20-step LSTM of bench/training.py, 220 fewer nodes to
schedule and four passes per step instead of about twenty. A fetched value keeps its node, as
an Identity of the fused output. Switched with the other remapper rules (RewriterConfig
`remapping`, rewrites.py rule 6).
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes
from tensorflux.framework.op_def import OP_DEFS, get_op_def
from tensorflux.runtime import node_edges
from tensorflux.runtime.partition import CONTROL_FLOW_OPS

__all__ = ["fuse_lstm_pointwise"]

_FUSED_TYPES = frozenset({dtypes.float32, dtypes.float64})

_LSTM_POINTWISE = "_LSTMCellPointwise"


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
    return out
