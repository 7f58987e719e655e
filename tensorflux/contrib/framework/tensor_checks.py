"""contrib.framework tensor helpers: shape assertions and tensor tests."""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.sparse_tensor import convert_to_tensor_or_sparse_tensor
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.framework.tensor_util import is_tensor
from tensorflux.ops import array as array_ops
from tensorflux.ops.debug import checks as check_ops

__all__ = ["with_shape", "with_same_shape", "convert_to_tensor_or_sparse_tensor", "is_tensor",
           "assert_same_float_dtype"]


def with_shape(expected_shape, tensor):
    """`tensor`, checked to have `expected_shape` (statically, else by an assert op).

    Args:
        expected_shape: a list of ints or a 1-D int tensor.
        tensor: the tensor to check.

    Returns:
        `tensor`, or an identity of it depending on the runtime shape assertion.

    Raises:
        ValueError: the static shape is incompatible with `expected_shape`.
    """
    tensor = convert_to_tensor(tensor)
    if isinstance(expected_shape, (list, tuple, np.ndarray)):
        expected = TensorShape([int(d) for d in expected_shape])
        actual = tensor.get_shape()
        if not actual.is_compatible_with(expected):
            raise ValueError(f"Invalid shape for tensor {tensor.name}, expected {expected}, "
                             f"got {actual}.")
        if actual.is_fully_defined():
            return tensor
    check = check_ops.assert_equal(array_ops.shape(tensor, out_type=_int_dtype(expected_shape)),
                                   expected_shape, message="Wrong shape for " + tensor.name)
    with graph_mod.get_default_graph().control_dependencies([check]):
        result = array_ops.identity(tensor)
    if isinstance(expected_shape, (list, tuple, np.ndarray)):
        result.set_shape(expected)
    return result


def _int_dtype(expected_shape):

    if hasattr(expected_shape, "dtype") and not isinstance(expected_shape, np.ndarray):
        return expected_shape.dtype.base_dtype
    return dtypes.int32


def with_same_shape(expected_tensor, tensor):
    """`tensor`, checked to have the shape of `expected_tensor`."""
    expected = convert_to_tensor(expected_tensor).get_shape()
    if expected.is_fully_defined():
        return with_shape(expected.as_list(), tensor)
    return with_shape(array_ops.shape(expected_tensor), tensor)


def assert_same_float_dtype(tensors=None, dtype=None):
    """The common floating dtype of `tensors` (and `dtype`), float32 when none is given.

    Raises:
        ValueError: the dtypes differ or are not floating.
    """

    found = dtype
    for t in tensors or []:
        if t is None:
            continue
        current = t.dtype.base_dtype
        if found is None:
            found = current
        elif current != found:
            raise ValueError(f"Tensor {t.name} has dtype {current}, expected {found}.")
    if found is None:
        return dtypes.float32
    found = dtypes.as_dtype(found)
    if not found.is_floating:
        raise ValueError(f"Expected floating point type, got {found}.")
    return found
