"""Remapper rule 6 for moving averages: `AssignSub(avg, Mul(Sub(avg, value), factor))` -- the
update `tf.train.assign_moving_average` (and so `ExponentialMovingAverage.apply`) builds for
each shadow variable -- becomes one `_AssignMovingAverage(avg, value, factor)` node
(ops/internal/moving_average.py): one compiled pass instead of three NumPy passes and two
temporaries, bit-identical, keeping the GIL (below 4M elements).

Matched only when the Sub reads the variable the AssignSub updates (its ref, or an Identity
of it), the Sub and the Mul have no other reader, no control edges and are not fetched, and
the dtype is float32/float64. The AssignSub keeps its name (fetches and control edges to it
are unchanged). Switched with the other remapper rules (RewriterConfig `remapping`) and by
`FUSE_MOVING_AVERAGES`.
"""

from __future__ import annotations

from tensorflux.framework import dtypes
from tensorflux.framework.op_def import OP_DEFS, get_op_def
from tensorflux.runtime import node_edges

__all__ = ["fuse_moving_averages", "FUSE_MOVING_AVERAGES"]

# The rule runs (a switch for the benchmarks and the tests).
FUSE_MOVING_AVERAGES = True

_FUSED = "_AssignMovingAverage"
_TYPES = frozenset({dtypes.float32, dtypes.float64})


def _only_reader(node, reader, consumers, protected) -> bool:
    # NOTE: assign_moving_average colocates its nodes with the variable: the same `_class`.
    return (id(node) not in protected and not node.control_inputs and
            node.attrs.get("_class") == reader.attrs.get("_class") and
            node.device == reader.device and
            len(consumers.get(id(node), ())) == 1 and consumers[id(node)][0][0] is reader)


def _reads_variable(src, variable) -> bool:
    node, port = src
    if node is variable:
        return port == 0
    return (node.op == "Identity" and port == 0 and node.inputs[0] == (variable, 0) and
            not node.control_inputs)


def _match(assign, consumers, protected):
    """(value, factor) of a moving-average update `assign`; else None."""
    dtype = assign.attrs.get("T")
    if assign.op != "AssignSub" or dtype not in _TYPES or len(assign.inputs) != 2:
        return None
    variable, port = assign.inputs[0]
    mul, mul_port = assign.inputs[1]
    if port != 0 or mul_port != 0 or mul.op != "Mul" or mul.attrs.get("T") != dtype or \
            not _only_reader(mul, assign, consumers, protected):
        return None
    for k in (0, 1):
        sub, sub_port = mul.inputs[k]
        if sub.op == "Sub" and sub_port == 0 and sub.attrs.get("T") == dtype and \
                _only_reader(sub, mul, consumers, protected) and \
                _reads_variable(sub.inputs[0], variable):
            return sub, mul, sub.inputs[1], mul.inputs[1 - k]
    return None


def fuse_moving_averages(nodes, protected: set) -> list:
    """The rule of the module docstring; returns the new node list."""
    if not FUSE_MOVING_AVERAGES or _FUSED not in OP_DEFS:
        return list(nodes)
    consumers = node_edges.consumers(nodes)
    removed: set = set()
    op_def = get_op_def(_FUSED)
    for assign in nodes:
        found = _match(assign, consumers, protected)
        if found is None:
            continue
        sub, mul, value, factor = found
        dtype = assign.attrs["T"]
        assign.op, assign.op_def = _FUSED, op_def
        attrs = {"T": dtype, "use_locking": bool(assign.attrs.get("use_locking"))}
        if assign.attrs.get("_class"):
            attrs["_class"] = assign.attrs["_class"]
        assign.attrs = attrs
        assign.inputs = [assign.inputs[0], value, factor]
        assign.input_dtypes = [assign.input_dtypes[0], dtype, dtype]
        removed.update((id(sub), id(mul)))
    if not removed:
        return list(nodes)
    return [n for n in nodes if id(n) not in removed]
