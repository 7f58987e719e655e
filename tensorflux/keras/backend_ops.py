"""Tensor helpers of `tf.keras.backend` used in custom losses and layers, and `function`.

Each is a thin graph-building wrapper over the tf op of the same meaning, with Keras' argument
names (`axis`, `keepdims`). `function(inputs, outputs)` returns a callable that runs `outputs`
in the Keras session, feeding `inputs` (the learning phase may be one of them).
"""

from __future__ import annotations

from tensorflux.framework import tensor_conversion
from tensorflux.keras import activations, backend, losses
from tensorflux.keras.layers.core import smart_cond
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.array import sorting as array_sorting
from tensorflux.ops.autodiff import gradients as autodiff_gradients
from tensorflux.ops.control_flow import primitives as control_flow_primitives
from tensorflux.ops.nn import core as nn_core
from tensorflux.ops.nn import functions as nn_functions
from tensorflux.ops.random import stateful as random_stateful

__all__ = [
    "mean",
    "sum",
    "max",
    "min",
    "prod",
    "std",
    "var",
    "square",
    "sqrt",
    "abs",
    "exp",
    "log",
    "pow",
    "clip",
    "cast",
    "dot",
    "batch_dot",
    "concatenate",
    "reshape",
    "shape",
    "transpose",
    "expand_dims",
    "squeeze",
    "stack",
    "argmax",
    "argmin",
    "equal",
    "maximum",
    "minimum",
    "zeros",
    "ones",
    "zeros_like",
    "ones_like",
    "sigmoid",
    "softmax",
    "relu",
    "tanh",
    "categorical_crossentropy",
    "binary_crossentropy",
    "sparse_categorical_crossentropy",
    "l2_normalize",
    "gather",
    "flatten",
    "batch_flatten",
    "function",
    "Function",
    "gradients",
    "stop_gradient",
    "switch",
    "in_train_phase",
    "in_test_phase",
    "round",
    "sign",
    "all",
    "any",
    "count_params",
    "random_normal",
    "random_uniform",
    "tile",
    "repeat_elements",
    "cumsum",
]


def _reduce(name):
    def reduce(x, axis=None, keepdims=False):
        return getattr(math_ops, name)(x, axis=axis, keepdims=keepdims)

    reduce.__name__ = name
    return reduce


mean, sum, max, min = (
    _reduce("reduce_mean"),
    _reduce("reduce_sum"),  # noqa: A001
    _reduce("reduce_max"),
    _reduce("reduce_min"),
)
prod, all, any = (
    _reduce("reduce_prod"),
    _reduce("reduce_all"),  # noqa: A001
    _reduce("reduce_any"),
)


def var(x, axis=None, keepdims=False):
    centered = x - math_ops.reduce_mean(x, axis=axis, keepdims=True)
    return math_ops.reduce_mean(math_ops.square(centered), axis=axis, keepdims=keepdims)


def std(x, axis=None, keepdims=False):
    return math_ops.sqrt(var(x, axis, keepdims))


def square(x):
    return math_ops.square(x)


def sqrt(x):
    """sqrt(max(x, 0)), as Keras clips negatives."""
    x = tensor_conversion.convert_to_tensor(x)
    return math_ops.sqrt(math_ops.maximum(x, array_ops.zeros_like(x)))


def abs(x):  # noqa: A001
    return math_ops.abs(x)


def exp(x):
    return math_ops.exp(x)


def log(x):
    return math_ops.log(x)


def pow(x, a):  # noqa: A001
    return math_ops.pow(x, a)


def round(x):  # noqa: A001
    return math_ops.round(x)


def sign(x):
    return math_ops.sign(x)


def clip(x, min_value, max_value):
    return math_ops.clip_by_value(x, min_value, max_value)


def cast(x, dtype):
    return math_ops.cast(x, dtype)


def dot(x, y):
    """Matrix product; a rank > 2 `x` contracts its last axis with `y`'s first."""
    x, y = tensor_conversion.convert_to_tensor(x), tensor_conversion.convert_to_tensor(y)
    if x.get_shape().ndims == 2 and y.get_shape().ndims == 2:
        return math_ops.matmul(x, y)
    return math_ops.tensordot(x, y, [[x.get_shape().ndims - 1], [0]])


def batch_dot(x, y, axes=None):
    if axes is None:
        return math_ops.matmul(x, y)
    return math_ops.reduce_sum(
        x * y, axis=axes if isinstance(axes, int) else axes[0], keepdims=True
    )


def concatenate(tensors, axis=-1):
    return array_ops.concat(list(tensors), axis=axis)


def reshape(x, shape):
    return array_ops.reshape(x, shape)


def shape(x):
    return array_ops.shape(x)


def transpose(x):
    return array_ops.transpose(x)


def expand_dims(x, axis=-1):
    return array_ops.expand_dims(x, axis)


def squeeze(x, axis):
    return array_ops.squeeze(x, [axis])


def stack(x, axis=0):
    return array_ops.stack(x, axis=axis)


def tile(x, n):
    return array_ops.tile(x, n)


def repeat_elements(x, rep, axis):
    return array_sorting.repeat(x, rep, axis=axis)


def cumsum(x, axis=0):
    return math_ops.cumsum(x, axis=axis)


def argmax(x, axis=-1):
    return math_ops.argmax(x, axis=axis)


def argmin(x, axis=-1):
    return math_ops.argmin(x, axis=axis)


def equal(x, y):
    return math_ops.equal(x, y)


def maximum(x, y):
    return math_ops.maximum(x, y)


def minimum(x, y):
    return math_ops.minimum(x, y)


def zeros(shape, dtype=None, name=None):
    return backend.variable(_np().zeros(shape), dtype=dtype, name=name)


def ones(shape, dtype=None, name=None):
    return backend.variable(_np().ones(shape), dtype=dtype, name=name)


def _np():
    import numpy

    return numpy


def zeros_like(x, dtype=None, name=None):
    return array_ops.zeros_like(x, dtype=dtype, name=name)


def ones_like(x, dtype=None, name=None):
    return array_ops.ones_like(x, dtype=dtype, name=name)


def random_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    return random_stateful.random_normal(
        shape, mean, stddev, dtype=dtype or backend.floatx(), seed=seed
    )


def random_uniform(shape, minval=0.0, maxval=1.0, dtype=None, seed=None):
    return random_stateful.random_uniform(
        shape, minval, maxval, dtype=dtype or backend.floatx(), seed=seed
    )


def sigmoid(x):
    return math_ops.sigmoid(x)


def softmax(x, axis=-1):
    return nn_core.softmax(x, axis=axis)


def relu(x, alpha=0.0, max_value=None, threshold=0.0):

    return activations.relu(x, alpha=alpha, max_value=max_value, threshold=threshold)


def tanh(x):
    return math_ops.tanh(x)


def categorical_crossentropy(target, output, from_logits=False, axis=-1):

    return losses.categorical_crossentropy(target, output, from_logits=from_logits)


def sparse_categorical_crossentropy(target, output, from_logits=False, axis=-1):

    return losses.sparse_categorical_crossentropy(target, output, from_logits=from_logits)


def binary_crossentropy(target, output, from_logits=False):
    """The elementwise binary crossentropy (no mean over the last axis)."""
    output = tensor_conversion.convert_to_tensor(output)
    target = math_ops.cast(target, output.dtype.base_dtype)
    if from_logits:
        return nn_functions.sigmoid_cross_entropy_with_logits(labels=target, logits=output)
    eps = backend.epsilon()
    p = math_ops.clip_by_value(output, eps, 1.0 - eps)
    return -(target * math_ops.log(p + eps) + (1.0 - target) * math_ops.log(1.0 - p + eps))


def l2_normalize(x, axis=None):
    return nn_functions.l2_normalize(x, axis=axis)


def gather(reference, indices):
    return array_ops.gather(reference, indices)


def flatten(x):
    return array_ops.reshape(x, [-1])


def batch_flatten(x):
    return array_ops.reshape(x, array_ops.stack([array_ops.shape(x)[0], -1]))


def gradients(loss, variables):
    return autodiff_gradients.gradients(loss, variables)


def stop_gradient(variables):
    if isinstance(variables, (list, tuple)):
        return [array_ops.stop_gradient(v) for v in variables]
    return array_ops.stop_gradient(variables)


def switch(condition, then_expression, else_expression):
    """`then` or `else` by a scalar boolean `condition` (a Python bool picks statically)."""

    def branch(expr):
        return expr if callable(expr) else (lambda: expr)

    return smart_cond(condition, branch(then_expression), branch(else_expression))


def in_train_phase(x, alt, training=None):
    return switch(backend.learning_phase() if training is None else training, x, alt)


def in_test_phase(x, alt, training=None):
    return in_train_phase(alt, x, training)


def count_params(x):
    return int(_np().prod(x.get_shape().as_list()))


class Function:
    """Runs `outputs` (and `updates`) in the Keras session for a list of input values."""

    def __init__(self, inputs, outputs, updates=None, name=None):
        self.inputs = list(inputs)
        self._single = not isinstance(outputs, (list, tuple))
        self.outputs = [outputs] if self._single else list(outputs)
        self._updates = control_flow_primitives.group(*updates) if updates else None

    def __call__(self, inputs):
        if len(inputs) != len(self.inputs):
            raise ValueError(
                f"Function expects {len(self.inputs)} input value(s), got {len(inputs)}."
            )
        fetches = self.outputs + ([self._updates] if self._updates is not None else [])
        values = backend.get_session().run(fetches, dict(zip(self.inputs, inputs)))
        return values[: len(self.outputs)]


def function(inputs, outputs, updates=None, name=None, **kwargs):
    """A `Function`: call it with a list of values for `inputs`; returns the output values."""
    if kwargs:
        raise ValueError(f"Invalid argument(s) to `function`: {sorted(kwargs)}")
    return Function(inputs, outputs, updates=updates, name=name)
