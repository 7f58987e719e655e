"""`tf.contrib.rnn.ConvLSTMCell` (and Conv1D/2D/3D variants): an LSTM whose gates are "SAME"
convolutions over [inputs, hidden] (Shi et al. 2015). Variables `kernel` (filter shape +
[in + out channels, 4 out channels]) and `biases`."""

from __future__ import annotations

from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.layers.rnn_cell import LSTMStateTuple, RNNCell
from tensorflux.ops import array as array_ops
from tensorflux.ops.array import concat_split as concat_ops
from tensorflux.ops.math import unary as unary_ops
from tensorflux.ops.nn import conv as conv_ops
from tensorflux.ops.nn import conv1d as nn_conv1d
from tensorflux.ops.nn import conv3d as conv3d_ops
from tensorflux.ops.state import initializers as init_ops

__all__ = ["ConvLSTMCell", "Conv1DLSTMCell", "Conv2DLSTMCell", "Conv3DLSTMCell"]


class ConvLSTMCell(RNNCell):
    """Convolutional LSTM over inputs [batch] + `input_shape` (spatial dims + channels).

    Args:
        conv_ndims: 1, 2 or 3 spatial dimensions.
        input_shape: per-example input shape, channels last.
        output_channels: channels of the hidden state.
        kernel_shape: the convolution's spatial filter shape.
        use_bias: add `biases` to the gates.
        skip_connection: concatenate the inputs to the output.
        forget_bias: added to the forget gate.
    """

    _default_name = "conv_lstm_cell"

    def __init__(self, conv_ndims, input_shape, output_channels, kernel_shape, use_bias=True,
                 skip_connection=False, forget_bias=1.0, initializers=None,
                 name="conv_lstm_cell"):
        super().__init__()
        self._default_name = name  # uniquified (conv_lstm_cell, conv_lstm_cell_1), as TF1
        if conv_ndims not in (1, 2, 3):
            raise ValueError(f"conv_ndims must be 1, 2 or 3, got {conv_ndims}")
        if len(input_shape) - 1 != conv_ndims:
            raise ValueError(f"Invalid input_shape {input_shape} for {conv_ndims}D convolution")
        self._conv_ndims = conv_ndims
        self._input_shape = list(input_shape)
        self._output_channels = output_channels
        self._kernel_shape = list(kernel_shape)
        self._use_bias = use_bias
        self._forget_bias = forget_bias
        self._skip_connection = skip_connection
        self._initializer = initializers
        total = output_channels + (self._input_shape[-1] if skip_connection else 0)
        state = TensorShape(self._input_shape[:-1] + [output_channels])
        self._state_size = LSTMStateTuple(state, state)
        self._output_size = TensorShape(self._input_shape[:-1] + [total])

    @property
    def state_size(self):
        return self._state_size

    @property
    def output_size(self):
        return self._output_size

    def zero_state(self, batch_size, dtype):
        shape = [batch_size] + self._input_shape[:-1] + [self._output_channels]
        zeros = array_ops.zeros(shape, dtype=dtype)
        return LSTMStateTuple(zeros, zeros)

    def build(self, input_shape):
        channels = self._input_shape[-1] + self._output_channels
        self._kernel = self.add_variable(
            "kernel", self._kernel_shape + [channels, 4 * self._output_channels],
            initializer=self._initializer)
        self._biases = self.add_variable("biases", [4 * self._output_channels],
                                         initializer=init_ops.zeros_initializer()) \
            if self._use_bias else None
        self.built = True

    def _conv(self, x):
        if self._conv_ndims == 1:
            return nn_conv1d.conv1d(x, self._kernel, 1, padding="SAME")
        strides = [1] * (self._conv_ndims + 2)
        if self._conv_ndims == 2:
            return conv_ops.conv2d(x, self._kernel, strides, padding="SAME")
        return conv3d_ops.conv3d(x, self._kernel, strides, padding="SAME")

    def call(self, inputs, state):
        cell, hidden = state
        gates = self._conv(concat_ops.concat([inputs, hidden], self._conv_ndims + 1))
        if self._biases is not None:
            gates = gates + self._biases
        i, j, f, o = concat_ops.split(gates, 4, axis=self._conv_ndims + 1)
        new_cell = unary_ops.sigmoid(f + self._forget_bias) * cell \
            + unary_ops.sigmoid(i) * unary_ops.tanh(j)
        output = unary_ops.tanh(new_cell) * unary_ops.sigmoid(o)
        new_state = LSTMStateTuple(new_cell, output)
        if self._skip_connection:
            output = concat_ops.concat([output, inputs], axis=-1)
        return output, new_state


class Conv1DLSTMCell(ConvLSTMCell):
    """1-D convolutional LSTM (`conv_1d_lstm_cell`)."""

    def __init__(self, name="conv_1d_lstm_cell", **kwargs):
        super().__init__(conv_ndims=1, name=name, **kwargs)


class Conv2DLSTMCell(ConvLSTMCell):
    """2-D convolutional LSTM (`conv_2d_lstm_cell`)."""

    def __init__(self, name="conv_2d_lstm_cell", **kwargs):
        super().__init__(conv_ndims=2, name=name, **kwargs)


class Conv3DLSTMCell(ConvLSTMCell):
    """3-D convolutional LSTM (`conv_3d_lstm_cell`)."""

    def __init__(self, name="conv_3d_lstm_cell", **kwargs):
        super().__init__(conv_ndims=3, name=name, **kwargs)
