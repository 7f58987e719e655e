"""`group_by_window` and `bucket_by_sequence_length` (tf.data.experimental).

Elements are grouped by an int64 key; a group's window is handed to `reduce_func(key, window)`
when it holds `window_size` elements, and the dataset that function returns is iterated. At the
end of the input the unfinished windows are reduced in increasing key order (TF's order).
`reduce_func` is traced once, with the key as a placeholder and the window as a dataset whose
elements are supplied per window.
"""

from __future__ import annotations

from tensorflux.data import structure
from tensorflux.data.dataset_ops import Dataset, ElementError, RunContext, scalar_arg, start
from tensorflux.data.function import TracedFunction
from tensorflux.framework import dtypes, errors
from tensorflux.framework.tensor_conversion import constant_value
from tensorflux.framework.tensor_shape import TensorShape, as_shape
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.array.gather_scatter import gather
from tensorflux.ops.debug import checks as check_ops
from tensorflux.ops.math.casting import cast
from tensorflux.ops.math.comparison import greater_equal
from tensorflux.ops.math.reduction import reduce_sum


class _WindowDataset(Dataset):
    """The elements of one window, read from the run context."""

    def _iterate(self, ctx):
        yield from ctx.values[self]


def _scalar_int64_function(fn, types, shapes, template, what: str, name: str):
    traced = TracedFunction(fn, types, shapes, template, what)
    if (len(traced.outputs) != 1 or traced.output_types[0] is not dtypes.int64
            or not traced.output_shapes[0].is_compatible_with([])):
        raise ValueError(f"{what}: `{name}` must return a single tf.int64 scalar tensor, got "
                         f"{traced.output_types} with shapes {traced.output_shapes}")
    return traced


class GroupByWindowDataset(Dataset):
    def __init__(self, dataset, key_func, reduce_func, window_size, window_size_func):
        what = "group_by_window()"
        if (window_size is None) == (window_size_func is None):
            raise ValueError(f"{what}: give exactly one of `window_size` and "
                             "`window_size_func`")
        self._key = _scalar_int64_function(key_func, dataset._types, dataset._shapes,
                                           dataset._template, what, "key_func")
        self._key_run = self._key.runner()
        self._size = None
        self._size_run = None
        if window_size_func is None:
            self._size = scalar_arg(window_size, "window_size", what)
        else:
            self._size_fn = _scalar_int64_function(window_size_func, [dtypes.int64],
                                                   [TensorShape([])], 0, what,
                                                   "window_size_func")
            self._size_run = self._size_fn.runner()
        self._window = _WindowDataset([], [], dataset._types, dataset._shapes, dataset._template)
        window = self._window
        reduce = TracedFunction(lambda key: reduce_func(key, window), [dtypes.int64],
                                [TensorShape([])], 0, what, tensor_result=False)
        inner = reduce.result
        if not isinstance(inner, Dataset):
            raise TypeError(f"{what}: `reduce_func` must return a Dataset, got "
                            f"{type(inner).__name__}")
        self._inner = inner
        self._fetched, self._constants = [], {}
        for tensor in inner._all_captures():
            if tensor.graph is reduce.graph:
                self._fetched.append(tensor)
                continue
            value = constant_value(tensor)
            if value is None:
                raise ValueError(f"{what}: the dataset returned by `reduce_func` uses tensor "
                                 f"'{tensor.name}' from another graph; only constants can be "
                                 "captured.")
            self._constants[tensor] = value
        self._reduce_run = reduce.fetch(self._fetched)
        captures = [self._size] + self._key.captures + reduce.captures
        if self._size_run is not None:
            captures += self._size_fn.captures
        super().__init__([dataset], captures, inner._types, inner._shapes, inner._template)

    def _check(self, ctx):
        if self._size is not None and ctx.scalar(self._size) <= 0:
            raise errors.InvalidArgumentError(None, None, "group_by_window(): window_size must "
                                              "be greater than zero")

    def _window_size(self, ctx, key: int, cache: dict) -> int:
        size = cache.get(key)
        if size is None:
            if self._size_run is None:
                size = ctx.scalar(self._size)
            else:
                size = int(self._size_run(ctx, [_int64(key)])[0])
            if size <= 0:
                raise errors.InvalidArgumentError(
                    None, None, f"group_by_window(): window size must be greater than zero, "
                    f"got {size} for key {key}")
            cache[key] = size
        return size

    def _reduce(self, ctx, key: int, elements: list):
        values = dict(self._constants)
        try:
            values.update(zip(self._fetched, self._reduce_run(ctx, [_int64(key)])))
        except errors.OpError as err:
            yield ElementError(err)
            return
        values[self._window] = elements
        yield from start(self._inner, RunContext(values, ctx.state))

    def _iterate(self, ctx):
        windows: dict = {}
        sizes: dict = {}
        for element in self._inputs[0]._iterate(ctx):
            if type(element) is ElementError:
                yield element
                continue
            try:
                key = int(self._key_run(ctx, element)[0])
            except errors.OpError as err:
                yield ElementError(err)
                continue
            window = windows.setdefault(key, [])
            window.append(element)
            if len(window) >= self._window_size(ctx, key, sizes):
                yield from self._reduce(ctx, key, windows.pop(key))
        for key in sorted(windows):
            yield from self._reduce(ctx, key, windows[key])


def _int64(value: int):
    import numpy as np

    return np.array(value, dtype=np.int64)


def group_by_window(key_func, reduce_func, window_size=None, window_size_func=None):
    """Groups elements by `key_func(element)` (an int64 scalar) into windows of
    `window_size` (or `window_size_func(key)`) elements; yields the elements of
    `reduce_func(key, window_dataset)` for each window.

    Example:
        >>> ds.apply(tf.data.experimental.group_by_window(
        ...     lambda x: x % 2, lambda key, window: window.batch(4), window_size=4))
    """
    return lambda dataset: GroupByWindowDataset(dataset, key_func, reduce_func, window_size,
                                                window_size_func)


def bucket_by_sequence_length(element_length_func, bucket_boundaries, bucket_batch_sizes,
                              padded_shapes=None, padding_values=None,
                              pad_to_bucket_boundary=False, no_padding=False,
                              drop_remainder=False):
    """Batches elements of similar length: bucket `i` holds lengths in
    `[bucket_boundaries[i-1], bucket_boundaries[i])` and batches `bucket_batch_sizes[i]` of
    them, padded to the longest of the batch (or to the bucket's boundary minus one with
    `pad_to_bucket_boundary`)."""

    boundaries = [int(b) for b in bucket_boundaries]
    sizes = [int(b) for b in bucket_batch_sizes]
    if len(sizes) != len(boundaries) + 1:
        raise ValueError("len(bucket_batch_sizes) must equal len(bucket_boundaries) + 1, got "
                         f"{len(sizes)} and {len(boundaries)}")
    if boundaries != sorted(boundaries):
        raise ValueError(f"bucket_boundaries must be sorted, got {boundaries}")

    def bucket_id(*args):
        length = cast(element_length_func(*args), dtypes.int64)
        edges = array_ops.constant(boundaries, dtype=dtypes.int64)
        return reduce_sum(cast(greater_equal(length, edges), dtypes.int64))

    def window_size(bucket):
        return gather(array_ops.constant(sizes, dtype=dtypes.int64), bucket)

    def batching(bucket, window):
        batch_size = window_size(bucket)
        if no_padding:
            return window.batch(batch_size, drop_remainder=drop_remainder)
        filler = None
        if pad_to_bucket_boundary:
            check = check_ops.assert_less(
                bucket, array_ops.constant(len(sizes) - 1, dtype=dtypes.int64),
                message="When pad_to_bucket_boundary=True, elements must have length < "
                "max(bucket_boundaries).")
            with bucket.graph.control_dependencies([check]):
                edges = array_ops.constant(boundaries, dtype=dtypes.int64)
                filler = math_ops.subtract(gather(edges, bucket), 1)
        shapes = padded_shapes if padded_shapes is not None else window.output_shapes
        shapes = _fill_unknown(shapes, filler)
        return window.padded_batch(batch_size, shapes, padding_values,
                                   drop_remainder=drop_remainder)

    def apply(dataset):
        return GroupByWindowDataset(dataset, bucket_id, batching, None, window_size)

    return apply


def _fill_unknown(shapes, filler):
    def fill(shape):
        shape = as_shape(shape)
        if shape.ndims is None:
            return shape
        return [filler if d is None else d for d in shape.as_list()]

    return structure.map_structure(fill, shapes)


__all__ = ["group_by_window", "bucket_by_sequence_length"]
