"""Keras recurrent layers (TF1 graph-mode variants): SimpleRNN, LSTM, GRU.

Each runs one cell over [batch, time, features] with `tf.nn.dynamic_rnn` (a while loop).
Weights follow Keras' layout under `<layer>/<layer>_cell/`: `kernel` [features, k * units],
`recurrent_kernel` [units, k * units] and `bias` [k * units], gate blocks in Keras order
(LSTM: i, f, c, o; GRU: z, r, h with the reset gate applied before the recurrent product).
Defaults are those of TF1 Keras: recurrent_activation='hard_sigmoid', unit_forget_bias=True.
"""

from __future__ import annotations

from tensorflux.framework import dtypes, scopes
from tensorflux.keras import activations, backend, initializers
from tensorflux.keras.engine.base_layer import InputSpec, Layer, to_snake_case
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.nn import core as nn_core
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
        if dropout or recurrent_dropout or stateful:
            raise ValueError(
                f'Layer "{self.name}": dropout, recurrent_dropout and stateful are not supported.'
            )
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

    def call(self, inputs, initial_state=None):
        if self.time_major:
            inputs = array_ops.transpose(inputs, [1, 0, 2])
        if self.go_backwards:
            inputs = array_ops.reverse(inputs, [1])
        if initial_state is not None:
            initial_state = tuple(
                initial_state if isinstance(initial_state, (list, tuple)) else [initial_state]
            )
            if len(initial_state) != self.state_count:
                raise ValueError(
                    f'Layer "{self.name}" expects {self.state_count} initial '
                    f"state tensor(s), got {len(initial_state)}."
                )
        outputs, states = nn_rnn.dynamic_rnn(
            _Cell(self),
            inputs,
            initial_state=initial_state,
            dtype=dtypes.as_dtype(backend.floatx()),
        )
        last = states[0]
        if self.return_sequences:
            result = array_ops.transpose(outputs, [1, 0, 2]) if self.time_major else outputs
        else:
            result = last
        if self.return_state:
            return [result, *states]
        return result


class SimpleRNN(_RNN):
    """h_t = activation(x_t @ kernel + h_{t-1} @ recurrent_kernel + bias)."""

    def step(self, inputs, state):
        h = self.activation(
            self._project(inputs) + math_ops.matmul(state[0], self.recurrent_kernel)
        )
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
        z = self._project(inputs) + math_ops.matmul(h, self.recurrent_kernel)
        zi, zf, zc, zo = array_ops.split(z, 4, axis=1)
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
        xz, xr, xh = array_ops.split(self._project(inputs), 3, axis=1)
        rz, rr, rh = array_ops.split(self.recurrent_kernel, 3, axis=1)
        z = self.recurrent_activation(xz + math_ops.matmul(h, rz))
        r = self.recurrent_activation(xr + math_ops.matmul(h, rr))
        candidate = self.activation(xh + math_ops.matmul(r * h, rh))
        h = z * h + (1.0 - z) * candidate
        return h, (h,)
