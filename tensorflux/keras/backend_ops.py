"""Tensor helpers of `tf.keras.backend` used in custom losses and layers, and `function`.

Each is a thin graph-building wrapper over the tf op of the same meaning, with Keras' argument
names (`axis`, `keepdims`). `function(inputs, outputs)` returns a callable that runs `outputs`
in the Keras session, feeding `inputs` (the learning phase may be one of them).
"""

from __future__ import annotations

import builtins

from tensorflux.framework import tensor_conversion
from tensorflux.framework.sparse_tensor import SparseTensor
from tensorflux.framework.tensor import Tensor
from tensorflux.keras import activations, backend, losses
from tensorflux.keras.engine.base_layer import keras_history
from tensorflux.keras.layers.core import smart_cond
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.array import padding as padding_ops
from tensorflux.ops.array import sorting as array_sorting
from tensorflux.ops.autodiff import gradients as autodiff_gradients
from tensorflux.ops.control_flow import primitives as control_flow_primitives
from tensorflux.ops.debug import logging as logging_ops
from tensorflux.ops.math import sequence as sequence_ops
from tensorflux.ops.nn import core as nn_core
from tensorflux.ops.nn import functions as nn_functions
from tensorflux.ops.random import stateful as random_stateful
from tensorflux.ops.sparse import core as sparse_core
from tensorflux.ops.state import variable_ops as state_ops
from tensorflux.ops.state import variables
from tensorflux.train import moving_averages

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
    "cumprod",
    "cos",
    "sin",
    "greater",
    "greater_equal",
    "less",
    "less_equal",
    "not_equal",
    "logsumexp",
    "arange",
    "eye",
    "one_hot",
    "permute_dimensions",
    "repeat",
    "reverse",
    "truncated_normal",
    "random_binomial",
    "random_normal_variable",
    "random_uniform_variable",
    "cast_to_floatx",
    "is_sparse",
    "to_dense",
    "is_keras_tensor",
    "print_tensor",
    "update",
    "update_add",
    "update_sub",
    "moving_average_update",
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


def _same_op(name):
    """The Keras helper that is the math op `name` itself (elementwise, same arguments)."""
    def op(*args):
        return getattr(math_ops, name)(*args)

    op.__name__ = name
    return op


cos, sin = _same_op("cos"), _same_op("sin")
equal, not_equal = _same_op("equal"), _same_op("not_equal")
greater, greater_equal = _same_op("greater"), _same_op("greater_equal")
less, less_equal = _same_op("less"), _same_op("less_equal")
maximum, minimum = _same_op("maximum"), _same_op("minimum")


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
    """The dot product of each batch element of `x` and `y` over `axes` (TF 1.15's Keras:
    default the last axis of `x` with the second-to-last of `y`, as a batched matmul; two
    matrices give a (batch, 1) result)."""
    x, y = tensor_conversion.convert_to_tensor(x), tensor_conversion.convert_to_tensor(y)
    if isinstance(axes, int):
        axes = (axes, axes)
    x_ndim, y_ndim = x.get_shape().ndims, y.get_shape().ndims
    if axes is None:
        axes = [x_ndim - 1, y_ndim - 2]
    diff = builtins.abs(x_ndim - y_ndim)  # `abs` and `max` here are Keras'
    if x_ndim > y_ndim:
        y = array_ops.reshape(y, array_ops.concat([array_ops.shape(y), [1] * diff], axis=0))
    elif y_ndim > x_ndim:
        x = array_ops.reshape(x, array_ops.concat([array_ops.shape(x), [1] * diff], axis=0))
    rank = builtins.max(x_ndim, y_ndim)
    if rank == 2:
        if axes[0] == axes[1]:
            out = math_ops.reduce_sum(x * y, axes[0])
        else:
            out = math_ops.reduce_sum(array_ops.transpose(x, [1, 0]) * y, axes[1])
    else:
        out = math_ops.matmul(x, y, adjoint_a=axes[0] != rank - 1, adjoint_b=axes[1] == rank - 1)
    if diff:
        first = x_ndim + y_ndim - 3 if x_ndim > y_ndim else x_ndim - 1
        out = array_ops.squeeze(out, list(range(first, first + diff)))
    if out.get_shape().ndims == 1:
        out = array_ops.expand_dims(out, 1)
    return out


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


def cumprod(x, axis=0):
    return math_ops.cumprod(x, axis=axis)


def logsumexp(x, axis=None, keepdims=False):
    """log(sum(exp(x))) computed without overflow."""
    return math_ops.reduce_logsumexp(x, axis=axis, keepdims=keepdims)


def arange(start, stop=None, step=1, dtype="int32"):
    """`range(start, stop, step)` as a 1D tensor of `dtype` (a negative lone `start` gives
    an empty range, as Keras)."""
    if stop is None and start < 0:
        start = 0
    result = sequence_ops.range(start, limit=stop, delta=step, name="arange")
    return result if dtype == "int32" else math_ops.cast(result, dtype)


def eye(size, dtype=None, name=None):
    """A Keras variable holding the `size` x `size` identity matrix."""
    return backend.variable(_np().eye(size), dtype=dtype, name=name)


def one_hot(indices, num_classes):
    """(..., num_classes) one-hot encodings of integer `indices`."""
    return padding_ops.one_hot(indices, depth=num_classes, axis=-1)


def permute_dimensions(x, pattern):
    return array_ops.transpose(x, perm=list(pattern))


def repeat(x, n):
    """(batch, dim) -> (batch, n, dim), each row repeated `n` times.

    Raises:
        ValueError: `x` is not 2D.
    """
    x = tensor_conversion.convert_to_tensor(x)
    if x.get_shape().ndims != 2:
        raise ValueError(f"repeat expects a 2D tensor; got rank {x.get_shape().ndims}")
    return array_ops.tile(array_ops.expand_dims(x, 1), [1, n, 1])


def reverse(x, axes):
    """`x` reversed along `axes` (an int or a list)."""
    if isinstance(axes, int):
        axes = [axes]
    return padding_ops.reverse(x, axes)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    return random_stateful.truncated_normal(shape, mean, stddev,
                                            dtype=dtype or backend.floatx(), seed=seed)


def random_binomial(shape, p=0.0, dtype=None, seed=None):
    """1 with probability `p`, else 0, for each entry of `shape`."""
    dtype = dtype or backend.floatx()
    draws = random_stateful.random_uniform(shape, dtype=dtype, seed=seed)
    return array_ops.where(draws <= p, array_ops.ones(shape, dtype=dtype),
                           array_ops.zeros(shape, dtype=dtype))


def _seeded_numpy(seed):
    np = _np()
    return np.random.RandomState(np.random.randint(10e8) if seed is None else seed)


def random_normal_variable(shape, mean, scale, dtype=None, name=None, seed=None):
    """A Keras variable initialized from a normal distribution (drawn now, in NumPy)."""
    value = _seeded_numpy(seed).normal(mean, scale, size=shape)
    return backend.variable(value, dtype=dtype or backend.floatx(), name=name)


def random_uniform_variable(shape, low, high, dtype=None, name=None, seed=None):
    """A Keras variable initialized uniformly in [low, high) (drawn now, in NumPy)."""
    value = _seeded_numpy(seed).uniform(low, high, size=shape)
    return backend.variable(value, dtype=dtype or backend.floatx(), name=name)


def cast_to_floatx(x):
    """A NumPy array of `x` in Keras' float type."""
    return _np().asarray(x, dtype=backend.floatx())


def is_sparse(tensor) -> bool:
    return isinstance(tensor, SparseTensor)


def to_dense(tensor):
    """A SparseTensor as a dense tensor (other tensors unchanged)."""
    if is_sparse(tensor):
        return sparse_core.sparse_tensor_to_dense(tensor)
    return tensor


def is_keras_tensor(x) -> bool:
    """Whether `x` was produced by a Keras layer or Input.

    Raises:
        ValueError: `x` is not a tensor or variable.
    """
    if not isinstance(x, (Tensor, SparseTensor, variables.Variable)):
        raise ValueError(f"Unexpectedly found an instance of type `{type(x)}`. Expected a "
                         f"symbolic tensor instance.")
    return keras_history(x) is not None


def print_tensor(x, message=""):
    """`x`, printing `message` and its value when evaluated."""
    return logging_ops.Print(x, [x], message)


def update(x, new_x):
    return state_ops.assign(x, new_x)


def update_add(x, increment):
    return state_ops.assign_add(x, increment)


def update_sub(x, decrement):
    return state_ops.assign_sub(x, decrement)


def moving_average_update(x, value, momentum):
    """`x = momentum * x + (1 - momentum) * value` with zero-debiasing (TF 1.x Keras)."""
    return moving_averages.assign_moving_average(x, value, momentum, zero_debias=True)
