"""Window geometry shared by convolutions and pooling: attr checks, output sizes, padding.

Everything here is plain integer arithmetic on attrs and (possibly unknown) sizes, used both
by shape functions (sizes may be None) and by kernel factories (sizes are ints). Padding
follows TensorFlow: `SAME` gives `ceil(in / stride)` outputs with the extra padding row at the
bottom/right; `VALID` uses no padding; `EXPLICIT` takes `(before, after)` pairs per dimension.
"""

from __future__ import annotations

from dataclasses import dataclass

from tensorflux.framework.tensor_shape import TensorShape


@dataclass(frozen=True)
class Window2D:
    """Spatial window attrs in (height, width) order, decoded once from the 4-element attrs."""

    data_format: str
    ksize: tuple = (1, 1)
    strides: tuple = (1, 1)
    dilations: tuple = (1, 1)
    padding: str = "VALID"
    explicit: tuple = ((0, 0), (0, 0))

    @property
    def channels_last(self) -> bool:
        return self.data_format == "NHWC"

    def geometry(self, in_h: int, in_w: int, k_h: int, k_w: int):
        """Returns ((out_h, out_w), (top, bottom, left, right)) for known sizes."""
        out_h, top, bottom = output_size(in_h, k_h, self.strides[0], self.dilations[0],
                                         self.padding, self.explicit[0])
        out_w, left, right = output_size(in_w, k_w, self.strides[1], self.dilations[1],
                                         self.padding, self.explicit[1])
        return (out_h, out_w), (top, bottom, left, right)


def spatial_pair(values, data_format: str, what: str, allow_nonspatial: bool = False) -> tuple:
    """(h, w) of a 4-element attr laid out as `data_format`; ValueError on the others != 1."""
    values = tuple(values)
    if len(values) != 4:
        raise ValueError(f"{what} must have 4 elements (one per dimension of {data_format}), "
                         f"got {len(values)}: {list(values)}")
    if data_format == "NHWC":
        batch, h, w, depth = values
    else:
        batch, depth, h, w = values
    if not allow_nonspatial and (batch != 1 or depth != 1):
        raise ValueError(f"{what} in the batch and depth dimensions must be 1 (only spatial "
                         f"{what} are supported), got {list(values)}")
    if h < 1 or w < 1:
        raise ValueError(f"{what} must be positive, got {list(values)}")
    return (h, w)


def nonspatial(values, data_format: str) -> bool:
    """True when a 4-element window attr is not 1 in its batch or depth dimension."""
    values = tuple(values)
    if len(values) != 4:
        return False
    c = 3 if data_format == "NHWC" else 1
    return values[0] != 1 or values[c] != 1


def spatial_only(values, data_format: str) -> tuple:
    """A 4-element window attr with its batch and depth entries set to 1 (TF's shape functions
    read only the spatial ones; the kernels reject the others at run time)."""
    values = list(values)
    if len(values) == 4:
        values[0] = values[3 if data_format == "NHWC" else 1] = 1
    return tuple(values)


def explicit_pairs(explicit_paddings, padding: str, data_format: str) -> tuple:
    """((top, bottom), (left, right)) from the 8-element `explicit_paddings` attr."""
    values = tuple(explicit_paddings)
    if padding != "EXPLICIT":
        if values:
            raise ValueError(f"explicit_paddings must be empty when padding is {padding!r}, "
                             f"got {list(values)}")
        return ((0, 0), (0, 0))
    if len(values) != 8:
        raise ValueError(f"explicit_paddings must have 8 elements (a before/after pair per "
                         f"dimension) when padding is 'EXPLICIT', got {len(values)}")
    if any(v < 0 for v in values):
        raise ValueError(f"explicit_paddings must be non-negative, got {list(values)}")
    pairs = [values[0:2], values[2:4], values[4:6], values[6:8]]
    if data_format == "NHWC":
        batch, h, w, depth = pairs
    else:
        batch, depth, h, w = pairs
    if any(batch) or any(depth):
        raise ValueError("explicit_paddings in the batch and depth dimensions must be 0, got "
                         f"{list(values)}")
    return (tuple(h), tuple(w))


def window(data_format: str, ksize=None, strides=(1, 1, 1, 1), dilations=(1, 1, 1, 1),
           padding: str = "VALID", explicit_paddings=()) -> Window2D:
    """Decodes and checks the 4-element window attrs of a conv or pool op."""
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError(f"data_format must be 'NHWC' or 'NCHW', got {data_format!r}")
    k = spatial_pair(ksize, data_format, "ksize") if ksize is not None else (1, 1)
    return Window2D(
        data_format=data_format,
        ksize=k,
        strides=spatial_pair(strides, data_format, "strides"),
        dilations=spatial_pair(dilations, data_format, "dilations"),
        padding=padding,
        explicit=explicit_pairs(explicit_paddings, padding, data_format),
    )


def output_size(in_size, k: int, stride: int, dilation: int, padding: str, pair=(0, 0)):
    """(out, pad_before, pad_after) for one spatial dimension; `in_size` may be None."""
    effective = (k - 1) * dilation + 1
    if in_size is None:
        return None, 0, 0
    if padding == "SAME":
        out = (in_size + stride - 1) // stride
        needed = max(0, (out - 1) * stride + effective - in_size)
        return out, needed // 2, needed - needed // 2
    before, after = pair if padding == "EXPLICIT" else (0, 0)
    padded = in_size + before + after
    if padded < effective:
        raise ValueError(f"Negative dimension size caused by subtracting {effective} from "
                         f"{padded} (input size {in_size}, effective window size {effective}, "
                         f"padding {padding})")
    return (padded - effective) // stride + 1, before, after


def split_nhwc(shape: TensorShape, data_format: str) -> tuple:
    """(n, h, w, c) of a rank-4 static shape laid out as `data_format` (entries may be None)."""
    dims = shape.with_rank(4).as_list()
    if data_format == "NHWC":
        return tuple(dims)
    n, c, h, w = dims
    return (n, h, w, c)


def join_nhwc(n, h, w, c, data_format: str) -> TensorShape:
    """A rank-4 static shape in `data_format` order from its (n, h, w, c) parts."""
    if data_format == "NHWC":
        return TensorShape([n, h, w, c])
    return TensorShape([n, c, h, w])


def merge_dim(a, b, what: str):
    """The merge of two possibly unknown sizes; ValueError naming `what` when they differ."""
    if a is None:
        return b
    if b is not None and a != b:
        raise ValueError(f"{what}: {a} vs {b}")
    return a


def sequence_attr(value, name: str, data_format: str, n: int = 2) -> list:
    """TF's `_get_sequence`: an int, or 1, `n` or `n + 2` values, as a full 4-element attr."""
    if value is None:
        return [1] * (n + 2)
    if isinstance(value, int):
        inner = [value] * n
    else:
        value = [int(v) for v in value]
        if len(value) == n + 2:
            return value
        if len(value) == 1:
            inner = value * n
        elif len(value) == n:
            inner = value
        else:
            raise ValueError(f"{name} should be of length 1, {n} or {n + 2} but was "
                             f"{len(value)}")
    if data_format.startswith("NC"):
        return [1, 1] + inner
    return [1] + inner + [1]


def convert_padding(padding, data_format: str = "NHWC"):
    """(padding string, explicit_paddings) from a padding string or a list of 4 pairs."""
    if isinstance(padding, (bytes, str)):
        padding = padding.decode() if isinstance(padding, bytes) else padding
        return padding.upper() if padding.upper() in ("SAME", "VALID") else padding, []
    pairs = [list(p) for p in padding]
    if len(pairs) != 4 or any(len(p) != 2 for p in pairs):
        raise ValueError(f"When padding is a list, it must have 4 [before, after] pairs (one "
                         f"per dimension), got {padding!r}")
    batch, depth = (pairs[0], pairs[3]) if data_format == "NHWC" else (pairs[0], pairs[1])
    if any(batch) or any(depth):
        raise ValueError(f"Explicit padding in the batch and channel dimensions must be 0, "
                         f"got {padding!r}")
    return "EXPLICIT", [int(v) for pair in pairs for v in pair]
