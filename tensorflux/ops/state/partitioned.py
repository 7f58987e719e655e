"""Partitioned variables: one logical variable stored as shards along one axis.

`get_variable(name, shape, partitioner=...)` asks the partitioner how many shards each axis
gets (at most one axis may have more than one) and creates the shards as ordinary variables
named "<name>/part_<i>", the first `shape[axis] % n` shards one row longer than the others.
Each shard carries a `SaveSliceInfo` (full name, full shape, offset, shape), so a Saver writes
all of them as ONE tensor under `<name>` and restores it into any partitioning (or into an
unpartitioned variable of the full shape). Under `replica_device_setter` the shards are
separate variable ops, so they spread over the ps tasks.

The partitioners follow TF1's rules: `fixed_size_partitioner` (n shards, capped by the axis
size), `variable_axis_size_partitioner` (shards of at most `max_shard_bytes`) and
`min_max_variable_partitioner` (shards of at least `min_slice_size` bytes, at most
`max_partitions`).
"""

from __future__ import annotations

import collections.abc
import math

from tensorflux.framework import dtypes
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import (
    convert_to_tensor,
    register_tensor_conversion_function,
)
from tensorflux.framework.tensor_shape import TensorShape, as_shape
from tensorflux.ops import array as array_ops
from tensorflux.ops.array import concat_split as concat_ops
from tensorflux.ops.array import slicing as slicing_ops
from tensorflux.ops.state import variable_scope
from tensorflux.ops.state.variables import Variable

__all__ = ["fixed_size_partitioner", "min_max_variable_partitioner",
           "variable_axis_size_partitioner", "create_partitioned_variables"]


# -- partitioners ----------------------------------------------------------------------------


def _element_bytes(dtype, bytes_per_string_element: int) -> int:
    dtype = dtypes.as_dtype(dtype).base_dtype
    return bytes_per_string_element if dtype == dtypes.string else dtype.size


def fixed_size_partitioner(num_shards, axis=0):
    """A partitioner making `num_shards` shards along `axis` (fewer if the axis is shorter).

    Example:
        >>> v = tf.get_variable("v", [10, 4], partitioner=tf.fixed_size_partitioner(3))
        >>> [p.get_shape().as_list() for p in v]
        [[4, 4], [3, 4], [3, 4]]
    """

    def _partitioner(shape, **unused_args):
        partitions = [1] * len(shape)
        partitions[axis] = min(num_shards, as_shape(shape).as_list()[axis])
        return partitions

    return _partitioner


def variable_axis_size_partitioner(max_shard_bytes, axis=0, bytes_per_string_element=16,
                                   max_shards=None):
    """A partitioner keeping each shard under `max_shard_bytes` (at least one slice each).

    Args:
        max_shard_bytes: the most bytes a shard may hold (a single slice along `axis` larger
            than this still makes one shard).
        axis: the axis to shard.
        bytes_per_string_element: the size assumed for a string element.
        max_shards: an upper bound on the number of shards.

    Raises:
        ValueError: a non-positive `max_shard_bytes`, `bytes_per_string_element` or
            `max_shards`; when called, a shape that is not fully defined.
    """
    if max_shard_bytes < 1 or bytes_per_string_element < 1:
        raise ValueError(f"Both max_shard_bytes and bytes_per_string_element must be positive. "
                         f"Currently, max_shard_bytes is {max_shard_bytes} and "
                         f"bytes_per_string_element is {bytes_per_string_element}")
    if max_shards is not None and max_shards < 1:
        raise ValueError(f"max_shards must be positive, got {max_shards}.")

    def _partitioner(shape, dtype):
        if not isinstance(shape, TensorShape):
            raise ValueError(f"shape is not a TensorShape: {shape}")
        if not shape.is_fully_defined():
            raise ValueError(f"shape is not fully defined: {shape}")
        if not isinstance(dtype, dtypes.DType):
            raise ValueError(f"dtype is not a DType: {dtype}")
        dims = shape.as_list()
        element_bytes = _element_bytes(dtype, bytes_per_string_element)
        bytes_per_slice = shape.num_elements() / dims[axis] * element_bytes
        slices_per_shard = max(1, math.floor(max_shard_bytes / bytes_per_slice))
        shards = int(math.ceil(dims[axis] / slices_per_shard))
        if max_shards:
            shards = min(max_shards, shards)
        partitions = [1] * len(dims)
        partitions[axis] = shards
        return partitions

    return _partitioner


def min_max_variable_partitioner(max_partitions=1, axis=0, min_slice_size=256 << 10,
                                 bytes_per_string_element=16):
    """A partitioner making shards of at least `min_slice_size` bytes, at most
    `max_partitions` of them (and at most one per row of `axis`).

    Raises:
        ValueError: when called, `axis` is not an axis of the shape.
    """

    def _partitioner(shape, dtype):
        shape = as_shape(shape)
        if axis >= len(shape):
            raise ValueError(f"Can not partition variable along axis {axis} when shape is only "
                             f"{shape}")
        total_bytes = shape.num_elements() * _element_bytes(dtype, bytes_per_string_element)
        partitions = [1] * len(shape)
        partitions[axis] = max(1, min(shape.as_list()[axis], max_partitions,
                                      int(math.ceil(total_bytes / min_slice_size))))
        return partitions

    return _partitioner


# -- shard geometry --------------------------------------------------------------------------


class _PartitionInfo:
    """Where one shard sits in the full variable: passed to initializers as `partition_info`
    so they draw from the full shape (fans, identity offsets)."""

    def __init__(self, full_shape, var_offset):
        if not isinstance(full_shape, (list, tuple)):
            raise TypeError(f"`full_shape` must be a sequence (like tuple or list) instead of "
                            f"{type(full_shape).__name__}")
        if not isinstance(var_offset, (list, tuple)):
            raise TypeError(f"`var_offset` must be a sequence (like tuple or list) instead of "
                            f"{type(var_offset).__name__}")
        full_shape = list(full_shape)
        var_offset = list(var_offset)
        if len(var_offset) != len(full_shape):
            raise ValueError(f"Expected equal length, but `var_offset` is of length "
                             f"{len(var_offset)} while full_shape is of length "
                             f"{len(full_shape)}.")
        for offset, size in zip(var_offset, full_shape):
            if not 0 <= offset < size:
                raise ValueError(f"Expected 0 <= offset < shape but found offset={var_offset}, "
                                 f"shape={full_shape}")
        self._full_shape = full_shape
        self._var_offset = var_offset

    @property
    def full_shape(self) -> list:
        return self._full_shape

    @property
    def var_offset(self) -> list:
        return self._var_offset

    def single_slice_dim(self, shape):
        """The one axis along which `shape` differs from the full shape (None if none).

        Raises:
            ValueError: `shape` does not fit at the offset, or differs along several axes.
        """
        if not isinstance(shape, (list, tuple)):
            raise TypeError(f"`shape` must be a sequence (like tuple or list) instead of "
                            f"{type(shape).__name__}")
        shape = list(shape)
        if len(shape) != len(self._full_shape):
            raise ValueError(f"Expected equal length, but received shape={shape} of length "
                             f"{len(shape)} while full_shape={self._full_shape} is of length "
                             f"{len(self._full_shape)}.")
        for offset, size, full in zip(self._var_offset, shape, self._full_shape):
            if offset + size > full:
                raise ValueError(f"With self.var_offset={self._var_offset}, a partition of "
                                 f"shape={shape} would exceed the full shape {self._full_shape}")
        differing = [i for i, (size, full) in enumerate(zip(shape, self._full_shape))
                     if size != full]
        if len(differing) > 1:
            raise ValueError(f"Cannot use single_slice_dim() with shape={shape} and "
                             f"self.full_shape={self._full_shape} since the slice dim is "
                             "not unique")
        return differing[0] if differing else None

    def single_offset(self, shape) -> int:
        """The offset along the slice axis of `shape` (0 when it is not sliced)."""
        dim = self.single_slice_dim(shape)
        return 0 if dim is None else self._var_offset[dim]


def _validate_partitions(partitioner, shape: TensorShape, dtype) -> list:
    if not shape.is_fully_defined():
        raise ValueError(f"Shape of a new partitioned variable must be fully defined, but "
                         f"instead was {shape}.")
    if shape.ndims < 1:
        raise ValueError(f"A partitioned Variable must have rank at least 1, shape: {shape}")
    slicing = partitioner(shape=shape, dtype=dtype)
    if not isinstance(slicing, collections.abc.Sequence):
        raise ValueError(f"Partitioner must return a sequence, but saw: {slicing}")
    slicing = [int(p) for p in slicing]
    if len(slicing) != shape.ndims:
        raise ValueError(f"Partitioner returned a partition list that does not match the "
                         f"Variable's rank: {slicing} vs. {shape}")
    if any(p < 1 for p in slicing):
        raise ValueError(f"Partitioner returned zero partitions for some axes: {slicing}")
    if sum(p > 1 for p in slicing) > 1:
        raise ValueError(f"Can only slice a variable along one dimension: shape: {shape}, "
                         f"partitioning: {slicing}")
    return slicing


def _slice_axis(partitions) -> tuple:
    for axis, count in enumerate(partitions):
        if count > 1:
            return axis, count
    return 0, 1


def _shard_slices(full_shape: list, num_shards: int, axis: int):
    """(offset, shape) of each shard; the first `size % n` shards get one extra row."""
    base, extra = divmod(full_shape[axis], num_shards)
    offset = [0] * len(full_shape)
    for i in range(num_shards):
        shape = list(full_shape)
        shape[axis] = base + (1 if i < extra else 0)
        yield list(offset), shape
        offset[axis] += shape[axis]


# -- PartitionedVariable ---------------------------------------------------------------------


class PartitionedVariable:
    """A variable stored as shards (TF1 `PartitionedVariable`, returned by `get_variable` with
    a partitioner).

    Contract: iterating yields the shard Variables in offset order; `get_shape()` is the full
    shape; converting to a tensor concatenates the shards (an op named like the variable);
    `_get_variable_list()` / `_get_partitions()` give the shards and the partition counts per
    axis. Optimizers, savers and `embedding_lookup` work on the shards.

    Example:
        >>> v = tf.get_variable("emb", [1000, 16], partitioner=tf.fixed_size_partitioner(4))
        >>> [p.name for p in v][:2]
        ['emb/part_0:0', 'emb/part_1:0']
        >>> rows = tf.nn.embedding_lookup(v, ids)
    """

    def __init__(self, name, shape, dtype, variable_list, partitions):
        if not isinstance(variable_list, (list, tuple)):
            raise TypeError(f"variable_list is not a list or tuple: {variable_list}")
        if not isinstance(partitions, (list, tuple)):
            raise TypeError(f"partitions is not a list or tuple: {partitions}")
        if not all(p >= 1 for p in partitions):
            raise ValueError(f"partition values must be positive: {partitions}")
        if not variable_list:
            raise ValueError("variable_list may not be empty")
        shape = list(as_shape(shape).as_list()) if not isinstance(shape, list) else shape
        if len(shape) != len(partitions):
            raise ValueError(f"len(shape) != len(partitions): {shape} vs. {partitions}")
        for v in variable_list:
            info = v._get_save_slice_info()
            if info is None:
                raise ValueError(f"All variables must have a save_slice_info available: "
                                 f"{[x.name for x in variable_list]}")
            if list(info.full_shape) != shape:
                raise ValueError(f"All variables' full shapes must match shape: {shape}; but "
                                 f"{v.name} has full shape {info.full_shape}")
        self._variable_list = sorted(variable_list,
                                     key=lambda v: v._get_save_slice_info().var_offset)
        self._name = name
        self._shape = TensorShape(shape)
        self._dtype = dtypes.as_dtype(dtype).base_dtype
        self._partitions = list(partitions)

    def __iter__(self):
        return iter(self._variable_list)

    def __len__(self) -> int:
        axes = self._partition_axes()
        if len(axes) > 1:
            raise ValueError(f"Cannot get a length of {len(axes)} > 1-dim partition")
        return len(self._variable_list)

    def __repr__(self) -> str:
        return (f"<PartitionedVariable '{self._name}' shape={tuple(self._shape.as_list())} "
                f"dtype={self._dtype.name} partitions={self._partitions}>")

    def _partition_axes(self) -> list:
        axes = [i for i, p in enumerate(self._partitions) if p > 1]
        return axes or [0]

    @property
    def name(self) -> str:
        return self._name

    @property
    def dtype(self):
        return self._dtype

    @property
    def shape(self) -> TensorShape:
        return self.get_shape()

    @property
    def graph(self):
        return self._variable_list[0].graph

    def get_shape(self) -> TensorShape:
        return self._shape

    def _get_variable_list(self) -> list:
        return self._variable_list

    def _get_partitions(self) -> list:
        return self._partitions

    def _concat(self):
        """The shards concatenated (a new op, under the caller's control dependencies)."""

        graph = graph_mod.get_default_graph()
        if len(self._variable_list) == 1:
            with graph.name_scope(None):
                return array_ops.identity(self._variable_list[0], name=self._name)
        axis = self._partition_axes()[0]
        with graph.name_scope(f"{self._name}/ConcatPartitions/"):
            joined = concat_ops.concat(list(self._variable_list), axis)
        with graph.name_scope(None):
            return array_ops.identity(joined, name=self._name)

    def as_tensor(self):
        """The full value: the shards concatenated, free of the caller's control dependencies."""
        with graph_mod.get_default_graph().control_dependencies(None):
            return self._concat()

    def _apply_assign_fn(self, assign_fn, value) -> list:
        if isinstance(value, (list, tuple)):
            if len(value) != len(self._variable_list):
                raise ValueError(f"Assigning {len(value)} values to the "
                                 f"{len(self._variable_list)} shards of {self._name}")
            values = list(value)
        elif isinstance(value, PartitionedVariable):
            values = list(value)
        else:
            axis = self._partition_axes()[0]
            sizes = [v.get_shape().as_list()[axis] for v in self._variable_list]
            value = convert_to_tensor(value, dtype=self._dtype)
            values = concat_ops.split(value, sizes, axis=axis) if len(sizes) > 1 else [value]
        return [assign_fn(var, part) for var, part in zip(self._variable_list, values)]

    def assign(self, value, use_locking=False, name=None, read_value=True) -> list:
        """Assigns `value` (full-shaped, or one value per shard); one result per shard."""
        return self._apply_assign_fn(
            lambda var, part: var.assign(part, use_locking=use_locking, name=name,
                                         read_value=read_value), value)

    def assign_add(self, value, use_locking=False, name=None, read_value=True) -> list:
        return self._apply_assign_fn(
            lambda var, part: var.assign_add(part, use_locking=use_locking, name=name,
                                             read_value=read_value), value)

    def assign_sub(self, value, use_locking=False, name=None, read_value=True) -> list:
        return self._apply_assign_fn(
            lambda var, part: var.assign_sub(part, use_locking=use_locking, name=name,
                                             read_value=read_value), value)


def _partitioned_variable_to_tensor(value, dtype=None, name=None, as_ref=False):
    if dtype is not None and not dtypes.as_dtype(dtype).is_compatible_with(value.dtype):
        raise ValueError(f"Incompatible type conversion requested to type "
                         f"'{dtypes.as_dtype(dtype).name}' for variable of type "
                         f"'{value.dtype.name}'")
    if as_ref:
        raise TypeError(f"PartitionedVariable {value.name} cannot be used as a reference; "
                        "update its shards instead.")
    return value.as_tensor()


register_tensor_conversion_function(PartitionedVariable, _partitioned_variable_to_tensor)


# -- creation through the variable store -----------------------------------------------------


def get_partitioned_variable(store, name, partitioner, shape=None, dtype=dtypes.float32,
                             initializer=None, reuse=None, **single_kwargs):
    """Creates or reuses the partitioned variable `name` in a `_VariableStore` (TF1 rules).

    `single_kwargs` go to `store._get_single_variable` for each shard (regularizer,
    trainable, collections, caching_device, validate_shape, constraint, ...).

    Raises:
        ValueError: an unpartitioned variable of that name exists, reuse rules are broken, the
            shape is not fully defined, or the partitioning differs from the existing one.
    """

    graph = graph_mod.get_default_graph()
    from_tensor = isinstance(initializer, Tensor)
    if name in store._vars:
        raise ValueError(f"A partitioner was provided, but an unpartitioned version of the "
                         f"variable was found: {name}.  Perhaps a variable of the same name "
                         "was already created without partitioning?")
    shape = as_shape(shape)
    if from_tensor:
        shape = shape.merge_with(initializer.get_shape())
    dtype = dtypes.as_dtype(dtype).base_dtype
    partitions = None
    if not reuse or partitioner:
        partitions = _validate_partitions(partitioner, shape, dtype)

    existing = store._partitioned_vars.get(name)
    if existing is not None:
        if reuse is False:
            raise ValueError(f"Partitioned variable with name {name} already exists. Did you "
                             "mean to set reuse=True or reuse=tf.AUTO_REUSE in VarScope?")
        if not shape.is_compatible_with(existing.get_shape()):
            raise ValueError(f"Trying to reuse partitioned variable {name}, but specified shape "
                             f"{shape} and found shape {existing.get_shape()}.")
        if not dtype.is_compatible_with(existing.dtype):
            raise ValueError(f"Trying to reuse partitioned variable {name}, but specified dtype "
                             f"{dtype.name} and found dtype {existing.dtype.name}.")
        if partitions is not None and existing._get_partitions() != partitions:
            raise ValueError(f"Trying to reuse partitioned variable {name}, but specified "
                             f"partitions {partitions} and found partitions "
                             f"{existing._get_partitions()}.")
        return existing
    if reuse is True:
        raise ValueError(f"PartitionedVariable {name} does not exist, or was not created with "
                         "tf.get_variable(). Did you mean to set reuse=False or "
                         "reuse=tf.AUTO_REUSE in VarScope?")

    axis, num_shards = _slice_axis(partitions)
    if f"{name}/part_0" in store._vars:
        if f"{name}/part_{num_shards - 1}" not in store._vars:
            raise ValueError(f"Partitioner returned a different partitioning than what was "
                             f"already found.  Partitioner returned {num_shards} shards, and "
                             f"shard {name}/part_0 was found, but {name}/part_{num_shards - 1} "
                             "was not.")
        if f"{name}/part_{num_shards}" in store._vars:
            raise ValueError(f"Partitioner returned a different partitioning than what was "
                             f"already found.  Partitioner returned {num_shards} shards, and "
                             f"shard {name}/part_0 was found, but so was the extra shard "
                             f"{name}/part_{num_shards}.")


    full_shape = shape.as_list()
    shards = []
    for i, (offset, shard_shape) in enumerate(_shard_slices(full_shape, num_shards, axis)):
        shard_name = f"{name}/part_{i}"
        info = _PartitionInfo(full_shape, offset)
        shard_dtype = dtype
        with graph.name_scope(f"{shard_name}/PartitionedInitializer"):
            if initializer is None:
                init, init_shape = None, shard_shape
            elif callable(initializer):
                init, init_shape = initializer, shard_shape
            else:
                value = initializer if from_tensor else convert_to_tensor(initializer,
                                                                          dtype=dtype)
                init = slicing_ops.slice(value, offset, shard_shape)
                shard_dtype = init.dtype.base_dtype
                init_shape = None
        with graph.name_scope(None):
            var = store._get_single_variable(
                shard_name, shape=init_shape, dtype=shard_dtype, initializer=init,
                reuse=reuse, partition_info=info, **single_kwargs)
        var._set_save_slice_info(Variable.SaveSliceInfo(name, full_shape, offset, shard_shape))
        shards.append(var)
    result = PartitionedVariable(name, full_shape, shards[0].dtype.base_dtype, shards,
                                 partitions)
    store._partitioned_vars[name] = result
    return result


def create_partitioned_variables(shape, slicing, initializer, dtype=dtypes.float32,
                                 trainable=True, collections=None, name=None, reuse=None):
    """Deprecated (use `get_variable` with a partitioner): the shards of a new partitioned
    variable named `name` (default "PartitionedVariable"), as a list.

    Args:
        shape: the full shape.
        slicing: the number of shards per axis (one axis at most above 1).
        initializer: an initializer, Tensor or value for the full variable.

    Raises:
        ValueError: `shape` and `slicing` differ in length, or the rank is 0.
    """

    if len(shape) != len(slicing):
        raise ValueError(f"The 'shape' and 'slicing' of a partitioned Variable must have the "
                         f"length: shape: {shape}, slicing: {slicing}")
    if len(shape) < 1:
        raise ValueError(f"A partitioned Variable must have rank at least 1: shape: {shape}")

    def partitioner(**unused_args):
        return list(slicing)

    with variable_scope.variable_scope(name, "PartitionedVariable", reuse=reuse) as scope:
        store = variable_scope._get_default_variable_store()
        scope_name = scope.name
        with graph_mod.get_default_graph().name_scope(None):
            variable = get_partitioned_variable(
                store, scope_name, partitioner, shape=shape, dtype=dtype,
                initializer=initializer, reuse=scope.reuse, trainable=trainable,
                collections=collections)
    return list(variable)
