"""Tensors on the wire: TensorProtos for small values, raw byte frames for transfers.

`encode_tensor` / `decode_tensor` fill and read a TensorProto with one copy each way (raw
`tensor_content`; strings as `string_val`). A RecvTensor stream is a sequence of *frames*,
each a serialized `RecvTensorResponse`: a header (dtype, shape, total bytes, sender
incarnation, deadness; a small tensor's bytes inline), then, for a large tensor, frames that
hold only the `chunk` field. Those frames are encoded by hand (tag, length, then the bytes
straight from the array's buffer) and decoded by slicing, so a chunk is copied once into the
frame and once out of it into the preallocated result: protobuf never holds the payload.
Any protobuf reader still parses every frame as a `RecvTensorResponse`.

Large received tensors (and the snapshots a worker takes of large fetched variables) land in
buffers that are reused from step to step (`ReceiveBuffers`): fresh memory for every 100 MB
transfer costs more in page faults (the kernel zeroing it) than the transfer itself.
"""

from __future__ import annotations

import sys
import threading

import numpy as np

from tensorflux.framework import dtypes, errors
from tensorflux.framework.tensor_util import (
    DEFAULT_MAX_TENSOR_BYTES,
    declared_size,
    make_ndarray,
    make_tensor_proto,
)
from tensorflux.protos import worker_pb2

CHUNK_BYTES = 1 << 20
INLINE_BYTES = 64 << 10
_CHUNK_TAG = 0x12  # field 2 (`chunk`), wire type 2 (length-delimited)
_STRING = dtypes.string.as_datatype_enum


def _numeric(array: np.ndarray) -> bool:
    return array.dtype != object and array.dtype.kind not in "SUV"


def encode_tensor(value, proto) -> None:
    """Fills `proto` (a TensorProto) with `value`'s dtype, shape and raw bytes."""
    array = np.asarray(value)
    if not _numeric(array):
        proto.CopyFrom(make_tensor_proto(array))
        return
    proto.dtype = dtypes.as_dtype(array.dtype).as_datatype_enum
    proto.tensor_shape.SetInParent()
    dims = proto.tensor_shape.dim
    for size in array.shape:
        dims.add(size=size)
    proto.tensor_content = np.ascontiguousarray(array).tobytes()


def decode_tensor(proto, max_bytes: int = DEFAULT_MAX_TENSOR_BYTES) -> np.ndarray:
    """The writable ndarray a TensorProto holds.

    Raises:
        InvalidArgumentError: the declared size is over `max_bytes` or disagrees with the
            content (nothing is allocated for a refused tensor).
    """
    if proto.dtype == _STRING or not proto.tensor_content:
        return make_ndarray(proto, max_bytes)
    dtype, shape, count = declared_size(proto, max_bytes)
    dtype = np.dtype(dtype.base_dtype.as_numpy_dtype)
    if dtype.hasobject or len(proto.tensor_content) != count * dtype.itemsize:
        raise errors.InvalidArgumentError(
            None, None, f"TensorProto's tensor_content has {len(proto.tensor_content)} bytes; "
            f"its shape {shape} of {dtype.name} needs {count * dtype.itemsize}")
    out = np.empty(shape, dtype)
    out.reshape(-1).view(np.uint8)[:] = np.frombuffer(proto.tensor_content, np.uint8)
    return out


class ReceiveBuffers:
    """Arrays for large received tensors, handed out again once nobody holds them.

    Contract: `empty(shape, dtype)` returns an array owning its data, like `np.empty`. An array
    goes out again only when this pool holds the sole reference to it (CPython reference
    counts: a caller's variable, a view or an exported buffer all count), so no caller can
    observe the reuse. Idle arrays are kept up to `max_bytes`, least recently used dropped
    first.
    """

    def __init__(self, min_bytes: int = 4 << 20, max_bytes: int = 512 << 20, per_key: int = 2):
        self.min_bytes = min_bytes
        self._max_bytes = max_bytes
        self._per_key = per_key
        self._lock = threading.Lock()
        self._arrays: dict = {}  # (shape, dtype) -> [arrays], least recently used first

    def empty(self, shape, dtype) -> np.ndarray:
        dtype = np.dtype(dtype)
        key = (tuple(shape), dtype.str)
        with self._lock:
            arrays = self._arrays.setdefault(key, [])
            for index in range(len(arrays)):
                if sys.getrefcount(arrays[index]) == _POOL_ONLY:
                    array = arrays.pop(index)
                    arrays.append(array)
                    self._arrays[key] = self._arrays.pop(key)  # most recently used key last
                    return array
            array = np.empty(shape, dtype)
            if len(arrays) < self._per_key:
                arrays.append(array)
                self._trim()
            return array

    def _trim(self) -> None:
        total = sum(a.nbytes for arrays in self._arrays.values() for a in arrays)
        for key in list(self._arrays):
            arrays = self._arrays[key]
            index = 0
            while index < len(arrays) and total > self._max_bytes:
                if sys.getrefcount(arrays[index]) == _POOL_ONLY:
                    total -= arrays[index].nbytes
                    del arrays[index]
                else:
                    index += 1
            if not arrays:
                del self._arrays[key]


def _pool_only_count() -> int:
    arrays = [np.empty(1)]
    return sys.getrefcount(arrays[0])


_POOL_ONLY = _pool_only_count()
RECEIVE_BUFFERS = ReceiveBuffers()


def _varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def tensor_frames(value, is_dead: bool, incarnation: int, key_index: int = 0):
    """The frames of one RecvTensor response stream (bytes, see the module docstring);
    `key_index` names the key of a RecvTensors request the tensor answers."""
    header = worker_pb2.RecvTensorResponse(sender_incarnation=incarnation, key_index=key_index)
    if is_dead or value is None:
        header.is_dead = True
        yield header.SerializeToString()
        return
    array = np.asarray(value)
    if not _numeric(array) or array.nbytes == 0:
        header.tensor.CopyFrom(make_tensor_proto(array))
        yield header.SerializeToString()
        return
    header.tensor.dtype = dtypes.as_dtype(array.dtype).as_datatype_enum
    for size in array.shape:
        header.tensor.tensor_shape.dim.add(size=size)
    data = memoryview(np.ascontiguousarray(array).reshape(-1).view(np.uint8))
    header.total_bytes = len(data)
    if len(data) <= INLINE_BYTES:
        header.chunk = data.tobytes()
        yield header.SerializeToString()
        return
    yield header.SerializeToString()
    for start in range(0, len(data), CHUNK_BYTES):
        piece = data[start:start + CHUNK_BYTES]
        yield b"".join((bytes((_CHUNK_TAG,)), _varint(len(piece)), piece))


_FRAME_TAG = 0x0A  # RecvTensorsResponse.frame: field 1, wire type 2


def bundle_frames(frames) -> bytes:
    """One RecvTensors message (a serialized `RecvTensorsResponse`) holding `frames`."""
    parts = []
    for frame in frames:
        parts.extend((bytes((_FRAME_TAG,)), _varint(len(frame)), frame))
    return b"".join(parts)


def unbundle_frames(messages):
    """The frames of a stream of RecvTensors messages, in order, as views of the messages'
    bytes (no copy).

    Raises:
        DataLossError: a message is not a `RecvTensorsResponse` of frames.
    """
    for message in messages:
        view = memoryview(message)
        pos, end = 0, len(view)
        while pos < end:
            if view[pos] != _FRAME_TAG:
                raise errors.DataLossError(None, None, "RecvTensors message holds a field "
                                           f"other than frames (tag {view[pos]:#x})")
            length, shift = 0, 0
            pos += 1
            while True:
                if pos >= end or shift > 63:
                    raise errors.DataLossError(None, None, "RecvTensors message is truncated")
                byte = view[pos]
                length |= (byte & 0x7F) << shift
                pos += 1
                if byte < 0x80:
                    break
                shift += 7
            if pos + length > end:
                raise errors.DataLossError(None, None, "RecvTensors message is truncated")
            yield view[pos:pos + length]
            pos += length


def _chunk_payload(frame: bytes):
    """(offset, length) of the chunk bytes in a chunk-only frame, or None for other frames."""
    if not frame or frame[0] != _CHUNK_TAG:
        return None
    length = 0
    shift = 0
    pos = 1
    while pos < len(frame):
        byte = frame[pos]
        length |= (byte & 0x7F) << shift
        pos += 1
        if byte < 0x80:
            return (pos, length) if pos + length == len(frame) else None
        shift += 7
    return None


def assemble_frames(frames, max_bytes: int = DEFAULT_MAX_TENSOR_BYTES) -> tuple:
    """(value, is_dead, sender_incarnation) from a RecvTensor stream's frames.

    The header's declared size is checked (against `max_bytes` and its own `total_bytes`)
    before the result is allocated; frames past the declared size end the stream.

    Raises:
        UnavailableError: the stream ended before the header.
        DataLossError: the byte count disagrees with the header.
        InvalidArgumentError: the header declares a tensor over `max_bytes`.
    """
    frames = iter(frames)
    first = next(frames, None)
    if first is None:
        raise errors.UnavailableError(None, None, "RecvTensor stream ended without a tensor")
    return _assemble(worker_pb2.RecvTensorResponse.FromString(first), frames, max_bytes,
                     False)[1:]


def read_tensors(frames, count: int, max_bytes: int = DEFAULT_MAX_TENSOR_BYTES):
    """Yields (key_index, value, is_dead, sender_incarnation) for each of the `count`
    tensors of a RecvTensors stream (its frames: `unbundle_frames`), as each is complete
    (each tensor's frames are contiguous, its header first; a tensor ends at its declared
    size).

    Raises:
        UnavailableError: the stream ended before `count` tensors.
        DataLossError: a byte count disagrees with its header, or a key index is out of
            range or repeated.
        InvalidArgumentError: a header declares a tensor over `max_bytes`.
    """
    frames = iter(frames)
    seen = set()
    for _ in range(count):
        first = next(frames, None)
        if first is None:
            raise errors.UnavailableError(
                None, None, f"RecvTensors stream ended after {len(seen)} of {count} tensors")
        result = _assemble(worker_pb2.RecvTensorResponse.FromString(first), frames,
                           max_bytes, True)
        if not 0 <= result[0] < count or result[0] in seen:
            raise errors.DataLossError(
                None, None, f"RecvTensors stream answered key {result[0]} (of {count}) twice "
                "or out of range")
        seen.add(result[0])
        yield result


def _assemble(header, frames, max_bytes: int, exact: bool) -> tuple:
    """(key_index, value, is_dead, incarnation) of the tensor `header` starts; its chunk
    frames are read from `frames`: up to its declared size when `exact` (more tensors
    follow), else to the end of the stream."""
    incarnation = header.sender_incarnation
    key_index = header.key_index
    if header.is_dead:
        return key_index, None, True, incarnation
    if header.total_bytes == 0:
        return key_index, make_ndarray(header.tensor, max_bytes), False, incarnation
    dtype, shape, count = declared_size(header.tensor, max_bytes)
    dtype = np.dtype(dtype.base_dtype.as_numpy_dtype)
    if dtype.hasobject or header.total_bytes != count * dtype.itemsize:
        raise errors.DataLossError(
            None, None, f"RecvTensor header declares {header.total_bytes} bytes for a tensor "
            f"of shape {shape} ({dtype.name})")
    chunk = header.chunk
    first = None
    if exact:  # one piece: a read-only view of the received bytes, no copy
        if len(chunk) == header.total_bytes:
            return key_index, np.frombuffer(chunk, dtype).reshape(shape), False, incarnation
        if not chunk:
            first = next(frames, None)
            span = _chunk_payload(first) if first is not None else None
            if span is not None and span[1] == header.total_bytes:
                value = np.frombuffer(first, dtype, count=count, offset=span[0])
                return key_index, value.reshape(shape), False, incarnation
    if header.total_bytes >= RECEIVE_BUFFERS.min_bytes:
        out = RECEIVE_BUFFERS.empty(shape, dtype)
    else:
        out = np.empty(shape, dtype)
    flat = out.reshape(-1).view(np.uint8)
    offset = len(chunk)
    if offset:
        flat[:offset] = np.frombuffer(chunk, np.uint8)
    while not exact or offset < len(flat):
        frame, first = (first, None) if first is not None else (next(frames, None), None)
        if frame is None:
            break
        span = _chunk_payload(frame)
        if span is None:
            data = np.frombuffer(worker_pb2.RecvTensorResponse.FromString(frame).chunk,
                                 np.uint8)
        else:
            data = np.frombuffer(frame, np.uint8, count=span[1], offset=span[0])
        end = offset + len(data)
        if end > len(flat):
            raise errors.DataLossError(
                None, None, f"RecvTensor stream sent more than the {len(flat)} bytes its "
                f"header declares ({dtype.name} {list(out.shape)})")
        flat[offset:end] = data
        offset = end
    if offset != header.total_bytes or offset != len(flat):
        raise errors.DataLossError(
            None, None, f"RecvTensor delivered {offset} bytes for a tensor of "
            f"{header.total_bytes} ({dtype.name} {list(out.shape)})")
    return key_index, out, False, incarnation


def name_transfer_error(error, keys, source_task: str):
    """`error` of a received tensor (a size over the message limit, a corrupt frame), which
    names neither the tensor nor its sender, made to name both (the tensor names are taken
    from the rendezvous `keys`); a size over the limit becomes ResourceExhaustedError, the
    class of gRPC's own message-size error."""
    if not isinstance(error, (errors.InvalidArgumentError, errors.DataLossError,
                              errors.ResourceExhaustedError)) or source_task in error.message:
        return error
    names = ", ".join(repr(key.split(";")[3] if key.count(";") == 4 else key)
                      for key in keys[:3])
    more = f" and {len(keys) - 3} more" if len(keys) > 3 else ""
    hint = (" (the largest message a process accepts is TFX_MAX_MESSAGE_BYTES, or "
            "`tensorflux server --max-message-bytes`, on both tasks)"
            if "over the limit" in error.message else "")
    # Over the size limit: ResourceExhausted, as gRPC's own "message larger than max".
    kind = errors.ResourceExhaustedError if hint else type(error)
    return kind(error.node_def, error.op, f"Receiving {names}{more} from task {source_task}: "
                f"{error.message}{hint}")
