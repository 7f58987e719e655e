"""A remapper rewrite: a sum of zero-padded pieces that tile one axis becomes their
concatenation (rule 6 of runtime/rewrites.py, with the other remapper rewrites).

`tf.gradients` of `Slice`s that cut one tensor into consecutive pieces (`nce_loss` slices the
gathered true and sampled weight rows of one `embedding_lookup`) pads each piece's gradient
back to the full shape with zeros (`Pad`) and sums the padded tensors (`AddN`): every element
is one piece's value plus zeros. Here `AddN(Pad(x_1, p_1), ..., Pad(x_n, p_n))` whose paddings
are constant, zero on every axis but one, and whose pieces tile that axis exactly (no gap, no
overlap, by the static shapes of the client graph) becomes `AddV2(ConcatV2(x_i in axis
order), 0)`: one pass that places the pieces and one that adds zero, instead of n padded
copies and their sum. Adding one zero keeps the values bit for bit (x + 0 is x, and -0.0 + 0
is +0.0 as in the padded sum; NaN stays NaN). The AddN keeps its name, so its readers are
unchanged; nodes waiting for a removed Pad wait for its inputs.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes
from tensorflux.framework.op_def import get_op_def
from tensorflux.runtime import node_edges
from tensorflux.runtime.constant_folding import static_shape

__all__ = ["merge_padded_sums"]

_TYPES = frozenset({dtypes.float16, dtypes.float32, dtypes.float64})


def _const_value(node):
    if node.op != "Const" or node.inputs or node.control_inputs:
        return None
    return node.attrs.get("value")


def _piece(pad, add_n, position, consumers, protected):
    """(input edge, paddings, input length per axis) of an AddN input that is a Pad only the
    sum reads, with constant paddings and a fully known static input shape; else None."""
    if pad.op != "Pad" or id(pad) in protected or pad.attrs.get("_class") or \
            pad.device != add_n.device or pad.attrs.get("T") != add_n.attrs.get("T") or \
            len(pad.inputs) != 2 or pad.source_op is None or \
            len(pad.source_op._inputs) != 2:
        return None
    readers = [(reader, k) for reader, k in consumers.get(id(pad), ()) if k >= 0]
    if readers != [(add_n, position)]:
        return None
    paddings = _const_value(pad.inputs[1][0])
    shape = pad.source_op._inputs[0].shape
    if paddings is None or not shape.is_fully_defined():
        return None
    paddings = np.asarray(paddings)
    dims = shape.as_list()
    if paddings.shape != (len(dims), 2) or paddings.dtype.kind not in "iu" or \
            (paddings < 0).any():
        return None
    return pad.inputs[0], paddings.astype(np.int64), dims


def _tiling(add_n, consumers, protected):
    """([(input edge, start)] in axis order, axis, removed Pads) when `add_n` sums pieces
    that tile one axis of its static output shape; else None."""
    if len(add_n.inputs) < 2 or any(idx != 0 for _, idx in add_n.inputs) or \
            len({id(src) for src, _ in add_n.inputs}) != len(add_n.inputs):
        return None
    out = static_shape(add_n, 0)
    if out is None or not out.is_fully_defined():
        return None
    total = out.as_list()
    pieces = []
    for position, (pad, _) in enumerate(add_n.inputs):
        found = _piece(pad, add_n, position, consumers, protected)
        if found is None or len(found[2]) != len(total):
            return None
        pieces.append(found)
    padded_axes = {int(a) for _, paddings, _ in pieces for a in np.flatnonzero(paddings.any(1))}
    if len(padded_axes) != 1:
        return None
    axis = padded_axes.pop()
    ordered = sorted(((int(p[axis, 0]), edge, p, dims) for edge, p, dims in pieces),
                     key=lambda item: item[0])
    start = 0
    for before, _, paddings, dims in ordered:
        # Each padded piece has the sum's shape; the pieces follow one another.
        if before != start or before + dims[axis] + int(paddings[axis, 1]) != total[axis] or \
                any(dims[k] != total[k] for k in range(len(dims)) if k != axis):
            return None
        start += dims[axis]
    if start != total[axis]:
        return None
    return [edge for _, edge, _, _ in ordered], axis, [pad for pad, _ in add_n.inputs]


def _const(like, suffix: str, value, dtype, names: set):
    return type(like)(node_edges.unique_name(like.name + suffix, names), "Const",
                      {"value": value, "dtype": dtype}, [], [], device=like.device,
                      output_dtypes=[dtype], location=like.location,
                      op_def=get_op_def("Const"))


def merge_padded_sums(nodes, protected: set) -> list:
    """Turns sums of zero-padded pieces tiling one axis into a concatenation (see the module
    docstring)."""
    consumers = node_edges.consumers(nodes)
    names = {n.name for n in nodes}
    before: dict = {}
    removed: set = set()
    for add_n in nodes:
        if add_n.op != "AddN" or add_n.attrs.get("T") not in _TYPES:
            continue
        found = _tiling(add_n, consumers, protected)
        if found is None:
            continue
        edges, axis, pads = found
        dtype = add_n.attrs["T"]
        axis_node = _const(add_n, "/_padded_axis", np.array(axis, np.int32), dtypes.int32,
                           names)
        zero = _const(add_n, "/_padded_zero", np.zeros([], dtype.as_numpy_dtype), dtype, names)
        concat = type(add_n)(node_edges.unique_name(add_n.name + "/_padded_concat", names),
                      "ConcatV2", {"N": len(edges), "T": dtype, "Tidx": dtypes.int32},
                      list(edges) + [(axis_node, 0)], [], device=add_n.device,
                      output_dtypes=[dtype], input_dtypes=[dtype] * len(edges) + [dtypes.int32],
                      location=add_n.location, op_def=get_op_def("ConcatV2"))
        before[id(add_n)] = [axis_node, zero, concat]
        attrs = {"T": dtype}
        if add_n.attrs.get("_class"):
            attrs["_class"] = add_n.attrs["_class"]
        add_n.op, add_n.op_def, add_n.attrs = "AddV2", get_op_def("AddV2"), attrs
        add_n.inputs, add_n.input_dtypes = [(concat, 0), (zero, 0)], [dtype, dtype]
        add_n.source_op = None  # it computes something else now: no static shape to read
        controls = [c for pad in pads for c in pad.control_inputs]
        add_n.control_inputs = list(dict.fromkeys(add_n.control_inputs + controls))
        for pad in pads:
            waits = [src for src, _ in pad.inputs] + pad.control_inputs
            for reader, k in consumers.get(id(pad), ()):
                if k < 0:
                    node_edges.replace_control(reader, pad, waits)
            removed.add(id(pad))
    if not before:
        return list(nodes)
    out = []
    for node in nodes:
        out.extend(before.get(id(node), ()))
        if id(node) not in removed:
            out.append(node)
    return out
