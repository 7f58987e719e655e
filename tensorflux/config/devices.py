"""Devices as `tf.config` reports and configures them: one physical CPU on this host (no GPUs),
logical devices as the runtime names them, and the per-device settings TF 1.15 exposes
(visibility, virtual devices; memory growth exists only for GPUs)."""

from __future__ import annotations

import collections
import threading

from tensorflux.runtime.device import local_devices
from tensorflux.runtime.process_config import defaults

__all__ = ["PhysicalDevice", "LogicalDevice", "VirtualDeviceConfiguration",
           "LogicalDeviceConfiguration", "list_physical_devices", "list_logical_devices",
           "get_visible_devices", "set_visible_devices", "get_memory_growth",
           "set_memory_growth", "get_virtual_device_configuration",
           "set_virtual_device_configuration", "experimental_list_devices",
           "get_logical_device_configuration", "set_logical_device_configuration"]

PhysicalDevice = collections.namedtuple("PhysicalDevice", ["name", "device_type"])
LogicalDevice = collections.namedtuple("LogicalDevice", ["name", "device_type"])


class LogicalDeviceConfiguration(
        collections.namedtuple("LogicalDeviceConfiguration", ["memory_limit"])):
    """One logical device carved out of a physical one (`memory_limit` in MB, GPUs only)."""

    def __new__(cls, memory_limit=None):
        return super().__new__(cls, memory_limit)


VirtualDeviceConfiguration = LogicalDeviceConfiguration

_CPU = PhysicalDevice("/physical_device:CPU:0", "CPU")
_lock = threading.Lock()
_visible: list = [_CPU]
_virtual: dict = {}


def _check_type(device_type):
    if device_type is not None and not isinstance(device_type, str):
        raise TypeError(f"device_type must be a string such as 'CPU' or 'GPU', got "
                        f"{device_type!r}")


def list_physical_devices(device_type=None):
    """The physical devices of this host ('CPU' only: tensorflux has no GPU devices)."""
    _check_type(device_type)
    return [_CPU] if device_type in (None, "CPU") else []


def _check_physical(device):
    if device not in list_physical_devices():
        raise ValueError(f"Unrecognized device: {device!r}")


def get_visible_devices(device_type=None):
    """The physical devices the runtime may use."""
    _check_type(device_type)
    with _lock:
        return [d for d in _visible if device_type in (None, d.device_type)]


def set_visible_devices(devices, device_type=None):
    """Restricts the runtime to `devices`; the CPU cannot be hidden (as in TF).

    Raises:
        ValueError: an unknown device, or a list without the CPU when CPUs are concerned.
    """
    _check_type(device_type)
    devices = [devices] if isinstance(devices, PhysicalDevice) else list(devices)
    for device in devices:
        _check_physical(device)
    if device_type in (None, "CPU") and _CPU not in devices:
        raise ValueError("CPU visibility cannot be changed: the CPU device must stay visible.")
    with _lock:
        _visible[:] = devices or [_CPU]


def get_memory_growth(device):
    """Raises ValueError: memory growth is a GPU setting and there are no GPUs."""
    _check_physical(device)
    raise ValueError(f"Cannot get memory growth on non-GPU devices: {device.name}")


def set_memory_growth(device, enable):
    """Raises ValueError: memory growth is a GPU setting and there are no GPUs."""
    _check_physical(device)
    raise ValueError(f"Cannot set memory growth on non-GPU devices: {device.name}")


def get_virtual_device_configuration(device):
    """The logical devices configured on `device` (None if not configured)."""
    _check_physical(device)
    with _lock:
        return _virtual.get(device)


def set_virtual_device_configuration(device, logical_devices):
    """Splits the CPU into `len(logical_devices)` logical CPUs (`/device:CPU:0..n-1`) for the
    sessions created afterwards (None: back to one).

    Raises:
        ValueError: an unknown device, an empty list, or a memory limit on a CPU.
    """
    _check_physical(device)
    logical_devices = list(logical_devices) if logical_devices is not None else None
    if logical_devices is not None:
        if not logical_devices:
            raise ValueError("logical_devices must be a non-empty list")
        for config in logical_devices:
            if not isinstance(config, LogicalDeviceConfiguration):
                raise TypeError(f"Expected LogicalDeviceConfiguration, got {config!r}")
            if config.memory_limit is not None:
                raise ValueError("Setting memory limit on CPU virtual devices is currently "
                                 "not supported")
    with _lock:
        if logical_devices is None:
            _virtual.pop(device, None)
        else:
            _virtual[device] = logical_devices
        defaults.update(logical_cpus=len(_virtual.get(_CPU) or [None]))


def logical_cpu_count() -> int:
    """How many logical CPUs `set_virtual_device_configuration` asked for (default 1)."""
    with _lock:
        return len(_virtual.get(_CPU) or [None])


def list_logical_devices(device_type=None):
    """The logical devices sessions place ops on."""
    _check_type(device_type)
    if device_type not in (None, "CPU"):
        return []
    return [LogicalDevice(d.name, d.device_type)
            for d in local_devices(cpu_count=logical_cpu_count())]


def experimental_list_devices():
    """The full names of the logical devices (TF 1.15's `tf.config.experimental_list_devices`)."""
    return [d.name for d in list_logical_devices()]


get_logical_device_configuration = get_virtual_device_configuration
set_logical_device_configuration = set_virtual_device_configuration
