"""Sparse basics: `SparseToDense`, `tf.sparse_tensor_to_dense`, `tf.sparse_placeholder`."""

from __future__ import annotations

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.op_def import define_op
from tensorflux.framework.sparse_tensor import SparseTensor, SparseTensorValue
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape, as_shape

__all__ = ["SparseTensor", "SparseTensorValue", "sparse_to_dense", "sparse_tensor_to_dense",
           "sparse_placeholder"]

SparseToDense = define_op(
    "SparseToDense",
    inputs=["sparse_indices: Tindices", "output_shape: Tindices", "sparse_values: T",
            "default_value: T"],
    outputs=["dense: T"],
    attrs=["validate_indices: bool = True", "T: type", "Tindices: {int32, int64}"])


@SparseToDense.shape_fn(value_inputs=("output_shape",))
def _sparse_to_dense_shape(sparse_indices, output_shape, sparse_values, default_value):
    if output_shape is not None:
        return TensorShape([int(d) for d in np.reshape(output_shape, [-1])])
    return TensorShape(None)


def _coordinates(indices: np.ndarray, rank: int) -> np.ndarray:
    """Indices as an [N, rank] matrix (scalar and vector forms included)."""
    if indices.ndim == 0:
        return indices.reshape(1, 1)
    if indices.ndim == 1:
        return indices.reshape(-1, 1) if rank == 1 else indices.reshape(1, -1)
    return indices


def _row_text(row) -> str:
    return ",".join(str(int(v)) for v in row)


@SparseToDense.kernel
def _sparse_to_dense_kernel(sparse_indices, output_shape, sparse_values, default_value, *,
                            validate_indices):
    shape = tuple(int(d) for d in np.reshape(output_shape, [-1]))
    if np.ndim(default_value) != 0:
        raise errors.InvalidArgumentError(
            None, None, f"default_value should be a scalar, got shape {np.shape(default_value)}")
    coords = _coordinates(np.asarray(sparse_indices), len(shape))
    n = coords.shape[0]
    if coords.shape[1] != len(shape):
        raise errors.InvalidArgumentError(
            None, None, f"sparse_indices rows have {coords.shape[1]} coordinates but "
            f"output_shape has {len(shape)} dimensions")
    values = np.asarray(sparse_values)
    if values.ndim not in (0, 1) or (values.ndim == 1 and values.shape[0] != n):
        raise errors.InvalidArgumentError(
            None, None, f"sparse_values has shape {list(values.shape)}; expected a scalar or "
            f"a vector of {n} values")
    dense = np.full(shape, default_value, dtype=values.dtype)
    if n == 0:
        return dense
    limits = np.asarray(shape, np.int64)
    bad = np.any((coords < 0) | (coords >= limits), axis=1)
    if bad.any():
        i = int(np.argmax(bad))
        raise errors.InvalidArgumentError(
            None, None, f"indices[{i}] = [{_row_text(coords[i])}] is out of bounds: need 0 <= "
            f"index < [{_row_text(limits)}]")
    flat = np.ravel_multi_index(tuple(coords.T), shape) if shape else np.zeros(n, np.int64)
    if validate_indices and n > 1:
        step = np.diff(flat)
        if (step <= 0).any():
            i = int(np.argmax(step <= 0)) + 1
            what = "repeated" if step[i - 1] == 0 else "out of order"
            raise errors.InvalidArgumentError(
                None, None, f"indices[{i}] = [{_row_text(coords[i])}] is {what}. Many sparse "
                "ops require sorted indices. Use `tf.sparse.reorder` to create a correctly "
                "ordered copy.")
    dense.reshape(-1)[flat] = values
    return dense


@SparseToDense.gradient
def _sparse_to_dense_grad(op, grad):
    from tensorflux.ops import array_ops, math_ops, reduction_ops, slicing_ops

    sparse_indices, output_shape, sparse_values, _ = op.inputs
    indices = sparse_indices
    if indices.shape.rank == 1 and sparse_values.shape.rank == 1:
        indices = array_ops.expand_dims(indices, 1)
    values_grad = slicing_ops.gather_nd(grad, indices)
    if sparse_values.shape.rank == 0:
        values_grad = reduction_ops.reduce_sum(values_grad)
    default_grad = math_ops.subtract(reduction_ops.reduce_sum(grad),
                                     reduction_ops.reduce_sum(values_grad))
    return [None, None, values_grad, default_grad]


def sparse_to_dense(sparse_indices, output_shape, sparse_values, default_value=0,
                    validate_indices=True, name=None):
    """A dense tensor of `output_shape` holding `sparse_values` at `sparse_indices`.

    Args:
        sparse_indices: int32/int64 scalar, vector or [N, rank] matrix of coordinates.
        output_shape: int vector, the dense shape.
        sparse_values: scalar or [N] values.
        default_value: scalar for the other elements.
        validate_indices: check that indices are sorted and unique.

    Raises:
        InvalidArgumentError: (at run time) an index out of bounds, repeated or out of order.
    """
    values = convert_to_tensor(sparse_values, name="sparse_values")
    default = convert_to_tensor(default_value, dtype=values.dtype.base_dtype,
                                name="default_value")
    indices = convert_to_tensor(sparse_indices, name="sparse_indices")
    shape = convert_to_tensor(output_shape, dtype=indices.dtype.base_dtype, name="output_shape")
    return SparseToDense(indices, shape, values, default, validate_indices=validate_indices,
                         name=name)


def sparse_tensor_to_dense(sp_input, default_value=None, validate_indices=True, name=None):
    """The dense tensor of a SparseTensor (TF1 `tf.sparse_tensor_to_dense`).

    Example:
        >>> st = tf.SparseTensor([[0, 1]], [5.0], [2, 2])
        >>> sess.run(tf.sparse_tensor_to_dense(st))
        array([[0., 5.], [0., 0.]], dtype=float32)
    """
    sp_input = SparseTensor.from_value(sp_input)
    if not isinstance(sp_input, SparseTensor):
        raise TypeError(f"Input must be a SparseTensor, got {sp_input!r}")
    if default_value is None:
        dtype = sp_input.dtype.base_dtype
        default_value = b"" if dtype == dtypes.string else np.zeros((), dtype.as_numpy_dtype)
    return sparse_to_dense(sp_input.indices, sp_input.dense_shape, sp_input.values,
                           default_value=default_value, validate_indices=validate_indices,
                           name=name or "SparseToDense")


def sparse_placeholder(dtype, shape=None, name=None):
    """A SparseTensor of three placeholders, to be fed a SparseTensorValue.

    Args:
        dtype: the values' dtype.
        shape: the dense shape (known dimensions are checked), or None.
        name: a name prefix.
    """
    from tensorflux.ops.array_ops import constant, placeholder

    graph = graph_mod.get_default_graph()
    with graph.name_scope(name or "SparsePlaceholder"):
        rank = None
        if shape is not None:
            shape = as_shape(shape)
            rank = shape.rank
        values = placeholder(dtype, [None], name="values")
        indices = placeholder(dtypes.int64, [None, rank], name="indices")
        if shape is not None and shape.is_fully_defined():
            dense_shape = constant(np.asarray(shape.as_list(), np.int64), dtype=dtypes.int64,
                                   name="shape")
        else:
            dense_shape = placeholder(dtypes.int64, [rank], name="shape")
    return SparseTensor(indices, values, dense_shape)
