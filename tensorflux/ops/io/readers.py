"""Readers and file ops: `tf.TextLineReader`, `tf.FixedLengthRecordReader`, `tf.TFRecordReader`,
`tf.WholeFileReader`, `tf.IdentityReader`, `tf.read_file`, `tf.write_file`, `tf.matching_files`.

A reader op (`TextLineReaderV2`, ...) outputs a handle to a reader resource (see
`reader_resource.py`) kept in the device's resource manager. `ReaderReadV2` and
`ReaderReadUpToV2` are asynchronous kernels: when the reader needs a new file they dequeue its
name from the queue without holding a thread.
"""

from __future__ import annotations

import glob
import itertools
import os

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework.op_def import define_op
from tensorflux.framework.tensor_conversion import convert_to_tensor
from tensorflux.framework.tensor_shape import TensorShape
from tensorflux.lib.formats.tfrecord import TFRecordOptions
from tensorflux.ops.io.reader_resource import (
    FixedLengthRecordReaderResource,
    IdentityReaderResource,
    TextLineReaderResource,
    TFRecordReaderResource,
    WholeFileReaderResource,
    read_bytes,
)

__all__ = ["ReaderBase", "TextLineReader", "FixedLengthRecordReader", "TFRecordReader",
           "WholeFileReader", "IdentityReader", "read_file", "write_file", "matching_files"]

_SHARED = ["container: string = ''", "shared_name: string = ''"]
_IDS = itertools.count()


def _scalar_shape(*args, **_):
    return TensorShape([])


def _reader_op(name, attrs=()):
    op = define_op(name, outputs=["reader_handle: resource"], attrs=list(attrs) + _SHARED,
                   stateful=True, differentiable=False)
    op.shape_fn(_scalar_shape)
    return op


def _reader_kernel(make, container, shared_name, node_name):
    name = shared_name or f"_{next(_IDS)}_{node_name}"

    def kernel(ctx):
        return ctx.resource_mgr.lookup_or_create(container, name, lambda: make(name))

    return kernel


TextLineReaderV2 = _reader_op("TextLineReaderV2", ["skip_header_lines: int = 0"])
FixedLengthRecordReaderV2 = _reader_op("FixedLengthRecordReaderV2", [
    "header_bytes: int = 0", "record_bytes: int", "footer_bytes: int = 0", "hop_bytes: int = 0",
    "encoding: string = ''"])
TFRecordReaderV2 = _reader_op("TFRecordReaderV2", ["compression_type: string = ''"])
WholeFileReaderV2 = _reader_op("WholeFileReaderV2")
IdentityReaderV2 = _reader_op("IdentityReaderV2")


@TextLineReaderV2.kernel(ctx=True, factory=True)
def _text_line_reader_factory(skip_header_lines, container, shared_name, node_name):
    return _reader_kernel(lambda name: TextLineReaderResource(name, skip_header_lines),
                          container, shared_name, node_name)


@FixedLengthRecordReaderV2.kernel(ctx=True, factory=True)
def _fixed_length_reader_factory(header_bytes, record_bytes, footer_bytes, hop_bytes, encoding,
                                 container, shared_name, node_name):
    def make(name):
        return FixedLengthRecordReaderResource(name, header_bytes, record_bytes, footer_bytes,
                                               hop_bytes, encoding)

    return _reader_kernel(make, container, shared_name, node_name)


@TFRecordReaderV2.kernel(ctx=True, factory=True)
def _tfrecord_reader_factory(compression_type, container, shared_name, node_name):
    return _reader_kernel(lambda name: TFRecordReaderResource(name, compression_type),
                          container, shared_name, node_name)


@WholeFileReaderV2.kernel(ctx=True, factory=True)
def _whole_file_reader_factory(container, shared_name, node_name):
    return _reader_kernel(WholeFileReaderResource, container, shared_name, node_name)


@IdentityReaderV2.kernel(ctx=True, factory=True)
def _identity_reader_factory(container, shared_name, node_name):
    return _reader_kernel(IdentityReaderResource, container, shared_name, node_name)


def _handle_op(name, inputs=(), outputs=()):
    return define_op(name, inputs=["reader_handle: resource"] + list(inputs),
                     outputs=list(outputs), stateful=True, differentiable=False)


ReaderReadV2 = _handle_op("ReaderReadV2", ["queue_handle: resource"],
                          ["key: string", "value: string"])
ReaderReadUpToV2 = _handle_op("ReaderReadUpToV2",
                              ["queue_handle: resource", "num_records: int64"],
                              ["keys: string", "values: string"])
ReaderNumRecordsProducedV2 = _handle_op("ReaderNumRecordsProducedV2", [],
                                        ["records_produced: int64"])
ReaderNumWorkUnitsCompletedV2 = _handle_op("ReaderNumWorkUnitsCompletedV2", [],
                                           ["units_completed: int64"])
ReaderResetV2 = _handle_op("ReaderResetV2")


@ReaderReadV2.shape_fn
def _read_shape(reader_handle, queue_handle):
    return [TensorShape([]), TensorShape([])]


@ReaderReadUpToV2.shape_fn
def _read_up_to_shape(reader_handle, queue_handle, num_records):
    num_records.with_rank(0)
    return [TensorShape([None]), TensorShape([None])]


ReaderNumRecordsProducedV2.shape_fn(_scalar_shape)
ReaderNumWorkUnitsCompletedV2.shape_fn(_scalar_shape)


@ReaderResetV2.shape_fn
def _reset_shape(reader_handle):
    return []


def _check_queue(queue) -> None:
    if getattr(queue, "dtypes", None) != (dtypes.string,):
        raise errors.InvalidArgumentError(
            None, None, "A reader's queue must hold exactly one string component (filenames), "
            f"got {getattr(queue, 'dtypes', type(queue).__name__)}")


@ReaderReadV2.kernel(asynchronous=True)
def _read_kernel(ctx, reader, queue, done):
    _check_queue(queue)
    reader.read(ctx, queue, 1, False, done)


@ReaderReadUpToV2.kernel(asynchronous=True)
def _read_up_to_kernel(ctx, reader, queue, num_records, done):
    _check_queue(queue)
    reader.read(ctx, queue, int(num_records), True, done)


@ReaderNumRecordsProducedV2.kernel(ctx=True)
def _num_records_kernel(ctx, reader):
    return np.int64(reader.records_produced)


@ReaderNumWorkUnitsCompletedV2.kernel(ctx=True)
def _num_work_units_kernel(ctx, reader):
    return np.int64(reader.work_units_completed)


@ReaderResetV2.kernel(ctx=True)
def _reset_kernel(ctx, reader):
    reader.reset()


# -- file ops ---------------------------------------------------------------------------------

ReadFile = define_op("ReadFile", inputs=["filename: string"], outputs=["contents: string"],
                     stateful=True, differentiable=False)
WriteFile = define_op("WriteFile", inputs=["filename: string", "contents: string"],
                      stateful=True, differentiable=False)
MatchingFiles = define_op("MatchingFiles", inputs=["pattern: string"],
                          outputs=["filenames: string"], stateful=True, differentiable=False)


@ReadFile.shape_fn
def _read_file_shape(filename):
    filename.with_rank(0)
    return TensorShape([])


@WriteFile.shape_fn
def _write_file_shape(filename, contents):
    filename.with_rank(0)
    contents.with_rank(0)
    return []


@MatchingFiles.shape_fn
def _matching_files_shape(pattern):
    pattern.with_rank_at_most(1)
    return TensorShape([None])


def _text(value) -> str:
    value = np.asarray(value)
    if value.ndim != 0:
        raise errors.InvalidArgumentError(None, None, f"expected a scalar string, got shape "
                                          f"{list(value.shape)}")
    item = value.item()
    return item.decode() if isinstance(item, bytes) else str(item)


@ReadFile.kernel
def _read_file_kernel(filename):
    out = np.empty((), dtype=object)
    out[()] = read_bytes(_text(filename))
    return out


@WriteFile.kernel
def _write_file_kernel(filename, contents):
    path = _text(filename)
    data = np.asarray(contents).item()
    parent = os.path.dirname(path)
    try:
        if parent:
            os.makedirs(parent, exist_ok=True)
        with open(path, "wb") as handle:
            handle.write(data if isinstance(data, bytes) else str(data).encode())
    except OSError as err:
        raise errors.PermissionDeniedError(None, None, f"{path}: {err}") from None


@MatchingFiles.kernel
def _matching_files_kernel(pattern):
    patterns = np.asarray(pattern).reshape(-1)
    found = []
    for item in patterns:
        text = item.decode() if isinstance(item, bytes) else str(item)
        found.extend(sorted(glob.glob(text)))
    out = np.empty(len(found), dtype=object)
    out[:] = [f.encode() for f in found]
    return out


def read_file(filename, name=None):
    """The contents of a file as a string scalar (TF1 `tf.read_file`)."""
    return ReadFile(convert_to_tensor(filename, dtype=dtypes.string), name=name)


def write_file(filename, contents, name=None):
    """Writes `contents` to a file, creating parent directories (TF1 `tf.write_file`)."""
    return WriteFile(convert_to_tensor(filename, dtype=dtypes.string),
                     convert_to_tensor(contents, dtype=dtypes.string), name=name)


def matching_files(pattern, name=None):
    """The sorted files matching a glob pattern, or a vector of patterns."""
    return MatchingFiles(convert_to_tensor(pattern, dtype=dtypes.string), name=name)


# -- the Python classes ------------------------------------------------------------------------

def _queue_ref(queue):
    return queue.queue_ref if hasattr(queue, "queue_ref") else queue


class ReaderBase:
    """Base class of readers: `read`, `read_up_to`, counters and `reset` over a reader handle.

    Example:
        >>> reader = tf.TextLineReader()
        >>> key, line = reader.read(filename_queue)
    """

    def __init__(self, reader_ref, supports_serialize=False):
        self._reader_ref = reader_ref
        self._supports_serialize = supports_serialize

    @property
    def reader_ref(self):
        return self._reader_ref

    @property
    def supports_serialize(self) -> bool:
        return self._supports_serialize

    def read(self, queue, name=None):
        """Returns (key, value) of the next record, dequeuing filenames from `queue` as needed.

        Raises:
            OutOfRangeError: (at run time) the queue is closed and every file was read.
        """
        return tuple(ReaderReadV2(self._reader_ref, _queue_ref(queue), name=name))

    def read_up_to(self, queue, num_records, name=None):
        """Returns (keys, values) of up to `num_records` records (fewer at a file's end)."""
        num = convert_to_tensor(num_records, dtype=dtypes.int64)
        return tuple(ReaderReadUpToV2(self._reader_ref, _queue_ref(queue), num, name=name))

    def num_records_produced(self, name=None):
        return ReaderNumRecordsProducedV2(self._reader_ref, name=name)

    def num_work_units_completed(self, name=None):
        return ReaderNumWorkUnitsCompletedV2(self._reader_ref, name=name)

    def reset(self, name=None):
        """Restores the reader to its initial clean state."""
        return ReaderResetV2(self._reader_ref, name=name)


class TextLineReader(ReaderBase):
    """Outputs the lines of files (newlines stripped); keys are "filename:line_number"."""

    def __init__(self, skip_header_lines=None, name=None):
        super().__init__(TextLineReaderV2(skip_header_lines=skip_header_lines or 0, name=name))


class FixedLengthRecordReader(ReaderBase):
    """Outputs fixed-length records of files, after `header_bytes` and before `footer_bytes`,
    starting every `hop_bytes` (default: `record_bytes`); `encoding` "", "GZIP" or "ZLIB"."""

    def __init__(self, record_bytes, header_bytes=None, footer_bytes=None, hop_bytes=None,
                 name=None, encoding=None):
        super().__init__(FixedLengthRecordReaderV2(
            record_bytes=record_bytes, header_bytes=header_bytes or 0,
            footer_bytes=footer_bytes or 0, hop_bytes=hop_bytes or 0,
            encoding=encoding or "", name=name))


class TFRecordReader(ReaderBase):
    """Outputs the records of TFRecord files; `options` selects GZIP/ZLIB compression."""

    def __init__(self, name=None, options=None):
        compression = TFRecordOptions.get_compression_type_string(options) if options else ""
        super().__init__(TFRecordReaderV2(compression_type=compression, name=name))


class WholeFileReader(ReaderBase):
    """Outputs each file whole: key = filename, value = contents."""

    def __init__(self, name=None):
        super().__init__(WholeFileReaderV2(name=name))


class IdentityReader(ReaderBase):
    """Outputs each work item as both key and value."""

    def __init__(self, name=None):
        super().__init__(IdentityReaderV2(name=name))
