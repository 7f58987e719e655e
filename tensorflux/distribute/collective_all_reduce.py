"""All-reduce across workers with collective ops (TF's `CollectiveAllReduce` cross-device ops).

Each worker holds one replica per local device; a reduction sums the local replicas' values
and those of every other worker with one `CollectiveReduce` per local device. Dense values
of one dtype are packed into a single flat tensor per batch (one collective per step for all
of an optimizer's gradients); IndexedSlices are made dense first. Instance keys are handed
out in graph-construction order, so workers that build the same graph agree on them.
"""

from __future__ import annotations

import threading

import numpy as np

from tensorflux.distribute import values as values_lib
from tensorflux.distribute.cross_device_ops import CrossDeviceOps, _mirror, devices_of
from tensorflux.distribute.reduce_util import ReduceOp
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.indexed_slices import IndexedSlices
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.collective import collective_ops

__all__ = ["CollectiveKeys", "CollectiveAllReduce"]


class CollectiveKeys:
    """Group and instance keys (the same sequence on every worker building the same graph).

    Args:
        group_key_start: the first group key.
        op_instance_key_start: the first instance key of reductions.
        variable_instance_key_start: the first instance key of variable broadcasts.
    """

    def __init__(self, group_key_start=1, op_instance_key_start=100,
                 variable_instance_key_start=1000000):
        self._group_keys: dict = {}
        self._next = {"group": group_key_start, "op": op_instance_key_start,
                      "variable": variable_instance_key_start}
        self._lock = threading.Lock()

    def __deepcopy__(self, memo):
        # A copied strategy (RunConfig.replace) hands out the same sequence from here on.
        result = CollectiveKeys()
        with self._lock:
            result._group_keys = dict(self._group_keys)
            result._next = dict(self._next)
        return result

    def _take(self, kind: str) -> int:
        with self._lock:
            key = self._next[kind]
            self._next[kind] = key + 1
            return key

    def get_group_key(self, devices) -> int:
        """The group key of a set of devices (one per distinct set)."""
        key = tuple(sorted(devices))
        with self._lock:
            if key not in self._group_keys:
                self._group_keys[key] = self._next["group"]
                self._next["group"] += 1
            return self._group_keys[key]

    def get_op_instance_key(self) -> int:
        return self._take("op")

    def get_variable_instance_key(self) -> int:
        return self._take("variable")


def _dense(value):
    if isinstance(value, IndexedSlices):
        return convert_to_tensor(value)
    return value


class CollectiveAllReduce(CrossDeviceOps):
    """Sums (or averages) replicas across `num_workers` workers (see the module docstring).

    Args:
        num_workers: workers in the group.
        num_gpus_per_worker: local replicas of each worker (0 means one CPU replica).
        collective_keys: a CollectiveKeys (shared with the strategy's variable broadcasts).
    """

    def __init__(self, num_workers=1, num_gpus_per_worker=0, collective_keys=None):
        if num_workers < 1:
            raise ValueError(f"num_workers must be >= 1; got {num_workers}")
        self._num_workers = num_workers
        self._local = max(1, num_gpus_per_worker)
        self._keys = collective_keys or CollectiveKeys()

    @property
    def group_size(self) -> int:
        return self._num_workers * self._local

    def reduce_implementation(self, reduce_op, per_replica_value, destinations):
        return self.batch_reduce_implementation(
            reduce_op, [(per_replica_value, destinations)])[0]

    def batch_reduce_implementation(self, reduce_op, value_destination_pairs) -> list:
        pairs = list(value_destination_pairs)
        if not pairs:
            return []
        per_device = [self._local_values(v) for v, _ in pairs]
        devices = [d for d, _ in per_device[0]]
        graph = graph_mod.get_default_graph()
        reduced = [[None] * len(devices) for _ in pairs]
        group_key = self._keys.get_group_key(devices)
        final_op = "Div" if reduce_op == ReduceOp.MEAN else "Id"
        by_dtype: dict = {}
        for index, parts in enumerate(per_device):
            by_dtype.setdefault(parts[0][1].dtype.base_dtype, []).append(index)
        for indices in by_dtype.values():
            instance_key = self._keys.get_op_instance_key()
            for position, device in enumerate(devices):
                with graph.device(device), graph.name_scope("CollectiveReduce"):
                    tensors = [per_device[i][position][1] for i in indices]
                    for i, out in zip(indices, self._packed_all_reduce(
                            tensors, group_key, instance_key, final_op)):
                        reduced[i][position] = out
        results = []
        for (_, destinations), outs in zip(pairs, reduced):
            targets = devices_of(destinations) if destinations is not None else tuple(devices)
            if len(outs) == 1:
                results.append(_mirror(outs[0], targets))
            else:
                results.append(values_lib.Mirrored(outs))
        return results

    def _local_values(self, value) -> list:
        """[(device, dense tensor)] of this worker's replicas of `value`."""
        if isinstance(value, values_lib.DistributedValues):
            parts = list(value.values)
            devices = list(value.devices)
        else:
            tensor = _dense(value)
            parts = [tensor]
            devices = [getattr(tensor, "device", "")]
        tensors = [convert_to_tensor(_dense(p)) for p in parts]
        return list(zip(devices, tensors))

    def _packed_all_reduce(self, tensors, group_key, instance_key, final_op) -> list:
        if len(tensors) == 1:
            return [collective_ops.all_reduce(tensors[0], self.group_size, group_key,
                                              instance_key, "Add", final_op)]
        shapes = [array_ops.shape(t) for t in tensors]
        flat = array_ops.concat([array_ops.reshape(t, [-1]) for t in tensors], 0)
        total = collective_ops.all_reduce(flat, self.group_size, group_key, instance_key,
                                          "Add", final_op)
        sizes = [int(np.prod(t.shape.as_list())) if t.shape.is_fully_defined()
                 else math_ops.reduce_prod(shapes[i]) for i, t in enumerate(tensors)]
        pieces = array_ops.split(total, sizes, 0) if all(isinstance(s, int) for s in sizes) \
            else array_ops.split(total, array_ops.stack(sizes), 0)
        return [array_ops.reshape(p, s) for p, s in zip(pieces, shapes)]
