"""`sliding_window_batch`: overlapping windows of consecutive elements, stacked.

Window k holds input elements k * window_shift + i * window_stride for i < window_size, stacked
along a new first axis; only full windows are produced (a shorter tail is dropped), and the
window dimension is None in the static shape, as in TF 1.x's `tf.contrib.data`.
"""

from __future__ import annotations

import collections

import numpy as np

from tensorflux.data import structure
from tensorflux.data.dataset_ops import Dataset, ElementError, scalar_arg
from tensorflux.framework import errors
from tensorflux.framework.tensor_shape import TensorShape

__all__ = ["SlideDataset", "sliding_window_batch"]


class SlideDataset(Dataset):
    """Stacks `size` elements `stride` apart, starting a new window every `shift` elements."""

    def __init__(self, dataset, window_size, window_shift, window_stride):
        if list(structure.sparse_positions(dataset._template)):
            raise ValueError("sliding_window_batch: sparse components are not supported")
        what = "sliding_window_batch()"
        self._size = scalar_arg(window_size, "window_size", what)
        self._shift = scalar_arg(window_shift, "window_shift", what)
        self._stride = scalar_arg(window_stride, "window_stride", what)
        shapes = [TensorShape([None]).concatenate(shape) for shape in dataset._shapes]
        super().__init__([dataset], [self._size, self._shift, self._stride], dataset._types,
                         shapes, dataset._template)

    def _check(self, ctx):
        for arg, label in ((self._size, "Window size"), (self._shift, "Window shift"),
                           (self._stride, "Window stride")):
            value = ctx.scalar(arg)
            if value <= 0:
                raise errors.InvalidArgumentError(
                    None, None, f"{label} must be greater than zero, got {value}.")

    def _iterate(self, ctx):
        size, shift, stride = (ctx.scalar(self._size), ctx.scalar(self._shift),
                               ctx.scalar(self._stride))
        span = (size - 1) * stride + 1
        buffer = collections.deque()   # input elements from index `first` on
        first, start = 0, 0            # `start`: first element of the next window
        for element in self._inputs[0]._iterate(ctx):
            if type(element) is ElementError:
                yield element
                continue
            buffer.append(element)
            while first + len(buffer) >= start + span:
                rows = [buffer[start - first + i * stride] for i in range(size)]
                yield tuple(np.stack(column) for column in zip(*rows))
                start += shift
                while buffer and first < start:
                    buffer.popleft()
                    first += 1


def sliding_window_batch(window_size, stride=None, window_shift=None, window_stride=1):
    """A transformation making overlapping windows of `window_size` consecutive elements.

    Args:
        window_size: elements per window (> 0).
        stride: deprecated name of `window_shift`.
        window_shift: elements between the starts of two windows (default 1).
        window_stride: step between the elements of one window (default 1).

    Returns:
        A function `Dataset -> Dataset` for `Dataset.apply`.

    Raises:
        ValueError: both `stride` and `window_shift` are given.
    """
    if stride is not None and window_shift is not None:
        raise ValueError("Cannot specify both `stride` and `window_shift`")
    shift = window_shift if window_shift is not None else (stride if stride is not None else 1)
    return lambda dataset: SlideDataset(dataset, window_size, shift, window_stride)
