"""Neural-network primitives: softmax, the fused cross-entropy losses, BiasAdd, L2Loss, InTopK
and TopKV2, with their tf.nn wrappers.

Activations are in `activations.py`; composite functions (sigmoid cross entropy, moments,
dropout, ...) in `functions.py`. Each op's gradient follows its kernel. None of these names
lives at the top level of `tf`.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework.common_shapes import broadcast_shape
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import constant_value, convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.lib.numerics import intra_op, xent_jit
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.array.gradient_helpers import is_zero
from tensorflux.ops.math.broadcast_gradient import unbroadcast

__all__: list = []

_FLOAT = "T: {float16, bfloat16, float32, float64}"
_REAL = ("T: {float32, float64, int32, uint8, int16, int8, int64, bfloat16, uint16, float16, "
         "uint32, uint64}")


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


def _check_logits_rank(op: str, logits: np.ndarray) -> None:
    if logits.ndim < 1:
        raise errors.InvalidArgumentError(
            None, None, f"{op}: logits must have >= 1 dimension, got {list(logits.shape)}")


Softmax = define_op("Softmax", inputs=["logits: T"], outputs=["softmax: T"], attrs=[_FLOAT])
Softmax.shape_fn(_at_least_rank1)


@Softmax.kernel
def _softmax_kernel(logits):
    _check_logits_rank("Softmax", logits)
    return softmax_array(logits)


@Softmax.gradient
def _softmax_grad(op, grad):
    y = op.outputs[0]
    return (grad - math_ops.reduce_sum(grad * y, -1, keepdims=True)) * y


LogSoftmax = define_op("LogSoftmax", inputs=["logits: T"], outputs=["logsoftmax: T"],
                       attrs=[_FLOAT])
LogSoftmax.shape_fn(_at_least_rank1)


@LogSoftmax.kernel
def _log_softmax_kernel(logits):
    _check_logits_rank("LogSoftmax", logits)
    return log_softmax_array(logits)


@LogSoftmax.gradient
def _log_softmax_grad(op, grad):
    y = op.outputs[0]
    return grad - math_ops.reduce_sum(grad, -1, keepdims=True) * math_ops.exp(y)


# -- fused cross entropies ------------------------------------------------------------------

SoftmaxCrossEntropyWithLogits = define_op(
    "SoftmaxCrossEntropyWithLogits", inputs=["features: T", "labels: T"],
    outputs=["loss: T", "backprop: T"], attrs=[_FLOAT])


@SoftmaxCrossEntropyWithLogits.shape_fn
def _softmax_xent_shape(features, labels):
    for what, shape in (("logits", features), ("labels", labels)):
        if shape.ndims not in (None, 2):
            raise ValueError(f"Shape must be rank 2, but is rank {shape.ndims}: {what} of shape "
                             f"{shape} (logits and labels are broadcastable matrices)")
    both = broadcast_shape(features.with_rank(2), labels.with_rank(2))
    return [TensorShape([both._dim_list[0]]), both]


@SoftmaxCrossEntropyWithLogits.kernel
def _softmax_xent_kernel(features, labels):
    if features.ndim != 2 or labels.ndim != 2:
        raise errors.InvalidArgumentError(
            None, None, f"logits and labels must be 2-D, got shapes {list(features.shape)} and "
                        f"{list(labels.shape)}")
    if xent_jit.supports_dense(features, labels):
        return xent_jit.softmax_dense_rows(features, labels)
    features, labels = np.broadcast_arrays(features, labels)
    log_probs = log_softmax_array(features)
    loss = -np.sum(labels * log_probs, axis=-1)
    return loss, np.exp(log_probs) - labels


def _softmax_second_order(logits, grad_grad):
    """The logits gradient coming from the `backprop` (= softmax - labels) output."""
    probs = Softmax(logits)
    # Each row's grad_grad . probs as a batched product, the graph TF1 builds.
    dot = math_ops.matmul(array_ops.expand_dims(grad_grad, 1), array_ops.expand_dims(probs, 2))
    return (grad_grad - array_ops.squeeze(dot, axis=1)) * probs


@SoftmaxCrossEntropyWithLogits.gradient
def _softmax_xent_grad(op, grad_loss, grad_backprop):
    logits, labels = op.inputs
    scale = array_ops.expand_dims(grad_loss, -1)
    d_logits = scale * op.outputs[1]
    d_labels = scale * -LogSoftmax(logits)
    if not is_zero(grad_backprop):
        d_logits += _softmax_second_order(logits, grad_backprop)
        d_labels -= grad_backprop
    return unbroadcast(d_logits, logits), unbroadcast(d_labels, labels)


SparseSoftmaxCrossEntropyWithLogits = define_op(
    "SparseSoftmaxCrossEntropyWithLogits", inputs=["features: T", "labels: Tlabels"],
    outputs=["loss: T", "backprop: T"], attrs=[_FLOAT, "Tlabels: {int32, int64} = int64"])


@SparseSoftmaxCrossEntropyWithLogits.shape_fn
def _sparse_softmax_xent_shape(features, labels):
    features = features.with_rank(2)
    labels = labels.with_rank(1)
    batch = labels.merge_with(TensorShape([features._dim_list[0]]))
    return [batch, TensorShape([batch._dim_list[0], features._dim_list[1]])]


@SparseSoftmaxCrossEntropyWithLogits.kernel
def _sparse_softmax_xent_kernel(features, labels):
    return sparse_softmax_xent(features, labels)


def sparse_softmax_xent(features: np.ndarray, labels: np.ndarray, scale=None,
                        bias_grad: bool = False) -> tuple:
    """SparseSoftmaxCrossEntropyWithLogits' kernel: (loss, backprop), with the backprop rows
    multiplied by `scale` when given (`_SparseSoftmaxCrossEntropyWithLogitsScaled`, the
    remapper's fusion of the gradient's `Mul`: the same products, taken while in cache).

    Args:
        features: `[batch, classes]` logits.
        labels: `[batch]` int class ids in `[0, classes)`.
        scale: None, or an array broadcastable to `[batch, 1]` of `features`' dtype.
        bias_grad: also return the backprop's column sums (a BiasAddGrad of it, summed while
            each block of rows is in cache: per block, then the blocks' sums in order; the
            summation order differs from BiasAddGrad's one product over all rows).

    Float32 logits of 64 classes or more run the whole-row compiled kernel
    (lib/numerics/xent_jit.py `softmax_rows`: its own exponential, float64 row sums), equal to
    the NumPy passes to float32 tolerance; other dtypes and TFX_JIT=0 run the NumPy passes.

    Returns:
        (loss `[batch]`, backprop `[batch, classes]`), and the `[classes]` column sums with
        `bias_grad`.

    Raises:
        InvalidArgumentError: bad ranks or shapes, or a label out of range.
    """
    if features.ndim != 2:
        raise errors.InvalidArgumentError(
            None, None, f"logits must be 2-D, but got shape {list(features.shape)}")
    if labels.ndim != 1:
        raise errors.InvalidArgumentError(
            None, None, f"labels must be 1-D, but got shape {list(labels.shape)}")
    if features.shape[0] != labels.shape[0]:
        raise errors.InvalidArgumentError(
            None, None, f"logits and labels must have the same first dimension, got logits "
                        f"shape {list(features.shape)} and labels shape {list(labels.shape)}")
    classes = features.shape[1]
    bad = (labels < 0) | (labels >= classes)
    if bad.any():
        raise errors.InvalidArgumentError(
            None, None, f"Received a label value of {labels[bad][0]} which is outside the valid "
                        f"range of [0, {classes}).  Label values: "
                        f"{' '.join(str(v) for v in labels.tolist())}")
    if scale is not None:
        try:
            scale = np.broadcast_to(scale, (labels.shape[0], 1))
        except ValueError:
            raise errors.InvalidArgumentError(
                None, None, f"Incompatible shapes: {list(np.shape(scale))} vs. "
                            f"{list(features.shape)}") from None
    backprop = np.empty_like(features)
    loss = np.empty(labels.shape, features.dtype)
    # Blocks of rows that stay in cache across the three passes (shift, exp, normalise); each
    # row's arithmetic is the same as on the whole array, so results do not depend on the block
    # nor on the thread running it (blocks run on the intra-op threads the budget gives).
    compiled = xent_jit.supports(backprop)
    fused = compiled and xent_jit.supports_rows(features, backprop)
    # The whole-row kernel keeps one row in cache at a time; its blocks only need the block's
    # logits to stay in L2 between NumPy's max and the kernel (fewer calls: 8.9 -> 8.6 ms).
    block = max(1, (_XENT_FUSED_BLOCK_ELEMENTS if fused else _XENT_BLOCK_ELEMENTS) //
                max(classes, 1))
    starts = range(0, labels.shape[0], block)
    partials = np.empty((len(starts), classes), features.dtype) if bias_grad else None
    ones = np.ones(min(block, labels.shape[0]), features.dtype) if bias_grad else None

    def rows(i: int) -> None:
        part = slice(starts[i], starts[i] + block)
        if fused:
            xent_jit.softmax_rows(features[part], labels[part], backprop[part], loss[part],
                                  None if scale is None else scale[part],
                                  None if partials is None else partials[i])
            return
        if compiled:
            _sparse_xent_rows(features[part], labels[part], backprop[part], loss[part],
                              None if scale is None else scale[part])
        else:
            _sparse_xent_rows(features[part], labels[part], backprop[part], loss[part])
            if scale is not None:
                np.multiply(scale[part], backprop[part], out=backprop[part])
        if partials is not None:  # BiasAddGrad's product with ones, on the block in cache
            done = backprop[part]
            np.matmul(ones[:done.shape[0]], done, out=partials[i])

    if features.size >= _XENT_SPLIT_ELEMENTS:
        # The rows' blocks go to the intra-op threads the budget gives: BLAS's threads on a
        # quiet machine (`run_elementwise`), the products' split when BLAS has one thread
        # (`run_parts`; blocks are claimed one at a time, as a split product's chunks are).
        # LSTM LM step at load ~8 on 2 cores, 25 interleaved rounds: wall median 322 -> 291
        # ms, minimum 198 -> 132, the same CPU.
        if XENT_ROWS_ON_SPLITS and intra_op.splits() > 1:
            intra_op.run_parts(rows, len(starts))
        else:
            intra_op.run_elementwise(rows, len(starts))
    else:
        for i in range(len(starts)):
            rows(i)
    if partials is not None:
        return loss, backprop, partials[0].copy() if len(starts) == 1 else \
            np.sum(partials, axis=0)
    return loss, backprop


_XENT_BLOCK_ELEMENTS = 1 << 17  # 512 KiB of float32 logits per block
_XENT_FUSED_BLOCK_ELEMENTS = 1 << 18
_XENT_SPLIT_ELEMENTS = 1 << 19  # smaller logits stay on the calling thread
# False: the row blocks split only over BLAS's threads (bench/ab_kernels.py --change xent_split).
XENT_ROWS_ON_SPLITS = True


def _sparse_xent_rows(features, labels, backprop, loss, compiled_scale=False):
    """One block of rows; with `compiled_scale` (None or the rows' scale) the division, the
    label's `- 1` and the scale run as one compiled pass (lib/numerics/xent_jit.py, the same
    arithmetic)."""
    np.subtract(features, np.max(features, axis=-1, keepdims=True), out=backprop)
    rows = np.arange(labels.shape[0])
    picked = backprop[rows, labels]
    np.exp(backprop, out=backprop)
    sums = np.sum(backprop, axis=-1, keepdims=True)
    loss[...] = np.log(sums[:, 0]) - picked
    if compiled_scale is not False:
        xent_jit.normalise_rows(backprop, sums, labels, compiled_scale)
        return
    backprop /= sums
    backprop[rows, labels] -= 1


@SparseSoftmaxCrossEntropyWithLogits.gradient
def _sparse_softmax_xent_grad(op, grad_loss, grad_backprop):
    logits = op.inputs[0]
    d_logits = array_ops.expand_dims(grad_loss, -1) * op.outputs[1]
    if not is_zero(grad_backprop):
        d_logits += _softmax_second_order(logits, grad_backprop)
    return d_logits, None


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
    dims = list(value._dim_list)
    if dims[axis] is not None and bias._dim_list[0] is not None and dims[axis] != bias._dim_list[0]:
        raise ValueError(f"Dimensions must be equal, but are {dims[axis]} and {bias._dim_list[0]} "
                         f"(value {value}, bias {bias}, data_format {data_format})")
    dims[axis] = dims[axis] if dims[axis] is not None else bias._dim_list[0]
    return TensorShape(dims)


@BiasAdd.kernel
def _bias_add_kernel(value, bias, *, data_format):
    if value.ndim < 2:
        raise errors.InvalidArgumentError(
            None, None, f"BiasAdd: Input tensor must be at least 2D: {list(value.shape)}")
    axis = bias_axis(value.ndim, data_format)
    if bias.ndim != 1 or value.shape[axis] != bias.shape[0]:
        raise errors.InvalidArgumentError(
            None, None, f"Must provide as many biases as the channel dimension of the input "
                        f"tensor: {list(bias.shape)} vs. {list(value.shape)}")
    if axis != value.ndim - 1:
        bias = bias.reshape((-1,) + (1,) * (value.ndim - axis - 1))
    return value + bias


@BiasAdd.gradient
def _bias_add_grad(op, grad):
    return grad, BiasAddGrad(grad, data_format=op.get_attr_str("data_format"))


BiasAddGrad = define_op(
    "BiasAddGrad", inputs=["out_backprop: T"], outputs=["output: T"],
    attrs=[_BIAS_TYPES, "data_format: {'NHWC', 'NCHW'} = 'NHWC'"])


@BiasAddGrad.shape_fn
def _bias_add_grad_shape(out_backprop, *, data_format):
    grad = out_backprop.with_rank_at_least(3 if data_format == "NCHW" else 2)
    if grad.ndims is None:
        return TensorShape([None])
    return TensorShape([grad._dim_list[bias_axis(grad.ndims, data_format)]])


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


@BiasAddGrad.gradient
def _bias_add_grad_grad(op, grad):
    out_backprop = op.inputs[0]
    return BiasAdd(array_ops.zeros_like(out_backprop), grad,
                          data_format=op.get_attr_str("data_format"))


# -- L2Loss ---------------------------------------------------------------------------------

L2Loss = define_op("L2Loss", inputs=["t: T"], outputs=["output: T"], attrs=[_FLOAT])


@L2Loss.shape_fn
def _l2_loss_shape(t):
    return TensorShape([])


@L2Loss.kernel
def _l2_loss_kernel(t):
    flat = t.reshape(-1)
    return t.dtype.type(np.dot(flat, flat) / 2)


@L2Loss.gradient
def _l2_loss_grad(op, grad):
    return op.inputs[0] * grad


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
    return targets.with_rank(1).merge_with(TensorShape([predictions._dim_list[0]]))


@InTopKV2.shape_fn
def _in_top_k_v2_shape(predictions, targets, k):
    predictions = predictions.with_rank(2)
    k.with_rank(0)
    return targets.with_rank(1).merge_with(TensorShape([predictions._dim_list[0]]))


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
        _check_k(k_value, input._dim_list[-1])
    shape = TensorShape(list(input._dim_list[:-1]) + [k_value])
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


@TopKV2.gradient
def _top_k_grad(op, grad_values, grad_indices):
    """Scatters the values' gradient back to the positions the indices came from."""
    x = op.inputs[0]
    indices = math_ops.cast(op.outputs[1], dtypes.int64)
    in_shape = array_ops.shape(x, out_type=dtypes.int64)
    in_last = in_shape[-1]
    k = array_ops.shape(indices, out_type=dtypes.int64)[-1]
    rows = math_ops.reduce_prod(in_shape[:-1])
    offsets = math_ops.range(rows, dtype=dtypes.int64) * in_last
    flat = array_ops.reshape(array_ops.reshape(indices, array_ops.stack([rows, k]))
                             + array_ops.expand_dims(offsets, -1), [-1, 1])
    total = array_ops.reshape(rows * in_last, [1])
    scattered = array_ops.scatter_nd(flat, array_ops.reshape(grad_values, [-1]), total)
    return array_ops.reshape(scattered, in_shape), None


# -- wrappers -------------------------------------------------------------------------------


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


def _pick_axis(axis, dim):
    """The axis as an int, or as an int32 Tensor when its value is only known at run time."""
    if axis is not None and dim is not None:
        raise ValueError("Cannot specify both 'axis' and 'dim'.")
    axis = dim if axis is None else axis
    if axis is None:
        return -1
    if isinstance(axis, (int, np.integer)):
        return int(axis)
    axis = convert_to_tensor(axis, name="axis")
    value = constant_value(axis)
    return axis if value is None else int(value)


def _on_dynamic_axis(op_def, logits, axis, name):
    """`_on_axis` for an axis Tensor: swaps it with the last axis through a run-time perm.

    An axis outside [-rank, rank) makes the perm invalid, so Transpose fails at run time with
    InvalidArgumentError, as in TF.
    """
    rank = array_ops.rank(logits)
    axis = math_ops.cast(axis, dtypes.int32)
    axis = array_ops.where(math_ops.less(axis, 0), axis + rank, axis)
    axis = array_ops.where(math_ops.less(axis, 0), rank, axis)  # still negative: out of range
    positions = math_ops.range(rank)
    last = rank - 1
    perm = array_ops.where(math_ops.equal(positions, axis), array_ops.fill([rank], last),
                           array_ops.where(math_ops.equal(positions, last),
                                           array_ops.fill([rank], axis), positions))
    swapped = op_def(array_ops.transpose(logits, perm))
    result = array_ops.transpose(swapped, perm, name=name)
    result.set_shape(logits.shape)
    return result


def _on_axis(op_def, logits, axis, name):
    """Applies a last-axis op along `axis` by swapping it with the last axis (static rank)."""

    logits = convert_to_tensor(logits)
    if isinstance(axis, Tensor):
        return _on_dynamic_axis(op_def, logits, axis, name)
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
