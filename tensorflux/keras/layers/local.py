"""Keras locally connected layers (TF 1.x): convolutions without weight sharing.

Each output position has its own kernel: `LocallyConnected1D` kernel
[output_length, kernel_size * channels, filters] and bias [output_length, filters];
`LocallyConnected2D` kernel [rows * cols, kh * kw * channels, filters] and bias
[rows, cols, filters]. A patch is flattened in (kernel rows, kernel cols, channels) order.
Only `padding='valid'`, channels_last and implementation 1 (as TF 1.x's default).
"""

from __future__ import annotations

from tensorflux.keras import activations, constraints, initializers, regularizers
from tensorflux.keras.engine.base_layer import InputSpec, Layer
from tensorflux.keras.layers.conv import _tuple
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops

__all__ = ["LocallyConnected1D", "LocallyConnected2D"]


class _LocallyConnected(Layer):
    rank = 1

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None,
                 activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None,
                 implementation=1, **kwargs):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        if str(padding).lower() != "valid":
            raise ValueError(f'Layer "{self.name}": invalid border mode for '
                             f"LocallyConnected{self.rank}D (only \"valid\" is supported): "
                             f"{padding}")
        if data_format not in (None, "channels_last"):
            raise ValueError(f'Layer "{self.name}": only data_format="channels_last" is '
                             "supported.")
        if implementation != 1:
            raise ValueError(f'Layer "{self.name}": only implementation=1 is supported.')
        self.filters = int(filters)
        self.kernel_size = _tuple(kernel_size, self.rank, "kernel_size", self.name)
        self.strides = _tuple(strides, self.rank, "strides", self.name)
        self.padding, self.implementation = "valid", implementation
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.bias_constraint = constraints.get(bias_constraint)
        self.input_spec = InputSpec(ndim=self.rank + 2)

    def build(self, input_shape):
        channels = self._defined_channels(input_shape)
        sizes = input_shape[1:-1]
        if None in sizes:
            raise ValueError(f'Layer "{self.name}": the spatial dimensions of the inputs must '
                             f"be known; found {tuple(input_shape)}.")
        self.output_sizes = tuple((n - k) // s + 1 for n, k, s in
                                  zip(sizes, self.kernel_size, self.strides))
        if min(self.output_sizes) <= 0:
            raise ValueError(f'Layer "{self.name}": the kernel {self.kernel_size} is larger '
                             f"than the input {tuple(sizes)}.")
        positions = 1
        for n in self.output_sizes:
            positions *= n
        patch = channels
        for k in self.kernel_size:
            patch *= k
        self.kernel = self._add_configured_weight("kernel", (positions, patch, self.filters))
        self.bias = self._add_configured_weight(
            "bias", (*self.output_sizes, self.filters)) if self.use_bias else None
        self.input_spec = InputSpec(ndim=self.rank + 2, axes={-1: channels})
        self.built = True

    def _patches(self, inputs):
        """[positions, batch, patch] in row-major position order."""
        patches = []
        grid = [[]]
        for size in self.output_sizes:
            grid = [g + [i] for g in grid for i in range(size)]
        for index in grid:
            window = tuple(slice(i * s, i * s + k) for i, s, k in
                           zip(index, self.strides, self.kernel_size))
            part = inputs[(slice(None), *window, slice(None))]
            patches.append(array_ops.reshape(part, [-1, self.kernel.get_shape()[1].value]))
        return array_ops.stack(patches)

    def call(self, inputs):
        outputs = math_ops.matmul(self._patches(inputs), self.kernel)  # [P, batch, filters]
        outputs = array_ops.transpose(outputs, [1, 0, 2])
        outputs = array_ops.reshape(outputs, [-1, *self.output_sizes, self.filters])
        if self.bias is not None:
            outputs = outputs + self.bias
        return self.activation(outputs)


class LocallyConnected1D(_LocallyConnected):
    """Unshared-weight 1-D convolution over [batch, steps, channels]."""

    rank = 1


class LocallyConnected2D(_LocallyConnected):
    """Unshared-weight 2-D convolution over [batch, rows, cols, channels]."""

    rank = 2

    def __init__(self, filters, kernel_size, strides=(1, 1), **kwargs):
        super().__init__(filters, kernel_size, strides, **kwargs)
