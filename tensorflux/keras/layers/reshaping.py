"""Keras layers that reshape without weights: padding, upsampling, cropping, repeat, permute."""

from __future__ import annotations

from tensorflux.keras.engine.base_layer import InputSpec, Layer
from tensorflux.ops import array as array_ops
from tensorflux.ops.array import sorting as array_sorting

__all__ = ["ZeroPadding2D", "UpSampling2D", "RepeatVector", "Permute", "Cropping2D"]


def _pairs(padding, name):
    if isinstance(padding, int):
        return ((padding, padding), (padding, padding))
    padding = tuple(padding)
    if len(padding) != 2:
        raise ValueError(f'Layer "{name}": padding must be an int, 2 ints or 2 pairs of ints.')
    return tuple((p, p) if isinstance(p, int) else tuple(p) for p in padding)


class ZeroPadding2D(Layer):
    """Pads height and width of [batch, h, w, c] with zeros."""

    def __init__(self, padding=(1, 1), data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.padding = _pairs(padding, self.name)
        self.input_spec = InputSpec(ndim=4)

    def call(self, inputs):
        return array_ops.pad(inputs, [[0, 0], list(self.padding[0]), list(self.padding[1]), [0, 0]])


class UpSampling2D(Layer):
    """Repeats rows and columns of [batch, h, w, c] `size` times (nearest neighbour)."""

    def __init__(self, size=(2, 2), data_format=None, interpolation="nearest", **kwargs):
        super().__init__(**kwargs)
        if interpolation != "nearest":
            raise ValueError(f'Layer "{self.name}": only interpolation="nearest" is supported.')
        self.size = (size, size) if isinstance(size, int) else tuple(size)
        self.input_spec = InputSpec(ndim=4)

    def call(self, inputs):
        return array_sorting.repeat(
            array_sorting.repeat(inputs, self.size[0], axis=1), self.size[1], axis=2
        )


class RepeatVector(Layer):
    """[batch, d] -> [batch, n, d]."""

    def __init__(self, n, **kwargs):
        super().__init__(**kwargs)
        self.n = int(n)
        self.input_spec = InputSpec(ndim=2)

    def call(self, inputs):
        return array_ops.tile(array_ops.expand_dims(inputs, 1), [1, self.n, 1])


class Permute(Layer):
    """Permutes the non-batch dimensions by `dims` (1-based)."""

    def __init__(self, dims, **kwargs):
        super().__init__(**kwargs)
        self.dims = tuple(dims)
        if sorted(self.dims) != list(range(1, len(self.dims) + 1)):
            raise ValueError(
                f'Layer "{self.name}": invalid permutation `dims` {dims}; it must '
                "be a permutation of 1..n."
            )

    def call(self, inputs):
        return array_ops.transpose(inputs, [0, *self.dims])


class Cropping2D(Layer):
    """Removes ((top, bottom), (left, right)) rows and columns of [batch, h, w, c]."""

    def __init__(self, cropping=((0, 0), (0, 0)), data_format=None, **kwargs):
        super().__init__(**kwargs)
        if isinstance(cropping, int):
            cropping = ((cropping, cropping), (cropping, cropping))
        self.cropping = tuple((c, c) if isinstance(c, int) else tuple(c) for c in cropping)
        self.input_spec = InputSpec(ndim=4)

    def call(self, inputs):
        (top, bottom), (left, right) = self.cropping
        dims = inputs.get_shape().as_list()
        if (
            dims[1] is not None
            and top + bottom >= dims[1]
            or (dims[2] is not None and left + right >= dims[2])
        ):
            raise ValueError(
                f'Layer "{self.name}": cropping {self.cropping} removes the whole '
                f"input of shape {tuple(dims)}."
            )
        return inputs[:, top : (-bottom or None), left : (-right or None), :]
