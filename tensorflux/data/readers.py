"""`make_csv_dataset` and `make_batched_features_dataset` (tf.data.experimental, TF 1.15).

Both read the files matching a pattern (in a shuffled order unless `shuffle=False`),
interleave their records, shuffle and repeat them for `num_epochs` (None: forever), batch them
and parse each batch into a dict of feature tensors, with the label split out when a label
key is given: elements are `features` or `(features, label)`.
"""

from __future__ import annotations

import csv
import glob
import gzip
import io
import zlib

import numpy as np

from tensorflux.data import structure
from tensorflux.data.dataset_ops import Dataset
from tensorflux.data.ordering import IgnoreErrorsDataset
from tensorflux.data.sources import CsvDataset, TFRecordDataset
from tensorflux.framework import dtypes
from tensorflux.ops.io.parsing import parse_example

__all__ = ["make_csv_dataset", "make_batched_features_dataset"]

_INFERRED = [dtypes.int32, dtypes.int64, dtypes.float32, dtypes.float64, dtypes.string]


def _file_names(file_pattern) -> list:
    patterns = [file_pattern] if isinstance(file_pattern, (str, bytes)) else list(file_pattern)
    names = []
    for pattern in patterns:
        pattern = pattern.decode() if isinstance(pattern, bytes) else str(pattern)
        names.extend(sorted(glob.glob(pattern)))
    if not names:
        raise ValueError(f"No files match `file_pattern` {file_pattern}.")
    return names


def _files(file_pattern, shuffle, seed) -> Dataset:
    names = _file_names(file_pattern)
    dataset = Dataset.from_tensor_slices(structure.as_array(names, dtypes.string))
    return dataset.shuffle(len(names), seed=seed) if shuffle else dataset


def _shuffle_and_repeat(dataset, num_epochs, shuffle, buffer_size, seed):
    if shuffle:
        dataset = dataset.shuffle(buffer_size, seed=seed)
    if num_epochs != 1:
        dataset = dataset.repeat(num_epochs)
    return dataset


def _read_text(path: str, compression) -> str:
    with open(path, "rb") as handle:
        data = handle.read()
    if compression == "GZIP":
        data = gzip.decompress(data)
    elif compression == "ZLIB":
        data = zlib.decompress(data)
    return data.decode("utf-8")


def _rows(path, compression, delim, quoting, limit=None):
    reader = csv.reader(io.StringIO(_read_text(path, compression)), delimiter=delim,
                        quoting=csv.QUOTE_MINIMAL if quoting else csv.QUOTE_NONE)
    for i, row in enumerate(reader):
        if limit is not None and i >= limit:
            return
        yield row


def _infer_type(text: str, na_value: str, previous):
    """The narrowest of int32, int64, float32, float64, string (not narrower than
    `previous`) that holds `text` (TF's inference order)."""
    if text in ("", na_value):
        return previous
    for kind in _INFERRED[_INFERRED.index(previous):]:
        try:
            if kind == dtypes.int32 and -2**31 <= int(text) < 2**31:
                return kind
            if kind == dtypes.int64 and -2**63 <= int(text) < 2**63:
                return kind
            if kind == dtypes.float32 and abs(float(text)) <= np.finfo(np.float32).max:
                return kind
            if kind == dtypes.float64:
                float(text)
                return kind
        except ValueError:
            continue
    return dtypes.string


def make_csv_dataset(file_pattern, batch_size, column_names=None, column_defaults=None,
                     label_name=None, select_columns=None, field_delim=",",
                     use_quote_delim=True, na_value="", header=True, num_epochs=None,
                     shuffle=True, shuffle_buffer_size=10000, shuffle_seed=None,
                     prefetch_buffer_size=None, num_parallel_reads=1, sloppy=False,
                     num_rows_for_inference=100, compression_type=None,
                     ignore_errors=False):
    """Batches of CSV records as `(features, label)` (or `features` without `label_name`),
    each feature a `[batch_size]` tensor named by its column.

    Column names come from the first file's header when not given; column types from the
    first `num_rows_for_inference` rows when `column_defaults` is not given (int32, int64,
    float32, float64 or string; inferred columns are required). The last partial batch is
    kept only when `num_epochs` is set.

    Raises:
        ValueError: no matching file, no header and no column_names, duplicate names,
            a label_name or select_columns not among the columns, or column_defaults of the
            wrong length.
    """
    names = _file_names(file_pattern)
    compression = (compression_type or "").upper() or None
    if column_names is None:
        if not header:
            raise ValueError("Cannot infer column names without a header line.")
        first = next(_rows(names[0], compression, field_delim, use_quote_delim, 1), None)
        if first is None:
            raise ValueError(f"Cannot infer column names: {names[0]} is empty.")
        column_names = [name.strip() for name in first]
    column_names = list(column_names)
    if len(set(column_names)) != len(column_names):
        raise ValueError("Cannot have duplicate column names.")
    select = None
    if select_columns is not None:
        if all(isinstance(c, (int, np.integer)) for c in select_columns):
            select = sorted(int(c) for c in select_columns)
        else:
            missing = [c for c in select_columns if c not in column_names]
            if missing:
                raise ValueError(f"Value(s) {missing} in `select_columns` not in "
                                 f"`column_names` {column_names}.")
            select = sorted(column_names.index(c) for c in select_columns)
        if select and select[-1] >= len(column_names):
            raise ValueError(f"Column index {select[-1]} in `select_columns` is out of range.")
        used_names = [column_names[i] for i in select]
    else:
        used_names = column_names
    if label_name is not None and label_name not in used_names:
        raise ValueError(f"`label_name` provided must be one of the columns: {used_names}. "
                         f"Received: {label_name}")
    if column_defaults is None:
        kinds = [dtypes.int32] * len(column_names)
        for path in names:
            rows = _rows(path, compression, field_delim, use_quote_delim,
                         num_rows_for_inference + int(bool(header)))
            if header:
                next(rows, None)
            for row in rows:
                for i, text in enumerate(row[:len(kinds)]):
                    kinds[i] = _infer_type(text, na_value, kinds[i])
        defaults = [kinds[i] for i in (select if select is not None else range(len(kinds)))]
    else:
        defaults = list(column_defaults)
        if len(defaults) != len(used_names):
            raise ValueError(f"The lengths of `column_defaults` ({len(defaults)}) and the "
                             f"columns ({len(used_names)}) must match.")
    files = _files(file_pattern, shuffle, shuffle_seed)

    def read(filename):
        return CsvDataset(filename, defaults, compression_type=compression_type, header=header,
                          field_delim=field_delim, use_quote_delim=use_quote_delim,
                          na_value=na_value, select_cols=select)

    dataset = files.interleave(read, cycle_length=num_parallel_reads)
    if ignore_errors:
        dataset = IgnoreErrorsDataset(dataset)
    dataset = _shuffle_and_repeat(dataset, num_epochs, shuffle, shuffle_buffer_size,
                                  shuffle_seed)
    dataset = dataset.batch(batch_size, drop_remainder=num_epochs is None)

    def split(*columns):
        features = dict(zip(used_names, columns))
        if label_name is None:
            return features
        label = features.pop(label_name)
        return features, label

    return dataset.map(split)


def make_batched_features_dataset(file_pattern, batch_size, features, reader=None,
                                  label_key=None, reader_args=None, num_epochs=None,
                                  shuffle=True, shuffle_buffer_size=10000, shuffle_seed=None,
                                  prefetch_buffer_size=None, reader_num_threads=1,
                                  parser_num_threads=2, sloppy_ordering=False,
                                  drop_final_batch=False):
    """Batches of `tf.train.Example` records parsed with `features` (a parse spec, e.g. from
    `tf.feature_column.make_parse_example_spec`), as a dict, or `(dict, label)` with
    `label_key`.

    `VarLenFeature`/`SparseFeature` entries give SparseTensor components.

    Raises:
        ValueError: no matching file, or `label_key` not in `features`.
    """
    if label_key is not None and label_key not in features:
        raise ValueError(f"The `label_key` provided ({label_key}) must be one of the "
                         f"`features` keys.")
    reader = TFRecordDataset if reader is None else reader
    files = _files(file_pattern, shuffle, shuffle_seed)
    dataset = files.interleave(lambda filename: reader(filename, *(reader_args or [])),
                               cycle_length=reader_num_threads)
    dataset = _shuffle_and_repeat(dataset, num_epochs, shuffle, shuffle_buffer_size,
                                  shuffle_seed)
    dataset = dataset.batch(batch_size, drop_remainder=drop_final_batch)

    def parse(serialized):
        parsed = parse_example(serialized, features)
        if label_key is None:
            return parsed
        label = parsed.pop(label_key)
        return parsed, label

    return dataset.map(parse)


