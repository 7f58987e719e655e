"""Keras layers that reshape without weights: padding, upsampling, cropping, repeat, permute."""

from __future__ import annotations

from tensorflux.keras.engine.base_layer import InputSpec, Layer
from tensorflux.ops import array as array_ops
from tensorflux.ops.array import sorting as array_sorting

__all__ = ["ZeroPadding2D", "UpSampling2D", "RepeatVector", "Permute", "Cropping2D",
           "ZeroPadding1D", "ZeroPadding3D", "UpSampling1D", "UpSampling3D", "Cropping1D",
           "Cropping3D"]


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


def _nd_pairs(value, rank, what, name):
    """`value` (an int, `rank` ints, or `rank` pairs; an int or a pair for rank 1) as `rank`
    (before, after) pairs of non-negative ints."""
    if isinstance(value, int):
        pairs = ((value, value),) * rank
    elif rank == 1 and len(tuple(value)) == 2 and all(isinstance(v, int) for v in value):
        pairs = (tuple(value),)
    else:
        value = tuple(value)
        if len(value) != rank:
            raise ValueError(f'Layer "{name}": `{what}` should have {rank} entries, '
                             f"got {value}.")
        pairs = tuple((v, v) if isinstance(v, int) else tuple(v) for v in value)
    for pair in pairs:
        if len(pair) != 2 or any(int(v) < 0 for v in pair):
            raise ValueError(f'Layer "{name}": invalid `{what}` {value}: pairs of '
                             "non-negative ints expected.")
    return tuple((int(a), int(b)) for a, b in pairs)


class _ZeroPaddingND(Layer):
    rank = 1
    default = 1

    def __init__(self, padding=None, data_format=None, **kwargs):
        super().__init__(**kwargs)
        _check_format(data_format, self.name)
        padding = self.default if padding is None else padding
        self.padding = _nd_pairs(padding, self.rank, "padding", self.name)
        self.input_spec = InputSpec(ndim=self.rank + 2)

    def call(self, inputs):
        return array_ops.pad(inputs, [[0, 0], *[list(p) for p in self.padding], [0, 0]])


class ZeroPadding1D(_ZeroPaddingND):
    """Pads the steps of [batch, steps, c] with zeros: `padding` an int or (left, right)."""

    def __init__(self, padding=1, **kwargs):
        super().__init__(padding, **kwargs)


class ZeroPadding3D(_ZeroPaddingND):
    """Pads depth, height and width of [batch, d, h, w, c] with zeros."""

    rank = 3

    def __init__(self, padding=(1, 1, 1), data_format=None, **kwargs):
        super().__init__(padding, data_format, **kwargs)


class _CroppingND(Layer):
    rank = 1

    def __init__(self, cropping, data_format=None, **kwargs):
        super().__init__(**kwargs)
        _check_format(data_format, self.name)
        self.cropping = _nd_pairs(cropping, self.rank, "cropping", self.name)
        self.input_spec = InputSpec(ndim=self.rank + 2)

    def call(self, inputs):
        dims = inputs.get_shape().as_list()
        for size, (a, b) in zip(dims[1:-1], self.cropping):
            if size is not None and a + b >= size:
                raise ValueError(f'Layer "{self.name}": cropping {self.cropping} removes the '
                                 f"whole input of shape {tuple(dims)}.")
        index = tuple(slice(a, (-b or None)) for a, b in self.cropping)
        return inputs[(slice(None), *index, slice(None))]


class Cropping1D(_CroppingND):
    """Removes (start, end) steps of [batch, steps, c]."""

    def __init__(self, cropping=(1, 1), **kwargs):
        super().__init__(cropping, **kwargs)


class Cropping3D(_CroppingND):
    """Removes ((d0, d1), (h0, h1), (w0, w1)) entries of [batch, d, h, w, c]."""

    rank = 3

    def __init__(self, cropping=((1, 1), (1, 1), (1, 1)), data_format=None, **kwargs):
        super().__init__(cropping, data_format, **kwargs)


class UpSampling1D(Layer):
    """Repeats each step of [batch, steps, c] `size` times."""

    def __init__(self, size=2, **kwargs):
        super().__init__(**kwargs)
        self.size = int(size)
        self.input_spec = InputSpec(ndim=3)

    def call(self, inputs):
        return array_sorting.repeat(inputs, self.size, axis=1)


class UpSampling3D(Layer):
    """Repeats depth, height and width entries of [batch, d, h, w, c] `size` times."""

    def __init__(self, size=(2, 2, 2), data_format=None, **kwargs):
        super().__init__(**kwargs)
        _check_format(data_format, self.name)
        self.size = (int(size),) * 3 if isinstance(size, int) else tuple(int(s) for s in size)
        if len(self.size) != 3:
            raise ValueError(f'Layer "{self.name}": `size` should have 3 entries, got {size}.')
        self.input_spec = InputSpec(ndim=5)

    def call(self, inputs):
        for axis, factor in enumerate(self.size, start=1):
            inputs = array_sorting.repeat(inputs, factor, axis=axis)
        return inputs


def _check_format(data_format, name):
    if data_format not in (None, "channels_last"):
        raise ValueError(f'Layer "{name}": only data_format="channels_last" is supported, '
                         f"got {data_format!r}.")
