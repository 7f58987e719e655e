"""`tf.contrib.rnn.static_state_saving_rnn`: a static RNN whose initial state comes from, and
whose final state goes back to, a state saver (e.g. `batch_sequences_with_states`)."""

from __future__ import annotations

from tensorflux.framework import nest, scopes
from tensorflux.layers.rnn_cell import static_rnn
from tensorflux.ops import array as array_ops

__all__ = ["static_state_saving_rnn"]


def static_state_saving_rnn(cell, inputs, state_saver, state_name, sequence_length=None,
                            scope=None):
    """Runs `static_rnn` from `state_saver.state(name)` and saves the final state with
    `state_saver.save_state(name, value)` before the last output and the state are read.

    Args:
        cell: an RNN cell.
        inputs: a list of [batch, depth] tensors.
        state_saver: an object with `state(name)` and `save_state(name, value)`.
        state_name: a name, or a structure of names matching `cell.state_size`.
        sequence_length: optional [batch] lengths.
        scope: variable scope (default "rnn").

    Returns:
        (outputs, state) as for `static_rnn`.

    Raises:
        ValueError: `state_name` does not match the structure of `cell.state_size`.
    """
    state_size = cell.state_size
    state_is_tuple = nest.is_nested(state_size)
    if state_is_tuple != nest.is_nested(state_name):
        raise ValueError(f"state_name should be the same type as cell.state_size. "
                         f"state_name: {state_name!s}, cell.state_size: {state_size!s}")
    if state_is_tuple:
        names = nest.flatten(state_name)
        if len(names) != len(nest.flatten(state_size)):
            raise ValueError(f"#elems(state_name) != #elems(state_size): {len(names)} vs "
                             f"{len(nest.flatten(state_size))}")
        initial_state = nest.pack_sequence_as(state_size,
                                              [state_saver.state(n) for n in names])
    else:
        names = [state_name]
        initial_state = state_saver.state(state_name)
    outputs, state = static_rnn(cell, inputs, initial_state=initial_state,
                                sequence_length=sequence_length, scope=scope)
    flat_state = nest.flatten(state) if state_is_tuple else [state]
    saves = [state_saver.save_state(n, s) for n, s in zip(names, flat_state)]
    with scopes.control_dependencies(saves):
        last = outputs[-1]
        outputs[-1] = nest.pack_sequence_as(last, [array_ops.identity(o)
                                                   for o in nest.flatten(last)])
        if state_is_tuple:
            state = nest.pack_sequence_as(state, [array_ops.identity(s) for s in flat_state])
        else:
            state = array_ops.identity(state)
    return outputs, state
