"""Checkpoint bundles: one data file of raw tensor bytes plus an index, written atomically.

For a prefix `P` a bundle is two files:

`P.data-00000-of-00001`
    The tensors' bytes, in key order, each starting at an 8-byte aligned offset (zero padding
    between them). Numeric tensors are little-endian, C order. A string tensor (DT_STRING) is,
    per element in C order, a uint64 little-endian length followed by that many bytes.

`P.index`
    `b"TFLXCKPT"`, uint32 LE format version (1), uint64 LE body length, the body (UTF-8 JSON),
    then uint32 LE masked CRC32C of the body. The body is
    `{"version": 1, "num_shards": 1, "tensors": [entry, ...]}` with entries sorted by name:
    `{"name": str, "dtype": DataType enum, "shape": [int, ...], "offset": int, "size": int,
    "crc32c": masked CRC32C of the tensor's `size` bytes}`.

JSON rather than a protobuf keeps this layer free of generated code; loading it executes
nothing. Any corruption is a `DataLossError`.

`BundleReader` also reads checkpoints written by TensorFlow itself (single shard, no slices):
an index ending in TF's table magic is parsed by `tf_bundle_index`, and its string tensors use
TF's layout (varint lengths, a checksum of the lengths, then the bytes). Writing stays in the
format above unless `TFX_CHECKPOINT_FORMAT=tensorflow` selects TF's own layout
(`tf_bundle_writer`), for checkpoints TensorFlow must read.

Crash safety (the invariant): at every instant, the index at `P.index` and the data file it
leads to form one complete bundle, the previous one or the new one. A save (`write_bundle`,
serialized per directory by `atomic_files.directory_lock`):

1. writes the data to a *pending* name `P.data-00000-of-00001.tfxtmp-<pid>-<hex>`, fsynced;
   the committed index does not name it, so readers still see the previous bundle;
2. writes the index to a temporary name, listing the pending file in `"data_files"`, fsyncs
   it and renames it over `P.index` (the commit point; the directory is fsynced);
3. renames the pending file over `P.data-00000-of-00001`.

A reader opens the first file of `"data_files"` that exists, else `P.data-00000-of-00001`:
between 2 and 3 that is the pending file (new data, new index); after 3 the pending file is
gone and the standard name holds the new data. The old data file is replaced only in 3,
after the new index is committed, and no pending name is ever reused, so an old index can
never lead to new data. A kill leaves temporary files only: the next save in the directory
finishes a committed one (renames its pending data, as 3 would) and deletes the others.
"""

from __future__ import annotations

import difflib
import json
import math
import os
import struct
import threading

import numpy as np

from tensorflux.framework import errors
from tensorflux.lib.formats import atomic_files, crc32c, tf_bundle_index, tf_bundle_writer

_MAGIC = b"TFLXCKPT"
_VERSION = 1
_PREAMBLE = struct.Struct("<8sIQ")
_CRC = struct.Struct("<I")
_LENGTH = struct.Struct("<Q")
_ALIGNMENT = 8

_DATA_SUFFIX = ".data-00000-of-00001"
_DT_STRING = 7
_DT_BFLOAT16 = 14

# TensorFlow DataType enum -> NumPy dtype, for the types stored as raw little-endian bytes.
_ENUM_TO_NUMPY = {
    1: np.dtype("<f4"),
    2: np.dtype("<f8"),
    3: np.dtype("<i4"),
    4: np.dtype("u1"),
    5: np.dtype("<i2"),
    6: np.dtype("i1"),
    8: np.dtype("<c8"),
    9: np.dtype("<i8"),
    10: np.dtype("?"),
    17: np.dtype("<u2"),
    18: np.dtype("<c16"),
    19: np.dtype("<f2"),
    22: np.dtype("<u4"),
    23: np.dtype("<u8"),
}
# Keyed by (kind, itemsize) so that equivalent spellings ('l' vs 'q', '>f4') all match.
_KIND_SIZE_TO_ENUM = {(dt.kind, dt.itemsize): enum for enum, dt in _ENUM_TO_NUMPY.items()}
_KNOWN_ENUMS = set(_ENUM_TO_NUMPY) | {_DT_STRING, _DT_BFLOAT16}


def data_filename(prefix) -> str:
    """Returns the path of the (single) data file of the bundle at `prefix`."""
    return os.fspath(prefix) + _DATA_SUFFIX


def index_filename(prefix) -> str:
    """Returns the path of the index file of the bundle at `prefix`."""
    return os.fspath(prefix) + ".index"


def bundle_exists(prefix) -> bool:
    """Returns True if a bundle was committed at `prefix` (its index file exists)."""
    return os.path.isfile(index_filename(prefix))


def _enum_for(name: str, dtype: np.dtype) -> int:
    if dtype.kind in "OSU":
        return _DT_STRING
    if dtype.name == "bfloat16":
        raise errors.UnimplementedError(
            None, None, f"Tensor '{name}': bfloat16 is not supported in tensorflux checkpoints"
        )
    enum = _KIND_SIZE_TO_ENUM.get((dtype.kind, dtype.itemsize))
    if enum is None:
        raise errors.InvalidArgumentError(
            None,
            None,
            f"Tensor '{name}': dtype {dtype} cannot be saved in a checkpoint; "
            f"expected a TensorFlow numeric, bool or string type",
        )
    return enum


def _string_bytes(name: str, array: np.ndarray) -> bytes:
    parts = []
    for element in array.ravel().tolist():
        if isinstance(element, str):
            element = element.encode("utf-8")
        elif not isinstance(element, bytes | bytearray):
            raise errors.InvalidArgumentError(
                None,
                None,
                f"Tensor '{name}': string tensors hold bytes or str; "
                f"got an element of type {type(element).__name__}",
            )
        parts.append(_LENGTH.pack(len(element)))
        parts.append(element)
    return b"".join(parts)


def _tensor_bytes(name: str, array: np.ndarray, enum: int):
    if enum == _DT_STRING:
        return _string_bytes(name, array)
    little = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<"))
    return little.reshape(-1).view(np.uint8)


def _write_data_file(path: str, items: list[tuple[str, np.ndarray]]) -> list[dict]:
    entries = []
    position = 0
    with open(path, "wb") as f:
        for name, array in items:
            enum = _enum_for(name, array.dtype)
            payload = _tensor_bytes(name, array, enum)
            padding = -position % _ALIGNMENT
            if padding:
                f.write(b"\0" * padding)
                position += padding
            f.write(payload)
            size = len(payload)
            entries.append(
                {
                    "name": name,
                    "dtype": enum,
                    "shape": list(array.shape),
                    "offset": position,
                    "size": size,
                    "crc32c": crc32c.mask(crc32c.value(payload)),
                }
            )
            position += size
        f.flush()
        os.fsync(f.fileno())
    return entries


def _write_index_file(path: str, entries: list[dict], data_files=()) -> None:
    document = {"version": _VERSION, "num_shards": 1, "tensors": entries,
                "data_files": list(data_files)}
    body = json.dumps(document, sort_keys=True, separators=(",", ":")).encode("utf-8")
    with open(path, "wb") as f:
        f.write(_PREAMBLE.pack(_MAGIC, _VERSION, len(body)))
        f.write(body)
        f.write(_CRC.pack(crc32c.mask(crc32c.value(body))))
        f.flush()
        os.fsync(f.fileno())


def write_bundle(prefix, tensors: dict[str, np.ndarray]) -> None:
    """Writes `tensors` as the bundle at `prefix`, replacing any bundle already there.

    Readers see either the previous bundle or the new one, whenever the process dies (see
    the module docstring for how); temporary files a killed save left in the directory are
    finished or removed first.

    Args:
      prefix: path prefix (str or path-like); the directory is created if needed.
      tensors: maps non-empty names to arrays (or values `np.asarray` accepts). Object, bytes
        and str arrays are saved as DT_STRING and read back as object arrays of bytes.

    Raises:
      InvalidArgumentError: for an empty or non-str name or an unsupported dtype.
      UnimplementedError: for bfloat16 tensors.

    Example:
      >>> import tempfile
      >>> prefix = os.path.join(tempfile.mkdtemp(), "model.ckpt-1")
      >>> write_bundle(prefix, {"w": np.eye(2, dtype=np.float32)})
      >>> BundleReader(prefix).get_tensor("w")
      array([[1., 0.],
             [0., 1.]], dtype=float32)
    """
    prefix = os.fspath(prefix)
    items = []
    for name in sorted(tensors, key=str):
        if not isinstance(name, str) or not name:
            raise errors.InvalidArgumentError(
                None, None, f"Checkpoint tensor names must be non-empty strings; got {name!r}"
            )
        items.append((name, np.asarray(tensors[name])))
    directory = os.path.dirname(prefix) or "."
    os.makedirs(directory, exist_ok=True)
    data_path, index_path = data_filename(prefix), index_filename(prefix)
    with atomic_files.directory_lock(directory):
        recover_directory(directory)
        if os.environ.get("TFX_CHECKPOINT_FORMAT", "").lower() == "tensorflow":
            # TensorFlow's own index and data layout, for checkpoints TF must read.
            tf_bundle_writer.write_tf_bundle(prefix, items, _enum_for, _tensor_bytes,
                                             data_path, index_path)
            return
        pending = atomic_files.temp_path(data_path)
        index_temp = atomic_files.temp_path(index_path)
        committed = False
        try:
            entries = _write_data_file(pending, items)
            _write_index_file(index_temp, entries, [os.path.basename(pending)])
            os.replace(index_temp, index_path)
            committed = True
            atomic_files.fsync_directory(directory)
            os.replace(pending, data_path)
        except BaseException:
            atomic_files.remove_quietly(index_temp)
            if not committed:
                atomic_files.remove_quietly(pending)
            raise
        atomic_files.fsync_directory(directory)


def _is_bundle_temp(name: str) -> bool:
    final = atomic_files.final_name(name)
    return final.endswith(".index") or final.endswith(_DATA_SUFFIX)


def recover_directory(directory: str) -> None:
    """Finishes or removes what interrupted saves left in `directory`.

    A pending data file its index names (the save was committed) is renamed to its standard
    name, as the save would have done; every other temporary file of a bundle (only written
    under the directory's lock, which the caller holds) and every temporary file of a process
    that is gone (`.meta`, `checkpoint` state) is deleted, as are data files without an
    index (left by an interrupted deletion).
    """
    directory = directory or "."
    for name in atomic_files.stale_temporaries(directory, _is_bundle_temp):
        path = os.path.join(directory, name)
        final = atomic_files.final_name(path)
        if final.endswith(_DATA_SUFFIX) and \
                name in _named_data_files(final[:-len(_DATA_SUFFIX)]):
            try:
                os.replace(path, final)
            except OSError:
                pass
        else:
            atomic_files.remove_quietly(path)
    # A data file without its index is what an interrupted deletion left: never readable.
    for name in os.listdir(directory):
        if name.endswith(_DATA_SUFFIX) and not os.path.exists(
                index_filename(os.path.join(directory, name[:-len(_DATA_SUFFIX)]))):
            atomic_files.remove_quietly(os.path.join(directory, name))
    atomic_files.fsync_directory(directory)


def _named_data_files(prefix: str) -> list:
    """The data files the committed index at `prefix` names (none when it is unreadable)."""
    try:
        with open(index_filename(prefix), "rb") as f:
            return _parse_document(index_filename(prefix), f.read()).get("data_files", [])
    except (OSError, errors.OpError):
        return []


def _data_loss(message: str) -> errors.DataLossError:
    return errors.DataLossError(None, None, message)


def _is_count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _parse_index(path: str, blob: bytes) -> dict[str, dict]:
    document = _parse_document(path, blob)
    try:
        entries = {}
        for raw in document["tensors"]:
            entry = _check_entry(raw)
            entries[entry["name"]] = entry
    except (ValueError, KeyError, TypeError) as e:
        raise _data_loss(f"{path}: malformed checkpoint index ({e})") from e
    return entries


def _data_candidates(path: str, document: dict) -> list:
    """Basenames of the data files an index leads to, in the order a reader tries them."""
    named = document.get("data_files", [])
    if not isinstance(named, list) or not all(
            isinstance(n, str) and n and os.path.basename(n) == n for n in named):
        raise _data_loss(f"{path}: malformed checkpoint index (bad data_files {named!r})")
    return named


def _parse_document(path: str, blob: bytes) -> dict:
    if len(blob) < _PREAMBLE.size or not blob.startswith(_MAGIC):
        raise _data_loss(f"{path} is not a tensorflux checkpoint index (bad magic or too short)")
    _, version, body_length = _PREAMBLE.unpack_from(blob)
    if version != _VERSION:
        raise _data_loss(
            f"{path}: unsupported checkpoint index version {version}; expected {_VERSION}"
        )
    end = _PREAMBLE.size + body_length
    if len(blob) != end + _CRC.size:
        raise _data_loss(
            f"{path}: index is truncated or has trailing bytes "
            f"({len(blob)} bytes; expected {end + _CRC.size})"
        )
    body = blob[_PREAMBLE.size : end]
    (stored_crc,) = _CRC.unpack_from(blob, end)
    if crc32c.unmask(stored_crc) != crc32c.value(body):
        raise _data_loss(f"{path}: checksum mismatch in the checkpoint index")
    try:
        document = json.loads(body.decode("utf-8"))
    except ValueError as e:
        raise _data_loss(f"{path}: malformed checkpoint index ({e})") from e
    if not isinstance(document, dict):
        raise _data_loss(f"{path}: malformed checkpoint index (not an object)")
    return document


def _check_entry(entry: dict) -> dict:
    name, enum, shape = entry["name"], entry["dtype"], entry["shape"]
    if not isinstance(name, str) or enum not in _KNOWN_ENUMS or not isinstance(shape, list):
        raise ValueError(f"bad entry {entry!r}")
    fields = [*shape, entry["offset"], entry["size"], entry["crc32c"]]
    if not all(_is_count(v) for v in fields):
        raise ValueError(f"bad entry {entry!r}")
    if enum in _ENUM_TO_NUMPY:
        expected = math.prod(shape) * _ENUM_TO_NUMPY[enum].itemsize
    elif enum == _DT_BFLOAT16:
        expected = math.prod(shape) * 2
    else:
        expected = entry["size"]
    if entry["size"] != expected:
        raise ValueError(
            f"tensor '{name}' has size {entry['size']}; its shape and dtype need {expected}"
        )
    return entry


class BundleReader:
    """Reads tensors from the bundle at a prefix, one at a time, each checked by CRC32C.

    Reads are positional (`pread`), so one reader may serve concurrent restores; only the
    index is held in memory.

    Example:
      >>> import tempfile
      >>> prefix = os.path.join(tempfile.mkdtemp(), "ckpt")
      >>> write_bundle(prefix, {"step": np.int64(7)})
      >>> with BundleReader(prefix) as reader:
      ...     reader.keys(), reader.get_dtype_and_shape("step"), reader.get_tensor("step")
      (['step'], (9, ()), array(7))
    """

    def __init__(self, prefix):
        """Opens the bundle at `prefix` and loads its index.

        Raises:
          NotFoundError: if the index or data file is missing (names the path).
          DataLossError: if the index is corrupted.
        """
        self.prefix = os.fspath(prefix)
        self.index_path = index_filename(self.prefix)
        self.data_path = data_filename(self.prefix)
        try:
            with open(self.index_path, "rb") as f:
                blob = f.read()
        except FileNotFoundError as e:
            raise errors.NotFoundError(
                None, None, f"Checkpoint index file not found: {self.index_path}"
            ) from e
        self._tf_format = tf_bundle_index.is_tf_index(blob) and not blob.startswith(_MAGIC)
        if self._tf_format:
            # A checkpoint written by TensorFlow itself (its sorted-table index).
            self._entries = self._tf_entries(blob)
            candidates = []
        else:
            self._entries = _parse_index(self.index_path, blob)
            candidates = _data_candidates(self.index_path,
                                          _parse_document(self.index_path, blob))
        directory = os.path.dirname(self.prefix)
        self._file = None
        # The first named file that exists: a pending file of a committed save, else the
        # standard name (the module docstring says why this is always the index's data).
        for name in candidates:
            try:
                self._file = open(os.path.join(directory, name), "rb")
                self.data_path = os.path.join(directory, name)
                break
            except FileNotFoundError:
                continue
        if self._file is None:
            try:
                self._file = open(self.data_path, "rb")
            except FileNotFoundError as e:
                raise errors.NotFoundError(
                    None, None, f"Checkpoint data file not found: {self.data_path}"
                ) from e
        self._lock = threading.Lock()

    def _tf_entries(self, blob: bytes) -> dict[str, dict]:
        entries, num_shards = tf_bundle_index.parse_tf_index(self.index_path, blob)
        if num_shards != 1:
            raise errors.UnimplementedError(
                None, None, f"{self.index_path}: a TensorFlow checkpoint in {num_shards} "
                f"shards; tensorflux reads single-shard TF checkpoints")
        for entry in entries.values():
            if (entry["dtype"] not in _KNOWN_ENUMS or entry["shard_id"] != 0
                    or any(d < 0 for d in entry["shape"])):
                raise _data_loss(f"{self.index_path}: malformed entry for tensor "
                                 f"'{entry['name']}'")
        return entries

    def keys(self) -> list[str]:
        """Returns the sorted tensor names."""
        return sorted(self._entries)

    def has_tensor(self, name: str) -> bool:
        return name in self._entries

    def get_dtype_and_shape(self, name: str) -> tuple[int, tuple[int, ...]]:
        """Returns (TensorFlow DataType enum value, shape tuple) of tensor `name`.

        Raises:
          NotFoundError: if there is no tensor `name`.
        """
        entry = self._entry(name)
        return entry["dtype"], tuple(entry["shape"])

    def get_tensor(self, name: str) -> np.ndarray:
        """Reads tensor `name` and verifies its checksum.

        Returns:
          A new, writable ndarray in native byte order; string tensors are object arrays of
          bytes.

        Raises:
          NotFoundError: if there is no tensor `name`.
          DataLossError: if the data file is truncated or the bytes do not match the checksum.
          UnimplementedError: for a bfloat16 tensor.
        """
        entry = self._entry(name)
        enum, shape = entry["dtype"], tuple(entry["shape"])
        if enum == _DT_BFLOAT16:
            raise errors.UnimplementedError(
                None,
                None,
                f"Tensor '{name}' in {self.data_path} is bfloat16, which tensorflux "
                f"checkpoints do not support",
            )
        buffer = self._read(entry)
        if enum == _DT_STRING and self._tf_format:
            return self._parse_tf_strings(name, buffer, shape, entry["crc32c"])
        actual = crc32c.value(buffer)
        if actual != crc32c.unmask(entry["crc32c"]):
            raise _data_loss(
                f"Checksum mismatch for tensor '{name}' in {self.data_path}: expected "
                f"{crc32c.unmask(entry['crc32c']):#010x}, got {actual:#010x}"
            )
        if enum == _DT_STRING:
            return self._parse_strings(name, buffer, shape)
        array = buffer.view(_ENUM_TO_NUMPY[enum]).reshape(shape)
        if not array.dtype.isnative:
            array = array.astype(array.dtype.newbyteorder("="))
        return array

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> BundleReader:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _entry(self, name: str) -> dict:
        entry = self._entries.get(name)
        if entry is None:
            close = difflib.get_close_matches(str(name), list(self._entries), n=3)
            hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
            raise errors.NotFoundError(
                None, None, f"Key '{name}' not found in checkpoint {self.prefix}{hint}"
            )
        return entry

    def _read(self, entry: dict) -> np.ndarray:
        offset, size = entry["offset"], entry["size"]
        file_size = os.fstat(self._file.fileno()).st_size
        if offset + size > file_size:
            raise _data_loss(
                f"Data file {self.data_path} is truncated: tensor '{entry['name']}' needs bytes "
                f"[{offset}, {offset + size}) but the file has {file_size} bytes"
            )
        buffer = np.empty(size, dtype=np.uint8)
        view = memoryview(buffer)
        done = 0
        while done < size:
            count = self._read_into(view[done:], offset + done)
            if count == 0:
                raise _data_loss(
                    f"Data file {self.data_path} ended while reading tensor "
                    f"'{entry['name']}' at offset {offset + done}"
                )
            done += count
        return buffer

    def _read_into(self, view: memoryview, offset: int) -> int:
        if hasattr(os, "preadv"):
            return os.preadv(self._file.fileno(), [view], offset)
        with self._lock:
            self._file.seek(offset)
            return self._file.readinto(view)

    def _parse_tf_strings(self, name: str, buffer: np.ndarray, shape: tuple,
                          masked_crc: int) -> np.ndarray:
        """TF's string layout: a varint64 length per element, a masked CRC32C of the lengths,
        then the elements' bytes back to back. TF checksums each length as a little-endian
        uint32 (uint64 above 2**32 - 1), not as its varint; the tensor's checksum covers those
        length words, the 4 checksum bytes and the elements' bytes."""
        data = buffer.tobytes()
        count = math.prod(shape)
        lengths, position = [], 0
        try:
            for _ in range(count):
                length = shift = 0
                while True:
                    byte = data[position]
                    position += 1
                    length |= (byte & 0x7F) << shift
                    shift += 7
                    if not byte & 0x80:
                        break
                lengths.append(length)
            checksum_bytes = data[position:position + _CRC.size]
            (stored,) = _CRC.unpack(checksum_bytes)
        except (IndexError, struct.error):
            stored = None
        crc = 0
        for length in lengths:
            crc = crc32c.extend(crc, struct.pack("<I" if length <= 0xFFFFFFFF else "<Q",
                                                 length))
        if stored is None or crc32c.unmask(stored) != crc:
            raise _data_loss(f"Tensor '{name}' in {self.data_path}: malformed string lengths "
                             f"(length checksum mismatch)")
        position += _CRC.size
        if position + sum(lengths) != len(data):
            raise _data_loss(f"Tensor '{name}' in {self.data_path}: malformed string tensor "
                             f"data (expected {count} elements in {len(data)} bytes)")
        crc = crc32c.extend(crc32c.extend(crc, checksum_bytes), data[position:])
        if crc != crc32c.unmask(masked_crc):
            raise _data_loss(f"Checksum mismatch for tensor '{name}' in {self.data_path}")
        result = np.empty(count, dtype=object)
        for i, length in enumerate(lengths):
            result[i] = data[position:position + length]
            position += length
        return result.reshape(shape)

    def _parse_strings(self, name: str, buffer: np.ndarray, shape: tuple) -> np.ndarray:
        data = buffer.tobytes()
        count = math.prod(shape)
        result = np.empty(count, dtype=object)
        position = 0
        for i in range(count):
            if position + _LENGTH.size > len(data):
                break
            (length,) = _LENGTH.unpack_from(data, position)
            position += _LENGTH.size
            if position + length > len(data):
                break
            result[i] = data[position : position + length]
            position += length
        else:
            if position == len(data):
                return result.reshape(shape)
        raise _data_loss(
            f"Tensor '{name}' in {self.data_path}: malformed string tensor data "
            f"(expected {count} elements in {len(data)} bytes)"
        )
