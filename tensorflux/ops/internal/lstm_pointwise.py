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

__all__ = ["OUTPUTS", "OP_NAME", "GRAD_OP_NAME"]

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


# -- the backward ---------------------------------------------------------------------------

GRAD_OP_NAME = "_LSTMCellPointwiseGrad"

LSTMCellPointwiseGrad = define_op(
    GRAD_OP_NAME,
    inputs=["dh: T", "dc: T", "c: T", "forget_gate: T", "input_gate: T", "candidate: T",
            "tanh_c: T", "output_gate: T"],
    outputs=["d_gates: T", "d_c: T"], attrs=["T: {float32, float64}", "with_dc: bool"],
    differentiable=False)
# The gradient nodes tf.gradients builds for one cell's
# elementwise part (runtime/lstm_cells.py fuses them), as one node:
#
#     d_tanh_c = dh * output_gate             d_output_gate = tanh_c * dh
#     d_o = SigmoidGrad(output_gate, d_output_gate)
#     d_new_c = TanhGrad(tanh_c, d_tanh_c) [+ dc, the later steps' part, when `with_dc`]
#     d_i = SigmoidGrad(input_gate, d_new_c * candidate)
#     d_j = TanhGrad(candidate, input_gate * d_new_c)
#     d_f = SigmoidGrad(forget_gate, c * d_new_c)
#     d_gates = concat([d_i, d_j, d_f, d_o], 1)        d_c = d_new_c * forget_gate
#
# each operation the unfused node's own (products of two operands commute exactly, and so does
# the two-term AddN), so both outputs are the unfused graph's bit for bit. Without `with_dc` the
# `dc` input is not read.


@LSTMCellPointwiseGrad.shape_fn
def _grad_shape(dh, dc, c, forget_gate, input_gate, candidate, tanh_c, output_gate):
    state = dh.with_rank(2)
    for shape in (c, forget_gate, input_gate, candidate, tanh_c, output_gate):
        state = state.merge_with(shape.with_rank(2))
    units = state._dim_list[1]
    return [TensorShape([state._dim_list[0], None if units is None else 4 * units]), state]


def _sigmoid_grad(y, dy):
    return dy * y * (1 - y)  # SigmoidGrad's kernel (ops/math/unary.py)


def _tanh_grad(y, dy):
    return dy * (1 - y * y)  # TanhGrad's kernel


@LSTMCellPointwiseGrad.kernel
def _grad_kernel(dh, dc, c, forget_gate, input_gate, candidate, tanh_c, output_gate, *,
                 with_dc):
    states = (dh, c, forget_gate, input_gate, candidate, tanh_c, output_gate) + \
        ((dc,) if with_dc else ())
    if dh.ndim != 2 or any(s.shape != dh.shape for s in states):
        raise errors.InvalidArgumentError(
            None, None, f"{GRAD_OP_NAME}: the cell's tensors must have one [batch, units] "
                        f"shape, got {[list(s.shape) for s in states]}")
    if lstm_jit.supports(dh, c):
        return lstm_jit.cell_pointwise_grad(dh, dc if with_dc else None, c, forget_gate,
                                            input_gate, candidate, tanh_c, output_gate)
    with np.errstate(all="ignore"):  # as the unfused kernels run
        d_o = _sigmoid_grad(output_gate, tanh_c * dh)
        d_new_c = _tanh_grad(tanh_c, dh * output_gate)
        if with_dc:
            d_new_c = d_new_c + dc
        d_i = _sigmoid_grad(input_gate, d_new_c * candidate)
        d_j = _tanh_grad(candidate, input_gate * d_new_c)
        d_f = _sigmoid_grad(forget_gate, c * d_new_c)
        d_c = d_new_c * forget_gate
    return np.concatenate([d_i, d_j, d_f, d_o], axis=1), d_c
