"""`tf.nn.rnn_cell`: RNN cells (TF1 names, variable names and gate order) and `static_rnn`.

A cell is a layer: `cell(inputs, state) -> (output, new_state)`; its variables (`kernel`,
`bias`) live under its scope (e.g. `rnn/basic_lstm_cell/kernel`) and are created on first call.
"""

from __future__ import annotations

import collections
import hashlib

import numpy as np

from tensorflux.framework import graph as graph_mod
from tensorflux.framework import nest
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.layers.core import Layer
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.nn import core as nn_core
from tensorflux.ops.nn import functions as nn_functions
from tensorflux.ops.random import stateful as random_ops
from tensorflux.ops.state import initializers as init_ops
from tensorflux.ops.state import variable_scope

__all__ = ["RNNCell", "BasicRNNCell", "BasicLSTMCell", "LSTMCell", "GRUCell", "MultiRNNCell",
           "DropoutWrapper", "ResidualWrapper", "DeviceWrapper", "LSTMStateTuple", "static_rnn",
           "static_bidirectional_rnn"]

_LSTMStateTuple = collections.namedtuple("LSTMStateTuple", ("c", "h"))


class LSTMStateTuple(_LSTMStateTuple):
    """(c, h): the cell state and the output of an LSTM."""

    __slots__ = ()

    @property
    def dtype(self):
        c, h = self
        if c.dtype != h.dtype:
            raise TypeError(f"Inconsistent internal state: {c.dtype} vs {h.dtype}")
        return c.dtype




def _zeros(batch_size, size, dtype):
    if isinstance(size, (list, tuple)):
        return type(size)(_zeros(batch_size, s, dtype) for s in size) \
            if not hasattr(size, "_fields") else type(size)(*[_zeros(batch_size, s, dtype)
                                                              for s in size])
    return array_ops.zeros(array_ops.stack([batch_size, size]) if isinstance(batch_size, Tensor)
                           else [batch_size, size], dtype=dtype)


class RNNCell(Layer):
    """The cell protocol: state_size, output_size, zero_state, __call__(inputs, state)."""

    def __init__(self, trainable=True, name=None, dtype=None, _reuse=None, **kwargs):
        super().__init__(trainable=trainable, name=name, dtype=dtype, _reuse=_reuse, **kwargs)

    @property
    def state_size(self):
        raise TypeError(f"{type(self).__name__} must define state_size")

    @property
    def output_size(self):
        raise TypeError(f"{type(self).__name__} must define output_size")

    def __call__(self, inputs, state, scope=None):
        if scope is not None:
            with variable_scope.variable_scope(scope, reuse=self._reuse):
                return super().__call__(inputs, state)
        return super().__call__(inputs, state)

    def zero_state(self, batch_size, dtype):
        """Zero-filled state(s) for a batch of `batch_size`."""
        graph = graph_mod.get_default_graph()
        with graph.name_scope(f"{type(self).__name__}ZeroState"):
            return _zeros(batch_size, self.state_size, dtype)

    def get_initial_state(self, inputs=None, batch_size=None, dtype=None):
        if inputs is not None:
            batch_size = array_ops.shape(inputs)[0]
            dtype = inputs.dtype
        return self.zero_state(batch_size, dtype)


def _input_depth(input_shape, cell):
    shape = TensorShape(input_shape)
    depth = shape[-1].value if shape.ndims else None
    if depth is None:
        raise ValueError(f"Expected inputs.shape[-1] to be known for {type(cell).__name__}, "
                         f"saw shape: {shape}")
    return depth


class _UnitsRNNCell(RNNCell):
    """A cell whose state and output are both `self._num_units` wide."""

    @property
    def state_size(self):
        return self._num_units

    @property
    def output_size(self):
        return self._num_units


class BasicRNNCell(_UnitsRNNCell):
    """output = new_state = activation(W [inputs, state] + b)."""

    _default_name = "basic_rnn_cell"

    def __init__(self, num_units, activation=None, reuse=None, name=None, dtype=None, **kwargs):
        super().__init__(name=name, dtype=dtype, _reuse=reuse, **kwargs)
        self._num_units = num_units
        self._activation = activation

    def build(self, input_shape):
        depth = _input_depth(input_shape, self)
        self._kernel = self.add_variable("kernel", [depth + self._num_units, self._num_units])
        self._bias = self.add_variable("bias", [self._num_units],
                                       initializer=init_ops.zeros_initializer())
        self.built = True

    def call(self, inputs, state):
        gate = nn_core.bias_add(math_ops.matmul(array_ops.concat([inputs, state], 1), self._kernel),
                                self._bias)
        output = (self._activation or math_ops.tanh)(gate)
        return output, output


class BasicLSTMCell(RNNCell):
    """LSTM with gates i, j, f, o from one kernel; forget_bias added to f."""

    _default_name = "basic_lstm_cell"

    def __init__(self, num_units, forget_bias=1.0, state_is_tuple=True, activation=None,
                 reuse=None, name=None, dtype=None, **kwargs):
        super().__init__(name=name, dtype=dtype, _reuse=reuse, **kwargs)
        self._num_units = num_units
        self._forget_bias = forget_bias
        self._state_is_tuple = state_is_tuple
        self._activation = activation

    @property
    def state_size(self):
        n = self._num_units
        return LSTMStateTuple(n, n) if self._state_is_tuple else 2 * n

    @property
    def output_size(self):
        return self._num_units

    def build(self, input_shape):
        depth = _input_depth(input_shape, self)
        self._kernel = self.add_variable("kernel", [depth + self._num_units, 4 * self._num_units])
        self._bias = self.add_variable("bias", [4 * self._num_units],
                                       initializer=init_ops.zeros_initializer())
        self.built = True

    def call(self, inputs, state):
        if self._state_is_tuple:
            c, h = state
        else:
            c, h = array_ops.split(state, 2, axis=1)
        gates = nn_core.bias_add(math_ops.matmul(array_ops.concat([inputs, h], 1), self._kernel),
                                 self._bias)
        i, j, f, o = array_ops.split(gates, 4, axis=1)
        activation = self._activation or math_ops.tanh
        forget = array_ops.constant(self._forget_bias, dtype=f.dtype.base_dtype)
        new_c = c * math_ops.sigmoid(f + forget) + math_ops.sigmoid(i) * activation(j)
        new_h = activation(new_c) * math_ops.sigmoid(o)
        if self._state_is_tuple:
            return new_h, LSTMStateTuple(new_c, new_h)
        return new_h, array_ops.concat([new_c, new_h], 1)


class LSTMCell(RNNCell):
    """LSTM with optional peepholes, cell clipping and a projection layer."""

    _default_name = "lstm_cell"

    def __init__(self, num_units, use_peepholes=False, cell_clip=None, initializer=None,
                 num_proj=None, proj_clip=None, num_unit_shards=None, num_proj_shards=None,
                 forget_bias=1.0, state_is_tuple=True, activation=None, reuse=None, name=None,
                 dtype=None, **kwargs):
        super().__init__(name=name, dtype=dtype, _reuse=reuse, **kwargs)
        self._num_units = num_units
        self._use_peepholes = use_peepholes
        self._cell_clip = cell_clip
        self._initializer = initializer
        self._num_proj = num_proj
        self._proj_clip = proj_clip
        self._forget_bias = forget_bias
        self._state_is_tuple = state_is_tuple
        self._activation = activation

    @property
    def state_size(self):
        out = self._num_proj or self._num_units
        return LSTMStateTuple(self._num_units, out) if self._state_is_tuple else \
            self._num_units + out

    @property
    def output_size(self):
        return self._num_proj or self._num_units

    def build(self, input_shape):
        depth = _input_depth(input_shape, self)
        h_depth = self._num_proj or self._num_units
        self._kernel = self.add_variable("kernel", [depth + h_depth, 4 * self._num_units],
                                         initializer=self._initializer)
        self._bias = self.add_variable("bias", [4 * self._num_units],
                                       initializer=init_ops.zeros_initializer())
        if self._use_peepholes:
            self._w_f_diag = self.add_variable("w_f_diag", [self._num_units],
                                               initializer=self._initializer)
            self._w_i_diag = self.add_variable("w_i_diag", [self._num_units],
                                               initializer=self._initializer)
            self._w_o_diag = self.add_variable("w_o_diag", [self._num_units],
                                               initializer=self._initializer)
        if self._num_proj is not None:
            self._proj_kernel = self.add_variable("projection/kernel",
                                                  [self._num_units, self._num_proj],
                                                  initializer=self._initializer)
        self.built = True

    def call(self, inputs, state):
        activation = self._activation or math_ops.tanh
        if self._state_is_tuple:
            c_prev, m_prev = state
        else:
            c_prev = array_ops.slice(state, [0, 0], [-1, self._num_units])
            m_prev = array_ops.slice(state, [0, self._num_units], [-1, self.output_size])
        gates = nn_core.bias_add(math_ops.matmul(array_ops.concat([inputs, m_prev], 1),
                                                 self._kernel),
                                 self._bias)
        i, j, f, o = array_ops.split(gates, 4, axis=1)
        forget = array_ops.constant(self._forget_bias, dtype=f.dtype.base_dtype)
        if self._use_peepholes:
            c = (math_ops.sigmoid(f + forget + self._w_f_diag * c_prev) * c_prev
                 + math_ops.sigmoid(i + self._w_i_diag * c_prev) * activation(j))
        else:
            c = math_ops.sigmoid(f + forget) * c_prev + math_ops.sigmoid(i) * activation(j)
        if self._cell_clip is not None:
            c = math_ops.clip_by_value(c, -self._cell_clip, self._cell_clip)
        if self._use_peepholes:
            m = math_ops.sigmoid(o + self._w_o_diag * c) * activation(c)
        else:
            m = math_ops.sigmoid(o) * activation(c)
        if self._num_proj is not None:
            m = math_ops.matmul(m, self._proj_kernel)
            if self._proj_clip is not None:
                m = math_ops.clip_by_value(m, -self._proj_clip, self._proj_clip)
        new_state = LSTMStateTuple(c, m) if self._state_is_tuple else array_ops.concat([c, m], 1)
        return m, new_state


class GRUCell(_UnitsRNNCell):
    """GRU (Cho et al. 2014) with TF's `gates` and `candidate` sub-scopes."""

    _default_name = "gru_cell"

    def __init__(self, num_units, activation=None, reuse=None, kernel_initializer=None,
                 bias_initializer=None, name=None, dtype=None, **kwargs):
        super().__init__(name=name, dtype=dtype, _reuse=reuse, **kwargs)
        self._num_units = num_units
        self._activation = activation
        self._kernel_initializer = kernel_initializer
        self._bias_initializer = bias_initializer

    def build(self, input_shape):
        depth = _input_depth(input_shape, self)
        n = self._num_units
        self._gate_kernel = self.add_variable("gates/kernel", [depth + n, 2 * n],
                                              initializer=self._kernel_initializer)
        self._gate_bias = self.add_variable(
            "gates/bias", [2 * n],
            initializer=self._bias_initializer or init_ops.constant_initializer(1.0))
        self._candidate_kernel = self.add_variable("candidate/kernel", [depth + n, n],
                                                   initializer=self._kernel_initializer)
        self._candidate_bias = self.add_variable(
            "candidate/bias", [n],
            initializer=self._bias_initializer or init_ops.zeros_initializer())
        self.built = True

    def call(self, inputs, state):
        gates = math_ops.sigmoid(nn_core.bias_add(
            math_ops.matmul(array_ops.concat([inputs, state], 1),
                            self._gate_kernel), self._gate_bias))
        r, u = array_ops.split(gates, 2, axis=1)
        candidate = nn_core.bias_add(
            math_ops.matmul(array_ops.concat([inputs, r * state], 1), self._candidate_kernel),
            self._candidate_bias)
        c = (self._activation or math_ops.tanh)(candidate)
        new_h = u * state + (1 - u) * c
        return new_h, new_h


class MultiRNNCell(RNNCell):
    """Stacks cells: the output of cell k is the input of cell k + 1 (`cell_k` scopes)."""

    _default_name = "multi_rnn_cell"

    def __init__(self, cells, state_is_tuple=True):
        super().__init__()
        if not cells:
            raise ValueError("Must specify at least one cell for MultiRNNCell.")
        self._cells = list(cells)
        self._state_is_tuple = state_is_tuple

    @property
    def state_size(self):
        if self._state_is_tuple:
            return tuple(cell.state_size for cell in self._cells)
        return sum(cell.state_size for cell in self._cells)

    @property
    def output_size(self):
        return self._cells[-1].output_size

    def zero_state(self, batch_size, dtype):
        return tuple(cell.zero_state(batch_size, dtype) for cell in self._cells) \
            if self._state_is_tuple else super().zero_state(batch_size, dtype)

    def build(self, input_shape):
        self.built = True

    def call(self, inputs, state):
        current = inputs
        new_states = []
        offset = 0
        for i, cell in enumerate(self._cells):
            with variable_scope.variable_scope(f"cell_{i}"):
                if self._state_is_tuple:
                    cell_state = state[i]
                else:
                    size = cell.state_size
                    cell_state = array_ops.slice(state, [0, offset], [-1, size])
                    offset += size
                current, new_state = cell(current, cell_state)
                new_states.append(new_state)
        if self._state_is_tuple:
            return current, tuple(new_states)
        return current, array_ops.concat(new_states, 1)

    @property
    def trainable_weights(self):
        return [w for cell in self._cells for w in cell.trainable_weights]


class CellDelegate:
    """Mixin of cell wrappers: `state_size`, `output_size` and `zero_state` are those of the
    wrapped `self._cell` (a wrapper changing one defines it itself)."""

    @property
    def state_size(self):
        return self._cell.state_size

    @property
    def output_size(self):
        return self._cell.output_size

    def zero_state(self, batch_size, dtype):
        return self._cell.zero_state(batch_size, dtype)


class _Wrapper(CellDelegate, RNNCell):
    def __init__(self, cell):
        super().__init__()
        self._cell = cell

    def __call__(self, inputs, state, scope=None):
        return self.call(inputs, state)

    @property
    def trainable_weights(self):
        return self._cell.trainable_weights


def _default_dropout_state_filter(substate):
    # TF's default: an LSTM's memory c is never dropped, only h.
    if isinstance(substate, LSTMStateTuple):
        return LSTMStateTuple(c=False, h=True)
    return True


class DropoutWrapper(_Wrapper):
    """Dropout on a cell's inputs, outputs and (optionally) state; keep probs may be tensors.

    With `variational_recurrent=True` one mask per input/state/output component (shape
    [1, size], shared by the batch) is drawn per session run and reused at every time step.
    """

    def __init__(self, cell, input_keep_prob=1.0, output_keep_prob=1.0, state_keep_prob=1.0,
                 variational_recurrent=False, input_size=None, dtype=None, seed=None,
                 dropout_state_filter_visitor=None):
        super().__init__(cell)
        self._input_keep_prob = input_keep_prob
        self._output_keep_prob = output_keep_prob
        self._state_keep_prob = state_keep_prob
        self._seed = seed
        self._state_filter = dropout_state_filter_visitor or _default_dropout_state_filter
        self._variational = bool(variational_recurrent)
        self._noise = {}
        if self._variational:
            if dtype is None:
                raise ValueError("When variational_recurrent=True, dtype must be provided")
            if _should_dropout(input_keep_prob):
                if input_size is None:
                    raise ValueError("When variational_recurrent=True and input_keep_prob < 1.0 "
                                     "or is unknown, input_size must be provided")
                self._noise["input"] = self._make_noise("input", input_size, dtype)
            self._noise["state"] = self._make_noise("state", cell.state_size, dtype)
            self._noise["output"] = self._make_noise("output", cell.output_size, dtype)

    def _gen_seed(self, salt, index):
        if self._seed is None:
            return None
        digest = hashlib.md5(f"{self._seed}{salt}_{index}".encode()).hexdigest()
        return int(digest[:8], 16) & 0x7FFFFFFF

    def _make_noise(self, salt, sizes, dtype):
        return [random_ops.random_uniform([1] + _size_dims(size), seed=self._gen_seed(salt, i),
                                          dtype=dtype)
                for i, size in enumerate(nest.flatten(sizes))]

    def _drop(self, value, salt, index, keep_prob):
        if not self._variational:
            return nn_functions.dropout(value, keep_prob=keep_prob,
                                        seed=self._gen_seed(salt, index))
        binary = math_ops.floor(keep_prob + self._noise[salt][index])
        result = math_ops.div(value, keep_prob) * binary
        result.set_shape(value.get_shape())
        return result

    def _drop_all(self, structure, salt, keep_prob):
        flat = [self._drop(v, salt, i, keep_prob) for i, v in enumerate(nest.flatten(structure))]
        return nest.pack_sequence_as(structure, flat)

    def _drop_state(self, state, keep_prob):
        # The filter visitor says per substructure whether to drop (True/False, or a structure
        # of flags for its children); state noise is indexed by flat leaf position.
        counter = [0]

        def skip(sub):
            counter[0] += len(nest.flatten(sub))
            return sub

        def walk(sub):
            flag = self._state_filter(sub)
            if not isinstance(sub, (list, tuple)):
                counter[0] += 1
                return self._drop(sub, "state", counter[0] - 1, keep_prob) if flag else sub
            if flag is False:
                return skip(sub)
            flags = flag if isinstance(flag, (list, tuple)) else [True] * len(sub)
            children = [walk(child) if f else skip(child) for child, f in zip(sub, flags)]
            return type(sub)(*children) if hasattr(sub, "_fields") else type(sub)(children)

        return walk(state)

    def call(self, inputs, state):
        if _should_dropout(self._input_keep_prob):
            inputs = self._drop_all(inputs, "input", self._input_keep_prob)
        output, new_state = self._cell(inputs, state)
        if _should_dropout(self._state_keep_prob):
            new_state = self._drop_state(new_state, self._state_keep_prob)
        if _should_dropout(self._output_keep_prob):
            output = self._drop_all(output, "output", self._output_keep_prob)
        return output, new_state


def _should_dropout(keep_prob):
    return not isinstance(keep_prob, (int, float)) or keep_prob < 1.0


def _size_dims(size):
    if isinstance(size, (int, np.integer)):
        return [int(size)]
    return [int(d) for d in TensorShape(size).as_list()]


class DeviceWrapper(_Wrapper):
    """Runs the wrapped cell on `device`."""

    def __init__(self, cell, device):
        super().__init__(cell)
        self._device = device

    def call(self, inputs, state):
        with graph_mod.get_default_graph().device(self._device):
            return self._cell(inputs, state)

    def zero_state(self, batch_size, dtype):
        with graph_mod.get_default_graph().device(self._device):
            return self._cell.zero_state(batch_size, dtype)


class ResidualWrapper(_Wrapper):
    """output = cell(inputs) + inputs."""

    def __init__(self, cell, residual_fn=None):
        super().__init__(cell)
        self._residual_fn = residual_fn

    def call(self, inputs, state):
        output, new_state = self._cell(inputs, state)
        if self._residual_fn is not None:
            return self._residual_fn(inputs, output), new_state
        return output + inputs, new_state


def static_rnn(cell, inputs, initial_state=None, dtype=None, sequence_length=None, scope=None):
    """Unrolls `cell` over a Python list of [batch, depth] inputs (scope "rnn").

    With `sequence_length`, outputs past each sequence's length are zero and the state stops
    changing there.
    """
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise TypeError("inputs must be a non-empty list of Tensors")
    with variable_scope.variable_scope(scope or "rnn") as varscope:
        first = convert_to_tensor(inputs[0])
        if initial_state is not None:
            state = initial_state
        else:
            if dtype is None:
                raise ValueError("If no initial_state is provided, dtype must be specified")
            batch = first.get_shape()[0].value
            state = cell.zero_state(batch if batch is not None else array_ops.shape(first)[0],
                                    dtype)
        outputs = []
        if sequence_length is not None:
            sequence_length = convert_to_tensor(sequence_length)
        for time, step_input in enumerate(inputs):
            if time > 0:  # TF: cells that call get_variable themselves share step 0's
                varscope.reuse_variables()
            output, new_state = cell(step_input, state)
            if sequence_length is not None:
                done = math_ops.greater_equal(time, sequence_length)
                zeros = array_ops.zeros_like(output)
                output = math_ops.where(done, zeros, output)
                flat_old, flat_new = nest.flatten(state), nest.flatten(new_state)
                merged = [math_ops.where(done, old, new) for old, new in zip(flat_old, flat_new)]
                new_state = nest.pack_sequence_as(new_state, merged)
            outputs.append(output)
            state = new_state
        return outputs, state


def static_bidirectional_rnn(cell_fw, cell_bw, inputs, initial_state_fw=None,
                             initial_state_bw=None, dtype=None, sequence_length=None,
                             scope=None):
    """Forward and backward static RNNs; outputs are concatenated per time step."""
    with variable_scope.variable_scope(scope or "bidirectional_rnn"):
        # TF: the cells live in fw/ and bw/, not fw/rnn/.
        with variable_scope.variable_scope("fw") as fw_scope:
            fw_out, fw_state = static_rnn(cell_fw, inputs, initial_state_fw, dtype,
                                          sequence_length, scope=fw_scope)
        with variable_scope.variable_scope("bw") as bw_scope:
            if sequence_length is None:
                reversed_inputs = list(reversed(inputs))
            else:
                stacked = array_ops.stack(inputs, 1)
                flipped = array_ops.reverse_sequence(stacked, sequence_length, seq_axis=1,
                                                     batch_axis=0)
                reversed_inputs = array_ops.unstack(flipped, axis=1)
            bw_out, bw_state = static_rnn(cell_bw, reversed_inputs, initial_state_bw, dtype,
                                          sequence_length, scope=bw_scope)
            if sequence_length is None:
                bw_out = list(reversed(bw_out))
            else:
                stacked = array_ops.reverse_sequence(array_ops.stack(bw_out, 1), sequence_length,
                                                     seq_axis=1,
                                                     batch_axis=0)
                bw_out = array_ops.unstack(stacked, axis=1)
        outputs = [array_ops.concat([f, b], 1) for f, b in zip(fw_out, bw_out)]
        return outputs, fw_state, bw_state
