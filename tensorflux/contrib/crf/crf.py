"""Linear-chain CRF ops (TF 1.15's `tf.contrib.crf`), built from core ops.

Shapes: `inputs` (unary potentials) are [batch_size, max_seq_len, num_tags], `tag_indices`
[batch_size, max_seq_len] ints, `sequence_lengths` [batch_size] ints and `transition_params`
[num_tags, num_tags] (score of moving from tag i to tag j). Positions at or past a sequence's
length contribute nothing; a sequence of length 0 scores 0 and has log-likelihood 0, as in TF.

NOTE: TF 1.15's `crf_forward` read the alphas at index `length - 2` of the steps after the
first, so a length-1 sequence in a batch with max_seq_len > 1 got the partition function of
a length-2 sequence. Here the first state is kept in front of the steps and read at
`length - 1`, which equals TF 1.15 for every length >= 2 and is right for length 1 (the fix
TensorFlow Addons made).
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import dimension_value
from tensorflux.layers.rnn_cell import RNNCell
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.control_flow import functional
from tensorflux.ops.control_flow import primitives as control_flow_ops
from tensorflux.ops.nn import rnn
from tensorflux.ops.state import variable_scope as vs

__all__ = ["crf_sequence_score", "crf_multitag_sequence_score", "crf_log_norm",
           "crf_log_likelihood", "crf_unary_score", "crf_binary_score", "crf_forward",
           "crf_decode", "viterbi_decode", "CrfForwardRnnCell", "CrfDecodeForwardRnnCell",
           "CrfDecodeBackwardRnnCell"]


def _check_potentials(inputs, arg: str):
    inputs = convert_to_tensor(inputs, name=arg)
    if inputs.shape.ndims is not None and inputs.shape.ndims != 3:
        raise ValueError(f"{arg} must be a [batch_size, max_seq_len, num_tags] tensor, got shape "
                         f"{inputs.shape}")
    return inputs


def _check_transitions(transition_params, num_tags=None):
    transition_params = convert_to_tensor(transition_params, name="transition_params")
    shape = transition_params.shape
    if shape.ndims is not None:
        dims = [dimension_value(d) for d in shape._dim_list]
        if len(dims) != 2 or (None not in dims and dims[0] != dims[1]):
            raise ValueError(f"transition_params must be a [num_tags, num_tags] matrix, got "
                             f"shape {shape}")
        if num_tags is not None and dims[0] is not None and dims[0] != num_tags:
            raise ValueError(f"transition_params has {dims[0]} tags but the potentials have "
                             f"{num_tags}")
    return transition_params


def _lengths(sequence_lengths):
    return convert_to_tensor(sequence_lengths, name="sequence_lengths")


def _by_max_seq_len(inputs, single_fn, multi_fn):
    """single_fn() when inputs' max_seq_len is 1, else multi_fn() (a tf.cond when unknown)."""
    steps = dimension_value(inputs.shape[1]) if inputs.shape.ndims else None
    if steps is not None:
        return single_fn() if steps == 1 else multi_fn()
    return control_flow_ops.cond(math_ops.equal(array_ops.shape(inputs)[1], 1), single_fn,
                                 multi_fn)


def _mask_empty(values, sequence_lengths):
    """Zero where a sequence has length <= 0."""
    return array_ops.where(math_ops.less_equal(sequence_lengths, 0),
                           array_ops.zeros_like(values), values)


def crf_sequence_score(inputs, tag_indices, sequence_lengths, transition_params):
    """The unnormalized score of each tag sequence.

    Args:
        inputs: [batch_size, max_seq_len, num_tags] unary potentials.
        tag_indices: [batch_size, max_seq_len] tag indices (int32 or int64).
        sequence_lengths: [batch_size] sequence lengths.
        transition_params: [num_tags, num_tags] transition scores.

    Returns:
        [batch_size] scores: unary potentials of the tags plus the transitions between them,
        within each sequence's length (0 for empty sequences).

    Raises:
        ValueError: inputs or transition_params have the wrong rank.
    """
    inputs = _check_potentials(inputs, "inputs")
    tag_indices = convert_to_tensor(tag_indices, name="tag_indices")
    sequence_lengths = _lengths(sequence_lengths)
    transition_params = _check_transitions(transition_params)

    def _single_seq_fn():
        batch_size = array_ops.shape(inputs, out_type=tag_indices.dtype)[0]
        example_inds = array_ops.reshape(math_ops.range(batch_size, dtype=tag_indices.dtype),
                                         [-1, 1])
        scores = array_ops.gather_nd(array_ops.squeeze(inputs, [1]),
                                     array_ops.concat([example_inds, tag_indices], axis=1))
        return _mask_empty(scores, sequence_lengths)

    def _multi_seq_fn():
        unary_scores = crf_unary_score(tag_indices, sequence_lengths, inputs)
        binary_scores = crf_binary_score(tag_indices, sequence_lengths, transition_params)
        return unary_scores + binary_scores

    return _by_max_seq_len(inputs, _single_seq_fn, _multi_seq_fn)


def crf_multitag_sequence_score(inputs, tag_bitmap, sequence_lengths, transition_params):
    """The log-sum-exp of the scores of all tag sequences allowed by `tag_bitmap`.

    Args:
        inputs: [batch_size, max_seq_len, num_tags] unary potentials.
        tag_bitmap: [batch_size, max_seq_len, num_tags] bool: the tags allowed at each step.
        sequence_lengths: [batch_size] sequence lengths.
        transition_params: [num_tags, num_tags] transition scores.

    Returns:
        [batch_size] scores.
    """
    inputs = _check_potentials(inputs, "inputs")
    tag_bitmap = convert_to_tensor(tag_bitmap, dtype=dtypes.bool_, name="tag_bitmap")
    filtered = array_ops.where(tag_bitmap, inputs,
                               array_ops.fill(array_ops.shape(inputs),
                                              math_ops.cast(float("-inf"), inputs.dtype)))

    def _single_seq_fn():
        return math_ops.reduce_logsumexp(filtered, axis=[1, 2], keepdims=False)

    def _multi_seq_fn():
        return crf_log_norm(filtered, sequence_lengths, transition_params)

    return _by_max_seq_len(inputs, _single_seq_fn, _multi_seq_fn)


def crf_log_norm(inputs, sequence_lengths, transition_params):
    """The log partition function of each sequence (the forward algorithm).

    Args:
        inputs: [batch_size, max_seq_len, num_tags] unary potentials.
        sequence_lengths: [batch_size] sequence lengths.
        transition_params: [num_tags, num_tags] transition scores.

    Returns:
        [batch_size] log Z (0 for empty sequences).
    """
    inputs = _check_potentials(inputs, "inputs")
    sequence_lengths = _lengths(sequence_lengths)
    transition_params = _check_transitions(transition_params)
    first_input = array_ops.squeeze(array_ops.slice(inputs, [0, 0, 0], [-1, 1, -1]), [1])

    def _single_seq_fn():
        return _mask_empty(math_ops.reduce_logsumexp(first_input, [1]), sequence_lengths)

    def _multi_seq_fn():
        rest_of_input = array_ops.slice(inputs, [0, 1, 0], [-1, -1, -1])
        alphas = crf_forward(rest_of_input, first_input, transition_params, sequence_lengths)
        return _mask_empty(math_ops.reduce_logsumexp(alphas, [1]), sequence_lengths)

    return _by_max_seq_len(inputs, _single_seq_fn, _multi_seq_fn)


def crf_log_likelihood(inputs, tag_indices, sequence_lengths, transition_params=None):
    """The log-likelihood of tag sequences under a CRF.

    Args:
        inputs: [batch_size, max_seq_len, num_tags] unary potentials.
        tag_indices: [batch_size, max_seq_len] gold tag indices.
        sequence_lengths: [batch_size] sequence lengths.
        transition_params: [num_tags, num_tags] transition scores; None creates (or reuses) the
            variable "transitions" in the current variable scope.

    Returns:
        (log_likelihood [batch_size], transition_params).

    Raises:
        ValueError: bad ranks, or num_tags unknown when the variable must be created.

    Example:
        >>> ll, trans = tf.contrib.crf.crf_log_likelihood(logits, tags, lengths)
        >>> loss = tf.reduce_mean(-ll)
    """
    inputs = _check_potentials(inputs, "inputs")
    num_tags = dimension_value(inputs.shape[2]) if inputs.shape.ndims else None
    if transition_params is None:
        if num_tags is None:
            raise ValueError("crf_log_likelihood: inputs.shape[2] (num_tags) must be known to "
                             "create the transitions variable")
        transition_params = vs.get_variable("transitions", [num_tags, num_tags],
                                            dtype=inputs.dtype.base_dtype)
    else:
        transition_params = _check_transitions(transition_params, num_tags)
    sequence_scores = crf_sequence_score(inputs, tag_indices, sequence_lengths,
                                         transition_params)
    log_norm = crf_log_norm(inputs, sequence_lengths, transition_params)
    return sequence_scores - log_norm, transition_params


def crf_unary_score(tag_indices, sequence_lengths, inputs):
    """The sum of the unary potentials of the tags within each sequence's length.

    Returns:
        [batch_size] unary scores.
    """
    inputs = _check_potentials(inputs, "inputs")
    tag_indices = convert_to_tensor(tag_indices, name="tag_indices")
    if tag_indices.dtype.base_dtype not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"tag_indices must be int32 or int64, got {tag_indices.dtype.name}")
    sequence_lengths = _lengths(sequence_lengths)
    shape = array_ops.shape(inputs)
    batch_size, max_seq_len, num_tags = shape[0], shape[1], shape[2]
    flattened_inputs = array_ops.reshape(inputs, [-1])
    offsets = array_ops.expand_dims(math_ops.range(batch_size) * max_seq_len * num_tags, 1)
    offsets += array_ops.expand_dims(math_ops.range(max_seq_len) * num_tags, 0)
    if tag_indices.dtype.base_dtype == dtypes.int64:
        offsets = math_ops.cast(offsets, dtypes.int64)
    flattened_tag_indices = array_ops.reshape(offsets + tag_indices, [-1])
    unary_scores = array_ops.reshape(array_ops.gather(flattened_inputs, flattened_tag_indices),
                                     array_ops.stack([batch_size, max_seq_len]))
    masks = array_ops.sequence_mask(math_ops.cast(sequence_lengths, dtypes.int32),
                                    maxlen=array_ops.shape(tag_indices)[1],
                                    dtype=inputs.dtype.base_dtype)
    return math_ops.reduce_sum(unary_scores * masks, 1)


def crf_binary_score(tag_indices, sequence_lengths, transition_params):
    """The sum of the transition scores between consecutive tags within each length.

    Returns:
        [batch_size] binary scores.
    """
    tag_indices = convert_to_tensor(tag_indices, name="tag_indices")
    sequence_lengths = _lengths(sequence_lengths)
    transition_params = _check_transitions(transition_params)
    num_tags = array_ops.shape(transition_params, out_type=tag_indices.dtype)[0]
    num_transitions = array_ops.shape(tag_indices)[1] - 1
    start_tag_indices = array_ops.slice(tag_indices, [0, 0], array_ops.stack([-1, num_transitions]))
    end_tag_indices = array_ops.slice(tag_indices, [0, 1], array_ops.stack([-1, num_transitions]))
    flattened_transition_indices = start_tag_indices * num_tags + end_tag_indices
    flattened_transition_params = array_ops.reshape(transition_params, [-1])
    binary_scores = array_ops.gather(flattened_transition_params, flattened_transition_indices)
    masks = array_ops.sequence_mask(math_ops.cast(sequence_lengths, dtypes.int32),
                                    maxlen=array_ops.shape(tag_indices)[1],
                                    dtype=transition_params.dtype.base_dtype)
    truncated_masks = array_ops.slice(masks, [0, 1], [-1, -1])
    return math_ops.reduce_sum(binary_scores * truncated_masks, 1)


def crf_forward(inputs, state, transition_params, sequence_lengths):
    """The forward algorithm's alphas at the last step of each sequence.

    Args:
        inputs: [batch_size, max_seq_len - 1, num_tags] unary potentials after the first step.
        state: [batch_size, num_tags] the alphas of the first step (its potentials).
        transition_params: [num_tags, num_tags] transition scores.
        sequence_lengths: [batch_size] sequence lengths (of the whole sequences).

    Returns:
        [batch_size, num_tags] alphas at step `length - 1` of each sequence (the first state
        for lengths <= 1).
    """
    inputs = _check_potentials(inputs, "inputs")
    state = convert_to_tensor(state, name="state")
    transition_params = _check_transitions(transition_params)
    sequence_lengths = math_ops.cast(_lengths(sequence_lengths), dtypes.int32)
    last_index = math_ops.maximum(0, sequence_lengths - 1)
    steps = array_ops.transpose(inputs, [1, 0, 2])
    transitions = array_ops.expand_dims(transition_params, 0)

    def _scan_fn(alphas, step_inputs):
        transition_scores = array_ops.expand_dims(alphas, 2) + transitions
        return step_inputs + math_ops.reduce_logsumexp(transition_scores, [1])

    all_alphas = array_ops.transpose(functional.scan(_scan_fn, steps, state), [1, 0, 2])
    all_alphas = array_ops.concat([array_ops.expand_dims(state, 1), all_alphas], 1)
    idxs = array_ops.stack([math_ops.range(array_ops.shape(last_index)[0]), last_index], axis=1)
    return array_ops.gather_nd(all_alphas, idxs)


def viterbi_decode(score, transition_params):
    """The highest scoring tag sequence, outside the graph (NumPy).

    Args:
        score: [seq_len, num_tags] unary potentials (an array).
        transition_params: [num_tags, num_tags] transition scores (an array).

    Returns:
        (viterbi, viterbi_score): the tag indices as a list of ints, and their score.

    Raises:
        ValueError: bad shapes.
    """
    score = np.asarray(score)
    transition_params = np.asarray(transition_params)
    if score.ndim != 2 or score.shape[0] == 0:
        raise ValueError(f"viterbi_decode: score must be a non-empty [seq_len, num_tags] array, "
                         f"got shape {score.shape}")
    num_tags = score.shape[1]
    if transition_params.shape != (num_tags, num_tags):
        raise ValueError(f"viterbi_decode: transition_params must be [{num_tags}, {num_tags}], "
                         f"got shape {transition_params.shape}")
    trellis = np.zeros_like(score)
    backpointers = np.zeros_like(score, dtype=np.int32)
    trellis[0] = score[0]
    for t in range(1, score.shape[0]):
        v = np.expand_dims(trellis[t - 1], 1) + transition_params
        trellis[t] = score[t] + np.max(v, 0)
        backpointers[t] = np.argmax(v, 0)
    viterbi = [int(np.argmax(trellis[-1]))]
    for bp in reversed(backpointers[1:]):
        viterbi.append(int(bp[viterbi[-1]]))
    viterbi.reverse()
    return viterbi, np.max(trellis[-1])


class _TransitionCell(RNNCell):
    """A cell over `num_tags` states carrying `[1, num_tags, num_tags]` transition scores."""

    def __init__(self, transition_params):
        """Args: transition_params: [num_tags, num_tags] transition scores."""
        super().__init__()
        transition_params = _check_transitions(transition_params)
        self._transition_params = array_ops.expand_dims(transition_params, 0)
        self._num_tags = dimension_value(transition_params.shape[0])

    @property
    def state_size(self):
        return self._num_tags

    @property
    def output_size(self):
        return self._num_tags


class CrfForwardRnnCell(_TransitionCell):
    """One step of the forward algorithm: output = new state = the next alphas."""

    def __call__(self, inputs, state, scope=None):
        """(new_alphas, new_alphas) for [batch_size, num_tags] inputs and alphas."""
        transition_scores = array_ops.expand_dims(state, 2) + self._transition_params
        new_alphas = inputs + math_ops.reduce_logsumexp(transition_scores, [1])
        return new_alphas, new_alphas


class CrfDecodeForwardRnnCell(_TransitionCell):
    """One Viterbi step: output the int32 backpointers, state the best scores so far."""

    def __call__(self, inputs, state, scope=None):
        """(backpointers [batch_size, num_tags] int32, new_state [batch_size, num_tags])."""
        transition_scores = array_ops.expand_dims(state, 2) + self._transition_params
        new_state = inputs + math_ops.reduce_max(transition_scores, [1])
        backpointers = math_ops.cast(math_ops.argmax(transition_scores, 1), dtypes.int32)
        return backpointers, new_state


class CrfDecodeBackwardRnnCell(RNNCell):
    """One step of following the backpointers: state and output are the [batch_size, 1] tag."""

    def __init__(self, num_tags):
        """Args: num_tags: the number of tags."""
        super().__init__()
        self._num_tags = num_tags

    @property
    def state_size(self):
        return 1

    @property
    def output_size(self):
        return 1

    def __call__(self, inputs, state, scope=None):
        """(new_tags, new_tags) for [batch_size, num_tags] backpointers and a [batch_size, 1]
        tag."""
        state = array_ops.squeeze(state, axis=[1])
        b_indices = math_ops.range(array_ops.shape(inputs)[0])
        indices = array_ops.stack([b_indices, state], axis=1)
        new_tags = array_ops.expand_dims(array_ops.gather_nd(inputs, indices), axis=-1)
        return new_tags, new_tags


def crf_decode(potentials, transition_params, sequence_length):
    """The highest scoring tag sequences, in the graph (Viterbi).

    Args:
        potentials: [batch_size, max_seq_len, num_tags] unary potentials.
        transition_params: [num_tags, num_tags] transition scores.
        sequence_length: [batch_size] sequence lengths.

    Returns:
        (decode_tags [batch_size, max_seq_len] int32, best_score [batch_size]); tags past a
        sequence's length are 0.

    Raises:
        ValueError: bad ranks, or num_tags unknown.
    """
    potentials = _check_potentials(potentials, "potentials")
    transition_params = _check_transitions(transition_params)
    sequence_length = math_ops.cast(_lengths(sequence_length), dtypes.int32)

    def _single_seq_fn():
        squeezed = array_ops.squeeze(potentials, [1])
        decode_tags = array_ops.expand_dims(math_ops.argmax(squeezed, axis=1), 1)
        best_score = math_ops.reduce_max(squeezed, axis=1)
        return math_ops.cast(decode_tags, dtypes.int32), best_score

    def _multi_seq_fn():
        num_tags = dimension_value(potentials.shape[2]) if potentials.shape.ndims else None
        if num_tags is None and transition_params.shape.ndims:
            num_tags = dimension_value(transition_params.shape[0])
        if num_tags is None:
            raise ValueError("crf_decode: num_tags must be known from potentials.shape[2] or "
                             "transition_params.shape[0]")
        initial_state = array_ops.squeeze(array_ops.slice(potentials, [0, 0, 0], [-1, 1, -1]),
                                          axis=[1])
        inputs = array_ops.slice(potentials, [0, 1, 0], [-1, -1, -1])
        length_less_one = math_ops.maximum(0, sequence_length - 1)
        backpointers, last_score = rnn.dynamic_rnn(
            CrfDecodeForwardRnnCell(transition_params), inputs=inputs,
            sequence_length=length_less_one, initial_state=initial_state, time_major=False,
            dtype=dtypes.int32)
        backpointers = array_ops.reverse_sequence(backpointers, length_less_one, seq_axis=1)
        last_tag = array_ops.expand_dims(
            math_ops.cast(math_ops.argmax(last_score, axis=1), dtypes.int32), axis=-1)
        decode_tags, _ = rnn.dynamic_rnn(
            CrfDecodeBackwardRnnCell(num_tags), inputs=backpointers,
            sequence_length=length_less_one, initial_state=last_tag, time_major=False,
            dtype=dtypes.int32)
        decode_tags = array_ops.squeeze(decode_tags, axis=[2])
        decode_tags = array_ops.concat([last_tag, decode_tags], axis=1)
        decode_tags = array_ops.reverse_sequence(decode_tags, sequence_length, seq_axis=1)
        return decode_tags, math_ops.reduce_max(last_score, axis=1)

    return _by_max_seq_len(potentials, _single_seq_fn, _multi_seq_fn)
