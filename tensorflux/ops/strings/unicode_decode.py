"""Ragged Unicode decoding: UnicodeDecode / UnicodeDecodeWithOffsets and `tf.strings`'
unicode_decode(_with_offsets), unicode_split(_with_offsets) and bytes_split.

The ops flatten their input and output `row_splits` (one row per string) with the code points
(and each one's starting byte offset). Each maximal invalid subsequence is one replacement
character (errors="replace"), dropped ("ignore") or an InvalidArgumentError ("strict"), as in
`unicode.py`. The wrappers give a dense vector for a scalar input and a RaggedTensor of rank
N + 1 for a rank-N input (outer dimensions as uniform rows).
"""

from __future__ import annotations

import codecs
import threading

import numpy as np

from tensorflux.framework import dtypes
from tensorflux.framework.op_def import define_op
from tensorflux.framework.scopes import op_name_scope as _scope
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.array import gather_scatter
from tensorflux.ops.ragged.ragged_tensor import RaggedTensor
from tensorflux.ops.strings import unicode as unicode_ops

__all__: list = []

_SPANS = threading.local()


def _record_invalid(error):
    _SPANS.spans.append((error.start, error.end))
    return unicode_ops._MARK, error.end


codecs.register_error("tensorflux.record_invalid", _record_invalid)


def _decode_one(value: bytes, codec: str, mode: str, substitute, control):
    """(code points, byte offsets) of one string."""
    _SPANS.spans = []
    text = value.decode(codec, "tensorflux.record_invalid")
    spans = iter(_SPANS.spans)
    points, offsets = [], []
    position = 0
    for char in text:
        if char == unicode_ops._MARK:
            start, end = next(spans)
            if mode == "strict":
                raise unicode_ops._strict_error(value)
            if substitute is not None:
                points.append(substitute)
                offsets.append(start)
            position = end
            continue
        code = ord(char)
        if control and code < 0x20:
            if substitute is None:
                position += len(char.encode(codec, "surrogatepass"))
                continue
            code = substitute
        points.append(code)
        offsets.append(position)
        position += len(char.encode(codec, "surrogatepass"))
    return points, offsets


def _decode_attrs():
    return ["input_encoding: string", f"errors: {unicode_ops._ERRORS} = 'replace'",
            "replacement_char: int = 65533", "replace_control_characters: bool = False",
            "Tsplits: {int32, int64} = int64"]


UnicodeDecode = define_op(
    "UnicodeDecode", inputs=["input: string"],
    outputs=["row_splits: Tsplits", "char_values: int32"], attrs=_decode_attrs(),
    differentiable=False)
UnicodeDecodeWithOffsets = define_op(
    "UnicodeDecodeWithOffsets", inputs=["input: string"],
    outputs=["row_splits: Tsplits", "char_values: int32", "char_to_byte_starts: int64"],
    attrs=_decode_attrs(), differentiable=False)


def _splits_shape(input):
    count = input.num_elements()
    return TensorShape([None if count is None else count + 1])


@UnicodeDecode.shape_fn
def _unicode_decode_shape(input, *, Tsplits):  # noqa: N803 - TF attr name
    return [_splits_shape(input), TensorShape([None])]


@UnicodeDecodeWithOffsets.shape_fn
def _unicode_decode_with_offsets_shape(input, *, Tsplits):  # noqa: N803
    return [_splits_shape(input), TensorShape([None]), TensorShape([None])]


def _decode_factory(with_offsets: bool):
    def factory(input_encoding, errors, replacement_char, replace_control_characters,
                Tsplits):  # noqa: N803
        codec = unicode_ops._input_codec(input_encoding)
        substitute = None if errors == "ignore" else ord(
            unicode_ops._replacement(replacement_char))
        split_type = dtypes.as_dtype(Tsplits).as_numpy_dtype

        def kernel(input):
            points, offsets, lengths = [], [], []
            for value in np.asarray(input, dtype=object).reshape(-1):
                p, o = _decode_one(bytes(value), codec, errors, substitute,
                                   replace_control_characters)
                points.extend(p)
                offsets.extend(o)
                lengths.append(len(p))
            splits = np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)]).astype(
                split_type)
            values = np.asarray(points, np.int32)
            if with_offsets:
                return splits, values, np.asarray(offsets, np.int64)
            return splits, values

        return kernel

    return factory


UnicodeDecode.kernel(factory=True)(_decode_factory(False))
UnicodeDecodeWithOffsets.kernel(factory=True)(_decode_factory(True))


# -- wrappers -----------------------------------------------------------------------------------

def _string_input(input):
    input = convert_to_tensor(input, dtype=dtypes.string, name="input")  # noqa: A001
    if input.get_shape().ndims is None:
        raise ValueError("Rank of `input` must be statically known.")
    return input


def _rows(input, splits, flat_parts):
    """Each flat part as the rank N + 1 result of a rank-N input (dense for a scalar)."""
    rank = input.get_shape().ndims
    if rank == 0:
        return flat_parts
    out = []
    shape = array_ops.shape(input, out_type=dtypes.int64)
    for values in flat_parts:
        ragged = RaggedTensor.from_row_splits(values, splits, validate=False)
        rows = math_ops.reduce_prod(shape)
        for axis in range(rank - 1, 0, -1):
            rows = rows // shape[axis]
            uniform = math_ops.range(rows + 1, dtype=dtypes.int64) * shape[axis]
            ragged = RaggedTensor.from_row_splits(ragged, uniform, validate=False)
        out.append(ragged)
    return out


def _decode(input, input_encoding, errors, replacement_char, replace_control_characters,
            with_offsets):
    flat = array_ops.reshape(input, [-1])
    op = UnicodeDecodeWithOffsets if with_offsets else UnicodeDecode
    result = op(flat, input_encoding=input_encoding, errors=errors,
                replacement_char=replacement_char,
                replace_control_characters=replace_control_characters)
    return result[0], list(result[1:])


def unicode_decode(input, input_encoding, errors="replace", replacement_char=65533,  # noqa: A002
                   replace_control_characters=False, name=None):
    """The Unicode code points of each string.

    Args:
        input: a string tensor of statically known rank N.
        input_encoding: e.g. "UTF-8", "UTF-16-BE", "UTF-32-BE", "ISO-8859-1".
        errors: "replace", "ignore" or "strict" (see the module docstring).
        replacement_char: the code point "replace" uses.
        replace_control_characters: also replace U+0000..U+001F.
        name: optional name.

    Returns:
        int32 code points: a vector for a scalar input, else a RaggedTensor of rank N + 1.

    Raises:
        ValueError: the rank of `input` is unknown.
    """
    with _scope(name, "UnicodeDecode"):
        input = _string_input(input)  # noqa: A001
        splits, parts = _decode(input, input_encoding, errors, replacement_char,
                                replace_control_characters, False)
        return _rows(input, splits, parts)[0]


def unicode_decode_with_offsets(input, input_encoding, errors="replace",  # noqa: A002
                                replacement_char=65533, replace_control_characters=False,
                                name=None):
    """`(code points, start byte offsets)` of each string's characters (see unicode_decode)."""
    with _scope(name, "UnicodeDecodeWithOffsets"):
        input = _string_input(input)  # noqa: A001
        splits, parts = _decode(input, input_encoding, errors, replacement_char,
                                replace_control_characters, True)
        return tuple(_rows(input, splits, parts))


def _encode_each(points, encoding, errors, replacement_char):
    """Each code point as a one-character string in `encoding`."""
    target = {"UTF8": "UTF-8", "UTF16BE": "UTF-16-BE", "UTF32BE": "UTF-32-BE"}.get(
        encoding.upper().replace("-", "").replace("_", ""))
    if target is None:
        raise ValueError(f"unicode_split: cannot encode characters back to {encoding!r}; "
                         "supported: UTF-8, UTF-16-BE, UTF-32-BE")
    count = array_ops.shape(points, out_type=dtypes.int64)[0]
    one_each = math_ops.range(count + 1, dtype=dtypes.int64)
    return unicode_ops.UnicodeEncode(points, one_each, errors=errors, output_encoding=target,
                                     replacement_char=replacement_char)


def unicode_split(input, input_encoding, errors="replace", replacement_char=65533,  # noqa: A002
                  name=None):
    """Each string's characters, each as a string in `input_encoding` (UTF-8/16-BE/32-BE).

    Returns:
        A string vector for a scalar input, else a RaggedTensor of rank N + 1.
    """
    with _scope(name, "UnicodeSplit"):
        input = _string_input(input)  # noqa: A001
        splits, (points,) = _decode(input, input_encoding, errors, replacement_char, False,
                                    False)
        chars = _encode_each(points, input_encoding, errors, replacement_char)
        return _rows(input, splits, [chars])[0]


def unicode_split_with_offsets(input, input_encoding, errors="replace",  # noqa: A002
                               replacement_char=65533, name=None):
    """`(characters, start byte offsets)` of each string (see unicode_split)."""
    with _scope(name, "UnicodeSplitWithOffsets"):
        input = _string_input(input)  # noqa: A001
        splits, (points, offsets) = _decode(input, input_encoding, errors, replacement_char,
                                            False, True)
        chars = _encode_each(points, input_encoding, errors, replacement_char)
        return tuple(_rows(input, splits, [chars, offsets]))


_BYTES = np.empty(256, dtype=object)
_BYTES[:] = [bytes([b]) for b in range(256)]


def bytes_split(input, name=None):  # noqa: A002
    """Each string's bytes, as one-byte strings.

    Returns:
        A string vector for a scalar input, else a RaggedTensor of rank N + 1.

    Raises:
        ValueError: the rank of `input` is unknown.
    """
    with _scope(name, "BytesSplit"):
        input = _string_input(input)  # noqa: A001
        splits, (points,) = _decode(input, "ISO-8859-1", "strict", 65533, False, False)
        table = convert_to_tensor(_BYTES, dtype=dtypes.string, name="bytes")
        return _rows(input, splits, [gather_scatter.gather(table, points)])[0]
