"""`tf.distribute.experimental.CentralStorageStrategy`: the model's ops are replicated over
this machine's compute devices while each variable lives once, on the parameter device; the
replicas' gradients are summed onto it and applied once."""

from __future__ import annotations

from tensorflux.distribute import distribute_lib
from tensorflux.distribute.mirrored_strategy import MirroredExtended, canonical_device

__all__ = ["CentralStorageStrategy", "CentralStorageExtended"]


class CentralStorageExtended(MirroredExtended):
    """Mirrored computation, variables on one parameter device (round robin over several)."""

    def __init__(self, container_strategy, compute_devices=None, parameter_devices=None):
        super().__init__(container_strategy, compute_devices)
        if parameter_devices is None:
            parameter_devices = ("/device:CPU:0",)
        self._parameter_devices = tuple(canonical_device(d) for d in parameter_devices)
        self._placed = 0

    @property
    def parameter_devices(self) -> tuple:
        return self._parameter_devices

    def _next_parameter_device(self) -> str:
        device = self._parameter_devices[self._placed % len(self._parameter_devices)]
        self._placed += 1
        return device

    def _create_variable(self, next_creator, **kwargs):
        device = None if "colocate_with" in kwargs else self._next_parameter_device()
        return distribute_lib.place_variable(self._container_strategy(), next_creator, kwargs,
                                             device)

    def non_slot_devices(self, var_list):
        return min(var_list, key=lambda v: v.name)


class CentralStorageStrategy(distribute_lib.Strategy):
    """Variables on `parameter_device` (default the CPU), computation replicated over
    `compute_devices` (default "/device:CPU:0", there being no GPU).

    Raises:
        ValueError: an empty or duplicated device list.
    """

    def __init__(self, compute_devices=None, parameter_device=None):
        parameter = None if parameter_device is None else (parameter_device,)
        super().__init__(CentralStorageExtended(self, compute_devices, parameter))

    def __repr__(self) -> str:
        return (f"<tf.distribute.experimental.CentralStorageStrategy compute="
                f"{list(self.extended.worker_devices)} "
                f"parameters={list(self.extended.parameter_devices)}>")
