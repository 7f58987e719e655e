from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class OpLogEntry(_message.Message):
    __slots__ = ("name", "float_ops", "types")
    NAME_FIELD_NUMBER: _ClassVar[int]
    FLOAT_OPS_FIELD_NUMBER: _ClassVar[int]
    TYPES_FIELD_NUMBER: _ClassVar[int]
    name: str
    float_ops: int
    types: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, name: _Optional[str] = ..., float_ops: _Optional[int] = ..., types: _Optional[_Iterable[str]] = ...) -> None: ...

class OpLogProto(_message.Message):
    __slots__ = ("log_entries", "id_to_string")
    class IdToStringEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: int
        value: str
        def __init__(self, key: _Optional[int] = ..., value: _Optional[str] = ...) -> None: ...
    LOG_ENTRIES_FIELD_NUMBER: _ClassVar[int]
    ID_TO_STRING_FIELD_NUMBER: _ClassVar[int]
    log_entries: _containers.RepeatedCompositeFieldContainer[OpLogEntry]
    id_to_string: _containers.ScalarMap[int, str]
    def __init__(self, log_entries: _Optional[_Iterable[_Union[OpLogEntry, _Mapping]]] = ..., id_to_string: _Optional[_Mapping[int, str]] = ...) -> None: ...
