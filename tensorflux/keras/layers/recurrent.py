"""Keras recurrent layers (TF1 graph-mode variants): SimpleRNN, LSTM, GRU.

Each runs one cell over [batch, time, features] with `tf.nn.dynamic_rnn` (a while loop).
Weights follow Keras' layout under `<layer>/<layer>_cell/`: `kernel` [features, k * units],
`recurrent_kernel` [units, k * units] and `bias` [k * units], gate blocks in Keras order
(LSTM: i, f, c, o; GRU: z, r, h with the reset gate applied before the recurrent product).
Defaults are those of TF1 Keras: recurrent_activation='hard_sigmoid', unit_forget_bias=True.
"""

from __future__ import annotations

from tensorflux.framework import dtypes, scopes
from tensorflux.keras import activations, backend, backend_control, initializers
from tensorflux.keras.engine.base_layer import InputSpec, Layer, to_snake_case
from tensorflux.keras.layers.core import smart_cond
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.nn import core as nn_core
from tensorflux.ops.nn import functions as nn_functions
from tensorflux.ops.nn import rnn as nn_rnn

__all__ = ["SimpleRNN", "LSTM", "GRU"]


class _Cell:
    """Adapts a recurrent layer's step function to the RNNCell protocol of dynamic_rnn."""

    def __init__(self, layer):
        self.layer = layer
        self.state_size = tuple([layer.units] * layer.state_count)
        self.output_size = layer.units

    def zero_state(self, batch_size, dtype):
        return tuple(
            array_ops.zeros(array_ops.stack([batch_size, self.layer.units]), dtype=dtype)
            for _ in range(self.layer.state_count)
        )

    def __call__(self, inputs, state):
        return self.layer.step(inputs, state)


class _RNN(Layer):
    gates = 1
    state_count = 1

    def __init__(
        self,
        units,
        activation="tanh",
        use_bias=True,
        kernel_initializer="glorot_uniform",
        recurrent_initializer="orthogonal",
        bias_initializer="zeros",
        kernel_regularizer=None,
        recurrent_regularizer=None,
        bias_regularizer=None,
        activity_regularizer=None,
        kernel_constraint=None,
        recurrent_constraint=None,
        bias_constraint=None,
        dropout=0.0,
        recurrent_dropout=0.0,
        return_sequences=False,
        return_state=False,
        go_backwards=False,
        stateful=False,
        unroll=False,
        time_major=False,
        **kwargs,
    ):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        if stateful:
            raise ValueError(f'Layer "{self.name}": stateful=True is not supported.')
        self.dropout = min(1.0, max(0.0, float(dropout)))
        self.recurrent_dropout = min(1.0, max(0.0, float(recurrent_dropout)))
        self._input_masks = self._state_masks = None
        self.units = int(units)
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.recurrent_initializer = initializers.get(recurrent_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer, self.recurrent_regularizer = (
            kernel_regularizer,
            recurrent_regularizer,
        )
        self.bias_regularizer = bias_regularizer
        self.kernel_constraint, self.recurrent_constraint = (
            kernel_constraint,
            recurrent_constraint,
        )
        self.bias_constraint = bias_constraint
        self.return_sequences, self.return_state = return_sequences, return_state
        self.go_backwards, self.time_major = go_backwards, time_major
        self.input_spec = InputSpec(ndim=3)

    def _bias_initializer(self):
        return self.bias_initializer

    def build(self, input_shape):
        features = input_shape[-1]
        if features is None:
            raise ValueError(
                f'Layer "{self.name}": the feature dimension of the inputs should '
                "be defined. Found None."
            )
        width = self.gates * self.units
        with scopes.name_scope(f"{to_snake_case(type(self).__name__)}_cell"):
            self.kernel = self.add_weight(
                "kernel",
                (features, width),
                initializer=self.kernel_initializer,
                regularizer=self.kernel_regularizer,
                constraint=self.kernel_constraint,
            )
            self.recurrent_kernel = self.add_weight(
                "recurrent_kernel",
                (self.units, width),
                initializer=self.recurrent_initializer,
                regularizer=self.recurrent_regularizer,
                constraint=self.recurrent_constraint,
            )
            self.bias = (
                self.add_weight(
                    "bias",
                    (width,),
                    initializer=self._bias_initializer(),
                    regularizer=self.bias_regularizer,
                    constraint=self.bias_constraint,
                )
                if self.use_bias
                else None
            )
        self.input_spec = InputSpec(ndim=3, axes={-1: features})
        self.built = True

    def _project(self, inputs):
        z = math_ops.matmul(inputs, self.kernel)
        return nn_core.bias_add(z, self.bias) if self.bias is not None else z

    def _gate_inputs(self, inputs) -> list:
        """The input projection of each gate block; with `dropout` in training, each gate
        sees the inputs under its own dropout mask (Keras' implementation 1)."""
        if self._input_masks is None:
            projected = self._project(inputs)
            return [projected] if self.gates == 1 else array_ops.split(projected, self.gates,
                                                                       axis=1)
        kernels = array_ops.split(self.kernel, self.gates, axis=1)
        biases = array_ops.split(self.bias, self.gates) if self.bias is not None else None
        parts = []
        for k, (mask, kernel) in enumerate(zip(self._input_masks, kernels)):
            z = math_ops.matmul(inputs * mask, kernel)
            parts.append(nn_core.bias_add(z, biases[k]) if biases is not None else z)
        return parts

    def _gate_states(self, h) -> list:
        """The previous output as each gate block's recurrent product sees it (under its own
        recurrent-dropout mask in training)."""
        if self._state_masks is None:
            return [h] * self.gates
        return [h * mask for mask in self._state_masks]

    def _dropout_masks(self, like, rate, training):
        """`gates` dropout masks of `like`'s shape, constant over time, ones outside training
        (TF 1.15 Keras draws them once per batch)."""
        if not rate:
            return None
        ones = array_ops.ones_like(like)
        phase = backend.learning_phase() if training is None else training
        return [
            smart_cond(phase, lambda: nn_functions.dropout(ones, rate=rate), lambda: ones)
            for _ in range(self.gates)
        ]

    def compute_mask(self, inputs, mask=None):
        if isinstance(mask, list):
            mask = mask[0]
        output_mask = mask if self.return_sequences else None
        if self.return_state:
            return [output_mask] + [None] * self.state_count
        return output_mask

    supports_masking = True

    def call(self, inputs, mask=None, training=None, initial_state=None):
        if isinstance(mask, list):
            mask = mask[0]
        if initial_state is not None:
            initial_state = tuple(
                initial_state if isinstance(initial_state, (list, tuple)) else [initial_state]
            )
            if len(initial_state) != self.state_count:
                raise ValueError(
                    f'Layer "{self.name}" expects {self.state_count} initial '
                    f"state tensor(s), got {len(initial_state)}."
                )
        batch_major = array_ops.transpose(inputs, [1, 0, 2]) if self.time_major else inputs
        self._input_masks = self._dropout_masks(batch_major[:, 0, :], self.dropout, training)
        self._state_masks = self._dropout_masks(
            array_ops.zeros_like(batch_major[:, 0, :1]) + array_ops.zeros((self.units,)),
            self.recurrent_dropout, training)
        try:
            if mask is not None:
                outputs, states = self._masked_loop(batch_major, mask, initial_state)
            else:
                outputs, states = self._loop(batch_major, initial_state)
        finally:
            self._input_masks = self._state_masks = None
        last = states[0]
        if self.return_sequences:
            result = array_ops.transpose(outputs, [1, 0, 2]) if self.time_major else outputs
        else:
            result = last
        if self.return_state:
            return [result, *states]
        return result

    def _loop(self, inputs, initial_state):
        if self.go_backwards:
            inputs = array_ops.reverse(inputs, [1])
        return nn_rnn.dynamic_rnn(_Cell(self), inputs, initial_state=initial_state,
                                  dtype=dtypes.as_dtype(backend.floatx()))

    def _masked_loop(self, inputs, mask, initial_state):
        """The loop over unmasked steps: a masked step keeps the states and repeats the
        previous output (TF 1.15 Keras)."""
        if initial_state is None:
            zeros = array_ops.zeros_like(inputs[:, 0, :1]) + array_ops.zeros(
                (self.units,), dtype=inputs.dtype)
            initial_state = (zeros,) * self.state_count

        def step(input_t, states):
            output, new_states = self.step(input_t, tuple(states))
            return output, list(new_states)

        _, outputs, states = backend_control.rnn(step, inputs, list(initial_state),
                                                 go_backwards=self.go_backwards, mask=mask)
        return outputs, tuple(states)


class SimpleRNN(_RNN):
    """h_t = activation(x_t @ kernel + h_{t-1} @ recurrent_kernel + bias)."""

    def step(self, inputs, state):
        (x,) = self._gate_inputs(inputs)
        (h_in,) = self._gate_states(state[0])
        h = self.activation(x + math_ops.matmul(h_in, self.recurrent_kernel))
        return h, (h,)


class LSTM(_RNN):
    """Long short-term memory; gate blocks i, f, c, o; states (h, c)."""

    gates = 4
    state_count = 2

    def __init__(self, units, recurrent_activation="hard_sigmoid", unit_forget_bias=True, **kwargs):
        super().__init__(units, **kwargs)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.unit_forget_bias = unit_forget_bias

    def _bias_initializer(self):
        if not self.unit_forget_bias:
            return self.bias_initializer
        base, units = self.bias_initializer, self.units

        def init(shape, dtype=None, partition_info=None):
            return array_ops.concat(
                [
                    base((units,), dtype=dtype),
                    array_ops.ones((units,), dtype=dtype),
                    base((2 * units,), dtype=dtype),
                ],
                0,
            )

        return init

    def step(self, inputs, state):
        h, c = state
        if self._input_masks is None and self._state_masks is None:
            z = self._project(inputs) + math_ops.matmul(h, self.recurrent_kernel)
            zi, zf, zc, zo = array_ops.split(z, 4, axis=1)
        else:
            recurrent = array_ops.split(self.recurrent_kernel, 4, axis=1)
            zi, zf, zc, zo = (x + math_ops.matmul(hk, rk) for x, hk, rk in zip(
                self._gate_inputs(inputs), self._gate_states(h), recurrent))
        i = self.recurrent_activation(zi)
        f = self.recurrent_activation(zf)
        c = f * c + i * self.activation(zc)
        h = self.recurrent_activation(zo) * self.activation(c)
        return h, (h, c)


class GRU(_RNN):
    """Gated recurrent unit (reset_after=False); gate blocks z, r, h."""

    gates = 3

    def __init__(self, units, recurrent_activation="hard_sigmoid", reset_after=False, **kwargs):
        super().__init__(units, **kwargs)
        if reset_after:
            raise ValueError(f'Layer "{self.name}": reset_after=True is not supported.')
        self.recurrent_activation = activations.get(recurrent_activation)

    def step(self, inputs, state):
        h = state[0]
        xz, xr, xh = self._gate_inputs(inputs)
        hz, hr, hh = self._gate_states(h)
        rz, rr, rh = array_ops.split(self.recurrent_kernel, 3, axis=1)
        z = self.recurrent_activation(xz + math_ops.matmul(hz, rz))
        r = self.recurrent_activation(xr + math_ops.matmul(hr, rr))
        candidate = self.activation(xh + math_ops.matmul(r * hh, rh))
        h = z * h + (1.0 - z) * candidate
        return h, (h,)
