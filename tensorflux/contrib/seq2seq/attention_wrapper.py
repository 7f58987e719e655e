"""Attention for seq2seq decoders: BahdanauAttention, LuongAttention and AttentionWrapper.

A mechanism keeps `values` (the memory, zeroed past `memory_sequence_length`) and `keys`
(`memory_layer(values)`, variable `memory_layer/kernel`, made where the mechanism is built).
`mechanism(query, state) -> (alignments, next_state)` scores the query against the keys and
turns the scores into alignments with `probability_fn` (softmax), masking positions past the
memory length with `score_mask_value` (-inf). The wrapper runs its cell on
`cell_input_fn(inputs, previous attention)`, attends with the cell output, and mixes
`[cell_output, context]` through `attention_layer` (variables under `attention_wrapper/`).
"""

from __future__ import annotations

import collections
import math

import numpy as np

from tensorflux.framework import dtypes, nest, scopes
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.layers.core import Dense
from tensorflux.layers.rnn_cell import RNNCell
from tensorflux.ops import array as array_ops
from tensorflux.ops.array import concat_split as concat_ops
from tensorflux.ops.array import padding as pad_ops
from tensorflux.ops.array import partition as partition_ops
from tensorflux.ops.array import shapes as shape_ops
from tensorflux.ops.data_flow import tensor_array_class as tensor_array_ops
from tensorflux.ops.math import matrix_product as matmul_ops
from tensorflux.ops.math import reduction as reduction_ops
from tensorflux.ops.math import select as select_ops
from tensorflux.ops.math import unary as unary_ops
from tensorflux.ops.nn import core as nn_ops
from tensorflux.ops.state import initializers as init_ops
from tensorflux.ops.state import variable_scope as vs

__all__ = ["AttentionMechanism", "BahdanauAttention", "LuongAttention", "AttentionWrapper",
           "AttentionWrapperState", "hardmax", "safe_cumprod"]


def _dense(units, name, dtype):
    """A bias-free Dense whose scope is `name`, uniquified (`memory_layer`, `memory_layer_1`)
    as TF1 does for a layer object given a name."""
    layer = Dense(units, use_bias=False, dtype=dtype)
    layer._default_name = name
    return layer


class AttentionMechanism:
    """Base marker class of the attention mechanisms."""


def _prepare_memory(memory, memory_sequence_length, check_inner_dims_defined):
    memory = nest.map_structure(lambda m: convert_to_tensor(m, name="memory"), memory)
    if memory_sequence_length is not None:
        memory_sequence_length = convert_to_tensor(memory_sequence_length,
                                                   name="memory_sequence_length")
    if check_inner_dims_defined:
        for m in nest.flatten(memory):
            if not m.get_shape()[2:].is_fully_defined():
                raise ValueError(f"Expected memory {m.name} to have fully defined inner dims, "
                                 f"but saw shape: {m.get_shape()}")
    if memory_sequence_length is None:
        return memory

    def mask(m):
        seq_mask = partition_ops.sequence_mask(memory_sequence_length,
                                               maxlen=shape_ops.shape(m)[1], dtype=m.dtype)
        extra = m.get_shape().ndims - 2
        seq_mask = shape_ops.reshape(seq_mask, concat_ops.concat(
            [shape_ops.shape(seq_mask), [1] * extra], 0)) if extra else seq_mask
        return m * seq_mask

    return nest.map_structure(mask, memory)


def _maybe_mask_score(score, memory_sequence_length, score_mask_value):
    if memory_sequence_length is None:
        return score
    score_mask = partition_ops.sequence_mask(memory_sequence_length,
                                             maxlen=shape_ops.shape(score)[1])
    values = score_mask_value * array_ops.ones_like(score)
    return select_ops.where(score_mask, score, values)


class _BaseAttentionMechanism(AttentionMechanism):
    """Memory, keys and masked probabilities shared by the concrete mechanisms."""

    def __init__(self, query_layer, memory, probability_fn, memory_sequence_length=None,
                 memory_layer=None, check_inner_dims_defined=True, score_mask_value=None,
                 name=None):
        if query_layer is not None and not isinstance(query_layer, Dense) and \
                not hasattr(query_layer, "apply"):
            raise TypeError(f"query_layer is not a Layer: {type(query_layer).__name__}")
        if memory_layer is not None and not hasattr(memory_layer, "apply"):
            raise TypeError(f"memory_layer is not a Layer: {type(memory_layer).__name__}")
        self._query_layer = query_layer
        self._memory_layer = memory_layer
        self.dtype = memory_layer.dtype if memory_layer is not None else None
        if not callable(probability_fn):
            raise TypeError(f"probability_fn must be callable, saw type: "
                            f"{type(probability_fn).__name__}")
        with scopes.name_scope(name, "BaseAttentionMechanismInit", nest.flatten(memory)):
            self._values = _prepare_memory(memory, memory_sequence_length,
                                           check_inner_dims_defined)
            if score_mask_value is None:
                score_mask_value = self._values.dtype.as_numpy_dtype(-np.inf)
            self._probability_fn = lambda score, prev: probability_fn(
                _maybe_mask_score(score, memory_sequence_length, score_mask_value), prev)
            self._keys = self._memory_layer(self._values) if self._memory_layer is not None \
                else self._values
            batch = self._keys.get_shape()[0].value
            self._batch_size = batch if batch is not None else shape_ops.shape(self._keys)[0]
            length = self._keys.get_shape()[1].value
            self._alignments_size = length if length is not None \
                else shape_ops.shape(self._keys)[1]
        if self.dtype is None:
            self.dtype = self._values.dtype.base_dtype

    @property
    def memory_layer(self):
        return self._memory_layer

    @property
    def query_layer(self):
        return self._query_layer

    @property
    def values(self):
        return self._values

    @property
    def keys(self):
        return self._keys

    @property
    def batch_size(self):
        return self._batch_size

    @property
    def alignments_size(self):
        return self._alignments_size

    @property
    def state_size(self):
        return self._alignments_size

    def initial_alignments(self, batch_size, dtype):
        """Zeros [batch_size, max_time]."""
        return array_ops.zeros(concat_ops.stack([_int(batch_size), _int(self._alignments_size)]),
                               dtype=dtype)

    def initial_state(self, batch_size, dtype):
        return self.initial_alignments(batch_size, dtype)


def _int(value):
    return convert_to_tensor(value, dtype=dtypes.int32)


def _luong_score(query, keys, scale):
    depth = query.get_shape()[-1].value
    key_units = keys.get_shape()[-1].value
    if depth != key_units:
        raise ValueError(f"Incompatible or unknown inner dimensions between query and keys. "
                         f"Query ({query.name}) has units: {depth}. Keys ({keys.name}) have "
                         f"units: {key_units}. Perhaps you need to set num_units to the keys' "
                         f"dimension ({key_units})?")
    score = matmul_ops.matmul(shape_ops.expand_dims(query, 1), keys, transpose_b=True)
    score = shape_ops.squeeze(score, [1])
    return score if scale is None else scale * score


class LuongAttention(_BaseAttentionMechanism):
    """Multiplicative attention (Luong et al. 2015): score = query . keys (times a learned
    scalar `attention_g` when `scale`)."""

    def __init__(self, num_units, memory, memory_sequence_length=None, scale=False,
                 probability_fn=None, score_mask_value=None, dtype=None,
                 custom_key_value_fn=None, name="LuongAttention"):
        probability_fn = probability_fn or nn_ops.softmax
        dtype = dtype or _memory_dtype(memory)
        super().__init__(
            query_layer=None,
            memory_layer=_dense(num_units, "memory_layer", dtype),
            memory=memory, probability_fn=lambda score, _: probability_fn(score),
            memory_sequence_length=memory_sequence_length, score_mask_value=score_mask_value,
            name=name)
        self._num_units = num_units
        self._scale = scale
        self._name = name

    def __call__(self, query, state):
        """(alignments [batch, max_time], next_state)."""
        with vs.variable_scope(None, default_name="luong_attention", values=[query]):
            g = None
            if self._scale:
                g = vs.get_variable("attention_g", dtype=query.dtype, shape=(),
                                    initializer=init_ops.ones_initializer())
            score = _luong_score(query, self._keys, g)
        alignments = self._probability_fn(score, state)
        return alignments, alignments


def _bahdanau_score(processed_query, keys, normalize):
    dtype = processed_query.dtype
    num_units = keys.get_shape()[2].value
    if num_units is None:
        num_units = shape_ops.shape(keys)[2]
    processed_query = shape_ops.expand_dims(processed_query, 1)
    v = vs.get_variable("attention_v", [num_units], dtype=dtype)
    if normalize:
        g = vs.get_variable("attention_g", dtype=dtype, shape=(),
                            initializer=init_ops.constant_initializer(math.sqrt(1.0 / num_units)))
        b = vs.get_variable("attention_b", [num_units], dtype=dtype,
                            initializer=init_ops.zeros_initializer())
        normed_v = g * v * unary_ops.rsqrt(reduction_ops.reduce_sum(unary_ops.square(v)))
        return reduction_ops.reduce_sum(
            normed_v * unary_ops.tanh(keys + processed_query + b), [2])
    return reduction_ops.reduce_sum(v * unary_ops.tanh(keys + processed_query), [2])


class BahdanauAttention(_BaseAttentionMechanism):
    """Additive attention (Bahdanau et al. 2015): score = v . tanh(keys + W query), with
    weight normalization (`attention_g`, `attention_b`) when `normalize`."""

    def __init__(self, num_units, memory, memory_sequence_length=None, normalize=False,
                 probability_fn=None, score_mask_value=None, dtype=None,
                 custom_key_value_fn=None, name="BahdanauAttention"):
        probability_fn = probability_fn or nn_ops.softmax
        dtype = dtype or _memory_dtype(memory)
        super().__init__(
            query_layer=_dense(num_units, "query_layer", dtype),
            memory_layer=_dense(num_units, "memory_layer", dtype),
            memory=memory, probability_fn=lambda score, _: probability_fn(score),
            memory_sequence_length=memory_sequence_length, score_mask_value=score_mask_value,
            name=name)
        self._num_units = num_units
        self._normalize = normalize
        self._name = name

    def __call__(self, query, state):
        """(alignments [batch, max_time], next_state)."""
        with vs.variable_scope(None, default_name="bahdanau_attention", values=[query]):
            processed_query = self._query_layer(query) if self._query_layer else query
            score = _bahdanau_score(processed_query, self._keys, self._normalize)
        alignments = self._probability_fn(score, state)
        return alignments, alignments


def _memory_dtype(memory):
    return nest.flatten(nest.map_structure(convert_to_tensor, memory))[0].dtype.base_dtype.name


class AttentionWrapperState(collections.namedtuple(
        "AttentionWrapperState", ("cell_state", "attention", "time", "alignments",
                                  "alignment_history", "attention_state"))):
    """The state of an AttentionWrapper: the wrapped cell's state, the last attention, the
    step, alignments, the alignment history (TensorArrays, or () when not kept) and the
    mechanisms' states."""

    __slots__ = ()

    def clone(self, **kwargs):
        """A copy with some fields replaced; replacement tensors take the old static shapes
        (so `clone(cell_state=encoder_state)` keeps batch sizes known).

        Raises:
            ValueError: a replacement's shape is incompatible with the old one.
        """
        def with_same_shape(old, new):
            if isinstance(old, Tensor) and isinstance(new, Tensor) and new is not old:
                new.set_shape(old.get_shape())  # ValueError when incompatible, as in TF
            return new

        replaced = self._replace(**kwargs)
        return nest.map_structure(with_same_shape, self, replaced)


def hardmax(logits, name=None):
    """One-hot of the argmax over the last axis, in the dtype of `logits`."""
    with scopes.name_scope(name, "Hardmax", [logits]):
        logits = convert_to_tensor(logits, name="logits")
        depth = logits.get_shape()[-1].value
        if depth is None:
            depth = shape_ops.shape(logits)[-1]
        return pad_ops.one_hot(reduction_ops.argmax(logits, -1), depth, dtype=logits.dtype)


def safe_cumprod(x, *args, **kwargs):
    """cumprod computed as exp(cumsum(log(clip(x, tiny, 1)))): no underflow to zero."""
    with scopes.name_scope(None, "SafeCumprod", [x]):
        x = convert_to_tensor(x, name="x")
        tiny = np.finfo(x.dtype.as_numpy_dtype).tiny
        return unary_ops.exp(reduction_ops.cumsum(
            unary_ops.log(select_ops.clip_by_value(x, tiny, 1)), *args, **kwargs))


def _compute_attention(mechanism, cell_output, attention_state, attention_layer):
    alignments, next_attention_state = mechanism(cell_output, state=attention_state)
    context = matmul_ops.matmul(shape_ops.expand_dims(alignments, 1), mechanism.values)
    context = shape_ops.squeeze(context, [1])
    if attention_layer is not None:
        attention = attention_layer(concat_ops.concat([cell_output, context], 1))
    else:
        attention = context
    return attention, alignments, next_attention_state


class AttentionWrapper(RNNCell):
    """Wraps a cell with one or more attention mechanisms (TF 1.15 semantics).

    Args:
        cell: the RNN cell.
        attention_mechanism: a mechanism or a list of them.
        attention_layer_size: size (or list of sizes) of the `attention_layer` Dense (no
            bias) applied to [cell_output, context]; None uses the context as attention.
        alignment_history: keep each step's alignments in a TensorArray.
        cell_input_fn: (inputs, attention) -> cell inputs (default: concatenation).
        output_attention: output the attention (True) or the cell output (False).
        initial_cell_state: the cell state `zero_state` starts from.
        attention_layer: a Layer (or list) instead of attention_layer_size.
    """

    _default_name = "attention_wrapper"

    def __init__(self, cell, attention_mechanism, attention_layer_size=None,
                 alignment_history=False, cell_input_fn=None, output_attention=True,
                 initial_cell_state=None, name=None, attention_layer=None, attention_fn=None):
        super().__init__()
        if name is not None:
            self._default_name = name  # TF1 uniquifies a layer's given name
        if not callable(cell) or not hasattr(cell, "state_size"):
            raise TypeError(f"cell must be an RNNCell, saw type: {type(cell).__name__}")
        self._is_multi = isinstance(attention_mechanism, (list, tuple))
        mechanisms = tuple(attention_mechanism) if self._is_multi else (attention_mechanism,)
        for mechanism in mechanisms:
            if not isinstance(mechanism, AttentionMechanism):
                raise TypeError(f"attention_mechanism must be an AttentionMechanism or list of "
                                f"multiple AttentionMechanism instances, saw type: "
                                f"{type(mechanism).__name__}")
        if cell_input_fn is None:
            def cell_input_fn(inputs, attention):
                return concat_ops.concat([inputs, attention], -1)
        elif not callable(cell_input_fn):
            raise TypeError(f"cell_input_fn must be callable, saw type: "
                            f"{type(cell_input_fn).__name__}")
        if attention_layer_size is not None and attention_layer is not None:
            raise ValueError("Only one of attention_layer_size and attention_layer should be "
                             "set")
        if attention_layer_size is not None:
            sizes = tuple(attention_layer_size) if isinstance(attention_layer_size,
                                                               (list, tuple)) \
                else (attention_layer_size,)
            if len(sizes) != len(mechanisms):
                raise ValueError(f"If provided, attention_layer_size must contain exactly one "
                                 f"integer per attention_mechanism, saw: {len(sizes)} vs "
                                 f"{len(mechanisms)}")
            self._attention_layers = tuple(
                _dense(size, "attention_layer", mechanism.dtype)
                for size, mechanism in zip(sizes, mechanisms))
            self._attention_layer_size = sum(sizes)
        elif attention_layer is not None:
            layers = tuple(attention_layer) if isinstance(attention_layer, (list, tuple)) \
                else (attention_layer,)
            if len(layers) != len(mechanisms):
                raise ValueError(f"If provided, attention_layer must contain exactly one layer "
                                 f"per attention_mechanism, saw: {len(layers)} vs "
                                 f"{len(mechanisms)}")
            self._attention_layers = layers
            self._attention_layer_size = sum(layer.units for layer in layers)
        else:
            self._attention_layers = None
            self._attention_layer_size = sum(
                m.values.get_shape()[-1].value for m in mechanisms)
        self._cell = cell
        self._attention_mechanisms = mechanisms
        self._cell_input_fn = cell_input_fn
        self._output_attention = output_attention
        self._alignment_history = alignment_history
        self._initial_cell_state = initial_cell_state

    def _item_or_tuple(self, seq):
        items = tuple(seq)
        return items if self._is_multi else items[0]

    @property
    def output_size(self):
        return self._attention_layer_size if self._output_attention else self._cell.output_size

    @property
    def state_size(self):
        mechs = self._attention_mechanisms
        return AttentionWrapperState(
            cell_state=self._cell.state_size, time=TensorShape([]),
            attention=self._attention_layer_size,
            alignments=self._item_or_tuple(m.alignments_size for m in mechs),
            attention_state=self._item_or_tuple(m.state_size for m in mechs),
            alignment_history=self._item_or_tuple(
                m.alignments_size if self._alignment_history else () for m in mechs))

    def zero_state(self, batch_size, dtype):
        """The initial AttentionWrapperState (cell state from `initial_cell_state` if given)."""
        with scopes.name_scope(f"{type(self).__name__}ZeroState"):
            if self._initial_cell_state is not None:
                cell_state = self._initial_cell_state
            else:
                cell_state = self._cell.zero_state(batch_size, dtype)
            cell_state = nest.map_structure(
                lambda s: array_ops.identity(s, name="checked_cell_state"), cell_state)
            alignments = [m.initial_alignments(batch_size, dtype)
                          for m in self._attention_mechanisms]
            attention = array_ops.zeros(
                concat_ops.stack([_int(batch_size), _int(self._attention_layer_size)]),
                dtype=dtype)
            static_batch = batch_size if isinstance(batch_size, int) else None
            attention.set_shape([static_batch, self._attention_layer_size])
            return AttentionWrapperState(
                cell_state=cell_state, time=array_ops.zeros([], dtype=dtypes.int32),
                attention=attention, alignments=self._item_or_tuple(alignments),
                attention_state=self._item_or_tuple(
                    m.initial_state(batch_size, dtype) for m in self._attention_mechanisms),
                alignment_history=self._item_or_tuple(
                    tensor_array_ops.TensorArray(dtype, size=0, dynamic_size=True,
                                                 element_shape=a.get_shape())
                    if self._alignment_history else () for a in alignments))

    def build(self, input_shape):
        self.built = True

    def call(self, inputs, state):
        if not isinstance(state, AttentionWrapperState):
            raise TypeError(f"Expected state to be instance of AttentionWrapperState. Received "
                            f"type {type(state)} instead.")
        cell_inputs = self._cell_input_fn(inputs, state.attention)
        cell_output, next_cell_state = self._cell(cell_inputs, state.cell_state)
        if self._is_multi:
            previous_states, previous_histories = state.attention_state, state.alignment_history
        else:
            previous_states, previous_histories = [state.attention_state], \
                [state.alignment_history]
        attentions, all_alignments, all_states, histories = [], [], [], []
        for i, mechanism in enumerate(self._attention_mechanisms):
            layer = self._attention_layers[i] if self._attention_layers else None
            attention, alignments, next_attention_state = _compute_attention(
                mechanism, cell_output, previous_states[i], layer)
            history = previous_histories[i].write(state.time, alignments) \
                if self._alignment_history else ()
            attentions.append(attention)
            all_alignments.append(alignments)
            all_states.append(next_attention_state)
            histories.append(history)
        attention = concat_ops.concat(attentions, 1)
        next_state = AttentionWrapperState(
            time=state.time + 1, cell_state=next_cell_state, attention=attention,
            attention_state=self._item_or_tuple(all_states),
            alignments=self._item_or_tuple(all_alignments),
            alignment_history=self._item_or_tuple(histories))
        return (attention if self._output_attention else cell_output), next_state
