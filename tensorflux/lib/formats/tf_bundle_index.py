"""Reading TensorFlow's own V2 checkpoint index (`P.index` written by TF's BundleWriter).

TensorFlow stores a checkpoint's index as an immutable sorted table (the LevelDB table layout
of TF's `lib/io/table`): data blocks of prefix-compressed key/value entries, an index block
mapping each data block's last key to its BlockHandle, and a 48-byte footer ending in the
magic number 0xdb4775248b80fb57. Every block is followed by a one-byte compression type and a
masked CRC32C of the block and that byte. The entry with the empty key holds a
`BundleHeaderProto`; every other key is a tensor name whose value is a `BundleEntryProto`
(dtype, shape, shard, offset and size in the data file, masked CRC32C of the bytes).

This module parses that index into the entry dicts `bundle.BundleReader` uses, so a
checkpoint written by TensorFlow can be restored. Only uncompressed blocks are read (TF's
BundleWriter writes no compression); sliced (partitioned) entries are refused with
UnimplementedError. Parsing executes nothing from the file; any inconsistency is a
DataLossError naming the file.
"""

from __future__ import annotations

import struct

from tensorflux.framework import errors
from tensorflux.lib.formats import crc32c
from tensorflux.protos import tensor_shape_pb2

__all__ = ["TABLE_MAGIC", "is_tf_index", "parse_tf_index"]

TABLE_MAGIC = 0xDB4775248B80FB57
_FOOTER_SIZE = 48
_BLOCK_TRAILER = 5
_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")


def _data_loss(path, message) -> errors.DataLossError:
    return errors.DataLossError(None, None, f"{path}: {message}")


def is_tf_index(blob: bytes) -> bool:
    """Whether `blob` ends in TensorFlow's table footer magic."""
    return len(blob) >= _FOOTER_SIZE and _U64.unpack_from(blob, len(blob) - 8)[0] == TABLE_MAGIC


def _varint(data, pos, path):
    result = shift = 0
    while True:
        if pos >= len(data) or shift > 63:
            raise _data_loss(path, "malformed varint in the checkpoint index")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7


def _block(blob, handle, path) -> bytes:
    offset, size = handle
    end = offset + size + _BLOCK_TRAILER
    if end > len(blob):
        raise _data_loss(path, f"block [{offset}, {end}) runs past the end of the index")
    contents = blob[offset:offset + size]
    kind = blob[offset + size]
    (stored,) = _U32.unpack_from(blob, offset + size + 1)
    if crc32c.unmask(stored) != crc32c.value(blob[offset:offset + size + 1]):
        raise _data_loss(path, f"checksum mismatch in the index block at offset {offset}")
    if kind != 0:
        raise errors.UnimplementedError(
            None, None, f"{path}: compressed checkpoint index blocks (type {kind}) are not "
                        f"supported")
    return contents


def _block_entries(block, path):
    """The (key, value) pairs of one block, in order."""
    if len(block) < 4:
        raise _data_loss(path, "index block too short")
    (restarts,) = _U32.unpack_from(block, len(block) - 4)
    limit = len(block) - 4 - 4 * restarts
    if limit < 0:
        raise _data_loss(path, "index block restart array out of range")
    pos, key = 0, b""
    while pos < limit:
        shared, pos = _varint(block, pos, path)
        unshared, pos = _varint(block, pos, path)
        value_length, pos = _varint(block, pos, path)
        if shared > len(key) or pos + unshared + value_length > limit:
            raise _data_loss(path, "malformed entry in an index block")
        key = key[:shared] + block[pos:pos + unshared]
        pos += unshared
        yield key, block[pos:pos + value_length]
        pos += value_length


def _handle(data, pos, path):
    offset, pos = _varint(data, pos, path)
    size, pos = _varint(data, pos, path)
    return (offset, size), pos


def _fields(data, path):
    """(field number, wire type, value) of a serialized protobuf message."""
    pos = 0
    while pos < len(data):
        tag, pos = _varint(data, pos, path)
        number, wire = tag >> 3, tag & 7
        if wire == 0:
            value, pos = _varint(data, pos, path)
        elif wire == 1:
            value, pos = data[pos:pos + 8], pos + 8
        elif wire == 2:
            length, pos = _varint(data, pos, path)
            value, pos = data[pos:pos + length], pos + length
        elif wire == 5:
            value, pos = data[pos:pos + 4], pos + 4
        else:
            raise _data_loss(path, f"unsupported protobuf wire type {wire} in the index")
        if pos > len(data):
            raise _data_loss(path, "truncated protobuf message in the index")
        yield number, wire, value


def _signed64(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def _entry(name: str, value: bytes, path) -> dict:
    entry = {"name": name, "dtype": 0, "shape": [], "shard_id": 0, "offset": 0, "size": 0,
             "crc32c": 0}
    for number, wire, field in _fields(value, path):
        if number == 1 and wire == 0:
            entry["dtype"] = field
        elif number == 2 and wire == 2:
            shape = tensor_shape_pb2.TensorShapeProto.FromString(bytes(field))
            entry["shape"] = [int(d.size) for d in shape.dim]
        elif number == 3 and wire == 0:
            entry["shard_id"] = _signed64(field)
        elif number == 4 and wire == 0:
            entry["offset"] = _signed64(field)
        elif number == 5 and wire == 0:
            entry["size"] = _signed64(field)
        elif number == 6 and wire == 5:
            entry["crc32c"] = _U32.unpack(field)[0]
        elif number == 7:
            raise errors.UnimplementedError(
                None, None, f"{path}: tensor '{name}' is stored as slices (a partitioned "
                            f"variable), which tensorflux cannot read from a TF checkpoint")
    if min(entry["offset"], entry["size"], entry["shard_id"]) < 0:
        raise _data_loss(path, f"tensor '{name}' has a negative offset, size or shard")
    return entry


def parse_tf_index(path, blob: bytes):
    """Parses a TensorFlow checkpoint index.

    Args:
      path: the index file's path (for messages).
      blob: its bytes.

    Returns:
      (entries, num_shards): tensor name -> {"name", "dtype" (DataType enum), "shape",
      "shard_id", "offset", "size", "crc32c" (masked)}, and the header's shard count.

    Raises:
      DataLossError: a malformed or corrupted index.
      UnimplementedError: compressed blocks, big-endian data or sliced tensors.
    """
    if not is_tf_index(blob):
        raise _data_loss(path, "not a TensorFlow checkpoint index (no table magic)")
    footer = blob[len(blob) - _FOOTER_SIZE:]
    _, pos = _handle(footer, 0, path)  # metaindex: unused by checkpoints
    index_handle, _ = _handle(footer, pos, path)
    entries, num_shards = {}, None
    for _, handle_bytes in _block_entries(_block(blob, index_handle, path), path):
        handle, _ = _handle(handle_bytes, 0, path)
        for key, value in _block_entries(_block(blob, handle, path), path):
            if key == b"":
                num_shards = 1
                for number, wire, field in _fields(value, path):
                    if number == 1 and wire == 0:
                        num_shards = field
                    elif number == 2 and wire == 0 and field != 0:
                        raise errors.UnimplementedError(
                            None, None, f"{path}: big-endian TF checkpoints are not supported")
                continue
            name = key.decode("utf-8")
            entries[name] = _entry(name, value, path)
    if num_shards is None:
        raise _data_loss(path, "the checkpoint index has no header entry")
    return entries, num_shards
