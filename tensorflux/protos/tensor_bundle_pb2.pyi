from tensorflux.protos import tensor_shape_pb2 as _tensor_shape_pb2
from tensorflux.protos import tensor_slice_pb2 as _tensor_slice_pb2
from tensorflux.protos import types_pb2 as _types_pb2
from tensorflux.protos import versions_pb2 as _versions_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class BundleEntry(_message.Message):
    __slots__ = ("name", "dtype", "shape", "shard_id", "offset", "size", "crc32c", "slices")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DTYPE_FIELD_NUMBER: _ClassVar[int]
    SHAPE_FIELD_NUMBER: _ClassVar[int]
    SHARD_ID_FIELD_NUMBER: _ClassVar[int]
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    CRC32C_FIELD_NUMBER: _ClassVar[int]
    SLICES_FIELD_NUMBER: _ClassVar[int]
    name: str
    dtype: _types_pb2.DataType
    shape: _tensor_shape_pb2.TensorShapeProto
    shard_id: int
    offset: int
    size: int
    crc32c: int
    slices: _containers.RepeatedCompositeFieldContainer[_tensor_slice_pb2.TensorSliceProto]
    def __init__(self, name: _Optional[str] = ..., dtype: _Optional[_Union[_types_pb2.DataType, str]] = ..., shape: _Optional[_Union[_tensor_shape_pb2.TensorShapeProto, _Mapping]] = ..., shard_id: _Optional[int] = ..., offset: _Optional[int] = ..., size: _Optional[int] = ..., crc32c: _Optional[int] = ..., slices: _Optional[_Iterable[_Union[_tensor_slice_pb2.TensorSliceProto, _Mapping]]] = ...) -> None: ...

class BundleHeader(_message.Message):
    __slots__ = ("num_shards", "endianness", "version")
    class Endianness(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        LITTLE: _ClassVar[BundleHeader.Endianness]
        BIG: _ClassVar[BundleHeader.Endianness]
    LITTLE: BundleHeader.Endianness
    BIG: BundleHeader.Endianness
    NUM_SHARDS_FIELD_NUMBER: _ClassVar[int]
    ENDIANNESS_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    num_shards: int
    endianness: BundleHeader.Endianness
    version: _versions_pb2.VersionDef
    def __init__(self, num_shards: _Optional[int] = ..., endianness: _Optional[_Union[BundleHeader.Endianness, str]] = ..., version: _Optional[_Union[_versions_pb2.VersionDef, _Mapping]] = ...) -> None: ...

class BundleIndex(_message.Message):
    __slots__ = ("header", "entries")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    header: BundleHeader
    entries: _containers.RepeatedCompositeFieldContainer[BundleEntry]
    def __init__(self, header: _Optional[_Union[BundleHeader, _Mapping]] = ..., entries: _Optional[_Iterable[_Union[BundleEntry, _Mapping]]] = ...) -> None: ...
