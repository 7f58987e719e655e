"""Keras dot-product (Luong) and additive (Bahdanau) attention layers (TF 1.14+).

Both take `[query, value]` or `[query, value, key]` ([batch, Tq, dim], [batch, Tv, dim]) and
return [batch, Tq, dim]: softmax(scores) @ value. Masks: `value_mask` [batch, Tv] hides
values (a -1e9 score), `query_mask` [batch, Tq] zeroes output rows and is the output mask;
`causal` hides positions j > i.
"""

from __future__ import annotations

from tensorflux.keras.engine.base_layer import Layer
from tensorflux.keras.layers.core import smart_cond, training_value
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.nn import core as nn_core
from tensorflux.ops.nn import functions as nn_functions

__all__ = ["Attention", "AdditiveAttention"]


class _BaseDenseAttention(Layer):
    supports_masking = True

    def __init__(self, causal=False, dropout=0.0, **kwargs):
        super().__init__(**kwargs)
        self.causal = causal
        self.dropout = float(dropout)
        if not 0 <= self.dropout < 1:
            raise ValueError(f'Layer "{self.name}": dropout must be in [0, 1), got {dropout}.')

    def _split(self, inputs):
        if not isinstance(inputs, (list, tuple)) or len(inputs) not in (2, 3):
            raise ValueError(f'Layer "{self.name}" must be called on a list of inputs, '
                             "namely [query, value] or [query, value, key]. Received: "
                             f"{inputs!r}.")
        query, value = inputs[0], inputs[1]
        return query, value, inputs[2] if len(inputs) == 3 else value

    def _masks(self, mask):
        if mask is None:
            return None, None
        if not isinstance(mask, (list, tuple)) or len(mask) not in (2, 3):
            raise ValueError(f'Layer "{self.name}": mask must be a list [query_mask, '
                             f"value_mask] (or with a key mask). Received: {mask!r}.")
        return mask[0], mask[1]

    def build(self, input_shape):
        self._split(input_shape)
        self.built = True

    def call(self, inputs, mask=None, training=None):
        query, value, key = self._split(inputs)
        query_mask, value_mask = self._masks(mask)
        scores = self._calculate_scores(query, key)
        hidden = None
        if value_mask is not None:
            hidden = math_ops.logical_not(array_ops.expand_dims(
                math_ops.cast(value_mask, "bool"), -2))
        if self.causal:
            shape = array_ops.shape(scores)
            rows = array_ops.expand_dims(math_ops.range(shape[-2]), -1)
            cols = array_ops.expand_dims(math_ops.range(shape[-1]), 0)
            future = array_ops.expand_dims(math_ops.less(rows, cols), 0)
            hidden = future if hidden is None else math_ops.logical_or(hidden, future)
        if hidden is not None:
            scores -= 1.0e9 * math_ops.cast(hidden, scores.dtype)
        weights = nn_core.softmax(scores, axis=-1)
        if self.dropout:
            kept = weights
            weights = smart_cond(training_value(training),
                                 lambda: nn_functions.dropout(kept, rate=self.dropout),
                                 lambda: array_ops.identity(kept))
        result = math_ops.matmul(weights, value)
        if query_mask is not None:
            result *= math_ops.cast(array_ops.expand_dims(query_mask, -1), result.dtype)
        return result

    def compute_mask(self, inputs, mask=None):
        query_mask, _ = self._masks(mask)
        return None if query_mask is None else math_ops.cast(query_mask, "bool")


class Attention(_BaseDenseAttention):
    """Dot-product attention: scores = query @ key^T (times a learned scalar `scale`, starting
    at 1, with `use_scale`)."""

    def __init__(self, use_scale=False, **kwargs):
        super().__init__(**kwargs)
        self.use_scale = use_scale

    def build(self, input_shape):
        self._split(input_shape)
        self.scale = self.add_weight("scale", (), initializer="ones") if self.use_scale else None
        self.built = True

    def _calculate_scores(self, query, key):
        scores = math_ops.matmul(query, key, transpose_b=True)
        return scores * self.scale if self.scale is not None else scores


class AdditiveAttention(_BaseDenseAttention):
    """Additive attention: scores = sum(scale * tanh(query_i + key_j)) over dim, `scale` a
    learned [dim] vector (glorot-uniform) with `use_scale` (the default)."""

    def __init__(self, use_scale=True, **kwargs):
        super().__init__(**kwargs)
        self.use_scale = use_scale

    def build(self, input_shape):
        query_shape, value_shape = self._split(input_shape)[:2]
        dim = value_shape[-1] if len(input_shape) == 2 else input_shape[2][-1]
        if self.use_scale and dim is None:
            raise ValueError(f'Layer "{self.name}": the last dimension of the key should be '
                             "defined. Found None.")
        self.scale = self.add_weight("scale", (dim,), initializer="glorot_uniform") \
            if self.use_scale else None
        self.built = True

    def _calculate_scores(self, query, key):
        summed = math_ops.tanh(array_ops.expand_dims(query, -2) + array_ops.expand_dims(key, -3))
        if self.scale is not None:
            summed = summed * self.scale
        return math_ops.reduce_sum(summed, axis=-1)
