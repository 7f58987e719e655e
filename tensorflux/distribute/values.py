"""Values that live on several replicas: `PerReplica` (one value per replica), `Mirrored` (the
same value on every replica), and the distributed variables built from one variable per device.

A distributed variable is a `tf.Variable` whose reads and updates go to the component of the
replica running the code: component *i* in replica *i*'s context, and in cross-replica context
the component of the device being updated (`strategy.extended.update`) or else the primary
(the first). Its name, initial value and checkpoint entry are the primary's.
"""

from __future__ import annotations

import threading

from tensorflux.framework import nest
from tensorflux.framework.graph import GraphKeys
from tensorflux.framework.tensor_conversion import (
    convert_to_tensor,
    register_tensor_conversion_function,
)
from tensorflux.ops import math as math_ops
from tensorflux.ops.control_flow import primitives as control_flow_ops
from tensorflux.ops.state import variables as variables_lib

__all__ = ["DistributedValues", "PerReplica", "Mirrored", "DistributedVariable",
           "MirroredVariable", "SyncOnReadVariable", "regroup", "select_replica",
           "unzip_per_replica", "current_replica_index"]


class DistributedValues:
    """One value per replica, in replica order."""

    def __init__(self, values):
        self._values = tuple(values)

    @property
    def values(self) -> tuple:
        return self._values

    @property
    def devices(self) -> tuple:
        return tuple(getattr(v, "device", "") for v in self._values)

    @property
    def primary(self):
        return self._values[0]

    def get(self, replica: int = 0):
        return self._values[replica]

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        parts = ", ".join(f"{i}: {v!r}" for i, v in enumerate(self._values))
        return f"{type(self).__name__}:{{{parts}}}"


class PerReplica(DistributedValues):
    """Each replica's own value (results of `experimental_run_v2`, per-replica inputs)."""


class Mirrored(DistributedValues):
    """The same value held on every replica (the result of an all-reduce)."""


# -- which replica's component a read picks -------------------------------------------------

_UPDATE = threading.local()


def current_replica_index():
    """The replica whose component reads pick now: the replica context's id, or the device
    being updated by `extended.update`, else None (the primary)."""
    index = getattr(_UPDATE, "index", None)
    if index is not None:
        return index
    from tensorflux.distribute import distribute_lib  # cycle: distribute_lib builds on values

    context = distribute_lib.get_replica_context()
    if context is None:
        return None
    return context.replica_id_in_sync_group


class updating_replica:
    """Within the block, distributed variables read their `index`-th component."""

    def __init__(self, index: int):
        self._index = index
        self._saved = None

    def __enter__(self):
        self._saved = getattr(_UPDATE, "index", None)
        _UPDATE.index = self._index
        return self

    def __exit__(self, *exc):
        _UPDATE.index = self._saved
        return False


# -- distributed variables -------------------------------------------------------------------

class DistributedVariable(variables_lib.Variable):
    """A variable with one component per device (see the module docstring)."""

    def __new__(cls, *args, **kwargs):
        return object.__new__(cls)

    def __init__(self, strategy, components, aggregation):
        self._distribute_strategy = strategy
        self._components = tuple(components)
        self._distributed_aggregation = aggregation
        for component in self._components:
            component._distributed_container = self
        if len(self._components) == 1:
            self._initializer_op = self._components[0].initializer
        else:
            self._initializer_op = control_flow_ops.group(
                *(c.initializer for c in self._components))

    # -- which component -------------------------------------------------------------------

    def _get(self):
        index = current_replica_index()
        if index is None or index >= len(self._components):
            return self._components[0]
        return self._components[index]

    @property
    def primary(self):
        return self._components[0]

    @property
    def values(self) -> tuple:
        return self._components

    @property
    def devices(self) -> tuple:
        return tuple(c.device for c in self._components)

    @property
    def distribute_strategy(self):
        return self._distribute_strategy

    # -- what stays the primary's ----------------------------------------------------------

    @property
    def name(self) -> str:
        return self._components[0].name

    @property
    def op(self):
        """The primary's op in cross-replica context (its name keys slots and checkpoints),
        else the op of the replica's component."""
        from tensorflux.distribute import distribute_lib  # cycle: it builds on values

        if distribute_lib.in_cross_replica_context() and getattr(_UPDATE, "index", None) is None:
            return self._components[0].op
        return self._get().op

    @property
    def initial_value(self):
        return self._components[0].initial_value

    @property
    def initializer(self):
        return self._initializer_op

    @property
    def trainable(self) -> bool:
        return self._components[0].trainable

    @property
    def aggregation(self):
        return self._distributed_aggregation

    @property
    def synchronization(self):
        return self._components[0].synchronization

    @property
    def graph(self):
        return self._components[0].graph

    @property
    def dtype(self):
        return self._components[0].dtype

    @property
    def shape(self):
        return self._components[0].shape

    def get_shape(self):
        return self._components[0].get_shape()

    def _get_save_slice_info(self):
        return self._components[0]._get_save_slice_info()

    def to_proto(self, export_scope=None):
        return self._components[0].to_proto(export_scope)

    def __repr__(self) -> str:
        parts = ", ".join(f"{i}: {c!r}" for i, c in enumerate(self._components))
        return f"{type(self).__name__}:{{{parts}}}"

    def __hash__(self) -> int:
        return id(self)

    def __eq__(self, other) -> bool:
        return self is other

    def __ne__(self, other) -> bool:
        return self is not other

    def __getattr__(self, name):
        if name.startswith("__") or name in ("_components", "_distribute_strategy",
                                             "_distributed_aggregation", "_initializer_op"):
            raise AttributeError(name)
        return getattr(self._get(), name)


def _delegating(name: str):
    def method(self, *args, **kwargs):
        return getattr(self._get(), name)(*args, **kwargs)

    method.__name__ = name
    return method


def _delegating_property(name: str):
    return property(lambda self: getattr(self._get(), name))


_OWN = set(vars(DistributedVariable))
for _name, _value in list(vars(variables_lib.Variable).items()):
    if _name in _OWN or _name in ("__init__", "__new__", "__dict__", "__weakref__",
                                  "__module__", "__doc__", "__qualname__", "__reduce__",
                                  "SaveSliceInfo", "from_proto", "__array_priority__"):
        continue
    if isinstance(_value, property):
        setattr(DistributedVariable, _name, _delegating_property(_name))
    elif callable(_value) and not isinstance(_value, (staticmethod, classmethod)):
        setattr(DistributedVariable, _name, _delegating(_name))


def _distributed_to_tensor(value, dtype=None, name=None, as_ref=False):
    return convert_to_tensor(value._get(), dtype=dtype, name=name, as_ref=as_ref)


register_tensor_conversion_function(DistributedVariable, _distributed_to_tensor, priority=10)


_ASSIGNS = ("assign", "assign_add", "assign_sub")


class MirroredVariable(DistributedVariable):
    """The same value on every device, kept in sync: optimizers update every component with
    the all-reduced gradient; an assignment in cross-replica context assigns every component."""

    def _assign_each(self, method: str, value, kwargs):
        from tensorflux.distribute import distribute_lib  # cycle: it builds on values

        if distribute_lib.in_cross_replica_context() and \
                getattr(_UPDATE, "index", None) is None:
            updates = []
            for index, component in enumerate(self._components):
                with updating_replica(index), component.graph.device(component.device):
                    updates.append(getattr(component, method)(value, **kwargs))
            return _grouped_assign(updates)
        context = distribute_lib.get_replica_context()
        if context is None or getattr(_UPDATE, "index", None) is not None:
            return getattr(self._get(), method)(value, **kwargs)
        aggregation = self._distributed_aggregation
        if aggregation == variables_lib.VariableAggregation.NONE and \
                context.num_replicas_in_sync > 1:
            raise ValueError(
                "You must specify an aggregation method to update a MirroredVariable in "
                "Replica Context. You can do so by passing an explicit value for argument "
                "`aggregation` to tf.Variable(..).e.g. `tf.Variable(..., "
                "aggregation=tf.VariableAggregation.SUM)`.`tf.VariableAggregation` lists the "
                f"possible aggregation types. (variable {self.name})")

        def merge(strategy, per_replica_value):
            from tensorflux.distribute.reduce_util import ReduceOp

            if aggregation in (variables_lib.VariableAggregation.ONLY_FIRST_REPLICA,
                               variables_lib.VariableAggregation.NONE):
                reduced = select_replica(0, per_replica_value)
            else:
                reduced = strategy.extended.reduce_to(
                    ReduceOp.from_variable_aggregation(aggregation), per_replica_value, self)
            return strategy.extended.update(
                self, lambda component, v: getattr(component, method)(v, **kwargs),
                args=(reduced,), group=False)

        results = context.merge_call(merge, args=(value,))
        return results[min(context.replica_id_in_sync_group, len(results) - 1)]

    def assign(self, value, use_locking=False, name=None, read_value=True):
        return self._assign_each("assign", value, dict(use_locking=use_locking, name=name,
                                                        read_value=read_value))

    def assign_add(self, delta, use_locking=False, name=None, read_value=True):
        return self._assign_each("assign_add", delta, dict(use_locking=use_locking, name=name,
                                                            read_value=read_value))

    def assign_sub(self, delta, use_locking=False, name=None, read_value=True):
        return self._assign_each("assign_sub", delta, dict(use_locking=use_locking, name=name,
                                                            read_value=read_value))


def _grouped_assign(updates: list):
    if len(updates) == 1:
        return updates[0]
    ops = [u.op if hasattr(u, "op") else u for u in updates]
    return control_flow_ops.group(*ops)


class SyncOnReadVariable(DistributedVariable):
    """One independent component per replica (metrics' counters): each replica updates its
    own; a read in cross-replica context combines them by the variable's aggregation."""

    def _get_cross_replica(self):

        components = [c.value() for c in self._components]
        if self._distributed_aggregation == variables_lib.VariableAggregation.ONLY_FIRST_REPLICA:
            return components[0]
        total = components[0] if len(components) == 1 else math_ops.add_n(components)
        if self._distributed_aggregation == variables_lib.VariableAggregation.MEAN:
            total = total / len(components)
        return total

    def value(self):
        from tensorflux.distribute import distribute_lib  # cycle: it builds on values

        if distribute_lib.in_cross_replica_context() and \
                getattr(_UPDATE, "index", None) is None:
            if self._components[0].graph.finalized:
                # No sum can be built any more; what still reads the variable then (the
                # meta graph's variable entry) names it by the primary, as TF's proto does.
                return self._components[0].value()
            return self._get_cross_replica()
        return self._get().value()

    def read_value(self):
        return self.value()


def _sync_on_read_to_tensor(value, dtype=None, name=None, as_ref=False):
    if as_ref:
        return convert_to_tensor(value._get(), dtype=dtype, name=name, as_ref=True)
    return convert_to_tensor(value.value(), dtype=dtype, name=name)


register_tensor_conversion_function(SyncOnReadVariable, _sync_on_read_to_tensor, priority=9)


# -- structure helpers -----------------------------------------------------------------------

def regroup(per_replica_results: list, wrap_class=PerReplica):
    """[structure of replica 0, structure of replica 1, ...] -> one structure whose leaves are
    `wrap_class` values (a leaf that is the same object on every replica stays as it is).
    Lists, tuples, namedtuples (rebuilt without running their constructor's checks, as an
    EstimatorSpec of PerReplica values must be) and dicts are walked.

    Raises:
        ValueError: the replicas returned structures of different shapes.
    """
    if len(per_replica_results) == 1:
        return per_replica_results[0]
    first = per_replica_results[0]
    if isinstance(first, (list, tuple)) and not isinstance(first, DistributedValues):
        if any(not isinstance(r, type(first)) or len(r) != len(first)
               for r in per_replica_results):
            raise ValueError(f"The replicas returned different structures: "
                             f"{per_replica_results!r}")
        items = [regroup([r[i] for r in per_replica_results], wrap_class)
                 for i in range(len(first))]
        if isinstance(first, list):
            return items
        if hasattr(first, "_fields"):
            return type(first)._make(items)
        return tuple(items)
    if isinstance(first, dict):
        if any(not isinstance(r, dict) or set(r) != set(first) for r in per_replica_results):
            raise ValueError(f"The replicas returned different dict keys: "
                             f"{per_replica_results!r}")
        return {k: regroup([r[k] for r in per_replica_results], wrap_class) for k in first}
    if all(r is first for r in per_replica_results):
        return first
    return wrap_class(per_replica_results)


def select_replica(index: int, structure):
    """`structure` with each DistributedValues leaf replaced by its `index`-th value."""
    def pick(value):
        if isinstance(value, DistributedValues):
            return value.values[index]
        return value

    return nest.map_structure(pick, structure)


def unzip_per_replica(value, count: int) -> list:
    """A per-replica tuple of `count` items -> `count` per-replica values."""
    if isinstance(value, tuple) and len(value) == count and not isinstance(
            value, DistributedValues):
        return list(value)
    if isinstance(value, DistributedValues):
        return [PerReplica([v[i] for v in value.values]) for i in range(count)]
    return [v for v in value]


def is_distributed_variable(value) -> bool:
    return isinstance(value, DistributedVariable)


def add_to_collections(graph, components: list, result, collections) -> None:
    """Replaces the components by `result` in the graph's variable collections (components
    are registered by their own constructors; users and savers see the distributed one)."""
    for key in list(collections) + [GraphKeys.TRAINABLE_VARIABLES]:
        ref = graph.get_collection_ref(key)
        found = [i for i, v in enumerate(ref) if any(v is c for c in components)]
        for i in reversed(found):
            del ref[i]
        if found and result not in ref:
            ref.append(result)
