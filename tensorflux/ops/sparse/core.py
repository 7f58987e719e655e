"""Sparse basics: `SparseToDense`, `tf.sparse_tensor_to_dense`, `tf.sparse_placeholder`, and the
SparseTensorsMap ops that carry SparseTensors through queues (as int64 handles)."""

from __future__ import annotations

import threading

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.op_def import define_op
from tensorflux.framework.sparse_tensor import (
    SparseTensor,
    SparseTensorValue,
    convert_to_tensor_or_sparse_tensor,
)
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape, as_shape
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.array import slicing as slicing_ops
from tensorflux.ops.array.constants import constant, placeholder
from tensorflux.ops.array.shapes import constant_value_as_shape
from tensorflux.ops.math import reduction as reduction_ops

__all__ = ["SparseTensor", "SparseTensorValue", "sparse_to_dense", "sparse_tensor_to_dense",
           "sparse_placeholder", "convert_to_tensor_or_sparse_tensor"]

SparseToDense = define_op(
    "SparseToDense",
    inputs=["sparse_indices: Tindices", "output_shape: Tindices", "sparse_values: T",
            "default_value: T"],
    outputs=["dense: T"],
    attrs=["validate_indices: bool = True", "T: type", "Tindices: {int32, int64}"])


@SparseToDense.shape_fn(value_inputs=("output_shape",))
def _sparse_to_dense_shape(sparse_indices, output_shape, sparse_values, default_value):
    if output_shape is not None:
        if np.ndim(output_shape) != 1:
            raise ValueError(f"Shape must be rank 1 but is rank {np.ndim(output_shape)} "
                             "(output_shape)")
        return TensorShape([int(d) for d in output_shape])
    return TensorShape(None)


def _coordinates(indices: np.ndarray) -> np.ndarray:
    """Indices as an [N, rank] matrix: a scalar or a vector indexes a 1-D output."""
    if indices.ndim < 2:
        return indices.reshape(-1, 1)
    return indices


def _row_text(row) -> str:
    return ",".join(str(int(v)) for v in row)


@SparseToDense.kernel
def _sparse_to_dense_kernel(sparse_indices, output_shape, sparse_values, default_value, *,
                            validate_indices):
    if np.ndim(output_shape) != 1:
        raise errors.InvalidArgumentError(
            None, None, f"output_shape must be rank 1, got shape {list(np.shape(output_shape))}")
    shape = tuple(int(d) for d in np.reshape(output_shape, [-1]))
    if np.ndim(default_value) != 0:
        raise errors.InvalidArgumentError(
            None, None, f"default_value should be a scalar, got shape {np.shape(default_value)}")
    coords = _coordinates(np.asarray(sparse_indices))
    n = coords.shape[0]
    if coords.shape[1] != len(shape):
        raise errors.InvalidArgumentError(
            None, None, f"sparse_indices rows have {coords.shape[1]} coordinates but "
            f"output_shape has {len(shape)} dimensions")
    values = np.asarray(sparse_values)
    if values.ndim not in (0, 1) or (values.ndim == 1 and values.shape[0] != n):
        raise errors.InvalidArgumentError(
            None, None, f"sparse_values has incorrect shape [{_row_text(values.shape)}], "
            f"should be [] or [{n}]")
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
    sparse_indices, output_shape, sparse_values, _ = op.inputs
    indices = sparse_indices
    if indices.shape.rank is not None and indices.shape.rank < 2:
        indices = array_ops.reshape(indices, [-1, 1])
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
    if shape.shape.ndims not in (None, 1):
        raise ValueError(f"SparseToDense: Shape must be rank 1 but is rank {shape.shape.ndims} "
                         f"(output_shape {shape.shape})")
    dense = SparseToDense(indices, shape, values, default, validate_indices=validate_indices,
                          name=name)
    if dense.shape.ndims is None:
        dense.set_shape(constant_value_as_shape(shape))  # [?, ?, ?] from a [3] shape
    return dense


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


# -- SparseTensorsMap: SparseTensors through queues (tf.train.batch & co) -----------------------

class SparseTensorsMap:
    """A (container, name) resource holding SparseTensor values under int64 handles.

    Contract: `add` stores values and returns fresh handles; `take_many` removes and returns
    them, so each stored value is delivered once.
    """

    def __init__(self, name: str):
        self.name = name
        self._lock = threading.Lock()
        self._values: dict = {}
        self._next = 0  # TF numbers a map's SparseTensors from 0

    def add(self, entries) -> np.ndarray:
        with self._lock:
            handles = np.arange(self._next, self._next + len(entries), dtype=np.int64)
            self._next += len(entries)
            self._values.update(zip(handles.tolist(), entries))
        return handles

    def take_many(self, handles) -> list:
        with self._lock:
            missing = [h for h in handles if h not in self._values]
            if missing:
                raise errors.InvalidArgumentError(
                    None, None, f"Unable to find SparseTensor: {missing[0]} in map: "
                    f"{self.name} (each stored SparseTensor can be taken once)")
            return [self._values.pop(h) for h in handles]


_MAP_ATTRS = ["T: type", "container: string = ''", "shared_name: string = ''"]
AddSparseToTensorsMap = define_op(
    "AddSparseToTensorsMap",
    inputs=["sparse_indices: int64", "sparse_values: T", "sparse_shape: int64"],
    outputs=["sparse_handle: int64"], attrs=_MAP_ATTRS, stateful=True, differentiable=False)
AddManySparseToTensorsMap = define_op(
    "AddManySparseToTensorsMap",
    inputs=["sparse_indices: int64", "sparse_values: T", "sparse_shape: int64"],
    outputs=["sparse_handles: int64"], attrs=_MAP_ATTRS, stateful=True, differentiable=False)
TakeManySparseFromTensorsMap = define_op(
    "TakeManySparseFromTensorsMap", inputs=["sparse_handles: int64"],
    outputs=["sparse_indices: int64", "sparse_values: dtype", "sparse_shape: int64"],
    attrs=["dtype: type", "container: string = ''", "shared_name: string = ''"],
    stateful=True, differentiable=False)


@AddSparseToTensorsMap.shape_fn
def _add_sparse_shape(sparse_indices, sparse_values, sparse_shape):
    return TensorShape([])


@AddManySparseToTensorsMap.shape_fn
def _add_many_sparse_shape(sparse_indices, sparse_values, sparse_shape):
    return TensorShape([None])


@TakeManySparseFromTensorsMap.shape_fn
def _take_many_sparse_shape(sparse_handles):
    sparse_handles.with_rank(1)
    return [TensorShape([None, None]), TensorShape([None]), TensorShape([None])]


def _map_kernel(container, shared_name, node_name, body):
    name = shared_name or node_name

    def kernel(ctx, *inputs):
        table = ctx.resource_mgr.lookup_or_create(container, name,
                                                  lambda: SparseTensorsMap(name))
        return body(table, *inputs)

    return kernel


def _entry(indices, values, shape):
    return (np.array(indices, np.int64).reshape(-1, len(shape)), np.array(values),
            np.array(shape, np.int64))


@AddSparseToTensorsMap.kernel(ctx=True, factory=True)
def _add_sparse_factory(T, container, shared_name, node_name):  # noqa: N803 - TF attr name
    def add(table, indices, values, shape):
        return table.add([_entry(indices, values, np.reshape(shape, [-1]))])[0]

    return _map_kernel(container, shared_name, node_name, add)


@AddManySparseToTensorsMap.kernel(ctx=True, factory=True)
def _add_many_sparse_factory(T, container, shared_name, node_name):  # noqa: N803
    def add_many(table, indices, values, shape):
        shape = np.reshape(shape, [-1]).astype(np.int64)
        if len(shape) < 2:
            raise errors.InvalidArgumentError(
                None, None, f"AddManySparseToTensorsMap needs a SparseTensor of rank >= 2 (a "
                f"batch), got rank {len(shape)}")
        indices = np.asarray(indices, np.int64).reshape(-1, len(shape))
        values = np.asarray(values)
        order = np.argsort(indices[:, 0], kind="stable")
        indices, values = indices[order], values[order]
        bounds = np.searchsorted(indices[:, 0], np.arange(int(shape[0]) + 1))
        rows = [(indices[lo:hi, 1:], values[lo:hi], shape[1:])
                for lo, hi in zip(bounds[:-1], bounds[1:])]
        return table.add(rows)

    return _map_kernel(container, shared_name, node_name, add_many)


@TakeManySparseFromTensorsMap.kernel(ctx=True, factory=True)
def _take_many_sparse_factory(dtype, container, shared_name, node_name):
    def take_many(table, handles):
        entries = table.take_many(np.asarray(handles, np.int64).reshape(-1).tolist())
        ranks = [len(shape) for _, _, shape in entries]
        for i, rank in enumerate(ranks[1:], 1):
            if rank != ranks[0]:  # TF counts the batch dimension in these ranks
                raise errors.InvalidArgumentError(
                    None, None, f"Inconsistent rank across SparseTensors: rank prior to "
                    f"SparseTensor[{i}] was: {ranks[0] + 1} but rank of SparseTensor[{i}] "
                    f"is: {rank + 1}")
        rank = ranks[0] if ranks else 0
        counts = np.array([len(i) for i, _, _ in entries], np.int64)
        batch = np.repeat(np.arange(len(entries), dtype=np.int64), counts)
        inner = np.concatenate([i for i, _, _ in entries]) if entries else \
            np.empty((0, rank), np.int64)
        values = np.concatenate([v for _, v, _ in entries]) if entries else \
            np.empty(0, dtype.as_numpy_dtype)
        dims = np.max([s for _, _, s in entries], axis=0) if entries else \
            np.zeros(rank, np.int64)
        indices = np.concatenate([batch[:, None], inner.reshape(-1, rank)], axis=1)
        return indices, values.astype(dtype.as_numpy_dtype, copy=False), \
            np.concatenate([[len(entries)], dims]).astype(np.int64)

    return _map_kernel(container, shared_name, node_name, take_many)


def add_sparse_to_tensors_map(sp_input, many: bool = False, name=None, container=None,
                              shared_name=None):
    """Stores a SparseTensor (or each row of a batch when `many`); returns int64 handles.

    The map is the resource `shared_name` in `container` (default: one named after the op).
    """
    sp_input = SparseTensor.from_value(sp_input)
    op = AddManySparseToTensorsMap if many else AddSparseToTensorsMap
    return op(sp_input.indices, sp_input.values, sp_input.dense_shape,
              container=container or "", shared_name=shared_name or "", name=name)


def take_many_sparse_from_tensors_map(sparse_map_op, sparse_handles, rank=None, name=None):
    """The SparseTensor batch of the values stored under `sparse_handles` (rank + 1 dims).

    Raises:
        TypeError: `sparse_map_op` is not an AddSparseToTensorsMap or
            AddManySparseToTensorsMap operation.
    """
    if getattr(sparse_map_op, "type", None) not in ("AddSparseToTensorsMap",
                                                    "AddManySparseToTensorsMap"):
        raise TypeError(f"sparse_map_op must be an AddSparseToTensorsMap or "
                        f"AddManySparseToTensorsMap operation, got {sparse_map_op!r}")
    shared_name = sparse_map_op.get_attr_str("shared_name") or sparse_map_op.name
    out = TakeManySparseFromTensorsMap(sparse_handles, dtype=sparse_map_op.get_attr("T"),
                                       container=sparse_map_op.get_attr_str("container"),
                                       shared_name=shared_name, name=name)
    if rank is not None:
        out.sparse_indices.set_shape([None, rank + 1])
        out.sparse_shape.set_shape([rank + 1])
    return SparseTensor(out.sparse_indices, out.sparse_values, out.sparse_shape)
