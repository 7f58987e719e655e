"""`tf.nn.dynamic_rnn` and `tf.nn.bidirectional_dynamic_rnn`: RNNs as one `tf.while_loop`.

The loop runs over time steps (up to the longest `sequence_length`); each iteration reads the
step's inputs from a TensorArray, calls the cell, and writes the output to another TensorArray.
With `sequence_length`, a batch entry whose sequence has ended (`time >= length`) gets a zero
output and keeps its state (a `tf.where` on the mask), so the final state is the state at each
sequence's end. Any object with `state_size`, `output_size`, `zero_state(batch, dtype)` and
`__call__(inputs, state) -> (output, new_state)` works as a cell (TF's RNNCell protocol).
"""

from __future__ import annotations

from tensorflux.framework import dtypes, nest
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.control_flow import while_loop
from tensorflux.ops.data_flow import tensor_array_class as tensor_array_ops
from tensorflux.ops.state import variable_scope

__all__ = ["dynamic_rnn", "bidirectional_dynamic_rnn", "raw_rnn"]



def _swap_batch_time(x):
    """[batch, time, ...] <-> [time, batch, ...]."""
    rank = x.shape.ndims
    if rank is None:
        perm = array_ops.concat([[1, 0], math_ops.range(2, array_ops.rank(x))], 0)
        return array_ops.transpose(x, perm)
    if rank < 2:
        raise ValueError(f"Expected an RNN input of rank >= 2 ([batch, time, ...]), got shape "
                         f"{x.shape} for {x.name}")
    result = array_ops.transpose(x, [1, 0] + list(range(2, rank)))
    dims = x.shape.as_list()
    result.set_shape([dims[1], dims[0]] + dims[2:])
    return result


def _sizes(size) -> list:
    """A cell's (possibly nested) state or output size as flat lists of per-example shapes."""
    return [TensorShape(s) if not isinstance(s, TensorShape) else s
            for s in nest.flatten(size)]


def _batch_shape(batch, size: TensorShape) -> TensorShape:
    return TensorShape([batch]).concatenate(size)


def dynamic_rnn(cell, inputs, sequence_length=None, initial_state=None, dtype=None,
                parallel_iterations=None, swap_memory=False, time_major=False, scope=None):
    """Runs `cell` over `inputs` with a while loop (TF1 `tf.nn.dynamic_rnn`).

    Args:
        cell: an RNN cell (see the module docstring).
        inputs: [batch, time, ...] (or [time, batch, ...] with time_major), or a nested
            structure of such tensors sharing batch and time.
        sequence_length: optional int vector [batch] of sequence lengths.
        initial_state: optional initial state (structured like cell.state_size).
        dtype: the state dtype; required without an initial_state.
        parallel_iterations: time steps run in parallel (default 32).
        swap_memory: accepted for compatibility.
        time_major: the layout of inputs and outputs.
        scope: variable scope (default "rnn").

    Returns:
        (outputs, final_state): outputs shaped like inputs' batch/time with the cell's output
        size (zero past each sequence length); final_state structured like cell.state_size.

    Raises:
        TypeError: cell is not a cell.
        ValueError: no dtype and no initial_state, or bad input ranks.

    Example:
        >>> outputs, state = tf.nn.dynamic_rnn(cell, x, sequence_length=lengths,
        ...                                    dtype=tf.float32)
    """
    for attr in ("state_size", "output_size", "zero_state"):
        if not hasattr(cell, attr) or not callable(cell):
            raise TypeError(f"cell must be an instance of RNNCell (with state_size, output_size, "
                            f"zero_state and __call__), got {type(cell).__name__}")
    if parallel_iterations is None:
        parallel_iterations = 32
    with variable_scope.variable_scope(scope or "rnn"):
        flat_inputs = [convert_to_tensor(x) for x in nest.flatten(inputs)]
        if not time_major:
            flat_inputs = [_swap_batch_time(x) for x in flat_inputs]
        first = flat_inputs[0]
        batch_static = first.shape._dim_list[1] if first.shape.ndims else None
        batch_size = batch_static if batch_static is not None else array_ops.shape(first)[1]
        if initial_state is not None:
            state = initial_state
        else:
            if dtype is None:
                raise ValueError("If there is no initial_state, you must give a dtype.")
            state = cell.zero_state(batch_size, dtype)
        if sequence_length is not None:
            sequence_length = math_ops.cast(sequence_length, dtypes.int32)
            if sequence_length.shape.ndims not in (None, 1):
                raise ValueError(f"sequence_length must be a vector of length batch_size, but "
                                 f"saw shape: {sequence_length.shape}")
            sequence_length = array_ops.identity(sequence_length, name="sequence_length")
        outputs, final_state = _dynamic_rnn_loop(
            cell, flat_inputs, inputs, state, parallel_iterations, swap_memory,
            sequence_length, batch_static, dtype)
        if not time_major:
            outputs = nest.map_structure(_swap_batch_time, outputs)
        return outputs, final_state


def _dynamic_rnn_loop(cell, flat_inputs, inputs_structure, state, parallel_iterations,
                      swap_memory, sequence_length, batch_static, dtype=None):
    first = flat_inputs[0]
    time_steps = first.shape._dim_list[0] if first.shape.ndims else None
    if time_steps is None:
        time_steps = array_ops.shape(first)[0]
    output_sizes = _sizes(cell.output_size)
    # NOTE: as in TF, an explicit `dtype` is the outputs' dtype even with an initial_state
    # (tf.contrib.crf's decoder emits int32 backpointers from a float state).
    output_dtype = (dtypes.as_dtype(dtype).base_dtype if dtype is not None
                    else nest.flatten(state)[0].dtype.base_dtype)
    # As TF 1.x: the loop's ops are in the caller's scope (rnn/while/Exit_3,
    # rnn/TensorArrayStack/TensorArrayGatherV3, ...), not under a "dynamic_rnn" scope.
    input_tas = [tensor_array_ops.TensorArray(x.dtype.base_dtype, size=time_steps,
                                              element_shape=TensorShape(x.shape.as_list()[1:])
                                              if x.shape.ndims else None,
                                              tensor_array_name="input").unstack(x)
                 for x in flat_inputs]
    output_tas = [tensor_array_ops.TensorArray(output_dtype, size=time_steps,
                                               element_shape=_batch_shape(batch_static, s),
                                               tensor_array_name="output")
                  for s in output_sizes]
    loop_bound = time_steps
    if sequence_length is not None:
        batch = array_ops.shape(first)[1]
        zero_outputs = [array_ops.zeros(array_ops.stack([batch] + s.as_list()),
                                        dtype=output_dtype)
                        if s.is_fully_defined() else None for s in output_sizes]
        longest = math_ops.reduce_max(sequence_length)
        loop_bound = math_ops.minimum(time_steps, math_ops.maximum(1, longest))
    time = array_ops.constant(0, dtype=dtypes.int32, name="time")

    def body(t, tas, old_state):
        step = [ta.read(t) for ta in input_tas]
        for value, x in zip(step, flat_inputs):
            value.set_shape(x.shape[1:])
        step = nest.pack_sequence_as(inputs_structure, step)
        output, new_state = cell(step, old_state)
        flat_out = [convert_to_tensor(o) for o in nest.flatten(output)]
        flat_new = nest.flatten(new_state)
        if sequence_length is not None:
            done = math_ops.greater_equal(t, sequence_length)
            flat_out = [math_ops.where(done, z if z is not None else array_ops.zeros_like(o), o)
                        for z, o in zip(zero_outputs, flat_out)]
            flat_old = nest.flatten(old_state)
            flat_new = [math_ops.where(done, o, n) for o, n in zip(flat_old, flat_new)]
        for value, ta in zip(flat_out, output_tas):
            value.set_shape(ta.element_shape)
        packed_state = nest.pack_sequence_as(old_state, flat_new)
        return t + 1, [ta.write(t, o) for ta, o in zip(tas, flat_out)], packed_state

    _, output_tas, final_state = while_loop.while_loop(
        lambda t, *_: t < loop_bound, body, [time, output_tas, state],
        parallel_iterations=parallel_iterations, swap_memory=swap_memory,
        maximum_iterations=time_steps, return_same_structure=True)
    outputs = []
    for ta, size in zip(output_tas, output_sizes):
        stacked = ta.stack()
        steps = time_steps if isinstance(time_steps, int) else None
        stacked.set_shape(TensorShape([steps, batch_static]).concatenate(size))
        outputs.append(stacked)
    return nest.pack_sequence_as(cell.output_size, outputs), final_state


def bidirectional_dynamic_rnn(cell_fw, cell_bw, inputs, sequence_length=None,
                              initial_state_fw=None, initial_state_bw=None, dtype=None,
                              parallel_iterations=None, swap_memory=False, time_major=False,
                              scope=None):
    """A forward and a backward `dynamic_rnn` over the same inputs (TF1 semantics).

    The backward RNN reads each sequence reversed within its length (`reverse_sequence`), and
    its outputs are reversed back, so both outputs align with the inputs in time.

    Returns:
        ((output_fw, output_bw), (output_state_fw, output_state_bw)).

    Example:
        >>> (out_fw, out_bw), _ = tf.nn.bidirectional_dynamic_rnn(fw, bw, x, dtype=tf.float32)
    """
    time_axis, batch_axis = (0, 1) if time_major else (1, 0)

    def reverse(x):
        if sequence_length is None:
            return array_ops.reverse(x, axis=[time_axis])
        return array_ops.reverse_sequence(x, sequence_length, seq_axis=time_axis,
                                          batch_axis=batch_axis)

    with variable_scope.variable_scope(scope or "bidirectional_rnn"):
        with variable_scope.variable_scope("fw") as fw_scope:
            output_fw, state_fw = dynamic_rnn(
                cell_fw, inputs, sequence_length=sequence_length,
                initial_state=initial_state_fw, dtype=dtype,
                parallel_iterations=parallel_iterations, swap_memory=swap_memory,
                time_major=time_major, scope=fw_scope)
        with variable_scope.variable_scope("bw") as bw_scope:
            reversed_inputs = nest.map_structure(reverse, inputs) if nest.is_nested(inputs) \
                else reverse(inputs)
            output_bw, state_bw = dynamic_rnn(
                cell_bw, reversed_inputs, sequence_length=sequence_length,
                initial_state=initial_state_bw, dtype=dtype,
                parallel_iterations=parallel_iterations, swap_memory=swap_memory,
                time_major=time_major, scope=bw_scope)
    # As TF 1.x: the backward outputs are reversed back in the caller's scope (ReverseV2 /
    # ReverseSequence, not bidirectional_rnn/...).
    output_bw = nest.map_structure(reverse, output_bw) if nest.is_nested(output_bw) \
        else reverse(output_bw)
    return (output_fw, output_bw), (state_fw, state_bw)


def raw_rnn(cell, loop_fn, parallel_iterations=None, swap_memory=False, scope=None):
    """An RNN whose inputs, stopping and emitted values come from `loop_fn` (TF1 raw_rnn).

    `loop_fn(time, cell_output, cell_state, loop_state)` returns `(finished, next_input,
    next_cell_state, emit_output, next_loop_state)`; it is first called with
    `(0, None, None, None)` for the initial input and state. The loop runs until every batch
    entry is finished; finished entries emit zeros and keep their state.

    Returns:
        (emit_ta, final_state, final_loop_state): emit_ta is a TensorArray (or a structure of
        them, like the emitted values) of [batch, ...] entries per time step.

    Example:
        >>> emit_ta, state, _ = tf.nn.raw_rnn(cell, loop_fn)
        >>> outputs = emit_ta.stack()   # [time, batch, output_size]
    """
    if not callable(loop_fn):
        raise TypeError("loop_fn must be a callable")
    if parallel_iterations is None:
        parallel_iterations = 32
    with variable_scope.variable_scope(scope or "rnn"):
        time = array_ops.constant(0, dtype=dtypes.int32)
        finished, next_input, state, emit_structure, loop_state = loop_fn(time, None, None, None)
        flat_input = [convert_to_tensor(x) for x in nest.flatten(next_input)]
        batch = flat_input[0].shape._dim_list[0] if flat_input[0].shape.ndims else None
        batch_size = batch if batch is not None else array_ops.shape(flat_input[0])[0]
        if state is None:
            raise ValueError("loop_fn must return an initial cell state at time 0.")
        has_loop_state = loop_state is not None
        loop_state = loop_state if has_loop_state else array_ops.constant(0, dtype=dtypes.int32)
        if emit_structure is not None:
            flat_emit = [convert_to_tensor(e) for e in nest.flatten(emit_structure)]
            zeros = [array_ops.zeros_like(e) for e in flat_emit]
            emit_dtypes = [e.dtype.base_dtype for e in flat_emit]
        else:
            emit_structure = cell.output_size
            state_dtype = nest.flatten(state)[0].dtype.base_dtype
            zeros = [array_ops.zeros(array_ops.stack([batch_size] + s.as_list()), state_dtype)
                     for s in _sizes(emit_structure)]
            emit_dtypes = [state_dtype] * len(zeros)
        emit_tas = [tensor_array_ops.TensorArray(d, size=0, dynamic_size=True,
                                                 element_shape=z.shape)
                    for d, z in zip(emit_dtypes, zeros)]

        def cond(t, done, *_):
            return math_ops.logical_not(math_ops.reduce_all(done))

        def body(t, done, inputs, old_state, tas, extra):
            output, cell_state = cell(nest.pack_sequence_as(next_input, inputs), old_state)
            step = loop_fn(t + 1, output, cell_state, extra if has_loop_state else None)
            next_done, new_input, new_state, emit, new_extra = step
            emit = output if emit is None else emit
            flat = [math_ops.where(done, z, convert_to_tensor(e))
                    for z, e in zip(zeros, nest.flatten(emit))]
            kept = [math_ops.where(done, old, new) for old, new in
                    zip(nest.flatten(old_state), nest.flatten(new_state))]
            tas = [ta.write(t, value) for ta, value in zip(tas, flat)]
            new_extra = new_extra if has_loop_state else extra
            return (t + 1, math_ops.logical_or(done, next_done), nest.flatten(new_input),
                    nest.pack_sequence_as(old_state, kept), tas, new_extra)

        _, _, _, final_state, emit_tas, final_loop = while_loop.while_loop(
            cond, body, [time, finished, flat_input, state, emit_tas, loop_state],
            parallel_iterations=parallel_iterations, swap_memory=swap_memory,
            return_same_structure=True)
        emit = nest.pack_sequence_as(emit_structure, emit_tas)
        return emit, final_state, final_loop if has_loop_state else None
