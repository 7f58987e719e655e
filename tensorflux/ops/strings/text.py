"""String text ops: length, substrings, strip and case, regular expressions, splitting.

Strings are NumPy object arrays of `bytes`; each kernel maps over the flat array (there is no
vectorised bytes work in NumPy) and keeps the numeric bookkeeping (offsets, sparse indices)
vectorised. Regular expressions use Python's `re` on bytes: RE2 syntax that `re` shares (most
of it) behaves the same; RE2 rewrites (`\\1`, `\\0` for the whole match) are translated, and a
pattern with RE2's Unicode category classes (`\\p{Lu}`) runs on the UTF-8 text instead.
"""

from __future__ import annotations

import itertools
import re

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework.common_shapes import broadcast_shape
from tensorflux.framework.op_def import define_op, get_op_def
from tensorflux.framework.scopes import op_name_scope as _scope
from tensorflux.framework.sparse_tensor import SparseTensor
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.lib.numerics import unicode_regex
from tensorflux.ops.ragged.ragged_tensor import RaggedTensor, from_dense_rows
from tensorflux.ops.strings.conversion import map_bytes, object_array

__all__ = ["substr", "string_strip", "regex_replace", "string_split"]


def _invalid(message: str):
    return errors.InvalidArgumentError(None, None, message)


def _shape_text(shape) -> str:
    return "[" + ",".join(str(d) for d in shape) + "]"



# -- StringLength, Substr --------------------------------------------------------------------

_UNITS = "{'BYTE', 'UTF8_CHAR'}"

StringLength = define_op("StringLength", inputs=["input: string"], outputs=["output: int32"],
                         attrs=[f"unit: {_UNITS} = 'BYTE'"], differentiable=False)


@StringLength.shape_fn
def _string_length_shape(input):
    return input


def _utf8_lengths(flat) -> np.ndarray:
    """Characters per string: bytes that do not continue a UTF-8 sequence (as TF counts)."""
    blob = np.frombuffer(b"".join(flat), dtype=np.uint8)
    starts = ((blob & 0xC0) != 0x80).astype(np.int64)
    lengths = np.fromiter(map(len, flat), dtype=np.int64, count=len(flat))
    ends = np.cumsum(lengths)
    totals = np.concatenate([[0], np.cumsum(starts)])
    return totals[ends] - totals[ends - lengths]


@StringLength.kernel
def _string_length_kernel(input, *, unit):
    flat = input.reshape(-1)
    if unit == "BYTE":
        lengths = np.fromiter(map(len, flat), dtype=np.int32, count=flat.size)
    else:
        lengths = _utf8_lengths(flat).astype(np.int32)
    return lengths.reshape(input.shape)


def string_length(input, name=None, unit="BYTE"):
    """Length of each string in bytes, or in UTF-8 characters with `unit="UTF8_CHAR"`."""
    return StringLength(convert_to_tensor(input, dtype=dtypes.string), unit=unit, name=name)


Substr = define_op("Substr", inputs=["input: string", "pos: T", "len: T"],
                   outputs=["output: string"],
                   attrs=["T: {int32, int64}", f"unit: {_UNITS} = 'BYTE'"],
                   differentiable=False)


@Substr.shape_fn
def _substr_shape(input, pos, len):
    if not pos.is_compatible_with(len):
        raise ValueError(f"pos and len shapes must match: {pos} vs. {len}")
    return broadcast_shape(input, pos.merge_with(len))


def _utf8_starts(text: bytes) -> list:
    """Byte offsets where characters start, plus the end."""
    blob = np.frombuffer(text, dtype=np.uint8)
    return np.flatnonzero((blob & 0xC0) != 0x80).tolist() + [len(text)]


def _substr_one(text: bytes, pos: int, length: int, index: int, utf8: bool) -> bytes:
    offsets = _utf8_starts(text) if utf8 else None
    size = len(offsets) - 1 if utf8 else len(text)
    if pos < -size or pos > size:
        raise _invalid(f"pos {pos} out of range for string {text!r} at index {index}")
    if pos < 0:
        pos += size
    stop = size if length < 0 else min(size, pos + length)
    if utf8:
        return text[offsets[pos]:offsets[stop]]
    return text[pos:stop]


@Substr.kernel
def _substr_kernel(input, pos, len, *, unit):
    if pos.shape != len.shape:
        raise _invalid(f"pos and len should have the same shape, got: {_shape_text(pos.shape)} "
                       f"vs. {_shape_text(len.shape)}")
    text, start, size = np.broadcast_arrays(np.asarray(input, dtype=object), pos, len)
    utf8 = unit == "UTF8_CHAR"
    flat = [_substr_one(t, p, n, i, utf8) for i, (t, p, n) in
            enumerate(zip(text.reshape(-1), start.reshape(-1).tolist(),
                          size.reshape(-1).tolist()))]
    return object_array(flat, text.shape)


def substr(input, pos, len, name=None, unit="BYTE"):  # noqa: A002 - TF argument name
    """Substrings `input[pos:pos + len]`, with broadcasting (TF1 `tf.substr`).

    Args:
        input: a string tensor.
        pos: start positions (negative counts from the end).
        len: lengths (negative: to the end); same shape as `pos`.
        name: optional name.
        unit: "BYTE" or "UTF8_CHAR".

    Returns:
        A string tensor of the broadcast shape.

    Raises (at run time):
        InvalidArgumentError: a position lies outside its string.
    """
    input = convert_to_tensor(input, dtype=dtypes.string)
    pos = convert_to_tensor(pos)
    return Substr(input, pos, convert_to_tensor(len, dtype=pos.dtype.base_dtype), unit=unit,
                  name=name)


# -- StringStrip, StringLower, StringUpper ---------------------------------------------------

def _unary_string_op(op_name, attrs=()):
    op = define_op(op_name, inputs=["input: string"], outputs=["output: string"],
                   attrs=list(attrs), differentiable=False)
    op.shape_fn(lambda input: input)
    return op


StringStrip = _unary_string_op("StringStrip")
StringStrip.kernel(lambda input: map_bytes(bytes.strip, input))
StringLower = _unary_string_op("StringLower", ["encoding: string = ''"])
StringUpper = _unary_string_op("StringUpper", ["encoding: string = ''"])


def _case_kernel(method: str):
    def kernel(input, *, encoding):
        if encoding:
            return map_bytes(lambda s: getattr(s.decode(encoding), method)().encode(encoding),
                             input)
        return map_bytes(getattr(bytes, method), input)

    return kernel


StringLower.kernel(_case_kernel("lower"))
StringUpper.kernel(_case_kernel("upper"))


def string_strip(input, name=None):
    """Removes leading and trailing whitespace from each string."""
    return StringStrip(convert_to_tensor(input, dtype=dtypes.string), name=name)


def lower(input, encoding="", name=None):
    """Lower-cases each string (ASCII only unless `encoding="utf-8"`)."""
    return StringLower(convert_to_tensor(input, dtype=dtypes.string), encoding=encoding,
                       name=name)


def upper(input, encoding="", name=None):
    """Upper-cases each string (ASCII only unless `encoding="utf-8"`)."""
    return StringUpper(convert_to_tensor(input, dtype=dtypes.string), encoding=encoding,
                       name=name)


# -- regular expressions -----------------------------------------------------------------------

_BACKSLASH = 0x5C


def _rewrite_parts(rewrite: bytes) -> list:
    """An RE2 rewrite as literal bytes and group numbers (`\\N`; `\\\\` is a backslash)."""
    parts: list = []
    literal = bytearray()
    i = 0
    while i < len(rewrite):
        byte = rewrite[i]
        if byte == _BACKSLASH and i + 1 < len(rewrite):
            following = rewrite[i + 1]
            if 0x30 <= following <= 0x39:
                if literal:
                    parts.append(bytes(literal))
                    literal = bytearray()
                parts.append(following - 0x30)
                i += 2
                continue
            if following == _BACKSLASH:
                literal.append(_BACKSLASH)
                i += 2
                continue
        literal.append(byte)
        i += 1
    if literal:
        parts.append(bytes(literal))
    return parts


def _compile(pattern: bytes):
    """A compiled RE2 pattern: Python's `re` on bytes, or on text when the pattern uses RE2's
    Unicode category classes (`\\p{Ll}`), which `re` lacks and which match whole characters."""
    try:
        return unicode_regex.compile_re2(pattern)
    except (re.error, ValueError) as err:
        raise _invalid(f"Invalid pattern: {pattern.decode('utf-8', 'replace')}, error: {err}") \
            from None


def _replacer(pattern: bytes, rewrite: bytes, replace_global: bool):
    """A function of one bytes string applying the replacement."""
    regex = _compile(pattern)
    parts = _rewrite_parts(rewrite)
    if any(isinstance(p, int) and p > regex.groups for p in parts):
        return lambda text: text  # RE2 refuses a rewrite naming a missing group: no change

    def expand(match):
        return b"".join(p if isinstance(p, bytes) else (match.group(p) or b"") for p in parts)

    count = 0 if replace_global else 1
    return lambda text: regex.sub(expand, text, count=count)


RegexReplace = define_op("RegexReplace", inputs=["input: string", "pattern: string",
                                                 "rewrite: string"],
                         outputs=["output: string"], attrs=["replace_global: bool = True"],
                         differentiable=False)


@RegexReplace.shape_fn
def _regex_replace_shape(input, pattern, rewrite):
    pattern.with_rank(0)
    rewrite.with_rank(0)
    return input


@RegexReplace.kernel(factory=True)
def _regex_replace_kernel(replace_global):
    cache: dict = {}

    def regex_replace(input, pattern, rewrite):
        key = (pattern.reshape(-1)[0], rewrite.reshape(-1)[0])
        fn = cache.get(key)
        if fn is None:
            fn = _replacer(key[0], key[1], replace_global)
            if len(cache) > 64:
                cache.clear()
            cache[key] = fn
        return map_bytes(fn, input)

    return regex_replace


StaticRegexReplace = define_op("StaticRegexReplace", inputs=["input: string"],
                               outputs=["output: string"],
                               attrs=["pattern: string", "rewrite: string",
                                      "replace_global: bool = True"], differentiable=False)


@StaticRegexReplace.shape_fn
def _static_regex_replace_shape(input):
    return input


@StaticRegexReplace.kernel(factory=True)
def _static_regex_replace_kernel(pattern, rewrite, replace_global):
    try:
        fn = _replacer(pattern.encode(), rewrite.encode(), replace_global)
    except errors.InvalidArgumentError as err:
        error = err

        def failing(input):
            raise error

        return failing

    def static_regex_replace(input):
        return map_bytes(fn, input)

    return static_regex_replace


def regex_replace(input, pattern, rewrite, replace_global=True, name=None):
    """Replaces matches of `pattern` with `rewrite` (TF1 `tf.regex_replace`).

    Args:
        input: a string tensor.
        pattern: a regular expression (Python `re` syntax, close to RE2's).
        rewrite: the replacement; `\\1`..`\\9` insert groups, `\\0` the whole match.
        replace_global: replace every match (True) or only the first.
        name: optional name.

    Returns:
        A string tensor of the same shape.

    Example:
        >>> tf.regex_replace(["a1b22"], r"\\d+", "#")   # [b"a#b#"]
    """
    input = convert_to_tensor(input, dtype=dtypes.string)
    if isinstance(pattern, (str, bytes)) and isinstance(rewrite, (str, bytes)):
        return StaticRegexReplace(input, pattern=pattern, rewrite=rewrite,
                                  replace_global=replace_global, name=name)
    return RegexReplace(input, convert_to_tensor(pattern, dtype=dtypes.string),
                        convert_to_tensor(rewrite, dtype=dtypes.string),
                        replace_global=replace_global, name=name)


RegexFullMatch = define_op("RegexFullMatch", inputs=["input: string", "pattern: string"],
                           outputs=["output: bool"], differentiable=False)


@RegexFullMatch.shape_fn
def _regex_full_match_shape(input, pattern):
    pattern.with_rank(0)
    return input


@RegexFullMatch.kernel
def _regex_full_match_kernel(input, pattern):
    regex = _compile(pattern.reshape(-1)[0])
    return map_bytes(lambda s: regex.fullmatch(s) is not None, input, dtype=np.bool_)


StaticRegexFullMatch = define_op("StaticRegexFullMatch", inputs=["input: string"],
                                 outputs=["output: bool"], attrs=["pattern: string"],
                                 differentiable=False)


@StaticRegexFullMatch.shape_fn
def _static_regex_full_match_shape(input):
    return input


@StaticRegexFullMatch.kernel(factory=True)
def _static_regex_full_match_kernel(pattern):
    try:
        regex = _compile(pattern.encode())
    except errors.InvalidArgumentError as err:
        error = err

        def failing(input):
            raise error

        return failing

    def static_regex_full_match(input):
        return map_bytes(lambda s: regex.fullmatch(s) is not None, input, dtype=np.bool_)

    return static_regex_full_match


def regex_full_match(input, pattern, name=None):
    """True where the whole string matches `pattern` (`tf.strings.regex_full_match`)."""
    input = convert_to_tensor(input, dtype=dtypes.string)
    if isinstance(pattern, (str, bytes)):
        return StaticRegexFullMatch(input, pattern=pattern, name=name)
    return RegexFullMatch(input, convert_to_tensor(pattern, dtype=dtypes.string), name=name)


# -- StringSplit, StringSplitV2 --------------------------------------------------------------

def _split_shapes(input, sep):
    input.with_rank(1)
    sep.with_rank(0)
    return [TensorShape([None, 2]), TensorShape([None]), TensorShape([2])]


def _sparse_rows(rows: list):
    """(indices, values, dense_shape) of a ragged list of token lists, one row per input."""
    n = len(rows)
    counts = np.fromiter(map(len, rows), dtype=np.int64, count=n)
    total = int(counts.sum())
    starts = np.cumsum(counts) - counts
    cols = np.arange(total, dtype=np.int64) - np.repeat(starts, counts)
    indices = np.stack([np.repeat(np.arange(n, dtype=np.int64), counts), cols], axis=1)
    values = object_array(list(itertools.chain.from_iterable(rows)), (total,))
    shape = np.array([n, int(counts.max()) if n else 0], dtype=np.int64)
    return indices, values, shape


def _check_split_inputs(input, sep, sep_name):
    if input.ndim != 1:
        raise _invalid(f"input must be a vector, got shape: {_shape_text(input.shape)}")
    if sep.ndim != 0:
        raise _invalid(f"{sep_name} must be a scalar, got shape: {_shape_text(sep.shape)}")
    return sep[()]


StringSplit = define_op("StringSplit", inputs=["input: string", "delimiter: string"],
                        outputs=["indices: int64", "values: string", "shape: int64"],
                        attrs=["skip_empty: bool = True"], differentiable=False)
StringSplit.shape_fn(_split_shapes)


@StringSplit.kernel
def _string_split_kernel(input, delimiter, *, skip_empty):
    delimiter = _check_split_inputs(input, delimiter, "delimiter")
    if delimiter:
        chars = b"".join(re.escape(bytes([c])) for c in sorted(set(delimiter)))
        splitter = re.compile(b"[" + chars + b"]").split
    else:
        def splitter(text):
            return [text[i:i + 1] for i in range(len(text))]
    rows = [splitter(s) if s else [] for s in input]
    if skip_empty:
        rows = [[t for t in row if t] for row in rows]
    return _sparse_rows(rows)


StringSplitV2 = define_op("StringSplitV2", inputs=["input: string", "sep: string"],
                          outputs=["indices: int64", "values: string", "shape: int64"],
                          attrs=["maxsplit: int = -1"], differentiable=False)
StringSplitV2.shape_fn(_split_shapes)


@StringSplitV2.kernel
def _string_split_v2_kernel(input, sep, *, maxsplit):
    sep = _check_split_inputs(input, sep, "sep") or None
    return _sparse_rows([s.split(sep, maxsplit) for s in input])


def _as_sparse(parts):
    indices, values, shape = parts
    indices.set_shape([None, 2])
    values.set_shape([None])
    shape.set_shape([2])
    return SparseTensor(indices, values, shape)


def _check_result_type(result_type):
    if result_type not in ("SparseTensor", "RaggedTensor"):
        raise ValueError(f"result_type must be 'RaggedTensor' or 'SparseTensor', "
                         f"got {result_type!r}")


def _rows_as_ragged(sparse: SparseTensor) -> RaggedTensor:
    """Row i of a split's sparse result as row i of a RaggedTensor (no padding)."""
    return RaggedTensor.from_value_rowids(sparse.values, sparse.indices[:, 0],
                                          nrows=sparse.dense_shape[0], validate=False)


def string_split(source, sep=None, skip_empty=True, delimiter=None, result_type="SparseTensor",
                 name=None):
    """Splits each string of a vector at any of the delimiter characters (`tf.string_split`).

    Args:
        source: a 1-D string tensor.
        sep: the delimiter characters (default " "); "" splits into single bytes.
        skip_empty: drop empty tokens.
        delimiter: deprecated alias of `sep`.
        result_type: "SparseTensor" or "RaggedTensor".
        name: optional name.

    Returns:
        A SparseTensor (or RaggedTensor) of tokens: row i holds the tokens of `source[i]`.

    Example:
        >>> tf.string_split(["a b", "c"])   # values [b"a", b"b", b"c"], dense_shape [2, 2]
    """
    _check_result_type(result_type)
    if sep is None:
        sep = delimiter
    with _scope(name, "StringSplit"):
        sep = convert_to_tensor(" " if sep is None else sep, dtype=dtypes.string)
        source = convert_to_tensor(source, dtype=dtypes.string)
        sparse = _as_sparse(StringSplit(source, sep, skip_empty=skip_empty))
        return _rows_as_ragged(sparse) if result_type == "RaggedTensor" else sparse


def _split_v2(input, sep, maxsplit):
    """StringSplitV2 over any rank: a dense input of rank N gives a RaggedTensor of rank
    N + 1 (a scalar gives a vector of tokens); a RaggedTensor input keeps its row splits."""
    if isinstance(input, RaggedTensor):
        return input.with_flat_values(_split_v2(input.flat_values, sep, maxsplit))
    rank = input.shape.ndims
    if rank is None:
        raise ValueError("string split needs an input of known rank.")
    if rank == 1:
        return _rows_as_ragged(_as_sparse(StringSplitV2(input, sep, maxsplit=maxsplit)))
    flat = get_op_def("Reshape")(input, np.array([-1], np.int32))
    rows = _rows_as_ragged(_as_sparse(StringSplitV2(flat, sep, maxsplit=maxsplit)))
    if rank == 0:
        return rows.values
    dims = get_op_def("Shape")(input, out_type=dtypes.int64)
    return from_dense_rows(rows, dims, rank)


def _split_input(input, source):
    if input is None:
        input = source
    if isinstance(input, RaggedTensor):
        return input
    return convert_to_tensor(input, dtype=dtypes.string, name="input")


def split(input=None, sep=None, maxsplit=-1, result_type="SparseTensor", source=None,
          name=None):
    """Splits each string at `sep` (whitespace runs when None) (`tf.strings.split`, TF1).

    Args:
        input: a string tensor of any rank, or a RaggedTensor of strings; a scalar is
            treated as a vector of one string.
        sep: the separator string; None or "" splits on whitespace and drops empty tokens.
        maxsplit: at most this many splits per string (-1: no limit).
        result_type: "SparseTensor" or "RaggedTensor".
        source: deprecated alias of `input`.
        name: optional name.

    Returns:
        The tokens with one more dimension than `input`: a SparseTensor (bounding shape) or
        a RaggedTensor.
    """
    _check_result_type(result_type)
    with _scope(name, "StringSplit"):
        input = _split_input(input, source)
        if input.shape.ndims == 0:
            input = get_op_def("Reshape")(input, np.array([1], np.int32))
        sep = convert_to_tensor("" if sep is None else sep, dtype=dtypes.string)
        if result_type == "SparseTensor" and not isinstance(input, RaggedTensor) and \
                input.shape.ndims == 1:
            return _as_sparse(StringSplitV2(input, sep, maxsplit=maxsplit))
        ragged = _split_v2(input, sep, maxsplit)
        return ragged.to_sparse() if result_type == "SparseTensor" else ragged


def split_v2(input=None, sep=None, maxsplit=-1, name=None):
    """`tf.strings.split` of TF 2 (`tf.compat.v2.strings.split`): a RaggedTensor of rank
    N + 1 for an input of rank N (a scalar gives a vector of tokens).

    Args:
        input: a string tensor of any rank, or a RaggedTensor of strings.
        sep: the separator string; None or "" splits on whitespace and drops empty tokens.
        maxsplit: at most this many splits per string (-1: no limit).
        name: optional name.
    """
    with _scope(name, "StringSplit"):
        input = _split_input(input, None)
        sep = convert_to_tensor("" if sep is None else sep, dtype=dtypes.string)
        return _split_v2(input, sep, maxsplit)
