"""`tf.distribute.MirroredStrategy`: synchronous data parallelism over the devices of one
machine (in-graph replication, as the paper's synchronous training with one model copy per
device).

Every variable created in `scope()` is a MirroredVariable with one component per device, all
initialised from the first's initial value. Each replica runs the model function on its device
with its own inputs; an optimizer's `apply_gradients` meets all replicas in a `merge_call`,
sums the gradients across them (`cross_device_ops`) and applies the sum to every component, so
the components stay equal. With no GPU the devices are CPU devices: `MirroredStrategy()` uses
"/device:CPU:0"; more CPU devices come from `ConfigProto(device_count={"CPU": n})`.
"""

from __future__ import annotations

from tensorflux.distribute import cross_device_ops as cross_device_ops_lib
from tensorflux.distribute import distribute_lib, replica_threads
from tensorflux.distribute import values as values_lib
from tensorflux.framework import graph as graph_mod
from tensorflux.framework import nest
from tensorflux.framework.device_spec import DeviceSpec
from tensorflux.framework.graph import GraphKeys
from tensorflux.ops import array as array_ops
from tensorflux.ops.control_flow import primitives as control_flow_ops
from tensorflux.ops.state import variables as variables_lib

__all__ = ["MirroredStrategy", "MirroredExtended", "MirroredReplicaContext",
           "canonical_device"]

_LOCAL = "/job:localhost/replica:0/task:0"


def canonical_device(device: str) -> str:
    """'/cpu:0', 'CPU:0', '/device:CPU:0' -> '/job:localhost/replica:0/task:0/device:CPU:0'.

    Raises:
        ValueError: not a device specification.
    """
    if not isinstance(device, str):
        raise ValueError(f"A device must be a string; got {device!r}")
    text = device if device.startswith("/") else "/device:" + device
    spec = DeviceSpec.from_string(text)
    if spec.device_type is None:
        raise ValueError(f"Device {device!r} names no device type")
    job = spec.job or "localhost"
    replica = 0 if spec.replica is None else spec.replica
    task = 0 if spec.task is None else spec.task
    index = 0 if spec.device_index is None else spec.device_index
    return f"/job:{job}/replica:{replica}/task:{task}/device:{spec.device_type.upper()}:{index}"


class MirroredReplicaContext(distribute_lib.ReplicaContext):
    """A replica of a MirroredStrategy: `merge_call` meets the other replicas."""

    def __init__(self, strategy, replica_id, thread=None):
        super().__init__(strategy, replica_id)
        self._thread = thread

    def _merge_call(self, merge_fn, args, kwargs):
        if self._thread is None:  # one replica: the merge runs right here
            return super()._merge_call(merge_fn, args, kwargs)
        return self._thread.merge(merge_fn, args, kwargs)


class MirroredExtended(distribute_lib.StrategyExtended):
    """The placement, reduction and update rules of MirroredStrategy."""

    def __init__(self, container_strategy, devices=None, cross_device_ops=None):
        super().__init__(container_strategy)
        if devices is None:
            devices = ("/device:CPU:0",)
        devices = tuple(devices)
        if not devices:
            raise ValueError("`devices` cannot be empty")
        canonical = tuple(canonical_device(d) for d in devices)
        if len(set(canonical)) != len(canonical):
            raise ValueError(f"No duplicates allowed in `devices` argument: {devices}")
        self._devices = canonical
        if cross_device_ops is not None and not isinstance(
                cross_device_ops, cross_device_ops_lib.CrossDeviceOps):
            raise ValueError(f"cross_device_ops must be a tf.distribute.CrossDeviceOps; got "
                             f"{cross_device_ops!r}")
        self._cross_device_ops = cross_device_ops or \
            cross_device_ops_lib.ReductionToOneDevice()

    @property
    def worker_devices(self) -> tuple:
        return self._devices

    @property
    def parameter_devices(self) -> tuple:
        return self._devices

    # -- variables -------------------------------------------------------------------------

    def _create_variable(self, next_creator, **kwargs):
        colocate_with = kwargs.pop("colocate_with", None)
        devices = self._devices if colocate_with is None else \
            cross_device_ops_lib.devices_of(colocate_with)
        synchronization = kwargs.get("synchronization") or \
            variables_lib.VariableSynchronization.AUTO
        aggregation = kwargs.get("aggregation") or variables_lib.VariableAggregation.NONE
        name = kwargs.get("name")
        if synchronization == variables_lib.VariableSynchronization.NONE:
            raise ValueError(f"`NONE` variable synchronization mode is not supported with "
                             f"`Mirrored` distribution strategy. Please change the "
                             f"`synchronization` for variable: {name}")
        if not isinstance(aggregation, variables_lib.VariableAggregation):
            raise ValueError(f"Invalid variable aggregation mode: {aggregation} for variable: "
                             f"{name}")
        kwargs.pop("caching_device", None)  # components are read on their own devices
        graph = graph_mod.get_default_graph()
        collections = kwargs.get("collections") or [GraphKeys.GLOBAL_VARIABLES]
        components = []
        for index, device in enumerate(devices):
            with graph.device(device):
                if index > 0:
                    primary = components[0]
                    kwargs["name"] = f"{primary.op.name}/replica_{index}/"
                    kwargs["initial_value"] = _copy_of_initial_value(primary)
                    kwargs.pop("shape", None)
                components.append(next_creator(**kwargs))
        cls = values_lib.SyncOnReadVariable \
            if synchronization == variables_lib.VariableSynchronization.ON_READ \
            else values_lib.MirroredVariable
        result = cls(self._container_strategy(), components, aggregation)
        values_lib.add_to_collections(graph, components, result, collections)
        return result

    def colocate_vars_with(self, colocate_with_variable):
        """Variables created in the block get components on `colocate_with_variable`'s
        devices (slots of a mirrored variable live beside its components)."""
        return distribute_lib.colocating_creator_scope(colocate_with_variable)

    def non_slot_devices(self, var_list):
        return self._devices

    def read_var(self, v):
        if isinstance(v, values_lib.SyncOnReadVariable):
            return v._get_cross_replica()
        if isinstance(v, values_lib.DistributedVariable):
            return array_ops.identity(v.primary)
        return array_ops.identity(v)

    # -- running ---------------------------------------------------------------------------

    def _call_for_each_replica(self, fn, args, kwargs):
        if len(self._devices) == 1:
            graph = graph_mod.get_default_graph()
            with MirroredReplicaContext(self._container_strategy(), 0), \
                    graph.device(self._devices[0]):
                return fn(*values_lib.select_replica(0, args),
                          **values_lib.select_replica(0, kwargs))
        return replica_threads.call_for_each_replica(self._container_strategy(),
                                                     self._devices, fn, args, kwargs)

    def _reduce_to(self, reduce_op, value, destinations):
        if not isinstance(value, values_lib.DistributedValues) and len(self._devices) == 1:
            return value
        return self._cross_device_ops.reduce(reduce_op, value, destinations)

    def batch_reduce_to(self, reduce_op, value_destination_pairs) -> list:
        reduce_op = distribute_lib._reduce_op(reduce_op)
        pairs = list(value_destination_pairs)
        if len(self._devices) == 1 and not any(
                isinstance(v, values_lib.DistributedValues) for v, _ in pairs):
            return [v for v, _ in pairs]
        return self._cross_device_ops.batch_reduce(reduce_op, pairs)

    def _update(self, var, fn, args, kwargs, group):
        graph = graph_mod.get_default_graph()
        components = var.values if isinstance(var, values_lib.DistributedVariable) else (var,)
        updates = []
        for index, component in enumerate(components):
            with values_lib.updating_replica(index), graph.device(component.device), \
                    graph.name_scope(f"update_{index}"):
                updates.append(fn(component, *values_lib.select_replica(index, args),
                                  **values_lib.select_replica(index, kwargs)))
        return _regrouped(updates, group)

    def _update_non_slot(self, colocate_with, fn, args, kwargs, group):
        graph = graph_mod.get_default_graph()
        devices = cross_device_ops_lib.devices_of(colocate_with)
        updates = []
        for index, device in enumerate(devices):
            with values_lib.updating_replica(index), graph.device(device), \
                    graph.name_scope(f"update_{index}"):
                updates.append(fn(*values_lib.select_replica(index, args),
                                  **values_lib.select_replica(index, kwargs)))
        return _regrouped(updates, group)

    def _local_results(self, value) -> tuple:
        if isinstance(value, values_lib.DistributedVariable):
            return value.values
        return super()._local_results(value)


def _copy_of_initial_value(primary):
    """Component i > 0 starts from the primary's initial value (the same random draw)."""
    def initial_value():
        return array_ops.identity(primary.initial_value)

    return initial_value


def _regrouped(updates: list, group: bool):
    if group:
        ops = [u for u in nest.flatten(updates) if u is not None]
        return control_flow_ops.group(*ops) if ops else None
    return tuple(updates)


class MirroredStrategy(distribute_lib.Strategy):
    """Synchronous training on several devices of this machine (see the module docstring).

    Args:
        devices: the devices of the replicas (default: "/device:CPU:0", there being no GPU).
        cross_device_ops: how gradients are summed (default ReductionToOneDevice).

    Raises:
        ValueError: an empty or duplicated device list, or a device string that names none.
    """

    def __init__(self, devices=None, cross_device_ops=None):
        super().__init__(MirroredExtended(self, devices, cross_device_ops))

    def __repr__(self) -> str:
        return f"<tf.distribute.MirroredStrategy devices={list(self.extended.worker_devices)}>"
