"""`tf.train.replica_device_setter`: place state on parameter servers, compute on a worker.

The setter is a device function for `tf.device(...)`. Ops whose type is in `ps_ops` (variables,
hash tables, ...) go to `ps_device` with a task picked by `ps_strategy` (round robin by
default); every other op goes to `worker_device`. As in TF1, the devices that inner
`tf.device` scopes chose are merged in and win field by field, a ps task is only picked when
the op is not already pinned to another job, and with `merge_devices=False` an op that has a
device keeps it unchanged.

`GreedyLoadBalancingStrategy` and `byte_size_load_fn` lived in `tf.contrib.training` in TF1;
tensorflux exposes them under `tf.train` as extras.
"""

from __future__ import annotations

import numpy as np

from tensorflux.distributed.cluster_spec import ClusterSpec
from tensorflux.framework.device_spec import DeviceSpec
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.platform import tf_logging as logging

__all__ = ["replica_device_setter", "GreedyLoadBalancingStrategy", "byte_size_load_fn"]

# The op types TF1 puts on parameter servers by default.
STANDARD_PS_OPS = (
    "Variable", "VariableV2", "AutoReloadVariable", "MutableHashTable", "MutableHashTableV2",
    "MutableHashTableOfTensors", "MutableHashTableOfTensorsV2", "MutableDenseHashTable",
    "MutableDenseHashTableV2", "VarHandleOp", "BoostedTreesEnsembleResourceHandleOp",
    "BoostedTreesQuantileStreamResourceHandleOp", "ResourceConditionalAccumulator",
    "DecisionTreeResource",
)


class _RoundRobinStrategy:
    """Tasks 0, 1, ..., n-1, 0, ... in the order ps ops are created."""

    def __init__(self, num_tasks: int):
        self._num_tasks = num_tasks
        self._next_task = 0

    def __call__(self, unused_op) -> int:
        task = self._next_task
        self._next_task = (task + 1) % self._num_tasks
        return task


class GreedyLoadBalancingStrategy:
    """Puts each ps op on the least-loaded ps task so far (ties: the lowest task).

    The load of an op is `load_fn(op)`, in any unit as long as it is consistent (e.g.
    `byte_size_load_fn`). The result depends on the order in which ops are created.

    Args:
        num_tasks: number of ps tasks.
        load_fn: `fn(op) -> number`.

    Example:
        >>> strategy = tf.train.GreedyLoadBalancingStrategy(2, tf.train.byte_size_load_fn)
        >>> with tf.device(tf.train.replica_device_setter(ps_tasks=2, ps_strategy=strategy)):
        ...     big = tf.Variable(tf.zeros([1000]))   # ps task 0
        ...     small = tf.Variable(tf.zeros([10]))   # ps task 1
        ...     other = tf.Variable(tf.zeros([10]))   # ps task 1 (load 40 bytes < 4000)
    """

    def __init__(self, num_tasks: int, load_fn):
        if int(num_tasks) < 1:
            raise ValueError(f"num_tasks must be positive, got {num_tasks}")
        if not callable(load_fn):
            raise TypeError(f"load_fn must be callable, got {load_fn!r}")
        self._num_tasks = int(num_tasks)
        self._load_fn = load_fn
        self._ps_loads = np.zeros(self._num_tasks)

    def __call__(self, op) -> int:
        task = int(np.argmin(self._ps_loads))
        self._ps_loads[task] += self._load_fn(op)
        return task


def byte_size_load_fn(op) -> int:
    """The size in bytes of the single output of `op` (typically a variable op).

    Raises:
        ValueError: `op` has not exactly one output, or its shape is not fully defined.
    """
    if len(op.outputs) != 1:
        raise ValueError(f"Op {op.name} must have a single output, it has {len(op.outputs)}")
    output = op.outputs[0]
    shape = output.get_shape()
    if not shape.is_fully_defined():
        # NOTE: a variable op's output shape is set after device functions run; its `shape`
        # attr already holds it.
        try:
            shape = TensorShape(op.get_attr("shape"))
        except ValueError:
            pass
    if not shape.is_fully_defined():
        raise ValueError(f"Op {op.name}: the shape of its output is not fully defined: {shape}")
    return shape.num_elements() * output.dtype.base_dtype.size


class _ReplicaDeviceChooser:
    """The device function behind `replica_device_setter`."""

    def __init__(self, ps_tasks, ps_device, worker_device, merge_devices, ps_ops,
                 ps_strategy):
        self._ps_tasks = ps_tasks
        self._ps_device = ps_device
        self._worker_device = worker_device
        self._merge_devices = merge_devices
        self._ps_ops = frozenset(ps_ops)
        self._ps_strategy = ps_strategy

    def device_function(self, op) -> str:
        if not self._merge_devices and op.device:
            return op.device
        current = DeviceSpec.from_string(op.device or "")
        if self._ps_tasks and self._ps_device and op.type in self._ps_ops:
            ps_device = DeviceSpec.from_string(self._ps_device)
            if ps_device.job and (not current.job or current.job == ps_device.job):
                ps_device = ps_device.replace(task=int(self._ps_strategy(op)))
            return ps_device.make_merged_spec(current).to_string()
        worker = DeviceSpec.from_string(self._worker_device or "")
        return worker.make_merged_spec(current).to_string()


def replica_device_setter(ps_tasks=0, ps_device="/job:ps", worker_device="/job:worker",
                          merge_devices=True, cluster=None, ps_ops=None, ps_strategy=None):
    """A device function placing variables on ps tasks and other ops on the worker.

    Use it as `with tf.device(tf.train.replica_device_setter(...)):`. Ops of a type in
    `ps_ops` go to `ps_device` with the task chosen by `ps_strategy` (round robin over the ps
    tasks by default); the others go to `worker_device`. Devices set by inner `tf.device`
    scopes are merged in and win.

    Args:
        ps_tasks: number of ps tasks (ignored when `cluster` is given).
        ps_device: the ps job's device spec (its task is filled in by the strategy).
        worker_device: the device of non-ps ops.
        merge_devices: merge with devices set by inner scopes (else an op with a device keeps
            it as is).
        cluster: a ClusterSpec or dict; the number of ps tasks is the size of the ps job.
        ps_ops: op types placed on the ps tasks (default `STANDARD_PS_OPS`).
        ps_strategy: `fn(op) -> task index` (default round robin), e.g. a
            `GreedyLoadBalancingStrategy`.

    Returns:
        The device function, or None when there is no ps task (so `tf.device` clears devices).

    Raises:
        TypeError: `ps_strategy` is not callable.

    Example:
        >>> with tf.device(tf.train.replica_device_setter(ps_tasks=2)):
        ...     w = tf.Variable(...)   # /job:ps/task:0
        ...     b = tf.Variable(...)   # /job:ps/task:1
        ...     y = tf.matmul(x, w)    # /job:worker
    """
    if cluster is not None:
        spec = cluster if isinstance(cluster, ClusterSpec) else ClusterSpec(cluster)
        jobs = spec.as_dict()
        ps_job = DeviceSpec.from_string(ps_device).job
        if not jobs.get(ps_job):
            return None
        ps_tasks = len(jobs[ps_job])
    if not ps_tasks:
        return None
    if ps_ops is None:
        ps_ops = list(STANDARD_PS_OPS)
    if not merge_devices:
        logging.warning("DEPRECATION: It is recommended to set merge_devices=true in "
                        "replica_device_setter")
    if ps_strategy is None:
        ps_strategy = _RoundRobinStrategy(ps_tasks)
    if not callable(ps_strategy):
        raise TypeError("ps_strategy must be callable")
    chooser = _ReplicaDeviceChooser(ps_tasks, ps_device, worker_device, merge_devices, ps_ops,
                                    ps_strategy)
    return chooser.device_function
