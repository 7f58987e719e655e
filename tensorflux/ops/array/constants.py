"""Array ops: constants, placeholders, the identity family, fill/zeros/ones.

Each op's gradient follows its kernel. TensorFlow's `array_ops` namespace is the family
facade, `tensorflux.ops.array`.
"""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes, errors, indexed_slices, sparse_tensor
from tensorflux.framework.op_def import define_op
from tensorflux.framework.scopes import op_name_scope as _scope
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import _infer_numpy, convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape, as_shape
from tensorflux.framework.tensor_util import MAX_TENSOR_PROTO_BYTES
from tensorflux.ops.array.shapes import Shape, _refine, reshape, shape
from tensorflux.ops.array.util import INDEX_TYPES as _INDEX_TYPES
from tensorflux.ops.array.util import as_outputs as _as_outputs
from tensorflux.ops.array.util import dims_of as _dims_of
from tensorflux.ops.math import reduction as reduction_ops

__all__ = [
    "constant", "placeholder", "placeholder_with_default", "identity", "identity_n",
    "stop_gradient", "prevent_gradient", "ensure_shape", "fill", "zeros", "ones", "zeros_like",
    "ones_like", "newaxis",
]

newaxis = None

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


def _check_proto_size(array, shape, dtype) -> None:
    """ValueError, as TF's `make_tensor_proto`, for a constant of 2 GB or more (checked before
    the value is copied or broadcast, so nothing that large is allocated)."""
    dtype = dtype or dtypes.as_dtype(array.dtype)
    if dtype.base_dtype is dtypes.string:
        return
    dims = array.shape if shape is None else as_shape(shape).as_list()
    count = int(np.prod([int(d) for d in dims], dtype=np.float64))
    if count * np.dtype(dtype.base_dtype.as_numpy_dtype).itemsize >= MAX_TENSOR_PROTO_BYTES:
        raise ValueError(f"Cannot create a tensor proto whose content is larger than 2GB "
                         f"(a constant of shape {list(dims)} and dtype {dtype.base_dtype.name}).")


def constant(value, dtype=None, shape=None, name="Const", verify_shape=False):
    """A constant tensor from a Python or NumPy value (TF1 `tf.constant`)."""
    dtype = dtypes.as_dtype(dtype) if dtype is not None else None
    try:
        array = _infer_numpy(value, dtype)
    except ValueError as err:
        if "inhomogeneous" not in str(err):
            raise
        # TF's wording: nested lists of unequal lengths are not a dense tensor.
        raise ValueError(f"Argument must be a dense tensor: {value!r} - its nested lists "
                         f"have inconsistent lengths ({err})") from None
    _check_proto_size(array, shape, dtype)
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
            raise ValueError(f"Too many elements provided. Needed at most {count}, but received "
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


@PlaceholderWithDefault.gradient
def _placeholder_with_default_grad(op, grad):
    return grad


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


@Identity.gradient
def _identity_grad(op, grad):
    return grad


def identity(input, name=None):
    """Returns a tensor with the same value (TF1 `tf.identity`).

    A `SparseTensor` or `IndexedSlices` gives the same kind of value, each component tensor
    passed through its own Identity op.
    """
    if isinstance(input, sparse_tensor.SparseTensor):
        with _scope(name, "Identity"):
            return sparse_tensor.SparseTensor(Identity(input.indices, name="indices"),
                                              Identity(input.values, name="values"),
                                              Identity(input.dense_shape, name="dense_shape"))
    if isinstance(input, indexed_slices.IndexedSlices):
        with _scope(name, "Identity"):
            shape = input.dense_shape
            return indexed_slices.IndexedSlices(
                Identity(input.values, name="values"), Identity(input.indices, name="indices"),
                None if shape is None else Identity(shape, name="dense_shape"))
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


@IdentityN.gradient
def _identity_n_grad(op, *grads):
    return list(grads)


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


@PreventGradient.gradient
def _prevent_gradient_grad(op, grad):
    raise LookupError(f"Gradient explicitly disabled. Reason: {op.get_attr_str('message')}")


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
def _ensure_shape_kernel(shape, input_names=()):
    expected = shape
    expected_text = "[" + ",".join("?" if d is None else str(d)
                                   for d in (expected.as_list() or [])) + "]" \
        if expected.ndims is not None else "<unknown>"
    tensor = f"{input_names[0]} " if input_names else ""

    def ensure_shape(x):
        if not expected.is_compatible_with(x.shape):
            raise errors.InvalidArgumentError(
                None, None, f"Shape of tensor {tensor}[{','.join(map(str, x.shape))}] is not "
                            f"compatible with expected shape {expected_text}.")
        return x

    return ensure_shape


@EnsureShape.gradient
def _ensure_shape_grad(op, grad):
    return grad


def ensure_shape(x, shape, name=None):
    """Checks at run time that `x` has a shape compatible with `shape`; returns `x`."""
    return EnsureShape(x, shape=as_shape(shape), name=name)


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
    # NOTE: as TF's kernel, a scalar `dims` stands for a one-element vector and a `value` of
    # shape [1] for a scalar (legacy GraphDefs); the shape function stays strict.
    if np.ndim(value) != 0 and np.shape(value) != (1,):
        raise errors.InvalidArgumentError(
            None, None, f"value must be a scalar, got shape {list(np.shape(value))}")
    value = np.reshape(value, ())
    dims = np.reshape(dims, (1,)) if dims.ndim == 0 else dims
    if dims.ndim != 1 or (dims.size and dims.min() < 0):
        raise errors.InvalidArgumentError(
            None, None, f"dims must be a vector of non-negative sizes, got {dims.tolist()}")
    return np.full(dims, value, dtype=value.dtype)


@Fill.gradient
def _fill_grad(op, grad):
    return [None, reduction_ops.reduce_sum(grad)]


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
        if shape.shape.ndims == 0:  # tf.zeros(1000) / tf.zeros(n): a vector of that size (TF)
            shape = reshape(shape, [-1])
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
