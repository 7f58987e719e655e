"""`tf.data.Dataset` (TF1 graph mode): the base class and the in-memory sources.

Contract: a Dataset is an immutable Python description of an input pipeline built in a graph.
Tensors it depends on (a placeholder given to `from_tensor_slices`, a tensor `batch_size`, ...)
are its *captures*: an initializable iterator's initializer op takes them as inputs, so they are
fed when the initializer runs, exactly as in TF. `_iterate(ctx)` produces the elements of one
pass, each a flat tuple of ndarrays, given `ctx` (the captured values plus per-initialization
state such as shuffle seeds). Elements are produced one at a time on demand by the iterator's
`IteratorGetNext` kernel; `num_parallel_calls`, `prefetch` and reader buffer sizes do not change
what is produced and are accepted for compatibility (the pipeline runs in the caller's step).
An element whose computation fails (an op error in a `map` function, ...) travels on as an
`ElementError`: `get_next` raises it in its turn and the next call continues, as in TF. Invalid
arguments (a zero batch size, ...) fail when the initializer runs (`_check`).

Transformations live in `ordering.py` (zip, repeat, shuffle, ...), `transformations.py` (map,
filter, flat_map, interleave), `batching.py` and `sources.py` (files, generators).
"""

from __future__ import annotations

import numpy as np

from tensorflux.data import structure
from tensorflux.framework import dtypes, errors
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import constant_value
from tensorflux.framework.tensor_shape import TensorShape

_INT64_MAX = 2**63 - 1


class ElementError:
    """An element whose computation failed: raised by `get_next` in its turn, while the
    pipeline goes on with the next elements (as TF's iterators do)."""

    __slots__ = ("error",)

    def __init__(self, error):
        self.error = error


def start(dataset, ctx):
    """Validates the arguments of every stage (as TF's initializer does), then returns the
    pass's element iterator."""
    for stage in dataset._walk():
        stage._check(ctx)
    return dataset._iterate(ctx)


class RunContext:
    """Captured tensor values and per-initialization state of one iterator (shared with the
    inner datasets of flat_map/interleave)."""

    def __init__(self, values: dict, state: dict | None = None):
        self.values = values
        self.state: dict = {} if state is None else state

    def close(self) -> None:
        """Releases the private sessions of stateful functions."""
        for session, _ in self.state.pop("sessions", {}).values():
            session.close()

    def draw_seed(self) -> int:
        """A fresh seed for an unseeded random stage (shuffle, sampling, RandomDataset).

        Seeds are recorded in the order they are drawn (`state["drawn_seeds"]`), which is
        deterministic for a given pipeline, so a saved iterator state can replay them: after
        a restore the first draws return the saved seeds (`state["replay_seeds"]`)."""
        drawn = self.state.setdefault("drawn_seeds", [])
        replay = self.state.get("replay_seeds", ())
        if len(drawn) < len(replay):
            seed = int(replay[len(drawn)])
        else:
            seed = int(np.random.default_rng().integers(0, 2**63 - 1))
        drawn.append(seed)
        return seed

    def value(self, leaf):
        if isinstance(leaf, Tensor):
            return self.values[leaf]
        return leaf

    def scalar(self, arg) -> int:
        if isinstance(arg, Tensor):
            return int(np.asarray(self.values[arg]))
        return arg


def scalar_arg(value, name: str, what: str):
    """A Python int, or a scalar Tensor captured by the dataset."""
    if isinstance(value, Tensor):
        if value.shape.ndims not in (None, 0):
            raise ValueError(f"{what}: `{name}` must be a scalar, got shape {value.shape}")
        if not value.dtype.base_dtype.is_integer:
            raise TypeError(f"{what}: `{name}` must be an integer tensor, got "
                            f"{value.dtype.name}")
        return value
    try:
        return int(np.asarray(value))
    except (TypeError, ValueError):
        raise TypeError(f"{what}: `{name}` must be an integer, got {value!r}") from None


def static_int(arg):
    if isinstance(arg, Tensor):
        value = constant_value(arg)
        return None if value is None else int(value)
    return arg


class Dataset:
    """A pipeline of elements with a fixed structure of typed components (TF1 tf.data).

    Example:
        >>> ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(100, seed=1).batch(32)
        >>> features, labels = ds.make_one_shot_iterator().get_next()
    """

    def __init__(self, inputs, captures, types, shapes, template):
        self._inputs = list(inputs)
        self._captures = [c for c in captures if isinstance(c, Tensor)]
        self._types = list(types)
        self._shapes = [TensorShape(s) if not isinstance(s, TensorShape) else s for s in shapes]
        self._template = template

    # -- what subclasses implement ---------------------------------------------------------

    def _iterate(self, ctx: RunContext):
        raise TypeError(f"{type(self).__name__} does not produce elements")

    def _check(self, ctx: RunContext) -> None:
        """Raises InvalidArgumentError for invalid argument values (run at initialization)."""

    # -- structure -------------------------------------------------------------------------

    def _pack(self, flat):
        return structure.pack(self._template, flat)

    @property
    def output_types(self):
        """The nested DTypes of an element (TF1 property)."""
        return structure.pack_types(self._template, self._types)

    @property
    def output_shapes(self):
        """The nested static TensorShapes of an element (TF1 property)."""
        return structure.pack_shapes(self._template, self._shapes)

    @property
    def output_classes(self):
        """The nested Python classes of an element's components (tf.Tensor or
        tf.SparseTensor)."""
        return structure.pack_classes(self._template, len(self._types))

    def _all_captures(self) -> list:
        seen, ordered = set(), []
        for dataset in self._walk():
            for tensor in dataset._captures:
                if tensor not in seen:
                    seen.add(tensor)
                    ordered.append(tensor)
        return ordered

    def _walk(self):
        yield self
        for dataset in self._inputs:
            yield from dataset._walk()

    def __iter__(self):
        raise RuntimeError("dataset.__iter__() is only supported when eager execution is "
                           "enabled; use make_one_shot_iterator() or "
                           "make_initializable_iterator() in graph mode.")

    def __repr__(self) -> str:
        return f"<{type(self).__name__} shapes: {self.output_shapes}, types: {self.output_types}>"

    # -- sources ---------------------------------------------------------------------------

    @staticmethod
    def from_tensor_slices(tensors):
        """Elements are the slices of `tensors` (a nested structure) along their first axis."""
        return TensorSliceDataset(tensors)

    @staticmethod
    def from_tensors(tensors):
        """A dataset with `tensors` (a nested structure) as its single element."""
        return TensorDataset(tensors)

    @staticmethod
    def range(*args):
        """int64 elements as Python's `range(start, stop, step)`."""
        return RangeDataset(*args)

    @staticmethod
    def zip(datasets):
        """Elements are nested structures (like `datasets`) of the datasets' elements."""
        return ordering.ZipDataset(datasets)

    @staticmethod
    def from_generator(generator, output_types, output_shapes=None, args=None):
        """Elements produced by calling `generator()` at each initialization (see sources)."""
        return sources.GeneratorDataset(generator, output_types, output_shapes, args)

    @staticmethod
    def list_files(file_pattern, shuffle=None, seed=None):
        """Filenames matching `file_pattern` (sorted; shuffled unless `shuffle=False`)."""
        return sources.list_files(file_pattern, shuffle, seed)

    # -- transformations -------------------------------------------------------------------

    def concatenate(self, dataset):
        return ordering.ConcatenateDataset(self, dataset)

    def repeat(self, count=None):
        return ordering.RepeatDataset(self, count)

    def take(self, count):
        return ordering.TakeDataset(self, count)

    def skip(self, count):
        return ordering.SkipDataset(self, count)

    def shard(self, num_shards, index):
        return ordering.ShardDataset(self, num_shards, index)

    def prefetch(self, buffer_size):
        """Returns a dataset with the same elements (the pipeline runs on demand here); a
        `buffer_size` below -1 (AUTOTUNE) fails when the iterator is initialized."""
        return ordering.PrefetchDataset(self, buffer_size)

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=None):
        return ordering.ShuffleDataset(self, buffer_size, seed, reshuffle_each_iteration)

    def cache(self, filename=""):
        """Replays the first complete pass: in memory (per iterator initialization) or, with a
        `filename`, from a file shared by later sessions (see cache.py)."""
        return cache.CacheDataset(self, filename)

    def map(self, map_func, num_parallel_calls=None):
        """Applies `map_func` (traced once) to each element; tuples are unpacked as args."""
        return transformations.MapDataset(self, map_func)

    def filter(self, predicate):
        """Keeps the elements for which `predicate` (a scalar tf.bool function) is true."""
        return transformations.FilterDataset(self, predicate)

    def flat_map(self, map_func):
        return transformations.InterleaveDataset(self, map_func, 1, 1, "Dataset.flat_map()")

    def interleave(self, map_func, cycle_length, block_length=1, num_parallel_calls=None):
        return transformations.InterleaveDataset(self, map_func, cycle_length, block_length,
                                                 "Dataset.interleave()")

    def window(self, size, shift=None, stride=1, drop_remainder=False):
        """Windows of `size` elements (`stride` apart, a new one every `shift`, default
        `size`); each window is the element structure of datasets (see windowing.py)."""
        return windowing.WindowDataset(self, size, shift, stride, drop_remainder)

    def batch(self, batch_size, drop_remainder=False):
        return batching.BatchDataset(self, batch_size, drop_remainder)

    def padded_batch(self, batch_size, padded_shapes=None, padding_values=None,
                     drop_remainder=False):
        return batching.PaddedBatchDataset(self, batch_size, padded_shapes, padding_values,
                                           drop_remainder)

    def unbatch(self):
        """Splits each element along its first axis into consecutive elements."""
        return batching.UnbatchDataset(self)

    def enumerate(self, start=0):
        """Elements `(index, element)` with an int64 index counting from `start`."""
        return ordering.ZipDataset((RangeDataset(start, _INT64_MAX), self))

    def apply(self, transformation_func):
        """Returns `transformation_func(self)`, which must be a Dataset."""
        result = transformation_func(self)
        if not isinstance(result, Dataset):
            raise TypeError("`transformation_func` must return a Dataset, got "
                            f"{type(result).__name__}")
        return result

    def with_options(self, options):
        """The same elements, with `options` (a `tf.data.Options`) merged into `options()`.

        Raises:
            TypeError: `options` is not a tf.data.Options.
            ValueError: an option already set to another value upstream.
        """
        return options_module().OptionsDataset(self, options)

    def options(self):
        """The `tf.data.Options` of this dataset: those given to `with_options` anywhere
        upstream, merged."""
        merged = options_module().Options()
        for dataset in self._walk():
            own = getattr(dataset, "_own_options", None)
            if own is not None:
                merged = merged.merge(own)
        return merged

    # -- iterators -------------------------------------------------------------------------

    def make_one_shot_iterator(self):
        return iterator_ops.make_one_shot_iterator(self)

    def make_initializable_iterator(self, shared_name=None):
        return iterator_ops.make_initializable_iterator(self, shared_name)


# -- sources ------------------------------------------------------------------------------------


class TensorSliceDataset(Dataset):
    """Slices each component along its first dimension; a sparse component of dense shape
    `[n, d1, ...]` gives `n` sparse slices of dense shape `[d1, ...]` (as TF)."""

    def __init__(self, tensors):
        what = "Dataset.from_tensor_slices()"
        value = structure.normalize(tensors, what)
        leaves = structure.flatten(value)
        if not leaves:
            raise ValueError(f"{what} requires at least one component")
        types, shapes, rows = [], [], None
        for node in structure.components(value):
            sparse = isinstance(node, structure.SparseNode)
            dtype, shape = structure.leaf_spec(node.values if sparse else node)
            if sparse:
                shape = node.shape
            if shape.ndims == 0:
                raise ValueError(f"{what}: every component must have rank >= 1 to be sliced, "
                                 f"got a scalar of type {dtype.name}")
            if shape.ndims is not None:
                first = shape.as_list()[0]
                if first is not None and rows is not None and first != rows:
                    raise ValueError(f"{what}: dimension 0 of every component must match, got "
                                     f"{rows} and {first}")
                rows = first if first is not None else rows
                shape = TensorShape(shape.as_list()[1:])
            if sparse:
                more_types, more_shapes = structure.sparse_leaf_specs(dtype, shape)
                types += more_types
                shapes += more_shapes
            else:
                types.append(dtype)
                shapes.append(shape)
        self._leaves = leaves
        template = structure.replace_sparse(
            value, lambda node: structure.SparseNode(None, None, None, _unbatched(node.shape)))
        super().__init__([], leaves, types, shapes, template)

    def _arrays(self, ctx):
        arrays = [np.asarray(ctx.value(leaf)) for leaf in self._leaves]
        return [structure.split_sparse(arrays[pos:pos + 3]) if node else arrays[pos]
                for pos, node in _component_starts(self._template)]

    def _check(self, ctx):
        arrays = self._arrays(ctx)
        if any(a.ndim == 0 for a in arrays if isinstance(a, np.ndarray)):
            raise errors.InvalidArgumentError(
                None, None, "from_tensor_slices: every component must have rank >= 1")
        counts = [len(a) for a in arrays]
        if any(c != counts[0] for c in counts):
            raise errors.InvalidArgumentError(
                None, None, "from_tensor_slices: dimension 0 of every component must match, "
                f"got {counts}")

    def _iterate(self, ctx):
        arrays = self._arrays(ctx)
        for i in range(len(arrays[0])):
            flat = []
            for a in arrays:
                if isinstance(a, np.ndarray):
                    flat.append(a[i, ...])
                else:
                    flat.extend(a[i])
            yield tuple(flat)


def _unbatched(shape: TensorShape) -> TensorShape:
    return TensorShape(None) if shape.ndims is None else TensorShape(shape.as_list()[1:])


def _component_starts(template):
    """(flat position, is sparse) of each component of `template`."""
    pos, found = 0, []
    for node in structure.components(template):
        sparse = isinstance(node, structure.SparseNode)
        found.append((pos, sparse))
        pos += 3 if sparse else 1
    return found


class TensorDataset(Dataset):
    def __init__(self, tensors):
        value = structure.normalize(tensors, "Dataset.from_tensors()")
        leaves = structure.flatten(value)
        types, shapes = structure.element_specs(value)
        self._leaves = leaves
        super().__init__([], leaves, types, shapes, value)

    def _iterate(self, ctx):
        yield tuple(np.asarray(ctx.value(leaf)) for leaf in self._leaves)


class RangeDataset(Dataset):
    def __init__(self, *args):
        if not 1 <= len(args) <= 3:
            raise ValueError(f"Dataset.range() takes 1 to 3 arguments, got {len(args)}")
        if len(args) == 1:
            args = (0, args[0], 1)
        elif len(args) == 2:
            args = (args[0], args[1], 1)
        names = ("start", "stop", "step")
        self._args = [scalar_arg(a, n, "Dataset.range()") for a, n in zip(args, names)]
        super().__init__([], self._args, [dtypes.int64], [TensorShape([])], 0)

    def _check(self, ctx):
        if ctx.scalar(self._args[2]) == 0:
            raise errors.InvalidArgumentError(None, None, "Dataset.range(): step must not be 0")

    def _iterate(self, ctx):
        start, stop, step = (ctx.scalar(a) for a in self._args)
        for value in range(start, stop, step):
            yield (np.array(value, dtype=np.int64),)


def options_module():
    """`tensorflux.data.options` (imported below, after Dataset exists)."""
    return options


__all__ = ["Dataset"]

# The transformation modules subclass Dataset, so they are imported once it exists.
from tensorflux.data import (  # noqa: E402
    batching,
    cache,
    iterator_ops,
    options,
    ordering,
    sources,
    transformations,
    windowing,
)
