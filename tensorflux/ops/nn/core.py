"""Neural-network primitives: activations (and their gradient ops), softmax, the fused
cross-entropy losses, BiasAdd, L2Loss, InTopK and TopKV2, with their tf.nn wrappers.

Composite functions (sigmoid cross entropy, moments, dropout, ...) are in `nn_impl.py`;
gradients are registered in `nn_grad.py`. None of these names lives at the top level of `tf`.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import errors
from tensorflux.framework.common_shapes import broadcast_shape
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops import array as array_ops

__all__: list = []

_FLOAT = "T: {float16, bfloat16, float32, float64}"
_REAL = ("T: {float32, float64, int32, uint8, int16, int8, int64, bfloat16, uint16, float16, "
         "uint32, uint64}")
SELU_SCALE = 1.0507009873554804934193349852946
SELU_ALPHA = 1.6732632423543772848170429916717


def _same_shape(x, *others):
    for other in others:
        x = x.merge_with(other)
    return x


# -- activations ----------------------------------------------------------------------------


def _activation(name: str, kernel, types: str = _FLOAT, attrs=()):
    op = define_op(name, inputs=["features: T"], outputs=["activations: T"],
                   attrs=[types, *attrs])
    op.shape_fn(_same_shape)
    op.kernel(kernel)
    return op


def _activation_grad(name: str, kernel, second: str = "features", types: str = _FLOAT,
                     attrs=()):
    op = define_op(name, inputs=["gradients: T", f"{second}: T"], outputs=["backprops: T"],
                   attrs=[types, *attrs])
    op.shape_fn(_same_shape)
    op.kernel(kernel)
    return op


def _relu(x):
    return np.maximum(x, np.zeros((), x.dtype))


def _relu6(x):
    return np.clip(x, np.zeros((), x.dtype), np.asarray(6, x.dtype))


def _elu(x):
    return np.where(x < 0, np.expm1(np.minimum(x, 0)), x).astype(x.dtype, copy=False)


def _selu(x):
    neg = (SELU_SCALE * SELU_ALPHA) * np.expm1(np.minimum(x, 0))
    return np.where(x < 0, neg, SELU_SCALE * x).astype(x.dtype, copy=False)


def _leaky_relu(x, *, alpha):
    return np.where(x > 0, x, x * x.dtype.type(alpha))


def _softplus(x):
    return np.logaddexp(np.zeros((), x.dtype), x)


def _softsign(x):
    return x / (1 + np.abs(x))


Relu = _activation("Relu", _relu, _REAL)
Relu6 = _activation("Relu6", _relu6, _REAL)
Elu = _activation("Elu", _elu)
Selu = _activation("Selu", _selu)
LeakyRelu = _activation("LeakyRelu", _leaky_relu, _FLOAT + " = float32",
                        ["alpha: float = 0.2"])
Softplus = _activation("Softplus", _softplus)
Softsign = _activation("Softsign", _softsign)


def _relu_grad(g, f):
    return g * (f > 0)


def _relu6_grad(g, f):
    return g * ((f > 0) & (f < 6))


def _elu_grad(g, y):
    return np.where(y < 0, g * (y + 1), g)


def _selu_grad(g, y):
    return np.where(y < 0, g * (y + y.dtype.type(SELU_SCALE * SELU_ALPHA)),
                    g * g.dtype.type(SELU_SCALE))


def _leaky_relu_grad(g, f, *, alpha):
    return np.where(f > 0, g, g * g.dtype.type(alpha))


def _softplus_grad(g, f):
    return g / (1 + np.exp(-f))


def _softsign_grad(g, f):
    return g / np.square(1 + np.abs(f))


ReluGrad = _activation_grad("ReluGrad", _relu_grad, types=_REAL)
Relu6Grad = _activation_grad("Relu6Grad", _relu6_grad, types=_REAL)
EluGrad = _activation_grad("EluGrad", _elu_grad, second="outputs")
SeluGrad = _activation_grad("SeluGrad", _selu_grad, second="outputs")
LeakyReluGrad = _activation_grad("LeakyReluGrad", _leaky_relu_grad,
                                 types=_FLOAT + " = float32", attrs=["alpha: float = 0.2"])
SoftplusGrad = _activation_grad("SoftplusGrad", _softplus_grad)
SoftsignGrad = _activation_grad("SoftsignGrad", _softsign_grad)


# -- softmax --------------------------------------------------------------------------------


def _at_least_rank1(logits):
    return logits.with_rank_at_least(1)


def softmax_array(x: np.ndarray) -> np.ndarray:
    """Softmax over the last axis, stable against overflow."""
    e = x - np.max(x, axis=-1, keepdims=True)
    np.exp(e, out=e)
    e /= np.sum(e, axis=-1, keepdims=True)
    return e


def log_softmax_array(x: np.ndarray) -> np.ndarray:
    shifted = x - np.max(x, axis=-1, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=-1, keepdims=True))


Softmax = define_op("Softmax", inputs=["logits: T"], outputs=["softmax: T"], attrs=[_FLOAT])
Softmax.shape_fn(_at_least_rank1)
Softmax.kernel(softmax_array)

LogSoftmax = define_op("LogSoftmax", inputs=["logits: T"], outputs=["logsoftmax: T"],
                       attrs=[_FLOAT])
LogSoftmax.shape_fn(_at_least_rank1)
LogSoftmax.kernel(log_softmax_array)


# -- fused cross entropies ------------------------------------------------------------------

SoftmaxCrossEntropyWithLogits = define_op(
    "SoftmaxCrossEntropyWithLogits", inputs=["features: T", "labels: T"],
    outputs=["loss: T", "backprop: T"], attrs=[_FLOAT])


@SoftmaxCrossEntropyWithLogits.shape_fn
def _softmax_xent_shape(features, labels):
    if features.ndims not in (None, 2) or labels.ndims not in (None, 2):
        raise ValueError(f"logits and labels must be rank 2 (broadcastable), got shapes "
                         f"{features} and {labels}")
    both = broadcast_shape(features.with_rank(2), labels.with_rank(2))
    return [TensorShape([both.dims[0]]), both]


@SoftmaxCrossEntropyWithLogits.kernel
def _softmax_xent_kernel(features, labels):
    if features.ndim != 2 or labels.ndim != 2:
        raise errors.InvalidArgumentError(
            None, None, f"logits and labels must be 2-D, got shapes {list(features.shape)} and "
                        f"{list(labels.shape)}")
    features, labels = np.broadcast_arrays(features, labels)
    log_probs = log_softmax_array(features)
    loss = -np.sum(labels * log_probs, axis=-1)
    return loss, np.exp(log_probs) - labels


SparseSoftmaxCrossEntropyWithLogits = define_op(
    "SparseSoftmaxCrossEntropyWithLogits", inputs=["features: T", "labels: Tlabels"],
    outputs=["loss: T", "backprop: T"], attrs=[_FLOAT, "Tlabels: {int32, int64} = int64"])


@SparseSoftmaxCrossEntropyWithLogits.shape_fn
def _sparse_softmax_xent_shape(features, labels):
    features = features.with_rank(2)
    labels = labels.with_rank(1)
    batch = labels.merge_with(TensorShape([features.dims[0]]))
    return [batch, TensorShape([batch.dims[0], features.dims[1]])]


@SparseSoftmaxCrossEntropyWithLogits.kernel
def _sparse_softmax_xent_kernel(features, labels):
    if features.ndim != 2 or labels.ndim != 1 or features.shape[0] != labels.shape[0]:
        raise errors.InvalidArgumentError(
            None, None, f"logits must be 2-D and labels 1-D with the same first dimension, got "
                        f"logits shape {list(features.shape)} and labels shape "
                        f"{list(labels.shape)}")
    classes = features.shape[1]
    bad = (labels < 0) | (labels >= classes)
    if bad.any():
        raise errors.InvalidArgumentError(
            None, None, f"Received a label value of {labels[bad][0]} which is outside the valid "
                        f"range of [0, {classes}).  Label values: "
                        f"{' '.join(str(v) for v in labels.tolist())}")
    # Three passes over the logits: shift, exp (in place), normalise (in place).
    backprop = features - np.max(features, axis=-1, keepdims=True)
    rows = np.arange(labels.shape[0])
    picked = backprop[rows, labels]
    np.exp(backprop, out=backprop)
    sums = np.sum(backprop, axis=-1, keepdims=True)
    backprop /= sums
    loss = np.log(sums[:, 0]) - picked
    backprop[rows, labels] -= 1
    return loss, backprop


# -- BiasAdd --------------------------------------------------------------------------------

_BIAS_TYPES = ("T: {float32, float64, int32, uint8, int16, int8, complex64, int64, bfloat16, "
               "uint16, complex128, float16, uint32, uint64}")
BiasAdd = define_op(
    "BiasAdd", inputs=["value: T", "bias: T"], outputs=["output: T"],
    attrs=[_BIAS_TYPES, "data_format: {'NHWC', 'NCHW'} = 'NHWC'"])


def bias_axis(rank: int, data_format: str) -> int:
    """The dimension BiasAdd adds along: the last one (NHWC) or the second one (NCHW)."""
    return 1 if data_format == "NCHW" else rank - 1


@BiasAdd.shape_fn
def _bias_add_shape(value, bias, *, data_format):
    value = value.with_rank_at_least(3 if data_format == "NCHW" else 2)
    bias = bias.with_rank(1)
    if value.ndims is None:
        return value
    axis = bias_axis(value.ndims, data_format)
    dims = list(value.dims)
    if dims[axis] is not None and bias.dims[0] is not None and dims[axis] != bias.dims[0]:
        raise ValueError(f"Dimensions must be equal, but are {dims[axis]} and {bias.dims[0]} "
                         f"(value {value}, bias {bias}, data_format {data_format})")
    dims[axis] = dims[axis] if dims[axis] is not None else bias.dims[0]
    return TensorShape(dims)


@BiasAdd.kernel
def _bias_add_kernel(value, bias, *, data_format):
    axis = bias_axis(value.ndim, data_format)
    if bias.ndim != 1 or value.shape[axis] != bias.shape[0]:
        raise errors.InvalidArgumentError(
            None, None, f"Must provide as many biases as the channel dimension of the input "
                        f"tensor: {list(bias.shape)} vs. {list(value.shape)}")
    if axis != value.ndim - 1:
        bias = bias.reshape((-1,) + (1,) * (value.ndim - axis - 1))
    return value + bias


BiasAddGrad = define_op(
    "BiasAddGrad", inputs=["out_backprop: T"], outputs=["output: T"],
    attrs=[_BIAS_TYPES, "data_format: {'NHWC', 'NCHW'} = 'NHWC'"])


@BiasAddGrad.shape_fn
def _bias_add_grad_shape(out_backprop, *, data_format):
    grad = out_backprop.with_rank_at_least(3 if data_format == "NCHW" else 2)
    if grad.ndims is None:
        return TensorShape([None])
    return TensorShape([grad.dims[bias_axis(grad.ndims, data_format)]])


_BLAS_TYPES = (np.float32, np.float64, np.complex64, np.complex128)


@BiasAddGrad.kernel
def _bias_add_grad_kernel(g, *, data_format):
    axis = bias_axis(g.ndim, data_format)
    if g.dtype.type in _BLAS_TYPES and g.flags.c_contiguous and g.size:
        # A matrix-vector product with ones: BLAS sums many times faster than a NumPy
        # reduction over leading axes, and more accurately.
        channels = g.shape[axis]
        if axis == g.ndim - 1:
            rows = g.reshape(-1, channels)
            return np.ones(rows.shape[0], g.dtype) @ rows
        per_item = g.reshape(g.shape[0], channels, -1)
        return np.sum(per_item @ np.ones(per_item.shape[2], g.dtype), axis=0)
    axes = tuple(i for i in range(g.ndim) if i != axis)
    return np.sum(g, axis=axes, dtype=g.dtype)


# -- L2Loss ---------------------------------------------------------------------------------

L2Loss = define_op("L2Loss", inputs=["t: T"], outputs=["output: T"], attrs=[_FLOAT])


@L2Loss.shape_fn
def _l2_loss_shape(t):
    return TensorShape([])


@L2Loss.kernel
def _l2_loss_kernel(t):
    flat = t.reshape(-1)
    return t.dtype.type(np.dot(flat, flat) / 2)


# -- InTopK and TopKV2 ----------------------------------------------------------------------


def in_top_k_array(predictions: np.ndarray, targets: np.ndarray, k: int) -> np.ndarray:
    """TF's rule: ties count as in; a non-finite row or an out-of-range target gives False."""
    if predictions.ndim != 2 or targets.ndim != 1 or predictions.shape[0] != targets.shape[0]:
        raise errors.InvalidArgumentError(
            None, None, f"predictions must be 2-D and targets 1-D with the same first "
                        f"dimension, got {list(predictions.shape)} and {list(targets.shape)}")
    batch, classes = predictions.shape
    valid = (targets >= 0) & (targets < classes)
    safe = np.where(valid, targets, 0)
    target_value = predictions[np.arange(batch), safe]
    finite = np.isfinite(predictions).all(axis=1)
    better = np.sum(predictions > target_value[:, None], axis=1)
    return valid & finite & (better < k)


InTopK = define_op("InTopK", inputs=["predictions: float32", "targets: T"],
                   outputs=["precision: bool"], attrs=["k: int", "T: {int32, int64} = int32"],
                   differentiable=False)
InTopKV2 = define_op("InTopKV2", inputs=["predictions: float32", "targets: T", "k: T"],
                     outputs=["precision: bool"], attrs=["T: {int32, int64} = int32"],
                     differentiable=False)


@InTopK.shape_fn
def _in_top_k_shape(predictions, targets, *, k):
    predictions = predictions.with_rank(2)
    return targets.with_rank(1).merge_with(TensorShape([predictions.dims[0]]))


@InTopKV2.shape_fn
def _in_top_k_v2_shape(predictions, targets, k):
    predictions = predictions.with_rank(2)
    k.with_rank(0)
    return targets.with_rank(1).merge_with(TensorShape([predictions.dims[0]]))


@InTopK.kernel
def _in_top_k_kernel(predictions, targets, *, k):
    return in_top_k_array(predictions, targets, k)


@InTopKV2.kernel
def _in_top_k_v2_kernel(predictions, targets, k):
    return in_top_k_array(predictions, targets, int(k))


TopKV2 = define_op(
    "TopKV2", inputs=["input: T", "k: Tk"], outputs=["values: T", "indices: index_type"],
    attrs=[_REAL, "sorted: bool = True", "Tk: {int16, int32, int64} = int32",
           "index_type: {int16, int32, int64} = int32"])


def _check_k(k, last):
    if k < 0:
        raise ValueError(f"Need k >= 0, got {k}")
    if last is not None and last < k:
        raise ValueError(f"input must have last dimension >= k = {k} but is {last}")


@TopKV2.shape_fn(value_inputs=("k",))
def _top_k_shape(input, k):
    input = input.with_rank_at_least(1)
    if input.ndims is None:
        return [input, input]
    k_value = None
    if k is not None:
        k_value = int(np.asarray(k).reshape(-1)[0])
        _check_k(k_value, input.dims[-1])
    shape = TensorShape(list(input.dims[:-1]) + [k_value])
    return [shape, shape]


def top_k_indices(x: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k largest along the last axis, ties broken by the lower index."""
    flipped = np.argsort(x[..., ::-1], axis=-1, kind="stable")[..., ::-1]
    return x.shape[-1] - 1 - flipped[..., :k]


@TopKV2.kernel
def _top_k_kernel(x, k, *, index_type):
    k = int(k)
    try:
        _check_k(k, x.shape[-1] if x.ndim else None)
        if x.ndim == 0:
            raise ValueError("input must be at least 1-D")
    except ValueError as err:
        raise errors.InvalidArgumentError(None, None, str(err)) from None
    indices = top_k_indices(x, k)
    values = np.take_along_axis(x, indices, axis=-1)
    return values, indices.astype(index_type.as_numpy_dtype)


# -- wrappers -------------------------------------------------------------------------------


def relu(features, name=None):
    """max(features, 0)."""
    return Relu(features, name=name)


def relu6(features, name=None):
    """min(max(features, 0), 6)."""
    return Relu6(features, name=name)


def elu(features, name=None):
    """exp(features) - 1 where features < 0, else features."""
    return Elu(features, name=name)


def selu(features, name=None):
    """Scaled ELU: scale * (alpha * (exp(x) - 1) if x < 0 else x)."""
    return Selu(features, name=name)


def leaky_relu(features, alpha=0.2, name=None):
    """features where features > 0, else alpha * features."""
    return LeakyRelu(features, alpha=alpha, name=name)


def softplus(features, name=None):
    """log(exp(features) + 1), computed without overflow."""
    return Softplus(features, name=name)


def softsign(features, name=None):
    """features / (abs(features) + 1)."""
    return Softsign(features, name=name)


def bias_add(value, bias, data_format=None, name=None):
    """Adds the 1-D `bias` along the channel dimension of `value` (last for NHWC, 1 for NCHW).

    Raises:
        ValueError: the bias length does not match the channel dimension.
    """
    return BiasAdd(value, bias, data_format=data_format or "NHWC", name=name)


def l2_loss(t, name=None):
    """sum(t ** 2) / 2, a scalar."""
    return L2Loss(t, name=name)


def in_top_k(predictions, targets, k, name=None):
    """Whether each target is among the top `k` predictions of its row (ties count as in)."""
    return InTopKV2(predictions, targets, k, name=name)


def top_k(input, k=1, sorted=True, name=None):  # noqa: A002 - TF1 signature
    """The `k` largest entries of the last dimension and their indices (ties: lower index).

    Returns:
        A `(values, indices)` namedtuple.

    Example: `values, indices = tf.nn.top_k(scores, k=5)`.
    """
    return TopKV2(input, k, sorted=sorted, name=name)


def _pick_axis(axis, dim) -> int:
    if axis is not None and dim is not None:
        raise ValueError("Cannot specify both 'axis' and 'dim'.")
    axis = dim if axis is None else axis
    return -1 if axis is None else int(axis)


def _on_axis(op_def, logits, axis: int, name):
    """Applies a last-axis op along `axis` by swapping it with the last axis (static rank)."""

    logits = convert_to_tensor(logits)
    rank = logits.shape.ndims
    if axis == -1 or (rank is not None and axis == rank - 1):
        return op_def(logits, name=name)
    if rank is None:
        raise ValueError(f"{op_def.name} along axis {axis} needs logits of known rank")
    if not -rank <= axis < rank:
        raise errors.InvalidArgumentError(
            None, None, f"`dim` must be in the range [{-rank}, {rank}) where {rank} is the "
                        f"number of dimensions in the input. Received: dim={axis}")
    perm = list(range(rank))
    perm[axis], perm[-1] = perm[-1], perm[axis]
    swapped = op_def(array_ops.transpose(logits, perm))
    return array_ops.transpose(swapped, perm, name=name)


def softmax(logits, axis=None, name=None, dim=None):
    """exp(logits) / reduce_sum(exp(logits), axis), along `axis` (default: the last).

    Raises:
        InvalidArgumentError: `axis` is outside the rank of `logits`.
    """
    return _on_axis(Softmax, logits, _pick_axis(axis, dim), name)


def log_softmax(logits, axis=None, name=None, dim=None):
    """logits - log(reduce_sum(exp(logits), axis)), along `axis` (default: the last)."""
    return _on_axis(LogSoftmax, logits, _pick_axis(axis, dim), name)
