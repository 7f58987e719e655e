"""Gradients of the elementwise binary ops and AddN (defined in math_ops).

Each undoes broadcasting with `unbroadcast`; complex inputs use the conjugate derivative.
"""

from __future__ import annotations

import numpy as np

from tensorflux.ops.math.binary import (
    Add,
    AddN,
    AddV2,
    Atan2,
    Div,
    DivNoNan,
    FloorDiv,
    FloorMod,
    Maximum,
    Minimum,
    Mod,
    Mul,
    Pow,
    RealDiv,
    SquaredDifference,
    Sub,
    TruncateDiv,
    TruncateMod,
)
from tensorflux.ops.math.broadcast_gradient import unbroadcast


def _conj(t):
    if t.dtype.is_complex:
        from tensorflux.ops.math.unary import conj

        return conj(t)
    return t


@AddV2.gradient
def _add_grad(op, grad):
    x, y = op.inputs
    return unbroadcast(grad, x), unbroadcast(grad, y)


Add.gradient(_add_grad)


@Sub.gradient
def _sub_grad(op, grad):
    from tensorflux.ops.math.unary import negative

    x, y = op.inputs
    return unbroadcast(grad, x), unbroadcast(negative(grad), y)


@Mul.gradient
def _mul_grad(op, grad):
    x, y = op.inputs
    return unbroadcast(Mul(grad, _conj(y)), x), unbroadcast(Mul(_conj(x), grad), y)


def _div_grad(op, grad):
    from tensorflux.ops.math.unary import negative

    x, y = op.inputs
    x, y = _conj(x), _conj(y)
    gx = RealDiv(grad, y)
    gy = Mul(grad, RealDiv(RealDiv(negative(x), y), y))
    return unbroadcast(gx, op.inputs[0]), unbroadcast(gy, op.inputs[1])


Div.gradient(_div_grad)
RealDiv.gradient(_div_grad)


def _mod_grad(quotient_op):
    def grad_fn(op, grad):
        from tensorflux.ops.math.unary import negative

        x, y = op.inputs
        gy = Mul(grad, negative(quotient_op(x, y)))
        return unbroadcast(grad, x), unbroadcast(gy, y)

    return grad_fn


FloorMod.gradient(_mod_grad(FloorDiv))
TruncateMod.gradient(_mod_grad(TruncateDiv))
Mod.gradient(_mod_grad(TruncateDiv))


@Pow.gradient
def _pow_grad(op, grad):
    from tensorflux.ops.math.comparison import Equal, greater
    from tensorflux.ops.math.select import where_v2
    from tensorflux.ops.math.unary import log

    x, y = op.inputs
    z = op.outputs[0]
    one = np.ones([], x.dtype.as_numpy_dtype)
    zero = np.zeros([], x.dtype.as_numpy_dtype)
    gx = Mul(grad, Mul(y, Pow(x, Sub(y, one))))
    if x.dtype.is_complex:
        log_x = where_v2(Equal(x, zero), zero, log(x))
    else:
        positive = greater(x, zero)
        log_x = where_v2(positive, log(where_v2(positive, x, one)), zero)
    gy = Mul(grad, Mul(_conj(z), _conj(log_x)))
    return unbroadcast(gx, x), unbroadcast(gy, y)


def _min_max_grad(selector):
    def grad_fn(op, grad):
        from tensorflux.ops.math.select import where_v2

        x, y = op.inputs
        zero = np.zeros([], grad.dtype.as_numpy_dtype)
        x_wins = selector(x, y)
        return (unbroadcast(where_v2(x_wins, grad, zero), x),
                unbroadcast(where_v2(x_wins, zero, grad), y))

    return grad_fn


def _greater_equal(x, y):
    from tensorflux.ops.math.comparison import GreaterEqual

    return GreaterEqual(x, y)


def _less_equal(x, y):
    from tensorflux.ops.math.comparison import LessEqual

    return LessEqual(x, y)


Maximum.gradient(_min_max_grad(_greater_equal))
Minimum.gradient(_min_max_grad(_less_equal))


@SquaredDifference.gradient
def _squared_difference_grad(op, grad):
    from tensorflux.ops.math.unary import negative

    x, y = op.inputs
    two = np.asarray(2, grad.dtype.as_numpy_dtype)
    gx = Mul(Mul(grad, two), Sub(x, y))
    return unbroadcast(gx, x), unbroadcast(negative(gx), y)


@DivNoNan.gradient
def _div_no_nan_grad(op, grad):
    from tensorflux.ops.math.unary import negative

    x, y = op.inputs
    gx = DivNoNan(grad, _conj(y))
    gy = Mul(grad, DivNoNan(DivNoNan(negative(_conj(x)), _conj(y)), _conj(y)))
    return unbroadcast(gx, x), unbroadcast(gy, y)


@Atan2.gradient
def _atan2_grad(op, grad):
    from tensorflux.ops.math.unary import negative

    y, x = op.inputs
    scale = RealDiv(grad, AddV2(Mul(x, x), Mul(y, y)))
    return unbroadcast(Mul(x, scale), y), unbroadcast(Mul(negative(y), scale), x)


@AddN.gradient
def _add_n_grad(op, grad):
    return [grad] * len(op.inputs)
