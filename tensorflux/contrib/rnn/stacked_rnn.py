"""`tf.contrib.rnn.stack_bidirectional_rnn` / `stack_bidirectional_dynamic_rnn`: layers of
bidirectional RNNs, each layer's concatenated outputs feeding the next (`cell_<i>` scopes)."""

from __future__ import annotations

from tensorflux.layers.rnn_cell import static_bidirectional_rnn
from tensorflux.ops.array import concat_split as concat_ops
from tensorflux.ops.nn import rnn
from tensorflux.ops.state import variable_scope as vs

__all__ = ["stack_bidirectional_rnn", "stack_bidirectional_dynamic_rnn"]


def _check(cells_fw, cells_bw, initial_states_fw, initial_states_bw):
    if not cells_fw:
        raise ValueError("Must specify at least one fw cell for BidirectionalRNN.")
    if not cells_bw:
        raise ValueError("Must specify at least one bw cell for BidirectionalRNN.")
    if not isinstance(cells_fw, list) or not isinstance(cells_bw, list):
        raise ValueError("cells_fw and cells_bw must be a list of RNNCells (one per layer).")
    if len(cells_fw) != len(cells_bw):
        raise ValueError("Forward and Backward cells must have the same depth.")
    for states in (initial_states_fw, initial_states_bw):
        if states is not None and (not isinstance(states, list)
                                   or len(states) != len(cells_fw)):
            raise ValueError("initial_states must be a list of state tensors (one per layer).")


def stack_bidirectional_rnn(cells_fw, cells_bw, inputs, initial_states_fw=None,
                            initial_states_bw=None, dtype=None, sequence_length=None,
                            scope=None):
    """Stacked static bidirectional RNNs.

    Returns:
        (outputs, output_states_fw, output_states_bw): the last layer's per-step outputs
        (forward and backward concatenated) and tuples of each layer's final states.
    """
    _check(cells_fw, cells_bw, initial_states_fw, initial_states_bw)
    states_fw, states_bw = [], []
    prev_layer = inputs
    with vs.variable_scope(scope or "stack_bidirectional_rnn"):
        for i, (cell_fw, cell_bw) in enumerate(zip(cells_fw, cells_bw)):
            initial_fw = initial_states_fw[i] if initial_states_fw else None
            initial_bw = initial_states_bw[i] if initial_states_bw else None
            with vs.variable_scope(f"cell_{i}"):
                prev_layer, state_fw, state_bw = static_bidirectional_rnn(
                    cell_fw, cell_bw, prev_layer, initial_state_fw=initial_fw,
                    initial_state_bw=initial_bw, sequence_length=sequence_length, dtype=dtype)
            states_fw.append(state_fw)
            states_bw.append(state_bw)
    return prev_layer, tuple(states_fw), tuple(states_bw)


def stack_bidirectional_dynamic_rnn(cells_fw, cells_bw, inputs, initial_states_fw=None,
                                    initial_states_bw=None, dtype=None, sequence_length=None,
                                    parallel_iterations=None, time_major=False, scope=None,
                                    swap_memory=False):
    """Stacked `bidirectional_dynamic_rnn`s; outputs are concatenated on the depth axis.

    Returns:
        (outputs, output_states_fw, output_states_bw) as for `stack_bidirectional_rnn`, with
        outputs a [batch, time, fw + bw] tensor ([time, batch, ...] when time_major).
    """
    _check(cells_fw, cells_bw, initial_states_fw, initial_states_bw)
    states_fw, states_bw = [], []
    prev_layer = inputs
    with vs.variable_scope(scope or "stack_bidirectional_rnn"):
        for i, (cell_fw, cell_bw) in enumerate(zip(cells_fw, cells_bw)):
            initial_fw = initial_states_fw[i] if initial_states_fw else None
            initial_bw = initial_states_bw[i] if initial_states_bw else None
            with vs.variable_scope(f"cell_{i}"):
                (out_fw, out_bw), (state_fw, state_bw) = rnn.bidirectional_dynamic_rnn(
                    cell_fw, cell_bw, prev_layer, initial_state_fw=initial_fw,
                    initial_state_bw=initial_bw, sequence_length=sequence_length,
                    parallel_iterations=parallel_iterations, dtype=dtype,
                    swap_memory=swap_memory, time_major=time_major)
                prev_layer = concat_ops.concat([out_fw, out_bw], 2)
            states_fw.append(state_fw)
            states_bw.append(state_bw)
    return prev_layer, tuple(states_fw), tuple(states_bw)
