"""The compiled kernel of `_LSTMCellPointwise` (ops/internal/lstm_pointwise.py).

The unfused cell makes about twenty NumPy passes over `[batch, units]` blocks per step: each
Sigmoid alone is `abs`, `negative`, `exp` and a select (activation_jit.sigmoid), then the
adds and products. Here one loop writes `-|x|` of the three sigmoid gates (the forget gate
after its bias add) into one buffer, NumPy's `exp` runs once over it (the reference's
transcendental, bit for bit), `np.tanh` gives the candidate and the cell's tanh as in the
reference, and one more loop does the selects, products and the sum with the reference's
operations in its order (no fused multiply-add: numba's `fastmath` is off). The ten outputs
are the unfused nodes' values bit for bit.
"""

from __future__ import annotations

import numpy as np

from tensorflux.lib.numerics import jit as jit_mod

__all__ = ["supports", "cell_pointwise", "cell_pointwise_grad"]

SUPPORTED_TYPES = (np.dtype(np.float32), np.dtype(np.float64))


def supports(gates: np.ndarray, c: np.ndarray) -> bool:
    """True when the compiled kernel may run: numba on, one float dtype, 2-D operands."""
    return (gates.dtype in SUPPORTED_TYPES and c.dtype == gates.dtype and gates.ndim == 2 and
            c.ndim == 2 and jit_mod.available())


def cell_pointwise(gates: np.ndarray, c: np.ndarray, forget_bias) -> tuple:
    """The ten values of one BasicLSTMCell step after its gate product (see the module
    docstring), for `supports(gates, c)` operands of shapes `[batch, 4 * units]`, `[batch,
    units]` (checked by the caller)."""
    batch, units = c.shape
    kind = gates.dtype.type
    one = kind(1)
    gates = np.ascontiguousarray(gates)
    c = np.ascontiguousarray(c)
    outs = np.empty((9, batch, units), gates.dtype)  # every output but tanh(j)'s
    negatives = np.empty((3, batch, units), gates.dtype)
    _negative_magnitudes(gates, kind(forget_bias), outs[0], negatives)
    np.exp(negatives, out=negatives)  # NumPy's exp, as the reference Sigmoid's
    candidate = np.tanh(gates[:, units:2 * units])  # the reference's np.tanh on its view
    _gates_and_cell(gates, c, outs[0], negatives, candidate, one, outs)
    tanh_c = np.tanh(outs[5])
    new_h = tanh_c * outs[7]
    forget_input, forget_gate, kept, input_gate, new_input, new_c, _, output_gate, _ = outs
    return (forget_input, forget_gate, kept, input_gate, candidate, new_input, new_c, tanh_c,
            output_gate, new_h)


@jit_mod.jit
def _negative_magnitudes(gates, bias, forget_input, negatives):
    units = forget_input.shape[1]
    for r in range(forget_input.shape[0]):
        for k in range(units):
            i = gates[r, k]
            f = gates[r, 2 * units + k] + bias
            o = gates[r, 3 * units + k]
            forget_input[r, k] = f
            negatives[0, r, k] = -abs(i)
            negatives[1, r, k] = -abs(f)
            negatives[2, r, k] = -abs(o)


@jit_mod.jit
def _gates_and_cell(gates, c, forget_input, exps, candidate, one, outs):
    units = c.shape[1]
    for r in range(c.shape[0]):
        for k in range(units):
            e = exps[0, r, k]
            d = one + e
            input_gate = one / d if gates[r, k] >= 0 else e / d
            e = exps[1, r, k]
            d = one + e
            forget_gate = one / d if forget_input[r, k] >= 0 else e / d
            e = exps[2, r, k]
            d = one + e
            output_gate = one / d if gates[r, 3 * units + k] >= 0 else e / d
            kept = c[r, k] * forget_gate
            new_input = input_gate * candidate[r, k]
            outs[1, r, k] = forget_gate
            outs[2, r, k] = kept
            outs[3, r, k] = input_gate
            outs[4, r, k] = new_input
            outs[5, r, k] = kept + new_input
            outs[7, r, k] = output_gate


def cell_pointwise_grad(dh, dc, c, forget_gate, input_gate, candidate, tanh_c,
                        output_gate) -> tuple:
    """`_LSTMCellPointwiseGrad` (ops/internal/lstm_pointwise.py) in one pass: the gate
    gradients `[batch, 4 * units]` and the previous cell state's gradient, each operation the
    unfused node's own in its order (bit-identical). `dc` is None when the cell state has no
    gradient from later steps; the operands share one `[batch, units]` shape (checked by the
    caller)."""
    batch, units = dh.shape
    one = dh.dtype.type(1)
    d_gates = np.empty((batch, 4 * units), dh.dtype)
    d_c = np.empty((batch, units), dh.dtype)
    operands = [np.ascontiguousarray(a) for a in (
        dh, dh if dc is None else dc, c, forget_gate, input_gate, candidate, tanh_c,
        output_gate)]
    loop = _cell_grad_held if jit_mod.holds_gil(dh.size) else _cell_grad
    loop(*operands, dc is not None, one, d_gates, d_c)
    return d_gates, d_c


@jit_mod.jit
def _cell_grad(dh, dc, c, forget_gate, input_gate, candidate, tanh_c, output_gate, with_dc, one,
               d_gates, d_c):
    units = dh.shape[1]
    for r in range(dh.shape[0]):
        for k in range(units):
            h = dh[r, k]
            og = output_gate[r, k]
            tc = tanh_c[r, k]
            g = tc * h
            d_gates[r, 3 * units + k] = (g * og) * (one - og)
            g = h * og
            d_new_c = g * (one - tc * tc)
            if with_dc:
                d_new_c = d_new_c + dc[r, k]
            ig = input_gate[r, k]
            cand = candidate[r, k]
            fg = forget_gate[r, k]
            g = d_new_c * cand
            d_gates[r, k] = (g * ig) * (one - ig)
            g = ig * d_new_c
            d_gates[r, units + k] = g * (one - cand * cand)
            g = c[r, k] * d_new_c
            d_gates[r, 2 * units + k] = (g * fg) * (one - fg)
            d_c[r, k] = d_new_c * fg


@jit_mod.jit(nogil=False)
def _cell_grad_held(dh, dc, c, forget_gate, input_gate, candidate, tanh_c, output_gate, with_dc,
                    one, d_gates, d_c):
    _cell_grad(dh, dc, c, forget_gate, input_gate, candidate, tanh_c, output_gate, with_dc, one,
               d_gates, d_c)
