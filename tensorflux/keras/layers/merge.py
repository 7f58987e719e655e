"""Keras merge layers over a list of same-shaped tensors: Add, Multiply, Concatenate, ...."""

from __future__ import annotations

import functools

from tensorflux.keras import backend_ops
from tensorflux.keras.engine.base_layer import Layer, format_shape
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops

__all__ = [
    "Add",
    "Subtract",
    "Multiply",
    "Average",
    "Maximum",
    "Minimum",
    "Concatenate",
    "add",
    "subtract",
    "multiply",
    "average",
    "maximum",
    "minimum",
    "concatenate",
    "Dot",
    "dot",
]


class _Merge(Layer):
    supports_masking = True

    def compute_mask(self, inputs, mask=None):
        """A step is kept where every masked input keeps it (TF 1.15's merge layers)."""
        if mask is None or all(m is None for m in mask):
            return None
        kept = [m for m in mask if m is not None]
        result = kept[0]
        for other in kept[1:]:
            result = math_ops.logical_and(result, other)
        return result

    def _check(self, inputs, exactly=None):
        if not isinstance(inputs, list) or len(inputs) < 2:
            raise ValueError(
                f'Layer "{self.name}" should be called on a list of at least 2 '
                f"inputs. Received: {inputs!r}"
            )
        if exactly is not None and len(inputs) != exactly:
            raise ValueError(
                f'Layer "{self.name}" should be called on exactly {exactly} '
                f"inputs. Received {len(inputs)} inputs."
            )

    def build(self, input_shape):
        self._check(input_shape if isinstance(input_shape, list) else None)
        self.built = True

    def call(self, inputs):
        self._check(inputs)
        shapes = [t.get_shape() for t in inputs]
        if not all(
            shapes[0][1:].is_compatible_with(s[1:])
            for s in shapes[1:]
            if s.ndims == shapes[0].ndims
        ):
            raise ValueError(
                f'Layer "{self.name}": inputs must have compatible shapes. Got '
                f"{', '.join(format_shape(s.as_list()) for s in shapes)}"
            )
        return self._merge(inputs)


class Add(_Merge):
    """Elementwise sum of the inputs."""

    def _merge(self, inputs):
        return math_ops.add_n(inputs)


class Subtract(_Merge):
    """inputs[0] - inputs[1]."""

    def _merge(self, inputs):
        self._check(inputs, exactly=2)
        return inputs[0] - inputs[1]


class Multiply(_Merge):
    """Elementwise product of the inputs."""

    def _merge(self, inputs):
        return functools.reduce(lambda a, b: a * b, inputs)


class Average(_Merge):
    """Elementwise mean of the inputs."""

    def _merge(self, inputs):
        return math_ops.add_n(inputs) / float(len(inputs))


class Maximum(_Merge):
    def _merge(self, inputs):
        return functools.reduce(math_ops.maximum, inputs)


class Minimum(_Merge):
    def _merge(self, inputs):
        return functools.reduce(math_ops.minimum, inputs)


class Concatenate(_Merge):
    """Joins the inputs along `axis` (default last); other dimensions must match."""

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis

    def call(self, inputs):
        self._check(inputs)
        shapes = [t.get_shape().as_list() for t in inputs]
        rank = len(shapes[0])
        axis = self.axis % rank
        for shape in shapes[1:]:
            other = [d for i, d in enumerate(shape) if i != axis]
            first = [d for i, d in enumerate(shapes[0]) if i != axis]
            if len(shape) != rank or any(
                a is not None and b is not None and a != b for a, b in zip(first, other)
            ):
                raise ValueError(
                    f'Layer "{self.name}": a Concatenate layer requires inputs '
                    "with matching shapes except for the concatenation axis. "
                    f"Received: input_shape={[format_shape(s) for s in shapes]}"
                )
        return array_ops.concat(inputs, axis=axis)


def _functional(cls):
    def merge(inputs, **kwargs):
        return cls(**kwargs)(inputs)

    merge.__name__ = cls.__name__.lower()
    merge.__doc__ = f"Functional interface to `{cls.__name__}`."
    return merge


add, subtract, multiply = _functional(Add), _functional(Subtract), _functional(Multiply)
average, maximum, minimum = _functional(Average), _functional(Maximum), _functional(Minimum)


def concatenate(inputs, axis=-1, **kwargs):
    """Functional interface to `Concatenate`."""
    return Concatenate(axis=axis, **kwargs)(inputs)


class Dot(_Merge):
    """The dot product of two tensors over `axes` per batch element (`K.batch_dot`); with
    `normalize`, of their L2-normalized versions (the cosine proximity).

    Args:
        axes: an int or a pair of ints (one axis per input; negatives count from the end).
        normalize: L2-normalize both inputs along their `axes` first.
    """

    supports_masking = False

    def __init__(self, axes, normalize=False, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(axes, int):
            if not isinstance(axes, (list, tuple)) or len(axes) != 2 or not all(
                    isinstance(a, int) for a in axes):
                raise ValueError("Invalid format for argument `axes`: expected an int or a "
                                 f"list/tuple of 2 ints. Received: {axes}")
        self.axes = axes
        self.normalize = normalize

    def compute_mask(self, inputs, mask=None):
        return None

    def _axes(self, inputs):
        axes = [self.axes] * 2 if isinstance(self.axes, int) else list(self.axes)
        return [a % t.get_shape().ndims if a < 0 else a for a, t in zip(axes, inputs)]

    def build(self, input_shape):
        self._check(input_shape if isinstance(input_shape, list) else None, exactly=2)
        first, second = input_shape
        if first is not None and second is not None:
            axes = [self.axes] * 2 if isinstance(self.axes, int) else list(self.axes)
            axes = [a % len(s) if a < 0 else a for a, s in zip(axes, input_shape)]
            if first[axes[0]] is not None and second[axes[1]] is not None and \
                    first[axes[0]] != second[axes[1]]:
                raise ValueError(f'Layer "{self.name}": dimension incompatibility '
                                 f"{first[axes[0]]} != {second[axes[1]]}. Layer shapes: "
                                 f"{format_shape(first)}, {format_shape(second)}")
        self.built = True

    def call(self, inputs):
        self._check(inputs, exactly=2)
        x, y = inputs
        axes = self._axes(inputs)
        if self.normalize:
            x = backend_ops.l2_normalize(x, axis=axes[0])
            y = backend_ops.l2_normalize(y, axis=axes[1])
        return backend_ops.batch_dot(x, y, axes)


def dot(inputs, axes, normalize=False, **kwargs):
    """Functional interface to `Dot`."""
    return Dot(axes=axes, normalize=normalize, **kwargs)(inputs)
