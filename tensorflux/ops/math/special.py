"""Special-function ops: Igamma, Igammac, IgammaGradA, Betainc, Zeta, Polygamma, BesselI0,
BesselI0e, BesselI1, BesselI1e, Xlog1py, NextAfter, and the composite erfcinv.

Kernels compute in float64 (special_functions) and cast back to the input dtype. Gradients
follow TF: with respect to x everywhere; with respect to `a` only for Igamma/Igammac (through
IgammaGradA); Betainc's a and b, Zeta's x and Polygamma's order get no gradient (None).

`__all__` holds the names TF1 exports at the root; `MATH_ONLY` the ones only under `tf.math`.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework.common_shapes import broadcast_shape
from tensorflux.framework.op_def import define_op
from tensorflux.framework.scopes import op_name_scope as _scope
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.lib.numerics import special_functions
from tensorflux.ops import math as math_ops
from tensorflux.ops.math import comparison as comparison_ops
from tensorflux.ops.math import nan_safe as extra_math_ops
from tensorflux.ops.math import select as select_ops
from tensorflux.ops.math import unary as unary_ops
from tensorflux.ops.math.broadcast_gradient import unbroadcast

__all__ = ["igamma", "igammac", "betainc", "zeta", "polygamma"]
MATH_ONLY = ["bessel_i0", "bessel_i0e", "bessel_i1", "bessel_i1e", "xlog1py", "erfcinv",
             "nextafter"]

_HALF_FLOAT = "{bfloat16, float16, float32, float64}"
_FLOAT = "{float32, float64}"



def _float64_kernel(fn, name):
    def kernel(*args):
        out = fn(*args)
        return np.asarray(out).astype(args[-1].dtype, copy=False)

    kernel.__name__ = f"_{name.lower()}_kernel"
    return kernel


def _define(name, fn, inputs, types, differentiable=True):
    op = define_op(name, inputs=[f"{i}: T" for i in inputs], outputs=["z: T"],
                   attrs=[f"T: {types}"], differentiable=differentiable)
    if len(inputs) == 2:
        op.shape_fn(broadcast_shape)
    else:
        op.shape_fn(lambda a, b, x: broadcast_shape(broadcast_shape(a, b), x))
    op.kernel(_float64_kernel(fn, name))
    return op


Igamma = _define("Igamma", special_functions.igamma, ["a", "x"], _HALF_FLOAT)
Igammac = _define("Igammac", special_functions.igammac, ["a", "x"], _HALF_FLOAT)
IgammaGradA = _define("IgammaGradA", special_functions.igamma_grad_a, ["a", "x"], _FLOAT,
                      differentiable=False)
Betainc = _define("Betainc", special_functions.betainc, ["a", "b", "x"], _FLOAT)
Zeta = _define("Zeta", special_functions.zeta, ["x", "q"], _FLOAT)
Polygamma = _define("Polygamma", special_functions.polygamma, ["a", "x"], _FLOAT)


def _bessel(name, fn):
    op = define_op(name, inputs=["x: T"], outputs=["y: T"], attrs=[f"T: {_HALF_FLOAT}"])
    op.shape_fn(lambda x: x)
    op.kernel(_float64_kernel(fn, name))
    return op


BesselI0 = _bessel("BesselI0", special_functions.bessel_i0)
BesselI0e = _bessel("BesselI0e", special_functions.bessel_i0e)
BesselI1 = _bessel("BesselI1", special_functions.bessel_i1)
BesselI1e = _bessel("BesselI1e", special_functions.bessel_i1e)

Xlog1py = define_op("Xlog1py", inputs=["x: T", "y: T"], outputs=["z: T"],
                    attrs=["T: {float16, bfloat16, float32, float64, complex64, complex128}"])
Xlog1py.shape_fn(broadcast_shape)


@Xlog1py.kernel
def _xlog1py_kernel(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        z = x * np.log1p(y)
    return np.where(x == 0, np.zeros([], z.dtype), z).astype(x.dtype, copy=False)


NextAfter = define_op("NextAfter", inputs=["x1: T", "x2: T"], outputs=["output: T"],
                      attrs=["T: {float64, float32} = float32"], differentiable=False)
NextAfter.shape_fn(broadcast_shape)


@NextAfter.kernel
def _next_after_kernel(x1, x2):
    return np.nextafter(x1, x2)


# -- gradients --------------------------------------------------------------------------------

def _const(value, t):
    return np.asarray(value, t.dtype.base_dtype.as_numpy_dtype)


def _mul(a, b):
    return math_ops.multiply(a, b)


_where = select_ops.where_v2


def _gamma_density(a, x):
    """x^(a-1) exp(-x) / Gamma(a): d P(a, x) / dx."""
    log_density = math_ops.subtract(
        math_ops.add(unary_ops.negative(x),
                     extra_math_ops.xlogy(math_ops.subtract(a, _const(1, a)), x)),
        unary_ops.lgamma(a))
    return unary_ops.exp(log_density)


@Igamma.gradient
def _igamma_grad(op, grad):
    a, x = op.inputs
    return (unbroadcast(_mul(grad, IgammaGradA(a, x)), a),
            unbroadcast(_mul(grad, _gamma_density(a, x)), x))


@Igammac.gradient
def _igammac_grad(op, grad):
    a, x = op.inputs
    return (unbroadcast(_mul(grad, unary_ops.negative(IgammaGradA(a, x))), a),
            unbroadcast(_mul(grad, unary_ops.negative(_gamma_density(a, x))), x))


@Betainc.gradient
def _betainc_grad(op, grad):
    a, b, x = op.inputs
    one = _const(1, x)
    log_beta = math_ops.subtract(math_ops.add(unary_ops.lgamma(a), unary_ops.lgamma(b)),
                                 unary_ops.lgamma(math_ops.add(a, b)))
    log_density = math_ops.subtract(
        math_ops.add(Xlog1py(math_ops.subtract(b, one), unary_ops.negative(x)),
                     extra_math_ops.xlogy(math_ops.subtract(a, one), x)), log_beta)
    return None, None, unbroadcast(_mul(grad, unary_ops.exp(log_density)), x)


@Zeta.gradient
def _zeta_grad(op, grad):
    x, q = op.inputs
    partial = _mul(unary_ops.negative(x), Zeta(math_ops.add(x, _const(1, x)), q))
    return None, unbroadcast(_mul(grad, partial), q)


@Polygamma.gradient
def _polygamma_grad(op, grad):
    a, x = op.inputs
    return None, unbroadcast(_mul(grad, Polygamma(math_ops.add(a, _const(1, a)), x)), x)


@BesselI0.gradient
def _bessel_i0_grad(op, grad):
    return _mul(grad, BesselI1(op.inputs[0]))


@BesselI0e.gradient
def _bessel_i0e_grad(op, grad):
    x, y = op.inputs[0], op.outputs[0]
    return _mul(grad, math_ops.subtract(BesselI1e(x), _mul(unary_ops.sign(x), y)))


def _safe_ratio(y, x):
    """y / x, and 0.5 where x == 0 (the limit of I1(x)/x and of the I1e correction)."""
    zero = comparison_ops.equal(x, _const(0, x))
    return zero, math_ops.truediv(y, _where(zero, _const(1, x), x))


@BesselI1.gradient
def _bessel_i1_grad(op, grad):
    x, y = op.inputs[0], op.outputs[0]
    zero, ratio = _safe_ratio(y, x)
    partial = _where(zero, _const(0.5, x), math_ops.subtract(BesselI0(x), ratio))
    return _mul(grad, partial)


@BesselI1e.gradient
def _bessel_i1e_grad(op, grad):
    x, y = op.inputs[0], op.outputs[0]
    zero, ratio = _safe_ratio(y, x)
    partial = math_ops.subtract(math_ops.subtract(BesselI0e(x), _mul(unary_ops.sign(x), y)),
                                ratio)
    return _mul(grad, _where(zero, _const(0.5, x), partial))


@Xlog1py.gradient
def _xlog1py_grad(op, grad):
    x, y = op.inputs
    if x.dtype.is_complex:
        x, y = unary_ops.conj(x), unary_ops.conj(y)
    nonzero = math_ops.cast(comparison_ops.not_equal(x, _const(0, x)), x.dtype.base_dtype)
    gx = _mul(grad, Xlog1py(nonzero, y))
    gy = _mul(grad, extra_math_ops.xdivy(x, math_ops.add(y, _const(1, y))))
    return unbroadcast(gx, op.inputs[0]), unbroadcast(gy, op.inputs[1])


# -- wrappers ---------------------------------------------------------------------------------

def _binary(op, x, y, name, x_name, y_name, scope=None):
    """Calls `op` named `name` (default its type), inside name scope `scope` when given."""
    if scope is not None:
        with _scope(None, scope):
            return _binary(op, x, y, name, x_name, y_name)
    x = convert_to_tensor(x, name=x_name)
    y = convert_to_tensor(y, name=y_name, preferred_dtype=x.dtype.base_dtype)
    return op(x, y, name=name)


def igamma(a, x, name=None):
    """The regularized lower incomplete gamma function P(a, x) = gamma(a, x) / Gamma(a).

    Args:
        a: positive float tensor (NaN results where a <= 0).
        x: non-negative float tensor of the same dtype, broadcast against `a`.
        name: optional name (default "Igamma").

    Example:
        >>> tf.igamma(1.0, 2.0)   # -> 1 - exp(-2) = 0.8646647
    """
    return _binary(Igamma, a, x, name, "a", "x")


def igammac(a, x, name=None):
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    return _binary(Igammac, a, x, name, "a", "x")


def betainc(a, b, x, name=None):
    """The regularized incomplete beta function I_x(a, b) (x in [0, 1], a, b > 0).

    Example:
        >>> tf.betainc(2.0, 1.0, 0.5)   # -> 0.25
    """
    a = convert_to_tensor(a, name="a")
    b = convert_to_tensor(b, name="b", preferred_dtype=a.dtype.base_dtype)
    x = convert_to_tensor(x, name="x", preferred_dtype=a.dtype.base_dtype)
    return Betainc(a, b, x, name=name)


def zeta(x, q, name=None):
    """The Hurwitz zeta function sum_k (k + q)^(-x) (inf at x = 1, NaN for x < 1).

    Example:
        >>> tf.zeta(2.0, 1.0)   # -> pi^2 / 6
    """
    return _binary(Zeta, x, q, name, "x", "q")


def polygamma(a, x, name=None):
    """The a-th derivative of digamma at x (a a non-negative integer-valued float).

    Example:
        >>> tf.polygamma(1.0, 1.0)   # -> pi^2 / 6
    """
    return _binary(Polygamma, a, x, name, "a", "x")


def _unary(op, default, x, name):
    with _scope(name, default):
        return op(convert_to_tensor(x, name="x"))


def bessel_i0(x, name=None):
    """The modified Bessel function of the first kind of order 0."""
    return _unary(BesselI0, "bessel_i0", x, name)


def bessel_i0e(x, name=None):
    """exp(-|x|) I0(x), which does not overflow."""
    return _unary(BesselI0e, "bessel_i0e", x, name)


def bessel_i1(x, name=None):
    """The modified Bessel function of the first kind of order 1."""
    return _unary(BesselI1, "bessel_i1", x, name)


def bessel_i1e(x, name=None):
    """exp(-|x|) I1(x), which does not overflow."""
    return _unary(BesselI1e, "bessel_i1e", x, name)


def xlog1py(x, y, name=None):
    """x * log1p(y), and 0 wherever x == 0.

    Example:
        >>> tf.math.xlog1py([0.0, 2.0], [-1.0, 1.0])   # -> [0.0, 2 log 2]
    """
    return _binary(Xlog1py, x, y, None, "x", "y", scope=name or "xlog1py")


def erfcinv(x, name=None):
    """The inverse of erfc on [0, 2]: -ndtri(x / 2) / sqrt(2)."""
    with _scope(name, "erfcinv"):
        x = convert_to_tensor(x, name="x")
        quantile = extra_math_ops.ndtri(_mul(x, _const(0.5, x)))
        return _mul(unary_ops.negative(quantile), _const(np.sqrt(0.5), x))


def nextafter(x1, x2, name=None):
    """The next representable value after x1 in the direction of x2 (elementwise)."""
    return _binary(NextAfter, x1, x2, name, "x1", "x2")
