"""Elementwise fusion: trees of cwise float ops become one `_FusedElementwise` node.

TF1's XLA auto-clustering (`OptimizerOptions.global_jit_level = ON_1`) compiles clusters of
elementwise ops into one kernel; this rewrite does the same with a fixed interpreter: the
cluster becomes a program of (opcode, operands) over the table of
`lib/numerics/elementwise_program.py`, carried in the fused node's attrs. No code is built from
graph values.

A cluster grows from a root (a fusable node that is not itself absorbed) through its data
inputs: an input node joins when it is fusable, has the root's dtype and requested device,
is read by exactly one data edge (this one; no control edge, not fetched), and has no control
inputs of its own. So every interior result is consumed once, inside the cluster, and the
values the rest of the graph sees are exactly those of the unfused graph. Scalar `Const`
inputs of the cluster's dtype become the program's constants (a Const left unread is
removed). Fusable: the ops of `OPCODES` on float32/float64, stateless, no reference inputs, no
`_class` colocation. Graphs with control-flow ops (conds and loops: frames and dead tensors)
are left alone. The root keeps its name and its control inputs; nothing else changes, so
consumers, fetches and control edges that named the root still do.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes
from tensorflux.framework.op_def import OP_DEFS, get_op_def
from tensorflux.lib.numerics.elementwise_program import OPCODES
from tensorflux.runtime import node_edges
from tensorflux.runtime.partition import CONTROL_FLOW_OPS, topological_order

FUSED_OP = "_FusedElementwise"
_TYPES = frozenset({dtypes.float32, dtypes.float64})


def _fusable(node) -> bool:
    if node.op not in OPCODES or node.attrs.get("T") not in _TYPES or node.op_def.is_stateful:
        return False
    if node.attrs.get("_class") or len(node.output_dtypes) != 1:
        return False
    return not any(dtype.is_ref_dtype for dtype in node.input_dtypes + node.output_dtypes)


def _scalar_constant(node, dtype):
    """The value of a 0-d `Const` of `dtype` with no inputs, else None."""
    if node.op != "Const" or node.inputs or node.control_inputs:
        return None
    value = node.attrs.get("value")
    if node.attrs.get("dtype") != dtype or value is None or np.ndim(value) != 0:
        return None
    return np.asarray(value, dtype=dtype.as_numpy_dtype)


class _Cluster:
    """The program of one cluster, grown from `root` (iteratively: chains may be long)."""

    def __init__(self, root, absorbable):
        self.dtype = root.attrs["T"]
        self.externals: list = []  # (node, output index), deduplicated
        self.constants: list = []
        self.const_nodes: list = []
        self.members: list = []
        self.codes: list = []
        self.refs: list = []  # per instruction, [("in" | "const" | "res", k)]
        result: dict = {}
        stack = [(root, False)]
        while stack:
            node, expanded = stack.pop()
            if not expanded:
                stack.append((node, True))
                self.members.append(node)
                for src, idx in reversed(node.inputs):
                    if idx == 0 and absorbable(src, node, self.dtype):
                        result[id(src)] = None  # claimed: emitted before `node`
                        stack.append((src, False))
                continue
            refs = [self._operand(src, idx, result) for src, idx in node.inputs]
            self.codes.append(OPCODES[node.op][0])
            self.refs.append(refs)
            result[id(node)] = ("res", len(self.codes) - 1)

    def _operand(self, src, idx, result):
        if idx == 0 and result.get(id(src)) is not None:
            return result[id(src)]
        value = _scalar_constant(src, self.dtype)
        if value is not None:
            self.constants.append(value)
            self.const_nodes.append(src)
            return ("const", len(self.constants) - 1)
        key = (src, idx)
        for k, known in enumerate(self.externals):
            if known[0] is src and known[1] == idx:
                return ("in", k)
        self.externals.append(key)
        return ("in", len(self.externals) - 1)

    def operands(self) -> list:
        n_in, n_const = len(self.externals), len(self.constants)
        base = {"in": 0, "const": n_in, "res": n_in + n_const}
        flat = []
        for refs in self.refs:
            numbers = [base[kind] + k for kind, k in refs]
            flat.extend(numbers if len(numbers) == 2 else numbers + [-1])
        return flat


def fuse_elementwise(nodes, protected: set) -> list:
    """Replaces clusters of two or more fusable nodes by `_FusedElementwise` nodes (see the
    module docstring); returns the new node list.

    Args:
        nodes: the step's runtime Nodes (rewired in place).
        protected: ids of fetched Nodes (never absorbed; a fetched root stays, fused).

    Returns:
        The node list without the absorbed nodes and the Consts nothing reads any more.
    """
    if FUSED_OP not in OP_DEFS or any(n.op in CONTROL_FLOW_OPS for n in nodes):
        return list(nodes)
    consumers = node_edges.consumers(nodes)

    def absorbable(src, reader, dtype) -> bool:
        users = consumers.get(id(src), ())
        return _fusable(src) and len(users) == 1 and users[0][0] is reader and \
            id(src) not in protected and not src.control_inputs and \
            src.attrs.get("T") == dtype and src.device == reader.device

    removed: set = set()
    const_candidates: dict = {}
    fused_def = get_op_def(FUSED_OP)
    for root in reversed(topological_order(nodes)):
        if id(root) in removed or not _fusable(root):
            continue
        cluster = _Cluster(root, absorbable)
        if len(cluster.members) < 2:
            continue
        dtype = cluster.dtype
        root.op, root.op_def = FUSED_OP, fused_def
        root.attrs = {"T": dtype, "N": len(cluster.externals), "opcodes": cluster.codes,
                      "operands": cluster.operands(),
                      "constants": np.array(cluster.constants, dtype=dtype.as_numpy_dtype)}
        root.inputs = list(cluster.externals)
        root.input_dtypes = [src.output_dtypes[idx] for src, idx in cluster.externals]
        removed.update(id(m) for m in cluster.members if m is not root)
        for const in cluster.const_nodes:
            const_candidates[id(const)] = const
    if not removed:
        return list(nodes)
    kept = [n for n in nodes if id(n) not in removed]
    readers = node_edges.consumers(kept)
    unread = {key for key, const in const_candidates.items()
              if key not in protected and not readers.get(key)}
    return [n for n in kept if id(n) not in unread]


__all__ = ["fuse_elementwise", "FUSED_OP"]
