from tensorflux.protos import config_pb2 as _config_pb2
from tensorflux.protos import cost_graph_pb2 as _cost_graph_pb2
from tensorflux.protos import debug_pb2 as _debug_pb2
from tensorflux.protos import device_attributes_pb2 as _device_attributes_pb2
from tensorflux.protos import error_codes_pb2 as _error_codes_pb2
from tensorflux.protos import graph_pb2 as _graph_pb2
from tensorflux.protos import named_tensor_pb2 as _named_tensor_pb2
from tensorflux.protos import step_stats_pb2 as _step_stats_pb2
from tensorflux.protos import tensor_pb2 as _tensor_pb2
from tensorflux.protos import tensorflow_server_pb2 as _tensorflow_server_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class GetStatusRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetStatusResponse(_message.Message):
    __slots__ = ("device_attributes", "status")
    DEVICE_ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    device_attributes: _containers.RepeatedCompositeFieldContainer[_device_attributes_pb2.DeviceAttributes]
    status: _error_codes_pb2.StatusProto
    def __init__(self, device_attributes: _Optional[_Iterable[_Union[_device_attributes_pb2.DeviceAttributes, _Mapping]]] = ..., status: _Optional[_Union[_error_codes_pb2.StatusProto, _Mapping]] = ...) -> None: ...

class CreateWorkerSessionRequest(_message.Message):
    __slots__ = ("session_handle", "server_def", "isolate_session_state", "cluster_device_attributes", "master_task", "master_incarnation")
    SESSION_HANDLE_FIELD_NUMBER: _ClassVar[int]
    SERVER_DEF_FIELD_NUMBER: _ClassVar[int]
    ISOLATE_SESSION_STATE_FIELD_NUMBER: _ClassVar[int]
    CLUSTER_DEVICE_ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    MASTER_TASK_FIELD_NUMBER: _ClassVar[int]
    MASTER_INCARNATION_FIELD_NUMBER: _ClassVar[int]
    session_handle: str
    server_def: _tensorflow_server_pb2.ServerDef
    isolate_session_state: bool
    cluster_device_attributes: _containers.RepeatedCompositeFieldContainer[_device_attributes_pb2.DeviceAttributes]
    master_task: str
    master_incarnation: int
    def __init__(self, session_handle: _Optional[str] = ..., server_def: _Optional[_Union[_tensorflow_server_pb2.ServerDef, _Mapping]] = ..., isolate_session_state: _Optional[bool] = ..., cluster_device_attributes: _Optional[_Iterable[_Union[_device_attributes_pb2.DeviceAttributes, _Mapping]]] = ..., master_task: _Optional[str] = ..., master_incarnation: _Optional[int] = ...) -> None: ...

class CreateWorkerSessionResponse(_message.Message):
    __slots__ = ("status",)
    STATUS_FIELD_NUMBER: _ClassVar[int]
    status: _error_codes_pb2.StatusProto
    def __init__(self, status: _Optional[_Union[_error_codes_pb2.StatusProto, _Mapping]] = ...) -> None: ...

class DeleteWorkerSessionRequest(_message.Message):
    __slots__ = ("session_handle",)
    SESSION_HANDLE_FIELD_NUMBER: _ClassVar[int]
    session_handle: str
    def __init__(self, session_handle: _Optional[str] = ...) -> None: ...

class DeleteWorkerSessionResponse(_message.Message):
    __slots__ = ("status",)
    STATUS_FIELD_NUMBER: _ClassVar[int]
    status: _error_codes_pb2.StatusProto
    def __init__(self, status: _Optional[_Union[_error_codes_pb2.StatusProto, _Mapping]] = ...) -> None: ...

class RegisterGraphRequest(_message.Message):
    __slots__ = ("session_handle", "graph_def", "graph_options", "debug_options", "config")
    SESSION_HANDLE_FIELD_NUMBER: _ClassVar[int]
    GRAPH_DEF_FIELD_NUMBER: _ClassVar[int]
    GRAPH_OPTIONS_FIELD_NUMBER: _ClassVar[int]
    DEBUG_OPTIONS_FIELD_NUMBER: _ClassVar[int]
    CONFIG_FIELD_NUMBER: _ClassVar[int]
    session_handle: str
    graph_def: _graph_pb2.GraphDef
    graph_options: _config_pb2.GraphOptions
    debug_options: _debug_pb2.DebugOptions
    config: _config_pb2.ConfigProto
    def __init__(self, session_handle: _Optional[str] = ..., graph_def: _Optional[_Union[_graph_pb2.GraphDef, _Mapping]] = ..., graph_options: _Optional[_Union[_config_pb2.GraphOptions, _Mapping]] = ..., debug_options: _Optional[_Union[_debug_pb2.DebugOptions, _Mapping]] = ..., config: _Optional[_Union[_config_pb2.ConfigProto, _Mapping]] = ...) -> None: ...

class RegisterGraphResponse(_message.Message):
    __slots__ = ("graph_handle", "status")
    GRAPH_HANDLE_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    graph_handle: str
    status: _error_codes_pb2.StatusProto
    def __init__(self, graph_handle: _Optional[str] = ..., status: _Optional[_Union[_error_codes_pb2.StatusProto, _Mapping]] = ...) -> None: ...

class DeregisterGraphRequest(_message.Message):
    __slots__ = ("session_handle", "graph_handle")
    SESSION_HANDLE_FIELD_NUMBER: _ClassVar[int]
    GRAPH_HANDLE_FIELD_NUMBER: _ClassVar[int]
    session_handle: str
    graph_handle: str
    def __init__(self, session_handle: _Optional[str] = ..., graph_handle: _Optional[str] = ...) -> None: ...

class DeregisterGraphResponse(_message.Message):
    __slots__ = ("status",)
    STATUS_FIELD_NUMBER: _ClassVar[int]
    status: _error_codes_pb2.StatusProto
    def __init__(self, status: _Optional[_Union[_error_codes_pb2.StatusProto, _Mapping]] = ...) -> None: ...

class ExecutorOpts(_message.Message):
    __slots__ = ("record_costs", "record_timeline", "record_partition_graphs", "report_tensor_allocations_upon_oom")
    RECORD_COSTS_FIELD_NUMBER: _ClassVar[int]
    RECORD_TIMELINE_FIELD_NUMBER: _ClassVar[int]
    RECORD_PARTITION_GRAPHS_FIELD_NUMBER: _ClassVar[int]
    REPORT_TENSOR_ALLOCATIONS_UPON_OOM_FIELD_NUMBER: _ClassVar[int]
    record_costs: bool
    record_timeline: bool
    record_partition_graphs: bool
    report_tensor_allocations_upon_oom: bool
    def __init__(self, record_costs: _Optional[bool] = ..., record_timeline: _Optional[bool] = ..., record_partition_graphs: _Optional[bool] = ..., report_tensor_allocations_upon_oom: _Optional[bool] = ...) -> None: ...

class RunGraphRequest(_message.Message):
    __slots__ = ("session_handle", "graph_handle", "step_id", "exec_opts", "send", "recv_key", "is_partial", "is_last_partial_run", "request_id")
    SESSION_HANDLE_FIELD_NUMBER: _ClassVar[int]
    GRAPH_HANDLE_FIELD_NUMBER: _ClassVar[int]
    STEP_ID_FIELD_NUMBER: _ClassVar[int]
    EXEC_OPTS_FIELD_NUMBER: _ClassVar[int]
    SEND_FIELD_NUMBER: _ClassVar[int]
    RECV_KEY_FIELD_NUMBER: _ClassVar[int]
    IS_PARTIAL_FIELD_NUMBER: _ClassVar[int]
    IS_LAST_PARTIAL_RUN_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    session_handle: str
    graph_handle: str
    step_id: int
    exec_opts: ExecutorOpts
    send: _containers.RepeatedCompositeFieldContainer[_named_tensor_pb2.NamedTensorProto]
    recv_key: _containers.RepeatedScalarFieldContainer[str]
    is_partial: bool
    is_last_partial_run: bool
    request_id: int
    def __init__(self, session_handle: _Optional[str] = ..., graph_handle: _Optional[str] = ..., step_id: _Optional[int] = ..., exec_opts: _Optional[_Union[ExecutorOpts, _Mapping]] = ..., send: _Optional[_Iterable[_Union[_named_tensor_pb2.NamedTensorProto, _Mapping]]] = ..., recv_key: _Optional[_Iterable[str]] = ..., is_partial: _Optional[bool] = ..., is_last_partial_run: _Optional[bool] = ..., request_id: _Optional[int] = ...) -> None: ...

class RunGraphResponse(_message.Message):
    __slots__ = ("recv", "step_stats", "cost_graph", "partition_graph", "status")
    RECV_FIELD_NUMBER: _ClassVar[int]
    STEP_STATS_FIELD_NUMBER: _ClassVar[int]
    COST_GRAPH_FIELD_NUMBER: _ClassVar[int]
    PARTITION_GRAPH_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    recv: _containers.RepeatedCompositeFieldContainer[_named_tensor_pb2.NamedTensorProto]
    step_stats: _step_stats_pb2.StepStats
    cost_graph: _cost_graph_pb2.CostGraphDef
    partition_graph: _containers.RepeatedCompositeFieldContainer[_graph_pb2.GraphDef]
    status: _error_codes_pb2.StatusProto
    def __init__(self, recv: _Optional[_Iterable[_Union[_named_tensor_pb2.NamedTensorProto, _Mapping]]] = ..., step_stats: _Optional[_Union[_step_stats_pb2.StepStats, _Mapping]] = ..., cost_graph: _Optional[_Union[_cost_graph_pb2.CostGraphDef, _Mapping]] = ..., partition_graph: _Optional[_Iterable[_Union[_graph_pb2.GraphDef, _Mapping]]] = ..., status: _Optional[_Union[_error_codes_pb2.StatusProto, _Mapping]] = ...) -> None: ...

class CleanupGraphRequest(_message.Message):
    __slots__ = ("step_id",)
    STEP_ID_FIELD_NUMBER: _ClassVar[int]
    step_id: int
    def __init__(self, step_id: _Optional[int] = ...) -> None: ...

class CleanupGraphResponse(_message.Message):
    __slots__ = ("status",)
    STATUS_FIELD_NUMBER: _ClassVar[int]
    status: _error_codes_pb2.StatusProto
    def __init__(self, status: _Optional[_Union[_error_codes_pb2.StatusProto, _Mapping]] = ...) -> None: ...

class CleanupAllRequest(_message.Message):
    __slots__ = ("container",)
    CONTAINER_FIELD_NUMBER: _ClassVar[int]
    container: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, container: _Optional[_Iterable[str]] = ...) -> None: ...

class CleanupAllResponse(_message.Message):
    __slots__ = ("status",)
    STATUS_FIELD_NUMBER: _ClassVar[int]
    status: _error_codes_pb2.StatusProto
    def __init__(self, status: _Optional[_Union[_error_codes_pb2.StatusProto, _Mapping]] = ...) -> None: ...

class RecvTensorRequest(_message.Message):
    __slots__ = ("step_id", "rendezvous_key", "dma_ok", "request_id")
    STEP_ID_FIELD_NUMBER: _ClassVar[int]
    RENDEZVOUS_KEY_FIELD_NUMBER: _ClassVar[int]
    DMA_OK_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    step_id: int
    rendezvous_key: str
    dma_ok: bool
    request_id: int
    def __init__(self, step_id: _Optional[int] = ..., rendezvous_key: _Optional[str] = ..., dma_ok: _Optional[bool] = ..., request_id: _Optional[int] = ...) -> None: ...

class RecvTensorResponse(_message.Message):
    __slots__ = ("tensor", "chunk", "is_dead", "send_start_micros", "sender_incarnation", "total_bytes", "key_index")
    TENSOR_FIELD_NUMBER: _ClassVar[int]
    CHUNK_FIELD_NUMBER: _ClassVar[int]
    IS_DEAD_FIELD_NUMBER: _ClassVar[int]
    SEND_START_MICROS_FIELD_NUMBER: _ClassVar[int]
    SENDER_INCARNATION_FIELD_NUMBER: _ClassVar[int]
    TOTAL_BYTES_FIELD_NUMBER: _ClassVar[int]
    KEY_INDEX_FIELD_NUMBER: _ClassVar[int]
    tensor: _tensor_pb2.TensorProto
    chunk: bytes
    is_dead: bool
    send_start_micros: int
    sender_incarnation: int
    total_bytes: int
    key_index: int
    def __init__(self, tensor: _Optional[_Union[_tensor_pb2.TensorProto, _Mapping]] = ..., chunk: _Optional[bytes] = ..., is_dead: _Optional[bool] = ..., send_start_micros: _Optional[int] = ..., sender_incarnation: _Optional[int] = ..., total_bytes: _Optional[int] = ..., key_index: _Optional[int] = ...) -> None: ...

class RecvTensorsRequest(_message.Message):
    __slots__ = ("step_id", "rendezvous_key", "request_id", "whole")
    STEP_ID_FIELD_NUMBER: _ClassVar[int]
    RENDEZVOUS_KEY_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    WHOLE_FIELD_NUMBER: _ClassVar[int]
    step_id: int
    rendezvous_key: _containers.RepeatedScalarFieldContainer[str]
    request_id: int
    whole: bool
    def __init__(self, step_id: _Optional[int] = ..., rendezvous_key: _Optional[_Iterable[str]] = ..., request_id: _Optional[int] = ..., whole: _Optional[bool] = ...) -> None: ...

class RecvTensorsResponse(_message.Message):
    __slots__ = ("frame",)
    FRAME_FIELD_NUMBER: _ClassVar[int]
    frame: _containers.RepeatedScalarFieldContainer[bytes]
    def __init__(self, frame: _Optional[_Iterable[bytes]] = ...) -> None: ...

class LoggingRequest(_message.Message):
    __slots__ = ("enable_rpc_logging", "disable_rpc_logging", "clear", "fetch_step_id")
    ENABLE_RPC_LOGGING_FIELD_NUMBER: _ClassVar[int]
    DISABLE_RPC_LOGGING_FIELD_NUMBER: _ClassVar[int]
    CLEAR_FIELD_NUMBER: _ClassVar[int]
    FETCH_STEP_ID_FIELD_NUMBER: _ClassVar[int]
    enable_rpc_logging: bool
    disable_rpc_logging: bool
    clear: bool
    fetch_step_id: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, enable_rpc_logging: _Optional[bool] = ..., disable_rpc_logging: _Optional[bool] = ..., clear: _Optional[bool] = ..., fetch_step_id: _Optional[_Iterable[int]] = ...) -> None: ...

class LabeledStepStats(_message.Message):
    __slots__ = ("step_id", "step_stats")
    STEP_ID_FIELD_NUMBER: _ClassVar[int]
    STEP_STATS_FIELD_NUMBER: _ClassVar[int]
    step_id: int
    step_stats: _step_stats_pb2.StepStats
    def __init__(self, step_id: _Optional[int] = ..., step_stats: _Optional[_Union[_step_stats_pb2.StepStats, _Mapping]] = ...) -> None: ...

class LoggingResponse(_message.Message):
    __slots__ = ("step", "status")
    STEP_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    step: _containers.RepeatedCompositeFieldContainer[LabeledStepStats]
    status: _error_codes_pb2.StatusProto
    def __init__(self, step: _Optional[_Iterable[_Union[LabeledStepStats, _Mapping]]] = ..., status: _Optional[_Union[_error_codes_pb2.StatusProto, _Mapping]] = ...) -> None: ...

class TracingRequest(_message.Message):
    __slots__ = ("duration_secs",)
    DURATION_SECS_FIELD_NUMBER: _ClassVar[int]
    duration_secs: float
    def __init__(self, duration_secs: _Optional[float] = ...) -> None: ...

class TracingResponse(_message.Message):
    __slots__ = ("status",)
    STATUS_FIELD_NUMBER: _ClassVar[int]
    status: _error_codes_pb2.StatusProto
    def __init__(self, status: _Optional[_Union[_error_codes_pb2.StatusProto, _Mapping]] = ...) -> None: ...

class AbortRequest(_message.Message):
    __slots__ = ("step_id", "status")
    STEP_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    step_id: int
    status: _error_codes_pb2.StatusProto
    def __init__(self, step_id: _Optional[int] = ..., status: _Optional[_Union[_error_codes_pb2.StatusProto, _Mapping]] = ...) -> None: ...

class AbortResponse(_message.Message):
    __slots__ = ("status",)
    STATUS_FIELD_NUMBER: _ClassVar[int]
    status: _error_codes_pb2.StatusProto
    def __init__(self, status: _Optional[_Union[_error_codes_pb2.StatusProto, _Mapping]] = ...) -> None: ...

class ShutdownRequest(_message.Message):
    __slots__ = ("grace_secs",)
    GRACE_SECS_FIELD_NUMBER: _ClassVar[int]
    grace_secs: float
    def __init__(self, grace_secs: _Optional[float] = ...) -> None: ...

class ShutdownResponse(_message.Message):
    __slots__ = ("status",)
    STATUS_FIELD_NUMBER: _ClassVar[int]
    status: _error_codes_pb2.StatusProto
    def __init__(self, status: _Optional[_Union[_error_codes_pb2.StatusProto, _Mapping]] = ...) -> None: ...
