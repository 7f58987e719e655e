"""`tf.contrib.seq2seq.BeamSearchDecoder` and `tile_batch` (TF 1.15 semantics).

States, inputs and outputs are [batch, beam, ...] between steps; the cell runs on
[batch * beam, ...]. Each step adds the log-softmax of the logits to every live beam's log
probability (finished beams may only extend with `end_token` at no cost), scores the
candidates (divided by the GNMT length penalty ((5 + len) / 6) ** length_penalty_weight, plus
the coverage penalty when its weight is non-zero), keeps the `beam_width` best per batch
entry, and gathers the cell states of their parents. `finalize` backtracks the parent
pointers with `gather_tree`.
"""

from __future__ import annotations

import collections

import numpy as np

from tensorflux.contrib.seq2seq.attention_wrapper import AttentionWrapperState
from tensorflux.contrib.seq2seq.basic_decoder import check_cell_and_layer, output_layer_size
from tensorflux.contrib.seq2seq.beam_search_ops import gather_tree
from tensorflux.contrib.seq2seq.decoder import Decoder
from tensorflux.framework import dtypes, nest, scopes
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import constant_value, convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.array import concat_split as concat_ops
from tensorflux.ops.array import gather_scatter as gather_ops
from tensorflux.ops.array import padding as pad_ops
from tensorflux.ops.array import partition as partition_ops
from tensorflux.ops.array import shapes as shape_ops
from tensorflux.ops.control_flow import primitives as control_flow_ops
from tensorflux.ops.data_flow import tensor_array_class as tensor_array_ops
from tensorflux.ops.math import casting as cast_ops
from tensorflux.ops.math import comparison as comparison_ops
from tensorflux.ops.math import reduction as reduction_ops
from tensorflux.ops.math import select as select_ops
from tensorflux.ops.math import sequence as sequence_ops
from tensorflux.ops.math import unary as unary_ops
from tensorflux.ops.nn import core as nn_ops
from tensorflux.ops.nn import functions as nn_impl
from tensorflux.platform import tf_logging as logging

__all__ = ["BeamSearchDecoder", "BeamSearchDecoderOutput", "BeamSearchDecoderState",
           "FinalBeamSearchDecoderOutput", "tile_batch"]


class BeamSearchDecoderState(collections.namedtuple(
        "BeamSearchDecoderState", ("cell_state", "log_probs", "finished", "lengths",
                                   "accumulated_attention_probs"))):
    __slots__ = ()


class BeamSearchDecoderOutput(collections.namedtuple(
        "BeamSearchDecoderOutput", ("scores", "predicted_ids", "parent_ids"))):
    __slots__ = ()


class FinalBeamSearchDecoderOutput(collections.namedtuple(
        "FinalBeamDecoderOutput", ("predicted_ids", "beam_search_decoder_output"))):
    """predicted_ids: [batch, time, beam] full beams (best first); beam_search_decoder_output:
    the per-step scores, ids and parent ids."""

    __slots__ = ()


def _tile_batch(t, multiplier):
    t = convert_to_tensor(t, name="t")
    ndims = t.get_shape().ndims
    if ndims is None or ndims < 1:
        raise ValueError("t must have statically known rank")
    shape_t = shape_ops.shape(t)
    tiling = [1] * (ndims + 1)
    tiling[1] = multiplier
    batch = t.get_shape()[0].value
    tiled = pad_ops.tile(shape_ops.expand_dims(t, 1), tiling)
    tiled = shape_ops.reshape(tiled, concat_ops.concat(
        [[shape_t[0] * multiplier], shape_t[1:]], 0))
    tiled.set_shape(TensorShape([None if batch is None else batch * multiplier])
                    .concatenate(t.get_shape()[1:]))
    return tiled


def tile_batch(t, multiplier, name=None):
    """Repeats each batch entry `multiplier` times: [b0, b1] -> [b0, b0, b1, b1] (for a
    nested structure of tensors)."""
    flat = nest.flatten(t)
    with scopes.name_scope(name, "tile_batch", flat + [multiplier]):
        return nest.map_structure(lambda x: _tile_batch(x, multiplier), t)


def _as_shape(s):
    """A state size as a TensorShape; a size only known as a tensor gives what its constant
    value says (unknown when it has none)."""
    if isinstance(s, Tensor):
        value = constant_value(s)
        return TensorShape(None) if value is None else TensorShape(np.reshape(value, [-1]))
    return TensorShape(s)


def gather_tree_from_array(t, parent_ids, sequence_length):
    """Reorders stacked per-step values `t` ([max_time, batch * beam, ...] or [max_time,
    batch, beam, ...]) along the beams' ancestry given by `parent_ids` [max_time, batch,
    beam]; steps past a beam's `sequence_length` [batch, beam] keep their own beam."""
    max_time = parent_ids.get_shape()[0].value or shape_ops.shape(parent_ids)[0]
    batch_size = parent_ids.get_shape()[1].value or shape_ops.shape(parent_ids)[1]
    beam_width = parent_ids.get_shape()[2].value or shape_ops.shape(parent_ids)[2]
    beam_ids = pad_ops.tile(shape_ops.reshape(sequence_ops.range(beam_width), [1, 1, -1]),
                            concat_ops.stack([max_time, batch_size, 1]))
    max_lengths = cast_ops.cast(reduction_ops.reduce_max(sequence_length, axis=1),
                                dtypes.int32)
    sorted_ids = gather_tree(beam_ids, parent_ids, max_sequence_lengths=max_lengths,
                             end_token=beam_width + 1)
    in_bound = shape_ops.transpose(partition_ops.sequence_mask(sequence_length,
                                                               maxlen=max_time), [2, 0, 1])
    sorted_ids = select_ops.where(in_bound, sorted_ids, beam_ids)
    time_ind = pad_ops.tile(shape_ops.reshape(sequence_ops.range(max_time), [-1, 1, 1]),
                            concat_ops.stack([1, batch_size, beam_width]))
    batch_ind = pad_ops.tile(shape_ops.reshape(sequence_ops.range(batch_size), [1, -1, 1]),
                             concat_ops.stack([max_time, 1, beam_width]))
    indices = concat_ops.stack([time_ind, batch_ind, sorted_ids], -1)
    final_shape = shape_ops.shape(t)
    gather_from = shape_ops.reshape(t, concat_ops.stack([max_time, batch_size, beam_width,
                                                         -1]))
    ordered = shape_ops.reshape(gather_ops.gather_nd(gather_from, indices), final_shape)
    ordered.set_shape(t.get_shape())
    return ordered


def _check_maybe(t):
    if t.get_shape().ndims is None:
        raise ValueError(f"Expected tensor ({t.name}) to have known rank, but ndims == None.")


def _length_penalty(sequence_lengths, penalty_factor):
    if isinstance(penalty_factor, (int, float)) and penalty_factor == 0:
        return 1.0
    penalty_factor = convert_to_tensor(penalty_factor, dtype=dtypes.float32,
                                       name="penalty_factor")
    static = constant_value(penalty_factor)
    if static is not None and static == 0:
        return 1.0
    lengths = cast_ops.cast(sequence_lengths, dtypes.float32)
    return math_ops.div((5.0 + lengths) ** penalty_factor, (5.0 + 1.0) ** penalty_factor)


def _mask_probs(probs, eos_token, finished):
    """Finished beams get all their probability on EOS (0 there, dtype.min elsewhere)."""
    vocab_size = shape_ops.shape(probs)[2]
    finished_row = pad_ops.one_hot(eos_token, vocab_size, dtype=probs.dtype,
                                   on_value=convert_to_tensor(0.0, dtype=probs.dtype),
                                   off_value=probs.dtype.min)
    finished_probs = pad_ops.tile(shape_ops.reshape(finished_row, [1, 1, -1]),
                                  concat_ops.concat([shape_ops.shape(finished), [1]], 0))
    finished_mask = pad_ops.tile(shape_ops.expand_dims(finished, 2), [1, 1, vocab_size])
    return select_ops.where(finished_mask, finished_probs, probs)


def _tensor_gather_helper(gather_indices, gather_from, batch_size, range_size, gather_shape,
                          name=None):
    with scopes.name_scope(name, "tensor_gather_helper"):
        offsets = shape_ops.expand_dims(sequence_ops.range(batch_size) * range_size, 1)
        indices = shape_ops.reshape(gather_indices + offsets, [-1])
        output = gather_ops.gather(shape_ops.reshape(gather_from, gather_shape), indices)
        final_shape = shape_ops.shape(gather_from)[:1 + len(gather_shape)]
        static_batch = constant_value(convert_to_tensor(batch_size))
        final_static = TensorShape([None if static_batch is None else int(static_batch)]) \
            .concatenate(gather_from.get_shape()[1:1 + len(gather_shape)])
        output = shape_ops.reshape(output, final_shape, name="output")
        output.set_shape(final_static)
        return output


def _maybe_tensor_gather_helper(gather_indices, gather_from, batch_size, range_size,
                                gather_shape):
    if isinstance(gather_from, tensor_array_ops.TensorArray):
        return gather_from
    _check_maybe(gather_from)
    if gather_from.get_shape().ndims >= len(gather_shape):
        return _tensor_gather_helper(gather_indices, gather_from, batch_size, range_size,
                                     gather_shape)
    return gather_from


def _attention_probs(attention_state):
    probs = attention_state.alignments
    if isinstance(probs, tuple):
        probs = concat_ops.concat([shape_ops.expand_dims(p, -1) for p in probs], -1)
        probs = reduction_ops.reduce_mean(probs, -1)
    return probs


def get_attention_probs(next_cell_state, coverage_penalty_weight):
    """The attention probabilities [batch, beam, memory_time] of the attentional cells in a
    state (averaged over several), or None when the coverage penalty is off."""
    if coverage_penalty_weight == 0.0:
        return None
    per_layer = []
    if isinstance(next_cell_state, AttentionWrapperState):
        per_layer = [_attention_probs(next_cell_state)]
    elif isinstance(next_cell_state, tuple):
        per_layer = [_attention_probs(s) for s in next_cell_state
                     if isinstance(s, AttentionWrapperState)]
    if not per_layer:
        raise ValueError("coverage_penalty_weight must be 0.0 if no cell is attentional.")
    if len(per_layer) == 1:
        return per_layer[0]
    stacked = concat_ops.concat([shape_ops.expand_dims(p, -1) for p in per_layer], -1)
    return reduction_ops.reduce_mean(stacked, -1)


def _get_scores(log_probs, sequence_lengths, length_penalty_weight, coverage_penalty_weight,
                finished, accumulated_attention_probs):
    penalty = cast_ops.cast(_length_penalty(sequence_lengths, length_penalty_weight),
                            log_probs.dtype)
    scores = log_probs / penalty
    if coverage_penalty_weight == 0.0:
        return scores
    if accumulated_attention_probs is None:
        raise ValueError("accumulated_attention_probs can be None only if coverage penalty is "
                         "disabled.")
    probs = accumulated_attention_probs
    probs = select_ops.where(comparison_ops.equal(probs, 0.0), array_ops.ones_like(probs),
                             probs)
    coverage = reduction_ops.reduce_sum(unary_ops.log(math_ops.minimum(probs, 1.0)), 2)
    coverage = coverage * cast_ops.cast(finished, coverage.dtype)
    return scores + shape_ops.expand_dims(coverage * coverage_penalty_weight, 2)


class BeamSearchDecoder(Decoder):
    """Beam search over a cell whose initial state is tiled `beam_width` times per batch
    entry (see `tile_batch`).

    Args:
        cell: the RNN cell (e.g. an AttentionWrapper over tiled memory).
        embedding: embedding matrix, or a callable from ids to inputs.
        start_tokens: int32 vector [batch]; end_token: int32 scalar.
        initial_state: the cell state for batch * beam_width entries.
        beam_width: beams per batch entry.
        output_layer: optional Layer from cell outputs to logits.
        length_penalty_weight: GNMT length penalty weight (0 disables).
        coverage_penalty_weight: GNMT coverage penalty weight (0 disables).
        reorder_tensor_arrays: accepted; TensorArrays in the final cell state keep step
            order (they are not reordered by beam).
    """

    def __init__(self, cell, embedding, start_tokens, end_token, initial_state, beam_width,
                 output_layer=None, length_penalty_weight=0.0, coverage_penalty_weight=0.0,
                 reorder_tensor_arrays=True):
        check_cell_and_layer(cell, output_layer)
        self._cell = cell
        self._output_layer = output_layer
        self._reorder_tensor_arrays = reorder_tensor_arrays
        if callable(embedding):
            self._embedding_fn = embedding
        else:
            self._embedding_fn = lambda ids: nn_impl.embedding_lookup(embedding, ids)
        self._start_tokens = convert_to_tensor(start_tokens, dtype=dtypes.int32,
                                               name="start_tokens")
        if self._start_tokens.get_shape().ndims != 1:
            raise ValueError("start_tokens must be a vector")
        self._end_token = convert_to_tensor(end_token, dtype=dtypes.int32, name="end_token")
        if self._end_token.get_shape().ndims != 0:
            raise ValueError("end_token must be a scalar")
        if not isinstance(beam_width, int) or beam_width < 1:
            raise ValueError(f"beam_width must be a positive int, got {beam_width!r}")
        self._batch_size = shape_ops.size(self._start_tokens)
        self._beam_width = beam_width
        self._length_penalty_weight = length_penalty_weight
        self._coverage_penalty_weight = coverage_penalty_weight
        self._initial_cell_state = nest.map_structure(self._maybe_split_batch_beams,
                                                      initial_state, cell.state_size)
        self._start_tokens = pad_ops.tile(shape_ops.expand_dims(self._start_tokens, 1),
                                          [1, beam_width])
        self._start_inputs = self._embedding_fn(self._start_tokens)
        self._finished = pad_ops.one_hot(
            array_ops.zeros(shape_ops.expand_dims(self._batch_size, 0), dtype=dtypes.int32),
            depth=beam_width, on_value=False, off_value=True, dtype=dtypes.bool_)

    @property
    def batch_size(self):
        return self._batch_size

    @property
    def tracks_own_finished(self):
        return True

    @property
    def output_size(self):
        shape = TensorShape([self._beam_width])
        return BeamSearchDecoderOutput(scores=shape, predicted_ids=shape, parent_ids=shape)

    @property
    def output_dtype(self):
        dtype = nest.flatten(self._initial_cell_state)[0].dtype
        return BeamSearchDecoderOutput(
            scores=nest.map_structure(lambda _: dtype,
                                      output_layer_size(self._output_layer,
                                                        self._cell.output_size)),
            predicted_ids=dtypes.int32, parent_ids=dtypes.int32)

    def _static_batch(self):
        value = constant_value(self._batch_size)
        return None if value is None else int(value)

    def _merge_batch_beams(self, t, s):
        s = _as_shape(s)
        t_shape = shape_ops.shape(t)
        batch = self._static_batch()
        reshaped = shape_ops.reshape(t, concat_ops.concat(
            [[self._batch_size * self._beam_width], t_shape[2:]], 0))
        reshaped.set_shape(TensorShape([None if batch is None else batch * self._beam_width])
                           .concatenate(s))
        return reshaped

    def _split_batch_beams(self, t, s):
        s = _as_shape(s)
        t_shape = shape_ops.shape(t)
        reshaped = shape_ops.reshape(t, concat_ops.concat(
            [[self._batch_size, self._beam_width], t_shape[1:]], 0))
        expected = TensorShape([self._static_batch(), self._beam_width]).concatenate(s)
        if not reshaped.get_shape().is_compatible_with(expected):
            raise ValueError(f"Unexpected behavior when reshaping between beam width and batch "
                             f"size. The reshaped tensor has shape: {reshaped.get_shape()}. We "
                             f"expected it to have shape (batch_size, beam_width, depth) == "
                             f"{expected}. Perhaps you forgot to create a zero_state with "
                             f"batch_size=encoder_batch_size * beam_width?")
        reshaped.set_shape(expected)
        return reshaped

    def _maybe_split_batch_beams(self, t, s):
        if isinstance(t, tensor_array_ops.TensorArray):
            return t
        _check_maybe(t)
        return self._split_batch_beams(t, s) if t.get_shape().ndims >= 1 else t

    def _maybe_merge_batch_beams(self, t, s):
        if isinstance(t, tensor_array_ops.TensorArray):
            return t
        _check_maybe(t)
        return self._merge_batch_beams(t, s) if t.get_shape().ndims >= 2 else t

    def initialize(self, name=None):
        """(finished, start inputs, BeamSearchDecoderState): only beam 0 is live at first."""
        dtype = nest.flatten(self._initial_cell_state)[0].dtype
        log_probs = pad_ops.one_hot(
            array_ops.zeros(shape_ops.expand_dims(self._batch_size, 0), dtype=dtypes.int32),
            depth=self._beam_width, on_value=convert_to_tensor(0.0, dtype=dtype),
            off_value=convert_to_tensor(-np.inf, dtype=dtype), dtype=dtype)
        attention_probs = get_attention_probs(self._initial_cell_state,
                                              self._coverage_penalty_weight)
        state = BeamSearchDecoderState(
            cell_state=self._initial_cell_state, log_probs=log_probs, finished=self._finished,
            lengths=array_ops.zeros(concat_ops.stack([self._batch_size, self._beam_width]),
                                    dtype=dtypes.int64),
            accumulated_attention_probs=() if attention_probs is None else attention_probs)
        return self._finished, self._start_inputs, state

    def finalize(self, outputs, final_state, sequence_lengths):
        """Backtracks the beams: FinalBeamSearchDecoderOutput and the final state."""
        del sequence_lengths
        max_lengths = cast_ops.cast(reduction_ops.reduce_max(final_state.lengths, axis=1),
                                    dtypes.int32)
        predicted_ids = gather_tree(outputs.predicted_ids, outputs.parent_ids,
                                    max_sequence_lengths=max_lengths,
                                    end_token=self._end_token)
        if self._reorder_tensor_arrays:
            final_state = final_state._replace(cell_state=nest.map_structure(
                lambda t: self._maybe_sort_array_beams(t, outputs.parent_ids,
                                                       final_state.lengths),
                final_state.cell_state))
        return FinalBeamSearchDecoderOutput(predicted_ids=predicted_ids,
                                            beam_search_decoder_output=outputs), final_state

    def _maybe_sort_array_beams(self, t, parent_ids, sequence_length):
        """A TensorArray of per-step [batch * beam, ...] values (e.g. an alignment history),
        stacked and reordered so each beam follows its own ancestry."""
        if not isinstance(t, tensor_array_ops.TensorArray):
            return t
        shape = t.element_shape
        if shape.ndims is None or shape.ndims < 1:
            logging.warning(f"The TensorArray {t.handle.name} in the cell state is not "
                            f"amenable to sorting based on the beam search result. For a "
                            f"TensorArray to be sorted, its elements shape must be defined "
                            f"and have at least a rank of 1, but saw shape: {shape}")
            return t
        return gather_tree_from_array(t.stack(), parent_ids, sequence_length)

    def step(self, time, inputs, state, name=None):
        """One beam-search step: (BeamSearchDecoderOutput, next state, next inputs,
        finished)."""
        with scopes.name_scope(name, "BeamSearchDecoderStep", (time, inputs, state)):
            inputs = nest.map_structure(
                lambda inp: self._merge_batch_beams(inp, inp.get_shape()[2:]), inputs)
            cell_state = nest.map_structure(self._maybe_merge_batch_beams, state.cell_state,
                                            self._cell.state_size)
            cell_outputs, next_cell_state = self._cell(inputs, cell_state)
            cell_outputs = nest.map_structure(
                lambda out: self._split_batch_beams(out, out.get_shape()[1:]), cell_outputs)
            next_cell_state = nest.map_structure(self._maybe_split_batch_beams,
                                                 next_cell_state, self._cell.state_size)
            if self._output_layer is not None:
                cell_outputs = self._output_layer(cell_outputs)
            output, beam_state = _beam_search_step(
                time, cell_outputs, next_cell_state, state, self._batch_size,
                self._beam_width, self._end_token, self._length_penalty_weight,
                self._coverage_penalty_weight)
            finished = beam_state.finished
            sample_ids = output.predicted_ids
            next_inputs = control_flow_ops.cond(
                reduction_ops.reduce_all(finished), lambda: self._start_inputs,
                lambda: self._embedding_fn(sample_ids))
        return output, beam_state, next_inputs, finished


def _beam_search_step(time, logits, next_cell_state, beam_state, batch_size, beam_width,
                      end_token, length_penalty_weight, coverage_penalty_weight):
    static_batch = constant_value(convert_to_tensor(batch_size))
    static_batch = None if static_batch is None else int(static_batch)
    lengths = beam_state.lengths
    previously_finished = beam_state.finished
    not_finished = comparison_ops.logical_not(previously_finished)
    step_log_probs = nn_ops.log_softmax(logits)
    step_log_probs = _mask_probs(step_log_probs, end_token, previously_finished)
    total_probs = shape_ops.expand_dims(beam_state.log_probs, 2) + step_log_probs
    vocab_size = logits.get_shape()[-1].value
    if vocab_size is None:
        vocab_size = shape_ops.shape(logits)[-1]
    lengths_to_add = pad_ops.one_hot(array_ops.fill(concat_ops.stack([batch_size, beam_width]),
                                                    end_token),
                                     depth=vocab_size, on_value=np.int64(0),
                                     off_value=np.int64(1), dtype=dtypes.int64)
    lengths_to_add = lengths_to_add * shape_ops.expand_dims(
        cast_ops.cast(not_finished, dtypes.int64), 2)
    new_lengths = lengths_to_add + shape_ops.expand_dims(lengths, 2)
    accumulated = None
    attention_probs = get_attention_probs(next_cell_state, coverage_penalty_weight)
    if attention_probs is not None:
        attention_probs = attention_probs * shape_ops.expand_dims(
            cast_ops.cast(not_finished, attention_probs.dtype), 2)
        accumulated = beam_state.accumulated_attention_probs + attention_probs
    scores = _get_scores(total_probs, new_lengths, length_penalty_weight,
                         coverage_penalty_weight, previously_finished, accumulated)
    scores_flat = shape_ops.reshape(scores, concat_ops.stack([batch_size, -1]))
    next_scores, word_indices = nn_ops.top_k(scores_flat, k=beam_width)
    next_scores.set_shape([static_batch, beam_width])
    word_indices.set_shape([static_batch, beam_width])
    next_probs = _tensor_gather_helper(word_indices, total_probs, batch_size,
                                       beam_width * vocab_size, [-1], name="next_beam_probs")
    next_word_ids = cast_ops.cast(math_ops.mod(word_indices, vocab_size,
                                               name="next_beam_word_ids"), dtypes.int32)
    next_beam_ids = cast_ops.cast(math_ops.floordiv(word_indices, vocab_size),
                                  dtypes.int32, name="next_beam_parent_ids")
    previously_finished = _tensor_gather_helper(next_beam_ids, previously_finished,
                                                batch_size, beam_width, [-1])
    next_finished = comparison_ops.logical_or(
        previously_finished, comparison_ops.equal(next_word_ids, end_token),
        name="next_beam_finished")
    next_lengths = _tensor_gather_helper(next_beam_ids, lengths, batch_size, beam_width, [-1])
    next_lengths = next_lengths + cast_ops.cast(
        comparison_ops.logical_not(previously_finished), dtypes.int64)
    next_accumulated = ()
    if accumulated is not None:
        next_accumulated = _tensor_gather_helper(
            next_beam_ids, accumulated, batch_size, beam_width,
            [batch_size * beam_width, -1], name="next_accumulated_attention_probs")
    gather_shape = [batch_size * beam_width, -1]
    next_cell_state = nest.map_structure(
        lambda t: _maybe_tensor_gather_helper(next_beam_ids, t, batch_size, beam_width,
                                              gather_shape), next_cell_state)
    state = BeamSearchDecoderState(cell_state=next_cell_state, log_probs=next_probs,
                                   lengths=next_lengths, finished=next_finished,
                                   accumulated_attention_probs=next_accumulated)
    output = BeamSearchDecoderOutput(scores=next_scores, predicted_ids=next_word_ids,
                                     parent_ids=next_beam_ids)
    return output, state
