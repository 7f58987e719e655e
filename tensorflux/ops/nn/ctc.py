"""Connectionist temporal classification: CTCLoss, CTCGreedyDecoder, CTCBeamSearchDecoder.

`CTCLoss` runs the forward-backward recursion in log space over the extended label sequence
(blanks between and around the labels), one vectorised step per time step over all batch
entries and label positions; its second output is the gradient of the loss with respect to the
unnormalised logits, which the registered gradient scales by the incoming loss gradient (as in
TensorFlow). The blank class is the last one (`num_classes - 1`).
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework.op_def import define_op
from tensorflux.framework.scopes import op_name_scope as _scope
from tensorflux.framework.sparse_tensor import SparseTensor
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.lib.numerics.ctc_beam_search import beam_search, log_softmax
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.math.casting import cast
from tensorflux.ops.nn import core as nn_core

__all__ = ["ctc_loss", "ctc_loss_v2", "ctc_greedy_decoder", "ctc_beam_search_decoder",
           "ctc_beam_search_decoder_v2", "ctc_unique_labels", "collapse_repeated"]

_NEG_INF = -np.inf



def _batch_dims(inputs: TensorShape, sequence_length: TensorShape):
    inputs = inputs.with_rank(3)
    batch = inputs[1].merge_with(sequence_length.with_rank(1)[0])
    return inputs, batch


def _check_inputs(inputs, sequence_length):
    if inputs.ndim != 3:
        raise errors.InvalidArgumentError(
            None, None, f"inputs must be 3-D [max_time, batch_size, num_classes], got shape "
                        f"{list(inputs.shape)}")
    if sequence_length.shape != (inputs.shape[1],):
        raise errors.InvalidArgumentError(
            None, None, f"len(sequence_length) != batch_size: sequence_length has shape "
                        f"{list(sequence_length.shape)}, batch_size is {inputs.shape[1]}")
    if sequence_length.size and (sequence_length.min() < 0
                                 or sequence_length.max() > inputs.shape[0]):
        bad = int(np.flatnonzero((sequence_length < 0)
                                 | (sequence_length > inputs.shape[0]))[0])
        raise errors.InvalidArgumentError(
            None, None, f"sequence_length({bad}) = {sequence_length[bad]} is not in [0, "
                        f"max_time = {inputs.shape[0]}]")


# -- CTCLoss ------------------------------------------------------------------------------------

CTCLoss = define_op(
    "CTCLoss",
    inputs=["inputs: T", "labels_indices: int64", "labels_values: int32",
            "sequence_length: int32"],
    outputs=["loss: T", "gradient: T"],
    attrs=["preprocess_collapse_repeated: bool = False", "ctc_merge_repeated: bool = True",
           "ignore_longer_outputs_than_inputs: bool = False", "T: {float32, float64} = float32"])


@CTCLoss.shape_fn
def _ctc_loss_shape(inputs, labels_indices, labels_values, sequence_length):
    labels_indices.with_rank(2)[1].merge_with(2)
    labels_indices[0].merge_with(labels_values.with_rank(1)[0])
    inputs, batch = _batch_dims(inputs, sequence_length)
    return [TensorShape([batch]), TensorShape([inputs[0], batch, inputs[2]])]


def _dense_labels(indices, values, batch, collapse):
    """Padded [batch, max_len] labels and their lengths from the sparse (row-ordered) labels."""
    if indices.ndim != 2 or indices.shape[1] != 2 or values.shape != (indices.shape[0],):
        raise errors.InvalidArgumentError(
            None, None, f"labels_indices must be [num_labels, 2] and labels_values "
                        f"[num_labels], got {list(indices.shape)} and {list(values.shape)}")
    rows = indices[:, 0]
    if rows.size and (rows.min() < 0 or rows.max() >= batch):
        raise errors.InvalidArgumentError(
            None, None, f"labels batch index must be in [0, {batch}), got "
                        f"{int(rows[(rows < 0) | (rows >= batch)][0])}")
    if rows.size > 1 and np.any(np.diff(rows) < 0):
        raise errors.InvalidArgumentError(None, None, "labels_indices must be ordered by batch")
    lengths = np.bincount(rows, minlength=batch).astype(np.int64)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    position = np.arange(rows.size) - starts[rows]
    if collapse and rows.size:
        keep = np.ones(rows.size, bool)
        keep[1:] = (values[1:] != values[:-1]) | (rows[1:] != rows[:-1])
        rows, values = rows[keep], values[keep]
        lengths = np.bincount(rows, minlength=batch).astype(np.int64)
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        position = np.arange(rows.size) - starts[rows]
    dense = np.zeros((batch, int(lengths.max(initial=0))), np.int64)
    dense[rows, position] = values
    return dense, lengths


def _check_labels(labels, lengths, num_classes):
    if (lengths == 0).any():
        raise errors.InvalidArgumentError(
            None, None, f"Labels length is zero in batch {int(np.argmax(lengths == 0))}")
    valid = np.arange(labels.shape[1]) < lengths[:, None]
    bad = valid & ((labels < 0) | (labels >= num_classes))
    if bad.any():
        b = int(np.flatnonzero(bad.any(axis=1))[0])
        row = ",".join(str(v) for v in labels[b, :lengths[b]])
        if (labels[b, :lengths[b]] < 0).any():
            raise errors.InvalidArgumentError(
                None, None, f"All labels must be nonnegative integers, batch: {b} labels: {row}")
        raise errors.InvalidArgumentError(
            None, None, f"No label may be greater than num_classes. num_classes: {num_classes}, "
                        f"batch: {b} labels: {row}")


def _logsumexp3(a, b, c):
    top = np.maximum(np.maximum(a, b), c)
    safe = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        return safe + np.log(np.exp(a - safe) + np.exp(b - safe) + np.exp(c - safe))


def _shift(x, k):
    """x[..., s - k] with -inf shifted in (k > 0) or x[..., s + |k|] (k < 0)."""
    out = np.full_like(x, _NEG_INF)
    if k > 0:
        out[:, k:] = x[:, :-k]
    else:
        out[:, :k] = x[:, -k:]
    return out


@CTCLoss.kernel(factory=True)
def _ctc_loss_kernel(preprocess_collapse_repeated, ctc_merge_repeated,
                     ignore_longer_outputs_than_inputs, T):
    def ctc_loss(inputs, labels_indices, labels_values, sequence_length):
        _check_inputs(inputs, sequence_length)
        max_time, batch, num_classes = inputs.shape
        labels, lengths = _dense_labels(labels_indices, labels_values, batch,
                                        preprocess_collapse_repeated)
        _check_labels(labels, lengths, num_classes)
        blank = num_classes - 1
        seq = sequence_length.astype(np.int64)
        repeats = (labels[:, 1:] == labels[:, :-1]) & \
            (np.arange(1, labels.shape[1]) < lengths[:, None])
        required = lengths + (repeats.sum(axis=1) if ctc_merge_repeated else 0)
        too_long = required > seq
        if too_long.any() and not ignore_longer_outputs_than_inputs:
            b = int(np.flatnonzero(too_long)[0])
            raise errors.InvalidArgumentError(
                None, None, f"Not enough time for target transition sequence (required: "
                            f"{required[b]}, available: {seq[b]}), batch: {b}. You can turn "
                            f"this error into a warning by using the flag "
                            f"ignore_longer_outputs_than_inputs")
        loss, grad = _ctc_forward_backward(inputs.astype(np.float64), labels, lengths, seq,
                                           blank, ctc_merge_repeated)
        loss[too_long] = 0.0
        grad[:, too_long] = 0.0
        dtype = inputs.dtype
        return loss.astype(dtype), grad.astype(dtype)

    return ctc_loss


def _ctc_forward_backward(inputs, labels, lengths, seq, blank, merge_repeated):
    """Loss [batch] and d loss / d logits [time, batch, classes] by log-space alpha-beta."""
    max_time, batch, num_classes = inputs.shape
    states = 2 * labels.shape[1] + 1
    ext = np.full((batch, states), blank, np.int64)
    ext[:, 1::2] = labels
    in_use = np.arange(states) < (2 * lengths[:, None] + 1)
    # A skip from s - 2 to s is allowed onto a label that differs from the one before it (onto
    # any label when repeats are not merged).
    skip = np.zeros((batch, states), bool)
    skip[:, 3::2] = True if not merge_repeated else labels[:, 1:] != labels[:, :-1]
    skip &= in_use
    # Without merging, staying on a label emits it again, so only blanks may repeat.
    stay = np.ones((batch, states), bool)
    if not merge_repeated:
        stay[:, 1::2] = False
    log_probs = log_softmax(inputs)
    emit = np.take_along_axis(log_probs, np.broadcast_to(ext, (max_time,) + ext.shape), axis=2)
    emit = np.where(in_use, emit, _NEG_INF)
    rows = np.arange(batch)
    last = 2 * lengths
    alpha = np.full((max_time, batch, states), _NEG_INF)
    init = np.full((batch, states), _NEG_INF)
    init[:, 0] = 0.0
    init[:, 1] = np.where(lengths > 0, 0.0, _NEG_INF)
    prev = init
    for t in range(max_time):
        if t == 0:
            step = init + emit[0]
        else:
            step = _logsumexp3(np.where(stay, prev, _NEG_INF), _shift(prev, 1),
                               np.where(skip, _shift(prev, 2), _NEG_INF)) + emit[t]
        prev = np.where((t < seq)[:, None], step, prev)
        alpha[t] = step
    final_t = np.maximum(seq - 1, 0)
    a_end = alpha[final_t, rows]
    log_p = np.logaddexp(a_end[rows, last], np.where(lengths > 0, a_end[rows, last - 1],
                                                     _NEG_INF))
    end = np.full((batch, states), _NEG_INF)
    end[rows, last] = 0.0
    end[rows, np.maximum(last - 1, 0)] = np.where(lengths > 0, 0.0, end[rows, last - 1])
    beta = np.full((max_time, batch, states), _NEG_INF)
    nxt = end
    skip_next = _shift(skip.astype(float), -2) > 0
    for t in range(max_time - 1, -1, -1):
        if t < max_time - 1:
            carried = nxt + emit[t + 1]
            step = _logsumexp3(np.where(stay, carried, _NEG_INF), _shift(carried, -1),
                               np.where(skip_next, _shift(carried, -2), _NEG_INF))
        else:
            step = end
        here = np.where((t == seq - 1)[:, None], end, np.where((t < seq - 1)[:, None], step,
                                                               _NEG_INF))
        beta[t] = here
        nxt = here
    with np.errstate(invalid="ignore", over="ignore"):
        occupancy = np.exp(alpha + beta - log_p[None, :, None])
    occupancy = np.where(np.isfinite(occupancy), occupancy, 0.0)
    flat = (np.arange(max_time)[:, None, None] * batch + rows[None, :, None]) * num_classes \
        + ext[None]
    expected = np.bincount(flat.reshape(-1), weights=occupancy.reshape(-1),
                           minlength=max_time * batch * num_classes)
    expected = expected.reshape(max_time, batch, num_classes)
    valid_t = (np.arange(max_time)[:, None] < seq[None, :])[:, :, None]
    grad = np.where(valid_t, np.exp(log_probs) - expected, 0.0)
    return -log_p, grad


@CTCLoss.gradient
def _ctc_loss_grad(op, grad_loss, _):
    # NOTE: as in TensorFlow, the op's own gradient output is reused; differentiating it again
    # is refused.
    gradient = array_ops.prevent_gradient(
        op.outputs[1], message="Currently there is no way to take the second derivative of "
                               "ctc_loss due to the fused implementation's interaction with "
                               "tf.gradients()")
    return [array_ops.expand_dims(grad_loss, -1) * gradient, None, None, None]


def ctc_loss(labels, inputs=None, sequence_length=None, preprocess_collapse_repeated=False,
             ctc_merge_repeated=True, ignore_longer_outputs_than_inputs=False, time_major=True,
             logits=None):
    """Connectionist temporal classification loss: -log p(labels | inputs) per batch entry.

    Args:
        labels: int32 `SparseTensor` of label sequences; `labels.indices[i, :] == [b, position]`
            and values in `[0, num_classes - 1)` (the last class is the blank).
        inputs: float logits `[max_time, batch, num_classes]` (`[batch, max_time, num_classes]`
            when `time_major` is False); they are normalised with a softmax inside.
        sequence_length: int32 `[batch]` sequence lengths (at most `max_time`).
        preprocess_collapse_repeated: merge repeated labels before computing the loss.
        ctc_merge_repeated: when False, repeated labels are never merged by the recursion.
        ignore_longer_outputs_than_inputs: give loss 0 (and gradient 0) to entries whose labels
            need more time steps than they have, instead of failing.
        time_major: the layout of `inputs`.
        logits: an alias of `inputs`.

    Returns:
        A 1-D float tensor `[batch]` of negative log probabilities.

    Raises:
        TypeError: `labels` is not a SparseTensor.
        InvalidArgumentError: (at run time) too few time steps, bad labels or lengths.

    Example:
        >>> loss = tf.nn.ctc_loss(sparse_labels, logits, seq_len)
    """
    if not isinstance(labels, SparseTensor):
        raise TypeError("Expected labels (first argument) to be a SparseTensor")
    if (inputs is None) == (logits is None):
        raise ValueError("ctc_loss: pass exactly one of inputs and logits")
    inputs = inputs if inputs is not None else logits
    with _scope(None, "CTCLoss"):
        inputs = convert_to_tensor(inputs, name="inputs")
        if not time_major:
            inputs = array_ops.transpose(inputs, [1, 0, 2])
        values = labels.values
        if values.dtype.base_dtype != dtypes.int32:
            values = cast(values, dtypes.int32)
        sequence_length = convert_to_tensor(sequence_length, dtype=dtypes.int32,
                                            name="sequence_length")
        out = CTCLoss(inputs, labels.indices, values, sequence_length,
                      preprocess_collapse_repeated=preprocess_collapse_repeated,
                      ctc_merge_repeated=ctc_merge_repeated,
                      ignore_longer_outputs_than_inputs=ignore_longer_outputs_than_inputs)
    return out.loss


# -- CTCGreedyDecoder ---------------------------------------------------------------------------

CTCGreedyDecoder = define_op(
    "CTCGreedyDecoder", inputs=["inputs: T", "sequence_length: int32"],
    outputs=["decoded_indices: int64", "decoded_values: int64", "decoded_shape: int64",
             "log_probability: T"],
    attrs=["merge_repeated: bool = False", "blank_index: int = -1",
           "T: {float32, float64} = float32"],
    differentiable=False)


@CTCGreedyDecoder.shape_fn
def _ctc_greedy_shape(inputs, sequence_length):
    _, batch = _batch_dims(inputs, sequence_length)
    return [TensorShape([None, 2]), TensorShape([None]), TensorShape([2]),
            TensorShape([batch, 1])]


def _to_sparse(keep, labels):
    """Row-major SparseTensor parts of the labels kept along time (keep/labels are [B, T])."""
    counts = keep.sum(axis=1)
    b, t = np.nonzero(keep)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    position = np.arange(b.size) - starts[b]
    indices = np.stack([b, position], axis=1).astype(np.int64).reshape(-1, 2)
    shape = np.array([keep.shape[0], int(counts.max(initial=0))], np.int64)
    return indices, labels[b, t].astype(np.int64), shape


@CTCGreedyDecoder.kernel(factory=True)
def _ctc_greedy_kernel(merge_repeated, blank_index, T):
    def ctc_greedy_decoder(inputs, sequence_length):
        _check_inputs(inputs, sequence_length)
        max_time, batch, num_classes = inputs.shape
        blank = num_classes - 1 if blank_index < 0 else blank_index
        if not 0 <= blank < num_classes:
            raise errors.InvalidArgumentError(
                None, None, f"blank_index must be in [0, {num_classes}), got {blank_index}")
        if inputs.size == 0:
            raise errors.InvalidArgumentError(None, None, "inputs must not be empty")
        best = np.argmax(inputs, axis=2).T
        top = np.max(inputs, axis=2).T
        valid = np.arange(max_time)[None, :] < sequence_length[:, None]
        keep = valid & (best != blank)
        if merge_repeated and max_time > 1:
            keep[:, 1:] &= best[:, 1:] != best[:, :-1]
        log_prob = -np.where(valid, top, 0).sum(axis=1, keepdims=True).astype(inputs.dtype)
        return _to_sparse(keep, best) + (log_prob,)

    return ctc_greedy_decoder


def ctc_greedy_decoder(inputs, sequence_length, merge_repeated=True, blank_index=None):
    """Greedy (best path) decoding: the most likely class per step, repeats merged, blanks out.

    Args:
        inputs: float logits `[max_time, batch, num_classes]`.
        sequence_length: int32 `[batch]`.
        merge_repeated: merge consecutive equal classes (before removing blanks).
        blank_index: the blank class; None (or negative) means `num_classes - 1`.

    Returns:
        `([decoded], log_probability)`: a one-element list holding the int64 SparseTensor of
        decoded labels `[batch, max_decoded_length]`, and `[batch, 1]` float scores (minus the
        sum over time of the largest logit).

    Example:
        >>> (decoded,), neg_sum_logits = tf.nn.ctc_greedy_decoder(logits, seq_len)
    """
    with _scope(None, "CTCGreedyDecoder"):
        inputs = convert_to_tensor(inputs, name="inputs")
        sequence_length = convert_to_tensor(sequence_length, dtype=dtypes.int32,
                                            name="sequence_length")
        out = CTCGreedyDecoder(inputs, sequence_length, merge_repeated=merge_repeated,
                               blank_index=-1 if blank_index is None else int(blank_index))
    return ([SparseTensor(out.decoded_indices, out.decoded_values, out.decoded_shape)],
            out.log_probability)


# -- CTCBeamSearchDecoder -----------------------------------------------------------------------

CTCBeamSearchDecoder = define_op(
    "CTCBeamSearchDecoder", inputs=["inputs: T", "sequence_length: int32"],
    outputs=["decoded_indices: top_paths * int64", "decoded_values: top_paths * int64",
             "decoded_shape: top_paths * int64", "log_probability: T"],
    attrs=["beam_width: int >= 1", "top_paths: int >= 1", "merge_repeated: bool = True",
           "T: {float32, float64} = float32"],
    differentiable=False)


@CTCBeamSearchDecoder.shape_fn
def _ctc_beam_shape(inputs, sequence_length, *, top_paths):
    _, batch = _batch_dims(inputs, sequence_length)
    return [[TensorShape([None, 2])] * top_paths, [TensorShape([None])] * top_paths,
            [TensorShape([2])] * top_paths, TensorShape([batch, top_paths])]


@CTCBeamSearchDecoder.kernel(factory=True)
def _ctc_beam_kernel(beam_width, top_paths, merge_repeated, T):
    def ctc_beam_search_decoder(inputs, sequence_length):
        _check_inputs(inputs, sequence_length)
        if top_paths > beam_width:
            raise errors.InvalidArgumentError(
                None, None, f"requested more paths than the beam width: top_paths = {top_paths}, "
                            f"beam_width = {beam_width}")
        paths, lengths, log_probs = beam_search(inputs.astype(np.float64),
                                                sequence_length.astype(np.int64), beam_width,
                                                top_paths, merge_repeated)
        indices, values, shapes = [], [], []
        positions = np.arange(paths.shape[2])[None, :]
        for p in range(top_paths):
            part = _to_sparse(positions < lengths[:, p, None], paths[:, p])
            indices.append(part[0])
            values.append(part[1])
            shapes.append(part[2])
        return tuple(indices + values + shapes) + (log_probs.astype(inputs.dtype),)

    return ctc_beam_search_decoder


def ctc_beam_search_decoder(inputs, sequence_length, beam_width=100, top_paths=1,
                            merge_repeated=True):
    """Prefix beam search decoding of CTC logits (the blank is the last class).

    Args:
        inputs: float logits `[max_time, batch, num_classes]` (normalised per step inside).
        sequence_length: int32 `[batch]`.
        beam_width: the number of prefixes kept per step.
        top_paths: how many of the best decodings to return (<= beam_width).
        merge_repeated: also merge consecutive equal labels of a decoded prefix.

    Returns:
        `(decoded, log_probabilities)`: a list of `top_paths` int64 SparseTensors (best first)
        and a `[batch, top_paths]` float tensor of their log probabilities.

    Example:
        >>> decoded, log_probs = tf.nn.ctc_beam_search_decoder(logits, seq_len, beam_width=10)
    """
    with _scope(None, "CTCBeamSearchDecoder"):
        inputs = convert_to_tensor(inputs, name="inputs")
        sequence_length = convert_to_tensor(sequence_length, dtype=dtypes.int32,
                                            name="sequence_length")
        out = CTCBeamSearchDecoder(inputs, sequence_length, beam_width=beam_width,
                                   top_paths=top_paths, merge_repeated=merge_repeated)
    decoded = [SparseTensor(i, v, s) for i, v, s in
               zip(out.decoded_indices, out.decoded_values, out.decoded_shape)]
    return decoded, out.log_probability


def ctc_beam_search_decoder_v2(inputs, sequence_length, beam_width=100, top_paths=1):
    """`ctc_beam_search_decoder` without merging repeated labels of the decoded prefixes.

    Example:
        >>> decoded, log_probs = tf.nn.ctc_beam_search_decoder_v2(logits, seq_len, 10)
    """
    return ctc_beam_search_decoder(inputs, sequence_length, beam_width=beam_width,
                                   top_paths=top_paths, merge_repeated=False)


# -- composites: ctc_loss_v2, ctc_unique_labels, collapse_repeated -----------------------------


def ctc_unique_labels(labels, name=None):
    """Each row's distinct labels in order of first appearance, and each label's index there.

    Args:
        labels: int32/int64 `[batch, max_label_length]` dense labels.
        name: optional name.

    Returns:
        `(unique, unique_idx)`: int64 `[batch, max_label_length]` distinct labels padded with 0,
        and int32 `[batch, max_label_length]` positions of each label in `unique`.

    Example:
        >>> tf.nn.ctc_unique_labels([[3, 3, 1, 3]])   # ([[3, 1, 0, 0]], [[0, 0, 1, 0]])
    """
    with _scope(name, "ctc_unique_labels"):
        labels = math_ops.cast(convert_to_tensor(labels, name="labels"), dtypes.int64)
        width = array_ops.shape(labels)[1]
        same = math_ops.cast(math_ops.equal(array_ops.expand_dims(labels, 2),
                                            array_ops.expand_dims(labels, 1)),
                             dtypes.int32)
        first = math_ops.argmax(same, axis=2, output_type=dtypes.int32)
        is_first = math_ops.cast(math_ops.equal(first, math_ops.range(width)), dtypes.int32)
        rank = math_ops.cumsum(is_first, axis=1) - 1
        unique_idx = math_ops.reduce_sum(array_ops.one_hot(first, width, dtype=dtypes.int32)
                                         * array_ops.expand_dims(rank, 1), axis=2)
        slots = array_ops.one_hot(rank, width, dtype=dtypes.int64) * \
            math_ops.cast(array_ops.expand_dims(is_first, 2), dtypes.int64)
        unique = math_ops.reduce_sum(slots * array_ops.expand_dims(labels, 2), axis=1)
    return unique, unique_idx


def collapse_repeated(labels, seq_length, name=None):
    """Merges runs of equal labels in each row.

    Args:
        labels: `[batch, max_length]` int labels.
        seq_length: `[batch]` lengths of the rows.
        name: optional name.

    Returns:
        `(collapsed, new_seq_length)`: `[batch, max(new_seq_length)]` labels padded with 0, and
        the int32 new lengths.

    Example:
        >>> tf.nn.collapse_repeated([[1, 1, 2, 2]], [4])   # ([[1, 2]], [2])
    """
    with _scope(name, "collapse_repeated_labels"):
        labels = convert_to_tensor(labels, name="labels")
        seq_length = math_ops.cast(convert_to_tensor(seq_length, name="seq_length"), dtypes.int32)
        width = array_ops.shape(labels)[1]
        changed = math_ops.not_equal(labels[:, 1:], labels[:, :-1])
        keep = array_ops.concat([array_ops.ones_like(labels[:, :1], dtype=dtypes.bool_), changed],
                                axis=1)
        keep = math_ops.logical_and(keep, array_ops.sequence_mask(seq_length, maxlen=width))
        keep_int = math_ops.cast(keep, dtypes.int32)
        new_length = math_ops.reduce_sum(keep_int, axis=1)
        slots = array_ops.one_hot(math_ops.cumsum(keep_int, axis=1) - 1,
                                  math_ops.reduce_max(new_length),
                                  dtype=labels.dtype.base_dtype) * \
            math_ops.cast(array_ops.expand_dims(keep_int, 2), labels.dtype.base_dtype)
        collapsed = math_ops.reduce_sum(slots * array_ops.expand_dims(labels, 2), axis=1)
    return collapsed, new_length


def ctc_loss_v2(labels, logits, label_length, logit_length, logits_time_major=True, unique=None,
                blank_index=None, name=None):
    """CTC loss with dense (or sparse) labels and a configurable blank (TF 2 `tf.nn.ctc_loss`).

    Args:
        labels: `[batch, max_label_length]` int labels (or an int SparseTensor).
        logits: float `[frames, batch, num_labels]` (`[batch, frames, num_labels]` when
            `logits_time_major` is False).
        label_length: `[batch]` label lengths (None with SparseTensor labels).
        logit_length: `[batch]` int lengths of the logit sequences.
        logits_time_major: the layout of `logits`.
        unique: accepted for compatibility (`ctc_unique_labels` output); the loss is the same.
        blank_index: the blank class; negative counts from `num_labels`. Defaults to 0 for dense
            labels and must be given for sparse ones.
        name: optional name.

    Returns:
        A `[batch]` float tensor of negative log likelihoods.

    Raises:
        ValueError: missing `blank_index` with SparseTensor labels, or an unknown class count
            with a negative `blank_index`.

    Example:
        >>> loss = tf.nn.ctc_loss_v2(labels, logits, label_length, logit_length)
    """
    del unique
    with _scope(name, "ctc_loss_dense"):
        logits = convert_to_tensor(logits, name="logits")
        if not logits_time_major:
            logits = array_ops.transpose(logits, [1, 0, 2])
        if isinstance(labels, SparseTensor):
            if blank_index is None:
                raise ValueError("ctc_loss_v2: blank_index must be given when using "
                                 "SparseTensor labels")
            values = math_ops.cast(labels.values, dtypes.int32)
            indices = labels.indices
        else:
            if label_length is None:
                raise ValueError("ctc_loss_v2: label_length is required with dense labels")
            dense = math_ops.cast(convert_to_tensor(labels, name="labels"), dtypes.int32)
            dense = array_ops.pad(dense, [[0, 0], [0, 1]])
            label_length = math_ops.cast(label_length, dtypes.int32)
            # Empty label sequences get a placeholder label (their loss is replaced below).
            empty = math_ops.equal(label_length, 0)
            mask = array_ops.sequence_mask(math_ops.maximum(label_length, 1),
                                           maxlen=array_ops.shape(dense)[1])
            indices = math_ops.where(mask)
            values = array_ops.gather_nd(dense, indices)
            blank_index = 0 if blank_index is None else blank_index
        num_classes = logits.shape.with_rank(3)[2].value
        if blank_index < 0:
            if num_classes is None:
                raise ValueError("ctc_loss_v2: a negative blank_index needs a known number of "
                                 "classes")
            blank_index += num_classes
        if num_classes is None or blank_index != num_classes - 1:
            logits = array_ops.concat([logits[:, :, :blank_index], logits[:, :, blank_index + 1:],
                                       logits[:, :, blank_index:blank_index + 1]], axis=2)
            values = math_ops.where(values < blank_index, values, values - 1)
        logit_length = math_ops.cast(convert_to_tensor(logit_length, name="logit_length"),
                                     dtypes.int32)
        if isinstance(labels, SparseTensor):
            return CTCLoss(logits, indices, values, logit_length).loss
        placeholder = array_ops.gather(empty, indices[:, 0])
        values = math_ops.where(placeholder, array_ops.zeros_like(values), values)
        loss = CTCLoss(logits, indices, values, logit_length).loss
        # An empty label sequence has one alignment: all blanks.
        steps = array_ops.transpose(array_ops.sequence_mask(logit_length,
                                                            maxlen=array_ops.shape(logits)[0],
                                                            dtype=logits.dtype))
        blank_loss = -math_ops.reduce_sum(nn_core.log_softmax(logits)[:, :, -1] * steps, axis=0)
    return math_ops.where(empty, blank_loss, loss)
