"""`tf.layers`: Dense, Conv2D, pooling, Flatten, Dropout (TF1 classes and functions).

A layer owns a variable scope (`dense`, `dense_1`, ... or its `name`), creates its variables
with `tf.get_variable` on first call (`kernel`, `bias`), and adds regularization losses to
REGULARIZATION_LOSSES. `reuse=True` (or AUTO_REUSE) shares the variables of a named layer.
"""

from __future__ import annotations

import re
import weakref

import numpy as np

from tensorflux.framework import graph as graph_mod
from tensorflux.framework import tensor as tensor_lib
from tensorflux.framework.graph import GraphKeys
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.nn import conv as nn_conv
from tensorflux.ops.nn import core as nn_core
from tensorflux.ops.nn import functions as nn_functions
from tensorflux.ops.nn import pooling as nn_pooling
from tensorflux.ops.state import initializers as init_ops
from tensorflux.ops.state import variable_scope

__all__ = ["Layer", "Dense", "dense", "Conv2D", "conv2d", "MaxPooling2D", "max_pooling2d",
           "AveragePooling2D", "average_pooling2d", "Flatten", "flatten", "Dropout", "dropout"]



def _tuple(value, rank, what):
    """`value` as a tuple of `rank` ints (an int repeats); `what` names the argument."""
    if isinstance(value, int):
        return (value,) * rank
    try:
        value = tuple(int(v) for v in value)
    except TypeError:
        raise ValueError(f"The `{what}` argument must be a tuple of {rank} integers. Received: "
                         f"{value}") from None
    if len(value) != rank:
        raise ValueError(f"The `{what}` argument must be a tuple of {rank} integers. Received: "
                         f"{value}")
    return value


def _pair(value, what):
    return _tuple(value, 2, what)


def _data_format(value, last="NHWC", first="NCHW"):
    """The op data format (`last` or `first`) of a layer's `data_format` argument."""
    if value in ("channels_last", last, None):
        return last
    if value in ("channels_first", first):
        return first
    raise ValueError(f"The `data_format` argument must be one of 'channels_first', "
                     f"'channels_last'. Received: {value}")


def _padding(value, allow_causal=False):
    """The lower-case `padding` argument, checked ("causal" only where `allow_causal`)."""
    padding = value.lower()
    allowed = ("valid", "same", "causal") if allow_causal else ("valid", "same")
    if padding not in allowed:
        raise ValueError(f"The `padding` argument must be one of {', '.join(map(repr, allowed))}"
                         f". Received: {value}")
    return padding


def _full(values, data_format):
    """Per-dimension `values` widened with 1 for the batch and channel dimensions."""
    return [1, *values, 1] if data_format[-1] == "C" else [1, 1, *values]


# graph -> {snake-case class name: count}: the 1-based names of unnamed layers ("dense_1").
_LAYER_NAME_UIDS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _unique_layer_name(cls) -> str:
    base = re.sub(r"([a-z])([A-Z])", r"\1_\2",
                  re.sub(r"(.)([A-Z][a-z0-9]+)", r"\1_\2", cls.__name__)).lower()
    counts = _LAYER_NAME_UIDS.setdefault(graph_mod.get_default_graph(), {})
    counts[base] = counts.get(base, 0) + 1
    return f"{base}_{counts[base]}"


class Layer:
    """Base of the TF1 layers: a variable scope, `build` once, `call` per input.

    As in TF1, `name` is the layer's name (an unnamed layer gets a per-graph 1-based name such
    as "dense_1"); the variable scope is entered on first call: `_scope` (given by the
    functional forms) as is, else a uniquified scope named after `name` or the class default
    ("dense", "dense_1", ...), or with `_reuse` the un-uniquified name.
    """

    _default_name = "layer"

    def __init__(self, trainable=True, name=None, dtype=None, _reuse=None, _scope=None,
                 **kwargs):
        self.trainable = trainable
        if isinstance(name, variable_scope.VariableScope):
            self._name, self._base_name = None, name.name
        else:
            self._name = self._base_name = name or None
        self._layer_name = self._name or _unique_layer_name(type(self))
        self._explicit_scope = _scope
        self._reuse = _reuse
        self.dtype = dtype
        self.built = False
        self._scope = None
        self._trainable_weights: list = []
        self._non_trainable_weights: list = []
        self._updates: list = []
        self._losses: list = []
        self.activity_regularizer = kwargs.pop("activity_regularizer", None)
        if kwargs:
            raise TypeError(f"Keyword argument not understood: {', '.join(kwargs)}")

    @property
    def name(self):
        return self._layer_name

    @property
    def scope_name(self):
        return self._scope.name

    @property
    def variables(self):
        return self._trainable_weights + self._non_trainable_weights

    @property
    def trainable_variables(self):
        return list(self._trainable_weights)

    @property
    def non_trainable_variables(self):
        return list(self._non_trainable_weights)

    trainable_weights = trainable_variables
    non_trainable_weights = non_trainable_variables
    weights = variables

    @property
    def updates(self):
        return list(self._updates)

    @property
    def losses(self):
        return list(self._losses)

    def add_variable(self, name, shape, dtype=None, initializer=None, regularizer=None,
                     trainable=True, constraint=None):

        trainable = trainable and self.trainable
        var = variable_scope.get_variable(name, shape=shape, dtype=dtype or self.dtype or "float32",
                                          initializer=initializer, trainable=trainable,
                                          constraint=constraint)
        if trainable:
            if var not in self._trainable_weights:
                self._trainable_weights.append(var)
        elif var not in self._non_trainable_weights:
            self._non_trainable_weights.append(var)
        if regularizer is not None and not self._reuse_now:
            graph = graph_mod.get_default_graph()
            with graph.name_scope(None), graph.name_scope(f"{var.op.name}/Regularizer"):
                loss = regularizer(var)
            if loss is not None:
                self._losses.append(loss)
                graph.add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)
        return var

    add_weight = add_variable

    def add_update(self, updates, inputs=None):
        updates = updates if isinstance(updates, (list, tuple)) else [updates]
        self._updates.extend(updates)

    def build(self, input_shape):
        self.built = True

    def call(self, inputs, **kwargs):
        return inputs

    def __call__(self, inputs, *args, **kwargs):
        graph = graph_mod.get_default_graph()
        if self._scope is None:
            base = self._base_name or self._default_name
            if self._explicit_scope is not None:
                with variable_scope.variable_scope(self._explicit_scope,
                                                   reuse=self._reuse) as scope:
                    self._scope = scope
            elif self._reuse:
                # TF1: a reusing layer enters its un-uniquified base name.
                with variable_scope.variable_scope(base, reuse=self._reuse) as scope:
                    self._scope = scope
            else:
                with variable_scope.variable_scope(None, default_name=base) as scope:
                    self._scope = scope
        with variable_scope.variable_scope(self._scope, reuse=True if self.built else self._reuse,
                                           auxiliary_name_scope=False):
            with graph.name_scope(self._name_scope()):
                inputs = _convert_inputs(inputs)
                if self.dtype is None:  # TF1: a layer takes its dtype from its first input
                    first = inputs[0] if isinstance(inputs, (list, tuple)) else inputs
                    if first.dtype.base_dtype.is_floating:
                        self.dtype = first.dtype.base_dtype.name
                self._reuse_now = self.built or bool(self._reuse)
                if not self.built:
                    self.build(_shape_of(inputs))
                    self.built = True
                outputs = self.call(inputs, *args, **kwargs)
                if self.activity_regularizer is not None:
                    loss = self.activity_regularizer(outputs)
                    if loss is not None:
                        self._losses.append(loss)
                        graph.add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)
                return outputs

    def _name_scope(self):
        name = self._scope.original_name_scope
        return name if name else None

    def apply(self, inputs, *args, **kwargs):
        return self.__call__(inputs, *args, **kwargs)

    def compute_output_shape(self, input_shape):
        """The static output shape for inputs of `input_shape` (identity by default)."""
        return TensorShape(input_shape)


def _convert_inputs(inputs):
    if isinstance(inputs, (list, tuple)):
        return type(inputs)(convert_to_tensor(i) for i in inputs)
    return convert_to_tensor(inputs)


def _shape_of(inputs):
    if isinstance(inputs, (list, tuple)):
        return [i.get_shape() for i in inputs]
    return inputs.get_shape()


def _activate(outputs, activation):
    return activation(outputs) if activation is not None else outputs


class Dense(Layer):
    """outputs = activation(inputs @ kernel + bias); rank > 2 inputs use a tensordot."""

    _default_name = "dense"

    def __init__(self, units, activation=None, use_bias=True, kernel_initializer=None,
                 bias_initializer=None, kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None,
                 trainable=True, name=None, **kwargs):
        super().__init__(trainable=trainable, name=name,
                         activity_regularizer=activity_regularizer, **kwargs)
        self.units = int(units)
        self.activation = activation
        self.use_bias = use_bias
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = bias_initializer
        self.kernel_regularizer = kernel_regularizer
        self.bias_regularizer = bias_regularizer
        self.kernel_constraint = kernel_constraint
        self.bias_constraint = bias_constraint

    def compute_output_shape(self, input_shape):
        """`input_shape` with its last dimension (which must be known) replaced by `units`.

        Raises:
          ValueError: `input_shape` has rank < 2 or an unknown last dimension.
        """
        input_shape = TensorShape(input_shape).with_rank_at_least(2)
        if input_shape[-1].value is None:
            raise ValueError(f"The innermost dimension of input_shape must be defined, but saw: "
                             f"{input_shape}")
        return input_shape[:-1].concatenate([self.units])

    def build(self, input_shape):
        input_shape = TensorShape(input_shape)
        last = input_shape[-1].value if input_shape.ndims else None
        if last is None:
            raise ValueError("The last dimension of the inputs to `Dense` should be defined. "
                             "Found `None`.")
        self.kernel = self.add_variable("kernel", [last, self.units],
                                        initializer=self.kernel_initializer,
                                        regularizer=self.kernel_regularizer,
                                        constraint=self.kernel_constraint)
        self.bias = None
        if self.use_bias:
            self.bias = self.add_variable(
                "bias", [self.units],
                initializer=self.bias_initializer or init_ops.zeros_initializer(),
                regularizer=self.bias_regularizer, constraint=self.bias_constraint)
        self.built = True

    def call(self, inputs):
        rank = inputs.get_shape().ndims
        if rank is not None and rank > 2:
            flat = array_ops.reshape(inputs, [-1, inputs.get_shape()[-1].value])
            outputs = math_ops.matmul(flat, self.kernel)
            shape = array_ops.concat([array_ops.shape(inputs)[:-1], [self.units]], 0)
            outputs = array_ops.reshape(outputs, shape)
            outputs.set_shape(inputs.get_shape()[:-1].concatenate([self.units]))
        else:
            outputs = math_ops.matmul(inputs, self.kernel)
        if self.bias is not None:
            outputs = nn_core.bias_add(outputs, self.bias)
        return _activate(outputs, self.activation)


def dense(inputs, units, activation=None, use_bias=True, kernel_initializer=None,
          bias_initializer=None, kernel_regularizer=None, bias_regularizer=None,
          activity_regularizer=None, kernel_constraint=None, bias_constraint=None,
          trainable=True, name=None, reuse=None):
    """Functional form of `Dense`."""
    return _layer_call(Dense, locals())


class _Conv(Layer):
    """Shared arguments, `kernel`/`bias` variables and bias + activation of the conv layers.

    `_rank` is the number of spatial dimensions, `_formats` the (channels_last, channels_first)
    op data formats, `_op` the `tf.nn` convolution the default `call` runs; `padding` is kept
    upper case unless `_lowercase_padding` (then "causal" is accepted where `_allow_causal`).
    """

    _rank = 2
    _formats = ("NHWC", "NCHW")
    _op = staticmethod(nn_conv.conv2d)
    _lowercase_padding = False
    _allow_causal = False

    def __init__(self, filters, kernel_size, strides=1, padding="valid",
                 data_format="channels_last", dilation_rate=1, activation=None, use_bias=True,
                 kernel_initializer=None, bias_initializer=None, kernel_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, trainable=True, name=None, **kwargs):
        super().__init__(trainable=trainable, name=name,
                         activity_regularizer=activity_regularizer, **kwargs)
        self.filters = int(filters)
        self.kernel_size = _tuple(kernel_size, self._rank, "kernel_size")
        self.strides = _tuple(strides, self._rank, "strides")
        padding = _padding(padding, self._allow_causal)
        self.padding = padding if self._lowercase_padding else padding.upper()
        self.data_format = _data_format(data_format, *self._formats)
        self.dilation_rate = _tuple(dilation_rate, self._rank, "dilation_rate")
        self.activation = activation
        self.use_bias = use_bias
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = bias_initializer
        self.kernel_regularizer = kernel_regularizer
        self.bias_regularizer = bias_regularizer
        self.kernel_constraint = kernel_constraint
        self.bias_constraint = bias_constraint

    def _channels(self, input_shape):
        input_shape = TensorShape(input_shape).with_rank(self._rank + 2)
        channels = input_shape[-1 if self.data_format[-1] == "C" else 1].value
        if channels is None:
            raise ValueError("The channel dimension of the inputs should be defined. Found "
                             "`None`.")
        return channels

    def _add_bias(self):
        self.bias = None
        if self.use_bias:
            self.bias = self.add_variable(
                "bias", [self.filters],
                initializer=self.bias_initializer or init_ops.zeros_initializer(),
                regularizer=self.bias_regularizer, constraint=self.bias_constraint)

    def _kernel_shape(self, channels):
        return [*self.kernel_size, channels, self.filters]

    def build(self, input_shape):
        self.kernel = self.add_variable("kernel",
                                        self._kernel_shape(self._channels(input_shape)),
                                        initializer=self.kernel_initializer,
                                        regularizer=self.kernel_regularizer,
                                        constraint=self.kernel_constraint)
        self._add_bias()
        self.built = True

    def _bias_and_activation(self, outputs):
        if self.bias is not None:
            if self.data_format == "NCDHW":  # BiasAdd knows NHWC and NCHW only
                outputs = outputs + array_ops.reshape(self.bias, [self.filters, 1, 1, 1])
            else:
                outputs = nn_core.bias_add(
                    outputs, self.bias, data_format="NHWC" if self.data_format[-1] == "C"
                    else "NCHW")
        return _activate(outputs, self.activation)

    def call(self, inputs):
        outputs = self._op(
            inputs, self.kernel, strides=_full(self.strides, self.data_format),
            padding=self.padding.upper(), data_format=self.data_format,
            dilations=_full(self.dilation_rate, self.data_format))
        return self._bias_and_activation(outputs)


class _ConvTranspose(_Conv):
    """Transposed convolution: output size `in * stride` for "same", `in * stride +
    max(kernel - stride, 0)` for "valid"; `_op` is the `tf.nn` transposed convolution."""

    def __init__(self, filters, kernel_size, strides=1, padding="valid",
                 data_format="channels_last", activation=None, use_bias=True,
                 kernel_initializer=None, bias_initializer=None, kernel_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, trainable=True, name=None, **kwargs):
        super().__init__(filters, kernel_size, strides, padding, data_format, 1, activation,
                         use_bias, kernel_initializer, bias_initializer, kernel_regularizer,
                         bias_regularizer, activity_regularizer, trainable=trainable, name=name,
                         **kwargs)

    def _kernel_shape(self, channels):
        return [*self.kernel_size, self.filters, channels]

    def _length(self, length, kernel, stride):
        if self.padding.upper() == "SAME":
            return length * stride
        return length * stride + max(kernel - stride, 0)

    def call(self, inputs):
        last = self.data_format[-1] == "C"
        axes = range(1, self._rank + 1) if last else range(2, self._rank + 2)
        static = inputs.get_shape()
        dynamic = array_ops.shape(inputs)
        sizes, static_sizes = [], []
        for axis, kernel, stride in zip(axes, self.kernel_size, self.strides):
            known = static[axis].value
            sizes.append(self._length(dynamic[axis] if known is None else known, kernel,
                                      stride))
            static_sizes.append(None if known is None else self._length(known, kernel, stride))
        batch = static[0].value if static[0].value is not None else dynamic[0]
        if last:
            shape = [batch, *sizes, self.filters]
            static_shape = [static[0].value, *static_sizes, self.filters]
        else:
            shape = [batch, self.filters, *sizes]
            static_shape = [static[0].value, self.filters, *static_sizes]
        if any(isinstance(s, tensor_lib.Tensor) for s in shape):
            shape = array_ops.stack(shape)
        outputs = self._op(inputs, self.kernel, shape,
                           strides=_full(self.strides, self.data_format),
                           padding=self.padding.upper(),
                           data_format=self.data_format)
        outputs.set_shape(static_shape)
        return self._bias_and_activation(outputs)


class Conv2D(_Conv):
    """2-D convolution with `filters` kernels of `kernel_size` (channels_last by default)."""

    _default_name = "conv2d"


def _layer_call(cls, args):
    """Builds a `cls` layer from a functional form's arguments (its `locals()`: `inputs`, the
    layer's arguments and `reuse`) and applies it to `inputs`."""
    args = dict(args)
    inputs = args.pop("inputs")
    args["_reuse"] = args.pop("reuse", None)
    args["_scope"] = args.get("name")
    return cls(**args).apply(inputs)


def conv2d(inputs, filters, kernel_size, strides=(1, 1), padding="valid",
           data_format="channels_last", dilation_rate=(1, 1), activation=None, use_bias=True,
           kernel_initializer=None, bias_initializer=None, kernel_regularizer=None,
           bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
           bias_constraint=None, trainable=True, name=None, reuse=None):
    """Functional form of `Conv2D`."""
    return _layer_call(Conv2D, locals())


class _Pooling(Layer):
    """Pooling over `_rank`-D windows with the `tf.nn` op `_pool` (`padding` as in `_Conv`)."""

    _rank = 2
    _formats = ("NHWC", "NCHW")
    _pool = staticmethod(nn_pooling.max_pool)
    _lowercase_padding = False

    def __init__(self, pool_size, strides, padding="valid", data_format="channels_last",
                 name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.pool_size = _tuple(pool_size, self._rank, "pool_size")
        self.strides = _tuple(strides, self._rank, "strides")
        padding = _padding(padding)
        self.padding = padding if self._lowercase_padding else padding.upper()
        self.data_format = _data_format(data_format, *self._formats)

    def _run(self, inputs, pool_size, strides):
        return self._pool(inputs, ksize=_full(pool_size, self.data_format),
                          strides=_full(strides, self.data_format),
                          padding=self.padding.upper(),
                          data_format=self.data_format)

    def call(self, inputs):
        return self._run(inputs, self.pool_size, self.strides)


class MaxPooling2D(_Pooling):
    _default_name = "max_pooling2d"
    _pool = staticmethod(nn_pooling.max_pool)


class AveragePooling2D(_Pooling):
    _default_name = "average_pooling2d"
    _pool = staticmethod(nn_pooling.avg_pool)


def max_pooling2d(inputs, pool_size, strides, padding="valid", data_format="channels_last",
                  name=None):
    return MaxPooling2D(pool_size, strides, padding, data_format, name=name).apply(inputs)


def average_pooling2d(inputs, pool_size, strides, padding="valid", data_format="channels_last",
                      name=None):
    return AveragePooling2D(pool_size, strides, padding, data_format, name=name).apply(inputs)


class Flatten(Layer):
    """Flattens all but the batch dimension."""

    _default_name = "flatten"

    def __init__(self, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = _data_format(data_format)

    def compute_output_shape(self, input_shape):
        """[batch, product of the other dimensions (None if any is unknown)]."""
        dims = TensorShape(input_shape).as_list()
        rest = dims[1:]
        return TensorShape([dims[0], int(np.prod(rest)) if all(rest) else None])

    def call(self, inputs):
        if self.data_format == "NCHW" and inputs.get_shape().ndims and \
                inputs.get_shape().ndims > 2:
            rank = inputs.get_shape().ndims
            inputs = array_ops.transpose(inputs, [0, *range(2, rank), 1])
        shape = inputs.get_shape()
        rest = shape[1:].num_elements() if shape.ndims is not None else None
        if rest is not None:
            outputs = array_ops.reshape(inputs, [-1, rest])
        else:
            outputs = array_ops.reshape(inputs, array_ops.stack(
                [array_ops.shape(inputs)[0], -1]))
        if shape.ndims is not None:
            outputs.set_shape([shape[0].value, rest])
        return outputs


def flatten(inputs, name=None, data_format="channels_last"):
    return Flatten(data_format=data_format, name=name).apply(inputs)


class Dropout(Layer):
    """Randomly zeroes `rate` of the inputs when `training` (scaling the rest by 1/(1-rate))."""

    _default_name = "dropout"

    def __init__(self, rate=0.5, noise_shape=None, seed=None, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.rate = rate
        self.noise_shape = noise_shape
        self.seed = seed

    def _noise_shape(self, inputs):
        """`noise_shape` with its None entries taken from the inputs' dynamic shape."""
        if self.noise_shape is None or not any(d is None for d in self.noise_shape):
            return self.noise_shape
        shape = array_ops.shape(inputs)
        return [shape[axis] if d is None else d for axis, d in enumerate(self.noise_shape)]

    def call(self, inputs, training=False):
        if isinstance(training, (bool, np.bool_)) or training is None:
            if not training:
                return array_ops.identity(inputs)
            return nn_functions.dropout(inputs, rate=self.rate,
                                        noise_shape=self._noise_shape(inputs), seed=self.seed)
        dropped = nn_functions.dropout(inputs, rate=self.rate,
                                       noise_shape=self._noise_shape(inputs), seed=self.seed)
        training = convert_to_tensor(training)
        return math_ops.where(array_ops.fill(array_ops.shape(inputs), training), dropped,
                              inputs)


def dropout(inputs, rate=0.5, noise_shape=None, seed=None, training=False, name=None):
    return Dropout(rate, noise_shape=noise_shape, seed=seed, name=name).apply(
        inputs, training=training)
