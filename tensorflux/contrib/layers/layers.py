"""contrib.layers layers that own variables: fully_connected, conv2d, conv2d_transpose,
separable_conv2d, bias_add, embed_sequence.

Each opens `variable_scope(scope, <TF default name>, reuse=reuse)` and creates model
variables named as TF 1.15 does (`fully_connected/weights`, `Conv/biases`,
`SeparableConv2d/depthwise_weights`, ...), in GLOBAL_VARIABLES, MODEL_VARIABLES (and
TRAINABLE_VARIABLES when `trainable`) plus `variables_collections` (a list, or a dict keyed
"weights"/"biases"). With `normalizer_fn` no biases are created and
`normalizer_fn(outputs, **normalizer_params)` runs before `activation_fn`. The output is
added to `outputs_collections` under the scope's name.
"""

from __future__ import annotations

import numbers

from tensorflux.contrib.framework.arg_scope import add_arg_scope
from tensorflux.contrib.framework.variables import model_variable
from tensorflux.contrib.layers import utils
from tensorflux.contrib.layers.initializers import xavier_initializer
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.nn import activations
from tensorflux.ops.nn import conv as conv_ops
from tensorflux.ops.nn import core as nn_ops
from tensorflux.ops.nn import functions as nn_impl
from tensorflux.ops.state import variable_scope as vs
from tensorflux.ops.state.initializers import zeros_initializer

__all__ = ["fully_connected", "convolution2d", "conv2d", "convolution", "conv2d_transpose",
           "convolution2d_transpose", "separable_conv2d", "separable_convolution2d",
           "bias_add", "embed_sequence", "linear", "relu", "relu6", "legacy_fully_connected"]


def _layer_variable(name, shape, dtype, initializer, regularizer, variables_collections,
                    collection_key, trainable):
    return model_variable(name, shape=shape, dtype=dtype, initializer=initializer,
                          regularizer=regularizer,
                          collections=utils.get_variable_collections(variables_collections,
                                                                     collection_key),
                          trainable=trainable)


def _finish(outputs, dtype, normalizer_fn, normalizer_params, biases_initializer,
            biases_regularizer, variables_collections, trainable, activation_fn,
            data_format="NHWC", num_biases=None):
    """Normalizer or biases, then the activation (the common tail of every layer)."""
    if normalizer_fn is not None:
        outputs = normalizer_fn(outputs, **(normalizer_params or {}))
    elif biases_initializer is not None:
        if num_biases is None:
            num_biases = outputs.get_shape()[1 if data_format.startswith("NC") else -1].value
        biases = _layer_variable("biases", [num_biases], dtype, biases_initializer,
                                 biases_regularizer, variables_collections, "biases",
                                 trainable)
        outputs = nn_ops.bias_add(outputs, biases, data_format=data_format)
    if activation_fn is not None:
        outputs = activation_fn(outputs)
    return outputs


def _check_int(value, what):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{what} type should be one of [<class 'int'>], got {type(value)}.")
    return int(value)


@add_arg_scope
def fully_connected(inputs, num_outputs, activation_fn=activations.relu, normalizer_fn=None,
                    normalizer_params=None, weights_initializer=xavier_initializer(),
                    weights_regularizer=None, biases_initializer=zeros_initializer(),
                    biases_regularizer=None, reuse=None, variables_collections=None,
                    outputs_collections=None, trainable=True, scope=None):
    """`activation_fn(inputs @ weights + biases)` over the last axis of `inputs`.

    Args:
        inputs: a tensor of rank >= 2 with a known last dimension.
        num_outputs: the number of output units (int).
        activation_fn, normalizer_fn, normalizer_params, weights_initializer,
        weights_regularizer, biases_initializer, biases_regularizer, reuse,
        variables_collections, outputs_collections, trainable, scope: see the module doc.

    Returns:
        The output tensor (`inputs.shape[:-1] + [num_outputs]`).

    Raises:
        ValueError: `num_outputs` is not an int, or the last input dimension is unknown.

    Example:
        >>> net = tf.contrib.layers.fully_connected(x, 10, scope="fc")  # fc/weights, fc/biases
    """
    num_outputs = _check_int(num_outputs, "num_outputs")
    with vs.variable_scope(scope, "fully_connected", [inputs], reuse=reuse) as sc:
        inputs = convert_to_tensor(inputs)
        dtype = inputs.dtype.base_dtype
        num_inputs = utils.last_dimension(inputs.get_shape(), min_rank=2)
        weights = _layer_variable("weights", [num_inputs, num_outputs], dtype,
                                  weights_initializer, weights_regularizer,
                                  variables_collections, "weights", trainable)
        rank = inputs.get_shape().ndims
        if rank > 2:
            outputs = math_ops.tensordot(inputs, weights, [[rank - 1], [0]])
            outputs.set_shape(inputs.get_shape()[:-1].concatenate([num_outputs]))
        else:
            outputs = math_ops.matmul(inputs, weights)
        outputs = _finish(outputs, dtype, normalizer_fn, normalizer_params, biases_initializer,
                          biases_regularizer, variables_collections, trainable, activation_fn,
                          num_biases=num_outputs)
        return utils.collect_named_outputs(outputs_collections, sc.name, outputs)


def _data_format(data_format):
    if data_format is None:
        return "NHWC"
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError(f"data_format has to be either NCHW or NHWC. Got {data_format!r}")
    return data_format


def _full(pair, data_format):
    return [1, 1, *pair] if data_format == "NCHW" else [1, *pair, 1]


def _channels(inputs, data_format, what):
    dim = inputs.get_shape()[1 if data_format == "NCHW" else -1].value
    if dim is None:
        raise ValueError(f"{what}: the number of input channels must be known, got shape "
                         f"{inputs.get_shape()}")
    return dim


def _check_rank4(inputs, what):
    rank = inputs.get_shape().ndims
    if rank != 4:
        raise ValueError(f"{what}: convolution expects input with rank 4, got {rank}")


@add_arg_scope
def convolution2d(inputs, num_outputs, kernel_size, stride=1, padding="SAME", data_format=None,
                  rate=1, activation_fn=activations.relu, normalizer_fn=None,
                  normalizer_params=None, weights_initializer=xavier_initializer(),
                  weights_regularizer=None,
                  biases_initializer=zeros_initializer(), biases_regularizer=None, reuse=None,
                  variables_collections=None, outputs_collections=None, trainable=True,
                  scope=None):
    """A 2-D convolution layer: `Conv/weights` [kh, kw, in, num_outputs], `Conv/biases`.

    Args:
        inputs: a rank-4 tensor (NHWC, or NCHW with `data_format="NCHW"`).
        num_outputs: output channels.
        kernel_size: int or [kh, kw].
        stride: int or [sh, sw].
        padding: "SAME" or "VALID".
        rate: int or [rh, rw] dilation (only one of stride and rate may exceed 1).
        data_format: None/"NHWC" or "NCHW".
        Others: see the module doc.

    Returns:
        The output tensor.

    Raises:
        ValueError: wrong rank, data_format, or both stride and rate above 1.
    """
    num_outputs = _check_int(num_outputs, "num_outputs")
    data_format = _data_format(data_format)
    with vs.variable_scope(scope, "Conv", [inputs], reuse=reuse) as sc:
        inputs = convert_to_tensor(inputs)
        _check_rank4(inputs, "conv2d")
        kh, kw = utils.two_element_tuple(kernel_size)
        strides = utils.two_element_tuple(stride)
        rates = utils.two_element_tuple(rate)
        if max(strides) > 1 and max(rates) > 1:
            raise ValueError(f"conv2d: only one of stride {stride} and rate {rate} may be > 1")
        dtype = inputs.dtype.base_dtype
        in_channels = _channels(inputs, data_format, "conv2d")
        weights = _layer_variable("weights", [kh, kw, in_channels, num_outputs], dtype,
                                  weights_initializer, weights_regularizer,
                                  variables_collections, "weights", trainable)
        outputs = conv_ops.conv2d(inputs, weights, strides=_full(strides, data_format),
                                  padding=padding, data_format=data_format,
                                  dilations=_full(rates, data_format))
        outputs = _finish(outputs, dtype, normalizer_fn, normalizer_params, biases_initializer,
                          biases_regularizer, variables_collections, trainable, activation_fn,
                          data_format=data_format, num_biases=num_outputs)
        return utils.collect_named_outputs(outputs_collections, sc.name, outputs)


conv2d = convolution2d


@add_arg_scope
def convolution(inputs, num_outputs, kernel_size, stride=1, padding="SAME", data_format=None,
                rate=1, activation_fn=activations.relu, normalizer_fn=None, normalizer_params=None,
                weights_initializer=xavier_initializer(), weights_regularizer=None,
                biases_initializer=zeros_initializer(), biases_regularizer=None, reuse=None,
                variables_collections=None, outputs_collections=None, trainable=True,
                scope=None, conv_dims=None):
    """`convolution2d` for rank-4 inputs (1-D and 3-D convolutions are not provided).

    Raises:
        ValueError: `conv_dims` other than None/2, or inputs not of rank 4.
    """
    if conv_dims not in (None, 2):
        raise ValueError(f"convolution: only 2-D convolutions are provided, got conv_dims="
                         f"{conv_dims} (use tf.nn.conv1d / tf.layers.conv3d)")
    return convolution2d(inputs, num_outputs, kernel_size, stride=stride, padding=padding,
                         data_format=data_format, rate=rate, activation_fn=activation_fn,
                         normalizer_fn=normalizer_fn, normalizer_params=normalizer_params,
                         weights_initializer=weights_initializer,
                         weights_regularizer=weights_regularizer,
                         biases_initializer=biases_initializer,
                         biases_regularizer=biases_regularizer, reuse=reuse,
                         variables_collections=variables_collections,
                         outputs_collections=outputs_collections, trainable=trainable,
                         scope=scope)


def _deconv_length(length, kernel, stride, padding):
    if length is None:
        return None
    if padding == "SAME":
        return length * stride
    return length * stride + max(kernel - stride, 0)


@add_arg_scope
def convolution2d_transpose(inputs, num_outputs, kernel_size, stride=1, padding="SAME",
                            data_format="NHWC", activation_fn=activations.relu, normalizer_fn=None,
                            normalizer_params=None, weights_initializer=xavier_initializer(),
                            weights_regularizer=None, biases_initializer=zeros_initializer(),
                            biases_regularizer=None, reuse=None, variables_collections=None,
                            outputs_collections=None, trainable=True, scope=None):
    """A transposed 2-D convolution: `Conv2d_transpose/weights` [kh, kw, num_outputs, in].

    Output size per spatial axis: `in * stride` ("SAME") or `in * stride + max(k - stride, 0)`
    ("VALID").

    Returns:
        The output tensor.

    Raises:
        ValueError: wrong rank or data_format.
    """
    num_outputs = _check_int(num_outputs, "num_outputs")
    data_format = _data_format(data_format)
    with vs.variable_scope(scope, "Conv2d_transpose", [inputs], reuse=reuse) as sc:
        inputs = convert_to_tensor(inputs)
        _check_rank4(inputs, "conv2d_transpose")
        kh, kw = utils.two_element_tuple(kernel_size)
        sh, sw = utils.two_element_tuple(stride)
        dtype = inputs.dtype.base_dtype
        in_channels = _channels(inputs, data_format, "conv2d_transpose")
        weights = _layer_variable("weights", [kh, kw, num_outputs, in_channels], dtype,
                                  weights_initializer, weights_regularizer,
                                  variables_collections, "weights", trainable)
        h_axis, w_axis = (2, 3) if data_format == "NCHW" else (1, 2)
        static = inputs.get_shape().as_list()
        dynamic = array_ops.shape(inputs)
        out_h = _deconv_length(static[h_axis], kh, sh, padding)
        out_w = _deconv_length(static[w_axis], kw, sw, padding)
        dims = [dynamic[0],
                out_h if out_h is not None else dynamic[h_axis] * sh,
                out_w if out_w is not None else dynamic[w_axis] * sw]
        if data_format == "NCHW":
            output_shape = array_ops.stack([dims[0], num_outputs, dims[1], dims[2]])
            static_out = [static[0], num_outputs, out_h, out_w]
        else:
            output_shape = array_ops.stack([dims[0], dims[1], dims[2], num_outputs])
            static_out = [static[0], out_h, out_w, num_outputs]
        outputs = conv_ops.conv2d_transpose(inputs, weights, output_shape,
                                            strides=_full((sh, sw), data_format),
                                            padding=padding, data_format=data_format)
        outputs.set_shape(TensorShape(static_out))
        outputs = _finish(outputs, dtype, normalizer_fn, normalizer_params, biases_initializer,
                          biases_regularizer, variables_collections, trainable, activation_fn,
                          data_format=data_format, num_biases=num_outputs)
        return utils.collect_named_outputs(outputs_collections, sc.name, outputs)


conv2d_transpose = convolution2d_transpose


@add_arg_scope
def separable_convolution2d(inputs, num_outputs, kernel_size, depth_multiplier=1, stride=1,
                            padding="SAME", data_format="NHWC", rate=1,
                            activation_fn=activations.relu, normalizer_fn=None,
                            normalizer_params=None, weights_initializer=xavier_initializer(),
                            pointwise_initializer=None, weights_regularizer=None,
                            biases_initializer=zeros_initializer(), biases_regularizer=None,
                            reuse=None, variables_collections=None, outputs_collections=None,
                            trainable=True, scope=None):
    """A depthwise convolution followed (unless `num_outputs` is None) by a 1x1 convolution.

    Variables under `SeparableConv2d/`: `depthwise_weights` [kh, kw, in, depth_multiplier],
    `pointwise_weights` [1, 1, in * depth_multiplier, num_outputs], `biases`.

    Returns:
        The output tensor.

    Raises:
        ValueError: wrong rank or data_format.
    """
    data_format = _data_format(data_format)
    with vs.variable_scope(scope, "SeparableConv2d", [inputs], reuse=reuse) as sc:
        inputs = convert_to_tensor(inputs)
        _check_rank4(inputs, "separable_conv2d")
        kh, kw = utils.two_element_tuple(kernel_size)
        strides = _full(utils.two_element_tuple(stride), data_format)
        rates = utils.two_element_tuple(rate)
        dtype = inputs.dtype.base_dtype
        in_channels = _channels(inputs, data_format, "separable_conv2d")
        depthwise = _layer_variable("depthwise_weights", [kh, kw, in_channels, depth_multiplier],
                                    dtype, weights_initializer, weights_regularizer,
                                    variables_collections, "weights", trainable)
        if num_outputs is not None:
            pointwise = _layer_variable(
                "pointwise_weights", [1, 1, depth_multiplier * in_channels, num_outputs],
                dtype, pointwise_initializer or weights_initializer, weights_regularizer,
                variables_collections, "weights", trainable)
            outputs = conv_ops.separable_conv2d(inputs, depthwise, pointwise, strides, padding,
                                                rate=rates, data_format=data_format)
            num_biases = num_outputs
        else:
            outputs = conv_ops.depthwise_conv2d(inputs, depthwise, strides, padding,
                                                rate=rates, data_format=data_format)
            num_biases = in_channels * depth_multiplier
        outputs = _finish(outputs, dtype, normalizer_fn, normalizer_params, biases_initializer,
                          biases_regularizer, variables_collections, trainable, activation_fn,
                          data_format=data_format, num_biases=num_biases)
        return utils.collect_named_outputs(outputs_collections, sc.name, outputs)


separable_conv2d = separable_convolution2d


@add_arg_scope
def bias_add(inputs, activation_fn=None, initializer=zeros_initializer(), regularizer=None,
             reuse=None, variables_collections=None, outputs_collections=None, trainable=True,
             data_format="NHWC", scope=None):
    """Adds a `BiasAdd/biases` vector over the channel axis, then `activation_fn`.

    Raises:
        ValueError: bad data_format, unknown rank, or unknown channel dimension.
    """
    if data_format not in ("NCHW", "NHWC"):
        raise ValueError(f"data_format has to be either NCHW or NHWC. Got {data_format!r}")
    with vs.variable_scope(scope, "BiasAdd", [inputs], reuse=reuse) as sc:
        inputs = convert_to_tensor(inputs)
        dtype = inputs.dtype.base_dtype
        shape = inputs.get_shape()
        if shape.ndims is None:
            raise ValueError("Dims of shape must be known but is None")
        if shape.ndims == 1:
            raise ValueError("Needs at least 2 dimensions for bias_add")
        axis = 1 if data_format == "NCHW" else -1
        num_features = shape[axis].value
        if num_features is None:
            raise ValueError(f"`C` dimension must be known but is None (shape {shape})")
        biases = _layer_variable("biases", [num_features], dtype, initializer, regularizer,
                                 variables_collections, "biases", trainable)
        outputs = nn_ops.bias_add(inputs, biases, data_format=data_format)
        if activation_fn is not None:
            outputs = activation_fn(outputs)
        return utils.collect_named_outputs(outputs_collections, sc.name, outputs)


def embed_sequence(ids, vocab_size=None, embed_dim=None, unique=False, initializer=None,
                   regularizer=None, trainable=True, scope=None, reuse=None):
    """Embeds each id of `ids` ([batch, doc_length]) with `EmbedSequence/embeddings`.

    Returns:
        [batch, doc_length, embed_dim] embeddings.

    Raises:
        ValueError: `vocab_size` or `embed_dim` missing.
    """
    if not (vocab_size and embed_dim):
        raise ValueError("Must specify vocab size and embedding dimension")
    with vs.variable_scope(scope, "EmbedSequence", [ids], reuse=reuse):
        embeddings = model_variable("embeddings", shape=[vocab_size, embed_dim],
                                    initializer=initializer, regularizer=regularizer,
                                    trainable=trainable)
        ids = convert_to_tensor(ids)
        if unique:
            flat = array_ops.reshape(ids, [-1])
            uniq, idx = array_ops.unique(flat)
            looked = nn_impl.embedding_lookup(embeddings, uniq)
            rows = array_ops.gather(looked, idx)
            out_shape = array_ops.concat([array_ops.shape(ids), [embed_dim]], 0)
            result = array_ops.reshape(rows, out_shape)
            result.set_shape(ids.get_shape().concatenate([embed_dim]))
            return result
        return nn_impl.embedding_lookup(embeddings, ids)


def _partial_fc(activation, name):
    def layer(inputs, num_outputs, **kwargs):
        kwargs.setdefault("activation_fn", activation)
        return fully_connected(inputs, num_outputs, **kwargs)

    layer.__name__ = name
    layer.__doc__ = f"`fully_connected` with activation_fn={name} by default."
    return layer


linear = _partial_fc(None, "linear")
relu = _partial_fc(activations.relu, "relu")
relu6 = _partial_fc(activations.relu6, "relu6")
legacy_fully_connected = fully_connected
