"""`ConvLSTM2D` (TF 1.x `tf.keras.layers`): an LSTM whose input and recurrent transforms are
2-D convolutions, over [batch, time, rows, cols, channels] (channels_last).

Weights: `kernel` [kh, kw, channels, 4 * filters] (the input convolution, with the layer's
strides, padding and dilation) and `recurrent_kernel` [kh, kw, filters, 4 * filters] (stride
1, 'same' padding), `bias` [4 * filters]; gate blocks i, f, c, o as LSTM. States (h, c) are
[batch, out_rows, out_cols, filters].
"""

from __future__ import annotations

from tensorflux.keras import backend_nn
from tensorflux.keras.engine.base_layer import InputSpec
from tensorflux.keras.layers.conv import _padding, _tuple
from tensorflux.keras.layers.recurrent_cells import RNN, LSTMCell
from tensorflux.ops import array as array_ops

__all__ = ["ConvLSTM2D"]


class _ConvLSTM2DCell(LSTMCell):
    """The step of ConvLSTM2D (LSTMCell's gates and dropout with convolutions)."""

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid",
                 dilation_rate=(1, 1), **kwargs):
        super().__init__(filters, **kwargs)
        self.filters = self.units
        self.kernel_size = _tuple(kernel_size, 2, "kernel_size", self.name)
        self.strides = _tuple(strides, 2, "strides", self.name)
        self.padding = _padding(padding, self.name)
        self.dilation_rate = _tuple(dilation_rate, 2, "dilation_rate", self.name)

    def build(self, input_shape):
        channels = input_shape[-1]
        if channels is None:
            raise ValueError(f'Layer "{self.name}": the channel dimension of the inputs should '
                             "be defined. Found None.")
        width = 4 * self.units
        self.kernel = self.add_weight("kernel", (*self.kernel_size, channels, width),
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.recurrent_kernel = self.add_weight(
            "recurrent_kernel", (*self.kernel_size, self.units, width),
            initializer=self.recurrent_initializer, regularizer=self.recurrent_regularizer,
            constraint=self.recurrent_constraint)
        self.bias = self.add_weight("bias", (width,), initializer=self._bias_init(),
                                    regularizer=self.bias_regularizer,
                                    constraint=self.bias_constraint) if self.use_bias else None
        self.built = True

    def call(self, inputs, states, training=None):
        h, c = states[0], states[1]
        in_masks = self.get_dropout_mask_for_cell(inputs, training, 4)
        rec_masks = self.get_recurrent_dropout_mask_for_cell(h, training, 4)
        kernels = array_ops.split(self.kernel, 4, axis=3)
        recurrent = array_ops.split(self.recurrent_kernel, 4, axis=3)
        biases = array_ops.split(self.bias, 4) if self.bias is not None else [None] * 4
        z = []
        for k in range(4):
            x = inputs * in_masks[k] if in_masks is not None else inputs
            hk = h * rec_masks[k] if rec_masks is not None else h
            part = backend_nn.conv2d(x, kernels[k], strides=self.strides, padding=self.padding,
                                     dilation_rate=self.dilation_rate)
            if biases[k] is not None:
                part = backend_nn.bias_add(part, biases[k])
            z.append(part + backend_nn.conv2d(hk, recurrent[k], padding="same"))
        i = self.recurrent_activation(z[0])
        f = self.recurrent_activation(z[1])
        c = f * c + i * self.activation(z[2])
        h = self.recurrent_activation(z[3]) * self.activation(c)
        return h, [h, c]


class ConvLSTM2D(RNN):
    """Convolutional LSTM over [batch, time, rows, cols, channels].

    Args: as TF 1.x (filters, kernel_size, strides, padding, data_format='channels_last' only,
    dilation_rate, activation, recurrent_activation='hard_sigmoid', use_bias, initializers,
    unit_forget_bias, regularizers, constraints, return_sequences, go_backwards, dropout,
    recurrent_dropout); `stateful=True` is not supported.
    """

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", data_format=None,
                 dilation_rate=(1, 1), activation="tanh", recurrent_activation="hard_sigmoid",
                 use_bias=True, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros",
                 unit_forget_bias=True, kernel_regularizer=None, recurrent_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 recurrent_constraint=None, bias_constraint=None, return_sequences=False,
                 go_backwards=False, stateful=False, dropout=0.0, recurrent_dropout=0.0,
                 **kwargs):
        if data_format not in (None, "channels_last"):
            raise ValueError('ConvLSTM2D: only data_format="channels_last" is supported.')
        cell = _ConvLSTM2DCell(
            filters, kernel_size, strides=strides, padding=padding, dilation_rate=dilation_rate,
            activation=activation, recurrent_activation=recurrent_activation,
            use_bias=use_bias, kernel_initializer=kernel_initializer,
            recurrent_initializer=recurrent_initializer, bias_initializer=bias_initializer,
            unit_forget_bias=unit_forget_bias, kernel_regularizer=kernel_regularizer,
            recurrent_regularizer=recurrent_regularizer, bias_regularizer=bias_regularizer,
            kernel_constraint=kernel_constraint, recurrent_constraint=recurrent_constraint,
            bias_constraint=bias_constraint, dropout=dropout,
            recurrent_dropout=recurrent_dropout, name="conv_lstm2d_cell")
        super().__init__(cell, return_sequences=return_sequences, go_backwards=go_backwards,
                         stateful=stateful, activity_regularizer=activity_regularizer,
                         **kwargs)
        self.input_spec = InputSpec(ndim=5)

    def get_initial_state(self, inputs):
        """Zero states of the input convolution's output shape."""
        cell = self.cell
        first = array_ops.zeros_like(inputs[:, 0])
        shape = first.get_shape().as_list()
        zero_kernel = array_ops.zeros((*cell.kernel_size, shape[-1], cell.units),
                                      dtype=inputs.dtype)
        state = backend_nn.conv2d(first, zero_kernel, strides=cell.strides,
                                  padding=cell.padding, dilation_rate=cell.dilation_rate)
        return [state, state]

    def get_config(self):
        config = super().get_config()
        config.pop("cell", None)
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        return cls(**config)
