"""Devices of one process: a name, a type, an incarnation and a resource manager."""

from __future__ import annotations

import random

from tensorflux.framework.device_spec import DeviceSpec
from tensorflux.runtime.resource_mgr import ResourceMgr


class Device:
    """A local compute device. CPU devices run kernels registered for "CPU"."""

    def __init__(self, name: str, device_type: str = "CPU", memory_limit: int = 1 << 32):
        self.name = name
        self.spec = DeviceSpec.from_string(name)
        self.device_type = device_type
        self.memory_limit = memory_limit
        self.incarnation = random.SystemRandom().getrandbits(63) | 1
        self.resource_mgr = ResourceMgr(name)

    def __repr__(self) -> str:
        return f"Device({self.name!r})"


def local_devices(job: str = "localhost", task: int = 0, cpu_count: int = 1,
                  replica: int = 0) -> list:
    """The devices of one task: `/job:J/replica:R/task:T/device:CPU:i`."""
    return [Device(f"/job:{job}/replica:{replica}/task:{task}/device:CPU:{i}", "CPU")
            for i in range(max(1, cpu_count))]
