"""Shape ops: Shape/Size/Rank, Reshape, ExpandDims, Squeeze, Transpose, BroadcastTo, and the
StridedSlice rule of `constant_value_as_shape` (re-exported from framework.static_values)."""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework.common_shapes import broadcast_shape
from tensorflux.framework.op_def import define_op
from tensorflux.framework.scopes import op_name_scope as _scope
from tensorflux.framework.static_values import constant_value_as_shape, register_shape_value_rule
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import constant as _constant
from tensorflux.framework.tensor_conversion import constant_value, convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape, as_shape, unknown_shape
from tensorflux.ops.array.gradient_helpers import reshape_like
from tensorflux.ops.array.util import INDEX_TYPES as _INDEX_TYPES
from tensorflux.ops.array.util import as_outputs as _as_outputs
from tensorflux.ops.array.util import dims_of as _dims_of
from tensorflux.ops.math.broadcast_gradient import unbroadcast

__all__ = ["shape", "shape_n", "size", "rank", "reshape", "expand_dims", "squeeze", "transpose",
           "matrix_transpose", "invert_permutation", "broadcast_to", "broadcast_static_shape",
           "broadcast_dynamic_shape"]

@register_shape_value_rule("StridedSlice")
def _strided_slice_shape_value(op):
    """The dims a constant slice of a shape tensor picks (`tf.shape(x)[1:]`)."""
    source = constant_value_as_shape(op.inputs[0])
    begin, end, strides = (constant_value(t) for t in op.inputs[1:])
    if (source.ndims is None or begin is None or end is None or strides is None
            or op.get_attr("new_axis_mask")):
        return None
    # cycle: ops.array.slicing -> ops.array.gather_scatter imports this module
    from tensorflux.ops.array.slicing import slice_spec

    masks = {k: op.get_attr(k) for k in ("begin_mask", "end_mask", "ellipsis_mask",
                                         "new_axis_mask", "shrink_axis_mask")}
    picked = np.arange(source.ndims)[slice_spec(begin, end, strides, **masks)]
    if np.ndim(picked) != 1:
        return None
    return TensorShape([source._dim_list[int(i)] for i in picked])


# -- Shape, ShapeN, Size, Rank ---------------------------------------------------------------

Shape = define_op("Shape", inputs=["input: T"], outputs=["output: out_type"],
                  attrs=["T: type", f"out_type: {_INDEX_TYPES}"], differentiable=False)


@Shape.shape_fn
def _shape_shape(input):
    return TensorShape([input.ndims])


@Shape.kernel(factory=True)
def _shape_kernel(out_type):
    np_type = out_type.as_numpy_dtype

    def shape_kernel(x):
        return np.array(np.shape(x), dtype=np_type)

    return shape_kernel


ShapeN = define_op("ShapeN", inputs=["input: N * T"], outputs=["output: N * out_type"],
                   attrs=["N: int >= 1", "T: type", f"out_type: {_INDEX_TYPES}"],
                   differentiable=False)


@ShapeN.shape_fn
def _shape_n_shape(input):
    return [[TensorShape([s.ndims]) for s in input]]


@ShapeN.kernel(factory=True)
def _shape_n_kernel(out_type):
    np_type = out_type.as_numpy_dtype

    def shape_n(*xs):
        return _as_outputs(np.array(np.shape(x), dtype=np_type) for x in xs)

    return shape_n


Size = define_op("Size", inputs=["input: T"], outputs=["output: out_type"],
                 attrs=["T: type", f"out_type: {_INDEX_TYPES}"], differentiable=False)


@Size.shape_fn
def _size_shape(input):
    return TensorShape([])


@Size.kernel(factory=True)
def _size_kernel(out_type):
    np_type = out_type.as_numpy_dtype

    def size_kernel(x):
        return np.array(np.size(x), dtype=np_type)

    return size_kernel


Rank = define_op("Rank", inputs=["input: T"], outputs=["output: int32"], attrs=["T: type"],
                 differentiable=False)
Rank.shape_fn(_size_shape)


@Rank.kernel
def _rank_kernel(x):
    return np.array(np.ndim(x), dtype=np.int32)


def shape(input, name=None, out_type=dtypes.int32):
    """The shape of `input` as a 1-D tensor; a constant when the static shape is fully known."""
    out_type = dtypes.as_dtype(out_type)
    input = _to_tensor_or_sparse(input)
    if not isinstance(input, Tensor):
        # cycle: ops.math.casting -> ... imports this module (at import time)
        from tensorflux.ops.math.casting import cast

        return cast(input.dense_shape, out_type, name=name)
    if input.shape.is_fully_defined():
        return _constant(input.shape.as_list(), out_type, name=name or "Shape")
    return Shape(input, out_type=out_type, name=name)


def _to_tensor_or_sparse(value):
    if hasattr(value, "dense_shape") and hasattr(value, "values") and hasattr(value, "indices"):
        return value
    return convert_to_tensor(value)


def shape_n(input, out_type=dtypes.int32, name=None):
    """The shapes of a list of tensors (one ShapeN op)."""
    return ShapeN(list(input), out_type=out_type, name=name)


def size(input, name=None, out_type=dtypes.int32):
    """The number of elements of `input`; a constant when the static shape is fully known."""
    out_type = dtypes.as_dtype(out_type)
    input = _to_tensor_or_sparse(input)
    if not isinstance(input, Tensor):
        # cycle: ops.math.casting -> ... imports this module (at import time)
        from tensorflux.ops.math.casting import cast

        # cycle: ops.math -> ... imports this module (at import time)
        from tensorflux.ops.math.reduction import reduce_prod

        return reduce_prod(cast(input.dense_shape, out_type), name=name)
    if input.shape.is_fully_defined():
        return _constant(input.shape.num_elements(), out_type, name=name or "Size")
    return Size(input, out_type=out_type, name=name)


def rank(input, name=None):
    """The number of dimensions of `input`; a constant when the static rank is known."""
    input = _to_tensor_or_sparse(input)
    if not isinstance(input, Tensor):
        return size(input.dense_shape, name=name)
    if input.shape.ndims is not None:
        return _constant(input.shape.ndims, dtypes.int32, name=name or "Rank")
    return Rank(input, name=name)


# -- Reshape, ExpandDims, Squeeze --------------------------------------------------------------

Reshape = define_op("Reshape", inputs=["tensor: T", "shape: Tshape"], outputs=["output: T"],
                    attrs=["T: type", f"Tshape: {_INDEX_TYPES}"])


def _reshape_dims(input: TensorShape, dims: list) -> list:
    unknown = [i for i, d in enumerate(dims) if d is None or d == -1]
    for d in dims:
        if d is not None and d < -1:
            raise ValueError(f"Size must be non-negative or -1, not {d}")
    if sum(1 for d in dims if d == -1) > 1:
        raise ValueError(f"Cannot infer multiple unknown dimensions in shape {dims}")
    known = int(np.prod([d for d in dims if d is not None and d >= 0], dtype=np.int64))
    count = input.num_elements()
    out = [None if d is None or d == -1 else d for d in dims]
    if count is None:
        known_in = int(np.prod([d for d in input._dim_list or () if d is not None], dtype=np.int64))
        if input.ndims is not None and not unknown and known_in and known % known_in:
            raise ValueError(f"Dimension size must be evenly divisible by {known_in} but is "
                             f"{known} (input shape {input}, requested shape {dims})")
        return out
    if not unknown:
        if known != count:
            raise ValueError(f"Cannot reshape a tensor with {count} elements to shape {dims} "
                             f"({known} elements)")
    elif len(unknown) == 1 and 0 in dims and dims[unknown[0]] == -1:
        missing = _missing_for_zero_sizes(input.as_list(), dims)
        if missing is not None:
            out[unknown[0]] = missing
    elif len(unknown) == 1 and known > 0:
        if count % known:
            raise ValueError(f"Dimension size must be evenly divisible by {known} but is "
                             f"{count}: cannot reshape a tensor with {count} elements to "
                             f"shape {dims}")
        out[unknown[0]] = count // known
    return out


@Reshape.shape_fn(value_inputs=("shape",))
def _reshape_shape(tensor, shape):
    if shape is None:
        return TensorShape(None)
    return TensorShape(_reshape_dims(tensor, _dims_of(shape, "shape")))


def _missing_for_zero_sizes(input_dims, dims):
    """The -1 entry of `dims` when `dims` has a 0 (TF's rule: zero-sized dims on both sides
    are left out of the element counts, so [0, 6] reshaped to [0, -1] is [0, 6])."""
    product = int(np.prod([d for d in dims if d is not None and d > 0], dtype=np.int64))
    in_count = int(np.prod([d for d in input_dims if d != 0], dtype=np.int64))
    if product == 0 or in_count % product:
        return None
    return in_count // product


@Reshape.kernel
def _reshape_kernel(tensor, shape):
    dims = np.asarray(shape).tolist()
    if tensor.size == 0 and 0 in dims and dims.count(-1) == 1:
        missing = _missing_for_zero_sizes(list(tensor.shape), dims)
        if missing is not None:
            return tensor.reshape([missing if d == -1 else d for d in dims])
    try:
        return tensor.reshape(dims)
    except (ValueError, TypeError):
        dims = np.asarray(shape).tolist()
        known = int(np.prod([d for d in dims if d != -1], dtype=np.int64))
        if dims.count(-1) > 1:
            detail = f"only one input size may be -1, got shape {dims}"
        elif -1 in dims:
            detail = f"the requested shape {dims} requires a multiple of {known}"
        else:
            detail = f"the requested shape {dims} has {known}"
        raise errors.InvalidArgumentError(
            None, None, f"Input to reshape is a tensor with {tensor.size} values, but "
                        f"{detail}") from None


@Reshape.gradient
def _reshape_grad(op, grad):
    return [reshape_like(grad, op.inputs[0]), None]


def _refine(output: Tensor, shape_tensor) -> Tensor:
    """Merges the partially constant shape `shape_tensor` denotes into `output`'s shape."""
    if output.shape.is_fully_defined():
        return output
    static = constant_value_as_shape(shape_tensor)
    if static.ndims is not None and output.shape.is_compatible_with(static):
        output.set_shape(static)
    return output


def reshape(tensor, shape, name=None):
    """Gives `tensor` a new shape with the same elements.

    Args:
        tensor: a Tensor (or value convertible to one).
        shape: a 1-D int32/int64 shape; one entry may be -1 (inferred). May be a list holding
            tensors, e.g. `[tf.shape(x)[0], -1]`; known entries become the static shape.

    Returns:
        A Tensor with `tensor`'s elements in row-major order.

    Raises:
        ValueError: the element counts differ and both are known at graph construction.
        InvalidArgumentError: (at run time) the element counts differ.

    Example:
        >>> tf.reshape(tf.range(6), [2, -1])   # -> [[0, 1, 2], [3, 4, 5]]
    """
    result = Reshape(tensor, shape, name=name)  # a Python shape becomes "Reshape/shape"
    tensor, shape = result.op.inputs
    if result.shape.ndims is None or not result.shape.is_fully_defined():
        static = constant_value_as_shape(shape)
        if static.ndims is not None:
            dims = list(static._dim_list)
            try:
                dims = _reshape_dims(tensor.shape, dims)
            except ValueError as err:
                raise ValueError(f"Reshape '{result.op.name}': {err}") from None
            result.set_shape(result.shape.merge_with(TensorShape(dims))
                             if result.shape.is_compatible_with(dims) else dims)
    return result


ExpandDims = define_op("ExpandDims", inputs=["input: T", "dim: Tdim"], outputs=["output: T"],
                       attrs=["T: type", f"Tdim: {_INDEX_TYPES}"])


@ExpandDims.shape_fn(value_inputs=("dim",))
def _expand_dims_shape(input, dim):
    if dim is None or input.ndims is None:
        return TensorShape(None)
    if np.size(dim) != 1:
        raise ValueError(f"'dim' input must be a tensor with a single value, got {np.size(dim)}")
    axis = int(np.reshape(dim, [-1])[0])
    rank = input.ndims
    if not -rank - 1 <= axis <= rank:
        raise ValueError(f"dim {axis} not in the interval [{-rank - 1}, {rank}].")
    if axis < 0:
        axis += rank + 1
    dims = list(input._dim_list)
    return TensorShape(dims[:axis] + [1] + dims[axis:])


@ExpandDims.kernel
def _expand_dims_kernel(x, dim):
    axis = int(dim) if np.ndim(dim) == 0 else int(np.reshape(dim, [-1])[0])
    x = np.asarray(x)
    rank = x.ndim
    if not -rank - 1 <= axis <= rank:
        raise errors.InvalidArgumentError(
            None, None, f"Tried to expand dim index {axis} for tensor with {rank} "
                        "dimensions.")
    if axis < 0:
        axis += rank + 1
    # A view with a new unit axis, as np.expand_dims makes, without its Python wrapper.
    return x.reshape(x.shape[:axis] + (1,) + x.shape[axis:])


@ExpandDims.gradient
def _expand_dims_grad(op, grad):
    return [reshape_like(grad, op.inputs[0]), None]


def expand_dims(input, axis=None, name=None, dim=None):
    """Inserts a dimension of size 1 at `axis` (TF1 `tf.expand_dims`; `dim` is deprecated)."""
    if dim is not None:
        if axis is not None:
            raise ValueError("Cannot specify both 'axis' and 'dim'")
        axis = dim
    if axis is None:
        raise ValueError("Must specify an axis argument to tf.expand_dims()")
    return ExpandDims(input, axis, name=name)


Squeeze = define_op("Squeeze", inputs=["input: T"], outputs=["output: T"],
                    attrs=["T: type", "squeeze_dims: list(int) = []"])


def _canonical_axes(axes, rank: int, what: str) -> list:
    out = []
    for axis in axes:
        if not -rank <= axis < rank:
            raise ValueError(f"Tried to {what} dim index {axis} for tensor with {rank} "
                             "dimensions.")
        out.append(axis + rank if axis < 0 else axis)
    return out


@Squeeze.shape_fn
def _squeeze_shape(input, *, squeeze_dims):
    if input.ndims is None:
        return TensorShape(None)
    axes = set(_canonical_axes(squeeze_dims, input.ndims, "squeeze"))
    out = []
    for i, d in enumerate(input._dim_list):
        if axes:
            if i in axes:
                if d is not None and d != 1:
                    raise ValueError(f"Can not squeeze dim[{i}], expected a dimension of 1, "
                                     f"got {d}")
                continue
        elif d == 1:
            continue
        elif d is None:
            return TensorShape(None)
        out.append(d)
    return TensorShape(out)


@Squeeze.kernel(factory=True)
def _squeeze_kernel(squeeze_dims):
    axes = tuple(squeeze_dims) or None

    def squeeze_kernel(x):
        try:
            return np.squeeze(x, axis=axes)
        except (ValueError, np.exceptions.AxisError):
            raise errors.InvalidArgumentError(
                None, None, f"Can not squeeze dims {list(squeeze_dims)} of a tensor of shape "
                            f"{list(x.shape)}: expected dimensions of size 1.") from None

    return squeeze_kernel


@Squeeze.gradient
def _squeeze_grad(op, grad):
    return reshape_like(grad, op.inputs[0])


def squeeze(input, axis=None, name=None, squeeze_dims=None):
    """Removes dimensions of size 1 (all of them, or those in `axis`)."""
    if squeeze_dims is not None:
        if axis is not None:
            raise ValueError("Cannot specify both 'squeeze_dims' and 'axis'")
        axis = squeeze_dims
    if isinstance(axis, (int, np.integer)):
        axis = [axis]
    return Squeeze(input, squeeze_dims=list(axis or []), name=name)


# -- Transpose, InvertPermutation ------------------------------------------------------------

Transpose = define_op("Transpose", inputs=["x: T", "perm: Tperm"], outputs=["y: T"],
                      attrs=["T: type", f"Tperm: {_INDEX_TYPES}"])
ConjugateTranspose = define_op("ConjugateTranspose", inputs=["x: T", "perm: Tperm"],
                               outputs=["y: T"], attrs=["T: type", f"Tperm: {_INDEX_TYPES}"])


def _check_perm(perm: list, rank: int) -> None:
    if len(perm) != rank:
        raise ValueError(f"transpose expects a vector of size {rank}. But input(1) is a vector "
                         f"of size {len(perm)}")
    for p in perm:
        if not 0 <= p < rank:
            raise ValueError(f"perm dim {p} is out of range of input rank {rank}")
    # A repeated entry is found by the kernel (as TF: "2 is missing from {0,1,1}").


@Transpose.shape_fn(value_inputs=("perm",))
def _transpose_shape(x, perm):
    if perm is None:
        return unknown_shape(x.ndims)
    perm = _dims_of(perm, "perm")
    if x.ndims is None:
        return unknown_shape(len(perm))
    perm = [p + x.ndims if p < 0 else p for p in perm]
    _check_perm(perm, x.ndims)
    return TensorShape([x._dim_list[p] for p in perm])


def _transpose_kernel(x, perm):
    values = np.reshape(perm, [-1]).tolist()
    if len(values) == np.ndim(x) and all(-len(values) <= p < len(values) for p in values):
        seen = {p % len(values) for p in values}
        for d in range(len(values)):
            if d not in seen:
                raise errors.InvalidArgumentError(
                    None, None, f"{d} is missing from {{{','.join(str(p) for p in values)}}}.")
    try:
        return np.transpose(x, perm)
    except (ValueError, np.exceptions.AxisError):
        raise errors.InvalidArgumentError(
            None, None, f"transpose: perm {np.asarray(perm).tolist()} is not a permutation of "
                        f"the {np.ndim(x)} dimensions of the input") from None


Transpose.kernel(_transpose_kernel)


def _transpose_grad_common(op, grad, conjugate):
    perm = op.inputs[1]
    value = constant_value(perm)
    if value is not None:
        inverse = [0] * len(value)
        for i, p in enumerate(value.tolist()):
            inverse[p % len(value)] = i
    else:
        inverse = invert_permutation(perm)
    return [transpose(grad, inverse, conjugate=conjugate), None]


@Transpose.gradient
def _transpose_grad(op, grad):
    return _transpose_grad_common(op, grad, False)


ConjugateTranspose.shape_fn(value_inputs=("perm",))(_transpose_shape)


@ConjugateTranspose.kernel
def _conjugate_transpose_kernel(x, perm):
    return np.conj(_transpose_kernel(x, perm))


@ConjugateTranspose.gradient
def _conjugate_transpose_grad(op, grad):
    return _transpose_grad_common(op, grad, True)


def transpose(a, perm=None, name="transpose", conjugate=False):
    """Permutes the dimensions of `a` (reversed when `perm` is None)."""
    with _scope(name, "transpose") as scope:
        a = convert_to_tensor(a, name="a")
        op = ConjugateTranspose if conjugate and a.dtype.is_complex else Transpose
        if perm is None:
            if a.shape.ndims is not None:
                perm = _constant(list(range(a.shape.ndims - 1, -1, -1)), dtypes.int32,
                                 name="perm")
            else:
                # cycle: ops.math.binary -> ... imports this module (at import time)
                from tensorflux.ops.math.binary import subtract

                # cycle: ops.math -> ... imports this module (at import time)
                from tensorflux.ops.math.sequence import range as range_op

                rank_t = Rank(a, name="Rank")
                perm = subtract(subtract(rank_t, 1), range_op(0, rank_t, 1))
        return op(a, perm, name=scope)


def matrix_transpose(a, name="matrix_transpose", conjugate=False):
    """Transposes the last two dimensions of `a`."""
    with _scope(name, "matrix_transpose") as scope:
        a = convert_to_tensor(a, name="a")
        ndims = a.shape.ndims
        if ndims is None:
            raise ValueError("matrix_transpose needs a tensor of known rank")
        if ndims < 2:
            raise ValueError(f"Argument 'a' should be a (batch) matrix, with rank >= 2. Found: "
                             f"{a.shape}")
        perm = list(range(ndims - 2)) + [ndims - 1, ndims - 2]
        del scope
        return transpose(a, perm, conjugate=conjugate)


InvertPermutation = define_op("InvertPermutation", inputs=["x: T"], outputs=["y: T"],
                              attrs=["T: {int32, int64} = int32"], differentiable=False)


@InvertPermutation.shape_fn
def _invert_permutation_shape(x):
    return x.with_rank(1)


@InvertPermutation.kernel
def _invert_permutation_kernel(x):
    n = x.shape[0]
    if x.size and (x.min() < 0 or x.max() >= n or np.unique(x).size != n):
        raise errors.InvalidArgumentError(
            None, None, f"x is not a valid permutation of [0, {n}): {x.tolist()}")
    y = np.empty_like(x)
    y[x] = np.arange(n, dtype=x.dtype)
    return y


def invert_permutation(x, name=None):
    """The inverse permutation: `y[x[i]] = i`."""
    return InvertPermutation(x, name=name)


# -- BroadcastTo, BroadcastArgs --------------------------------------------------------------

BroadcastTo = define_op("BroadcastTo", inputs=["input: T", "shape: Tidx"],
                        outputs=["output: T"], attrs=["T: type", f"Tidx: {_INDEX_TYPES}"])


@BroadcastTo.shape_fn(value_inputs=("shape",))
def _broadcast_to_shape(input, shape):
    if shape is None:
        return TensorShape(None)
    target = TensorShape(_dims_of(shape, "shape"))
    if input.ndims is not None and input.ndims > target.ndims:
        raise ValueError(f"Rank of input ({input.ndims}) must be no greater than rank of "
                         f"output shape ({target.ndims}).")
    try:
        out = broadcast_shape(input, target)
    except ValueError as err:
        # TF's wording ends with the requested shape as computed: "input[1] = [2,3]".
        dims = ",".join("?" if d is None else str(d) for d in target.as_list())
        raise ValueError(f"{err}; with input tensors computed as partial shapes: "
                         f"input[1] = [{dims}]") from None
    if out != target:
        raise ValueError(f"Unable to broadcast tensor of shape {input} to {target}")
    return target


@BroadcastTo.kernel
def _broadcast_to_kernel(x, shape):
    try:
        return np.broadcast_to(x, shape)
    except ValueError:
        raise errors.InvalidArgumentError(
            None, None, f"Unable to broadcast tensor of shape {list(x.shape)} to tensor of "
                        f"shape {shape.tolist()}") from None


@BroadcastTo.gradient
def _broadcast_to_grad(op, grad):
    return [unbroadcast(grad, op.inputs[0]), None]


def broadcast_to(input, shape, name=None):
    """Broadcasts `input` to `shape` with NumPy rules."""
    shape = convert_to_tensor(shape, preferred_dtype=dtypes.int32)
    return _refine(BroadcastTo(input, shape, name=name), shape)


BroadcastArgs = define_op("BroadcastArgs", inputs=["s0: T", "s1: T"], outputs=["r0: T"],
                          attrs=["T: {int32, int64} = int32"], differentiable=False)


@BroadcastArgs.shape_fn
def _broadcast_args_shape(s0, s1):
    # The output's length is the longer input's: known when both lengths are (TF).
    a, b = s0.with_rank(1)._dim_list[0], s1.with_rank(1)._dim_list[0]
    return TensorShape([None if a is None or b is None else max(a, b)])


@BroadcastArgs.kernel
def _broadcast_args_kernel(s0, s1):
    try:
        out = np.broadcast_shapes(tuple(s0.tolist()), tuple(s1.tolist()))
    except ValueError:
        raise errors.InvalidArgumentError(
            None, None, f"Incompatible shapes: {s0.tolist()} vs. {s1.tolist()}") from None
    return np.array(out, dtype=s0.dtype)


def broadcast_dynamic_shape(shape_x, shape_y):
    """The broadcast of two shape vectors, computed at run time (BroadcastArgs)."""
    return BroadcastArgs(shape_x, shape_y)


def broadcast_static_shape(shape_x, shape_y) -> TensorShape:
    """The broadcast of two TensorShapes; ValueError when incompatible."""
    shape_x, shape_y = as_shape(shape_x), as_shape(shape_y)
    try:
        return broadcast_shape(shape_x, shape_y)
    except ValueError:
        raise ValueError(f"Incompatible shapes for broadcasting: {shape_x} and {shape_y}") \
            from None
