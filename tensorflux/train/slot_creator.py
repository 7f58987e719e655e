"""Slot variables: per-variable optimizer state (TF1 `tensorflow/python/training/slot_creator`).

A slot belongs to a primary value (a variable, or a plain tensor): it is a non-trainable variable
named '<primary>/<name>', placed with the primary (colocated) unless told otherwise, and created
outside any control-dependency context the caller may be in. Slots of a resource variable are
resource variables. Custom TF1 optimizers call these functions directly.
"""
from __future__ import annotations

from tensorflux.distribute import values as values_lib
from tensorflux.framework import dtypes
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import as_shape
from tensorflux.ops import array as array_ops
from tensorflux.ops.state.variables import Variable


def _primary_name(primary) -> str:
    return primary.op.name


def _is_resource(primary) -> bool:
    return bool(getattr(primary, "_is_resource_variable", False))


def colocated_with(primary):
    """Where a variable belonging to `primary` is created: beside it; beside each component
    of a distributed primary (its strategy places one component per device)."""
    if isinstance(primary, values_lib.DistributedVariable):
        return primary.distribute_strategy.extended.colocate_vars_with(primary)
    return graph_mod.get_default_graph().colocate_with(primary.op)


def _make_slot(primary, initial_value, name, validate_shape, colocate_with_primary, dtype=None):
    graph = graph_mod.get_default_graph()
    full_name = f"{_primary_name(primary)}/{name}"
    with graph.name_scope(None), graph.control_dependencies(None):
        if colocate_with_primary:
            with colocated_with(primary):
                return Variable(initial_value, name=full_name, trainable=False, dtype=dtype,
                                validate_shape=validate_shape,
                                use_resource=_is_resource(primary))
        return Variable(initial_value, name=full_name, trainable=False, dtype=dtype,
                        validate_shape=validate_shape, use_resource=_is_resource(primary))


def create_slot(primary, val, name, colocate_with_primary=True):
    """Creates a slot initialized to `val`.

    Args:
        primary: the Variable or Tensor the slot is for; the slot is named after its op.
        val: the initial value (a Tensor, or anything convertible).
        name: the slot's name within the primary's name ('<primary>/<name>').
        colocate_with_primary: place the slot with `primary`.

    Returns:
        A non-trainable Variable.
    """
    val = convert_to_tensor(val)
    return _make_slot(primary, val, name, val.get_shape().is_fully_defined(),
                      colocate_with_primary)


def create_slot_with_initializer(primary, initializer, shape, dtype, name,
                                 colocate_with_primary=True):
    """Creates a slot of `shape` and `dtype` whose value comes from `initializer(shape, dtype)`.

    Raises:
        ValueError: `shape` is not fully defined.
    """
    shape = as_shape(shape)
    if not shape.is_fully_defined():
        raise ValueError(f"create_slot_with_initializer needs a fully defined shape for slot "
                         f"'{name}' of {_primary_name(primary)}, got {shape}")
    dtype = dtypes.as_dtype(dtype)
    dims = shape.as_list()

    def initial_value():
        return initializer(dims, dtype=dtype)

    return _make_slot(primary, initial_value, name, True, colocate_with_primary, dtype=dtype)


def create_zeros_slot(primary, name, dtype=None, colocate_with_primary=True):
    """Creates a slot of zeros with the primary's shape (and dtype unless `dtype` is given).

    A primary whose shape is only known at run time gets `zeros_like` of its value.
    """
    if dtype is None:
        dtype = primary.dtype.base_dtype
    dtype = dtypes.as_dtype(dtype)
    shape = primary.get_shape()
    if shape.is_fully_defined():
        initial = array_ops.zeros(shape.as_list(), dtype=dtype)
        return _make_slot(primary, initial, name, True, colocate_with_primary)
    value = primary.initialized_value() if hasattr(primary, "initialized_value") else primary
    initial = array_ops.zeros_like(value, dtype=dtype)
    return _make_slot(primary, initial, name, False, colocate_with_primary)


__all__ = ["create_slot", "create_slot_with_initializer", "create_zeros_slot"]
