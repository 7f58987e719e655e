"""`tf.contrib.legacy_seq2seq`: the static (list-of-time-steps) seq2seq models of TF1.

Inputs and outputs are Python lists with one [batch, ...] tensor per step. Variable names are
TF's: `embedding_rnn_seq2seq/rnn/embedding_wrapper/embedding`,
`embedding_rnn_seq2seq/embedding_rnn_decoder/embedding`, `attention_decoder/AttnW_0`, ...
"""

from __future__ import annotations

import copy

from tensorflux.contrib.rnn.core_rnn_cell import EmbeddingWrapper, OutputProjectionWrapper
from tensorflux.framework import dtypes, nest, scopes
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.layers.rnn_cell import static_rnn
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.array import concat_split as concat_ops
from tensorflux.ops.array import shapes as shape_ops
from tensorflux.ops.control_flow import primitives as control_flow_ops
from tensorflux.ops.math import casting as cast_ops
from tensorflux.ops.math import matrix_product as matmul_ops
from tensorflux.ops.math import reduction as reduction_ops
from tensorflux.ops.math import unary as unary_ops
from tensorflux.ops.nn import conv as conv_ops
from tensorflux.ops.nn import core as nn_ops
from tensorflux.ops.nn import functions as nn_impl
from tensorflux.ops.state import initializers as init_ops
from tensorflux.ops.state import variable_scope as vs

__all__ = ["sequence_loss_by_example", "sequence_loss", "rnn_decoder", "basic_rnn_seq2seq",
           "tied_rnn_seq2seq", "embedding_rnn_decoder", "embedding_rnn_seq2seq",
           "embedding_tied_rnn_seq2seq", "one2many_rnn_seq2seq",
           "attention_decoder", "embedding_attention_decoder", "embedding_attention_seq2seq",
           "model_with_buckets"]


def _linear(args, output_size, dtype=None):
    """concat(args) @ kernel + bias with `kernel`/`bias` from the current variable scope."""
    args = list(args) if isinstance(args, (list, tuple)) else [args]
    total = sum(a.get_shape()[-1].value for a in args)
    dtype = dtype or args[0].dtype.base_dtype
    kernel = vs.get_variable("kernel", [total, output_size], dtype=dtype)
    bias = vs.get_variable("bias", [output_size], dtype=dtype,
                           initializer=init_ops.zeros_initializer())
    joined = args[0] if len(args) == 1 else concat_ops.concat(args, 1)
    return nn_ops.bias_add(matmul_ops.matmul(joined, kernel), bias)


def _copy_cell(cell):
    """A deep copy of an unbuilt cell (the encoder's, as TF does)."""
    try:
        return copy.deepcopy(cell)
    except TypeError as err:
        raise ValueError(f"Cannot copy the cell {type(cell).__name__} for the encoder: it has "
                         f"already been called ({err}). Create a new cell for each model "
                         f"(e.g. inside the function given to model_with_buckets).") from None


def _extract_argmax_and_embed(embedding, output_projection=None, update_embedding=True):
    def loop_function(prev, _):
        if output_projection is not None:
            prev = nn_impl.xw_plus_b(prev, output_projection[0], output_projection[1])
        emb_prev = nn_impl.embedding_lookup(embedding, reduction_ops.argmax(prev, 1))
        if not update_embedding:
            emb_prev = array_ops.stop_gradient(emb_prev)
        return emb_prev

    return loop_function


def rnn_decoder(decoder_inputs, initial_state, cell, loop_function=None, scope=None):
    """Runs `cell` over `decoder_inputs` from `initial_state`; with `loop_function(prev, i)`
    each step after the first gets its input from the previous output instead.

    Returns:
        (outputs, state): a list of [batch, output_size] tensors and the final state.
    """
    with vs.variable_scope(scope or "rnn_decoder"):
        state = initial_state
        outputs = []
        prev = None
        for i, inp in enumerate(decoder_inputs):
            if loop_function is not None and prev is not None:
                with vs.variable_scope("loop_function", reuse=True):
                    inp = loop_function(prev, i)
            if i > 0:
                vs.get_variable_scope().reuse_variables()
            output, state = cell(inp, state)
            outputs.append(output)
            if loop_function is not None:
                prev = output
    return outputs, state


def basic_rnn_seq2seq(encoder_inputs, decoder_inputs, cell, dtype=dtypes.float32, scope=None):
    """Encodes with a copy of `cell`, decodes from its final state with `cell`."""
    with vs.variable_scope(scope or "basic_rnn_seq2seq"):
        enc_cell = _copy_cell(cell)
        _, enc_state = static_rnn(enc_cell, encoder_inputs, dtype=dtype)
        return rnn_decoder(decoder_inputs, enc_state, cell)


def tied_rnn_seq2seq(encoder_inputs, decoder_inputs, cell, loop_function=None,
                     dtype=dtypes.float32, scope=None):
    """Like basic_rnn_seq2seq, but encoder and decoder share the cell's variables."""
    with vs.variable_scope("combined_tied_rnn_seq2seq"):
        scope = scope or "tied_rnn_seq2seq"
        _, enc_state = static_rnn(cell, encoder_inputs, dtype=dtype, scope=scope)
        vs.get_variable_scope().reuse_variables()
        return rnn_decoder(decoder_inputs, enc_state, cell, loop_function=loop_function,
                           scope=scope)


def _check_projection(output_projection, num_symbols, dtype):
    if output_projection is None:
        return None
    weights = convert_to_tensor(output_projection[0], dtype=dtype)
    weights.get_shape().assert_is_compatible_with([None, num_symbols])
    biases = convert_to_tensor(output_projection[1], dtype=dtype)
    biases.get_shape().assert_is_compatible_with([num_symbols])
    return weights, biases


def embedding_rnn_decoder(decoder_inputs, initial_state, cell, num_symbols, embedding_size,
                          output_projection=None, feed_previous=False,
                          update_embedding_for_previous=True, scope=None):
    """rnn_decoder over embedded int32 `decoder_inputs` (variable `embedding`); with
    `feed_previous`, each step after the first feeds the embedded argmax of the previous
    output (projected by `output_projection` = (W, b) when given)."""
    with vs.variable_scope(scope or "embedding_rnn_decoder") as var_scope:
        output_projection = _check_projection(output_projection, num_symbols,
                                              var_scope.dtype)
        embedding = vs.get_variable("embedding", [num_symbols, embedding_size])
        loop_function = _extract_argmax_and_embed(
            embedding, output_projection, update_embedding_for_previous) \
            if feed_previous else None
        emb_inp = [nn_impl.embedding_lookup(embedding, i) for i in decoder_inputs]
        return rnn_decoder(emb_inp, initial_state, cell, loop_function=loop_function)


def _flat_state(state):
    return nest.flatten(state) if nest.is_nested(state) else [state]


def _cond_decoder(feed_previous, decode, num_outputs, encoder_state):
    """Builds the decoder for feed_previous True and False and picks one with tf.cond."""
    def branch(flag):
        reuse = None if flag else True
        with vs.variable_scope(vs.get_variable_scope(), reuse=reuse):
            outputs, state = decode(flag)
            return list(outputs) + _flat_state(state)

    result = control_flow_ops.cond(feed_previous, lambda: branch(True), lambda: branch(False))
    state_list = result[num_outputs:]
    if encoder_state is None:  # the state has the structure of the decoder's
        return result[:num_outputs], state_list[0] if len(state_list) == 1 else state_list
    state = nest.pack_sequence_as(encoder_state, state_list) \
        if nest.is_nested(encoder_state) else state_list[0]
    return result[:num_outputs], state


def embedding_rnn_seq2seq(encoder_inputs, decoder_inputs, cell, num_encoder_symbols,
                          num_decoder_symbols, embedding_size, output_projection=None,
                          feed_previous=False, dtype=None, scope=None):
    """Embedding encoder (a copy of `cell` in an EmbeddingWrapper) and embedding decoder.

    Without `output_projection`, the decoder cell gets an OutputProjectionWrapper to
    `num_decoder_symbols`. `feed_previous` may be a bool or a bool tensor (both decoders are
    built and `tf.cond` picks one).

    Returns:
        (outputs, state): per-step decoder outputs and the final decoder state.
    """
    with vs.variable_scope(scope or "embedding_rnn_seq2seq") as var_scope:
        if dtype is not None:
            var_scope.set_dtype(dtype)
        else:
            dtype = var_scope.dtype
        encoder_cell = EmbeddingWrapper(_copy_cell(cell), embedding_classes=num_encoder_symbols,
                                        embedding_size=embedding_size)
        _, encoder_state = static_rnn(encoder_cell, encoder_inputs, dtype=dtype)
        if output_projection is None:
            cell = OutputProjectionWrapper(cell, num_decoder_symbols)

        def decode(flag, update=True):
            return embedding_rnn_decoder(decoder_inputs, encoder_state, cell,
                                         num_decoder_symbols, embedding_size,
                                         output_projection=output_projection,
                                         feed_previous=flag,
                                         update_embedding_for_previous=update)

        if isinstance(feed_previous, bool):
            return decode(feed_previous)
        return _cond_decoder(feed_previous, lambda flag: decode(flag, False),
                             len(decoder_inputs), encoder_state)


def embedding_tied_rnn_seq2seq(encoder_inputs, decoder_inputs, cell, num_symbols,
                               embedding_size, num_decoder_symbols=None,
                               output_projection=None, feed_previous=False, dtype=None,
                               scope=None):
    """tied_rnn_seq2seq over inputs embedded with one shared `embedding`; the cell (with an
    OutputProjectionWrapper to `num_decoder_symbols` or `num_symbols` unless
    `output_projection` is given) runs both encoder and decoder."""
    with vs.variable_scope(scope or "embedding_tied_rnn_seq2seq", dtype=dtype) as var_scope:
        dtype = var_scope.dtype
        output_projection = _check_projection(output_projection, num_symbols, dtype)
        embedding = vs.get_variable("embedding", [num_symbols, embedding_size], dtype=dtype)
        emb_encoder = [nn_impl.embedding_lookup(embedding, x) for x in encoder_inputs]
        emb_decoder = [nn_impl.embedding_lookup(embedding, x) for x in decoder_inputs]
        if output_projection is None:
            cell = OutputProjectionWrapper(cell, num_decoder_symbols or num_symbols)

        def decode(flag, update=True):
            loop_function = _extract_argmax_and_embed(embedding, output_projection, update) \
                if flag else None
            return tied_rnn_seq2seq(emb_encoder, emb_decoder, cell, loop_function=loop_function,
                                    dtype=dtype)

        if isinstance(feed_previous, bool):
            return decode(feed_previous)
        return _cond_decoder(feed_previous, lambda flag: decode(flag, False),
                             len(decoder_inputs), None)


def one2many_rnn_seq2seq(encoder_inputs, decoder_inputs_dict, enc_cell, dec_cells_dict,
                         num_encoder_symbols, num_decoder_symbols_dict, embedding_size,
                         feed_previous=False, dtype=None, scope=None):
    """One embedding encoder, several embedding decoders (one per key of the dicts, each
    under `one2many_decoder_<key>` with an OutputProjectionWrapper).

    Returns:
        (outputs_dict, state_dict) keyed like `decoder_inputs_dict`.

    Raises:
        TypeError: a cell is not an RNN cell.
        ValueError: the keys of the cells and inputs differ.
    """
    for cell in [enc_cell, *dec_cells_dict.values()]:
        if not callable(cell) or not hasattr(cell, "state_size"):
            raise TypeError(f"cell is not an RNNCell: {type(cell)}")
    if set(dec_cells_dict) != set(decoder_inputs_dict):
        raise ValueError("keys of dec_cells_dict != keys of decoder_inputs_dict")
    outputs_dict, state_dict = {}, {}
    with vs.variable_scope(scope or "one2many_rnn_seq2seq", dtype=dtype) as var_scope:
        dtype = var_scope.dtype
        enc_cell = EmbeddingWrapper(enc_cell, embedding_classes=num_encoder_symbols,
                                    embedding_size=embedding_size)
        _, encoder_state = static_rnn(enc_cell, encoder_inputs, dtype=dtype)
        for name, decoder_inputs in decoder_inputs_dict.items():
            num_symbols = num_decoder_symbols_dict[name]
            with vs.variable_scope(f"one2many_decoder_{name}"):
                dec_cell = OutputProjectionWrapper(dec_cells_dict[name], num_symbols)

                def decode(flag, update=True, inputs=decoder_inputs, cell=dec_cell,
                           symbols=num_symbols):
                    return embedding_rnn_decoder(inputs, encoder_state, cell, symbols,
                                                 embedding_size, feed_previous=flag,
                                                 update_embedding_for_previous=update)

                if isinstance(feed_previous, bool):
                    outputs, state = decode(feed_previous)
                else:
                    outputs, state = _cond_decoder(feed_previous,
                                                   lambda flag, d=decode: d(flag, False),
                                                   len(decoder_inputs), encoder_state)
            outputs_dict[name] = outputs
            state_dict[name] = state
    return outputs_dict, state_dict


def attention_decoder(decoder_inputs, initial_state, attention_states, cell, output_size=None,
                      num_heads=1, loop_function=None, dtype=None, scope=None,
                      initial_state_attention=False):
    """RNN decoder with `num_heads` attention reads over `attention_states` [batch, length,
    size] (Bahdanau-style, as TF's legacy attention_decoder).

    Each step mixes the input with the previous reads (`kernel`/`bias`), runs the cell,
    attends with the new state (`AttnW_a`, `AttnV_a`, `Attention_a/kernel`), and projects
    [cell output, reads] to `output_size` (`AttnOutputProjection/kernel`).

    Raises:
        ValueError: no inputs, num_heads < 1, or an unknown attention size.
    """
    if not decoder_inputs:
        raise ValueError("Must provide at least 1 input to attention decoder.")
    if num_heads < 1:
        raise ValueError("With less than 1 heads, use a non-attention decoder.")
    if attention_states.get_shape()[2].value is None:
        raise ValueError(f"Shape[2] of attention_states must be known: "
                         f"{attention_states.get_shape()}")
    if output_size is None:
        output_size = cell.output_size
    with vs.variable_scope(scope or "attention_decoder", dtype=dtype) as var_scope:
        dtype = var_scope.dtype
        batch_size = shape_ops.shape(decoder_inputs[0])[0]
        attn_length = attention_states.get_shape()[1].value
        if attn_length is None:
            attn_length = shape_ops.shape(attention_states)[1]
        attn_size = attention_states.get_shape()[2].value
        hidden = shape_ops.reshape(attention_states, [-1, attn_length, 1, attn_size])
        hidden_features, v = [], []
        for a in range(num_heads):
            k = vs.get_variable(f"AttnW_{a}", [1, 1, attn_size, attn_size], dtype=dtype)
            hidden_features.append(conv_ops.conv2d(hidden, k, [1, 1, 1, 1], "SAME"))
            v.append(vs.get_variable(f"AttnV_{a}", [attn_size], dtype=dtype))

        def attention(query):
            if nest.is_nested(query):
                query = concat_ops.concat(nest.flatten(query), 1)
            reads = []
            for a in range(num_heads):
                with vs.variable_scope(f"Attention_{a}"):
                    y = _linear(query, attn_size, dtype)
                    y = shape_ops.reshape(y, [-1, 1, 1, attn_size])
                    s = reduction_ops.reduce_sum(v[a] * unary_ops.tanh(hidden_features[a] + y),
                                                 [2, 3])
                    weights = nn_ops.softmax(s)
                    d = reduction_ops.reduce_sum(
                        shape_ops.reshape(weights, [-1, attn_length, 1, 1]) * hidden, [1, 2])
                    reads.append(shape_ops.reshape(d, [-1, attn_size]))
            return reads

        outputs = []
        prev = None
        attns = []
        for _ in range(num_heads):
            zeros = array_ops.zeros(concat_ops.stack([batch_size, attn_size]), dtype=dtype)
            zeros.set_shape([None, attn_size])
            attns.append(zeros)
        state = initial_state
        if initial_state_attention:
            attns = attention(initial_state)
        for i, inp in enumerate(decoder_inputs):
            if i > 0:
                vs.get_variable_scope().reuse_variables()
            if loop_function is not None and prev is not None:
                with vs.variable_scope("loop_function", reuse=True):
                    inp = loop_function(prev, i)
            input_size = inp.get_shape().with_rank(2)[1]
            if input_size.value is None:
                raise ValueError(f"Could not infer input size from input: {inp.name}")
            x = _linear([inp] + attns, input_size.value, dtype)
            cell_output, state = cell(x, state)
            if i == 0 and initial_state_attention:
                with vs.variable_scope(vs.get_variable_scope(), reuse=True):
                    attns = attention(state)
            else:
                attns = attention(state)
            with vs.variable_scope("AttnOutputProjection"):
                output = _linear([cell_output] + attns, output_size, dtype)
            if loop_function is not None:
                prev = output
            outputs.append(output)
    return outputs, state


def embedding_attention_decoder(decoder_inputs, initial_state, attention_states, cell,
                                num_symbols, embedding_size, num_heads=1, output_size=None,
                                output_projection=None, feed_previous=False,
                                update_embedding_for_previous=True, dtype=None, scope=None,
                                initial_state_attention=False):
    """attention_decoder over embedded int32 inputs (variable `embedding`), optionally feeding
    back the embedded argmax of the previous output."""
    if output_size is None:
        output_size = cell.output_size
    with vs.variable_scope(scope or "embedding_attention_decoder", dtype=dtype) as var_scope:
        output_projection = _check_projection(output_projection, num_symbols,
                                              var_scope.dtype)
        embedding = vs.get_variable("embedding", [num_symbols, embedding_size])
        loop_function = _extract_argmax_and_embed(
            embedding, output_projection, update_embedding_for_previous) \
            if feed_previous else None
        emb_inp = [nn_impl.embedding_lookup(embedding, i) for i in decoder_inputs]
        return attention_decoder(emb_inp, initial_state, attention_states, cell,
                                 output_size=output_size, num_heads=num_heads,
                                 loop_function=loop_function,
                                 initial_state_attention=initial_state_attention)


def embedding_attention_seq2seq(encoder_inputs, decoder_inputs, cell, num_encoder_symbols,
                                num_decoder_symbols, embedding_size, num_heads=1,
                                output_projection=None, feed_previous=False, dtype=None,
                                scope=None, initial_state_attention=False):
    """Embedding encoder and an embedding attention decoder over the encoder outputs."""
    with vs.variable_scope(scope or "embedding_attention_seq2seq", dtype=dtype) as var_scope:
        dtype = var_scope.dtype
        encoder_cell = EmbeddingWrapper(_copy_cell(cell), embedding_classes=num_encoder_symbols,
                                        embedding_size=embedding_size)
        encoder_outputs, encoder_state = static_rnn(encoder_cell, encoder_inputs, dtype=dtype)
        top_states = [shape_ops.reshape(e, [-1, 1, cell.output_size]) for e in encoder_outputs]
        attention_states = concat_ops.concat(top_states, 1)
        output_size = None
        if output_projection is None:
            cell = OutputProjectionWrapper(cell, num_decoder_symbols)
            output_size = num_decoder_symbols

        def decode(flag, update=True):
            return embedding_attention_decoder(
                decoder_inputs, encoder_state, attention_states, cell, num_decoder_symbols,
                embedding_size, num_heads=num_heads, output_size=output_size,
                output_projection=output_projection, feed_previous=flag,
                update_embedding_for_previous=update,
                initial_state_attention=initial_state_attention)

        if isinstance(feed_previous, bool):
            return decode(feed_previous)
        return _cond_decoder(feed_previous, lambda flag: decode(flag, False),
                             len(decoder_inputs), encoder_state)


def sequence_loss_by_example(logits, targets, weights, average_across_timesteps=True,
                             softmax_loss_function=None, name=None):
    """Per-example weighted cross-entropy summed over the step lists (divided by the summed
    weights + 1e-12 when `average_across_timesteps`): a [batch] tensor.

    Raises:
        ValueError: the three lists differ in length.
    """
    if len(targets) != len(logits) or len(weights) != len(logits):
        raise ValueError(f"Lengths of logits, weights, and targets must be the same "
                         f"{len(logits)}, {len(weights)}, {len(targets)}.")
    with scopes.name_scope(name, "sequence_loss_by_example",
                           list(logits) + list(targets) + list(weights)):
        log_perp_list = []
        for logit, target, weight in zip(logits, targets, weights):
            if softmax_loss_function is None:
                crossent = nn_impl.sparse_softmax_cross_entropy_with_logits(
                    labels=shape_ops.reshape(target, [-1]), logits=logit)
            else:
                crossent = softmax_loss_function(labels=target, logits=logit)
            log_perp_list.append(crossent * weight)
        log_perps = math_ops.add_n(log_perp_list)
        if average_across_timesteps:
            total_size = math_ops.add_n(list(weights)) + 1e-12
            log_perps = log_perps / total_size
    return log_perps


def sequence_loss(logits, targets, weights, average_across_timesteps=True,
                  average_across_batch=True, softmax_loss_function=None, name=None):
    """The summed `sequence_loss_by_example`, divided by the batch size when
    `average_across_batch`: a scalar."""
    with scopes.name_scope(name, "sequence_loss", list(logits) + list(targets) + list(weights)):
        cost = reduction_ops.reduce_sum(sequence_loss_by_example(
            logits, targets, weights, average_across_timesteps=average_across_timesteps,
            softmax_loss_function=softmax_loss_function))
        if average_across_batch:
            batch_size = shape_ops.shape(targets[0])[0]
            return cost / cast_ops.cast(batch_size, cost.dtype)
        return cost


def model_with_buckets(encoder_inputs, decoder_inputs, targets, weights, buckets, seq2seq,
                       softmax_loss_function=None, per_example_loss=False, name=None):
    """Builds `seq2seq(enc[:n], dec[:m])` for each bucket (n, m), sharing variables, and each
    bucket's loss.

    Returns:
        (outputs, losses): per bucket, the output list and the loss (per example when
        `per_example_loss`).

    Raises:
        ValueError: fewer inputs, targets or weights than the largest bucket needs.
    """
    if len(encoder_inputs) < buckets[-1][0]:
        raise ValueError(f"Length of encoder_inputs ({len(encoder_inputs)}) must be at least "
                         f"that of last bucket ({buckets[-1][0]}).")
    if len(targets) < buckets[-1][1]:
        raise ValueError(f"Length of targets ({len(targets)}) must be at least that of last "
                         f"bucket ({buckets[-1][1]}).")
    if len(weights) < buckets[-1][1]:
        raise ValueError(f"Length of weights ({len(weights)}) must be at least that of last "
                         f"bucket ({buckets[-1][1]}).")
    all_inputs = list(encoder_inputs) + list(decoder_inputs) + list(targets) + list(weights)
    losses, outputs = [], []
    with scopes.name_scope(name, "model_with_buckets", all_inputs):
        for j, bucket in enumerate(buckets):
            with vs.variable_scope(vs.get_variable_scope(), reuse=True if j > 0 else None):
                bucket_outputs, _ = seq2seq(encoder_inputs[:bucket[0]],
                                            decoder_inputs[:bucket[1]])
                outputs.append(bucket_outputs)
                loss_fn = sequence_loss_by_example if per_example_loss else sequence_loss
                losses.append(loss_fn(outputs[-1], targets[:bucket[1]], weights[:bucket[1]],
                                      softmax_loss_function=softmax_loss_function))
    return outputs, losses
