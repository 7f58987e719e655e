"""`CuDNNLSTM` and `CuDNNGRU` (TF 1.x `tf.keras.layers`), computed on the CPU.

They keep the cuDNN layer's weights and equations so models written (and checkpoints saved)
for them load and run: `kernel` [features, k * units], `recurrent_kernel` [units, k * units]
and `bias` [2 * k * units] (input biases, then recurrent biases), gates with the logistic
sigmoid. LSTM gate order i, f, c, o; GRU z, r, h with the reset gate applied after the
recurrent product (the candidate is tanh(x W_h + b_h + r * (h U_h + b_rh))). No masking,
dropout or `stateful` (as cuDNN).
"""

from __future__ import annotations

from tensorflux.keras import backend_control, constraints, initializers, regularizers
from tensorflux.keras.engine.base_layer import InputSpec, Layer
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops

__all__ = ["CuDNNLSTM", "CuDNNGRU"]


class _CuDNNRNN(Layer):
    gates = 4
    state_count = 2

    def __init__(self, units, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros",
                 kernel_regularizer=None, recurrent_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, recurrent_constraint=None,
                 bias_constraint=None, return_sequences=False, return_state=False,
                 go_backwards=False, stateful=False, **kwargs):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        if stateful:
            raise ValueError(f'Layer "{self.name}": stateful=True is not supported.')
        self.units = int(units)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.recurrent_initializer = initializers.get(recurrent_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.recurrent_regularizer = regularizers.get(recurrent_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.recurrent_constraint = constraints.get(recurrent_constraint)
        self.bias_constraint = constraints.get(bias_constraint)
        self.return_sequences, self.return_state = return_sequences, return_state
        self.go_backwards, self.stateful = go_backwards, stateful
        self.input_spec = InputSpec(ndim=3)

    def _bias_init(self):
        return self.bias_initializer

    def build(self, input_shape):
        features = input_shape[-1]
        if features is None:
            raise ValueError(f'Layer "{self.name}": the feature dimension of the inputs should '
                             "be defined. Found None.")
        width = self.gates * self.units
        self.kernel = self._add_configured_weight("kernel", (features, width))
        self.recurrent_kernel = self._add_configured_weight("recurrent_kernel",
                                                            (self.units, width), "recurrent")
        self.bias = self.add_weight("bias", (2 * width,), initializer=self._bias_init(),
                                    regularizer=self.bias_regularizer,
                                    constraint=self.bias_constraint)
        self.input_spec = InputSpec(ndim=3, axes={-1: features})
        self.built = True

    def call(self, inputs, training=None, initial_state=None):
        if initial_state is None:
            zeros = array_ops.zeros_like(inputs[:, 0, :1]) + array_ops.zeros(
                (self.units,), dtype=inputs.dtype)
            initial_state = [zeros] * self.state_count
        else:
            initial_state = list(initial_state) if isinstance(initial_state, (list, tuple)) \
                else [initial_state]
            if len(initial_state) != self.state_count:
                raise ValueError(f'Layer "{self.name}" expects {self.state_count} initial '
                                 f"state tensor(s), got {len(initial_state)}.")
        input_bias, recurrent_bias = array_ops.split(self.bias, 2)

        def step(x, states):
            x_part = math_ops.matmul(x, self.kernel) + input_bias
            h_part = math_ops.matmul(states[0], self.recurrent_kernel) + recurrent_bias
            output, new_states = self._step(x_part, h_part, states)
            return output, new_states

        last, outputs, states = backend_control.rnn(step, inputs, initial_state,
                                                    go_backwards=self.go_backwards)
        result = outputs if self.return_sequences else last
        if self.return_sequences:
            result.set_shape(inputs.get_shape().as_list()[:2] + [self.units])
        return [result, *states] if self.return_state else result


class CuDNNLSTM(_CuDNNRNN):
    """The cuDNN LSTM: gates i, f, c, o (sigmoid), states [h, c]; `unit_forget_bias` starts
    the recurrent forget-gate bias at one."""

    def __init__(self, units, unit_forget_bias=True, **kwargs):
        super().__init__(units, **kwargs)
        self.unit_forget_bias = unit_forget_bias

    def _bias_init(self):
        if not self.unit_forget_bias:
            return self.bias_initializer
        base, units = self.bias_initializer, self.units

        def init(shape, dtype=None, partition_info=None):
            return array_ops.concat([base((5 * units,), dtype=dtype),
                                     array_ops.ones((units,), dtype=dtype),
                                     base((2 * units,), dtype=dtype)], 0)

        return init

    def _step(self, x_part, h_part, states):
        zi, zf, zc, zo = array_ops.split(x_part + h_part, 4, axis=1)
        c = math_ops.sigmoid(zf) * states[1] + math_ops.sigmoid(zi) * math_ops.tanh(zc)
        h = math_ops.sigmoid(zo) * math_ops.tanh(c)
        return h, [h, c]


class CuDNNGRU(_CuDNNRNN):
    """The cuDNN GRU: gates z, r, h (sigmoid), the reset gate applied after the recurrent
    product; state [h]."""

    gates = 3
    state_count = 1

    def _step(self, x_part, h_part, states):
        xz, xr, xh = array_ops.split(x_part, 3, axis=1)
        hz, hr, hh = array_ops.split(h_part, 3, axis=1)
        z = math_ops.sigmoid(xz + hz)
        r = math_ops.sigmoid(xr + hr)
        candidate = math_ops.tanh(xh + r * hh)
        h = z * states[0] + (1.0 - z) * candidate
        return h, [h]
