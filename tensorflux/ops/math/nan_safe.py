"""Less common math ops: Xlogy, Xdivy, MulNoNan, Erfinv, Ndtri, CumulativeLogsumexp, with their
gradients, and the composites built on public ops (reciprocal_no_nan, lbeta, polyval,
is_non_decreasing, is_strictly_increasing, unsorted_segment_mean / sqrt_n).

Erfinv and Ndtri compute in float64 (cast back): an Acklam rational starting point refined by
three Halley steps on erf / erfc (lib/numerics/erf_gamma.py), so the tails keep full relative
accuracy.

`__all__` holds the names TF1 exports at the root; `MATH_ONLY` the ones only under `tf.math`.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework.common_shapes import broadcast_shape
from tensorflux.framework.op_def import define_op
from tensorflux.framework.scopes import op_name_scope as _scope
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.lib.numerics import erf_gamma
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.math import binary
from tensorflux.ops.math import comparison as comparison_ops
from tensorflux.ops.math import reduction as reduction_ops
from tensorflux.ops.math import segment as segment_ops
from tensorflux.ops.math import select as select_ops
from tensorflux.ops.math import unary as unary_ops
from tensorflux.ops.math.broadcast_gradient import unbroadcast

__all__ = ["lbeta", "is_non_decreasing", "is_strictly_increasing", "unsorted_segment_mean",
           "unsorted_segment_sqrt_n"]
MATH_ONLY = ["xlogy", "xdivy", "multiply_no_nan", "reciprocal_no_nan", "erfinv", "ndtri",
             "polyval", "cumulative_logsumexp"]

_FLOAT_COMPLEX = "{float16, float32, float64, complex64, complex128}"



def _const_like(value, t):
    return convert_to_tensor(np.array(value, t.dtype.base_dtype.as_numpy_dtype))


# -- Xlogy, Xdivy, MulNoNan -------------------------------------------------------------------

def _binary(name):
    op = define_op(name, inputs=["x: T", "y: T"], outputs=["z: T"], attrs=[f"T: {_FLOAT_COMPLEX}"])
    op.shape_fn(broadcast_shape)
    return op


Xlogy = _binary("Xlogy")
Xdivy = _binary("Xdivy")
MulNoNan = _binary("MulNoNan")


@Xlogy.kernel
def _xlogy_kernel(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        z = x * np.log(y)
    return np.where(x == 0, np.zeros([], z.dtype), z)


@Xdivy.kernel
def _xdivy_kernel(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.true_divide(x, y)
    return np.where(x == 0, np.zeros([], z.dtype), z)


@MulNoNan.kernel
def _mul_no_nan_kernel(x, y):
    with np.errstate(invalid="ignore", over="ignore"):
        z = x * y
    return np.where(y == 0, np.zeros([], z.dtype), z)


def _nonzero(x):
    return math_ops.cast(comparison_ops.not_equal(x, _const_like(0, x)), x.dtype.base_dtype)


def _conj(t):
    return unary_ops.conj(t) if t.dtype.is_complex else t


@Xlogy.gradient
def _xlogy_grad(op, grad):
    x, y = op.inputs
    gx = math_ops.multiply(grad, Xlogy(_nonzero(x), _conj(y)))
    gy = math_ops.multiply(grad, Xdivy(_conj(x), _conj(y)))
    return unbroadcast(gx, x), unbroadcast(gy, y)


@Xdivy.gradient
def _xdivy_grad(op, grad):
    x, y = op.inputs
    gx = math_ops.multiply(grad, Xdivy(_nonzero(x), _conj(y)))
    gy = math_ops.multiply(grad, Xdivy(unary_ops.negative(_conj(x)),
                                       unary_ops.square(_conj(y))))
    return unbroadcast(gx, x), unbroadcast(gy, y)


@MulNoNan.gradient
def _mul_no_nan_grad(op, grad):
    x, y = op.inputs
    return (unbroadcast(MulNoNan(grad, _conj(y)), x),
            unbroadcast(MulNoNan(_conj(x), grad), y))


def _binary_wrapper(op, default, x, y, name):
    with _scope(name, default) as scope:
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, name="y", preferred_dtype=x.dtype.base_dtype)
        return op(x, y, name=scope)


def xlogy(x, y, name=None):
    """x * log(y), and 0 wherever x == 0 (even where y is 0 or NaN).

    Example:
        >>> tf.math.xlogy([0.0, 2.0], [0.0, 3.0])   # -> [0.0, 2 * log(3)]
    """
    return _binary_wrapper(Xlogy, "Xlogy", x, y, name)


def xdivy(x, y, name=None):
    """x / y, and 0 wherever x == 0 (even where y is 0)."""
    return _binary_wrapper(Xdivy, "Xdivy", x, y, name)


def multiply_no_nan(x, y, name=None):
    """x * y, and 0 wherever y == 0 (even where x is inf or NaN)."""
    return _binary_wrapper(MulNoNan, "multiply_no_nan", x, y, name)


def reciprocal_no_nan(x, name=None):
    """1 / x, and 0 wherever x == 0."""
    with _scope(name, "reciprocal_no_nan") as scope:
        x = convert_to_tensor(x, name="x")
        return binary.DivNoNan(_const_like(1, x), x, name=scope)


# -- Erfinv, Ndtri ----------------------------------------------------------------------------

_A = (-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
      1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00)
_B = (-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
      6.680131188771972e+01, -1.328068155288572e+01, 1.0)
_C = (-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
      -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00)
_D = (7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
      3.754408661907416e+00, 1.0)
_SQRT2 = np.sqrt(2.0)
_SQRT2PI = np.sqrt(2.0 * np.pi)
_HALLEY_STEPS = 3


def _horner(coeffs, t):
    result = np.full_like(t, coeffs[0])
    for c in coeffs[1:]:
        result = result * t + c
    return result


def _ndtri_start(q):
    """Acklam's approximation of the normal quantile for q in (0, 0.5] (relative error ~1e-9)."""
    central = q > 0.02425
    t = np.where(central, q, 0.5) - 0.5
    r = t * t
    mid = _horner(_A, r) * t / _horner(_B, r)
    s = np.sqrt(-2.0 * np.log(np.where(central, 0.5, q)))
    tail = _horner(_C, s) / _horner(_D, s)
    return np.where(central, mid, tail)


def _ndtri64(p):
    p = np.asarray(p, np.float64)
    q = np.minimum(p, 1.0 - p)
    inside = (q > 0) & (q <= 0.5)
    q_safe = np.where(inside, q, 0.25)
    x = _ndtri_start(q_safe)
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        for _ in range(_HALLEY_STEPS):
            # Near the median erf keeps the residual's relative accuracy; erfc in the tail.
            residual = np.where(q_safe > 0.25,
                                0.5 * erf_gamma.erf(x / _SQRT2) - (q_safe - 0.5),
                                0.5 * erf_gamma.erfc(-x / _SQRT2) - q_safe)
            u = residual * _SQRT2PI * np.exp(0.5 * x * x)
            step = x - u / (1.0 + 0.5 * x * u)
            x = np.where(np.isfinite(step), step, x)
    x = np.where(p > 0.5, -x, x)
    x = np.where(p == 0, -np.inf, np.where(p == 1, np.inf, x))
    return np.where((p < 0) | (p > 1) | np.isnan(p), np.nan, x)


def _erfinv64(y):
    y = np.asarray(y, np.float64)
    a = np.abs(y)
    inside = a < 1
    a_safe = np.where(inside, a, 0.5)
    x = -_ndtri_start(np.maximum((1.0 - a_safe) / 2.0, 1e-300)) / _SQRT2
    small = a_safe < 0.5
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        for _ in range(_HALLEY_STEPS):
            residual = np.where(small, erf_gamma.erf(x) - a_safe,
                                (1.0 - a_safe) - erf_gamma.erfc(x))
            u = residual * (np.sqrt(np.pi) / 2.0) * np.exp(x * x)
            step = x - u / (1.0 + x * u)
            x = np.where(np.isfinite(step), step, x)
    x = np.where(a == 1, np.inf, x)
    x = np.where((a > 1) | np.isnan(a), np.nan, x)
    return np.copysign(x, y)


def _unary(name, fn):
    op = define_op(name, inputs=["x: T"], outputs=["y: T"], attrs=["T: {floattype}"])
    op.shape_fn(lambda x: x)

    def kernel(x):
        return fn(x).astype(x.dtype, copy=False)

    kernel.__name__ = f"_{name.lower()}_kernel"
    op.kernel(kernel)
    return op


Erfinv = _unary("Erfinv", _erfinv64)
Ndtri = _unary("Ndtri", _ndtri64)


@Erfinv.gradient
def _erfinv_grad(op, grad):
    y = op.outputs[0]
    scale = _const_like(np.sqrt(np.pi) / 2, y)
    return math_ops.multiply(grad, math_ops.multiply(scale, unary_ops.exp(unary_ops.square(y))))


@Ndtri.gradient
def _ndtri_grad(op, grad):
    y = op.outputs[0]
    half_square = math_ops.multiply(_const_like(0.5, y), unary_ops.square(y))
    return math_ops.multiply(grad, math_ops.multiply(_const_like(_SQRT2PI, y),
                                                     unary_ops.exp(half_square)))


def erfinv(x, name=None):
    """The inverse error function on [-1, 1] (±inf at ±1, NaN outside).

    Example:
        >>> tf.math.erfinv([0.0, 0.5])   # -> [0.0, 0.4769363]
    """
    return Erfinv(x, name=name)


def ndtri(x, name=None):
    """The standard normal quantile (inverse CDF) on [0, 1] (±inf at 1 and 0, NaN outside)."""
    return Ndtri(x, name=name)


# -- CumulativeLogsumexp ----------------------------------------------------------------------

CumulativeLogsumexp = define_op(
    "CumulativeLogsumexp", inputs=["x: T", "axis: Tidx"], outputs=["out: T"],
    attrs=["exclusive: bool = False", "reverse: bool = False", "T: {floattype}",
           "Tidx: {int32, int64} = int32"])


@CumulativeLogsumexp.shape_fn
def _cumulative_logsumexp_shape(x, axis):
    axis.with_rank(0)
    return x.with_rank_at_least(1)


@CumulativeLogsumexp.kernel
def _cumulative_logsumexp_kernel(x, axis, *, exclusive, reverse):
    axis = int(axis)
    if x.ndim == 0 or not -x.ndim <= axis < x.ndim:
        raise errors.InvalidArgumentError(
            None, None, f"axis {axis} is out of range for a rank-{x.ndim} input")
    if reverse:
        x = np.flip(x, axis)
    out = np.logaddexp.accumulate(x, axis=axis)
    if exclusive:
        out = np.roll(out, 1, axis)
        first = [slice(None)] * x.ndim
        first[axis] = slice(0, 1)
        out[tuple(first)] = -np.inf
    if reverse:
        out = np.flip(out, axis)
    return np.ascontiguousarray(out, dtype=x.dtype)


@CumulativeLogsumexp.gradient
def _cumulative_logsumexp_grad(op, grad):
    # d out_j / d x_i = exp(x_i - out_j) for the i summed into out_j, so
    # grad_x = exp(x + CLSE(log(grad) - out) scanned the other way), split by the sign of grad.
    x, axis = op.inputs
    out = op.outputs[0]
    exclusive, reverse = op.get_attr("exclusive"), op.get_attr("reverse")
    minus_inf = _const_like(-np.inf, x)
    live = comparison_ops.greater(out, minus_inf)

    def part(g):
        usable = comparison_ops.logical_and(comparison_ops.greater(g, _const_like(0, g)), live)
        safe = select_ops.where_v2(usable, g, _const_like(1, g))
        log_ratio = select_ops.where_v2(usable, math_ops.subtract(unary_ops.log(safe), out),
                                        minus_inf)
        scanned = CumulativeLogsumexp(log_ratio, axis, exclusive=exclusive, reverse=not reverse)
        return unary_ops.exp(math_ops.add(scanned, x))

    return math_ops.subtract(part(grad), part(unary_ops.negative(grad))), None


def cumulative_logsumexp(x, axis=0, exclusive=False, reverse=False, name=None):
    """log(cumsum(exp(x))) along `axis`, computed without overflow.

    Args:
        x: a float tensor of rank >= 1.
        axis: the axis to scan (default 0).
        exclusive: leave each element out of its own sum (the first result is -inf).
        reverse: scan from the end.
        name: optional name.

    Example:
        >>> tf.math.cumulative_logsumexp([0.0, 0.0])   # -> [0.0, log(2)]
    """
    return CumulativeLogsumexp(x, axis, exclusive=exclusive, reverse=reverse, name=name)


# -- composites -------------------------------------------------------------------------------

def lbeta(x, name=None):
    """log|Beta(x)| over the last axis: sum(lgamma(x), -1) - lgamma(sum(x, -1)).

    Raises:
        ValueError: `x` is a scalar.

    Example:
        >>> tf.lbeta([1.0, 2.0])   # -> log(Gamma(1) Gamma(2) / Gamma(3)) = -log(2)
    """
    with _scope(name, "lbeta"):
        x = convert_to_tensor(x, name="x")
        log_prod = reduction_ops.reduce_sum(unary_ops.lgamma(x), axis=[-1])
        return math_ops.subtract(log_prod, unary_ops.lgamma(reduction_ops.reduce_sum(x, [-1])))


def polyval(coeffs, x, name=None):
    """Evaluates the polynomial `coeffs[0] * x**(n-1) + ... + coeffs[n-1]` (Horner's rule).

    Args:
        coeffs: a list of tensors (or numbers), highest power first.
        x: a tensor.
        name: optional name.

    Raises:
        ValueError: `coeffs` is not a list.

    Example:
        >>> tf.math.polyval([1.0, 2.0, 3.0], 2.0)   # -> 11.0
    """
    if not isinstance(coeffs, (list, tuple)):
        raise ValueError(f"Argument coeffs must be list type, got {type(coeffs).__name__}")
    with _scope(name, "polyval"):
        x = convert_to_tensor(x, name="x")
        if not coeffs:
            return array_ops.zeros_like(x)
        dtype = x.dtype.base_dtype
        result = convert_to_tensor(coeffs[0], dtype=dtype, name="coeff_0")
        for i, c in enumerate(coeffs[1:], start=1):
            c = convert_to_tensor(c, dtype=dtype, name=f"coeff_{i}")
            result = math_ops.add(c, math_ops.multiply(result, x))
        return result


def _monotonic(x, compare, default, name):
    with _scope(name, default):
        x = convert_to_tensor(x, name="x")
        dtype = x.dtype.base_dtype
        if not (dtype.is_floating or dtype.is_integer):
            raise TypeError(f"{default}: x must be a numeric tensor, got {dtype!r}")
        flat = array_ops.reshape(x, [-1])
        return reduction_ops.reduce_all(compare(flat[1:], flat[:-1]))


def is_non_decreasing(x, name=None):
    """True when each entry of flattened `x` is >= the one before (True for < 2 entries).

    Raises:
        TypeError: `x` is not numeric.
    """
    return _monotonic(x, comparison_ops.greater_equal, "is_non_decreasing", name)


def is_strictly_increasing(x, name=None):
    """True when each entry of flattened `x` is > the one before (True for < 2 entries).

    Raises:
        TypeError: `x` is not numeric.
    """
    return _monotonic(x, comparison_ops.greater, "is_strictly_increasing", name)


def _segment_counts(data, segment_ids, num_segments):
    """Per-segment counts (at least 1) in data's dtype, shaped to broadcast against the sums."""
    ones = array_ops.ones_like(segment_ids, dtype=data.dtype.base_dtype)
    counts = segment_ops.unsorted_segment_sum(ones, segment_ids, num_segments)
    counts = math_ops.maximum(counts, _const_like(1, counts))
    extra = data.shape.ndims - segment_ids.shape.ndims
    if extra:
        ones_shape = array_ops.ones([extra], dtypes.int32)
        shape = array_ops.concat([array_ops.shape(counts), ones_shape], 0)
        counts = array_ops.reshape(counts, shape)
    return counts


def _segment_args(data, segment_ids):
    data = convert_to_tensor(data, name="data")
    segment_ids = convert_to_tensor(segment_ids, name="segment_ids")
    if data.shape.ndims is None or segment_ids.shape.ndims is None:
        raise ValueError("data and segment_ids must have known ranks")
    return data, segment_ids


def unsorted_segment_mean(data, segment_ids, num_segments, name=None):
    """The mean of the `data` slices of each segment (0 for empty segments).

    Integer data give a float64 mean, as TF's true division does.

    Example:
        >>> tf.unsorted_segment_mean([1.0, 2.0, 4.0], [0, 0, 2], 3)   # -> [1.5, 0.0, 4.0]
    """
    with _scope(name, "UnsortedSegmentMean"):
        data, segment_ids = _segment_args(data, segment_ids)
        counts = _segment_counts(data, segment_ids, num_segments)
        summed = segment_ops.unsorted_segment_sum(data, segment_ids, num_segments)
        return math_ops.truediv(summed, counts)


def unsorted_segment_sqrt_n(data, segment_ids, num_segments, name=None):
    """The sum of each segment's `data` slices divided by sqrt(count) (0 for empty segments).

    Raises:
        TypeError: `data` is not a float tensor.
    """
    with _scope(name, "UnsortedSegmentSqrtN"):
        data, segment_ids = _segment_args(data, segment_ids)
        if not data.dtype.is_floating:
            raise TypeError(f"unsorted_segment_sqrt_n: data must be a float tensor, got "
                            f"{data.dtype!r}")
        counts = _segment_counts(data, segment_ids, num_segments)
        summed = segment_ops.unsorted_segment_sum(data, segment_ids, num_segments)
        return math_ops.truediv(summed, unary_ops.sqrt(counts))
