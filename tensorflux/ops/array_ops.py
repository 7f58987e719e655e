"""Array ops: constants, placeholders, identity, and the shape/slicing/gather family."""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_conversion import _infer_numpy
from tensorflux.framework.tensor_shape import TensorShape, as_shape

__all__ = ["constant", "placeholder", "placeholder_with_default", "identity"]

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
    attrs=["dtype: type", "shape: shape"], differentiable=False)


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
    from tensorflux.framework.tensor_conversion import convert_to_tensor

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
    from tensorflux.framework.tensor_conversion import convert_to_tensor

    value = convert_to_tensor(input)
    if value.dtype.is_ref_dtype:
        return Identity(value, name=name)
    return Identity(value, name=name)
