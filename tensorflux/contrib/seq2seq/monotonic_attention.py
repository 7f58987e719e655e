"""Monotonic attention (Raffel et al. 2017): BahdanauMonotonicAttention,
LuongMonotonicAttention and `monotonic_attention`.

At each memory position the mechanism decides (p_choose_i = sigmoid(score), or score > 0 in
"hard" mode) whether to stop there, moving only forward from where it stopped last step;
`monotonic_attention` turns these probabilities and the previous alignments into the expected
alignments ("recursive" with a scan, "parallel" in closed form with cumulative products,
"hard" for 0/1 decisions). Alignments start as one-hot on the first memory position.
"""

from __future__ import annotations

import functools

from tensorflux.contrib.seq2seq.attention_wrapper import (
    _bahdanau_score,
    _BaseAttentionMechanism,
    _dense,
    _luong_score,
    _memory_dtype,
    safe_cumprod,
)
from tensorflux.framework import dtypes
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.ops import array as array_ops
from tensorflux.ops.array import concat_split as concat_ops
from tensorflux.ops.array import padding as pad_ops
from tensorflux.ops.array import shapes as shape_ops
from tensorflux.ops.control_flow import functional as functional_ops
from tensorflux.ops.math import casting as cast_ops
from tensorflux.ops.math import reduction as reduction_ops
from tensorflux.ops.math import select as select_ops
from tensorflux.ops.math import unary as unary_ops
from tensorflux.ops.random import stateful as random_ops
from tensorflux.ops.state import initializers as init_ops
from tensorflux.ops.state import variable_scope as vs

__all__ = ["monotonic_attention", "BahdanauMonotonicAttention", "LuongMonotonicAttention"]


def monotonic_attention(p_choose_i, previous_attention, mode):
    """Expected monotonic alignments [batch, max_time] from stop probabilities `p_choose_i`
    and the previous step's alignments.

    Raises:
        ValueError: `mode` is not "recursive", "parallel" or "hard".
    """
    p_choose_i = convert_to_tensor(p_choose_i, name="p_choose_i")
    previous_attention = convert_to_tensor(previous_attention, name="previous_attention")
    if mode == "recursive":
        batch_size = p_choose_i.get_shape()[0].value or shape_ops.shape(p_choose_i)[0]
        ones = array_ops.ones(concat_ops.stack([batch_size, 1]), dtype=p_choose_i.dtype)
        shifted = concat_ops.concat([ones, 1 - p_choose_i[:, :-1]], 1)
        # q[i] = (1 - p_choose_i[i - 1]) q[i - 1] + previous_attention[i]
        q = functional_ops.scan(
            lambda x, yz: shape_ops.reshape(yz[0] * x + yz[1], concat_ops.stack([batch_size])),
            [shape_ops.transpose(shifted), shape_ops.transpose(previous_attention)],
            array_ops.zeros(concat_ops.stack([batch_size]), dtype=p_choose_i.dtype))
        return p_choose_i * shape_ops.transpose(q)
    if mode == "parallel":
        cumprod = safe_cumprod(1 - p_choose_i, axis=1, exclusive=True)
        return p_choose_i * cumprod * reduction_ops.cumsum(
            previous_attention / select_ops.clip_by_value(cumprod, 1e-10, 1.0), axis=1)
    if mode == "hard":
        p_choose_i = p_choose_i * reduction_ops.cumsum(previous_attention, axis=1)
        return p_choose_i * reduction_ops.cumprod(1 - p_choose_i, axis=1, exclusive=True)
    raise ValueError("mode must be 'recursive', 'parallel', or 'hard'.")


def _monotonic_probability_fn(score, previous_alignments, sigmoid_noise, mode, seed=None):
    if sigmoid_noise > 0:
        score = score + sigmoid_noise * random_ops.random_normal(
            shape_ops.shape(score), dtype=score.dtype, seed=seed)
    if mode == "hard":
        p_choose_i = cast_ops.cast(score > 0, score.dtype)
    else:
        p_choose_i = unary_ops.sigmoid(score)
    return monotonic_attention(p_choose_i, previous_alignments, mode)


class _BaseMonotonicAttentionMechanism(_BaseAttentionMechanism):
    def initial_alignments(self, batch_size, dtype):
        """One-hot on the first memory position: [batch_size, max_time]."""
        return pad_ops.one_hot(array_ops.zeros(shape_ops.expand_dims(
            convert_to_tensor(batch_size, dtype=dtypes.int32), 0), dtype=dtypes.int32),
            self._alignments_size, dtype=dtype)


def _check_mode(mode):
    if mode not in ("recursive", "parallel", "hard"):
        raise ValueError("mode must be 'recursive', 'parallel', or 'hard'.")


class BahdanauMonotonicAttention(_BaseMonotonicAttentionMechanism):
    """Bahdanau scores plus a learned `attention_score_bias`, turned into monotonic
    alignments."""

    def __init__(self, num_units, memory, memory_sequence_length=None, normalize=False,
                 score_mask_value=None, sigmoid_noise=0.0, sigmoid_noise_seed=None,
                 score_bias_init=0.0, mode="parallel", dtype=None,
                 name="BahdanauMonotonicAttention"):
        _check_mode(mode)
        dtype = dtype or _memory_dtype(memory)
        super().__init__(
            query_layer=_dense(num_units, "query_layer", dtype),
            memory_layer=_dense(num_units, "memory_layer", dtype), memory=memory,
            probability_fn=functools.partial(_monotonic_probability_fn,
                                             sigmoid_noise=sigmoid_noise, mode=mode,
                                             seed=sigmoid_noise_seed),
            memory_sequence_length=memory_sequence_length, score_mask_value=score_mask_value,
            name=name)
        self._num_units = num_units
        self._normalize = normalize
        self._score_bias_init = score_bias_init

    def __call__(self, query, state):
        """(alignments [batch, max_time], next_state)."""
        with vs.variable_scope(None, default_name="bahdanau_monotonic_attention",
                               values=[query]):
            processed_query = self._query_layer(query)
            score = _bahdanau_score(processed_query, self._keys, self._normalize)
            bias = vs.get_variable("attention_score_bias", dtype=processed_query.dtype,
                                   shape=(), initializer=init_ops.constant_initializer(
                                       self._score_bias_init))
            score = score + bias
        alignments = self._probability_fn(score, state)
        return alignments, alignments


class LuongMonotonicAttention(_BaseMonotonicAttentionMechanism):
    """Luong scores (optionally scaled by `attention_g`) plus `attention_score_bias`, turned
    into monotonic alignments."""

    def __init__(self, num_units, memory, memory_sequence_length=None, scale=False,
                 score_mask_value=None, sigmoid_noise=0.0, sigmoid_noise_seed=None,
                 score_bias_init=0.0, mode="parallel", dtype=None,
                 name="LuongMonotonicAttention"):
        _check_mode(mode)
        dtype = dtype or _memory_dtype(memory)
        super().__init__(
            query_layer=None, memory_layer=_dense(num_units, "memory_layer", dtype),
            memory=memory,
            probability_fn=functools.partial(_monotonic_probability_fn,
                                             sigmoid_noise=sigmoid_noise, mode=mode,
                                             seed=sigmoid_noise_seed),
            memory_sequence_length=memory_sequence_length, score_mask_value=score_mask_value,
            name=name)
        self._num_units = num_units
        self._scale = scale
        self._score_bias_init = score_bias_init

    def __call__(self, query, state):
        """(alignments [batch, max_time], next_state)."""
        with vs.variable_scope(None, default_name="luong_monotonic_attention", values=[query]):
            g = None
            if self._scale:
                g = vs.get_variable("attention_g", dtype=query.dtype, shape=(),
                                    initializer=init_ops.ones_initializer())
            score = _luong_score(query, self._keys, g)
            bias = vs.get_variable("attention_score_bias", dtype=query.dtype, shape=(),
                                   initializer=init_ops.constant_initializer(
                                       self._score_bias_init))
            score = score + bias
        alignments = self._probability_fn(score, state)
        return alignments, alignments

