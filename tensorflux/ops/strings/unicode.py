"""String ops with dense results: UnicodeTranscode, UnicodeEncode, UnicodeScript,
UnsortedSegmentJoin and StringNGrams (tf.strings.ngrams of dense sequences).

Strings are NumPy object arrays of `bytes`; per-string work goes through Python's codecs (there
is no vectorised text codec in NumPy), code-point checks and bookkeeping are vectorised.
Decoding errors are found by Python's decoders, which (like ICU) replace each maximal invalid
subsequence with one replacement character. The ragged ops (unicode_decode, unicode_split,
bytes_split) are in `unicode_decode.py`; ngrams takes dense input only.
"""

from __future__ import annotations

import codecs

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework.op_def import define_op
from tensorflux.framework.scopes import op_name_scope as _scope
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.lib.numerics.unicode_scripts import script_codes
from tensorflux.ops import array as array_ops
from tensorflux.ops import math as math_ops
from tensorflux.ops.array import concat_split as concat_ops
from tensorflux.ops.array import shapes as shape_ops
from tensorflux.ops.math import reduction as reduction_ops
from tensorflux.ops.math import sequence as sequence_ops
from tensorflux.ops.strings.conversion import map_bytes, object_array

__all__ = ["unicode_transcode", "unicode_encode", "unicode_script", "unsorted_segment_join",
           "ngrams"]

_OUTPUT_ENCODINGS = {"UTF-8": "utf-8", "UTF-16-BE": "utf-16-be", "UTF-32-BE": "utf-32-be"}
# ICU converter names (compared without case, '-', '_' or spaces) and their Python codecs.
# NOTE: ICU's plain "UTF-16"/"UTF-32" read big-endian and keep a byte order mark as U+FEFF
# (UnicodeDecode); UnicodeTranscode takes a leading mark as the byte order and drops it.
_INPUT_ENCODINGS = {"UTF8": "utf-8", "UTF16": "utf-16-be", "UTF16BE": "utf-16-be",
                    "UTF16LE": "utf-16-le", "UTF32": "utf-32-be", "UTF32BE": "utf-32-be",
                    "UTF32LE": "utf-32-le", "ISO88591": "latin-1", "LATIN1": "latin-1",
                    "L1": "latin-1", "USASCII": "ascii", "ASCII": "ascii"}
_ERRORS = "{'strict', 'replace', 'ignore'}"
_MARK = "\ud800"  # never produced by a successful decode: stands for one invalid subsequence


def _mark_invalid(error):
    return _MARK, error.end


codecs.register_error("tensorflux.mark_invalid", _mark_invalid)



def _input_codec(name: str) -> str:
    key = name.upper().replace("-", "").replace("_", "").replace(" ", "")
    if key not in _INPUT_ENCODINGS:
        raise errors.InvalidArgumentError(
            None, None, f"Could not create converter for input encoding: {name} (supported: "
                        f"UTF-8, UTF-16(-BE/-LE), UTF-32(-BE/-LE), ISO-8859-1, US-ASCII)")
    return _INPUT_ENCODINGS[key]


# A leading byte order mark of plain UTF-16/UTF-32 input: (mark, codec it selects).
_BYTE_ORDER_MARKS = {"utf-16-be": ((b"\xfe\xff", "utf-16-be"), (b"\xff\xfe", "utf-16-le")),
                     "utf-32-be": ((b"\x00\x00\xfe\xff", "utf-32-be"),
                                   (b"\xff\xfe\x00\x00", "utf-32-le"))}


def _plain_byte_order(name: str):
    """The byte order marks to look for when `name` is plain UTF-16 or UTF-32, else ()."""
    key = name.upper().replace("-", "").replace("_", "").replace(" ", "")
    return _BYTE_ORDER_MARKS[_INPUT_ENCODINGS[key]] if key in ("UTF16", "UTF32") else ()


def _replacement(char: int) -> str:
    return chr(char) if 0 <= char <= 0x10FFFF else "\ufffd"


# -- UnicodeTranscode ---------------------------------------------------------------------------

UnicodeTranscode = define_op(
    "UnicodeTranscode", inputs=["input: string"], outputs=["output: string"],
    attrs=["input_encoding: string", "output_encoding: {'UTF-8', 'UTF-16-BE', 'UTF-32-BE'}",
           f"errors: {_ERRORS} = 'replace'", "replacement_char: int = 65533",
           "replace_control_characters: bool = False"],
    differentiable=False)


@UnicodeTranscode.shape_fn
def _unicode_transcode_shape(input):
    return input


@UnicodeTranscode.kernel(factory=True)
def _unicode_transcode_kernel(input_encoding, output_encoding, errors, replacement_char,
                              replace_control_characters):
    source = _input_codec(input_encoding)
    target = _OUTPUT_ENCODINGS[output_encoding]
    substitute = "" if errors == "ignore" else _replacement(replacement_char)
    # NOTE: with errors="ignore" control characters are dropped too (as in TensorFlow).
    control = {code: substitute or None for code in range(0x20)} if \
        replace_control_characters else None
    mode = errors

    marks = _plain_byte_order(input_encoding)

    def transcode_one(value: bytes) -> bytes:
        codec = source
        for mark, ordered in marks:
            if value.startswith(mark):
                codec, value = ordered, value[len(mark):]
                break
        text = value.decode(codec, "tensorflux.mark_invalid")
        if _MARK in text:
            if mode == "strict":
                raise _strict_error(value)
            text = text.replace(_MARK, substitute)
        if control is not None:
            text = text.translate(control)
        return text.encode(target, "surrogatepass")

    def unicode_transcode(input):
        return map_bytes(transcode_one, input)

    return unicode_transcode


def _strict_error(value: bytes):
    return errors.InvalidArgumentError(
        None, None, f"Invalid formatting on input string: {value[:40]!r}")


def unicode_transcode(input, input_encoding, output_encoding, errors="replace",  # noqa: A002
                      replacement_char=65533, replace_control_characters=False, name=None):
    """Re-encodes each string from `input_encoding` to `output_encoding`.

    Args:
        input: string tensor of any shape.
        input_encoding: e.g. "UTF-8", "UTF-16-BE", "UTF-32-BE", "ISO-8859-1", "US-ASCII".
        output_encoding: "UTF-8", "UTF-16-BE" or "UTF-32-BE".
        errors: "replace" (each invalid subsequence becomes `replacement_char`), "ignore" (it
            is dropped) or "strict" (it is an InvalidArgumentError).
        replacement_char: the code point used by "replace".
        replace_control_characters: also replace the C0 controls U+0000..U+001F.
        name: optional name.

    Returns:
        A string tensor of the same shape.

    Example:
        >>> tf.strings.unicode_transcode(["Hello"], "UTF-8", "UTF-16-BE")
        # [b'\\x00H\\x00e\\x00l\\x00l\\x00o']
    """
    with _scope(name, "UnicodeTranscode"):
        input = convert_to_tensor(input, dtype=dtypes.string, name="input")  # noqa: A001
        return UnicodeTranscode(input, input_encoding=input_encoding,
                                output_encoding=output_encoding, errors=errors,
                                replacement_char=replacement_char,
                                replace_control_characters=replace_control_characters)


# -- UnicodeEncode ------------------------------------------------------------------------------

UnicodeEncode = define_op(
    "UnicodeEncode", inputs=["input_values: int32", "input_splits: Tsplits"],
    outputs=["output: string"],
    attrs=[f"errors: {_ERRORS} = 'replace'",
           "output_encoding: {'UTF-8', 'UTF-16-BE', 'UTF-32-BE'}",
           "replacement_char: int = 65533", "Tsplits: {int32, int64} = int64"],
    differentiable=False)


@UnicodeEncode.shape_fn
def _unicode_encode_shape(input_values, input_splits):
    input_values.with_rank(1)
    rows = input_splits.with_rank(1)[0].value
    return TensorShape([None if rows is None else max(rows - 1, 0)])


def _invalid_code_points(values):
    return (values < 0) | (values > 0x10FFFF) | ((values >= 0xD800) & (values <= 0xDFFF))


@UnicodeEncode.kernel(factory=True)
def _unicode_encode_kernel(errors, output_encoding, replacement_char, Tsplits):
    target = _OUTPUT_ENCODINGS[output_encoding]

    def unicode_encode(input_values, input_splits):
        splits = input_splits.astype(np.int64)
        if splits.ndim != 1 or splits.size == 0 or splits[0] != 0 or \
                np.any(np.diff(splits) < 0) or splits[-1] != input_values.size:
            raise _splits_error(splits, input_values.size)
        values = input_values.astype(np.int64)
        bad = _invalid_code_points(values)
        if bad.any():
            if errors == "strict":
                raise _code_point_error()
            if errors == "replace":
                values = np.where(bad, replacement_char, values)
            else:
                keep = np.concatenate([[0], np.cumsum(~bad)])
                splits, values = keep[splits], values[~bad]
        text = values.astype(">u4").tobytes().decode("utf-32-be", "surrogatepass")
        pieces = [text[a:b].encode(target, "surrogatepass")
                  for a, b in zip(splits[:-1].tolist(), splits[1:].tolist())]
        return object_array(pieces, (splits.size - 1,))

    return unicode_encode


def _splits_error(splits, size, what="input_splits"):
    return errors.InvalidArgumentError(
        None, None, f"{what} must start at 0, not decrease and end at the number of "
                    f"values ({size}), got {splits.tolist()[:10]}")


def _code_point_error():
    return errors.InvalidArgumentError(
        None, None, "Code point is out of range for Unicode, or is a surrogate.")


def unicode_encode(input, output_encoding, errors="replace",  # noqa: A002
                   replacement_char=65533, name=None):
    """Encodes rows of code points (the last dimension) as strings.

    Args:
        input: int32 tensor `[D1, ..., DN, num_chars]` (dense: every entry is a character).
        output_encoding: "UTF-8", "UTF-16-BE" or "UTF-32-BE".
        errors: what to do with invalid code points (negative, above U+10FFFF or
            surrogates): "replace" with `replacement_char`, "ignore" or "strict".
        replacement_char: the code point used by "replace".
        name: optional name.

    Returns:
        A string tensor `[D1, ..., DN]`.

    Raises:
        ValueError: `input` is a scalar.

    Example:
        >>> tf.strings.unicode_encode([[72, 105], [0x20AC, 33]], "UTF-8")
        # [b'Hi', b'\\xe2\\x82\\xac!']
    """
    with _scope(name, "UnicodeEncode"):
        input = convert_to_tensor(input, dtype=dtypes.int32, name="input")  # noqa: A001
        if input.shape.ndims == 0:
            raise ValueError("unicode_encode: input must have rank at least 1")
        shape = shape_ops.shape(input, out_type=dtypes.int64)
        width = shape[-1]
        rows = math_ops.reduce_prod(shape[:-1])
        splits = sequence_ops.range(rows + 1, dtype=dtypes.int64) * width
        out = UnicodeEncode(array_ops.reshape(input, [-1]), splits, errors=errors,
                            output_encoding=output_encoding,
                            replacement_char=replacement_char)
        result = array_ops.reshape(out, shape[:-1])
        if input.shape.ndims is not None:
            result.set_shape(input.shape[:-1])
        return result


# -- UnicodeScript ------------------------------------------------------------------------------

UnicodeScript = define_op("UnicodeScript", inputs=["input: int32"], outputs=["output: int32"],
                          differentiable=False)


@UnicodeScript.shape_fn
def _unicode_script_shape(input):
    return input


@UnicodeScript.kernel
def _unicode_script_kernel(input):
    return script_codes(input)


def unicode_script(input, name=None):  # noqa: A002
    """The ICU `UScriptCode` of each code point (-1 for invalid code points).

    Args:
        input: int32 tensor of code points.
        name: optional name.

    Returns:
        int32 tensor of the same shape, e.g. 25 for Latin, 8 for Cyrillic, 17 for Han, 0 for
        Common, 1 for Inherited and 103 for Unknown (unassigned and private use).

    Example:
        >>> tf.strings.unicode_script([72, 0x416])   # [25, 8]
    """
    with _scope(name, "UnicodeScript"):
        return UnicodeScript(convert_to_tensor(input, dtype=dtypes.int32, name="input"))


# -- UnsortedSegmentJoin ------------------------------------------------------------------------

UnsortedSegmentJoin = define_op(
    "UnsortedSegmentJoin", inputs=["inputs: string", "segment_ids: Tindices",
                                   "num_segments: Tnumsegments"],
    outputs=["output: string"],
    attrs=["separator: string = ''", "Tindices: {int32, int64}",
           "Tnumsegments: {int32, int64} = int32"],
    differentiable=False)


@UnsortedSegmentJoin.shape_fn(value_inputs=("num_segments",))
def _unsorted_segment_join_shape(inputs, segment_ids, num_segments):
    segments = None if num_segments is None else int(num_segments)
    if inputs.ndims is None or segment_ids.ndims is None:
        return TensorShape(None)
    rank = segment_ids.ndims
    if inputs.ndims < rank or not inputs[:rank].is_compatible_with(segment_ids):
        raise ValueError(f"segment_ids shape {segment_ids} must be a prefix of inputs shape "
                         f"{inputs}")
    return TensorShape([segments]).concatenate(inputs[rank:])


@UnsortedSegmentJoin.kernel(factory=True)
def _unsorted_segment_join_kernel(separator, Tindices, Tnumsegments):
    sep = separator.encode() if isinstance(separator, str) else separator

    def unsorted_segment_join(inputs, segment_ids, num_segments):
        if inputs.shape[:segment_ids.ndim] != segment_ids.shape:
            raise errors.InvalidArgumentError(
                None, None, f"segment_ids shape {list(segment_ids.shape)} must be a prefix of "
                            f"inputs shape {list(inputs.shape)}")
        count = int(num_segments)
        ids = segment_ids.reshape(-1).astype(np.int64)
        if ids.size and (ids.min() < 0 or ids.max() >= count):
            raise errors.InvalidArgumentError(
                None, None, "segment_ids are not allowed to exceed num_segments or to have "
                            "negative values.")
        inner = inputs.shape[segment_ids.ndim:]
        rows = inputs.reshape((ids.size, int(np.prod(inner, dtype=np.int64))))
        order = np.argsort(ids, kind="stable")
        bounds = np.searchsorted(ids[order], np.arange(count + 1))
        out = [sep.join(rows[order[bounds[s]:bounds[s + 1]], r].tolist())
               for s in range(count) for r in range(rows.shape[1])]
        return object_array(out, (count,) + tuple(inner))

    return unsorted_segment_join


def unsorted_segment_join(inputs, segment_ids, num_segments, separator="", name=None):
    """Joins the strings of each segment in order of appearance, with `separator`.

    Args:
        inputs: string tensor.
        segment_ids: int32/int64 tensor whose shape is a prefix of `inputs`' shape, with values
            in `[0, num_segments)`.
        num_segments: scalar int, the number of output segments (empty ones give b"").
        separator: the string placed between joined elements.
        name: optional name.

    Returns:
        A string tensor `[num_segments] + inputs.shape[segment_ids.rank:]`.

    Example:
        >>> tf.strings.unsorted_segment_join(["a", "b", "c"], [1, 0, 1], 2, ":")   # [b'b', b'a:c']
    """
    with _scope(name, "UnsortedSegmentJoin"):
        inputs = convert_to_tensor(inputs, dtype=dtypes.string, name="inputs")
        segment_ids = convert_to_tensor(segment_ids, name="segment_ids")
        num_segments = convert_to_tensor(num_segments, name="num_segments")
        return UnsortedSegmentJoin(inputs, segment_ids, num_segments, separator=separator)


# -- StringNGrams -------------------------------------------------------------------------------

StringNGrams = define_op(
    "StringNGrams", inputs=["data: string", "data_splits: Tsplits"],
    outputs=["ngrams: string", "ngrams_splits: Tsplits"],
    attrs=["separator: string", "ngram_widths: list(int) >= 0", "left_pad: string",
           "right_pad: string", "pad_width: int", "preserve_short_sequences: bool",
           "Tsplits: {int32, int64} = int64"],
    differentiable=False)


@StringNGrams.shape_fn
def _string_ngrams_shape(data, data_splits):
    data.with_rank(1)
    return [TensorShape([None]), data_splits.with_rank(1)]


def _as_bytes(value) -> bytes:
    return value.encode() if isinstance(value, str) else bytes(value)


@StringNGrams.kernel(factory=True)
def _string_ngrams_kernel(separator, ngram_widths, left_pad, right_pad, pad_width,
                          preserve_short_sequences, Tsplits):
    sep, left, right = _as_bytes(separator), _as_bytes(left_pad), _as_bytes(right_pad)
    widths = [int(w) for w in ngram_widths]
    # Padding per side for each width: never more than width - 1 (-1 means exactly that).
    pads = [w - 1 if pad_width < 0 else min(pad_width, w - 1) for w in widths]

    def string_ngrams(data, data_splits):
        splits = data_splits.astype(np.int64)
        if splits.ndim != 1 or splits.size == 0 or splits[0] != 0 or \
                np.any(np.diff(splits) < 0) or splits[-1] != data.size:
            raise _splits_error(splits, data.size, "data_splits")
        items = data.tolist()
        out, counts = [], []
        for a, b in zip(splits[:-1].tolist(), splits[1:].tolist()):
            row = items[a:b]
            before = len(out)
            for width, pad in zip(widths, pads):
                padded = [left] * pad + row + [right] * pad
                out.extend(sep.join(padded[i:i + width])
                           for i in range(len(padded) - width + 1))
            if preserve_short_sequences and len(out) == before and row:
                pad = max(pad_width, 0)
                out.append(sep.join([left] * pad + row + [right] * pad))
            counts.append(len(out) - before)
        ngram_splits = np.concatenate([[0], np.cumsum(counts, dtype=np.int64)])
        return object_array(out, (len(out),)), ngram_splits.astype(data_splits.dtype)

    return string_ngrams


def ngrams(data, ngram_width, separator=" ", pad_values=None, padding_width=None,
           preserve_short_sequences=False, name=None):
    """The n-grams of each sequence (the last dimension) of a dense string tensor.

    Args:
        data: string tensor `[D1, ..., DN, length]` (RaggedTensor input is not supported).
        ngram_width: an int or a list of ints; the n-grams of each width follow each other.
        separator: the string between the joined elements.
        pad_values: None (no padding), a string used on both sides, or a `(left, right)` pair.
        padding_width: padding elements on each side (at most width - 1); None means
            width - 1 when `pad_values` is given.
        preserve_short_sequences: emit the whole (padded) sequence as one n-gram when it is
            too short for any n-gram.
        name: optional name.

    Returns:
        A string tensor `[D1, ..., DN, num_ngrams]`.

    Raises:
        ValueError: a width below 1, `padding_width` without `pad_values` or below 1, or a
            scalar `data`.

    Example:
        >>> tf.strings.ngrams([["a", "b", "c"]], 2)   # [[b'a b', b'b c']]
    """
    widths = [ngram_width] if isinstance(ngram_width, int) else list(ngram_width)
    if any(w < 1 for w in widths):
        raise ValueError(f"All ngram_widths must be greater than 0. Got {ngram_width}")
    if pad_values is None:
        if padding_width is not None:
            raise ValueError("pad_values must be provided if padding_width is set.")
        left_pad = right_pad = ""
        pad_width = 0
    else:
        if isinstance(pad_values, (tuple, list)):
            if len(pad_values) != 2:
                raise ValueError(f"pad_values must be a string or a (left, right) pair, got "
                                 f"{pad_values!r}")
            left_pad, right_pad = pad_values
        else:
            left_pad = right_pad = pad_values
        if padding_width is not None and padding_width < 1:
            raise ValueError(f"padding_width must be greater than 0, got {padding_width}")
        pad_width = -1 if padding_width is None else int(padding_width)
    with _scope(name, "StringNGrams"):
        data = convert_to_tensor(data, dtype=dtypes.string, name="data")
        if data.shape.ndims == 0:
            raise ValueError("ngrams: data must have rank at least 1")
        shape = shape_ops.shape(data, out_type=dtypes.int64)
        rows = math_ops.reduce_prod(shape[:-1])
        splits = sequence_ops.range(rows + 1, dtype=dtypes.int64) * shape[-1]
        out = StringNGrams(array_ops.reshape(data, [-1]), splits, separator=separator,
                           ngram_widths=widths, left_pad=left_pad, right_pad=right_pad,
                           pad_width=pad_width,
                           preserve_short_sequences=preserve_short_sequences)
        first = out.ngrams_splits[1:2] - out.ngrams_splits[0:1]  # empty when no rows
        per_row = reduction_ops.reduce_max(
            concat_ops.concat([first, array_ops.zeros([1], dtypes.int64)], 0), keepdims=True)
        result = array_ops.reshape(out.ngrams, concat_ops.concat([shape[:-1], per_row], 0))
        if data.shape.ndims is not None:
            result.set_shape(data.shape[:-1].concatenate([None]))
        return result
