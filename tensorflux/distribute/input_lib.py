"""Input for several replicas: datasets whose batches are split among the replicas, and
iterators whose `get_next()` gives one `PerReplica` value per step.

Two conventions, as in TF 1.15:
- `experimental_distribute_dataset` and `make_dataset_iterator`: the dataset yields *global*
  batches; each is split along its first dimension into one equal part per replica.
- `make_input_fn_iterator`: the input function's dataset yields *per-replica* batches; each
  replica takes the next batch of its own.
"""

from __future__ import annotations

from tensorflux.distribute import values as values_lib
from tensorflux.framework import graph as graph_mod
from tensorflux.framework import nest
from tensorflux.ops import array as array_ops
from tensorflux.ops.control_flow import primitives as control_flow_ops

__all__ = ["DistributedDataset", "DatasetIterator"]


class DatasetIterator:
    """An iterator over `dataset` for the replicas of `extended` (see the module docstring).

    `initialize()` returns the ops that (re)start it; `get_next()` the next values, as
    `PerReplica` with several replicas."""

    def __init__(self, dataset, extended, split_batch: bool, one_shot: bool = False):
        self._extended = extended
        self._split = split_batch
        self._devices = tuple(extended.worker_devices)
        if one_shot:
            self._iterator = dataset.make_one_shot_iterator()
        else:
            self._iterator = dataset.make_initializable_iterator()
        self._one_shot = one_shot

    def initialize(self) -> list:
        """The ops that initialize the iterator (none for a one-shot iterator)."""
        if self._one_shot:
            return []
        return [self._iterator.initializer]

    @property
    def initializer(self):
        ops = self.initialize()
        return control_flow_ops.group(*ops) if ops else control_flow_ops.no_op()

    @property
    def output_types(self):
        return self._iterator.output_types

    @property
    def output_shapes(self):
        return self._iterator.output_shapes

    @property
    def output_classes(self):
        return self._iterator.output_classes

    def get_next(self, name=None):
        """The next element for every replica (the plain element with one replica)."""
        count = len(self._devices)
        graph = graph_mod.get_default_graph()
        if count == 1:
            return self._iterator.get_next(name=name)
        if not self._split:
            parts = []
            for device in self._devices:
                with graph.device(device):
                    parts.append(self._iterator.get_next())
            return values_lib.regroup(parts)
        batch = self._iterator.get_next(name=name)
        flat = nest.flatten(batch)
        pieces = [_split_batch(t, count) for t in flat]
        per_replica = [nest.pack_sequence_as(batch, [p[i] for p in pieces])
                       for i in range(count)]
        return values_lib.regroup(per_replica)

    def __iter__(self):
        raise RuntimeError("__iter__() is only supported inside of tf.function or when eager "
                           "execution is enabled.")


def _split_batch(tensor, count: int) -> list:
    first = tensor.get_shape().as_list()[0] if tensor.get_shape().ndims else None
    if first is not None and first % count:
        raise ValueError(f"The global batch size {first} of {tensor.name} is not divisible by "
                         f"the number of replicas {count}")
    return array_ops.split(tensor, count, axis=0)


class DistributedDataset:
    """A dataset of global batches to be split among the replicas; iterate it with
    `make_one_shot_iterator()` or `make_initializable_iterator()`."""

    def __init__(self, dataset, extended):
        self._dataset = dataset
        self._extended = extended

    def make_one_shot_iterator(self) -> DatasetIterator:
        return DatasetIterator(self._dataset, self._extended, split_batch=True, one_shot=True)

    def make_initializable_iterator(self) -> DatasetIterator:
        return DatasetIterator(self._dataset, self._extended, split_batch=True)

    def __iter__(self):
        raise RuntimeError("__iter__() is only supported inside of tf.function or when eager "
                           "execution is enabled.")


def numpy_dataset(numpy_input):
    """`experimental_make_numpy_dataset`: not provided (tf.data lives beside tf.distribute
    here, so the strategy cannot build datasets)."""
    raise NotImplementedError(
        "Strategy.experimental_make_numpy_dataset is not provided by tensorflux; use "
        "tf.data.Dataset.from_tensor_slices(numpy_input) and "
        "strategy.experimental_distribute_dataset(dataset).")
