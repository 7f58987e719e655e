"""`tf.contrib.rnn` fused RNNs: cells that run a whole sequence per call,
`cell(inputs, initial_state=None, dtype=None, sequence_length=None, scope=None) -> (outputs,
state)`, with time-major 3-D inputs or a list of steps."""

from __future__ import annotations

import abc

from tensorflux.layers.rnn_cell import static_rnn
from tensorflux.ops.array import concat_split as concat_ops
from tensorflux.ops.array import padding as pad_ops
from tensorflux.ops.nn import rnn

__all__ = ["FusedRNNCell", "FusedRNNCellAdaptor", "TimeReversedFusedRNN"]


class FusedRNNCell(abc.ABC):
    """The interface of fused RNN cells."""

    @abc.abstractmethod
    def __call__(self, inputs, initial_state=None, dtype=None, sequence_length=None,
                 scope=None):
        ...


class FusedRNNCellAdaptor(FusedRNNCell):
    """Runs an ordinary cell as a fused one (with `static_rnn`, or `dynamic_rnn` when
    `use_dynamic_rnn`)."""

    def __init__(self, cell, use_dynamic_rnn=False):
        self._cell = cell
        self._use_dynamic_rnn = use_dynamic_rnn

    def __call__(self, inputs, initial_state=None, dtype=None, sequence_length=None,
                 scope=None):
        is_list = isinstance(inputs, list)
        if self._use_dynamic_rnn:
            stacked = concat_ops.stack(inputs) if is_list else inputs
            outputs, state = rnn.dynamic_rnn(self._cell, stacked, sequence_length=sequence_length,
                                             initial_state=initial_state, dtype=dtype,
                                             time_major=True, scope=scope)
            return (concat_ops.unstack(outputs) if is_list else outputs), state
        steps = inputs if is_list else concat_ops.unstack(inputs)
        outputs, state = static_rnn(self._cell, steps, initial_state=initial_state, dtype=dtype,
                                    sequence_length=sequence_length, scope=scope)
        return (outputs if is_list else concat_ops.stack(outputs)), state


class TimeReversedFusedRNN(FusedRNNCell):
    """Runs a fused cell over the reversed sequences (each reversed within its
    `sequence_length`) and reverses its outputs back: the backward half of a bidirectional
    fused RNN."""

    def __init__(self, cell):
        self._cell = cell

    @staticmethod
    def _reverse(t, lengths):
        if isinstance(t, list):
            if lengths is None:
                return list(reversed(t))
            return concat_ops.unstack(TimeReversedFusedRNN._reverse(concat_ops.stack(t),
                                                                    lengths))
        if lengths is None:
            return pad_ops.reverse(t, [0])
        return pad_ops.reverse_sequence(t, lengths, seq_axis=0, batch_axis=1)

    def __call__(self, inputs, initial_state=None, dtype=None, sequence_length=None,
                 scope=None):
        outputs, state = self._cell(self._reverse(inputs, sequence_length),
                                    initial_state=initial_state, dtype=dtype,
                                    sequence_length=sequence_length, scope=scope)
        return self._reverse(outputs, sequence_length), state
