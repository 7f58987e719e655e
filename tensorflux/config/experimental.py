"""`tf.config.experimental`: device listing and configuration (TF 1.15 names)."""

from tensorflux.config.devices import (
    LogicalDevice,
    LogicalDeviceConfiguration,
    PhysicalDevice,
    VirtualDeviceConfiguration,
    get_memory_growth,
    get_virtual_device_configuration,
    get_visible_devices,
    list_logical_devices,
    list_physical_devices,
    set_memory_growth,
    set_virtual_device_configuration,
    set_visible_devices,
)
from tensorflux.config.placement import (
    get_device_policy,
    get_synchronous_execution,
    set_device_policy,
    set_synchronous_execution,
)

__all__ = ["LogicalDevice", "LogicalDeviceConfiguration", "PhysicalDevice",
           "VirtualDeviceConfiguration", "get_memory_growth", "get_virtual_device_configuration",
           "get_visible_devices", "list_logical_devices", "list_physical_devices",
           "set_memory_growth", "set_virtual_device_configuration", "set_visible_devices",
           "get_device_policy", "set_device_policy", "get_synchronous_execution",
           "set_synchronous_execution"]
