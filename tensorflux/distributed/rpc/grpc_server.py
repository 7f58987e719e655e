"""gRPC servicers exposing a Worker and a Master on one server port.

The worker service is registered from its service descriptor rather than the generated
helper so that RecvTensor can send pre-encoded frames (`tensor_codec`): its responses are
bytes that protobuf never re-serializes.
"""

from __future__ import annotations

import threading
from concurrent import futures

from tensorflux.distributed.rpc.tensor_codec import tensor_frames
from tensorflux.distributed.rpc.transport import GRPC_OPTIONS
from tensorflux.framework import errors
from tensorflux.protos import (
    master_service_pb2_grpc,
    worker_pb2,
    worker_service_pb2,
    worker_service_pb2_grpc,
)


def _worker_servicer(worker):
    class WorkerServicer(worker_service_pb2_grpc.WorkerServiceServicer):
        def GetStatus(self, request, context):  # noqa: N802 - gRPC method names
            return worker.get_status(request)

        def CreateWorkerSession(self, request, context):  # noqa: N802
            return worker.create_worker_session(request)

        def DeleteWorkerSession(self, request, context):  # noqa: N802
            return worker.delete_worker_session(request)

        def RegisterGraph(self, request, context):  # noqa: N802
            return worker.register_graph(request)

        def DeregisterGraph(self, request, context):  # noqa: N802
            return worker.deregister_graph(request)

        def RunGraph(self, request, context):  # noqa: N802
            return worker.run_graph(request)

        def CleanupGraph(self, request, context):  # noqa: N802
            return worker.cleanup_graph(request)

        def CleanupAll(self, request, context):  # noqa: N802
            return worker.cleanup_all(request)

        def Logging(self, request, context):  # noqa: N802
            return worker.logging(request)

        def Tracing(self, request, context):  # noqa: N802
            return worker.tracing(request)

        def Abort(self, request, context):  # noqa: N802
            return worker.abort(request)

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
            worker.recv_tensor(request, respond)
            event.wait()
            if not box:
                return
            error, value, is_dead, incarnation = box[0]
            if error is not None:
                import grpc

                code = grpc.StatusCode.ABORTED
                if isinstance(error, errors.CancelledError):
                    code = grpc.StatusCode.CANCELLED
                context.abort(code, str(error))
            yield from tensor_frames(value, is_dead, incarnation)

    return WorkerServicer()


def _master_servicer(master):
    class MasterServicer(master_service_pb2_grpc.MasterServiceServicer):
        def CreateSession(self, request, context):  # noqa: N802
            return master.create_session(request)

        def ExtendSession(self, request, context):  # noqa: N802
            return master.extend_session(request)

        def PartialRunSetup(self, request, context):  # noqa: N802
            return master.partial_run_setup(request)

        def RunStep(self, request, context):  # noqa: N802
            return master.run_step(request)

        def CloseSession(self, request, context):  # noqa: N802
            return master.close_session(request)

        def ListDevices(self, request, context):  # noqa: N802
            return master.list_devices(request)

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
        behaviour = getattr(servicer, method.name)
        if method.server_streaming:
            handlers[method.name] = grpc.unary_stream_rpc_method_handler(
                behaviour, request_deserializer=request.FromString, response_serializer=None)
        else:
            handlers[method.name] = grpc.unary_unary_rpc_method_handler(
                behaviour, request_deserializer=request.FromString,
                response_serializer=response.SerializeToString)
    return grpc.method_handlers_generic_handler(service.full_name, handlers)


def start_grpc_server(worker, master, address: str, max_workers: int = 64):
    """Binds both services on `address` ('host:port', port 0 picks one); returns
    (server, bound port)."""
    import grpc


    server = grpc.server(futures.ThreadPoolExecutor(max_workers=max_workers,
                                                    thread_name_prefix="tfx-grpc"),
                         options=GRPC_OPTIONS)
    server.add_generic_rpc_handlers((_worker_handler(_worker_servicer(worker)),))
    master_service_pb2_grpc.add_MasterServiceServicer_to_server(_master_servicer(master),
                                                                 server)
    port = server.add_insecure_port(address)
    if port == 0:
        raise errors.UnavailableError(None, None, f"Could not bind a gRPC server to {address}")
    server.start()
    return server, port
