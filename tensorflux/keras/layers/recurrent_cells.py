"""Keras recurrent cells and the generic `RNN` layer (TF 1.15 `tf.keras.layers`).

A cell is a layer with `call(inputs, states) -> (output, new_states)` and a `state_size`
(an int or a list of ints, one per state); `RNN(cell)` runs it over the time axis with
`keras.backend.rnn` (masks, `go_backwards`, `unroll`, `constants`). `SimpleRNNCell`, `LSTMCell`
and `GRUCell` keep the weight layout of the SimpleRNN/LSTM/GRU layers: `kernel`
[features, k * units], `recurrent_kernel` [units, k * units], `bias` [k * units] (GRU with
`reset_after`: [2, 3 * units], input bias then recurrent bias), gate blocks LSTM i, f, c, o and
GRU z, r, h. Dropout masks are drawn once per call of the RNN layer (constant over time).
"""

from __future__ import annotations

import inspect

from tensorflux.framework import nest, tensor_shape
from tensorflux.keras import activations, backend, backend_control, initializers
from tensorflux.keras.engine.base_layer import InputSpec, Layer
from tensorflux.keras.layers.core import smart_cond
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.nn import core as nn_core
from tensorflux.ops.nn import functions as nn_functions

__all__ = ["AbstractRNNCell", "SimpleRNNCell", "LSTMCell", "GRUCell", "StackedRNNCells", "RNN",
           "fresh_cell"]


def _state_sizes(state_size) -> list:
    """The flat list of state widths (ints) of a (possibly nested) `state_size`."""
    if isinstance(state_size, tensor_shape.TensorShape):
        return [state_size.as_list()[-1]]
    flat = nest.flatten(state_size)
    return [int(getattr(s, "value", s)) for s in flat]


def _zero_states(state_size, batch_size, dtype) -> list:
    return [array_ops.zeros(array_ops.stack([batch_size, width]), dtype=dtype)
            for width in _state_sizes(state_size)]


class AbstractRNNCell(Layer):
    """Base of Keras RNN cells: subclasses define `state_size`, `output_size`, and
    `call(inputs, states)` returning `(output, new_states)`."""

    @property
    def state_size(self):
        raise NotImplementedError("Abstract method")

    @property
    def output_size(self):
        raise NotImplementedError("Abstract method")

    def get_initial_state(self, inputs=None, batch_size=None, dtype=None):
        """Zero states, one [batch, width] tensor per state."""
        if inputs is not None:
            batch_size = array_ops.shape(inputs)[0]
            dtype = inputs.dtype
        return _zero_states(self.state_size, batch_size, dtype or backend.floatx())


class _DropoutCell(AbstractRNNCell):
    """Shared parts of the built-in cells: weights, dropout masks cached per RNN call."""

    gates = 1

    def __init__(self, units, activation="tanh", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", kernel_regularizer=None, recurrent_regularizer=None,
                 bias_regularizer=None, kernel_constraint=None, recurrent_constraint=None,
                 bias_constraint=None, dropout=0.0, recurrent_dropout=0.0, **kwargs):
        super().__init__(**kwargs)
        if int(units) <= 0:
            raise ValueError(f'Layer "{self.name}": units must be positive, got {units}.')
        self.units = int(units)
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.recurrent_initializer = initializers.get(recurrent_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = kernel_regularizer
        self.recurrent_regularizer = recurrent_regularizer
        self.bias_regularizer = bias_regularizer
        self.kernel_constraint = kernel_constraint
        self.recurrent_constraint = recurrent_constraint
        self.bias_constraint = bias_constraint
        self.dropout = min(1.0, max(0.0, float(dropout)))
        self.recurrent_dropout = min(1.0, max(0.0, float(recurrent_dropout)))
        self._dropout_mask = self._recurrent_dropout_mask = None

    @property
    def state_size(self):
        return self.units

    @property
    def output_size(self):
        return self.units

    def _bias_shape(self):
        return (self.gates * self.units,)

    def _bias_init(self):
        return self.bias_initializer

    def build(self, input_shape):
        features = input_shape[-1]
        if features is None:
            raise ValueError(f'Layer "{self.name}": the feature dimension of the inputs should '
                             "be defined. Found None.")
        width = self.gates * self.units
        self.kernel = self.add_weight("kernel", (features, width),
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.recurrent_kernel = self.add_weight("recurrent_kernel", (self.units, width),
                                                initializer=self.recurrent_initializer,
                                                regularizer=self.recurrent_regularizer,
                                                constraint=self.recurrent_constraint)
        self.bias = self.add_weight("bias", self._bias_shape(), initializer=self._bias_init(),
                                    regularizer=self.bias_regularizer,
                                    constraint=self.bias_constraint) if self.use_bias else None
        self.built = True

    # -- dropout masks (TF 1.15 DropoutRNNCellMixin) ----------------------------------------

    def reset_dropout_mask(self):
        self._dropout_mask = None

    def reset_recurrent_dropout_mask(self):
        self._recurrent_dropout_mask = None

    def _masks(self, like, rate, training, count):
        ones = array_ops.ones_like(like)
        phase = backend.learning_phase() if training is None else training
        return [smart_cond(phase, lambda: nn_functions.dropout(ones, rate=rate), lambda: ones)
                for _ in range(count)]

    def get_dropout_mask_for_cell(self, inputs, training, count=1):
        """`count` dropout masks of `inputs`' shape (ones outside training), None without
        dropout; cached until `reset_dropout_mask`."""
        if not self.dropout:
            return None
        if self._dropout_mask is None:
            self._dropout_mask = self._masks(inputs, self.dropout, training, count)
        return self._dropout_mask

    def get_recurrent_dropout_mask_for_cell(self, inputs, training, count=1):
        """As `get_dropout_mask_for_cell` for the previous output with `recurrent_dropout`."""
        if not self.recurrent_dropout:
            return None
        if self._recurrent_dropout_mask is None:
            self._recurrent_dropout_mask = self._masks(inputs, self.recurrent_dropout, training,
                                                       count)
        return self._recurrent_dropout_mask

    def _gate_inputs(self, inputs, training, bias):
        """Each gate block's input projection (with its own dropout mask in training)."""
        masks = self.get_dropout_mask_for_cell(inputs, training, self.gates)
        if masks is None:
            z = math_ops.matmul(inputs, self.kernel)
            z = nn_core.bias_add(z, bias) if bias is not None else z
            return array_ops.split(z, self.gates, axis=1) if self.gates > 1 else [z]
        kernels = array_ops.split(self.kernel, self.gates, axis=1)
        biases = array_ops.split(bias, self.gates) if bias is not None else [None] * self.gates
        parts = []
        for mask, kernel, b in zip(masks, kernels, biases):
            z = math_ops.matmul(inputs * mask, kernel)
            parts.append(nn_core.bias_add(z, b) if b is not None else z)
        return parts

    def _gate_states(self, h, training):
        masks = self.get_recurrent_dropout_mask_for_cell(h, training, self.gates)
        return [h] * self.gates if masks is None else [h * m for m in masks]


class SimpleRNNCell(_DropoutCell):
    """h_t = activation(x_t @ kernel + bias + h_{t-1} @ recurrent_kernel)."""

    def call(self, inputs, states, training=None):
        prev = states[0] if isinstance(states, (list, tuple)) else states
        (x,) = self._gate_inputs(inputs, training, self.bias)
        (h_in,) = self._gate_states(prev, training)
        output = self.activation(x + math_ops.matmul(h_in, self.recurrent_kernel))
        return output, [output]


class LSTMCell(_DropoutCell):
    """LSTM cell: gate blocks i, f, c, o; states [h, c]; `unit_forget_bias` starts the forget
    gate's bias at one."""

    gates = 4

    def __init__(self, units, activation="tanh", recurrent_activation="hard_sigmoid",
                 use_bias=True, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros",
                 unit_forget_bias=True, kernel_regularizer=None, recurrent_regularizer=None,
                 bias_regularizer=None, kernel_constraint=None, recurrent_constraint=None,
                 bias_constraint=None, dropout=0.0, recurrent_dropout=0.0, implementation=1,
                 **kwargs):
        super().__init__(units, activation=activation, use_bias=use_bias,
                         kernel_initializer=kernel_initializer,
                         recurrent_initializer=recurrent_initializer,
                         bias_initializer=bias_initializer,
                         kernel_regularizer=kernel_regularizer,
                         recurrent_regularizer=recurrent_regularizer,
                         bias_regularizer=bias_regularizer, kernel_constraint=kernel_constraint,
                         recurrent_constraint=recurrent_constraint,
                         bias_constraint=bias_constraint, dropout=dropout,
                         recurrent_dropout=recurrent_dropout, **kwargs)
        if implementation not in (1, 2):
            raise ValueError(f'Layer "{self.name}": implementation must be 1 or 2.')
        self.recurrent_activation = activations.get(recurrent_activation)
        self.unit_forget_bias = unit_forget_bias
        self.implementation = implementation

    @property
    def state_size(self):
        return [self.units, self.units]

    def _bias_init(self):
        if not self.unit_forget_bias:
            return self.bias_initializer
        base, units = self.bias_initializer, self.units

        def init(shape, dtype=None, partition_info=None):
            return array_ops.concat([base((units,), dtype=dtype),
                                     array_ops.ones((units,), dtype=dtype),
                                     base((2 * units,), dtype=dtype)], 0)

        return init

    def call(self, inputs, states, training=None):
        h, c = states[0], states[1]
        xi, xf, xc, xo = self._gate_inputs(inputs, training, self.bias)
        recurrent = array_ops.split(self.recurrent_kernel, 4, axis=1)
        zi, zf, zc, zo = (x + math_ops.matmul(hk, rk) for x, hk, rk in
                          zip((xi, xf, xc, xo), self._gate_states(h, training), recurrent))
        i = self.recurrent_activation(zi)
        f = self.recurrent_activation(zf)
        c = f * c + i * self.activation(zc)
        h = self.recurrent_activation(zo) * self.activation(c)
        return h, [h, c]


class GRUCell(_DropoutCell):
    """GRU cell: gate blocks z, r, h; `reset_after=False` (TF 1.x default) applies the reset
    gate before the recurrent product, `reset_after=True` after it (bias [2, 3 * units])."""

    gates = 3

    def __init__(self, units, activation="tanh", recurrent_activation="hard_sigmoid",
                 use_bias=True, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros",
                 kernel_regularizer=None, recurrent_regularizer=None, bias_regularizer=None,
                 kernel_constraint=None, recurrent_constraint=None, bias_constraint=None,
                 dropout=0.0, recurrent_dropout=0.0, implementation=1, reset_after=False,
                 **kwargs):
        super().__init__(units, activation=activation, use_bias=use_bias,
                         kernel_initializer=kernel_initializer,
                         recurrent_initializer=recurrent_initializer,
                         bias_initializer=bias_initializer,
                         kernel_regularizer=kernel_regularizer,
                         recurrent_regularizer=recurrent_regularizer,
                         bias_regularizer=bias_regularizer, kernel_constraint=kernel_constraint,
                         recurrent_constraint=recurrent_constraint,
                         bias_constraint=bias_constraint, dropout=dropout,
                         recurrent_dropout=recurrent_dropout, **kwargs)
        if implementation not in (1, 2):
            raise ValueError(f'Layer "{self.name}": implementation must be 1 or 2.')
        self.recurrent_activation = activations.get(recurrent_activation)
        self.implementation = implementation
        self.reset_after = reset_after

    def _bias_shape(self):
        return (2, 3 * self.units) if self.reset_after else (3 * self.units,)

    def call(self, inputs, states, training=None):
        h = states[0] if isinstance(states, (list, tuple)) else states
        if self.bias is None:
            input_bias = recurrent_bias = None
        elif self.reset_after:
            input_bias, recurrent_bias = array_ops.unstack(self.bias)
        else:
            input_bias, recurrent_bias = self.bias, None
        xz, xr, xh = self._gate_inputs(inputs, training, input_bias)
        hz, hr, hh = self._gate_states(h, training)
        rz, rr, rh = array_ops.split(self.recurrent_kernel, 3, axis=1)
        rb = array_ops.split(recurrent_bias, 3) if recurrent_bias is not None else None

        def recurrent(state, kernel, k):
            product = math_ops.matmul(state, kernel)
            return product + rb[k] if rb is not None else product

        z = self.recurrent_activation(xz + recurrent(hz, rz, 0))
        r = self.recurrent_activation(xr + recurrent(hr, rr, 1))
        if self.reset_after:
            candidate = self.activation(xh + r * recurrent(hh, rh, 2))
        else:
            candidate = self.activation(xh + math_ops.matmul(r * hh, rh))
        h = z * h + (1.0 - z) * candidate
        return h, [h]


class StackedRNNCells(Layer):
    """Cells run one after the other at each step: each cell's output is the next one's
    input; the states are the cells' states in order (flattened)."""

    def __init__(self, cells, **kwargs):
        for cell in cells:
            if not hasattr(cell, "call"):
                raise ValueError(f"All cells must have a `call` method. Received cell: {cell}")
            if not hasattr(cell, "state_size"):
                raise ValueError("All cells must have a `state_size` attribute. "
                                 f"Received cell: {cell}")
        self.reverse_state_order = kwargs.pop("reverse_state_order", False)
        super().__init__(**kwargs)
        self.cells = list(cells)

    def _sublayers(self):
        return [c for c in self.cells if isinstance(c, Layer)]

    @property
    def state_size(self):
        return tuple(cell.state_size for cell in self.cells)

    @property
    def output_size(self):
        last = self.cells[-1]
        return getattr(last, "output_size", _state_sizes(last.state_size)[0])

    def get_initial_state(self, inputs=None, batch_size=None, dtype=None):
        states = []
        for cell in self.cells:
            if hasattr(cell, "get_initial_state"):
                states += nest.flatten(cell.get_initial_state(inputs, batch_size, dtype))
            else:
                states += _zero_states(cell.state_size, batch_size, dtype)
        return states

    def build(self, input_shape):
        for cell in self.cells:
            if isinstance(cell, Layer) and not cell.built:
                with backend.name_scope(cell.name):
                    cell.build(input_shape)
                cell.built = True
            width = getattr(cell, "output_size", None)
            width = width if width is not None else _state_sizes(cell.state_size)[0]
            input_shape = (input_shape[0], int(getattr(width, "value", width)))
        self.built = True

    def call(self, inputs, states, constants=None, training=None, **kwargs):
        flat = list(nest.flatten(states))
        new_states = []
        for cell in self.cells:
            count = len(_state_sizes(cell.state_size))
            cell_states, flat = flat[:count], flat[count:]
            inputs, out_states = _call_cell(cell, inputs, cell_states, training, constants)
            new_states += list(nest.flatten(out_states))
        return inputs, new_states

    def get_config(self):
        config = super().get_config()
        config["cells"] = [{"class_name": type(cell).__name__, "config": cell.get_config()}
                           for cell in self.cells]
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from tensorflux.keras.layers import serialization  # cycle: serialization imports this

        config = dict(config)
        config["cells"] = [serialization.deserialize(c, custom_objects) for c in config["cells"]]
        return cls(**config)


def fresh_cell(cell):
    """An unbuilt copy of `cell` with the same configuration (its own weights once built),
    e.g. for the backward direction of `Bidirectional(RNN(cell))`."""
    if isinstance(cell, StackedRNNCells):
        return StackedRNNCells([fresh_cell(c) for c in cell.cells])
    return type(cell).from_config(cell.get_config())


def _call_cell(cell, inputs, states, training, constants=None):
    params = inspect.signature(cell.call).parameters
    kwargs = {}
    if "training" in params:
        kwargs["training"] = training
    if constants is not None:
        if "constants" not in params:
            raise ValueError(f"RNN cell {cell} does not support constants.")
        kwargs["constants"] = constants
    return cell.call(inputs, states, **kwargs)


def _reset_masks(cell):
    for sub in getattr(cell, "cells", [cell]):
        if hasattr(sub, "reset_dropout_mask"):
            sub.reset_dropout_mask()
            sub.reset_recurrent_dropout_mask()


class RNN(Layer):
    """Runs `cell` (or `StackedRNNCells(cell)` for a list) over [batch, time, features].

    Args:
        cell: a layer with `call(inputs, states)` and `state_size`, or a list of them.
        return_sequences: return every step's output (else the last one).
        return_state: also return the final states (after the output, as a list).
        go_backwards: process the sequence backwards (outputs in that reversed order).
        stateful: not supported (ValueError).
        unroll: build one copy of the step per time step (needs a fixed length).
        time_major: inputs (and sequence outputs) are [time, batch, features].

    Raises:
        ValueError: a cell without `call` or `state_size`, `stateful=True`, a wrong number of
            initial states.
    """

    supports_masking = True

    def __init__(self, cell, return_sequences=False, return_state=False, go_backwards=False,
                 stateful=False, unroll=False, time_major=False, **kwargs):
        if isinstance(cell, (list, tuple)):
            cell = StackedRNNCells(cell)
        if not hasattr(cell, "call"):
            raise ValueError(f"`cell` should have a `call` method. The RNN was passed: {cell}")
        if not hasattr(cell, "state_size"):
            raise ValueError("The RNN cell should have an attribute `state_size` (tuple of "
                             "integers, one integer per RNN state).")
        super().__init__(**kwargs)
        if stateful:
            raise ValueError(f'Layer "{self.name}": stateful=True is not supported.')
        self.cell = cell
        self.return_sequences, self.return_state = return_sequences, return_state
        self.go_backwards, self.stateful = go_backwards, stateful
        self.unroll, self.time_major = unroll, time_major
        self.input_spec = InputSpec(min_ndim=3)

    def _sublayers(self):
        return [self.cell] if isinstance(self.cell, Layer) else []

    @property
    def states(self):
        return [None] * len(_state_sizes(self.cell.state_size))

    def build(self, input_shape):
        if isinstance(input_shape, list):
            input_shape = input_shape[0]
        step_shape = (input_shape[1], *input_shape[2:]) if self.time_major else \
            (input_shape[0], *input_shape[2:])
        if isinstance(self.cell, Layer) and not self.cell.built:
            with backend.name_scope(self.cell.name):
                self.cell.build(step_shape)
            self.cell.built = True
        self.built = True

    def get_initial_state(self, inputs):
        """Zero states for `inputs` (or the cell's own `get_initial_state`)."""
        batch = array_ops.shape(inputs)[1 if self.time_major else 0]
        if hasattr(self.cell, "get_initial_state"):
            return list(nest.flatten(self.cell.get_initial_state(None, batch, inputs.dtype)))
        return _zero_states(self.cell.state_size, batch, inputs.dtype)

    def compute_mask(self, inputs, mask=None):
        if isinstance(mask, list):
            mask = mask[0]
        output_mask = mask if self.return_sequences else None
        if self.return_state:
            size = self.cell.state_size
            count = len(size) if nest.is_nested(size) else 1
            return [output_mask] + [None] * count
        return output_mask

    def call(self, inputs, mask=None, training=None, initial_state=None, constants=None):
        if isinstance(inputs, list):
            inputs, initial_state = inputs[0], inputs[1:] or initial_state
        if isinstance(mask, list):
            mask = mask[0]
        count = len(_state_sizes(self.cell.state_size))
        if initial_state is None:
            initial_state = self.get_initial_state(inputs)
        else:
            initial_state = list(nest.flatten(initial_state))
            if len(initial_state) != count:
                raise ValueError(f'Layer "{self.name}" expects {count} initial state tensor(s), '
                                 f"got {len(initial_state)}.")
        constants = list(nest.flatten(constants)) if constants is not None else []
        nested = isinstance(self.cell, StackedRNNCells) or not isinstance(
            self.cell.state_size, int)

        def step(input_t, states):
            states, consts = list(states[:count]), list(states[count:])
            cell_states = states if nested or count > 1 else [states[0]]
            output, new_states = _call_cell(self.cell, input_t, cell_states, training,
                                            consts or None)
            return output, list(nest.flatten(new_states))

        _reset_masks(self.cell)
        try:
            last, outputs, states = backend_control.rnn(
                step, inputs, initial_state, go_backwards=self.go_backwards, mask=mask,
                constants=constants, unroll=self.unroll, time_major=self.time_major)
        finally:
            _reset_masks(self.cell)
        result = outputs if self.return_sequences else last
        if self.return_sequences:
            shape = inputs.get_shape().as_list()
            result.set_shape(shape[:2] + result.get_shape().as_list()[2:])
        if self.return_state:
            return [result, *self._nested_states(states)]
        return result

    def _nested_states(self, states):
        """The final states in the cell's `state_size` structure (one entry per cell of a
        `StackedRNNCells`, each a list when that cell has several states)."""
        size = self.cell.state_size
        if not nest.is_nested(size):
            return list(states)
        return list(nest.pack_sequence_as(list(size), list(states)))

    def get_config(self):
        config = super().get_config()
        config["cell"] = {"class_name": type(self.cell).__name__,
                          "config": self.cell.get_config()}
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from tensorflux.keras.layers import serialization  # cycle: serialization imports RNN

        config = dict(config)
        config["cell"] = serialization.deserialize(config["cell"], custom_objects)
        return cls(**config)


class PeepholeLSTMCell(LSTMCell):
    """LSTM cell with peephole connections (`tf.keras.experimental.PeepholeLSTMCell`): the
    input and forget gates also see the previous cell state and the output gate the new one,
    through per-unit weights (`*_gate_peephole_weights`, initialized like the kernel)."""

    def build(self, input_shape):
        super().build(input_shape)
        self.input_gate_peephole_weights = self.add_weight(
            "input_gate_peephole_weights", (self.units,), initializer=self.kernel_initializer)
        self.forget_gate_peephole_weights = self.add_weight(
            "forget_gate_peephole_weights", (self.units,), initializer=self.kernel_initializer)
        self.output_gate_peephole_weights = self.add_weight(
            "output_gate_peephole_weights", (self.units,), initializer=self.kernel_initializer)

    def call(self, inputs, states, training=None):
        h, c_prev = states[0], states[1]
        xi, xf, xc, xo = self._gate_inputs(inputs, training, self.bias)
        recurrent = array_ops.split(self.recurrent_kernel, 4, axis=1)
        zi, zf, zc, zo = (x + math_ops.matmul(hk, rk) for x, hk, rk in
                          zip((xi, xf, xc, xo), self._gate_states(h, training), recurrent))
        i = self.recurrent_activation(zi + self.input_gate_peephole_weights * c_prev)
        f = self.recurrent_activation(zf + self.forget_gate_peephole_weights * c_prev)
        c = f * c_prev + i * self.activation(zc)
        o = self.recurrent_activation(zo + self.output_gate_peephole_weights * c)
        h = o * self.activation(c)
        return h, [h, c]
