"""Parsing ops: `tf.parse_example`, `tf.parse_single_example` and `tf.decode_csv`.

Feature configurations (`feature_config`) become the attrs and inputs of TensorFlow's
`ParseExample` / `ParseSingleExample` ops; VarLen and Sparse features come back as
`SparseTensor`s, the others as dense tensors. `DecodeCSV` turns CSV records into
one tensor per column.
"""

from __future__ import annotations

import re

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework import graph as graph_mod
from tensorflux.framework.op_def import define_op
from tensorflux.framework.sparse_tensor import SparseTensor
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape, as_shape
from tensorflux.lib.formats.example_parser import ParseSpec, check_type, parse_examples
from tensorflux.ops import array as array_ops
from tensorflux.ops.io import feature_config
from tensorflux.ops.io.feature_config import (
    FixedLenFeature,
    FixedLenSequenceFeature,
    SparseFeature,
    VarLenFeature,
)

__all__ = ["FixedLenFeature", "VarLenFeature", "FixedLenSequenceFeature", "SparseFeature",
           "parse_example",
           "parse_single_example", "parse_single_sequence_example", "decode_csv"]


_PARSE_OUTPUTS = ["sparse_values: sparse_types", "dense_values: Tdense"]

ParseExample = define_op(
    "ParseExample",
    inputs=["serialized: string", "names: string", "sparse_keys: Nsparse * string",
            "dense_keys: Ndense * string", "dense_defaults: Tdense"],
    outputs=["sparse_indices: Nsparse * int64"] + _PARSE_OUTPUTS[:1]
    + ["sparse_shapes: Nsparse * int64"] + _PARSE_OUTPUTS[1:],
    attrs=["Nsparse: int >= 0", "Ndense: int >= 0", "sparse_types: list(type) >= 0",
           "Tdense: list(type) >= 0", "dense_shapes: list(shape) >= 0"],
    differentiable=False)

ParseSingleExample = define_op(
    "ParseSingleExample",
    inputs=["serialized: string", "dense_defaults: Tdense"],
    outputs=["sparse_indices: num_sparse * int64"] + _PARSE_OUTPUTS[:1]
    + ["sparse_shapes: num_sparse * int64"] + _PARSE_OUTPUTS[1:],
    attrs=["num_sparse: int >= 0", "sparse_keys: list(string) >= 0",
           "dense_keys: list(string) >= 0", "sparse_types: list(type) >= 0",
           "Tdense: list(type) >= 0", "dense_shapes: list(shape) >= 0"],
    differentiable=False)


def _dense_out_shape(prefix, shape) -> TensorShape:
    return TensorShape(prefix).concatenate(shape)


@ParseExample.shape_fn
def _parse_example_shape(serialized, names, sparse_keys, dense_keys, dense_defaults, *,
                         Nsparse, sparse_types, dense_shapes):  # noqa: N803 - TF attr names
    batch = serialized.with_rank(1)._dim_list[0]
    return [[TensorShape([None, 2])] * Nsparse, [TensorShape([None])] * Nsparse,
            [TensorShape([2])] * Nsparse,
            [_dense_out_shape([batch], s) for s in dense_shapes]]


@ParseSingleExample.shape_fn
def _parse_single_example_shape(serialized, dense_defaults, *, num_sparse, dense_shapes):
    serialized.with_rank(0)
    return [[TensorShape([None, 1])] * num_sparse, [TensorShape([None])] * num_sparse,
            [TensorShape([1])] * num_sparse, [as_shape(s) for s in dense_shapes]]


def _flat_outputs(sparse_indices, sparse_values, sparse_shapes, dense_values):
    outputs = sparse_indices + sparse_values + sparse_shapes + dense_values
    return outputs[0] if len(outputs) == 1 else tuple(outputs)


def _shape_dims(shapes) -> tuple:
    return tuple(tuple(as_shape(s).as_list()) for s in shapes)


@ParseExample.kernel(factory=True)
def _parse_example_kernel(Nsparse, Ndense, sparse_types, Tdense, dense_shapes):  # noqa: N803
    types = tuple(dtypes.as_dtype(t) for t in sparse_types)
    dense_types = tuple(dtypes.as_dtype(t) for t in Tdense)
    shapes = _shape_dims(dense_shapes)

    def kernel(serialized, names, *rest):
        sparse_keys = tuple(_key(k) for k in rest[:Nsparse])
        dense_keys = tuple(_key(k) for k in rest[Nsparse:Nsparse + Ndense])
        defaults = rest[Nsparse + Ndense:]
        spec = ParseSpec(sparse_keys, types, dense_keys, dense_types, shapes)
        records = np.asarray(serialized).reshape(-1)
        return _flat_outputs(*parse_examples(records, np.asarray(names).reshape(-1), spec,
                                             defaults))

    return kernel


@ParseSingleExample.kernel(factory=True)
def _parse_single_example_kernel(num_sparse, sparse_keys, dense_keys, sparse_types, Tdense,
                                 dense_shapes):  # noqa: N803
    spec = ParseSpec(tuple(sparse_keys), tuple(dtypes.as_dtype(t) for t in sparse_types),
                     tuple(dense_keys), tuple(dtypes.as_dtype(t) for t in Tdense),
                     _shape_dims(dense_shapes))

    def kernel(serialized, *defaults):
        indices, values, shapes, dense = parse_examples(
            np.asarray(serialized).reshape(1), (), spec, defaults)
        indices = [i[:, 1:] for i in indices]
        shapes = [s[1:] for s in shapes]
        dense = [d.reshape(d.shape[1:]) for d in dense]  # 0-d string stays an ndarray
        return _flat_outputs(indices, values, shapes, dense)

    return kernel


# TF >= 1.15 graphs (and compat.v1 graphs written by TF 2) hold ParseExampleV2: the keys are
# 1-D string tensors and `serialized` may be a scalar (one Example) or a vector. Only its
# graph form is provided, so such graphs import and run; ragged keys are refused at run time.
ParseExampleV2 = define_op(
    "ParseExampleV2",
    inputs=["serialized: string", "names: string", "sparse_keys: string", "dense_keys: string",
            "ragged_keys: string", "dense_defaults: Tdense"],
    outputs=["sparse_indices: num_sparse * int64", "sparse_values: sparse_types",
             "sparse_shapes: num_sparse * int64", "dense_values: Tdense",
             "ragged_values: ragged_value_types", "ragged_row_splits: ragged_split_types"],
    attrs=["Tdense: list(type) >= 0", "num_sparse: int >= 0", "sparse_types: list(type) >= 0",
           "ragged_value_types: list(type) >= 0", "ragged_split_types: list(type) >= 0",
           "dense_shapes: list(shape) >= 0"],
    differentiable=False)


@ParseExampleV2.shape_fn
def _parse_example_v2_shape(serialized, names, sparse_keys, dense_keys, ragged_keys,
                            dense_defaults, *, num_sparse, dense_shapes, ragged_value_types,
                            ragged_split_types):
    if serialized.rank is not None and serialized.rank > 1:
        raise ValueError(f"ParseExampleV2: serialized must be a scalar or a vector, got "
                         f"shape {serialized}")
    prefix = [] if serialized.rank == 0 else [None if serialized.rank is None
                                              else serialized._dim_list[0]]
    rank = None if serialized.rank is None else serialized.rank + 1
    return [[TensorShape([None, rank])] * num_sparse, [TensorShape([None])] * num_sparse,
            [TensorShape([rank])] * num_sparse,
            [_dense_out_shape(prefix, s) for s in dense_shapes],
            [TensorShape([None])] * len(ragged_value_types),
            [TensorShape([None])] * len(ragged_split_types)]


@ParseExampleV2.kernel(factory=True)
def _parse_example_v2_kernel(Tdense, num_sparse, sparse_types, ragged_value_types,
                             ragged_split_types, dense_shapes):  # noqa: N803 - TF attr names
    types = tuple(dtypes.as_dtype(t) for t in sparse_types)
    dense_types = tuple(dtypes.as_dtype(t) for t in Tdense)
    shapes = _shape_dims(dense_shapes)

    def kernel(serialized, names, sparse_keys, dense_keys, ragged_keys, *defaults):
        if ragged_value_types or np.asarray(ragged_keys).size:
            raise errors.UnimplementedError(
                None, None, "ParseExampleV2: ragged features are not supported by tensorflux")
        sparse_keys = tuple(_text(k) for k in np.asarray(sparse_keys).reshape(-1))
        dense_keys = tuple(_text(k) for k in np.asarray(dense_keys).reshape(-1))
        if len(sparse_keys) != num_sparse or len(dense_keys) != len(dense_types):
            raise errors.InvalidArgumentError(
                None, None, f"ParseExampleV2: got {len(sparse_keys)} sparse and "
                            f"{len(dense_keys)} dense keys for num_sparse={num_sparse} and "
                            f"{len(dense_types)} dense types")
        spec = ParseSpec(sparse_keys, types, dense_keys, dense_types, shapes)
        records = np.asarray(serialized)
        indices, values, sparse_shapes, dense = parse_examples(
            records.reshape(-1), np.asarray(names).reshape(-1), spec, defaults)
        if records.ndim == 0:  # one Example: no batch dimension, as ParseSingleExample
            indices = [i[:, 1:] for i in indices]
            sparse_shapes = [sh[1:] for sh in sparse_shapes]
            dense = [d.reshape(d.shape[1:]) for d in dense]
        return _flat_outputs(indices, values, sparse_shapes, dense)

    return kernel


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _key(value) -> str:
    value = np.asarray(value).reshape(-1)[0]
    return value.decode() if isinstance(value, bytes) else str(value)


# -- the Python API --------------------------------------------------------------------------

def _features_to_raw_params(features):
    """Splits a features dict into sparse and dense parameters (keys sorted, as TF does)."""
    if not features:
        raise ValueError("Missing: features was empty.")
    sparse_keys, sparse_types = [], []
    dense_keys, dense_types, dense_shapes, dense_defaults = [], [], [], {}
    for key in sorted(features):
        feature = features[key]
        if isinstance(feature, VarLenFeature):
            dtype = dtypes.as_dtype(feature.dtype)
            check_type(dtype, f"VarLenFeature '{key}'")
            sparse_keys.append(key)
            sparse_types.append(dtype)
        elif isinstance(feature, FixedLenFeature):
            dtype = dtypes.as_dtype(feature.dtype)
            check_type(dtype, f"FixedLenFeature '{key}'")
            if feature.shape is None:
                raise ValueError(f"Missing shape for feature {key}.")
            shape = as_shape(feature.shape)
            if not shape.is_fully_defined():
                raise ValueError(f"All dimensions of shape for feature {key} need to be known "
                                 f"but received {shape}.")
            dense_keys.append(key)
            dense_types.append(dtype)
            dense_shapes.append(shape)
            if feature.default_value is not None:
                dense_defaults[key] = feature.default_value
        elif isinstance(feature, FixedLenSequenceFeature):
            dtype = dtypes.as_dtype(feature.dtype)
            check_type(dtype, f"FixedLenSequenceFeature '{key}'")
            if not feature.allow_missing:
                raise ValueError("Unsupported: FixedLenSequenceFeature requires allow_missing "
                                 "to be True.")
            shape = as_shape(feature.shape)
            if not shape.is_fully_defined():
                raise ValueError(f"All dimensions of shape for feature {key} need to be known "
                                 f"but received {shape}.")
            dense_keys.append(key)
            dense_types.append(dtype)
            dense_shapes.append(TensorShape([None]).concatenate(shape))
            if feature.default_value is not None:
                dense_defaults[key] = feature.default_value
        else:
            raise ValueError(f"Invalid feature {key}:{feature}.")
    return sparse_keys, sparse_types, dense_keys, dense_types, dense_shapes, dense_defaults


def _default_tensor(key, dtype, shape, value):
    """The dense_defaults input for one key: empty (required), a value, or a padding scalar."""

    safe = re.sub(r"[^A-Za-z0-9_.\-/]", "_", key)
    variable = shape.rank and shape._dim_list[0] is None
    if value is None:
        if variable:
            return array_ops.constant(b"" if dtype == dtypes.string else 0, dtype=dtype,
                                      name=f"padding_{safe}")
        return array_ops.constant([], dtype=dtype, name=f"key_{safe}")
    target = [] if variable else shape.as_list()
    if isinstance(value, Tensor):
        return array_ops.reshape(convert_to_tensor(value, dtype=dtype), target)
    array = np.asarray(value if dtype != dtypes.string else np.array(value, dtype=object))
    if array.size != int(np.prod(target, dtype=np.int64)):
        raise ValueError(f"Cannot reshape a tensor with {array.size} elements to shape "
                         f"{target} ({int(np.prod(target, dtype=np.int64))} elements) for the "
                         f"default value of feature '{key}'")
    return array_ops.constant(array.reshape(target), dtype=dtype,
                              name=f"{'padding' if variable else 'key'}_{safe}")


def _assemble(result, sparse_keys, dense_keys) -> dict:
    out = {}
    for i, key in enumerate(sparse_keys):
        out[key] = SparseTensor(result.sparse_indices[i], result.sparse_values[i],
                                result.sparse_shapes[i])
    for i, key in enumerate(dense_keys):
        out[key] = result.dense_values[i]
    return out


def parse_example(serialized, features, name=None, example_names=None):
    """Parses a batch of serialized `tf.train.Example` protos (TF1 `tf.parse_example`).

    Args:
        serialized: string vector of serialized Examples.
        features: dict of key -> FixedLenFeature / VarLenFeature / FixedLenSequenceFeature.
        name: an op name.
        example_names: optional string vector naming the examples in error messages.

    Returns:
        A dict: VarLen keys -> SparseTensor ([batch, max length]); others -> dense Tensors with
        a leading batch dimension.

    Raises:
        ValueError: a malformed features dict (at graph construction).
        InvalidArgumentError: (at run time) a missing required feature, a type or size mismatch,
            an unparsable record.

    Example:
        >>> parsed = tf.parse_example(serialized, {"x": tf.FixedLenFeature([2], tf.float32)})
    """
    requested = features
    features = feature_config.expand_sparse_features(features)
    (sparse_keys, sparse_types, dense_keys, dense_types, dense_shapes,
     given) = _features_to_raw_params(features)
    graph = graph_mod.get_default_graph()
    with graph.name_scope(name or "ParseExample"):
        serialized = convert_to_tensor(serialized, dtype=dtypes.string, name="serialized")
        names = convert_to_tensor([] if example_names is None else example_names,
                                  dtype=dtypes.string, name="names")
        defaults = [_default_tensor(k, t, s, given.get(k))
                    for k, t, s in zip(dense_keys, dense_types, dense_shapes)]
        result = ParseExample(
            serialized, names,
            [convert_to_tensor(k, dtype=dtypes.string, name="key") for k in sparse_keys],
            [convert_to_tensor(k, dtype=dtypes.string, name="key") for k in dense_keys],
            defaults, sparse_types=sparse_types, Tdense=dense_types,
            dense_shapes=dense_shapes, name="ParseExample")
    return feature_config.combine_sparse_features(
        requested, _assemble(result, sparse_keys, dense_keys))


def parse_single_example(serialized, features, name=None, example_names=None):
    """Parses one serialized `tf.train.Example` (TF1 `tf.parse_single_example`).

    Like `parse_example` without the batch dimension: VarLen features are SparseTensors with
    [N, 1] indices; dense features have exactly their configured shape.

    Example:
        >>> parsed = tf.parse_single_example(record, {"id": tf.FixedLenFeature([], tf.int64)})
    """
    requested = features
    features = feature_config.expand_sparse_features(features)
    (sparse_keys, sparse_types, dense_keys, dense_types, dense_shapes,
     given) = _features_to_raw_params(features)
    del example_names  # ParseSingleExample names no examples.
    graph = graph_mod.get_default_graph()
    with graph.name_scope(name or "ParseSingleExample"):
        serialized = convert_to_tensor(serialized, dtype=dtypes.string, name="serialized")
        if serialized.shape.rank not in (None, 0):
            raise ValueError(f"Input serialized must be a scalar, got shape {serialized.shape}")
        defaults = [_default_tensor(k, t, s, given.get(k))
                    for k, t, s in zip(dense_keys, dense_types, dense_shapes)]
        result = ParseSingleExample(
            serialized, defaults, num_sparse=len(sparse_keys), sparse_keys=sparse_keys,
            dense_keys=dense_keys, sparse_types=sparse_types, Tdense=dense_types,
            dense_shapes=dense_shapes, name="ParseSingleExample")
    return feature_config.combine_sparse_features(
        requested, _assemble(result, sparse_keys, dense_keys))


# -- DecodeCSV -------------------------------------------------------------------------------

DecodeCSV = define_op(
    "DecodeCSV", inputs=["records: string", "record_defaults: OUT_TYPE"],
    outputs=["output: OUT_TYPE"],
    attrs=["OUT_TYPE: list(type) >= 1", "field_delim: string = ','",
           "use_quote_delim: bool = True", "na_value: string = ''", "select_cols: list(int) = []"],
    differentiable=False)

_CSV_TYPES = (dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64, dtypes.string)


@DecodeCSV.shape_fn
def _decode_csv_shape(records, record_defaults):
    for i, default in enumerate(record_defaults):
        if default.rank is not None and default.rank > 1:
            raise ValueError(f"Shape must be at most rank 1 but is rank {default.rank} for "
                             f"record_defaults[{i}]")
    return [[records] * len(record_defaults)]


_QUOTE_END = "Quoted field has to end with quote followed by delim or end"


def _bad_record(index: int, pos: int, what: str):
    return errors.InvalidArgumentError(None, None, f"{what} (record {index}, offset {pos})")


def _split_fields(line: str, delim: str, quoted: bool, index: int) -> list:
    """One record's fields, as TF's DecodeCSV splits them.

    A field starting with a double quote (when `quoted`) runs to the next lone quote, `""`
    standing for one quote; that closing quote must be followed by the delimiter or the end.
    Any other field runs to the next delimiter and may hold no quote (when `quoted`) and no CR
    or LF. A trailing delimiter ends the record with an empty field.
    """
    fields: list = []
    pos, size = 0, len(line)
    while True:
        if quoted and pos < size and line[pos] == '"':
            parts, pos = [], pos + 1
            while True:
                close = line.find('"', pos)
                if close < 0:
                    raise _bad_record(index, size, _QUOTE_END)
                parts.append(line[pos:close])
                if line.startswith('"', close + 1):
                    parts.append('"')
                    pos = close + 2
                    continue
                pos = close + 1
                break
            if pos < size and line[pos] != delim:
                raise _bad_record(index, pos, _QUOTE_END)
            fields.append("".join(parts))
        else:
            end = line.find(delim, pos)
            end = size if end < 0 else end
            field = line[pos:end]
            if (quoted and '"' in field) or "\n" in field or "\r" in field:
                raise _bad_record(index, pos, "Unquoted fields cannot have quotes/CRLFs inside")
            fields.append(field)
            pos = end
        if pos >= size:
            return fields
        pos += 1  # past the delimiter
        if pos == size:
            fields.append("")
            return fields


def _split_records(lines, delim: str, quoted: bool):
    """Each record's fields (as str, bytes kept through latin-1), or raises naming the record."""
    return [_split_fields(line, delim, quoted, index) for index, line in enumerate(lines)]


# The type names DecodeCSV's errors use (TF's C++ names for the float types).
_CSV_TYPE_NAMES = {dtypes.float32: "float", dtypes.float64: "double"}


def _parse_number(text: str, dtype, col: int, record: int):
    """One numeric CSV field as TF's parser reads it: optional sign and surrounding
    whitespace, no digit separators, floats also in hexadecimal ("0x1p3")."""
    try:
        if "_" in text:
            raise ValueError(text)
        if dtype.is_integer:
            value = int(text)
            info = np.iinfo(dtype.as_numpy_dtype)
            if not info.min <= value <= info.max:
                raise ValueError(text)
            return value
        try:
            return float(text)
        except ValueError:
            body = text.strip().lstrip("+-")
            if body[:2].lower() != "0x":
                raise
            return float.fromhex(text.strip())
    except (ValueError, OverflowError):
        raise errors.InvalidArgumentError(
            None, None, f"Field {col} in record {record} is not a valid "
            f"{_CSV_TYPE_NAMES.get(dtype, dtype.name)}: {text}") from None


def _convert_single(text: str, dtype):
    """One present field of a one-record column (a tf.data map over lines), converted as
    _convert_column converts it (NumPy's str casts use Python's int/float), or None to take
    the general path (errors, out-of-range integers)."""
    if dtype == dtypes.string:
        return np.array([text.encode("latin-1")], dtype=object)
    if "_" in text:
        return None
    try:
        if dtype.is_integer:
            value = int(text)
            info = np.iinfo(dtype.as_numpy_dtype)
            return np.array([value], dtype.as_numpy_dtype) if info.min <= value <= info.max \
                else None
        return np.array([float(text)], np.float64).astype(dtype.as_numpy_dtype)
    except (ValueError, OverflowError):
        return None


def _convert_column(column, dtype, default, na_value: str, col: int):
    if len(column) == 1 and column[0] != "" and column[0] != na_value:
        out = _convert_single(column[0], dtype)
        if out is not None:
            return out
    missing = np.array([v == "" or v == na_value for v in column], dtype=bool)
    if missing.any() and np.size(default) == 0:
        record = int(np.argmax(missing))
        raise errors.InvalidArgumentError(
            None, None, f"Field {col} is required but missing in record {record}!")
    if dtype == dtypes.string:
        out = np.array([v.encode("latin-1") for v in column] or [], dtype=object)
        if missing.any():
            out[missing] = np.asarray(default).reshape(-1)[0]
        return out
    filled = np.array(column, dtype=object)
    filled[missing] = "0"
    np_dtype = dtype.as_numpy_dtype
    try:
        if any("_" in text for text in filled):
            raise ValueError("digit separators")  # NumPy's casts take them, TF's parser not
        if dtype.is_integer:
            wide = filled.astype(str).astype(np.int64)
            info = np.iinfo(np_dtype)
            if ((wide < info.min) | (wide > info.max)).any():
                raise ValueError("out of range")
            out = wide.astype(np_dtype)
        else:
            out = filled.astype(str).astype(np.float64).astype(np_dtype)
    except (ValueError, OverflowError):
        # Field by field: hexadecimal floats are valid (TF parses with strtod), the first
        # invalid field is named.
        values = [_parse_number(text, dtype, col, record) for record, text in enumerate(filled)]
        out = np.array(values, np.float64 if dtype.is_floating else np.int64).astype(np_dtype)
    if missing.any():
        out[missing] = np.asarray(default).reshape(-1)[0]
    return out


@DecodeCSV.kernel
def _decode_csv_kernel(records, *defaults, OUT_TYPE, field_delim, use_quote_delim, na_value,
                       select_cols):  # noqa: N803 - TF attr name
    types = [dtypes.as_dtype(t) for t in OUT_TYPE]
    for i, default in enumerate(defaults):
        if np.size(default) > 1:
            raise errors.InvalidArgumentError(
                None, None, f"There should only be 1 default per field but field {i} has "
                f"{np.size(default)}")
    records = np.asarray(records)
    lines = [r.decode("latin-1") if isinstance(r, bytes) else str(r)
             for r in records.reshape(-1)]
    rows = _split_records(lines, field_delim, use_quote_delim)
    expected = len(types)
    columns = [[] for _ in types]
    for index, fields in enumerate(rows):
        if select_cols:
            # Only the selected columns are kept; a record too short for them is reported by
            # how many of the selected columns it has.
            fields = [fields[c] for c in select_cols if c < len(fields)]
        if len(fields) != expected:
            raise errors.InvalidArgumentError(
                None, None, f"Expect {expected} fields but have {len(fields)} in record "
                f"{index}")
        for column, field in zip(columns, fields):
            column.append(field)
    outputs = [_convert_column(c, t, d, na_value, i).reshape(records.shape)
               for i, (c, t, d) in enumerate(zip(columns, types, defaults))]
    return outputs[0] if len(outputs) == 1 else tuple(outputs)


def decode_csv(records, record_defaults, field_delim=",", use_quote_delim=True, name=None,
               na_value="", select_cols=None):
    """Converts CSV records to tensors, one per column (TF1 `tf.decode_csv`).

    Args:
        records: string tensor; each element is one CSV record.
        record_defaults: one tensor per column: a one-element default (whose dtype is the
            column's), or an empty tensor when the column is required.
        field_delim: the one-character field delimiter.
        use_quote_delim: treat double quotes as quoting (RFC 4180).
        na_value: a string that also means "missing".
        select_cols: optional sorted column indices to keep.

    Returns:
        A list of tensors shaped like `records`.

    Raises:
        InvalidArgumentError: (at run time) a wrong field count, a missing required field, a
            value that does not parse.

    Example:
        >>> a, b = tf.decode_csv(["1,x", ",y"], record_defaults=[[0], [""]])
    """
    if len(field_delim) != 1:
        raise ValueError(f"field_delim must be one character, got {field_delim!r}")
    if select_cols is not None:
        select_cols = list(select_cols)
        if any(b <= a for a, b in zip(select_cols, select_cols[1:])):
            raise ValueError(f"select_cols is not strictly increasing. ({select_cols})")
        if select_cols and select_cols[0] < 0:
            raise ValueError(f"select_cols contains negative values. ({select_cols})")
        if len(select_cols) != len(record_defaults):
            raise ValueError(f"Length of select_cols and record_defaults do not match. "
                             f"({len(select_cols)} vs. {len(record_defaults)})")
    defaults = []
    for i, default in enumerate(record_defaults):
        tensor = convert_to_tensor(default, name=f"record_defaults_{i}") \
            if not isinstance(default, Tensor) else default
        if tensor.dtype.base_dtype not in _CSV_TYPES:
            raise TypeError(f"record_defaults[{i}] has dtype {tensor.dtype.name}; DecodeCSV "
                            "supports float32, float64, int32, int64 and string")
        defaults.append(tensor)
    result = DecodeCSV(records, defaults, field_delim=field_delim,
                       use_quote_delim=use_quote_delim, na_value=na_value,
                       select_cols=select_cols or [], name=name)
    return list(result) if isinstance(result, (list, tuple)) else [result]


from tensorflux.ops.io.sequence_parsing import parse_single_sequence_example  # noqa: E402
