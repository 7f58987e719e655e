"""Writing checkpoints in TensorFlow's own V2 bundle format, so TensorFlow can read them.

Selected by `TFX_CHECKPOINT_FORMAT=tensorflow` (see `bundle.write_bundle`); the default stays
tensorflux's format. The layout mirrors what `tf_bundle_index` reads:

`P.data-00000-of-00001`
    The tensors back to back in key order (no padding). Numeric tensors little-endian, C order;
    a string tensor is a varint64 length per element, the masked CRC32C of those lengths
    (each checksummed as a little-endian uint32, uint64 above 2**32 - 1), then the bytes.

`P.index`
    An immutable sorted table (LevelDB's table layout): one uncompressed data block holding
    the header entry (empty key -> `BundleHeaderProto`: one shard, little-endian, version 1)
    and one entry per tensor (name -> `BundleEntryProto`: dtype, shape, offset, size, masked
    CRC32C), every entry a restart point; an empty metaindex block; an index block whose one
    entry maps the last key to the data block's handle; the 48-byte footer with the magic.
    Every block is followed by a type byte (0, uncompressed) and the masked CRC32C of the
    block and that byte. Protobuf fields are encoded here by hand (no generated code).

Crash safety: the data file is written under a temporary name and renamed, then the index; an
existing index at the prefix is removed first, so a reader never pairs an index with another
save's data, and a kill leaves either the previous bundle, no bundle at the prefix (when it
was being overwritten), or the new one.
"""

from __future__ import annotations

import os
import struct

import numpy as np

from tensorflux.framework import errors
from tensorflux.lib.formats import atomic_files, crc32c
from tensorflux.lib.formats.tf_bundle_index import TABLE_MAGIC
from tensorflux.protos import tensor_shape_pb2

__all__ = ["encode_index", "tensor_payload", "write_tf_bundle"]

_DT_STRING = 7
_U32 = struct.Struct("<I")
_FOOTER_HANDLES = 40


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _field_varint(number: int, value: int) -> bytes:
    return _varint(number << 3) + _varint(value) if value else b""


def _field_bytes(number: int, value: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(value)) + value


def _header_proto() -> bytes:
    version = _field_varint(1, 1)  # VersionDef.producer = 1
    return _field_varint(1, 1) + _field_bytes(3, version)  # num_shards, LITTLE, version


def _entry_proto(entry: dict) -> bytes:
    shape = tensor_shape_pb2.TensorShapeProto()
    for size in entry["shape"]:
        shape.dim.add(size=int(size))
    return (_field_varint(1, entry["dtype"]) + _field_bytes(2, shape.SerializeToString())
            + _field_varint(4, entry["offset"]) + _field_varint(5, entry["size"])
            + _varint(6 << 3 | 5) + _U32.pack(entry["crc32c"]))


def _block(entries) -> bytes:
    """A table block with every entry a restart point (no shared key prefixes)."""
    body, restarts = bytearray(), []
    for key, value in entries:
        restarts.append(len(body))
        body += _varint(0) + _varint(len(key)) + _varint(len(value)) + key + value
    if not restarts:
        restarts = [0]
    for offset in restarts:
        body += _U32.pack(offset)
    body += _U32.pack(len(restarts))
    return bytes(body)


def _with_trailer(block: bytes) -> bytes:
    return block + b"\0" + _U32.pack(crc32c.mask(crc32c.value(block + b"\0")))


def encode_index(entries: list[dict]) -> bytes:
    """The bytes of a TF index for `entries` (dicts with name, dtype, shape, offset, size,
    masked crc32c), which must be sorted by name."""
    records = [(b"", _header_proto())]
    records += [(e["name"].encode("utf-8"), _entry_proto(e)) for e in entries]
    out = bytearray()
    data_block = _block(records)
    data_handle = _varint(0) + _varint(len(data_block))
    out += _with_trailer(data_block)
    meta_block = _block([])
    meta_handle = _varint(len(out)) + _varint(len(meta_block))
    out += _with_trailer(meta_block)
    index_block = _block([(records[-1][0], data_handle)])
    index_handle = _varint(len(out)) + _varint(len(index_block))
    out += _with_trailer(index_block)
    handles = meta_handle + index_handle
    out += handles + b"\0" * (_FOOTER_HANDLES - len(handles)) + struct.pack("<Q", TABLE_MAGIC)
    return bytes(out)


def tensor_payload(name: str, array: np.ndarray, enum: int, numeric_bytes) -> tuple:
    """(bytes, masked crc32c) of one tensor in TF's data layout; `numeric_bytes(name, array,
    enum)` gives a numeric tensor's little-endian bytes."""
    if enum != _DT_STRING:
        payload = bytes(numeric_bytes(name, array, enum))
        return payload, crc32c.mask(crc32c.value(payload))
    elements = []
    for element in array.ravel().tolist():
        if isinstance(element, str):
            element = element.encode("utf-8")
        elif not isinstance(element, bytes | bytearray):
            raise errors.InvalidArgumentError(
                None, None, f"Tensor '{name}': string tensors hold bytes or str; got an "
                f"element of type {type(element).__name__}")
        elements.append(bytes(element))
    lengths = b"".join(_varint(len(e)) for e in elements)
    crc = 0
    for element in elements:
        crc = crc32c.extend(crc, struct.pack("<I" if len(element) <= 0xFFFFFFFF else "<Q",
                                             len(element)))
    checksum = _U32.pack(crc32c.mask(crc))
    data = b"".join(elements)
    crc = crc32c.extend(crc32c.extend(crc, checksum), data)
    return lengths + checksum + data, crc32c.mask(crc)


def write_tf_bundle(prefix: str, items: list, enum_for, numeric_bytes, data_path: str,
                    index_path: str) -> None:
    """Writes `items` (`(name, array)` sorted by name) as a TF bundle; the caller holds the
    directory lock. `enum_for(name, dtype)` gives the DataType enum."""
    entries, position = [], 0
    pending = atomic_files.temp_path(data_path)
    index_temp = atomic_files.temp_path(index_path)
    try:
        with open(pending, "wb") as f:
            for name, array in items:
                enum = enum_for(name, array.dtype)
                payload, masked = tensor_payload(name, array, enum, numeric_bytes)
                f.write(payload)
                entries.append({"name": name, "dtype": enum, "shape": list(array.shape),
                                "offset": position, "size": len(payload), "crc32c": masked})
                position += len(payload)
            f.flush()
            os.fsync(f.fileno())
        with open(index_temp, "wb") as f:
            f.write(encode_index(entries))
            f.flush()
            os.fsync(f.fileno())
        atomic_files.remove_quietly(index_path)
        os.replace(pending, data_path)
        os.replace(index_temp, index_path)
    except BaseException:
        atomic_files.remove_quietly(pending)
        atomic_files.remove_quietly(index_temp)
        raise
    atomic_files.fsync_directory(os.path.dirname(index_path) or ".")
