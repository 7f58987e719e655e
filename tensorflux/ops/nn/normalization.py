"""Normalization ops: FusedBatchNorm (V1, V2, V3) with their gradient ops, and LRN / LRNGrad.

FusedBatchNorm in training mode normalizes with the batch's biased variance but reports the
Bessel-corrected (unbiased) variance in `batch_variance`, as TensorFlow does; `reserve_space_1`
and `reserve_space_2` carry the batch mean and biased variance to the gradient op. With
`exponential_avg_factor` f != 1 the reported statistics are `(1 - f) * running + f * batch`.
In inference mode the given mean and variance are used and passed through.

LRN and LRNGrad run the compiled one-pass kernels of `lib/numerics/lrn_jit.py` on float32 and
float64 when numba is available; the NumPy kernels here are their reference and fallback.

NOTE: TensorFlow's CPU kernels accept only float32 (and half types) here; float64 is also
accepted so gradients can be checked in double precision.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import errors
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.lib.numerics import jit, lrn_jit
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.array.gradient_helpers import is_zero
from tensorflux.ops.autodiff import gradients as gradients_impl

__all__: list = []

_T = "T: {float16, bfloat16, float32, float64}"
_U = "U: {float32, float64}"
_BN_ATTRS = ["epsilon: float = 0.0001", "data_format: {'NHWC', 'NCHW'} = 'NHWC'",
             "is_training: bool = True"]


def _channel_axis(data_format: str) -> int:
    return 1 if data_format == "NCHW" else 3


def _stat_shape(x: np.ndarray, axis: int) -> tuple:
    return tuple(x.shape[axis] if i == axis else 1 for i in range(x.ndim))


def _check_bn_inputs(x, scale, offset, mean, variance, axis, is_training, exp_factor):
    if x.ndim != 4:
        raise errors.InvalidArgumentError(
            None, None, f"input must be 4-dimensional, got shape {list(x.shape)}")
    depth = x.shape[axis]
    for name, value in (("scale", scale), ("offset", offset)):
        if value.shape != (depth,):
            raise errors.InvalidArgumentError(
                None, None, f"{name} must have the shape [{depth}] of the channel dimension, "
                            f"got {list(value.shape)}")
    if not is_training or exp_factor != 1.0:
        for name, value in (("mean", mean), ("variance", variance)):
            if value.shape != (depth,):
                raise errors.InvalidArgumentError(
                    None, None, f"{name} must have shape [{depth}] (needed when is_training is "
                                f"False or exponential_avg_factor != 1), got "
                                f"{list(value.shape)}")


def fused_batch_norm_forward(x, scale, offset, mean, variance, *, epsilon, exp_factor,
                             data_format, is_training):
    """(y, batch_mean, batch_variance, saved_mean, saved_biased_variance)."""
    axis = _channel_axis(data_format)
    _check_bn_inputs(x, scale, offset, mean, variance, axis, is_training, exp_factor)
    stat_dtype = scale.dtype
    if is_training:
        axes = tuple(i for i in range(4) if i != axis)
        x_acc = x.astype(np.promote_types(x.dtype, np.float32), copy=False)
        count = x.size // x.shape[axis]
        batch_mean = np.mean(x_acc, axis=axes)
        batch_var = np.mean(np.square(x_acc - batch_mean.reshape(_stat_shape(x, axis))),
                            axis=axes)
        use_mean, use_var = batch_mean, batch_var
        corrected = batch_var * (count / max(count - 1, 1))
        if exp_factor != 1.0:
            out_mean = (1 - exp_factor) * mean + exp_factor * batch_mean
            out_var = (1 - exp_factor) * variance + exp_factor * corrected
        else:
            out_mean, out_var = batch_mean, corrected
    else:
        use_mean, use_var = mean, variance
        out_mean, out_var = mean, variance
    shape = _stat_shape(x, axis)
    inv = (scale / np.sqrt(use_var + epsilon)).astype(x.dtype, copy=False)
    shift = (offset - use_mean * inv).astype(x.dtype, copy=False)
    y = x * inv.reshape(shape) + shift.reshape(shape)
    return (y, np.asarray(out_mean, stat_dtype), np.asarray(out_var, stat_dtype),
            np.asarray(use_mean, stat_dtype), np.asarray(use_var, stat_dtype))


def fused_batch_norm_backward(dy, x, scale, saved_mean, saved_var, *, epsilon, data_format,
                              is_training):
    """(dx, dscale, doffset) given the saved mean and (biased or population) variance."""
    axis = _channel_axis(data_format)
    axes = tuple(i for i in range(4) if i != axis)
    shape = _stat_shape(x, axis)
    acc = np.promote_types(x.dtype, np.float32)
    dy_acc = dy.astype(acc, copy=False)
    rstd = 1.0 / np.sqrt(saved_var.astype(acc) + epsilon)
    x_hat = (x.astype(acc, copy=False) - saved_mean.reshape(shape)) * rstd.reshape(shape)
    doffset = np.sum(dy_acc, axis=axes)
    dscale = np.sum(dy_acc * x_hat, axis=axes)
    if is_training:
        count = x.size // x.shape[axis]
        dx = (scale * rstd).reshape(shape) * (
            dy_acc - (doffset / count).reshape(shape) - x_hat * (dscale / count).reshape(shape))
    else:
        dx = dy_acc * (scale * rstd).reshape(shape)
    return (dx.astype(x.dtype, copy=False), dscale.astype(scale.dtype, copy=False),
            doffset.astype(scale.dtype, copy=False))


def _bn_shape(x, scale, offset, mean, variance, *, data_format, n_reserve):
    x = x.with_rank(4)
    depth = x._dim_list[_channel_axis(data_format)]
    vec = TensorShape([depth])
    for other in (scale, offset):
        vec = vec.merge_with(other.with_rank(1))
    return [x] + [vec] * 4 + [TensorShape([0])] * (n_reserve - 2)


def _define_fused_batch_norm(name: str, mixed: bool, n_reserve: int):
    stat = "U" if mixed else "T"
    outputs = ["y: T", f"batch_mean: {stat}", f"batch_variance: {stat}"]
    outputs += [f"reserve_space_{i + 1}: {stat}" for i in range(n_reserve)]
    attrs = [_T] + ([_U] if mixed else []) + [
        "epsilon: float = 0.0001", "exponential_avg_factor: float = 1.0",
        "data_format: {'NHWC', 'NCHW'} = 'NHWC'", "is_training: bool = True"]
    op = define_op(name, inputs=["x: T", f"scale: {stat}", f"offset: {stat}", f"mean: {stat}",
                                 f"variance: {stat}"], outputs=outputs, attrs=attrs)

    @op.shape_fn
    def _shape(x, scale, offset, mean, variance, *, data_format):
        return _bn_shape(x, scale, offset, mean, variance, data_format=data_format,
                         n_reserve=n_reserve)

    @op.kernel
    def _kernel(x, scale, offset, mean, variance, *, epsilon, exponential_avg_factor,
                data_format, is_training):
        outs = fused_batch_norm_forward(
            x, scale, offset, mean, variance, epsilon=epsilon,
            exp_factor=exponential_avg_factor, data_format=data_format,
            is_training=is_training)
        extra = tuple(np.zeros([0], scale.dtype) for _ in range(n_reserve - 2))
        return outs + extra

    return op


FusedBatchNorm = _define_fused_batch_norm("FusedBatchNorm", mixed=False, n_reserve=2)
FusedBatchNormV2 = _define_fused_batch_norm("FusedBatchNormV2", mixed=True, n_reserve=2)
FusedBatchNormV3 = _define_fused_batch_norm("FusedBatchNormV3", mixed=True, n_reserve=3)


def _define_fused_batch_norm_grad(name: str, mixed: bool, n_reserve: int, first_out: int):
    stat = "U" if mixed else "T"
    inputs = ["y_backprop: T", "x: T", f"scale: {'float32' if mixed else 'T'}"]
    inputs += [f"reserve_space_{i + 1}: {stat}" for i in range(n_reserve)]
    outputs = ["x_backprop: T", f"scale_backprop: {stat}", f"offset_backprop: {stat}",
               f"reserve_space_{first_out}: {stat}", f"reserve_space_{first_out + 1}: {stat}"]
    attrs = [_T] + ([_U] if mixed else []) + _BN_ATTRS
    if mixed:
        # NOTE: TF fixes `scale` to float32 in V2/V3; it follows U here so float64 works too.
        inputs[2] = "scale: U"
    op = define_op(name, inputs=inputs, outputs=outputs, attrs=attrs)

    @op.shape_fn
    def _shape(y_backprop, x, scale, *reserve, data_format):
        x = x.with_rank(4).merge_with(y_backprop.with_rank(4))
        vec = TensorShape([x._dim_list[_channel_axis(data_format)]]).merge_with(scale.with_rank(1))
        return [x, vec, vec, TensorShape([0]), TensorShape([0])]

    @op.kernel
    def _kernel(y_backprop, x, scale, mean, variance, *rest, epsilon, data_format,
                is_training):
        dx, dscale, doffset = fused_batch_norm_backward(
            y_backprop, x, scale, mean, variance, epsilon=epsilon, data_format=data_format,
            is_training=is_training)
        empty = np.zeros([0], dscale.dtype)
        return dx, dscale, doffset, empty, empty.copy()

    return op


FusedBatchNormGrad = _define_fused_batch_norm_grad("FusedBatchNormGrad", False, 2, 3)
FusedBatchNormGradV2 = _define_fused_batch_norm_grad("FusedBatchNormGradV2", True, 2, 3)
FusedBatchNormGradV3 = _define_fused_batch_norm_grad("FusedBatchNormGradV3", True, 3, 4)


_BN_GRAD_OPS = {
    "FusedBatchNorm": FusedBatchNormGrad,
    "FusedBatchNormV2": FusedBatchNormGradV2,
    "FusedBatchNormV3": FusedBatchNormGradV3,
}


def _fused_batch_norm_grad(op, grad_y, *unused_stat_grads):
    x, scale = op.inputs[0], op.inputs[1]
    attrs = _attrs(op, ("epsilon", "data_format", "is_training"))
    if attrs["is_training"]:
        saved = [op.outputs[3], op.outputs[4]]
    else:
        saved = [op.inputs[3], op.inputs[4]]
    if op.type == "FusedBatchNormV3":
        saved.append(op.outputs[5])
    grads = _BN_GRAD_OPS[op.type](grad_y, x, scale, *saved, **attrs)
    return grads[0], grads[1], grads[2], None, None


for _op in (FusedBatchNorm, FusedBatchNormV2, FusedBatchNormV3):
    _op.gradient(_fused_batch_norm_grad)


def batch_norm_grad_composite(grad_y, x, scale, mean, variance, epsilon, data_format,
                              is_training):
    """(dx, dscale, doffset) of batch normalization as a differentiable graph of math ops.

    In training mode the statistics are recomputed from `x` (so they depend on it); otherwise
    `mean` and `variance` are the given population statistics.
    """
    if data_format == "NCHW":
        grad_y = array_ops.transpose(grad_y, [0, 2, 3, 1])
        x = array_ops.transpose(x, [0, 2, 3, 1])
    axes = [0, 1, 2]
    if is_training:
        mean = math_ops.reduce_mean(x, axes)
        centered = x - mean
        variance = math_ops.reduce_mean(centered * centered, axes)
    else:
        centered = x - mean
    rstd = math_ops.rsqrt(variance + epsilon)
    x_hat = centered * rstd
    d_offset = math_ops.reduce_sum(grad_y, axes)
    d_scale = math_ops.reduce_sum(grad_y * x_hat, axes)
    if is_training:
        mean_dy = math_ops.reduce_mean(grad_y, axes)
        mean_dy_xhat = math_ops.reduce_mean(grad_y * x_hat, axes)
        dx = scale * rstd * (grad_y - mean_dy - x_hat * mean_dy_xhat)
    else:
        dx = grad_y * (scale * rstd)
    if data_format == "NCHW":
        dx = array_ops.transpose(dx, [0, 3, 1, 2])
    return dx, d_scale, d_offset


def _fused_batch_norm_grad_grad(op, grad_dx, grad_dscale, grad_doffset, *unused):
    grad_y, x, scale, mean, variance = op.inputs[:5]
    outs = batch_norm_grad_composite(grad_y, x, scale, mean, variance, op.get_attr("epsilon"),
                                     op.get_attr_str("data_format"), op.get_attr("is_training"))
    pairs = [(o, g) for o, g in zip(outs, (grad_dx, grad_dscale, grad_doffset))
             if not is_zero(g)]
    if not pairs:
        return [None] * len(op.inputs)
    ys, grad_ys = zip(*pairs)
    d_grad_y, d_x, d_scale = gradients_impl.gradients(list(ys), [grad_y, x, scale],
                                                      grad_ys=list(grad_ys))
    return [d_grad_y, d_x, d_scale] + [None] * (len(op.inputs) - 3)


for _op in (FusedBatchNormGrad, FusedBatchNormGradV2, FusedBatchNormGradV3):
    _op.gradient(_fused_batch_norm_grad_grad)


# -- LRN ------------------------------------------------------------------------------------

_LRN_ATTRS = ["depth_radius: int = 5", "bias: float = 1.0", "alpha: float = 1.0",
              "beta: float = 0.5", "T: {float16, bfloat16, float32, float64} = float32"]


def depth_window_sum(a: np.ndarray, radius: int) -> np.ndarray:
    """Sum of `a` over [d - radius, d + radius] along the last axis, clipped at the edges."""
    depth = a.shape[-1]
    c = np.zeros(a.shape[:-1] + (depth + 1,), dtype=a.dtype)
    np.cumsum(a, axis=-1, out=c[..., 1:])
    index = np.arange(depth)
    hi = np.minimum(index + radius + 1, depth)
    lo = np.maximum(index - radius, 0)
    return c[..., hi] - c[..., lo]


def _lrn_norm(x, depth_radius, bias, alpha):
    return bias + alpha * depth_window_sum(np.square(x), depth_radius)


def _check_lrn_input(x):
    if x.ndim != 4:
        raise errors.InvalidArgumentError(
            None, None, f"LRN: input must be 4-D (NHWC), got shape {list(x.shape)}")


LRN = define_op("LRN", inputs=["input: T"], outputs=["output: T"], attrs=_LRN_ATTRS)


@LRN.shape_fn
def _lrn_shape(input):
    return input.with_rank(4)


def _lrn_kernel(x, *, depth_radius, bias, alpha, beta):
    """The NumPy reference (and fallback) of the compiled `lrn_jit.lrn`."""
    _check_lrn_input(x)
    norm = _lrn_norm(x, depth_radius, bias, alpha)
    return (x * np.power(norm, -beta)).astype(x.dtype, copy=False)


@LRN.kernel(factory=True)
def _lrn_kernel_factory(depth_radius, bias, alpha, beta):
    attrs = {"depth_radius": depth_radius, "bias": bias, "alpha": alpha, "beta": beta}
    compiled = jit.available()

    def lrn(x):
        if compiled and lrn_jit.supports(x):
            _check_lrn_input(x)
            return lrn_jit.lrn(x, **attrs)
        return _lrn_kernel(x, **attrs)

    return lrn


def _attrs(op, names) -> dict:
    return {name: op.get_attr_str(name) for name in names}


@LRN.gradient
def _lrn_grad(op, grad):
    attrs = _attrs(op, ("depth_radius", "bias", "alpha", "beta"))
    return LRNGrad(grad, op.inputs[0], op.outputs[0], **attrs)


LRNGrad = define_op("LRNGrad", inputs=["input_grads: T", "input_image: T", "output_image: T"],
                    outputs=["output: T"], attrs=_LRN_ATTRS, differentiable=False)


@LRNGrad.shape_fn
def _lrn_grad_shape(input_grads, input_image, output_image):
    return input_grads.with_rank(4).merge_with(input_image.with_rank(4)).merge_with(
        output_image.with_rank(4))


def _lrn_grad_kernel(dy, x, y, *, depth_radius, bias, alpha, beta):
    """dx_j = dy_j N_j^-beta - 2 alpha beta x_j * sum over windows i holding j of dy_i y_i/N_i.

    The NumPy reference (and fallback) of the compiled `lrn_jit.lrn_grad`.
    """
    _check_lrn_input(x)
    norm = _lrn_norm(x, depth_radius, bias, alpha)
    spread = depth_window_sum(dy * y / norm, depth_radius)
    dx = dy * np.power(norm, -beta) - (2 * alpha * beta) * x * spread
    return dx.astype(x.dtype, copy=False)


@LRNGrad.kernel(factory=True)
def _lrn_grad_kernel_factory(depth_radius, bias, alpha, beta):
    attrs = {"depth_radius": depth_radius, "bias": bias, "alpha": alpha, "beta": beta}
    compiled = jit.available()

    def lrn_grad(dy, x, y):
        if compiled and lrn_jit.supports(dy, x, y) and dy.shape == x.shape == y.shape:
            _check_lrn_input(x)
            return lrn_jit.lrn_grad(dy, x, y, **attrs)
        return _lrn_grad_kernel(dy, x, y, **attrs)

    return lrn_grad
