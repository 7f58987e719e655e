"""Fake quantization: FakeQuantWithMinMax{Args,Vars,VarsPerChannel} and their gradient ops.

Values are clamped to a nudged range and rounded to one of 2**num_bits levels (narrow_range
drops the lowest), all in float32 as TensorFlow computes them. The range is nudged so that 0.0
is exactly representable: with scale = (max - min) / (quant_max - quant_min), the zero point
`quant_min - min / scale` is clamped to [quant_min, quant_max] and rounded half away from zero,
and nudged_min/max = (quant_min/max - zero_point) * scale. Gradients pass straight through
inside the nudged range; the Vars ops send the gradient of values below (above) it to min
(max).
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import errors
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_shape import TensorShape

__all__ = ["fake_quant_with_min_max_args", "fake_quant_with_min_max_args_gradient",
           "fake_quant_with_min_max_vars", "fake_quant_with_min_max_vars_gradient",
           "fake_quant_with_min_max_vars_per_channel",
           "fake_quant_with_min_max_vars_per_channel_gradient"]

_F32 = np.float32
_QUANT_ATTRS = ["num_bits: int = 8", "narrow_range: bool = False"]


def _check_num_bits(num_bits, what) -> None:
    if not 2 <= num_bits <= 16:
        raise errors.InvalidArgumentError(
            None, None, f"{what}: num_bits must be between 2 and 16, inclusive; got {num_bits}")


def nudge(min_value, max_value, num_bits: int, narrow_range: bool):
    """(nudged_min, nudged_max, scale) as float32 arrays (broadcast over per-channel ranges)."""
    quant_min = _F32(1.0 if narrow_range else 0.0)
    quant_max = _F32((1 << num_bits) - 1)
    min_value = np.asarray(min_value, _F32)
    max_value = np.asarray(max_value, _F32)
    scale = (max_value - min_value) / (quant_max - quant_min)
    with np.errstate(divide="ignore", invalid="ignore"):
        zero_from_min = quant_min - min_value / scale
    rounded = np.sign(zero_from_min) * np.floor(np.abs(zero_from_min) + _F32(0.5))
    zero_point = np.where(zero_from_min < quant_min, quant_min,
                          np.where(zero_from_min > quant_max, quant_max, rounded)).astype(_F32)
    nudged_min = ((quant_min - zero_point) * scale).astype(_F32)
    nudged_max = ((quant_max - zero_point) * scale).astype(_F32)
    return nudged_min, nudged_max, scale.astype(_F32)


def _quantize(x, nudged_min, nudged_max, scale):
    # NOTE: plain float32 arithmetic, one rounding per operation (TF's scalar path). TF's
    # vectorised CPU path contracts `a * b + c` into fused multiply-adds, so its results can
    # differ in the last bit, and by one level where a value sits exactly between two levels.
    clamped = np.minimum(np.maximum(x, nudged_min), nudged_max)
    inv_scale = _F32(1.0) / scale
    steps = np.floor((clamped - nudged_min) * inv_scale + _F32(0.5))
    return (steps * scale + nudged_min).astype(_F32)


def _in_range(x, nudged_min, nudged_max):
    return (x >= nudged_min) & (x <= nudged_max)


# -- FakeQuantWithMinMaxArgs: the range is an attr -------------------------------------------

_ARGS_ATTRS = ["min: float = -6.0", "max: float = 6.0"] + _QUANT_ATTRS


def _check_args(min, max, num_bits) -> None:  # noqa: A002 - TF attr names
    if not min < max:
        raise errors.InvalidArgumentError(
            None, None, f"FakeQuantWithMinMaxArgs: min has to be smaller than max, got "
            f"min={min}, max={max}")
    _check_num_bits(num_bits, "FakeQuantWithMinMaxArgs")


FakeQuantWithMinMaxArgs = define_op(
    "FakeQuantWithMinMaxArgs", inputs=["inputs: float"], outputs=["outputs: float"],
    attrs=_ARGS_ATTRS)


@FakeQuantWithMinMaxArgs.shape_fn
def _args_shape(inputs, *, min, max, num_bits, narrow_range):  # noqa: A002
    return inputs


@FakeQuantWithMinMaxArgs.kernel
def _args_kernel(inputs, *, min, max, num_bits, narrow_range):  # noqa: A002
    _check_args(min, max, num_bits)
    return _quantize(inputs, *nudge(min, max, num_bits, narrow_range))


@FakeQuantWithMinMaxArgs.gradient
def _args_grad(op, grad):
    return [FakeQuantWithMinMaxArgsGradient(
        grad, op.inputs[0], min=op.get_attr("min"), max=op.get_attr("max"),
        num_bits=op.get_attr("num_bits"), narrow_range=op.get_attr("narrow_range"))]


FakeQuantWithMinMaxArgsGradient = define_op(
    "FakeQuantWithMinMaxArgsGradient", inputs=["gradients: float", "inputs: float"],
    outputs=["backprops: float"], attrs=_ARGS_ATTRS, differentiable=False)


@FakeQuantWithMinMaxArgsGradient.shape_fn
def _args_gradient_shape(gradients, inputs, *, min, max, num_bits, narrow_range):  # noqa: A002
    return gradients.merge_with(inputs)


@FakeQuantWithMinMaxArgsGradient.kernel
def _args_gradient_kernel(gradients, inputs, *, min, max, num_bits, narrow_range):  # noqa: A002
    _check_args(min, max, num_bits)
    if gradients.shape != inputs.shape:
        raise errors.InvalidArgumentError(None, None, f"gradients and inputs must have the same "
                                          f"shape: {list(gradients.shape)} vs "
                                          f"{list(inputs.shape)}")
    nudged_min, nudged_max, _ = nudge(min, max, num_bits, narrow_range)
    return np.where(_in_range(inputs, nudged_min, nudged_max), gradients, _F32(0)).astype(_F32)


# -- FakeQuantWithMinMaxVars(PerChannel): the range is a tensor ------------------------------

def _vars_ranges(inputs, min_value, max_value, per_channel: bool, what: str):
    if per_channel:
        depth = inputs.shape[-1] if inputs.ndim else None
        if inputs.ndim < 1 or min_value.shape != (depth,) or max_value.shape != (depth,):
            raise errors.InvalidArgumentError(
                None, None, f"{what}: min and max must be vectors of the last dimension of "
                f"inputs ({depth}), got {list(min_value.shape)} and {list(max_value.shape)}")
    elif min_value.ndim or max_value.ndim:
        raise errors.InvalidArgumentError(
            None, None, f"{what}: min and max must be scalars, got shapes "
            f"{list(min_value.shape)} and {list(max_value.shape)}")


def _vars_shape(inputs, min, max, *, per_channel, what):  # noqa: A002
    if per_channel:
        inputs.with_rank_at_least(1)
        depth = inputs[-1] if inputs.ndims is not None else None
        vector = TensorShape([depth]) if depth is not None else TensorShape([None])
        vector = vector.merge_with(min.with_rank(1)).merge_with(max.with_rank(1))
        if inputs.ndims is not None:
            inputs = inputs[:-1].concatenate(vector)
        return inputs, vector
    min.with_rank(0)
    max.with_rank(0)
    return inputs, TensorShape([])


def _define_vars(name: str, per_channel: bool):
    forward = define_op(name, inputs=["inputs: float", "min: float", "max: float"],
                        outputs=["outputs: float"], attrs=list(_QUANT_ATTRS))
    backward = define_op(
        f"{name}Gradient", inputs=["gradients: float", "inputs: float", "min: float",
                                   "max: float"],
        outputs=["backprops_wrt_input: float", "backprop_wrt_min: float",
                 "backprop_wrt_max: float"], attrs=list(_QUANT_ATTRS), differentiable=False)

    @forward.shape_fn
    def _shape(inputs, min, max, *, num_bits, narrow_range):  # noqa: A002
        return _vars_shape(inputs, min, max, per_channel=per_channel, what=name)[0]

    @forward.kernel
    def _kernel(inputs, min, max, *, num_bits, narrow_range):  # noqa: A002
        _check_num_bits(num_bits, name)
        _vars_ranges(inputs, min, max, per_channel, name)
        return _quantize(inputs, *nudge(min, max, num_bits, narrow_range))

    @forward.gradient
    def _grad(op, grad):
        return list(backward(grad, *op.inputs, num_bits=op.get_attr("num_bits"),
                             narrow_range=op.get_attr("narrow_range")))

    @backward.shape_fn
    def _backward_shape(gradients, inputs, min, max, *, num_bits, narrow_range):  # noqa: A002
        inputs, vector = _vars_shape(gradients.merge_with(inputs), min, max,
                                     per_channel=per_channel, what=f"{name}Gradient")
        return [inputs, vector, vector]

    @backward.kernel
    def _backward_kernel(gradients, inputs, min, max, *, num_bits, narrow_range):  # noqa: A002
        _check_num_bits(num_bits, f"{name}Gradient")
        _vars_ranges(inputs, min, max, per_channel, f"{name}Gradient")
        if gradients.shape != inputs.shape:
            raise errors.InvalidArgumentError(
                None, None, f"{name}Gradient: gradients and inputs must have the same shape: "
                f"{list(gradients.shape)} vs {list(inputs.shape)}")
        nudged_min, nudged_max, _ = nudge(min, max, num_bits, narrow_range)
        zero = _F32(0)
        inside = np.where(_in_range(inputs, nudged_min, nudged_max), gradients, zero)
        axes = tuple(range(inputs.ndim - 1)) if per_channel else None
        below = np.sum(np.where(inputs < nudged_min, gradients, zero), axis=axes, dtype=_F32)
        above = np.sum(np.where(inputs > nudged_max, gradients, zero), axis=axes, dtype=_F32)
        return inside.astype(_F32), np.asarray(below, _F32), np.asarray(above, _F32)

    return forward, backward


FakeQuantWithMinMaxVars, FakeQuantWithMinMaxVarsGradient = _define_vars(
    "FakeQuantWithMinMaxVars", per_channel=False)
FakeQuantWithMinMaxVarsPerChannel, FakeQuantWithMinMaxVarsPerChannelGradient = _define_vars(
    "FakeQuantWithMinMaxVarsPerChannel", per_channel=True)


# -- wrappers ---------------------------------------------------------------------------------

def fake_quant_with_min_max_args(inputs, min=-6, max=6, num_bits=8,  # noqa: A002
                                 narrow_range=False, name=None):
    """Fake-quantizes float32 `inputs` to `num_bits` levels over the nudged [min, max].

    Args:
        inputs: a float32 tensor.
        min, max: the range (floats, min < max).
        num_bits: 2..16.
        narrow_range: use levels 1..2**num_bits - 1 instead of 0..2**num_bits - 1.
        name: optional name.

    Returns:
        A float32 tensor of `inputs`' shape.
    """
    return FakeQuantWithMinMaxArgs(inputs, min=float(min), max=float(max), num_bits=num_bits,
                                   narrow_range=narrow_range, name=name)


def fake_quant_with_min_max_args_gradient(gradients, inputs, min=-6, max=6,  # noqa: A002
                                          num_bits=8, narrow_range=False, name=None):
    """The gradient of `fake_quant_with_min_max_args`: `gradients` where `inputs` lies in the
    nudged range, 0 elsewhere."""
    return FakeQuantWithMinMaxArgsGradient(gradients, inputs, min=float(min), max=float(max),
                                           num_bits=num_bits, narrow_range=narrow_range,
                                           name=name)


def fake_quant_with_min_max_vars(inputs, min, max, num_bits=8,  # noqa: A002
                                 narrow_range=False, name=None):
    """Fake-quantizes `inputs` over the nudged range of the scalar tensors `min`, `max`."""
    return FakeQuantWithMinMaxVars(inputs, min, max, num_bits=num_bits,
                                   narrow_range=narrow_range, name=name)


def fake_quant_with_min_max_vars_gradient(gradients, inputs, min, max,  # noqa: A002
                                          num_bits=8, narrow_range=False, name=None):
    """(backprops_wrt_input, backprop_wrt_min, backprop_wrt_max) of
    `fake_quant_with_min_max_vars`."""
    return FakeQuantWithMinMaxVarsGradient(gradients, inputs, min, max, num_bits=num_bits,
                                           narrow_range=narrow_range, name=name)


def fake_quant_with_min_max_vars_per_channel(inputs, min, max, num_bits=8,  # noqa: A002
                                             narrow_range=False, name=None):
    """Fake-quantizes `inputs` per channel of its last dimension (`min`, `max`: vectors)."""
    return FakeQuantWithMinMaxVarsPerChannel(inputs, min, max, num_bits=num_bits,
                                             narrow_range=narrow_range, name=name)


def fake_quant_with_min_max_vars_per_channel_gradient(gradients, inputs, min,  # noqa: A002
                                                      max, num_bits=8,  # noqa: A002
                                                      narrow_range=False, name=None):
    """The per-channel gradients of `fake_quant_with_min_max_vars_per_channel`."""
    return FakeQuantWithMinMaxVarsPerChannelGradient(gradients, inputs, min, max,
                                                     num_bits=num_bits,
                                                     narrow_range=narrow_range, name=name)
