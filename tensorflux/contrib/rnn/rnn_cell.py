"""`tf.contrib.rnn` cells: LayerNormBasicLSTMCell and AttentionCellWrapper (TF1 math and
variable names)."""

from __future__ import annotations

from tensorflux import nest
from tensorflux.contrib.rnn.core_rnn_cell import linear
from tensorflux.ops import (
    concat_ops,
    conv_ops,
    init_ops,
    matmul_ops,
    nn_impl,
    nn_ops,
    reduction_ops,
    shape_ops,
    slicing_ops,
    unary_ops,
)
from tensorflux.ops import variable_scope as vs
from tensorflux.ops.rnn_cell_impl import LSTMStateTuple, RNNCell, _input_depth

__all__ = ["LayerNormBasicLSTMCell", "AttentionCellWrapper"]


class LayerNormBasicLSTMCell(RNNCell):
    """Basic LSTM with layer normalization of the four gates and the new cell state
    (Ba et al. 2016) and recurrent dropout on the candidate (Semeniuta et al. 2016).

    Variables: `kernel` ([depth + units, 4 units]; plus `bias` only without layer norm) and
    `gamma`/`beta` under `input`, `transform`, `forget`, `output` and `state`.
    """

    _default_name = "layer_norm_basic_lstm_cell"

    def __init__(self, num_units, forget_bias=1.0, input_size=None, activation=None,
                 layer_norm=True, norm_gain=1.0, norm_shift=0.0, dropout_keep_prob=1.0,
                 dropout_prob_seed=None, reuse=None):
        super().__init__(_reuse=reuse)
        self._num_units = num_units
        self._activation = activation or unary_ops.tanh
        self._forget_bias = forget_bias
        self._keep_prob = dropout_keep_prob
        self._seed = dropout_prob_seed
        self._layer_norm = layer_norm
        self._norm_gain = norm_gain
        self._norm_shift = norm_shift

    @property
    def state_size(self):
        return LSTMStateTuple(self._num_units, self._num_units)

    @property
    def output_size(self):
        return self._num_units

    def build(self, input_shape):
        depth = _input_depth(input_shape, self)
        n = self._num_units
        self._kernel = self.add_variable("kernel", [depth + n, 4 * n])
        self._bias = None
        if not self._layer_norm:
            self._bias = self.add_variable("bias", [4 * n])
        self._norms = {}
        if self._layer_norm:
            for scope in ("input", "transform", "forget", "output", "state"):
                gamma = self.add_variable(f"{scope}/gamma", [n],
                                          initializer=init_ops.constant_initializer(
                                              self._norm_gain))
                beta = self.add_variable(f"{scope}/beta", [n],
                                         initializer=init_ops.constant_initializer(
                                             self._norm_shift))
                self._norms[scope] = (gamma, beta)
        self.built = True

    def _norm(self, x, scope):
        gamma, beta = self._norms[scope]
        with vs.variable_scope(scope):
            mean, variance = nn_impl.moments(x, [1], keep_dims=True)
            normalized = (x - mean) * unary_ops.rsqrt(variance + 1e-12)
            return normalized * gamma + beta

    def call(self, inputs, state):
        c, h = state
        concat = matmul_ops.matmul(concat_ops.concat([inputs, h], 1), self._kernel)
        if self._bias is not None:
            concat = nn_ops.bias_add(concat, self._bias)
        i, j, f, o = concat_ops.split(concat, 4, axis=1)
        if self._layer_norm:
            i, j = self._norm(i, "input"), self._norm(j, "transform")
            f, o = self._norm(f, "forget"), self._norm(o, "output")
        g = self._activation(j)
        if not isinstance(self._keep_prob, float) or self._keep_prob < 1:
            g = nn_impl.dropout(g, self._keep_prob, seed=self._seed)
        new_c = c * unary_ops.sigmoid(f + self._forget_bias) + unary_ops.sigmoid(i) * g
        if self._layer_norm:
            new_c = self._norm(new_c, "state")
        new_h = self._activation(new_c) * unary_ops.sigmoid(o)
        return new_h, LSTMStateTuple(new_c, new_h)


class AttentionCellWrapper(RNNCell):
    """Attention over the cell's last `attn_length` outputs (Bahdanau-style, as in TF's
    contrib AttentionCellWrapper).

    State: `(cell_state, attns [batch, attn_size], attn_states [batch, attn_length *
    attn_size])` (concatenated when `state_is_tuple=False`). Each step mixes the input with
    the previous attention (`kernel`/`bias`), runs the cell, attends over the stored outputs
    with the new state as query (`attention/attn_w`, `attention/attn_v`, `attention/kernel`),
    projects cell output and attention to the output (`attn_output_projection/kernel`), and
    pushes that output into the window.
    """

    _default_name = "attention_cell_wrapper"

    def __init__(self, cell, attn_length, attn_size=None, attn_vec_size=None, input_size=None,
                 state_is_tuple=True, reuse=None):
        super().__init__(_reuse=reuse)
        if attn_length <= 0:
            raise ValueError(f"attn_length should be greater than zero, got {attn_length}")
        if not state_is_tuple and isinstance(cell.state_size, tuple):
            raise ValueError(f"Cell returns tuple of states, but the flag state_is_tuple is "
                             f"not set. State size is: {cell.state_size}")
        self._cell = cell
        self._attn_length = attn_length
        self._attn_size = attn_size or cell.output_size
        self._attn_vec_size = attn_vec_size or self._attn_size
        self._input_size = input_size
        self._state_is_tuple = state_is_tuple

    @property
    def state_size(self):
        size = (self._cell.state_size, self._attn_size, self._attn_size * self._attn_length)
        return size if self._state_is_tuple else sum(size)

    @property
    def output_size(self):
        return self._attn_size

    def zero_state(self, batch_size, dtype):
        if not self._state_is_tuple:
            return super().zero_state(batch_size, dtype)
        inner = self._cell.zero_state(batch_size, dtype)
        rest = super().zero_state(batch_size, dtype)
        return (inner, rest[1], rest[2])

    def build(self, input_shape):
        self.built = True

    def call(self, inputs, state):
        if self._state_is_tuple:
            state, attns, attn_states = state
        else:
            states = state
            size = self._cell.state_size
            state = slicing_ops.slice(states, [0, 0], [-1, size])
            attns = slicing_ops.slice(states, [0, size], [-1, self._attn_size])
            attn_states = slicing_ops.slice(states, [0, size + self._attn_size],
                                            [-1, self._attn_size * self._attn_length])
        attn_states = shape_ops.reshape(attn_states, [-1, self._attn_length, self._attn_size])
        input_size = self._input_size or inputs.get_shape().as_list()[1]
        inputs = linear(self, [inputs, attns], input_size)
        cell_output, new_state = self._cell(inputs, state)
        new_state_cat = concat_ops.concat(nest.flatten(new_state), 1) \
            if self._state_is_tuple else new_state
        new_attns, new_attn_states = self._attention(new_state_cat, attn_states)
        with vs.variable_scope("attn_output_projection"):
            output = linear(self, [cell_output, new_attns], self._attn_size)
        new_attn_states = concat_ops.concat(
            [new_attn_states, shape_ops.expand_dims(output, 1)], 1)
        new_attn_states = shape_ops.reshape(new_attn_states,
                                            [-1, self._attn_length * self._attn_size])
        new_state = (new_state, new_attns, new_attn_states)
        if not self._state_is_tuple:
            new_state = concat_ops.concat(list(new_state), 1)
        return output, new_state

    def _attention(self, query, attn_states):
        with vs.variable_scope("attention"):
            k = self.add_variable("attn_w", [1, 1, self._attn_size, self._attn_vec_size])
            v = self.add_variable("attn_v", [self._attn_vec_size])
            hidden = shape_ops.reshape(attn_states,
                                       [-1, self._attn_length, 1, self._attn_size])
            hidden_features = conv_ops.conv2d(hidden, k, [1, 1, 1, 1], "SAME")
            y = linear(self, query, self._attn_vec_size)
            y = shape_ops.reshape(y, [-1, 1, 1, self._attn_vec_size])
            s = reduction_ops.reduce_sum(v * unary_ops.tanh(hidden_features + y), [2, 3])
            a = nn_ops.softmax(s)
            d = reduction_ops.reduce_sum(
                shape_ops.reshape(a, [-1, self._attn_length, 1, 1]) * hidden, [1, 2])
            new_attns = shape_ops.reshape(d, [-1, self._attn_size])
            new_attn_states = slicing_ops.slice(attn_states, [0, 1, 0], [-1, -1, -1])
            return new_attns, new_attn_states
