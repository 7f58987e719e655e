"""`tf.contrib.seq2seq.Decoder` and `dynamic_decode`: decoding as one `tf.while_loop`.

Each iteration calls `decoder.step(time, inputs, state)` and writes its outputs into
TensorArrays; the loop ends when every batch entry has finished (or after
`maximum_iterations`). `final_sequence_lengths[b]` is the step at which entry b finished.
"""

from __future__ import annotations

import abc

from tensorflux.contrib.seq2seq.helper import transpose_batch_time
from tensorflux.framework import dtypes, nest
from tensorflux.framework.tensor_conversion import constant_value, convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops import array as array_ops
from tensorflux.ops.array import concat_split as concat_ops
from tensorflux.ops.array import shapes as shape_ops
from tensorflux.ops.control_flow import while_loop
from tensorflux.ops.data_flow import tensor_array_class as tensor_array_ops
from tensorflux.ops.math import comparison as comparison_ops
from tensorflux.ops.math import reduction as reduction_ops
from tensorflux.ops.math import select as select_ops
from tensorflux.ops.state import variable_scope as vs

__all__ = ["Decoder", "dynamic_decode"]


class Decoder(abc.ABC):
    """The decoder interface `dynamic_decode` runs.

    Properties `batch_size`, `output_size` (structure of per-example TensorShapes) and
    `output_dtype`; `initialize() -> (finished, inputs, state)`; `step(time, inputs, state)
    -> (outputs, next_state, next_inputs, finished)`; optional `finalize(outputs, state,
    lengths)`; `tracks_own_finished` when the decoder's `finished` already includes past ones.
    """

    @property
    @abc.abstractmethod
    def batch_size(self):
        ...

    @property
    @abc.abstractmethod
    def output_size(self):
        ...

    @property
    @abc.abstractmethod
    def output_dtype(self):
        ...

    @property
    def tracks_own_finished(self):
        return False

    @abc.abstractmethod
    def initialize(self, name=None):
        ...

    @abc.abstractmethod
    def step(self, time, inputs, state, name=None):
        ...

    def finalize(self, outputs, final_state, sequence_lengths):
        """Optional last pass over the stacked outputs (beam search backtracks here)."""
        return outputs, final_state


def _batch_shape(batch_size, size):
    """[batch] + size as a static shape (None where unknown)."""
    size = TensorShape(size)
    batch = constant_value(convert_to_tensor(batch_size, name="batch_size")) \
        if not isinstance(batch_size, int) else batch_size
    return TensorShape([None if batch is None else int(batch)]).concatenate(size)


def _zero_outputs(size, dtype, batch_size):
    """Zeros shaped [batch] + size for each output."""
    def zeros(s, d):
        dims = [convert_to_tensor(batch_size, dtype=dtypes.int32)]
        dims += [convert_to_tensor(n, dtype=dtypes.int32) for n in TensorShape(s).as_list()]
        return array_ops.zeros(concat_ops.stack(dims), dtype=d)

    return nest.map_structure(zeros, size, dtype)


def dynamic_decode(decoder, output_time_major=False, impute_finished=False,
                   maximum_iterations=None, parallel_iterations=32, swap_memory=False,
                   scope=None):
    """Runs `decoder` until every entry finished (TF1 `tf.contrib.seq2seq.dynamic_decode`).

    Args:
        decoder: a `Decoder`.
        output_time_major: outputs as [time, batch, ...] instead of [batch, time, ...].
        impute_finished: zero the outputs and freeze the state of finished entries.
        maximum_iterations: optional int32 scalar bound on the number of steps.
        parallel_iterations, swap_memory: passed to the while loop.
        scope: variable scope (default "decoder").

    Returns:
        (final_outputs, final_state, final_sequence_lengths).

    Raises:
        TypeError: decoder is not a Decoder.
        ValueError: maximum_iterations is not a scalar.
    """
    if not isinstance(decoder, Decoder):
        raise TypeError(f"Expected decoder to be type Decoder, but saw: {type(decoder)}")
    with vs.variable_scope(scope, default_name="decoder"):
        if maximum_iterations is not None:
            maximum_iterations = convert_to_tensor(maximum_iterations, dtype=dtypes.int32,
                                                   name="maximum_iterations")
            if maximum_iterations.get_shape().ndims != 0:
                raise ValueError("maximum_iterations must be a scalar")
        initial_finished, initial_inputs, initial_state = decoder.initialize()
        zero_outputs = _zero_outputs(decoder.output_size, decoder.output_dtype,
                                     decoder.batch_size)
        if maximum_iterations is not None:
            initial_finished = comparison_ops.logical_or(
                initial_finished, comparison_ops.greater_equal(0, maximum_iterations))
        initial_lengths = array_ops.zeros_like(initial_finished, dtype=dtypes.int32)

        def make_ta(size, dtype):
            size = TensorShape(size)
            shape = _batch_shape(decoder.batch_size, size) if size.ndims else None
            return tensor_array_ops.TensorArray(dtype=dtype, size=0, dynamic_size=True,
                                                element_shape=shape)

        initial_outputs_ta = nest.map_structure(make_ta, decoder.output_size,
                                                decoder.output_dtype)

        def condition(time, outputs_ta, state, inputs, finished, lengths):
            return comparison_ops.logical_not(reduction_ops.reduce_all(finished))

        def body(time, outputs_ta, state, inputs, finished, lengths):
            next_outputs, decoder_state, next_inputs, decoder_finished = decoder.step(
                time, inputs, state)
            if decoder.tracks_own_finished:
                next_finished = decoder_finished
            else:
                next_finished = comparison_ops.logical_or(decoder_finished, finished)
            next_lengths = select_ops.where(
                comparison_ops.logical_not(finished),
                array_ops.fill(shape_ops.shape(lengths), time + 1), lengths)
            nest.assert_same_structure(state, decoder_state)
            nest.assert_same_structure(outputs_ta, next_outputs)
            nest.assert_same_structure(inputs, next_inputs)
            if impute_finished:
                emit = nest.map_structure(lambda out, zero: select_ops.where(finished, zero, out),
                                          next_outputs, zero_outputs)

                def copy_state(new, cur):
                    if isinstance(cur, tensor_array_ops.TensorArray):
                        return new
                    new.set_shape(cur.get_shape())
                    if new.get_shape().ndims == 0:
                        return new
                    return select_ops.where(finished, cur, new)

                next_state = nest.map_structure(copy_state, decoder_state, state)
            else:
                emit, next_state = next_outputs, decoder_state
            outputs_ta = nest.map_structure(lambda ta, out: ta.write(time, out), outputs_ta,
                                            emit)
            return time + 1, outputs_ta, next_state, next_inputs, next_finished, next_lengths

        result = while_loop.while_loop(
            condition, body,
            loop_vars=(convert_to_tensor(0, dtype=dtypes.int32), initial_outputs_ta,
                       initial_state, initial_inputs, initial_finished, initial_lengths),
            parallel_iterations=parallel_iterations, maximum_iterations=maximum_iterations,
            swap_memory=swap_memory)
        final_outputs = nest.map_structure(lambda ta: ta.stack(), result[1])
        final_state, final_lengths = result[2], result[5]
        try:
            final_outputs, final_state = decoder.finalize(final_outputs, final_state,
                                                          final_lengths)
        except NotImplementedError:
            pass
        if not output_time_major:
            final_outputs = nest.map_structure(transpose_batch_time, final_outputs)
    return final_outputs, final_state, final_lengths
