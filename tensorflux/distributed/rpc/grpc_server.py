"""gRPC servicers exposing a Worker and a Master on one server port.

The worker service is registered from its service descriptor rather than the generated
helper so that RecvTensor and RecvTensors can send pre-encoded frames (`tensor_codec`): their
responses are bytes that protobuf never re-serializes. A RecvTensors message bundles the
frames of the tensors sent since the previous one (one gRPC message, not one per frame), up
to about a frame's size (`CHUNK_BYTES`).

Hardening: with a cluster token every RPC is checked by an interceptor before its handler
runs (`security.RpcSecurity`); TLS ports use the security's credentials; messages are bounded
by `max_message_bytes`; a handler that fails unexpectedly answers with a typed status (an
OpError's code; INVALID_ARGUMENT for a malformed request) and the server keeps serving; the
port is bound exclusively (`grpc.so_reuseport` 0), so a second server on it fails loudly.
GraphDefs in requests are validated where they are built from (`graph_validation`).
"""

from __future__ import annotations

import functools
import queue
import threading
import time

from tensorflux.distributed.rpc import server_pools
from tensorflux.distributed.rpc.channels import GRPC_OPTIONS, PING_POLICY_OPTIONS
from tensorflux.distributed.rpc.security import RpcSecurity
from tensorflux.distributed.rpc.tensor_codec import CHUNK_BYTES, bundle_frames, tensor_frames
from tensorflux.framework import errors
from tensorflux.platform import tf_logging as logging
from tensorflux.protos import (
    master_service_pb2_grpc,
    worker_pb2,
    worker_service_pb2,
    worker_service_pb2_grpc,
)

# A RecvTensors asked for `whole` sends what it has this long after its first tensor came.
WHOLE_WAIT_SECS = 0.1


def _status_code(err):
    import grpc

    if isinstance(err, errors.OpError):
        for code in grpc.StatusCode:
            if code.value[0] == err.error_code:
                return code
        return grpc.StatusCode.UNKNOWN
    if isinstance(err, (ValueError, TypeError, KeyError, IndexError, OverflowError)):
        return grpc.StatusCode.INVALID_ARGUMENT
    return grpc.StatusCode.INTERNAL


def _guarded(method):
    """A unary handler that answers an unexpected failure with a typed status, not a crash."""

    @functools.wraps(method)
    def handler(self, request, context):
        try:
            return method(self, request, context)
        except Exception as err:  # noqa: BLE001 - answered as a status; the server serves on
            logging.warning(f"{method.__name__}: refused a request: {type(err).__name__}: {err}")
            context.abort(_status_code(err), f"{method.__name__}: {type(err).__name__}: {err}")

    return handler


def _worker_servicer(worker):
    class WorkerServicer(worker_service_pb2_grpc.WorkerServiceServicer):
        @_guarded
        def GetStatus(self, request, context):  # noqa: N802 - gRPC method names
            return worker.get_status(request)

        @_guarded
        def CreateWorkerSession(self, request, context):  # noqa: N802
            return worker.create_worker_session(request)

        @_guarded
        def DeleteWorkerSession(self, request, context):  # noqa: N802
            return worker.delete_worker_session(request)

        @_guarded
        def RegisterGraph(self, request, context):  # noqa: N802
            return worker.register_graph(request)

        @_guarded
        def DeregisterGraph(self, request, context):  # noqa: N802
            return worker.deregister_graph(request)

        @_guarded
        def RunGraph(self, request, context):  # noqa: N802
            # The context: the call's deadline, and a cancelled call cancels the step.
            return worker.run_graph(request, context)

        @_guarded
        def CleanupGraph(self, request, context):  # noqa: N802
            return worker.cleanup_graph(request)

        @_guarded
        def CleanupAll(self, request, context):  # noqa: N802
            return worker.cleanup_all(request)

        @_guarded
        def Logging(self, request, context):  # noqa: N802
            return worker.logging(request)

        @_guarded
        def Tracing(self, request, context):  # noqa: N802
            return worker.tracing(request)

        @_guarded
        def Abort(self, request, context):  # noqa: N802
            return worker.abort(request)

        @_guarded
        def Shutdown(self, request, context):  # noqa: N802
            return worker.shutdown(request)

        def RecvTensor(self, request, context):  # noqa: N802
            event = threading.Event()
            box = []

            def respond(error, value, is_dead, incarnation):
                box.append((error, value, is_dead, incarnation))
                event.set()

            if not context.add_callback(event.set):  # the receiver went away: stop waiting
                return
            try:
                worker.recv_tensor(request, respond)
            except Exception as err:  # noqa: BLE001 - a malformed request: a typed status
                context.abort(_status_code(err), f"RecvTensor: {type(err).__name__}: {err}")
            event.wait()
            if not box:
                return
            error, value, is_dead, incarnation = box[0]
            if error is not None:
                _abort_transfer(context, error)
            yield from tensor_frames(value, is_dead, incarnation)

        def RecvTensors(self, request, context):  # noqa: N802
            # Each tensor is streamed as soon as its sender sends it (its frames together).
            arrived: queue.SimpleQueue = queue.SimpleQueue()
            if not context.add_callback(lambda: arrived.put(None)):
                return  # the receiver went away
            keys = list(request.rendezvous_key)
            try:
                for index, key in enumerate(keys):
                    worker.recv_tensor(
                        worker_pb2.RecvTensorRequest(step_id=request.step_id,
                                                     rendezvous_key=key),
                        lambda *outcome, index=index: arrived.put((index, *outcome)))
            except Exception as err:  # noqa: BLE001 - a malformed request: a typed status
                context.abort(_status_code(err), f"RecvTensors: {type(err).__name__}: {err}")
            left = len(keys)
            whole_until = None
            while left:
                # One message holds every tensor sent since the last one (all of them, when
                # the receiver asked for the whole set at once, unless some take longer than
                # WHOLE_WAIT_SECS after the first: the rest then go as they come).
                items = [arrived.get()]
                if request.whole and whole_until is None:
                    whole_until = time.monotonic() + WHOLE_WAIT_SECS
                # The receiver going away (None) or a failure is answered at once.
                while len(items) < left and items[-1] is not None and items[-1][1] is None:
                    wait = whole_until - time.monotonic() if whole_until is not None else 0
                    if wait > 0:
                        try:
                            items.append(arrived.get(timeout=wait))
                        except queue.Empty:
                            break
                    elif not arrived.empty():
                        items.append(arrived.get())
                    else:
                        break
                frames, size = [], 0
                for item in items:
                    if item is None:
                        return
                    index, error, value, is_dead, incarnation = item
                    if error is not None:
                        _abort_transfer(context, error)
                    for frame in tensor_frames(value, is_dead, incarnation, index):
                        if size + len(frame) > CHUNK_BYTES and frames:  # a message's bound
                            yield bundle_frames(frames)
                            frames, size = [], 0
                        frames.append(frame)
                        size += len(frame)
                left -= len(items)
                yield bundle_frames(frames)

    return WorkerServicer()


def _abort_transfer(context, error) -> None:
    import grpc

    code = grpc.StatusCode.ABORTED
    if isinstance(error, errors.CancelledError):
        code = grpc.StatusCode.CANCELLED
    context.abort(code, str(error))


def _master_servicer(master):
    class MasterServicer(master_service_pb2_grpc.MasterServiceServicer):
        @_guarded
        def CreateSession(self, request, context):  # noqa: N802
            return master.create_session(request)

        @_guarded
        def ExtendSession(self, request, context):  # noqa: N802
            return master.extend_session(request)

        @_guarded
        def PartialRunSetup(self, request, context):  # noqa: N802
            return master.partial_run_setup(request)

        @_guarded
        def RunStep(self, request, context):  # noqa: N802
            return master.run_step(request, context)

        @_guarded
        def CloseSession(self, request, context):  # noqa: N802
            return master.close_session(request)

        @_guarded
        def ListDevices(self, request, context):  # noqa: N802
            return master.list_devices(request)

        @_guarded
        def Reset(self, request, context):  # noqa: N802
            return master.reset(request)

    return MasterServicer()


def _worker_handler(servicer):
    """The WorkerService's method handlers (RecvTensor's responses are raw frames)."""
    import grpc


    service = worker_service_pb2.DESCRIPTOR.services_by_name["WorkerService"]
    handlers = {}
    for method in service.methods:
        request = getattr(worker_pb2, method.input_type.name)
        response = getattr(worker_pb2, method.output_type.name)
        behaviour = server_pools.lane_for(method.name, getattr(servicer, method.name))
        if method.server_streaming:
            handlers[method.name] = grpc.unary_stream_rpc_method_handler(
                behaviour, request_deserializer=request.FromString, response_serializer=None)
        else:
            handlers[method.name] = grpc.unary_unary_rpc_method_handler(
                behaviour, request_deserializer=request.FromString,
                response_serializer=response.SerializeToString)
    return grpc.method_handlers_generic_handler(service.full_name, handlers)


def _token_interceptor(security: RpcSecurity):
    """Refuses, before its handler runs, every RPC without the cluster token."""
    import grpc

    class TokenInterceptor(grpc.ServerInterceptor):
        def intercept_service(self, continuation, details):
            refusal = security.check_token(details.invocation_metadata)
            handler = continuation(details)
            if refusal is None or handler is None:
                return handler
            code, message = getattr(grpc.StatusCode, refusal[0]), refusal[1]

            def deny(request, context):
                context.abort(code, f"{details.method}: {message}")

            if handler.response_streaming:
                return grpc.unary_stream_rpc_method_handler(deny)
            return grpc.unary_unary_rpc_method_handler(deny)

    return TokenInterceptor()


def start_grpc_server(worker, master, address: str, security: RpcSecurity | None = None):
    """Binds both services on `address` ('host:port', port 0 picks one); returns
    (server, bound port). Blocked calls do not hold a bounded pool (`server_pools`).

    Raises:
        UnavailableError: the address cannot be bound (e.g. another server holds the port).
    """
    import grpc


    security = security or RpcSecurity()
    interceptors = [_token_interceptor(security)] if security.token else []
    server = grpc.server(server_pools.ElasticExecutor("tfx-grpc"), interceptors=interceptors,
                         options=GRPC_OPTIONS + PING_POLICY_OPTIONS + security.grpc_options()
                         + [("grpc.so_reuseport", 0)])
    server.add_generic_rpc_handlers((_worker_handler(_worker_servicer(worker)),))
    master_service_pb2_grpc.add_MasterServiceServicer_to_server(_master_servicer(master),
                                                                 server)
    credentials = security.server_credentials()
    try:
        if credentials is None:
            port = server.add_insecure_port(address)
        else:
            port = server.add_secure_port(address, credentials)
    except RuntimeError as err:
        port = 0
        detail = str(err).split(";")[0]
    else:
        detail = "no address was bound"
    if port == 0:
        server.stop(None)
        raise errors.UnknownError(  # TF: UnknownError "Could not start gRPC server"
            None, None, f"Could not start gRPC server: cannot bind {address}: the port "
            f"{address.rpartition(':')[2]} is in use by another server, or the address is "
            f"not one of this host's ({detail}).")
    server.start()
    return server, port
