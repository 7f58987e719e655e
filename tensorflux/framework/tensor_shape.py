"""Static shapes: `TensorShape` of `Dimension`s, each possibly unknown.

A `TensorShape` is immutable: `dims` is None for an unknown rank, else a tuple of int-or-None.
Indexing returns a `Dimension` (TF1 behaviour, so `shape[0].value` works); `as_list()` gives
ints and Nones.
"""

from __future__ import annotations

from tensorflux.protos import tensor_shape_pb2


class _KnownDim(int):
    """A known entry of `TensorShape.dims`: an int that also has TF1's `.value`."""

    __slots__ = ()

    @property
    def value(self) -> int:
        return int(self)


class Dimension:
    """One dimension of a shape: an int, or unknown (`value is None`)."""

    __slots__ = ("_value",)

    def __init__(self, value):
        if isinstance(value, Dimension):
            value = value.value
        if value is not None:
            try:
                value = int(value.__index__())
            except AttributeError:
                if isinstance(value, float) and value.is_integer():
                    value = int(value)
                else:
                    raise TypeError(f"Dimension value must be integer or None, got {value!r}")
            if value < 0:
                raise ValueError(f"Dimension {value} must be >= 0")
        self._value = value

    @property
    def value(self):
        return self._value

    def __repr__(self) -> str:
        return f"Dimension({self._value!r})"

    def __str__(self) -> str:
        return "?" if self._value is None else str(self._value)

    def __int__(self) -> int:
        return self._value

    def __index__(self) -> int:
        return self._value

    def __eq__(self, other):
        try:
            other = as_dimension_value(other)
        except (TypeError, ValueError):  # not a dimension: unequal, as in TF
            return NotImplemented
        if self._value is None or other is None:
            return None
        return self._value == other

    def __ne__(self, other):
        try:
            other = as_dimension_value(other)
        except (TypeError, ValueError):
            return NotImplemented
        if self._value is None or other is None:
            return None
        return self._value != other

    def __lt__(self, other):
        other = as_dimension_value(other)
        return None if self._value is None or other is None else self._value < other

    def __le__(self, other):
        other = as_dimension_value(other)
        return None if self._value is None or other is None else self._value <= other

    def __gt__(self, other):
        other = as_dimension_value(other)
        return None if self._value is None or other is None else self._value > other

    def __ge__(self, other):
        other = as_dimension_value(other)
        return None if self._value is None or other is None else self._value >= other

    def __hash__(self) -> int:
        return hash(self._value)

    def __bool__(self) -> bool:
        return bool(self._value)

    def _arith(self, other, fn):
        try:
            other = as_dimension_value(other)
        except (TypeError, ValueError):  # `[4] * dim` falls to list repetition, as in TF
            return NotImplemented
        if self._value is None or other is None:
            return Dimension(None)
        return Dimension(fn(self._value, other))

    def __add__(self, other):
        return self._arith(other, lambda a, b: a + b)

    __radd__ = __add__

    def __sub__(self, other):
        return self._arith(other, lambda a, b: a - b)

    def __rsub__(self, other):
        return self._arith(other, lambda a, b: b - a)

    def __mul__(self, other):
        return self._arith(other, lambda a, b: a * b)

    __rmul__ = __mul__

    def __floordiv__(self, other):
        return self._arith(other, lambda a, b: a // b)

    def __rfloordiv__(self, other):
        return self._arith(other, lambda a, b: b // a)

    def __truediv__(self, other):
        raise TypeError(f"unsupported operand type(s) for /: 'Dimension' and "
                        f"'{type(other).__name__}', please use // instead")

    def __rtruediv__(self, other):
        raise TypeError(f"unsupported operand type(s) for /: '{type(other).__name__}' and "
                        f"'Dimension', please use // instead")

    def __mod__(self, other):
        return self._arith(other, lambda a, b: a % b)

    def __rmod__(self, other):
        return self._arith(other, lambda a, b: b % a)

    def is_compatible_with(self, other) -> bool:
        other = as_dimension_value(other)
        return self._value is None or other is None or self._value == other

    def assert_is_compatible_with(self, other) -> None:
        if not self.is_compatible_with(other):
            raise ValueError(f"Dimensions {self} and {Dimension(other)} are not compatible")

    def merge_with(self, other) -> Dimension:
        other = as_dimension_value(other)
        if not self.is_compatible_with(other):
            raise ValueError(f"Dimensions {self} and {Dimension(other)} are not compatible")
        return Dimension(self._value if self._value is not None else other)


def as_dimension_value(value):
    """Returns the int-or-None a Dimension, int or None stands for."""
    if isinstance(value, Dimension):
        return value.value
    if value is None:
        return None
    return int(value)


def as_dimension(value) -> Dimension:
    return value if isinstance(value, Dimension) else Dimension(value)


def dimension_value(dimension):
    """Returns the int-or-None of a Dimension or raw value (TF's `dimension_value`)."""
    return dimension.value if isinstance(dimension, Dimension) else dimension


def dimension_at_index(shape, index) -> Dimension:
    shape = as_shape(shape)
    if shape.dims is None:
        return Dimension(None)
    return Dimension(shape.dims[index])


class RankError(ValueError):
    """A shape of the wrong rank (`TensorShape.with_rank*`): "Shape (2,) must have rank 2".

    Shape functions report it the way TF's shape inference does ("Shape must be rank 2 but is
    rank 1") through `inference_message`.
    """

    def __init__(self, shape, rank: int, bound: str):
        super().__init__(f"Shape {shape} must have rank {bound}{rank}")
        self.shape, self.rank, self.bound = shape, rank, bound

    def inference_message(self) -> str:
        """TF's shape-inference wording followed by this error's own."""
        return (f"Shape must be {self.bound}rank {self.rank} but is rank {self.shape.ndims} "
                f"({self})")


class TensorShape:
    """The static shape of a tensor, possibly partially known. Immutable."""

    __slots__ = ("_dims",)

    def __init__(self, dims=None):
        if dims is None:
            self._dims = None
        elif isinstance(dims, TensorShape):
            self._dims = dims._dims
        elif hasattr(dims, "dim") and hasattr(dims, "unknown_rank"):  # TensorShapeProto
            self._dims = None if dims.unknown_rank else tuple(
                None if d.size == -1 else int(d.size) for d in dims.dim)
        else:
            try:
                items = list(dims)
            except TypeError:
                items = [dims]
            self._dims = tuple(as_dimension_value(Dimension(d)) for d in items)

    @property
    def dims(self):
        """TF1's list of dimensions, or None when the rank is unknown: an unknown entry is
        `Dimension(None)` (`shape.dims[0].value is None`), a known one an int that also has
        `.value`."""
        if self._dims is None:
            return None
        return [Dimension(None) if d is None else _KnownDim(d) for d in self._dims]

    @property
    def _dim_list(self):
        """The package's own view of `dims`: int-or-None entries (None when the rank is
        unknown)."""
        if self._dims is None:
            return None
        return [None if d is None else _KnownDim(d) for d in self._dims]

    @property
    def ndims(self):
        return None if self._dims is None else len(self._dims)

    @property
    def rank(self):
        return self.ndims

    def __len__(self) -> int:
        if self._dims is None:
            raise ValueError("Cannot take the length of a shape with unknown rank.")
        return len(self._dims)

    def __bool__(self) -> bool:
        return self._dims is not None

    def __iter__(self):
        if self._dims is None:
            raise ValueError("Cannot iterate over a shape with unknown rank.")
        return iter(Dimension(d) for d in self._dims)

    def __getitem__(self, key):
        if self._dims is None:
            if isinstance(key, slice):
                return unknown_shape()
            return Dimension(None)
        if isinstance(key, slice):
            return TensorShape(self._dims[key])
        return Dimension(self._dims[key])

    def as_list(self) -> list:
        if self._dims is None:
            raise ValueError("as_list() is not defined on an unknown TensorShape.")
        return list(self._dims)

    def num_elements(self):
        if not self.is_fully_defined():
            return None
        n = 1
        for d in self._dims:
            n *= d
        return n

    def is_fully_defined(self) -> bool:
        return self._dims is not None and None not in self._dims

    def assert_is_fully_defined(self) -> None:
        if not self.is_fully_defined():
            raise ValueError(f"Shape {self} is not fully defined")

    def is_compatible_with(self, other) -> bool:
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return True
        if len(self._dims) != len(other._dims):
            return False
        return all(a is None or b is None or a == b for a, b in zip(self._dims, other._dims))

    def assert_is_compatible_with(self, other) -> None:
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {as_shape(other)} are incompatible")

    def merge_with(self, other) -> TensorShape:
        other = as_shape(other)
        if self._dims is None:
            return other
        if other._dims is None:
            return self
        if len(self._dims) != len(other._dims) or not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {other} are not compatible")
        return TensorShape([a if a is not None else b for a, b in zip(self._dims, other._dims)])

    def most_specific_compatible_shape(self, other) -> TensorShape:
        other = as_shape(other)
        if self._dims is None or other._dims is None or len(self._dims) != len(other._dims):
            return unknown_shape()
        return TensorShape([a if a == b else None for a, b in zip(self._dims, other._dims)])

    def concatenate(self, other) -> TensorShape:
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return unknown_shape()
        return TensorShape(self._dims + other._dims)

    def with_rank(self, rank: int) -> TensorShape:
        if self._dims is None:
            return unknown_shape(rank)
        if len(self._dims) != rank:
            raise RankError(self, rank, "")
        return self

    def with_rank_at_least(self, rank: int) -> TensorShape:
        if self._dims is not None and len(self._dims) < rank:
            raise RankError(self, rank, "at least ")
        return self

    def with_rank_at_most(self, rank: int) -> TensorShape:
        if self._dims is not None and len(self._dims) > rank:
            raise RankError(self, rank, "at most ")
        return self

    def assert_has_rank(self, rank: int) -> None:
        self.with_rank(rank)

    def assert_same_rank(self, other) -> None:
        other = as_shape(other)
        if self.ndims is not None and other.ndims is not None and self.ndims != other.ndims:
            raise ValueError(f"Shapes {self} and {other} must have the same rank")

    def as_proto(self):
        proto = tensor_shape_pb2.TensorShapeProto()
        if self._dims is None:
            proto.unknown_rank = True
        else:
            for d in self._dims:
                proto.dim.add(size=-1 if d is None else d)
        return proto

    def __eq__(self, other) -> bool:
        try:
            other = as_shape(other)
        except (TypeError, ValueError):
            return NotImplemented
        return self._dims == other._dims

    def __ne__(self, other) -> bool:
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    def __hash__(self) -> int:
        return hash(self._dims)

    def __repr__(self) -> str:
        if self._dims is None:
            return "TensorShape(None)"
        return f"TensorShape({list(self._dims)!r})"

    def __str__(self) -> str:
        if self._dims is None:
            return "<unknown>"
        inner = ", ".join("?" if d is None else str(d) for d in self._dims)
        return f"({inner},)" if len(self._dims) == 1 else f"({inner})"

    def __reduce__(self):
        return TensorShape, (None if self._dims is None else list(self._dims),)


def as_shape(shape) -> TensorShape:
    return shape if isinstance(shape, TensorShape) else TensorShape(shape)


def unknown_shape(rank=None, ndims=None) -> TensorShape:
    if rank is None:
        rank = ndims
    return TensorShape(None) if rank is None else TensorShape([None] * rank)


def scalar() -> TensorShape:
    return TensorShape([])


def vector(length) -> TensorShape:
    return TensorShape([length])


def matrix(rows, cols) -> TensorShape:
    return TensorShape([rows, cols])
