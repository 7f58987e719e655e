"""Array ops: constants, placeholders, identity, shapes, reshaping and filling.

This module is the `array_ops` namespace of TensorFlow: it re-exports the rest of the family
(`concat_ops`, `slicing_ops`, `partition_ops`, `diag_ops`), and importing it registers their
gradients (`array_grad`).
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import _infer_numpy, constant_value, convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape, as_shape, unknown_shape
from tensorflux.ops.common_shapes import broadcast_shape

__all__ = [
    "constant", "placeholder", "placeholder_with_default", "identity", "identity_n",
    "stop_gradient", "prevent_gradient", "ensure_shape", "shape", "shape_n", "size", "rank",
    "reshape", "expand_dims", "squeeze", "transpose", "matrix_transpose",
    "invert_permutation", "fill", "zeros", "ones", "zeros_like", "ones_like", "broadcast_to",
    "broadcast_static_shape", "broadcast_dynamic_shape", "newaxis",
]

newaxis = None

_INDEX_TYPES = "{int32, int64} = int32"


def _scope(name, default):
    return graph_mod.get_default_graph().name_scope(name or default)


def _as_outputs(items):
    """Kernel results for a list output: the value itself when the op has one output."""
    items = tuple(items)
    return items[0] if len(items) == 1 else items


def _dims_of(value, what: str) -> list:
    """A constant 1-D shape vector as a list of ints; ValueError naming `what` otherwise."""
    array = np.asarray(value)
    if array.ndim != 1:
        raise ValueError(f"{what} must be a vector (rank 1), got shape {list(array.shape)}")
    return [int(d) for d in array]


def constant_value_as_shape(tensor) -> TensorShape:
    """The (partially) known shape a 1-D shape tensor describes; -1 or unknown entries are None.

    Follows Shape, Pack, ConcatV2 and constant subgraphs, so `tf.stack([tf.shape(x)[0], 3])`
    gives `[None, 3]`.
    """
    tensor = convert_to_tensor(tensor)
    if tensor.shape.ndims == 0:
        value = constant_value(tensor)
        if value is not None and int(value) == -1:
            return TensorShape(None)
        return TensorShape(None)
    value = constant_value(tensor)
    if value is not None:
        return TensorShape([None if int(d) < 0 else int(d) for d in np.reshape(value, [-1])])
    op = tensor.op
    if op.type == "Shape":
        return op.inputs[0].shape
    if op.type == "Pack":
        dims = []
        for item in op.inputs:
            item_value = constant_value(item)
            dims.append(None if item_value is None or int(item_value) < 0 else int(item_value))
        return TensorShape(dims)
    if op.type == "ConcatV2":
        result = TensorShape([])
        for item in op.inputs[:-1]:
            result = result.concatenate(constant_value_as_shape(item))
        return result
    if op.type == "StridedSlice" and op.inputs[0].op.type == "Shape":
        source = op.inputs[0].op.inputs[0].shape
        begin, end, strides = (constant_value(t) for t in op.inputs[1:])
        if (source.ndims is not None and begin is not None and end is not None
                and strides is not None and not op.get_attr("new_axis_mask")):
            from tensorflux.ops.slicing_ops import slice_spec

            masks = {k: op.get_attr(k) for k in ("begin_mask", "end_mask", "ellipsis_mask",
                                                 "new_axis_mask", "shrink_axis_mask")}
            picked = np.arange(source.ndims)[slice_spec(begin, end, strides, **masks)]
            if np.ndim(picked) == 1:
                return TensorShape([source.dims[int(i)] for i in picked])
    length = tensor.shape.with_rank(1).dims[0]
    return unknown_shape(length)


# -- Const ----------------------------------------------------------------------------------

Const = define_op("Const", outputs=["output: dtype"], attrs=["value: tensor", "dtype: type"],
                  differentiable=False)


@Const.shape_fn
def _const_shape(*, value):
    return TensorShape(np.shape(value))


@Const.kernel(factory=True)
def _const_kernel(value):
    frozen = np.array(value, copy=True)
    frozen.flags.writeable = False

    def const():
        return frozen

    return const


def constant(value, dtype=None, shape=None, name="Const", verify_shape=False):
    """A constant tensor from a Python or NumPy value (TF1 `tf.constant`)."""
    dtype = dtypes.as_dtype(dtype) if dtype is not None else None
    array = _infer_numpy(value, dtype)
    if shape is not None:
        shape = [int(d) for d in as_shape(shape).as_list()]
        if verify_shape and list(array.shape) != shape:
            raise TypeError(f"Expected Tensor's shape: {tuple(shape)}, got {array.shape}.")
        count = int(np.prod(shape))
        if array.size == count:
            array = array.reshape(shape)
        elif array.size == 1:
            array = np.full(shape, array.reshape(-1)[0], dtype=array.dtype)
        elif array.size < count:
            flat = array.reshape(-1)
            array = np.concatenate([flat, np.repeat(flat[-1:], count - flat.size)]).reshape(shape)
        else:
            raise TypeError(f"Too many elements provided. Needed at most {count}, but received "
                            f"{array.size}")
    array = np.array(array, copy=True)
    return Const(value=array, dtype=dtype or dtypes.as_dtype(array.dtype), name=name)


# -- Placeholders and Identity ---------------------------------------------------------------

Placeholder = define_op("Placeholder", outputs=["output: dtype"],
                        attrs=["dtype: type", "shape: shape = None"], differentiable=False)


@Placeholder.shape_fn
def _placeholder_shape(*, shape):
    return TensorShape(None) if shape is None else shape


@Placeholder.kernel
def _placeholder_kernel(*, dtype, shape):
    raise errors.InvalidArgumentError(
        None, None, f"You must feed a value for placeholder tensor with dtype {dtype.name}")


def placeholder(dtype, shape=None, name=None):
    """A tensor that must be fed (TF1 `tf.placeholder`)."""
    return Placeholder(dtype=dtype, shape=None if shape is None else as_shape(shape), name=name)


PlaceholderWithDefault = define_op(
    "PlaceholderWithDefault", inputs=["input: dtype"], outputs=["output: dtype"],
    attrs=["dtype: type", "shape: shape"])


@PlaceholderWithDefault.shape_fn
def _placeholder_with_default_shape(input, *, shape):
    if not input.is_compatible_with(shape) and shape.ndims is not None:
        raise ValueError(f"default value shape {input} is not compatible with shape {shape}")
    return shape


@PlaceholderWithDefault.kernel
def _placeholder_with_default_kernel(value):
    return value


def placeholder_with_default(input, shape, name=None):
    """A placeholder that passes `input` through when not fed."""
    value = convert_to_tensor(input)
    return PlaceholderWithDefault(value, dtype=value.dtype.base_dtype, shape=as_shape(shape),
                                  name=name)


Identity = define_op("Identity", inputs=["input: T"], outputs=["output: T"], attrs=["T: type"])


@Identity.shape_fn
def _identity_shape(input):
    return input


@Identity.kernel
def _identity_kernel(x):
    return x


def identity(input, name=None):
    """Returns a tensor with the same value (TF1 `tf.identity`)."""
    value = convert_to_tensor(input)
    return Identity(value, name=name)


IdentityN = define_op("IdentityN", inputs=["input: T"], outputs=["output: T"],
                      attrs=["T: list(type)"])


@IdentityN.shape_fn
def _identity_n_shape(input):
    return [input]


@IdentityN.kernel
def _identity_n_kernel(*values):
    return _as_outputs(values)


def identity_n(input, name=None):
    """Returns the list of tensors `input` unchanged, as one op (TF1 `tf.identity_n`)."""
    return IdentityN(list(input), name=name)


StopGradient = define_op("StopGradient", inputs=["input: T"], outputs=["output: T"],
                         attrs=["T: type"], differentiable=False)
StopGradient.shape_fn(_identity_shape)
StopGradient.kernel(_identity_kernel)


def stop_gradient(input, name=None):
    """Passes `input` through while blocking gradients (TF1 `tf.stop_gradient`)."""
    return StopGradient(input, name=name)


PreventGradient = define_op("PreventGradient", inputs=["input: T"], outputs=["output: T"],
                            attrs=["T: type", "message: string = ''"])
PreventGradient.shape_fn(_identity_shape)
PreventGradient.kernel(_identity_kernel)


def prevent_gradient(input, message="", name=None):
    """Identity whose gradient is an error (LookupError carrying `message`)."""
    return PreventGradient(input, message=message, name=name)


EnsureShape = define_op("EnsureShape", inputs=["input: T"], outputs=["output: T"],
                        attrs=["shape: shape", "T: type"])


@EnsureShape.shape_fn
def _ensure_shape_shape(input, *, shape):
    if not input.is_compatible_with(shape):
        raise ValueError(f"Shapes {input} and {shape} are incompatible")
    return input.merge_with(shape)


@EnsureShape.kernel(factory=True)
def _ensure_shape_kernel(shape):
    expected = shape

    def ensure_shape(x):
        if not expected.is_compatible_with(x.shape):
            raise errors.InvalidArgumentError(
                None, None, f"Shape of tensor {list(x.shape)} is not compatible with expected "
                            f"shape {expected}.")
        return x

    return ensure_shape


def ensure_shape(x, shape, name=None):
    """Checks at run time that `x` has a shape compatible with `shape`; returns `x`."""
    return EnsureShape(x, shape=as_shape(shape), name=name)


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
        from tensorflux.ops.math_ops import cast

        return cast(input.dense_shape, out_type, name=name)
    if input.shape.is_fully_defined():
        return constant(input.shape.as_list(), out_type, name=name or "Shape")
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
        from tensorflux.ops.math_ops import cast
        from tensorflux.ops.reduction_ops import reduce_prod

        return reduce_prod(cast(input.dense_shape, out_type), name=name)
    if input.shape.is_fully_defined():
        return constant(input.shape.num_elements(), out_type, name=name or "Size")
    return Size(input, out_type=out_type, name=name)


def rank(input, name=None):
    """The number of dimensions of `input`; a constant when the static rank is known."""
    input = _to_tensor_or_sparse(input)
    if not isinstance(input, Tensor):
        return size(input.dense_shape, name=name)
    if input.shape.ndims is not None:
        return constant(input.shape.ndims, dtypes.int32, name=name or "Rank")
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
        known_in = int(np.prod([d for d in input.dims or () if d is not None], dtype=np.int64))
        if input.ndims is not None and not unknown and known_in and known % known_in:
            raise ValueError(f"Dimension size must be evenly divisible by {known_in} but is "
                             f"{known} (input shape {input}, requested shape {dims})")
        return out
    if not unknown:
        if known != count:
            raise ValueError(f"Cannot reshape a tensor with {count} elements to shape {dims} "
                             f"({known} elements)")
    elif len(unknown) == 1 and known > 0:
        if count % known:
            raise ValueError(f"Cannot reshape a tensor with {count} elements to shape {dims}: "
                             f"{count} is not divisible by {known}")
        out[unknown[0]] = count // known
    return out


@Reshape.shape_fn(value_inputs=("shape",))
def _reshape_shape(tensor, shape):
    if shape is None:
        return TensorShape(None)
    return TensorShape(_reshape_dims(tensor, _dims_of(shape, "shape")))


@Reshape.kernel
def _reshape_kernel(tensor, shape):
    try:
        return tensor.reshape(shape)
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


def _refine(output: Tensor, shape_tensor) -> Tensor:
    """Merges the partially constant shape `shape_tensor` denotes into `output`'s shape."""
    if output.shape.is_fully_defined():
        return output
    static = constant_value_as_shape(shape_tensor)
    if static.ndims is not None and output.shape.is_compatible_with(static):
        output.set_shape(static)
    return output


def reshape(tensor, shape, name=None):
    """Gives `tensor` a new shape with the same elements (one dimension may be -1)."""
    tensor = convert_to_tensor(tensor)
    shape = convert_to_tensor(shape, preferred_dtype=dtypes.int32)
    result = Reshape(tensor, shape, name=name)
    if result.shape.ndims is None or not result.shape.is_fully_defined():
        static = constant_value_as_shape(shape)
        if static.ndims is not None:
            dims = list(static.dims)
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
    dims = list(input.dims)
    return TensorShape(dims[:axis] + [1] + dims[axis:])


@ExpandDims.kernel
def _expand_dims_kernel(x, dim):
    axis = int(dim) if np.ndim(dim) == 0 else int(np.reshape(dim, [-1])[0])
    try:
        return np.expand_dims(x, axis)
    except np.exceptions.AxisError:
        raise errors.InvalidArgumentError(
            None, None, f"Tried to expand dim index {axis} for tensor with {np.ndim(x)} "
                        "dimensions.") from None


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
    for i, d in enumerate(input.dims):
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
    if sorted(perm) != list(range(rank)):
        raise ValueError(f"perm {perm} is not a permutation of [0, {rank})")


@Transpose.shape_fn(value_inputs=("perm",))
def _transpose_shape(x, perm):
    if perm is None:
        return unknown_shape(x.ndims)
    perm = _dims_of(perm, "perm")
    if x.ndims is None:
        return unknown_shape(len(perm))
    perm = [p + x.ndims if p < 0 else p for p in perm]
    _check_perm(perm, x.ndims)
    return TensorShape([x.dims[p] for p in perm])


def _transpose_kernel(x, perm):
    try:
        return np.transpose(x, perm)
    except (ValueError, np.exceptions.AxisError):
        raise errors.InvalidArgumentError(
            None, None, f"transpose: perm {np.asarray(perm).tolist()} is not a permutation of "
                        f"the {np.ndim(x)} dimensions of the input") from None


Transpose.kernel(_transpose_kernel)
ConjugateTranspose.shape_fn(value_inputs=("perm",))(_transpose_shape)


@ConjugateTranspose.kernel
def _conjugate_transpose_kernel(x, perm):
    return np.conj(_transpose_kernel(x, perm))


def transpose(a, perm=None, name="transpose", conjugate=False):
    """Permutes the dimensions of `a` (reversed when `perm` is None)."""
    with _scope(name, "transpose") as scope:
        a = convert_to_tensor(a, name="a")
        op = ConjugateTranspose if conjugate and a.dtype.is_complex else Transpose
        if perm is None:
            if a.shape.ndims is not None:
                perm = constant(list(range(a.shape.ndims - 1, -1, -1)), dtypes.int32,
                                name="perm")
            else:
                from tensorflux.ops.math_ops import range as range_op
                from tensorflux.ops.math_ops import subtract

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
        return transpose(a, perm, name=scope[:-1] + "/", conjugate=conjugate)


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


# -- Fill, zeros, ones -----------------------------------------------------------------------

Fill = define_op("Fill", inputs=["dims: index_type", "value: T"], outputs=["output: T"],
                 attrs=["T: type", f"index_type: {_INDEX_TYPES}"])


@Fill.shape_fn(value_inputs=("dims",))
def _fill_shape(dims, value):
    value.with_rank(0)
    if dims is None:
        return TensorShape(None)
    dims = _dims_of(dims, "dims")
    if any(d < 0 for d in dims):
        raise ValueError(f"Fill dimensions must be >= 0, got {dims}")
    return TensorShape(dims)


@Fill.kernel
def _fill_kernel(dims, value):
    if np.ndim(value) != 0:
        raise errors.InvalidArgumentError(
            None, None, f"value must be a scalar, got shape {list(np.shape(value))}")
    if dims.ndim != 1 or (dims.size and dims.min() < 0):
        raise errors.InvalidArgumentError(
            None, None, f"dims must be a vector of non-negative sizes, got {dims.tolist()}")
    return np.full(dims, value, dtype=value.dtype)


def fill(dims, value, name=None):
    """A tensor of shape `dims` filled with the scalar `value`."""
    dims = convert_to_tensor(dims, preferred_dtype=dtypes.int32)
    return _refine(Fill(dims, value, name=name), dims)


def _filled(shape, dtype, number, name, default):
    dtype = dtypes.as_dtype(dtype).base_dtype
    with _scope(name, default) as scope:
        if not isinstance(shape, Tensor):
            try:
                dims = as_shape(shape)
                if dims.is_fully_defined() and (dims.num_elements() or 0) < 1000:
                    array = np.full(dims.as_list(), number, dtype=dtype.as_numpy_dtype)
                    if dtype is dtypes.string:
                        array = np.full(dims.as_list(), b"", dtype=object)
                    return Const(value=array, dtype=dtype, name=scope)
            except (TypeError, ValueError):
                pass
        shape = convert_to_tensor(shape, dtype=dtypes.int32) if not isinstance(shape, Tensor) \
            else shape
        value = b"" if dtype is dtypes.string else np.array(number, dtype.as_numpy_dtype)
        return fill(shape, constant(value, dtype, name="Const"), name=scope)


def zeros(shape, dtype=dtypes.float32, name=None):
    """A tensor of zeros (a constant when `shape` is a Python shape of modest size)."""
    return _filled(shape, dtype, 0, name, "zeros")


def ones(shape, dtype=dtypes.float32, name=None):
    """A tensor of ones (a constant when `shape` is a Python shape of modest size)."""
    return _filled(shape, dtype, 1, name, "ones")


ZerosLike = define_op("ZerosLike", inputs=["x: T"], outputs=["y: T"], attrs=["T: type"],
                      differentiable=False)
OnesLike = define_op("OnesLike", inputs=["x: T"], outputs=["y: T"], attrs=["T: type"],
                     differentiable=False)
ZerosLike.shape_fn(_identity_shape)
OnesLike.shape_fn(_identity_shape)


@ZerosLike.kernel
def _zeros_like_kernel(x):
    if x.dtype == object:
        return np.full(x.shape, b"", dtype=object)
    return np.zeros_like(x)


@OnesLike.kernel
def _ones_like_kernel(x):
    return np.ones_like(x)


def zeros_like(tensor, dtype=None, name=None, optimize=True):
    """Zeros with the shape (and dtype, unless given) of `tensor`."""
    with _scope(name, "zeros_like") as scope:
        tensor = convert_to_tensor(tensor, name="tensor")
        dtype = tensor.dtype.base_dtype if dtype is None else dtypes.as_dtype(dtype).base_dtype
        if optimize and tensor.shape.is_fully_defined() and dtype not in (dtypes.variant,
                                                                         dtypes.resource):
            return zeros(tensor.shape.as_list(), dtype, name=scope)
        if dtype != tensor.dtype.base_dtype:
            return zeros(shape(tensor), dtype, name=scope)
        return ZerosLike(tensor, name=scope)


def ones_like(tensor, dtype=None, name=None, optimize=True):
    """Ones with the shape (and dtype, unless given) of `tensor`."""
    with _scope(name, "ones_like") as scope:
        tensor = convert_to_tensor(tensor, name="tensor")
        dtype = tensor.dtype.base_dtype if dtype is None else dtypes.as_dtype(dtype).base_dtype
        if optimize and tensor.shape.is_fully_defined():
            dims = constant(tensor.shape.as_list(), dtypes.int32, name="Shape")
        else:
            dims = Shape(tensor, name="Shape")
        return fill(dims, constant(np.ones([], dtype.as_numpy_dtype), dtype, name="Const"),
                    name=scope)


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
    out = broadcast_shape(input, target)
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


def broadcast_to(input, shape, name=None):
    """Broadcasts `input` to `shape` with NumPy rules."""
    shape = convert_to_tensor(shape, preferred_dtype=dtypes.int32)
    return _refine(BroadcastTo(input, shape, name=name), shape)


BroadcastArgs = define_op("BroadcastArgs", inputs=["s0: T", "s1: T"], outputs=["r0: T"],
                          attrs=["T: {int32, int64} = int32"], differentiable=False)


@BroadcastArgs.shape_fn(value_inputs=("s0", "s1"))
def _broadcast_args_shape(s0, s1):
    if s0 is None or s1 is None:
        return TensorShape([None])
    return TensorShape([max(np.size(s0), np.size(s1))])


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


# The rest of the family, re-exported so `array_ops.concat` etc. work as in TensorFlow.
# Importing array_grad registers the family's gradients.
from tensorflux.ops import array_grad, concat_ops, diag_ops, partition_ops, slicing_ops  # noqa: E402,F401,I001
from tensorflux.ops.concat_ops import *  # noqa: E402,F403
from tensorflux.ops.diag_ops import *  # noqa: E402,F403
from tensorflux.ops.partition_ops import *  # noqa: E402,F403
from tensorflux.ops.slicing_ops import *  # noqa: E402,F403

__all__ += concat_ops.__all__ + slicing_ops.__all__ + partition_ops.__all__ + diag_ops.__all__
