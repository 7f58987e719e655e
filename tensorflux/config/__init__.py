"""`tf.config`: devices, threading, optimizer and placement settings of the process.

TF 1.15's module: `tf.config.experimental.list_physical_devices('GPU')` (empty here),
`tf.config.threading.set_intra_op_parallelism_threads(n)`, `tf.config.optimizer.set_jit(True)`,
`tf.config.set_soft_device_placement(True)`; the TF 2 top-level names are here too.
"""

from tensorflux.config import experimental, optimizer, threading
from tensorflux.config.devices import (
    LogicalDevice,
    LogicalDeviceConfiguration,
    PhysicalDevice,
    experimental_list_devices,
    get_logical_device_configuration,
    get_visible_devices,
    list_logical_devices,
    list_physical_devices,
    set_logical_device_configuration,
    set_visible_devices,
)
from tensorflux.config.placement import get_soft_device_placement, set_soft_device_placement

__all__ = ["experimental", "optimizer", "threading", "LogicalDevice",
           "LogicalDeviceConfiguration", "PhysicalDevice", "experimental_list_devices",
           "get_logical_device_configuration", "get_visible_devices", "list_logical_devices",
           "list_physical_devices", "set_logical_device_configuration", "set_visible_devices",
           "get_soft_device_placement", "set_soft_device_placement",
           "experimental_run_functions_eagerly", "experimental_functions_run_eagerly",
           "run_functions_eagerly", "functions_run_eagerly"]


def experimental_run_functions_eagerly(run_eagerly):
    """Graph mode: `tf.function`s always run as graph functions.

    Raises:
        ValueError: run_eagerly=True (there is no eager execution in TF1 graph mode).
    """
    if run_eagerly:
        raise ValueError("tf.config.experimental_run_functions_eagerly(True) needs eager "
                         "execution; tensorflux runs TF1 graphs (functions run as graphs)")


def experimental_functions_run_eagerly():
    """Always False in graph mode."""
    return False


run_functions_eagerly = experimental_run_functions_eagerly
functions_run_eagerly = experimental_functions_run_eagerly
