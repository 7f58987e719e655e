"""`Dataset.window()`: a dataset of windows, each a nested structure of datasets.

Each element of a WindowDataset is one window: the input elements at `start + j * stride`
(`j < size`), with window starts `shift` apart. A window travels through the pipeline as one
flat value (the list of its input elements); the only thing a program can do with it is to
receive it in a `flat_map`/`interleave` function, where each component is a dataset
(`WindowComponentDataset`) of that component's values, e.g. `lambda x: x.batch(size)`.

The input is read as a stream, keeping only the elements a later window still needs, so a
window over an infinite input works; an input element that fails is an error of the windows
that contain it, and is never seen when strides skip it (as in TF).
"""

from __future__ import annotations

from tensorflux.data import structure
from tensorflux.data.dataset_ops import Dataset, ElementError, scalar_arg
from tensorflux.framework import dtypes, errors
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_shape import TensorShape

__all__ = ["WindowDataset"]


class WindowTemplate:
    """The structure of a window element: the input's template, types and shapes."""

    def __init__(self, template, types, shapes):
        self.template, self.types, self.shapes = template, list(types), list(shapes)

    def make_args(self, window: Tensor):
        """The window as the function argument: the input's structure of component datasets
        reading from `window` (the function's placeholder for the window element)."""
        position = [0]

        def build(node):
            if isinstance(node, dict):
                built = {key: build(node[key]) for key in sorted(node)}
                return type(node)(built) if type(node) is not dict else built
            if isinstance(node, tuple):
                items = [build(item) for item in node]
                return type(node)(*items) if hasattr(node, "_fields") else tuple(items)
            width = 3 if isinstance(node, structure.SparseNode) else 1
            start = position[0]
            position[0] += width
            return WindowComponentDataset(window, start, node, self.types[start:start + width],
                                          self.shapes[start:start + width])

        return build(self.template)

    def __repr__(self) -> str:
        return f"WindowTemplate({self.template!r})"


class WindowComponentDataset(Dataset):
    """The values of one component (flat leaves `start:start + len(types)`) of a window."""

    def __init__(self, window: Tensor, start: int, node, types, shapes):
        self._window = window
        self._start = start
        super().__init__([], [window], types, shapes, node)

    def _iterate(self, ctx):
        stop = self._start + len(self._types)
        for element in ctx.values[self._window]:
            yield element if type(element) is ElementError else tuple(element[self._start:stop])


def _bool_arg(value, name: str):
    if isinstance(value, Tensor):
        if value.dtype.base_dtype != dtypes.bool_ or value.shape.ndims not in (None, 0):
            raise TypeError(f"Dataset.window(): `{name}` must be a scalar bool, got {value!r}")
        return value
    return bool(value)


class WindowDataset(Dataset):
    """Windows of `size` elements `stride` apart, starting every `shift` elements."""

    def __init__(self, dataset, size, shift=None, stride=1, drop_remainder=False):
        what = "Dataset.window()"
        self._size = scalar_arg(size, "size", what)
        self._shift = self._size if shift is None else scalar_arg(shift, "shift", what)
        self._stride = scalar_arg(stride, "stride", what)
        self._drop = _bool_arg(drop_remainder, "drop_remainder")
        template = WindowTemplate(dataset._template, dataset._types, dataset._shapes)
        captures = [self._size, self._shift, self._stride, self._drop]
        super().__init__([dataset], captures, [dtypes.variant], [TensorShape([])], template)

    def _check(self, ctx):
        for name, arg in (("size", self._size), ("shift", self._shift),
                          ("stride", self._stride)):
            if ctx.scalar(arg) <= 0:
                raise errors.InvalidArgumentError(
                    None, None, f"Dataset.window(): {name} must be greater than zero, got "
                    f"{ctx.scalar(arg)}")

    def _iterate(self, ctx):
        size, shift = ctx.scalar(self._size), ctx.scalar(self._shift)
        stride, drop = ctx.scalar(self._stride), bool(ctx.value(self._drop))
        source = self._inputs[0]._iterate(ctx)
        buffer, base, exhausted = [], 0, False  # buffer[i] is input element base + i
        start = 0
        while True:
            last = start + (size - 1) * stride
            while not exhausted and base + len(buffer) <= last:
                try:
                    buffer.append(next(source))
                except StopIteration:
                    exhausted = True
            available = base + len(buffer)
            if start >= available or (drop and last >= available):
                return
            window = [buffer[i - base] for i in range(start, min(last + 1, available), stride)]
            failed = next((e for e in window if type(e) is ElementError), None)
            yield failed if failed is not None else (window,)
            start += shift
            drop_count = min(start - base, len(buffer))
            if drop_count > 0:
                del buffer[:drop_count]
                base += drop_count
            if start > base:  # the next window starts past the buffered input: skip ahead
                while not exhausted and base < start:
                    try:
                        next(source)
                        base += 1
                    except StopIteration:
                        exhausted = True
