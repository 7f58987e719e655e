"""TFRecord files, byte-compatible with TensorFlow (`tf.python_io` in TF1).

A TFRecord file is a sequence of records, each framed as

    uint64 length            little-endian
    uint32 masked_crc32c(length bytes)
    byte   data[length]
    uint32 masked_crc32c(data)

and the whole sequence may be compressed as one GZIP or one ZLIB stream. Offsets reported by
the reader count uncompressed bytes, as TensorFlow's do. A truncated record or a checksum
mismatch is a `DataLossError` naming the file and the offset of the record.
"""

from __future__ import annotations

import gzip
import io
import os
import struct
import zlib
from collections.abc import Iterator

from tensorflux.framework import errors
from tensorflux.lib.formats import crc32c
from tensorflux.platform import gfile

_HEADER = struct.Struct("<QI")
_FOOTER = struct.Struct("<I")
_HEADER_SIZE = _HEADER.size
_FOOTER_SIZE = _FOOTER.size
_DEFAULT_BUFFER_SIZE = 256 * 1024
# Reads are capped so that a corrupted length cannot make us allocate its claimed size upfront.
_MAX_READ = 16 * 1024 * 1024
_DEFAULT_LEVEL = 6  # zlib's Z_DEFAULT_COMPRESSION, which TensorFlow uses.


class TFRecordCompressionType:
    """The type of compression for a TFRecord file (TF1 `tf.python_io.TFRecordCompressionType`)."""

    NONE = 0
    ZLIB = 1
    GZIP = 2


class TFRecordOptions:
    """Options used for manipulating TFRecord files.

    Only `compression_type` changes the file format. `compression_level`, `window_bits` (ZLIB),
    `mem_level`, `compression_strategy` and `input_buffer_size` tune the codec; `flush_mode`,
    `output_buffer_size` and `compression_method` are accepted for compatibility and ignored.

    Example:
      >>> TFRecordOptions.get_compression_type_string(TFRecordOptions("GZIP"))
      'GZIP'
    """

    compression_type_map = {
        TFRecordCompressionType.ZLIB: "ZLIB",
        TFRecordCompressionType.GZIP: "GZIP",
        TFRecordCompressionType.NONE: "",
    }

    def __init__(
        self,
        compression_type=None,
        flush_mode=None,
        input_buffer_size=None,
        output_buffer_size=None,
        window_bits=None,
        compression_level=None,
        compression_method=None,
        mem_level=None,
        compression_strategy=None,
    ):
        # Validate now, but keep the value as given, as TensorFlow does.
        self.get_compression_type_string(compression_type)
        self.compression_type = compression_type
        self.flush_mode = flush_mode
        self.input_buffer_size = input_buffer_size
        self.output_buffer_size = output_buffer_size
        self.window_bits = window_bits
        self.compression_level = compression_level
        self.compression_method = compression_method
        self.mem_level = mem_level
        self.compression_strategy = compression_strategy

    @classmethod
    def get_compression_type_string(cls, options) -> str:
        """Returns "", "ZLIB" or "GZIP" for options, an enum value, a string or None.

        Raises:
          ValueError: if `options` names no known compression type.
        """
        if not options:
            return ""
        if isinstance(options, TFRecordOptions):
            return cls.get_compression_type_string(options.compression_type)
        if isinstance(options, int) and options in cls.compression_type_map:
            return cls.compression_type_map[options]
        if isinstance(options, str) and options in cls.compression_type_map.values():
            return options
        raise ValueError(
            f'Not a valid compression_type: "{options}"; '
            f'expected one of "", "ZLIB", "GZIP" or a TFRecordCompressionType'
        )

    def __repr__(self) -> str:
        return f"TFRecordOptions(compression_type={self.compression_type!r})"


def _as_options(options) -> TFRecordOptions:
    if isinstance(options, TFRecordOptions):
        return options
    return TFRecordOptions(options)


def _open(path: str, mode: str):
    try:
        return open(path, mode)
    except (FileNotFoundError, NotADirectoryError) as e:
        raise errors.NotFoundError(None, None, f"{path}: No such file or directory") from e
    except PermissionError as e:
        raise errors.PermissionDeniedError(None, None, f"{path}: Permission denied") from e
    except IsADirectoryError as e:
        raise errors.FailedPreconditionError(None, None, f"{path}: Is a directory") from e


def _masked_crc(data) -> int:
    return crc32c.mask(crc32c.value(data))


def _as_record_bytes(record) -> bytes | bytearray | memoryview:
    if isinstance(record, str):
        return record.encode("utf-8")
    if isinstance(record, bytes | bytearray | memoryview):
        return record
    raise TypeError(f"A TFRecord must be bytes (or str); got {type(record).__name__}")


def _record_header(length: int) -> bytes:
    length_bytes = struct.pack("<Q", length)
    return length_bytes + _FOOTER.pack(_masked_crc(length_bytes))


def encode_record(record) -> bytes:
    """Returns the framed bytes of one uncompressed TFRecord.

    Args:
      record: the payload, bytes-like (or str, encoded as UTF-8).

    Returns:
      length, masked CRC of the length, payload and masked CRC of the payload.

    Example:
      >>> len(encode_record(b"abc"))  # 8 + 4 + 3 + 4
      19
    """
    data = _as_record_bytes(record)
    return b"".join([_record_header(len(data)), data, _FOOTER.pack(_masked_crc(data))])


def _gzip_level(options: TFRecordOptions) -> int:
    level = options.compression_level
    return _DEFAULT_LEVEL if level is None or level < 0 else level


def _zlib_compressor(options: TFRecordOptions):
    def pick(value, default):
        return default if value is None else value

    return zlib.compressobj(
        pick(options.compression_level, _DEFAULT_LEVEL),
        zlib.DEFLATED,
        pick(options.window_bits, zlib.MAX_WBITS),
        pick(options.mem_level, zlib.DEF_MEM_LEVEL),
        pick(options.compression_strategy, zlib.Z_DEFAULT_STRATEGY),
    )


class _ZlibWriter:
    def __init__(self, raw, options: TFRecordOptions):
        self._raw = raw
        self._compressor = _zlib_compressor(options)

    def write(self, data) -> None:
        self._raw.write(self._compressor.compress(data))

    def flush(self) -> None:
        self._raw.write(self._compressor.flush(zlib.Z_SYNC_FLUSH))
        self._raw.flush()

    def close(self) -> None:
        try:
            self._raw.write(self._compressor.flush(zlib.Z_FINISH))
        finally:
            self._raw.close()


class TFRecordWriter:
    """A class to write records to a TFRecord file (TF1 `tf.python_io.TFRecordWriter`).

    Each `write` appends one framed record. A compressed file is complete only after `close`
    (which writes the stream trailer); `flush` makes everything written so far readable.

    Example:
      >>> import os, tempfile
      >>> path = os.path.join(tempfile.mkdtemp(), "data.tfrecord")
      >>> with TFRecordWriter(path, "GZIP") as writer:
      ...     writer.write(b"hello")
      >>> list(tf_record_iterator(path, "GZIP"))
      [b'hello']
    """

    def __init__(self, path, options=None):
        """Opens `path` for writing, truncating it.

        Args:
          path: file path (str or path-like).
          options: a TFRecordOptions, a TFRecordCompressionType value, "", "ZLIB", "GZIP" or None.

        Raises:
          NotFoundError: if the directory does not exist.
          ValueError: for an unknown compression type.
        """
        self._path = os.fspath(path)
        opts = _as_options(options)
        compression = TFRecordOptions.get_compression_type_string(opts)
        raw = _open(self._path, "wb")
        if compression == "GZIP":
            self._out = gzip.GzipFile(
                filename="", mode="wb", fileobj=raw, compresslevel=_gzip_level(opts), mtime=0
            )
            self._raw = raw
        elif compression == "ZLIB":
            self._out = _ZlibWriter(raw, opts)
            self._raw = None
        else:
            self._out = raw
            self._raw = None
        self._closed = False

    def write(self, record) -> None:
        """Writes one record (bytes-like, or str encoded as UTF-8).

        Raises:
          FailedPreconditionError: if the writer is closed.
          ResourceExhaustedError: the disk is full (other I/O errors: TF's class for the errno).
        """
        self._check_open()
        data = _as_record_bytes(record)
        with gfile.status_errors(self._path):  # e.g. a full disk: ResourceExhaustedError
            self._out.write(_record_header(len(data)))
            self._out.write(data)
            self._out.write(_FOOTER.pack(_masked_crc(data)))

    def flush(self) -> None:
        """Flushes buffered (and, when compressed, pending compressed) bytes to the file."""
        self._check_open()
        with gfile.status_errors(self._path):
            self._out.flush()
            if self._raw is not None:
                self._raw.flush()

    def close(self) -> None:
        """Finishes the stream and closes the file. Closing twice is harmless."""
        if self._closed:
            return
        self._closed = True
        with gfile.status_errors(self._path):
            try:
                self._out.close()
            finally:
                if self._raw is not None:
                    self._raw.close()

    def _check_open(self) -> None:
        if self._closed:
            raise errors.FailedPreconditionError(
                None, None, f"TFRecordWriter for {self._path} is closed"
            )

    def __enter__(self) -> TFRecordWriter:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class _PlainSource:
    def __init__(self, fileobj):
        self._file = fileobj

    def read(self, n: int) -> bytes:
        return self._file.read(n)


class _InflateSource:
    """Inflates a ZLIB or GZIP stream incrementally, `buffer_size` compressed bytes at a time.

    NOTE: an unfinished stream reads as a clean end, as in TensorFlow's ZlibInputStream: a
    file cut between records (or still being written) yields its complete records, and a cut
    inside a record is reported by the record framing. After more bytes are appended, reading
    resumes where it stopped.
    """

    def __init__(self, fileobj, window_bits: int, buffer_size: int):
        self._file = fileobj
        self._window_bits = window_bits
        self._buffer_size = buffer_size
        self._inflater = zlib.decompressobj(window_bits)

    def read(self, n: int) -> bytes:
        try:
            return self._read(n)
        except zlib.error as e:
            raise _CorruptStream(f"corrupted compressed stream ({e})") from e

    def _read(self, n: int) -> bytes:
        while True:
            inflater = self._inflater
            if inflater.unconsumed_tail:
                chunk = inflater.decompress(inflater.unconsumed_tail, n)
            elif inflater.eof and inflater.unused_data:
                # Another stream follows (concatenated files, gzip members): keep going.
                self._inflater = zlib.decompressobj(self._window_bits)
                chunk = self._inflater.decompress(inflater.unused_data, n)
            else:
                compressed = self._file.read(self._buffer_size)
                if not compressed:
                    return b"" if inflater.eof else inflater.decompress(b"", n)
                if inflater.eof:
                    self._inflater = zlib.decompressobj(self._window_bits)
                chunk = self._inflater.decompress(compressed, n)
            if chunk:
                return chunk


class _CorruptStream(Exception):
    pass


class TFRecordReaderStream:
    """Reads the records of one TFRecord file in order, without loading the file whole.

    Contract: `read_record()` returns the next record's bytes, or None at a clean end of file;
    `offset` is the uncompressed offset of the next record. A failed read raises
    `DataLossError` naming the file and offset and leaves `offset` unchanged, so a reader that
    follows a file still being written can retry once more bytes arrive (uncompressed and
    compressed files alike).

    Example:
      >>> stream = TFRecordReaderStream("<memory>", fileobj=io.BytesIO(encode_record(b"a")))
      >>> stream.read_record(), stream.offset, stream.read_record()
      (b'a', 17, None)
    """

    def __init__(self, path, compression=None, *, fileobj=None):
        """Opens `path` for reading.

        Args:
          path: file path; when `fileobj` is given, only a name used in error messages.
          compression: a TFRecordOptions, a TFRecordCompressionType value, "", "ZLIB", "GZIP"
            or None.
          fileobj: an open binary file object to read instead of opening `path`.

        Raises:
          NotFoundError: if `path` does not exist.
          ValueError: for an unknown compression type.
        """
        self.path = os.fspath(path) if fileobj is None else str(path)
        opts = _as_options(compression)
        self.compression = TFRecordOptions.get_compression_type_string(opts)
        self._file = _open(self.path, "rb") if fileobj is None else fileobj
        buffer_size = opts.input_buffer_size or _DEFAULT_BUFFER_SIZE
        window_bits = zlib.MAX_WBITS if opts.window_bits is None else opts.window_bits
        if self.compression == "GZIP":
            # zlib's own gzip decoder (header, CRC32 and length trailer checked), which unlike
            # GzipFile can resume after a short read.
            self._source = _InflateSource(self._file, window_bits + 16, buffer_size)
        elif self.compression == "ZLIB":
            self._source = _InflateSource(self._file, window_bits, buffer_size)
        else:
            self._source = _PlainSource(self._file)
        self._pending = b""  # Bytes read back from a failed record, returned first next time.
        self._offset = 0

    @property
    def offset(self) -> int:
        """The uncompressed byte offset of the next record."""
        return self._offset

    def read_record(self) -> bytes | None:
        """Returns the next record, or None at a clean end of file.

        Raises:
          DataLossError: for a truncated record, a checksum mismatch or a corrupted stream.
        """
        header = self._take(_HEADER_SIZE)
        if not header:
            return None
        if len(header) < _HEADER_SIZE:
            self._fail(header, "truncated record header")
        length, length_crc = _HEADER.unpack(header)
        if crc32c.unmask(length_crc) != crc32c.value(header[:8]):
            self._fail(header, "corrupted record (length checksum mismatch)")
        data = self._take(length)
        footer = self._take(_FOOTER_SIZE) if len(data) == length else b""
        if len(footer) < _FOOTER_SIZE:
            self._fail(header + data + footer, f"truncated record (expected {length} data bytes)")
        if crc32c.unmask(_FOOTER.unpack(footer)[0]) != crc32c.value(data):
            self._fail(header + data + footer, "corrupted record (data checksum mismatch)")
        self._offset += _HEADER_SIZE + length + _FOOTER_SIZE
        return data

    def close(self) -> None:
        self._file.close()

    def __iter__(self) -> Iterator[bytes]:
        while (record := self.read_record()) is not None:
            yield record

    def __enter__(self) -> TFRecordReaderStream:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _take(self, n: int) -> bytes:
        parts = []
        if self._pending:
            parts.append(self._pending[:n])
            self._pending = self._pending[n:]
            n -= len(parts[0])
        while n > 0:
            try:
                chunk = self._source.read(min(n, _MAX_READ))
            except _CorruptStream as e:
                raise errors.DataLossError(
                    None, None, f"{self.path}: {e} near record offset {self._offset}"
                ) from e
            if not chunk:
                break
            parts.append(chunk)
            n -= len(chunk)
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def _fail(self, consumed: bytes, what: str):
        self._pending = consumed + self._pending
        raise errors.DataLossError(None, None, f"{self.path}: {what} at offset {self._offset}")


def tf_record_iterator(path, options=None) -> Iterator[bytes]:
    """An iterator that reads the records from a TFRecord file (TF1 `tf.python_io`).

    Args:
      path: file path.
      options: a TFRecordOptions, a TFRecordCompressionType value, "", "ZLIB", "GZIP" or None.

    Yields:
      Each record's bytes, in order.

    Raises:
      NotFoundError: if `path` does not exist (on the first `next`).
      DataLossError: for a truncated or corrupted record.
    """
    with TFRecordReaderStream(path, options) as stream:
        yield from stream


def records_from_bytes(data, compression=None, name: str = "<memory>") -> list[bytes]:
    """Returns the records of a whole TFRecord file held in memory.

    Example:
      >>> records_from_bytes(encode_record(b"x") + encode_record(b"yz"))
      [b'x', b'yz']
    """
    with TFRecordReaderStream(name, compression, fileobj=io.BytesIO(data)) as stream:
        return list(stream)


def records_to_bytes(records, compression=None) -> bytes:
    """Returns the bytes of a TFRecord file holding `records`, compressed as asked.

    Example:
      >>> records_from_bytes(records_to_bytes([b"a", b"b"], "ZLIB"), "ZLIB")
      [b'a', b'b']
    """
    opts = _as_options(compression)
    kind = TFRecordOptions.get_compression_type_string(opts)
    framed = b"".join(encode_record(r) for r in records)
    if kind == "GZIP":
        return gzip.compress(framed, compresslevel=_gzip_level(opts), mtime=0)
    if kind == "ZLIB":
        compressor = _zlib_compressor(opts)
        return compressor.compress(framed) + compressor.flush()
    return framed
