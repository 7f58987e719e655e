"""How per-replica values are combined and copied to devices (`tf.distribute.CrossDeviceOps`).

Every implementation here sums with `AddN` on one device and copies the result to each
destination: on a machine without GPUs, NCCL's and the hierarchical copy's algorithms reduce
to this, and the values are the same.
"""

from __future__ import annotations

from tensorflux.distribute import values as values_lib
from tensorflux.distribute.reduce_util import ReduceOp
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.indexed_slices import IndexedSlices
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops

__all__ = ["CrossDeviceOps", "ReductionToOneDevice", "AllReduceCrossDeviceOps",
           "HierarchicalCopyAllReduce", "NcclAllReduce", "devices_of"]


def devices_of(destinations) -> tuple:
    """The device strings a reduction result must be copied to."""
    if isinstance(destinations, str):
        return (destinations,)
    if isinstance(destinations, (values_lib.DistributedValues,
                                 values_lib.DistributedVariable)):
        return tuple(destinations.devices)
    if isinstance(destinations, (list, tuple)):
        return tuple(d if isinstance(d, str) else getattr(d, "device", "")
                     for d in destinations)
    device = getattr(destinations, "device", None)
    if device is None:
        raise ValueError(f"destinations can not be {destinations!r}: give a device string, "
                         f"a list of them, a variable or a distributed value")
    return (device,)


class CrossDeviceOps:
    """Reduces per-replica values and broadcasts tensors onto devices."""

    def reduce(self, reduce_op, per_replica_value, destinations):
        """`per_replica_value` combined by `reduce_op`, mirrored onto `destinations`."""
        reduce_op = _checked_op(reduce_op)
        return self.reduce_implementation(reduce_op, per_replica_value, destinations)

    def batch_reduce(self, reduce_op, value_destination_pairs) -> list:
        """`reduce` of each (value, destinations) pair."""
        reduce_op = _checked_op(reduce_op)
        return self.batch_reduce_implementation(reduce_op, value_destination_pairs)

    def broadcast(self, tensor, destinations):
        """`tensor` copied onto each device of `destinations`."""
        return _mirror(tensor, devices_of(destinations))

    def reduce_implementation(self, reduce_op, per_replica_value, destinations):
        raise NotImplementedError("CrossDeviceOps.reduce_implementation: subclasses define it")

    def batch_reduce_implementation(self, reduce_op, value_destination_pairs) -> list:
        return [self.reduce_implementation(reduce_op, v, d)
                for v, d in value_destination_pairs]


def _checked_op(reduce_op) -> ReduceOp:
    if not isinstance(reduce_op, ReduceOp):
        raise ValueError(f"reduce_op must be a tf.distribute.ReduceOp; got {reduce_op!r}")
    return reduce_op


def _mirror(tensor, devices: tuple):
    if len(devices) == 1 and not devices[0]:
        return tensor
    graph = graph_mod.get_default_graph()
    copies = []
    for device in devices:
        with graph.device(device):
            copies.append(array_ops.identity(tensor) if not isinstance(tensor, IndexedSlices)
                          else tensor)
    return copies[0] if len(copies) == 1 else values_lib.Mirrored(copies)


def _sum(parts: list, accumulation_fn):
    if all(isinstance(p, IndexedSlices) for p in parts):
        return IndexedSlices(array_ops.concat([p.values for p in parts], 0),
                             array_ops.concat([p.indices for p in parts], 0),
                             parts[0].dense_shape)
    parts = [convert_to_tensor(p) if isinstance(p, IndexedSlices) else p for p in parts]
    return parts[0] if len(parts) == 1 else accumulation_fn(parts)


def _mean(total, count: int):
    if count == 1:
        return total
    if isinstance(total, IndexedSlices):
        return IndexedSlices(total.values / count, total.indices, total.dense_shape)
    return total / count


class ReductionToOneDevice(CrossDeviceOps):
    """Sums on one device (`reduce_to_device`, default the first destination), then copies."""

    def __init__(self, reduce_to_device=None, accumulation_fn=None):
        self.reduce_to_device = reduce_to_device
        self.accumulation_fn = accumulation_fn or math_ops.add_n

    def reduce_implementation(self, reduce_op, per_replica_value, destinations):
        devices = devices_of(destinations)
        if not isinstance(per_replica_value, values_lib.DistributedValues):
            return _reduce_plain(reduce_op, per_replica_value, devices, len(devices))
        parts = list(per_replica_value.values)
        graph = graph_mod.get_default_graph()
        with graph.device(self.reduce_to_device or devices[0]):
            reduced = _sum(parts, self.accumulation_fn)
            if reduce_op == ReduceOp.MEAN:
                reduced = _mean(reduced, len(parts))
        return _mirror(reduced, devices)


def _reduce_plain(reduce_op, value, devices, replicas: int):
    """A value that is not per replica is the same on every replica: MEAN keeps it; SUM of it
    over several replicas is refused, as TF refuses it."""
    if reduce_op == ReduceOp.SUM and replicas > 1:
        raise ValueError(f"A non-DistributedValues value {value!r} cannot be reduced with the "
                         f"given reduce op {reduce_op}.")
    return _mirror(value, devices)


class AllReduceCrossDeviceOps(ReductionToOneDevice):
    """An all-reduce (`all_reduce_alg` "nccl" or "hierarchical_copy", `num_packs` gradient
    packs); on CPUs the same sums as ReductionToOneDevice."""

    def __init__(self, all_reduce_alg="nccl", num_packs=1):
        if all_reduce_alg not in ("nccl", "hierarchical_copy"):
            raise ValueError(f"all_reduce_alg must be 'nccl' or 'hierarchical_copy'; got "
                             f"{all_reduce_alg!r}")
        if num_packs < 0:
            raise ValueError(f"num_packs must be >= 0; got {num_packs}")
        super().__init__()
        self._all_reduce_alg = all_reduce_alg
        self._num_packs = num_packs


class NcclAllReduce(AllReduceCrossDeviceOps):
    def __init__(self, num_packs=1):
        super().__init__("nccl", num_packs)


class HierarchicalCopyAllReduce(AllReduceCrossDeviceOps):
    def __init__(self, num_packs=1):
        super().__init__("hierarchical_copy", num_packs)
