"""Keras core layers: Dense, Activation, Dropout, Flatten, Reshape, Lambda, Embedding."""

from __future__ import annotations

import numpy as np

from tensorflux.framework import tensor_shape
from tensorflux.keras import activations, backend, initializers, regularizers
from tensorflux.keras.engine.base_layer import InputSpec, Layer, format_shape
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.control_flow import primitives as control_flow_primitives
from tensorflux.ops.nn import core as nn_core
from tensorflux.ops.nn import functions as nn_functions

__all__ = [
    "Masking",
    "Dense",
    "Activation",
    "Dropout",
    "Flatten",
    "Reshape",
    "Lambda",
    "Embedding",
    "smart_cond",
    "SpatialDropout1D",
    "SpatialDropout2D",
    "ActivityRegularization",
    "SpatialDropout3D",
]


def smart_cond(pred, true_fn, false_fn):
    """`true_fn()` or `false_fn()` when `pred` is a Python value, else `tf.cond`."""
    if isinstance(pred, (bool, int, np.bool_, np.integer)):
        return true_fn() if pred else false_fn()
    return control_flow_primitives.cond(math_ops.cast(pred, "bool"), true_fn, false_fn)


def training_value(training):
    """The `training` argument, defaulting to the Keras learning phase."""
    return backend.learning_phase() if training is None else training


class Dense(Layer):
    """activation(inputs @ kernel + bias) on the last axis; kernel [in, units]."""

    supports_masking = True

    def __init__(
        self,
        units,
        activation=None,
        use_bias=True,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        kernel_regularizer=None,
        bias_regularizer=None,
        activity_regularizer=None,
        kernel_constraint=None,
        bias_constraint=None,
        **kwargs,
    ):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        self.units = int(units)
        if self.units <= 0:
            raise ValueError(f'Layer "{self.name}": units must be positive, got {units}.')
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer, self.bias_regularizer = kernel_regularizer, bias_regularizer
        self.kernel_constraint, self.bias_constraint = kernel_constraint, bias_constraint
        self.input_spec = InputSpec(min_ndim=2)

    def build(self, input_shape):
        last = input_shape[-1] if input_shape else None
        if last is None:
            raise ValueError(
                f'The last dimension of the inputs to a Dense layer "{self.name}" '
                f"should be defined. Found None. Full input shape received: "
                f"{format_shape(input_shape or ())}"
            )
        self.kernel = self._add_configured_weight("kernel", (last, self.units))
        self.bias = self._add_bias(self.units)
        self.input_spec = InputSpec(min_ndim=2, axes={-1: last})
        self.built = True

    def call(self, inputs):
        if inputs.dtype.base_dtype != self.kernel.dtype.base_dtype:
            inputs = math_ops.cast(inputs, self.kernel.dtype.base_dtype)
        if inputs.get_shape().ndims == 2:
            outputs = math_ops.matmul(inputs, self.kernel)
        else:
            flat = math_ops.matmul(
                array_ops.reshape(inputs, [-1, self.kernel.get_shape().as_list()[0]]), self.kernel
            )
            outputs = array_ops.reshape(
                flat, array_ops.concat([array_ops.shape(inputs)[:-1], [self.units]], 0)
            )
            outputs.set_shape(inputs.get_shape()[:-1].concatenate([self.units]))
        if self.bias is not None:
            outputs = nn_core.bias_add(outputs, self.bias)
        return self.activation(outputs)


class Activation(Layer):
    """Applies an activation function (a name or a callable)."""

    supports_masking = True

    def __init__(self, activation, **kwargs):
        super().__init__(**kwargs)
        self.activation = activations.get(activation)

    def call(self, inputs):
        return self.activation(inputs)


class Dropout(Layer):
    """Zeroes a `rate` fraction of inputs (scaling the rest) while training."""

    supports_masking = True

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        if not 0 <= rate < 1:
            raise ValueError(f'Layer "{self.name}": rate must be in [0, 1), got {rate}.')
        self.rate = float(rate)
        self.noise_shape = noise_shape
        self.seed = seed

    def call(self, inputs, training=None):
        if self.rate == 0:
            return array_ops.identity(inputs)

        def dropped():
            noise_shape = None
            if self.noise_shape is not None:
                dynamic = array_ops.shape(inputs)
                noise_shape = array_ops.stack(
                    [dynamic[i] if d is None else d for i, d in enumerate(self.noise_shape)]
                )
            return nn_functions.dropout(
                inputs, rate=self.rate, noise_shape=noise_shape, seed=self.seed
            )

        return smart_cond(training_value(training), dropped, lambda: array_ops.identity(inputs))


class Flatten(Layer):
    """Reshapes [batch, d1, d2, ...] to [batch, d1 * d2 * ...]."""

    def __init__(self, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = data_format
        self.input_spec = InputSpec(min_ndim=1)

    def call(self, inputs):
        if self.data_format == "channels_first" and inputs.get_shape().ndims > 2:
            rank = inputs.get_shape().ndims
            inputs = array_ops.transpose(inputs, [0, *range(2, rank), 1])
        dims = inputs.get_shape().as_list()
        if len(dims) == 1:
            return array_ops.expand_dims(inputs, 1)
        rest = dims[1:]
        if all(d is not None for d in rest):
            return array_ops.reshape(inputs, [-1, int(np.prod(rest))])
        return array_ops.reshape(inputs, array_ops.stack([array_ops.shape(inputs)[0], -1]))


class Reshape(Layer):
    """Reshapes each sample to `target_shape` (one entry may be -1)."""

    def __init__(self, target_shape, **kwargs):
        super().__init__(**kwargs)
        self.target_shape = tuple(int(d) for d in target_shape)
        if sum(d == -1 for d in self.target_shape) > 1:
            raise ValueError(
                f'Layer "{self.name}": there can only be one unknown dimension in '
                f"target_shape, got {self.target_shape}."
            )

    def call(self, inputs):
        dims = inputs.get_shape().as_list()[1:]
        if None not in dims:
            size = int(np.prod(dims))
            known = int(np.prod([d for d in self.target_shape if d != -1]))
            if (-1 in self.target_shape and size % known) or (
                -1 not in self.target_shape and size != known
            ):
                raise ValueError(
                    f'Layer "{self.name}": total size of new array must be '
                    f"unchanged, input_shape = {list(dims)}, output_shape = "
                    f"{list(self.target_shape)}"
                )
            batch = inputs.get_shape().as_list()[0]
            return array_ops.reshape(inputs, [-1 if batch is None else batch, *self.target_shape])
        return array_ops.reshape(
            inputs, array_ops.concat([array_ops.shape(inputs)[:1], self.target_shape], 0)
        )


class Lambda(Layer):
    """Wraps `function(inputs, **arguments)` as a layer."""

    def __init__(self, function, output_shape=None, mask=None, arguments=None, **kwargs):
        super().__init__(**kwargs)
        self.function = function
        self.arguments = dict(arguments or {})
        self.mask = mask
        self.supports_masking = mask is not None

    def compute_mask(self, inputs, mask=None):
        """`mask(inputs, input_mask)` when `mask` is a function, else `mask` itself."""
        if callable(self.mask):
            return self.mask(inputs, mask)
        return self.mask

    def call(self, inputs):
        return self.function(inputs, **self.arguments)


class Embedding(Layer):
    """Looks up rows of `embeddings` [input_dim, output_dim] for integer inputs."""

    def __init__(
        self,
        input_dim,
        output_dim,
        embeddings_initializer="uniform",
        embeddings_regularizer=None,
        activity_regularizer=None,
        embeddings_constraint=None,
        mask_zero=False,
        input_length=None,
        **kwargs,
    ):
        if int(input_dim) <= 0 or int(output_dim) <= 0:
            raise ValueError(f"Embedding: input_dim and output_dim must be positive, got "
                             f"input_dim={input_dim}, output_dim={output_dim}")
        if "input_shape" not in kwargs:  # a Sequential model starting here builds at once
            kwargs["input_shape"] = (input_length,) if input_length else (None,)
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        self.input_dim, self.output_dim = int(input_dim), int(output_dim)
        if embeddings_initializer == "uniform":
            embeddings_initializer = initializers.RandomUniform(-0.05, 0.05)
        self.embeddings_initializer = initializers.get(embeddings_initializer)
        self.embeddings_regularizer = embeddings_regularizer
        self.embeddings_constraint = embeddings_constraint
        self.mask_zero = mask_zero
        self.input_length = input_length

    def build(self, input_shape):
        self.embeddings = self.add_weight(
            "embeddings",
            (self.input_dim, self.output_dim),
            initializer=self.embeddings_initializer,
            regularizer=self.embeddings_regularizer,
            constraint=self.embeddings_constraint,
            dtype=backend.floatx(),
        )
        self.built = True

    def call(self, inputs):
        if not inputs.dtype.is_integer:
            inputs = math_ops.cast(inputs, "int32")
        return nn_functions.embedding_lookup(self.embeddings, inputs)

    def compute_output_shape(self, input_shape):
        """`input_shape + (output_dim,)`, the steps after the batch taken from
        `input_length` (an int, or a tuple for N-D inputs) where it names them.

        Raises:
            ValueError: `input_length` disagrees with `input_shape`.
        """
        dims = list(tensor_shape.TensorShape(input_shape).as_list())
        if self.input_length is not None:
            lengths = list(self.input_length) if isinstance(self.input_length, (list, tuple)) \
                else [self.input_length]
            if len(lengths) != len(dims) - 1:
                raise ValueError(f"Embedding: input_length {self.input_length} does not fit "
                                 f"input shape {tuple(dims)}")
            for i, (want, got) in enumerate(zip(lengths, dims[1:])):
                if want is not None and got is not None and want != got:
                    raise ValueError(f"Embedding: input_length {self.input_length} does not "
                                     f"fit input shape {tuple(dims)}")
                dims[i + 1] = got if want is None else want
        return tensor_shape.TensorShape(dims + [self.output_dim])

    def compute_mask(self, inputs, mask=None):
        """With `mask_zero`, the steps whose index is 0 are masked out (padding)."""
        if not self.mask_zero:
            return None
        return math_ops.not_equal(inputs, 0)


class Masking(Layer):
    """Masks the time steps whose features all equal `mask_value` (and zeroes them), so
    downstream layers that support masking (RNNs) skip them."""

    supports_masking = True

    def __init__(self, mask_value=0.0, **kwargs):
        super().__init__(**kwargs)
        self.mask_value = mask_value

    def compute_mask(self, inputs, mask=None):
        return math_ops.reduce_any(math_ops.not_equal(inputs, self.mask_value), axis=-1)

    def compute_output_shape(self, input_shape):
        """The input shape: masking zeroes steps, it does not drop them."""
        return tensor_shape.TensorShape(input_shape)

    def call(self, inputs):
        keep = math_ops.reduce_any(math_ops.not_equal(inputs, self.mask_value), axis=-1,
                                   keepdims=True)
        return inputs * math_ops.cast(keep, inputs.dtype)


class SpatialDropout1D(Dropout):
    """Drops whole channels of [batch, steps, channels] while training."""

    def __init__(self, rate, **kwargs):
        super().__init__(rate, **kwargs)
        self.input_spec = InputSpec(ndim=3)

    def call(self, inputs, training=None):
        self.noise_shape = (None, 1, None)
        return super().call(inputs, training)


class SpatialDropout2D(Dropout):
    """Drops whole channels of [batch, height, width, channels] while training."""

    def __init__(self, rate, data_format=None, **kwargs):
        super().__init__(rate, **kwargs)
        self.input_spec = InputSpec(ndim=4)

    def call(self, inputs, training=None):
        self.noise_shape = (None, 1, 1, None)
        return super().call(inputs, training)


class SpatialDropout3D(Dropout):
    """Drops whole channels of [batch, depth, height, width, channels] while training."""

    def __init__(self, rate, data_format=None, **kwargs):
        super().__init__(rate, **kwargs)
        if data_format not in (None, "channels_last"):
            raise ValueError(f'Layer "{self.name}": only data_format="channels_last" is '
                             "supported.")
        self.input_spec = InputSpec(ndim=5)

    def call(self, inputs, training=None):
        self.noise_shape = (None, 1, 1, 1, None)
        return super().call(inputs, training)


class ActivityRegularization(Layer):
    """Passes its inputs through and adds `l1 * sum(|x|) + l2 * sum(x**2)` (divided by the
    batch size) to the model's losses."""

    supports_masking = True

    def __init__(self, l1=0.0, l2=0.0, **kwargs):
        super().__init__(activity_regularizer=regularizers.L1L2(l1=l1, l2=l2), **kwargs)
        self.l1, self.l2 = float(l1), float(l2)

    def call(self, inputs):
        return array_ops.identity(inputs)
