"""`tf.layers`: Dense, Conv2D, pooling, Flatten, Dropout (TF1 classes and functions).

A layer owns a variable scope (`dense`, `dense_1`, ... or its `name`), creates its variables
with `tf.get_variable` on first call (`kernel`, `bias`), and adds regularization losses to
REGULARIZATION_LOSSES. `reuse=True` (or AUTO_REUSE) shares the variables of a named layer.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import graph as graph_mod
from tensorflux.framework.graph import GraphKeys
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape

__all__ = ["Layer", "Dense", "dense", "Conv2D", "conv2d", "MaxPooling2D", "max_pooling2d",
           "AveragePooling2D", "average_pooling2d", "Flatten", "flatten", "Dropout", "dropout"]


def _api():
    import tensorflux

    return tensorflux


def _pair(value, what):
    if isinstance(value, int):
        return (value, value)
    value = tuple(int(v) for v in value)
    if len(value) != 2:
        raise ValueError(f"The `{what}` argument must be a tuple of 2 integers. Received: "
                         f"{value}")
    return value


def _data_format(value):
    if value in ("channels_last", "NHWC", None):
        return "NHWC"
    if value in ("channels_first", "NCHW"):
        return "NCHW"
    raise ValueError(f"The `data_format` argument must be one of 'channels_first', "
                     f"'channels_last'. Received: {value}")


def _padding(value):
    padding = value.upper()
    if padding not in ("SAME", "VALID"):
        raise ValueError(f"The `padding` argument must be one of 'valid', 'same'. Received: "
                         f"{value}")
    return padding


class Layer:
    """Base of the TF1 layers: a variable scope, `build` once, `call` per input."""

    _default_name = "layer"

    def __init__(self, trainable=True, name=None, dtype=None, _reuse=None, **kwargs):
        self.trainable = trainable
        self._name = name
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
        return self._scope.name if self._scope is not None else self._name

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
        tf = _api()

        trainable = trainable and self.trainable
        var = tf.get_variable(name, shape=shape, dtype=dtype or self.dtype or "float32",
                              initializer=initializer, trainable=trainable)
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
        tf = _api()

        graph = graph_mod.get_default_graph()
        if self._scope is None:
            with tf.variable_scope(self._name, default_name=self._default_name,
                                   reuse=self._reuse) as scope:
                self._scope = scope
        with tf.variable_scope(self._scope, reuse=True if self.built else self._reuse,
                               auxiliary_name_scope=False):
            with graph.name_scope(self._name_scope()):
                inputs = _convert_inputs(inputs)
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

    def build(self, input_shape):
        tf = _api()

        input_shape = TensorShape(input_shape)
        last = input_shape[-1].value if input_shape.ndims else None
        if last is None:
            raise ValueError("The last dimension of the inputs to `Dense` should be defined. "
                             "Found `None`.")
        self.kernel = self.add_variable("kernel", [last, self.units],
                                        initializer=self.kernel_initializer,
                                        regularizer=self.kernel_regularizer)
        self.bias = None
        if self.use_bias:
            self.bias = self.add_variable(
                "bias", [self.units],
                initializer=self.bias_initializer or tf.zeros_initializer(),
                regularizer=self.bias_regularizer)
        self.built = True

    def call(self, inputs):
        tf = _api()

        rank = inputs.get_shape().ndims
        if rank is not None and rank > 2:
            flat = tf.reshape(inputs, [-1, inputs.get_shape()[-1].value])
            outputs = tf.matmul(flat, self.kernel)
            shape = tf.concat([tf.shape(inputs)[:-1], [self.units]], 0)
            outputs = tf.reshape(outputs, shape)
            outputs.set_shape(inputs.get_shape()[:-1].concatenate([self.units]))
        else:
            outputs = tf.matmul(inputs, self.kernel)
        if self.bias is not None:
            outputs = tf.nn.bias_add(outputs, self.bias)
        return _activate(outputs, self.activation)


def dense(inputs, units, activation=None, use_bias=True, kernel_initializer=None,
          bias_initializer=None, kernel_regularizer=None, bias_regularizer=None,
          activity_regularizer=None, kernel_constraint=None, bias_constraint=None,
          trainable=True, name=None, reuse=None):
    """Functional form of `Dense`."""
    layer = Dense(units, activation=activation, use_bias=use_bias,
                  kernel_initializer=kernel_initializer, bias_initializer=bias_initializer,
                  kernel_regularizer=kernel_regularizer, bias_regularizer=bias_regularizer,
                  activity_regularizer=activity_regularizer, trainable=trainable, name=name,
                  _reuse=reuse)
    return layer.apply(inputs)


class Conv2D(Layer):
    """2-D convolution with `filters` kernels of `kernel_size` (channels_last by default)."""

    _default_name = "conv2d"

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid",
                 data_format="channels_last", dilation_rate=(1, 1), activation=None,
                 use_bias=True, kernel_initializer=None, bias_initializer=None,
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, trainable=True, name=None,
                 **kwargs):
        super().__init__(trainable=trainable, name=name,
                         activity_regularizer=activity_regularizer, **kwargs)
        self.filters = int(filters)
        self.kernel_size = _pair(kernel_size, "kernel_size")
        self.strides = _pair(strides, "strides")
        self.padding = _padding(padding)
        self.data_format = _data_format(data_format)
        self.dilation_rate = _pair(dilation_rate, "dilation_rate")
        self.activation = activation
        self.use_bias = use_bias
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = bias_initializer
        self.kernel_regularizer = kernel_regularizer
        self.bias_regularizer = bias_regularizer

    def build(self, input_shape):
        tf = _api()

        input_shape = TensorShape(input_shape).with_rank(4)
        axis = -1 if self.data_format == "NHWC" else 1
        channels = input_shape[axis].value
        if channels is None:
            raise ValueError("The channel dimension of the inputs should be defined. Found "
                             "`None`.")
        self.kernel = self.add_variable("kernel", [*self.kernel_size, channels, self.filters],
                                        initializer=self.kernel_initializer,
                                        regularizer=self.kernel_regularizer)
        self.bias = None
        if self.use_bias:
            self.bias = self.add_variable(
                "bias", [self.filters],
                initializer=self.bias_initializer or tf.zeros_initializer(),
                regularizer=self.bias_regularizer)
        self.built = True

    def call(self, inputs):
        tf = _api()

        outputs = tf.nn.conv2d(inputs, self.kernel, strides=[1, *self.strides, 1]
                                if self.data_format == "NHWC" else [1, 1, *self.strides],
                                padding=self.padding, data_format=self.data_format,
                                dilations=[1, *self.dilation_rate, 1]
                                if self.data_format == "NHWC" else [1, 1, *self.dilation_rate])
        if self.bias is not None:
            outputs = tf.nn.bias_add(outputs, self.bias, data_format=self.data_format)
        return _activate(outputs, self.activation)


def conv2d(inputs, filters, kernel_size, strides=(1, 1), padding="valid",
           data_format="channels_last", dilation_rate=(1, 1), activation=None, use_bias=True,
           kernel_initializer=None, bias_initializer=None, kernel_regularizer=None,
           bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
           bias_constraint=None, trainable=True, name=None, reuse=None):
    """Functional form of `Conv2D`."""
    layer = Conv2D(filters, kernel_size, strides=strides, padding=padding,
                   data_format=data_format, dilation_rate=dilation_rate, activation=activation,
                   use_bias=use_bias, kernel_initializer=kernel_initializer,
                   bias_initializer=bias_initializer, kernel_regularizer=kernel_regularizer,
                   bias_regularizer=bias_regularizer, activity_regularizer=activity_regularizer,
                   trainable=trainable, name=name, _reuse=reuse)
    return layer.apply(inputs)


class _Pooling2D(Layer):
    _pool = "max_pool"

    def __init__(self, pool_size, strides, padding="valid", data_format="channels_last",
                 name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.pool_size = _pair(pool_size, "pool_size")
        self.strides = _pair(strides, "strides")
        self.padding = _padding(padding)
        self.data_format = _data_format(data_format)

    def call(self, inputs):
        tf = _api()

        if self.data_format == "NHWC":
            ksize, strides = [1, *self.pool_size, 1], [1, *self.strides, 1]
        else:
            ksize, strides = [1, 1, *self.pool_size], [1, 1, *self.strides]
        pool = getattr(tf.nn, self._pool)
        return pool(inputs, ksize=ksize, strides=strides, padding=self.padding,
                    data_format=self.data_format)


class MaxPooling2D(_Pooling2D):
    _default_name = "max_pooling2d"
    _pool = "max_pool"


class AveragePooling2D(_Pooling2D):
    _default_name = "average_pooling2d"
    _pool = "avg_pool"


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

    def call(self, inputs):
        tf = _api()

        if self.data_format == "NCHW" and inputs.get_shape().ndims and \
                inputs.get_shape().ndims > 2:
            rank = inputs.get_shape().ndims
            inputs = tf.transpose(inputs, [0, *range(2, rank), 1])
        shape = inputs.get_shape()
        rest = shape[1:].num_elements() if shape.ndims is not None else None
        if rest is not None:
            outputs = tf.reshape(inputs, [-1, rest])
        else:
            outputs = tf.reshape(inputs, tf.stack(
                [tf.shape(inputs)[0], -1]))
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

    def call(self, inputs, training=False):
        tf = _api()

        if isinstance(training, (bool, np.bool_)) or training is None:
            if not training:
                return tf.identity(inputs)
            return tf.nn.dropout(inputs, rate=self.rate, noise_shape=self.noise_shape,
                                  seed=self.seed)
        dropped = tf.nn.dropout(inputs, rate=self.rate, noise_shape=self.noise_shape,
                                 seed=self.seed)
        training = convert_to_tensor(training)
        return tf.where(tf.fill(tf.shape(inputs), training), dropped,
                               inputs)


def dropout(inputs, rate=0.5, noise_shape=None, seed=None, training=False, name=None):
    return Dropout(rate, noise_shape=noise_shape, seed=seed, name=name).apply(
        inputs, training=training)
