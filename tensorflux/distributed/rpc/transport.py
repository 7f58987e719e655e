"""Clients of the worker and master services: gRPC and in-process, one interface.

Every call has a deadline; a transport failure becomes UnavailableError (or
DeadlineExceededError) naming the task and its address. `recv_tensor_call` starts a transfer
and returns a handle with `result()` -> (value, is_dead, sender_incarnation) and `cancel()`.
Large tensors travel as raw bytes in chunks of RecvTensor's response stream.
"""

from __future__ import annotations

import threading

import numpy as np

from tensorflux.framework import errors
from tensorflux.framework.tensor_util import make_ndarray, make_tensor_proto
from tensorflux.protos import worker_pb2

CHUNK_BYTES = 4 << 20
GRPC_OPTIONS = [("grpc.max_send_message_length", -1), ("grpc.max_receive_message_length", -1),
                ("grpc.enable_retries", 0)]


def tensor_chunks(value, is_dead: bool, incarnation: int):
    """RecvTensorResponse messages for a value: a header, then raw byte chunks."""
    if is_dead or value is None:
        yield worker_pb2.RecvTensorResponse(is_dead=True, sender_incarnation=incarnation)
        return
    array = np.asarray(value)
    header = worker_pb2.RecvTensorResponse(sender_incarnation=incarnation)
    if array.dtype == object:
        header.tensor.CopyFrom(make_tensor_proto(array))
        yield header
        return
    proto = make_tensor_proto(np.zeros((0,), array.dtype))
    header.tensor.dtype = proto.dtype
    for d in array.shape:
        header.tensor.tensor_shape.dim.add(size=d)
    data = memoryview(np.ascontiguousarray(array).reshape(-1).view(np.uint8))
    header.total_bytes = len(data)
    header.chunk = bytes(data[:CHUNK_BYTES])
    yield header
    for start in range(CHUNK_BYTES, len(data), CHUNK_BYTES):
        yield worker_pb2.RecvTensorResponse(chunk=bytes(data[start:start + CHUNK_BYTES]))


def assemble(responses):
    """(value, is_dead, incarnation) from a RecvTensorResponse stream."""
    from tensorflux.framework import dtypes

    header = None
    buffer = None
    offset = 0
    for response in responses:
        if header is None:
            header = response
            if response.is_dead:
                return None, True, response.sender_incarnation
            if response.tensor.dtype == dtypes.string.as_datatype_enum:
                return make_ndarray(response.tensor), False, response.sender_incarnation
            buffer = bytearray(response.total_bytes)
        chunk = response.chunk
        buffer[offset:offset + len(chunk)] = chunk
        offset += len(chunk)
    if header is None:
        raise errors.UnavailableError(None, None, "RecvTensor stream ended without a tensor")
    dtype = np.dtype(dtypes.as_dtype(header.tensor.dtype).as_numpy_dtype)
    shape = [d.size for d in header.tensor.tensor_shape.dim]
    value = np.frombuffer(buffer, dtype=dtype).reshape(shape)
    return value, False, header.sender_incarnation


class _Handle:
    """A pending transfer: calls `done(error, value, is_dead, incarnation)` exactly once."""

    def __init__(self, done=None):
        self._lock = threading.Lock()
        self._event = threading.Event()
        self._outcome = None
        self._cancel = None
        self._done = done

    def set(self, outcome):
        with self._lock:
            if self._outcome is not None:
                return
            self._outcome = outcome
        self._event.set()
        if self._done is not None:
            self._done(*outcome)

    def result(self):
        self._event.wait()
        error, value, is_dead, incarnation = self._outcome
        if error is not None:
            raise error
        return value, is_dead, incarnation

    def cancel(self):
        self.set((errors.CancelledError(None, None, "transfer cancelled"), None, False, 0))
        if self._cancel is not None:
            self._cancel()


class InProcessWorkerClient:
    """Calls a Worker object directly (tests; tasks of one process)."""

    def __init__(self, worker, task: str, address: str = "in-process"):
        self._worker = worker
        self.task = task
        self.address = address

    def call(self, method: str, request, timeout=None):
        return getattr(self._worker, method)(request)

    def recv_tensor_async(self, step_id: int, key: str, done):
        """Starts a transfer; `done(error, value, is_dead, incarnation)` is called once."""
        handle = _Handle(done)
        request = worker_pb2.RecvTensorRequest(step_id=step_id, rendezvous_key=key)
        self._worker.recv_tensor(request, lambda *outcome: handle.set(outcome))
        return handle


_WORKER_METHODS = {
    "get_status": "GetStatus", "create_worker_session": "CreateWorkerSession",
    "delete_worker_session": "DeleteWorkerSession", "register_graph": "RegisterGraph",
    "deregister_graph": "DeregisterGraph", "run_graph": "RunGraph",
    "cleanup_graph": "CleanupGraph", "cleanup_all": "CleanupAll", "logging": "Logging",
    "tracing": "Tracing", "abort": "Abort", "shutdown": "Shutdown",
}


def _translate(err, task, address, what):
    import grpc

    code = err.code() if hasattr(err, "code") else None
    detail = err.details() if hasattr(err, "details") else str(err)
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        return errors.DeadlineExceededError(
            None, None, f"{what} to task {task} at {address} timed out: {detail}")
    if code == grpc.StatusCode.CANCELLED:
        return errors.CancelledError(None, None, f"{what} to task {task} was cancelled")
    error = errors.UnavailableError(
        None, None, f"Task {task} at {address} is unavailable ({what} failed: {detail})")
    error._tfx_task = task
    return error


class GrpcWorkerClient:
    """The worker service of a task reached over gRPC."""

    def __init__(self, task: str, address: str, default_timeout: float = 10.0):
        import grpc

        from tensorflux.protos import worker_service_pb2_grpc

        self.task = task
        self.address = address
        self._channel = grpc.insecure_channel(address, options=GRPC_OPTIONS)
        self._stub = worker_service_pb2_grpc.WorkerServiceStub(self._channel)
        self._timeout = default_timeout

    def call(self, method: str, request, timeout=None):
        import grpc

        rpc = getattr(self._stub, _WORKER_METHODS[method])
        try:
            return rpc(request, timeout=timeout if timeout is not None else self._timeout)
        except grpc.RpcError as err:
            raise _translate(err, self.task, self.address, _WORKER_METHODS[method]) from None

    def recv_tensor_async(self, step_id: int, key: str, done):
        """Starts a streaming RecvTensor on its own thread; calls `done(...)` once."""
        import grpc

        handle = _Handle(done)
        request = worker_pb2.RecvTensorRequest(step_id=step_id, rendezvous_key=key)
        call = self._stub.RecvTensor(request)
        handle._cancel = call.cancel

        def pull():
            try:
                handle.set((None, *assemble(call)))
            except grpc.RpcError as err:
                handle.set((_translate(err, self.task, self.address, "RecvTensor"), None,
                            False, 0))
            except errors.OpError as err:
                handle.set((err, None, False, 0))

        threading.Thread(target=pull, daemon=True, name="tfx-recv").start()
        return handle

    def close(self) -> None:
        self._channel.close()


class GrpcMasterClient:
    """The master service of a server reached over gRPC."""

    _METHODS = {"create_session": "CreateSession", "extend_session": "ExtendSession",
                "run_step": "RunStep", "close_session": "CloseSession",
                "list_devices": "ListDevices", "reset": "Reset",
                "partial_run_setup": "PartialRunSetup"}

    def __init__(self, address: str, default_timeout: float = 10.0):
        import grpc

        from tensorflux.protos import master_service_pb2_grpc

        self.address = address
        self._channel = grpc.insecure_channel(address, options=GRPC_OPTIONS)
        self._stub = master_service_pb2_grpc.MasterServiceStub(self._channel)
        self._timeout = default_timeout

    def call(self, method: str, request, timeout=None):
        import grpc

        rpc = getattr(self._stub, self._METHODS[method])
        try:
            return rpc(request, timeout=timeout if timeout is not None else self._timeout)
        except grpc.RpcError as err:
            raise _translate(err, "master", self.address, self._METHODS[method]) from None

    def close(self) -> None:
        self._channel.close()


class InProcessMasterClient:
    def __init__(self, master):
        self._master = master
        self.address = "in-process"

    def call(self, method: str, request, timeout=None):
        return getattr(self._master, method)(request)

    def close(self) -> None:
        pass
