"""Reductions: Sum, Mean, Max, Min, Prod, All, Any, EuclideanNorm; ArgMax/ArgMin; Cumsum/Cumprod.

The reduction axes are a value input (`reduction_indices`): constant axes give exact static
shapes; negative axes count from the end; an empty axis list is the identity. Kernels accumulate
float16 in float32 and keep every result in the input's dtype (integer means truncate, as in
TensorFlow).
"""

from __future__ import annotations

import math

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_conversion import constant_value, convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops import array as array_ops
from tensorflux.ops.math import binary as binary_ops
from tensorflux.ops.math import casting as cast_ops
from tensorflux.ops.math import comparison as comparison_ops
from tensorflux.ops.math import sequence as sequence_ops
from tensorflux.ops.math import unary as unary_ops
from tensorflux.ops.math.casting import cast
from tensorflux.ops.math.comparison import not_equal
from tensorflux.ops.math.select import where_v2
from tensorflux.ops.math.sequence import range as range_

__all__ = ["reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "reduce_all",
           "reduce_any", "reduce_logsumexp", "reduce_euclidean_norm", "reduce_variance",
           "reduce_std", "count_nonzero", "argmax",
           "argmin", "cumsum", "cumprod"]

_REDUCE_ATTRS = ["keep_dims: bool = False", "Tidx: {int32, int64} = int32"]
_NUMBER = "{numbertype}"
_REAL = "{realnumbertype}"


def _reduction(name, types, differentiable=True):
    attrs = list(_REDUCE_ATTRS)
    if types is None:
        inputs, outputs = ["input: bool", "reduction_indices: Tidx"], ["output: bool"]
    else:
        inputs, outputs = ["input: T", "reduction_indices: Tidx"], ["output: T"]
        attrs.append(f"T: {types}")
    op = define_op(name, inputs=inputs, outputs=outputs, attrs=attrs,
                   differentiable=differentiable)
    op.shape_fn(_reduction_shape, value_inputs=("reduction_indices",))
    return op


def _normalize_axes(axes, ndim: int) -> tuple:
    """Axes as a tuple of non-negative ints; InvalidArgumentError for bad or repeated ones."""
    flat = np.asarray(axes).reshape(-1).tolist()  # Python ints: cheaper than NumPy on a few
    for a in flat:
        if not -ndim <= a < ndim:
            raise errors.InvalidArgumentError(
                None, None, f"Invalid reduction dimension ({a} for input with {ndim} "
                            f"dimension(s)")
    result = tuple(a % ndim for a in flat)
    if len(set(result)) != len(result):
        raise errors.InvalidArgumentError(
            None, None, f"Invalid reduction arguments: Axes contains duplicate dimension: "
                        f"{flat}")
    return result


def _reduction_shape(input, reduction_indices, *, keep_dims):
    if reduction_indices is None:
        if keep_dims and input.ndims is not None:
            return TensorShape([None] * input.ndims)
        return TensorShape(None)
    if np.ndim(reduction_indices) > 1:
        raise ValueError(f"Shape must be at most rank 1 but is rank "
                         f"{np.ndim(reduction_indices)} (reduction_indices)")
    axes = np.asarray(reduction_indices).reshape(-1)
    if input.ndims is None:
        return TensorShape(None) if axes.size else input
    rank = input.ndims
    for a in axes.tolist():
        if not -rank <= a < rank:
            raise ValueError(f"Invalid reduction dimension {a} for input with {rank} dimensions.")
    reduced = {a % rank for a in axes.tolist()}
    dims = []
    for i, d in enumerate(input._dim_list):
        if i not in reduced:
            dims.append(d)
        elif keep_dims:
            dims.append(1)
    return TensorShape(dims)


def _accumulator(dtype):
    return np.float32 if dtype == np.float16 else dtype


Sum = _reduction("Sum", _NUMBER)
Mean = _reduction("Mean", _NUMBER)
Prod = _reduction("Prod", _NUMBER)
Max = _reduction("Max", _REAL)
Min = _reduction("Min", _REAL)
All = _reduction("All", None, differentiable=False)
Any = _reduction("Any", None, differentiable=False)
EuclideanNorm = _reduction("EuclideanNorm", _NUMBER)


@Sum.kernel(factory=True)
def _sum_factory(keep_dims, T):
    out = T.as_numpy_dtype
    acc = _accumulator(out)

    def sum_kernel(x, axes):
        # np.add.reduce is what np.sum runs, without its Python wrapper.
        return np.add.reduce(x, axis=_normalize_axes(axes, x.ndim), dtype=acc,
                             keepdims=keep_dims).astype(out, copy=False)

    return sum_kernel


def _reduced_mask(x, axes_tensor):
    """(kept-shape list or None, 0/1 int32 mask tensor or ndarray) for reducing x over axes."""
    axes = constant_value(axes_tensor)
    rank = x.shape.ndims
    if axes is not None and rank is not None:
        reduced = {int(a) % rank for a in np.asarray(axes).reshape(-1)} if rank else set()
        mask = np.array([1 if i in reduced else 0 for i in range(rank)], np.int32)
        if x.shape.is_fully_defined():
            kept = [1 if m else d for m, d in zip(mask, x.shape.as_list())]
            return kept, mask
        return None, mask
    r = array_ops.rank(x)
    positions = array_ops.reshape(sequence_ops.range(0, r), [1, -1])
    modulus = binary_ops.Maximum(r, np.int32(1))  # a scalar has no axes to reduce; avoid x % 0
    shifted = binary_ops.AddV2(cast_ops.cast(axes_tensor, dtypes.int32), r)
    axes_t = array_ops.reshape(binary_ops.FloorMod(shifted, modulus), [-1, 1])
    hit = Any(comparison_ops.Equal(positions, axes_t), [0])
    return None, cast_ops.cast(hit, dtypes.int32)


def _kept_shape(x, axes_tensor):
    """The keep_dims output shape of reducing x: a Python list or an int32 tensor."""
    kept, mask = _reduced_mask(x, axes_tensor)
    if kept is not None:
        return kept
    sx = array_ops.shape(x)
    return binary_ops.AddV2(binary_ops.Mul(sx, binary_ops.Sub(np.int32(1), mask)), mask)


def _to_kept(op, grad):
    """`grad` reshaped to the keep_dims shape of op's reduction."""
    if op.get_attr("keep_dims"):
        return grad
    return array_ops.reshape(grad, _kept_shape(op.inputs[0], op.inputs[1]))


def _output_kept(op):
    y = op.outputs[0]
    if op.get_attr("keep_dims"):
        return y
    return array_ops.reshape(y, _kept_shape(op.inputs[0], op.inputs[1]))


def _broadcast_back(grad_kept, x):
    target = x.shape.as_list() if x.shape.is_fully_defined() else array_ops.shape(x)
    if grad_kept.shape.is_fully_defined() and x.shape.is_fully_defined() and \
            grad_kept.shape.as_list() == x.shape.as_list():
        return grad_kept
    return array_ops.broadcast_to(grad_kept, target)


@Sum.gradient
def _sum_grad(op, grad):
    return _broadcast_back(_to_kept(op, grad), op.inputs[0]), None


@Prod.kernel(factory=True)
def _prod_factory(keep_dims, T):
    out = T.as_numpy_dtype
    acc = _accumulator(out)

    def prod_kernel(x, axes):
        return np.prod(x, axis=_normalize_axes(axes, x.ndim), dtype=acc,
                       keepdims=keep_dims).astype(out, copy=False)

    return prod_kernel


@Prod.gradient
def _prod_grad(op, grad):
    """Zero-safe: d prod / d x_i = product of the other elements, from exclusive cumprods."""
    x, axes_t = op.inputs
    axes = constant_value(axes_t)
    g = _to_kept(op, grad)
    if axes is None or x.shape.ndims is None:
        # NOTE: unknown axes or rank: fall back to y / x (not defined where x == 0).
        y = _output_kept(op)
        ratio = binary_ops.RealDiv(y, x)
        if x.dtype.is_complex:
            ratio = unary_ops.Conj(ratio)
        return _broadcast_back(binary_ops.Mul(g, ratio), x), None
    rank = x.shape.ndims
    order = sorted({int(a) % rank for a in np.asarray(axes).reshape(-1)}) if rank else []
    partials = [x]
    for axis in order:
        partials.append(Prod(partials[-1], [axis], keep_dims=True))
    for k in reversed(range(len(order))):
        z, axis = partials[k], order[k]
        others = binary_ops.Mul(Cumprod(z, axis, exclusive=True),
                     Cumprod(z, axis, exclusive=True, reverse=True))
        g = binary_ops.Mul(g, unary_ops.Conj(others) if x.dtype.is_complex else others)
    return _broadcast_back(g, x), None


@Mean.kernel(factory=True)
def _mean_factory(keep_dims, T):
    out = T.as_numpy_dtype
    integer = T.is_integer
    # NOTE: TF's integer mean does not wrap: mean([100, 100, 100] as int8) is 100.
    acc = (np.uint64 if T.is_unsigned else np.int64) if integer else _accumulator(out)

    def mean_kernel(x, axes):
        axis = _normalize_axes(axes, x.ndim)
        # np.add.reduce is what np.sum runs, without its Python wrapper.
        total = np.add.reduce(x, axis=axis, dtype=acc, keepdims=keep_dims)
        count = math.prod([x.shape[a] for a in axis])
        if integer:
            if count == 0:
                return np.zeros_like(total)
            # NOTE: TF's integer mean is C division: it truncates toward zero.
            quotient = np.abs(total) // count
            return np.where(total < 0, -quotient, quotient).astype(out, copy=False)
        if count:  # dividing by a positive count raises no floating-point flag
            return (total / count).astype(out, copy=False)
        with np.errstate(invalid="ignore", divide="ignore"):
            return (total / count).astype(out, copy=False)

    return mean_kernel


def _count(x, y, dtype):
    """Number of input elements per output element, as a scalar of `dtype`."""
    nx, ny = x.shape.num_elements(), y.shape.num_elements()
    if nx is not None and ny is not None:
        return np.asarray(nx // max(ny, 1), dtype.as_numpy_dtype)
    count = binary_ops.FloorDiv(array_ops.size(x),
                                binary_ops.Maximum(array_ops.size(y), np.int32(1)))
    return cast_ops.cast(count, dtype)


@Mean.gradient
def _mean_grad(op, grad):
    x, y = op.inputs[0], op.outputs[0]
    total = _broadcast_back(_to_kept(op, grad), x)
    return binary_ops.RealDiv(total, _count(x, y, grad.dtype.base_dtype), name="truediv"), None


def _extreme_factory(numpy_fn, take_min: bool):
    def factory(keep_dims, T):
        out = T.as_numpy_dtype
        if T.is_floating:
            initial = np.inf if take_min else -np.inf
        else:
            info = np.iinfo(out)
            initial = info.max if take_min else info.min

        def kernel(x, axes):
            return numpy_fn(x, axis=_normalize_axes(axes, x.ndim), keepdims=keep_dims,
                            initial=initial)

        return kernel

    return factory


Max.kernel(_extreme_factory(np.max, take_min=False), factory=True)


def _min_max_grad(op, grad):
    x, axes = op.inputs
    indicators = cast_ops.cast(comparison_ops.Equal(_output_kept(op), x), grad.dtype.base_dtype)
    selected = Sum(indicators, axes, keep_dims=True)
    return binary_ops.Mul(binary_ops.RealDiv(indicators, selected), _to_kept(op, grad)), None


Max.gradient(_min_max_grad)
Min.kernel(_extreme_factory(np.min, take_min=True), factory=True)


Min.gradient(_min_max_grad)


@All.kernel(factory=True)
def _all_factory(keep_dims):
    def all_kernel(x, axes):
        return np.all(x, axis=_normalize_axes(axes, x.ndim), keepdims=keep_dims)

    return all_kernel


@Any.kernel(factory=True)
def _any_factory(keep_dims):
    def any_kernel(x, axes):
        return np.any(x, axis=_normalize_axes(axes, x.ndim), keepdims=keep_dims)

    return any_kernel


@EuclideanNorm.kernel(factory=True)
def _euclidean_norm_factory(keep_dims, T):
    out = T.as_numpy_dtype
    acc = _accumulator(out)

    def euclidean_norm_kernel(x, axes):
        axis = _normalize_axes(axes, x.ndim)
        if T.is_complex:
            squares = np.real(x * np.conj(x))
        else:
            squares = np.square(x.astype(acc, copy=False))
        return np.sqrt(np.sum(squares, axis=axis, keepdims=keep_dims)).astype(out, copy=False)

    return euclidean_norm_kernel


@EuclideanNorm.gradient
def _euclidean_norm_grad(op, grad):
    x = op.inputs[0]
    return binary_ops.Mul(binary_ops.DivNoNan(x, _output_kept(op)), _to_kept(op, grad)), None


# -- ArgMax / ArgMin ------------------------------------------------------------------------

def _arg_reduction(name, numpy_fn, fill):
    op = define_op(name, inputs=["input: T", "dimension: Tidx"], outputs=["output: output_type"],
                   attrs=["T: {realnumbertype, bool}", "Tidx: {int16, int32, int64} = int32",
                          "output_type: {int16, uint16, int32, int64} = int64"],
                   differentiable=False)

    @op.shape_fn(value_inputs=("dimension",))
    def _shape(input, dimension):
        if input.ndims is None:
            return TensorShape(None)
        if dimension is None:
            return TensorShape([None] * (input.ndims - 1)) if input.ndims else TensorShape(None)
        rank = max(input.ndims, 1)
        axis = int(np.asarray(dimension).reshape(-1)[0])
        if not -rank <= axis < rank:
            raise ValueError(f"Expected dimension in the range [{-rank}, {rank}), but got "
                             f"{axis}")
        axis %= rank
        return TensorShape([d for i, d in enumerate(input._dim_list) if i != axis])

    @op.kernel(factory=True)
    def _factory(T, output_type):
        out = output_type.as_numpy_dtype
        floating = T.is_floating

        def kernel(x, dimension):
            rank = max(x.ndim, 1)
            axis = int(np.asarray(dimension).reshape(-1)[0])
            if not -rank <= axis < rank:
                raise errors.InvalidArgumentError(
                    None, None, f"Expected dimension in the range [{-rank}, {rank}), but got "
                                f"{axis}")
            axis %= rank
            if x.ndim and x.shape[axis] == 0:
                raise errors.InvalidArgumentError(
                    None, None, f"Reduction axis {axis} is empty in shape {list(x.shape)}")
            if floating:
                nan = np.isnan(x)
                if nan.any():  # NaN never wins a comparison in TF's kernel
                    x = np.where(nan, fill, x)
            return numpy_fn(x, axis=axis if x.ndim else None).astype(out, copy=False)

        return kernel

    return op


ArgMax = _arg_reduction("ArgMax", np.argmax, -np.inf)
ArgMin = _arg_reduction("ArgMin", np.argmin, np.inf)


# -- Cumsum / Cumprod -----------------------------------------------------------------------

def _scan(name, numpy_fn, identity):
    op = define_op(name, inputs=["x: T", "axis: Tidx"], outputs=["out: T"],
                   attrs=["exclusive: bool = False", "reverse: bool = False",
                          f"T: {_NUMBER}", "Tidx: {int32, int64} = int32"])

    @op.shape_fn
    def _shape(x, axis):
        return x

    @op.kernel(factory=True)
    def _factory(exclusive, reverse, T):
        out = T.as_numpy_dtype

        def kernel(x, axis):
            if np.ndim(axis) != 0:
                raise errors.InvalidArgumentError(
                    None, None, f"{name}: axis must be a scalar, not {list(np.shape(axis))}")
            axis = int(axis)
            if not -x.ndim <= axis < x.ndim:
                raise errors.InvalidArgumentError(
                    None, None, f"{name}: Expected scan axis in the range [{-x.ndim}, "
                                f"{x.ndim}), but got {axis}")
            axis %= x.ndim
            if reverse:
                x = np.flip(x, axis)
            result = numpy_fn(x, axis=axis, dtype=out)
            if exclusive:
                pad = np.full_like(result, identity)
                index = [slice(None)] * x.ndim
                index[axis] = slice(1, None)
                src = [slice(None)] * x.ndim
                src[axis] = slice(None, -1)
                pad[tuple(index)] = result[tuple(src)]
                result = pad
            return np.flip(result, axis) if reverse else result

        return kernel

    return op


Cumsum = _scan("Cumsum", np.cumsum, 0)


@Cumsum.gradient
def _cumsum_grad(op, grad):
    axis = op.inputs[1]
    return Cumsum(grad, axis, exclusive=op.get_attr("exclusive"),
                      reverse=not op.get_attr("reverse")), None


Cumprod = _scan("Cumprod", np.cumprod, 1)


@Cumprod.gradient
def _cumprod_grad(op, grad):
    x, axis = op.inputs
    exclusive, reverse = op.get_attr("exclusive"), op.get_attr("reverse")
    prod = Cumprod(x, axis, exclusive=exclusive, reverse=reverse)
    out = Cumsum(binary_ops.Mul(prod, grad), axis, exclusive=exclusive, reverse=not reverse)
    return binary_ops.DivNoNan(out, x), None


# -- wrappers -------------------------------------------------------------------------------

def _pick(new_name, new_value, old_name, old_value):
    if new_value is not None and old_value is not None:
        raise ValueError(f"Cannot specify both '{new_name}' and '{old_name}'")
    return new_value if new_value is not None else old_value


def _reduction_dims(x, axis, reduction_indices):
    """The axis tensor: explicit axes, or every axis of `x` when both are None."""
    axis = _pick("axis", axis, "reduction_indices", reduction_indices)
    if axis is not None:
        return axis
    rank = x.shape.ndims
    if rank is not None:
        return np.arange(rank, dtype=np.int32)

    return range_(0, array_ops.rank(x))


def _reduce(op, input_tensor, axis, keepdims, name, reduction_indices, keep_dims, dtype=None):
    keepdims = bool(_pick("keepdims", keepdims, "keep_dims", keep_dims))
    x = convert_to_tensor(input_tensor, dtype=dtype)
    output = op(x, _reduction_dims(x, axis, reduction_indices), keep_dims=keepdims, name=name)
    if axis is None and reduction_indices is None and not keepdims:
        output.set_shape([])  # reducing everything gives a scalar even for unknown ranks
    return output


def reduce_sum(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
               keep_dims=None):
    """Sum of elements across `axis` (all axes when None).

    Args:
        input_tensor: a numeric tensor.
        axis: int, list of ints or int tensor; negative values count from the end.
        keepdims: keep reduced axes with size 1 (`keep_dims` is the deprecated spelling).
        name: op name.
        reduction_indices: deprecated alias of `axis`.

    Returns:
        The reduced tensor, of `input_tensor`'s dtype.

    Raises:
        ValueError: an axis is out of range, or both spellings of an argument are given.

    Example:
        >>> tf.reduce_sum([[1, 2], [3, 4]], axis=1)   # -> [3, 7]
    """
    return _reduce(Sum, input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_mean(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
                keep_dims=None):
    """Mean across `axis`; integer inputs give the truncated integer mean (as TensorFlow)."""
    return _reduce(Mean, input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_max(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
               keep_dims=None):
    """Maximum across `axis`; an empty reduction gives the dtype's lowest value."""
    return _reduce(Max, input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_min(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
               keep_dims=None):
    """Minimum across `axis`; an empty reduction gives the dtype's highest value."""
    return _reduce(Min, input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_prod(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
                keep_dims=None):
    """Product across `axis`."""
    return _reduce(Prod, input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_all(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
               keep_dims=None):
    """Logical AND across `axis` of a bool tensor."""
    return _reduce(All, input_tensor, axis, keepdims, name, reduction_indices, keep_dims,
                   dtype=dtypes.bool_)


def reduce_any(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
               keep_dims=None):
    """Logical OR across `axis` of a bool tensor."""
    return _reduce(Any, input_tensor, axis, keepdims, name, reduction_indices, keep_dims,
                   dtype=dtypes.bool_)


def reduce_euclidean_norm(input_tensor, axis=None, keepdims=None, name=None):
    """sqrt(sum(x**2)) across `axis`."""
    return _reduce(EuclideanNorm, input_tensor, axis, keepdims, name, None, None)


def reduce_logsumexp(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
                     keep_dims=None):
    """log(sum(exp(x))) across `axis`, computed stably by shifting by the (finite) maximum."""

    keepdims = bool(_pick("keepdims", keepdims, "keep_dims", keep_dims))
    graph = graph_mod.get_default_graph()
    with graph.name_scope(name or "ReduceLogSumExp") as scope:
        x = convert_to_tensor(input_tensor)
        axes = _reduction_dims(x, axis, reduction_indices)

        def finite_max(keep):
            raw = Max(x, axes, keep_dims=keep)
            shift = where_v2(unary_ops.is_finite(raw), raw, np.zeros([], x.dtype.as_numpy_dtype))
            return array_ops.stop_gradient(shift)

        shift_kept = finite_max(True)
        shift = shift_kept if keepdims else finite_max(False)
        total = Sum(unary_ops.exp(binary_ops.subtract(x, shift_kept)), axes, keep_dims=keepdims)
        return binary_ops.add(unary_ops.log(total), shift, name=scope)


def reduce_variance(input_tensor, axis=None, keepdims=False, name=None):
    """Variance across `axis`: mean of |x - mean(x)|^2 (real for complex inputs)."""

    graph = graph_mod.get_default_graph()
    with graph.name_scope(name or "reduce_variance") as scope:
        x = convert_to_tensor(input_tensor, name="input_tensor")
        axes = _reduction_dims(x, axis, None)
        deviation = binary_ops.Sub(x, Mean(x, axes, keep_dims=True))
        squared = unary_ops.real(binary_ops.Mul(deviation, unary_ops.conj(deviation)))
        return Mean(squared, axes, keep_dims=bool(keepdims), name=scope)


def reduce_std(input_tensor, axis=None, keepdims=False, name=None):
    """Standard deviation across `axis`: sqrt(reduce_variance)."""

    graph = graph_mod.get_default_graph()
    with graph.name_scope(name or "reduce_std") as scope:
        return unary_ops.sqrt(reduce_variance(input_tensor, axis, keepdims), name=scope)


def count_nonzero(input_tensor, axis=None, keepdims=None, dtype=dtypes.int64, name=None,
                  reduction_indices=None, keep_dims=None):
    """Number of non-zero (or non-empty string) elements across `axis`, as `dtype`."""

    keepdims = bool(_pick("keepdims", keepdims, "keep_dims", keep_dims))
    graph = graph_mod.get_default_graph()
    with graph.name_scope(name or "count_nonzero") as scope:
        x = convert_to_tensor(input_tensor)
        zero = b"" if x.dtype.base_dtype == dtypes.string else np.zeros(
            [], x.dtype.as_numpy_dtype)
        nonzero = cast(not_equal(x, zero), dtypes.int64)
        total = Sum(nonzero, _reduction_dims(x, axis, reduction_indices), keep_dims=keepdims)
        return cast(total, dtype, name=scope)


def _argminmax(op, input, axis, name, dimension, output_type):
    axis = _pick("axis", axis, "dimension", dimension)
    if axis is None:
        axis = 0
    return op(input, axis, output_type=output_type, name=name)


def argmax(input, axis=None, name=None, dimension=None, output_type=dtypes.int64):
    """Index of the largest value along `axis` (0 by default), as `output_type`."""
    return _argminmax(ArgMax, input, axis, name, dimension, output_type)


def argmin(input, axis=None, name=None, dimension=None, output_type=dtypes.int64):
    """Index of the smallest value along `axis` (0 by default), as `output_type`."""
    return _argminmax(ArgMin, input, axis, name, dimension, output_type)


def cumsum(x, axis=0, exclusive=False, reverse=False, name=None):
    """Cumulative sum along `axis`; `exclusive` shifts by one, `reverse` scans from the end.

    Example:
        >>> tf.cumsum([1, 2, 3], exclusive=True, reverse=True)   # -> [5, 3, 0]
    """
    return Cumsum(x, axis, exclusive=exclusive, reverse=reverse, name=name)


def cumprod(x, axis=0, exclusive=False, reverse=False, name=None):
    """Cumulative product along `axis` (see `cumsum` for `exclusive` and `reverse`)."""
    return Cumprod(x, axis, exclusive=exclusive, reverse=reverse, name=name)


def arg_max(input, dimension, output_type=dtypes.int64, name=None):  # noqa: A002 - TF name
    """The index of the largest entry along `dimension` (old name of `tf.math.argmax`)."""
    return argmax(input, axis=dimension, output_type=output_type, name=name)


def arg_min(input, dimension, output_type=dtypes.int64, name=None):  # noqa: A002 - TF name
    """The index of the smallest entry along `dimension` (old name of `tf.math.argmin`)."""
    return argmin(input, axis=dimension, output_type=output_type, name=name)
