"""`tf.keras.backend` neural-network helpers (TF 1.15): convolutions, pooling, padding,
normalization, dropout, activations, CTC and resizing, with Keras' argument conventions
(`data_format` "channels_last" or "channels_first", `padding` "valid"/"same"/"causal").

Channels-first inputs are transposed to channels-last around the op, as Keras does on CPUs.
"""

from __future__ import annotations

from tensorflux.framework import dtypes, tensor_conversion
from tensorflux.framework.sparse_tensor import SparseTensor
from tensorflux.keras import backend
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.array import padding as padding_ops
from tensorflux.ops.array import sorting as array_sorting
from tensorflux.ops.image import resize as image_resize
from tensorflux.ops.math import sequence as sequence_ops
from tensorflux.ops.nn import activations as nn_activations
from tensorflux.ops.nn import conv as nn_conv
from tensorflux.ops.nn import conv1d as nn_conv1d
from tensorflux.ops.nn import conv3d as nn_conv3d
from tensorflux.ops.nn import core as nn_core
from tensorflux.ops.nn import ctc as nn_ctc
from tensorflux.ops.nn import functions as nn_functions
from tensorflux.ops.nn import pool_generic
from tensorflux.ops.sparse import core as sparse_core

__all__ = ["conv1d", "conv2d", "conv2d_transpose", "conv3d", "separable_conv2d",
           "depthwise_conv2d", "pool2d", "pool3d", "bias_add", "batch_normalization",
           "normalize_batch_in_training", "dropout", "elu", "softplus", "softsign",
           "hard_sigmoid", "in_top_k", "temporal_padding", "spatial_2d_padding",
           "spatial_3d_padding", "resize_images", "resize_volumes", "ctc_label_dense_to_sparse",
           "ctc_batch_cost", "ctc_decode", "local_conv1d", "local_conv2d"]


def _data_format(data_format) -> str:
    data_format = data_format or backend.image_data_format()
    if data_format not in ("channels_first", "channels_last"):
        raise ValueError(f"Unknown data_format: {data_format}")
    return data_format


def _channels_last(x, data_format: str, rank: int):
    """`x` (rank `rank`) in channels-last order."""
    if data_format == "channels_first":
        return array_ops.transpose(x, [0] + list(range(2, rank)) + [1])
    return x


def _back(x, data_format: str, rank: int):
    if data_format == "channels_first":
        return array_ops.transpose(x, [0, rank - 1] + list(range(1, rank - 1)))
    return x


def _padding(padding: str) -> str:
    if padding not in ("same", "valid"):
        raise ValueError(f"Invalid padding: {padding}")
    return padding.upper()


def _tuple(value, rank: int) -> tuple:
    return tuple(value) if isinstance(value, (list, tuple)) else (value,) * rank


def _convolve(x, kernel, strides, padding, data_format, dilation_rate, rank):
    data_format = _data_format(data_format)
    x = tensor_conversion.convert_to_tensor(x)
    if padding == "causal":
        if rank != 3:
            raise ValueError("Causal padding is only supported for 1D convolutions.")
        left = (int(kernel.get_shape()[0]) - 1) * _tuple(dilation_rate, 1)[0]
        x = temporal_padding(_channels_last(x, data_format, 3), (left, 0))
        x = _back(x, data_format, 3)
        padding = "valid"
    x = _channels_last(x, data_format, rank)
    strides, dilation_rate = _tuple(strides, rank - 2), _tuple(dilation_rate, rank - 2)
    if rank == 3:
        out = nn_conv1d.conv1d(x, kernel, strides[0], _padding(padding),
                               dilations=dilation_rate[0])
    elif rank == 5:
        out = nn_conv3d.conv3d(x, kernel, (1,) + strides + (1,), _padding(padding),
                               dilations=(1,) + dilation_rate + (1,))
    else:
        out = nn_conv.convolution(x, kernel, padding=_padding(padding), strides=strides,
                                  dilation_rate=dilation_rate)
    return _back(out, data_format, rank)


def conv1d(x, kernel, strides=1, padding="valid", data_format=None, dilation_rate=1):
    """1D convolution of `x` (batch, steps, channels) with `kernel` (width, in, out)."""
    return _convolve(x, kernel, strides, padding, data_format, dilation_rate, 3)


def conv2d(x, kernel, strides=(1, 1), padding="valid", data_format=None,
           dilation_rate=(1, 1)):
    """2D convolution with `kernel` (height, width, in, out)."""
    return _convolve(x, kernel, strides, padding, data_format, dilation_rate, 4)


def conv3d(x, kernel, strides=(1, 1, 1), padding="valid", data_format=None,
           dilation_rate=(1, 1, 1)):
    """3D convolution with `kernel` (depth, height, width, in, out)."""
    return _convolve(x, kernel, strides, padding, data_format, dilation_rate, 5)


def conv2d_transpose(x, kernel, output_shape, strides=(1, 1), padding="valid",
                     data_format=None, dilation_rate=(1, 1)):
    """The transpose of conv2d (`kernel` is (height, width, out, in)); `output_shape` in
    `data_format` order."""
    data_format = _data_format(data_format)
    if isinstance(output_shape, (list, tuple)):
        output_shape = list(output_shape)
        if data_format == "channels_first":
            output_shape = [output_shape[0], output_shape[2], output_shape[3], output_shape[1]]
        if output_shape[0] is None:
            output_shape[0] = array_ops.shape(x)[0]
        output_shape = array_ops.stack(output_shape)
    x = _channels_last(x, data_format, 4)
    if tuple(_tuple(dilation_rate, 2)) != (1, 1):
        raise ValueError("conv2d_transpose: dilation_rate other than (1, 1) is not provided")
    strides = (1,) + _tuple(strides, 2) + (1,)
    out = nn_conv.conv2d_transpose(x, kernel, output_shape, strides, padding=_padding(padding))
    return _back(out, data_format, 4)


def separable_conv2d(x, depthwise_kernel, pointwise_kernel, strides=(1, 1), padding="valid",
                     data_format=None, dilation_rate=(1, 1)):
    """Depthwise then pointwise 2D convolution."""
    data_format = _data_format(data_format)
    x = _channels_last(x, data_format, 4)
    out = nn_conv.separable_conv2d(x, depthwise_kernel, pointwise_kernel,
                                   (1,) + _tuple(strides, 2) + (1,), _padding(padding),
                                   rate=_tuple(dilation_rate, 2))
    return _back(out, data_format, 4)


def depthwise_conv2d(x, depthwise_kernel, strides=(1, 1), padding="valid", data_format=None,
                     dilation_rate=(1, 1)):
    """Per-channel 2D convolution with `depthwise_kernel` (height, width, in, multiplier)."""
    data_format = _data_format(data_format)
    x = _channels_last(x, data_format, 4)
    out = nn_conv.depthwise_conv2d(x, depthwise_kernel, (1,) + _tuple(strides, 2) + (1,),
                                   _padding(padding), rate=_tuple(dilation_rate, 2))
    return _back(out, data_format, 4)


def _local_conv(inputs, kernel, kernel_size, strides, output_shape, data_format):
    """Unshared-weight convolution: one [feature_dim, filters] kernel per output position.

    Patches are taken in row-major position order and flattened in the input's own axis order
    ((kernel..., channels) for channels_last, (channels, kernel...) for channels_first), then
    multiplied by `kernel` [positions, feature_dim, filters] position by position.
    """
    data_format = _data_format(data_format)
    inputs = tensor_conversion.convert_to_tensor(inputs)
    kernel = tensor_conversion.convert_to_tensor(kernel)
    kernel_shape = kernel.get_shape().as_list()
    if len(kernel_shape) != 3 or None in kernel_shape[1:]:
        raise ValueError(f"local_conv: kernel must be [positions, feature_dim, filters] with "
                         f"known feature_dim and filters, got shape {kernel_shape}")
    feature_dim, filters = kernel_shape[1], kernel_shape[2]
    ndims = len(output_shape)
    kernel_size, strides = _tuple(kernel_size, ndims), _tuple(strides, ndims)
    grid = [()]
    for size in output_shape:
        grid = [g + (i,) for g in grid for i in range(int(size))]
    if kernel_shape[0] is not None and kernel_shape[0] != len(grid):
        raise ValueError(f"local_conv: kernel has {kernel_shape[0]} positions but the output "
                         f"shape {tuple(output_shape)} has {len(grid)}")
    patches = []
    for position in grid:
        window = [slice(i * s, i * s + k) for i, s, k in zip(position, strides, kernel_size)]
        index = ([slice(None), slice(None)] + window if data_format == "channels_first"
                 else [slice(None)] + window + [slice(None)])
        patches.append(array_ops.reshape(inputs[tuple(index)], [1, -1, feature_dim]))
    output = math_ops.matmul(array_ops.concat(patches, 0), kernel)  # [P, batch, filters]
    output = array_ops.reshape(output, [int(n) for n in output_shape] + [-1, filters])
    spatial = list(range(ndims))
    if data_format == "channels_first":
        permutation = [ndims, ndims + 1] + spatial
    else:
        permutation = [ndims] + spatial + [ndims + 1]
    return array_ops.transpose(output, permutation)


def local_conv1d(inputs, kernel, kernel_size, strides, data_format=None):
    """1D convolution with unshared weights (TF 1.x `tf.keras.backend.local_conv1d`).

    Args:
        inputs: [batch, steps, channels] (channels_last) or [batch, channels, steps].
        kernel: [output_length, kernel_size * channels, filters].
        kernel_size: a 1-tuple (or int), the window length.
        strides: a 1-tuple (or int).
        data_format: "channels_last" or "channels_first" (default: image_data_format()).

    Returns:
        [batch, output_length, filters] (channels_last) or [batch, filters, output_length].

    Raises:
        ValueError: an unknown data_format or a kernel of the wrong rank.
    """
    positions = tensor_conversion.convert_to_tensor(kernel).get_shape().as_list()[0]
    if positions is None:
        raise ValueError("local_conv1d: the kernel's first dimension (output_length) must be "
                         "known")
    return _local_conv(inputs, kernel, kernel_size, strides, (positions,), data_format)


def local_conv2d(inputs, kernel, kernel_size, strides, output_shape, data_format=None):
    """2D convolution with unshared weights (TF 1.x `tf.keras.backend.local_conv2d`).

    Args:
        inputs: [batch, rows, cols, channels] (channels_last) or [batch, channels, rows, cols].
        kernel: [output_rows * output_cols, kh * kw * channels, filters].
        kernel_size: (kh, kw).
        strides: (stride_rows, stride_cols).
        output_shape: (output_rows, output_cols).
        data_format: "channels_last" or "channels_first" (default: image_data_format()).

    Returns:
        [batch, output_rows, output_cols, filters] or [batch, filters, output_rows, output_cols].

    Raises:
        ValueError: an unknown data_format or a kernel that does not match output_shape.
    """
    return _local_conv(inputs, kernel, kernel_size, strides, tuple(output_shape), data_format)


def _pool(x, pool_size, strides, padding, data_format, pool_mode, rank):
    if pool_mode not in ("max", "avg"):
        raise ValueError(f"Invalid pool_mode: {pool_mode}")
    data_format = _data_format(data_format)
    x = _channels_last(x, data_format, rank)
    out = pool_generic.pool(x, _tuple(pool_size, rank - 2),
                            "MAX" if pool_mode == "max" else "AVG", _padding(padding),
                            strides=_tuple(strides, rank - 2))
    return _back(out, data_format, rank)


def pool2d(x, pool_size, strides=(1, 1), padding="valid", data_format=None, pool_mode="max"):
    """2D max or average pooling (`pool_mode` "max"/"avg")."""
    return _pool(x, pool_size, strides, padding, data_format, pool_mode, 4)


def pool3d(x, pool_size, strides=(1, 1, 1), padding="valid", data_format=None,
           pool_mode="max"):
    """3D max or average pooling."""
    return _pool(x, pool_size, strides, padding, data_format, pool_mode, 5)


def bias_add(x, bias, data_format=None):
    """`x + bias` with `bias` over the channels axis (rank 1) or over all but the batch axis.

    Raises:
        ValueError: a bias of another rank, or a data_format that is neither.
    """
    data_format = _data_format(data_format)
    x = tensor_conversion.convert_to_tensor(x)
    bias = tensor_conversion.convert_to_tensor(bias)
    bias_rank = bias.get_shape().ndims
    rank = x.get_shape().ndims
    if bias_rank != 1 and bias_rank != rank - 1:
        raise ValueError(f"Unexpected bias dimensions {bias_rank}, expect to be 1 or "
                         f"{rank - 1} dimensions")
    if bias_rank == 1:
        if data_format == "channels_first" and rank > 2:
            shape = [1, -1] + [1] * (rank - 2)
            return x + array_ops.reshape(bias, shape)
        return nn_core.bias_add(x, bias)
    return x + array_ops.expand_dims(bias, 0)


def batch_normalization(x, mean, var, beta, gamma, axis=-1, epsilon=1e-3):
    """`gamma * (x - mean) / sqrt(var + epsilon) + beta`."""
    return nn_functions.batch_normalization(x, mean, var, beta, gamma, epsilon)


def normalize_batch_in_training(x, gamma, beta, reduction_axes, epsilon=1e-3):
    """(x normalized by its batch moments over `reduction_axes`, the mean, the variance)."""
    mean, variance = nn_functions.moments(x, list(reduction_axes), keep_dims=False)
    x = tensor_conversion.convert_to_tensor(x)
    rank = x.get_shape().ndims
    kept = [i for i in range(rank) if i not in [a % rank for a in reduction_axes]]
    shape = [array_ops.shape(x)[i] if i in kept else 1 for i in range(rank)]
    target = array_ops.stack(shape)

    def broadcast(value):
        return None if value is None else array_ops.reshape(value, target)

    normed = nn_functions.batch_normalization(
        x, broadcast(mean), broadcast(variance), broadcast(beta), broadcast(gamma), epsilon)
    return normed, mean, variance


def dropout(x, level, noise_shape=None, seed=None):
    """`x` with a fraction `level` of its entries zeroed and the rest scaled by 1/(1-level)."""
    return nn_functions.dropout(x, rate=level, noise_shape=noise_shape, seed=seed)


def elu(x, alpha=1.0):
    """x for x > 0, alpha * (exp(x) - 1) otherwise."""
    result = nn_activations.elu(x)
    if alpha == 1:
        return result
    return array_ops.where(x > 0, result, alpha * result)


def softplus(x):
    return nn_activations.softplus(x)


def softsign(x):
    return nn_activations.softsign(x)


def hard_sigmoid(x):
    """clip(0.2 * x + 0.5, 0, 1)."""
    x = tensor_conversion.convert_to_tensor(x)
    value = math_ops.cast(0.2, x.dtype) * x + math_ops.cast(0.5, x.dtype)
    return math_ops.clip_by_value(value, 0.0, 1.0)


def in_top_k(predictions, targets, k):
    """Whether each target is among the `k` largest predictions of its row."""
    return nn_core.in_top_k(predictions, targets, k)


def temporal_padding(x, padding=(1, 1)):
    """Pads the middle axis of a 3D tensor with zeros."""
    if len(padding) != 2:
        raise ValueError(f"padding must be a pair; got {padding}")
    return padding_ops.pad(x, [[0, 0], list(padding), [0, 0]])


def _spatial_padding(x, padding, data_format, rank):
    if len(padding) != rank - 2 or any(len(p) != 2 for p in padding):
        raise ValueError(f"padding must be {rank - 2} pairs; got {padding}")
    data_format = _data_format(data_format)
    pads = [list(p) for p in padding]
    if data_format == "channels_first":
        return padding_ops.pad(x, [[0, 0], [0, 0]] + pads)
    return padding_ops.pad(x, [[0, 0]] + pads + [[0, 0]])


def spatial_2d_padding(x, padding=((1, 1), (1, 1)), data_format=None):
    """Pads the two spatial axes of a 4D tensor with zeros."""
    return _spatial_padding(x, padding, data_format, 4)


def spatial_3d_padding(x, padding=((1, 1), (1, 1), (1, 1)), data_format=None):
    """Pads the three spatial axes of a 5D tensor with zeros."""
    return _spatial_padding(x, padding, data_format, 5)


def resize_images(x, height_factor, width_factor, data_format, interpolation="nearest"):
    """Scales the spatial axes of a 4D tensor by integer factors ("nearest" or
    "bilinear")."""
    if interpolation not in ("nearest", "bilinear"):
        raise ValueError(f"interpolation should be one of 'nearest' or 'bilinear'; got "
                         f"{interpolation}")
    data_format = _data_format(data_format)
    x = _channels_last(x, data_format, 4)
    size = array_ops.shape(x)[1:3] * array_ops.constant([height_factor, width_factor])
    if interpolation == "nearest":
        out = image_resize.resize_nearest_neighbor(x, size)
    else:
        out = image_resize.resize_bilinear(x, size)
    static = x.get_shape().as_list()
    out.set_shape([static[0], None if static[1] is None else static[1] * height_factor,
                   None if static[2] is None else static[2] * width_factor, static[3]])
    return _back(out, data_format, 4)


def resize_volumes(x, depth_factor, height_factor, width_factor, data_format):
    """Scales the three spatial axes of a 5D tensor by repeating entries."""
    data_format = _data_format(data_format)
    first = 2 if data_format == "channels_first" else 1
    for offset, factor in enumerate((depth_factor, height_factor, width_factor)):
        x = array_sorting.repeat(x, factor, axis=first + offset)
    return x


def ctc_label_dense_to_sparse(labels, label_lengths):
    """Dense labels (batch, max length) and their lengths -> a SparseTensor of the labels."""
    labels = tensor_conversion.convert_to_tensor(labels)
    label_lengths = math_ops.cast(array_ops.reshape(label_lengths, [-1]), dtypes.int32)
    max_length = array_ops.shape(labels)[1]
    positions = sequence_ops.range(max_length)
    mask = math_ops.less(array_ops.expand_dims(positions, 0),
                         array_ops.expand_dims(label_lengths, 1))
    indices = array_ops.where(mask)
    values = array_ops.gather_nd(labels, indices)
    shape = math_ops.cast(array_ops.shape(labels), dtypes.int64)
    return SparseTensor(indices, math_ops.cast(values, dtypes.int32), shape)


def ctc_batch_cost(y_true, y_pred, input_length, label_length):
    """The CTC loss of each batch element, shape (batch, 1).

    Args:
        y_true: (batch, max label length) dense labels.
        y_pred: (batch, time, classes) softmax outputs (the last class is the blank).
        input_length: (batch, 1) the time steps of each prediction.
        label_length: (batch, 1) the length of each label.
    """
    label_length = math_ops.cast(array_ops.squeeze(label_length, axis=-1), dtypes.int32)
    input_length = math_ops.cast(array_ops.squeeze(input_length, axis=-1), dtypes.int32)
    sparse = ctc_label_dense_to_sparse(y_true, label_length)
    y_pred = math_ops.log(array_ops.transpose(y_pred, [1, 0, 2]) + backend.epsilon())
    return array_ops.expand_dims(
        nn_ctc.ctc_loss(inputs=y_pred, labels=sparse, sequence_length=input_length), 1)


def ctc_decode(y_pred, input_length, greedy=True, beam_width=100, top_paths=1):
    """([dense decoded paths, -1 where empty], log probabilities) of softmax outputs
    `y_pred` (batch, time, classes) with `input_length` (batch,) time steps."""
    y_pred = math_ops.log(array_ops.transpose(y_pred, [1, 0, 2]) + backend.epsilon())
    input_length = math_ops.cast(input_length, dtypes.int32)
    if greedy:
        decoded, log_prob = nn_ctc.ctc_greedy_decoder(inputs=y_pred,
                                                      sequence_length=input_length)
    else:
        decoded, log_prob = nn_ctc.ctc_beam_search_decoder(
            inputs=y_pred, sequence_length=input_length, beam_width=beam_width,
            top_paths=top_paths)
    dense = [sparse_core.sparse_to_dense(st.indices, st.dense_shape, st.values,
                                         default_value=-1) for st in decoded]
    return dense, log_prob
