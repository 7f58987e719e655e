"""`tf.contrib.rnn` cells: LayerNormBasicLSTMCell, AttentionCellWrapper,
CoupledInputForgetGateLSTMCell, UGRNNCell, IntersectionRNNCell, NASCell, IndRNNCell and SRUCell
(TF1 math and variable names)."""

from __future__ import annotations

from tensorflux.contrib.rnn.core_rnn_cell import linear
from tensorflux.framework import nest
from tensorflux.layers.rnn_cell import LSTMStateTuple, RNNCell, _input_depth, _UnitsRNNCell
from tensorflux.ops.array import concat_split as concat_ops
from tensorflux.ops.array import shapes as shape_ops
from tensorflux.ops.array import slicing as slicing_ops
from tensorflux.ops.math import matrix_product as matmul_ops
from tensorflux.ops.math import reduction as reduction_ops
from tensorflux.ops.math import select as select_ops
from tensorflux.ops.math import unary as unary_ops
from tensorflux.ops.nn import activations as nn_activations
from tensorflux.ops.nn import conv as conv_ops
from tensorflux.ops.nn import core as nn_ops
from tensorflux.ops.nn import functions as nn_impl
from tensorflux.ops.state import initializers as init_ops
from tensorflux.ops.state import variable_scope as vs

__all__ = ["LayerNormBasicLSTMCell", "AttentionCellWrapper", "CoupledInputForgetGateLSTMCell",
           "UGRNNCell", "IntersectionRNNCell", "NASCell", "IndRNNCell", "SRUCell"]


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


def _layer_norm(x, gamma, beta):
    mean, variance = nn_impl.moments(x, [1], keep_dims=True)
    return (x - mean) * unary_ops.rsqrt(variance + 1e-12) * gamma + beta


class CoupledInputForgetGateLSTMCell(RNNCell):
    """LSTM whose input gate is one minus the forget gate (Greff et al. 2015, "CIFG").

    Variables (TF names): `W_0` [depth + proj, 3 units] (gates j, f, o), `B`, peepholes
    `W_F_diag`/`W_O_diag`, projection `W_P_0`; with `layer_norm`, `gamma`/`beta` under
    `transform`, `forget`, `output` and `state` (and no bias is added).
    """

    _default_name = "coupled_input_forget_gate_lstm_cell"

    def __init__(self, num_units, use_peepholes=False, initializer=None, num_proj=None,
                 proj_clip=None, num_unit_shards=1, num_proj_shards=1, forget_bias=1.0,
                 state_is_tuple=True, activation=None, reuse=None, layer_norm=False,
                 norm_gain=1.0, norm_shift=0.0):
        super().__init__(_reuse=reuse)
        if num_unit_shards != 1 or num_proj_shards != 1:
            raise ValueError("CoupledInputForgetGateLSTMCell supports one shard only "
                             "(num_unit_shards=num_proj_shards=1)")
        self._num_units = num_units
        self._use_peepholes = use_peepholes
        self._initializer = initializer
        self._num_proj = num_proj
        self._proj_clip = proj_clip
        self._forget_bias = forget_bias
        self._state_is_tuple = state_is_tuple
        self._activation = activation or unary_ops.tanh
        self._layer_norm = layer_norm
        self._norm_gain = norm_gain
        self._norm_shift = norm_shift

    @property
    def state_size(self):
        out = self._num_proj or self._num_units
        return LSTMStateTuple(self._num_units, out) if self._state_is_tuple \
            else self._num_units + out

    @property
    def output_size(self):
        return self._num_proj or self._num_units

    def build(self, input_shape):
        depth = _input_depth(input_shape, self)
        n, proj = self._num_units, self._num_proj or self._num_units
        self._w = self.add_variable("W_0", [depth + proj, 3 * n], initializer=self._initializer)
        self._b = self.add_variable("B", [3 * n], initializer=init_ops.zeros_initializer())
        if self._use_peepholes:
            self._w_f = self.add_variable("W_F_diag", [n], initializer=self._initializer)
            self._w_o = self.add_variable("W_O_diag", [n], initializer=self._initializer)
        if self._num_proj is not None:
            self._w_p = self.add_variable("W_P_0", [n, self._num_proj],
                                          initializer=self._initializer)
        self._norms = {}
        if self._layer_norm:
            for scope in ("transform", "forget", "output", "state"):
                self._norms[scope] = (
                    self.add_variable(f"{scope}/gamma", [n],
                                      initializer=init_ops.constant_initializer(
                                          self._norm_gain)),
                    self.add_variable(f"{scope}/beta", [n],
                                      initializer=init_ops.constant_initializer(
                                          self._norm_shift)))
        self.built = True

    def call(self, inputs, state):
        n = self._num_units
        if self._state_is_tuple:
            c_prev, m_prev = state
        else:
            c_prev = slicing_ops.slice(state, [0, 0], [-1, n])
            m_prev = slicing_ops.slice(state, [0, n], [-1, self.output_size])
        matrix = matmul_ops.matmul(concat_ops.concat([inputs, m_prev], 1), self._w)
        if not self._layer_norm:
            matrix = nn_ops.bias_add(matrix, self._b)
        j, f, o = concat_ops.split(matrix, 3, axis=1)
        if self._layer_norm:
            j = _layer_norm(j, *self._norms["transform"])
            f = _layer_norm(f, *self._norms["forget"])
            o = _layer_norm(o, *self._norms["output"])
        if self._use_peepholes:
            f_act = unary_ops.sigmoid(f + self._forget_bias + self._w_f * c_prev)
        else:
            f_act = unary_ops.sigmoid(f + self._forget_bias)
        c = f_act * c_prev + (1 - f_act) * self._activation(j)
        if self._layer_norm:
            c = _layer_norm(c, *self._norms["state"])
        gate_o = o + self._w_o * c if self._use_peepholes else o
        m = unary_ops.sigmoid(gate_o) * self._activation(c)
        if self._num_proj is not None:
            m = matmul_ops.matmul(m, self._w_p)
            if self._proj_clip is not None:
                m = select_ops.clip_by_value(m, -self._proj_clip, self._proj_clip)
        new_state = LSTMStateTuple(c, m) if self._state_is_tuple \
            else concat_ops.concat([c, m], 1)
        return m, new_state


class UGRNNCell(_UnitsRNNCell):
    """Update-gate RNN (Collins et al. 2016): h' = g h + (1 - g) tanh(c), with
    [g, c] = [x, h] @ kernel + bias and g = sigmoid(. + forget_bias)."""

    _default_name = "ugrnn_cell"

    def __init__(self, num_units, initializer=None, forget_bias=1.0, activation=None,
                 reuse=None):
        super().__init__(_reuse=reuse)
        self._num_units = num_units
        self._initializer = initializer
        self._forget_bias = forget_bias
        self._activation = activation or unary_ops.tanh

    def call(self, inputs, state):
        matrix = linear(self, [inputs, state], 2 * self._num_units,
                        kernel_initializer=self._initializer)
        g_act, c_act = concat_ops.split(matrix, 2, axis=1)
        g = unary_ops.sigmoid(g_act + self._forget_bias)
        new_state = g * state + (1.0 - g) * self._activation(c_act)
        return new_state, new_state


class IntersectionRNNCell(_UnitsRNNCell):
    """Intersection RNN (Collins et al. 2016): a state passed through time and an output
    passed through depth, each gated. Inputs must have `num_units` features unless
    `num_in_proj` projects them (`in_projection/kernel`)."""

    _default_name = "intersection_rnn_cell"

    def __init__(self, num_units, num_in_proj=None, initializer=None, forget_bias=1.0,
                 y_activation=None, reuse=None):
        super().__init__(_reuse=reuse)
        self._num_units = num_units
        self._num_input_proj = num_in_proj
        self._initializer = initializer
        self._forget_bias = forget_bias
        self._y_activation = y_activation or nn_activations.relu

    def call(self, inputs, state):
        n = self._num_units
        if inputs.get_shape()[-1].value != n:
            if not self._num_input_proj:
                raise ValueError("Must have input size == output size for Intersection RNN. To "
                                 "fix, num_in_proj should be set to num_units at cell init.")
            with vs.variable_scope("in_projection"):
                inputs = linear(self, inputs, n, kernel_initializer=self._initializer)
        matrix = linear(self, [inputs, state], 4 * n, kernel_initializer=self._initializer)
        gh_act, h_act, gy_act, y_act = concat_ops.split(matrix, 4, axis=1)
        h = unary_ops.tanh(h_act)
        y = self._y_activation(y_act)
        gh = unary_ops.sigmoid(gh_act + self._forget_bias)
        gy = unary_ops.sigmoid(gy_act + self._forget_bias)
        new_state = gh * state + (1.0 - gh) * h
        return gy * inputs + (1.0 - gy) * y, new_state


class NASCell(RNNCell):
    """The recurrent cell found by Neural Architecture Search (Zoph & Le 2017).

    Eight branches of `inputs @ kernel` and `m @ recurrent_kernel` (plus `bias` when
    `use_biases`) are combined in a fixed tree of sigmoid/relu/tanh layers; the cell state is
    injected in the second layer. `num_proj` adds `projection_weights`.
    """

    _default_name = "nas_cell"
    _NAS_BASE = 8

    def __init__(self, num_units, num_proj=None, use_biases=False, reuse=None):
        super().__init__(_reuse=reuse)
        self._num_units = num_units
        self._num_proj = num_proj
        self._use_biases = use_biases

    @property
    def state_size(self):
        return LSTMStateTuple(self._num_units, self._num_proj or self._num_units)

    @property
    def output_size(self):
        return self._num_proj or self._num_units

    def build(self, input_shape):
        depth = _input_depth(input_shape, self)
        width = self._NAS_BASE * self._num_units
        self._recurrent_kernel = self.add_variable(
            "recurrent_kernel", [self._num_proj or self._num_units, width])
        self._kernel = self.add_variable("kernel", [depth, width])
        self._bias = self.add_variable("bias", [width],
                                       initializer=init_ops.zeros_initializer()) \
            if self._use_biases else None
        self._projection = self.add_variable("projection_weights",
                                             [self._num_units, self._num_proj]) \
            if self._num_proj is not None else None
        self.built = True

    def call(self, inputs, state):
        sigmoid, tanh, relu = unary_ops.sigmoid, unary_ops.tanh, nn_activations.relu
        c_prev, m_prev = state
        m_matrix = matmul_ops.matmul(m_prev, self._recurrent_kernel)
        if self._bias is not None:
            m_matrix = nn_ops.bias_add(m_matrix, self._bias)
        m = concat_ops.split(m_matrix, self._NAS_BASE, axis=1)
        x = concat_ops.split(matmul_ops.matmul(inputs, self._kernel), self._NAS_BASE, axis=1)
        layer1 = [sigmoid(x[0] + m[0]), relu(x[1] + m[1]), sigmoid(x[2] + m[2]),
                  relu(x[3] * m[3]), tanh(x[4] + m[4]), sigmoid(x[5] + m[5]),
                  tanh(x[6] + m[6]), sigmoid(x[7] + m[7])]
        l2_0 = tanh(layer1[0] * layer1[1])
        l2_1 = tanh(layer1[2] + layer1[3])
        l2_2 = tanh(layer1[4] * layer1[5])
        l2_3 = sigmoid(layer1[6] + layer1[7])
        l2_0 = tanh(l2_0 + c_prev)
        new_c = l2_0 * l2_1
        new_m = tanh(new_c * tanh(l2_2 + l2_3))
        if self._projection is not None:
            new_m = matmul_ops.matmul(new_m, self._projection)
        return new_m, LSTMStateTuple(new_c, new_m)


class IndRNNCell(_UnitsRNNCell):
    """Independently recurrent cell (Li et al. 2018): h' = act(x @ kernel_w + h * kernel_u +
    bias), each unit recurrent only on itself (relu by default)."""

    _default_name = "ind_rnn_cell"

    def __init__(self, num_units, activation=None, reuse=None, name=None, dtype=None):
        super().__init__(dtype=dtype, _reuse=reuse)
        if name is not None:
            self._default_name = name
        self._num_units = num_units
        self._activation = activation or nn_activations.relu

    def build(self, input_shape):
        depth = _input_depth(input_shape, self)
        self._kernel_w = self.add_variable("kernel_w", [depth, self._num_units])
        self._kernel_u = self.add_variable(
            "kernel_u", [1, self._num_units],
            initializer=init_ops.random_uniform_initializer(-1.0, 1.0))
        self._bias = self.add_variable("bias", [self._num_units],
                                       initializer=init_ops.zeros_initializer())
        self.built = True

    def call(self, inputs, state):
        gate = matmul_ops.matmul(inputs, self._kernel_w) + state * self._kernel_u
        output = self._activation(nn_ops.bias_add(gate, self._bias))
        return output, output


class SRUCell(_UnitsRNNCell):
    """Simple recurrent unit (Lei et al. 2017): the input alone drives the gates, so the
    recurrence is elementwise: c' = f c + (1 - f) x~, h = r act(c') + (1 - r) x'."""

    _default_name = "sru_cell"

    def __init__(self, num_units, activation=None, reuse=None, name=None, **kwargs):
        super().__init__(_reuse=reuse, **kwargs)
        if name is not None:
            self._default_name = name
        self._num_units = num_units
        self._activation = activation or unary_ops.tanh

    def build(self, input_shape):
        depth = _input_depth(input_shape, self)
        self._kernel = self.add_variable("kernel", [depth, 4 * self._num_units])
        self._bias = self.add_variable("bias", [2 * self._num_units],
                                       initializer=init_ops.zeros_initializer())
        self.built = True

    def call(self, inputs, state):
        x_bar, f_pre, r_pre, x_tx = concat_ops.split(matmul_ops.matmul(inputs, self._kernel), 4,
                                                     axis=1)
        gates = unary_ops.sigmoid(nn_ops.bias_add(concat_ops.concat([f_pre, r_pre], 1),
                                                  self._bias))
        f, r = concat_ops.split(gates, 2, axis=1)
        c = f * state + (1.0 - f) * x_bar
        h = r * self._activation(c) + (1.0 - r) * x_tx
        return h, c
