"""`Session.list_devices()` entries with TF's field names."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DeviceAttributes:
    """What a session reports about one of its devices."""

    name: str
    device_type: str
    memory_limit_bytes: int
    incarnation: int

    @property
    def memory_limit(self) -> int:
        return self.memory_limit_bytes


def describe_devices(devices) -> list:
    return [DeviceAttributes(d.name, d.device_type, d.memory_limit, d.incarnation)
            for d in devices]
