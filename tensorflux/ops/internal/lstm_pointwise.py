"""`_LSTMCellPointwise`: the elementwise part of one `BasicLSTMCell` step as one node.

TF1's `BasicLSTMCell` builds, after its gate product, a `Split` into the i, j, f, o gates and
eleven elementwise nodes:

    forget_input = f + forget_bias          forget_gate = sigmoid(forget_input)
    kept_cell = c * forget_gate             input_gate = sigmoid(i)
    candidate = tanh(j)                     new_cell_input = input_gate * candidate
    new_c = kept_cell + new_cell_input      tanh_c = tanh(new_c)
    output_gate = sigmoid(o)                new_h = tanh_c * output_gate

The remapper (`runtime/remapper.py`, `fuse_lstm_pointwise`) replaces that `Split` and those
nodes with this op, whose ten outputs are the ten values above in that order, so every reader
(the next step, the gradient's SigmoidGrad/TanhGrad/Mul nodes) reads what it read before. The
kernel calls the unfused ops' own kernels (ops/math: Sigmoid's, `np.tanh`, `+`, `*`) on the
same operands (the gates' column blocks, as `np.split` gives them), so the values are the
unfused graph's bit for bit; what goes is eleven nodes' scheduling per step (an unrolled
20-step LSTM runs 220 fewer nodes). With numba, lib/numerics/lstm_jit.py computes the same
values in four passes instead of about twenty (the NumPy kernel here is its reference and
fallback). Users never build it; it has no gradient.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import errors
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.lib.numerics import lstm_jit
from tensorflux.ops.math import unary

__all__ = ["OUTPUTS", "OP_NAME"]

OP_NAME = "_LSTMCellPointwise"
OUTPUTS = ("forget_input", "forget_gate", "kept_cell", "input_gate", "candidate",
           "new_cell_input", "new_c", "tanh_c", "output_gate", "new_h")

LSTMCellPointwise = define_op(
    OP_NAME, inputs=["gates: T", "c: T", "forget_bias: T"],
    outputs=[f"{name}: T" for name in OUTPUTS], attrs=["T: {float32, float64}"],
    differentiable=False)


@LSTMCellPointwise.shape_fn
def _shape(gates, c, forget_bias):
    gates = gates.with_rank(2)
    c = c.with_rank(2)
    forget_bias.with_rank(0)
    units = gates._dim_list[1]
    if units is not None and units % 4:
        raise ValueError(f"{OP_NAME}: the gates' last dimension ({units}) must split into 4")
    state = c.merge_with(TensorShape([gates._dim_list[0],
                                      None if units is None else units // 4]))
    return [state] * len(OUTPUTS)


@LSTMCellPointwise.kernel
def _kernel(gates, c, forget_bias):
    if gates.ndim != 2 or gates.shape[1] % 4 or c.shape != (gates.shape[0], gates.shape[1] // 4):
        raise errors.InvalidArgumentError(
            None, None, f"{OP_NAME}: gates of shape {list(gates.shape)} do not match the cell "
                        f"state of shape {list(c.shape)} (gates must be [batch, 4 * units])")
    if lstm_jit.supports(gates, c):
        return lstm_jit.cell_pointwise(gates, c, forget_bias)
    units = gates.shape[1] // 4
    i, j, f, o = (gates[:, k * units:(k + 1) * units] for k in range(4))
    forget_input = f + forget_bias
    with np.errstate(all="ignore"):  # as the Sigmoid kernel runs
        forget_gate = unary._sigmoid(forget_input)
        input_gate = unary._sigmoid(i)
        output_gate = unary._sigmoid(o)
    kept_cell = c * forget_gate
    candidate = np.tanh(j)
    new_cell_input = input_gate * candidate
    new_c = kept_cell + new_cell_input
    tanh_c = np.tanh(new_c)
    new_h = tanh_c * output_gate
    return (forget_input, forget_gate, kept_cell, input_gate, candidate, new_cell_input, new_c,
            tanh_c, output_gate, new_h)
