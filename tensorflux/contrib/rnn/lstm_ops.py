"""`tf.contrib.rnn` block cells: LSTMBlockCell, LSTMBlockFusedCell, GRUBlockCell.

TF ran these as fused kernels; the math is the LSTM / GRU of `tf.nn.rnn_cell` (gates i, j, f,
o from one `kernel`, `forget_bias` added to f, optional peepholes `w_i_diag`/`w_f_diag`/
`w_o_diag` and `cell_clip`), so they are the core cells with TF's block-cell arguments and
variable names (`lstm_cell/kernel`, `lstm_cell/bias`; `gru_cell/w_ru`, `gru_cell/b_ru`, ... for
GRUBlockCell and GRUCell's `gru_cell/gates/kernel`, ... for GRUBlockCellV2).
"""

from __future__ import annotations

from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.layers.core import Layer
from tensorflux.layers.rnn_cell import GRUCell, LSTMCell, LSTMStateTuple, RNNCell, _input_depth
from tensorflux.ops.array import concat_split as concat_ops
from tensorflux.ops.nn import rnn
from tensorflux.ops.state import initializers as init_ops
from tensorflux.ops.state import variable_scope as vs

__all__ = ["LSTMBlockCell", "LSTMBlockFusedCell", "GRUBlockCell", "GRUBlockCellV2"]


class LSTMBlockCell(LSTMCell):
    """LSTM cell with TF's LSTMBlockCell arguments (state is always an LSTMStateTuple).

    Args:
        num_units: the cell size.
        forget_bias: added to the forget gate's pre-activation (default 1.0).
        cell_clip: clip the cell state to [-cell_clip, cell_clip] (None: no clipping).
        use_peephole: diagonal peephole connections.
    """

    _default_name = "lstm_cell"

    def __init__(self, num_units, forget_bias=1.0, cell_clip=None, use_peephole=False,
                 dtype=None, reuse=None, name="lstm_cell"):
        if cell_clip is not None and cell_clip < 0:
            cell_clip = None  # TF's "-1 means no clipping"
        super().__init__(num_units, use_peepholes=use_peephole, cell_clip=cell_clip,
                         forget_bias=forget_bias, state_is_tuple=True, reuse=reuse,
                         dtype=dtype)
        self._default_name = name  # uniquified (lstm_cell, lstm_cell_1), as TF1 does


class GRUBlockCell(GRUCell):
    """GRU cell with TF's GRUBlockCell arguments (`num_units`, or the old `cell_size`) and
    its variable names `w_ru`, `b_ru` (initialized to 1), `w_c`, `b_c`."""

    _variable_names = ("w_ru", "b_ru", "w_c", "b_c")

    def __init__(self, num_units=None, cell_size=None, reuse=None, name="gru_cell"):
        if num_units is None:
            num_units = cell_size
        elif cell_size is not None:
            raise ValueError("num_units and cell_size cannot both be set.")
        if num_units is None:
            raise ValueError("num_units must be provided to GRUBlockCell")
        super().__init__(num_units, reuse=reuse)
        self._default_name = name

    def build(self, input_shape):
        depth = _input_depth(input_shape, self)
        n = self._num_units
        w_ru, b_ru, w_c, b_c = self._variable_names
        self._gate_kernel = self.add_variable(w_ru, [depth + n, 2 * n])
        self._gate_bias = self.add_variable(b_ru, [2 * n],
                                            initializer=init_ops.constant_initializer(1.0))
        self._candidate_kernel = self.add_variable(w_c, [depth + n, n])
        self._candidate_bias = self.add_variable(b_c, [n],
                                                 initializer=init_ops.zeros_initializer())
        self.built = True


class GRUBlockCellV2(GRUBlockCell):
    """GRUBlockCell with GRUCell's variable names (`gates/kernel`, `candidate/bias`, ...)."""

    _variable_names = ("gates/kernel", "gates/bias", "candidate/kernel", "candidate/bias")


class _StepCell:
    """One LSTM step over variables a fused cell already made (no scope, no variables)."""

    def __init__(self, fused):
        self._fused = fused

    @property
    def state_size(self):
        return LSTMStateTuple(self._fused._num_units, self._fused._num_units)

    @property
    def output_size(self):
        return self._fused._num_units

    def zero_state(self, batch_size, dtype):
        return self._fused._cell.zero_state(batch_size, dtype)

    def __call__(self, inputs, state):
        return self._fused._cell.call(inputs, state)


class LSTMBlockFusedCell(RNNCell):
    """An LSTM over a whole time-major sequence: `cell(inputs [time, batch, depth] (or a list
    of [batch, depth]), initial_state=None, dtype=None, sequence_length=None) -> (outputs,
    (c, h))`; its variables (`kernel`, `bias`) live directly in its scope.

    Outputs past a sequence's length are zero; the final state is each sequence's last.
    """

    _default_name = "lstm_cell"

    def __init__(self, num_units, forget_bias=1.0, cell_clip=None, use_peephole=False,
                 reuse=None, dtype=None, name="lstm_fused_cell"):
        super().__init__(dtype=dtype, _reuse=reuse)
        self._default_name = name
        self._num_units = num_units
        self._cell = LSTMBlockCell(num_units, forget_bias, cell_clip, use_peephole)

    @property
    def state_size(self):
        return LSTMStateTuple(self._num_units, self._num_units)

    @property
    def output_size(self):
        return self._num_units

    def __call__(self, inputs, initial_state=None, dtype=None, sequence_length=None,
                 scope=None):
        if scope is not None and self._scope is None:
            with vs.variable_scope(scope) as captured:  # TF: `scope` names the layer's scope
                self._scope = captured
        return Layer.__call__(self, inputs, initial_state, dtype, sequence_length)

    def build(self, input_shape):
        if isinstance(input_shape, list):  # a list of [batch, depth] steps
            input_shape = TensorShape([None]).concatenate(input_shape[0])
        self._cell.dtype = self.dtype
        self._cell.build(input_shape[1:])
        self._cell.built = True
        self.built = True

    def call(self, inputs, initial_state=None, dtype=None, sequence_length=None):
        is_list = isinstance(inputs, list)
        inputs = concat_ops.stack(inputs) if is_list else convert_to_tensor(inputs)
        if inputs.get_shape().ndims not in (None, 3):
            raise ValueError(f"LSTMBlockFusedCell expects time-major inputs [time, batch, "
                             f"depth], got shape {inputs.get_shape()}")
        if initial_state is None and dtype is None:
            dtype = inputs.dtype
        outputs, state = rnn.dynamic_rnn(_StepCell(self), inputs, sequence_length=sequence_length,
                                         initial_state=None if initial_state is None
                                         else LSTMStateTuple(*initial_state),
                                         dtype=dtype, time_major=True)
        return (concat_ops.unstack(outputs) if is_list else outputs), state

    @property
    def trainable_weights(self):
        return self._cell.trainable_weights
