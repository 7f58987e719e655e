"""Elementwise unary math: Neg, Abs, Sqrt, Exp, Log, trig, Sigmoid, Erf, Lgamma, rounding,
IsNan, the complex helpers (Real, Imag, Conj, ComplexAbs, Complex, Angle), and the fused
gradient ops TF graphs use (SqrtGrad, RsqrtGrad, ReciprocalGrad, TanhGrad, SigmoidGrad).

Outputs keep the input dtype (float16 stays float16); erf/lgamma/digamma compute in float64
(see lib/numerics/erf_gamma.py) and cast back. Gradients conjugate the derivative for complex
inputs.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.common_shapes import broadcast_shape
from tensorflux.framework.op_def import define_op
from tensorflux.framework.sparse_tensor import SparseTensor
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.lib.numerics import activation_jit, erf_gamma
from tensorflux.ops.array import constants as constant_ops
from tensorflux.ops.math import binary as binary_ops
from tensorflux.ops.math import special as special_ops
from tensorflux.ops.math.broadcast_gradient import unbroadcast
from tensorflux.ops.math.comparison import Less
from tensorflux.ops.math.select import where_v2

__all__ = ["negative", "abs", "sign", "square", "sqrt", "rsqrt", "reciprocal", "exp", "expm1",
           "log", "log1p", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh",
           "asinh", "acosh", "atanh",
           "sigmoid", "erf", "erfc", "lgamma", "digamma", "round", "floor", "ceil", "rint",
           "is_nan", "is_inf", "is_finite", "conj", "real", "imag", "angle", "complex",
           "log_sigmoid"]

_FLOAT = "{floattype}"
_FLOAT_COMPLEX = "{floattype, complex64, complex128}"
_SIGNED = "{floattype, int8, int16, int32, int64, complex64, complex128}"


def _unary(name, fn, types=_FLOAT_COMPLEX, differentiable=True, out="T", errstate=False):
    op = define_op(name, inputs=["x: T"], outputs=[f"y: {out}"], attrs=[f"T: {types}"],
                   differentiable=differentiable)
    op.shape_fn(lambda x: x)
    if fn is not None:
        if errstate:
            def kernel(x):
                with np.errstate(all="ignore"):
                    return fn(x)

            kernel.__name__ = f"_{name.lower()}_kernel"
            op.kernel(kernel)
        else:
            op.kernel(fn)
    return op


def _float64_kernel(fn):
    def kernel(x):
        return fn(x).astype(x.dtype, copy=False)

    return kernel


def _sigmoid(x):
    if activation_jit.supports_float(x):
        return activation_jit.sigmoid(x)  # bit-identical to the reference
    return sigmoid_reference(x)


def sigmoid_reference(x):
    """Sigmoid's NumPy kernel: the reference of (and fallback for) the compiled one."""
    if np.iscomplexobj(x):
        return 1 / (1 + np.exp(-x))
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)


def _sign(x):
    if np.iscomplexobj(x):
        magnitude = np.abs(x)
        return np.where(magnitude == 0, 0, x / np.where(magnitude == 0, 1, magnitude)).astype(
            x.dtype, copy=False)
    return np.sign(x)


def _reciprocal_factory(T):
    if T.is_integer:
        def int_reciprocal(x):
            if not np.all(x):
                raise errors.InvalidArgumentError(None, None, "Integer division by zero")
            return _truncating_one_over(x)

        return int_reciprocal

    def reciprocal(x):
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.reciprocal(x)

    return reciprocal


def _truncating_one_over(x):
    return np.where(np.abs(x) == 1, x, np.zeros([], x.dtype)).astype(x.dtype, copy=False)


Neg = _unary("Neg", np.negative, _SIGNED)
Abs = _unary("Abs", np.abs, "{floattype, int8, int16, int32, int64}")
Sign = _unary("Sign", _sign, _SIGNED)
Square = _unary("Square", np.square, "{numbertype}")
Sqrt = _unary("Sqrt", np.sqrt, errstate=True)
Rsqrt = _unary("Rsqrt", lambda x: 1 / np.sqrt(x), errstate=True)
Reciprocal = _unary("Reciprocal", None, _SIGNED)
Reciprocal.kernel(_reciprocal_factory, factory=True)
Inv = _unary("Inv", None, _SIGNED)
Inv.kernel(_reciprocal_factory, factory=True)
Exp = _unary("Exp", np.exp, errstate=True)
Expm1 = _unary("Expm1", np.expm1, errstate=True)
Log = _unary("Log", np.log, errstate=True)
Log1p = _unary("Log1p", np.log1p, errstate=True)
Sin = _unary("Sin", np.sin, errstate=True)
Cos = _unary("Cos", np.cos, errstate=True)
Tan = _unary("Tan", np.tan, errstate=True)
Asin = _unary("Asin", np.arcsin, errstate=True)
Acos = _unary("Acos", np.arccos, errstate=True)
Atan = _unary("Atan", np.arctan)
Sinh = _unary("Sinh", np.sinh, errstate=True)
Cosh = _unary("Cosh", np.cosh, errstate=True)
Tanh = _unary("Tanh", np.tanh)
Asinh = _unary("Asinh", np.arcsinh, errstate=True)
Acosh = _unary("Acosh", np.arccosh, errstate=True)
Atanh = _unary("Atanh", np.arctanh, errstate=True)
Sigmoid = _unary("Sigmoid", _sigmoid, errstate=True)
Erf = _unary("Erf", _float64_kernel(erf_gamma.erf), _FLOAT)
Erfc = _unary("Erfc", _float64_kernel(erf_gamma.erfc), _FLOAT)
Lgamma = _unary("Lgamma", _float64_kernel(erf_gamma.lgamma), _FLOAT)
Digamma = _unary("Digamma", _float64_kernel(erf_gamma.digamma), _FLOAT)
Round = _unary("Round", np.round, _SIGNED, differentiable=False)
Floor = _unary("Floor", np.floor, _FLOAT, differentiable=False)
Ceil = _unary("Ceil", np.ceil, _FLOAT, differentiable=False)
Rint = _unary("Rint", np.rint, _FLOAT, differentiable=False)
IsNan = _unary("IsNan", np.isnan, _FLOAT, differentiable=False, out="bool")
IsInf = _unary("IsInf", np.isinf, _FLOAT, differentiable=False, out="bool")
IsFinite = _unary("IsFinite", np.isfinite, _FLOAT, differentiable=False, out="bool")


# -- complex helpers --------------------------------------------------------------------------

def _complex_part(name, fn, input_name="input", output_name="output"):
    op = define_op(name, inputs=[f"{input_name}: T"], outputs=[f"{output_name}: Tout"],
                   attrs=["T: {complex64, complex128} = complex64",
                          "Tout: {float32, float64} = float32"])
    op.shape_fn(lambda x: x)

    @op.kernel(factory=True)
    def _factory(Tout):
        out = Tout.as_numpy_dtype

        def kernel(x):
            return np.asarray(fn(x)).astype(out, copy=False)

        return kernel

    return op


Real = _complex_part("Real", np.real)
Imag = _complex_part("Imag", np.imag)
Angle = _complex_part("Angle", np.angle)
ComplexAbs = _complex_part("ComplexAbs", np.abs, "x", "y")
Conj = define_op("Conj", inputs=["input: T"], outputs=["output: T"],
                 attrs=["T: {complex64, complex128, variant} = complex64"])
Conj.shape_fn(lambda input: input)
Conj.kernel(np.conj)

Complex = define_op("Complex", inputs=["real: T", "imag: T"], outputs=["out: Tout"],
                    attrs=["T: {float32, float64} = float32",
                           "Tout: {complex64, complex128} = complex64"])
Complex.shape_fn(broadcast_shape)


@Complex.kernel(factory=True)
def _complex_factory(Tout):
    out = Tout.as_numpy_dtype

    def complex_kernel(real, imag):
        result = np.empty(np.broadcast_shapes(np.shape(real), np.shape(imag)), out)
        result.real = real
        result.imag = imag
        return result

    return complex_kernel


# -- fused gradient ops (y is the forward output, dy the incoming gradient) -------------------

def _grad_op(name, fn, compiled=None):
    """A gradient op `fn(y, dy)`; `compiled(y, dy)` (bit-identical) runs instead on float
    operands of one shape when numba is on."""
    op = define_op(name, inputs=["y: T", "dy: T"], outputs=["z: T"],
                   attrs=[f"T: {_FLOAT_COMPLEX}"])
    op.shape_fn(broadcast_shape)

    def kernel(y, dy):
        if compiled is not None and activation_jit.supports(dy, y):
            return compiled(y, dy)
        with np.errstate(all="ignore"):
            return fn(np.conj(y) if np.iscomplexobj(y) else y, dy)

    kernel.__name__ = f"_{name.lower()}_kernel"
    op.kernel(kernel)
    return op


SqrtGrad = _grad_op("SqrtGrad", lambda y, dy: 0.5 * dy / y)
# (dy * y) * (y * y), not dy * y**3: y**3 overflows float16 for x < 6e-4 where the product
# is representable.
RsqrtGrad = _grad_op("RsqrtGrad", lambda y, dy: -0.5 * (dy * y) * (y * y))
ReciprocalGrad = _grad_op("ReciprocalGrad", lambda y, dy: -dy * y * y)
InvGrad = _grad_op("InvGrad", lambda y, dy: -dy * y * y)
TanhGrad = _grad_op("TanhGrad", lambda y, dy: dy * (1 - y * y), activation_jit.tanh_grad)
SigmoidGrad = _grad_op("SigmoidGrad", lambda y, dy: dy * y * (1 - y),
                       activation_jit.sigmoid_grad)


# -- gradients --------------------------------------------------------------------------------

def _c(t):
    """conj(t) for complex tensors, t otherwise."""
    return Conj(t) if t.dtype.is_complex else t


def _const(value, like):
    return np.asarray(value, like.dtype.as_numpy_dtype)


def _mul(a, b):
    return binary_ops.Mul(a, b)


def _chain(derivative):
    """Gradient `grad * conj(derivative(op))`."""

    def grad_fn(op, grad):
        return _mul(grad, _c(derivative(op.inputs[0], op.outputs[0])))

    return grad_fn


Neg.gradient(lambda op, grad: Neg(grad))
Abs.gradient(_chain(lambda x, y: Sign(x)))
Exp.gradient(_chain(lambda x, y: y))
Expm1.gradient(_chain(lambda x, y: Exp(x)))
Log.gradient(_chain(lambda x, y: Reciprocal(x)))
Sin.gradient(_chain(lambda x, y: Cos(x)))
Cos.gradient(_chain(lambda x, y: Neg(Sin(x))))
Tan.gradient(_chain(lambda x, y: Square(Reciprocal(Cos(x)))))
Sinh.gradient(_chain(lambda x, y: Cosh(x)))
Cosh.gradient(_chain(lambda x, y: Sinh(x)))
Lgamma.gradient(_chain(lambda x, y: Digamma(x)))
Digamma.gradient(_chain(lambda x, y: special_ops.Polygamma(_const(1, x), x)))
Asinh.gradient(_chain(lambda x, y: Reciprocal(Cosh(y))))
Acosh.gradient(_chain(lambda x, y: Reciprocal(Sinh(y))))


@Sign.gradient
def _sign_grad(op, grad):
    return binary_ops.Mul(grad, _const(0, grad))


@Square.gradient
def _square_grad(op, grad):
    x = op.inputs[0]
    return binary_ops.Mul(grad, binary_ops.Mul(_const(2, x), _c(x)))


@Log1p.gradient
def _log1p_grad(op, grad):
    x = op.inputs[0]
    return _mul(grad, Reciprocal(_c(binary_ops.AddV2(x, _const(1, x)))))


def _one_minus_square(x):
    return binary_ops.Sub(_const(1, x), Square(x))


Asin.gradient(_chain(lambda x, y: Rsqrt(_one_minus_square(x))))
Acos.gradient(_chain(lambda x, y: Neg(Rsqrt(_one_minus_square(x)))))


@Atanh.gradient
def _atanh_grad(op, grad):
    x = op.inputs[0]
    return _mul(grad, Reciprocal(_c(_one_minus_square(x))))


@Atan.gradient
def _atan_grad(op, grad):
    x = op.inputs[0]
    return _mul(grad, Reciprocal(_c(binary_ops.AddV2(_const(1, x), Square(x)))))


@Erf.gradient
def _erf_grad(op, grad):
    x = op.inputs[0]
    return _mul(grad, _mul(_const(2 / np.sqrt(np.pi), x), Exp(Neg(Square(x)))))


@Erfc.gradient
def _erfc_grad(op, grad):
    x = op.inputs[0]
    return _mul(grad, _mul(_const(-2 / np.sqrt(np.pi), x), Exp(Neg(Square(x)))))


Sqrt.gradient(lambda op, grad: SqrtGrad(op.outputs[0], grad))
Rsqrt.gradient(lambda op, grad: RsqrtGrad(op.outputs[0], grad))
Reciprocal.gradient(lambda op, grad: ReciprocalGrad(op.outputs[0], grad))
Inv.gradient(lambda op, grad: ReciprocalGrad(op.outputs[0], grad))
Tanh.gradient(lambda op, grad: TanhGrad(op.outputs[0], grad))
Sigmoid.gradient(lambda op, grad: SigmoidGrad(op.outputs[0], grad))


def _grad_op_gradient(fused, d_dy):
    """Second-order rule of a fused gradient op z = fused(y, dy) = f(conj(y), dy), f holomorphic
    and linear in dy: (conj(g) * f_u(conj(y), dy), fused(conj(y), g)). `d_dy(u, dy)` is f_u.
    For real dtypes this is (g * f_u(y, dy), fused(y, g))."""

    def grad_fn(op, grad):
        y, dy = op.inputs
        u = _c(y)
        return _mul(_c(grad), d_dy(u, dy)), fused(u, grad)

    return grad_fn


def _sqrt_grad_dy(y, dy):
    return binary_ops.RealDiv(_mul(dy, _const(-0.5, y)), Square(y))


def _rsqrt_grad_dy(y, dy):
    return _mul(_mul(dy, _const(-1.5, y)), Square(y))


def _reciprocal_grad_dy(y, dy):
    return _mul(_mul(dy, _const(-2, y)), y)


def _tanh_grad_dy(y, dy):
    return _mul(_mul(dy, _const(-2, y)), y)


def _sigmoid_grad_dy(y, dy):
    return _mul(dy, binary_ops.Sub(_const(1, y), _mul(_const(2, y), y)))


SqrtGrad.gradient(_grad_op_gradient(SqrtGrad, _sqrt_grad_dy))
RsqrtGrad.gradient(_grad_op_gradient(RsqrtGrad, _rsqrt_grad_dy))
ReciprocalGrad.gradient(_grad_op_gradient(ReciprocalGrad, _reciprocal_grad_dy))
InvGrad.gradient(_grad_op_gradient(InvGrad, _reciprocal_grad_dy))
TanhGrad.gradient(_grad_op_gradient(TanhGrad, _tanh_grad_dy))
SigmoidGrad.gradient(_grad_op_gradient(SigmoidGrad, _sigmoid_grad_dy))


@Real.gradient
def _real_grad(op, grad):
    return Complex(grad, _const(0, grad), Tout=op.inputs[0].dtype)


@Imag.gradient
def _imag_grad(op, grad):
    return Complex(_const(0, grad), grad, Tout=op.inputs[0].dtype)


@Conj.gradient
def _conj_grad(op, grad):
    return Conj(grad)


@ComplexAbs.gradient
def _complex_abs_grad(op, grad):
    x = op.inputs[0]
    magnitude = Complex(op.outputs[0], _const(0, grad), Tout=x.dtype)
    return binary_ops.Mul(Complex(grad, _const(0, grad), Tout=x.dtype),
                          binary_ops.DivNoNan(x, magnitude))


@Angle.gradient
def _angle_grad(op, grad):
    x = op.inputs[0]
    z = Reciprocal(Complex(Imag(x, Tout=grad.dtype), Real(x, Tout=grad.dtype), Tout=x.dtype))
    return Neg(binary_ops.Mul(Complex(grad, _const(0, grad), Tout=x.dtype), z))


@Complex.gradient
def _complex_grad(op, grad):
    real_t, imag_t = op.inputs
    out = real_t.dtype
    return (unbroadcast(Real(grad, Tout=out), real_t), unbroadcast(Imag(grad, Tout=out), imag_t))


# -- wrappers ---------------------------------------------------------------------------------

def _wrap(op, doc, sparse=False):
    def fn(x, name=None):
        if sparse and isinstance(x, SparseTensor):
            return _on_values(x, lambda values: op(values, name=name))
        return op(x, name=name)

    fn.__doc__ = doc + (" A SparseTensor maps its values." if sparse else "")
    return fn


def _on_values(sp, fn):
    """TF's rule for the zero-preserving unary ops: a SparseTensor maps its `.values`."""
    return SparseTensor(sp.indices, fn(sp.values), sp.dense_shape)


negative = _wrap(Neg, "-x elementwise.", sparse=True)
neg = negative
sign = _wrap(Sign, "-1, 0 or 1 (NaN stays NaN; x/|x| for complex).", sparse=True)
square = _wrap(Square, "x * x elementwise.", sparse=True)
sqrt = _wrap(Sqrt, "Square root (NaN for negative reals).", sparse=True)
rsqrt = _wrap(Rsqrt, "1 / sqrt(x).")
reciprocal = _wrap(Reciprocal, "1 / x (integers truncate toward zero).")
inv = reciprocal
exp = _wrap(Exp, "e ** x.")
expm1 = _wrap(Expm1, "exp(x) - 1, accurate near 0.")
log = _wrap(Log, "Natural logarithm.")
log1p = _wrap(Log1p, "log(1 + x), accurate near 0.")
sin = _wrap(Sin, "Sine.")
cos = _wrap(Cos, "Cosine.")
tan = _wrap(Tan, "Tangent.")
asin = _wrap(Asin, "Inverse sine.")
acos = _wrap(Acos, "Inverse cosine.")
atan = _wrap(Atan, "Inverse tangent.")
sinh = _wrap(Sinh, "Hyperbolic sine.")
cosh = _wrap(Cosh, "Hyperbolic cosine.")
tanh = _wrap(Tanh, "Hyperbolic tangent.", sparse=True)
asinh = _wrap(Asinh, "Inverse hyperbolic sine.")
acosh = _wrap(Acosh, "Inverse hyperbolic cosine (NaN below 1).")
atanh = _wrap(Atanh, "Inverse hyperbolic tangent.")
sigmoid = _wrap(Sigmoid, "1 / (1 + exp(-x)), computed without overflow.")
erf = _wrap(Erf, "The Gauss error function.", sparse=True)
erfc = _wrap(Erfc, "1 - erf(x), accurate for large x.")
lgamma = _wrap(Lgamma, "log |Gamma(x)|; +inf at 0, -1, -2, ...")
digamma = _wrap(Digamma, "The derivative of lgamma (psi); NaN at 0, -1, -2, ...")
floor = _wrap(Floor, "Largest integer not greater than x.")
ceil = _wrap(Ceil, "Smallest integer not less than x.")
rint = _wrap(Rint, "Nearest integer, halves to even.")
is_nan = _wrap(IsNan, "True where x is NaN.")
is_inf = _wrap(IsInf, "True where x is +-inf.")
is_finite = _wrap(IsFinite, "True where x is neither inf nor NaN.")


def abs(x, name=None):  # noqa: A001 - TF name
    """|x| elementwise; complex inputs give their magnitude as float (ComplexAbs). A
    SparseTensor maps its values."""
    if isinstance(x, SparseTensor):
        return _on_values(x, lambda values: abs(values, name=name))
    x = convert_to_tensor(x, name="x")
    if x.dtype.is_complex:
        return ComplexAbs(x, Tout=x.dtype.real_dtype, name=name or "ComplexAbs")
    return Abs(x, name=name)


def round(x, name=None):  # noqa: A001 - TF name
    """Rounds half to even (banker's rounding); integers are returned unchanged."""
    x = convert_to_tensor(x, name="x")
    if x.dtype.is_integer:
        return x
    return Round(x, name=name)


def conj(x, name=None):
    """Complex conjugate; real tensors are returned unchanged."""
    x = convert_to_tensor(x, name="x")
    if x.dtype.is_complex or x.dtype.base_dtype == dtypes.variant:
        return Conj(x, name=name)
    return x


def real(input, name=None):
    """Real part; real tensors are returned unchanged."""
    x = convert_to_tensor(input, name="input")
    if x.dtype.is_complex:
        return Real(x, Tout=x.dtype.real_dtype, name=name)
    return x


def imag(input, name=None):
    """Imaginary part; real tensors give zeros."""
    x = convert_to_tensor(input, name="input")
    if x.dtype.is_complex:
        return Imag(x, Tout=x.dtype.real_dtype, name=name)

    return constant_ops.zeros_like(x, name=name)


def angle(input, name=None):
    """Argument of a complex number (0 or pi for reals)."""
    x = convert_to_tensor(input, name="input")
    if x.dtype.is_complex:
        return Angle(x, Tout=x.dtype.real_dtype, name=name)

    return where_v2(Less(x, _const(0, x)), _const(np.pi, x), _const(0, x), name=name)


def complex(real, imag, name=None):  # noqa: A001 - TF name
    """real + 1j * imag: float32 parts give complex64, float64 parts complex128."""
    real_t = convert_to_tensor(real, name="real")
    imag_t = convert_to_tensor(imag, dtype=real_t.dtype.base_dtype, name="imag")
    out = dtypes.complex128 if real_t.dtype.base_dtype == dtypes.float64 else dtypes.complex64
    return Complex(real_t, imag_t, Tout=out, name=name)


def log_sigmoid(x, name=None):
    """log(sigmoid(x)) = -softplus(-x), stable for large |x|."""
    # cycle: ops.nn -> ops.nn.morphology imports this module (at import time)
    from tensorflux.ops.nn.activations import softplus

    graph = graph_mod.get_default_graph()
    with graph.name_scope(name or "LogSigmoid") as scope:
        x = convert_to_tensor(x, name="x")
        return Neg(softplus(Neg(x)), name=scope)


# -- operators --------------------------------------------------------------------------------

Tensor._override_operator("__neg__", lambda self: Neg(self))
Tensor._override_operator("__abs__", lambda self: abs(self))
