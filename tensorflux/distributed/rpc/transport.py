"""Clients of the worker and master services: gRPC and in-process, one interface.

Every call has a deadline, except the calls that run a step (RunStep, RunGraph): those have
exactly the step's deadline (`RunOptions.timeout_in_ms` / `operation_timeout_in_ms`) or none,
and health checks bound how long a failure takes to notice. A transport failure becomes
UnavailableError (or DeadlineExceededError) naming the task and its address. Every worker
client implements `WorkerClient`, so callers never ask which transport they hold:

- `call(method, request, timeout)` / `call_async(method, request, timeout, done)`: unary calls;
- `run_graph(request, feeds, feed_indices, deadline, timeout, done, submit, wait)`: runs a
  registered graph for a step and calls `done(error, {fetch index: ndarray})`. In process the
  ndarrays go straight in and out (run in the caller's thread or on `submit`); over gRPC the
  feeds are encoded once per step (`StepFeeds`) and fetched tensors too large for a unary
  message are pulled afterwards over RecvTensor (see `Worker.run_graph`); sends named in the
  request's `recv_key` come back under `values[PUSHED]` (`push_plan`);
- `recv_tensor_async(step_id, key, done)`: starts a transfer and calls
  `done(error, value, is_dead, sender_incarnation)` once; returns a handle with `cancel()`.

gRPC transfers stream raw byte frames (`tensor_codec`) on reusable threads, or on the
caller's thread when it waits for all of them anyway (`recv_tensors_async`'s `wait`). A RunGraph is
read as a one-message stream by the thread that waits for it (a reusable one, or the step's
own thread: `wait`), so no gRPC channel thread is started per step; GetStatus and Abort use
gRPC futures. Channel options and liveness are in `channels`, the transfer pieces in
`transfers`.
"""

from __future__ import annotations

import abc
import threading

from tensorflux.distributed import status as status_mod
from tensorflux.distributed.rpc import security as security_mod
from tensorflux.distributed.rpc.channels import GRPC_OPTIONS, KEEPALIVE_OPTIONS, translate
from tensorflux.distributed.rpc.tensor_codec import (
    assemble_frames,
    decode_tensor,
    name_transfer_error,
    read_tensors,
    unbundle_frames,
)
from tensorflux.distributed.rpc.transfers import (
    PULLS,
    PUSH_MARKS,
    PUSHED,
    Handle,
    StepFeeds,
    Streams,
)
from tensorflux.framework import errors
from tensorflux.protos import master_service_pb2_grpc, worker_pb2, worker_service_pb2_grpc


class WorkerClient(abc.ABC):
    """How a master or a worker talks to a task's worker service, in this process or not.

    Contract: `call` is a unary call with a deadline; `call_async` and `run_graph` return at
    once (unless `run_graph` runs inline) and call `done(error, result)` exactly once;
    `recv_tensor_async` pulls one tensor and calls `done(error, value, is_dead, incarnation)`
    once. `needs_health_checks` says whether the task can fail apart from this process (its
    health is then watched by heartbeats).
    """

    task: str
    address: str
    needs_health_checks = True

    @abc.abstractmethod
    def call(self, method: str, request, timeout=None, wait_for_ready=False):
        ...

    @abc.abstractmethod
    def call_async(self, method: str, request, timeout, done):
        ...

    @abc.abstractmethod
    def run_graph(self, request, feeds: StepFeeds, feed_indices, deadline, timeout, done,
                  submit=None, wait=None):
        """Runs a registered graph for one step; `done(error, {fetch index: ndarray})`.

        Args:
            request: the RunGraphRequest (handles and step id; the feeds are added here).
            feeds: the step's StepFeeds; `feed_indices` are those this graph takes.
            deadline: the step's time.monotonic() deadline, or None.
            timeout: seconds the call may take, or None.
            done: the callback.
            submit: where to run a blocking in-process partition (an executor's `submit`);
                None runs it in the calling thread.
            wait: where a remote call waits for its answer: called with a function that
                waits and then calls `done` (None: a pool thread). In process: unused.

        Returns:
            A future to cancel, or None.
        """

    @abc.abstractmethod
    def recv_tensor_async(self, step_id: int, key: str, done):
        ...

    def recv_tensors_async(self, step_id: int, keys, arrived, failed, wait=None,
                           timeout=None):
        """Starts receiving several tensors of a step from this task (RecvTensors).

        Calls `arrived(index, value, is_dead, incarnation)` for each of `keys` as it comes
        (`index` its position in `keys`), or `failed(error)` once, for the first failure;
        nothing more is called after that. Returns a handle whose `cancel()` ends the
        transfer (`failed` with CancelledError unless everything arrived). Here: one
        RecvTensor per key (transports with a batched call override it).

        `wait`: None, or a function given the function that blocks until the transfer is
        over (everything arrived, or `failed` was called), for the caller to run in its own
        thread (`receive_first`); `timeout` then bounds it (DeadlineExceededError).
        """
        stream = Streams(len(keys), arrived, failed)

        def one(index, error, value, is_dead, incarnation):
            if error is not None:
                stream.fail(error)
            else:
                stream.deliver(index, value, is_dead, incarnation)

        if wait is not None:
            wait(stream.waiter(timeout))
        for index, key in enumerate(keys):
            stream.handles.append(self.recv_tensor_async(
                step_id, key, lambda *outcome, index=index: one(index, *outcome)))
        return stream

    def close(self) -> None:  # noqa: B027 - optional: only channels have something to close
        """Releases the transport (nothing to release in process)."""


class InProcessWorkerClient(WorkerClient):
    """Calls a Worker object directly (tests; tasks of one process): no serialization."""

    needs_health_checks = False

    def __init__(self, worker, task: str, address: str = "in-process"):
        self._worker = worker
        self.task = task
        self.address = address

    def call(self, method: str, request, timeout=None, wait_for_ready=False):
        return getattr(self._worker, method)(request)

    def call_async(self, method: str, request, timeout, done):
        try:
            response = self.call(method, request, timeout)
        except Exception as err:  # noqa: BLE001 - handed to the callback, as a wire would
            done(err, None)
        else:
            done(None, response)

    def run_graph(self, request, feeds, feed_indices, deadline, timeout, done, submit=None,
                  wait=None):
        worker = self._worker
        local_feeds = {index: feeds.values[index] for index in feed_indices}

        def run():
            values = None
            try:
                response, values = worker.run_graph_local(request, local_feeds, deadline)
                error = status_mod.from_status(response.status)
            except Exception as err:  # noqa: BLE001 - reported as the task's failure
                error = err
            done(error, values)

        if submit is None:
            run()
        else:
            submit(run)
        return None

    def recv_tensor_async(self, step_id: int, key: str, done):
        handle = Handle(done)
        request = worker_pb2.RecvTensorRequest(step_id=step_id, rendezvous_key=key)
        # NOTE: a copy, as a wire would make: the sender's value may be another task's
        # variable buffer, which this task must not alias.
        self._worker.recv_tensor(request, lambda error, value, is_dead, incarnation: handle.set(
            (error, None if value is None else _copied(value), is_dead, incarnation)))
        return handle


def _copied(value):
    copy = getattr(value, "copy", None)
    return copy() if copy is not None else value


_WORKER_METHODS = {
    "get_status": "GetStatus", "create_worker_session": "CreateWorkerSession",
    "delete_worker_session": "DeleteWorkerSession", "register_graph": "RegisterGraph",
    "deregister_graph": "DeregisterGraph", "run_graph": "RunGraph",
    "cleanup_graph": "CleanupGraph", "cleanup_all": "CleanupAll", "logging": "Logging",
    "tracing": "Tracing", "abort": "Abort", "shutdown": "Shutdown",
}


class GrpcWorkerClient(WorkerClient):
    """The worker service of a task reached over gRPC."""

    def __init__(self, task: str, address: str, default_timeout: float = 10.0, security=None):
        from grpc.experimental import ChannelOptions

        self.task = task
        self.address = address
        security = security or security_mod.for_address(address)
        self._metadata = security.metadata()
        self._max_bytes = security.max_message_bytes
        # RecvTensor streams are read by the thread that waits for them, without a hand-off
        # from gRPC's channel thread for every frame.
        self._channel = security_mod.open_channel(
            address, security, GRPC_OPTIONS + KEEPALIVE_OPTIONS
            + [(ChannelOptions.SingleThreadedUnaryStream, 1)])
        self._stub = worker_service_pb2_grpc.WorkerServiceStub(self._channel)
        # Raw frames: the payload never goes through protobuf (see tensor_codec).
        self._recv = self._channel.unary_stream(
            "/tensorflux.WorkerService/RecvTensor",
            request_serializer=worker_pb2.RecvTensorRequest.SerializeToString,
            response_deserializer=None)
        self._recv_many = self._channel.unary_stream(
            "/tensorflux.WorkerService/RecvTensors",
            request_serializer=worker_pb2.RecvTensorsRequest.SerializeToString,
            response_deserializer=None)
        # RunGraph read as a one-message stream: the call is polled by the thread that waits
        # for it (no channel thread is started for it, as a future's would be), and the
        # server's unary answer is the same on the wire.
        self._run_graph = self._channel.unary_stream(
            "/tensorflux.WorkerService/RunGraph",
            request_serializer=worker_pb2.RunGraphRequest.SerializeToString,
            response_deserializer=worker_pb2.RunGraphResponse.FromString)
        self._timeout = default_timeout

    def call(self, method: str, request, timeout=None, wait_for_ready=False):
        """A unary call; `wait_for_ready` waits (within the deadline) for a task that is not
        listening yet instead of failing at once."""
        import grpc

        rpc = getattr(self._stub, _WORKER_METHODS[method])
        try:
            return rpc(request, timeout=timeout if timeout is not None else self._timeout,
                       wait_for_ready=wait_for_ready, metadata=self._metadata)
        except grpc.RpcError as err:
            if wait_for_ready and err.code() == grpc.StatusCode.DEADLINE_EXCEEDED:
                error = errors.UnavailableError(
                    None, None, f"Task {self.task} at {self.address} is unavailable (no answer "
                    f"to {_WORKER_METHODS[method]} within {timeout:.1f}s)")
                error._tfx_task = self.task
                raise error from None
            raise translate(err, self.task, self.address, _WORKER_METHODS[method]) from None

    def call_async(self, method: str, request, timeout, done):
        """Starts a unary call; `done(error, response)` runs on gRPC's thread."""
        import grpc

        name = _WORKER_METHODS[method]
        future = getattr(self._stub, name).future(request, timeout=timeout,
                                                  metadata=self._metadata)

        def finished(fut):
            try:
                response = fut.result()
            except grpc.RpcError as err:
                done(translate(err, self.task, self.address, name), None)
            except Exception as err:  # noqa: BLE001 - e.g. cancelled futures
                done(errors.CancelledError(None, None, f"{name} to {self.task}: {err}"), None)
            else:
                done(None, response)

        future.add_done_callback(finished)
        return future

    def run_graph(self, request, feeds, feed_indices, deadline, timeout, done, submit=None,
                  wait=None):
        for index in feed_indices:
            request.send.add(name=str(index)).tensor.CopyFrom(feeds.proto(index))
        return self.run_graph_async(request, timeout, done, wait)

    def run_graph_async(self, request, timeout, done, wait=None):
        """Starts a RunGraph; `done(error, values)` once every fetched value is here (the
        answer is waited for by `wait(fn)`, default a pool thread)."""
        step_id = request.step_id

        def finished(error, response):
            if error is None:
                error = status_mod.from_status(response.status)
            if error is not None:
                done(error, None)
                return
            values = {}
            pulls = []
            pushed = None
            for item in response.recv:
                name = item.name
                if name[:1] in PUSH_MARKS:  # a send named in recv_key (Worker._push_sends)
                    if pushed is None:
                        pushed = values[PUSHED] = {}
                    mark, key = name[0], name[1:]
                    pushed[key] = None if mark == "?" else (None, True) if mark == "!" else \
                        (decode_tensor(item.tensor), False)
                    continue
                index, _, key = name.partition(";")
                if key:
                    pulls.append((int(index), key))
                else:
                    values[int(index)] = decode_tensor(item.tensor)
            if not pulls:
                done(None, values)
                return
            self._pull_fetches(step_id, pulls, values, done)

        return self._single_call(self._run_graph, "RunGraph", request, timeout, finished, wait)

    def _single_call(self, multi_callable, name, request, timeout, done, wait=None):
        """Starts a call answered by one message; `wait(fn)` (default: a pool thread) runs
        the function that waits for it and calls `done(error, response)`. Returns the call
        (its `cancel()` ends it, from any thread)."""
        import grpc

        call = multi_callable(request, timeout=timeout, metadata=self._metadata)

        def answer():
            try:
                response = next(call)
                for _ in call:  # the status (it came with the message)
                    raise errors.InternalError(None, None, f"{name} answered twice")
            except grpc.RpcError as err:
                done(translate(err, self.task, self.address, name), None)
            except StopIteration:
                done(errors.UnavailableError(
                    None, None, f"{name} to task {self.task} at {self.address} ended without "
                    "an answer"), None)
            except errors.OpError as err:
                done(err, None)
            else:
                done(None, response)

        (wait or PULLS.submit)(answer)
        return call

    def _pull_fetches(self, step_id, pulls, values, done) -> None:
        lock = threading.Lock()
        left = [len(pulls)]
        failed = []

        def arrived(index, error, value, is_dead, incarnation):
            with lock:
                if error is not None:
                    failed.append(name_transfer_error(error, [dict(pulls)[index]], self.task))
                else:
                    values[index] = value
                left[0] -= 1
                last = left[0] == 0
            if last:
                done(failed[0] if failed else None, None if failed else values)

        for index, key in pulls:
            self.recv_tensor_async(step_id, key,
                                   lambda *outcome, index=index: arrived(index, *outcome))

    def recv_tensor_async(self, step_id: int, key: str, done):
        """Starts a streaming RecvTensor on a pool thread; calls `done(...)` once."""
        import grpc

        handle = Handle(done)
        request = worker_pb2.RecvTensorRequest(step_id=step_id, rendezvous_key=key)
        call = self._recv(request, metadata=self._metadata)
        handle._cancel = call.cancel

        def pull():
            try:
                handle.set((None, *assemble_frames(call, self._max_bytes)))
            except grpc.RpcError as err:
                handle.set((translate(err, self.task, self.address, "RecvTensor"), None,
                            False, 0))
            except errors.OpError as err:
                handle.set((err, None, False, 0))

        PULLS.submit(pull)
        return handle

    def recv_tensors_async(self, step_id: int, keys, arrived, failed, wait=None,
                           timeout=None):
        """One streaming RecvTensors call for all `keys`, read on a pool thread or by the
        caller (`wait`; see `WorkerClient.recv_tensors_async`)."""
        import grpc

        stream = Streams(len(keys), arrived, failed)
        # A caller that reads the transfer itself waits for all of it: one message.
        request = worker_pb2.RecvTensorsRequest(step_id=step_id, rendezvous_key=keys,
                                                whole=wait is not None)
        call = stream.call = self._recv_many(request, timeout=timeout,
                                             metadata=self._metadata)

        def pull():
            try:
                for outcome in read_tensors(unbundle_frames(call), len(keys), self._max_bytes):
                    stream.deliver(*outcome)
                for _ in call:  # the status, after everything was delivered
                    raise errors.DataLossError(None, None, "RecvTensors sent more tensors "
                                               f"than the {len(keys)} asked for")
            except grpc.RpcError as err:
                stream.fail(translate(err, self.task, self.address, "RecvTensors"))
            except errors.OpError as err:
                stream.fail(err)
                call.cancel()

        (wait or PULLS.submit)(pull)
        return stream

    def close(self) -> None:
        self._channel.close()


_UNBOUNDED_METHODS = frozenset({"run_step"})


class GrpcMasterClient:
    """The master service of a server reached over gRPC."""

    _METHODS = {"create_session": "CreateSession", "extend_session": "ExtendSession",
                "run_step": "RunStep", "close_session": "CloseSession",
                "list_devices": "ListDevices", "reset": "Reset",
                "partial_run_setup": "PartialRunSetup"}

    def __init__(self, address: str, default_timeout: float = 10.0, security=None):
        self.address = address
        security = security or security_mod.for_address(address)
        self._metadata = security.metadata()
        # Keepalive pings: a client whose master hangs (stopped, frozen) hears of it in ~2 s.
        self._channel = security_mod.open_channel(address, security,
                                                  GRPC_OPTIONS + KEEPALIVE_OPTIONS)
        self._stub = master_service_pb2_grpc.MasterServiceStub(self._channel)
        self._timeout = default_timeout

    def call(self, method: str, request, timeout=None):
        """A unary call. `timeout` None means the client's default deadline, except for
        RunStep, whose only deadline is the one the step asks for (a step may legitimately
        wait for hours in a dequeue). The call is cancelled if the caller is interrupted
        (Ctrl-C), and a cancelled RunStep cancels its step on the server."""
        import grpc

        rpc = getattr(self._stub, self._METHODS[method])
        if timeout is None and method not in _UNBOUNDED_METHODS:
            timeout = self._timeout
        try:
            # NOTE: gRPC checks for signals while it waits; an interrupted call is released,
            # which cancels it (tests/faults/test_deadlines.py checks the server's side).
            return rpc(request, timeout=timeout, metadata=self._metadata)
        except grpc.RpcError as err:
            raise translate(err, "master", self.address, self._METHODS[method]) from None

    def close(self) -> None:
        self._channel.close()


class InProcessMasterClient:
    """A master of this process: steps take and return ndarrays, nothing is serialized."""

    def __init__(self, master):
        self._master = master
        self.address = "in-process"

    def call(self, method: str, request, timeout=None):
        return getattr(self._master, method)(request)

    def run_step_local(self, handle, feeds, feed_values, fetches, targets, options):
        return self._master.run_step_local(handle, feeds, feed_values, fetches, targets,
                                           options)

    def close(self) -> None:
        pass
