"""`tensorflow.python.client.device_lib`: the devices a session would see here."""

from __future__ import annotations

from tensorflux.protos import device_attributes_pb2
from tensorflux.runtime.device import local_devices

_MEMORY_LIMIT = 268435456  # what TF reports for its CPU device


def list_local_devices(session_config=None) -> list:
    """DeviceAttributes of the local devices (`/device:CPU:i`; more CPUs when
    `session_config.device_count["CPU"]` asks for them). There is no GPU.

    Args:
        session_config: an optional `ConfigProto`.

    Returns:
        A list of `DeviceAttributes` protos.
    """
    count = 1
    if session_config is not None and "CPU" in session_config.device_count:
        count = max(1, session_config.device_count["CPU"])
    result = []
    for device in local_devices(cpu_count=count):
        short = "/device:" + device.name.rsplit("/device:", 1)[1]
        result.append(device_attributes_pb2.DeviceAttributes(
            name=short, device_type=device.device_type, memory_limit=_MEMORY_LIMIT,
            incarnation=device.incarnation, physical_device_desc=""))
    return result
