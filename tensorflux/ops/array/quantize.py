"""QuantizeV2, Dequantize and QuantizedConcat: float32 <-> quantized integer tensors.

Ranges: QuantizeV2 first widens [min_range, max_range] to contain 0 and to span at least 1% of
its largest magnitude (at least 0.01). Modes, with lo/hi the quantized type's limits:
- MIN_COMBINED: q = round((clamp(x) - min) * (hi - lo) / (max - min) + lo).
- MIN_FIRST: q = round(x * s) - round(min * s) + lo with s = (hi - lo) / (max - min), clamped
  (rounding min on its own keeps the zero point exact).
- SCALED: symmetric around 0: s = min(lo / min, hi / max) (hi / max for unsigned types), q =
  round(x * s) clamped; the op returns the range lo / s .. hi / s it represents.
Rounding is half away from zero; SCALED also takes HALF_TO_EVEN.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_shape import TensorShape

__all__ = ["quantize", "quantize_v2", "dequantize", "quantized_concat", "quantize_and_dequantize"]

_QTYPES = "{qint8, quint8, qint32, qint16, quint16}"
_MODES = "{'MIN_COMBINED', 'MIN_FIRST', 'SCALED'}"


def _limits(dtype) -> tuple:
    info = np.iinfo(dtypes.as_dtype(dtype).as_numpy_dtype)
    return float(info.min), float(info.max)


def _round(values, half_to_even: bool):
    if half_to_even:
        return np.rint(values)
    return np.sign(values) * np.floor(np.abs(values) + 0.5)


def _scalar_range(value, what: str) -> float:
    array = np.asarray(value)
    if array.size != 1:
        raise errors.InvalidArgumentError(None, None, f"{what} must be a scalar (one value), "
                                          f"got shape {list(array.shape)}")
    return float(array.reshape(()))


def _widened(min_range: float, max_range: float):
    if min_range > max_range:
        raise errors.InvalidArgumentError(
            None, None, f"min_range ({min_range}) must not exceed max_range ({max_range})")
    low = min(0.0, min_range)
    epsilon = max(1.0, abs(min_range), abs(max_range)) * 0.01
    high = max(0.0, max(max_range, low + epsilon))
    return low, high


def _min_first(values, low: float, high: float, lo: float, hi: float):
    scale = (hi - lo) / (high - low)
    q = _round(values * scale, False) - _round(low * scale, False) + lo
    return np.clip(q, lo, hi)


def _min_first_to_float(q, low: float, high: float, lo: float, hi: float):
    if low == high:
        return np.full(np.shape(q), low, np.float32)
    step = np.float64(np.float32((high - low) / (hi - lo)))
    low_rounded = np.round(low / step) * step
    return (low_rounded + (q.astype(np.float64) - lo) * step).astype(np.float32)


# -- QuantizeV2 ---------------------------------------------------------------------------------

QuantizeV2 = define_op(
    "QuantizeV2", inputs=["input: float", "min_range: float", "max_range: float"],
    outputs=["output: T", "output_min: float", "output_max: float"],
    attrs=[f"T: {_QTYPES}", f"mode: {_MODES} = 'MIN_COMBINED'",
           "round_mode: {'HALF_AWAY_FROM_ZERO', 'HALF_TO_EVEN'} = 'HALF_AWAY_FROM_ZERO'"],
    differentiable=False)


@QuantizeV2.shape_fn
def _quantize_shape(input, min_range, max_range, *, T, mode, round_mode):  # noqa: N803
    min_range.with_rank_at_most(1)
    max_range.with_rank_at_most(1)
    return [input, TensorShape([]), TensorShape([])]


@QuantizeV2.kernel
def _quantize_kernel(input, min_range, max_range, *, T, mode, round_mode):  # noqa: N803
    if round_mode == "HALF_TO_EVEN" and mode != "SCALED":
        raise errors.InvalidArgumentError(
            None, None, f"Round mode 'HALF_TO_EVEN' is only supported with mode 'SCALED', "
            f"got mode {mode!r}")
    low, high = _widened(_scalar_range(min_range, "min_range"),
                         _scalar_range(max_range, "max_range"))
    lo, hi = _limits(T)
    # NOTE: MIN_COMBINED and SCALED scale in float32 as TF does (it decides halfway cases).
    f32 = np.float32
    if mode == "MIN_COMBINED":
        x = np.asarray(input, f32)
        scaled = (np.clip(x, f32(low), f32(high)) - f32(low)) * f32((hi - lo) / (high - low))
        q = np.clip(_round((scaled + f32(lo)).astype(np.float64), False), lo, hi)
    elif mode == "MIN_FIRST":
        q = _min_first(np.asarray(input, np.float64), low, high, lo, hi)
    else:
        with np.errstate(divide="ignore"):
            scale = min(lo / low if low else np.inf, hi / high) if lo < 0 else hi / high
        low, high = lo / scale, hi / scale
        x = np.clip(np.asarray(input, f32), f32(low), f32(high)) * f32(scale)
        q = np.clip(_round(x.astype(np.float64), round_mode == "HALF_TO_EVEN"), lo, hi)
    out_type = dtypes.as_dtype(T).as_numpy_dtype
    return q.astype(out_type), np.float32(low), np.float32(high)


def quantize_v2(input, min_range, max_range, T, mode="MIN_COMBINED",  # noqa: A002, N803
                name=None, round_mode="HALF_AWAY_FROM_ZERO"):
    """Quantizes float32 `input` to the quantized type `T` over [min_range, max_range].

    Args:
        input: a float32 tensor.
        min_range, max_range: float32 scalars, the range to map (widened to contain 0).
        T: qint8, quint8, qint16, quint16 or qint32.
        mode: "MIN_COMBINED", "MIN_FIRST" or "SCALED" (see the module docstring).
        name: optional name.
        round_mode: "HALF_AWAY_FROM_ZERO", or "HALF_TO_EVEN" (SCALED only).

    Returns:
        `(output, output_min, output_max)`: the quantized tensor and the range it stands for.
    """
    return QuantizeV2(input, min_range, max_range, T=dtypes.as_dtype(T), mode=mode,
                      round_mode=round_mode, name=name)


def quantize(input, min_range, max_range, T, mode="MIN_COMBINED",  # noqa: A002, N803
             round_mode="HALF_AWAY_FROM_ZERO", name=None):
    """`tf.quantization.quantize`: `quantize_v2` with `round_mode` before `name`."""
    return quantize_v2(input, min_range, max_range, T, mode=mode, name=name,
                       round_mode=round_mode)


# -- Dequantize ---------------------------------------------------------------------------------

Dequantize = define_op(
    "Dequantize", inputs=["input: T", "min_range: float", "max_range: float"],
    outputs=["output: float"], attrs=[f"T: {_QTYPES}", f"mode: {_MODES} = 'MIN_COMBINED'"],
    differentiable=False)


@Dequantize.shape_fn
def _dequantize_shape(input, min_range, max_range, *, T, mode):  # noqa: N803
    min_range.with_rank_at_most(1)
    max_range.with_rank_at_most(1)
    return input


@Dequantize.kernel
def _dequantize_kernel(input, min_range, max_range, *, T, mode):  # noqa: N803
    low = _scalar_range(min_range, "min_range")
    high = _scalar_range(max_range, "max_range")
    lo, hi = _limits(T)
    q = np.asarray(input, np.float64)
    if mode == "MIN_COMBINED":
        half = (hi - lo + 1) / 2 if lo < 0 else 0.0
        return ((q + half) * ((high - low) / (hi - lo)) + low).astype(np.float32)
    if mode == "MIN_FIRST":
        return _min_first_to_float(q, low, high, lo, hi)
    scale = max(low / lo, high / hi) if lo < 0 else high / hi
    return (q * scale).astype(np.float32)


def dequantize(input, min_range, max_range, mode="MIN_COMBINED", name=None):  # noqa: A002
    """Float32 values of a quantized tensor over [min_range, max_range] (inverse of
    `quantize` with the same mode)."""
    return Dequantize(input, min_range, max_range, mode=mode, name=name)


# -- QuantizedConcat ----------------------------------------------------------------------------

QuantizedConcat = define_op(
    "QuantizedConcat",
    inputs=["concat_dim: int32", "values: N * T", "input_mins: N * float",
            "input_maxes: N * float"],
    outputs=["output: T", "output_min: float", "output_max: float"],
    attrs=["N: int >= 2", "T: type"], differentiable=False)


@QuantizedConcat.shape_fn(value_inputs=("concat_dim",))
def _quantized_concat_shape(concat_dim, values, input_mins, input_maxes):
    for shape in (*input_mins, *input_maxes):
        shape.with_rank(0)
    ranks = {v.ndims for v in values if v.ndims is not None}
    if len(ranks) > 1:
        raise ValueError(f"values must have the same rank, got ranks {sorted(ranks)}")
    if not ranks or concat_dim is None:
        return [TensorShape(None), TensorShape([]), TensorShape([])]
    rank = ranks.pop()
    axis = int(concat_dim)
    if not 0 <= axis < rank:
        raise ValueError(f"concat_dim {axis} is out of range for rank {rank}")
    dims = [None] * rank
    total = 0
    for shape in values:
        for d in range(rank):
            if d == axis:
                size = shape[d].value
                total = None if total is None or size is None else total + size
            elif shape[d].value is not None:
                if dims[d] is not None and dims[d] != shape[d].value:
                    raise ValueError(f"values differ in dimension {d}: {dims[d]} vs "
                                     f"{shape[d].value}")
                dims[d] = shape[d].value
    dims[axis] = total
    return [TensorShape(dims), TensorShape([]), TensorShape([])]


@QuantizedConcat.kernel(factory=True)
def _quantized_concat_kernel(N, T):  # noqa: N803
    lo, hi = _limits(T)
    out_type = dtypes.as_dtype(T).as_numpy_dtype

    def kernel(concat_dim, *args):
        values, mins, maxes = args[:N], args[N:2 * N], args[2 * N:]
        mins = [float(m) for m in mins]
        maxes = [float(m) for m in maxes]
        low, high = min(mins), max(maxes)
        axis = int(concat_dim)
        if not 0 <= axis < values[0].ndim:
            raise errors.InvalidArgumentError(None, None, f"concat_dim {axis} is out of range "
                                              f"for inputs of rank {values[0].ndim}")
        parts = []
        for value, vmin, vmax in zip(values, mins, maxes):
            if vmin == low and vmax == high:
                parts.append(value)
                continue
            as_float = _min_first_to_float(value, vmin, vmax, lo, hi).astype(np.float64)
            parts.append(_min_first(as_float, low, high, lo, hi).astype(out_type))
        try:
            output = np.concatenate(parts, axis=axis)
        except ValueError as err:
            raise errors.InvalidArgumentError(None, None, f"QuantizedConcat: {err}") from None
        return output.astype(out_type), np.float32(low), np.float32(high)

    return kernel


def quantized_concat(concat_dim, values, input_mins, input_maxes, name=None):
    """Concatenates quantized tensors, requantizing each into the union of their ranges.

    Returns:
        `(output, output_min, output_max)`.
    """
    return QuantizedConcat(concat_dim, values, input_mins, input_maxes, name=name)


# -- QuantizeAndDequantizeV2 --------------------------------------------------------------------

QuantizeAndDequantizeV2 = define_op(
    "QuantizeAndDequantizeV2", inputs=["input: T", "input_min: T", "input_max: T"],
    outputs=["output: T"],
    attrs=["signed_input: bool = True", "num_bits: int = 8", "range_given: bool = False",
           "T: {bfloat16, float16, float32, float64}",
           "round_mode: {'HALF_TO_EVEN', 'HALF_UP'} = 'HALF_TO_EVEN'",
           "narrow_range: bool = False"])


@QuantizeAndDequantizeV2.shape_fn
def _quantize_and_dequantize_shape(input, input_min, input_max, *, num_bits):  # noqa: A002
    input_min.with_rank(0)
    input_max.with_rank(0)
    return input


@QuantizeAndDequantizeV2.kernel
def _quantize_and_dequantize_kernel(input, input_min, input_max, *, signed_input,  # noqa: A002
                                    num_bits, range_given, round_mode, narrow_range):
    limit = 63 if signed_input else 62
    if not 0 < num_bits <= limit:
        raise errors.InvalidArgumentError(None, None, f"num_bits is out of range: {num_bits} "
                                          f"with signed_input {signed_input}")
    t = input.dtype.type
    if input.size == 0:
        return input.copy()
    if range_given:
        low, high = t(input_min), t(input_max)
        if low > high:
            raise errors.InvalidArgumentError(None, None, f"Invalid range: input_min {low} > "
                                              f"input_max {high}")
    else:
        low, high = input.min(), input.max()
    if signed_input:
        q_min = -(1 << (num_bits - 1)) + (1 if narrow_range else 0)
        q_max = (1 << (num_bits - 1)) - 1
    else:
        q_min, q_max = 0, (1 << num_bits) - 1
    big = np.finfo(t).max
    from_min = t(q_min) / low if q_min * low > 0 else big
    from_max = t(q_max) / high if q_max * high > 0 else big
    # The side that decides the scale keeps its end; the other end moves to match.
    if from_min < from_max:
        scale, inverse = t(from_min), t(low / t(q_min))
        high = t(q_max) * inverse
    else:
        scale, inverse = t(from_max), t(high / t(q_max))
        low = t(q_min) * inverse
    # min with the top first, then max with the bottom: the bottom wins if they cross.
    scaled = np.maximum(np.minimum(input, high), low) * scale
    rounded = np.rint(scaled) if round_mode == "HALF_TO_EVEN" else np.floor(scaled + t(0.5))
    return (rounded * inverse).astype(input.dtype)


@QuantizeAndDequantizeV2.gradient
def _quantize_and_dequantize_grad(op, grad):
    # TF 1.15's straight-through estimator: the gradient passes unchanged (none to the range).
    return [grad, None, None]


def quantize_and_dequantize(input, input_min, input_max, signed_input=True,  # noqa: A002
                            num_bits=8, range_given=False, round_mode="HALF_TO_EVEN",
                            name=None, narrow_range=False):
    """Quantizes then dequantizes `input`: the values a `num_bits` fixed-point grid through 0
    can hold (the gradient passes straight through).

    Args:
        input: a floating tensor.
        input_min, input_max: the range when `range_given` (else the input's own min/max).
        signed_input: a signed grid [-2**(b-1), 2**(b-1) - 1] or unsigned [0, 2**b - 1].
        num_bits: the grid's bit width.
        range_given: use input_min/input_max instead of the data's range.
        round_mode: "HALF_TO_EVEN" or "HALF_UP".
        name: optional name.
        narrow_range: drop the most negative signed level (symmetric grid).

    Returns:
        A tensor like `input`.
    """
    return QuantizeAndDequantizeV2(input, input_min, input_max, signed_input=signed_input,
                                   num_bits=num_bits, range_given=range_given,
                                   round_mode=round_mode, narrow_range=narrow_range, name=name)
