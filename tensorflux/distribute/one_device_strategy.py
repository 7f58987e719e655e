"""`tf.distribute.OneDeviceStrategy`: every variable and op of the replica on one device."""

from __future__ import annotations

from tensorflux.distribute import distribute_lib
from tensorflux.distribute import values as values_lib
from tensorflux.distribute.mirrored_strategy import canonical_device
from tensorflux.framework import graph as graph_mod
from tensorflux.framework import nest
from tensorflux.ops.control_flow import primitives as control_flow_ops

__all__ = ["OneDeviceStrategy"]


class _OneDeviceExtended(distribute_lib.StrategyExtended):
    def __init__(self, container_strategy, device):
        super().__init__(container_strategy)
        self._device = canonical_device(device)

    @property
    def worker_devices(self) -> tuple:
        return (self._device,)

    def _create_variable(self, next_creator, **kwargs):
        return distribute_lib.place_variable(self._container_strategy(), next_creator, kwargs,
                                             self._device)

    def colocate_vars_with(self, colocate_with_variable):
        return distribute_lib.colocating_creator_scope(colocate_with_variable)

    def _call_for_each_replica(self, fn, args, kwargs):
        graph = graph_mod.get_default_graph()
        with distribute_lib.ReplicaContext(self._container_strategy(), 0), \
                graph.device(self._device):
            return fn(*args, **kwargs)

    def _reduce_to(self, reduce_op, value, destinations):
        return value

    def _update(self, var, fn, args, kwargs, group):
        graph = graph_mod.get_default_graph()
        with graph.device(self._device), values_lib.updating_replica(0):
            result = fn(var, *args, **kwargs)
        if group:
            ops = [u for u in nest.flatten(result) if u is not None]
            return control_flow_ops.group(*ops) if ops else None
        return (result,)

    def _update_non_slot(self, colocate_with, fn, args, kwargs, group):
        graph = graph_mod.get_default_graph()
        with graph.device(self._device):
            result = fn(*args, **kwargs)
        return result if group else (result,)

    def non_slot_devices(self, var_list):
        return self._device


class OneDeviceStrategy(distribute_lib.Strategy):
    """Places the model and its variables on `device` (one replica).

    Raises:
        ValueError: `device` is not a device string.
    """

    def __init__(self, device):
        super().__init__(_OneDeviceExtended(self, device))

    def __repr__(self) -> str:
        return f"<tf.distribute.OneDeviceStrategy device={self.extended.worker_devices[0]}>"
