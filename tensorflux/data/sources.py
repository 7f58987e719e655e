"""File and Python sources: TFRecordDataset, TextLineDataset, FixedLengthRecordDataset,
`Dataset.from_generator` and `Dataset.list_files`.

Record readers reuse the formats of the queue-based readers (`tensorflux/lib/tfrecord.py`,
`ops/reader_resource.py`): the same framing, CRC checks (`DataLossError` on corruption) and
GZIP/ZLIB handling. Files are opened when the pipeline reaches them and read record by record.
"""

from __future__ import annotations

import glob
import gzip
import os
import zlib

import numpy as np

from tensorflux.data import structure
from tensorflux.data.dataset_ops import (
    Dataset,
    ElementError,
    RunContext,
    TensorSliceDataset,
    scalar_arg,
)
from tensorflux.data.transformations import MapDataset, interleave
from tensorflux.framework import dtypes, errors
from tensorflux.framework.tensor import Tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.lib.formats.tfrecord import TFRecordReaderStream
from tensorflux.ops.array import constant
from tensorflux.ops.io.parsing import decode_csv
from tensorflux.ops.io.reader_resource import FixedLengthRecordReaderResource, read_bytes
from tensorflux.ops.script.py_func import exception_status


def _string(value) -> np.ndarray:
    out = np.empty((), dtype=object)
    out[()] = bytes(value)
    return out


def _compression(value, what: str) -> str:
    value = "" if value is None else value
    if isinstance(value, bytes):
        value = value.decode()
    if value not in ("", "GZIP", "ZLIB"):
        raise ValueError(f"{what}: compression_type must be '', 'GZIP' or 'ZLIB', got "
                         f"{value!r}")
    return value


class _FileDataset(Dataset):
    """A dataset of string records read from each file of `filenames` in turn."""

    what = "FileDataset"

    def __init__(self, filenames, num_parallel_reads=None):
        self._parallel = 1 if num_parallel_reads is None else \
            scalar_arg(num_parallel_reads, "num_parallel_reads", self.what)
        if isinstance(filenames, Dataset):
            if filenames._types != [dtypes.string]:
                raise TypeError(f"{self.what}: a dataset of filenames must have string "
                                f"elements, got {filenames.output_types}")
            self._files = filenames
            super().__init__([filenames], [self._parallel], [dtypes.string], [TensorShape([])],
                             0)
            return
        value = filenames if isinstance(filenames, Tensor) else \
            structure.as_array(filenames, dtypes.string)
        dtype, shape = structure.leaf_spec(value)
        if dtype is not dtypes.string:
            raise TypeError(f"{self.what}: `filenames` must be a string tensor, got "
                            f"{dtype.name}")
        if shape.ndims is not None and shape.ndims > 1:
            raise ValueError(f"{self.what}: `filenames` must be a scalar or a vector, got shape "
                             f"{shape}")
        self._files = value
        super().__init__([], [value, self._parallel], [dtypes.string], [TensorShape([])], 0)

    def _filenames(self, ctx: RunContext):
        if isinstance(self._files, Dataset):
            for (name,) in self._files._iterate(ctx):
                yield name.item()
            return
        for name in np.asarray(ctx.value(self._files)).reshape(-1):
            yield name

    def _check(self, ctx):
        if ctx.scalar(self._parallel) <= 0:
            raise errors.InvalidArgumentError(None, None, f"{self.what}: num_parallel_reads must "
                                              "be greater than zero")

    def _open(self, name):
        path = name.decode() if isinstance(name, bytes) else str(name)
        return _file_elements(self._records(path))

    def _iterate(self, ctx):
        # `num_parallel_reads` files are read in turn, one record each, in TF's fixed order.
        yield from interleave(self._filenames(ctx), self._open, ctx.scalar(self._parallel), 1)

    def _records(self, path: str):
        raise TypeError(f"{self.what} reads no records")


def _file_elements(records):
    """One file's elements. A file that cannot be opened or read on (NotFound, DataLoss) is one
    failed element, then the next file is read: as TF's readers move on to the next file, so
    that `ignore_errors()` skips the damaged rest of a file (before, the whole dataset ended)."""
    try:
        for record in records:
            yield (_string(record),)
    except errors.OpError as err:
        yield ElementError(err)


class TFRecordDataset(_FileDataset):
    """The records of TFRecord files (`compression_type` '', 'GZIP' or 'ZLIB').

    Example:
        >>> ds = tf.data.TFRecordDataset(["a.tfrecord"]).map(parse_fn).batch(32)
    """

    what = "TFRecordDataset"

    def __init__(self, filenames, compression_type=None, buffer_size=None,
                 num_parallel_reads=None):
        self._compression = _compression(compression_type, self.what)
        super().__init__(filenames, num_parallel_reads)

    def _records(self, path):
        if not os.path.exists(path):
            raise errors.NotFoundError(None, None, f"{path}; No such file or directory")
        stream = TFRecordReaderStream(path, self._compression)
        try:
            while True:
                record = stream.read_record()
                if record is None:
                    return
                yield record
        finally:
            stream.close()


def _decompressed(path: str, compression: str) -> bytes:
    data = read_bytes(path)
    try:
        if compression == "GZIP":
            return gzip.decompress(data)
        if compression == "ZLIB":
            return zlib.decompress(data)
    except (OSError, zlib.error, EOFError) as err:
        raise errors.DataLossError(None, None, f"{path}: corrupted {compression} data "
                                   f"({err})") from None
    return data


class TextLineDataset(_FileDataset):
    """The lines of text files, without their line endings ("\\n" or "\\r\\n")."""

    what = "TextLineDataset"

    def __init__(self, filenames, compression_type=None, buffer_size=None,
                 num_parallel_reads=None):
        self._compression = _compression(compression_type, self.what)
        super().__init__(filenames, num_parallel_reads)

    def _records(self, path):
        lines = _decompressed(path, self._compression).split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        for line in lines:
            yield line[:-1] if line.endswith(b"\r") else line


class FixedLengthRecordDataset(_FileDataset):
    """Fixed-size records between a header and a footer of each file."""

    what = "FixedLengthRecordDataset"

    def __init__(self, filenames, record_bytes, header_bytes=None, footer_bytes=None,
                 buffer_size=None, compression_type=None, num_parallel_reads=None):
        self._sizes = (int(header_bytes or 0), int(record_bytes), int(footer_bytes or 0))
        if self._sizes[1] <= 0:
            raise ValueError(f"{self.what}: record_bytes must be positive, got {record_bytes}")
        self._compression = _compression(compression_type, self.what)
        super().__init__(filenames, num_parallel_reads)

    def _records(self, path):
        header, record, footer = self._sizes
        reader = FixedLengthRecordReaderResource(path, header, record, footer, 0,
                                                 self._compression)
        reader._start_work(path)
        reader.work = path
        _, values, _ = reader._read(reader._count)
        reader._stop_work()
        yield from values


class _CsvLines(TextLineDataset):
    what = "CsvDataset"

    def __init__(self, filenames, compression_type, header: bool):
        self._header = bool(header)
        super().__init__(filenames, compression_type)

    def _records(self, path):
        lines = super()._records(path)
        if self._header:
            next(lines, None)
        return lines


class CsvDataset(MapDataset):
    """Records of CSV files as tuples of columns (`tf.data.experimental.CsvDataset`).

    Each `record_defaults` item is a DType (a required column) or a one-element default whose
    dtype is the column's. Lines are parsed like `tf.decode_csv`.

    Example:
        >>> ds = tf.data.experimental.CsvDataset("a.csv", [tf.float32, [0], [""]], header=True)
    """

    def __init__(self, filenames, record_defaults, compression_type=None, buffer_size=None,
                 header=False, field_delim=",", use_quote_delim=True, na_value="",
                 select_cols=None):
        lines = _CsvLines(filenames, compression_type, header)
        defaults = list(record_defaults)
        if not defaults:
            raise ValueError("CsvDataset: record_defaults must not be empty")

        def parse(line):
            tensors = []
            for default in defaults:
                if isinstance(default, Tensor):
                    tensors.append(default)
                elif isinstance(default, dtypes.DType) or (isinstance(default, type) and
                                                           issubclass(default, np.generic)):
                    tensors.append(constant([], dtype=dtypes.as_dtype(default)))
                else:
                    tensors.append(constant(np.reshape(structure.as_array(default), [-1])))
            return tuple(decode_csv(line, tensors, field_delim=field_delim,
                                    use_quote_delim=use_quote_delim, na_value=na_value,
                                    select_cols=select_cols))

        super().__init__(lines, parse)


# -- Python sources ------------------------------------------------------------------------


class GeneratorDataset(Dataset):
    """Elements produced by `generator(*args)`, called anew at each pass."""

    def __init__(self, generator, output_types, output_shapes, args):
        if not callable(generator):
            raise TypeError(f"Dataset.from_generator(): `generator` must be callable, got "
                            f"{generator!r}")
        template = output_types
        types = [dtypes.as_dtype(t) for t in structure.flatten(output_types)]
        if output_shapes is None:
            shapes = [TensorShape(None)] * len(types)
        else:
            shapes = structure.as_shapes(output_shapes, template,
                                         "from_generator(): output_shapes")
        self._generator = generator
        self._args = () if args is None else tuple(args)
        super().__init__([], [], types, shapes, template)

    def _iterate(self, ctx):
        where = "the generator passed to Dataset.from_generator()"
        for value in _user_values(self._generator(*self._args)):
            if isinstance(value, list) and structure.is_nested(self._template):
                value = tuple(value)
            if structure.is_nested(self._template) and not structure.same_nesting(
                    value, self._template):
                raise errors.InvalidArgumentError(
                    None, None, f"{where} yielded {value!r}, which does not match the "
                    f"structure {self.output_types}")
            leaves = structure.flatten(value) if structure.is_nested(self._template) \
                else [value]
            yield tuple(structure.check_value(structure.as_array(v, dtype), dtype, shape, where)
                        for v, dtype, shape in zip(leaves, self._types, self._shapes))


def _user_values(iterable):
    """The values of a user's generator; its exception becomes the OpError TF's py_func
    reports for it (ValueError -> InvalidArgumentError, others UnknownError, ...)."""
    iterator = iter(iterable)
    while True:
        try:
            value = next(iterator)
        except StopIteration:
            return
        except errors.OpError:
            raise
        except Exception as err:  # noqa: BLE001 - the user's code, reported as TF does
            raise exception_status(err) from err
        yield value


def list_files(file_pattern, shuffle=None, seed=None) -> Dataset:
    """Matching filenames, resolved when the dataset is built (sorted, then shuffled unless
    `shuffle=False`)."""
    patterns = [file_pattern] if isinstance(file_pattern, (str, bytes)) else list(file_pattern)
    names = sorted({name for pattern in patterns
                    for name in glob.glob(pattern.decode() if isinstance(pattern, bytes)
                                          else pattern)})
    if not names:
        raise errors.InvalidArgumentError(None, None, f"Expect a non-empty pattern match, got "
                                          f"no files for {file_pattern!r}")
    dataset = TensorSliceDataset(structure.as_array(names, dtypes.string))
    if shuffle is None or shuffle:
        dataset = dataset.shuffle(len(names), seed=seed)
    return dataset


__all__ = ["TFRecordDataset", "TextLineDataset", "FixedLengthRecordDataset"]
