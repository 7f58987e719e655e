"""Order transformations: zip, concatenate, repeat, take, skip, shard, shuffle, ignore_errors
and choosing among several datasets. They move whole elements and never look inside them; an
element that failed upstream (an `ElementError`) passes through without being counted, as in TF.
"""

from __future__ import annotations

import numpy as np

from tensorflux.data import structure
from tensorflux.data.dataset_ops import Dataset, ElementError, scalar_arg, static_int
from tensorflux.framework import dtypes, errors
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import constant_value
from tensorflux.ops.random.seed import get_seed


class ZipDataset(Dataset):
    def __init__(self, datasets):
        flat = structure.flatten(datasets)
        if not flat or not all(isinstance(d, Dataset) for d in flat):
            raise TypeError("Dataset.zip() expects a nested structure of Datasets, got "
                            f"{datasets!r}")
        template = structure.pack(datasets, [d._template for d in flat])
        types = [t for d in flat for t in d._types]
        shapes = [s for d in flat for s in d._shapes]
        super().__init__(flat, [], types, shapes, template)

    def _iterate(self, ctx):
        iterators = [d._iterate(ctx) for d in self._inputs]
        while True:
            parts, failed = [], None
            for iterator in iterators:
                try:
                    part = next(iterator)
                except StopIteration:
                    return
                if type(part) is ElementError:
                    failed = failed or part
                else:
                    parts.extend(part)
            yield failed or tuple(parts)


class ConcatenateDataset(Dataset):
    def __init__(self, first, second):
        if not isinstance(second, Dataset):
            raise TypeError(f"Dataset.concatenate() expects a Dataset, got {second!r}")
        if first._types != second._types or not structure.same_nesting(first._template,
                                                                        second._template):
            raise TypeError(f"Two datasets to concatenate have different types "
                            f"{first.output_types} and {second.output_types}")
        shapes = [structure.most_specific_compatible(a, b)
                  for a, b in zip(first._shapes, second._shapes)]
        super().__init__([first, second], [], first._types, shapes,
                         structure.merge_templates(first._template, second._template))

    def _iterate(self, ctx):
        for dataset in self._inputs:
            yield from dataset._iterate(ctx)


class _Unary(Dataset):
    """A transformation of one input that keeps its element structure."""

    def __init__(self, dataset, captures=()):
        super().__init__([dataset], captures, dataset._types, dataset._shapes, dataset._template)


class PrefetchDataset(_Unary):
    """The same elements (the pipeline runs on demand here); `buffer_size` is checked when the
    iterator is initialized: -1 (AUTOTUNE) or a size >= 0."""

    def __init__(self, dataset, buffer_size):
        self._buffer = scalar_arg(buffer_size, "buffer_size", "Dataset.prefetch()")
        super().__init__(dataset, [self._buffer])

    def _check(self, ctx):
        size = ctx.scalar(self._buffer)
        if size < -1:
            raise errors.InvalidArgumentError(
                None, None, f"Dataset.prefetch(): buffer_size must be >= 0 or -1 (AUTOTUNE), "
                f"got {size}")

    def _iterate(self, ctx):
        return self._inputs[0]._iterate(ctx)


class RepeatDataset(_Unary):
    def __init__(self, dataset, count):
        self._count = -1 if count is None else scalar_arg(count, "count", "Dataset.repeat()")
        super().__init__(dataset, [self._count])

    def _iterate(self, ctx):
        count = ctx.scalar(self._count)
        epoch = 0
        while count < 0 or epoch < count:
            produced = False
            for element in self._inputs[0]._iterate(ctx):
                produced = True
                yield element
            epoch += 1
            if not produced:
                return  # an empty input repeated forever is still empty


class TakeDataset(_Unary):
    def __init__(self, dataset, count):
        self._count = scalar_arg(count, "count", "Dataset.take()")
        super().__init__(dataset, [self._count])

    def _iterate(self, ctx):
        count = ctx.scalar(self._count)
        if count == 0:
            return
        taken = 0
        for element in self._inputs[0]._iterate(ctx):
            yield element
            if type(element) is not ElementError:
                taken += 1
                if taken == count:
                    return


class SkipDataset(_Unary):
    def __init__(self, dataset, count):
        self._count = scalar_arg(count, "count", "Dataset.skip()")
        super().__init__(dataset, [self._count])

    def _iterate(self, ctx):
        count = ctx.scalar(self._count)
        skipped = 0
        for element in self._inputs[0]._iterate(ctx):
            if type(element) is ElementError or (0 <= count <= skipped):
                yield element
            else:
                skipped += 1


class ShardDataset(_Unary):
    def __init__(self, dataset, num_shards, index):
        self._num = scalar_arg(num_shards, "num_shards", "Dataset.shard()")
        self._index = scalar_arg(index, "index", "Dataset.shard()")
        super().__init__(dataset, [self._num, self._index])

    def _check(self, ctx):
        num, index = ctx.scalar(self._num), ctx.scalar(self._index)
        if num <= 0:
            raise errors.InvalidArgumentError(None, None, "Dataset.shard(): num_shards must be "
                                              f"greater than zero (currently num_shards = "
                                              f"{num}).")
        if not 0 <= index < num:
            raise errors.InvalidArgumentError(None, None, "Dataset.shard(): index must be "
                                              f"between 0 and {num - 1} (currently index = "
                                              f"{index}).")

    def _iterate(self, ctx):
        num, index = ctx.scalar(self._num), ctx.scalar(self._index)
        position = 0
        for element in self._inputs[0]._iterate(ctx):
            if type(element) is ElementError:
                yield element
                continue
            if position % num == index:
                yield element
            position += 1


class ShuffleDataset(_Unary):
    """TF's buffer shuffle: fill `buffer_size` elements, emit a random one, refill.

    With a seed (op- or graph-level), each initialization of an iterator yields the same
    sequence; with `reshuffle_each_iteration` (the default) each pass of a `repeat` after it
    draws a new order from that seed.
    """

    def __init__(self, dataset, buffer_size, seed, reshuffle_each_iteration):
        self._buffer = scalar_arg(buffer_size, "buffer_size", "Dataset.shuffle()")
        self._seed_arg = None  # a seed fed when the iterator is initialized
        if isinstance(seed, Tensor):
            if static_int(seed) is None:
                self._seed_arg = scalar_arg(seed, "seed", "Dataset.shuffle()")
                self._graph = graph_mod.get_default_graph()
            seed = static_int(seed)
        self._seeds = get_seed(None if seed is None else int(seed))
        self._reshuffle = True if reshuffle_each_iteration is None else \
            bool(reshuffle_each_iteration)
        super().__init__(dataset, [self._buffer]
                         + ([] if self._seed_arg is None else [self._seed_arg]))

    def _check(self, ctx):
        size = ctx.scalar(self._buffer)
        if size <= 0:
            raise errors.InvalidArgumentError(
                None, None, f"Dataset.shuffle(): buffer_size must be greater than zero, got "
                f"{size}")

    def _epoch_rng(self, ctx):
        seed, seed2 = self._seeds
        if self._seed_arg is not None:  # the op seed a Python int would give, as fed
            with self._graph.as_default():
                seed, seed2 = get_seed(int(ctx.scalar(self._seed_arg)))
        if seed is None:
            return np.random.default_rng(ctx.draw_seed())
        if not self._reshuffle:
            return np.random.default_rng([seed, seed2])
        key = ("shuffle", id(self))
        source = ctx.state.get(key)
        if source is None:
            source = ctx.state[key] = np.random.default_rng([seed, seed2])
        return np.random.default_rng(source.integers(0, 2**63))

    def _iterate(self, ctx):
        size = ctx.scalar(self._buffer)
        rng = self._epoch_rng(ctx)
        buffer = []
        source = self._inputs[0]._iterate(ctx)
        exhausted = False
        while True:
            while not exhausted and len(buffer) < size:
                try:
                    element = next(source)
                except StopIteration:
                    exhausted = True
                    break
                if type(element) is ElementError:
                    yield element
                else:
                    buffer.append(element)
            if not buffer:
                return
            pick = int(rng.integers(len(buffer)))
            buffer[pick], buffer[-1] = buffer[-1], buffer[pick]
            yield buffer.pop()


class IgnoreErrorsDataset(_Unary):
    """Drops the elements whose computation failed (`tf.data.experimental.ignore_errors()`)."""

    def _iterate(self, ctx):
        for element in self._inputs[0]._iterate(ctx):
            if type(element) is not ElementError:
                yield element


class DirectedInterleaveDataset(Dataset):
    """Elements taken from `datasets[k]` for each `k` chosen by `choose(ctx)` (an iterator of
    indices, or of None to stop); an exhausted dataset is skipped when chosen again."""

    def __init__(self, datasets, what: str):
        datasets = list(datasets)
        if not datasets or not all(isinstance(d, Dataset) for d in datasets):
            raise TypeError(f"{what} expects a non-empty list of Datasets, got {datasets!r}")
        first = datasets[0]
        for other in datasets[1:]:
            if other._types != first._types or not structure.same_nesting(first._template,
                                                                            other._template):
                raise TypeError(f"{what}: all datasets must have the same types, got "
                                f"{first.output_types} and {other.output_types}")
        shapes = list(first._shapes)
        for other in datasets[1:]:
            shapes = [structure.most_specific_compatible(a, b)
                      for a, b in zip(shapes, other._shapes)]
        self._what = what
        self._count = len(datasets)
        super().__init__(datasets, [], first._types, shapes, first._template)

    def _choices(self, ctx, live):
        raise TypeError(f"{type(self).__name__} chooses nothing")

    def _iterate(self, ctx):
        iterators = [d._iterate(ctx) for d in self._inputs[:self._count]]
        live = [True] * self._count
        for index in self._choices(ctx, live):
            if index is None or not any(live):
                return
            if not 0 <= index < self._count:
                raise errors.InvalidArgumentError(
                    None, None, f"{self._what}: selector index {index} out of range for "
                    f"{self._count} datasets")
            if not live[index]:
                continue
            try:
                yield next(iterators[index])
            except StopIteration:
                live[index] = False


class ChooseFromDatasets(DirectedInterleaveDataset):
    def __init__(self, datasets, choice_dataset):
        what = "choose_from_datasets()"
        if not isinstance(choice_dataset, Dataset) or choice_dataset._types != [dtypes.int64] \
                or not choice_dataset._shapes[0].is_compatible_with([]):
            raise TypeError(f"{what}: `choice_dataset` must be a dataset of scalar tf.int64 "
                            f"tensors, got {choice_dataset!r}")
        super().__init__(datasets, what)
        self._inputs.append(choice_dataset)

    def _choices(self, ctx, live):
        for element in self._inputs[-1]._iterate(ctx):
            if type(element) is ElementError:
                raise element.error
            yield int(element[0])


class SampleFromDatasets(DirectedInterleaveDataset):
    """Each element comes from a dataset drawn with probabilities `weights` among those not
    yet exhausted; seeded like `shuffle` (same sequence at each initialization)."""

    def __init__(self, datasets, weights, seed):
        super().__init__(datasets, "sample_from_datasets()")
        if weights is None:
            weights = np.ones(self._count)
        elif isinstance(weights, Tensor):
            folded = constant_value(weights)
            if folded is None:
                raise ValueError(f"sample_from_datasets(): weights must be constant, got "
                                 f"'{weights.name}'")
            weights = folded
        weights = np.asarray(weights, dtype=np.float64).reshape(-1)
        if weights.shape != (self._count,) or np.any(weights < 0):
            raise ValueError(f"sample_from_datasets(): expected {self._count} non-negative "
                             f"weights, got {weights.tolist()}")
        self._weights = weights
        self._seeds = get_seed(seed)

    def _choices(self, ctx, live):
        seed, seed2 = self._seeds
        rng = np.random.default_rng(ctx.draw_seed() if seed is None else [seed, seed2])
        while True:
            weights = self._weights * np.asarray(live)
            total = weights.sum()
            if total <= 0:
                return
            yield int(rng.choice(self._count, p=weights / total))


__all__: list = []
