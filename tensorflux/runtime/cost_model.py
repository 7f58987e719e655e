"""The placer's cost model: how long a node runs on a device, how long an edge takes to cross.

As in the whitepaper (§3.2.1), costs are either *estimated* from the op type and the sizes of
the tensors involved, or *measured* on earlier steps (`CostModel.record(step_stats)`); a
measurement, when there is one, wins. Estimates are in microseconds:

- every op pays `op_overhead_us` (the executor's per-op cost);
- dense linear algebra (MatMul, BatchMatMul, Conv2D and its gradients) is compute bound:
  its flop count (2·M·N·K, or 2 · output elements · filter size) over `flops_per_us`;
- everything else is memory bound: bytes read plus bytes written over `bytes_per_us`;
- ops that only move metadata or control (Const, Identity, Reshape, Shape, control flow,
  NoOp) cost the overhead only.

A transfer costs `transfer_latency_us` (a `_Send`/`_Recv` pair: rendezvous and an
asynchronous completion) plus its bytes over `transfer_bytes_per_us`. Static shapes come from
the client graph; an unknown dimension counts as `unknown_dim`, an unknown rank as
`unknown_rank_elements` elements.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

_FREE_OPS = frozenset({
    "Const", "Identity", "RefIdentity", "Snapshot", "StopGradient", "PreventGradient",
    "NoOp", "Reshape", "Shape", "ShapeN", "Size", "Rank", "ExpandDims", "Squeeze",
    "Placeholder", "PlaceholderV2", "PlaceholderWithDefault", "_Arg", "_Send", "_Recv",
    "Switch", "RefSwitch", "Merge", "RefMerge", "Enter", "RefEnter", "Exit", "RefExit",
    "NextIteration", "RefNextIteration", "LoopCond", "ControlTrigger", "VariableV2",
    "Variable", "VarHandleOp", "ReadVariableOp", "IdentityN",
})
_MATMUL_OPS = frozenset({"MatMul", "BatchMatMul", "BatchMatMulV2", "BatchMatMulV3"})
_CONV_OPS = frozenset({"Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter",
                       "DepthwiseConv2dNative", "DepthwiseConv2dNativeBackpropInput",
                       "DepthwiseConv2dNativeBackpropFilter", "Conv3D"})


@dataclass(frozen=True)
class CostParams:
    """The constants of the estimates (microseconds, bytes)."""

    op_overhead_us: float = 2.0
    flops_per_us: float = 4_000.0
    bytes_per_us: float = 4_000.0
    transfer_latency_us: float = 40.0
    transfer_bytes_per_us: float = 4_000.0
    unknown_dim: int = 32
    unknown_rank_elements: int = 1024


class CostModel:
    """Estimated and measured costs of runtime Nodes (see the module docstring).

    Thread-safe: `record` may run while a session plans another signature.

    Example:
        >>> model = CostModel()
        >>> model.compute_micros(node)        # estimate from op type and shapes
        >>> model.record(run_metadata.step_stats)
        >>> model.compute_micros(node)        # now the measured time of `node.name`
    """

    def __init__(self, params: CostParams | None = None, smoothing: float = 0.5):
        self.params = params or CostParams()
        self.smoothing = smoothing
        self._lock = threading.Lock()
        self._measured: dict[str, float] = {}

    # -- sizes -----------------------------------------------------------------------------

    def output_shape(self, node, index: int) -> list | None:
        """The static shape of output `index` as a list (None dims allowed), or None."""
        op = node.source_op
        if op is None or node.op == "_Arg" or index >= len(op._outputs):
            return None
        shape = op._outputs[index].shape
        return None if shape.ndims is None else shape.as_list()

    def output_elements(self, node, index: int) -> int:
        shape = self.output_shape(node, index)
        if shape is None:
            return self.params.unknown_rank_elements
        dims = [self.params.unknown_dim if d is None else d for d in shape]
        return int(np.prod(dims, dtype=np.int64)) if dims else 1

    def output_bytes(self, node, index: int) -> int:
        dtype = node.output_dtypes[index] if index < len(node.output_dtypes) else None
        size = _itemsize(dtype)
        return self.output_elements(node, index) * size

    # -- costs -----------------------------------------------------------------------------

    def compute_micros(self, node) -> float:
        """Measured time of `node.name` if recorded, else the estimate."""
        measured = self._measured.get(node.name)
        if measured is not None:
            return measured
        return self.estimate_micros(node)

    def estimate_micros(self, node) -> float:
        params = self.params
        op = node.op
        if op in _FREE_OPS:
            return params.op_overhead_us
        if op in _MATMUL_OPS:
            return params.op_overhead_us + self._matmul_flops(node) / params.flops_per_us
        if op in _CONV_OPS:
            return params.op_overhead_us + self._conv_flops(node) / params.flops_per_us
        moved = sum(self.output_bytes(src, idx) for src, idx in node.inputs)
        moved += sum(self.output_bytes(node, k) for k in range(len(node.output_dtypes)))
        return params.op_overhead_us + moved / params.bytes_per_us

    def transfer_micros(self, node, index: int) -> float:
        """Cost of sending output `index` of `node` to another device."""
        params = self.params
        return params.transfer_latency_us + \
            self.output_bytes(node, index) / params.transfer_bytes_per_us

    def control_transfer_micros(self) -> float:
        return self.params.transfer_latency_us

    def _matmul_flops(self, node) -> float:
        out = self.output_elements(node, 0)
        inner = None
        for position, (src, idx) in enumerate(node.inputs[:2]):
            shape = self.output_shape(src, idx)
            if inner is not None or shape is None or len(shape) < 2:
                continue
            if position == 0:
                flipped = node.attrs.get("transpose_a", False) or node.attrs.get("adj_x", False)
                inner = shape[-2] if flipped else shape[-1]
            else:
                flipped = node.attrs.get("transpose_b", False) or node.attrs.get("adj_y", False)
                inner = shape[-1] if flipped else shape[-2]
        return 2.0 * out * (self.params.unknown_dim if inner is None else inner)

    def _conv_flops(self, node) -> float:
        largest = max([self.output_elements(node, 0)] +
                      [self.output_elements(src, idx) for src, idx in node.inputs[:1]])
        window = 1
        if len(node.inputs) > 1:
            src, idx = node.inputs[1]
            shape = self.output_shape(src, idx)
            if shape is not None and len(shape) >= 3:
                dims = [self.params.unknown_dim if d is None else d for d in shape[:-1]]
                window = int(np.prod(dims))
        return 2.0 * largest * window

    # -- measurements ----------------------------------------------------------------------

    def record(self, step_stats) -> None:
        """Folds a traced step's per-node times (a `StepStats`) into the measurements."""
        with self._lock:
            for dev_stats in step_stats.dev_stats:
                for stats in dev_stats.node_stats:
                    if stats.node_name.startswith("_") or ("/_" in stats.node_name):
                        continue
                    micros = float(stats.op_end_rel_micros - stats.op_start_rel_micros)
                    if stats.op_end_rel_nanos:
                        micros = (stats.op_end_rel_nanos - stats.op_start_rel_nanos) / 1000.0
                    old = self._measured.get(stats.node_name)
                    self._measured[stats.node_name] = micros if old is None else \
                        self.smoothing * old + (1.0 - self.smoothing) * micros

    def measured(self) -> dict:
        """{node name: measured microseconds} recorded so far."""
        with self._lock:
            return dict(self._measured)


def _itemsize(dtype) -> int:
    if dtype is None:
        return 4
    try:
        np_dtype = np.dtype(dtype.base_dtype.as_numpy_dtype)
    except TypeError:
        return 8
    return 8 if np_dtype == np.object_ else max(1, np_dtype.itemsize)


__all__ = ["CostModel", "CostParams"]
