"""Activations: Relu, Relu6, Elu, Selu, LeakyRelu, Softplus, Softsign, their gradient ops
(ReluGrad, ...) and the tf.nn wrappers.

Each activation's gradient is its gradient op, and each gradient op is differentiated in turn
(second derivatives). None of these names lives at the top level of `tf`.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework.op_def import define_op
from tensorflux.lib.numerics import activation_jit, jit
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops

__all__: list = []

_FLOAT = "T: {float16, bfloat16, float32, float64}"
_REAL = ("T: {float32, float64, int32, uint8, int16, int8, int64, bfloat16, uint16, float16, "
         "uint32, uint64}")
SELU_SCALE = 1.0507009873554804934193349852946
SELU_ALPHA = 1.6732632423543772848170429916717


def _same_shape(x, *others):
    for other in others:
        x = x.merge_with(other)
    return x


# -- activations ----------------------------------------------------------------------------


def _activation(name: str, kernel, types: str = _FLOAT, attrs=()):
    op = define_op(name, inputs=["features: T"], outputs=["activations: T"],
                   attrs=[types, *attrs])
    op.shape_fn(_same_shape)
    op.kernel(kernel)
    return op


def _activation_grad(name: str, kernel, second: str = "features", types: str = _FLOAT,
                     attrs=(), factory: bool = False):
    op = define_op(name, inputs=["gradients: T", f"{second}: T"], outputs=["backprops: T"],
                   attrs=[types, *attrs])
    op.shape_fn(_same_shape)
    op.kernel(kernel, factory=factory)
    return op


def _relu(x):
    return np.maximum(x, np.zeros((), x.dtype))


def _relu6(x):
    return np.clip(x, np.zeros((), x.dtype), np.asarray(6, x.dtype))


def _elu(x):
    return np.where(x < 0, np.expm1(np.minimum(x, 0)), x).astype(x.dtype, copy=False)


def _selu(x):
    neg = (SELU_SCALE * SELU_ALPHA) * np.expm1(np.minimum(x, 0))
    return np.where(x < 0, neg, SELU_SCALE * x).astype(x.dtype, copy=False)


def _leaky_relu(x, *, alpha):
    return np.where(x > 0, x, x * x.dtype.type(alpha))


def _softplus(x):
    return np.logaddexp(np.zeros((), x.dtype), x)


def _softsign(x):
    return x / (1 + np.abs(x))


Relu = _activation("Relu", _relu, _REAL)
Relu6 = _activation("Relu6", _relu6, _REAL)
Elu = _activation("Elu", _elu)
Selu = _activation("Selu", _selu)
LeakyRelu = _activation("LeakyRelu", _leaky_relu, _FLOAT + " = float32",
                        ["alpha: float = 0.2"])
Softplus = _activation("Softplus", _softplus)
Softsign = _activation("Softsign", _softsign)


@Relu.gradient
def _relu_grad(op, grad):
    return ReluGrad(grad, op.outputs[0])


@Relu6.gradient
def _relu6_grad(op, grad):
    return Relu6Grad(grad, op.inputs[0])


@Elu.gradient
def _elu_grad(op, grad):
    return EluGrad(grad, op.outputs[0])


@Selu.gradient
def _selu_grad(op, grad):
    return SeluGrad(grad, op.outputs[0])


@LeakyRelu.gradient
def _leaky_relu_grad(op, grad):
    return LeakyReluGrad(grad, op.inputs[0], alpha=op.get_attr("alpha"))


@Softplus.gradient
def _softplus_grad(op, grad):
    return SoftplusGrad(grad, op.inputs[0])


@Softsign.gradient
def _softsign_grad(op, grad):
    return SoftsignGrad(grad, op.inputs[0])


def _relu_grad_kernel(g, f):
    """The NumPy reference (and fallback) of the compiled `activation_jit.relu_grad`."""
    return g * (f > 0)


def _relu_grad_kernel_factory():
    if not jit.available():
        return _relu_grad_kernel

    def relu_grad(g, f):
        if activation_jit.supports(g, f):
            return activation_jit.relu_grad(g, f)
        return _relu_grad_kernel(g, f)

    return relu_grad


def _relu6_grad_kernel(g, f):
    return g * ((f > 0) & (f < 6))


def _elu_grad_kernel(g, y):
    return np.where(y < 0, g * (y + 1), g)


def _selu_grad_kernel(g, y):
    return np.where(y < 0, g * (y + y.dtype.type(SELU_SCALE * SELU_ALPHA)),
                    g * g.dtype.type(SELU_SCALE))


def _leaky_relu_grad_kernel(g, f, *, alpha):
    return np.where(f > 0, g, g * g.dtype.type(alpha))


def _softplus_grad_kernel(g, f):
    return g / (1 + np.exp(-f))


def _softsign_grad_kernel(g, f):
    return g / np.square(1 + np.abs(f))


ReluGrad = _activation_grad("ReluGrad", _relu_grad_kernel_factory, types=_REAL, factory=True)
Relu6Grad = _activation_grad("Relu6Grad", _relu6_grad_kernel, types=_REAL)
EluGrad = _activation_grad("EluGrad", _elu_grad_kernel, second="outputs")
SeluGrad = _activation_grad("SeluGrad", _selu_grad_kernel, second="outputs")
LeakyReluGrad = _activation_grad("LeakyReluGrad", _leaky_relu_grad_kernel,
                                 types=_FLOAT + " = float32", attrs=["alpha: float = 0.2"])
SoftplusGrad = _activation_grad("SoftplusGrad", _softplus_grad_kernel)
SoftsignGrad = _activation_grad("SoftsignGrad", _softsign_grad_kernel)


@ReluGrad.gradient
def _relu_grad_grad(op, grad):
    features = op.inputs[1]
    return ReluGrad(grad, features), array_ops.zeros_like(features)


@Relu6Grad.gradient
def _relu6_grad_grad(op, grad):
    features = op.inputs[1]
    return Relu6Grad(grad, features), array_ops.zeros_like(features)


@LeakyReluGrad.gradient
def _leaky_relu_grad_grad(op, grad):
    features = op.inputs[1]
    return (LeakyReluGrad(grad, features, alpha=op.get_attr("alpha")),
            array_ops.zeros_like(features))


def _negative_part_grad(op, grad):
    g, y = op.inputs
    return math_ops.where(math_ops.less(y, array_ops.zeros_like(y)), grad * g,
                           array_ops.zeros_like(y))


@EluGrad.gradient
def _elu_grad_grad(op, grad):
    return EluGrad(grad, op.inputs[1]), _negative_part_grad(op, grad)


@SeluGrad.gradient
def _selu_grad_grad(op, grad):
    return SeluGrad(grad, op.inputs[1]), _negative_part_grad(op, grad)


@SoftplusGrad.gradient
def _softplus_grad_grad(op, grad):
    g, x = op.inputs
    s = math_ops.sigmoid(x)
    return SoftplusGrad(grad, x), grad * g * s * (1 - s)


@SoftsignGrad.gradient
def _softsign_grad_grad(op, grad):
    g, x = op.inputs
    denom = 1 + math_ops.abs(x)
    return SoftsignGrad(grad, x), grad * g * -2 * math_ops.sign(x) / (denom * denom * denom)


# -- wrappers -------------------------------------------------------------------------------

def relu(features, name=None):
    """max(features, 0)."""
    return Relu(features, name=name)


def relu6(features, name=None):
    """min(max(features, 0), 6)."""
    return Relu6(features, name=name)


def elu(features, name=None):
    """exp(features) - 1 where features < 0, else features."""
    return Elu(features, name=name)


def selu(features, name=None):
    """Scaled ELU: scale * (alpha * (exp(x) - 1) if x < 0 else x)."""
    return Selu(features, name=name)


def leaky_relu(features, alpha=0.2, name=None):
    """features where features > 0, else alpha * features."""
    return LeakyRelu(features, alpha=alpha, name=name)


def softplus(features, name=None):
    """log(exp(features) + 1), computed without overflow."""
    return Softplus(features, name=name)


def softsign(features, name=None):
    """features / (abs(features) + 1)."""
    return Softsign(features, name=name)
